"""Certified accuracy of the sRF theory (docs/theory/numerics.md): every stated error is honest.

The accuracy matrix compares each result (float64, and ``dps`` = 15, 30, 50) with a reference
computed by the same equations on rules with twice the nodes and 20 more digits
(``srf_solve(..., dps=D + 20)``), and requires |value - reference| <= the two stated errors and
``digits`` >= the digits requested.  Independent references (another quadrature, another root
finder; a closed form of [MM19]) are in ``tests/data/srf_reference.json`` and ``tests/rf_closed_form.py``.
"""

import fractions
import json
import math
import time

import mpmath
import pytest

from onestep_theory import ConvergenceError, InvalidParameterError
from onestep_theory.hermite import quadrature
from onestep_theory.cli import main
from onestep_theory.hermite import Activation
from onestep_theory.srf import srf_setup, srf_solve

from .conftest import DATA
from .rf_closed_form import srf_r0_test_error

ETAS = ["0.05", "3", "20", "50"]
TEACHERS = ["sin", "tanh", "relu_centered", "sign"]
ALPHA0S = ["2", "20", "inf"]
BETAS = ["1/2", "1", "2"]
NOISES = ["0", "1/10"]

# 16 cases: every (eta, teacher) pair once; alpha0, beta and noise cycle through all their values
MATRIX = [dict(eta=ETAS[i % 4], teacher=TEACHERS[(i // 4) % 4], alpha0=ALPHA0S[i % 3], beta=BETAS[(i + 1) % 3],
               noise_var=NOISES[(i // 2) % 2]) for i in range(16)]


def _solve(case, dps=None):
    return srf_solve("tanh", case["teacher"], alpha0=case["alpha0"], eta=case["eta"], alpha=1, beta=case["beta"],
                     lam="1/10", noise_var=case["noise_var"], dps=dps)


def _check(sol, ref, want_digits):
    with mpmath.workdps(80):
        gap = abs(mpmath.mpf(sol.test_error) - mpmath.mpf(ref.test_error))
        assert gap <= sol.abs_error + ref.abs_error, (gap, sol.abs_error, ref.abs_error)
        for k in sol.order:        # every order parameter within its own stated error
            g = abs(mpmath.mpf(sol.order[k]) - mpmath.mpf(ref.order[k]))
            assert g <= sol.errors[k] + ref.errors[k], (k, g, sol.errors[k])
    assert sol.digits >= want_digits


@pytest.mark.parametrize("case", [MATRIX[0], MATRIX[1], MATRIX[4], MATRIX[8], MATRIX[13]],
                         ids=lambda c: f"{c['teacher']}-eta{c['eta']}")
def test_float64_within_stated_error(case):
    sol = _solve(case)
    ref = _solve(case, dps=20)
    _check(sol, ref, 10)       # default tol = 1e-10 relative


@pytest.mark.slow      # default-suite budget: 15 digits against 35: the slow accuracy matrix has 15/30/50 at 16 settings
def test_dps15_within_stated_error():
    case = dict(eta="3", teacher="sin", alpha0="20", beta="1", noise_var="0")
    _check(_solve(case, 15), _solve(case, 35), 15)


_IDS = [f"{c['teacher']}-eta{c['eta']}-a0{c['alpha0']}-b{c['beta']}-n{c['noise_var']}" for c in MATRIX]


@pytest.mark.slow
@pytest.mark.parametrize("case", MATRIX, ids=_IDS)
def test_accuracy_matrix_float64(case):
    _check(_solve(case), _solve(case, dps=20), 10)


@pytest.mark.slow
@pytest.mark.parametrize("case", MATRIX, ids=_IDS)
@pytest.mark.parametrize("dps", [15, 30, 50])
def test_accuracy_matrix_dps(case, dps):
    # time budget of the slow stage: at eta >= 20 the rules need many more nodes (the coefficients turn
    # on the scale sqrt(c)/r); 30 digits there are checked for one teacher, 50 digits not at all
    if dps == 50 and case["eta"] not in ("0.05", "3"):
        pytest.skip("50 digits at eta >= 20 is outside the slow-test time budget (see benchmarks/)")
    if dps == 30 and case["eta"] in ("20", "50") and case["teacher"] != "relu_centered":
        pytest.skip("30 digits at eta >= 20 are checked for the ReLU teacher only (slow-test time budget)")
    _check(_solve(case, dps), _solve(case, dps + 20), dps)


# ---------------------------------------------------------------- independent references
def _reference_points():
    return list(json.loads((DATA / "srf_reference.json").read_text())["points"].items())


def _sig_digits(text):
    mant = text.lower().split("e")[0]
    return len(mant.lstrip("-").replace(".", "").lstrip("0"))


def _check_reference(name, p, dps):
    sol = srf_solve(p["student"], p["teacher"], r=p["r"], c=p["c"], gamma=p["gamma"], alpha=p["alpha"],
                    beta=p["beta"], lam=p["lam"], noise_var=p.get("noise_var", "0"), dps=dps)
    assert sol.digits >= dps
    with mpmath.workdps(70):
        # the reference's own error, plus the rounding of its stored decimal string (40 significant digits)
        err = {k: mpmath.mpf(v) + abs(mpmath.mpf(p[k])) * mpmath.mpf(10) ** -(_sig_digits(p[k]) - 1) / 2
               for k, v in p["error"].items()}
        assert abs(sol.test_error - mpmath.mpf(p["test_error"])) <= sol.abs_error + err["test_error"], name
        for k in ("m", "theta", "psi", "q1", "q2", "V1", "V2"):
            assert abs(sol.order[k] - mpmath.mpf(p[k])) <= sol.errors[k] + err[k], (name, k)


@pytest.mark.slow     # 19 s at 15 digits (the default suite keeps test_dps15_within_stated_error)
@pytest.mark.parametrize("dps", [15, 30])
def test_independent_reference(dps):
    """40-digit fixed points computed by tests/data/precompute/srf_reference.py (mpmath tanh-sinh
    quadrature, MP integrals by quadrature, mpmath.findroot): no code shared with the solver."""
    pts = _reference_points()
    assert len(pts) >= 6
    for name, p in (pts if dps == 15 else [pts[1], pts[3], pts[6]]):
        _check_reference(name, p, dps)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["P0", "P1", "P2", "P3", "P4", "P5", "P6"])
def test_independent_reference_40_digits(name):
    _check_reference(name, dict(_reference_points())[name], 40)


def _mm(student, teacher, c, alpha, beta, lam, noise, dps):
    """Mei & Montanari's closed form at r = 0 with the constants of sigma(sqrt(c) G) (tests/rf_closed_form.py)."""
    with mpmath.workdps(dps + 20):
        sc = mpmath.sqrt(mpmath.mpf(c))
        s = Activation.from_any(student)
        f = (lambda g: mpmath.tanh(sc * g)) if s.name == "tanh" else None
        pdf = mpmath.npdf
        mu1 = mpmath.quad(lambda g: g * f(g) * pdf(g), [-mpmath.inf, 0, mpmath.inf])
        m2 = mpmath.quad(lambda g: f(g) ** 2 * pdf(g), [-mpmath.inf, 0, mpmath.inf])
        F1sq = mpmath.exp(-1)                       # sin teacher: E[G sin G]^2
        Fs2 = (1 - mpmath.exp(-2)) / 2 - F1sq
        return srf_r0_test_error(mu1, m2 - mu1 ** 2, F1sq, Fs2, mpmath.mpf(noise), mpmath.mpf(alpha),
                                 mpmath.mpf(beta), mpmath.mpf(lam), dps=dps + 10)


@pytest.mark.parametrize("c,alpha,beta,lam,noise", [("1", "3/2", "1", "3/10", "0"),
                                                     pytest.param("6/5", "1/2", "2", "1/10", "1/10",
                                                                  marks=pytest.mark.slow),
                                                     pytest.param("4/5", "3", "1/2", "1/100", "3/10",
                                                                  marks=pytest.mark.slow)])
def test_r0_limit_equals_mei_montanari(c, alpha, beta, lam, noise):
    """At r = 0 the sRF saddle point is random-features ridge regression: [MM19] Thm. 2 to 30 digits."""
    sol = srf_solve("tanh", "sin", r=0, c=c, gamma="1/2", alpha=alpha, beta=beta, lam=lam, noise_var=noise, dps=30)
    ref = _mm("tanh", "sin", c, alpha, beta, lam, noise, 40)
    with mpmath.workdps(50):
        assert abs(sol.test_error - ref) <= sol.abs_error + mpmath.mpf(10) ** -38
        assert abs(sol.test_error - ref) <= mpmath.mpf(10) ** -30 * ref


# ---------------------------------------------------------------- the contract
def test_setup_keeps_the_precision_of_its_inputs():
    """Regression: mpmath.mpf(x) outside a precision context rounds to 53 bits."""
    with mpmath.workdps(45):
        r = mpmath.mpf(1) / 3
    with mpmath.workdps(45):
        S = srf_setup("tanh", "sin", r, 1, 1, digits=20, level=0, mp=True)
    with mpmath.workdps(45):
        assert abs(S.r - r) < mpmath.mpf(10) ** -40


def test_json_prints_only_vouched_digits():
    sol = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="1/10")
    d = sol.to_dict()
    # printed to the decimal place of the error's leading digit and one guard digit (docs/theory/numerics.md §1)
    last_place = -len(d["test_error"].split(".")[1])
    assert last_place == math.floor(math.log10(sol.abs_error)) - 1 and sol.digits >= 10
    # the printed error covers the estimate and the rounding of the printed value
    gap = abs(fractions.Fraction(d["test_error"]) - fractions.Fraction(float(sol.test_error)))
    assert gap + fractions.Fraction(sol.abs_error) <= fractions.Fraction(d["abs_error"])
    assert float(d["abs_error"]) <= 1e-10 * float(sol.test_error)


def test_unreachable_digits_exit_3(monkeypatch, capsys):
    """A discretisation that cannot converge (forced: 3 nodes per panel) gives exit 3 and one line
    naming the digits reached, never a number."""
    from onestep_theory.core.caches import clear_caches

    clear_caches()          # rules built before by other tests would be served (the test passed only alone)
    monkeypatch.setattr(quadrature, "nodes_per_panel", lambda digits, level: 3 + level)
    try:
        with pytest.raises(ConvergenceError, match="digits"):
            srf_solve("tanh", "sin", r="1.2", c="1.1", gamma="0.9", alpha=1, beta=1, lam="1/10", dps=20)
        rc = main(["srf", "--student", "tanh", "--teacher", "sin", "--r", "1.3", "--c", "1.1", "--gamma", "0.9",
                   "--alpha", "1", "--beta", "1", "--lam", "1/10", "--dps", "20"])
    finally:
        clear_caches()      # nothing computed under the patch is served later
    out, err = capsys.readouterr()
    assert rc == 3 and out == "" and len(err.strip().splitlines()) == 1 and "digits reached" in err


@pytest.mark.parametrize("kw,param", [(dict(tol=float("nan")), "tol"), (dict(tol=-1), "tol"), (dict(tol=1e-16), "tol"),
                                      (dict(dps=200), "dps"), (dict(dps=0), "dps")])
def test_bad_accuracy_options_refused(kw, param):
    with pytest.raises(InvalidParameterError) as exc:
        srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="1/10", **kw)
    assert exc.value.param == param


def test_large_fixed_gauss_hermite_rules_are_stable():
    """401 Gauss-Hermite nodes gave NaN weights with numpy's hermegauss; the stable rule agrees."""
    a = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="1/10", kappa_nodes=401, inner_nodes=401)
    b = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="1/10")
    assert abs(float(a.test_error) - float(b.test_error)) <= a.abs_error + b.abs_error


def test_eta50_point_now_right():
    """The fixed 101-node rule printed 0.08854 (5 % low) with residual 1e-10; direct sRF simulation at
    d = 2000 gives 0.0935 +/- 0.0004 (issue 9).  The certified value sits inside that band."""
    sol = srf_solve("tanh", "sin", alpha0=20, eta=50, alpha=1, beta=1, lam="1/10")
    assert abs(float(sol.test_error) - 0.0935) <= 3 * 0.0004 and sol.digits >= 10


@pytest.mark.slow      # default-suite budget: the CLI at 30 digits, 13 s; the float CLI stays in the default suite
def test_cli_acceptance_30_digits(capsys):
    t = time.perf_counter()
    rc = main(["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "1",
               "--beta", "1", "--lam", "1/10", "--dps", "30", "--json"])
    assert rc == 0
    assert time.perf_counter() - t < 60      # generous: a hang guard, not a benchmark
    d = json.loads(capsys.readouterr().out)
    assert d["digits"] >= 30
    ref = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="1/10", dps=40)
    with mpmath.workdps(60):
        # the printed digits are all correct: the printed string is within half a unit of its last digit
        printed = mpmath.mpf(d["test_error"])
        ndig = len(d["test_error"].replace("0.", "", 1).lstrip("0"))
        assert ndig >= 30
        assert abs(printed - ref.test_error) <= mpmath.mpf(10) ** -ndig * ref.test_error
