r"""The single-group sRF saddle point at many float64 points at once (docs/theory/numerics.md §4–5, §10).

Points that share :math:`(r,c,\gamma)` share the κ-rule; the map of Result 3.3 is linear in the node functions, so
one application to P points is two products of the P×N weights :math:`1/(1+V(\kappa))` and their squares with fixed
node columns (``_Rule``), whatever α, β, λ, Δ each point has.  Per point: Newton with the forward-difference Jacobian
(docs/theory/numerics.md §4) from a warm start (the same point of the last group, extrapolated along the last two;
or a solved neighbour), damped where a step leaves the domain; then, as in srf_solve, chord-Newton polish on rule
levels 0, 1, … with the error of docs/theory/numerics.md §5 (the change between levels, the shifted last correction,
the rounding floor, grown by the mapping's errors) until the target is met.  A point that fails any of this in the
batch is solved by :func:`srf_solve` itself (which raises ConvergenceError where it fails): no value without its own
certified error.

Batched: square loss, F3 prior, spike channel on or off, either c formula.  srf_solve runs for ``dps``, general
losses, ``row_norms``, ``spectrum="empirical"``, the notebook's rules or convergence, ``mp_method="quad"``.

>>> sols = srf_batch("tanh", "sin", [{"alpha": a} for a in ("0.5", "1", "2")], alpha0=20, eta=3, beta=1, lam="0.1")
>>> ref = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")
>>> bool(abs(sols[1].test_error - ref.test_error) <= sols[1].abs_error + ref.abs_error), sols[0].status
(True, 'converged (batched Newton)')
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...core.errors import InvalidParameterError
from ...core.exact import float_in
from ...core.precision import EPS64, MAX_LEVEL
from ...core.results import digits_of, provenance
from ..features.kappa import srf_setup
from ..features.mapping import resolve_rcg
from .priors import mp_integrals_quad
from .saddle import HATS, ORDER
from .solution import SRFOptions, SRFSolution, rounding_floor
from .solve import MIN_TOL, srf_solve

__all__ = ["srf_batch", "batchable"]

KEYS = ORDER + HATS + ("D", "test_error")
GROUP = ("alpha0", "eta", "noise_var", "r", "c", "gamma")      # the inputs of (r, c, γ) and the κ-rule
CHUNK = 1000                  # points solved together: arrays of CHUNK x nodes x 8 bytes, tens of MB at most
METHOD = "batched Newton + chord Newton (float64), error from refined discretisation"
REFS = ["[CPDKLZL24] Result 3.3, eqs. (17)-(25)", "docs/theory/srf-theory.md §4", "docs/theory/numerics.md §4-5"]


def batchable(options: SRFOptions) -> bool:
    """Whether :func:`srf_batch` solves these options itself in float64 (module docstring); otherwise (and for any
    ``dps``) it runs srf_solve."""
    o = options
    return (o.loss is None and o.spectrum == "mp" and o.row_norms is False and o.convergence == "all"
            and not o.kappa_nodes and not o.inner_nodes and o.mp_method == "closed")


class _Rule:
    r"""The κ-rule of one level as node columns: with :math:`a=\mu_1\kappa`, :math:`\bar m=\mu_0m+a\vartheta` and
    :math:`B=\sum_t c_t(x)f_t+\Delta` (docs/theory/srf-theory.md §4.3–4.4) every sum of the map is a column of
    ``inv @ C1`` or ``inv**2 @ C2``, ``inv`` = :math:`1/(1+\mu_1^2V_1+\mu_\star^2V_2)` per point and node."""

    def __init__(self, S):
        w, mu0, mu1, ms2, h, h1, h2 = S.w, S.mu0, S.mu1, S.mus2, S.h, S.h1, S.h2
        a, m1s = mu1 * S.kappa, mu1 * mu1
        self.S, self.c, self.n, self.V = S, float(S.c), len(w), np.stack([m1s, ms2])
        self.C1 = np.stack([w * m1s, w * ms2, w * a * h, w * a * mu0, w * a * a, w * mu1 * h1, w * mu0 * h,
                            w * mu0 * mu0], axis=1)
        f = [h2, mu0 * h, a * h, mu0 * mu0, mu0 * a, a * a, mu1 * h1, m1s, ms2, np.ones_like(w)]
        self.C2 = np.stack([w * m1s * g for g in f] + [w * ms2 * g for g in f], axis=1)
        self.E0, self.no_mean = np.array([w @ g for g in f[:9]]), float(w @ (mu0 * mu0)) < 1e-14

    def moments(self, V1, V2):
        with np.errstate(all="ignore"):
            inv = 1.0 / (1.0 + np.column_stack([V1, V2]) @ self.V)
            return inv @ self.C1, (inv * inv) @ self.C2

    def tail(self, x, M, p, spike=True):
        """The new state, the hats, D and (25) from the moments ``M``; ``ok`` False where the map is undefined."""
        (m, th, ps, q1, q2, V1, V2), (M1, M2), (al, be, la) = x.T, M, p[:3]
        aB, sb = al / be, np.sqrt(be)
        with np.errstate(all="ignore"):
            cf = np.stack([np.ones_like(m), -2 * m, -2 * th, m * m, 2 * m * th, th * th, -2 * ps, q1, q2, p[3]], 1)
            hV1, hV2 = aB * M1[:, 0], aB * M1[:, 1]
            hq1, hq2 = aB * np.sum(cf * M2[:, :10], 1), aB * np.sum(cf * M2[:, 10:], 1)
            hth, hps = (al / sb) * (M1[:, 2] - m * M1[:, 3] - th * M1[:, 4]) * spike, (al / sb) * M1[:, 5]
            m_new = 0 * m if self.no_mean else (M1[:, 6] - th * M1[:, 3]) / M1[:, 7]
            V1n, V2n, J1, J2, K0 = self.prior(be, la, hV1, hV2)
            Dsm = 1 - be * hV1 * V1n
            th_n, ps_n = sb * hth * V1n / Dsm, sb * hps * V1n
            q1n = hq1 * J1 + hq2 * J2 + hps * hps * J1 + hth * hth * (J1 - be * V1n * V1n) / (Dsm * Dsm)
            q2n = hq1 * J2 + hq2 * K0 + hps * hps * J2 + hth * hth * J2 / (Dsm * Dsm)
            new = np.stack([m_new, th_n, ps_n, q1n, q2n, V1n, V2n], 1)
            eps = cf[:, :9] @ self.E0
            ok = (Dsm > 0) & (hV1 > 0) & np.all(np.isfinite(new), 1) & _valid(new)
        return new, np.stack([hV1, hV2, hq1, hq2, hth, hps], 1), Dsm, eps, ok

    def prior(self, be, la, hV1, hV2):
        """:func:`~onestep_theory.srf.single.priors.mp_integrals` vectorised (the same closed form and branches);
        where t is large, its quadrature form, point by point, as the single-point map does."""
        c, L = self.c, la + hV2
        t = L / hV1
        bq = t + c - c * be
        disc = np.sqrt(bq * bq + 4 * c * be * t)
        s = np.where(bq >= 0, 2 / (bq + disc), (disc - bq) / (2 * c * be * t))
        sp_ = -(c * be * s * s + s) / (2 * c * be * t * s + bq)
        omts = np.where(t <= c, 1 - t * s, c * s * (1 - be + be * t * s))
        out = [omts / hV1, s / hV1, (1 - 2 * t * s - t * t * sp_) / hV1**2, (s + t * sp_) / hV1**2, -sp_ / hV1**2]
        for i in np.nonzero(L / np.maximum(hV1, 1e-300) > 100 * c)[0]:
            try:
                q = mp_integrals_quad(c, float(be[i]), float(la[i]), float(hV1[i]), float(hV2[i]))
            except (ZeroDivisionError, ValueError, OverflowError):
                q = (np.nan,) * 5
            for arr, v in zip(out, q):
                arr[i] = v
        return out

    def values(self, x, p, spike):
        """Every reported quantity (``KEYS``) at the states ``x``, as a P×15 array, and ``ok``."""
        new, hats, Dsm, eps, ok = self.tail(x, self.moments(x[:, 5], x[:, 6]), p, spike)
        return np.column_stack([new, hats, Dsm, eps]), ok

    def jacobian(self, x, p, spike, F0, M):
        """Forward-difference Jacobian of the map (steps as :func:`~onestep_theory.srf.single.solvers.jacobian`)."""
        P = len(x)
        e = 1e-7 * np.maximum(1.0, np.abs(x))                  # (P, 7)
        xp = np.repeat(x[None], 7, 0)                        # (7, P, 7): row j moved along coordinate j
        xp[np.arange(7), :, np.arange(7)] += e.T
        xp = xp.reshape(7 * P, 7)
        Mv = self.moments(xp[5 * P:, 5], xp[5 * P:, 6])        # only V1, V2 re-weight the nodes
        Mj = tuple(np.concatenate([np.tile(a, (5, 1)), b]) for a, b in zip(M, Mv))
        Fp = self.tail(xp, Mj, np.tile(p, 7), spike)[0].reshape(7, P, 7)
        return np.transpose((Fp - F0[None]) / e.T[:, :, None], (1, 2, 0))


def _valid(x):                    # saddle.is_valid, row by row
    return np.all(x[:, 3:] >= 0, axis=1) & (x[:, 3] >= x[:, 2] ** 2 * (1 - 1e-9) - 1e-15)


def _size(dx, x):                # the largest relative component, per row
    return np.max(np.abs(dx) / np.maximum(1.0, np.abs(x)), axis=1)


def _chord(J):
    """:math:`(I-J)^{-1}` per point and its norm; None rows where the guards of srf_solve's chord inverse fail."""
    A = np.eye(7) - J
    good = np.all(np.isfinite(A), axis=(1, 2))
    Jinv = np.full_like(A, np.nan)
    good &= np.abs(np.linalg.det(np.where(good[:, None, None], A, np.eye(7)))) > 0     # a singular one stays nan
    Jinv[good] = np.linalg.inv(A[good])
    nA, nI = np.abs(A).sum(2).max(1), np.abs(Jinv).sum(2).max(1)
    good &= np.all(np.isfinite(Jinv), axis=(1, 2)) & (nA * nI < 1 / EPS64)
    return Jinv, np.where(good, np.maximum(1.0, nI), np.nan), good


def _newton(R, x, p, spike, max_iter=20, done_at=1e-3):
    """Damped Newton on x = F(x) for every row: ``(x, chord inverse, cond, converged, evaluations, values at x)``; a row
    stops after a full step below ``done_at`` (the chord polish of ``_levels`` goes on), or fails (7 halvings)."""
    P, x, vals = len(x), x.copy(), np.full((len(x), len(KEYS)), np.nan)
    done, alive, evals = np.zeros(P, bool), np.ones(P, bool), np.zeros(P, int)
    Jinv, cond = np.full((P, 7, 7), np.nan), np.full(P, np.nan)
    M = R.moments(x[:, 5], x[:, 6])
    F, _, _, _, ok = R.tail(x, M, p, spike)
    alive &= ok & _valid(x)
    for _ in range(max_iter):
        a = np.nonzero(alive & ~done)[0]
        if not len(a):
            break
        xa, pa, Ma = x[a], p[:, a], (M[0][a], M[1][a])
        Ji, cn, good = _chord(R.jacobian(xa, pa, spike, F[a], Ma))
        evals[a] += 8
        Jinv[a], cond[a] = Ji, cn
        dx = np.einsum("pij,pj->pi", np.where(good[:, None, None], Ji, 0.0), F[a] - xa)
        size, res = _size(dx, xa), _size(F[a] - xa, xa)
        t, pend = np.ones(len(a)), good.copy()
        alive[a[~good]] = False
        for _ in range(7):                        # halve the step where it leaves the domain or grows the residual
            i = np.nonzero(pend)[0]
            if not len(i):
                break
            xt = xa[i] + t[i, None] * dx[i]
            Mt = R.moments(xt[:, 5], xt[:, 6])
            Ft, Ht, Dt, Et, okt = R.tail(xt, Mt, pa[:, i], spike)
            evals[a[i]] += 1
            acc = okt & _valid(xt) & ((_size(Ft - xt, xt) < res[i]) | (size[i] * t[i] < 1e-10))
            k = a[i[acc]]
            x[k], F[k], M[0][k], M[1][k] = xt[acc], Ft[acc], Mt[0][acc], Mt[1][acc]
            vals[k] = np.column_stack([Ft, Ht, Dt, Et])[acc]
            done[k] = (size[i[acc]] < done_at) & (t[i[acc]] == 1)
            pend[i[acc]] = False
            t[i[~acc]] /= 2
        alive[a[pend]] = False
    return x, Jinv, cond, done & alive, evals, vals


def _polish(R, x, p, spike, Jinv, shift=True, first=None, tol=1e-15, max_steps=8):
    """:func:`~onestep_theory.srf.single.solvers.polish` for every row, with srf_solve's solver error (the change of
    every quantity when the state moves by the last correction's size): ``(x, values, solver errors, steps, ok)``."""
    P, x, vals, last, prev = len(x), x.copy(), np.zeros((len(x), len(KEYS))), np.zeros((len(x), 7)), np.full(len(x), np.inf)
    steps, ok, act = np.zeros(P, int), np.ones(P, bool), np.ones(P, bool)
    for step in range(1, max_steps + 1):
        a = np.nonzero(act)[0]
        if not len(a):
            break
        va, oka = (first[a], np.isfinite(first[a]).all(1)) if first is not None and step == 1 else \
            R.values(x[a], p[:, a], spike)          # ``first``: the values at x, from Newton's last evaluation
        dx = np.einsum("pij,pj->pi", Jinv[a], va[:, :7] - x[a])
        size = _size(dx, x[a])
        stop = (size < tol) | ((step > 2) & (size > 0.5 * prev[a])) | (step == max_steps) | ~oka
        s = a[stop]
        vals[s], last[s], steps[s], ok[s], act[s] = va[stop], np.abs(dx[stop]), step, oka[stop], False
        m = a[~stop]
        prev[m], x[m] = size[~stop], x[m] + dx[~stop]
    if not shift:                                     # the coarsest level: its solver error is not used
        return x, vals, None, steps, ok & np.all(np.isfinite(vals), 1)
    shifted, oks = R.values(x + last, p, spike)
    return x, vals, np.abs(vals - shifted), steps, ok & oks & np.all(np.isfinite(vals), 1)


def _levels(p, x, Jinv, cond, rules, target, spike, first):
    """srf_solve's refinement for every row (docs/theory/numerics.md §5, ``core.precision.refine``): polish on level
    0, 1, … until the test error's change meets ``target``: ``(values, errors, level, state, steps, met)``."""
    P, prev = len(x), None
    vals, err, lev, steps = np.zeros((P, len(KEYS))), np.full((P, len(KEYS)), np.inf), np.zeros(P, int), np.zeros(P, int)
    met, act = np.zeros(P, bool), np.ones(P, bool)
    for L in range(MAX_LEVEL + 1):
        a = np.nonzero(act)[0]
        R = rules(L) if len(a) else None
        if R is None:
            break
        xa, va, sa, st, oka = _polish(R, x[a], p[:, a], spike, Jinv[a], prev is not None, None if L else first[a])
        steps[a] += st
        act[a[~oka]] = False
        if prev is not None:
            fl = rounding_floor(EPS64, 1.0, R.n, False) * cond[a]
            e = np.abs(va - prev[a]) + sa + fl[:, None] * np.maximum(1.0, np.abs(va))
            vals[a], err[a], lev[a] = va, e, L
            good = oka & (e[:, -1] <= target * np.abs(va[:, -1]))
            met[a[good]], act[a[good]] = True, False
        prev = np.zeros((P, len(KEYS))) if prev is None else prev
        prev[a], x[a] = va, xa
    return vals, err, lev, x, steps, met & np.all(np.isfinite(err), 1)


def srf_batch(student, teacher, points, *, tol=None, options=None, dps=None, progress=None, **fixed) -> list:
    r""":func:`~onestep_theory.srf.single.solve.srf_solve` at every point of ``points`` (dicts of the inputs that
    vary: ``alpha``, ``beta``, ``lam``, ``noise_var``, ``alpha0``, ``eta`` or ``r``, ``c``, ``gamma``), the others
    ``fixed``; one :class:`SRFSolution` per point, in order, each with its own refined error (module docstring).
    Options the batch does not cover, and ``dps``, run srf_solve point by point; ``progress(done, groups)``."""
    opt = SRFOptions.build(options, {k: fixed.pop(k) for k in list(fixed) if k in SRFOptions.__dataclass_fields__})
    if not isinstance(points, (list, tuple)) or not all(isinstance(pt, dict) for pt in points):
        raise InvalidParameterError("points", str(points)[:40], "a list of dicts of inputs ({'alpha': '1/2'}, ...)")
    pts, known = [dict(fixed, **pt) for pt in points], {"alpha", "beta", "lam", "noise_var"} | set(GROUP)
    for k, v in ((k, v) for pt in pts for k, v in pt.items() if k not in known):
        raise InvalidParameterError(k, v, f"an input of srf_solve ({', '.join(sorted(known))})")
    if dps is not None or not batchable(opt):         # srf_solve point by point, warm-started (srf_sweep's loop)
        out, init = [], None
        for pt in pts:
            out.append(srf_solve(student, teacher, tol=tol, options=opt, dps=dps, init=init, **pt))
            init = tuple(float(v) for v in out[-1].state())
        return out
    if tol is not None and not MIN_TOL <= float_in(tol, "tol") <= 0.1:
        raise InvalidParameterError("tol", tol, f"a real number in [{MIN_TOL:g}, 0.1] (use dps for more digits)")
    target = 1e-10 if tol is None else float_in(tol, "tol")
    seen, groups, par = {}, {}, np.empty((4, len(pts)))
    for i, pt in enumerate(pts):                       # every input checked before any work
        for j, k in enumerate(("alpha", "beta", "lam", "noise_var")):
            v = pt.get(k, 0 if j == 3 else None)
            key = (k, type(v), v if isinstance(v, (str, int, float)) else repr(v))
            par[j, i] = seen[key] if key in seen else seen.setdefault(key, float_in(v, k, strict=j < 3))
        groups.setdefault(tuple(v if isinstance(v, (str, int, float, type(None))) else repr(v)
                                for v in (pt.get(k) for k in GROUP)), []).append(i)
    maps = {g: resolve_rcg(student, teacher, *(pts[ix[0]].get(k) for k in ("r", "c", "gamma", "alpha0", "eta")),
                           pts[ix[0]].get("noise_var", 0), opt.c_formula, opt.strict_odd, None)
            for g, ix in groups.items()}
    out, states = [None] * len(pts), []
    from threadpoolctl import threadpool_limits   # here: a single srf start never loads it (issue 35 item 4)
    with threadpool_limits(limits=1):             # P x N by N x 28 products: threads cost more than they give
        for n, (g, ix) in enumerate(groups.items()):          # blocks of at most CHUNK points: bounded memory
            for b in range(0, len(ix), CHUNK):
                _group(student, teacher, pts, ix[b:b + CHUNK], par, maps[g], opt, target, out, states, _coord(g))
            if progress is not None:
                progress(n + 1, len(groups))
    return out


def _coord(g):
    try:                          # the group's inputs as a vector (None: not all plain numbers), for ``_start``
        return np.array([0.0 if v is None else float(Fraction(str(v))) for v in g])
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _start(states, keys, coord):
    """Warm starts (docs/theory/numerics.md §4 'Continuation'): the state at the same (α, β, λ) in the nearest of the
    last solved groups that has it, extrapolated along the line from the group nearest to that one when this group continues it
    (a secant predictor); nan where no group has it."""
    def at(g):
        return np.array([states[g][1].get(k, (np.nan,) * 7) for k in keys], dtype=float)
    known = coord is not None and all(c is not None for c, _ in states)      # the group inputs are numbers
    order = np.argsort([np.linalg.norm(c - coord) if known else -g for g, (c, _) in enumerate(states)], kind="stable")
    X = at(order[0]) if len(order) else np.full((len(keys), 7), np.nan)
    for g in order[1:]:                               # what the nearest group lacks: from the next nearest
        X = np.where(np.isfinite(X), X, at(g)) if not np.isfinite(X).all() else X
    if not known or len(order) < 2:
        return X
    c1 = states[order[0]][0]
    g0 = min(order[1:], key=lambda g: np.linalg.norm(states[g][0] - c1))
    d1, d0 = coord - c1, c1 - states[g0][0]
    n1, n0 = np.linalg.norm(d1), np.linalg.norm(d0)
    if n0 > 0 and n1 <= 2 * n0 and d1 @ d0 >= 0.999 * n1 * n0:
        X1, X0 = at(order[0]), at(g0)                 # the same line, at most twice as far: extrapolate
        return np.where(np.isfinite(X0) & np.isfinite(X1), X1 + (n1 / n0) * (X1 - X0), X)
    return X


def _group(student, teacher, pts, ix, par, mapping, opt, target, out, states, coord):
    """The points ``ix`` sharing (r, c, γ): starts (``_start``, a solved neighbour), Newton, ``_levels``, srf_solve."""
    (rr, cc, gg, m), p, spike = mapping, par[:, ix], bool(opt.spike_channel)
    keys = list(map(tuple, p[:3].T))
    X, rules, conv, solved = _start(states, keys, coord), {}, np.zeros(len(ix), bool), {}   # solved: by srf_solve

    def rule(L):
        if L not in rules:
            try:
                rules[L] = _Rule(srf_setup(student, teacher, rr, cc, gg, digits=16, level=L))
            except InvalidParameterError as exc:          # the rules' node limit: srf_solve takes these points
                if exc.param != "quadrature":
                    raise
                rules[L] = None
        return rules[L]

    def single(i, init=None):
        solved[i] = srf_solve(student, teacher, tol=target, options=opt, init=init, **pts[ix[i]])
        X[i] = [float(v) for v in solved[i].state()]

    if not np.isfinite(X).all(1).any():
        single(len(ix) // 2)
    Jinv, cond, evals, V0 = np.full((len(ix), 7, 7), np.nan), np.full(len(ix), np.nan), np.zeros(len(ix), int), {}
    fresh, tried = ~np.isfinite(X).all(1), np.full(X.shape, np.nan)
    for _ in range(4):                                # Newton; a failed row restarts from its nearest solved row
        anchors = np.array(sorted(set(np.nonzero(conv)[0]) | set(solved)), dtype=int)
        for i in (i for i in np.nonzero(fresh & ~conv)[0] if i not in solved and len(anchors)):
            X[i] = X[anchors[np.argmin(np.abs(anchors - i))]]
        new = np.isfinite(X).all(1) & ~conv & ~(X == tried).all(1)        # never the same start twice
        todo = np.array([i for i in np.nonzero(new)[0] if i not in solved], dtype=int)
        if not len(todo):
            break
        tried[todo] = X[todo]
        xs, Ji, cn, ok, ev, va = _newton(rule(0), X[todo], p[:, todo], spike)
        X[todo[ok]], Jinv[todo[ok]], cond[todo[ok]], conv[todo[ok]] = xs[ok], Ji[ok], cn[ok], True
        V0.update(zip(todo[ok], va[ok]))
        evals[todo] += ev
        fresh[todo[~ok]] = True
    rows = np.nonzero(conv)[0]
    V0 = np.array([V0[i] for i in rows]).reshape(len(rows), len(KEYS))
    vals, err, lev, xf, steps, met = _levels(p[:, rows], X[rows], Jinv[rows], cond[rows], rule, target, spike, V0)
    if m is not None:             # grown by the mapping's relative error, amplified by the condition (as srf_solve)
        rel = max(m.errors[k] / max(abs(float(getattr(m, k))), 1.0) for k in ("r", "c", "gamma"))
        err = err + 10.0 * cond[rows, None] * rel * np.maximum(1.0, np.abs(vals))
    met &= err[:, -1] <= target * np.abs(vals[:, -1])          # the target, after the growth (srf_solve's order)
    with np.errstate(all="ignore"):                  # digits_of (exact, by it, near an integer), the residual
        q = np.log10(np.abs(vals[:, -1]) / err[:, -1])
        res = np.max(np.abs(vals[:, :7] - xf) / np.maximum(1.0, np.abs(xf)), axis=1).tolist()
    dig = np.where(np.isfinite(q) & (np.abs(q - np.round(q)) > 1e-9), np.maximum(0, np.floor(q)), -1).astype(int)
    like = None
    for r_, i in enumerate(rows):
        if met[r_]:
            d = int(dig[r_]) if dig[r_] >= 0 else digits_of(vals[r_, -1], float(err[r_, -1]))
            out[ix[i]] = like = _solution(pts[ix[i]], vals[r_], err[r_], lev[r_], res[r_], d, m, (rr, cc, gg),
                                          rule(lev[r_]).S, opt, evals[i], steps[r_], like)
            X[i] = xf[r_]
    left = [i for i in range(len(ix)) if out[ix[i]] is None and i not in solved]
    while left:                         # what the batch could not certify: srf_solve, from the nearest done row on
        done = [j for j in range(len(ix)) if out[ix[j]] is not None or j in solved]
        i = min(left, key=lambda i: min((abs(i - j) for j in done), default=0))
        single(i, tuple(X[min(done, key=lambda j: abs(j - i))]) if done else None)
        left.remove(i)
    for i, sol in solved.items():
        out[ix[i]] = sol
    states[:] = states[-7:] + [(coord, {k: tuple(X[i]) for i, k in enumerate(keys)})]    # the last 8 groups


def _solution(pt, v, e, lev, res, vouched, mapping, rcg, S, opt, evals, steps, like=None):
    """The SRFSolution of one point, with srf_solve's fields.  ``like`` (a solution of the same group: r, c, γ and
    their errors the same, attached): its copy with this point's fields equals a new one (the other fields are
    floats, dicts of floats or inputs, which attaching leaves as they are; tests/test_batch.py) at a fifth of the cost.
    ``vouched``: the digits of the test error its error vouches for (the solution's ``digits``, not a precision)."""
    vals, errors = dict(zip(KEYS, v)), dict(zip(KEYS, e.tolist()))
    if mapping is not None:
        errors.update({k: mapping.errors[k] for k in ("r", "c", "gamma")})
    f = dict(test_error=vals["test_error"], abs_error=errors["test_error"], digits=vouched,
             order={k: vals[k] for k in ORDER}, hats={k: vals[k] for k in HATS}, errors=errors, D=vals["D"],
             **{k: pt.get(k, 0) for k in ("alpha", "beta", "lam", "noise_var")}, iterations=int(evals),
             newton_steps=int(steps), residual=res,
             options=dict(c_formula=opt.c_formula, spike_channel=opt.spike_channel, spectrum=opt.spectrum,
                          cross_term=opt.cross_term, kappa_nodes=S.nodes[0], inner=S.nodes[1], level=int(lev),
                          convergence=opt.convergence, damping=opt.damping, row_norms=opt.row_norms))
    if like is not None:
        out = object.__new__(SRFSolution)             # like's fields (its attached r, c, γ), then this point's
        out.__dict__.update(like.__dict__, **f, provenance=dict(like.provenance))
        return out
    return SRFSolution(**f, r=rcg[0], c=rcg[1], gamma=rcg[2], status="converged (batched Newton)", dps=None,
                       provenance=provenance(dps=None, method=METHOD, references=REFS))
