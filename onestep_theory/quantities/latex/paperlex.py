r"""The TeX lexing behind :func:`~onestep_theory.quantities.latex.paper.read_paper` (docs/theory/checking.md §8): what is
blanked before a paper is read (comments, verbatim, ``\iffalse``), a macro definition's arguments, and the rows of
one display (pylatexenc's LatexWalker reads the nodes; rows are split at ``\\`` and joined where a paper continues
an equation on the next row).  Nothing here runs TeX; every loop is bounded by its input's length.
"""

from __future__ import annotations

import dataclasses
import functools
import re

__all__ = ["FORBIDDEN", "DEFINE", "KEPT", "TOKEN", "CONTROL", "PARAGRAPH", "FORBID", "mask", "tex_arg", "opt_arg",
           "unreadable", "Row", "split_rows", "lhs_of"]

MAX_DEF = 20_000                #: a definition's argument, characters
_MASKED = ("verbatim", "verbatim*", "Verbatim", "lstlisting", "minted", "comment")
_INNER = {e + s for e in ("align", "alignat", "flalign", "gather", "eqnarray") for s in ("", "*")} | {
    "split", "aligned", "alignedat", "gathered"}            # (an align inside $$…$$: Markdown papers write it)
#: The commands that define macros or environments (read by the scanner, never run).
DEFINE = frozenset({"newcommand", "renewcommand", "providecommand", "DeclareRobustCommand", "def", "gdef", "edef",
                    "xdef", "let", "DeclareMathOperator", "NewDocumentCommand", "RenewDocumentCommand",
                    "ProvideDocumentCommand", "DeclareDocumentCommand", "newenvironment", "renewenvironment"})
#: TeX that reads or writes files, runs programs or re-programs the reader: never executed, always reported.
FORBIDDEN = frozenset(
    "input include includeonly InputIfFileExists IfFileExists import subimport inputfrom subinputfrom includefrom "
    "write immediate openout openin closeout closein read readline newwrite newread special csname endcsname "
    "expandafter noexpand futurelet catcode lccode uccode mathcode delcode sfcode lowercase uppercase scantokens "
    "everymath everydisplay everypar everyjob everycr everyhbox everyvbox afterassignment aftergroup directlua "
    "latelua luaexec luadirect ShellEscape shellescape pdfshellescape endinput globaldefs makeatletter "
    "verbatiminput lstinputlisting inputminted mathchardef chardef countdef dimendef skipdef toksdef outer "
    "detokenize unexpanded".split())
#: Commands a paper may not redefine for the reader (it keeps their standard meaning and reports the attempt).
KEPT = DEFINE | FORBIDDEN | {"begin", "end", "label", "tag", "nonumber", "notag", "intertext", "left", "right"}

_MASK = re.compile(r"\\verb\*?([^A-Za-z\s*])[^\n]*?\1|\\begin\s*\{(" + "|".join(map(re.escape, _MASKED))
                   + r")\}|\\(?:iffalse|if0)(?![A-Za-z])|\\[\\%]|%[^\n]*")
_IFS = re.compile(r"\\(if[A-Za-z]*|fi)(?![A-Za-z])|\\.", re.S)
#: A scanner token: ``\begin{E}``/``\end{E}`` (groups 1, 2), a control word (group 3), a control symbol, ``$$``, ``$``.
TOKEN = re.compile(r"\\(begin|end)\s*\{([^{}\n]{0,60})\}|\\([A-Za-z]+)|\\.|\$\$|\$", re.S)
CONTROL = re.compile(r"\\([A-Za-z]+)|\\.", re.S)        #: a control word (group 1) or symbol
PARAGRAPH = re.compile(r"\n[ \t]*\n")                   #: a blank line (no display crosses one)
FORBID = re.compile(r"\\(" + "|".join(sorted(FORBIDDEN, key=len, reverse=True)) + r")(?![A-Za-z])")
_SPACE = r"(?:\s|&|\\[,;:! ]|\\q?quad(?![A-Za-z])|\\displaystyle|\\[hv]?phantom\{[^{}]*\}|\\[hv]space\*?\{[^{}]*\})*"
_REL = (r"(?:=|:=|<|>|\\(?:le|leq|ge|geq|leqslant|geqslant|approx|equiv|simeq|sim|to|rightarrow|longrightarrow"
        r"|coloneqq|eqqcolon|triangleq|doteq|cong|propto|asymp|ne|neq|stackrel|overset|xrightarrow)(?![A-Za-z]))")
_BIN = r"(?:[-+]|\\(?:cdot|times|pm|mp)(?![A-Za-z]))"
_LEADS_REL = re.compile("^" + _SPACE + _REL)
_LEADS_BIN = re.compile("^" + _SPACE + _BIN)
_ENDS_OP = re.compile("(?:" + _BIN + "|" + _REL + r"|\\left[(\[.]|[({])" + _SPACE + "$")
_META = ("label", "tag", "nonumber", "notag")


def mask(text: str) -> str:
    """``text`` with comments, verbatim-like environments, ``\\verb`` and ``\\iffalse…\\fi`` blanked to spaces
    (newlines kept, so every position and line stays where it was).  An unclosed verbatim or ``\\iffalse`` blanks
    the rest, as TeX would."""
    out, pos, n = [], 0, len(text)
    for m in _MASK.finditer(text):
        g = m.group(0)
        if m.start() < pos or g[:2] in ("\\\\", "\\%"):
            continue
        end = m.end()
        if m.group(2):
            k = text.find(r"\end{" + m.group(2) + "}", end)
            end = n if k < 0 else k + len(m.group(2)) + 6
        elif g.startswith(("\\iffalse", "\\if0")):
            depth, end = 1, n
            for f in _IFS.finditer(text, m.end()):
                w = f.group(1) or ""
                depth += (w.startswith("if") and w != "ifthenelse") - (w == "fi")
                if depth == 0:
                    end = f.end()
                    break
        out += [text[pos:m.start()], re.sub(r"[^\n]", " ", text[m.start():end])]
        pos = end
    return "".join(out + [text[pos:]])


def tex_arg(s: str, i: int):
    """The TeX argument at ``s[i]`` (spaces skipped): ``(content, end)`` of a braced group or of a single token, or
    ``None`` (nothing there, or unbalanced within :data:`MAX_DEF` characters)."""
    while i < len(s) and s[i] in " \t\n":
        i += 1
    if i >= len(s) or s[i] in "}#":
        return None
    if s[i] != "{":
        m = CONTROL.match(s, i) or re.compile(".", re.S).match(s, i)
        return m.group(0), m.end()
    depth, j, stop = 0, i, min(len(s), i + MAX_DEF)
    while j < stop:
        c = s[j]
        if c == "\\":
            j += 2
            continue
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return s[i + 1:j], j + 1
        j += 1
    return None


def opt_arg(s: str, i: int):
    """An optional argument ``[…]`` at ``s[i]`` (spaces skipped): ``(content or None, end)``."""
    m = re.compile(r"\s*\[([^\[\]{}]{0,200})\]").match(s, i)
    return (m.group(1), m.end()) if m else (None, i)


def unreadable(body: str, max_chars: int, max_nesting: int) -> str | None:
    """Why a display's body cannot be read (too long, braces or environments unbalanced or too deep), or None."""
    if len(body) > max_chars:
        return f"display longer than {max_chars} characters"
    depth = 0
    for m in re.finditer(r"\\(?:begin|end)(?![A-Za-z])|\\.|[{}]", body, re.S):
        g = m.group(0)
        depth += (g in ("{", "\\begin")) - (g in ("}", "\\end"))
        if depth < 0:
            return "unbalanced braces (or \\end without \\begin)"
        if depth > max_nesting:
            return f"braces or environments nested deeper than {max_nesting}"
    return "unbalanced braces (or \\begin without \\end)" if depth else None


@dataclasses.dataclass
class Row:
    """One equation of a display: where it starts and ends in the source, its text parts, label, tag, whether
    LaTeX numbers it, and the left-hand side of its chain."""

    start: int | None = None                          # where its formula starts (its line)
    end: int | None = None                            # where it ends (its \\\\ or the display's end)
    first: int | None = None                          # where anything of it starts (a \\label included)
    parts: list = dataclasses.field(default_factory=list)
    label: str | None = None
    tag: str | None = None
    numbered: bool = True
    lhs: str | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts).strip()

    def join(self, other: Row) -> None:
        """``other`` continues this equation."""
        self.parts.append(" " + other.text)
        self.end, self.label, self.tag = other.end, self.label or other.label, self.tag or other.tag
        self.first = self.first if self.first is not None else other.first
        self.numbered = self.numbered or other.numbered


@functools.lru_cache(maxsize=1)
def _context():
    from pylatexenc import macrospec
    from pylatexenc.latexwalker import get_default_latex_context_db

    db = get_default_latex_context_db()
    db.add_context_category("onestep-paper", prepend=True, macros=[
        macrospec.std_macro("tag", "*{"), macrospec.std_macro("intertext", "{"),
        macrospec.std_macro("shortintertext", "{"), macrospec.std_macro("nonumber", ""),
        macrospec.std_macro("notag", "")], environments=[
        macrospec.std_environment("aligned", "["), macrospec.std_environment("gathered", "["),
        macrospec.std_environment("alignedat", "{")])
    return db


def _meta(n, row: Row) -> bool:
    """Take ``\\label``, ``\\tag``, ``\\nonumber``, ``\\notag`` into ``row``; whether ``n`` was one of them."""
    if getattr(n, "macroname", None) not in _META:
        return False
    if n.macroname in ("nonumber", "notag"):
        row.numbered = False
        return True
    args = [a for a in (n.nodeargd.argnlist if n.nodeargd else []) if a is not None]
    value = args[-1].latex_verbatim() if args else ""
    value = " ".join((value[1:-1] if value.startswith("{") and value.endswith("}") else value).split())
    if n.macroname == "label":
        row.label = value
    else:
        row.tag = value
    return True


def split_rows(body: str, offset: int, one: bool) -> list:
    """The equations of a display body (at ``offset`` in the source) as :class:`Row` s: rows split at ``\\\\``,
    ``&`` dropped; a row starting with a relation continues its chain's left-hand side; a row starting with a binary
    operator, or after a row ending in an operator or relation, continues the equation above (so does every row
    when ``one``: ``multline``).  A ``split``/``aligned``/``gathered`` (or an ``align``) filling the body gives
    the rows."""
    from pylatexenc.latexwalker import LatexEnvironmentNode, LatexSpecialsNode, LatexWalker

    nodes, _, _ = LatexWalker(body, latex_context=_context(), tolerant_parsing=True).get_latex_nodes()
    if "".join(n.latex_verbatim() for n in nodes) != body:
        raise ValueError("the parser did not read the whole display")
    inner = [n for n in nodes if getattr(n, "macroname", None) not in _META and n.latex_verbatim().strip()]
    outer = Row()
    if len(inner) == 1 and inner[0].isNodeType(LatexEnvironmentNode) and inner[0].environmentname in _INNER:
        for n in nodes:                                  # \label etc. around a split: for every row
            _meta(n, outer)
        nodes = inner[0].nodelist
    rows, cur = [], Row()
    for n in nodes:
        pos, name, t = offset + n.pos, getattr(n, "macroname", None), n.latex_verbatim()
        if name == "\\":
            cur.end = pos
            rows.append(cur)
            cur = Row()
            continue
        if cur.first is None and t.strip() and name not in ("intertext", "shortintertext"):
            cur.first = pos + len(t) - len(t.lstrip())
        if not (_meta(n, cur) or name in ("intertext", "shortintertext")):
            if cur.start is None and t.strip():
                cur.start = pos + len(t) - len(t.lstrip())
            cur.parts.append(" " if n.isNodeType(LatexSpecialsNode) and t == "&" else t)
        cur.end = pos + len(t)
    rows.append(cur)
    out = []
    for r in rows:
        if not r.text:
            if out and r.label:                          # a label alone on its row: the row above's
                out[-1].label = out[-1].label or r.label
            continue
        r.label, r.tag, r.numbered = r.label or outer.label, r.tag or outer.tag, r.numbered and outer.numbered
        prev = out[-1] if out else None
        if prev is not None and (one or _LEADS_BIN.match(r.text) or _ENDS_OP.search(prev.text[-300:])):
            prev.join(r)
            continue
        if prev is not None and _LEADS_REL.match(r.text):
            lhs = prev.lhs if prev.lhs is not None else lhs_of(prev.text)
            if lhs is None:                              # no relation above: that row is the left-hand side
                prev.join(r)
                prev.lhs = lhs_of(prev.text)
                continue
            r.parts, r.lhs = [lhs + " " + r.text], lhs
        out.append(r)
    return out


def lhs_of(tex: str) -> str | None:
    """The text before the first relation outside braces (``None`` when there is none)."""
    depth = 0
    for m in re.finditer(r"\\[A-Za-z]+|\\.|.", tex, re.S):
        g = m.group(0)
        depth += (g == "{") - (g == "}")
        if depth == 0 and (re.fullmatch(_REL, g) or (g == ":" and tex.startswith("=", m.end()))):
            return tex[:m.start()].strip() or None
    return None
