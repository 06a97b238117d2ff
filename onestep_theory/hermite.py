r"""Probabilists' Hermite polynomials, expansion coefficients and Gaussian moments.

One function per operation, prefix ``he_`` (in the style of ``numpy.polynomial.hermite_e``):

=====================  ====================================================================
``he_eval``            :math:`\mathrm{He}_k(t)` by the three-term recurrence (mpf, float, array)
``he_poly``            :math:`\mathrm{He}_k` as an exact SymPy polynomial in ``x``
``he_xi``              :math:`\xi_{p,i}` with :math:`x^p=\sum_i\xi_{p,i}\mathrm{He}_i` (exact int)
``he_xi_row``          :math:`(\xi_{p,0},\dots,\xi_{p,p})`
``he_xi_table``        rows ``p = 0..pmax``
``he_from_monomial``   monomial coefficients → Hermite coefficients (exact)
``he_to_monomial``     Hermite coefficients → monomial coefficients (exact)
``he_expect``          :math:`\mathbb E f(Z)` exact where possible, else at ``dps`` digits
``he_coeffs``          :math:`c_0..c_K`, with exact closed forms where found
=====================  ====================================================================

The :class:`Activation` object bundles an expression with the moments the theory
needs (:math:`c_k`, :math:`c_\star`, :math:`c_{>1}`, :math:`\mathbb E\sigma'^2`) and fast
float64 callables for the simulator.

References
----------
``hermite.md`` (package specification) §§1–6.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

from .precision import MAX_DPS, precision
from .errors import ExpressionError, HypothesisError, InvalidParameterError
from .exact import GUARD_DIGITS, check_dps, to_mpf
from .expressions import breakpoints, is_even, is_odd, parse, pieces, x
from .gauss import NotExact, _tidy, expect_numeric_vec, expect_piece_exact
from .results import Result, provenance

__all__ = [
    "he_eval",
    "he_poly",
    "he_xi",
    "he_xi_row",
    "he_xi_table",
    "he_from_monomial",
    "he_to_monomial",
    "he_expect",
    "he_coeffs",
    "HermiteCoefficients",
    "Activation",
]


# --------------------------------------------------------------------------- polynomials
def he_eval(k: int, t):
    r"""Evaluate :math:`\mathrm{He}_k(t)` by :math:`\mathrm{He}_{k+1}=t\mathrm{He}_k-k\mathrm{He}_{k-1}`.

    Works for ``mpf``, Python numbers and numpy arrays (``hermite.md`` §1.1, §1.5).

    >>> he_eval(4, 2)
    -5
    >>> he_eval(3, np.array([1.0, 2.0]))
    array([-2.,  2.])
    """
    if k < 0:
        raise InvalidParameterError("k", k, "an integer >= 0")
    p0 = t * 0 + 1
    if k == 0:
        return p0
    p1 = t
    for j in range(1, k):
        p0, p1 = p1, t * p1 - j * p0
    return p1


@functools.lru_cache(maxsize=None)
def he_poly(k: int) -> sp.Expr:
    r"""Exact :math:`\mathrm{He}_k(x)` (``hermite.md`` §1.1 closed form).

    >>> he_poly(4)
    x**4 - 6*x**2 + 3
    """
    if k < 0:
        raise InvalidParameterError("k", k, "an integer >= 0")
    terms = [
        sp.Integer((-1) ** m * math.factorial(k)) / (math.factorial(m) * math.factorial(k - 2 * m) * 2**m)
        * x ** (k - 2 * m)
        for m in range(k // 2 + 1)
    ]
    return sp.Add(*terms)


def he_xi(p: int, i: int) -> int:
    r""":math:`\xi_{p,i}=p!/(i!\,j!\,2^j)` with :math:`j=(p-i)/2` if :math:`p-i` is even and
    :math:`\ge0`, else 0 (``hermite.md`` §3).  Exact Python integer.

    >>> he_xi(4, 0), he_xi(4, 2), he_xi(5, 2)
    (3, 6, 0)
    """
    if p < 0 or i < 0:
        raise InvalidParameterError("p, i", (p, i), "integers >= 0")
    if i > p or (p - i) % 2:
        return 0
    j = (p - i) // 2
    return math.factorial(p) // (math.factorial(i) * math.factorial(j) * 2**j)


@functools.lru_cache(maxsize=None)
def he_xi_row(p: int) -> tuple:
    r"""Row :math:`(\xi_{p,0},\dots,\xi_{p,p})` of exact integers.

    >>> he_xi_row(6)
    (15, 0, 45, 0, 15, 0, 1)
    """
    return tuple(he_xi(p, i) for i in range(p + 1))


def he_xi_table(pmax: int) -> list:
    """Rows ``he_xi_row(p)`` for ``p = 0..pmax``."""
    if pmax < 0:
        raise InvalidParameterError("pmax", pmax, "an integer >= 0")
    return [he_xi_row(p) for p in range(pmax + 1)]


def _exactify(c):
    if isinstance(c, sp.Basic):
        return c
    if isinstance(c, Fraction):
        return sp.Rational(c.numerator, c.denominator)
    if isinstance(c, int):
        return sp.Integer(c)
    from .exact import to_exact

    return to_exact(c, "coefficient")


def he_from_monomial(coeffs) -> list:
    r"""Hermite coefficients :math:`h` with :math:`\sum_p a_px^p=\sum_ih_i\mathrm{He}_i` (exact).

    >>> he_from_monomial([0, 0, 0, 1])      # x**3 = 3 He_1 + He_3
    [0, 3, 0, 1]
    """
    a = [_exactify(c) for c in coeffs]
    out = [sp.Integer(0)] * len(a)
    for p, ap in enumerate(a):
        if ap == 0:
            continue
        for i, xi in enumerate(he_xi_row(p)):
            if xi:
                out[i] += ap * xi
    return out


def he_to_monomial(coeffs) -> list:
    r"""Monomial coefficients of :math:`\sum_i h_i\mathrm{He}_i` (exact inverse of :func:`he_from_monomial`).

    >>> he_to_monomial([0, 3, 0, 1])
    [0, 0, 0, 1]
    """
    h = [_exactify(c) for c in coeffs]
    out = [sp.Integer(0)] * len(h)
    for k, hk in enumerate(h):
        if hk == 0:
            continue
        for m in range(k // 2 + 1):
            out[k - 2 * m] += hk * sp.Integer((-1) ** m * math.factorial(k)) / (
                math.factorial(m) * math.factorial(k - 2 * m) * 2**m)
    return out


# --------------------------------------------------------------------------- expectations
def _exact_weighted(f: sp.Expr, w: sp.Expr):
    """Exact E[f(Z) w(Z)] over the pieces of f, w a polynomial; None if not found."""
    try:
        total = sp.Integer(0)
        for a, b, g in pieces(f):
            total += expect_piece_exact(g * w, a, b)
        return _tidy(total)
    except NotExact:
        return None


@functools.lru_cache(maxsize=1024)
def _smooth_derivative(f: sp.Expr):
    """(f', f'(0), f' - f'(0) is odd) for a smooth f (single piece), else None."""
    if len(pieces(f)) != 1:
        return None
    g = sp.diff(f, x)
    g0 = g.subs(x, 0)
    odd = bool(g0.is_number) and not g0.has(sp.zoo, sp.nan) and is_odd(g - g0)
    return g, g0, odd


@functools.lru_cache(maxsize=4096)
def _moment_exact(f: sp.Expr, k: int):
    r"""Exact :math:`\mathbb E[f(Z)\mathrm{He}_k(Z)]` and how it was found, or ``(None, None)``.

    Tries, in order: parity of *f*; the exact engine on the pieces of *f*; Stein's
    identity once, :math:`\mathbb E[f\mathrm{He}_k]=\mathbb E[f'\mathrm{He}_{k-1}]`
    (``hermite.md`` §2.2), with the exact engine or the parity of :math:`f'-f'(0)`.
    """
    if k % 2 == 1 and is_even(f) or k % 2 == 0 and is_odd(f):
        return sp.Integer(0), "exact (parity)"
    v = _exact_weighted(f, he_poly(k))
    if v is not None:
        return v, "exact"
    if k >= 1:
        d = _smooth_derivative(f)
        if d is not None:
            g, g0, odd = d
            v = _exact_weighted(g, he_poly(k - 1))
            if v is not None:
                return v, "exact (Stein)"
            if odd and (k - 1) % 2 == 0:
                return (sp.nsimplify(g0) if k == 1 else sp.Integer(0)), "exact (Stein, parity)"
    if k == 0:
        from .gauss import expect_exact

        v = _parity_mean(f)
        if v is not None:
            return v, "exact (parity)"
        try:
            return expect_exact(f), "exact"
        except NotExact:
            pass
    return None, None


def _parity_mean(g: sp.Expr):
    """E g(Z) = g(0) when g - g(0) is odd (proven symbolically), else None."""
    if len(pieces(g)) != 1:
        return None
    g0 = g.subs(x, 0)
    if not g0.is_number or g0.has(sp.zoo, sp.nan):
        return None
    return sp.nsimplify(g0) if is_odd(g - g0) else None


_BUNDLES: dict = {}


def _numeric_bundle(f: sp.Expr, kmax: int, dps: int) -> tuple:
    r"""Numeric :math:`(\mathbb E[f\mathrm{He}_0],\dots,\mathbb E[f\mathrm{He}_K],\ \mathbb E f^2)` at ``dps``.

    One quadrature pass for all weights; cached by (expression, dps), reusing a
    previous pass with a larger ``K``.
    """
    key = (f, dps)
    hit = _BUNDLES.get(key)
    if hit is not None and hit[0] >= kmax:
        return hit[1][: kmax + 1] + (hit[1][-1],)
    kk = max(kmax, 2)

    def wfun(t, fv):
        he = [t * 0 + 1, t]
        for j in range(1, kk):
            he.append(t * he[j] - j * he[j - 1])
        return he[: kk + 1] + [fv]

    deg = sp.Poly(f, x).degree() if f.is_polynomial(x) else 2
    vals = tuple(expect_numeric_vec(f, wfun, kk + 2, dps, growth=kk + 2 * deg))
    if len(_BUNDLES) > 4096:
        _BUNDLES.clear()
    _BUNDLES[key] = (kk, vals)
    return vals[: kmax + 1] + (vals[-1],)


def _moments_numeric(f: sp.Expr, ks: tuple, dps: int) -> tuple:
    bundle = _numeric_bundle(f, max(ks), dps)
    return tuple(bundle[k] for k in ks)


def he_expect(f, dps: int | None = None, *, param: str = "f"):
    r""":math:`\mathbb E f(Z)`, :math:`Z\sim\mathsf N(0,1)`.

    Exact SymPy value when the exact engine finds one (``dps=None`` then returns it),
    otherwise an ``mpf`` at ``dps`` digits (default 15) from breakpoint-split tanh-sinh
    quadrature (``hermite.md`` §5.4).

    >>> he_expect("Max(x,0)**2")
    1/2
    >>> print(mpmath.nstr(he_expect("tanh(x)**2", 20), 20))
    0.39429449039784117442
    """
    e = parse(f, param) if not isinstance(f, sp.Expr) else f
    v, _ = _moment_exact(e, 0)
    if v is not None:
        if dps is None:
            return v
        with precision(dps):
            return to_mpf(v, dps)
    return _moments_numeric(e, (0,), dps or 15)[0]


@dataclasses.dataclass
class HermiteCoefficients(Result):
    r"""Hermite coefficients :math:`c_0..c_K` of an expression and its Gaussian moments.

    ``values[k]`` is an ``mpf`` at ``dps`` digits; ``exact[k]`` the SymPy closed form or
    ``None``; ``methods[k]`` says how it was obtained.  Implements ``hermite.md`` §2.
    """

    expression: str
    kmax: int
    dps: int
    values: list
    exact: list
    methods: list
    mean: object
    second_moment: object
    c_gt1: object
    c_star: object
    centered: bool
    breakpoints: list
    parseval_partial: object
    provenance: dict

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["coefficients"] = [
            {"k": k, "value": v, "exact": (str(e) if e is not None else None), "method": m}
            for k, (v, e, m) in enumerate(zip(d.pop("values"), self.exact, self.methods))
        ]
        d.pop("exact")
        d.pop("methods")
        return d


# --------------------------------------------------------------------------- Activation
@dataclasses.dataclass(frozen=True)
class Activation:
    r"""An activation or teacher :math:`\sigma` with its Gaussian moments.

    Parameters
    ----------
    expr : sympy.Expr
        Expression in :data:`~onestep_theory.expressions.x` (use :meth:`from_any`).
    center : bool
        Work with :math:`\sigma-c_0` (``hermite.md`` §2.3).  Never applied silently.
    label : str
        Display name (the user's spelling).

    Every moment is cached by (expression, k, dps): the cache key is the expression
    itself, never a name.

    Examples
    --------
    >>> relu = Activation.from_any("relu")
    >>> relu.coeff(2)
    sqrt(2)/(4*sqrt(pi))
    >>> relu.centered().coeff(0)
    0
    """

    expr: sp.Expr
    center: bool = False
    label: str = ""

    @classmethod
    def from_any(cls, spec, param: str = "activation", *, center: bool = False) -> "Activation":
        """Build from a name, a formula string, a SymPy expression or an :class:`Activation`."""
        if isinstance(spec, Activation):
            return spec.centered() if center and not spec.center else spec
        e = parse(spec, param)
        return cls(e, center, str(spec))

    def centered(self) -> "Activation":
        """The centred activation :math:`\\sigma-\\mathbb E\\sigma(Z)` (``hermite.md`` §2.3)."""
        return Activation(self.expr, True, self.label)

    @property
    def name(self) -> str:
        base = self.label or str(self.expr)
        return f"centered({base})" if self.center else base

    # ---- coefficients
    def coeff_exact(self, k: int):
        """Exact :math:`c_k` as SymPy expression, or ``None`` if no closed form was found."""
        if k == 0 and self.center:
            return sp.Integer(0)
        if self.center and k % 2 == 0:
            # sigma - c_0 may be odd although sigma is not (the centred sigmoid): exact zeros
            c0 = Activation(self.expr, False).coeff_exact(0)
            if c0 is not None and is_odd(sp.simplify(self.expr - c0)):
                return sp.Integer(0)
        v, _ = _moment_exact(self.expr, k)
        return None if v is None else _tidy(v / math.factorial(k))

    def coeff(self, k: int, dps: int | None = None):
        """:math:`c_k=\\mathbb E[\\sigma\\mathrm{He}_k]/k!`: exact if ``dps is None`` and found, else mpf."""
        if k < 0:
            raise InvalidParameterError("k", k, "an integer >= 0")
        e = self.coeff_exact(k)
        if e is not None and dps is None:
            return e
        return self.coeffs_mp(k, dps or 15)[k]

    def coeffs_mp(self, kmax: int, dps: int) -> tuple:
        """:math:`(c_0,\\dots,c_K)` as mpf at ``dps`` digits (numeric only where no closed form)."""
        return _coeffs_mp(self, kmax, dps)

    def is_zero_coeff(self, k: int) -> bool:
        """True only if :math:`c_k=0` is proven exactly (parity or closed form)."""
        e = self.coeff_exact(k)
        return e is not None and bool(e == 0)

    def mean(self, dps: int | None = None):
        """:math:`c_0=\\mathbb E\\sigma(Z)` of this (possibly centred) function."""
        return self.coeff(0, dps)

    def raw_mean(self, dps: int | None = None):
        """:math:`\\mathbb E\\sigma(Z)` of the un-centred expression."""
        return Activation(self.expr, False).coeff(0, dps)

    def second_moment(self, dps: int | None = None):
        """:math:`\\mathbb E\\sigma(Z)^2` of this (possibly centred) function."""
        return _second_moment(self, dps)

    def c_gt1(self, dps: int | None = None):
        r""":math:`c_{>1}=\sqrt{\mathbb E\sigma^2-c_0^2-c_1^2}` from the second moment (``hermite.md`` §2.4)."""
        return _c_rest(self, 1, dps)

    def c_star(self, dps: int | None = None):
        r""":math:`c_\star=\sqrt{\mathbb E\sigma^2-c_0^2}` (``hermite.md`` §2.4)."""
        return _c_rest(self, 0, dps)

    def derivative(self) -> "Activation":
        """:math:`\\sigma'` as an :class:`Activation` (must be square integrable)."""
        d = sp.diff(self.expr, x)
        if d.has(sp.DiracDelta):
            raise HypothesisError("activation", self.name, "a function with a square-integrable derivative",
                                  "it jumps, so its derivative contains a Dirac delta")
        try:
            return Activation.from_any(d, "derivative")
        except ExpressionError as exc:
            raise HypothesisError("activation", self.name, "a function with a square-integrable derivative",
                                  exc.reason) from None

    def deriv_second_moment(self, dps: int | None = None):
        r""":math:`\mathbb E[\sigma'(Z)^2]` (needed for :math:`\check\mu_1^2`, srf-theory.md (12))."""
        return self.derivative().second_moment(dps)

    # ---- float64 callables
    def numpy(self):
        """Vectorised float64 callable of the (centred, if requested) function."""
        return _numpy_fn(self)

    def numpy_derivative(self):
        """Vectorised float64 callable of :math:`\\sigma'` (a.e.)."""
        return _numpy_fn(Activation(sp.diff(self.expr, x).replace(sp.DiracDelta, lambda *a: 0), False))

    def offset_float(self) -> float:
        """The float64 value subtracted by centring (0 when not centred)."""
        if not self.center:
            return 0.0
        return float(Activation(self.expr, False).coeff(0, 20))

    def coeffs(self, kmax: int, dps: int = 15) -> HermiteCoefficients:
        """All of ``hermite.md`` §2 at once: see :func:`he_coeffs`."""
        return he_coeffs(self, kmax, dps)


@functools.lru_cache(maxsize=2048)
def _coeffs_mp(act: Activation, kmax: int, dps: int) -> tuple:
    missing = []
    exact = []
    for k in range(kmax + 1):
        e = act.coeff_exact(k)
        exact.append(e)
        if e is None:
            missing.append(k)
    num = dict(zip(missing, _moments_numeric(act.expr, tuple(missing), dps))) if missing else {}
    out = []
    with precision(dps):
        for k in range(kmax + 1):
            out.append(to_mpf(exact[k], dps) if exact[k] is not None else num[k] / math.factorial(k))
    return tuple(out)


@functools.lru_cache(maxsize=2048)
def _second_moment_exact(act: Activation):
    try:
        total = sp.Integer(0)
        for a, b, g in pieces(act.expr):
            total += expect_piece_exact(sp.expand(g**2), a, b)
    except NotExact:
        from .gauss import expect_exact

        try:
            total = expect_exact(sp.expand(act.expr**2))
        except NotExact:
            return None
    total = _tidy(total)
    if act.center:
        c0 = act.raw_mean()
        if not isinstance(c0, sp.Basic):
            return None
        total = _tidy(total - c0**2)
    return total


def _second_moment(act: Activation, dps):
    ex = _second_moment_exact(act)
    if ex is not None and dps is None:
        return ex
    dps = dps or 15
    with precision(dps):
        if ex is not None:
            return to_mpf(ex, dps)
        bundle = _numeric_bundle(act.expr, 1, dps)
        raw = bundle[-1]
        if act.center:
            mean = act.raw_mean(None)
            raw -= (to_mpf(mean, dps) if isinstance(mean, sp.Basic) else bundle[0]) ** 2
        return +raw


@functools.lru_cache(maxsize=2048)
def _c_rest_exact(act: Activation, upto: int):
    """Exact sqrt(E s^2 - sum_{k<=upto} k! c_k^2), or None."""
    m2 = _second_moment_exact(act)
    cs = [act.coeff_exact(k) for k in range(upto + 1)]
    if m2 is None or any(c is None for c in cs):
        return None
    return _tidy(sp.sqrt(_tidy(m2 - sum(math.factorial(k) * c**2 for k, c in enumerate(cs)))))


def _c_rest(act: Activation, upto: int, dps):
    """sqrt(E s^2 - sum_{k<=upto} k! c_k^2), exact when every piece is exact."""
    val = _c_rest_exact(act, upto)
    if val is not None:
        if dps is None:
            return val
        with precision(dps):
            return to_mpf(val, dps)
    # Cancellation (hermite.md §2.4): the moments carry GUARD_DIGITS extra digits of
    # working precision and quadrature is converged to 10**-(dps+4).
    d = dps or 15
    with precision(d):
        m2v = act.second_moment(d)
        cv = act.coeffs_mp(upto, d)
        rest = m2v - sum(math.factorial(k) * cv[k] ** 2 for k in range(upto + 1))
        if rest < 0:
            if rest > -mpmath.mpf(10) ** (-(d - 2)) * (1 + m2v):
                rest = mpmath.mpf(0)
            else:
                raise ArithmeticError(f"negative remainder {rest} for {act.name}")
        return mpmath.sqrt(rest)


@functools.lru_cache(maxsize=512)
def _numpy_fn(act: Activation):
    import scipy.special  # noqa: F401  (lambdify uses it for erf)

    fn = sp.lambdify(x, act.expr, modules=["numpy", "scipy"])
    off = act.offset_float()
    const = not act.expr.has(x)

    def f(t):
        t = np.asarray(t, dtype=float)
        v = fn(t)
        if const or np.ndim(v) == 0:
            v = np.full_like(t, float(v))
        return v - off if off else v

    return f


def he_coeffs(f, kmax: int, dps: int = 15, *, center: bool = False, param: str = "expression") -> HermiteCoefficients:
    r"""Hermite coefficients :math:`c_0..c_K` and moments of an expression.

    Parameters
    ----------
    f : str, sympy.Expr or Activation
        The function (``"tanh"``, ``"Max(x,0)"``, …).
    kmax : int
        Largest degree ``K >= 0``.
    dps : int
        Decimal digits of the numeric values (closed forms are also returned exactly).
    center : bool
        Expand :math:`\sigma-c_0` instead.

    Returns
    -------
    HermiteCoefficients
        Values, exact forms, methods, :math:`\mathbb E\sigma`, :math:`\mathbb E\sigma^2`,
        :math:`c_{>1}`, :math:`c_\star`, breakpoints and the Parseval partial sum
        :math:`\sum_{k\le K}k!c_k^2` (``hermite.md`` §2.1) as a diagnostic.

    Examples
    --------
    >>> r = he_coeffs("Max(x,0)", 4)
    >>> r.exact[2], r.exact[3]
    (sqrt(2)/(4*sqrt(pi)), 0)
    >>> print(mpmath.nstr(he_coeffs("tanh", 1, 30).values[1], 30))
    0.605705509602158825583540227556
    """
    if not isinstance(kmax, (int, np.integer)) or isinstance(kmax, bool) or kmax < 0 or kmax > 200:
        raise InvalidParameterError("kmax", kmax, "an integer in [0, 200]")
    dps = check_dps(dps, MAX_DPS, optional=False)
    act = Activation.from_any(f, param, center=center)
    values = act.coeffs_mp(int(kmax), int(dps))
    exact = [act.coeff_exact(k) for k in range(kmax + 1)]
    methods = []
    for k in range(kmax + 1):
        if k == 0 and act.center:
            methods.append("centered")
        elif exact[k] is not None:
            methods.append(_moment_exact(act.expr, k)[1])
        else:
            methods.append("tanh-sinh quadrature")
    with precision(dps):
        parseval = mpmath.fsum(math.factorial(k) * values[k] ** 2 for k in range(kmax + 1))
    m2_exact = act.second_moment(None)
    return HermiteCoefficients(
        expression=act.name,
        kmax=int(kmax),
        dps=int(dps),
        values=list(values),
        exact=exact,
        methods=methods,
        mean={"value": act.mean(dps), "exact": _str_or_none(act.coeff_exact(0))},
        second_moment={"value": act.second_moment(dps), "exact": _str_or_none(m2_exact)},
        c_gt1={"value": act.c_gt1(dps), "exact": _str_or_none(_c_rest_exact(act, 1))},
        c_star={"value": act.c_star(dps), "exact": _str_or_none(_c_rest_exact(act, 0))},
        centered=act.center,
        breakpoints=[str(b) for b in breakpoints(act.expr)],
        parseval_partial=parseval,
        provenance=provenance(dps=int(dps), method="exact Gaussian integrals; tanh-sinh split at kinks",
                              references=["hermite.md §2", "hermite.md §5"], guard_digits=GUARD_DIGITS),
    )


def _str_or_none(v):
    return None if v is None or not isinstance(v, sp.Basic) else str(v)
