r"""The two sides that ``check`` compares, proved and evaluated (docs/theory/checking.md §4, §7.5).

The *quantity side* is the package's value: one quantity by its numeric path (``delta_2``, ``test_error``), or a
left-hand side written as an expression of quantities and formula names (``\gamma^2``, ``\Delta_2-\Delta_1``),
whose quantities are evaluated by their numeric paths and combined with the propagated error of
:func:`~onestep_theory.quantities.registry.formula_value`.  The *formula side* is the formula of the paper.

:func:`plan` decides which parameters the comparison depends on — those of every quantity involved and every
parameter either side names (``\beta`` in a ``dandi24`` formula for ``r``) — so that every one of them is sampled or
fixed; :func:`sides` evaluates both at a point; :func:`proof` simplifies their difference where the package has closed
forms, and :func:`ratio` says what the formula is when it is the quantity times a monomial.
"""

from __future__ import annotations

import dataclasses

import mpmath
import sympy as sp

from ..core.errors import InvalidParameterError
from ..core.precision import precision, refined, working_digits
from .registry import (QUANTITIES, SRF_SYMBOLS, closed_form, evaluate, formula_names, formula_value, quantity_of,
                       symbols_of)

__all__ = ["PARAMS", "Plan", "plan", "sides", "proof", "ratio", "quantity_symbols", "check_params", "expansion_size",
           "MAX_EXPANSION", "TooLarge"]

#: Every parameter a quantity or a formula may depend on (docs/theory/checking.md §1).
PARAMS = ("phi", "psi", "lam", "noise", "alpha", "beta", "alpha0", "eta")
_SIMPLIFY_OPS = 4000


def quantity_symbols(family: str) -> dict:
    """Quantity name -> its symbol on a left-hand side: the formula name's own symbol where the quantity is one
    (``m1``, ``r``), else a plain symbol named by the quantity (``delta_2``)."""
    syms = symbols_of(family)
    return {n: syms.get(n, sp.Symbol(n)) for n, q in QUANTITIES.items() if q.family == family}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one comparison evaluates: the ``main`` quantity (whose evaluation gives the formula names' values), the
    ``others`` of a left-hand side, the ``params`` (ordered as :data:`PARAMS`), the left-hand side ``lhs`` (None:
    the quantity ``main`` itself) and the formula ``rhs`` (package symbols)."""

    family: str
    main: str
    others: tuple
    params: tuple
    lhs: object
    rhs: object


def plan(family: str, main: str, lhs, rhs) -> Plan:
    """The :class:`Plan` of comparing ``rhs`` with ``lhs`` (None: the quantity ``main``)."""
    syms = symbols_of(family)
    qs = quantity_symbols(family)
    free = set(rhs.free_symbols) | (set(lhs.free_symbols) if lhs is not None else set())
    others = tuple(sorted(n for n, s in qs.items() if s in free and s not in syms.values() and n != main))
    need = set(quantity_of(main).params) | {p for o in others for p in quantity_of(o).params}
    need |= {p for p in PARAMS if p in syms and syms[p] in free}
    return Plan(family, main, others, tuple(p for p in PARAMS if p in need), lhs, rhs)


def _restrict(point, name):
    return {k: v for k, v in point.items() if k in quantity_of(name).params}


def sides(p: Plan, point: dict, student, teacher, dps: int, state=None):
    """``(value, error, vals, errs, state)`` at ``point``: the quantity side (the quantity ``p.main``, or the
    left-hand side evaluated from the quantities' numeric values) with its error, and every symbol's value and error
    for the formula side.  ``value`` is None where a left-hand side is undefined there."""
    from ..core.exact import to_exact

    ev = evaluate(p.main, _restrict(point, p.main), student, teacher, dps=dps, state=state)
    vals, errs = dict(ev.values), dict(ev.errors)
    syms = symbols_of(p.family)
    qs = quantity_symbols(p.family)
    with precision(dps), refined(10, why="the formula's values 10 digits beyond those asked, as the registry's"):
        for k in p.params:
            if syms.get(k) is not None and syms[k] not in vals and k in point:
                x = to_exact(point[k], k)
                # k: SymPy's evaluation at 15 digits beyond those asked (5 below the working ones), rounded once
                vals[syms[k]] = mpmath.mpf(x.p) / x.q if x.is_Rational else mpmath.mpf(sp.N(x, working_digits() - 5))
                errs[syms[k]] = 0.0                           # an exact decimal, converted 10 digits beyond
    vals[qs[p.main]], errs[qs[p.main]] = ev.value, ev.error
    for o in p.others:
        e = evaluate(o, _restrict(point, o), student, teacher, dps=dps)
        vals[qs[o]], errs[qs[o]] = e.value, e.error
    if p.lhs is None:
        return ev.value, ev.error, vals, errs, ev.state
    lv = formula_value(p.lhs, vals, errs, dps)
    return (lv[0], lv[1], vals, errs, ev.state) if lv is not None else (None, 0.0, vals, errs, ev.state)


#: Most terms the expansion of a difference may have before the simplifier is tried (``cancel`` expands: a
#: tenth power of a ten-term sum has 92 378 terms and took minutes).
MAX_EXPANSION = 20000


def expansion_size(expr) -> int:
    """An upper estimate of the number of terms of ``expr`` expanded (sums add, products multiply, an integer power
    n of a k-term sum has C(k+n-1, n)); large inputs are estimated, never expanded."""
    from math import comb

    if expr.is_Atom:
        return 1
    if expr.is_Add:
        return sum(expansion_size(a) for a in expr.args)
    if expr.is_Mul:
        out = 1
        for a in expr.args:
            out = min(out * expansion_size(a), 10 ** 12)
        return out
    if expr.is_Pow:
        b, e = expr.args
        k = expansion_size(b)
        if e.is_Integer:
            return min(comb(k + abs(int(e)) - 1, abs(int(e))), 10 ** 12) if k > 1 else 1
        return k
    return max([expansion_size(a) for a in expr.args] + [1])


class TooLarge(Exception):
    """A difference whose expansion would exceed :data:`MAX_EXPANSION` terms."""


def _is_zero(expr) -> bool:
    if expr == 0:
        return True
    if expansion_size(sp.together(expr)) > MAX_EXPANSION:
        raise TooLarge
    e = sp.cancel(sp.together(expr))
    if e == 0:
        return True
    return sp.count_ops(e) <= _SIMPLIFY_OPS and sp.simplify(e) == 0


def _closed(p: Plan):
    """The quantity side in closed form (package symbols), or None where a quantity has none."""
    qs = quantity_symbols(p.family)
    if p.lhs is None:
        return closed_form(p.main)
    subs = {}
    for n, s in qs.items():
        if s in p.lhs.free_symbols and s not in symbols_of(p.family).values():
            cf = closed_form(n)
            if cf is None:
                return None
            subs[s] = cf
    return p.lhs.xreplace(subs)


def _srf_closed(expr, family):
    if family != "srf":                 # r, c, gamma in a formula: Result 3.1 (docs/theory/srf-theory.md §2)
        return expr
    return expr.subs({SRF_SYMBOLS[k]: closed_form(k) for k in ("r", "c", "gamma")})


def _tied(family) -> set:
    """Symbols that are not free in a check: the activations' constants (fixed by the student and the teacher) and
    the resolvent's traces (tied to (φ, ψ, λ) by its equations, docs/theory/spike-theory.md §6.1).  A difference that
    is not 0 as a function of them may still vanish here."""
    syms = symbols_of(family)
    names = ["mu1", "mu1c2", "mu1s", "mu2s"] if family == "srf" else \
        ["m1", "m2", "dm1", "dm2", "c_gt1", "c_star2"] + [f"c{k}" for k in range(9)] + [f"cs{k}" for k in range(9)]
    return {syms[n] for n in names if n in syms}


def proof(p: Plan, exact: dict, fixed: dict | None = None) -> dict:
    """The symbolic verdict on ``p.rhs - (quantity side)``: ``identical``, ``identical for this teacher`` (once the
    activations' exact constants and the fixed parameters ``fixed`` (symbol -> exact value) are in), ``differs
    symbolically`` (a non-zero function of the sampled parameters alone), ``not decided symbolically`` (non-zero
    as a function of symbols that are tied here — the traces, the activations' constants — or too large to
    simplify: the points decide), or ``no closed form``; the factored difference, and the ratio when a monomial."""
    out = {"latex": sp.latex(p.rhs)}
    cf = _closed(p)
    if cf is None:
        return dict(out, status="no closed form", detail="the package computes this quantity only numerically")
    rhs, cf = _srf_closed(p.rhs, p.family), _srf_closed(cf, p.family)
    diff = rhs - cf
    try:
        if _is_zero(diff):
            return dict(out, status="identical", detail="the difference to the package's closed form simplifies to "
                                                        "0 for every teacher")
        r = ratio(rhs, cf)                     # the factor for every teacher first (a typo c^4 -> c^2: 1/cs1**2)
        subs = {**(exact or {}), **(fixed or {})}
        if subs:
            d2 = diff.subs(subs)
            if _is_zero(d2):
                what = " and the fixed parameters" if fixed else ""
                return dict(out, status="identical for this teacher", detail="the difference simplifies to 0 once "
                            f"the activations' exact constants{what} are in")
            diff, rhs, cf = d2, rhs.subs(subs), cf.subs(subs)
            r = r if r is not None else ratio(rhs, cf)
    except TooLarge:
        return dict(out, status="not decided symbolically", detail=f"the difference would expand to more than "
                    f"{MAX_EXPANSION} terms: not simplified; the points decide")
    names = formula_names(p.family)
    small = sp.count_ops(diff) <= _SIMPLIFY_OPS and expansion_size(sp.together(diff)) <= MAX_EXPANSION
    shown = sp.factor(sp.cancel(sp.together(diff))) if small else diff
    text = str(shown.xreplace(names))
    tied = sorted(str(x.xreplace(names)) for x in diff.free_symbols & _tied(p.family))
    status = "not decided symbolically" if tied else "differs symbolically"
    detail = f"formula - closed form = {text if len(text) <= 400 else text[:400] + ' ...'}"
    out = dict(out, status=status, detail=detail)
    if tied:
        out["note"] = (f"not 0 as a function of {', '.join(tied)}, which are not free here (the activations' "
                       "constants, the traces tied by the resolvent equations): the points decide")
    if r is not None:
        out["ratio"] = str(r.xreplace(names))
        out["ratio_latex"] = sp.latex(r)
    return out


def ratio(formula, closed):
    """``formula / closed`` when it is a constant or a monomial (a product of powers of symbols: a typo such as
    :math:`c^4\\to c^2` shows as ``1/cs1**2``), else None."""
    if sp.count_ops(formula) + sp.count_ops(closed) > _SIMPLIFY_OPS or closed == 0 or \
            expansion_size(sp.together(formula / closed)) > MAX_EXPANSION:
        return None
    r = sp.factor(sp.cancel(sp.together(formula / closed)))
    if r == 1 or r.has(sp.zoo, sp.nan):
        return None
    factors = sp.Mul.make_args(r)
    for f in factors:
        base = f.base if isinstance(f, sp.Pow) else f
        if not (f.is_Number or base.is_Symbol or (isinstance(f, sp.Pow) and base.is_Number)):
            return None
    return r


def check_params(p: Plan, fixed: dict, over: dict, against: str) -> tuple:
    """``(fixed, over)`` kept to the parameters the comparison depends on: a name that is no parameter at all is
    refused (one line naming it); a parameter neither side depends on is dropped with a warning naming it (a
    ``--beta`` given to convert ``--eta`` of ``dandi24``, for a formula in which β cancels)."""
    import warnings

    for k, v in list(fixed.items()) + [(k, None) for k in over]:
        if k not in PARAMS:
            raise InvalidParameterError(k if v is not None else "over", v if v is not None else k,
                                        f"a parameter of {against} or of the formula: {', '.join(p.params)}")
        if k not in p.params:
            warnings.warn(f"{k} {'fixed' if v is not None else 'sampled'}, but neither {against} nor the formula "
                          f"depends on it: ignored", stacklevel=3)
    return ({k: v for k, v in fixed.items() if k in p.params}, {k: v for k, v in over.items() if k in p.params})
