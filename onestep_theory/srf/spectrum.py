r"""Spectrum of the learned-feature covariance :math:`A=\Phi^\top\Phi/p` (docs/theory/srf-theory.md §7; [DPCKLL24]).

Bulk (189)–(190): the V-equations of Result 3.3 with :math:`\lambda\to-z`, :math:`z\in\mathbb C^+`,

.. math::
    \hat V_j=\tfrac\alpha\beta\mathbb E_\kappa\Big[\frac{\mu_j^2}{1+\mu_1^2V_1+\mu_\star^2V_2}\Big],\quad
    V_2(z)=\int\frac{d\mu_{\rm MP}}{-z+\hat V_1\varrho+\hat V_2},\quad g(z)\simeq V_2(z),\quad
    \rho_A(x)=\tfrac1\pi\,\mathrm{Im}\,V_2(x+i\eta),

solved with the closed-form Stieltjes transform of the MP measure at complex
:math:`t=(-z+\hat V_2)/\hat V_1` (root with :math:`\mathrm{sign\,Im}\,s=-\mathrm{sign\,Im}\,t`), damping and
continuation in x.  The mean spike (191): :math:`\lambda_{\max}(A)\simeq n\,\mathbb E_\kappa\mu_0^2`.
"""

from __future__ import annotations

import cmath
import dataclasses
import math

import mpmath
import numpy as np
import sympy as sp

from ..core.caches import cached
from .cge import cge_arb, cge_coeffs
from ..core.errors import ConvergenceError, InvalidParameterError
from ..hermite.activation import Activation
from ..core.precision import GUARD_DIGITS, arb_to_mpf, mpf_to_arb, precision, workdps
from ..hermite.quadrature import normal_rule
from ..core.results import VouchedResult, digits_of, provenance
from ..core.exact import check_dps, check_real, float_in, to_exact, to_float, to_mpf
from .kappa import kappa_features
from .realaxis import EPS, find_edges, polish_edge, polish_point, prepare, refold, resolve, solve_real
from ..core.limits import MAX_SRF_DPS

__all__ = ["stieltjes", "stieltjes_checked", "density", "density_real", "mean_spike", "Spectrum", "spectrum",
           "ridge_points"]


def _mp_stieltjes_complex(c, beta, t):
    """s = int dmu_MP/(rho + t) for complex t: root of c beta t s^2 + (t + c - c beta) s - 1 = 0 (docs/theory/srf-theory.md
    §4.5 closed form), on the branch sign Im s = -sign Im t with s ~ 1/t at large |t| (§7 'Numerics').
    Works for Python complex and for mpmath ``mpc``."""
    a, b = c * beta * t, t + c - c * beta
    sqrt = cmath.sqrt if isinstance(t, complex) else mpmath.sqrt
    disc = sqrt(b * b + 4 * a)
    roots = [(-b + disc) / (2 * a), (-b - disc) / (2 * a)]
    if t.imag != 0:
        good = [s for s in roots if s.imag * t.imag < 0]
        if len(good) == 1:
            return good[0]
    return min(roots, key=lambda s: abs(s * t - 1))      # s ~ 1/t branch


@cached(maxsize=64)
def _moments_cached(act, r, c, level, dps):
    """(weights, mu0, mu1^2, mu*^2) on the κ-rule of :func:`~onestep_theory.srf.kappa_features` (float64, or
    mpf arrays computed in Arb at ``dps`` working digits)."""
    hard, soft, hmax = kappa_features(act, None, float(r), float(c), 0.0)
    if dps is None:
        rule = normal_rule(hard, soft, digits=16, level=level, hmax=hmax)
        mu0, mu1, ms2 = cge_coeffs(act, float(r), float(c), rule.nodes, level=level)
        return rule.weights, mu0, mu1 * mu1, ms2
    with workdps(dps):
        rule = normal_rule(hard, soft, digits=dps - GUARD_DIGITS + 2, level=level, hmax=hmax, dps=dps)
        m0, m1, ms = cge_arb(act, mpf_to_arb(r), mpf_to_arb(c), list(rule.nodes), level=level,
                             digits=dps - GUARD_DIGITS + 2)
        conv = (lambda arr: np.array([arb_to_mpf(v) for v in arr], dtype=object))
        mu1 = conv(m1)
        return conv(rule.weights), conv(m0), mu1 * mu1, conv(ms)


def _moments(student, r, c, level=0, dps=None):
    act = Activation.from_any(student, "student")
    if dps is None:
        return _moments_cached(act, to_float(r, "r"), to_float(c, "c"), level, None)
    with workdps(dps):     # exact inputs evaluated at the working precision (never via float)
        rm, cm = (v if isinstance(v, mpmath.mpf) else to_mpf(to_exact(v), dps) for v in (r, c))
    return _moments_cached(act, rm, cm, level, dps)


def _vmap(V, M, z, al, be, c):
    """One application of (189)–(190): (V1, V2) -> the MP integrals at the hats of (V1, V2)."""
    w, _, m1s, ms2 = M
    V1, V2 = V
    den = 1 + m1s * V1 + ms2 * V2
    hV1 = al / be * (w @ (m1s / den))
    hV2 = al / be * (w @ (ms2 / den))
    t = (-z + hV2) / hV1
    s = _mp_stieltjes_complex(c, be, t)
    return (1 - t * s) / hV1, s / hV1


def stieltjes(student, z, *, r, c, alpha, beta, level: int = 0, damping=0.5, tol=1e-13, max_iter=20000, init=None,
              dps: int | None = None, _with_error: bool = False):
    r""":math:`g(z)\simeq V_2(z)` for complex z (or :math:`z=-\lambda<0`): returns ``(V1, V2)``.

    float64: a damped fixed point, then two Newton steps (complex 2×2 Jacobian by central
    differences).  With ``dps``: chord-Newton in mpmath (``mpc``) on Arb-computed κ-rules, from the
    float64 root.  Raises :class:`~onestep_theory.errors.ConvergenceError` if the iteration fails.
    """
    M = _moments(student, r, c, level)
    c_f, al, be = to_float(c, "c"), to_float(alpha, "alpha"), to_float(beta, "beta")
    zc = complex(z)
    V = init if init is not None else (complex(1.0, 0.1), complex(1.0, 0.1))
    V = (complex(V[0]), complex(V[1]))
    err, best, since = math.inf, math.inf, 0
    for it in range(1, max_iter + 1):
        n = _vmap(V, M, zc, al, be, c_f)
        err = max(abs(n[0] - V[0]), abs(n[1] - V[1])) / max(1.0, abs(V[1]))
        V = (damping * V[0] + (1 - damping) * n[0], damping * V[1] + (1 - damping) * n[1])
        if err < tol or not all(map(cmath.isfinite, V)):
            break
        best, since = (err, 0) if err < 0.9 * best else (best, since + 1)
        if since > 50 and best < 1e-8:
            # stalled at the rounding floor of the map (large |z|: the MP root loses ~|t| eps); the Newton
            # steps below finish, and their last step is the error estimate
            err = 0.0
            break
    if not err < tol:
        raise ConvergenceError(f"Stieltjes transform at z={z} did not converge", it, err)
    J = np.empty((2, 2), dtype=complex)
    for j in range(2):
        h = 1e-6 * max(1.0, abs(V[j]))
        vp, vm = list(V), list(V)
        vp[j] += h
        vm[j] -= h
        fp, fm = _vmap(vp, M, zc, al, be, c_f), _vmap(vm, M, zc, al, be, c_f)
        J[:, j] = [(fp[i] - fm[i]) / (2 * h) for i in range(2)]
    Jinv = np.linalg.inv(np.eye(2) - J)
    if dps is None:
        for _ in range(2):
            n = _vmap(V, M, zc, al, be, c_f)
            dv = Jinv @ np.array([n[0] - V[0], n[1] - V[1]])
            V = (V[0] + dv[0], V[1] + dv[1])
        step = float(np.max(np.abs(dv)))
        return (V, step) if _with_error else V
    with precision(dps):
        wd = dps + GUARD_DIGITS
        Mm = _moments(student, r, c, level, wd)
        zm = mpmath.mpc(z) if not isinstance(z, str) else mpmath.mpc(mpmath.mpf(z))
        al_m, be_m, c_m = (v if isinstance(v, mpmath.mpf) else to_mpf(to_exact(v), dps) for v in (alpha, beta, c))
        Jm = mpmath.matrix(Jinv.tolist())
        V = [mpmath.mpc(v) for v in V]
        step = mpmath.inf
        for _ in range(40):
            n = _vmap(V, Mm, zm, al_m, be_m, c_m)
            dv = Jm * mpmath.matrix([n[0] - V[0], n[1] - V[1]])
            V = [V[0] + dv[0], V[1] + dv[1]]
            new = max(abs(dv[0]), abs(dv[1]))
            if new < mpmath.mpf(10) ** -(wd - 3) or new > step / 2:
                step = new
                break
            step = new
        res = (tuple(V), float(step))
    return res if _with_error else res[0]


def stieltjes_checked(student, z, *, r, c, alpha, beta, dps=None, init=None):
    """``(V1, V2, err1, err2)``: :func:`stieltjes` at two κ-rule levels; errors = change + last Newton step."""
    out = []
    for level in (0, 1):
        (V, step) = stieltjes(student, z, r=r, c=c, alpha=alpha, beta=beta, level=level, dps=dps, init=init,
                              _with_error=True)
        out.append((V, step))
    (V0, _), (V1, step) = out
    rnd = 1e-14 if dps is None else 10.0 ** -(dps + GUARD_DIGITS - 2)
    errs = [float(abs(a - b)) + float(step) + rnd * max(1.0, float(abs(a))) for a, b in zip(V1, V0)]
    return V1[0], V1[1], errs[0], errs[1]


def density(student, xs, *, r, c, alpha, beta, eta=None, nodes=None):
    r"""Bulk density :math:`\frac1\pi\mathrm{Im}V_2(x+i\eta)` on a grid, continuation in x with warm starts."""
    xs = np.asarray(xs, dtype=float)
    if eta is None:
        eta = 1e-3 * max(float(np.max(np.abs(xs))), 1e-3)
    out = np.empty_like(xs)
    init = None
    for i, xv in enumerate(xs):
        V1, V2 = stieltjes(student, complex(xv, eta), r=r, c=c, alpha=alpha, beta=beta, init=init)
        if V2.imag < -1e-10:
            raise ConvergenceError(f"Im V2 < 0 at x={xv}: wrong branch", 0, float(-V2.imag))
        out[i] = V2.imag / math.pi
        init = (V1, V2)
    return out


def mean_spike(student, *, r, c, alpha, d, nodes=None) -> float:
    r""":math:`n\,\mathbb E_\kappa\mu_0(\kappa)^2` with :math:`n=\alpha d` (191)."""
    w, mu0, _, _ = _moments(student, r, c)
    return to_float(alpha, "alpha") * d * float(w @ (mu0 * mu0))


@dataclasses.dataclass
class Spectrum(VouchedResult):
    """Bulk density on the real axis and the edges of its support, :math:`V_2(-\\lambda)`, the atom at 0 and the
    mean spike, each with an error estimate (``errors``; docs/theory/srf-theory.md §7.1)."""

    ERROR_KEYS = {"stieltjes_at_minus_lambda": "stieltjes"}

    x: list
    density: list
    edges: list
    stieltjes_at_minus_lambda: dict
    atom_at_zero: object
    mean_spike_per_d: object
    errors: dict
    dps: int | None
    provenance: dict


def ridge_points(lams) -> list:
    """``[(key, exact lambda)]`` of the ridge values at which :math:`V_2(-\\lambda)` is reported: the key is the string
    as typed (or ``%g`` of a number); each λ must be a finite real number > 0."""
    out = []
    for lv in lams:
        lam_x = to_exact(lv, "lam")
        if not lam_x > 0:
            raise InvalidParameterError("lam", lv, "finite real numbers > 0")
        out.append((str(lv) if isinstance(lv, str) else f"{float(lam_x):g}", lam_x))
    return out


#: Largest density grid (bounded work).
MAX_GRID = 20000


def _edges_f64(Ms, a, be, c, scale):
    """Edges at κ-rule levels 0 and 1 (float64): ``(level-1 folds, errors)``; error = level change + the last
    fold-Newton step + 100 ε |x| (rounding); a hard edge at 0 (support reaching the first scan point) has the error
    x_1 of that scan point (docs/theory/srf-theory.md §7.1)."""
    E0 = find_edges(Ms[0], a, be, c, scale)
    E1 = refold(E0, Ms[1], a, be, c)
    errs = [e1[3] if e1[1] is None else abs(e1[0] - e0[0]) + e1[3] + 100 * EPS * abs(e1[0])
            for e0, e1 in zip(E0, E1)]
    return E1, errs


def density_real(student, xs, *, r, c, alpha, beta, dps: int | None = None):
    r"""The bulk density :math:`\rho(x)=\frac1\pi\mathrm{Im}V_2(x+i0^+)` at every x of ``xs`` and the edges of the
    support, solved on the real axis (docs/theory/srf-theory.md §7.1).  Returns
    ``(density, density_errors, edges, edge_errors)``; outside the support (farther from it than twice an edge's
    error) the density is exactly 0 with error 0, x <= 0 included (the atom is reported apart).

    Errors: the change from the κ-rule of level 0 to level 1, plus the last Newton step, plus the rounding
    bound :math:`\varepsilon\,\|J^{-1}\|\sum|\text{terms}|`; with ``dps`` every root is polished in mpmath at
    ``dps + 10`` digits on both rules, and fewer than ``dps`` digits raise
    :class:`~onestep_theory.errors.ConvergenceError` (a density within an edge's error of that edge: absolute
    criterion :math:`10^{-\mathrm{dps}}\max\rho`)."""
    al, be_f, c_f = float_in(alpha, "alpha"), float_in(beta, "beta"), to_float(c, "c")
    a = al / be_f
    xs = np.asarray(xs, dtype=float)
    Ms = [prepare(tuple(_moments(student, r, c, level)[i] for i in (0, 2, 3))) for level in (0, 1)]
    w, m1s, ms2 = Ms[1]
    scale = max(a, 1.0) * float(np.real(w @ (m1s * c_f + ms2)))
    E, eerr = _edges_f64(Ms, a, be_f, c_f, scale)
    edges = [e[0] for e in E]
    dist = np.array([min([abs(x - e) for e in edges]) for x in xs], dtype=float)
    near = dist <= 2 * np.array([eerr[int(np.argmin([abs(x - e) for e in edges]))] for x in xs], dtype=float)
    inside = np.array([any(lo < x < hi for lo, hi in zip(edges[::2], edges[1::2])) for x in xs], dtype=bool) & ~near
    dens, derr = [0.0] * len(xs), [0.0] * len(xs)
    sol = [solve_real(xs, Ms[0], a, be_f, c_f, scale)]
    sol.append(resolve(xs, sol[0][0], sol[0][1], Ms[1], a, be_f, c_f, scale))
    if np.any(sol[1][1].imag[~inside & ~near & (xs > 0)] > 0):
        raise ConvergenceError("spectrum: a point outside the edges found has a density > 0 (an interval narrower "
                               "than the scan step)", 0, 0.0)
    V1, V2, step, jinv, size = sol[1]
    bad = inside & ~(V2.imag > 0)
    if np.any(bad):
        raise ConvergenceError(f"spectrum: no physical root at x = {xs[bad][0]:.6g} inside the support", 0, 0.0)
    rho = [v.imag / math.pi for v in (sol[0][1], V2)]
    rnd = 10 * EPS * math.log2(len(w) + 2) * jinv * size
    for i in np.nonzero(inside)[0]:
        dens[i], derr[i] = float(rho[1][i]), float(abs(rho[1][i] - rho[0][i]) + (step[i] + rnd[i]) / math.pi)
    for i in np.nonzero(near)[0]:       # within an edge's error: rho <= rho at twice that error inside, taken whole
        k = int(np.argmin([abs(xs[i] - e) for e in edges]))
        probe = edges[k] + (1 if k % 2 == 0 else -1) * (dist[i] + 2 * eerr[k])
        bound = solve_real(np.array([probe]), Ms[1], a, be_f, c_f, scale)[1][0].imag / math.pi
        dens[i], derr[i] = 0.0, float(2 * bound)
    if dps is None:
        return dens, derr, edges, eerr
    return _polish(student, r, c, alpha, beta, dps, xs, inside, sol, E, eerr, dens, derr)


def _polish(student, r, c, alpha, beta, dps, xs, inside, sol, E, eerr, dens, derr):
    """The mpmath stage of :func:`density_real`: every inside root and every fold polished at ``dps + 10`` digits
    on both κ-rules; errors = rule change + last Newton step + 10^-(wd-2) ||J^-1|| Σ|terms|."""
    wd = dps + GUARD_DIGITS
    with precision(dps):
        al_m, be_m, c_m = (to_mpf(to_exact(v), dps) for v in (alpha, beta, c))
        a_m = al_m / be_m
        Mm = [prepare(tuple(_moments(student, r, c, level, wd)[i] for i in (0, 2, 3))) for level in (0, 1)]
        ulp = mpmath.mpf(10) ** -(wd - 2)
        edges, errs = [], []
        for e, ee in zip(E, eerr):
            if e[1] is None:                # a hard edge at 0: its error is the first scan point
                edges.append(mpmath.mpf(0))
                errs.append(ee)
                continue
            (x0, *_), (x1, _, _, st) = (polish_edge(e[1], e[2], e[0], M, a_m, be_m, c_m, wd) for M in Mm)
            edges.append(x1)
            errs.append(float(abs(x1 - x0) + st + ulp * abs(x1)))
        for i in np.nonzero(inside)[0]:
            x = mpmath.mpf(float(xs[i]))
            (_, v0, *_), (_, v1, st, jn, sz) = (polish_point(sol[1][0][i], sol[1][1][i], x, M, a_m, be_m, c_m, wd)
                                                for M in Mm)
            dens[i] = v1.imag / mpmath.pi
            derr[i] = float(abs(v1.imag - v0.imag) / mpmath.pi + (st + ulp * jn * sz) / mpmath.pi)
        for i in np.nonzero(~inside & (np.array(derr) > 0))[0]:    # near an edge in float64: the polished edges decide
            x = mpmath.mpf(float(xs[i]))
            k = min(range(len(edges)), key=lambda j: abs(x - edges[j]))
            if abs(x - edges[k]) > 2 * errs[k] and not any(lo < x < hi for lo, hi in zip(edges[::2], edges[1::2])):
                derr[i] = 0.0
        top = max([abs(v) for v in dens] + [mpmath.mpf(0)])
        for i, (v, e) in enumerate(zip(dens, derr)):
            if not inside[i]:
                dens[i] = mpmath.mpf(0)
                if e > float(top) * 10.0 ** -dps:
                    raise ConvergenceError(f"spectrum: the density at x = {xs[i]:.6g}, within an edge's error of the "
                                           f"edge, is bounded by {e:.3g} only", 0, e)
            elif digits_of(v, e) < dps:
                raise ConvergenceError(f"spectrum: density at x = {xs[i]:.6g}: {dps} digits requested, only "
                                       f"{digits_of(v, e)} reached", 0, e)
        for x, e in zip(edges, errs):
            if x != 0 and digits_of(x, e) < dps:
                raise ConvergenceError(f"spectrum: edge {mpmath.nstr(x, 8)}: {dps} digits requested, only "
                                       f"{digits_of(x, e)} reached", 0, e)
    return dens, derr, edges, errs


def spectrum(student, *, r, c, alpha, beta, xs=None, lams=(0.1, 0.5, 1.0, 3.0), eta=None, nodes=None,
             dps: int | None = None) -> Spectrum:
    """Bulk density on a grid and the edges of its support (on the real axis, :func:`density_real`),
    :math:`V_2(\\lambda)` at :math:`z=-\\lambda`, the atom and the mean spike per d, with error estimates (two
    κ-rule levels and the last Newton step); ``dps`` polishes every value in mpmath and certifies it (or raises
    :class:`~onestep_theory.errors.ConvergenceError`).  The default grid covers (0, 1.05 × top edge]; ``eta``
    is accepted for compatibility and ignored (docs/theory/srf-theory.md §7.1)."""
    al, be = float_in(alpha, "alpha"), float_in(beta, "beta")
    r = check_real(r, "r", 0, None)
    c = check_real(c, "c", 0, None)
    if not float(c) > 0:
        raise InvalidParameterError("c", c, "a real number > 0")

    dps = check_dps(dps, MAX_SRF_DPS)
    if xs is not None:
        xs = np.asarray(xs, dtype=float)
        if xs.size > MAX_GRID or not np.all(np.isfinite(xs)):
            raise InvalidParameterError("z", f"{xs.size} points", f"at most {MAX_GRID} finite grid points")
    if xs is None:
        top = density_real(student, [], r=r, c=c, alpha=alpha, beta=beta)[2][-1]
        n = 200 if dps is None else 40
        xs = 1.05 * top * np.arange(1, n + 1) / n
    dens, derr, edges, eerr = density_real(student, xs, r=r, c=c, alpha=alpha, beta=beta, dps=dps)
    st, sterr = {}, {}
    for key, lam_x in ridge_points(lams):
        with precision(dps or 15):          # exact lambda becomes an mpf here, at the working precision
            z = -float(lam_x) if dps is None else -to_mpf(lam_x, dps)
        _, V2, _, e2 = stieltjes_checked(student, z, r=r, c=c, alpha=alpha, beta=beta, dps=dps)
        st[key] = V2.real
        sterr[key] = e2
    sp_vals = []
    for level in (0, 1):
        if dps is None:
            w, mu0, _, _ = _moments(student, r, c, level)
            sp_vals.append(al * float(w @ (mu0 * mu0)))
        else:
            with precision(dps):
                w, mu0, _, _ = _moments(student, r, c, level, dps + GUARD_DIGITS)
                sp_vals.append(to_mpf(to_exact(alpha), dps) * (w @ (mu0 * mu0)))
    rnd = 1e-14 if dps is None else 10.0 ** -(dps + GUARD_DIGITS - 2)
    sp_err = float(abs(sp_vals[1] - sp_vals[0])) + rnd
    with precision(dps or 15):        # the atom (1 - alpha/beta)_+ is exact: its error is its rounding
        atom = sp.Max(0, 1 - to_exact(alpha, "alpha") / to_exact(beta, "beta"))
        atom = float(atom) if dps is None else to_mpf(atom, dps)
    errors = {"density": derr, "edges": eerr, "stieltjes": sterr, "mean_spike_per_d": sp_err,
              "atom_at_zero": float(abs(atom)) * (EPS if dps is None else 10.0 ** -(dps + GUARD_DIGITS - 1))}
    if dps is not None:
        # the mean spike is 0 for odd sigma at r = 0: absolute criterion, its error against alpha E[mu0^2 + c mu1^2
        # + mu*^2] (the scale of the features' second moment)
        w, mu0, m1s, ms2 = _moments(student, r, c, 1)
        spread = al * float(w @ (mu0 * mu0 + float(c) * m1s + ms2))
        worst = min([digits_of(v, e) for v, e in zip(st.values(), sterr.values())]
                    + [digits_of(max(abs(sp_vals[1]), spread), sp_err)])
        if worst < dps:
            raise ConvergenceError(f"spectrum: {dps} digits requested, only {worst} reached", 0, sp_err)
    return Spectrum(x=list(map(float, xs)), density=dens, edges=edges, stieltjes_at_minus_lambda=st,
                    atom_at_zero=atom, mean_spike_per_d=sp_vals[1], errors=errors,
                    dps=dps, provenance=provenance(dps=dps, method="V2(-lambda): damped fixed point + Newton with the "
                                                   "complex MP Stieltjes transform; density: Newton on the real axis "
                                                   "(Im z = 0+) from an eta-homotopy, edges: folds (F, det J) = 0; "
                                                   "errors from a refined kappa rule and the last Newton step",
                                                   references=["[DPCKLL24]", "[CPDKLZL24] App. F (189)-(191)",
                                                               "docs/theory/srf-theory.md §7.1",
                                                               "docs/theory/numerics.md §5"]))
