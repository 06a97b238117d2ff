r"""Activations and teachers: an expression with the Hermite moments the theory needs.

The :class:`Activation` bundles an expression with :math:`c_k`, :math:`c_\star`, :math:`c_{>1}`,
:math:`\mathbb E\sigma'^2` and fast float64 callables for the simulator.

References
----------
docs/theory/hermite.md §2 (coefficients), §4 (closed forms), §5 (numerics), §6 (reference constants).
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import sympy as sp

from ..core.caches import cached, cached_at_precision, disk_cached
from ..core.errors import ExpressionError, HypothesisError, InvalidParameterError, QuadratureError
from ..core.exact import to_exact, to_mpf
from ..core.precision import precision, tolerance
from .expansion import expansion
from .expressions import is_odd, pieces, x
from .parsing import parse
from .gauss import NotExact, expect_piece_exact, tidy
from .moments import RECURSION, moment_exact, moments_numeric, numeric_bundle

__all__ = ["Activation", "numeric_coeffs", "numeric_second_moment", "numeric_c_rest"]


# --------------------------------------------------------------------------- Activation
@dataclasses.dataclass(frozen=True)
class Activation:
    r"""An activation or teacher :math:`\sigma` with its Gaussian moments.

    Parameters
    ----------
    expr : sympy.Expr
        Expression in :data:`~onestep_theory.expressions.x` (use :meth:`from_any`).
    center : bool
        Work with :math:`\sigma-c_0` (docs/theory/hermite.md §2.3).  Never applied silently.
    label : str
        Display name (the user's spelling).

    Every moment is cached by (expression, k, working precision): the cache key is the expression
    itself, never a name.  The methods taking ``dps`` are boundaries (``dps`` = digits asked, the working
    precision set once, docs/theory/numerics.md §2); below a boundary, :func:`numeric_coeffs`,
    :func:`numeric_second_moment` and :func:`numeric_c_rest` compute at the ambient precision.

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
    label: str = dataclasses.field(default="", compare=False)

    @classmethod
    def from_any(cls, spec, param: str = "activation", *, center: bool = False) -> "Activation":
        """Build from a name, a formula string, a SymPy expression or an :class:`Activation`."""
        if isinstance(spec, Activation):
            return spec.centered() if center and not spec.center else spec
        e = parse(spec, param)
        return cls(e, center, str(spec))

    def centered(self) -> "Activation":
        """The centred activation :math:`\\sigma-\\mathbb E\\sigma(Z)` (docs/theory/hermite.md §2.3)."""
        return Activation(self.expr, True, self.label)

    @property
    def name(self) -> str:
        base = self.label or str(self.expr)
        return f"centered({base})" if self.center else base

    # ---- coefficients
    def coeff_exact(self, k: int):
        """Exact :math:`c_k` as SymPy expression, or ``None`` if no closed form was found."""
        return _coeff_exact(self.expr, self.center, int(k))

    def coeff(self, k: int, dps: int | None = None):
        """:math:`c_k=\\mathbb E[\\sigma\\mathrm{He}_k]/k!`: exact if ``dps is None`` and found, else mpf."""
        if k < 0:
            raise InvalidParameterError("k", k, "an integer >= 0")
        e = self.coeff_exact(k)
        if e is not None and dps is None:
            return e
        with precision(dps or 15):
            return numeric_coeffs(self, k)[k]

    def coeffs_mp(self, kmax: int, dps: int | None = None) -> tuple:
        """:math:`(c_0,\\dots,c_K)` as mpf at ``dps`` digits (numeric only where no closed form); at the ambient
        precision when ``dps`` is None (:func:`numeric_coeffs`)."""
        if dps is None:
            return numeric_coeffs(self, kmax)
        with precision(dps):
            return numeric_coeffs(self, kmax)

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
        """:math:`\\mathbb E\\sigma(Z)^2` of this (possibly centred) function: exact if ``dps is None`` and found."""
        ex = _second_moment_exact(self)
        if ex is not None and dps is None:
            return ex
        with precision(dps or 15):
            return numeric_second_moment(self)

    def c_gt1(self, dps: int | None = None):
        r""":math:`c_{>1}=\sqrt{\mathbb E\sigma^2-c_0^2-c_1^2}` from the second moment (docs/theory/hermite.md §2.4)."""
        val = _c_rest_exact(self, 1)
        if val is not None and dps is None:
            return val
        with precision(dps or 15):
            return numeric_c_rest(self, 1)

    def c_star(self, dps: int | None = None):
        r""":math:`c_\star=\sqrt{\mathbb E\sigma^2-c_0^2}` (docs/theory/hermite.md §2.4)."""
        val = _c_rest_exact(self, 0)
        if val is not None and dps is None:
            return val
        with precision(dps or 15):
            return numeric_c_rest(self, 0)

    def shifted(self, b) -> "Activation":
        r""":math:`\sigma(x+b)` for an exact ``b`` (a common first-layer bias, docs/theory/srf-theory.md §4.9)."""
        be = to_exact(b, "bias")
        if be == 0:
            return self
        act = Activation.from_any(sp.expand_func(self.expr.subs(x, x + be)), "activation")
        return Activation(act.expr, self.center, f"{self.name}(x + {be})")

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
        r""":math:`\mathbb E[\sigma'(Z)^2]` (needed for :math:`\check\mu_1^2`, docs/theory/srf-theory.md (12))."""
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

    def coeffs(self, kmax: int, dps: int = 15):
        """All of docs/theory/hermite.md §2 at once, with errors: see
        :func:`~onestep_theory.hermite.expansion.expansion` (the result's home, which needs no ``Activation``)."""
        return expansion(self, kmax, dps)


@cached_at_precision(maxsize=2048)
def numeric_coeffs(act: Activation, kmax: int) -> tuple:
    """:math:`(c_0,\\dots,c_K)` as mpf at the ambient precision: closed forms evaluated, the others by one
    quadrature pass converged to the digits asked (docs/theory/hermite.md §5.4); cached per working precision."""
    missing = []
    exact = []
    for k in range(kmax + 1):
        e = act.coeff_exact(k)
        exact.append(e)
        if e is None:
            missing.append(k)
    num = dict(zip(missing, moments_numeric(act.expr, tuple(missing)))) if missing else {}
    return tuple(to_mpf(exact[k]) if exact[k] is not None else num[k] / math.factorial(k) for k in range(kmax + 1))


@cached(maxsize=2048)
@disk_cached("coeff_exact")
def _coeff_exact(expr: sp.Expr, center: bool, k: int):
    """Exact :math:`c_k` of ``expr`` (centred or not), or None (:meth:`Activation.coeff_exact`)."""
    if k == 0 and center:
        return sp.Integer(0)
    if center and k % 2 == 0:
        # sigma - c_0 may be odd although sigma is not (the centred sigmoid): exact zeros
        c0 = _coeff_exact(expr, False, 0)
        if c0 is not None and is_odd(sp.simplify(expr - c0)):
            return sp.Integer(0)
    v, how = moment_exact(expr, k)
    if v is None:
        return None
    return sp.expand(v / math.factorial(k)) if how == RECURSION else tidy(v / math.factorial(k))


def _second_moment_exact(act: Activation):
    return _second_moment_expr(act.expr, act.center)


@cached(maxsize=2048)
@disk_cached("second_moment_exact")
def _second_moment_expr(expr: sp.Expr, center: bool):
    """Exact E sigma(Z)^2 of ``expr`` (centred or not), or None."""
    act = Activation(expr, center)
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
    total = tidy(total)
    if act.center:
        c0 = act.raw_mean()
        if not isinstance(c0, sp.Basic):
            return None
        total = tidy(total - c0**2)
    return total


def numeric_second_moment(act: Activation):
    """:math:`\\mathbb E\\sigma(Z)^2` as mpf at the ambient precision (the closed form evaluated if found)."""
    ex = _second_moment_exact(act)
    if ex is not None:
        return to_mpf(ex)
    bundle = numeric_bundle(act.expr, 1)
    raw = bundle[-1]
    if act.center:
        mean = act.raw_mean(None)
        raw -= (to_mpf(mean) if isinstance(mean, sp.Basic) else bundle[0]) ** 2
    return +raw


def _c_rest_exact(act: Activation, upto: int):
    """Exact sqrt(E s^2 - sum_{k<=upto} k! c_k^2), or None."""
    return _c_rest_expr(act.expr, act.center, int(upto))


@cached(maxsize=2048)
@disk_cached("c_rest_exact")
def _c_rest_expr(expr: sp.Expr, center: bool, upto: int):
    act = Activation(expr, center)
    m2 = _second_moment_exact(act)
    cs = [act.coeff_exact(k) for k in range(upto + 1)]
    if m2 is None or any(c is None for c in cs):
        return None
    return tidy(sp.sqrt(tidy(m2 - sum(math.factorial(k) * c**2 for k, c in enumerate(cs)))))


def numeric_c_rest(act: Activation, upto: int):
    """:math:`\\sqrt{\\mathbb E\\sigma^2-\\sum_{k\\le K}k!c_k^2}` as mpf at the ambient precision (docs/theory/hermite.md §2.4)."""
    val = _c_rest_exact(act, upto)
    if val is not None:
        return to_mpf(val)
    # Cancellation (docs/theory/hermite.md §2.4): the moments carry the guard digits of the working
    # precision and quadrature is converged to 10**-(D+4), D the digits asked.
    m2v = numeric_second_moment(act)
    cv = numeric_coeffs(act, upto)
    rest = m2v - sum(math.factorial(k) * cv[k] ** 2 for k in range(upto + 1))
    if rest < 0:
        if rest > -tolerance(-2, why="round-off: within 100 units of the last digit asked") * (1 + m2v):
            rest = mpmath.mpf(0)
        else:
            raise QuadratureError(f"c_>1: the numeric second moment of {act.name} is smaller than the sum of "
                                  f"its squared coefficients (remainder {mpmath.nstr(rest, 3)}); quadrature lost "
                                  "accuracy")
    return mpmath.sqrt(rest)


@cached(maxsize=512)
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
