r"""The κ-rule of the saddle point: nodes, weights and the κ-dependent coefficients
:math:`\mu_0,\mu_1,\mu_\star^2` (cGE, (15)) and :math:`h,h_1,h_2` (teacher, docs/theory/srf-theory.md §4.2)
precomputed on them, in float64 or Arb (docs/theory/numerics.md §3–4).

References
----------
[CPDKLZL24] arXiv:2402.04980, Result 3.2–3.3, (15), (21)–(24).
"""

from __future__ import annotations

import dataclasses
import math

import flint
import mpmath
import numpy as np

from ...core.caches import cached, cached_at_precision
from ...core.exact import to_exact, to_float
from ...core.precision import arb_to_mpf, mpf_to_arb, past_asked, workdps, working_digits
from ...hermite.activation import Activation
from ...hermite.evaluate import as_arb
from ...hermite.expressions import breakpoints, is_even, is_odd
from ...hermite.quadrature import gauss_hermite, normal_rule
from .cge import cge_arb, cge_curvature, second_derivative
from .smoothing import default_backend, smooth, smooth_arb

__all__ = ["SRFSetup", "srf_setup", "kappa_features", "GroupSetup", "group_setup", "rule_digits"]


@dataclasses.dataclass
class SRFSetup:
    """κ-node quantities of docs/theory/numerics.md §4 ('precompute'), float64 or mpf object arrays."""

    kappa: np.ndarray
    w: np.ndarray
    mu0: np.ndarray
    mu1: np.ndarray
    mus2: np.ndarray
    h: np.ndarray
    h1: np.ndarray
    h2: np.ndarray
    r: object
    c: object
    gamma: object
    mp: bool
    dps: int | None
    nodes: tuple
    level: int = 0
    digits: float = 16
    #: :math:`\partial_c\mu_0(\kappa)=\tfrac12\mathbb E_z\sigma''(r\kappa+\sqrt cz)` on the nodes (``curvature=True``;
    #: the corrected conditional mean of docs/theory/srf-theory.md §3), else None
    dmu0: object = None


def kappa_features(s: Activation, t: Activation | None, r: float, c: float, gamma: float):
    """Hard points, soft features and the panel cap of the κ-rule (docs/theory/numerics.md §3).

    The student's coefficients depend on κ through :math:`r\\kappa` smoothed with width :math:`\\sqrt c`: a kink
    ``b`` of σ becomes a soft feature at :math:`b/r` of width :math:`\\sqrt c/r`, and the panels are no wider
    than :math:`(1+\\sqrt c)/r`.  The teacher's enter through :math:`\\gamma\\kappa` smoothed with width ρ: a kink
    becomes a feature at :math:`b/\\gamma` of width :math:`\\rho/\\gamma` — a hard breakpoint when ρ = 0.
    """
    rho = math.sqrt(max(0.0, 1 - gamma * gamma))
    hard, soft, hmax = [], [], 1.0
    if r != 0:      # a negative spike (a readout group with u < 0) mirrors the features
        hmax = min(hmax, (1 + math.sqrt(c)) / abs(r))
        soft += [(float(b) / r, math.sqrt(c) / abs(r)) for b in breakpoints(s.expr)]
    if t is not None and gamma > 0:
        hmax = min(hmax, (1 + rho) / gamma)
        for b in breakpoints(t.expr):
            if rho == 0:    # gamma = 1: the kink itself, exactly
                hard.append(b)
            else:
                soft.append((float(b) / gamma, rho / gamma))
    return tuple(hard), tuple(soft), hmax


def _parity(act: Activation) -> int:
    """+1 (even), -1 (odd) or 0: the parity of the moments (E f, E Zf, E f^2) under a -> -a is (p, -p, +1)."""
    if act.center:
        return 1 if is_even(act.expr) else 0
    return -1 if is_odd(act.expr) else (1 if is_even(act.expr) else 0)


def _mirrored(compute, nodes, mirror: bool, parity: int):
    """Evaluate ``compute(nodes) -> (f0, f1, f2)`` on the non-negative half of a mirrored rule and reflect
    with the parities (p, -p, +1) (an odd rule has its middle node at 0)."""
    n = len(nodes)
    if not (mirror and parity):
        return compute(nodes)
    odd = n % 2
    half = nodes[(n - odd) // 2:]
    out = []
    for v, sg in zip(compute(half), (parity, -parity, 1)):
        is_obj = isinstance(v, (list, tuple)) or getattr(v, "dtype", None) == object
        v = np.asarray(v, dtype=object if is_obj else float)
        refl = v[odd:][::-1]
        out.append(np.concatenate([sg * refl, v]) if v.dtype != object
                   else np.array([sg * u for u in refl] + list(v), dtype=object))
    return tuple(out)


def srf_setup(student, teacher, r, c, gamma, *, digits: float | None = None, level: int = 0, mp: bool = False,
              kappa_nodes: int | None = None, inner_nodes: int | None = None, curvature: bool = False) -> SRFSetup:
    r"""Precompute :math:`\mu_0,\mu_1,\mu_\star^2,h,h_1,h_2` on the κ nodes (docs/theory/numerics.md §4).

    The κ-rule is :func:`~onestep_theory.quadrature.normal_rule` with the features of
    :func:`kappa_features` converged to ``digits`` digits (an accuracy, not a precision: 16 in float64, the
    digits asked + 2 with ``mp``, :func:`rule_digits`) and refinement ``level``; inner expectations use
    the closed forms (piecewise polynomials) or split, scaled Gauss–Legendre panels in z.  With
    ``mp`` everything is computed in Arb at the ambient working precision (call inside the boundary's
    precision context) and returned as ``mpf`` arrays.
    ``kappa_nodes``/``inner_nodes`` select the fixed Gauss–Hermite rules of the reference notebook
    (docs/theory/srf-theory.md §4.10) instead.  ``curvature=True`` adds ``dmu0``
    (:math:`\partial_c\mu_0=\tfrac12\mathbb E\sigma''`, the same rules; twice-differentiable students only).
    Cached by all arguments and the working precision.
    """
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    digits = rule_digits(mp) if digits is None else digits
    if not mp:
        r, c, gamma = (to_float(v, n) for v, n in ((r, "r"), (c, "c"), (gamma, "gamma")))
    else:
        # never round: an mpf keeps its precision (mpf(x) would round it to the ambient 53 bits),
        # a float is exact in binary, everything else becomes an exact SymPy number
        r, c, gamma = (v if isinstance(v, mpmath.mpf) else mpmath.mpf(v) if isinstance(v, float) else to_exact(v)
                       for v in (r, c, gamma))
    if curvature:
        second_derivative(s)
    args = (s, t, r, c, gamma, float(digits), int(level), kappa_nodes, inner_nodes, bool(curvature))
    return _setup_mp(*args) if mp else _setup64(*args)


def rule_digits(mp: bool) -> float:
    """The accuracy the κ-rule and the inner rules are built for: 16 digits in float64; with ``mp`` the digits
    asked at the enclosing boundary + 2 (its discretisation error then stays two digits below the last one asked,
    so that the change between two levels, the error estimate, is not swamped by it; docs/theory/numerics.md §3)."""
    return past_asked(2, why="the rule's discretisation 2 digits below the last one asked") if mp else 16


@cached(maxsize=48)
def _setup64(s, t, r, c, gamma, accuracy, level, kappa_nodes, inner_nodes, curvature=False):
    return _setup(s, t, r, c, gamma, accuracy, level, False, kappa_nodes, inner_nodes, curvature)


@cached_at_precision(maxsize=48)
def _setup_mp(s, t, r, c, gamma, accuracy, level, kappa_nodes, inner_nodes, curvature=False):
    return _setup(s, t, r, c, gamma, accuracy, level, True, kappa_nodes, inner_nodes, curvature)


def _setup(s, t, r, c, gamma, accuracy, level, mp, kappa_nodes, inner_nodes, curvature):
    rf, cf, gf = float(r), float(c), float(gamma)
    hard, soft, hmax = kappa_features(s, t, rf, cf, gf)
    ps, pt = _parity(s), _parity(t)
    inner_gh = dict(backend="gauss-hermite", nodes=inner_nodes) if inner_nodes else {}
    if not mp:
        if kappa_nodes:
            k, w = gauss_hermite(kappa_nodes)
            mirror = True
        else:
            rule = normal_rule(hard, soft, digits=accuracy, level=level, hmax=hmax)
            k, w, mirror = rule.nodes, rule.weights, rule.mirror
        rho = math.sqrt(max(0.0, 1 - gf * gf))
        sc = math.sqrt(cf)

        def stud(kk):
            gh = inner_gh if inner_gh and not breakpoints(s.expr) else {}
            e0, e1, e2 = smooth(s, rf * kk, sc, digits=accuracy, level=level, **gh)
            m1 = e1 / sc
            return e0, m1, np.maximum(0.0, e2 - e0 * e0 - cf * m1 * m1)

        def teach(kk):
            gh = inner_gh if inner_gh and not breakpoints(t.expr) else {}
            return smooth(t, gf * kk, rho, digits=accuracy, level=level, **gh)

        mu0, mu1, mus2 = _mirrored(stud, k, mirror, ps)
        h, e1, h2 = _mirrored(teach, k, mirror, pt)
        dmu0 = None
        if curvature:
            dmu0 = _mirrored(lambda kk: (cge_curvature(s, rf, cf, kk, digits=accuracy, level=level),), k, mirror,
                             _parity(second_derivative(s)))[0]
        nodes = (len(k), f"GH {inner_nodes}" if inner_nodes else "panels")
        return SRFSetup(k, w, mu0, mu1, mus2, h, e1, h2, rf, cf, gf, False, None, nodes, level, accuracy, dmu0)
    dps = working_digits()
    with workdps(dps):                            # Arb kept in step with mpmath's ambient precision
        if kappa_nodes:
            kz, wz = gauss_hermite(kappa_nodes, mp=True)
            k_arb, w_arb, mirror = [mpf_to_arb(v) for v in kz], [mpf_to_arb(v) for v in wz], True
        else:
            rule = normal_rule(hard, soft, digits=accuracy, level=level, hmax=hmax, arb=True)
            k_arb, w_arb, mirror = list(rule.nodes), list(rule.weights), rule.mirror
        ra, ca, ga = (as_arb(v) for v in (r, c, gamma))
        rho = (1 - ga * ga).sqrt() if ga * ga < 1 else flint.arb(0)

        def stud(kk):
            gh = inner_gh if inner_gh and not breakpoints(s.expr) else {}
            return cge_arb(s, ra, ca, list(kk), digits=accuracy, level=level, **gh)

        def teach(kk):
            gh = inner_gh if inner_gh and not breakpoints(t.expr) else {}
            backend = gh.get("backend") or default_backend(t)
            return smooth_arb(t, np.array([ga * v for v in kk], dtype=object), rho, backend=backend,
                              digits=accuracy, level=level, nodes=inner_nodes or 61)

        karr = np.array(k_arb, dtype=object)
        st = _mirrored(stud, karr, mirror, ps)
        te = _mirrored(teach, karr, mirror, pt)
        conv = (lambda arr: np.array([arb_to_mpf(v) for v in np.ravel(arr)], dtype=object))
        mu0, mu1, mus2 = (conv(v) for v in st)
        h, e1, h2 = (conv(v) for v in te)
        dmu0 = None
        if curvature:
            d2 = second_derivative(s)
            half = flint.arb(1) / 2

            def curv(kk):
                e0 = smooth_arb(d2, np.array([ra * v for v in kk], dtype=object), ca.sqrt(),
                                backend=default_backend(d2), digits=accuracy, level=level)[0]
                return ([half * v for v in np.atleast_1d(e0).ravel()],)

            dmu0 = conv(_mirrored(curv, karr, mirror, _parity(d2))[0])
        k, w = conv(karr), conv(np.array(w_arb, dtype=object))
        rm, cm, gm = (arb_to_mpf(v) for v in (ra, ca, ga))
    nodes = (len(k), f"GH {inner_nodes}" if inner_nodes else "panels")
    return SRFSetup(k, w, mu0, mu1, mus2, h, e1, h2, rm, cm, gm, True, dps, nodes, level, accuracy, dmu0)


@dataclasses.dataclass
class GroupSetup:
    """κ-node quantities of K readout groups on one shared rule (docs/theory/srf-theory.md §8), float64 or (with
    ``dps``) numpy object arrays of mpf: ``mu0, mu1, mus2`` have shape (K, nodes)."""

    kappa: np.ndarray
    w: np.ndarray
    mu0: np.ndarray
    mu1: np.ndarray
    mus2: np.ndarray
    h: np.ndarray
    h1: np.ndarray
    h2: np.ndarray
    spikes: tuple
    cs: tuple
    gamma: object
    level: int
    dps: int | None = None

    @property
    def mp(self) -> bool:
        return self.dps is not None


def group_setup(student, teacher, spikes, cs, gamma, *, level: int = 0, digits: float | None = None,
                mp: bool = False) -> GroupSetup:
    r"""The coefficients (32) of docs/theory/srf-theory.md §8 — (15) at :math:`(r\varsigma_j, c_j)` for every group —
    and the teacher's :math:`h,h_1,h_2` on one κ-rule carrying every group's features (cached).

    float64 by default (``digits``: the rules' accuracy, :func:`rule_digits` by default); with ``mp`` the rule
    and every coefficient are computed in Arb at the ambient working precision (call inside the boundary's
    precision context) and returned as mpf object arrays; the parameters then stay exact (SymPy numbers) or
    keep their mpf precision."""
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    digits = rule_digits(mp) if digits is None else digits
    if not mp:
        spikes = tuple(to_float(v, "r") for v in spikes)
        cs = tuple(to_float(v, "c") for v in cs)
        gamma = to_float(gamma, "gamma")
    else:
        keep = (lambda v: v if isinstance(v, mpmath.mpf) else to_exact(v))  # noqa: E731
        spikes, cs, gamma = tuple(keep(v) for v in spikes), tuple(keep(v) for v in cs), keep(gamma)
    args = (s, t, spikes, cs, gamma, int(level), float(digits))
    return _group_mp(*args) if mp else _group64(*args)


@cached(maxsize=32)
def _group64(s, t, spikes, cs, gamma, level, accuracy):
    return _group(s, t, spikes, cs, gamma, level, accuracy, False)


@cached_at_precision(maxsize=32)
def _group_mp(s, t, spikes, cs, gamma, level, accuracy):
    return _group(s, t, spikes, cs, gamma, level, accuracy, True)


def _group(s, t, spikes, cs, gamma, level, accuracy, mp):
    gf = float(gamma)
    hard, soft, hmax = set(), [], 1.0
    for rj, cj in zip(spikes, cs):
        hj, sj, mj = kappa_features(s, t, float(rj), float(cj), gf)
        hard, hmax = hard | set(hj), min(hmax, mj)
        soft += [f for f in sj if f not in soft]
    rule = normal_rule(tuple(sorted(hard, key=float)), tuple(soft), digits=accuracy, level=level, hmax=hmax, arb=mp)
    if mp:
        return _group_arb(s, t, rule, spikes, cs, gamma, level, accuracy)
    k, w = rule.nodes, rule.weights
    rho = math.sqrt(max(0.0, 1 - gf * gf))
    mu0, mu1, mus2 = [], [], []
    for rj, cj in zip(spikes, cs):
        sc = math.sqrt(cj)
        e0, e1, e2 = smooth(s, rj * k, sc, digits=accuracy, level=level)
        m1 = e1 / sc
        mu0.append(e0)
        mu1.append(m1)
        mus2.append(np.maximum(0.0, e2 - e0 * e0 - cj * m1 * m1))
    h, h1, h2 = smooth(t, gf * k, rho, digits=accuracy, level=level)
    return GroupSetup(k, w, np.array(mu0), np.array(mu1), np.array(mus2), h, h1, h2, spikes, cs, gf, level)


def _group_arb(s, t, rule, spikes, cs, gamma, level, accuracy):
    """The Arb path of :func:`group_setup`: every group's (15) and the teacher's moments on the mirrored rule, at
    the ambient precision."""
    dps = working_digits()
    with workdps(dps):                            # Arb kept in step with mpmath's ambient precision
        karr = np.array(list(rule.nodes), dtype=object)
        ga = as_arb(gamma)
        rho = (1 - ga * ga).sqrt() if ga * ga < 1 else flint.arb(0)
        conv = (lambda arr: np.array([arb_to_mpf(v) for v in np.ravel(arr)], dtype=object))  # noqa: E731
        rows = []
        for rj, cj in zip(spikes, cs):
            ra, ca = as_arb(rj), as_arb(cj)
            st = _mirrored(lambda kk: cge_arb(s, ra, ca, list(kk), digits=accuracy, level=level), karr, rule.mirror,
                           _parity(s))
            rows.append([conv(v) for v in st])
        te = _mirrored(lambda kk: smooth_arb(t, np.array([ga * v for v in kk], dtype=object), rho,
                                             backend=default_backend(t), digits=accuracy, level=level),
                       karr, rule.mirror, _parity(t))
        h, h1, h2 = (conv(v) for v in te)
        k, w = conv(karr), conv(np.array(list(rule.weights), dtype=object))
        gm = arb_to_mpf(ga)
    stack = (lambda i: np.array([r[i] for r in rows], dtype=object))  # noqa: E731
    return GroupSetup(k, w, stack(0), stack(1), stack(2), h, h1, h2, spikes, cs, gm, level, dps)
