r"""Training-loss gains :math:`\Delta_\ell` and test-error gains :math:`\Lambda_\ell` of one gradient step [MLHD23].

* :math:`\Delta_\ell` in the matrix form :math:`\Delta_\ell=\lambda s^\top M^{-1}s`, :math:`M=\Xi W\Xi^\top`,
  :math:`s=\Xi Wh` (docs/theory/spike-theory.md §7.3), cross-checked against the printed form (§7.2,
  :mod:`onestep_theory.spikes.symbolic`);
* the random-features baselines (§7.1, §8.1) and :math:`\Lambda_1,\Lambda_2` in the corrected form
  (§8.4, default), the talk's printed form (§8.2, ``test_form="slide"``), and the
  unvalidated general-ℓ extension (§8.5).

References
----------
[MLHD23] B. Moniri, D. Lee, H. Hassani, E. Dobriban, arXiv:2310.07891, Theorems 3.4–3.6.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import mpmath

from ..core.errors import HypothesisError, InvalidParameterError
from ..core.exact import check_dps, check_positive, to_mpf
from ..core.limits import MAX_DPS
from ..core.precision import precision, refined, tolerance, ulps
from ..core.results import VouchedResult, provenance
from ..hermite.activation import Activation, numeric_c_rest, numeric_coeffs, numeric_second_moment
from ..hermite.polynomials import he_xi
from .resolvent import Resolvent, solve_resolvent
from .symbolic import MAX_ELL, delta_symbolic, latex, spike_rows
from .windows import window, window_bounds

__all__ = ["delta_matrix", "lambda_matrix", "Gains", "gains", "UnvalidatedWarning", "SlideFormWarning"]


class UnvalidatedWarning(UserWarning):
    """A formula that simulation has not confirmed (general-ℓ test error, §8.5)."""


class SlideFormWarning(UserWarning):
    """The test-error gain as printed in the talk slides, inconsistent with simulation (§8.3)."""


def _xi_matrix(rows, kmax):
    return mpmath.matrix([[he_xi(i, k) for k in range(kmax + 1)] for i in rows])


def _weights(tau1, tau2, kmax):
    return [tau2 if k == 1 else math.factorial(k) * tau1 for k in range(kmax + 1)]


def delta_matrix(ell, tau1, tau2, lam, h, drop=()):
    r"""Matrix form :math:`\Delta_\ell=\lambda s^\top M^{-1}s`, :math:`M=\Xi W\Xi^\top`, :math:`s=\Xi Wh`
    (docs/theory/spike-theory.md §7.3), with :math:`w_1=\tau_2`, :math:`w_k=k!\tau_1` and :math:`h_k=c_{\star,k}\rho^k`.

    Returns ``(Delta, c_hat)``; Cholesky at the current mpmath precision.
    """
    rows = spike_rows(ell, tuple(drop))
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
    :math:`v_k=k!q_{\rm nl}` (docs/theory/spike-theory.md §8.5; reduces to §8.4 for ℓ = 1, 2)."""
    rows = spike_rows(ell, tuple(drop))
    if not rows:
        return mpmath.mpf(0)
    Xi = _xi_matrix(rows, ell)
    V = mpmath.diag(_weights(q_nl, q_lin, ell))
    hv = mpmath.matrix(list(h[: ell + 1]))
    return 2 * (c_hat.T * Xi * V * hv)[0] - (c_hat.T * Xi * V * Xi.T * c_hat)[0]


# --------------------------------------------------------------------------- network-level predictor
@dataclasses.dataclass
class Gains(VouchedResult):
    """Training and test-error gains of one gradient step in a window (docs/theory/spike-theory.md §§7–8).

    ``errors`` holds the absolute error estimate of every number (Δ_k, Λ_k, the baselines, the losses and the
    resolvent): the change when the whole computation is repeated at 10 more digits, plus rounding."""

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
    errors: dict = dataclasses.field(default_factory=dict)

    def _repr_latex_(self) -> str | None:
        """The closed forms (``symbolic=True``) as LaTeX for notebooks (docs/theory/spike-theory.md §7.3)."""
        if not self.symbolic:
            return None
        lines = [f"\\Delta_{{{k.split('_')[1]}}} &= {v['latex']}" for k, v in self.symbolic.items()]
        return "$\\begin{aligned}" + " \\\\ ".join(lines) + "\\end{aligned}$"


def _is_zero(act: Activation, k: int) -> bool:
    """``c_k = 0``: proven exactly, or numerically below 10^-(D-3) at the ambient precision (D digits asked)."""
    if act.is_zero_coeff(k):
        return True
    ex = act.coeff_exact(k)
    if ex is not None:
        return False
    return abs(numeric_coeffs(act, k)[k]) < tolerance(-3, why="zero to the digits asked, with 3 digits of margin")


_RES_KEYS = ("m1", "m2", "dm1_dlam", "dm2_dlam")


def _gains_values(s, t, P, S, L, nv, ell, dropped, test_form, allow_uncentered) -> dict:
    """Every number of :func:`gains` at the ambient precision: Δ_k (§7.3), Λ_k (§8.4 or §8.2), the
    baselines (§7.1, §8.1) and the resolvent (docs/theory/spike-theory.md)."""
    c1 = numeric_coeffs(s, 1)[1]
    cg = numeric_c_rest(s, 1)
    res: Resolvent = solve_resolvent(P, S, L, c1, cg)
    Pm, Sm, Lm, nvm = (to_mpf(v) for v in (P, S, L, nv))
    cstar = list(numeric_coeffs(t, ell))
    if not allow_uncentered:
        cstar[0] = mpmath.mpf(0)
    cs2 = numeric_c_rest(t, 0) ** 2 if not allow_uncentered else numeric_second_moment(t)
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
    out_d = [+v for v in deltas]
    out_l = [+v for v in lams]
    rdict = {"m1": +res.m1, "m2": +res.m2, "dm1_dlam": +res.dm1_dlam, "dm2_dlam": +res.dm2_dlam,
             "residual": res.residual, "iterations": res.iterations}
    train = base_tr - out_d[-1]
    test = base_te - out_l[-1] if test_form == "corrected" else None
    return {"delta": out_d, "lambda_test": out_l, "valid": valid, "resolvent": rdict, "baseline_train": +base_tr,
            "baseline_test": +base_te, "train_loss": train, "test_loss": test, "b2": b2, "rho": rho}


def gains(student, teacher, phi, psi, lam, *, ell=None, alpha=None, noise_var=0, dps: int = 15,
          test_form: str = "corrected", absent_spikes: str = "refuse", center: bool = False,
          allow_uncentered: bool = False, symbolic: bool = False) -> Gains:
    r"""Δ_1..Δ_ℓ, Λ, and the RF baselines for a student, a teacher and ratios (docs/theory/spike-theory.md §§7–8).

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
    >>> g = gains("tanh", "He1", "1/2", "1/2", "1/10", ell=1, noise_var=1, dps=20)   # docs/theory/spike-theory.md §11
    >>> print(mpmath.nstr(g.delta[0], 10), mpmath.nstr(g.lambda_test[0], 10))
    0.0846258733 0.1017283258
    """
    dps = check_dps(dps, MAX_DPS, optional=False)           # the public boundary: the digits asked
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
    # hypotheses (docs/theory/spike-theory.md §3)
    with precision(dps):                 # the boundary: dps = the digits asked, the working precision set once
        zero = {k: _is_zero(s, k) for k in range(ell + 1)}
        zero_t0 = allow_uncentered or _is_zero(t, 0)
        if not zero[0]:
            raise HypothesisError("student", s.name, "a centred activation (c_0 = 0)",
                                  f"c_0 = {mpmath.nstr(numeric_coeffs(s, 0)[0], 8)}; use center=True / --center, "
                                  "or subtract it")
        if not zero_t0:
            raise HypothesisError("teacher", t.name, "a centred teacher (c_star,0 = 0)",
                                  f"c_star,0 = {mpmath.nstr(numeric_coeffs(t, 0)[0], 8)}; use center=True / --center")
        if zero[1]:
            raise HypothesisError("student", s.name, "an activation with c_1 != 0", "c_1 = 0")
        zeros = [k for k in range(2, ell + 1) if zero[k]]
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
        if test_form == "slide":
            msg = ("test_form='slide': the talk's printed Lambda is inconsistent with simulation and not "
                   "scale-invariant (docs/theory/spike-theory.md §8.3)")
            warnings.warn(msg, SlideFormWarning, stacklevel=2)
            notes.append(msg)
        elif ell >= 3:
            msg = ("Lambda_l for l >= 3 is the unvalidated extension of docs/theory/spike-theory.md §8.5 "
                   "(Monte-Carlo came out 15-25 % below it)")
            warnings.warn(msg, UnvalidatedWarning, stacklevel=2)
            notes.append(msg)
        args = (s, t, P, S, L, nv, ell, tuple(dropped), test_form, allow_uncentered)
        # the error of every value: the change when everything (coefficients, resolvent, matrices) is recomputed
        # at 10 more digits, plus the rounding at the working precision (docs/theory/numerics.md §1)
        rounding = ulps(2, why="the rounding at the working precision: 100 ulps")
        lo = _gains_values(*args)
        with refined(why="error estimate: every value again at 10 more digits"):
            hi = _gains_values(*args)

            def err(a, b):
                return None if a is None else float(abs(a - b) + abs(b) * rounding)

            errors = {k: ([err(a, b) for a, b in zip(lo[k], hi[k])] if isinstance(lo[k], list) else err(lo[k], hi[k]))
                      for k in ("delta", "lambda_test", "baseline_train", "baseline_test", "train_loss", "test_loss",
                                "b2", "rho")}
            errors["resolvent"] = {k: err(lo["resolvent"][k], hi["resolvent"][k]) for k in _RES_KEYS}
    out_d, out_l, valid, rdict = lo["delta"], lo["lambda_test"], lo["valid"], lo["resolvent"]
    base_tr, base_te, train, test, b2, rho = (lo[k] for k in ("baseline_train", "baseline_test", "train_loss",
                                                             "test_loss", "b2", "rho"))
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
        errors=errors,
        provenance=provenance(dps=dps, method="matrix form (Cholesky) at working precision; error from a second "
                                              "evaluation at dps + 10 digits",
                              references=["docs/theory/spike-theory.md §7.1-7.3", "§8.1", "§8.4" if test_form == "corrected"
                                          else "§8.2", "[MLHD23]"]))
