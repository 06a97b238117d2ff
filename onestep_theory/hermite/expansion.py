r"""The Hermite expansion of an activation as a result: :func:`expansion` returns :math:`c_0..c_K` (exact closed
forms where found), the Gaussian moments, and an error estimate for every number (docs/theory/hermite.md §2, §5;
docs/theory/numerics.md §1).

This is the one home of the coefficients' result.  It takes an activation that is already built (any object with
the methods of :class:`~onestep_theory.hermite.activation.Activation` it reads) and imports nothing from
``activation``: the activation's :meth:`~onestep_theory.hermite.activation.Activation.coeffs` calls it, and so does
:func:`~onestep_theory.hermite.coefficients.he_coeffs`, which parses the user's expression first.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import sympy as sp

from ..core.errors import ConvergenceError, InvalidParameterError
from ..core.exact import check_dps
from ..core.limits import MAX_DPS
from ..core.precision import asked_digits, boundary_digits, precision, refined, tolerance, working_digits
from ..core.results import Result, digits_of, provenance, vouch
from .expressions import breakpoints
from .moments import moment_exact

__all__ = ["HermiteCoefficients", "check_kmax", "expansion"]


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
        return text, err, min(self.dps, digits_of(v, err)) if v != 0 and e != 0 else self.dps   # exact, any exponent

    def __repr__(self) -> str:
        """Every coefficient and moment as ``value ± error`` (:meth:`printed`, docs/theory/numerics.md §1)."""
        vals = ", ".join("%s ± %s" % self.printed("values", k)[:2] for k in range(len(self.values)))
        moms = ", ".join(f"{key}=" + "%s ± %s" % self.printed(key)[:2]
                         for key in ("mean", "second_moment", "c_gt1", "c_star"))
        return (f"HermiteCoefficients(expression={self.expression!r}, kmax={self.kmax}, dps={self.dps}, "
                f"values=[{vals}], {moms}, centered={self.centered}, methods={self.methods!r})")

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(repr(self))

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




def check_kmax(kmax) -> int:
    """The largest degree ``K``: an integer in [0, 200], else :class:`InvalidParameterError` naming ``kmax``."""
    if not isinstance(kmax, (int, np.integer)) or isinstance(kmax, bool) or kmax < 0 or kmax > 200:
        raise InvalidParameterError("kmax", kmax, "an integer in [0, 200]")
    return int(kmax)


def expansion(act, kmax: int, dps: int = 15) -> HermiteCoefficients:
    r"""Hermite coefficients :math:`c_0..c_K` and moments of a built activation (docs/theory/hermite.md §2).

    Parameters
    ----------
    act : Activation
        The activation (:meth:`~onestep_theory.hermite.activation.Activation.from_any` builds one from a string).
    kmax : int
        Largest degree ``K >= 0``.
    dps : int
        Decimal digits of the numeric values (closed forms are also returned exactly).

    Returns
    -------
    HermiteCoefficients
        As :func:`~onestep_theory.hermite.coefficients.he_coeffs`.

    Examples
    --------
    >>> from onestep_theory.hermite.activation import Activation
    >>> expansion(Activation.from_any("x**3"), 3).exact
    [0, 3, 0, 1]
    """
    kmax = check_kmax(kmax)
    dps = check_dps(dps, MAX_DPS, optional=False)
    exact = [act.coeff_exact(k) for k in range(kmax + 1)]
    methods = []
    for k in range(kmax + 1):
        if k == 0 and act.center:
            methods.append("centered")
        elif exact[k] is not None:
            methods.append(moment_exact(act.expr, k)[1])
        else:
            methods.append("tanh-sinh quadrature")
    with precision(dps):                             # the boundary: dps = the digits asked, set once
        values = act.coeffs_mp(kmax)
        parseval = mpmath.fsum(math.factorial(k) * values[k] ** 2 for k in range(kmax + 1))
        errors = _coeff_errors(act, kmax, values, exact)
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
        c_gt1={"value": act.c_gt1(dps), "exact": _str_or_none(_exact_or_none(act.c_gt1(None)))},
        c_star={"value": act.c_star(dps), "exact": _str_or_none(_exact_or_none(act.c_star(None)))},
        centered=act.center,
        breakpoints=[str(b) for b in breakpoints(act.expr)],
        parseval_partial=parseval,
        provenance=provenance(dps=int(dps), method="exact Gaussian integrals; tanh-sinh split at kinks; error "
                              "of a quadrature value from a second evaluation at dps + 10 digits",
                              references=["docs/theory/hermite.md §2", "docs/theory/hermite.md §5"],
                              working_dps=boundary_digits(dps)),    # the working precision: dps + guard digits
        errors=errors,
    )


def _coeff_errors(act, kmax: int, values, exact) -> dict:
    """Absolute error estimates of :func:`expansion` (at the ambient precision of its boundary, ``D`` digits
    asked): 0 for closed forms (their printed error is the rounding alone), otherwise the change when
    everything is recomputed at 10 more digits (other quadrature tolerances and working precision) plus the
    rounding at the working precision; a value whose ``D`` digits are not reached raises
    :class:`~onestep_theory.core.errors.ConvergenceError`."""
    dps = asked_digits()
    floor = mpmath.mpf(10) ** -working_digits()    # the rounding at the working precision
    moments = {"mean": (act.mean, act.coeff_exact(0)), "second_moment": (act.second_moment, act.second_moment(None)),
               "c_gt1": (act.c_gt1, _exact_or_none(act.c_gt1(None))), "c_star": (act.c_star, _exact_or_none(act.c_star(None)))}
    lo = {key: fn(dps) for key, (fn, _) in moments.items()}
    with refined(why="error estimate: the same values at 10 more digits"):
        hi = act.coeffs_mp(kmax) if any(e is None for e in exact) else values
        hi_m = {key: fn(asked_digits()) for key, (fn, _) in moments.items()}

        def err(lo_v, hi_v, is_exact):
            if is_exact:
                return 0.0
            return float(abs(lo_v - hi_v) + floor * max(1, abs(lo_v)))

        out = {"values": [err(values[k], hi[k], exact[k] is not None) for k in range(kmax + 1)]}
        for key, (_, ex) in moments.items():
            out[key] = err(lo[key], hi_m[key], isinstance(ex, sp.Basic) and ex.is_number)
    # not reached: a relative error above 10^-D, unless it is below 10^-(D+2) absolutely (a coefficient near 0)
    near0 = tolerance(2, float, why="a coefficient near 0: 2 digits past those asked, absolutely")
    worst = [(k, e, values[k]) for k, e in enumerate(out["values"]) if e > 10.0 ** -dps * abs(float(values[k]))
             and float(values[k]) != 0 and e > near0]
    if worst:
        k, e, v = worst[0]
        raise ConvergenceError(f"Hermite coefficient c_{k}: {dps} digits requested, only {digits_of(v, e)} reached "
                               f"(estimated error {e:.1e})", 0, e)
    return out


def _str_or_none(v):
    return None if v is None or not isinstance(v, sp.Basic) else str(v)


def _exact_or_none(v):
    """A closed form (SymPy) as it is; a numeric value (no closed form found) as None."""
    return v if isinstance(v, sp.Basic) else None
