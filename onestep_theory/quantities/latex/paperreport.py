r"""A whole paper checked at once: every displayed equation whose left-hand side names a quantity, one report
(docs/theory/checking.md §8).

:func:`check_paper` reads the displays (:func:`~onestep_theory.quantities.latex.paper.read_paper`) and checks each one
with :func:`~onestep_theory.quantities.check.check` (``latex=``) against the quantity its left-hand side names
(``\Delta_2 =``, ``r :=``), or the one ``mapping`` gives for its label (a readable left-hand side is then checked as
written, ``\gamma^2 = …``; one outside the table is taken to be the quantity, and the report says so).  Every other
display is skipped with its one-line reason; a bad display never aborts the paper.  :class:`PaperCheck` writes the
report as Markdown, HTML (MathJax; everything from the paper escaped) or JSON, and a text summary.

Exit status (``PaperCheck.exit_code``, the CLI's): **1** if any equation differs (the one certain finding: it
wins), else **3** if a check failed numerically, else **2** if no display was checked at all, else **0**.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import warnings

from ...core.errors import ConvergenceError, InvalidParameterError, OnestepError, ResourceError
from ...core.results import Result, provenance

__all__ = ["PaperCheck", "check_paper", "MAX_POINTS"]

#: Most points per equation.
MAX_POINTS = 1000
_MATHJAX = ("<script>window.MathJax={loader:{load:['ui/safe']},tex:{inlineMath:[['\\\\(','\\\\)']],displayMath:"
            "[['\\\\[','\\\\]']],packages:{'[-]':['html','require']}},options:{ignoreHtmlClass:'noMath',"
            "processHtmlClass:'math'}};</script>\n<script id='MathJax-script' async src='https://cdn.jsdelivr.net/"
            "npm/mathjax@3/es5/tex-chtml.js'></script>")
_UNUSED = re.compile(r"--symbol ([^=\s]+)=.*does not use")        # check's warning about an unused --symbol
#: TeX commands a rendered formula may not hold (links, styles, loading): such a formula is shown as code only.
_UNSAFE = re.compile(r"\\(href|url|require|class|cssId|style|html|unicode|data|attr|tooltip|toggle|mathtip|texttip)"
                     r"(?![A-Za-z])")


@dataclasses.dataclass
class PaperCheck(Result):
    """The displays of a paper checked (docs/theory/checking.md §8): ``rows`` in source order, one dict per
    equation with ``label line environment tex source_tex`` and ``status`` (``identical``, ``agrees``,
    ``differs``, ``failed`` or ``skipped``); a checked row also has ``quantity verdict reading proof worst``, a
    skipped or failed one its one-line ``reason``.  ``counts`` per status, ``verdict`` (one line), ``exit_code``
    (module docstring)."""

    source: str
    convention: str
    student: str
    teacher: str | None
    rows: list
    counts: dict
    unsupported: list
    verdict: str
    exit_code: int
    n: int
    dps: int
    provenance: dict
    warnings: list = dataclasses.field(default_factory=list)

    skipped = property(lambda self: [r for r in self.rows if r["status"] == "skipped"], doc="The skipped rows.")

    def to_text(self) -> str:
        """One line per display (label, line, verdict or reason), then the summary."""
        out = []
        for r in self.rows:
            what = r["verdict"] if r["status"] not in ("skipped", "failed") else f"{r['status']}: {r['reason']}"
            q = f" [{r['quantity']}]" if r.get("quantity") else ""
            out.append(f"{_plain(_name(r))}{q}: {_plain(what)}")
        return "\n".join(out + [f"warning: {_plain(w)}" for w in self.warnings] + [self.verdict])

    def _head(self) -> list:
        at = f"; {self.n} points per equation at {self.dps} digits (onestep_theory {self.provenance.get('version')})."
        return [[("t", "Convention "), ("c", self.convention), ("t", ", student "), ("c", self.student),
                 ("t", ", teacher "), ("c", str(self.teacher)), ("t", at)], [("b", self.verdict),
                                                                            ("t", f" (exit status {self.exit_code})")]]

    def to_markdown(self) -> str:
        """The report as Markdown: the summary table, then each display (rendered, as written, as read, verdict,
        proof, worst point; or why it was skipped) and the unsupported macros.  Nothing from the paper is markup."""
        md = [f"# check-paper: {_md(self.source)}", ""] + [_md_seg(x) + "\n" for x in self._head()]
        md += ["| # | label | line | quantity | status |", "|---|---|---|---|---|"]
        md += [f"| {k} | {_md(r['label'] or '-')} | {r['line']} | {_md(r.get('quantity') or '-')} | {r['status']} |"
               for k, r in enumerate(self.rows, 1)]
        for k, r in enumerate(self.rows, 1):
            md += ["", f"## {k}. {_md(_name(r))}: {r['status']}", ""]
            if not _UNSAFE.search(r["tex"]):
                md += ["$$", _md_math(r["tex"]), "$$", ""]
            md += ["As written:", "", _code(r["source_tex"], block=True), ""] + ["- " + _md_seg(x) for x in _items(r)]
        if self.unsupported:
            md += ["", "## Unsupported TeX (never executed)", ""]
            md += [f"- {_code(u.get('name'))} (line {u.get('line')}): {_md(u.get('reason'))}" for u in self.unsupported]
        return "\n".join(md) + "\n"

    def to_html(self, standalone: bool = True) -> str:
        """The report as HTML: every string from the paper escaped; formulas rendered by MathJax (with its ``safe``
        extension; a formula holding link or style commands is shown as code only)."""
        e = html.escape
        rows = "".join(f"<tr><td>{k}</td><td>{e(r['label'] or '-')}</td><td>{r['line']}</td>"
                       f"<td>{e(r.get('quantity') or '-')}</td><td class='{r['status']}'>{r['status']}</td></tr>"
                       for k, r in enumerate(self.rows, 1))
        parts = [f"<h1>check-paper: {e(self.source)}</h1>"] + [f"<p>{_html_seg(x)}</p>" for x in self._head()]
        parts.append(f"<table><tr><th>#</th><th>label</th><th>line</th><th>quantity</th><th>status</th></tr>{rows}"
                     "</table>")
        for k, r in enumerate(self.rows, 1):
            parts += [f"<h2>{k}. {e(_name(r))}: <span class='{r['status']}'>{r['status']}</span></h2>"]
            if not _UNSAFE.search(r["tex"]):
                parts.append(f"<div class='math'>\\[{e(r['tex'])}\\]</div>")
            parts.append(f"<pre>{e(r['source_tex'])}</pre><ul>" + "".join(f"<li>{_html_seg(x)}</li>" for x in _items(r))
                         + "</ul>")
        if self.unsupported:
            parts.append("<h2>Unsupported TeX (never executed)</h2><ul>" + "".join(
                f"<li><code>{e(str(u.get('name')))}</code> (line {e(str(u.get('line')))}): {e(str(u.get('reason')))}"
                "</li>" for u in self.unsupported) + "</ul>")
        body = "\n".join(parts)
        if not standalone:
            return body
        style = ("body{font-family:sans-serif;max-width:60em;margin:auto}td,th{padding:2px 8px;text-align:left}"
                 ".identical,.agrees{color:#070}.differs,.failed{color:#b00}.skipped{color:#777}"
                 "pre{background:#f4f4f4;padding:4px;white-space:pre-wrap}")
        return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>check-paper: {e(self.source)}</title>\n"
                f"<style>{style}</style>\n{_MATHJAX}\n</head><body class='noMath'>\n{body}\n</body></html>\n")

    def _repr_html_(self) -> str:
        return self.to_html(standalone=False)

    def write(self, path: str) -> str:
        """Write the report to ``path``: ``.md``, ``.html``/``.htm`` or ``.json`` by its suffix."""
        ext = os.path.splitext(str(path))[1].lower()
        text = {".md": self.to_markdown, ".html": self.to_html, ".htm": self.to_html,
                ".json": lambda: json.dumps(self.to_dict(), indent=1)}.get(ext)
        if text is None:
            raise InvalidParameterError("report", path, "a file ending in .md, .html or .json")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text())
        return str(path)


def _items(r) -> list:
    """The list items of one display in the report, as segments ``(kind, text)``: ``t`` text, ``b`` bold, ``c``
    code, ``m`` math (the reader's re-rendering, SymPy's LaTeX)."""
    out = [[("b", r["status"]), ("t", ": " + r["reason"])]] if r.get("reason") else []
    u = r.get("reading")
    if u:
        out.append([("t", "quantity: "), ("c", r["quantity"])] + ([("t", f" ({r['note']})")] if r.get("note") else []))
        out.append([("t", f"read as ({u.get('convention')} table): "), ("c", u.get("formula")), ("t", ", i.e. "),
                    ("m", u.get("latex"))])
        lhs = u.get("lhs") or {}
        if lhs:
            out.append([("t", "left-hand side: "), ("c", lhs.get("tex")), ("t", f" (names the quantity "
                        f"{lhs['quantity']})" if lhs.get("kind") == "quantity" else f" (an expression, read as "
                        f"{lhs.get('formula')})")])
        names = [seg for a, b in (u.get("names") or {}).items() for seg in (("t", "; "), ("c", a), ("t", f" = {b}"))]
        out.append([("t", "names: ")] + names[1:])
    if r.get("verdict"):
        out.append([("b", "verdict"), ("t", ": " + r["verdict"])])
        out.append([("t", f"proof: {r['proof']['status']}: {r['proof']['detail']}")])
        if r.get("worst"):
            out.append([("t", "worst point: " + _point(r["worst"]))])
        if r.get("sampled") or r.get("fixed"):
            out.append([("t", "sampled: " + ", ".join(f"{k} in {v}" for k, v in r.get("sampled", {}).items())
                        + "".join(f", {k} = {v} fixed" for k, v in r.get("fixed", {}).items()))])
        out += [[("t", f"further equation ({p['quantity']}): {p['status']}: {p['verdict']}")] for p in r["parts"]]
    return out + [[("t", "warning: " + x)] for x in r.get("warnings", [])]


def _md_seg(segs) -> str:
    f = {"t": _md, "b": lambda s: f"**{_md(s)}**", "c": _code, "m": lambda s: f"${_md_math(s)}$"}
    return "".join(f[k](str(v)) for k, v in segs)


def _html_seg(segs) -> str:
    e = html.escape
    f = {"t": e, "b": lambda s: f"<b>{e(s)}</b>", "c": lambda s: f"<code>{e(s)}</code>",
         "m": lambda s: f"<span class='math'>\\({e(s)}\\)</span>"}
    return "".join(f[k](str(v)) for k, v in segs)


def _name(r) -> str:
    name = r["label"] or (f"({r['tag']})" if r.get("tag") else "(no label)")
    return f"{name} (line {r['line']})"


def _point(w) -> str:
    at = ", ".join(f"{k}={v}" for k, v in w["point"].items())
    return f"{at}: formula {w['formula']}, quantity {w['quantity']} ± {w['quantity_error']}"


def _plain(s) -> str:
    """Text for a terminal: control characters from the paper shown as '?'."""
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", "?", str(s))


def _md(s) -> str:
    """Markdown text: HTML and table/emphasis characters escaped (the paper's text is never markup)."""
    return re.sub(r"([\\`*_|\[\]<>#])", r"\\\1", html.escape(_plain(s).replace("\n", " "), quote=False))


def _md_math(tex) -> str:
    """A formula inside $$…$$ in Markdown: no raw HTML (< > & as TeX commands), one line, no closing $$."""
    s = _plain(tex).replace("\n", " ").replace("$", r"\$")
    return s.replace("&", r"\&").replace("<", r"\lt ").replace(">", r"\gt ")


def _code(text, block=False) -> str:
    """A Markdown code span (or fenced ``block``) holding ``text`` verbatim (backticks outnumbering any inside)."""
    s = _plain(text) if block else _plain(text).replace("\n", " ")
    ticks = "`" * max(3 if block else 1, 1 + max((len(m) for m in re.findall(r"`+", s)), default=0))
    return f"{ticks}latex\n{s}\n{ticks}" if block else f"{ticks} {s} {ticks}"


def check_paper(text_or_path, *, convention: str, student, teacher=None, symbols: dict | None = None,
                mapping: dict | None = None, n: int = 16, dps: int = 15, ell: int | None = None,
                source: str | None = None) -> PaperCheck:
    r"""Check every displayed equation of a TeX paper (text, or the path of a file) whose left-hand side names a
    quantity or that ``mapping`` names (its label, tag or source line -> quantity), with the symbol table of
    ``convention`` and the overrides ``symbols``, at ``n`` points and ``dps`` digits (docs/theory/checking.md §8).

    >>> tex = r"\begin{equation}\label{eq:d1}\Delta_1=\frac{\psi\lambda c_{\star,1}^4m_2}{\phi b^2}\end{equation}"
    >>> res = check_paper(tex, convention="moniri23", student="tanh", teacher="He1", n=2)
    >>> [(r["label"], r["quantity"], r["status"]) for r in res.rows], res.exit_code
    ([('eq:d1', 'delta_1', 'identical')], 0)
    """
    from ...hermite import Activation
    from ..check import MAX_CHECK_DPS
    from .paper import read_paper
    from ..registry import QUANTITIES
    from .textables import table

    table(convention)                                      # a clear error for an unknown convention
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_POINTS:
        raise InvalidParameterError("n", n, f"an integer in [1, {MAX_POINTS}]")
    if isinstance(dps, bool) or not isinstance(dps, int) or not 15 <= dps <= MAX_CHECK_DPS:
        raise InvalidParameterError("dps", dps, f"an integer in [15, {MAX_CHECK_DPS}]")
    Activation.from_any(student, "student")                # bad activations: one error for the paper, not per row
    if teacher is not None:
        Activation.from_any(teacher, "teacher")
    text, source = _text_of(text_or_path, source)
    paper = read_paper(text, source=source)
    mapping = dict(mapping or {})
    keys = {k for d in paper.displays for k in (d.label, getattr(d, "tag", None), str(d.line)) if k}
    for label, q in mapping.items():
        if q not in QUANTITIES:
            raise InvalidParameterError("map", f"{label}={q}", f"LABEL=QUANTITY, a quantity of the package: "
                                                               f"{', '.join(QUANTITIES)}")
        if str(label) not in keys:
            shown = sorted(k for k in keys if not k.isdigit())
            raise InvalidParameterError("map", label, "a label, tag or line number of a display of the paper ("
                                                      + (", ".join(shown[:20]) or "the paper has no label") + ")")
    kw = dict(convention=convention, student=student, teacher=teacher, symbols=symbols, n=n, dps=dps, ell=ell)
    rows = [_row(d, mapping, kw) for d in paper.displays]
    unused = set(symbols or ())                            # a --symbol is the paper's: unused only if no row uses it
    for r in rows:
        if "warnings" in r:
            unused &= {m.group(1) for w in r["warnings"] if (m := _UNUSED.search(w))}
            r["warnings"] = [w for w in r["warnings"] if not _UNUSED.search(w)]
    notes = [f"--symbol {k}=...: no checked equation of the paper uses {k} (ignored)" for k in sorted(unused)]
    for note in notes:
        warnings.warn(note, stacklevel=2)
    counts = {s: sum(r["status"] == s for r in rows) for s in ("identical", "agrees", "differs", "failed", "skipped")}
    checked = len(rows) - counts["skipped"]
    code = 1 if counts["differs"] else 3 if counts["failed"] else 2 if not checked else 0
    verdict = (f"{len(rows)} equation(s): {checked} checked ({counts['identical']} identical, {counts['agrees']} "
               f"agree, {counts['differs']} differ, {counts['failed']} failed), {counts['skipped']} skipped")
    hint = ("the paper has no displayed equation" if not rows else "no left-hand side names a quantity (give --map "
            "LABEL=QUANTITY)" if all(r.get("reason", "").startswith("left-hand side names") for r in rows) else
            "every display was skipped (reasons above)")
    verdict += {1: " -- an equation differs", 3: " -- a check failed numerically", 2: " -- nothing checked: " + hint,
                0: " -- every checked equation holds"}[code]
    return PaperCheck(source=source, convention=convention, student=str(student),
                      teacher=None if teacher is None else str(teacher), rows=rows, counts=counts,
                      unsupported=[dict(u) for u in paper.unsupported], verdict=verdict, exit_code=code, n=n, dps=dps,
                      warnings=notes,
                      provenance=provenance(dps=dps, method="each display: check(latex=...) against the quantity its "
                                                            "left-hand side names or --map gives",
                                            references=["docs/theory/checking.md §8"]))


def _text_of(text_or_path, source):
    """The document (text, or the bytes of a file: the reader decodes them) and its name.  A path is a str or
    os.PathLike naming an existing file; its size is checked before it is read."""
    from .paper import MAX_PAPER_CHARS

    if isinstance(text_or_path, os.PathLike) or (isinstance(text_or_path, str) and "\n" not in text_or_path and
                                                 len(text_or_path) < 4096 and os.path.isfile(text_or_path)):
        path = os.fspath(text_or_path)
        if not os.path.isfile(path):
            raise InvalidParameterError("paper", path, "a TeX file that exists")
        if os.path.getsize(path) > 4 * MAX_PAPER_CHARS:
            raise InvalidParameterError("paper", path, f"a TeX file of at most {MAX_PAPER_CHARS} characters")
        with open(path, "rb") as fh:
            return fh.read(), source or os.path.basename(path)
    return text_or_path, source or "PAPER.tex"


def _one_line(exc) -> str:
    return " ".join(str(exc).split())[:400]


def _row(d, mapping, kw) -> dict:
    """Check one display (never raises for the display's own faults: they become a skipped or failed row)."""
    row = {"label": d.label, "tag": getattr(d, "tag", None), "line": d.line, "environment": d.environment, "tex": d.tex,
           "source_tex": d.source_tex, "status": "skipped", "quantity": None}
    if getattr(d, "skip", None):                       # an unsupported macro, unbalanced braces ... (the reader's)
        return dict(row, reason=d.skip)
    quantity = next((mapping[k] for k in (d.label, row["tag"], str(d.line)) if k in mapping), None)
    texs, note, against = [d.tex], None, quantity
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if quantity is None:                  # the left-hand side names it (each equation of a display its own)
                quantity, why = _target(d.tex, kw)
                if quantity is None:
                    return dict(row, reason=why)
            else:
                texs, note = _mapped(d.tex, quantity, kw)
                note = f"--map {d.label or row['tag'] or d.line}={quantity}" + (f"; {note}" if note else "")
            from ..check import check

            res, *more = [check(latex=t, against=against, student=kw["student"], teacher=kw["teacher"],
                                convention=kw["convention"], symbols=kw["symbols"], n=kw["n"], dps=kw["dps"],
                                ell=kw["ell"]) for t in texs]
            res.parts = list(res.parts) + more          # a chain after the paper's own name: each side
            res.verdict += f" [+ {len(more)} more side(s): {'; '.join(p.status for p in more)}]" if more else ""
        except InvalidParameterError as exc:
            return dict(row, quantity=quantity, reason=_one_line(exc))
        except (ConvergenceError, ResourceError) as exc:
            return dict(row, quantity=quantity, status="failed", reason=f"numerical failure: {_one_line(exc)}")
        except OnestepError as exc:
            return dict(row, quantity=quantity, reason=_one_line(exc))
        except Exception as exc:  # noqa: BLE001  (one display's fault never aborts the paper; reported, not hidden)
            return dict(row, quantity=quantity, status="failed",
                        reason=f"internal error: {type(exc).__name__}: {_one_line(exc)} (please report it)")
    u, w = res.understood or {}, res.worst
    row.update(status=res.overall, quantity=", ".join(dict.fromkeys([res.against] + [p.against for p in res.parts])),
               verdict=res.verdict, sampled=dict(res.sampled), fixed={k: str(v) for k, v in res.fixed.items()},
               reading={k: u.get(k) for k in ("convention", "formula", "latex", "names", "lhs", "relation") if k in u},
               proof={"status": res.proof.get("status"), "detail": res.proof.get("detail")},
               worst=None if w is None else {k: w.get(k) for k in ("point", "formula", "quantity", "quantity_error")},
               parts=[{"quantity": p.against, "formula": p.formula, "status": p.status, "verdict": p.verdict}
                      for p in res.parts], warnings=sorted({_one_line(c.message) for c in caught}))
    if note:
        row["note"] = note
    if row["status"] == "failed":
        row["reason"] = res.verdict
    return row


def _target(tex, kw):
    """``(quantity, None)``: the quantity the display's (first) left-hand side names; or ``(None, why)``.  Only the
    left-hand side is read here (check reads the whole display once)."""
    from .equation import split_display
    from .tex import equation_target
    from .texlex import TexError, join_tokens, tokens

    try:
        eqs = split_display(tokens(tex))
    except TexError:
        eqs = None                              # equation_target says why, in one line
    if eqs == []:
        return None, "no relation ('=', ':=', '\\to' ...): a formula, not an equation"
    with warnings.catch_warnings(record=True):          # check warns, on the whole display
        try:
            q = equation_target(f"{join_tokens(eqs[0].sides[0])} = 0" if eqs else tex, kw["convention"],
                                symbols=kw["symbols"], ell=kw["ell"])
        except InvalidParameterError:                   # the message, on the display as written
            q = equation_target(tex, kw["convention"], symbols=kw["symbols"], ell=kw["ell"])
    return q, None if q else ("left-hand side names no quantity (check it with --map LABEL=QUANTITY)")


def _mapped(tex, quantity, kw):
    """The TeX to check for a display mapped to ``quantity``: ``[tex]`` as written when its left-hand side reads (or
    it has none); else each right-hand side of the chain alone, the left-hand side taken to be the quantity (the
    returned note says so)."""
    from .equation import split_display
    from ..registry import quantity_of
    from .tex import read_equations
    from .texlex import TexError, join_tokens, tokens

    try:
        eqs = split_display(tokens(tex))
    except TexError as exc:
        raise InvalidParameterError("latex", tex[:60], "an equation the checker takes", str(exc)) from None
    if len(eqs) != 1:
        return [tex], None
    lhs, e = join_tokens(eqs[0].sides[0]), eqs[0]
    with warnings.catch_warnings(record=True):          # check warns, on the whole display
        try:
            read_equations(lhs, quantity_of(quantity).family, kw["convention"], kw["symbols"], ell=kw["ell"])
            return [tex], None
        except InvalidParameterError:
            pass
    sign = {">= 0": r" \ge 0", "<= 0": r" \le 0", "> 0": " > 0", "< 0": " < 0"}.get(e.sign, "")
    kind = {"def": "a definition", "approx": "'≈'", "limit": "a limit"}
    how = "; ".join(f"{kind[r]} checked as '='" for r in dict.fromkeys(e.relations) if r in kind)
    return [join_tokens(side) + sign for side in e.sides[1:]], (f"the left-hand side {lhs} is not in the "
                                                                f"{kw['convention']} table: taken to be {quantity}"
                                                                + (f" ({how})" if how else ""))
