"""The claim audit (docs/theory/numerics.md §1): on the path a user takes — the command line with exact strings and
with decimals, the API with str, Fraction, mpf and float — every printed theory number ± its printed error must
contain the true value, against references computed independently of the package (``tests/data``, each made by a
script in ``tests/data/precompute``) or by exact identities.

The assertion is the contract itself, on the printed text: ``|printed − reference| ≤ printed error + reference
error``, exactly (Fractions), at every point and for every reported quantity.
"""

from __future__ import annotations

import fractions
import json
import pathlib

import mpmath
import pytest

from onestep_theory.cli import main

DATA = pathlib.Path(__file__).parent / "data"
F = fractions.Fraction


def _frac(v) -> F:
    if isinstance(v, mpmath.mpf):
        sign, man, exp, _ = v._mpf_
        f = F(int(man)) * F(2) ** int(exp)
        return -f if sign else f
    return F(str(v)) if not isinstance(v, (int, F)) else F(v)


def contains(text, err_text, ref, ref_err=0) -> bool:
    """The printed interval ``text ± err_text`` contains the reference (within its own error)."""
    return abs(F(text) - _frac(ref)) <= F(err_text) + _frac(ref_err)


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out) if "--json" in argv else out


def no_floats(obj, where="") -> None:
    """JSON numbers are decimal strings (integers such as counts and seeds excepted)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            no_floats(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            no_floats(v, f"{where}[{i}]")
    else:
        assert not isinstance(obj, float), f"float at {where}: {obj!r}"


# --------------------------------------------------------------------------------------------- Hermite layer
@pytest.fixture(scope="module")
def href():
    return json.loads((DATA / "hermite_reference.json").read_text())


@pytest.mark.parametrize("name,dps", [("tanh", 15), ("tanh", 30), ("relu", 30), ("sign", 15)])
def test_hermite_printed_values_contain_the_reference(capsys, href, name, dps):
    d = run(capsys, "hermite", name, "--kmax", "6", "--dps", dps, "--json")
    ref = href[name]
    for k, c in enumerate(d["coefficients"]):
        assert contains(c["value"], c["abs_error"], ref["c"][k], F(1, 10**60)), (name, dps, k, c)
        assert c["digits"] >= dps or abs(float(ref["c"][k])) < 10.0 ** -dps
    assert contains(d["second_moment"]["value"], d["second_moment"]["abs_error"], ref["second_moment"], F(1, 10**60))
    assert contains(d["c_gt1"]["value"], d["c_gt1"]["abs_error"], ref["c_gt1"], F(1, 10**60))
    no_floats(d)


@pytest.mark.slow
@pytest.mark.parametrize("dps", [15, 30, 50])
def test_hermite_every_reference_activation(capsys, href, dps):
    for name in (k for k in href if not k.startswith("_")):
        d = run(capsys, "hermite", name, "--kmax", "6", "--dps", dps, "--json")
        for k, c in enumerate(d["coefficients"]):
            assert contains(c["value"], c["abs_error"], href[name]["c"][k], F(1, 10**60)), (name, dps, k, c)


# --------------------------------------------------------------------------------------------- resolvent, gains
@pytest.fixture(scope="module")
def rref():
    return json.loads((DATA / "resolvent_reference.json").read_text())["points"]


# c_1 = 1, c_>1 = 1/2: the student He1 + He2/(2 sqrt 2) (2! c_2^2 = 1/4)
STUDENT_C1_HALF = "He1 + He2/(2*sqrt(2))"


def _decimal(text: str) -> str:
    """'1/2' -> '0.5' (the same number typed as a decimal), for terminating fractions."""
    try:
        f = F(text)
    except ValueError:                     # 'inf'
        return text
    return str(float(f)) if float(f) == f else text


@pytest.mark.parametrize("dps", [15, 30])
def test_resolvent_printed_values_contain_the_reference(capsys, rref, dps):
    for i, p in enumerate(x for x in rref if x["c1"] == "1" and x["c_gt1"] == "1/2"):
        form = (lambda t: t) if i % 2 == 0 else _decimal        # exact strings and decimals
        d = run(capsys, "resolvent", "--student", STUDENT_C1_HALF, "--phi", form(p["phi"]), "--psi", form(p["psi"]),
                "--lam", form(p["lam"]), "--dps", dps, "--json")
        for k in ("m1", "m2", "dm1_dlam", "dm2_dlam"):
            # the reference derivatives are central differences with h = 1e-20 at 60 digits: truncation
            # h^2 |m3|/6 with m3 ~ 6 m'/lam^2 the third derivative, so their error is about 1e-40 |m'|/lam^2
            ref_err = F(1, 10**45) if not k.startswith("d") else 3 * abs(F(p[k])) / F(10**40) / F(p["lam"]) ** 2
            assert contains(d[k], d["errors"][k], p[k], ref_err), (p, k, d[k], d["errors"][k])
            assert d["digits"][k] >= dps - 1
        no_floats(d)


def test_gains_delta1_against_its_closed_form_from_the_reference_resolvent(capsys, rref):
    """Delta_1 = psi lam c*_1^4 m2 / (phi b^2), b^2 = c*_1^2 + phi (c*^2 + noise) (docs/theory/spike-theory.md §7.3),
    with the teacher He1 (c*_1 = c* = 1) and m2 from the independent reference."""
    for p in (x for x in rref if x["c1"] == "1" and x["c_gt1"] == "1/2"):
        phi, psi, lam = (F(p[k]) for k in ("phi", "psi", "lam"))
        m2 = F(p["m2"])
        delta1 = psi * lam * m2 / (phi * (1 + phi))
        d = run(capsys, "gains", "--student", STUDENT_C1_HALF, "--teacher", "He1", "--phi", p["phi"], "--psi",
                p["psi"], "--lam", p["lam"], "--ell", "1", "--dps", "30", "--json")
        assert contains(d["delta"][0], d["errors"]["delta"][0], delta1, F(1, 10**31)), (p, d["delta"])
        assert contains(d["resolvent"]["m2"], d["errors"]["resolvent"]["m2"], p["m2"], F(1, 10**40))
        no_floats(d)


# --------------------------------------------------------------------------------------------- tau*, bounds
@pytest.mark.slow
def test_tau_star_erf_erf_prints_sqrt2_to_100_digits(capsys):
    d = run(capsys, "tau-star", "--student", "erf", "--teacher", "erf", "--dps", "100", "--json")
    with mpmath.workdps(130):
        assert contains(d["kappa"], d["errors"]["kappa"], mpmath.sqrt(2))
        assert len(d["kappa"].replace(".", "")) >= 100
        # the kernel bound is the best linear error of erf: E erf^2 - mu1*^2 = 2/pi asin(1/2) - 1/pi
        kb = 2 / mpmath.pi * mpmath.asin(mpmath.mpf(1) / 2) - 1 / mpmath.pi
        assert contains(d["kernel_bound"], d["errors"]["kernel_bound"], kb)
    no_floats(d)


@pytest.mark.slow
def test_bounds_optimizer_prints_only_vouched_digits(capsys):
    """The eta-optimised bounds (28) and their argmins at float64 against the mpmath/Arb path at 20 digits (a
    different rule, arithmetic and polish): every printed digit, the argmin's included, is inside its error."""
    lo = run(capsys, "bounds", "--student", "tanh", "--teacher", "sin", "--optimize-eta", "--json")
    hi = run(capsys, "bounds", "--student", "tanh", "--teacher", "sin", "--optimize-eta", "--dps", "20", "--json")
    for k in ("upper", "lower", "eta_upper", "eta_lower", "r", "best_linear"):
        assert contains(lo[k], lo["errors"][k], hi[k], hi["errors"][k]), (k, lo[k], lo["errors"][k], hi[k])
    assert float(hi["errors"]["upper"]) < 1e-20 * float(hi["upper"])
    no_floats(lo)


# --------------------------------------------------------------------------------------------- the spectrum
def test_spectrum_density_vanishes_beyond_the_bulk_within_its_error(capsys):
    """The smoothed density at eta > 0 has a 1/x^2 tail; the printed density is the eta -> 0 limit, whose printed
    error covers the extrapolation: far beyond the bulk (x = 40, 60 for c(1 + sqrt beta)^2 ~ 4) it contains 0."""
    d = run(capsys, "spectrum", "--student", "tanh", "--r", "1.13", "--c", "1.02", "--gamma", "0.97", "--alpha", "2",
            "--beta", "1", "--z", "40,60", "--lam", "1/10", "--json")
    for v, e in zip(d["density"], d["errors"]["density"]):
        assert contains(v, e, 0), (v, e)
    no_floats(d)


# --------------------------------------------------------------------------------------------- one typed input
COMMON = ["--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--beta", "1", "--lam", "1/3"]


def _same(a_text, a_err, b_text, b_err):
    """Two printings of one number: the same digits, and each interval contains the other's value."""
    return contains(a_text, a_err, b_text, b_err) and contains(b_text, b_err, a_text, a_err)


@pytest.mark.parametrize("dps", [None, pytest.param(25, marks=pytest.mark.slow)])
def test_one_typed_input_one_number_on_every_path(capsys, dps):
    """srf, srf-curve, sweep, check's symbol values and the API (str, Fraction, mpf) read `--lam 1/3` as the same
    exact number: the printed test errors agree within their printed errors and print the same digits."""
    from onestep_theory.quantities.sweep import sweep
    from onestep_theory.srf import srf_solve

    extra = [] if dps is None else ["--dps", str(dps)]
    a = run(capsys, "srf", *COMMON, "--alpha", "1.6", *extra, "--json")
    b = run(capsys, "srf-curve", *COMMON, "--alphas", "1.2:2:3", *extra, "--json")
    row = b["rows"][1]
    assert row["alpha"] == "1.6"                                   # as typed, not 1.5999999999999999
    assert _same(a["test_error"], a["abs_error"], row["test_error"], row["abs_error"])
    assert row["digits"] == a["digits"]
    for k in ("r", "c", "gamma"):
        assert row[k] == a[k]
    with mpmath.workdps(60):
        third = mpmath.mpf(1) / 3
    for lam in ("1/3", F(1, 3), third):
        sol = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha="1.6", beta=1, lam=lam, dps=dps).to_dict()
        assert _same(a["test_error"], a["abs_error"], sol["test_error"], sol["abs_error"]), lam
    s = sweep("test_error", {"alpha": "1.2:2:3:lin"}, student="tanh", teacher="sin",
              fixed={"alpha0": "20", "eta": "3", "beta": "1", "lam": "1/3"}, dps=dps or 15)
    assert s.rows[1]["alpha"] == "1.6"
    assert _same(a["test_error"], a["abs_error"], s.rows[1]["value"], s.rows[1]["error"])
    no_floats(a)
    no_floats(b)


# --------------------------------------------------------------------------------------------- sRF from (alpha0, eta)
HATS = {"hat_V1": "Vh1", "hat_V2": "Vh2", "hat_q1": "qh1", "hat_q2": "qh2", "hat_theta": "thh", "hat_psi": "psh",
        "D": "D"}
ORDER = ("m", "theta", "psi", "q1", "q2", "V1", "V2")


@pytest.fixture(scope="module")
def uref():
    """tests/data/srf_user_reference.json: 50-digit fixed points at points entered through (alpha0, eta~), by a
    solver that shares nothing with the package (tests/data/precompute/srf_user_reference.py)."""
    return json.loads((DATA / "srf_user_reference.json").read_text())["points"]


def _typed(p, decimals: bool) -> list:
    keys = ("alpha0", "eta", "alpha", "beta", "lam", "noise_var")
    form = _decimal if decimals else (lambda t: t)
    return ["--student", p["student"], "--teacher", p["teacher"]] + [
        a for k in keys for a in (f"--{k.replace('_', '-')}", form(p[k]))]


def check_srf_printout(d, p, where) -> int:
    """Every number `srf --json` prints, against the reference point ``p``; returns how many were checked."""
    n = 0
    refs = {"test_error": (d["test_error"], d["abs_error"], p["test_error"], p["error"]["test_error"])}
    for k in ORDER:
        refs[k] = (d["order"][k], d["errors"][k], p[k], p["error"][k])
    for k, rk in HATS.items():
        v = d["D"] if k == "D" else d["order"][k]
        refs[k] = (v, d["errors"][k], p["conjugates"][rk], F(1, 10**35))
    for k in ("r", "c", "gamma"):
        refs[k] = (d[k], d["errors"][k], p["mapping"][k], p["mapping"]["error"][k])
    for k, (text, err, ref, ref_err) in refs.items():
        assert contains(text, err, ref, ref_err), (where, k, text, err, ref)
        n += 1
    return n


@pytest.mark.parametrize("name", ["U0", "U4"])
def test_srf_user_path_float64(capsys, uref, name):
    """The README's example (U0) and a discontinuous teacher (U4): CLI with exact strings and with decimals."""
    p = uref[name]
    for decimals in (False, True):
        d = run(capsys, "srf", *_typed(p, decimals), "--json")
        check_srf_printout(d, p, (name, "float64", decimals))
        no_floats(d)


def test_srf_api_every_input_form(uref):
    """The API with str, Fraction and mpf (at 60 digits) reads the same numbers; a binary float is the float."""
    from onestep_theory.srf import srf_solve

    p = uref["U0"]
    with mpmath.workdps(60):
        forms = [{k: p[k] for k in ("alpha", "beta", "lam")},
                 {k: F(p[k]) for k in ("alpha", "beta", "lam")},
                 {k: mpmath.mpf(F(p[k]).numerator) / F(p[k]).denominator for k in ("alpha", "beta", "lam")}]
    for kw in forms:
        sol = srf_solve(p["student"], p["teacher"], alpha0=p["alpha0"], eta=p["eta"], noise_var=p["noise_var"], **kw)
        d = sol.to_dict()
        d["order"].update(d.pop("hats"))
        check_srf_printout(d, p, ("API", kw))


@pytest.mark.slow
@pytest.mark.parametrize("dps", [None, 15, 30])
def test_srf_user_path_every_reference_point(capsys, uref, dps):
    """Issue 21's acceptance: at float64, dps 15 and dps 30, across teachers (smooth, kinked, discontinuous),
    eta~ in [1/20, 50], alpha0 in {1/2, 20, inf}, beta in {1, 2} and with noise, no printed value +/- its printed
    error misses the independent reference; the README example prints >= 30 right digits at --dps 30."""
    checked = 0
    for name, p in uref.items():
        extra = [] if dps is None else ["--dps", str(dps)]
        d = run(capsys, "srf", *_typed(p, decimals=name in ("U1", "U3", "U5")), *extra, "--json")
        checked += check_srf_printout(d, p, (name, dps))
        if dps is not None:
            assert d["digits"] >= dps, (name, d["digits"])
    assert checked == len(uref) * 18
    if dps == 30:
        d = run(capsys, "srf", *_typed(uref["U0"], False), "--dps", "30", "--json")
        assert len(d["gamma"].replace("0.", "", 1)) >= 30 and len(d["test_error"].replace("0.0", "", 1)) >= 30


@pytest.mark.slow
@pytest.mark.parametrize("dps", [15, 30])
def test_mapping_command_against_the_reference(capsys, uref, dps):
    for name, p in uref.items():
        d = run(capsys, "mapping", "--student", p["student"], "--teacher", p["teacher"], "--alpha0", p["alpha0"],
                "--eta", p["eta"], "--noise-var", p["noise_var"], "--dps", dps, "--json")
        for k, rk in (("r", "r"), ("c", "c"), ("gamma", "gamma"), ("mu1", "mu1"), ("mu1_check_sq", "mu1c2"),
                      ("mu1_star", "mu1s"), ("mu2_star", "mu2s")):
            assert contains(d[k], d["errors"][k], p["mapping"][rk], p["mapping"]["error"][rk]), (name, k, d[k])


# --------------------------------------------------------------------------------------------- the registry
SPIKE_POINT = {"phi": "1/2", "psi": "2/3", "lam": "1/3", "noise": "1/7"}
SRF_POINT = {"alpha": "3/2", "beta": "2/3", "lam": "1/3", "alpha0": "7/2", "eta": "5/3", "noise": "1/7"}
# every Hermite coefficient non-zero (so every Delta_k exists): exp(x/2) centred, c_k = e^(1/8) / (2^k k!)
SPIKE_STUDENT = "exp(x/2) - exp(1/8)"


@pytest.mark.slow
def test_every_registry_quantity_printed_at_15_digits_contains_its_35_digit_value():
    """Every quantity by name (check, sweep), at non-binary exact inputs: the value printed at dps 15 with its
    printed error contains the value at dps 35 (arithmetic, rules and working precision all different)."""
    from onestep_theory.core.results import vouch
    from onestep_theory.quantities.registry import QUANTITIES, evaluate

    names = [n for n in QUANTITIES if not n.startswith(("delta_", "lambda_"))] + \
        ["delta_1", "delta_2", "delta_3", "lambda_1", "lambda_2"]
    for name in names:
        q = QUANTITIES[name]
        point = {k: v for k, v in (SPIKE_POINT if q.family == "spike" else SRF_POINT).items() if k in q.params}
        student, teacher = (SPIKE_STUDENT, "He1") if q.family == "spike" else ("tanh", "sin")
        lo, lo_err, *_ = evaluate(name, point, student, teacher, dps=15)
        hi, hi_err, *_ = evaluate(name, point, student, teacher, dps=35)
        text, err = vouch(lo, lo_err, 15)
        assert contains(text, err, hi, hi_err), (name, text, err, mpmath.nstr(hi, 30))
        assert hi_err <= 1e-30 * max(1.0, abs(float(hi))), (name, hi_err)


def test_an_mpf_is_read_exactly_outside_any_precision_context():
    """The bug class of issue 21: mpmath rounds every operation outside a precision context to 53 bits.  An mpf
    handed to the package (to_exact, to Arb) is read as it is, at any ambient precision."""
    from onestep_theory.core.exact import to_exact
    from onestep_theory.core.precision import mpf_to_arb, signed_man_exp

    with mpmath.workdps(40):
        third = mpmath.mpf(1) / 3
    assert abs(F(str(to_exact(third))) - F(1, 3)) < F(1, 10**39)
    man, exp = signed_man_exp(third)
    assert abs(F(man) * F(2) ** exp - F(1, 3)) < F(1, 10**39)
    assert mpf_to_arb(third).mid().man_exp()[0] == man


@pytest.mark.slow
def test_stieltjes_by_name_reads_lambda_exactly():
    """`sweep`/`check` of the Stieltjes transform at lam = 1/3 and 30 digits agree with spectrum's V2(-1/3)
    (found by an independent review: lambda was rounded to 53 bits on this path)."""
    from onestep_theory.quantities.registry import evaluate
    from onestep_theory.srf import spectrum

    point = {"alpha": "1/3", "beta": "2/3", "lam": "1/3", "alpha0": "1/3", "eta": "1/7", "noise": "1/3"}
    v, e, *_ = evaluate("stieltjes", point, "tanh", "sin", dps=30)
    sp_ = spectrum("tanh", r=_r(point), c=_c(point), alpha="1/3", beta="2/3", xs=[1.0], lams=["1/3"], dps=30)
    ref, ref_err = sp_.stieltjes_at_minus_lambda["1/3"], sp_.errors["stieltjes"]["1/3"]
    with mpmath.workdps(50):
        assert abs(v - ref) <= e + ref_err, (v, ref)


def _r(point):
    from onestep_theory.srf import srf_params

    return srf_params("tanh", "sin", point["alpha0"], point["eta"], point["noise"], dps=45).r


def _c(point):
    from onestep_theory.srf import srf_params

    return srf_params("tanh", "sin", point["alpha0"], point["eta"], point["noise"], dps=45).c


def test_no_step_through_the_mapping_equals_the_explicit_random_features_point():
    """eta = 0 through Result 3.1 (r = 0, gamma = 0: the mapping's errors must not be divided by r) is the explicit
    r = 0, c = 1, gamma = 0 point, within the printed errors."""
    from onestep_theory.srf import srf_solve

    a = srf_solve("tanh", "sin", alpha0=20, eta=0, alpha=1, beta=1, lam="1/10").to_dict()
    b = srf_solve("tanh", "sin", r=0, c=1, gamma=0, alpha=1, beta=1, lam="1/10").to_dict()
    assert a["digits"] >= 10 and _same(a["test_error"], a["abs_error"], b["test_error"], b["abs_error"])


# --------------------------------------------------------------------------------------------- general losses
@pytest.mark.parametrize("lam", ["1/10", "0.1"])
def test_hinge_printed_test_and_class_error_contain_the_kinked_prox_reference(capsys, lam):
    """Issue 31: `srf ... --loss hinge` at tanh/sign, alpha0 = 20, eta = 3, alpha = beta = 1, lambda = 0.1 (it ended in
    'no valid fixed point').  Reference: tests/data/hinge_reference.json, the same loss written as the user expression
    Max(0, 1 - y*yhat) (kink located symbolically, proximal map by bracketed 1-D minimisation, Gauss-Legendre
    xi-panels split at the kinks: not the built-in closed-form prox on Gauss-Hermite rules), with its own error."""
    ref = json.loads((DATA / "hinge_reference.json").read_text())
    argv = ["srf", "--student", "tanh", "--teacher", "sign", "--alpha0", "20", "--eta", "3", "--alpha", "1",
            "--beta", "1", "--lam", lam, "--loss", "hinge"]
    d = run(capsys, *argv, "--json")
    no_floats({k: d[k] for k in ("test_error", "abs_error", "class_error", "errors")})
    assert contains(d["test_error"], d["abs_error"], ref["test_error"], ref["test_error_error"])
    assert contains(d["class_error"], d["errors"]["class_error"], ref["class_error"], ref["class_error_error"])
    text = run(capsys, *argv)
    line = next(t for t in text.splitlines() if t.startswith("test error"))
    value, err = line.split("=")[1].split()[0], line.split("+/-")[1].split(",")[0]
    assert contains(value, err, ref["test_error"], ref["test_error_error"])
    line = next(t for t in text.splitlines() if t.strip().startswith("class_error"))
    assert contains(line.split("=")[1].split()[0], line.split("+/-")[1].split()[0], ref["class_error"],
                    ref["class_error_error"])
