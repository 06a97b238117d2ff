r"""Activations and teachers: an expression with the Hermite moments the theory needs.

``he_coeffs`` returns :math:`c_0..c_K` (with exact closed forms where found) as a result object; the
:class:`Activation` bundles an expression with :math:`c_k`, :math:`c_\star`, :math:`c_{>1}`,
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

from ..core.caches import cached
from ..core.errors import ConvergenceError, ExpressionError, HypothesisError, InvalidParameterError, QuadratureError
from ..core.exact import GUARD_DIGITS, check_dps, to_exact, to_mpf
from ..core.precision import MAX_DPS, precision
from ..core.results import Result, digits_of, provenance, vouch
from .expressions import breakpoints, is_odd, pieces, x
from .parsing import parse
from .gauss import NotExact, expect_piece_exact, tidy
from .moments import moment_exact, moments_numeric, numeric_bundle

__all__ = ["he_coeffs", "HermiteCoefficients", "Activation"]


@dataclasses.dataclass
class HermiteCoefficients(Result):
    r"""Hermite coefficients :math:`c_0..c_K` of an expression and its Gaussian moments.

    ``values[k]`` is an ``mpf`` at ``dps`` digits; ``exact[k]`` the SymPy closed form or
    ``None``; ``methods[k]`` says how it was obtained.  Implements docs/theory/hermite.md §2.
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

    errors: dict = dataclasses.field(default_factory=dict)

    def printed(self, key, k=None) -> tuple:
        """``(value_text, error_text, digits)`` of a coefficient (``key="values"``, index ``k``) or of a moment
        (``mean``, ``second_moment``, ``c_gt1``, ``c_star``): at most ``dps`` digits, the error including the
        rounding of the printed value (docs/theory/numerics.md §1)."""
        if key == "values":
            v, e = self.values[k], self.errors["values"][k]
        else:
            v, e = getattr(self, key)["value"], self.errors[key]
        text, err = vouch(v, e, cap=self.dps)
        # a closed form (e = 0) printed correctly rounded to dps digits has dps digits
        return text, err, min(self.dps, digits_of(v, float(err))) if float(v) != 0 and e != 0 else self.dps

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.pop("values"), d.pop("exact"), d.pop("methods"), d.pop("errors", None)
        d["coefficients"] = []
        for k, (e, m) in enumerate(zip(self.exact, self.methods)):
            text, err, dg = self.printed("values", k)
            d["coefficients"].append({"k": k, "value": text, "abs_error": err, "digits": dg,
                                      "exact": (str(e) if e is not None else None), "method": m})
        for key in ("mean", "second_moment", "c_gt1", "c_star"):
            text, err, dg = self.printed(key)
            d[key] = {"value": text, "abs_error": err, "digits": dg, "exact": getattr(self, key)["exact"]}
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
        Work with :math:`\sigma-c_0` (docs/theory/hermite.md §2.3).  Never applied silently.
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
        if k == 0 and self.center:
            return sp.Integer(0)
        if self.center and k % 2 == 0:
            # sigma - c_0 may be odd although sigma is not (the centred sigmoid): exact zeros
            c0 = Activation(self.expr, False).coeff_exact(0)
            if c0 is not None and is_odd(sp.simplify(self.expr - c0)):
                return sp.Integer(0)
        v, _ = moment_exact(self.expr, k)
        return None if v is None else tidy(v / math.factorial(k))

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
        r""":math:`c_{>1}=\sqrt{\mathbb E\sigma^2-c_0^2-c_1^2}` from the second moment (docs/theory/hermite.md §2.4)."""
        return _c_rest(self, 1, dps)

    def c_star(self, dps: int | None = None):
        r""":math:`c_\star=\sqrt{\mathbb E\sigma^2-c_0^2}` (docs/theory/hermite.md §2.4)."""
        return _c_rest(self, 0, dps)

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

    def coeffs(self, kmax: int, dps: int = 15) -> HermiteCoefficients:
        """All of docs/theory/hermite.md §2 at once: see :func:`he_coeffs`."""
        return he_coeffs(self, kmax, dps)


@cached(maxsize=2048)
def _coeffs_mp(act: Activation, kmax: int, dps: int) -> tuple:
    missing = []
    exact = []
    for k in range(kmax + 1):
        e = act.coeff_exact(k)
        exact.append(e)
        if e is None:
            missing.append(k)
    num = dict(zip(missing, moments_numeric(act.expr, tuple(missing), dps))) if missing else {}
    out = []
    with precision(dps):
        for k in range(kmax + 1):
            out.append(to_mpf(exact[k], dps) if exact[k] is not None else num[k] / math.factorial(k))
    return tuple(out)


@cached(maxsize=2048)
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
    total = tidy(total)
    if act.center:
        c0 = act.raw_mean()
        if not isinstance(c0, sp.Basic):
            return None
        total = tidy(total - c0**2)
    return total


def _second_moment(act: Activation, dps):
    ex = _second_moment_exact(act)
    if ex is not None and dps is None:
        return ex
    dps = dps or 15
    with precision(dps):
        if ex is not None:
            return to_mpf(ex, dps)
        bundle = numeric_bundle(act.expr, 1, dps)
        raw = bundle[-1]
        if act.center:
            mean = act.raw_mean(None)
            raw -= (to_mpf(mean, dps) if isinstance(mean, sp.Basic) else bundle[0]) ** 2
        return +raw


@cached(maxsize=2048)
def _c_rest_exact(act: Activation, upto: int):
    """Exact sqrt(E s^2 - sum_{k<=upto} k! c_k^2), or None."""
    m2 = _second_moment_exact(act)
    cs = [act.coeff_exact(k) for k in range(upto + 1)]
    if m2 is None or any(c is None for c in cs):
        return None
    return tidy(sp.sqrt(tidy(m2 - sum(math.factorial(k) * c**2 for k, c in enumerate(cs)))))


def _c_rest(act: Activation, upto: int, dps):
    """sqrt(E s^2 - sum_{k<=upto} k! c_k^2), exact when every piece is exact."""
    val = _c_rest_exact(act, upto)
    if val is not None:
        if dps is None:
            return val
        with precision(dps):
            return to_mpf(val, dps)
    # Cancellation (docs/theory/hermite.md §2.4): the moments carry GUARD_DIGITS extra digits of
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
        :math:`\sum_{k\le K}k!c_k^2` (docs/theory/hermite.md §2.1) as a diagnostic.

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
            methods.append(moment_exact(act.expr, k)[1])
        else:
            methods.append("tanh-sinh quadrature")
    with precision(dps):
        parseval = mpmath.fsum(math.factorial(k) * values[k] ** 2 for k in range(kmax + 1))
    m2_exact = act.second_moment(None)
    errors = _coeff_errors(act, int(kmax), int(dps), values, exact)
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
        provenance=provenance(dps=int(dps), method="exact Gaussian integrals; tanh-sinh split at kinks; error "
                              "of a quadrature value from a second evaluation at dps + 10 digits",
                              references=["docs/theory/hermite.md §2", "docs/theory/hermite.md §5"], guard_digits=GUARD_DIGITS),
        errors=errors,
    )


def _coeff_errors(act: Activation, kmax: int, dps: int, values, exact) -> dict:
    """Absolute error estimates of :func:`he_coeffs`: 0 for closed forms (their printed error is the rounding
    alone), otherwise the change when everything is recomputed at ``dps`` + 10 digits (other quadrature
    tolerances and working precision) plus the rounding at the working precision; a value whose ``dps``
    digits are not reached raises :class:`~onestep_theory.core.errors.ConvergenceError`."""
    hi_dps = dps + 10
    hi = act.coeffs_mp(kmax, hi_dps) if any(e is None for e in exact) else values
    moments = {"mean": (act.mean, act.coeff_exact(0)), "second_moment": (act.second_moment, act.second_moment(None)),
               "c_gt1": (act.c_gt1, _c_rest_exact(act, 1)), "c_star": (act.c_star, _c_rest_exact(act, 0))}
    with precision(hi_dps):
        floor = mpmath.mpf(10) ** -(dps + GUARD_DIGITS)

        def err(lo, hi_v, is_exact):
            if is_exact:
                return 0.0
            return float(abs(lo - hi_v) + floor * max(1, abs(lo)))

        out = {"values": [err(values[k], hi[k], exact[k] is not None) for k in range(kmax + 1)]}
        for key, (fn, ex) in moments.items():
            out[key] = err(fn(dps), fn(hi_dps), isinstance(ex, sp.Basic) and ex.is_number)
    worst = [(k, e, values[k]) for k, e in enumerate(out["values"]) if e > 10.0 ** -dps * abs(float(values[k]))
             and float(values[k]) != 0 and e > 10.0 ** -(dps + 2)]
    if worst:
        k, e, v = worst[0]
        raise ConvergenceError(f"Hermite coefficient c_{k}: {dps} digits requested, only {digits_of(v, e)} reached "
                               f"(estimated error {e:.1e})", 0, e)
    return out


def _str_or_none(v):
    return None if v is None or not isinstance(v, sp.Basic) else str(v)
