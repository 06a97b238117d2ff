r"""Checking a printed formula or equation against the package's quantities (docs/theory/checking.md §4, §7.5).

The formula is a SymPy expression in the names of :func:`~onestep_theory.quantities.registry.symbols_of` (parsed
by the package's safe parser), or LaTeX as the paper prints it — a formula, an equation ``LHS = RHS``, a chain
(``A \to B = C``) or a display of several equations.  A left-hand side naming a quantity selects it; any other
left-hand side is compared as it stands (``\gamma^2 = …`` is "γ² − formula = 0").  The check

1. **proves** where it can: if the package has the quantity side in closed form, the difference is simplified; zero
   is a proof ("identical" for every teacher, or "identical for this teacher" once its exact Hermite coefficients
   are substituted), anything else is reported with the simplified difference and, when the formula is the
   quantity times a monomial, that factor;
2. **evaluates** both at ``n`` quasi-random points at ``dps`` digits — every parameter either side depends on
   sampled (the label noise included) unless fixed — the quantity by the package's *numeric* path (not the closed
   form), with its error estimate, and reports the largest relative gap, where it occurs, and how many points agree;
3. with ``simulate``, **measures** the quantity at a few of the points (mean ± standard error).

The outcome is a ``status`` — ``identical``, ``agrees`` (to the digits the quantity's error vouches for, said in
the verdict), ``differs`` or ``failed`` (a proof contradicted by the points) — and an ``exit_code`` like ``diff``'s:
0, 0, 1, 3.
"""

from __future__ import annotations

import dataclasses

import mpmath
import sympy as sp

from ..core.errors import InvalidParameterError
from ..core.precision import asked_digits, precision, refined
from ..core.results import Result, digits_of, provenance, vouch
from ..core.syntax import parse_text
from .grid import parse_over, sample_points
from .pointwise import check_params, plan, proof, quantity_symbols, sides
from .registry import QUANTITIES, closed_form, constants, quantity_of, symbols_of

__all__ = ["CheckResult", "check", "DEFAULT_RANGES", "MAX_CHECK_DPS", "EXIT_CODES"]

#: Ranges sampled for a parameter that is neither fixed nor in ``over`` (the noise: a variance, linear from 0).
DEFAULT_RANGES = {"phi": "0.1:10", "psi": "0.1:10", "lam": "1e-3:10", "alpha": "0.2:5", "beta": "0.2:5",
                  "alpha0": "1:100", "eta": "0.1:10", "noise": "0:1"}
#: Most digits a check may ask for.
MAX_CHECK_DPS = 60
#: Status -> exit status of the command line (like ``diff``: 0 same, 1 differs; 3 numerical failure).
EXIT_CODES = {"identical": 0, "agrees": 0, "differs": 1, "failed": 3}
_RANK = {"identical": 0, "agrees": 1, "differs": 2, "failed": 3}
_RELATION = {"approx": "'≈' checked as '='", "limit": "the limit checked as '='", "def": "a definition ':=' checked "
             "as '='"}


@dataclasses.dataclass
class CheckResult(Result):
    """The outcome of :func:`check`: the proof (if any), the pointwise comparison, the simulation (if asked), a
    one-line verdict and its ``status``; ``parts`` holds the further right-hand sides of a chain and the further
    equations of a display (each a :class:`CheckResult`); ``status`` and ``exit_code`` are the worst over all."""

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
    status: str = "agrees"
    lhs: dict | None = None
    sampled: dict = dataclasses.field(default_factory=dict)
    fixed: dict = dataclasses.field(default_factory=dict)
    sign: dict | None = None
    parts: list = dataclasses.field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 identical or agrees, 1 differs, 3 numerical failure — the worst over :attr:`parts` too."""
        return EXIT_CODES[self.overall]

    @property
    def overall(self) -> str:
        return max([self.status] + [p.status for p in self.parts], key=_RANK.get)

    def _repr_html_(self) -> str:
        """The verdict, the formula as math, the proof, the worst point (formula against the quantity ± its error)
        and the simulation, for notebooks; the further parts below."""
        from html import escape

        w, u = self.worst, self.understood
        rows = [("LaTeX given", f"<code>{escape(u['source'])}</code>"),
                (f"read as ({escape(u['convention'])})", f"${escape(u['latex'])}$")] if u else []
        if self.lhs:
            rows.append(("left-hand side", f"${escape(self.lhs['latex'])}$ ({escape(self.lhs['kind'])})"))
        rows += [("formula", f"<code>{escape(self.formula)}</code>"
                 + (f"<br>${escape(self.proof['latex'])}$" if self.proof.get("latex") else "")),
                ("against", escape(self.against)),
                ("proof", f"{escape(self.proof['status'])}: {escape(self.proof.get('detail', ''))}"),
                ("points agreeing", f"{self.agree}/{len(self.points)} to {self.dps} digits"),
                ("largest relative gap", f"{self.max_relative_gap:.3g}")]
        if w:
            rows.append(("worst point", f"{escape(', '.join(f'{k}={v}' for k, v in w['point'].items()))}: formula "
                                        f"{escape(w['formula'])}, quantity {escape(w['quantity'])} ± "
                                        f"{escape(str(w['quantity_error']))}"))
        for sm in self.simulation:
            at = escape(", ".join(f"{k}={v}" for k, v in sm["point"].items()))
            rows.append((f"simulation at {at}", escape(sm["note"]) if "note" in sm else
                         f"{sm['sim_mean']:.6g} ± {sm['sim_se']:.2g} (d = {sm['d']}, {sm['reps']} seeds); "
                         f"z(formula) = {sm['z_formula']:+.1f}, z(quantity) = {sm['z_quantity']:+.1f}"))
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td style='text-align:left'>{v}</td></tr>"
                       for k, v in rows)
        return (f"<p><b>{escape(self.verdict)}</b></p><table>{body}</table>"
                + "".join(p._repr_html_() for p in self.parts))

    def _repr_latex_(self) -> str:
        left = self.lhs["latex"] if self.lhs else rf"\text{{{self.against}}}"
        return f"${left} \\overset{{?}}{{=}} {self.proof['latex']}$"


def check(formula: str | None = None, against: str | None = None, *, student, teacher=None, latex: str | None = None,
          convention: str | None = None, symbols: dict | None = None, fixed: dict | None = None, over=None,
          n: int = 64, dps: int = 15, simulate: bool = False, sim_points: int = 3, sim_d: int = 400,
          sim_reps: int = 4, seed: int = 0, ell: int | None = None) -> CheckResult:
    r"""Check ``formula`` (or the LaTeX ``latex``) against quantity ``against`` (docs/theory/checking.md §4, §7.5).

    The formula is either text in the package's formula names (``formula``) or LaTeX as the paper prints it
    (``latex``) — a formula, an equation, a chain or a display of equations — read with the symbol table of
    ``convention`` (default: the quantity's own, ``moniri23`` for the spike theory, ``cui24`` for the sRF one), the
    overrides ``symbols`` (``{"sigma": "noise"}``) and the window ``ell`` (``\Delta_\ell``).  A left-hand side that
    names a quantity selects it (``against`` may then be omitted; a different ``against`` is refused); any other
    left-hand side is compared with the formula as it stands.  ``result.understood`` holds the reading.

    ``fixed`` holds parameters kept at one value (numbers or exact strings); ``over`` the ranges sampled
    (``{"phi": "0.1:10"}`` or ``"phi=0.1:10,lam=1e-3:10"``); every other parameter that either side depends on is
    sampled over :data:`DEFAULT_RANGES` — the label noise too.

    >>> r = check("psi*lam*cs1**4*m2/(phi*b**2)", "delta_1", student="tanh", teacher="He1", n=4)
    >>> r.proof["status"], r.agree, r.status, r.exit_code
    ('identical', 4, 'identical', 0)
    """
    if not isinstance(dps, int) or isinstance(dps, bool) or not 15 <= dps <= MAX_CHECK_DPS:
        raise InvalidParameterError("dps", dps, f"an integer in [15, {MAX_CHECK_DPS}]")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 10000:
        raise InvalidParameterError("n", n, "an integer in [1, 10000]")
    if (formula is None) == (latex is None):
        raise InvalidParameterError("formula", formula, "either a formula in the package's names or latex=, not "
                                                        "both")
    if against is not None and (not isinstance(against, str) or against not in QUANTITIES):
        raise InvalidParameterError("against", against, ", ".join(QUANTITIES))
    q = quantity_of(against) if against is not None else None
    jobs = []
    if latex is None:
        if convention is not None or symbols:
            raise InvalidParameterError("convention", convention, "given with latex= (it sets the symbol table)")
        if not isinstance(formula, str):
            raise InvalidParameterError("formula", formula, "a formula as text")
        if q is None:
            raise InvalidParameterError("against", None, "the quantity the formula is checked against")
        family = q.family
        jobs.append((None, None, formula, "=", None))
    else:
        from .latex.tex import read_equations

        eqs = read_equations(latex, q.family if q else None, convention, symbols, ell=ell, against=against)
        family = eqs[0].family
        for e in eqs:
            for k, right in enumerate(e.rights):
                jobs.append((e, right, right.formula, e.relations[k] if e.relations else "=", e.sign))
    fixed, rng = _ranges(fixed, over)
    out = [_one(job, against, family, student, teacher, fixed, rng, n, dps, seed) for job in jobs]
    if simulate:
        from .checksim import simulate_rows

        r0 = out[0]
        if r0.lhs is not None and r0.lhs["kind"] == "expression":
            raise InvalidParameterError("simulate", True, "a formula for one quantity (the left-hand side is an "
                                                          "expression)")
        r0.simulation = simulate_rows(r0.against, r0.formula, r0.points[:sim_points], student, teacher, sim_d,
                                      sim_reps, seed)
    head = out[0]
    head.parts = out[1:]
    if head.parts:
        head.verdict += f" [+ {len(head.parts)} more: " + "; ".join(p.status for p in head.parts) + "]"
    return head


def _exact_fixed(fixed, syms) -> dict:
    """The fixed parameters as exact SymPy numbers on their symbols (for the proof: a formula true at noise 0 is
    identical when the noise is fixed at 0)."""
    from ..core.exact import to_exact

    out = {}
    for k, v in fixed.items():
        try:
            x = to_exact(v, k)
        except (InvalidParameterError, TypeError, ValueError):
            continue
        if k in syms and x.is_finite:
            out[syms[k]] = x
    return out


def _ranges(fixed, over):
    fixed = dict(fixed or {})
    if isinstance(over, str) and len({p.split("=")[0].strip() for p in over.split(",") if p.strip()}) != \
            len([p for p in over.split(",") if p.strip()]):
        raise InvalidParameterError("over", over, "each name once")
    rng = parse_over(over, need_count=False) if over else {}
    for k in rng:
        if k in fixed:
            raise InvalidParameterError(k, fixed[k], "either sampled (--over) or fixed, not both")
    return fixed, rng


def _main_of(e, against, family, teacher, syms):
    """``(main quantity, left-hand side expression or None, lhs dict)`` of one equation."""
    if e is None or e.lhs is None:
        if against is None:
            raise InvalidParameterError("against", None, "the quantity checked: the formula has no left-hand side "
                                                         "naming one")
        return against, None, None
    lhs = e.lhs
    if lhs.kind in ("quantity", "unlisted"):
        if against is not None and lhs.quantity != against:
            raise InvalidParameterError("against", against, f"the quantity the left-hand side names: {lhs.tex} is "
                                                            f"{lhs.quantity}")
        return lhs.quantity, None, lhs.to_dict()
    names = dict(syms, **{k: v for k, v in quantity_symbols(family).items() if k not in syms})
    expr = parse_text(lhs.formula, "left-hand side", names)
    qs = [k for k, v in quantity_symbols(family).items() if v in expr.free_symbols]
    if against is not None and against not in qs:
        raise InvalidParameterError("against", against, f"a quantity the left-hand side {lhs.tex} involves "
                                                        f"({', '.join(qs) or 'none'})")
    main = against or (qs[0] if qs else ("train_loss_f0" if family == "spike" and teacher is not None else
                                         "m1" if family == "spike" else "r"))
    return main, expr, lhs.to_dict()


def _one(job, against, family, student, teacher, fixed, rng, n, dps, seed) -> CheckResult:
    e, right, formula, relation, sign = job
    syms = symbols_of(family)
    main, lhs_expr, lhs = _main_of(e, against, family, teacher, syms)
    q = quantity_of(main)
    expr = parse_text(formula, "formula", syms)
    if any(a in expr.atoms() for a in (sp.zoo, sp.nan, sp.oo, -sp.oo)) or expr.has(sp.I):
        raise InvalidParameterError("formula", formula, "a finite real expression (it is infinite, undefined or "
                                                        "complex as written)")
    p = plan(family, main, lhs_expr, expr)
    fixed, rng = check_params(p, fixed, rng, main)
    sampled = dict(rng)
    for k in p.params:
        if k not in fixed and k not in sampled:
            sampled[k] = parse_over({k: DEFAULT_RANGES[k]}, need_count=False)[k]
    with precision(dps), refined(10, why="10 digits beyond those asked, as evaluate's"):
        const = constants(family, student, teacher, asked_digits())
    pr = proof(p, const["exact"], _exact_fixed(fixed, syms))
    pts = sample_points(sampled, n, seed) if sampled else [{}]
    bound = None
    if lhs_expr is None and main.startswith("lambda_"):   # a gain cannot exceed L_te(F0) - noise (§4)
        cfb = closed_form("test_loss_f0") - syms["noise"]
        bound = (sorted(cfb.free_symbols, key=str), sp.lambdify(sorted(cfb.free_symbols, key=str), cfb, "mpmath"))
    from .registry import formula_value

    rows, agree, over_bound, undefined, earned, bad_sign, state = [], 0, 0, 0, dps, 0, None
    for u in pts:
        point = dict(fixed, **u)
        value, err, vals, errs, state = sides(p, point, student, teacher, dps, state if lhs_expr is None else None)
        missing = [s for s in expr.free_symbols if s not in vals]
        if missing:
            raise InvalidParameterError("formula", formula, f"symbols {main} defines at a point "
                                                            f"({', '.join(map(str, missing))} has no value: fix it)")
        fv = formula_value(expr, vals, errs, dps)
        f, ferr = fv if fv is not None else (None, 0.0)
        with precision(dps), refined(10, why="compared 10 digits beyond those asked, where the values were computed"):
            v = mpmath.mpf(value) if value is not None else None
            ok = f is not None and v is not None
            # relative to the quantity, however small (an absolute floor made 1e-24 "agree" with 0); a quantity that
            # is exactly 0: the absolute criterion 10^-D
            scale = (abs(v) if v else mpmath.mpf(1)) if v is not None else mpmath.mpf(1)
            gap = abs(f - v) if ok else mpmath.inf
            ok = ok and gap <= mpmath.mpf(10) ** -dps * scale + 2 * mpmath.mpf(err) + mpmath.mpf(ferr)
            rel = gap / abs(v) if v else gap           # relative to the quantity (absolute where it is 0)
            top = bound[1](*[vals[s] for s in bound[0]]) if bound is not None else None
            if sign is not None and v is not None:
                neg = v + 2 * mpmath.mpf(err) < 0 if sign.startswith(">") else v - 2 * mpmath.mpf(err) > 0
                bad_sign += bool(neg)
        agree += bool(ok)
        undefined += f is None
        if v is not None:
            earned = min(earned, digits_of(v, err))
        row = {"point": {k: str(x) for k, x in point.items()},
               "formula": vouch(f, ferr, dps)[0] if f is not None else "undefined (complex, infinite or 0/0)",
               "formula_error": vouch(f, ferr, dps)[1] if f is not None else None,
               "quantity": vouch(v, err, dps)[0] if v is not None else "undefined",
               "quantity_error": vouch(v, err, dps)[1] if v is not None else None,
               "relative_gap": float(rel), "agrees": bool(ok)}
        if top is not None:
            row["largest_possible_gain"] = mpmath.nstr(top, dps)
            over_bound += bool(f is not None and f > top)
        rows.append(row)
    worst = max(rows, key=lambda r: r["relative_gap"])
    status, verdict = _verdict(pr, rows, agree, undefined, min(dps, earned), dps, worst)
    notes = []
    if lhs is not None and lhs["kind"] == "expression":
        notes.append(f"checked as ({lhs['formula']}) - formula = 0, the left-hand side from the package's values")
    if lhs is not None and lhs["kind"] == "unlisted":
        notes.append(f"the left-hand side {lhs['tex']} names no quantity: taken to be {main}")
    if relation in _RELATION:
        notes.append(_RELATION[relation])
    if fixed:
        notes.append("fixed: " + ", ".join(f"{k} = {v}" for k, v in fixed.items()))
    sign_out = None
    if sign is not None:
        sign_out = {"claim": sign, "violated_at": bad_sign, "points": len(rows)}
        notes.append(f"claim {sign} " + (f"VIOLATED at {bad_sign}/{len(rows)} points" if bad_sign else
                                          f"holds at {len(rows)}/{len(rows)} points"))
        if bad_sign and status in ("identical", "agrees"):
            status = "differs"
    if bound is not None and over_bound:
        notes.append(f"the formula exceeds the largest possible gain L_te(F0) - noise at {over_bound}/{len(rows)} "
                     "points")
    if pr.get("ratio"):
        notes.append(f"formula = {main if lhs_expr is None else 'left-hand side'} * ({pr['ratio']})")
    verdict += "".join(f"; {x}" for x in notes)
    understood = None
    if right is not None:
        understood = dict(right.to_dict(), source=e.source, side=right.source, relation=relation, dropped=lhs["tex"] if lhs else None, lhs=lhs,
                          remarks=list(e.remarks) if e is not None else [])
    return CheckResult(formula=formula, against=main, student=str(student), teacher=None if teacher is None else
                       str(teacher), proof=pr, points=rows, agree=agree, max_relative_gap=worst["relative_gap"],
                       worst=worst, verdict=verdict, simulation=[], dps=dps, understood=understood, status=status,
                       lhs=lhs, sampled={k: f"{a}:{b}:{sc}" for k, (a, b, _, sc) in sampled.items()},
                       fixed={k: str(v) for k, v in fixed.items()}, sign=sign_out,
                       provenance=provenance(dps=dps, method="symbolic difference; quasi-random (Halton) points, the "
                                                             "package's numeric path; simulation if asked",
                                             references=[q.ref, "docs/theory/checking.md §4"]))


def _verdict(pr, rows, agree, undefined, digits, dps, worst):
    """``(status, verdict)`` from the proof and the points (docs/theory/checking.md §4)."""
    n = len(rows)
    where = ", ".join(f"{k}={v}" if str(v).strip().lower() in ("inf", "oo") else f"{k}={float(sp.sympify(v)):.4g}"
                      for k, v in worst["point"].items())            # alpha0 = inf (the mapping's perfect alignment)
    if agree == n:
        verdict = f"agrees to {digits} digits at {agree}/{n} points"
        if pr["status"].startswith("identical"):
            return "identical", f"{pr['status']} (symbolic proof); " + verdict
        if pr["status"] == "differs symbolically":      # the proof decides: agreement only bounds the difference
            return "differs", (f"differs symbolically (proof; see below), though it agrees to {digits} digits at "
                               f"{agree}/{n} points: the difference is below the digits checked there")
        if digits < 1:                                  # the quantity's error vouches for no digit: no answer
            return "failed", (f"no verdict: the quantity's error estimate vouches for no digit at some point "
                              f"({agree}/{n} points within the errors)")
        if digits < dps:                                # an answer at the digits earned, said so (not a failure)
            verdict += f" (the quantity's error estimate vouches for {digits} of the {dps} digits asked)"
        return "agrees", verdict
    verdict = (f"differs: relative gap up to {worst['relative_gap']:.2g} at {where} ({agree}/{n} points agree to "
               f"{digits} digits)")
    if undefined:
        verdict += f"; the formula is undefined (complex, infinite or 0/0) at {undefined}/{n} points"
    if pr["status"].startswith("identical"):
        return "failed", "INCONSISTENT: proved identical but " + verdict + " -- please report"
    return "differs", verdict
