"""Outputs that carry their context (issue 35, item 3): every CSV starts with '#' lines (the command as typed, the
parameters as typed, the version, the method, the provenance) that the package's reader and pandas read back; every
JSON echoes the parameters as typed; ``--table latex`` prints a booktabs table whose digits are the vouched digits
and whose value +- error contains an independent high-precision reference.  Fast: commands in process, small grids.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import types
from fractions import Fraction as F

import mpmath
import pytest

import onestep_theory
from onestep_theory.cli.common import typed_echo
from onestep_theory.cli.main import main
from onestep_theory.core.results import csv_text, read_csv
from onestep_theory.quantities import sweep
from onestep_theory.quantities.table import latex_number
from onestep_theory.reproduce import output
from onestep_theory.study import ResultStore

VERSION = onestep_theory.__version__


def cli(argv) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main([str(a) for a in argv])
    assert rc == 0, (argv, buf.getvalue())
    return buf.getvalue()


def check_context(ctx, argv, typed, method_word):
    """The '#' lines of a CSV: package and version, the command line as typed, the parameters as typed, the method,
    the provenance with the version."""
    assert ctx["package"] == f"onestep_theory {VERSION}"
    assert ctx["command"] == "onestep-theory " + " ".join(str(a) for a in argv)
    for k, v in typed.items():
        assert ctx["parameters"][k] == v, (k, ctx["parameters"])
    assert method_word in ctx["method"]
    assert ctx["provenance"]["version"] == VERSION


# ------------------------------------------------------------------------------------------------------------ CSV
SWEEP = ["sweep", "m1", "--student", "tanh", "--over", "lam=1:2:2", "--phi", "1/2", "--psi", "0.3"]


def test_sweep_csv_file_and_stdout_carry_the_context(tmp_path):
    path = tmp_path / "s.csv"
    argv = SWEEP + ["--csv", path]
    cli(argv)
    ctx, rows = read_csv(path)
    check_context(ctx, argv, {"phi": "1/2", "psi": "0.3", "over": "lam=1:2:2", "quantity": "m1"}, "15 digits")
    assert ctx["defaults"] == {"dps": 15}
    assert [r["lam"] for r in rows] == ["1", "2"] and set(rows[0]) == {"lam", "value", "error"}
    ctx2, rows2 = read_csv(io.StringIO(cli(SWEEP)))            # stdout: the same table (a trailing '#' line too)
    assert rows2 == rows and ctx2["parameters"] == ctx["parameters"]
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(path, comment="#", dtype=str)
    assert frame.to_dict("records") == rows


def test_sweep_api_csv_has_its_own_context():
    res = sweep("m1", "lam=1:2:2", student="tanh", fixed={"phi": "1/2", "psi": F(3, 10)})
    ctx, rows = read_csv(io.StringIO(res.to_csv()))
    assert ctx["parameters"] == {"quantity": "m1", "over": "lam=1:2:2", "student": "tanh", "phi": "1/2",
                                 "psi": "3/10", "dps": 15}
    assert ctx["command"].startswith("onestep_theory.quantities.sweep(") and len(rows) == 2


def test_srf_curve_csv_method_and_typed(tmp_path):
    path = tmp_path / "c.csv"
    argv = ["srf-curve", "--student", "tanh", "--teacher", "He1", "--alpha0", "inf", "--eta", "3/2", "--alphas",
            "1/2,1", "--lam", "0.1", "--csv", path]
    out = cli(argv)
    ctx, rows = read_csv(path)
    check_context(ctx, argv, {"alpha0": "inf", "eta": "3/2", "alphas": "1/2,1", "lam": "0.1"}, "float64")
    assert "kappa rule" in ctx["method"] and ctx["defaults"]["beta"] == "1"          # a default, shown apart
    assert [r["alpha"] for r in rows] == ["1/2", "1"] and read_csv(io.StringIO(out))[1] == rows


def test_store_export_and_reproduce_tables(tmp_path):
    with ResultStore(tmp_path / "st.sqlite") as st:
        st.put("srf", {"alpha": "1/2"}, 100, 0, {"mse": 0.25}, 0.1)
        buf = io.StringIO()
        assert st.export(buf, "csv", context={"command": "onestep-theory store export x"}) == 1
    ctx, rows = read_csv(io.StringIO(buf.getvalue()))
    assert ctx["command"] == "onestep-theory store export x" and VERSION in ctx["method"]
    assert rows[0]["params"] == '{"alpha":"1/2"}' and rows[0]["result.mse"] == "0.25"
    token = output.RUN.set({"command": "onestep-theory reproduce --smoke", "mode": "smoke", "seed": 7})
    try:
        output.write_table(tmp_path, "t", [{"lam": 0.5, "theory": 1.25}], {"phi": 0.5, "alpha0": "inf", "big": [1]})
    finally:
        output.RUN.reset(token)
    ctx, rows = read_csv(tmp_path / "t.csv")
    assert ctx["command"] == "onestep-theory reproduce --smoke" and ctx["run"] == {"mode": "smoke", "seed": 7}
    assert ctx["parameters"] == {"phi": 0.5, "alpha0": "inf"} and rows == [{"lam": "0.5", "theory": "1.25"}]
    assert json.loads((tmp_path / "t.json").read_text())["context"]["provenance"]["version"] == VERSION


def test_csv_text_without_context_and_foreign_csv():
    ctx, rows = read_csv(io.StringIO(csv_text([{"a": "1/3"}])))
    assert ctx == {"package": f"onestep_theory {VERSION}"} and rows == [{"a": "1/3"}]
    assert read_csv(io.StringIO("a,b\n1,2\n")) == ({}, [{"a": "1", "b": "2"}])


# ----------------------------------------------------------------------------------------------------------- JSON
@pytest.mark.parametrize("argv,typed,computed", [
    (["mapping", "--student", "tanh", "--teacher", "tanh", "--alpha0", "1/2", "--eta", "3/2", "--dps", "30"],
     {"alpha0": "1/2", "eta": "3/2"}, ("r", "c", "gamma")),
    (["cge", "--student", "tanh", "--r", "1/2", "--c", "1/3", "--gamma", "1/5", "--kappa", "1/2", "--dps", "20"],
     {"r": "1/2", "c": "1/3"}, ()),
    (["srf", "--student", "tanh", "--teacher", "He1", "--r", "1/2", "--c", "4/3", "--gamma", "1/5", "--alpha", "1",
      "--beta", "1", "--lam", "0.1"], {"r": "1/2", "c": "4/3", "gamma": "1/5"}, ("test_error",)),
    (SWEEP, {}, ()),
])
def test_json_echoes_parameters_as_typed(argv, typed, computed):
    d = json.loads(cli(argv + ["--json"]))
    for k, v in typed.items():
        assert d[k] == v, (k, d[k])
    params = {a[2:].replace("-", "_"): b for a, b in zip(argv, argv[1:]) if a.startswith("--") and not
              b.startswith("--")}
    assert {k: d["input"]["parameters"][k] for k in params} == params
    assert d["input"]["command"] == "onestep-theory " + " ".join(argv + ["--json"])
    assert not isinstance(d.get("dps", 0), str)                       # an integer stays an integer
    for k in computed:                       # computed values keep their decimal digits
        assert re.fullmatch(r"-?\d\.\d{10,}(e-?\d+)?|0\.\d{10,}", d[k]), (k, d[k])


def test_typed_echo_never_replaces_a_computed_value():
    args = types.SimpleNamespace(typed_context={"argv": ["x", "--r", "1/3"], "raw": {"r": "1/3"},
                                                "actions": [types.SimpleNamespace(dest="r", option_strings=["--r"],
                                                                                  default=None)]}, r="1/3")
    assert typed_echo(args, {"r": "0.33333333333333333333"})["r"] == "1/3"    # 1/3 correctly rounded: the input
    assert typed_echo(args, {"r": "0.3334"})["r"] == "0.3334"                 # not 1/3 rounded: a computed value
    assert typed_echo(args, {"r": "0.3333"})["input"]["parameters"] == {"r": "1/3"}


# ---------------------------------------------------------------------------------------------------------- LaTeX
def _interval(num: str, unit=False):
    """(value, error) as exact fractions from ``\\num{v(u)eE}`` (and the unit of the last digit)."""
    m = re.fullmatch(r"\\num\{(-?)(\d+)(?:\.(\d*))?(?:\((\d+)\))?(?:e(-?\d+))?\}", num)
    assert m, num
    sign, whole, frac, units, exp = m.group(1), m.group(2), m.group(3) or "", m.group(4) or "0", int(m.group(5) or 0)
    v = F(int(whole + frac), 10 ** len(frac)) * F(10) ** exp * (-1 if sign else 1)
    return (v, int(units) * F(10) ** (exp - len(frac))) + ((F(10) ** (exp - len(frac)),) if unit else ())


def _structure(tex: str):
    assert tex.count(r"\begin{table}") == tex.count(r"\end{table}") == 1
    assert tex.count(r"\begin{tabular}") == tex.count(r"\end{tabular}") == 1
    assert tex.index(r"\toprule") < tex.index(r"\midrule") < tex.index(r"\bottomrule")
    body = "\n".join(t for t in tex.splitlines() if not t.startswith("%"))
    assert body.count("{") == body.count("}") and body.count("$") % 2 == 0
    ncols = len(re.search(r"\\begin\{tabular\}\{(\w+)\}", tex).group(1))
    rows = tex.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
    assert all(r.endswith(r"\\") and r.count("&") == ncols - 1 for r in rows)
    return [[c.strip() for c in r[:-2].split("&")] for r in rows]


def _mu1_tanh(dps):
    """E tanh'(Z), Z ~ N(0, 1), by direct quadrature (independent of the package's Hermite path)."""
    with mpmath.workdps(dps + 15):
        return mpmath.quad(lambda z: mpmath.sech(z) ** 2 * mpmath.npdf(z), [-mpmath.inf, -3, 0, 3, mpmath.inf])


@pytest.mark.parametrize("dps", [15, 30, 50])
def test_sweep_latex_digits_are_vouched_and_contain_the_truth(dps):
    """r = eta mu1 |mu1*| at alpha0 = inf (Result 3.1; mu1* = 1 for the teacher He1): the table's digits are those of
    the JSON rows (the vouched strings) and its value +- error contains eta E tanh'(Z) computed independently."""
    argv = ["sweep", "r", "--student", "tanh", "--teacher", "He1", "--over", "eta=1/3:3:3", "--alpha0", "inf",
            "--dps", str(dps)]
    tex = cli(argv + ["--table", "latex"])
    rows = json.loads(cli(argv + ["--json"]))["rows"]
    cells = _structure(tex)
    assert "% fixed: alpha0 = inf" in tex and r"$\alpha_0 = \infty$" in tex and f"onestep_theory {VERSION}" in tex
    assert "% command: onestep-theory sweep r" in tex and "% method: grid" in tex
    mu1 = _mu1_tanh(dps)
    for (eta_cell, num), row in zip(cells, rows):
        assert eta_cell == f"${row['eta']}$"
        digits = re.match(r"\\num\{([-\d.]+)", num).group(1)
        assert digits == row["value"]                   # exactly the vouched digits, never one more
        v, e = _interval(num)
        assert e >= F(row["error"])                     # the unit count rounds the printed error up
        with mpmath.workdps(dps + 15):
            truth = mpmath.mpf(row["eta"].split("/")[0]) / (int(row["eta"].split("/")[1]) if "/" in row["eta"]
                                                            else 1) * mu1
            assert abs(mpmath.mpf(v.numerator) / v.denominator - truth) <= mpmath.mpf(e.numerator) / e.denominator
        assert len(digits.replace("-", "").replace(".", "").lstrip("0")) >= dps - 1


def test_srf_and_srf_curve_tables_match_their_json():
    base = ["--student", "tanh", "--teacher", "He1", "--alpha0", "inf", "--eta", "1", "--beta", "1", "--lam", "1/10"]
    d = json.loads(cli(["srf", *base, "--alpha", "1", "--json"]))
    cells = _structure(cli(["srf", *base, "--alpha", "1", "--table", "latex"]))
    assert cells[0][0] == r"$\varepsilon_g$"
    assert re.match(r"\\num\{([-\d.e]+?)\(", cells[0][1]).group(1) == d["test_error"]
    assert _interval(cells[0][1])[1] >= F(d["abs_error"])
    curve = json.loads(cli(["srf-curve", *base, "--alphas", "1,2", "--json"]))["rows"]
    pm = cli(["srf-curve", *base, "--alphas", "1,2", "--table", "latex-pm"])
    cells = _structure(pm)
    assert "siunitx" not in pm.splitlines()[0] and cells[0][0] == "$1$"
    assert cells[0][1].startswith("$" + curve[0]["test_error"] + r" \pm ")


@pytest.mark.parametrize("value,error", [("0.204381872790303", "4.52e-14"), ("-1.5", "0.0031"), ("0", "4.52e-14"),
                                         ("3e-7", "5.1e-6"), ("1.2345679e+400", "1.01e+394"), ("12345", "7")])
def test_latex_number_forms_cover_the_printed_interval(value, error):
    v, e, unit = _interval(latex_number(value, error), unit=True)
    assert v == F(value if "e+" not in value else "1.2345679") * (F(10) ** 400 if "e+" in value else 1)
    assert F(error) <= e < F(error) + unit             # the printed error rounded up to a whole unit, no more
    pm = latex_number(value, error, form="pm")
    m = re.fullmatch(r"\$(-?[\d.]+)(?:\\times10\^\{(-?\d+)\})? \\pm ([\d.]+)(?:\\times10\^\{(-?\d+)\})?\$", pm)
    assert m, pm
    assert F(m.group(3)) * F(10) ** int(m.group(4) or 0) == e          # the same interval in both forms


def test_latex_number_without_vouched_digits():
    assert "no digit vouched" in latex_number("0.1", "inf") and "no digit vouched" in latex_number("undefined", "")
    assert latex_number("1", "0") == r"\num{1}"


def test_study_csv_and_store_export_through_the_cli(tmp_path):
    store, path, exported = tmp_path / "s.sqlite", tmp_path / "g.csv", tmp_path / "e.csv"
    argv = ["study", "srf", "--student", "tanh", "--teacher", "sin", "--r", "1.1", "--c", "1.02", "--gamma", "0.97",
            "--alpha", "2", "--beta", "1", "--lam", "1/10", "--d", "30,60", "--reps", "2", "--store", store,
            "--workers", "1", "--quiet", "--csv", path]
    cli(argv)
    ctx, rows = read_csv(path)
    check_context(ctx, argv, {"lam": "1/10", "r": "1.1", "protocol": "srf", "d": "30,60"}, "SeedSequence")
    assert {r["d"] for r in rows} == {"30", "60"} and all(r["comparison"] for r in rows)
    main(["store", "export", str(store), "--out", str(exported)])
    ctx, rows = read_csv(exported)
    assert ctx["command"] == f"onestep-theory store export {store} --out {exported}" and len(rows) == 4
    assert ctx["parameters"] == {"action": "export", "path": str(store)}


def test_check_report_and_frame_carry_the_context(tmp_path):
    argv = ["check", "m1", "--against", "m1", "--student", "tanh", "--phi", "1/2", "--psi", "1/3", "--over",
            "lam=0.1:1", "--n", "2", "--report", tmp_path / "r.json"]
    cli(argv)
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["input"]["parameters"]["phi"] == "1/2" and d["input"]["command"].endswith("r.json")
    cli(argv[:-1] + [tmp_path / "r.txt"])
    assert (tmp_path / "r.txt").read_text().startswith("# onestep-theory check m1 --against m1")
    pytest.importorskip("pandas")
    frame = sweep("m1", "lam=1:2:2", student="tanh", fixed={"phi": "1/2", "psi": "1/3"}).to_frame()
    assert frame.attrs["parameters"]["phi"] == "1/2" and "digits" in frame.attrs["method"]


@pytest.mark.parametrize("argv", [
    ["bounds", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3"],
    ["srf", "--student", "tanh", "--teacher", "He1", "--alpha0", "inf", "--eta", "1", "--alpha", "1", "--beta", "1",
     "--lam", "1/10", "--dps", "20"],
])
def test_quantity_tables_show_every_field_with_its_vouched_digits(argv):
    d = json.loads(cli(argv + ["--json"]))
    tex = cli(argv + ["--table", "latex"])
    cells = _structure(tex)
    values = {**d, **d.get("order", {})}
    assert len(cells) == sum(isinstance(values.get(k), str) for k in d["errors"])     # every field with an error
    for _, num in cells:                    # each cell is a field's vouched digits (a zero: 0 at its error's place)
        digits, (v, e) = re.match(r"\\num\{([-\d.]+)", num).group(1), _interval(num)
        # the JSON's digits, or (a value whose last digit is far above its error: c = 1 +/- 1e-37) the same digits
        # with zeros written out to the error's place, never the error inflated to a unit of the last digit
        assert any(isinstance(values.get(k), str) and F(err) <= e < 100 * F(err) + F(10) ** -60 and
                   (values[k].split("e")[0] == digits or values[k] == "0" == str(v) or
                    (digits.startswith(values[k].split("e")[0]) and F(digits) == F(values[k].split("e")[0])))
                   for k, err in d["errors"].items()), num
    assert "% fixed: alpha0 = " in tex and tex.count(r"\num{") == len(cells)


def test_alpha0_inf_wherever_the_mapping_takes_it(capsys):
    base = ["--student", "tanh", "--teacher", "He1", "--eta", "1", "--beta", "1", "--lam", "1/10"]
    one = json.loads(cli(["srf", *base, "--alpha0", "inf", "--alpha", "1", "--json"]))
    rows = json.loads(cli(["srf-curve", *base, "--alpha0", "20", "--sweep", "alpha0", "--values", "20,inf", "--alpha",
                           "1", "--json"]))["rows"]
    swept = json.loads(cli(["sweep", "test_error", *base, "--alpha0", "inf", "--over", "alpha=1:2:2", "--json"]))
    assert rows[1]["alpha0"] == "inf"
    pairs = [(one["test_error"], one["abs_error"]), (rows[1]["test_error"], rows[1]["abs_error"]),
             (swept["rows"][0]["value"], swept["rows"][0]["error"])]   # three paths (cold, warm from alpha0 = 20)
    assert all(abs(F(a) - F(b)) <= F(ea) + F(eb) for a, ea in pairs for b, eb in pairs)
    assert F(one["gamma"]) == F(one["c"]) == 1                       # perfect alignment (Result 3.1 at alpha0 = inf)
    capsys.readouterr()
    for argv in (["srf-curve", *base, "--alpha0", "20", "--sweep", "lam", "--values", "1,inf", "--alpha", "1"],
                 ["sweep", "test_error", *base, "--alpha0", "20", "--eta", "inf", "--over", "alpha=1:2:2"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and ("lam" in err or "eta" in err), err
