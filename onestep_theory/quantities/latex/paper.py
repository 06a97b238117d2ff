r"""A paper's displayed equations, read as its author typeset them, for ``check-paper`` (docs/theory/checking.md §8).

:func:`read_paper` takes the TeX source of a paper and returns each displayed equation as one :class:`Display`:

- **Displays**: ``equation``, ``align``, ``gather``, ``multline``, ``eqnarray``, ``flalign``, ``alignat`` (starred or
  not), ``displaymath``, ``$$…$$`` and ``\[…\]``. Inline math (``$…$``, ``\(…\)``) is prose, not an equation. Rows of
  ``align``-like environments (and of a ``split``/``aligned``/``gathered`` filling an ``equation``) are split at
  ``\\``, ``&`` dropped; a row that starts with a relation (``&= …``) continues the left-hand side of the row before,
  as papers write chains (``a &= b \\ &= c`` gives ``a = b`` and ``a = c``); a row that starts with a binary operator
  (``&\quad + …``), or follows a row ending in one, continues the same equation, as does every row of ``multline``.
  ``\label``, ``\tag``, ``\nonumber``/``\notag`` and ``\intertext`` belong to their row.
- **Comments**, ``verbatim``-like environments, ``\verb`` and ``\iffalse … \fi`` are blanked before anything is read
  (line numbers kept: ``Display.line`` is the 1-based source line where the row starts).
- **Macros without arguments** (``\newcommand``, ``\renewcommand``, ``\providecommand``, ``\DeclareRobustCommand``,
  ``\def``/``\gdef``, ``\NewDocumentCommand`` with an empty argument list, ``\DeclareMathOperator``) are expanded
  in document order, at most :data:`MAX_MACRO_DEPTH` levels deep and to :data:`MAX_EXPANDED_CHARS` characters (a
  recursive macro is reported, never a hang); a body carrying a script is braced before a script (``\mus^2`` with
  ``\mus`` = ``\mu_1^\star`` reads ``{\mu_1^\star}^2``, as meant: TeX itself would stop at the double
  superscript).  Macros with arguments, ``\let``, ``\edef`` and every primitive that reads, writes or re-programs
  TeX (``\input``, ``\write18``, ``\catcode``, ``\csname`` …) are **never executed**: each is listed in
  ``Paper.unsupported`` with its line, and a display that uses one is kept with ``skip`` saying why.  A display
  that cannot be read (unbalanced braces, no ``\end``, too long, too deep) is kept with its reason; only input that
  is not a paper at all (not text, over :data:`MAX_PAPER_CHARS` characters, over :data:`MAX_DISPLAYS` displays)
  raises :class:`~onestep_theory.core.errors.InvalidParameterError`.

The document is scanned by linear regular-expression passes (each paragraph at most once per delimiter), so no
input makes the reader slow; within a display, pylatexenc's LatexWalker reads the nodes (rows, ``\\[2pt]``,
labels, nested ``cases``/``array``).  No TeX is run.

>>> p = read_paper(r'''\newcommand{\den}{\mu_1^{\star 2}+\mu_2^\star}  % the denominator
... \begin{align}
... \gamma^2 &= \frac{\mu_1^{\star 2}}{\den}\label{eq:g} \\
...          &= 1 - \frac{\mu_2^\star}{\den}\nonumber
... \end{align}''')
>>> [(d.label, d.line, d.tex) for d in p.displays]      # doctest: +NORMALIZE_WHITESPACE
[('eq:g', 3, '\\gamma^2 = \\frac{\\mu_1^{\\star 2}}{\\mu_1^{\\star 2}+\\mu_2^\\star}'),
 (None, 4, '\\gamma^2 = 1 - \\frac{\\mu_2^\\star}{\\mu_1^{\\star 2}+\\mu_2^\\star}')]
"""

from __future__ import annotations

import bisect
import dataclasses
import re

from ...core.errors import InvalidParameterError
from ...core.results import Result, provenance
from .paperlex import (CONTROL, DEFINE, FORBID, FORBIDDEN, KEPT, PARAGRAPH, TOKEN, mask, opt_arg,
                       split_rows, tex_arg, unreadable)

__all__ = ["Display", "Paper", "read_paper", "INSTALL", "MAX_PAPER_CHARS", "MAX_DISPLAYS", "MAX_DISPLAY_CHARS",
           "MAX_MACRO_DEPTH", "MAX_EXPANDED_CHARS", "MAX_NESTING", "FORBIDDEN"]

#: How to install the optional TeX reader.
INSTALL = "pip install 'onestep_theory[latex]'"
MAX_PAPER_CHARS = 2_000_000     #: a paper's source, characters
MAX_DISPLAYS = 2000             #: displayed equations (rows) in one paper
MAX_DISPLAY_CHARS = 20_000      #: one display's body, characters
MAX_MACRO_DEPTH = 20            #: levels of macro expansion
MAX_EXPANDED_CHARS = 20_000     #: one equation after macro expansion, characters
MAX_NESTING = 40                #: braces and environments nested in one display
_MAX_LISTED = 200               # unsupported entries listed (the rest counted in one entry)
_ROWS = {"align", "flalign", "alignat", "xalignat", "eqnarray", "gather"}       # each row an equation
_ONE = {"equation", "displaymath", "multline"}                                 # one equation
_ENVS = {e + s for e in _ROWS | _ONE for s in ("", "*")} - {"displaymath*"}


@dataclasses.dataclass
class Display(Result):
    r"""One displayed equation: ``tex`` (macro-expanded, one equation: ``&``, ``\label``, ``\tag``, ``\nonumber``
    removed, a continued chain's left-hand side prefixed, spaces collapsed), ``label``, ``line`` (1-based, where the
    row starts), ``environment`` (``align*``, ``$$``, ``\[`` …), ``source_tex`` (the row as written, comments
    removed, macros not expanded), ``tag`` (a ``\tag{…}``), ``numbered`` (LaTeX gives it a number) and ``skip``
    (``None``, or why it cannot be checked: an unsupported macro, unbalanced braces …)."""

    tex: str
    label: str | None
    line: int
    environment: str
    source_tex: str
    tag: str | None = None
    numbered: bool = False
    skip: str | None = None


@dataclasses.dataclass
class Paper(Result):
    """The displays of a paper in source order, its macros (``name -> body``, as defined at the end of the
    document), the ``unsupported`` TeX it met (``{name, line, reason}``: never executed) and its ``source``."""

    displays: list
    macros: dict
    unsupported: list
    source: str
    provenance: dict = dataclasses.field(default_factory=dict)

    @property
    def checkable(self) -> list:
        """The displays without a ``skip`` reason."""
        return [d for d in self.displays if d.skip is None]


class _Unsupported(str):
    """A macro that is recorded, never expanded (the text is the reason)."""


def read_paper(text, *, source: str = "PAPER.tex") -> Paper:
    r"""The displayed equations of the paper whose TeX source is ``text`` (see the module docstring,
    docs/theory/checking.md §8).  ``source`` names the paper in messages and in the result."""
    if not isinstance(source, str):
        raise InvalidParameterError("source", repr(source)[:40], "the paper's name as text")
    name = " ".join(source.split())[:200]              # one line in every message
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidParameterError("paper", name, "TeX source in UTF-8", str(exc)[:120]) from None
    if not isinstance(text, str):
        raise InvalidParameterError("paper", repr(text)[:40], "the TeX source of a paper as text")
    if len(text) > MAX_PAPER_CHARS:
        raise InvalidParameterError("paper", name, f"at most {MAX_PAPER_CHARS} characters of TeX",
                                    f"{len(text)} given")
    try:
        import pylatexenc.latexwalker  # noqa: F401
    except ImportError:
        raise InvalidParameterError("paper", name, f"the optional TeX reader installed: {INSTALL}") from None
    reader = _Reader(text.replace("\r\n", "\n").replace("\r", "\n"), name)
    reader.scan()
    reader.unsupported.sort(key=lambda u: (u["name"] == "...", u["line"]))
    macros = {k: v for k, v in reader.macros.items() if not isinstance(v, _Unsupported)}
    from pylatexenc import __version__ as plv

    return Paper(reader.displays, macros, reader.unsupported, source,
                 provenance(method=f"document scanner + pylatexenc {plv} LatexWalker (no TeX run)"))


class _Reader:
    """One pass over the masked source in document order: definitions update the macro table, displays are read
    with the table as it stands there (as TeX would)."""

    def __init__(self, text: str, source: str):
        self.text, self.source, self.masked = text, source, mask(text)
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.macros, self.where, self.displays, self.unsupported = {}, {}, [], []
        self.failed, self.pars, self.dropped, self.recursive, self.opened = {}, (-1, -1), 0, set(), 0
        for m in FORBID.finditer(self.masked):
            name = "\\write18" if m.group(1) == "write" and self.masked.startswith("18", m.end()) else m.group(0)
            self.record(name, m.start(), "a TeX primitive that reads, writes or re-programs TeX: never executed")

    def line(self, pos: int) -> int:
        return bisect.bisect_right(self.newlines, pos - 1) + 1

    def record(self, name: str, pos: int, reason: str, line: int | None = None) -> None:
        line = self.line(pos) if line is None else line
        if len(self.unsupported) < _MAX_LISTED:
            self.unsupported.append({"name": name, "line": line, "reason": reason})
        else:
            self.dropped += 1
            self.unsupported[-1] = {"name": "...", "line": line,
                                    "reason": f"{self.dropped + 1} more unsupported commands not listed"}

    def par_end(self, pos: int) -> int:
        """Where the paragraph containing ``pos`` ends (a blank line of the source: no display crosses one)."""
        lo, hi = self.pars
        if not lo <= pos < hi:
            m = PARAGRAPH.search(self.text, pos)
            self.pars = (pos, m.start() if m else len(self.text))
        return self.pars[1]

    def canon(self, m) -> str:
        """A token as a delimiter: ``\\begin{E}``/``\\end{E}`` normalised, a macro standing for a delimiter
        (``\\def\\be{\\begin{equation}}``) replaced by it."""
        if m.group(1):
            return "\\%s{%s}" % (m.group(1), m.group(2).strip())
        body = self.macros.get(m.group(3)) if m.group(3) else None
        if body is not None and not isinstance(body, _Unsupported):
            return " ".join(body.split()).replace("\\begin {", "\\begin{").replace("\\end {", "\\end{")
        return m.group(0)

    def scan(self) -> None:
        s, pos = self.masked, 0
        while (m := TOKEN.search(s, pos)) is not None:
            pos, tok, word = m.end(), self.canon(m), m.group(3)
            if tok == "\\end{document}":
                break
            if word in DEFINE and tok == m.group(0):
                pos = self.define(word, m.start(), m.end())
            elif tok.startswith("\\begin{") and tok[7:-1] in _ENVS:
                env = tok[7:-1]
                pos = self.display(env, m, "\\end{%s}" % env)
            elif tok in ("\\[", "$$"):
                pos = self.display(tok, m, "\\]" if tok == "\\[" else "$$")
            elif tok in ("$", "\\("):                    # inline math: prose, skipped to its end
                close = self.find(pos, "\\)" if tok == "\\(" else "$")
                pos = close.start() + 1 if close is not None and close.group(0) == "$$" else (
                    close.end() if close is not None else pos)

    def find(self, pos: int, want: str):
        """The first token at or after ``pos`` that is ``want`` (as :meth:`canon` reads it), in this paragraph."""
        limit = self.par_end(pos)
        if self.failed.get(want, -1) >= limit:
            return None
        for m in TOKEN.finditer(self.masked, pos, limit):
            if self.canon(m) == want or (want == "$" and m.group(0) == "$$"):
                return m
        self.failed[want] = limit
        return None

    def define(self, word: str, start: int, pos: int) -> int:
        """Read the definition after ``\\word``; return where scanning resumes."""
        s, what = self.masked, "\\" + word
        if word in ("def", "gdef", "edef", "xdef", "let"):
            nm = CONTROL.match(s, pos + len(s[pos:pos + 50]) - len(s[pos:pos + 50].lstrip()))
            if nm is None:
                return pos
            name, pos = nm.group(0), nm.end()
            if word == "let":
                rest = re.compile(r"\s*=?\s*(?:\\[A-Za-z]+|\\.|.)", re.S).match(s, pos)
                self.set(name, _Unsupported("defined by \\let: not executed"), start)
                return rest.end() if rest else pos
            brace = s.find("{", pos, pos + 200)          # the parameter text: short in any real paper
            body = tex_arg(s, brace) if brace >= 0 else None
            if body is None:
                self.record(name, start, f"{what} without a readable body: not executed")
                return pos
            params = s[pos:brace]
            if params.strip() or word in ("edef", "xdef"):
                why = "takes arguments" if params.strip() else "expands its body when defined"
                self.set(name, _Unsupported(f"{what} {why}: never executed"), start)
            else:
                self.set(name, body[0], start)
            return body[1]
        star = re.compile(r"\s*\*").match(s, pos)
        pos = star.end() if star else pos
        got = tex_arg(s, pos)
        if got is None:
            self.record(what, start, f"{what} without a readable name: not executed")
            return pos
        name, pos = got[0].strip(), got[1]
        if word in ("newenvironment", "renewenvironment"):
            nargs, pos = opt_arg(s, pos)
            _, pos = opt_arg(s, pos) if nargs else (None, pos)
            for _ in range(2):
                got = tex_arg(s, pos)
                pos = got[1] if got else pos
            self.record(" ".join(name.split())[:60], start, f"an environment defined by the paper ({what}): not read")
            return pos
        if not re.fullmatch(r"\\[A-Za-z]+|\\.", name):
            self.record(what, start, f"{what} of {name[:40]!r}, not a command name: not executed")
            return pos
        if word.endswith("DocumentCommand"):
            spec = tex_arg(s, pos)
            pos, nargs = (spec[1], spec[0].strip() or None) if spec else (pos, "?")
        elif word == "DeclareMathOperator":
            nargs = None
        else:
            nargs, pos = opt_arg(s, pos)
            default, pos = opt_arg(s, pos) if nargs is not None else (None, pos)
            nargs = None if nargs is not None and nargs.strip() == "0" and default is None else nargs
        body = tex_arg(s, pos)
        if body is None:
            self.record(name, start, f"{what} without a readable body: not executed")
            return pos
        if nargs is not None:
            self.set(name, _Unsupported(f"{what} with arguments ({' '.join(nargs.split())[:20]}): never executed"), start)
        elif word == "DeclareMathOperator":
            self.set(name, "\\operatorname%s{%s}" % ("*" if star else "", body[0]), start)
        elif not (word == "providecommand" and name[1:] in self.macros):
            self.set(name, body[0], start)
        return body[1]

    def set(self, name: str, body: str, pos: int) -> None:
        if name[1:] in KEPT:
            self.record(name, pos, "a redefinition of a command the reader relies on: not executed")
            return
        self.macros[name[1:]] = body
        self.where[name[1:]] = self.line(pos)
        if isinstance(body, _Unsupported):
            self.record(name, pos, str(body))

    def expand(self, tex: str):
        """``(tex with every macro of the table expanded, None)`` or ``(tex, why it cannot be)``."""
        def sub(m):
            body = self.macros.get(m.group(1)) if m.group(1) else None
            if body is None or isinstance(body, _Unsupported):
                return m.group(0)
            seen.add(m.group(1))
            size[0] += len(body) + 3
            if size[0] > MAX_EXPANDED_CHARS:
                raise OverflowError
            if re.search(r"[\^_]", body) and re.match(r"\s*[\^_]", m.string[m.end():m.end() + 40]):
                return "{" + body + "}"                  # \mus^2 with \mus = \mu_1^\star: (mu_1^star)^2
            return (" " if body[:1].isalpha() else "") + body
        for _ in range(MAX_MACRO_DEPTH + 1):
            seen, size = set(), [len(tex)]
            try:
                tex = CONTROL.sub(sub, tex)
            except OverflowError:
                return tex, f"macro expansion longer than {MAX_EXPANDED_CHARS} characters (a macro that grows)"
            if not seen:
                break
        else:
            for name in sorted(seen - self.recursive):
                self.recursive.add(name)
                self.record("\\" + name, 0, f"still expanding after {MAX_MACRO_DEPTH} levels (recursive?)",
                            self.where.get(name, 0))
            return tex, (f"macro {', '.join(chr(92) + n for n in sorted(seen))} still expanding after "
                         f"{MAX_MACRO_DEPTH} levels (recursive, or nested deeper)")
        for m in CONTROL.finditer(tex):
            w = m.group(1)
            if w in FORBIDDEN or w in DEFINE:
                return tex, f"uses \\{w}: " + ("a TeX primitive that is never executed" if w in FORBIDDEN else
                                                "a definition inside a display, not read")
            if isinstance(self.macros.get(w), _Unsupported):
                return tex, f"uses \\{w} (line {self.where[w]}): {self.macros[w]}"
        return tex, None

    def add(self, **kw) -> None:
        if len(self.displays) >= MAX_DISPLAYS:
            raise InvalidParameterError("paper", self.source, f"at most {MAX_DISPLAYS} displayed equations",
                                        f"more from line {kw['line']} on")
        self.displays.append(Display(**kw))

    def display(self, env: str, m, closer: str) -> int:
        """Read the display opened by the token ``m``; return where scanning resumes."""
        close, line = self.find(m.end(), closer), self.line(m.start())
        if close is None:
            self.add(tex="", label=None, line=line, environment=env,
                     source_tex=" ".join(self.masked[m.start():m.start() + 400].split())[:200],
                     skip=f"no {closer} before the paragraph ends: not read")
            return m.end()
        start, end = m.end(), close.start()
        if env.startswith(("alignat", "xalignat")):
            got = tex_arg(self.masked, start)
            start = got[1] if got else start
        body = self.masked[start:end]
        if not body.strip():
            return close.end()
        self.opened += 1
        if self.opened > MAX_DISPLAYS:
            raise InvalidParameterError("paper", self.source, f"at most {MAX_DISPLAYS} displayed equations",
                                        f"more from line {line} on")
        numbered = not env.endswith("*") and env[0] != "$" and env[0] != "\\" and env != "displaymath"
        why = unreadable(body, MAX_DISPLAY_CHARS, MAX_NESTING)
        if why:
            self.add(tex="", label=None, line=line, environment=env, source_tex=" ".join(body.split())[:200],
                     skip=why)
            return close.end()
        try:
            rows = split_rows(body, start, env.startswith("multline"))
        except Exception as exc:  # noqa: BLE001  (any parser failure makes this display unreadable, not the paper)
            self.add(tex="", label=None, line=line, environment=env, source_tex=" ".join(body.split())[:200],
                     skip=f"not readable by the TeX parser ({type(exc).__name__})")
            return close.end()
        for r in rows:
            tex, skip = self.expand(r.text)
            self.add(tex=" ".join(tex.split()), label=r.label, line=self.line(r.start), environment=env,
                     source_tex=" ".join(self.masked[r.first:r.end].split()), tag=r.tag,
                     numbered=(numbered and r.numbered) or r.tag is not None, skip=skip)
        return close.end()
