"""LaTeX input for check and sweep (docs/theory/checking.md §7): the normalisation, the symbol tables of the four
conventions, the errors, and the corpus of formulas the theory pages cite, as printed."""

from __future__ import annotations

import json
import pathlib
import sys

import mpmath
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from onestep_theory.cli import main
from onestep_theory.core.errors import InvalidParameterError
from onestep_theory.core.syntax import parse_text
from onestep_theory.quantities import check, sweep, symbols_of
from onestep_theory.quantities.registry import formula_tex

pytest.importorskip("antlr4")
from onestep_theory.quantities.latex.tex import INSTALL, read_latex  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CORPUS = json.loads((ROOT / "tests" / "data" / "latex_corpus.json").read_text())


D1 = "psi*lam*cs1**4*m2/(phi*b**2)"


def expr_of(text, family="spike"):
    return parse_text(text, "formula", symbols_of(family))


def same(tex, typed, family="spike", **kw):
    """The TeX read by the table equals the formula typed in the package's names (exactly)."""
    got = expr_of(read_latex(tex, family, **kw).formula, family)
    return sp.simplify(got - expr_of(typed, family)) == 0


@pytest.mark.parametrize("tex", [
    r"\frac{\partial m_2}{\partial\lambda}", r"\frac{\partial m_2}{\partial \lambda}", r"\partial_\lambda m_2",
    r"\partial_{\lambda} m_2", "m_2'", r"m_2'(\lambda)", r"\frac{d m_2}{d\lambda}", r"\frac{\mathrm{d} m_2}{\mathrm{d}\lambda}",
    r"\frac{\partial}{\partial\lambda} m_2", r"\dfrac{\partial m_{2}}{\partial\lambda}"])
def test_every_way_of_writing_the_lambda_derivative(tex):
    assert read_latex(tex, "spike").formula == "dm2"


@pytest.mark.parametrize("tex", [r"c_{\star,1}", r"c_{\star 1}", r"c^\star_1", r"c_1^\star", r"c_1^{\star}",
                                 r"c_{1}^{*}", r"c^{\ast}_{1}", r"c_{\star,1}^{1}"])
def test_every_way_of_writing_a_starred_coefficient(tex):
    assert read_latex(tex, "spike").formula == "cs1"


@pytest.mark.parametrize("tex", [r"\mu_1^{\star 2}", r"\mu_1^{\star2}", r"(\mu_1^\star)^2", r"\left(\mu_1^{*}\right)^{2}",
                                 r"\mu_1^\star\cdot\mu_1^\star", r"\mu_1^\star \times \mu_1^\star"])
def test_a_starred_square_is_the_square_of_the_starred_symbol(tex):
    assert same(tex, "mu1s**2", "srf")


@pytest.mark.parametrize("tex", [r"\tilde\eta", r"\tilde{\eta}", r"\widetilde{\eta}", r"{\tilde\eta}"])
def test_decorated_names_are_one_symbol(tex):
    assert read_latex(tex, "srf").formula == "eta"


def test_parameters_before_a_parenthesis_are_products_and_spacing_is_ignored():
    typed = "phi*(c_star2 + noise)*m1"
    for tex in (r"\phi(c_\star^2+\sigma_\varepsilon^2)m_1", r"\phi\left(c_\star^2 + \sigma_\varepsilon^2\right) m_1",
                r"\phi\,\big[c_\star^{2}+\sigma_\varepsilon^{2}\big]\;m_1", r"$\displaystyle \phi\cdot(c_\star^2+\sigma_\varepsilon^2)\cdot m_1$",
                r"\phi \Bigl( c_{\star}^2+\sigma_{\varepsilon}^2 \Bigr) \! m_{1}", r"\phi(c^2_\star+\sigma^2_\varepsilon)m_1"):
        assert same(tex, typed), tex


def test_fractions_numbers_and_functions():
    assert same(r"\frac43 m_1", "4*m1/3") and same(r"\tfrac\psi\phi", "psi/phi") and same(r"\frac{1}{2}m_1^{2}", "m1**2/2")
    assert read_latex(r"0.125 m_1", "spike").formula == "m1/8"                      # decimals are exact
    assert same(r"\sqrt{m_1}+\sqrt[3]{m_2}", "sqrt(m1) + m2**(1/3)")
    assert same(r"\exp(m_1)+\log(m_2)+\operatorname{tanh}(\phi)", "exp(m1) + log(m2) + tanh(phi)")
    assert same(r"\mathrm{e}^{m_1}", "exp(m1)") and same(r"\pi m_1", "pi*m1")
    assert same(r"c_{>1}^2 + c_0 + c_8", "c_gt1**2 + c0 + c8")
    assert same(r"m_1(\lambda)\Delta_1(\lambda)", "m1*" + D1)            # the argument of a function of lambda
    assert same(r"\tau_1 + q_{\rm lin} + q_{\mathrm{nl}}", "psi/phi*m1 + phi/psi*(-dm2)/m1**2 + phi/psi*(-dm1)/m1**2")


def test_a_left_hand_side_is_set_aside_and_shown():
    f = read_latex(r"\Delta_1=\frac{\psi\lambda c_{\star,1}^4m_2}{\phi\,b^2}", "spike")
    assert f.dropped == r"\Delta_1" and f.formula and r"c_{\star,1}" in f.latex and "m_2" in f.latex
    assert f.names[r"\phi"].startswith("phi = d/n") and "normalised" in f.to_dict()


def test_the_tables_convert_parameters_between_conventions():
    """Relations of docs/theory/conventions.md §1: lambda_M = lambda beta/alpha, phi = 1/alpha, eta~_d = eta~ beta."""
    assert same(r"\lambda", "lam*psi/phi", "spike", convention="cui24")            # cui24's lambda in moniri23
    assert same(r"\alpha\beta", "1/(phi*psi)", "spike", convention="cui24")
    assert same(r"\phi\lambda", "lam*beta/alpha**2", "srf", convention="moniri23")
    assert same(r"\tilde\eta", "eta*beta", "srf", convention="dandi24")
    assert same(r"\psi_1\psi_2\lambda", "alpha*beta*lam*beta/alpha", "srf", convention="ba22")
    assert same(r"\alpha_L + \rho", "alpha/beta + sqrt(1 - gamma**2)", "srf")
    with pytest.raises(InvalidParameterError, match=r"ba22 parameter eta.*no counterpart in cui24"):
        read_latex(r"\eta", "srf", convention="ba22")                               # eta_B needs d
    with pytest.raises(InvalidParameterError, match=r"alpha0.*no counterpart in moniri23"):
        read_latex(r"\alpha_0", "spike", convention="cui24")


def test_errors_name_the_symbol_and_the_table():
    with pytest.raises(InvalidParameterError) as e:
        read_latex(r"\frac{\psi\lambda c_{\star,1}^4m_2}{\phii\,b^2}", "spike")         # a typo
    msg = str(e.value)
    assert r"unknown symbol \phii in the moniri23 table" in msg and r"\psi" in msg and "c_{\\star,1}" in msg
    assert "--symbol" in msg
    with pytest.raises(InvalidParameterError, match=r"\\sigma is ambiguous.*--symbol sigma=noise"):
        read_latex(r"\sigma^2 m_1", "spike")
    assert same(r"\sigma^2 m_1", "noise*m1", symbols={"sigma": "noise"})
    assert same(r"\kappa m_1", "c_gt1*m1", symbols={"kappa": "c_gt1"})
    assert same(r"\sigma m_1", "sqrt(noise)*m1", symbols={r"\sigma": "sqrt(noise_var)"})
    for tex, match in [(r"\eta m_1", "step size"), (r"\tilde\eta\,\eta", "diverges"), (r"m_1=m_2=1", "2 right-hand sides"),
                       (r"m_1 \le 2", "inequality between two expressions"), (r"\frac{m_1}{2", "too early"),
                       ("{" * 50 + "m_1" + "}" * 50, "nested"), ("m_1+" * 600 + "m_1", "at most 2000"),
                       (r"\partial_\lambda \phi", "lambda-derivative of \\\\phi"), ("", "LaTeX formula"),
                       (r"m_1 = ", "nothing on its right side"), (r"\mu_1", "unknown symbol")]:
        with pytest.raises(InvalidParameterError, match=match):
            read_latex(tex, "srf" if "eta" in tex and "m_1" not in tex else "spike")
    with pytest.raises(InvalidParameterError, match="a reading with a value"):
        read_latex(r"\sigma", "spike", symbols={"sigma": "activation"})
    with pytest.raises(InvalidParameterError, match="cui24 or dandi24"):
        read_latex("m_1", "spike", convention="nature")


def test_check_api_latex_and_formula_are_alternatives(check_rendered):
    with pytest.raises(InvalidParameterError, match="not both"):
        check("m1", "m1", latex="m_1", student="tanh")
    with pytest.raises(InvalidParameterError, match="given with latex"):
        check("m1", "m1", convention="cui24", student="tanh")
    r = check(latex=r"\frac{\psi\lambda c_{\star,1}^4m_2}{\phi\,b^2}", against="delta_1", student="tanh",
              teacher="He1", n=3)
    assert r.proof["status"] == "identical" and r.understood["formula"] and r.to_dict()["understood"]["latex"]
    assert "LaTeX given" in r._repr_html_() and "read as (moniri23)" in r._repr_html_()
    check_rendered(r._repr_html_())


def test_missing_parser_is_a_clear_exit_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "antlr4", None)
    with pytest.raises(InvalidParameterError, match="onestep_theory\\[latex\\]"):
        read_latex("m_1", "spike")
    assert main(["check", "--latex", "m_1", "--against", "m1", "--student", "tanh"]) == 2
    err = capsys.readouterr().err
    assert INSTALL in err and err.count("\n") == 1


def test_cli_check_latex_shows_the_reading_before_the_verdict(capsys):
    tex = (r"\Lambda_1^{\rm slide}=\frac{c_{\star,1}^4}{c_{\star,1}^2+\phi(c_\star^2+\sigma_\varepsilon^2)}"
           r"\Big(-\frac{\partial m_2}{\partial\lambda}\Big)")
    assert main(["check", "--latex", tex, "--against", "lambda_1", "--student", "tanh", "--teacher", "He1",
                 "--n", "4"]) == 1                      # exit like diff: the talk's formula differs
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("read as (moniri23 table): ") and "dm2" in out[0]
    assert out[2].startswith(r"  left-hand side: \Lambda_1^{\rm slide} = the moniri23 table") and out[2].endswith("lambda_1")
    assert any(line.startswith("differs") for line in out[3:])
    assert main(["check", "--latex", r"\sigma^2 m_1", "--against", "train_loss_f0", "--student", "tanh",
                 "--teacher", "He1", "--n", "2"]) == 2
    assert "--symbol sigma=noise" in capsys.readouterr().err
    assert main(["check", "--latex", r"\lambda\frac\psi\phi(c_{\star,1}^2m_2+(c_\star^2-c_{\star,1}^2+\sigma^2)m_1)",
                 "--symbol", "sigma=noise", "--against", "train_loss_f0", "--student", "tanh", "--teacher", "He1",
                 "--n", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["proof"]["status"] == "identical"
    for argv in (["check", "m1", "--latex", "m_1"], ["check"], ["check", "--symbol", "sigma=noise", "m1"],
                 ["check", "--latex", "m_1", "--symbol", "sigma"]):
        assert main(argv + ["--against", "m1", "--student", "tanh"]) == 2
        capsys.readouterr()


def test_cli_convention_sets_the_table_and_converts_the_flags(capsys):
    # cui24's lambda against the spike-theory m1 at cui24 parameters: the flags and the formula both convert
    assert main(["check", "--latex", r"\frac{\lambda}{\alpha\beta}", "--against", "lam" if False else "m1",
                 "--student", "tanh", "--convention", "cui24", "--alpha", "2", "--beta", "1/2", "--lam", "1/10",
                 "--n", "1", "--json"]) == 1                    # lambda psi^2 is not m1: differs
    out = json.loads(capsys.readouterr().out)
    assert out["understood"]["convention"] == "cui24" and out["understood"]["formula"] == "lam*psi**2"


def test_sweep_carries_the_formula_with_an_error_that_bounds_it():
    kw = dict(student="relu_centered", teacher="x + (x**2-1)/sqrt(2)", fixed={"phi": 1, "psi": 2})
    tex = r"\frac\phi\psi\frac{c_{\star,1}^4}{b^2}\frac{-\partial_\lambda m_2}{m_1^2}"
    lo = sweep("lambda_1", {"lam": "1e-3:10:4"}, latex=tex, **kw)
    hi = sweep("lambda_1", {"lam": "1e-3:10:4"}, latex=tex, dps=30, **kw)
    assert lo.understood["latex"] and lo.formula
    for a, b in zip(lo.rows, hi.rows):
        with mpmath.workdps(40):
            assert abs(mpmath.mpf(a["formula"]) - mpmath.mpf(b["formula"])) <= mpmath.mpf(a["formula_error"])
            assert abs(mpmath.mpf(a["formula"]) - mpmath.mpf(a["value"])) <= \
                mpmath.mpf(a["formula_error"]) + mpmath.mpf(a["error"])        # identical formula
    assert list(lo.rows[0]) == ["lam", "value", "error", "formula", "formula_error"]
    with pytest.raises(InvalidParameterError, match="not both"):
        sweep("m1", {"lam": "1:2:2"}, formula="m1", latex="m_1", student="tanh", fixed={"phi": 1, "psi": 1})


def test_cli_sweep_latex(capsys):
    assert main(["sweep", "m1", "--over", "lam=1:2:2", "--phi", "1", "--psi", "2", "--student", "tanh",
                 "--latex", r"m_1^2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# read as (moniri23 table): m1**2") and "formula,formula_error" in out


@pytest.mark.parametrize("entry", CORPUS["formulas"], ids=[e["name"] for e in CORPUS["formulas"]])
def test_corpus_the_printed_formula_gets_the_stated_verdict(entry):
    """Each formula as printed in docs/theory (verbatim) reads as its re-typed form and gets the verdict the page
    states, through the API; the re-typed form gets the same proof and the same points."""
    assert entry["tex"] in (ROOT / "docs" / "theory" / entry["doc"]).read_text()
    fam = "srf" if entry["doc"].startswith("srf") else "spike"
    assert same(entry["tex"], entry["retyped"], fam)
    kw = dict(CORPUS[fam], n=2)
    a = check(latex=entry["tex"], against=entry["against"], **kw)
    b = check(entry["retyped"], entry["against"], **kw)
    assert a.proof["status"] == b.proof["status"]
    if entry["verdict"] == "identical":
        assert a.proof["status"] == "identical" and a.status == b.status == "identical"
    else:        # the difference is not 0, but involves the traces / the activations' constants: the points decide
        assert a.proof["status"] in ("differs symbolically", "not decided symbolically")
        assert a.status == b.status == "differs"
    assert a.agree == b.agree == (2 if entry["verdict"] == "identical" else 0)


@pytest.mark.parametrize("name", ["Delta_1", "Lambda_1 (talk)", "c (11)"])
def test_corpus_through_the_command_line(name, capsys):
    e = next(x for x in CORPUS["formulas"] if x["name"] == name)
    fam = "srf" if e["doc"].startswith("srf") else "spike"
    assert main(["check", "--latex", e["tex"], "--against", e["against"], "--student", CORPUS[fam]["student"],
                 "--teacher", CORPUS[fam]["teacher"], "--n", "2", "--json"]) == (0 if e["verdict"] == "identical"
                                                                                else 1)
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == e["verdict"] and out["understood"]["source"] == e["tex"]


_PIECES = [r"\phi", r"\psi", r"\lambda", "m_1", "m_2", r"c_{\star,1}", "b", "2", "0.5", "+", "-", "(", ")", "{", "}",
           "^", "_", r"\frac", r"\sqrt", r"\partial", "'", "=", r"\left(", r"\right)", r"\,", r"\star", "*", r"\tilde",
           r"\sigma", r"\foo", "x", "\\", "&", "[", "]", ",", "|", "!", r"\cdot", r"\mathrm{d}", "/"]


def _fuzz(pieces):
    """Any TeX made of these pieces is read into a formula the package evaluates, or refused in one line."""
    try:
        f = read_latex("".join(pieces), "spike")
    except InvalidParameterError as exc:
        assert "\n" not in str(exc)
        return
    expr_of(f.formula)                                   # what was read is a formula of the package's names


@settings(max_examples=12, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=25))
def test_fuzz_any_tex_is_read_or_refused_in_one_line(pieces):
    _fuzz(pieces)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=40))
def test_fuzz_any_tex_is_read_or_refused_in_one_line_long(pieces):
    _fuzz(pieces)


def _tree(draw, leaves, depth):
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(leaves))
    op = draw(st.sampled_from(["add", "mul", "div", "pow", "sqrt", "neg"]))
    a = _tree(draw, leaves, depth - 1)
    if op == "sqrt":
        return sp.sqrt(a)
    if op == "neg":
        return -a
    if op == "pow":
        return a ** draw(st.integers(2, 4))
    b = _tree(draw, leaves, depth - 1)
    return {"add": a + b, "mul": a * b, "div": a / b}[op]


@st.composite
def formulas(draw):
    fam = draw(st.sampled_from(["spike", "srf"]))
    names = sorted(formula_tex(fam))
    leaves = [sp.Symbol(n) for n in names] + [sp.Integer(2), sp.Rational(1, 3)]
    return fam, _tree(draw, leaves, 3)


@settings(max_examples=25, deadline=None)
@given(formulas())
def test_round_trip_any_formula_rendered_by_sympy_reads_back_exactly(case):
    """An independent writer: SymPy's LaTeX printer, in the package's notation (registry.formula_tex), writes a random
    formula of the formula names; the reader must give back exactly that formula."""
    fam, expr = case
    assume(not expr.has(sp.I, sp.zoo, sp.nan))
    tex = sp.latex(expr, symbol_names={sp.Symbol(k): v for k, v in formula_tex(fam).items()})
    got = expr_of(read_latex(tex, fam).formula, fam)
    want = expr_of(str(expr), fam)
    assert sp.simplify(got - want) == 0, (tex, got, want)


@pytest.mark.parametrize("tex, want", [
    (r"\Delta_1=\frac{\psi\lambda c_{\star,1}^4m_2}{\phi\,b^2}\,.", D1),            # a sentence's period
    (r"\left.\phi+\psi\right)", "error:"), (r"\left.\frac{\partial m_2}{\partial\lambda}\right|", "error:"),
    (r"\left.\frac{\partial m_2}{\partial\lambda}\right.", "dm2"),
    (r"2.\phi", "error:lone '.'"),
    (r"\phi)\psi", "error:"), (r"\phi(\psi", "error:"), (r"\phi+\psi+", "error:"),
    (r"\phi^-1\psi", "error:"), (r"\mu_1^{\star}{}^2", "error:"),
    (r"4/3\,\psi", "error:ambiguous"), (r"\lambda\psi/\phi b^2", "error:ambiguous"),
    (r"4/3", "4/3"), (r"\lambda\psi/(\phi b^2)", "lam*psi/(phi*b**2)"), (r"\lambda/\exp(\phi)+1", "lam*exp(-phi)+1"),
    (r"\lambda/\exp(\phi)\psi", "error:ambiguous"), (r"\lambda/m_1^2 + 1", "lam/m1**2 + 1"), (r"\frac43\psi", "4*psi/3"),
    (r"\Lambda_1(\lambda)-\Lambda_1", "0"), (r"q_{\rm lin}(\lambda)", "phi/psi*(-dm2)/m1**2"),
    (r"m_1(-\lambda)", "error:argument"), (r"\rho(\lambda)", "error:argument"),
    (r"c_{\star,3}^2(-\partial_\lambda m_1)", "-cs3**2*dm1"),
    (r"\frac{d}{d\lambda}m_2^2", "error:power after"), (r"\partial_\lambda m_2^2", "error:power after"),
    (r"m_2''", "error:second"), (r"\partial_\lambda m_2'", "error:second"), (r"(m_2')^2", "dm2**2"),
    (r"{\phi+\psi}\lambda", "error:braces do not print"), (r"\frac{{\phi+\psi}}{2}", "(phi+psi)/2"),
    (r"-\partial_\lambda m_2\left(\psi m_1^2-\phi\right)", "-dm2*(psi*m1**2 - phi)"),
    (r"\frac{\partial m_2}{\partial\lambda}(1+\phi)", "dm2*(1+phi)"), (r"\pi(1+\phi)", "pi*(1+phi)"),
    (r"\frac{{\rm d}m_2}{{\rm d}\lambda}", "error:"), (r"{\rm d}m_2", "error:differential"),
    (r"\phi^\frac12", "sqrt(phi)"), (r"=\phi", "error:nothing on its left side"), (r"\over", "error:not a name"),
    (r"10^{5000}\phi", "error:"), ("m_1" * 100, "error:more than 80 names"), (r"\mathrm{}", "error:not a name"),
    # the second review
    (r"\partial_\lambda m_2(\lambda)", "dm2"), (r"\frac{\partial m_2}{\partial\lambda}(\lambda)", "dm2"),
    (r"\partial_\lambda m_2(-\lambda)", "error:reads like an argument"), (r"m_1^2(\lambda)", "m1**2"),
    (r"\frac{1}{m_1^2(\lambda)}", "1/m1**2"), (r"\ln\lambda/\phi", "error:parentheses"),
    (r"\ln(\lambda)/\phi", "log(lam)/phi"), (r"\sin^2(\phi)", "sin(phi)**2"), (r"c_1(\phi)", "error:argument"),
    (r"c_1\left(\mu\right)^2", "error:"), (r"c_0\left(c_1\right)^{2}", "error:argument"),
    (r"\phi(\psi)^2", "error:argument"), (r"1/|m_1|", "1/Abs(m1)"),
    (r"|m_1|/|m_2|", "Abs(m1)/Abs(m2)"), (r"\frac{c_{\star,2}^2}{2!}", "cs2**2/2"), ("12!!", "error:factorials"), (r"\phi!", "error:factorials"), (r"\partial_\lambda{m_2}", "dm2"),
    (r"m_1 \\", "m1"), (r"\[ m_1 \label{eq:1} \]", "m1"), (r"\phi\tag{3}", "phi"), (r"\sqrt(\phi)", "error:sqrt"),
    (r"\sqrt[3]{\phi}", "phi**(1/3)"), ("1" * 60, "error:longer than 50"),
])
def test_review_findings(tex, want):
    """The adversarial review's inputs (misreadings, crashes, refusals of valid input): read right or refused."""
    if want.startswith("error:"):
        with pytest.raises(InvalidParameterError, match=want[6:] or None):
            read_latex(tex, "spike")
    else:
        assert same(tex, want), read_latex(tex, "spike").formula


def test_review_findings_overrides_and_arguments():
    for bad in ({"kappa^2": "c_gt1"}, {"sigma^2": "noise_var"}, {"kappa": "c_gt1", r"\kappa": "c0"}):
        with pytest.raises(InvalidParameterError):
            read_latex(r"\kappa^2 + \sigma", "spike", symbols=bad)
    assert same(r"\tilde\eta", "2*eta", "srf", symbols={"tilde\\eta": "2*eta"})
    assert same(r"\check{\mu_1}^2", "mu1c2", "srf") and same(r"\gamma\alpha_0", "gamma*alpha0", "srf")
    with pytest.raises(InvalidParameterError, match="argument"):
        read_latex(r"\gamma(\alpha_0)", "srf")
    for name in ("m_1'", r"\partial_\lambda m_1"):
        with pytest.raises(InvalidParameterError, match="derivative"):
            read_latex("m_1", "spike", symbols={name: "dm2"})
    assert same(r"\kappa", "exp(1)*c1", symbols={"kappa": "exp(1)*c1"})
    with pytest.raises(InvalidParameterError, match="family"):
        read_latex(r"\phi", "bogus")
    with pytest.raises(InvalidParameterError, match="symbols"):
        read_latex(r"\phi", "spike", symbols=["x"])
