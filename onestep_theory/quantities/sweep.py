r"""One sweep for every quantity (docs/theory/checking.md §5): a grid over one or more parameters, each value with
its error estimate, warm-started where the solver supports it, as CSV, JSON, a pandas DataFrame, an HTML table
or a plot.

>>> s = sweep("m1", {"lam": "0.1:1:3"}, student="tanh", fixed={"phi": "1/2", "psi": "1/2"})
>>> [r["lam"] for r in s.rows], len(s), s.rows[0]["value"] > s.rows[-1]["value"]
(['0.1', '0.316227766017', '1'], 3, True)
"""

from __future__ import annotations

import dataclasses
import html
import time

import sympy as sp

from ..core.errors import InvalidParameterError
from ..core.results import Result, provenance, vouch, write_csv
from ..core.syntax import parse_text
from .grid import grid_points, parse_over
from .registry import evaluate, formula_value, quantity_of, symbols_of

__all__ = ["SweepResult", "sweep"]


@dataclasses.dataclass
class SweepResult(Result):
    """A sweep: one row per grid point (the parameters as exact decimal strings, ``value``, ``error``)."""

    quantity: str
    student: str
    teacher: str | None
    fixed: dict
    over: list
    rows: list
    dps: int
    seconds: float
    provenance: dict
    formula: str | None = None
    understood: dict | None = None
    grid: object = None             # the grid as typed (``"alpha=0.2:3:20"`` or a dict of ranges)

    def __len__(self) -> int:
        return len(self.rows)

    def to_frame(self):
        """The rows as a pandas DataFrame (parameters and values as floats; pandas is optional); ``attrs`` holds the
        :meth:`context` (the parameters as typed, the method, the provenance)."""
        try:
            import pandas as pd
        except ImportError:
            raise InvalidParameterError("to_frame", "pandas", "pandas installed (pip install pandas)") from None
        frame = pd.DataFrame([{k: _number(v) for k, v in r.items()} for r in self.rows])
        frame.attrs.update(self.context())
        return frame

    def context(self) -> dict:
        """What a CSV or LaTeX table of the sweep carries: the call, the parameters as typed, the method."""
        params = {"quantity": self.quantity, "over": self.grid, "student": self.student, "teacher": self.teacher,
                  **self.fixed, "dps": self.dps, "formula": self.formula}
        return {"command": f"onestep_theory.quantities.sweep({self.quantity!r}, ...)",
                "parameters": {k: v for k, v in params.items() if v is not None},
                "method": f"{self.provenance.get('method')}; {self.dps} digits", "provenance": self.provenance}

    def to_csv(self, path_or_buffer=None, context: dict | None = None) -> str | None:
        """CSV text of the rows (written to ``path_or_buffer`` if given), after ``#`` lines of its :meth:`context`
        (updated by ``context``: the command line's) -- ``core.results.read_csv`` reads both back."""
        ctx = dict(self.context(), **{k: v for k, v in (context or {}).items() if v})
        return write_csv(path_or_buffer, self.rows, ctx)

    def to_latex(self, context: dict | None = None, form: str = "siunitx") -> str:
        """A ``booktabs`` table of the rows (``quantities.table.latex_table``): the swept parameters as typed, the
        value (and the formula) with its error, only the vouched digits; the fixed parameters in the caption."""
        from .table import latex_table, tex_name, tex_text

        ctx = dict(self.context(), **{k: v for k, v in (context or {}).items() if v})
        cols = list(self.over) + ["value"] + (["formula"] if self.formula is not None else [])
        who = ", ".join(f"{k} \\texttt{{{tex_text(v)}}}" for k, v in (("student", self.student),
                                                                       ("teacher", self.teacher)) if v)
        return latex_table(self.rows, cols, {"value": "error", "formula": "formula_error"}, fixed=self.fixed,
                           context=ctx, form=form, names={"value": self.quantity, "formula": self.formula or "formula"},
                           caption=f"{tex_name(self.quantity)} over {', '.join(map(tex_name, self.over))} ({who})")

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(k)}</th>" for k in self.rows[0])
        shown = self.rows if len(self.rows) <= 40 else self.rows[:20] + [None] + self.rows[-20:]
        body = "".join("<tr><td colspan=99>…</td></tr>" if r is None else
                       "<tr>" + "".join(f"<td>{html.escape(_short(v))}</td>" for v in r.values()) + "</tr>"
                       for r in shown)
        return (f"<p><b>{html.escape(self.quantity)}</b> over {', '.join(self.over)} ({len(self)} points, "
                f"{self.dps} digits)</p><table><tr>{head}</tr>{body}</table>")

    def plot(self, path, *, contours=None, tol=None, overlays=(), width=3.4, dpi=300) -> str:
        """A figure for a paper (docs/theory/checking.md §9): the curve with its errors (one swept parameter) or the
        heatmap on the grid's own scale (two) with ``contours``, a hatched mask where the error exceeds ``tol``
        times the value and the ``overlays`` named (``argmin``, ``eta-star``); PNG, PDF or SVG by suffix."""
        from .overlays import OVERLAYS_2D, check_sweep_plot, parse_contours, parse_with, sweep_figure

        levels = parse_contours(contours) if isinstance(contours, str) else contours
        names = parse_with(",".join(overlays), OVERLAYS_2D) if overlays else []
        check_sweep_plot({k: (0, 1, len({r[k] for r in self.rows}), "lin") for k in self.over}, contours=levels,
                         with_=names)
        return sweep_figure(self, path, contours=levels, tol=tol, with_=names, width=width, dpi=dpi)


def _number(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):         # "undefined" (a formula at a point where it has no value)
        return float("nan")


def _short(v) -> str:
    try:
        return f"{float(v):.10g}"
    except (TypeError, ValueError):
        return str(v)


def _batched(quantity, points, fixed, student, teacher, expr):
    """The sRF test error at every grid point at once, each with its own refined error (float64:
    :func:`~onestep_theory.srf.single.batch.srf_batch`, docs/theory/numerics.md §4-5), or None where the point-by-point
    path runs: another quantity, a formula (it needs every symbol's value at each point), or an input missing (that
    path names it).  Called only for the digits float64 reaches (dps at most 15: :func:`sweep`)."""
    if quantity != "test_error" or expr is not None or teacher is None:
        return None
    from ..srf.single.batch import srf_batch

    pts = [{("noise_var" if k == "noise" else k): v for k, v in dict(fixed, **u).items()} for u in points]
    if any(k not in pt for pt in pts for k in ("alpha", "beta", "lam", "alpha0", "eta")):
        return None
    try:
        return srf_batch(student, teacher, pts)
    except InvalidParameterError as exc:
        if exc.param == "noise_var":          # the sweep's name of the label noise
            raise InvalidParameterError("noise", exc.value, exc.allowed, exc.detail) from None
        raise


def sweep(quantity: str, over, *, student, teacher=None, fixed: dict | None = None, dps: int = 15,
          formula: str | None = None, latex: str | None = None, convention: str | None = None,
          symbols: dict | None = None) -> SweepResult:
    """``quantity`` over the grid ``over`` (``{"lam": "1e-3:10:40"}`` or ``"lam=1e-3:10:40,phi=0.5:2:3"``; ranges
    ``a:b:n[:log|lin]``, docs/theory/checking.md §3) with the other parameters ``fixed``.  The sRF test error is
    warm-started from the previous grid point; every value carries its own error estimate.

    With ``formula`` (the package's names) or ``latex`` (as printed; ``convention`` and ``symbols`` as in
    :func:`~onestep_theory.quantities.check.check`) every row also carries the formula's value at the point and its
    propagated error (columns ``formula`` and ``formula_error``; docs/theory/checking.md §5, §7)."""
    q = quantity_of(quantity)
    understood = None
    if formula is not None and latex is not None:
        raise InvalidParameterError("formula", formula, "either a formula or latex=, not both")
    if latex is not None:
        from .latex.tex import read_equations

        eqs = read_equations(latex, q.family, convention, symbols, against=quantity)
        if len(eqs) != 1 or len(eqs[0].rights) != 1:
            raise InvalidParameterError("latex", latex, "one formula, or 'NAME = formula' (a chain or a display: "
                                                        "use check)")
        lhs = eqs[0].lhs
        if lhs is not None and lhs.kind == "expression":
            raise InvalidParameterError("latex", latex, f"a formula for {quantity} (the left-hand side {lhs.tex} is "
                                                        "an expression: use check)")
        if lhs is not None and lhs.quantity != quantity:
            raise InvalidParameterError("latex", latex, f"a formula for {quantity} (the left-hand side {lhs.tex} is "
                                                        f"{lhs.quantity})")
        understood = dict(eqs[0].rights[0].to_dict(), source=latex, dropped=lhs.tex if lhs else None)
        formula = understood["formula"]
    elif convention is not None or symbols:
        raise InvalidParameterError("convention", convention, "given with latex= (it sets the symbol table)")
    expr = parse_text(formula, "formula", symbols_of(q.family)) if formula is not None else None
    if expr is not None and (expr.has(sp.zoo, sp.nan, sp.oo, sp.I)):
        raise InvalidParameterError("formula", formula, "a finite real expression")
    grid = parse_over(over, need_count=True)
    fixed = dict(fixed or {})
    for k in list(grid) + list(fixed):
        if k not in q.params:
            raise InvalidParameterError(k, grid.get(k, fixed.get(k)), f"a parameter of {quantity}: "
                                                                      f"{', '.join(q.params)}")
    both = set(grid) & set(fixed)
    if both:
        raise InvalidParameterError(sorted(both)[0], fixed[sorted(both)[0]], "either swept or fixed, not both")
    t0, rows, state = time.perf_counter(), [], None
    points = list(grid_points(grid))
    solved = None if quantity != "test_error" or dps > 15 else _batched(quantity, points, fixed, student, teacher,
                                                                         expr)
    for i, u in enumerate(points):
        point = dict(fixed, **u)
        if solved is not None:
            value, err = solved[i].test_error, float(solved[i].abs_error)
        else:
            value, err, vals, state, errs = evaluate(quantity, point, student, teacher, dps=dps, state=state)
        text, etext = vouch(value, err, dps)           # the error includes the rounding of the printed value
        row = dict(u, value=text, error=etext)
        if expr is not None:
            missing = [str(s) for s in expr.free_symbols if s not in vals]
            if missing:
                raise InvalidParameterError("formula", formula, f"symbols {quantity} defines at a point ("
                                                                f"{', '.join(missing)} has no value: fix it)")
            fv = formula_value(expr, vals, errs, dps)
            row["formula"], row["formula_error"] = vouch(*fv, dps) if fv is not None else ("undefined", "")
        rows.append(row)
    return SweepResult(quantity=quantity, student=str(student), teacher=None if teacher is None else str(teacher),
                       fixed={k: str(v) for k, v in fixed.items()}, over=list(grid), rows=rows, dps=dps,
                       seconds=time.perf_counter() - t0, formula=formula, understood=understood,
                       grid=over if isinstance(over, str) else {k: str(v) for k, v in over.items()},
                       provenance=provenance(dps=dps, method="grid; " + (
                           "the sRF saddle point at all points at once (srf.single.batch, float64 Newton, each "
                           "point's own refined error; docs/theory/numerics.md §10)" if solved is not None else
                           "the package's numeric path at each point, warm-started where the solver allows"),
                                             references=[q.ref, "docs/theory/checking.md §5"]))
