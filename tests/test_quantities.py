"""Quantities by name, the formula checker and sweeps (docs/theory/checking.md): printed formulas from
spike-theory.md §§7-8 and srf-theory.md §2 checked against the package, with proofs, points and simulation."""

import json
import math

import mpmath
import pytest
import sympy as sp

from onestep_theory.core.results import read_csv
from onestep_theory import InvalidParameterError
from onestep_theory.cli.main import main
from onestep_theory.core.errors import ExpressionError
from onestep_theory.quantities import QUANTITIES, check, closed_form, evaluate, sweep
from onestep_theory.quantities.grid import grid_points, parse_range, sample_points
from onestep_theory.spikes import gains

DELTA1 = "psi*lam*cs1**4*m2/(phi*b**2)"                                     # spike-theory.md §7.1, as printed
DELTA2 = DELTA1 + " + 4*psi*lam*cs1**4*cs2**2*m1/(3*phi*b**4)"
SLIDE_L1 = "cs1**4/(cs1**2 + phi*(c_star2 + noise))*(-dm2)"                 # §8.2, the talk's Lambda_1
C_V1 = "1 + eta**2/alpha0*mu2s*mu1c2*mu1**2"                                # srf-theory.md §2, earlier variant
STUDENT3 = "sin(x) + cos(x) - exp(-1/2)"                                     # centred, c_1, c_2, c_3 != 0


def test_printed_delta_1_and_2_are_identical_with_a_proof():
    r = check(DELTA1, "delta_1", student="tanh", teacher="He1", n=6)
    assert r.proof["status"] == "identical" and r.agree == 6 and r.verdict.startswith("identical")
    r = check(DELTA2, "delta_2", student="relu_centered", teacher="He1 + He2/sqrt(2)", n=2, dps=30)
    assert r.proof["status"] == "identical" and r.agree == 2 and "30 digits" in r.verdict


def test_slide_lambda_1_differs_and_exceeds_the_largest_gain():
    r = check(SLIDE_L1, "lambda_1", student="tanh", teacher="He1", n=16, fixed={"noise": 1})
    assert r.proof["status"] == "not decided symbolically" and r.agree == 0 and r.verdict.startswith("differs")
    assert r.status == "differs"          # the difference involves the traces (tied): the points decide
    assert "exceeds the largest possible gain" in r.verdict and r.max_relative_gap > 1
    # the spec's number (spike-theory.md §8.3): phi = psi = 1/2, lam = 1/10, Setting 1: 3.2275 against a bound 0.619
    one = check(SLIDE_L1, "lambda_1", student="tanh", teacher="He1", n=1,
                fixed={"phi": "1/2", "psi": "1/2", "lam": "1/10", "noise": 1})
    pt = one.points[0]
    assert float(pt["formula"]) == pytest.approx(3.2275, abs=1e-4)
    assert float(pt["largest_possible_gain"]) == pytest.approx(0.619, abs=1e-3)
    # the reported difference is exactly formula - closed form
    f = sp.sympify(one.proof["detail"].split(" = ", 1)[1])
    assert f.free_symbols and sp.simplify(f.subs(sp.Symbol("m1", positive=True), 0)) != 0


def test_old_bulk_variance_differs_by_the_factor_mu1_squared():
    r = check(C_V1, "c", student="tanh", teacher="sin", n=8)
    assert r.proof["status"] == "not decided symbolically" and "(mu1 - 1)*(mu1 + 1)" in r.proof["detail"]
    assert r.status == "differs" and r.agree == 0            # mu1 is tanh's constant here: the points decide
    r2 = check("1 + eta**2/alpha0*mu2s*mu1c2", "c", student="tanh", teacher="sin", n=8)
    assert r2.proof["status"] == "identical" and r2.agree == 8


def test_a_quantity_without_closed_form_is_checked_numerically():
    r = check("m1", "m1", student="tanh", n=5, dps=30)
    assert r.proof["status"] == "no closed form" and r.agree == 5
    # Delta_1 -> c*1^4/b^2 as lam -> infinity (spike-theory.md §7.4): at lam = 1e6 agrees to 5 digits, not to 15
    r = check("cs1**4/b**2", "delta_1", student="tanh", teacher="He1", n=3, fixed={"lam": 1000000})
    assert r.agree == 0 and 1e-9 < r.max_relative_gap < 1e-4


@pytest.mark.slow      # default-suite budget: 30-digit numeric paths, 4 s
def test_closed_forms_match_the_numeric_path_at_30_digits():
    """Every closed form of the registry, evaluated at the symbol values, equals the numeric path (an identity
    between two independent computations)."""
    for name in ("delta_3", "lambda_2", "train_loss_f0", "test_loss_f0"):
        cf = closed_form(name)
        v, err, vals, *_ = evaluate(name, {"phi": "1/3", "psi": "2", "lam": "1/7", "noise": "1/2"},
                                   STUDENT3, "He1 + He2/sqrt(2) + He3/sqrt(6)", dps=30)
        with mpmath.workdps(40):
            f = sp.lambdify(sorted(cf.free_symbols, key=str), cf, "mpmath")(
                *[vals[s] for s in sorted(cf.free_symbols, key=str)])
            assert abs(f - v) <= 1e-30 * abs(v) + 2 * err, name
    g = gains(STUDENT3, "He1 + He2/sqrt(2) + He3/sqrt(6)", "1/3", "2", "1/7", ell=3, noise_var="1/2", dps=30)
    v = evaluate("delta_3", {"phi": "1/3", "psi": "2", "lam": "1/7", "noise": "1/2"}, STUDENT3,
                 "He1 + He2/sqrt(2) + He3/sqrt(6)", dps=30)[0]
    assert abs(v - g.delta[-1]) < 1e-29


def test_check_refusals():
    for kw, err in (({"formula": "m1 + zz", "against": "m1"}, ExpressionError),
                    ({"formula": "m1", "against": "m3"}, InvalidParameterError),
                    ({"formula": "m1", "against": "m1", "fixed": {"zeta": 1}}, InvalidParameterError),
                    ({"formula": "m1", "against": "m1", "dps": 5}, InvalidParameterError),
                    ({"formula": "m1", "against": "m1", "over": "phi=2:1"}, InvalidParameterError),
                    ({"formula": "__import__('os')", "against": "m1"}, ExpressionError)):
        with pytest.raises(err):
            check(student="tanh", n=2, **kw)
    # a parameter neither side depends on is dropped with a warning naming it (not silently, not refused: a dandi24
    # --beta feeds the conversion of --eta even where the formula does not carry beta)
    with pytest.warns(UserWarning, match="alpha fixed, but neither m1 nor the formula depends on it"):
        r = check("m1", "m1", student="tanh", n=2, fixed={"alpha": 1})
    assert "alpha" not in r.fixed and r.status == "agrees"
    # a formula carrying a parameter the quantity does not depend on: sampled, and the verdict is 'differs'
    r = check("alpha", "c", student="tanh", teacher="sin", n=2)
    assert r.status == "differs" and "alpha" in r.sampled and r.exit_code == 1


def test_ranges_and_points():
    assert parse_range("lam", "1e-3:10:40", need_count=True)[3] == "log"
    assert parse_range("alpha", "0.5:3:6", need_count=True)[3] == "lin"
    assert parse_range("x", "1/10:1/2:3:lin", need_count=True) == (0.1, 0.5, 3, "lin")
    pts = grid_points({"a": (1.0, 2.0, 2, "lin"), "b": (1.0, 100.0, 3, "log")})
    assert [(p["a"], p["b"]) for p in pts] == [("1", "1"), ("1", "10"), ("1", "100"), ("2", "1"), ("2", "10"),
                                               ("2", "100")]
    s = sample_points({"phi": (0.1, 10.0, None, "log")}, 50)
    assert s == sample_points({"phi": (0.1, 10.0, None, "log")}, 50)            # the same points every run
    v = sorted(math.log10(float(p["phi"])) for p in s)
    assert v[0] < -0.9 and v[-1] > 0.9 and all(-1 <= x <= 1 for x in v)
    for bad in ("1:1:3", "0:1:3:log", "1:2", "1:2:0", "a:b:3"):
        with pytest.raises(InvalidParameterError):
            parse_range("lam", bad, need_count=True)


def test_sweep_rows_are_the_pointwise_values_and_warm_start_changes_nothing():
    s = sweep("delta_2", {"lam": "1e-3:10:5"}, student="relu_centered", teacher="x + (x**2-1)/sqrt(2)",
              fixed={"phi": 1, "psi": 2})
    assert len(s) == 5 and [r["lam"] for r in s.rows][::4] == ["0.001", "10"]
    for r in s.rows[::2]:
        v, err, *_ = evaluate("delta_2", {"phi": 1, "psi": 2, "lam": r["lam"]}, "relu_centered",
                                "x + (x**2-1)/sqrt(2)")
        assert abs(float(r["value"]) - float(v)) <= 1e-14 * abs(float(v))
    warm = sweep("test_error", "alpha=0.5:3:4", student="tanh", teacher="sin",
                 fixed={"beta": 1, "lam": "1/10", "alpha0": 20, "eta": 3})
    for r in warm.rows:
        cold = evaluate("test_error", {"alpha": r["alpha"], "beta": 1, "lam": "1/10", "alpha0": 20, "eta": 3},
                        "tanh", "sin")
        assert abs(float(r["value"]) - float(cold[0])) <= 2 * (float(r["error"]) + cold[1]) + 1e-12
    html = warm._repr_html_()
    assert "<table>" in html and "test_error" in html
    pd = pytest.importorskip("pandas")
    frame = warm.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["alpha", "value", "error"] and len(frame) == 4
    with pytest.raises(InvalidParameterError):
        sweep("m1", {"lam": "1:2:3"}, student="tanh", fixed={"phi": 1, "psi": 1, "lam": 1})
    with pytest.raises(InvalidParameterError):
        sweep("m1", {"alpha": "1:2:3"}, student="tanh", fixed={"phi": 1, "psi": 1})


def test_every_quantity_evaluates_with_an_error_estimate():
    spike = {"phi": "1/2", "psi": "1/2", "lam": "1/10"}
    srf = {"alpha": "2", "beta": "1", "lam": "1/10", "alpha0": "20", "eta": "3"}
    for name, q in QUANTITIES.items():
        if name.startswith(("delta_", "lambda_")) and int(name.split("_")[1]) > 2:
            continue
        point = {k: v for k, v in (spike if q.family == "spike" else srf).items() if k in q.params}
        v, err, *_ = evaluate(name, point, "tanh" if q.family == "srf" else
                                "relu_centered", "sin" if q.family == "srf" else "He1 + He2/sqrt(2)")
        assert math.isfinite(float(v)) and 0 <= err < 1e-9 * max(1, abs(float(v))), name


def test_cli_check_and_sweep(tmp_path, capsys):
    assert main(["check", SLIDE_L1, "--against", "lambda_1", "--student", "tanh", "--teacher", "He1", "--n", "8",
                 "--json"]) == 1                        # like diff: 1 when the formula differs
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"].startswith("differs") and out["worst"]["point"]
    assert main(["check", DELTA1, "--against", "delta_1", "--student", "tanh", "--teacher", "He1", "--n", "4",
                 "--report", str(tmp_path / "r.txt")]) == 0
    assert "identical" in capsys.readouterr().out and "symbolic proof" in (tmp_path / "r.txt").read_text()
    csv_path = tmp_path / "out.csv"
    assert main(["sweep", "m2", "--student", "relu_centered", "--over", "lam=1e-3:10:6", "--phi", "1", "--psi", "2",
                 "--csv", str(csv_path), "--plot", str(tmp_path / "s.png")]) == 0
    assert len(read_csv(csv_path)[1]) == 6 and (tmp_path / "s.png").stat().st_size > 1000
    for argv, flag in ((["check", "m1 +", "--against", "m1", "--student", "tanh"], "formula"),
                       (["sweep", "m1", "--student", "tanh", "--over", "lam=1:2", "--phi", "1", "--psi", "1"], "lam"),
                       (["sweep", "nope", "--student", "tanh", "--over", "lam=1:2:3"], "quantity")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and flag in err, err


@pytest.mark.slow
def test_cli_sweep_acceptance(tmp_path):
    csv_path = tmp_path / "out.csv"
    assert main(["sweep", "delta_2", "--student", "relu_centered", "--teacher", "x + (x**2-1)/sqrt(2)", "--over",
                 "lam=1e-3:10:40", "--phi", "1", "--psi", "2", "--csv", str(csv_path)]) == 0
    rows = [t for t in csv_path.read_text().splitlines() if not t.startswith("#")]
    assert len(rows) == 41 and rows[0] == "lam,value,error"


@pytest.mark.slow
def test_simulation_sides_with_the_package_against_c_v1():
    """The earlier bulk variance against the measured one (d = 400, 4 networks per point): the package's c within
    4 standard errors at both points, c_v1 more than 4 away at one at least (measured z = -2.1, -7.4)."""
    r = check(C_V1, "c", student="tanh", teacher="sin", n=8, simulate=True, sim_points=2)
    assert all(abs(s["z_quantity"]) < 4 for s in r.simulation)
    assert max(abs(s["z_formula"]) for s in r.simulation) > 4


def test_notebook_displays():
    """_repr_html_ of every result, _repr_latex_ of closed forms, to_frame of simulation results
    (docs/theory/checking.md §6)."""
    from onestep_theory.simulate import sim_resolvent

    g = gains("tanh", "He1", "1/2", "1/2", "1/10", ell=1, symbolic=True)
    latex = g._repr_latex_()
    assert latex.startswith("$\\begin{aligned}\\Delta_{1} &=") and "m_2" in latex
    assert gains("tanh", "He1", "1/2", "1/2", "1/10", ell=1)._repr_latex_() is None
    html = g._repr_html_()
    assert html.startswith("<p><b>Gains</b></p><table>") and "<th style='text-align:left'>delta</th>" in html
    r = check(DELTA1, "delta_1", student="tanh", teacher="He1", n=2)
    assert r.verdict in r._repr_html_() and r._repr_latex_().startswith("$\\text{delta_1}")
    sim = sim_resolvent("tanh", d=40, phi=1, psi=2, lam=0.5, reps=3, seed=1)
    assert "<td>m1</td>" in sim._repr_html_()
    rows = sim.rows()
    assert [x["quantity"] for x in rows] == ["m1", "m2", "dm1_dlam", "dm2_dlam"]
    assert rows[0]["mean"] == sim["m1"].mean and rows[0]["se"] == sim["m1"].se and rows[0]["reps"] == 3
    pd = pytest.importorskip("pandas")
    frame = sim.to_frame()
    assert isinstance(frame, pd.DataFrame) and frame["mean"].tolist() == [x["mean"] for x in rows]


def test_review_regressions_check():
    """Found by an independent review: signs of the sRF symbols, the digits a verdict claims, formulas undefined at
    some points, r/c/gamma in a formula, names that are not parameters."""
    r = check("eta*sqrt(mu1**2)*sqrt(mu1s**2+mu2s/alpha0)", "r", student="-tanh(x)", teacher="tanh", n=2)
    assert r.proof["status"] == "not decided symbolically" and "Abs(mu1)" in r.proof["detail"] and r.agree == 0
    assert r.status == "differs"
    assert check("gamma", "gamma", student="tanh", teacher="sin", n=2).proof["status"] == "identical"
    r = check("0.0856960771289", "test_error", student="tanh", teacher="tanh", n=1,
              fixed={"alpha": 2, "beta": 1, "alpha0": 2, "eta": 1, "lam": "1/10", "noise": 0})
    assert r.verdict.startswith("agrees to 12 digits") and "vouches for 12 of the 15" in r.verdict
    # only the vouched digits: to the error's decimal place and one guard digit, the error covering the rounding
    q, qe = r.points[0]["quantity"], r.points[0]["quantity_error"]
    assert q.startswith("0.085696077128") and len(q) == len("0.0856960771288") + 2 and 1e-14 < float(qe) < 1e-12
    r = check("log(phi - 1)", "m1", student="tanh", n=4)
    assert r.verdict.startswith("differs") and "undefined" in r.verdict and r.agree == 0
    r = check("1/(lam-1)", "m1", student="tanh", n=1, fixed={"phi": 1, "psi": 1, "lam": 1})
    assert r.points[0]["formula"].startswith("undefined")
    # the printed difference uses the formula's names, so it can be pasted back
    d = check("cs1**4/(cs1**2 + phi*(c_star2 + noise))*(-dm2)", "lambda_1", student="tanh", teacher="He1", n=1)
    assert "dm2" in d.proof["detail"] and "dm2_dlam" not in d.proof["detail"] and "noise" in d.proof["detail"]
    for kw in ({"formula": "sqrt(-phi)"}, {"formula": "1/(phi-phi)"}, {"formula": "m1", "over": "c1=1:2"},
               {"formula": "m1", "over": "lam=1:2,lam=3:4"}, {"formula": "m1", "fixed": {"lam": 1}, "over": "lam=1:2"}, {"formula": "m1", "fixed": {"phi": 0}}):
        with pytest.raises(InvalidParameterError):
            check(against="m1", student="tanh", n=2, **kw)
    with pytest.raises(InvalidParameterError):
        evaluate("r", {"alpha0": 0, "eta": 1}, "tanh", "sin")                       # alpha0 > 0


def test_review_regressions_convention_flag(capsys):
    base = ["resolvent", "--student", "tanh"]
    assert main(base + ["--convention", "cui24", "--alpha", "2", "--beta", "1", "--lam", "1/10", "--json"]) == 0
    ref = json.loads(capsys.readouterr().out)["m1"]
    for argv in (base + ["--convention=cui24", "--alpha", "2", "--beta", "1", "--lam=1/10", "--json"],
                 ["--debug"] + base + ["--convention", "cui24", "--alpha=2", "--beta", "1", "--lam", "1/10", "--json"]):
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["m1"] == ref
    for argv, flag in ((base + ["--convention", "moniri23", "--phi", "2", "--psi", "1", "--lam", "1", "--noise-var",
                                "1"], "--noise-var"),
                       (base + ["--convention", "cui24", "--convention", "ba22", "--alpha", "1"], "--convention"),
                       (["sweep", "--student", "tanh", "m1", "--over", "lam=0.1:1:3", "--convention", "cui24",
                         "--alpha", "2", "--beta", "1"], "--over"),
                       (["check", "m1", "--against", "m1", "--student", "tanh", "--plot", "p.xyz"], "--plot")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and flag in err, err
    # ba22 with a command that takes alpha0 and eta only
    assert main(["bounds", "--convention", "ba22", "--psi1", "2", "--psi2", "1", "--eta", "1", "--d", "100",
                 "--student", "tanh", "--teacher", "sin", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert main(["bounds", "--alpha0", "2", "--eta", "1/10", "--student", "tanh", "--teacher", "sin", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["upper"] == out["upper"]


def test_headline_carries_the_proof_and_the_worst_point_one_format():
    """Issue 23: a formula that differs symbolically by less than the digits checked (+ 1e-20) headlined "agrees to
    15 digits"; the headline is the proof's verdict now.  The worst point prints formula and quantity alike."""
    r = check(DELTA1 + " + 1e-20", "delta_1", student="tanh", teacher="He1", n=4)
    assert r.agree == 4 and r.verdict.startswith("differs symbolically") and "agrees to 15 digits" in r.verdict
    w = r.worst
    assert ("e" in w["formula"].lower()) == ("e" in w["quantity"].lower())
    assert abs(float(w["formula"]) - float(w["quantity"])) <= 2 * float(w["quantity_error"])


def test_unknown_names_are_named_with_the_symbols_of_the_context(capsys):
    """Issue 23: a misspelt symbol in a formula or a loss was refused as "a real SymPy expression in x"; the message
    names the unknown symbol, suggests the nearest name and lists the symbols of that context."""
    from onestep_theory.cli.main import main

    assert main(["check", "psi*lamda*cs1**4*m2/(phi*b**2)", "--against", "delta_1", "--student", "tanh",
                 "--teacher", "He1"]) == 2
    err = capsys.readouterr().err
    assert "unknown name 'lamda' (did you mean 'lam'?)" in err and "phi, psi" in err and "in x," not in err
    assert main(["srf", "--student", "tanh", "--teacher", "sign", "--alpha0", "20", "--eta", "3", "--alpha", "2",
                 "--beta", "1", "--lam", "0.1", "--loss", "log(1+exp(-y*yhaat))"]) == 2
    err = capsys.readouterr().err
    assert "expected an expression in y, yhat" in err and "did you mean 'yhat'?" in err and len(err.splitlines()) == 1
