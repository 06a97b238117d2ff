r"""The density of :math:`A=\Phi^\top\Phi/p` ((189)–(190) of [CPDKLZL24] App. F) on the real axis at given points,
the edges of its support and their errors, in float64 and at ``dps`` digits (docs/theory/srf-theory.md §7.1): the
driver of the solvers of :mod:`onestep_theory.srf.spectral.realaxis` on two κ-rules (the refinement that measures the
error).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from ...core.caches import cached
from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import binary_exact, float_in, to_exact, to_float, to_mpf
from ...core.precision import asked_digits, precision, refined, ulps
from ...core.results import digits_of
from ...hermite.activation import Activation
from .realaxis import (EPS, comb_reach, find_edges, moments, moments_cached, polish_edge, polish_point, prepare,
                       refold, resolve, solve_real)

__all__ = ["density_real"]


@cached(maxsize=32)
def _edges_cached(act, r_f, c_f, a, be_f):
    """``(Ms, scale, edges, errors)`` for one setting (float64), cached: the edges are found once per setting."""
    Ms = [prepare(tuple(moments_cached(act, r_f, c_f, level)[i] for i in (0, 2, 3))) for level in (0, 1)]
    w, m1s, ms2 = Ms[1]
    if not np.any(m1s > 0):
        raise ConvergenceError("spectrum: mu1 = 0 on the whole kappa rule (e.g. an even student at r = 0): the "
                               "real-axis equations of docs/theory/srf-theory.md §7.1 need mu1 != 0", 0, 0.0)
    scale = max(a, 1.0) * float(np.real(w @ (m1s * c_f + ms2)))
    E, eerr = _edges_f64(Ms, a, be_f, c_f, scale)
    return Ms, scale, tuple(E), tuple(eerr)


def _edges_f64(Ms, a, be, c, scale):
    """Edges at κ-rule levels 0 and 1 (float64): ``(level-1 folds, errors)``; error = level change + the last
    fold-Newton step + 100 ε |x| (rounding); a hard edge at 0 (support reaching the first scan point) has the error
    x_1 of that scan point (docs/theory/srf-theory.md §7.1)."""
    E0 = find_edges(Ms[0], a, be, c, scale)
    E1 = refold(E0, Ms[1], a, be, c, scale)
    errs = [e1[3] if e1[1] is None else abs(e1[0] - e0[0]) + e1[3] + 100 * EPS * abs(e1[0])
            for e0, e1 in zip(E0, E1)]
    if len(Ms[1][0]) > 1:       # r > 0: a thin tail split by the κ-rule's nodes widens the outer edges' errors
        span = 0.25 * (E1[-1][0] - E1[0][0])
        for k, out in ((0, -1), (len(E1) - 1, 1)):
            if E1[k][1] is not None:        # below the lower edge: the whole gap (0, e), on 64 points
                errs[k] += comb_reach(E1[k][0], out, min(span, E1[k][0]) if out < 0 else span, Ms[1], a, be, c, scale)
    return E1, errs


#: Bounded work: points x κ-nodes of one float64 batch (memory), and in all with ``dps`` (time).
CHUNK_WORK, MAX_DPS_WORK = 2 ** 17, 40000
#: Most working digits added for a density near an edge (its condition number |x|/|x - edge| up to ~1e30 beyond the
#: guard digits); the edge's own float64 error (~1e-15 relative) is the closest approach that is solved at all.
EDGE_EXTRA = 30
#: Most points with ``dps`` closer to an edge than twice its float64 error (each a continuation, ~1-20 s at r > 0).
MAX_CONTINUED = 16


def _solve_chunked(xs, Ms, a, be, c, scale):
    """:func:`solve_real` on the rule of level 0 and :func:`resolve` on level 1, in batches of at most
    ``CHUNK_WORK`` points x nodes (a 20000-point grid on a 300-node rule would otherwise allocate gigabytes)."""
    n = max(16, CHUNK_WORK // len(Ms[0][0]))
    parts = []
    for k in range(0, max(len(xs), 1), n):
        x = xs[k:k + n]
        s0 = solve_real(x, Ms[0], a, be, c, scale)
        parts.append((s0, resolve(x, s0[0], s0[1], Ms[1], a, be, c, scale)))
    return [tuple(np.concatenate([p[lev][i] for p in parts]) for i in range(5)) for lev in (0, 1)]


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
    # each x exactly as given (a typed text, a Rational, or the binary value of a float) for the --dps polish: a
    # decimal x read through float64 moves the density by rho'(x) 1e-16 |x|, large near an edge
    exact_xs = [to_exact(v, "z") if isinstance(v, str) else (v if isinstance(v, sp.Rational) else binary_exact(v))
                for v in np.ravel(np.asarray(xs, dtype=object))]
    xs = np.array([float(v) for v in exact_xs], dtype=float)
    act, r_f = Activation.from_any(student, "student"), to_float(r, "r")
    nk = len(prepare(tuple(moments_cached(act, r_f, c_f, 1)[i] for i in (0, 2, 3)))[0])
    if dps is not None and len(xs) * nk > MAX_DPS_WORK:          # bounded work, checked before any solve
        raise InvalidParameterError("z", f"{len(xs)} points", f"at most {MAX_DPS_WORK // nk} points with dps at "
                                    f"this setting ({nk} kappa nodes)")
    Ms, scale, E, eerr = _edges_cached(act, r_f, c_f, a, be_f)
    eerr = list(eerr)
    if E and E[0][1] is None and to_exact(alpha, "alpha") == to_exact(beta, "beta"):
        eerr[0] = 0.0          # n = p: Phi is square, the hard edge is exactly 0 (MP of ratio 1)
    w = Ms[1][0]
    edges = [e[0] for e in E]
    dist = np.array([min([abs(x - e) for e in edges]) for x in xs], dtype=float)
    near = dist <= 2 * np.array([eerr[int(np.argmin([abs(x - e) for e in edges]))] for x in xs], dtype=float)
    inside = np.array([any(lo < x < hi for lo, hi in zip(edges[::2], edges[1::2])) for x in xs], dtype=bool) & ~near
    dens, derr = [0.0] * len(xs), [0.0] * len(xs)
    sol = _solve_chunked(xs, Ms, a, be_f, c_f, scale)
    if E and E[0][1] is None:           # a hard edge at 0 (error x_1): below x_1 the root itself says inside or not
        low = near & (xs > 0) & (xs <= 2 * eerr[0])
        near &= ~low
        inside |= low & (sol[1][1].imag > 1e-9 * abs(sol[1][1])) & (sol[0][1].imag > 1e-9 * abs(sol[0][1]))
    if np.any(sol[1][1].imag[~inside & ~near & (xs > 0)] > 1e-9 * abs(sol[1][1][~inside & ~near & (xs > 0)])):
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
    starts = {}
    for i in np.nonzero(near)[0]:       # within an edge's error: rho <= rho at twice that error inside, taken whole
        k = int(np.argmin([abs(xs[i] - e) for e in edges]))
        probe = edges[k] + (1 if k % 2 == 0 else -1) * (dist[i] + 2 * eerr[k])
        P1, P2 = (v[0] for v in solve_real(np.array([probe]), Ms[1], a, be_f, c_f, scale)[:2])
        dens[i], derr[i] = 0.0, float(2 * P2.imag / math.pi)
        starts[i] = (probe, P1, P2)     # with dps: the start of a continuation to x if the polished edges say inside
    if dps is None:
        return dens, derr, edges, eerr
    if len(starts) > MAX_CONTINUED:                 # bounded work: each may be a continuation at 30 more digits
        raise InvalidParameterError("z", f"{len(starts)} points within twice an edge's float64 error of it",
                                    f"at most {MAX_CONTINUED} such points with dps")
    with precision(dps):
        return _polish(student, r, c, alpha, beta, xs, exact_xs, inside, sol, E, eerr, dens, derr, starts)


def _points(idx, exact_xs, sol, Mm, params, dens, derr):
    r"""The inside points ``idx`` polished at the ambient precision on both κ-rules ``Mm`` (from their float64 roots
    ``sol``), into ``dens``, ``derr``: error = rule change + last Newton step + 100 ulps × ||J^-1|| Σ|terms|."""
    ulp = ulps(2, why="the rounding of the moments' sums over the κ-rule: 100 ulps")
    for i in idx:
        x = to_mpf(exact_xs[i])
        (_, v0, *_), (_, v1, st, jn, sz) = (polish_point(sol[1][0][i], sol[1][1][i], x, M, *params) for M in Mm)
        dens[i] = v1.imag / mpmath.pi
        derr[i] = float(abs(v1.imag - v0.imag) / mpmath.pi + (st + ulp * jn * sz) / mpmath.pi)


def _continued(i, x, k, edge, start, model, dens, derr):
    r"""A point ``x`` inside the support but within the float64 edge's error of the polished edge ``edge`` (index
    ``k``): the density by continuation from the float64 root ``start = (probe, V1, V2)`` farther inside, along
    points whose distance to the edge shrinks 16-fold a step (Newton from the root at 16x the distance stays on the
    physical branch of :math:`V\sim V_e+i\sqrt{e-x}`: on :math:`z^2=-\delta` it maps :math:`ia` to
    :math:`i(a+\delta/a)/2`) on the refined κ-rule, then on the coarse one from that root (the rules' change is far
    below the roots' split), with the working precision raised by
    :math:`\log_{10}|x|/|x-e|` + 2 digits (at most :data:`EDGE_EXTRA`); errors as :func:`_points`."""
    student, r, c, alpha, beta = model
    dist = abs(to_mpf(x) - edge)
    extra = int(mpmath.ceil(mpmath.log10(abs(x) / dist))) + 2
    if extra > EDGE_EXTRA:
        raise ConvergenceError(f"spectrum: x = {mpmath.nstr(to_mpf(x), 20)} lies {mpmath.nstr(dist, 3)} from the edge "
                               f"{mpmath.nstr(edge, 20)}: its density needs {extra} more working digits, at most "
                               f"{EDGE_EXTRA}", 0, float(dist))
    inward = 1 if k % 2 == 0 else -1
    with refined(extra, why="a density near a square-root edge: log10 |x|/|x - e| digits lost, given back"):
        x = to_mpf(x)
        al_x, be_x, c_x = (to_mpf(to_exact(v)) for v in (alpha, beta, c))
        d0 = abs(mpmath.mpf(start[0]) - edge)          # a binary float, exactly
        n = max(1, int(mpmath.ceil(mpmath.log(d0 / dist) / mpmath.log(16))))
        M0, M1 = (prepare(tuple(moments(student, r, c, level, mp=True)[j] for j in (0, 2, 3))) for level in (0, 1))
        V1, V2 = start[1], start[2]
        for j in range(1, n + 1):           # on the refined rule; the coarse one from its root at x (a rule's change
            t = x if j == n else edge + inward * d0 * (dist / d0) ** (mpmath.mpf(j) / n)  # << the roots' split)
            V1, V2, st, jn, sz = polish_point(V1, V2, t, M1, al_x / be_x, be_x, c_x)
        v1 = V2
        v0 = polish_point(V1, V2, x, M0, al_x / be_x, be_x, c_x)[1]
        dens[i] = v1.imag / mpmath.pi
        derr[i] = float(abs(v1.imag - v0.imag) / mpmath.pi + (st + ulps(2, why="the rounding of the moments' sums: "
                                                                       "100 ulps") * jn * sz) / mpmath.pi)


def _input_errors(model, pe, exact_xs, inside, dens, derr):
    r"""Where r, c carry errors (``vmpf``: the mapping's, ~10^-(dps+16) relative), their effect on every inside
    density, added to its error: near an edge e, :math:`
ho\sim C\sqrt{|e-x|}` moves by
    :math:`
ho\,|\delta e|/(2|x-e|)` with :math:`|\delta e|=|\partial_re|\,\delta r+|\partial_ce|\,\delta c` (central
    differences of the float64 folds, step 1e-6 relative), plus :math:`
ho(\delta r/r+\delta c/c)`, doubled.  It
    matters only closer to an edge than its float64 error (the continuation of :func:`_continued`).  Returns
    ``{i: the term added}``."""
    student, r, c, alpha, beta = model
    er, ec = (float(getattr(v, "error", 0.0) or 0.0) for v in (r, c))
    if not (er or ec) or not np.any(inside):
        return {}
    act, a, be_f = Activation.from_any(student, "student"), float_in(alpha, "alpha") / float_in(beta, "beta"), \
        float_in(beta, "beta")
    r_f, c_f = float(r), float(c)
    base = [e[0] for e in _edges_cached(act, r_f, c_f, a, be_f)[2]]
    shift = [0.0] * len(base)
    for err, (dr, dc) in ((er, (1e-6 * max(abs(r_f), 1e-3), 0.0)), (ec, (0.0, 1e-6 * c_f))):
        if err:
            try:
                hi, lo = ([e[0] for e in _edges_cached(act, r_f + s * dr, c_f + s * dc, a, be_f)[2]] for s in (1, -1))
            except ConvergenceError:
                hi = lo = []
            h = 2 * (dr + dc)
            shift = [sh + err * (abs(u - v) / h if len(hi) == len(lo) == len(base) else 10 * abs(b) / (h / 2e-6))
                     for sh, u, v, b in zip(shift, hi or base, lo or base, base)]
    direct = (er / abs(r_f) if r_f else 0.0) + ec / c_f
    added = {}
    for i in np.nonzero(inside)[0]:
        x = to_mpf(exact_xs[i])
        k = int(np.argmin([abs(x - v) if v != 0 else mpmath.inf for v in pe]))
        added[i] = 2 * abs(float(dens[i])) * (shift[k] / (2 * float(abs(x - pe[k]))) + direct)
        derr[i] += added[i]
    return added


def _polish(student, r, c, alpha, beta, xs, exact_xs, inside, sol, E, eerr, dens, derr, starts):
    """The mpmath stage of :func:`density_real`, at the ambient precision (``dps`` digits asked, ``wd`` working):
    every inside root and every fold polished on both κ-rules; errors = rule change + last Newton step +
    10^-(wd-2) ||J^-1|| Σ|terms| (the rounding: 100 ulps of the working precision)."""
    dps = asked_digits()
    al_m, be_m, c_m = (to_mpf(to_exact(v)) for v in (alpha, beta, c))
    a_m = al_m / be_m
    Mm = [prepare(tuple(moments(student, r, c, level, mp=True)[i] for i in (0, 2, 3))) for level in (0, 1)]
    ulp = ulps(2, why="the rounding of the moments' sums over the κ-rule: 100 ulps")
    edges, errs = [], []
    for e, ee in zip(E, eerr):
        if e[1] is None:                # a hard edge at 0: exact (n = p) or known to within the first scan point
            if ee > 0:
                raise ConvergenceError(f"spectrum: the lower edge of the support lies in [0, {ee:.3g}] and is not "
                                       f"resolved to {dps} digits (a hard-edge-like support at n != p)", 0, ee)
            edges.append(mpmath.mpf(0))
            errs.append(0.0)
            continue
        if ee > 1e-6 * abs(e[0]):       # a comb of the κ-rule beyond it (§7.1): not resolved, not printed
            edges.append(None)
            errs.append(None)
            continue
        (x0, *_), (x1, _, _, st) = (polish_edge(e[1], e[2], e[0], M, a_m, be_m, c_m) for M in Mm)
        edges.append(x1)
        errs.append(float(abs(x1 - x0) + st + ulp * abs(x1)))
    _points(np.nonzero(inside)[0], exact_xs, sol, Mm, (a_m, be_m, c_m), dens, derr)
    short = [i for i in np.nonzero(inside)[0] if digits_of(dens[i], derr[i]) < dps]
    extra = 0
    while short and extra < EDGE_EXTRA:     # near an edge: the same solve with more working digits (bounded)
        # k: the digits short of those asked, given back as working digits (the loss is log10 of the conditioning)
        gain = dps - min(digits_of(dens[i], derr[i]) for i in short)
        extra = min(EDGE_EXTRA, extra + gain + 2)      # 2: the reached digits are a floor (at most 2 short)
        before = {i: digits_of(dens[i], derr[i]) for i in short}
        with refined(extra, why="a density near a square-root edge: rho ~ sqrt(e - x) loses log10 |x|/|e - x| "
                                "digits, given back by as many working digits (and rules that accurate)"):
            al_x, be_x, c_x = (to_mpf(to_exact(v)) for v in (alpha, beta, c))       # exact inputs, more digits
            _points(short, exact_xs, sol, [prepare(tuple(moments(student, r, c, level, mp=True)[k] for k in (0, 2, 3)))
                                           for level in (0, 1)], (al_x / be_x, be_x, c_x), dens, derr)
        short = [i for i in short if digits_of(dens[i], derr[i]) < dps]
        if short and all(digits_of(dens[i], derr[i]) <= before[i] for i in short):
            break                           # more digits do not help: not a loss to the edge's conditioning
    pe = [v if v is not None else mpmath.mpf(e[0]) for v, e in zip(edges, E)]     # the polished edges where known
    for i in np.nonzero(~inside & (np.array(derr) > 0))[0]:    # near an edge in float64: the polished edges decide
        x = to_mpf(exact_xs[i])
        far = all(abs(x - v) > 2 * ev if v is not None else abs(x - e[0]) > 2 * ee
                  for v, ev, e, ee in zip(edges, errs, E, eerr))
        if far and not any(lo < x < hi for lo, hi in zip(pe[::2], pe[1::2])):
            derr[i] = 0.0                   # outside the support: exactly 0
        elif far and i in starts:           # inside, closer to the edge than its float64 error
            k = int(np.argmin([abs(x - v) for v in pe]))
            _continued(i, exact_xs[i], k, pe[k], starts[i], (student, r, c, alpha, beta), dens, derr)
            inside[i] = True
    added = _input_errors((student, r, c, alpha, beta), pe, exact_xs, inside, dens, derr)
    top = max([abs(v) for v in dens] + [mpmath.mpf(0)])
    for i, (v, e) in enumerate(zip(dens, derr)):
        if not inside[i]:
            dens[i] = mpmath.mpf(0)
            if e > float(top) * 10.0 ** -dps:
                raise ConvergenceError(f"spectrum: x = {mpmath.nstr(to_mpf(exact_xs[i]), 20)} lies within twice an "
                                       f"edge's error of that edge: inside or outside not decided, its density "
                                       f"bounded by {e:.3g} only", 0, e)
        elif digits_of(v, e) < dps:
            raise ConvergenceError(f"spectrum: density at x = {mpmath.nstr(to_mpf(exact_xs[i]), 20)}: {dps} digits "
                                   f"requested, only {digits_of(v, e)} reached" + (
                                       f", limited by the errors of r, c ({float(getattr(r, 'error', 0)):.1e}, "
                                       f"{float(getattr(c, 'error', 0)):.1e}:"
                                       f" Result 3.1's at this dps), amplified this close to an edge; exact --r, --c "
                                       f"give more"
                                       if added.get(i, 0.0) > e / 2 else
                                       f" with the working precision raised by {extra} digits (at most "
                                       f"{EDGE_EXTRA}: x too close to an edge)" if extra else ""), 0, e)
    for x, e in zip(edges, errs):
        if x is not None and x != 0 and digits_of(x, e) < dps:
            raise ConvergenceError(f"spectrum: edge {mpmath.nstr(x, 8)}: {dps} digits requested, only "
                                   f"{digits_of(x, e)} reached", 0, e)
    return dens, derr, edges, errs
