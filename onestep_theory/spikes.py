r"""Spike theory of [MLHD23]: α-windows, training-loss gains :math:`\Delta_\ell`, test-error gains :math:`\Lambda_\ell`.

Implements spike-theory.md §§5, 7, 8:

* windows :math:`\frac{\ell-1}{2\ell}<\alpha<\frac\ell{2\ell+2}` (§5.1);
* :math:`\Delta_\ell` in the printed form with :math:`\Omega^{-1}` and :math:`r_p` built in SymPy (§7.2) and in
  the matrix form :math:`\Delta_\ell=\lambda s^\top M^{-1}s`, :math:`M=\Xi W\Xi^\top`, :math:`s=\Xi Wh` (§7.3);
  exact closed forms in the symbols :math:`(m_1,m_2,\phi,\psi,\lambda,c_{\star,k},c_\star^2,\sigma_\varepsilon^2)`;
* the random-features baselines (§7.1, §8.1) and :math:`\Lambda_1,\Lambda_2` in the corrected form
  (§8.4, default), the talk's printed form (§8.2, ``test_form="slide"``), and the
  unvalidated general-ℓ extension (§8.5).

References
----------
[MLHD23] B. Moniri, D. Lee, H. Hassani, E. Dobriban, arXiv:2310.07891.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings

import mpmath
import sympy as sp

from .precision import precision
from .errors import HypothesisError, InvalidParameterError
from .exact import GUARD_DIGITS, check_positive, to_exact, to_mpf
from .hermite import Activation, he_xi
from .resolvent import Resolvent, resolvent_from_constants
from .results import Result, provenance

__all__ = [
    "Window", "window", "window_bounds", "omega_inv_symbolic", "r_symbolic", "delta_symbolic",
    "delta_printed", "delta_matrix", "lambda_matrix", "Gains", "gains", "UnvalidatedWarning", "SlideFormWarning",
    "MAX_ELL",
]

MAX_ELL = 8  # M is ill-conditioned in the monomial basis beyond (spike-theory.md §7.3)


class UnvalidatedWarning(UserWarning):
    """A formula that simulation has not confirmed (general-ℓ test error, §8.5)."""


class SlideFormWarning(UserWarning):
    """The test-error gain as printed in the talk slides, inconsistent with simulation (§8.3)."""


# --------------------------------------------------------------------------- windows (§5.1)
@dataclasses.dataclass
class Window(Result):
    """Window of the step-size exponent α: ``regime`` is ``window``, ``boundary`` or ``uncovered``."""

    alpha: object
    ell: int | None
    lo: object
    hi: object
    regime: str


def window_bounds(ell: int) -> tuple:
    r"""Exact bounds :math:`\big(\frac{\ell-1}{2\ell},\frac{\ell}{2\ell+2}\big)` of window ℓ (§5.1).

    >>> window_bounds(2)
    (1/4, 1/3)
    """
    if not isinstance(ell, int) or ell < 1:
        raise InvalidParameterError("ell", ell, "an integer >= 1")
    return sp.Rational(ell - 1, 2 * ell), sp.Rational(ell, 2 * ell + 2)


def window(alpha) -> Window:
    r"""Window of α: :math:`\ell(\alpha)=\lfloor1/(1-2\alpha)\rfloor` inside (0, 1/2), boundaries detected exactly.

    >>> window("0.3").ell, window("1/3").regime, window("0.6").regime
    (2, 'boundary', 'uncovered')
    """
    a = to_exact(alpha, "alpha")
    if not (a > 0 and a < sp.Rational(1, 2)):
        return Window(alpha=a, ell=None, lo=None, hi=None, regime="uncovered")
    t = 1 / (1 - 2 * a)
    if t.is_Integer or (t.is_Rational and t.q == 1):
        return Window(alpha=a, ell=None, lo=None, hi=None, regime="boundary")
    ell = int(sp.floor(t))
    lo, hi = window_bounds(ell)
    return Window(alpha=a, ell=ell, lo=lo, hi=hi, regime="window")


# --------------------------------------------------------------------------- symbolic building blocks
M1, M2, PHI, PSI, LAM, B, RHO = sp.symbols("m1 m2 phi psi lambda b rho", positive=True)
CSTAR2, S2 = sp.symbols("c_star2 sigma_eps2", nonnegative=True)


def cstar_symbols(ell: int) -> tuple:
    """Symbols :math:`c_{\\star,0},\\dots,c_{\\star,\\ell}` of the teacher's Hermite coefficients."""
    return sp.symbols(f"c_star_0:{ell + 1}", real=True)


def _rows(ell: int, drop=()) -> list:
    rows = [i for i in range(1, ell + 1) if i not in set(drop)]
    return rows


@functools.lru_cache(maxsize=None)
def omega_inv_symbolic(ell: int, drop: tuple = ()) -> sp.Matrix:
    r""":math:`[\Omega^{-1}]_{ij}=b^{i+j}\frac\psi\phi\big[m_2\xi_{i,1}\xi_{j,1}+m_1\sum_{k\ne1}^{\min(i,j)}k!\xi_{i,k}\xi_{j,k}\big]`
    (spike-theory.md §7.2), rows/columns ``i, j`` in ``1..ell`` minus ``drop``.

    >>> omega_inv_symbolic(2).tolist()
    [[b**2*m2*psi/phi, 0], [0, 3*b**4*m1*psi/phi]]
    """
    rows = _rows(ell, drop)
    out = sp.zeros(len(rows), len(rows))
    for a, i in enumerate(rows):
        for c, j in enumerate(rows):
            acc = M2 * he_xi(i, 1) * he_xi(j, 1) + M1 * sum(
                math.factorial(k) * he_xi(i, k) * he_xi(j, k) for k in range(0, min(i, j) + 1) if k != 1)
            out[a, c] = B ** (i + j) * PSI / PHI * acc
    return out


@functools.lru_cache(maxsize=None)
def r_symbolic(ell: int) -> tuple:
    r""":math:`r_0=\frac\psi\phi m_1`, :math:`r_1=\frac\psi\phi m_2\rho`, :math:`r_p=p!\frac\psi\phi m_1\rho^p` (§7.2)."""
    return tuple(PSI / PHI * (M2 * RHO if p == 1 else math.factorial(p) * M1 * RHO**p) for p in range(ell + 1))


@functools.lru_cache(maxsize=None)
def _printed_compiled(ell: int, drop: tuple, module: str):
    args = (M1, M2, PHI, PSI, B, RHO)
    mods = "mpmath" if module == "mpmath" else "numpy"
    return (sp.lambdify(args, omega_inv_symbolic(ell, drop), modules=mods),
            sp.lambdify(args, list(r_symbolic(ell)), modules=mods))


def delta_printed(ell, m1, m2, phi, psi, lam, cstar, b, drop=()):
    r""":math:`\Delta_\ell=\lambda\sum_{p,q=0}^{\ell}c_{\star,p}c_{\star,q}r_pr_q\sum_{i,j}\Omega_{ij}b^{i+j}\xi_{i,p}\xi_{j,q}`
    (spike-theory.md §7.2, indices resolved), from the lambdified :math:`\Omega^{-1}` and :math:`r_p`.

    Evaluate at the current mpmath precision; ``cstar`` is :math:`(c_{\star,0},\dots,c_{\star,\ell})`.
    """
    rows = _rows(ell, tuple(drop))
    oinv_f, r_f = _printed_compiled(ell, tuple(drop), "mpmath")
    rho = cstar[1] / b
    oinv = mpmath.matrix(oinv_f(m1, m2, phi, psi, b, rho))
    r = r_f(m1, m2, phi, psi, b, rho)
    om = mpmath.inverse(oinv) if len(rows) else oinv
    tot = mpmath.mpf(0)
    for p in range(ell + 1):
        for q in range(ell + 1):
            if cstar[p] == 0 or cstar[q] == 0:
                continue
            inner = mpmath.fsum(om[a, c] * b ** (i + j) * he_xi(i, p) * he_xi(j, q)
                                for a, i in enumerate(rows) for c, j in enumerate(rows))
            tot += cstar[p] * cstar[q] * r[p] * r[q] * inner
    return lam * tot


def _xi_matrix(rows, kmax):
    return mpmath.matrix([[he_xi(i, k) for k in range(kmax + 1)] for i in rows])


def _weights(tau1, tau2, kmax):
    return [tau2 if k == 1 else math.factorial(k) * tau1 for k in range(kmax + 1)]


def delta_matrix(ell, tau1, tau2, lam, h, drop=()):
    r"""Matrix form :math:`\Delta_\ell=\lambda s^\top M^{-1}s`, :math:`M=\Xi W\Xi^\top`, :math:`s=\Xi Wh`
    (spike-theory.md §7.3), with :math:`w_1=\tau_2`, :math:`w_k=k!\tau_1` and :math:`h_k=c_{\star,k}\rho^k`.

    Returns ``(Delta, c_hat)``; Cholesky at the current mpmath precision.
    """
    rows = _rows(ell, tuple(drop))
    if not rows:
        return mpmath.mpf(0), mpmath.matrix(0, 1)
    Xi = _xi_matrix(rows, ell)
    w = _weights(tau1, tau2, ell)
    Wm = mpmath.diag(w)
    hv = mpmath.matrix(list(h[: ell + 1]))
    M = Xi * Wm * Xi.T
    s = Xi * Wm * hv
    c_hat = mpmath.cholesky_solve(M, s)
    return lam * (s.T * c_hat)[0], c_hat


def lambda_matrix(ell, q_lin, q_nl, c_hat, h, drop=()):
    r""":math:`\Lambda_\ell=2\hat c^\top\Xi Vh-\hat c^\top\Xi V\Xi^\top\hat c`, :math:`v_1=q_{\rm lin}`,
    :math:`v_k=k!q_{\rm nl}` (spike-theory.md §8.5; reduces to §8.4 for ℓ = 1, 2)."""
    rows = _rows(ell, tuple(drop))
    if not rows:
        return mpmath.mpf(0)
    Xi = _xi_matrix(rows, ell)
    V = mpmath.diag(_weights(q_nl, q_lin, ell))
    hv = mpmath.matrix(list(h[: ell + 1]))
    return 2 * (c_hat.T * Xi * V * hv)[0] - (c_hat.T * Xi * V * Xi.T * c_hat)[0]


@functools.lru_cache(maxsize=64)
def delta_symbolic(ell: int, drop: tuple = (), *, centered_teacher: bool = True) -> sp.Expr:
    r"""Exact closed form of :math:`\Delta_\ell` (§7.3) in the symbols ``m1, m2, phi, psi, lambda``,
    :math:`c_{\star,0..\ell}` (``c_star_k``), ``c_star2`` (:math:`c_\star^2`) and ``sigma_eps2``, with
    :math:`b^2=c_{\star,1}^2+\phi(c_\star^2+\sigma_\varepsilon^2)` and :math:`\rho=c_{\star,1}/b` substituted.

    >>> d1 = delta_symbolic(1)
    >>> cs = cstar_symbols(1)
    >>> sp.simplify(d1 - PSI*LAM*cs[1]**4*M2/(PHI*(cs[1]**2 + PHI*(CSTAR2 + S2))))
    0
    """
    if not isinstance(ell, int) or not 1 <= ell <= MAX_ELL:
        raise InvalidParameterError("ell", ell, f"an integer in [1, {MAX_ELL}]")
    rows = _rows(ell, drop)
    cs = cstar_symbols(ell)
    # With t = tau2/tau1: W = tau1 * D(t), D = diag(k!, with t at k = 1), so
    # Delta = lambda tau1 h^T P(t) h with P = D Xi^T (Xi D Xi^T)^{-1} Xi D rational in t only.
    t = sp.Symbol("t", positive=True)
    from sympy.polys.matrices import DomainMatrix

    Xi = sp.Matrix([[he_xi(i, k) for k in range(ell + 1)] for i in rows])
    D = sp.diag(*[t if k == 1 else math.factorial(k) for k in range(ell + 1)])
    XD = DomainMatrix.from_Matrix(Xi * D).to_field()
    M = DomainMatrix.from_Matrix(Xi * D * Xi.T).to_field()
    P = (XD.transpose() * M.lu_solve(XD)).to_Matrix()
    b2 = cs[1] ** 2 + PHI * (CSTAR2 + S2)
    terms = []
    for p in range(ell + 1):
        for q in range(p, ell + 1):
            if (p == 0 or q == 0) and centered_teacher or P[p, q] == 0:
                continue
            coef = P[p, q] * (1 if p == q else 2)
            rho_pow = cs[1] ** (p + q) * (b2 ** sp.Rational(-(p + q), 2))
            pq = sp.factor(sp.cancel(coef.subs(t, M2 / M1) * M1))
            terms.append(cs[p] * cs[q] * rho_pow * pq)
    return LAM * PSI / PHI * sp.Add(*terms)


def latex(expr: sp.Expr) -> str:
    """LaTeX with the spec's notation: :math:`c_{\\star,k}`, :math:`c_\\star^2`, :math:`\\sigma_\\varepsilon^2`, :math:`m_i`."""
    names = {M1: "m_1", M2: "m_2", CSTAR2: r"c_\star^2", S2: r"\sigma_\varepsilon^2"}
    for k, c in enumerate(cstar_symbols(MAX_ELL)):
        names[c] = rf"c_{{\star,{k}}}"
    return sp.latex(expr, symbol_names=names)


# --------------------------------------------------------------------------- network-level predictor
@dataclasses.dataclass
class Gains(Result):
    """Training and test-error gains of one gradient step in a window (spike-theory.md §§7–8)."""

    student: str
    teacher: str
    phi: object
    psi: object
    lam: object
    noise_var: object
    ell: int
    window: object
    delta: list
    lambda_test: list
    lambda_validated: list
    test_form: str
    baseline_train: object
    baseline_test: object
    train_loss: object
    test_loss: object
    b2: object
    rho: object
    hypotheses_satisfied: bool
    absent_spikes: str
    dropped: list
    resolvent: dict
    warnings: list
    dps: int
    symbolic: dict
    provenance: dict


def _is_zero(act: Activation, k: int, dps: int) -> bool:
    if act.is_zero_coeff(k):
        return True
    ex = act.coeff_exact(k)
    if ex is not None:
        return False
    return abs(act.coeff(k, dps)) < mpmath.mpf(10) ** (-(dps - 3))


def gains(student, teacher, phi, psi, lam, *, ell=None, alpha=None, noise_var=0, dps: int = 15,
          test_form: str = "corrected", absent_spikes: str = "refuse", center: bool = False,
          allow_uncentered: bool = False, symbolic: bool = False) -> Gains:
    r"""Δ_1..Δ_ℓ, Λ, and the RF baselines for a student, a teacher and ratios (spike-theory.md §§7–8).

    Parameters
    ----------
    student, teacher : str, sympy.Expr or Activation
        Both must be centred (:math:`c_0=0`, :math:`c_{\star,0}=0`) unless ``center=True``, which
        centres both explicitly; ``allow_uncentered=True`` keeps a teacher offset (unvalidated).
    phi, psi, lam : exact numbers
        :math:`\phi=d/n`, :math:`\psi=d/N`, :math:`\lambda>0`.
    ell, alpha :
        Number of spikes, or the step-size exponent α (then ℓ is its window; a boundary or an α
        outside (0, 1/2) is refused).
    test_form : {"corrected", "slide"}
        §8.4 (default, simulation-validated) or the talk's printed §8.2 (warns).
    absent_spikes : {"refuse", "formal", "drop"}
        What to do if :math:`c_k=0` for some :math:`k\le\ell` (§7.5).
    symbolic : bool
        Also return the closed forms of Δ_1..Δ_ℓ (SymPy string and LaTeX).

    Examples
    --------
    >>> g = gains("tanh", "He1", "1/2", "1/2", "1/10", ell=1, noise_var=1, dps=20)   # spike-theory.md §11
    >>> print(mpmath.nstr(g.delta[0], 10), mpmath.nstr(g.lambda_test[0], 10))
    0.0846258733 0.1017283258
    """
    if test_form not in ("corrected", "slide"):
        raise InvalidParameterError("test_form", test_form, "'corrected' or 'slide'")
    if absent_spikes not in ("refuse", "formal", "drop"):
        raise InvalidParameterError("absent_spikes", absent_spikes, "'refuse', 'formal' or 'drop'")
    win = None
    if alpha is not None:
        win = window(alpha)
        if win.regime != "window":
            reason = ("alpha is on the boundary l/(2l+2) of two windows" if win.regime == "boundary"
                      else "alpha is outside (0, 1/2): not covered by the spike theory")
            raise InvalidParameterError("alpha", alpha, "a rational in (0, 1/2) strictly inside a window "
                                        "((l-1)/(2l), l/(2l+2))", reason)
        if ell is not None and ell != win.ell:
            raise InvalidParameterError("ell", ell, f"{win.ell} (the window of alpha={alpha})")
        ell = win.ell
    if ell is None:
        raise InvalidParameterError("ell", None, "an integer in [1, 8] (or give alpha)")
    if isinstance(ell, bool) or not isinstance(ell, int) or not 1 <= ell <= MAX_ELL:
        raise InvalidParameterError("ell", ell, f"an integer in [1, {MAX_ELL}]")
    s = Activation.from_any(student, "student", center=center)
    t = Activation.from_any(teacher, "teacher", center=center)
    P, S, L = (check_positive(v, n) for v, n in ((phi, "phi"), (psi, "psi"), (lam, "lam")))
    nv = check_positive(noise_var, "noise_var", strict=False)
    notes = []
    # hypotheses (spike-theory.md §3)
    if not _is_zero(s, 0, dps):
        raise HypothesisError("student", s.name, "a centred activation (c_0 = 0)",
                              f"c_0 = {mpmath.nstr(s.coeff(0, dps), 8)}; use center=True / --center, or subtract it")
    if not allow_uncentered and not _is_zero(t, 0, dps):
        raise HypothesisError("teacher", t.name, "a centred teacher (c_star,0 = 0)",
                              f"c_star,0 = {mpmath.nstr(t.coeff(0, dps), 8)}; use center=True / --center")
    if _is_zero(s, 1, dps):
        raise HypothesisError("student", s.name, "an activation with c_1 != 0", "c_1 = 0")
    zeros = [k for k in range(2, ell + 1) if _is_zero(s, k, dps)]
    hyp = not zeros
    dropped = []
    if zeros:
        if absent_spikes == "refuse":
            raise HypothesisError("student", s.name, f"c_1..c_{ell} != 0 for ell={ell}",
                                  f"c_{zeros[0]} = 0 exactly; pass absent_spikes='formal' (printed formula) or "
                                  f"'drop' (remove the absent spikes) -- CLI --absent-spikes")
        if absent_spikes == "drop":
            dropped = zeros
        notes.append(f"hypothesis c_k != 0 fails for k = {zeros}; absent_spikes={absent_spikes}")
    with precision(dps):
        c1 = s.coeff(1, dps + GUARD_DIGITS)
        cg = s.c_gt1(dps + GUARD_DIGITS)
        res: Resolvent = resolvent_from_constants(P, S, L, c1, cg, dps + GUARD_DIGITS)
        Pm, Sm, Lm, nvm = (to_mpf(v, dps) for v in (P, S, L, nv))
        cstar = list(t.coeffs_mp(ell, dps + GUARD_DIGITS))
        if not allow_uncentered:
            cstar[0] = mpmath.mpf(0)
        cs2 = t.c_star(dps + GUARD_DIGITS) ** 2 if not allow_uncentered else t.second_moment(dps + GUARD_DIGITS)
        b2 = cstar[1] ** 2 + Pm * (cs2 + nvm)
        if b2 == 0:
            raise HypothesisError("teacher", t.name, "a teacher with E sigma*^2 > 0, or label noise",
                                  "the labels are identically 0: there is no signal and no noise to fit")
        b = mpmath.sqrt(b2)
        rho = cstar[1] / b
        tau1, tau2 = res.tau1, res.tau2
        h = [cstar[k] * rho**k for k in range(ell + 1)]
        ratio = Pm / Sm
        q_lin = ratio * (-res.dm2_dlam) / res.m1**2
        q_nl = ratio * (-res.dm1_dlam) / res.m1**2
        # baselines (§7.1, §8.1 / §8.5 with w_k, v_k over all k)
        rest = cs2 - cstar[1] ** 2 + nvm
        base_tr = Lm * (cstar[1] ** 2 * tau2 + rest * tau1)
        base_te = cstar[1] ** 2 * q_lin + rest * q_nl
        deltas, lams, valid = [], [], []
        for k in range(1, ell + 1):
            drop_k = tuple(i for i in dropped if i <= k)
            dk, chat = delta_matrix(k, tau1, tau2, Lm, h, drop_k)
            deltas.append(dk)
            if test_form == "corrected":
                lams.append(lambda_matrix(k, q_lin, q_nl, chat, h, drop_k))
                valid.append(k <= 2)
        if test_form == "slide":
            lam1 = cstar[1] ** 4 / b2 * (-res.dm2_dlam)
            lams = [lam1]
            if ell >= 2:
                lams.append(lam1 + 4 * cstar[1] ** 4 * cstar[2] ** 2 / (3 * b2**2 * res.m1**2) * (-res.dm1_dlam))
            valid = [False] * len(lams)
            msg = ("test_form='slide': the talk's printed Lambda is inconsistent with simulation and not "
                   "scale-invariant (spike-theory.md §8.3)")
            warnings.warn(msg, SlideFormWarning, stacklevel=2)
            notes.append(msg)
        elif ell >= 3:
            msg = ("Lambda_l for l >= 3 is the unvalidated extension of spike-theory.md §8.5 "
                   "(Monte-Carlo came out 15-25 % below it)")
            warnings.warn(msg, UnvalidatedWarning, stacklevel=2)
            notes.append(msg)
        out_d = [+v for v in deltas]
        out_l = [+v for v in lams]
        rdict = {"m1": +res.m1, "m2": +res.m2, "dm1_dlam": +res.dm1_dlam, "dm2_dlam": +res.dm2_dlam,
                 "residual": res.residual, "iterations": res.iterations}
        train = base_tr - out_d[-1]
        test = base_te - out_l[-1] if test_form == "corrected" else None
    sym = {}
    if symbolic:
        for k in range(1, ell + 1):
            e = delta_symbolic(k, tuple(i for i in dropped if i <= k))
            sym[f"delta_{k}"] = {"sympy": str(e), "latex": latex(e)}
    return Gains(
        student=s.name, teacher=t.name, phi=P, psi=S, lam=L, noise_var=nv, ell=ell,
        window=(win.to_dict() if win is not None else {"ell": ell, "bounds": [str(v) for v in window_bounds(ell)]}),
        delta=out_d, lambda_test=out_l, lambda_validated=valid, test_form=test_form, baseline_train=base_tr,
        baseline_test=base_te, train_loss=train, test_loss=test, b2=b2, rho=rho, hypotheses_satisfied=hyp,
        absent_spikes=absent_spikes, dropped=dropped, resolvent=rdict, warnings=notes, dps=dps, symbolic=sym,
        provenance=provenance(dps=dps, method="matrix form (Cholesky) at working precision",
                              references=["spike-theory.md §7.1-7.3", "§8.1", "§8.4" if test_form == "corrected"
                                          else "§8.2", "[MLHD23]"]))
