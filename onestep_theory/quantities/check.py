r"""Checking a printed formula against a quantity of the package (docs/theory/checking.md §4).

The formula is a SymPy expression in the names of :func:`~onestep_theory.quantities.registry.symbols_of` (parsed
by the package's safe parser).  The check

1. **proves** where it can: if the package has the quantity in closed form, the difference is simplified; zero is
   a proof ("identical" for every teacher, or "identical for this teacher" once its exact Hermite coefficients are
   substituted), anything else is reported with the simplified difference;
2. **evaluates** both at ``n`` quasi-random points of the ranges at ``dps`` digits — the quantity by the
   package's *numeric* path (not the closed form), with its error estimate — and reports the largest relative gap,
   where it occurs, and how many points agree to ``dps`` digits;
3. with ``simulate``, **measures** the quantity at a few of the points (mean ± standard error) so that the data
   can decide between two disagreeing formulas.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import sympy as sp

from ..core.errors import InvalidParameterError
from ..core.precision import precision
from ..core.results import Result, digits_of, provenance, vouch
from ..core.syntax import parse_text
from .grid import parse_over, sample_points
from .registry import (SRF_SYMBOLS, closed_form, constants, evaluate, formula_names, formula_value, quantity_of,
                       symbols_of)

__all__ = ["CheckResult", "check", "DEFAULT_RANGES", "MAX_CHECK_DPS"]

#: Ranges sampled for a parameter that is neither fixed nor in ``over``.
DEFAULT_RANGES = {"phi": "0.1:10", "psi": "0.1:10", "lam": "1e-3:10", "alpha": "0.2:5", "beta": "0.2:5",
                  "alpha0": "1:100", "eta": "0.1:10"}
#: Most digits a check may ask for.
MAX_CHECK_DPS = 60
_SIMPLIFY_OPS = 4000


@dataclasses.dataclass
class CheckResult(Result):
    """The outcome of :func:`check`: the proof (if any), the pointwise comparison, the simulation (if asked) and a
    one-line verdict."""

    formula: str
    against: str
    student: str
    teacher: str | None
    proof: dict
    points: list
    agree: int
    max_relative_gap: float
    worst: dict | None
    verdict: str
    simulation: list
    dps: int
    provenance: dict
    understood: dict | None = None

    def _repr_html_(self) -> str:
        """The verdict, the formula as math, the proof, the worst point (formula against the quantity ± its error)
        and the simulation, for notebooks."""
        from html import escape

        w = self.worst
        u = self.understood
        rows = [("LaTeX given", f"<code>{escape(u['source'])}</code>"),
                (f"read as ({escape(u['convention'])})", f"${escape(u['latex'])}$")] if u else []
        rows += [("formula", f"<code>{escape(self.formula)}</code>"
                 + (f"<br>${escape(self.proof['latex'])}$" if self.proof.get("latex") else "")),
                ("against", escape(self.against)),
                ("proof", f"{escape(self.proof['status'])}: {escape(self.proof.get('detail', ''))}"),
                ("points agreeing", f"{self.agree}/{len(self.points)} to {self.dps} digits"),
                ("largest relative gap", f"{self.max_relative_gap:.3g}"),
                ("worst point", f"{escape(', '.join(f'{k}={v}' for k, v in w['point'].items()))}: formula "
                                f"{escape(w['formula'])}, quantity {escape(w['quantity'])} ± {escape(w['quantity_error'])}")]
        for sm in self.simulation:
            at = escape(", ".join(f"{k}={v}" for k, v in sm["point"].items()))
            rows.append((f"simulation at {at}", escape(sm["note"]) if "note" in sm else
                         f"{sm['sim_mean']:.6g} ± {sm['sim_se']:.2g} (d = {sm['d']}, {sm['reps']} seeds); "
                         f"z(formula) = {sm['z_formula']:+.1f}, z(quantity) = {sm['z_quantity']:+.1f}"))
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
                       for k, v in rows)
        return f"<p><b>{escape(self.verdict)}</b></p><table>{body}</table>"

    def _repr_latex_(self) -> str:
        return f"$\\text{{{self.against}}} \\overset{{?}}{{=}} {self.proof['latex']}$"


def _is_zero(expr) -> bool:
    if expr == 0:
        return True
    e = sp.cancel(sp.together(expr))
    if e == 0:
        return True
    return sp.count_ops(e) <= _SIMPLIFY_OPS and sp.simplify(e) == 0


def _proof(expr, cf, exact: dict, family: str) -> dict:
    out = {"latex": sp.latex(expr)}
    if cf is None:
        return dict(out, status="no closed form", detail="the package computes this quantity only numerically")
    if family == "srf":                 # r, c, gamma in a formula: Result 3.1 (docs/theory/srf-theory.md §2)
        expr = expr.subs({SRF_SYMBOLS[k]: closed_form(k) for k in ("r", "c", "gamma")})
    diff = expr - cf
    if _is_zero(diff):
        return dict(out, status="identical", detail="the difference to the package's closed form simplifies to 0 "
                                                    "for every teacher")
    if exact:
        d2 = diff.subs(exact)
        if _is_zero(d2):
            return dict(out, status="identical for this teacher",
                        detail="the difference simplifies to 0 once the teacher's exact Hermite coefficients are in")
        diff = d2
    shown = sp.factor(sp.cancel(sp.together(diff))) if sp.count_ops(diff) <= _SIMPLIFY_OPS else diff
    text = str(shown.xreplace(formula_names(family)))
    return dict(out, status="differs symbolically",
                detail=f"formula - closed form = {text if len(text) <= 400 else text[:400] + ' ...'}")


def check(formula: str | None = None, against: str | None = None, *, student, teacher=None, latex: str | None = None,
          convention: str | None = None, symbols: dict | None = None, fixed: dict | None = None, over=None,
          n: int = 64, dps: int = 15, simulate: bool = False, sim_points: int = 3, sim_d: int = 400,
          sim_reps: int = 4, seed: int = 0) -> CheckResult:
    r"""Check ``formula`` against quantity ``against`` (docs/theory/checking.md §4).

    The formula is either text in the package's formula names (``formula``) or LaTeX as the paper prints it
    (``latex``), read with the symbol table of ``convention`` (default: the quantity's own, ``moniri23`` for the
    spike theory, ``cui24`` for the sRF one) and the overrides ``symbols`` (``{"sigma": "noise"}``;
    docs/theory/checking.md §7).  ``result.understood`` then holds the formula as understood.

    ``fixed`` holds parameters kept at one value (numbers or exact strings); ``over`` the ranges sampled
    (``{"phi": "0.1:10"}`` or ``"phi=0.1:10,lam=1e-3:10"``); every other parameter of the quantity is sampled over
    :data:`DEFAULT_RANGES`.  ``noise`` is 0 unless fixed.

    >>> r = check("psi*lam*cs1**4*m2/(phi*b**2)", "delta_1", student="tanh", teacher="He1", n=4)
    >>> r.proof["status"], r.agree
    ('identical', 4)
    """
    q = quantity_of(against)
    if not isinstance(dps, int) or not 15 <= dps <= MAX_CHECK_DPS:
        raise InvalidParameterError("dps", dps, f"an integer in [15, {MAX_CHECK_DPS}]")
    syms = symbols_of(q.family)
    if (formula is None) == (latex is None):
        raise InvalidParameterError("formula", formula, "either a formula in the package's names or latex=, not "
                                                        "both")
    understood = None
    if latex is not None:
        from .tex import read_latex

        understood = read_latex(latex, q.family, convention, symbols).to_dict()
        formula = understood["formula"]
    elif convention is not None or symbols:
        raise InvalidParameterError("convention", convention, "given with latex= (it sets the symbol table)")
    if not isinstance(formula, str):
        raise InvalidParameterError("formula", formula, "a formula as text")
    expr = parse_text(formula, "formula", syms)
    if any(a in expr.atoms() for a in (sp.zoo, sp.nan, sp.oo, -sp.oo)) or expr.has(sp.I):
        raise InvalidParameterError("formula", formula, "a finite real expression (it is infinite, undefined or "
                                                        "complex as written)")
    fixed = dict(fixed or {})
    bad = [k for k in fixed if k not in q.params]
    if bad:
        raise InvalidParameterError(bad[0], fixed[bad[0]], f"a parameter of {against}: {', '.join(q.params)}")
    if isinstance(over, str) and len({p.split("=")[0].strip() for p in over.split(",") if p.strip()}) != \
            len([p for p in over.split(",") if p.strip()]):
        raise InvalidParameterError("over", over, "each name once")
    rng = parse_over(over, need_count=False) if over else {}
    for k in rng:
        if k not in q.params:
            raise InvalidParameterError("over", k, f"a parameter of {against}: {', '.join(q.params)}")
        if k in fixed:
            raise InvalidParameterError(k, fixed[k], "either sampled (--over) or fixed, not both")
    for k in q.params:
        if k not in fixed and k not in rng and k in DEFAULT_RANGES:
            rng[k] = parse_over({k: DEFAULT_RANGES[k]}, need_count=False)[k]
    const = constants(q.family, student, teacher, dps + 10)
    proof = _proof(expr, closed_form(against), const["exact"], q.family)
    pts = sample_points(rng, n, seed) if rng else [{}]
    free = expr.free_symbols
    rows, agree, over_bound, undefined, earned = [], 0, 0, 0, dps
    bound = None
    if against.startswith("lambda_"):     # a test-error gain cannot exceed L_te(F0) - noise (docs/theory/checking.md §4)
        cfb = closed_form("test_loss_f0") - syms["noise"]
        bound = (sorted(cfb.free_symbols, key=str), sp.lambdify(sorted(cfb.free_symbols, key=str), cfb, "mpmath"))
    for u in pts:
        point = dict(fixed, **u)
        value, err, vals, _, errs = evaluate(against, point, student, teacher, dps=dps)
        missing = [s for s in free if s not in vals]
        if missing:
            raise InvalidParameterError("formula", formula, f"symbols the quantity {against} defines at a point "
                                                            f"({', '.join(map(str, missing))} has no value: fix it)")
        fv = formula_value(expr, vals, errs, dps)
        f, ferr = fv if fv is not None else (None, 0.0)
        with precision(dps + 10):
            v = mpmath.mpf(value)
            scale = max(abs(v), mpmath.mpf(10) ** -dps)
            gap = abs(f - v) if f is not None else mpmath.inf
            top = bound[1](*[vals[s] for s in bound[0]]) if bound is not None else None
        rel = float(gap / scale)
        ok = f is not None and float(gap) <= 10.0 ** -dps * float(scale) + 2 * err + ferr
        agree += ok
        undefined += f is None
        earned = min(earned, digits_of(v, err))
        row = {"point": {k: str(x) for k, x in point.items()},
               "formula": vouch(f, ferr, dps)[0] if f is not None else "undefined (complex, infinite or 0/0)",
               "formula_error": vouch(f, ferr, dps)[1] if f is not None else None,
               "quantity": vouch(v, err, dps)[0], "quantity_error": vouch(v, err, dps)[1], "relative_gap": rel,
               "agrees": bool(ok)}
        if top is not None:
            row["largest_possible_gain"] = mpmath.nstr(top, dps)
            over_bound += bool(f is not None and f > top)
        rows.append(row)
    worst = max(rows, key=lambda r: r["relative_gap"])
    mx = worst["relative_gap"]
    where = ", ".join(f"{k}={float(sp.sympify(v)):.4g}" for k, v in worst["point"].items())
    digits = min(dps, earned)          # the quantity's error may vouch for fewer digits than asked
    if agree == len(rows):
        verdict = f"agrees to {digits} digits at {agree}/{len(rows)} points"
        if digits < dps:
            verdict += f" (the quantity's error estimate vouches for {digits} of the {dps} digits asked)"
        if proof["status"].startswith("identical"):
            verdict = f"{proof['status']} (symbolic proof); " + verdict
        elif proof["status"] == "differs symbolically":   # the proof decides: agreement only bounds the difference
            verdict = (f"differs symbolically (proof; see below), though it agrees to {digits} digits at "
                       f"{agree}/{len(rows)} points: the difference is below the digits checked there")
    else:
        verdict = (f"differs: relative gap up to {mx:.2g} at {where} ({agree}/{len(rows)} points agree to {digits} "
                   "digits)")
        if undefined:
            verdict += f"; the formula is undefined (complex, infinite or 0/0) at {undefined}/{len(rows)} points"
        if proof["status"].startswith("identical"):
            verdict = "INCONSISTENT: proved identical but " + verdict + " -- please report"
    if bound is not None and over_bound:
        verdict += (f"; the formula exceeds the largest possible gain L_te(F0) - noise at {over_bound}/{len(rows)} "
                    "points")
    sims = _simulate(against, q, formula, rows[:sim_points], student, teacher, sim_d, sim_reps, seed) if simulate \
        else []
    return CheckResult(formula=formula, against=against, student=str(student), teacher=None if teacher is None else
                       str(teacher), proof=proof, points=rows, agree=agree, max_relative_gap=mx, worst=worst,
                       verdict=verdict, simulation=sims, dps=dps, understood=understood,
                       provenance=provenance(dps=dps, method="symbolic difference; quasi-random (Halton) points, the "
                                                             "package's numeric path; simulation if asked",
                                             references=[q.ref, "docs/theory/checking.md §4"]))


def _simulate(name, q, formula, rows, student, teacher, d, reps, seed) -> list:
    """Mean ± standard error of the simulated quantity at the first points (docs/theory/checking.md §4)."""
    from .. import simulate as S

    out = []
    for r in rows:
        p = {k: float(sp.sympify(v)) for k, v in r["point"].items()}
        f = float(mpmath.mpf(r["formula"])) if r["agrees"] or not r["formula"].startswith("undefined") else math.nan
        v = float(mpmath.mpf(r["quantity"]))
        if q.family == "spike":
            nv = p.get("noise", 0.0)
            if name in ("m1", "m2", "dm1", "dm2"):
                res = S.sim_resolvent(student, d=d, phi=p["phi"], psi=p["psi"], lam=p["lam"], reps=reps, seed=seed)
                st = res[{"m1": "m1", "m2": "m2", "dm1": "dm1_dlam", "dm2": "dm2_dlam"}[name]]
            else:
                ell = int(name.split("_")[1]) if name.startswith(("delta_", "lambda_")) else 1
                res = S.sim_spike_model(student, teacher, d=d, phi=p["phi"], psi=p["psi"], lam=p["lam"], ell=ell,
                                        noise_var=nv, reps=reps, seed=seed)
                st = res[{"delta": "delta", "lambda": "lambda_test", "train": "train_loss_F0",
                          "test": "test_loss_F0"}[name.split("_")[0]]]
        elif name not in ("r", "c", "gamma", "test_error"):
            out.append({"point": p, "note": f"check does not simulate {name}"})
            continue
        else:
            kw = {k: p.get(k, dflt) for k, dflt in (("alpha", 1.0), ("beta", 1.0), ("lam", 0.1))}
            res = S.sim_giant_step(student, teacher, d, alpha0=p["alpha0"], eta=p["eta"], noise_var=p.get("noise", 0.0),
                                   reps=reps, seed=seed, **kw)
            st = res[name]
        se = st.se if st.se > 0 else math.nan
        out.append({"point": p, "d": d, "reps": reps, "sim_mean": st.mean, "sim_se": st.se,
                    "z_formula": (f - st.mean) / se, "z_quantity": (v - st.mean) / se})
    return out
