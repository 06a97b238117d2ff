r"""The bulk density of :math:`A=\Phi^\top\Phi/p` on the real axis, :math:`\mathrm{Im}\,z=0^+`, and the edges of
its support (docs/theory/srf-theory.md §7.1; (189)–(190) of [CPDKLZL24] App. F).

The V-equations of §7 are written without a square root, in the unknowns :math:`(V_1,V_2)`: with
:math:`\hat V_j(V)=\frac\alpha\beta\mathbb E_\kappa[\mu_j^2/(1+\mu_1^2V_1+\mu_\star^2V_2)]`, :math:`s=V_2\hat V_1`
and :math:`t(s)=\frac{1-c(1-\beta)s}{s(1+c\beta s)}` (the MP quadratic of §4.5 solved for t),

.. math:: F_1=\hat V_2-t\hat V_1-z=0,\qquad F_2=V_1\hat V_1-1+ts=0,

a holomorphic system (no branch cut) whose Jacobian is explicit.  At real :math:`z=x` the density is
:math:`\mathrm{Im}V_2/\pi` at the root reached by continuation from :math:`\mathrm{Im}z>0` (η-homotopy to
η = 0, then Newton at η = 0); the root is checked to be the physical one (:math:`\mathrm{Im}V_2>0`, and
:math:`s` the MP root with :math:`\mathrm{sign\,Im}\,s=-\mathrm{sign\,Im}\,t`).  The edges are the folds of
the real solution curve: the real roots of :math:`(F_1,F_2,\det\partial_VF)=0` in :math:`(V_1,V_2,x)`.

The moments ``M = (w, mu1^2, mu*^2)`` on a κ-rule are passed in by :mod:`onestep_theory.srf.spectral.spectrum`.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from ...core.caches import cached, cached_at_precision
from ...core.errors import ConvergenceError
from ...core.exact import to_exact, to_float, to_mpf
from ...core.precision import arb_to_mpf, mpf_to_arb, past_asked, ulps, working_digits
from ...hermite.activation import Activation
from ...hermite.quadrature import normal_rule
from ..features.cge import cge_arb, cge_coeffs
from ..features.kappa import kappa_features

__all__ = ["moments", "moments_cached", "moments_arb", "prepare", "system", "newton", "solve_real", "resolve", "find_edges", "refold",
           "comb_reach", "polish_edge", "polish_point"]

EPS = 2.0 ** -52
#: η-homotopy: from η = 64L down by factors RATIO over LEVELS levels (to about 1e-15 L), then η = 0 (L: bulk scale).
RATIO, LEVELS = 8.0, 18


@cached(maxsize=64)
def moments_cached(act, r, c, level):
    """(weights, mu0, mu1^2, mu*^2) on the κ-rule of :func:`~onestep_theory.srf.kappa_features`, float64."""
    hard, soft, hmax = kappa_features(act, None, float(r), float(c), 0.0)
    rule = normal_rule(hard, soft, digits=16, level=level, hmax=hmax)
    mu0, mu1, ms2 = cge_coeffs(act, float(r), float(c), rule.nodes, level=level)
    return rule.weights, mu0, mu1 * mu1, ms2


@cached_at_precision(maxsize=64)
def moments_arb(act, r, c, level):
    """:func:`moments_cached` as mpf arrays computed in Arb at the ambient working precision (cached per working
    precision).  The rules are built for the digits asked + 2, two digits below the last one asked, so that the
    change between two levels (the error estimate) is not swamped by their own discretisation error
    (docs/theory/numerics.md §3)."""
    hard, soft, hmax = kappa_features(act, None, float(r), float(c), 0.0)
    digits = past_asked(2, why="the rules' accuracy: the change between levels above their discretisation")
    rule = normal_rule(hard, soft, digits=digits, level=level, hmax=hmax, arb=True)
    m0, m1, ms = cge_arb(act, mpf_to_arb(r), mpf_to_arb(c), list(rule.nodes), level=level, digits=digits)
    conv = (lambda arr: np.array([arb_to_mpf(v) for v in arr], dtype=object))
    mu1 = conv(m1)
    return conv(rule.weights), conv(m0), mu1 * mu1, conv(ms)


def moments(student, r, c, level=0, mp=False):
    """:func:`moments_cached` (float64), or with ``mp`` :func:`moments_arb` at the ambient working precision, for a
    student as typed and exact (or float) r, c (docs/theory/srf-theory.md §7)."""
    act = Activation.from_any(student, "student")
    if not mp:
        return moments_cached(act, to_float(r, "r"), to_float(c, "c"), level)
    # exact inputs evaluated at the working precision (never via float)
    rm, cm = (v if isinstance(v, mpmath.mpf) else to_mpf(to_exact(v)) for v in (r, c))
    return moments_arb(act, rm, cm, level)


def prepare(M):
    r"""The κ-rule ready for :func:`system`: nodes of equal :math:`(\mu_1^2,\mu_\star^2)` merged (their weights
    added; the sums of §7 are unchanged, and at r = 0 the rule becomes one node), float64 weights made complex
    (a complex-by-float ``@`` bypasses BLAS and is ~500x slower)."""
    w, m1s, ms2 = M
    keys = {}
    for i, k in enumerate(zip(m1s.tolist(), ms2.tolist())):
        keys.setdefault(k, []).append(i)
    if len(keys) < len(w):
        idx = [v[0] for v in keys.values()]
        w, m1s, ms2 = np.array([sum(w[i] for i in v) for v in keys.values()], dtype=w.dtype), m1s[idx], ms2[idx]
    return (w.astype(complex), m1s, ms2) if w.dtype == float else (w, m1s, ms2)


def _wsum(arr, w):
    """Σ_k w_k arr[..., k]: a row sum (no BLAS call: on a loaded machine its threads cost more than the sum)."""
    return arr @ w if arr.dtype == object else (arr * w).sum(axis=-1)


def system(V1, V2, z, M, a, be, c):
    r"""``(F1, F2, J11, J12, J21, J22, s, t, size)`` of the real-axis system (docs/theory/srf-theory.md §7.1) at
    ``(V1, V2)`` (complex arrays of one shape, or mpc scalars); ``size`` is the sum of the moduli of the terms of
    F (the scale of its rounding)."""
    w, m1s, ms2 = M
    den = 1 + np.multiply.outer(V1, m1s) + np.multiply.outer(V2, ms2)
    inv = 1 / den
    i2 = inv * inv
    h1, h2 = a * _wsum(m1s * inv, w), a * _wsum(ms2 * inv, w)
    d11, d12, d22 = -a * _wsum(m1s * m1s * i2, w), -a * _wsum(m1s * ms2 * i2, w), -a * _wsum(ms2 * ms2 * i2, w)
    s = V2 * h1
    num, dn = 1 - c * (1 - be) * s, s * (1 + c * be * s)
    t = num / dn
    tp = (-c * (1 - be) * dn - num * (1 + 2 * c * be * s)) / (dn * dn)
    ds1, ds2 = V2 * d11, V2 * d12 + h1
    F1, F2 = h2 - t * h1 - z, V1 * h1 - 1 + t * s
    J11, J12 = d12 - t * d11 - h1 * tp * ds1, d22 - t * d12 - h1 * tp * ds2
    u = tp * s + t
    J21, J22 = h1 + V1 * d11 + u * ds1, V1 * d12 + u * ds2
    size = abs(h2) + abs(t * h1) + abs(z) + abs(V1 * h1) + 1 + abs(t * s)
    return F1, F2, J11, J12, J21, J22, s, t, size


def _step(out):
    F1, F2, J11, J12, J21, J22 = out[:6]
    det = J11 * J22 - J12 * J21
    return -(J22 * F1 - J12 * F2) / det, -(J11 * F2 - J21 * F1) / det, det


def newton(V1, V2, z, M, a, be, c, iters=3):
    """``iters`` Newton steps on the system at ``z`` (float64 arrays, vectorised); returns ``(V1, V2, last step)``."""
    step = np.inf
    for _ in range(iters):
        with np.errstate(all="ignore"):
            d1, d2, _ = _step(system(V1, V2, z, M, a, be, c))
        V1, V2 = V1 + d1, V2 + d2
        step = np.maximum(abs(d1), abs(d2))
        # a real root is approached with Im V squaring at each step: below 1e-60 |V| it is set to 0, which
        # changes nothing representable and keeps the arithmetic out of subnormal numbers (100x slower)
        V1, V2 = (np.where(abs(v.imag) < 1e-60 * abs(v), v.real + 0j, v) for v in (V1, V2))
    return V1, V2, step


def _bad(V1, V2, step):
    return (~(np.isfinite(V1) & np.isfinite(V2)) | (V2.imag < -1e-9 * abs(V2)) | (V1.imag < -1e-9 * abs(V1))
            | ~(step <= 1e-5 * (abs(V1) + abs(V2))))


def _advance(xs, V1, V2, e0, e1, M, a, be, c, depth=0):
    """Newton from the roots at η = e0 to η = e1 (arrays); points whose step is large or whose root leaves
    Im V >= 0 are redone through the geometric midpoint (at most 12 halvings of log η)."""
    W1, W2, step = newton(V1, V2, xs + 1j * e1, M, a, be, c, iters=4 if e1 > 0 else 6)
    bad = _bad(W1, W2, step) if e1 > 0 else _bad(W1, W2, np.zeros_like(step))
    if np.any(bad):
        if depth >= 12:
            i = int(np.argmax(bad))
            raise ConvergenceError(f"real-axis density: the continuation in eta left the physical branch at "
                                   f"x = {xs[i]:.6g} (eta = {e1:.3g})", depth, float(W2.imag[i]))
        em = math.sqrt(e0 * e1) if e1 > 0 else e0 / 8
        idx = np.nonzero(bad)[0]
        m1, m2, _ = _advance(xs[idx], V1[idx], V2[idx], e0, em, M, a, be, c, depth + 1)
        W1[idx], W2[idx], step[idx] = _advance(xs[idx], m1, m2, em, e1, M, a, be, c, depth + 1)
    return W1, W2, step


def solve_real(xs, M, a, be, c, scale):
    r"""The physical root at :math:`z=x+i0^+` for every x of ``xs`` (float64): continuation in η from 4·``scale``
    (where :math:`V\approx(-c/z,-1/z)`) to η = 0 with Newton steps, each η-level checked to keep
    :math:`\mathrm{Im}V_{1,2}\ge0` (and refined where it does not).  Returns ``(V1, V2, step, Jinv_norm, size)``
    at η = 0."""
    xs = np.asarray(xs, dtype=float)
    e0 = 64 * scale
    z = xs + 1j * e0
    V1, V2, step = newton(-c / z, -1 / z, z, M, a, be, c, iters=10)
    if np.any(_bad(V1, V2, step)):
        raise ConvergenceError("real-axis density: no root at eta = 64 x the bulk scale", 10, float(np.max(step)))
    for k in range(LEVELS + 1):
        e1 = e0 / RATIO if k < LEVELS else 0.0
        V1, V2, step = _advance(xs, V1, V2, e0, e1, M, a, be, c)
        e0 = e1
    return _finish(xs, V1, V2, step, M, a, be, c)


def _finish(xs, V1, V2, step, M, a, be, c):
    out = system(V1, V2, xs + 0j, M, a, be, c)
    _, _, det = _step(out)
    J11, J12, J21, J22 = out[2:6]
    jinv = np.maximum(abs(J22) + abs(J12), abs(J21) + abs(J11)) / abs(det)      # ||J^-1||_inf
    return V1, V2, step, jinv, out[8]


def resolve(xs, V1, V2, M, a, be, c, scale):
    """:func:`solve_real` on a nearby rule (the refined κ-rule) from the roots ``V1, V2`` found on another: Newton at
    η = 0 directly; points where it does not converge or changes side (real / complex) are redone by
    :func:`solve_real`."""
    xs = np.asarray(xs, dtype=float)
    W1, W2, step = newton(V1, V2, xs + 0j, M, a, be, c, iters=6)
    bad = _bad(W1, W2, step) | (_inside(W2) != _inside(V2))
    if np.any(bad):
        idx = np.nonzero(bad)[0]
        W1[idx], W2[idx], step[idx] = solve_real(xs[idx], M, a, be, c, scale)[:3]
    return _finish(xs, W1, W2, step, M, a, be, c)


def refold(E, M, a, be, c, scale):
    """The folds ``E`` of :func:`find_edges` re-solved on a nearby rule (the refined κ-rule) by the fold Newton
    from each; a hard edge at 0 is kept."""
    out = []
    try:
        for e, V1, V2, step, br in E:
            if V1 is None:
                out.append((e, V1, V2, step, br))
            else:
                W1, W2, x, last = _fold_newton(V1, V2, e, M, a, be, c)
                out.append((x, W1, W2, last, br))
    except ConvergenceError:
        out = find_edges(M, a, be, c, scale)
        if len(out) != len(E):
            raise ConvergenceError(f"spectrum: the support's edges depend on the kappa rule ({len(E)} edges, "
                                   f"{len(out)} on the refined rule): a thin tail split by the rule's nodes (r > 0, "
                                   f"small alpha/beta) is not resolved on the real axis", 0,
                                   abs(len(out) - len(E))) from None
    return out


def comb_reach(edge, outward, span, M, a, be, c, scale, n=64):
    r"""How far beyond ``edge`` (direction ``outward`` = ±1, over ``span``) the discrete κ-rule still has support:
    at r > 0 and small :math:`\alpha/\beta` the rule's nodes can split a thin tail of the density into separate
    small intervals ("a comb") that the scan of :func:`find_edges` steps over.  Returns the distance from the
    edge to the farthest point with :math:`\mathrm{Im}V_2>0` of ``n`` points (0 if none), plus one spacing."""
    xs = edge + outward * span * np.arange(1, n + 1) / n
    xs = xs[xs > 0]
    if xs.size == 0:
        return 0.0
    ins = _inside(solve_real(xs, M, a, be, c, scale)[1])
    return float(abs(xs[ins][-1] - edge) + span / n) if np.any(ins) else 0.0


def _inside(V2):
    return V2.imag > 1e-9 * abs(V2)


def _fold_newton(V1, V2, x, M, a, be, c, iters=8):
    """Newton on (F1, F2, det J) = 0 in the real unknowns (V1, V2, x), ∂det by central differences (float64)."""
    last = np.inf
    for _ in range(iters):
        F1, F2, J11, J12, J21, J22 = (np.real(v) for v in system(V1, V2, x, M, a, be, c)[:6])
        det = J11 * J22 - J12 * J21
        grad = []
        for j in range(2):
            h = 1e-6 * max(abs((V1, V2)[j]), 1e-300)      # per unknown: V1 ~ c V2 can differ by orders of magnitude
            p, q = ((V1 + h, V2), (V1 - h, V2)) if j == 0 else ((V1, V2 + h), (V1, V2 - h))
            dp, dq = (np.real(_step(system(*pp, x, M, a, be, c))[2]) for pp in (p, q))
            grad.append((dp - dq) / (2 * h))
        G = np.array([[J11, J12, -1.0], [J21, J22, 0.0], [grad[0], grad[1], 0.0]])
        try:
            d = np.linalg.solve(G, -np.array([F1, F2, det]))
        except np.linalg.LinAlgError:
            raise ConvergenceError("spectrum edge: singular fold system", 0, float(abs(det))) from None
        V1, V2, x = V1 + d[0], V2 + d[1], x + d[2]
        prev, last = last, abs(d[2])
        if not all(map(math.isfinite, (V1, V2, x))):
            raise ConvergenceError("spectrum edge: the fold Newton diverged", 0, math.inf)
        if last <= 4 * EPS * abs(x) or (last <= 1e-12 * abs(x) and last > prev / 2):     # at the rounding floor
            break
    else:
        raise ConvergenceError("spectrum edge: the fold Newton did not converge", iters, float(last))
    return V1, V2, x, last


def find_edges(M, a, be, c, scale, n_scan=160):
    r"""The edges of the support in float64: a scan :math:`x_k=X(k/N)^2` classifies points as inside
    (:math:`\mathrm{Im}V_2>0` at η = 0) or outside; each change is bracketed and the fold
    :math:`(F,\det J)=0` is solved from the real root at the outside end (bisection first if that Newton leaves the
    bracket).  ``X`` is doubled until the top of the scan is outside.  Returns a list of
    ``(edge, V1, V2, step, bracket)``; a support reaching the first scan point gives the edge 0 with error x_1."""
    X = 8 * scale
    for _ in range(8):
        xs = X * (np.arange(1, n_scan + 1) / n_scan) ** 2
        V1, V2, _, _, _ = solve_real(xs, M, a, be, c, scale)
        ins = _inside(V2)
        if not np.any(ins[-n_scan // 8:]):
            break
        X *= 4
    else:
        raise ConvergenceError("spectrum: the support's top edge was not found below x = %.3g" % X, 8, X)
    if not np.any(ins):
        raise ConvergenceError("spectrum: no bulk found on the scan (0, %.3g]" % X, 0, X)
    edges = []
    if ins[0]:
        edges.append((0.0, None, None, xs[0], (0.0, xs[0])))
    for k in np.nonzero(ins[1:] != ins[:-1])[0]:
        o, i = (k, k + 1) if not ins[k] else (k + 1, k)
        edges.append(_edge_between(xs[o], xs[i], complex(V1[o]).real, complex(V2[o]).real, M, a, be, c, scale))
    return edges


def _edge_between(xo, xi, V1, V2, M, a, be, c, scale):
    lo, hi = sorted((xo, xi))
    for _ in range(40):
        try:
            e1, e2, e, step = _fold_newton(V1, V2, xo, M, a, be, c)
            if lo <= e <= hi:
                return (e, e1, e2, step, (lo, hi))
        except ConvergenceError:
            pass
        xm = 0.5 * (xo + xi)      # bisect on inside/outside and retry from the new outside end
        W1, W2, _, _, _ = solve_real(np.array([xm]), M, a, be, c, scale)
        if _inside(W2)[0]:
            xi = xm
        else:
            xo, V1, V2 = xm, float(W1[0].real), float(W2[0].real)
    raise ConvergenceError(f"spectrum: the edge in [{lo:.6g}, {hi:.6g}] was not resolved", 40, hi - lo)


def polish_edge(V1, V2, x, M, a, be, c):
    """The fold at the ambient working precision (mpmath, ``wd`` digits), from a float64 fold: Newton on
    (F1, F2, det J) with ∂det by central differences of step 10^(-wd/2) (the step that balances truncation and
    rounding); converged at 10^-(wd-3) (1000 ulps).  Returns ``(x, V1, V2, step)``."""
    V1, V2, x = mpmath.mpf(V1), mpmath.mpf(V2), mpmath.mpf(x)
    wd = working_digits()
    tol, last = ulps(3, why="Newton on the fold converged at 1000 ulps"), mpmath.inf
    for _ in range(30):
        F1, F2, J11, J12, J21, J22 = system(V1, V2, x, M, a, be, c)[:6]
        det = J11 * J22 - J12 * J21
        h1, h2 = (mpmath.mpf(10) ** -(wd // 2) * abs(v) for v in (V1, V2))
        g1 = (_step(system(V1 + h1, V2, x, M, a, be, c))[2] - _step(system(V1 - h1, V2, x, M, a, be, c))[2]) / (2 * h1)
        g2 = (_step(system(V1, V2 + h2, x, M, a, be, c))[2] - _step(system(V1, V2 - h2, x, M, a, be, c))[2]) / (2 * h2)
        G = mpmath.matrix([[J11, J12, -1], [J21, J22, 0], [g1, g2, 0]])
        try:
            d = mpmath.lu_solve(G, mpmath.matrix([-F1, -F2, -det]))
        except ZeroDivisionError:                   # mpmath: "matrix is numerically singular"
            raise ConvergenceError("spectrum edge: singular fold system (mpmath)", 0, float(abs(det))) from None
        V1, V2, x = V1 + d[0], V2 + d[1], x + d[2]
        new = abs(d[2])
        if new <= tol * abs(x) or new > last / 2:
            last = new
            break
        last = new
    else:
        raise ConvergenceError("spectrum edge: the mpmath fold Newton did not converge", 30, float(last))
    return x, V1, V2, last


def polish_point(V1, V2, x, M, a, be, c):
    r"""Newton at :math:`z=x` in mpmath (the ambient working precision, ``wd`` digits) from a float64 root,
    converged at 10^-(wd-3) (1000 ulps).  Returns ``(V1, V2, last step, ||J^-1||, size)``; raises if the root leaves
    :math:`\mathrm{Im}V_2>0`."""
    V1, V2 = mpmath.mpc(V1), mpmath.mpc(V2)
    tol, last = ulps(3, why="Newton at z = x converged at 1000 ulps"), mpmath.inf
    for _ in range(40):
        d1, d2, _ = _step(system(V1, V2, x, M, a, be, c))
        V1, V2 = V1 + d1, V2 + d2
        new = max(abs(d1), abs(d2))
        if new <= tol * abs(V2) or new > last / 2:
            last = new
            break
        last = new
    out = system(V1, V2, x, M, a, be, c)
    J11, J12, J21, J22 = out[2:6]
    det = J11 * J22 - J12 * J21
    if not V2.imag > 0:
        raise ConvergenceError(f"spectrum: the mpmath Newton at x = {mpmath.nstr(x, 8)} left the physical branch",
                               0, float(abs(V2.imag)))
    return V1, V2, last, max(abs(J22) + abs(J12), abs(J21) + abs(J11)) / abs(det), out[8]
