"""``check-paper`` (docs/theory/checking.md §8): the test papers in tests/data/papers/ get every verdict right, the
report is readable (Markdown, HTML, JSON), the exit status is diff's, the skipped displays are listed with why.

The expected verdicts (tests/data/papers/*.json) are not the tool's output: each checked display carries its two
sides re-typed by hand in the formula names, and ``test_expected_verdicts_are_derived`` re-derives every verdict with
SymPy against the closed forms (``registry.closed_form``: ``delta_symbolic``, ``lambda_symbolic``, Result 3.1) —
"identical" when the difference simplifies to 0, "differs" when it is nonzero at a generic point and at the test's
own teacher (exact Hermite coefficients; the sRF constants by mpmath quadrature).
"""

from __future__ import annotations

import json
import os
import pathlib
import random
import re
import time

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from onestep_theory.cli import main
from onestep_theory.core.errors import InvalidParameterError
from onestep_theory.quantities.registry import QUANTITIES, closed_form, symbols_of

pytest.importorskip("antlr4")
pytest.importorskip("pylatexenc")
from onestep_theory.quantities.latex.paperreport import check_paper  # noqa: E402

PAPERS = pathlib.Path(__file__).resolve().parent / "data" / "papers"
SPECS = {name: json.loads((PAPERS / f"{name}.json").read_text()) for name in ("spike_moniri23", "srf_cui24")}
N = 4                                       # points per equation (the proofs and 4 points decide every verdict)


def _teacher_values(spec):
    """The test's own constants, computed here independently of the package: the spike teacher
    He1 + He2/sqrt(2) + He3/sqrt(6) has c*_k = 1, 1/sqrt(2), 1/sqrt(6) and c*^2 = 3 (exact); the sRF tanh/sin
    constants by mpmath quadrature against the Gaussian weight."""
    s = symbols_of(spec["family"])
    if spec["family"] == "spike":
        out = {s["cs1"]: 1, s["cs2"]: 1 / sp.sqrt(2), s["cs3"]: 1 / sp.sqrt(6), s["c_star2"]: 3}
        return out | {s[f"cs{k}"]: 0 for k in (0, 4, 5, 6, 7, 8)}
    with mpmath.workdps(30):
        g = lambda f: mpmath.quad(lambda z: f(z) * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])  # noqa: E731
        mu1 = g(lambda z: mpmath.sech(z) ** 2)
        mu1c2 = g(lambda z: mpmath.sech(z) ** 4) - mu1 ** 2
    return {s["mu1"]: sp.Float(mu1, 30), s["mu1c2"]: sp.Float(mu1c2, 30), s["mu1s"]: sp.exp(-sp.Rational(1, 2)),
            s["mu2s"]: (1 - sp.exp(-2)) / 2 + s["noise"]}


def _side(text, spec):
    """A hand-typed side: formula names, and quantity names standing for the package's closed forms."""
    names = symbols_of(spec["family"])
    names.update({q: closed_form(q) for q, Q in QUANTITIES.items()
                  if Q.family == spec["family"] and closed_form(q) is not None})
    return sp.sympify(text, locals=names)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_expected_verdicts_are_derived(name):
    """Every expected verdict of the test papers follows from SymPy against the closed forms (see the module
    docstring) — the reference the tool is held to is derived here, never copied from it."""
    spec = SPECS[name]
    rnd = random.Random(7)
    teacher = _teacher_values(spec)
    for d in spec["displays"]:
        if d["expected"] == "skipped":
            continue
        diff = _side(d["lhs"], spec) - _side(d["rhs"], spec)
        zero = sp.simplify(sp.cancel(sp.together(diff))) == 0
        assert zero == (d["expected"] == "identical"), d
        if not zero:                            # nonzero: at a generic point and at the test's own teacher
            for sub in ({}, teacher):
                e = diff.subs(sub)
                point = {x: sp.Rational(rnd.randint(2, 97), rnd.randint(101, 199)) for x in e.free_symbols}
                assert abs(sp.N(e.subs(point), 30)) > 1e-12, (d, sub)


@pytest.fixture(scope="module")
def results():
    out = {}
    for name, spec in SPECS.items():
        out[name] = check_paper(PAPERS / spec["paper"], convention=spec["convention"], student=spec["student"],
                                teacher=spec["teacher"], mapping=spec["map"], n=N)
    return out


def _match(spec, rows):
    """Expected display -> its row (by label; an unlabelled one by its line range); every row matched once."""
    pairs, left = [], list(rows)
    for d in spec["displays"]:
        hit = [r for r in left if (r["label"] == d["label"] if d["label"] else
                                   r["label"] is None and d["lines"][0] <= r["line"] <= d["lines"][1])]
        assert len(hit) == 1, (d, hit)
        pairs.append((d, hit[0]))
        left.remove(hit[0])
    assert not left, f"displays found that the paper does not hold (a comment or inline math?): {left}"
    return pairs


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_verdict_of_the_test_papers(results, name):
    spec, res = SPECS[name], results[name]
    assert len(res.rows) >= 13 and sum(r["status"] != "skipped" for r in res.rows) >= 11
    for d, r in _match(spec, res.rows):
        assert r["status"] == d["expected"], (d, r.get("verdict"), r.get("reason"))
        if d["expected"] == "skipped":
            assert d.get("reason", "") in r["reason"]
        else:
            assert r["quantity"] == d["quantity"]
            assert r["reading"]["formula"] and r["proof"]["status"]
    assert {r["label"] for r in res.skipped} == {d["label"] for d in spec["displays"] if d["expected"] == "skipped"}
    assert res.exit_code == 1 and res.counts["differs"] == sum(d["expected"] == "differs" for d in spec["displays"])
    assert res.source == spec["paper"]


def test_mapped_displays_and_left_hand_sides(results):
    """A mapped display whose left-hand side is the paper's own name is checked as that quantity, and said so; a
    readable left-hand side (r^2, gamma^2, Lambda_2 - Lambda_1) is checked as written."""
    rows = {r["label"]: r for r in results["spike_moniri23"].rows} | {r["label"]: r for r in
                                                                        results["srf_cui24"].rows}
    assert "taken to be train_loss_f0" in rows["eq:Ltr"]["note"]
    assert rows["eq:gamma2"]["reading"]["lhs"]["kind"] == "expression"
    assert rows["eq:L-diff"]["reading"]["lhs"]["kind"] == "expression"
    assert rows["eq:d2"]["reading"]["lhs"]["quantity"] == "delta_2"
    assert "noise" in rows["eq:gamma-noise"]["sampled"]        # the noise is varied: a wrong noise term shows
    assert "cst" in rows["eq:d1-macro"]["reason"]


@pytest.mark.parametrize("ext", ["md", "html", "json"])
def test_the_report_names_every_display(results, tmp_path, ext):
    res = results["spike_moniri23"]
    text = pathlib.Path(res.write(tmp_path / f"r.{ext}")).read_text()
    if ext == "json":
        back = json.loads(text)
        assert [r["label"] for r in back["rows"]] == [r["label"] for r in res.rows] and back["exit_code"] == 1
        return
    esc = (lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")) if ext == "html" else \
        (lambda s: s.replace("_", "\\_").replace("*", "\\*").replace("<", "\\<").replace(">", "\\>"))
    for r in res.rows:
        assert esc(r["label"] or "(no label)") in text and r["status"] in text
        if r["status"] == "skipped":
            assert r["reason"].split(":")[0].split("(")[0].strip().replace("_", "\\_" if ext == "md" else "_")[:20] \
                in text.replace("\\\\", "\\")
            continue
        assert r["reading"]["formula"] in text and esc(r["verdict"])[:60] in text
    if ext == "html":
        assert "MathJax" in text and "ui/safe" in text and text.count("<script") == 2


HOSTILE = r"""\newcommand{\x}{\text{</pre><script>alert(1)</script>}}
\begin{equation}\label{eq:<b>bold</b>}
\Delta_1 = \frac{\psi\lambda c_{\star,1}^4 m_2}{\phi b^2} \x
\end{equation}
\begin{equation}\label{eq:href}\Delta_1 = \href{javascript:alert(2)}{m_2}\end{equation}
$$ \Delta_1 = `` | ** <img src=x onerror=alert(3)> $$
"""


def test_nothing_from_the_paper_is_markup(tmp_path):
    """Labels, TeX and reasons from the paper are escaped in HTML and Markdown; a formula with link commands is
    not rendered (shown as code only)."""
    res = check_paper(HOSTILE, convention="moniri23", student="tanh", teacher="He1", n=1)
    page, md = res.to_html(), res.to_markdown()
    assert page.count("<script") == 2 and "<img" not in page and "<b>bold" not in page and "</pre><script" not in page
    outside = re.sub(r"(?ms)^(`{3,})latex\n.*?^\1$", "", md)  # fenced code blocks are shown verbatim
    assert "<script" not in outside and "<img" not in outside and "<b>" not in outside
    assert "\\[\\Delta_1 = \\href" not in page                  # not handed to MathJax
    # the first display is a true Delta_1 followed by hostile prose (a remark, set aside: escaped in the report)
    assert [r["status"] for r in res.rows] == ["identical", "skipped", "skipped"]


def _cli(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_exit_status_and_report(tmp_path, capsys):
    """Exit 1 when an equation differs (the sRF paper, without --map: its r^2/gamma^2 displays are skipped); the
    text has one line per display; the JSON report holds every row."""
    spec = SPECS["srf_cui24"]
    report = tmp_path / "r.json"
    code, out, err = _cli(["check-paper", str(PAPERS / spec["paper"]), "--convention", "cui24", "--student",
                           spec["student"], "--teacher", spec["teacher"], "--n", str(N), "--report", str(report)],
                          capsys)
    assert code == 1, err
    rows = json.loads(report.read_text())["rows"]
    assert len(out.strip().splitlines()) == len(rows) + 2          # + the summary and "report written"
    status = {r["label"]: r["status"] for r in rows}
    for d in spec["displays"]:
        want = "skipped" if d["label"] in spec["map"] else d["expected"]
        assert status[d["label"]] == want, (d, status[d["label"]])
        assert d["label"] in out


TRUE_PAPER = r"""Prose with $\Delta_1=0$ inline.
\begin{align}
\Delta_1 &:= \frac{\psi\lambda c_{\star,1}^4 m_2}{\phi b^2} \label{eq:a} \\
c &= 1 + \frac{\tilde\eta^2}{\alpha_0}\mu_2^\star\check\mu_1^2 \label{eq:b}
\end{align}
"""


def test_cli_exit_0_when_all_hold_2_when_nothing_checks(tmp_path, capsys):
    p = tmp_path / "true.tex"
    p.write_text(TRUE_PAPER.replace(r"c &= 1 + \frac{\tilde\eta^2}{\alpha_0}\mu_2^\star\check\mu_1^2", r"b^2 &= 1"))
    code, out, err = _cli(["check-paper", str(p), "--convention", "moniri23", "--student", "tanh", "--teacher",
                           "He1", "--n", "2", "--dps", "30", "--json"], capsys)
    assert code == 0, err
    got = json.loads(out)
    assert [(r["label"], r["status"]) for r in got["rows"]] == [("eq:a", "identical"), ("eq:b", "skipped")]
    assert "agrees to 30 digits at 2/2 points" in got["rows"][0]["verdict"]
    p.write_text(r"\begin{equation} b^2 = \phi \label{eq:x}\end{equation}")
    code, out, err = _cli(["check-paper", str(p), "--convention", "moniri23", "--student", "tanh"], capsys)
    assert code == 2 and "nothing checked" in out


@pytest.mark.parametrize("extra, flag", [(["--map", "eq:nope=delta_1"], "--map"), (["--map", "eq:a=delta_9"], "--map"),
                                         (["--convention", "nope"], "convention"), (["--student", "x**"], "student"),
                                         (["--report", "r.txt"], "--report"), (["--n", "0"], "--n")])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys, monkeypatch, extra, flag):
    p = tmp_path / "true.tex"
    p.write_text(TRUE_PAPER)
    argv = ["check-paper", str(p), "--convention", "moniri23", "--student", "tanh", "--teacher", "He1", "--n", "1"]
    for k in range(0, len(extra), 2):
        if extra[k] in argv:
            argv[argv.index(extra[k]) + 1] = extra[k + 1]
        else:
            argv += extra[k:k + 2]
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(argv, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and flag in err and "Traceback" not in err, err


def test_api_bad_input():
    with pytest.raises(InvalidParameterError, match="map"):
        check_paper(TRUE_PAPER, convention="moniri23", student="tanh", mapping={"eq:zz": "r"})
    with pytest.raises(InvalidParameterError, match="dps"):
        check_paper(TRUE_PAPER, convention="moniri23", student="tanh", dps=10)
    with pytest.raises(InvalidParameterError, match="paper"):
        check_paper(PAPERS / "missing.tex", convention="moniri23", student="tanh")


D1 = r"\frac{\psi\lambda c_{\star,1}^4m_2}{\phi\,b^2}"
TWO = (r"\begin{equation}\Delta_1=" + D1 + r",\qquad\Delta_2=\Delta_1"
       r"+\frac{%s\psi\lambda c_{\star,1}^4c_{\star,2}^2m_1}"
       r"{3\phi\,b^4}\quad(\text{needs }c_2\ne0)\end{equation}")


def test_a_display_of_two_equations_each_against_its_own_quantity():
    """spike-theory.md §7.1 as printed: Delta_1 = ..., Delta_2 = ... in one display, each equation against the
    quantity its left-hand side names; the second mistyped (4/3 -> 2/3): the display differs, the first holds."""
    spec = SPECS["spike_moniri23"]
    res = check_paper(TWO % "2", convention="moniri23", student=spec["student"], teacher=spec["teacher"], n=2)
    (row,) = res.rows
    assert row["quantity"] == "delta_1, delta_2" and row["status"] == "differs" and res.exit_code == 1
    assert row["verdict"].startswith("identical") and [p["status"] for p in row["parts"]] == ["differs"]


def test_map_by_line_or_tag_and_exit_3_on_a_numerical_failure(monkeypatch):
    """--map takes a display's line or tag when it has no label; a check that fails numerically is a 'failed' row and
    exit status 3, unless another equation differs (then 1); an unexpected error is reported, not hidden."""
    from onestep_theory.core.errors import ConvergenceError
    import importlib

    check_module = importlib.import_module("onestep_theory.quantities.check")     # the module, not the function

    doc = "\n".join([r"\[ \gamma^2 = \frac{\mu_1^{\star 2}}{\mu_1^{\star 2}+\mu_2^\star/\alpha_0} \]",
                     r"\[ c = 1+\frac{\tilde\eta^2}{\alpha_0}\mu_2^\star\check\mu_1^2\mu_1^2 \]"])
    tagged = doc + "\n" + r"\begin{equation} r^2 = \tilde\eta^2\mu_1^2\mu_1^{\star 2}/\gamma^2 \tag{A.1}\end{equation}"
    res = check_paper(tagged, convention="cui24", student="tanh", teacher="sin", n=1,
                      mapping={"1": "gamma", "A.1": "r"})
    assert [r["status"] for r in res.rows] == ["identical", "differs", "identical"] and res.exit_code == 1
    assert "(A.1) (line 3)" in res.to_text()
    real = check_module.check

    def flaky(*a, **kw):
        if kw.get("against") == "gamma":
            raise ConvergenceError("no root")
        return real(*a, **kw)

    monkeypatch.setattr(check_module, "check", flaky)
    res = check_paper(doc, convention="cui24", student="tanh", teacher="sin", n=1, mapping={"1": "gamma"})
    assert [r["status"] for r in res.rows] == ["failed", "differs"] and res.exit_code == 1
    assert "no root" in res.rows[0]["reason"]
    res = check_paper(doc.splitlines()[0], convention="cui24", student="tanh", teacher="sin", n=1,
                      mapping={"1": "gamma"})
    assert res.exit_code == 3 and "numerically" in res.verdict
    monkeypatch.setattr(check_module, "check", lambda *a, **kw: 1 / 0)
    res = check_paper(doc, convention="cui24", student="tanh", teacher="sin", n=1, mapping={"1": "gamma"})
    assert all(r["status"] == "failed" and "internal error: ZeroDivisionError" in r["reason"] for r in res.rows)



def test_a_chain_after_the_papers_own_name_checks_every_side():
    """R_0 := A = B with R_0 outside the table and --map: A and B are each checked against the quantity (here B
    mistyped, tau_1 -> tau_2: the display differs though A holds); '≈' is checked as '=' and said so."""
    doc = "\n".join([r"\def\R{\widehat{\mathcal{R}}_0}", r"\[\R \approx \lambda\frac{\psi}{\phi}\big[c_{\star,1}^2 m_2"
                     r"+(c_\star^2-c_{\star,1}^2+\sigma_\varepsilon^2)m_1\big]"
                     r" = \lambda\big[c_{\star,1}^2\tau_2+(c_\star^2-c_{\star,1}^2+\sigma_\varepsilon^2)\tau_2\big]\]"])
    (row,) = check_paper(doc, convention="moniri23", student="tanh", teacher="He1", n=2,
                         mapping={"2": "train_loss_f0"}).rows
    assert row["status"] == "differs" and row["verdict"].startswith("identical")
    assert [p["status"] for p in row["parts"]] == ["differs"] and "'≈' checked as '='" in row["note"]


# --------------------------------------------------------------------------- whole documents fuzzed through the checker
_ROWS = [line.strip() for name in SPECS for line in (PAPERS / SPECS[name]["paper"]).read_text().splitlines()
         if "=" in line and line.strip().startswith(("\\Delta", "\\Lambda", "\\Ltr", "r ", "c ", "\\gamma", "b^2"))]
_JUNK = [r"\frac{", "}", "{", "^^", "_", r"\catcode`\^=7", r"\input{/etc/passwd}", r"\immediate\write18{touch PWNED}",
         r"\csname relax\endcsname", "&", r"\\", "=", ":=", r"\to", r"\ge 0", r"\approx", r"\label{eq:x}", "%",
         "\u00e9", "\x00", r"\sqrt{-1}", "0/0", r"\left(", r"\right)", "10^{10^{10}}", r"\def\a{\a}\a", "$", r"\["]
assert len(_ROWS) >= 20
_PROSE = ["Some prose with $\\Delta_1=0$ inline.", "% a comment \\begin{equation} \\Delta_1 = 0 \\end{equation}",
          "\\newcommand{\\bsq}{b^2}", "\\newcommand{\\cst}[1]{c_{\\star,#1}}", "\\def\\Ltr{\\widehat{\\mathcal{R}}_0}",
          "\\section{A}", ""]


@st.composite
def _documents(draw):
    parts = []
    for _ in range(draw(st.integers(1, 5))):
        row = draw(st.sampled_from(_ROWS))
        if draw(st.booleans()):
            k = draw(st.integers(0, len(row)))
            row = row[:k] + draw(st.sampled_from(_JUNK)) + row[k:]
        env = draw(st.sampled_from(["equation", "align", "gather*", "multline", "$$", r"\["]))
        opener, closer = {"$$": ("$$", "$$"), r"\[": (r"\[", r"\]")}.get(env, (f"\\begin{{{env}}}", f"\\end{{{env}}}"))
        parts += [draw(st.sampled_from(_PROSE)), f"{opener}\n{row}\n{closer}"]
    return "\n".join(parts), draw(st.sampled_from(sorted(SPECS)))


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 30)), deadline=None, database=None,
          derandomize=os.environ.get("FUZZ_RANDOM") is None)
@given(_documents())
def test_fuzz_whole_documents_are_checked_or_refused_never_run(tmp_path_factory, doc_spec):
    """Documents built from the test papers' rows (both conventions), mutated with junk and hostile TeX: every
    display gets a verdict or a one-line reason (never an internal error), the paper never aborts on a display, no
    TeX is executed (no file written), and each document takes a bounded time."""
    (doc, name), cwd, back = doc_spec, tmp_path_factory.mktemp("fuzz"), os.getcwd()
    spec = SPECS[name]
    os.chdir(cwd)
    t0 = time.perf_counter()
    try:
        res = check_paper(doc, convention=spec["convention"], student=spec["student"], teacher=spec["teacher"], n=1)
    except InvalidParameterError as exc:            # only a document that is not a paper at all
        assert "\n" not in str(exc)
        return
    finally:
        os.chdir(back)
    assert time.perf_counter() - t0 < 60
    assert not list(cwd.iterdir())
    for r in res.rows:
        assert r["status"] in ("identical", "agrees", "differs", "failed", "skipped")
        if r["status"] in ("skipped", "failed"):
            assert r["reason"] and "\n" not in r["reason"] and "internal error" not in r["reason"], r
    assert res.exit_code in (0, 1, 2, 3)
    res.to_html(), res.to_markdown(), json.dumps(res.to_dict())
