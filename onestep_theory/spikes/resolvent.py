r"""Random-features resolvent traces :math:`m_1, m_2` and their λ-derivatives.

Implements docs/theory/spike-theory.md §6 ([MLHD23] with [AP20] (S67)/(S68)):

.. math::
    G_1=\phi(m_1-m_2)(c_{>1}^2m_1+c_1^2m_2)+\Psi=0,\qquad
    G_2=\tfrac\phi\psi\big(c_1^2m_1m_2+\phi(m_2-m_1)\big)+\Psi=0,\qquad
    \Psi=c_1^2m_1m_2(\lambda\psi m_1/\phi-1).

Root selection (§6.3, normative): eliminate :math:`m_2=Km_1/D(m_1)`, solve the quartic
:math:`Q(m)=\phi(D-K)(AD+BK)+BK(em-1)D` for all roots, keep the unique pair with
:math:`m_1,m_2>0` (never the trivial root (0, 0)), polish by Newton on :math:`(G_1,G_2)`.
The derivatives follow by implicit differentiation (§6.4).

The system, the quartic coefficients and the Jacobian are built once in SymPy and
lambdified into mpmath (any precision) and numpy (vectorised float64 sweeps).

References
----------
[MLHD23] arXiv:2310.07891; [AP20] Adlam & Pennington, ICML 2020, eqs. (S67)–(S68).
"""

from __future__ import annotations

import dataclasses
import warnings

import mpmath
import numpy as np
import sympy as sp

from ..core.caches import cached
from ..core.limits import MAX_DPS, WORK_HEADROOM
from ..core.precision import REFINE_DIGITS, asked_digits, precision, refined, tolerance, ulps, working_digits
from ..core.errors import ConvergenceError, HypothesisError, InvalidParameterError
from ..core.exact import binary_exact, check_dps, to_exact, to_mpf
from ..hermite.activation import Activation, numeric_c_rest, numeric_coeffs
from ..core.results import VouchedResult, digits_of, provenance

__all__ = ["Resolvent", "resolvent", "resolvent_from_constants", "solve_resolvent", "resolvent_sweep", "system", "ap20_system",
           "quartic_coefficients", "M1M2Warning"]

m1, m2, phi, psi, lam, c1, cg = sp.symbols("m1 m2 phi psi lambda c1 c_gt1", positive=True)


class M1M2Warning(UserWarning):
    """m2 > m1 at the selected root (empirical property of §6.3, item 6)."""


@cached(maxsize=None)
def system():
    r"""SymPy equations :math:`(G_1, G_2)` of docs/theory/spike-theory.md §6.1 in the symbols
    ``m1, m2, phi, psi, lambda, c1, c_gt1``.

    >>> G1, G2 = system()
    >>> sp.simplify(G1.subs({m1: 0, m2: 0}))
    0
    """
    Psi = c1**2 * m1 * m2 * (lam * psi * m1 / phi - 1)
    G1 = phi * (m1 - m2) * (cg**2 * m1 + c1**2 * m2) + Psi
    G2 = phi / psi * (c1**2 * m1 * m2 + phi * (m2 - m1)) + Psi
    return G1, G2


@cached(maxsize=None)
def ap20_system():
    r"""[AP20] (S67), (S68) after the reparametrisation of docs/theory/spike-theory.md §6.2
    (:math:`\zeta=c_1^2`, :math:`\eta_{AP}=c_1^2+c_{>1}^2`, :math:`\gamma=\lambda\psi/\phi`, :math:`\tau_i=m_i`).

    (S67)/ψ equals :math:`G_2` and −(S68) equals :math:`G_1` identically (tested).
    """
    zeta, eta_ap, gam = c1**2, c1**2 + cg**2, lam * psi / phi
    t1, t2 = m1, m2
    s67 = phi * (zeta * t1 * t2 + phi * (t2 - t1)) + zeta * t1 * t2 * psi * (gam * t1 - 1)
    s68 = (t2 - t1) * phi * (zeta * (t2 - t1) + eta_ap * t1) - zeta * t1 * t2 * (gam * t1 - 1)
    return s67, s68


@cached(maxsize=None)
def quartic_coefficients():
    r"""Coefficients :math:`q_0..q_4` of the quartic of §6.3 as SymPy expressions (from the expansion
    of :math:`Q(m)=\phi(D-K)(AD+BK)+BK(em-1)D`, checked against the printed :math:`q_j` in the tests)."""
    m = sp.Symbol("m")
    K = phi**2 / psi
    A, B = cg**2, c1**2
    e = lam * psi / phi
    d1 = B * (phi / psi - 1)
    d2 = B * e
    D = K + d1 * m + d2 * m**2
    Q = sp.expand(phi * (D - K) * (A * D + B * K) + B * K * (e * m - 1) * D)
    poly = sp.Poly(Q, m)
    return tuple(sp.factor(poly.coeff_monomial(m**j)) for j in range(5))       # factor: 0.07 s, simplify: 1.5 s


_ARGS = (phi, psi, lam, c1, cg)


@cached(maxsize=None)
def _compiled(module: str):
    """Lambdified quartic coefficients, m2(m1), G, Jacobian and dG/dlambda (built once)."""
    G1, G2 = system()
    q = quartic_coefficients()
    K = phi**2 / psi
    D = K + c1**2 * (phi / psi - 1) * m1 + c1**2 * lam * psi / phi * m1**2
    J = sp.Matrix([[sp.diff(G1, m1), sp.diff(G1, m2)], [sp.diff(G2, m1), sp.diff(G2, m2)]])
    dG = sp.Matrix([sp.diff(G1, lam), sp.diff(G2, lam)])
    mods = "mpmath" if module == "mpmath" else "numpy"
    return dict(
        q=sp.lambdify(_ARGS, list(q), modules=mods),
        m2=sp.lambdify((m1, *_ARGS), K * m1 / D, modules=mods),
        D=sp.lambdify((m1, *_ARGS), D, modules=mods),
        G=sp.lambdify((m1, m2, *_ARGS), [G1, G2], modules=mods),
        J=sp.lambdify((m1, m2, *_ARGS), [J[0, 0], J[0, 1], J[1, 0], J[1, 1]], modules=mods),
        dG=sp.lambdify((m1, m2, *_ARGS), [dG[0], dG[1]], modules=mods),
    )


@dataclasses.dataclass
class Resolvent(VouchedResult):
    """Solution of the m1, m2 system with derivatives, residual and method (docs/theory/spike-theory.md §6)."""

    m1: object
    m2: object
    dm1_dlam: object
    dm2_dlam: object
    phi: object
    psi: object
    lam: object
    c1: object
    c_gt1: object
    dps: int
    iterations: int
    residual: object
    method: str
    roots: list
    provenance: dict
    #: estimated absolute error of m1, m2 and their lambda-derivatives (docs/theory/numerics.md §1)
    errors: dict = dataclasses.field(default_factory=dict)

    @property
    def digits(self) -> dict:
        """Significant digits of m1, m2 and their λ-derivatives vouched for by :attr:`errors`."""
        return {k: digits_of(getattr(self, k), self.errors[k]) for k in ("m1", "m2", "dm1_dlam", "dm2_dlam")}

    @property
    def tau1(self):
        """Un-normalised trace :math:`\\tau_1=\\frac\\psi\\phi m_1`."""
        return self.psi / self.phi * self.m1

    @property
    def tau2(self):
        return self.psi / self.phi * self.m2


def _check_inputs(phi_v, psi_v, lam_v):
    out = []
    for v, name in ((phi_v, "phi"), (psi_v, "psi"), (lam_v, "lam")):
        e = to_exact(v, name)
        if not e > 0:
            raise InvalidParameterError(name, v, "a real number > 0")
        out.append(e)
    return out


def _solve2(J, b):
    """Solution of the 2x2 system ``J u = b`` by Cramer's rule (scalars, mpf or numpy arrays), and det J."""
    j11, j12, j21, j22 = J
    det = j11 * j22 - j12 * j21
    return (b[0] * j22 - b[1] * j12) / det, (j11 * b[1] - j21 * b[0]) / det, det


def _newton_pair(fns, x, y, args, tol, steps=60):
    """Newton on (G1, G2) from (x, y); returns (m1, m2, iterations) if it converges to a positive root."""
    for it in range(1, steps):
        g1, g2 = fns["G"](x, y, *args)
        J = fns["J"](x, y, *args)
        if J[0] * J[3] - J[1] * J[2] == 0:
            return None
        dx, dy, _ = _solve2(J, (g1, g2))
        x, y = x - dx, y - dy
        if not (x > 0 and y > 0):
            return None
        if abs(dx) <= tol * abs(x) and abs(dy) <= tol * abs(y):
            return x, y, it
    return None


def _root_errors(fns, exact, c1_v, cg_v, pairs) -> list:
    """Errors of the roots ``pairs`` ((m1, m2) or (complex m1, None), docs/theory/spike-theory.md §6.3): twice the
    Newton step on the quartic of the exact inputs at 10 more digits (a double root halves it), m2's change there
    twice, + 10 units of precision."""
    eps, out = +mpmath.eps, []                      # the working precision's (+: evaluated here)
    with refined(why="the roots' reference: the quartic from the exact inputs at 10 more digits"):
        args = tuple(to_mpf(e) for e in exact) + tuple(abs(v if isinstance(v, mpmath.mpf) else to_mpf(to_exact(v)))
                                                       for v in (c1_v, cg_v))
        coeffs = list(reversed(fns["q"](*args)))        # a leading 0 (c_>1 = 0: a cubic) changes nothing here
        for x, y in pairs:
            shift = (lambda p, dp: p / dp if dp != 0 else mpmath.inf)(*mpmath.polyval(coeffs, x, derivative=True))
            ex = float(2 * abs(shift) + 10 * eps * abs(x))
            out.append(({"re": ex, "im": ex}, None) if y is None else
                       (ex, float(2 * abs(fns["m2"](x - shift, *args) - y) + 10 * eps * abs(y))))
    return out


def resolvent_from_constants(phi_v, psi_v, lam_v, c1_v, cg_v, dps: int = 15) -> Resolvent:
    r"""Solve §6 for given :math:`(\phi,\psi,\lambda,c_1,c_{>1})` at ``dps`` digits.

    Exact inputs (strings such as ``"1/2"``, Rationals) stay exact until evaluation;
    ``c1``/``c_gt1`` may also be ``mpf`` (e.g. from quadrature).

    >>> r = resolvent_from_constants("1/2", "1/2", "1/10", 1, "1/2", dps=20)   # docs/theory/spike-theory.md §11
    >>> print(mpmath.nstr(r.m1, 10), mpmath.nstr(r.m2, 10))
    3.466048639 1.018617577
    """
    dps = check_dps(dps, MAX_DPS + WORK_HEADROOM, optional=False)    # a refinement may ask above MAX_DPS
    with precision(dps):                                             # the boundary: the working precision, once
        return solve_resolvent(phi_v, psi_v, lam_v, c1_v, cg_v)


def solve_resolvent(phi_v, psi_v, lam_v, c1_v, cg_v) -> Resolvent:
    r"""Solve §6 at the ambient precision (below a boundary, e.g. :func:`resolvent_from_constants`); the result's
    ``dps`` is the digits asked at that boundary (docs/theory/spike-theory.md §6.3, §6.4)."""
    dps = asked_digits()
    ex = _check_inputs(phi_v, psi_v, lam_v)
    P, S, L = (to_mpf(e) for e in ex)
    C1 = c1_v if isinstance(c1_v, mpmath.mpf) else to_mpf(to_exact(c1_v, "c1"))
    CG = cg_v if isinstance(cg_v, mpmath.mpf) else to_mpf(to_exact(cg_v, "c_gt1"))
    if C1 == 0:
        raise HypothesisError("c1", c1_v, "c1 != 0", "the resolvent system needs a non-zero linear coefficient")
    if CG < 0:
        raise InvalidParameterError("c_gt1", cg_v, "a real number >= 0")
    C1 = abs(C1)
    fns = _compiled("mpmath")
    args = (P, S, L, C1, CG)
    q = fns["q"](*args)
    coeffs = list(reversed(q))
    while coeffs and coeffs[0] == 0:  # c_>1 = 0: degree drop (§6.3 item 2)
        coeffs.pop(0)
    roots = None
    wd = working_digits()
    for steps, extra in ((200, 4), (2000, 12)):
        try:
            # the quartic's roots lose up to half their digits at a near-double root: twice the working
            # digits, and mpmath's extra precision (bits) for Durand-Kerner grows with them
            with refined(wd, why="polyroots: a near-double root of the quartic halves the digits"):
                roots = mpmath.polyroots(coeffs, maxsteps=steps, extraprec=extra * wd)
            break
        except mpmath.libmp.NoConvergence:
            continue
    if roots is None:
        raise ConvergenceError("the quartic of the m1, m2 system: polynomial root finder did not converge "
                               f"(phi={mpmath.nstr(P, 5)}, psi={mpmath.nstr(S, 5)}, lambda={mpmath.nstr(L, 5)})",
                               2000)
    tol = ulps(5, why="Newton stops 5 digits above the round-off: quadratic convergence puts the next step below it")
    cands, all_pairs = [], []
    for rt in roots:
        # an ill-conditioned quartic (extreme phi, psi, lambda) returns real roots with a small spurious
        # imaginary part: keep them as candidates, Newton on (G1, G2) in real arithmetic decides
        if abs(mpmath.im(rt)) > mpmath.mpf(10) ** -6 * abs(rt):
            all_pairs.append((rt, None))
            continue
        x = mpmath.re(rt)
        y = fns["m2"](x, *args)
        all_pairs.append((x, y))
        if x > 0 and y > 0:
            pol = _newton_pair(fns, x, y, args, tol)
            if pol is not None and not any(abs(pol[0] - c[0]) <= 1e-8 * abs(c[0]) for c in cands):
                cands.append(pol)
    if len(cands) != 1:
        raise ConvergenceError(f"expected exactly one positive root of the m1, m2 system, found {len(cands)}; "
                               f"roots: {[(mpmath.nstr(a, 8), mpmath.nstr(b, 8) if b is not None else None) for a, b in all_pairs]}")
    x, y, it = cands[0]
    res = max(abs(g) for g in fns["G"](x, y, *args))
    # residual relative to the natural scale of G (J times the root): phi, psi can be 1e6 or 1e-6
    j11, j12, j21, j22 = fns["J"](x, y, *args)
    scale = abs(j11 * x) + abs(j12 * y) + abs(j21 * x) + abs(j22 * y)
    if res > tolerance(2, why="converged: 2 digits beyond those asked, on G's scale") * scale:
        raise ConvergenceError("Newton polish of the m1, m2 system did not converge", it, float(res))
    ratio = L * S * x / P
    if not (0 < ratio < 1) or fns["D"](x, *args) <= 0:
        raise ConvergenceError(f"unphysical root: lambda psi m1/phi = {mpmath.nstr(ratio, 5)} (need (0, 1))", it,
                               float(res))
    if y > x * (1 + tol):
        warnings.warn(f"m2 = {mpmath.nstr(y, 8)} > m1 = {mpmath.nstr(x, 8)} (empirically never seen)", M1M2Warning,
                      stacklevel=2)
    def derivs(x, y):
        u1, u2, det = _solve2(fns["J"](x, y, *args), fns["dG"](x, y, *args))
        return -u1, -u2, det

    dm1, dm2, det = derivs(x, y)
    # error estimate (docs/theory/numerics.md §1): one more Newton correction (the solver's error) plus
    # the working precision amplified by the condition of the 2x2 system; the derivatives are
    # re-evaluated at the root moved by that error
    c1_, c2_, _ = _solve2(fns["J"](x, y, *args), fns["G"](x, y, *args))
    ex = abs(c1_) + abs(x) * 10 * mpmath.eps * (1 + scale * (abs(x) + abs(y)) / abs(det) / (abs(x) + abs(y)) ** 2)
    ey = abs(c2_) + abs(y) * 10 * mpmath.eps * (1 + scale * (abs(x) + abs(y)) / abs(det) / (abs(x) + abs(y)) ** 2)
    d1b, d2b, _ = derivs(x + ex, y + ey)
    # the derivatives solve J u = dG: rounding in J and dG (10 units, the convention above) is amplified
    # by the condition number of J, ||J|| ||J^-1|| <= ||J||^2 / |det J| for a 2x2 matrix (entrywise norms)
    jn = abs(j11) + abs(j12) + abs(j21) + abs(j22)
    amp = 10 * mpmath.eps * (1 + jn * jn / abs(det))
    errors = {"m1": float(ex), "m2": float(ey), "dm1_dlam": float(abs(d1b - dm1) + amp * abs(dm1)),
              "dm2_dlam": float(abs(d2b - dm2) + amp * abs(dm2)),   # c1, c_>1 as given (exact: rounded once)
              "c1": float(10 * mpmath.eps * C1), "c_gt1": float(10 * mpmath.eps * CG),   # |c1| at the working digits
              "roots": _root_errors(fns, _check_inputs(phi_v, psi_v, lam_v), c1_v, cg_v, all_pairs)}
    # (no unary plus out here: it would round to the global precision)
    return Resolvent(m1=x, m2=y, dm1_dlam=dm1, dm2_dlam=dm2, phi=P, psi=S, lam=L, c1=C1, c_gt1=CG, dps=dps,
                     iterations=it, residual=res, errors=errors, method="quartic (mp.polyroots) + Newton polish",
                     roots=[({"re": mpmath.re(a), "im": mpmath.im(a)} if b is None else a, b) for a, b in all_pairs],
                     provenance=provenance(dps=dps, method="quartic elimination, mp.polyroots, Newton on (G1, G2)",
                                           references=["docs/theory/spike-theory.md §6.1", "§6.3", "§6.4", "[AP20] (S67)-(S68)"]))


def resolvent(student, phi_v, psi_v, lam_v, dps: int = 15) -> Resolvent:
    """:func:`resolvent_from_constants` with :math:`c_1, c_{>1}` of a (centred) student.

    The traces depend on the student only through :math:`(c_1, c_{>1})`; :math:`c_0` plays
    no role here (the feature matrix uses the centred activation, docs/theory/hermite.md §2.3).
    """
    dps = check_dps(dps, MAX_DPS, optional=False)           # the public boundary: the digits asked
    s = Activation.from_any(student, "student", center=True)
    with precision(dps):                                    # the boundary: the working precision, once
        with refined(why="c1, c_>1 are taken as exact by the resolvent's error estimate"):
            c1_v, cg_v = numeric_coeffs(s, 1)[1], numeric_c_rest(s, 1)
        if s.is_zero_coeff(1) or c1_v == 0:
            raise HypothesisError("student", s.name, "an activation with c1 != 0", "c1 = 0")
        out, eps = solve_resolvent(phi_v, psi_v, lam_v, c1_v, cg_v), +mpmath.eps      # (+: at this precision)
        with refined(2 * REFINE_DIGITS, why="c1, c_>1's error: the change against quadratures 10 digits further"):
            c1_h, cg_h = numeric_coeffs(s, 1)[1], numeric_c_rest(s, 1)
            out.errors = dict(out.errors, c1=float(abs(out.c1 - abs(c1_h)) + 10 * eps * out.c1),
                              c_gt1=float(abs(out.c_gt1 - cg_h) + 10 * eps * out.c_gt1))
        return out


#: Points of one sweep that may be re-solved in mpmath when their float64 root fails the checks.
MAX_MP_FALLBACK = 200


def resolvent_sweep(phi_v, psi_v, lam_v, c1_v, cg_v, *, newton_steps: int = 3, return_derivatives: bool = True,
                    return_status: bool = False):
    r"""Vectorised float64 solution over arrays (broadcast) of :math:`(\phi,\psi,\lambda,c_1,c_{>1})`.

    The quartic of docs/theory/spike-theory.md §6.3 is solved for every point at once by the eigenvalues of a stack of
    companion matrices; the positive root is selected, then polished by ``newton_steps``
    vectorised Newton steps on :math:`(G_1,G_2)`.  Every root is then checked (m1, m2 > 0, the
    physical branch :math:`0<\lambda\psi m_1/\phi<1` and :math:`D>0`, a residual small on the scale of
    the equations); a point that fails is re-solved by :func:`resolvent_from_constants` (mpmath, at
    most :data:`MAX_MP_FALLBACK` per call), and comes back as ``nan`` only if that fails too.

    Returns ``(m1, m2, dm1_dlam, dm2_dlam, residual)`` as arrays (plus a status array of ``"ok"``,
    ``"mpmath"`` or ``"failed"`` with ``return_status=True``).
    """
    P, S, L, C1, CG = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (phi_v, psi_v, lam_v, c1_v, cg_v)))
    if np.any(P <= 0) or np.any(S <= 0) or np.any(L <= 0):
        raise InvalidParameterError("phi, psi, lam", "array", "positive values")
    C1 = np.abs(C1)
    fns = _compiled("numpy")
    args = (P.ravel(), S.ravel(), L.ravel(), C1.ravel(), CG.ravel())
    q = np.stack([np.broadcast_to(v, args[0].shape) for v in fns["q"](*args)], axis=-1)  # (npts, 5): q0..q4
    npts = q.shape[0]
    lead = q[:, 4]
    deg4 = np.abs(lead) > 1e-14 * np.max(np.abs(q), axis=1)
    comp = np.zeros((npts, 4, 4))
    comp[:, 1:, :-1] = np.eye(3)
    with np.errstate(divide="ignore", invalid="ignore"):
        comp[:, :, -1] = -q[:, :4] / lead[:, None]
    roots = np.full((npts, 4), np.nan, dtype=complex)
    if deg4.any():
        roots[deg4] = np.linalg.eigvals(comp[deg4])
    if (~deg4).any():  # cubic (c_>1 = 0)
        c3 = q[~deg4, 3]
        comp3 = np.zeros((int((~deg4).sum()), 3, 3))
        comp3[:, 1:, :-1] = np.eye(2)
        comp3[:, :, -1] = -q[~deg4, :3] / c3[:, None]
        roots[~deg4, :3] = np.linalg.eigvals(comp3)
    real = np.abs(roots.imag) <= 1e-7 * (1 + np.abs(roots))
    x = np.where(real, roots.real, np.nan)
    rep = [np.broadcast_to(a[:, None], x.shape) for a in args]
    y = fns["m2"](x, *rep)
    ok = (x > 0) & (y > 0)
    count = ok.sum(axis=1)
    idx = np.argmax(ok, axis=1)
    m1v = np.where(count == 1, x[np.arange(npts), idx], np.nan)
    m2v = np.where(count == 1, y[np.arange(npts), idx], np.nan)
    for _ in range(newton_steps):
        d1, d2, _ = _solve2(fns["J"](m1v, m2v, *args), fns["G"](m1v, m2v, *args))
        m1v, m2v = m1v - d1, m2v - d2
    g1, g2 = fns["G"](m1v, m2v, *args)
    resid = np.maximum(np.abs(g1), np.abs(g2))
    status = np.full(npts, "ok", dtype=object)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        j11, j12, j21, j22 = fns["J"](m1v, m2v, *args)
        scale = np.abs(j11 * m1v) + np.abs(j12 * m2v) + np.abs(j21 * m1v) + np.abs(j22 * m2v)
        ratio = args[2] * args[1] * m1v / args[0]
        good = ((m1v > 0) & (m2v > 0) & (ratio > 0) & (ratio < 1) & (fns["D"](m1v, *args) > 0)
                & (resid <= 1e-9 * scale) & np.isfinite(m1v) & np.isfinite(m2v))
    bad = np.flatnonzero(~good)
    for i in bad[:MAX_MP_FALLBACK]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = resolvent_from_constants(*(binary_exact(a[i]) for a in args[:3]), mpmath.mpf(float(args[3][i])),
                                             mpmath.mpf(float(args[4][i])), 15)
            m1v[i], m2v[i], resid[i] = float(r.m1), float(r.m2), float(r.residual)
            status[i] = "mpmath"
        except (ConvergenceError, InvalidParameterError, ZeroDivisionError, ValueError):
            m1v[i] = m2v[i] = resid[i] = np.nan
            status[i] = "failed"
    for i in bad[MAX_MP_FALLBACK:]:
        m1v[i] = m2v[i] = resid[i] = np.nan
        status[i] = "failed"
    shape = P.shape
    extra = (status.reshape(shape),) if return_status else ()
    if not return_derivatives:
        return (m1v.reshape(shape), m2v.reshape(shape), resid.reshape(shape)) + extra
    u1, u2, _ = _solve2(fns["J"](m1v, m2v, *args), fns["dG"](m1v, m2v, *args))
    dm1, dm2 = -u1, -u2
    return tuple(a.reshape(shape) for a in (m1v, m2v, dm1, dm2, resid)) + extra
