r"""Quadrature rules: the one home of every node rule in the package.

* :func:`gauss_legendre` — Gauss–Legendre on :math:`[-1,1]`, float64 (numpy, stable at any count) or at
  any precision (Arb's certified Legendre roots, python-flint);
* :func:`gauss_hermite` — probabilists' Gauss–Hermite for :math:`Z\sim\mathcal N(0,1)` with weights summing
  to 1, float64 (Golub–Welsch with asymptotic nodes for large counts, ``scipy.special``) or at any
  precision (``mpmath.gauss_quadrature``).  Used only for smooth integrands and for the
  notebook-compatible fixed rules;
* :func:`normal_rule` — the workhorse for :math:`\mathbb E\,g(Z)`, :math:`Z\sim\mathcal N(0,1)`: composite
  Gauss–Legendre on :math:`[-L,L]` (:math:`L` from the digits wanted), split exactly at the integrand's
  kinks (*hard* points) and graded towards *soft* features of given width (where the integrand turns
  on a scale :math:`w`, e.g. :math:`\mu_0(\kappa)` near :math:`\kappa=0` with :math:`w=\sqrt c/r`), with panel
  widths capped at ``hmax``.  The number of nodes per panel follows the digits needed on that panel
  (the Gaussian weight lowers it in the tails) and grows by the factor :data:`GROWTH` per refinement
  ``level``; comparing two levels gives the discretisation error (docs/theory/numerics.md §3).

All rules are cached; none is rebuilt in a hot path.

References
----------
G. H. Golub, J. H. Welsch, Math. Comp. 23 (1969) 221–230; F. Johansson, M. Mezzarobba, *Fast and
rigorous arbitrary-precision computation of Gauss–Legendre quadrature nodes and weights*, SIAM J.
Sci. Comput. 40 (2018) C726–C747.
"""

from __future__ import annotations

import dataclasses
import math

import flint
import mpmath
import numpy as np
import sympy as sp

from ..core.caches import cached, cached_at_precision
from ..core.errors import InvalidParameterError
from .evaluate import arb_callable
from ..core.precision import arb_to_mpf, mpf_to_arb, workdps, working_digits

__all__ = ["gauss_legendre", "gauss_hermite", "normal_rule", "NormalRule", "GROWTH", "MAX_NODES",
           "tail_cutoff", "nodes_per_panel"]

#: Factor by which the nodes per panel grow from one refinement level to the next.
GROWTH = 1.25
#: Fewest Gauss-Legendre nodes on a panel (even in the far tail, where the weight is tiny).
MIN_PANEL_NODES = 4
#: Upper bound on the nodes of one rule (bounded work for any input).
MAX_NODES = 40000
_LN10 = math.log(10.0)


def _readonly(*arrays):
    """Cached rules are shared: their arrays are made read-only."""
    for a in arrays:
        a.setflags(write=False)
    return arrays


def gauss_legendre(m: int, arb: bool = False):
    """Gauss–Legendre nodes and weights on [-1, 1]: float64 arrays, or (``arb=True``) tuples of Arb balls at the
    ambient precision (the rule is cached per working precision, read from the context).

    >>> x, w = gauss_legendre(3)
    >>> [round(float(v), 12) for v in x], round(float(w.sum()), 14)
    ([-0.774596669241, 0.0, 0.774596669241], 2.0)
    """
    if not isinstance(m, int) or isinstance(m, bool) or not 1 <= m <= 5000:
        raise InvalidParameterError("nodes", m, "an integer in [1, 5000]")
    return _legendre_arb(m) if arb else _legendre64(m)


@cached(maxsize=256)
def _legendre64(m: int):
    return _readonly(*np.polynomial.legendre.leggauss(m))


@cached_at_precision(maxsize=256)
def _legendre_arb(m: int):
    pairs = [flint.arb.legendre_p_root(m, k, weight=True) for k in range(m)]
    return tuple(p[0] for p in reversed(pairs)), tuple(p[1] for p in reversed(pairs))


def gauss_hermite(n: int, mp: bool = False):
    r"""Probabilists' Gauss–Hermite rule for :math:`\mathbb E\,g(Z)` (weights sum to 1).

    float64 arrays (stable for any ``n``: ``scipy.special.roots_hermitenorm``), or (``mp=True``) numpy object
    arrays of ``mpf`` at the ambient precision (``mpmath.gauss_quadrature``, Golub–Welsch; cached per working
    precision, read from the context).

    >>> z, w = gauss_hermite(3)
    >>> round(float(w @ z**2), 14), round(float(w @ z**4), 14)
    (1.0, 3.0)
    """
    if not isinstance(n, int) or not 1 <= n <= 5000:
        raise InvalidParameterError("nodes", n, "an integer in [1, 5000]")
    return _hermite_mp(n) if mp else _hermite64(n)


@cached(maxsize=128)
def _hermite64(n: int):
    from scipy.special import roots_hermitenorm

    z, w = roots_hermitenorm(n)
    return _readonly(z, w / w.sum())


@cached_at_precision(maxsize=128)
def _hermite_mp(n: int):
    xs, ws = mpmath.gauss_quadrature(n, "hermite")
    s2 = mpmath.sqrt(2)
    sp_ = mpmath.sqrt(mpmath.pi)
    z = np.array([s2 * v for v in xs], dtype=object)
    w = np.array([v / sp_ for v in ws], dtype=object)
    return z, w


def tail_cutoff(accuracy: float) -> float:
    r""":math:`L` with :math:`\varphi(L)\,(1+L^2)<10^{-\text{accuracy}}`: the Gaussian tail beyond it is negligible
    (``accuracy``: the digits the rule is built for, :func:`normal_rule`'s ``digits``)."""
    return math.sqrt(2 * _LN10 * max(accuracy, 1.0)) + 1.5


def nodes_per_panel(accuracy: float, level: int) -> int:
    """Gauss–Legendre nodes on a full-accuracy panel for ``accuracy`` digits at refinement ``level``.

    A panel is at most as wide as the distance to the nearest complex singularity, so the
    Bernstein-ellipse parameter is at least about 4 and each node gains about 0.6 digits; the count
    grows by :data:`GROWTH` per level.
    """
    return max(3, math.ceil((0.85 * max(accuracy, 1.0) + 4) * GROWTH ** level))


@dataclasses.dataclass(frozen=True)
class NormalRule:
    """Nodes and weights (Gaussian density included) of :func:`normal_rule`.

    ``nodes``/``weights`` are float64 arrays, or tuples of Arb balls (an Arb rule: ``dps`` records its
    working digits, None in float64).
    ``mirror`` is True when the rule is symmetric about 0 with ``nodes[i] = -nodes[-1-i]``.
    """

    nodes: object
    weights: object
    mirror: bool
    panels: int
    dps: int | None

    def __len__(self):
        return len(self.nodes)

    def mp(self):
        """Nodes and weights as numpy object arrays of ``mpf`` (for the mpmath solvers)."""
        return (np.array([arb_to_mpf(v) for v in self.nodes], dtype=object),
                np.array([arb_to_mpf(v) for v in self.weights], dtype=object))


def _flt(v) -> float:
    return float(v) if not isinstance(v, str) else float(mpmath.mpf(v))


def _march(lo: float, hi: float, soft, hmax: float) -> list:
    """Interior edges of (lo, hi): width min(hmax, w_f + |t - p_f|/2) graded away from each soft feature."""
    def width(t):
        w = hmax
        for p, s in soft:
            w = min(w, s + 0.5 * abs(t - p))
        return max(w, 1e-12 * max(1.0, abs(t)))

    edges = []
    t = lo
    while True:
        w = width(t)
        # do not step over a feature: stop at it when it lies closer than one width
        nxt = t + w
        for p, _ in soft:
            if t < p < nxt:
                nxt = p
        if nxt >= hi - 0.3 * width(hi):
            break
        edges.append(nxt)
        t = nxt
        if len(edges) > MAX_NODES:
            raise InvalidParameterError("quadrature", len(edges), f"at most {MAX_NODES} panels",
                                        "the integrand turns on too small a scale")
    return edges


def normal_rule(hard: tuple = (), soft: tuple = (), *, digits: float = 16, level: int = 0, hmax: float = 1.0,
                arb: bool = False, cache: bool = True, degree: int = 4) -> NormalRule:
    r"""Composite Gauss–Legendre rule for :math:`\mathbb E\,g(Z)`, :math:`Z\sim\mathcal N(0,1)`.

    Parameters
    ----------
    hard : tuple
        Exact points where ``g`` has a kink or jump (floats, or mpf/SymPy-exact values as strings at
        ``dps``); panels end exactly there.
    soft : tuple of (point, width)
        Points near which ``g`` turns on the scale ``width``; panels are graded towards them.
    digits : float
        Digits wanted (sets the tail cut-off and the nodes per panel).
    level : int
        Refinement level (nodes per panel grow by :data:`GROWTH` per level).
    hmax : float
        Largest panel width (at most the distance from the real axis to the integrand's nearest
        complex singularity).
    arb : bool
        An Arb rule at the ambient precision (cached per working precision, read from the context).
    degree : int
        Polynomial growth of the integrand (besides the Gaussian weight) that the tail panels must
        resolve: 4 in the saddle point, ``k`` for a Hermite moment of order ``k``.

    >>> rule = normal_rule(digits=14)
    >>> z, w = rule.nodes, rule.weights
    >>> round(float(w.sum()), 13), round(float(w @ z**4), 12)
    (1.0, 3.0)
    """
    args = (tuple(hard), tuple(soft), float(digits), int(level), float(hmax), bool(arb), int(degree))
    if cache:
        return (_normal_rule_arb if arb else _normal_rule64)(*args)
    return _normal_rule(*args)


@cached(maxsize=512)
def _normal_rule64(hard, soft, accuracy, level, hmax, arb, degree):
    return _normal_rule(hard, soft, accuracy, level, hmax, arb, degree)


@cached_at_precision(maxsize=512)
def _normal_rule_arb(hard, soft, accuracy, level, hmax, arb, degree):
    return _normal_rule(hard, soft, accuracy, level, hmax, arb, degree)


def _normal_rule(hard, soft, accuracy, level, hmax, arb, degree=4) -> NormalRule:
    if not (hmax > 0 and math.isfinite(hmax)):
        raise InvalidParameterError("hmax", hmax, "a real number > 0")
    L = tail_cutoff(accuracy * (1 + 0.25 * level))   # the cut-off is refined with the level too
    while degree > 4 and degree * math.log10(L) - L * L / (2 * _LN10) > -accuracy * (1 + 0.25 * level):
        L += 1.0                                     # a fast-growing integrand needs a farther cut-off
    hard_f = sorted({_flt(h) for h in hard})
    if any(abs(a - b) < 1e-300 for a, b in zip(hard_f, hard_f[1:])):
        raise InvalidParameterError("hard", hard, "distinct points")
    soft = tuple((float(p), float(s)) for p, s in soft if abs(float(p)) < L + 10 * float(s))
    sym = all(-h in hard_f for h in hard_f) and all(any(abs(q + p) <= 1e-15 * max(1, abs(p)) and s2 == s
                                                       for q, s2 in soft) for p, s in soft)
    hard_in = [h for h in hard_f if -L < h < L]
    if sym:
        pts = [0.0] + [h for h in hard_in if h > 0] + [L]
    else:
        pts = [-L] + hard_in + [L]
    # exact hard points at precision: keep the caller's values where given
    hard_exact = {_flt(h): h for h in hard}
    edges = []
    for a, b in zip(pts[:-1], pts[1:]):
        edges.append(a)
        edges.extend(_march(a, b, soft, hmax))
    edges.append(pts[-1])
    m_full = nodes_per_panel(accuracy, 0)
    grow = GROWTH ** level
    panels = []
    for a, b in zip(edges[:-1], edges[1:]):
        t0 = 0.0 if a <= 0 <= b else min(abs(a), abs(b))
        # digits needed on this panel: the Gaussian weight lowers them; a polynomially growing
        # integrand (up to degree 4 in the saddle point) and a margin of 2 raise them again
        eff = min(accuracy, max(1.0, accuracy - t0 * t0 / (2 * _LN10) + degree / 2 * math.log10(1 + t0 * t0) + 2))
        want = max(MIN_PANEL_NODES, math.ceil(m_full * eff / accuracy))
        # quantise the level-0 count to a few sizes (m_full * 0.8^j), so that few distinct rules are
        # built; every panel then grows by GROWTH per level (no panel is left unrefined)
        m = m_full
        while math.ceil(m * 0.8) >= want and math.ceil(m * 0.8) < m:
            m = math.ceil(m * 0.8)
        panels.append((a, b, math.ceil(m * grow)))
    total = sum(m for _, _, m in panels) * (2 if sym else 1)
    if total > MAX_NODES:
        raise InvalidParameterError("quadrature", total, f"at most {MAX_NODES} nodes",
                                    "the integrand turns on too small a scale for this many digits")
    if not arb:
        zs, ws = [], []
        for a, b, m in panels:
            xg, wg = gauss_legendre(m)
            h, c0 = (b - a) / 2, (a + b) / 2
            zs.append(c0 + h * xg)
            ws.append(h * wg)
        z = np.concatenate(zs)
        w = np.concatenate(ws) * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        if sym:
            z = np.concatenate([-z[::-1], z])
            w = np.concatenate([w[::-1], w])
        return NormalRule(z, w, sym, len(panels) * (2 if sym else 1), None)
    dps = working_digits()
    with workdps(dps):                  # Arb kept in step with mpmath's ambient precision
        def to_arb(v):
            ex = hard_exact.get(v)
            if isinstance(ex, flint.arb):
                return ex
            if isinstance(ex, str):
                return flint.arb(ex)
            if isinstance(ex, mpmath.mpf):
                return mpf_to_arb(ex)
            if isinstance(ex, sp.Basic):
                return arb_callable(ex)(flint.arb(0))
            return flint.arb(v)   # float edge (or float hard point): its exact binary value

        norm = 1 / (2 * flint.arb.pi()).sqrt()
        zs, ws = [], []
        for a, b, m in panels:
            xg, wg = gauss_legendre(m, arb=True)       # at the rule's working precision, set above
            A, B = to_arb(a), to_arb(b)
            h, c0 = (B - A) / 2, (A + B) / 2
            for xv, wv in zip(xg, wg):
                zz = c0 + h * xv
                zs.append(zz)
                ws.append(h * wv * norm * (-zz * zz / 2).exp())
        if sym:
            zs = [-v for v in reversed(zs)] + zs
            ws = list(reversed(ws)) + ws
    return NormalRule(tuple(zs), tuple(ws), sym, len(panels) * (2 if sym else 1), dps)
