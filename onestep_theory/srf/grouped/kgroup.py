r"""The asymptotic K-group saddle point (docs/theory/srf-theory.md §8.1): the channel of §8 with the
deterministic-equivalent prior of :mod:`~onestep_theory.srf.grouped.groupprior`, solved in float64 and polished at any
precision, with an error estimate from refinement — the contract of the single-group solver
(docs/theory/numerics.md §5).

References
----------
[DPCKLL24] arXiv:2410.18938, App. D, (155)–(157); [CPDKLZL24] arXiv:2402.04980, Sec. 4.4, App. D, (32);
docs/theory/srf-theory.md §8, §8.1; docs/theory/numerics.md §5.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np

from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import to_exact, to_mpf
from ...core.precision import EPS64, Target, asked_digits, error_of, refine, ulps
from ...core.results import VouchedResult, provenance
from ..features.kappa import GroupSetup, group_setup
from ..single.saddle import DomainError
from ..single.solution import rounding_floor
from ..single.solvers import packed_jacobian, solve_packed
from .groupchannel import ArbChannel, StateLayout, group_channel
from .groupprior import PriorDomainError, kgroup_prior

__all__ = ["KGroupData", "KGroupFit", "kgroup_map", "kgroup_work", "check_kgroup_work", "solve_kgroup", "MAX_KGROUP_WORK"]

#: Largest :func:`kgroup_work` (K groups at dps D: K (D + 10)^2): 12 groups to 60 digits, 2 groups to 100 (each
#: about a minute or two before the shared grid of srf.features.gridsmooth; 12 groups at 30 digits: 6 s CPU, 20 s before).
MAX_KGROUP_WORK = 12 * 70 ** 2
#: Safety factor of the rounding term (:func:`~onestep_theory.srf.single.solution.rounding_floor`): measured at five
#: settings, the float64 values lie 19 to 239 times, the 15- and 25-digit values 5 to 3344 times closer to their
#: 35-digit values than the stated error with this factor (docs/theory/numerics.md §5; tests/test_kgroup.py).
ROUNDING_SAFETY = 2.0


@dataclasses.dataclass
class KGroupData:
    """Problem data of the map: α, β, λ, Δ and the group fractions π and bulk variances c (float or mpf)."""

    alpha: object
    beta: object
    lam: object
    noise_var: object
    pis: np.ndarray
    cs: np.ndarray


def kgroup_map(x, G: GroupSetup, o: KGroupData, layout: StateLayout):
    r"""One application of the K-group channel and the asymptotic prior (docs/theory/srf-theory.md §8, §8.1) at the
    packed state ``x``.
    Returns ``(new state, values)``; ``values["test_error"]`` is (25) at ``x``."""
    if G.mp:                                    # the same channel on Arb matrices, set up once per rule
        hats, m_new, eps, rank = ArbChannel.of(G)(x, o.alpha, o.beta, o.noise_var, layout)
    else:
        hats, m_new, eps, rank = group_channel(x, G, o.alpha, o.beta, o.noise_var, layout)
    try:
        th, ps, Q1, q2, V1, V2, nu = kgroup_prior(hats, o.beta, o.lam, o.pis, o.cs)
    except PriorDomainError as exc:
        raise DomainError(str(exc)) from None
    new = layout.pack(th, ps, Q1, q2, V1, V2)
    names = ("hat_V1", "hat_V2", "hat_Q1", "hat_q2", "hat_theta", "hat_psi")
    vals = dict(zip(names, hats), test_error=eps, m=m_new, theta=th, psi=ps, Q1=Q1, q2=q2, V1=V1, V2=V2, nu=nu,
                m_rank=rank)
    return new, vals


def _polish(F, x, Jm, tol, max_steps):
    """Chord Newton x <- x - (J_G)^-1 (F(x) - x) with a fixed float64 Jacobian ``Jm`` (as mpf entries for an mpf
    ``x``), at the precision of ``x``; ``F``
    returns ``(new state, values)``.  Returns ``(x, steps, last correction, values at x, |F(x) - x|)``: stops when
    the correction falls below ``tol`` (relative) or stops contracting (the rounding floor); the last correction
    is not applied — it is the solver's error (docs/theory/numerics.md §5)."""
    prev = math.inf
    for step in range(1, max_steps + 1):
        y, vals = F(x)
        dx = -(Jm @ (y - x))
        size = max(abs(float(d)) / max(1.0, abs(float(v))) for d, v in zip(dx, x))
        if size < tol or (step > 2 and size > 0.5 * prev) or step == max_steps:
            return x, step, dx, vals, max(abs(float(a) - float(b)) / max(1.0, abs(float(b))) for a, b in zip(y, x))
        prev = size
        x = x + dx
    raise AssertionError("unreachable")


#: The order parameters of the K-group saddle point (docs/theory/srf-theory.md §8).
ORDER = ("m", "theta", "psi", "Q1", "q2", "V1", "V2")


def _order_errors(coarse, fine, moved, rounding) -> dict:
    """Absolute errors of the order parameters ``fine`` (the values at the finest κ-rule), entry by entry, as the
    test error's: the change from the previous rule level (``coarse``) + the change under the further, unapplied
    Newton correction (``moved``: the values at the corrected state) + the relative ``rounding`` floor."""
    def err(k):
        v, c, m = (np.asarray(d[k], dtype=object) for d in (coarse, fine, moved))
        e = np.vectorize(lambda a, b, n: float(abs(b - a)) + float(abs(n - b)) + rounding * max(1.0, abs(float(b))),
                         otypes=[float])(v, c, m)
        return e.tolist()
    return {k: err(k) for k in ORDER}


def _jacobians(F, x, eps):
    """The forward-difference Jacobian of G = F - id (:func:`~onestep_theory.srf.single.solvers.packed_jacobian`) and,
    from the same evaluations, the gradient of the test error (25) (``F`` returns ``(state, values)``)."""
    seen = []

    def rec(y):
        new, vals = F(y)
        seen.append((y, vals["test_error"]))
        return new

    Jg = packed_jacobian(rec, x)
    grad = np.zeros(len(x))
    for y, e in seen:
        d = np.nonzero(y != x)[0]
        if len(d) == 1:
            grad[d[0]] = (e - eps) / (y[d[0]] - x[d[0]])
    return Jg, grad


@dataclasses.dataclass
class KGroupFit(VouchedResult):
    r"""The asymptotic K-group saddle point of :func:`solve_kgroup` (docs/theory/srf-theory.md §8.1): the test
    error (25) with its error budget (``errors``: ``test_error`` the total of ``discretisation`` — the change
    under the refined κ-rule —, ``solver`` — the last Newton correction propagated to (25) — and ``rounding``),
    the order parameters at the fixed point (``order``) and the solver's counts."""

    ERROR_KEYS = {"test_error": "test_error"}

    test_error: object
    errors: dict
    order: dict
    m_rank: int
    cond: float
    level: int
    nodes: int
    iterations: int
    newton_steps: int
    residual: float
    target: float
    state: object
    provenance: dict
    dps: int | None = None


def kgroup_work(K: int, dps) -> int:
    """Work estimate of :func:`solve_kgroup` in units of about a millisecond here (the Arb κ-rules of K groups
    grow like the digits squared); float64 counts as 16 digits."""
    return int(K * ((dps or 6) + 10) ** 2)      # k: 10, the guard digits: the work grows with the working digits


def check_kgroup_work(K: int, dps) -> None:
    """Refuse (InvalidParameterError naming ``dps``) a K-group saddle point above :data:`MAX_KGROUP_WORK`."""
    work = kgroup_work(K, dps)
    if work > MAX_KGROUP_WORK:
        raise InvalidParameterError("dps", dps, f"K*(dps+10)^2 <= {MAX_KGROUP_WORK} for the K-group saddle point "
                                    f"({K} groups at dps {dps}: {work}; use fewer groups or digits)")


def solve_kgroup(student, teacher, spikes, cs, gamma, fractions, *, alpha, beta, lam, noise_var, tol,
                 mp=False, inputs=None, x0=None, max_iter=5000, progress=None) -> KGroupFit:
    r"""Solve the asymptotic K-group saddle point and estimate the error of the test error (25).

    float64 first (hybrid Powell, :func:`~onestep_theory.srf.single.solvers.solve_packed`) on the level-0 κ-rule, then
    chord Newton on refined rules — in float64, or with ``mp`` in mpmath on rules computed in Arb at the ambient
    working precision (call inside the boundary's precision context, :func:`~onestep_theory.core.precision.precision`
    with the digits asked D; ``inputs`` then holds α, β, λ, Δ as exact numbers) —
    until the change between two levels meets the target (``tol``, or :math:`10^{-D}`, relative).
    Error of the last level: change from the previous level + the solver's last correction (propagated to (25)
    through the gradient of (25), every term taken with its absolute value) + rounding amplified by the condition
    of the fixed point.  The work is bounded before it starts (:func:`kgroup_work` at most
    :data:`MAX_KGROUP_WORK`, else InvalidParameterError); ``progress(i, n)`` is called after each refinement
    level.  Returns a :class:`KGroupFit`; raises ConvergenceError when the target is not met."""
    K = len(spikes)
    dps = asked_digits() if mp else None        # the digits asked at the enclosing boundary
    check_kgroup_work(K, dps)
    layout = StateLayout(K)
    pis_f = np.array([float(f) for f in fractions])
    cs_f = np.array([float(c) for c in cs])
    of = KGroupData(float(alpha), float(beta), float(lam), float(noise_var), pis_f, cs_f)
    if x0 is None:
        x0 = layout.pack(np.zeros(K), np.zeros(K), 0.1 * np.diag(pis_f), 0.1 * pis_f,
                         np.diag(pis_f * cs_f), pis_f.copy())
    G0 = group_setup(student, teacher, spikes, cs, gamma, level=0)
    F0 = (lambda y: kgroup_map(y, G0, of, layout))  # noqa: E731
    x, fev = solve_packed(lambda y: F0(y)[0], np.asarray(x0, dtype=float), 1e-13, max_iter,
                          what="asymptotic K-group saddle point")
    Jg, grad = _jacobians(F0, x, F0(x)[1]["test_error"])
    fev += layout.size + 2
    try:
        Jg_inv = np.linalg.inv(Jg)
    except np.linalg.LinAlgError:
        raise ConvergenceError("asymptotic K-group saddle point: singular Jacobian at the fixed point", fev) from None
    cond = max(1.0, float(np.linalg.norm(Jg_inv, np.inf)))
    if dps is None:
        o, target, unit, tol_step, steps = of, tol, EPS64, 1e-15, 8
    else:
        al, be, la, nv = (to_mpf(to_exact(inputs[k], k)) for k in ("alpha", "beta", "lam", "noise_var"))
        o = KGroupData(al, be, la, nv, np.array([to_mpf(to_exact(f)) for f in fractions], dtype=object),
                       np.array([c if isinstance(c, mpmath.mpf) else to_mpf(to_exact(c)) for c in cs], dtype=object))
        x = np.array([mpmath.mpf(float(v)) for v in x], dtype=object)
        # the working precision: set by the caller's boundary, precision(D) (docs/theory/numerics.md §5)
        target = 10.0 ** -dps
        unit = ulps(1, float, why="the rounding unit: the map's sums over the κ nodes cost one digit")
        tol_step, steps = ulps(3, why="Newton's step tolerance: 1000 ulps, as srf_solve's polish"), 40
    Jm = None if dps is None else np.array([[mpmath.mpf(float(v)) for v in row] for row in Jg_inv], dtype=object)

    def step(lev, prev):
        G = G0 if (dps is None and lev == 0) else group_setup(student, teacher, spikes, cs, gamma, level=lev, mp=mp)
        xl, n, last, vals, residual = _polish(lambda y: kgroup_map(y, G, o, layout), x if prev is None else prev[0],
                                              Jm if Jm is not None else Jg_inv, tol_step, steps)
        solver = float(sum(abs(float(g) * float(d)) for g, d in zip(grad, last)))
        rounding = rounding_floor(unit, cond, len(G.kappa), dps is not None, ROUNDING_SAFETY)
        return xl, vals, solver, rounding, n, residual, lev, len(G.kappa), last, G

    def estimate(coarse, fine):
        v = fine[1]["test_error"]
        disc = float(abs(v - coarse[1]["test_error"]))
        rnd = fine[3] * max(1.0, abs(float(v)))
        return (disc, rnd), [(v, error_of(disc, fine[2], fine[3], v), Target(target))]

    out = refine(step, estimate, what="asymptotic K-group saddle point", progress=progress)
    x, vals, solver, _, _, residual, lev, n_nodes, last, G = out.last
    (disc, rnd), newton = out.estimate, sum(lv[4] for lv in out.levels)
    order = {k: vals[k] for k in ORDER}
    order_err = _order_errors(out.levels[-2][1], vals, kgroup_map(x + last, G, o, layout)[1], out.last[3])
    return KGroupFit(test_error=vals["test_error"], errors={"test_error": disc + solver + rnd, "discretisation": disc,
                                                            "solver": solver, "rounding": rnd, "order": order_err},
                     order=order, m_rank=vals["m_rank"], cond=cond, level=lev, nodes=n_nodes, iterations=fev,
                     newton_steps=newton, residual=residual, target=target, state=x, dps=dps,
                     provenance=provenance(dps=dps, method="asymptotic K-group saddle point (hybrid Powell, chord "
                                           "Newton on refined kappa-rules)",
                                           references=["docs/theory/srf-theory.md §8.1", "docs/theory/numerics.md §5"]))
