r"""The document reader of check-paper (onestep_theory.quantities.latex.paper.read_paper): every display environment,
rows and continued rows, labels, tags and lines, comments, macros (nested, redefined, recursive, with arguments),
hostile TeX (never run, never a hang), and whole documents fuzzed — against documents whose equations, lines and
labels the test itself knows (it wrote them)."""

from __future__ import annotations

import json
import random
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pylatexenc")

from onestep_theory.core.errors import InvalidParameterError  # noqa: E402
from onestep_theory.quantities.latex.paper import (INSTALL, MAX_DISPLAYS, MAX_MACRO_DEPTH, MAX_PAPER_CHARS,  # noqa: E402
                                             Display, Paper, read_paper)


def texs(doc, **kw):
    return [d.tex for d in read_paper(doc, **kw).displays]


_REFERENCE = []


def _reference_seconds() -> float:
    """The time of a linear reference on this machine, now: reading 1 MB of dense tokens (braces, commands, letters;
    measured in the same process, so a loaded machine or coverage tracing slows both alike)."""
    if not _REFERENCE:
        doc = "a{b}\\x " * 150_000
        t = time.perf_counter()
        read_paper(doc)
        _REFERENCE.append(time.perf_counter() - t)
    return _REFERENCE[0]


def quick(doc, seconds=5.0):
    """read_paper on a hostile document: a Paper or a one-line InvalidParameterError, in linear time: within
    ``seconds`` on an idle machine, or 10 times the linear reference if this machine is slower (the hostile
    documents take 0.5-3.5 times the reference; a quadratic case takes far longer: 3000 continued rows took 9.5 s
    before the fix, 0.14 s after)."""
    t = time.perf_counter()
    try:
        out = read_paper(doc)
    except InvalidParameterError as exc:
        assert "\n" not in str(exc)
        out = exc
    took = time.perf_counter() - t
    assert took < max(seconds, 10 * _reference_seconds()), (took, _reference_seconds())
    return out


ENVS = [("equation", True), ("equation*", False), ("align", True), ("align*", False), ("gather", True),
        ("gather*", False), ("multline", True), ("multline*", False), ("eqnarray", True), ("eqnarray*", False),
        ("flalign", True), ("flalign*", False), ("displaymath", False)]


@pytest.mark.parametrize("env, numbered", ENVS)
def test_every_environment_gives_its_equation(env, numbered):
    body = "a &= b" if "align" in env else ("a &=& b" if "eqnarray" in env else "a = b")
    doc = f"Prose.\n\\begin{{{env}}}\n  {body}\n\\end{{{env}}}\nMore prose.\n"
    (d,) = read_paper(doc).displays
    assert (d.tex, d.environment, d.line, d.numbered, d.label, d.skip) == ("a = b", env, 3, numbered, None, None)


@pytest.mark.parametrize("open_, close", [("$$", "$$"), (r"\[", r"\]")])
def test_dollar_and_bracket_displays(open_, close):
    (d,) = read_paper(f"one\ntwo {open_} x_1 =\n y {close} three").displays
    assert (d.tex, d.environment, d.line, d.numbered) == ("x_1 = y", open_, 2, False)


def test_alignat_argument_and_inner_split_aligned_gathered():
    assert texs(r"\begin{alignat}{2} a &= b \\ c &= d \end{alignat}") == ["a = b", "c = d"]
    for inner in ("split", "aligned", "gathered"):
        ps = read_paper(f"\\begin{{equation}}\\label{{e}}\\begin{{{inner}}} a &= b \\\\ &= c\\end{{{inner}}}"
                        f"\\end{{equation}}").displays
        assert [(d.tex, d.label) for d in ps] == [("a = b", "e"), ("a = c", "e")], inner


def test_an_align_inside_dollars_as_markdown_papers_write_it():
    assert texs("$$\n\\begin{align}\n a &= b \\\\\n &= c\n\\end{align}\n$$") == ["a = b", "a = c"]


def test_inline_math_is_not_an_equation():
    doc = r"Let $a=b$ and \(c = d\), $x$$y$, a price \$5 = \$5, then $$ e = f $$ and $g=h$."
    assert texs(doc) == ["e = f"]
    assert texs("a stray $ sign\n\nthen \\[ p = q \\]") == ["p = q"]


def test_labels_tags_numbers_and_lines():
    doc = "\n".join([
        r"\documentclass{article}",                     # 1
        r"\begin{document}",                            # 2
        r"\begin{align}",                               # 3
        r"  \Delta_1 &= A \label{eq:d1} \\",            # 4
        r"  \Delta_2 &= B \nonumber \\",                # 5
        r"  r &= C \tag{$\star$}\label{eq:r} \\",       # 6
        r"  c &= D \notag",                             # 7
        r"\end{align}",                                 # 8
        r"\begin{equation*} \gamma = E \tag*{(T)} \end{equation*}",  # 9
        r"\end{document}", r"\begin{equation} after = end \end{equation}"])
    got = [(d.tex, d.label, d.line, d.tag, d.numbered) for d in read_paper(doc).displays]
    assert got == [(r"\Delta_1 = A", "eq:d1", 4, None, True), (r"\Delta_2 = B", None, 5, None, False),
                   ("r = C", "eq:r", 6, r"$\star$", True), ("c = D", None, 7, None, False),
                   (r"\gamma = E", None, 9, "(T)", True)]


def test_rows_chains_and_continued_rows():
    doc = r"""\begin{align}
\Delta_2 &= A + B \label{one}\\
         &= C \\[2pt]
         &\approx D \\
\intertext{and, broken over lines,}
r &= E + F \\
  &\quad + G \label{two}\\
c &= H \cdot
  I \\
\gamma^2 \\
  &= J \\
\end{align}"""
    got = [(d.tex, d.label, d.line) for d in read_paper(doc).displays]
    assert got == [(r"\Delta_2 = A + B", "one", 2), (r"\Delta_2 = C", None, 3), (r"\Delta_2 \approx D", None, 4),
                   (r"r = E + F \quad + G", "two", 6), (r"c = H \cdot I", None, 8), (r"\gamma^2 = J", None, 10)]
    assert read_paper(doc).displays[1].source_tex == "&= C"


def test_multline_is_one_equation_and_cases_are_not_rows():
    assert texs(r"\begin{multline} a = b + c \\ d + e \\ f \label{m}\end{multline}") == ["a = b + c d + e f"]
    doc = r"\begin{align} f &= \begin{cases} 1 & x>0 \\ 0 & \text{else} \end{cases} \\ g &= 2 \end{align}"
    assert texs(doc) == [r"f = \begin{cases} 1 & x>0 \\ 0 & \text{else} \end{cases}", "g = 2"]


def test_comments_verbatim_and_iffalse_are_not_read():
    doc = "\n".join([
        r"% \begin{equation} hidden = 1 \end{equation}",
        r"50\% of $$ a = b % a comment with \end{equation}",
        r"% a comment line inside the display is not a blank line",
        r"  + c $$",
        r"\verb|$$ hidden = 2 $$| \begin{verbatim}",
        r"\begin{equation} hidden = 3 \end{equation}",
        r"\end{verbatim}",
        r"\iffalse \begin{equation} hidden = 4 \end{equation} \ifx a b \fi \fi",
        r"\begin{comment} \[ hidden = 5 \] \end{comment}",
        r"\[ seen = 6 \]"])
    got = [(d.tex, d.line) for d in read_paper(doc).displays]
    assert got == [("a = b + c", 2), ("seen = 6", 10)]


def test_macros_nested_redefined_and_in_document_order():
    doc = "\n".join([
        r"\newcommand{\mo}{\mu_1^\star} \newcommand\den{\mo^2+\mt} \def\mt{\mu_2^\star}",
        r"\providecommand{\mo}{IGNORED} \DeclareMathOperator{\Tr}{Tr} \newcommand{\zero}[0]{0}",
        r"\begin{equation} \gamma = \frac{\mo^2}{\den} + \Tr\zero \end{equation}",
        r"\renewcommand{\mt}{\mu_\star}",
        r"\[ q = \den \]",
        r"\newcommand{\e}{e} \[ \alpha\e = \alpha \e \]"])
    p = read_paper(doc)
    assert [d.tex for d in p.displays] == [
        r"\gamma = \frac{{\mu_1^\star}^2}{{\mu_1^\star}^2+\mu_2^\star} + \operatorname{Tr}0",
        r"q = {\mu_1^\star}^2+\mu_\star", r"\alpha e = \alpha e"]
    assert p.macros["mo"] == r"\mu_1^\star" and p.macros["mt"] == r"\mu_\star" and p.unsupported == []
    assert [d.source_tex for d in p.displays][1] == r"q = \den"


def test_delimiters_given_by_macros():
    doc = r"\def\be{\begin{equation}} \newcommand{\ee}{\end{equation}}" + "\n" + r"\be x = y \label{l}\ee"
    assert [(d.tex, d.label, d.environment) for d in read_paper(doc).displays] == [("x = y", "l", "equation")]


def test_expansion_depth_and_recursion_are_bounded():
    chain = "".join(rf"\def\m{chr(97 + i)}{{\m{chr(98 + i)}}}" for i in range(MAX_MACRO_DEPTH - 1))
    chain += rf"\def\m{chr(97 + MAX_MACRO_DEPTH - 1)}{{z}}"          # \ma -> \mb -> ... -> z: 20 levels
    assert texs(chain + r"\[ \ma = 1 \]") == ["z = 1"]
    for rec in (r"\def\a{\a}", r"\def\a{\b}\def\b{\a}", r"\def\a{\a\a}", r"\newcommand{\a}{x\a}",
                r"\def\a{\b\b\b\b}\def\b{\c\c\c\c}\def\c{\d\d\d\d}\def\d{\e\e\e\e}\def\e{\a}"):
        p = quick(rec + "\n" + r"\begin{equation} \a = 1 \end{equation} \[ ok = 2 \]", 5)
        (d, ok) = p.displays
        assert d.skip and ("still expanding" in d.skip or "longer than" in d.skip), rec
        assert (ok.tex, ok.skip) == ("ok = 2", None)
    p = read_paper(r"\def\a{\a}" + "\n" + r"\[ \a = 1 \]")
    assert p.unsupported[0]["name"] == r"\a" and p.unsupported[0]["line"] == 1


@pytest.mark.parametrize("define, name", [
    (r"\newcommand{\f}[1]{#1^2}", r"\f"), (r"\newcommand{\f}[2][x]{#1#2}", r"\f"), (r"\renewcommand*\f[1]{#1}", r"\f"),
    (r"\def\f#1{#1}", r"\f"), (r"\def\f(#1){#1}", r"\f"), (r"\let\f\alpha", r"\f"), (r"\let\f=\alpha", r"\f"),
    (r"\edef\f{x}", r"\f"), (r"\NewDocumentCommand{\f}{m}{#1}", r"\f"), (r"\DeclareRobustCommand{\f}[1]{#1}", r"\f")])
def test_macros_with_arguments_are_recorded_never_executed(define, name):
    doc = f"line one\n{define}\n" + r"\begin{align} \f{x} &= 1 \\ y &= 2 \end{align}"
    p = read_paper(doc)
    assert p.unsupported == [{"name": name, "line": 2, "reason": p.unsupported[0]["reason"]}]
    bad, good = p.displays
    assert bad.skip.startswith(f"uses {name} (line 2)") and (good.tex, good.skip) == ("y = 2", None)
    assert "f" not in p.macros


def test_every_message_and_field_from_the_paper_is_one_line():
    doc = "\n".join([r"\newcommand{\f}[1", r"]{#1}", r"\newenvironment{my", r"env}{a}{b}",
                     r"\begin{align} \f{x} &= 1 \label{eq:", r"x} \tag{a", r"b} \end{align}"])
    p = read_paper(doc, source="my\npaper.tex")
    (d,) = p.displays
    assert (d.label, d.tag) == ("eq: x", "a b") and "\n" not in d.skip
    assert all("\n" not in u["name"] + u["reason"] for u in p.unsupported) and len(p.unsupported) == 2
    with pytest.raises(InvalidParameterError) as exc:
        read_paper("x" * (MAX_PAPER_CHARS + 1), source="my\npaper.tex")
    assert "\n" not in str(exc.value) and "my paper.tex" in str(exc.value)


def test_a_document_command_without_arguments_is_expanded():
    assert texs(r"\NewDocumentCommand{\g}{}{\gamma} \[ \g = 1 \]") == [r"\gamma = 1"]


def test_hostile_tex_is_reported_and_never_run(tmp_path, monkeypatch):
    import builtins
    import os
    import subprocess

    opened, real_open = [], builtins.open

    def spy(file, *a, **kw):
        opened.append(str(file))
        return real_open(file, *a, **kw)

    def refuse(*a, **kw):
        raise AssertionError("read_paper ran a program")

    secret = tmp_path / "macros.tex"
    secret.write_text(r"\newcommand{\leak}{LEAKED}")
    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "system", refuse)
    made = tmp_path / "made"
    doc = "\n".join([
        rf"\input{{{secret}}} \include{{{secret}}}",
        rf"\immediate\write18{{touch {made}}} \newwrite\out \immediate\openout\out={made}",
        r"\catcode`\^=7 \csname foo\endcsname \def\input{x} \makeatletter",
        r"\begin{equation} \leak = \csname x\endcsname \end{equation}",
        r"\begin{equation} a = b \write18{ls} \end{equation}",
        r"\begin{equation} \Delta_1 = c \end{equation}"])
    p = read_paper(doc)
    assert not made.exists() and not any(str(tmp_path) in f for f in opened)
    names = {(u["name"], u["line"]) for u in p.unsupported}
    assert {(r"\input", 1), (r"\include", 1), (r"\immediate", 2), (r"\write18", 2), (r"\openout", 2),
            (r"\catcode", 3), (r"\csname", 3), (r"\makeatletter", 3)} <= names
    assert all(u["reason"] for u in p.unsupported)
    leak, write, fine = p.displays
    assert "LEAKED" not in json.dumps(p.to_dict()) and leak.tex == r"\leak = \csname x\endcsname"
    assert "csname" in leak.skip and "write" in write.skip and (fine.tex, fine.skip) == (r"\Delta_1 = c", None)
    assert "input" not in p.macros                   # \def\input is refused, not obeyed


def test_unreadable_displays_are_kept_with_their_reason():
    doc = "\n".join([r"\begin{equation} a = {b \end{equation}", r"\begin{equation} a = b} \end{equation}",
                     r"\begin{equation} a = \begin{cases} b \end{equation}",
                     r"\begin{equation} " + "{" * 200 + "x" + "}" * 200 + r" \end{equation}",
                     r"\begin{equation} never closed", "", r"\[ fine = 1 \]"])
    p = quick(doc)
    assert [d.line for d in p.displays] == [1, 2, 3, 4, 5, 7]
    assert [bool(d.skip) for d in p.displays] == [True] * 5 + [False]
    assert "unbalanced" in p.displays[0].skip and "nested deeper" in p.displays[3].skip
    assert r"no \end{equation}" in p.displays[4].skip


_RNG = random.Random(0)
_JUNK = ["{", "}", "$", "$$", r"\[", r"\]", "%", "\n", "ab ", "&", r"\\", r"\begin{align}", r"\end{align}", "=",
         r"\begin{equation}", r"\end{equation}", r"\def\a{\a\a}", r"\a", r"\newcommand{\b}[1]{#1}", r"\b", "#",
         r"\label{x}", r"\begin{split}", r"\end{split}", "\\"]


@pytest.mark.parametrize("name, doc", [pytest.param(*c, id=c[0]) for c in [
    ("1 MB of junk", "".join(_RNG.choice(_JUNK) for _ in range(250_000))[:1_000_000]),
    ("1 MB of prose and junk", "".join(_RNG.choice(_JUNK) if _RNG.random() < 0.05 else "Some prose, $x$. "
                                       for _ in range(70_000))[:1_000_000]),
    ("deep braces", r"\begin{equation}" + "{" * 300_000 + r"\end{equation} \[ " + "{" * 300_000 + r"\]"),
    ("unbalanced", "}" * 100_000 + "{" * 400_000 + r"\[ a = b \]"),
    ("dollars", "$" * 1_000_000), ("backslashes", "\\" * 999_999),
    ("one long display", r"\[" + "a+" * 400_000 + r"\]"),
    ("continued rows", r"\begin{align}" + r"a +\\ " * 2800 + r"\end{align}" + r"\begin{multline}" + r"a \\ +b" * 2800
     + r"\end{multline}" + r"\begin{align}" + r"x \\ &= \\" * 1400 + r"\end{align}"),
    ("many definitions", "".join(rf"\newcommand{{\m{chr(97 + i % 26)}}}{{x{i}}}" for i in range(50_000)))]])
def test_hostile_documents_end_quickly(name, doc):
    assert isinstance(quick(doc), (Paper, InvalidParameterError)), name


def test_limits_are_clear_errors():
    with pytest.raises(InvalidParameterError, match="at most 2000000 characters"):
        read_paper("x" * (MAX_PAPER_CHARS + 1))
    with pytest.raises(InvalidParameterError, match=f"at most {MAX_DISPLAYS} displayed equations"):
        read_paper(r"\[ a = b \]" * (MAX_DISPLAYS + 1))
    for bad in (None, 3, ["a"]):
        with pytest.raises(InvalidParameterError, match="paper"):
            read_paper(bad)
    with pytest.raises(InvalidParameterError, match="UTF-8"):
        read_paper(b"\xff\xfe")
    assert texs(r"\[ a = b \]".encode()) == ["a = b"]
    assert texs("a\r\nb\r\n\\[ c = d \\]") == ["c = d"] and read_paper("a\r\nb\r\n\\[ c = d \\]").displays[0].line == 3


def test_without_pylatexenc_the_error_names_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "pylatexenc.latexwalker", None)
    with pytest.raises(InvalidParameterError, match="onestep_theory\\[latex\\]") as exc:
        read_paper(r"\[ a = b \]")
    assert INSTALL in str(exc.value)


def test_result_fields_and_json():
    p = read_paper(r"\newcommand{\x}{m_1} \begin{equation}\label{e} \x = 1 \end{equation}", source="p.tex")
    assert [f for f in Display.__dataclass_fields__][:5] == ["tex", "label", "line", "environment", "source_tex"]
    assert [f for f in Paper.__dataclass_fields__][:4] == ["displays", "macros", "unsupported", "source"]
    d = json.loads(json.dumps(p.to_dict()))
    assert d["source"] == "p.tex" and d["macros"] == {"x": "m_1"} and d["unsupported"] == []
    assert d["displays"] == [{"tex": "m_1 = 1", "label": "e", "line": 1, "environment": "equation",
                              "source_tex": r"\label{e} \x = 1", "tag": None, "numbered": True, "skip": None}]
    assert p.checkable == p.displays


# --- whole documents, written by the test with their equations known ---------------------------------------------

_NAMES = [r"\Delta_1", r"\Delta_2", "r", "c", r"\gamma^2", r"\varepsilon_g", "m_1"]
_RHS = [r"\frac{a}{b}", r"x + y", r"\phi\psi", r"\sqrt{m_2}", r"\left(1+\lambda\right)^2", r"\mu_1^{\star 2}"]
_PROSE = ["We now state the result.", "Let $a = b$ and \\(c = d\\).", "% \\begin{equation} no = 1 \\end{equation}",
          "It costs 5\\% of the budget", "\\verb|\\[ x = y \\]| is verbatim.", "See (\\ref{eq:1}).", ""]


@st.composite
def documents(draw):
    """A document of prose and displays, and the (tex, label, line) the reader must give for it."""
    lines, want = [r"\documentclass{article}", r"\newcommand{\R}{\mathbb{R}}", r"\begin{document}"], []
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.booleans()):
            lines += [draw(st.sampled_from(_PROSE))]
            continue
        kind = draw(st.sampled_from(["equation", "equation*", "align", "gather*", "$$", r"\[", "split"]))
        rows = [(draw(st.sampled_from(_NAMES)), draw(st.sampled_from(_RHS)),
                 draw(st.sampled_from([None, f"eq:{len(want) + i}"]))) for i in range(draw(st.integers(1, 3)))]
        if kind not in ("align", "gather*", "split"):
            rows = rows[:1]
        opener, closer = {"$$": ("$$", "$$"), r"\[": (r"\[", r"\]"), "split": (
            r"\begin{equation}\begin{split}", r"\end{split}\end{equation}")}.get(kind, (
                f"\\begin{{{kind}}}", f"\\end{{{kind}}}"))
        lines.append(opener + (" % opens" if draw(st.booleans()) else ""))
        for i, (lhs, rhs, label) in enumerate(rows):
            amp = "&" if kind in ("align", "split") else ""
            lab = f"\\label{{{label}}}" if label and kind not in ("$$", r"\[", "split") else ""
            typed, read = rhs.replace("b}", r"\R}"), rhs.replace("b}", r"\mathbb{R}}")
            lines.append(f"  {lhs} {amp}= {typed} {lab}" + (r" \\" if i < len(rows) - 1 else ""))
            want.append((f"{lhs} = {read}", lab and label, len(lines)))
        lines.append(closer)
    lines.append(r"\end{document}")
    return "\n".join(lines), want


@settings(max_examples=40, deadline=None)
@given(documents())
def test_documents_written_for_the_test_read_back_exactly(case):
    doc, want = case
    got = [(d.tex, d.label or None, d.line) for d in read_paper(doc).displays]
    assert got == [(t, lab or None, n) for t, lab, n in want], doc


_PIECES = [r"\begin{equation}", r"\end{equation}", r"\begin{align}", r"\end{align}", r"\begin{split}", r"\end{split}",
           "$$", r"\[", r"\]", "$", "{", "}", "&", r"\\", "%", "\n", "\n\n", "= ", r"\Delta_2 ", r"\frac{a}{b}",
           r"\label{x}", r"\tag{1}", r"\nonumber", r"\newcommand{\x}{m_1}", r"\x", r"\def\y{\y}", r"\y",
           r"\newcommand{\f}[1]{#1}", r"\f", r"\let\g\x", r"\g", r"\input{a}", r"\write18{ls}", r"\catcode", "#",
           r"\verb|", r"\iffalse", r"\fi", r"\begin{verbatim}", r"\end{verbatim}", "Prose text. ", r"\intertext{so}",
           "\\", "+", r"\quad", r"\begin{cases}", r"\end{cases}", "\x00", "é", r"\renewcommand"]


_OPEN = [(r"\begin{%s}" % e, r"\end{%s}" % e) for e in ("equation", "align*", "gather", "multline", "eqnarray")] + [
    ("$$", "$$"), (r"\[", r"\]"), (r"\begin{equation}\begin{split}", r"\end{split}\end{equation}")]
_SOUND = [r"\Delta_2 = \frac{a}{b}", r"& = m_1 + m_2", r"\\", r"\label{eq:y}", r"r &= \x", r"+ c", r"\nonumber"]
_BLOCK = st.one_of(st.sampled_from(_PIECES), st.builds(
    lambda d, inner: d[0] + "".join(inner) + d[1], st.sampled_from(_OPEN),
    st.lists(st.sampled_from(_SOUND + _PIECES[:30]), max_size=8)))


@settings(max_examples=60, deadline=None)
@given(st.lists(_BLOCK, min_size=1, max_size=30))
def test_fuzz_any_document_is_read_or_refused_in_one_line(pieces):
    doc = "".join(pieces)
    p = quick(doc, 5)
    if isinstance(p, InvalidParameterError):
        return
    nlines = doc.count("\n") + 1
    for d in p.displays:
        assert 1 <= d.line <= nlines and "\n" not in d.tex and (d.skip is None or "\n" not in d.skip)
        if d.skip is None:                           # what is handed on holds no TeX that is never run
            assert not any(f"\\{w}" in d.tex for w in ("input", "write", "catcode", "csname", "def"))
    json.dumps(p.to_dict())
