"""[BES+22] τ* and κ* (eq. (5.1), Cor. 8; onestep_theory.srf.optimal.taustar, docs/theory/srf-theory.md §9).

References are independent of the package: closed forms (Cor. 8, the sign/erf smoothing, a sin student's
g_κ = e^{-1/2} sin(κξ), ReLU's E relu(a+z) = aΦ(a) + φ(a)), nested scipy quadrature with scipy root finding,
and mpmath quadrature at higher precision.
"""

import functools
import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import integrate, optimize, special

from onestep_theory.core.errors import ConvergenceError, InvalidParameterError
from onestep_theory.srf.optimal.bounds import bounds
from onestep_theory.srf.optimal.taustar import TauStar, tau_of_kappa, tau_star


# ----------------------------------------------------------------------------- independent float reference
def _phi(u):
    return math.exp(-u * u / 2) / math.sqrt(2 * math.pi)


def _quad(f, cut=0.0):
    """∫ f over the real line, split at ``cut``, to ~1e-14."""
    opts = dict(epsabs=1e-15, epsrel=1e-13, limit=200)
    return integrate.quad(f, -np.inf, cut, **opts)[0] + integrate.quad(f, cut, np.inf, **opts)[0]


_GL = np.polynomial.legendre.leggauss(200)


def _tanh_G(a):
    """E tanh(a + z), E tanh'(a + z): plain Gauss-Legendre on [-12, 12] split at z = -a (tested to ~1e-14)."""
    c, g, dg = min(max(-a, -12.0), 12.0), 0.0, 0.0
    for lo, hi in ((-12.0, c), (c, 12.0)):
        if hi > lo:
            z = (hi - lo) / 2 * _GL[0] + (hi + lo) / 2
            w = (hi - lo) / 2 * _GL[1] * np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
            th = np.tanh(a + z)
            g, dg = g + w @ th, dg + w @ (1 - th * th)
    return g, dg


def test_reference_inner_rule():
    for a in (-3.1, 0.0, 0.7, 11.5, 40.0):
        pts = [-mpmath.inf] + sorted({-a, -8.0, -4.0, 0.0, 4.0, 8.0}) + [mpmath.inf]
        ref = mpmath.quad(lambda z: mpmath.tanh(a + z) * mpmath.npdf(z), pts)
        assert _tanh_G(a)[0] == pytest.approx(float(ref), abs=2e-14)


def _relu_G(a):   # E relu(a + z) = aΦ(a) + φ(a), E relu'(a + z) = Φ(a)
    return a * special.ndtr(a) + _phi(a), special.ndtr(a)


STUDENTS = {"tanh": _tanh_G, "relu": _relu_G}
TEACHERS = {"sin": math.sin, "-sin(x)": lambda u: -math.sin(u), "tanh": math.tanh, "relu": lambda u: max(u, 0.0)}


def ref_tau(student, teacher, k):
    G, f = STUDENTS[student], TEACHERS[teacher]
    return _quad(lambda u: (f(u) - G(k * u)[0]) ** 2 * _phi(u))


def ref_dtau(student, teacher, k):
    G, f = STUDENTS[student], TEACHERS[teacher]
    return _quad(lambda u: -2 * (f(u) - G(k * u)[0]) * u * G(k * u)[1] * _phi(u))


def ref_min(student, teacher, lo, hi):
    """κ* as the root of the reference derivative (scipy brentq) in a bracket chosen by hand from a plot."""
    k = optimize.brentq(lambda v: ref_dtau(student, teacher, v), lo, hi, xtol=1e-13)
    return k, ref_tau(student, teacher, k)


@functools.lru_cache(maxsize=None)
def result(student, teacher, dps=None):
    """tau_star once per argument set for the whole module (results are immutable in use here)."""
    return tau_star(student, teacher, dps=dps)


# ----------------------------------------------------------------------------- (1) Cor. 8 and other exact zeros
def test_cor8_erf_erf_exact():
    r = result("erf(x)", "erf(x)")
    assert isinstance(r, TauStar)
    assert r.tau_exact == 0 and r.kappa_exact == sp.sqrt(3)
    assert r.tau == 0 and r.kappa == pytest.approx(math.sqrt(3), abs=1e-15)
    assert r.r_equivalent == r.kappa and r.beats_kernel
    # the identity behind it, E erf(a + z) = erf(a/sqrt 3), by quadrature
    for a in (-1.3, 0.4, 2.2):
        assert _quad(lambda z: math.erf(a + z) * _phi(z), -a) == pytest.approx(math.erf(a / math.sqrt(3)), abs=1e-13)


@pytest.mark.parametrize("student, teacher, kappa", [
    ("erf", "erf", sp.sqrt(2)),               # E erf((a+z)/sqrt2) = erf(a/2): kappa/2 = 1/sqrt2
    ("sign", "erf(x)", sp.sqrt(2)),           # E sign(a+z) = erf(a/sqrt2)
    ("sin", "exp(-1/2)*sin(2*x)", sp.Integer(2)),   # E sin(a+z) = exp(-1/2) sin a
    ("erf(x)", "-erf(x)", -sp.sqrt(3)),       # the reflected branch
])
def test_other_exact_zeros(student, teacher, kappa):
    r = tau_star(student, teacher)
    assert r.tau_exact == 0 and sp.simplify(r.kappa_exact - kappa) == 0
    assert r.kappa == pytest.approx(float(kappa), abs=1e-15)


@pytest.mark.parametrize("dps", [15, 30, 50])
def test_cor8_precision_loop(dps):
    r = tau_star("erf(x)", "erf(x)", dps=dps)
    assert r.tau_exact == 0 and r.kappa_exact == sp.sqrt(3)
    assert r.digits["tau"] >= dps and r.digits["kappa"] >= dps
    with mpmath.workdps(dps + 5):
        assert abs(r.kappa - mpmath.sqrt(3)) < mpmath.mpf(10) ** -(dps + 2)
        assert r.tau == 0


@pytest.mark.parametrize("student, teacher", [("tanh", "He2"), ("He3", "He2"), ("softplus", "He2")])
def test_kappa_zero(student, teacher):
    """Even teacher He2 (μ1* = 0): κ = 0 is stationary and τ(0) = E He2² + (E σ)² = 2 + (E σ)².  He3/He2 is a
    degenerate minimum: g_κ = κ³ξ³, τ = 2 + 15κ⁶.  Softplus has no exact mean: τ(0) numeric, against quadrature."""
    r = result(student, teacher)
    mean = _quad(lambda z: float(np.logaddexp(0.0, z)) * _phi(z)) if student == "softplus" else 0.0
    assert r.kappa_exact == 0 and r.kappa == 0 and r.errors["kappa"] == 0
    assert abs(r.tau - (2 + mean**2)) <= r.errors["tau"] + 1e-13
    assert (r.tau_exact == 2) if student != "softplus" else r.tau_exact is None


@pytest.mark.parametrize("teacher, m2, mu1", [("sign", 1, math.sqrt(2 / math.pi)), ("relu", 0.5, 0.5),
                                               ("erf(x)", 2 / math.pi * math.asin(2 / 3), 2 / math.sqrt(3 * math.pi))])
def test_linear_student_closed_form(teacher, m2, mu1):
    """σ = x: g_κ(ξ) = κξ, so κ* = μ1* and τ* = E σ*² - μ1*² (closed forms of the teachers' moments)."""
    r = result("linear", teacher)
    assert abs(r.kappa - mu1) <= r.errors["kappa"] + 1e-14
    assert abs(r.tau - (m2 - mu1**2)) <= r.errors["tau"] + 1e-14


# ----------------------------------------------------------------------------- (2) against numerical references
@pytest.mark.parametrize("student, teacher, kappa", [("tanh", "sin", 0.7), ("tanh", "sin", -1.9),
                                                     ("relu", "tanh", 2.5), ("relu", "relu", -0.6)])
def test_tau_of_kappa_vs_quadrature(student, teacher, kappa):
    v, e = tau_of_kappa(student, teacher, kappa)
    assert e < 1e-12
    assert abs(v - ref_tau(student, teacher, kappa)) <= e + 1e-12


@pytest.mark.parametrize("student, teacher, bracket", [("tanh", "sin", (1.5, 2.1)), ("tanh", "-sin(x)", (-2.1, -1.5)),
                                                       ("relu", "tanh", (0.4, 1.0)), ("relu", "relu", (0.7, 1.2))])
def test_minimum_vs_reference(student, teacher, bracket):
    r = result(student, teacher)
    k_ref, t_ref = ref_min(student, teacher, *bracket)
    assert r.errors["kappa"] < 1e-10 and r.errors["tau"] < 1e-12
    assert abs(r.kappa - k_ref) <= r.errors["kappa"] + 1e-9
    assert abs(r.tau - t_ref) <= r.errors["tau"] + 1e-12
    assert r.tau_exact is None and r.kappa_exact is None


def _sin_tanh_ref(dps):
    """sin student: g_κ = e^{-1/2} sin(κξ), so τ(κ) = E tanh² - 2e^{-1/2} E[tanh ξ sin κξ] + e^{-1}(1 - e^{-2κ²})/2;
    τ' by differentiating under the integral.  mpmath quadrature and findroot at dps + 15."""
    with mpmath.workdps(dps + 15):
        phi = (lambda u: mpmath.exp(-u * u / 2) / mpmath.sqrt(2 * mpmath.pi))
        E = (lambda f: 2 * mpmath.quad(lambda u: f(u) * phi(u), [0, 4, 8, 16, mpmath.inf]))   # even integrands
        h = mpmath.exp(-mpmath.mpf(1) / 2)
        m2 = E(lambda u: mpmath.tanh(u) ** 2)

        def tau(k):
            return m2 - 2 * h * E(lambda u: mpmath.tanh(u) * mpmath.sin(k * u)) + h**2 * (1 - mpmath.exp(-2 * k * k)) / 2

        def dtau(k):
            return -2 * h * E(lambda u: u * mpmath.tanh(u) * mpmath.cos(k * u)) + 2 * k * h**2 * mpmath.exp(-2 * k * k)

        k = mpmath.findroot(dtau, mpmath.mpf("1.0158"))
        return k, tau(k)


@pytest.mark.parametrize("dps", [None, 15, pytest.param(30, marks=pytest.mark.slow),
                                 pytest.param(50, marks=pytest.mark.slow)])
def test_sin_student_high_precision(dps):
    r = tau_star("sin", "tanh", dps=dps)
    k_ref, t_ref = _sin_tanh_ref(dps or 15)
    if dps is not None:
        assert r.digits["tau"] >= dps and r.digits["kappa"] >= dps
        assert r.errors["tau"] <= 10.0 ** -dps * r.tau and r.errors["kappa"] <= 10.0 ** -dps * r.kappa
    with mpmath.workdps((dps or 15) + 10):
        assert abs(r.kappa - k_ref) <= r.errors["kappa"] + mpmath.mpf(10) ** -((dps or 15) + 8)
        assert abs(r.tau - t_ref) <= r.errors["tau"] + mpmath.mpf(10) ** -((dps or 15) + 8)


def _relu_tanh_ref(dps):
    """ReLU student in closed form, E relu(a+z) = aΦ(a) + φ(a); mpmath quadrature and findroot at dps + 15."""
    with mpmath.workdps(dps + 15):
        phi = (lambda u: mpmath.exp(-u * u / 2) / mpmath.sqrt(2 * mpmath.pi))
        G = (lambda a: a * mpmath.ncdf(a) + phi(a))
        E = (lambda f: mpmath.quad(lambda u: f(u) * phi(u), [-mpmath.inf, -8, -4, 0, 4, 8, mpmath.inf]))
        dtau = (lambda k: E(lambda u: -2 * (mpmath.tanh(u) - G(k * u)) * u * mpmath.ncdf(k * u)))
        k = mpmath.findroot(dtau, mpmath.mpf("0.67075"))
        return k, E(lambda u: (mpmath.tanh(u) - G(k * u)) ** 2)


@pytest.mark.slow
@pytest.mark.parametrize("dps", [30, 50])
def test_relu_tanh_high_precision(dps):
    r = tau_star("relu", "tanh", dps=dps)
    k_ref, t_ref = _relu_tanh_ref(dps)
    with mpmath.workdps(dps + 10):
        assert abs(r.kappa - k_ref) <= r.errors["kappa"] + mpmath.mpf(10) ** -(dps + 8)
        assert abs(r.tau - t_ref) <= r.errors["tau"] + mpmath.mpf(10) ** -(dps + 8)


@pytest.mark.slow
@pytest.mark.parametrize("dps", [30, 50])
def test_tanh_sin_precision_loop(dps):
    """No closed form on either side: the dps result must agree with the float64 reference and carry dps digits."""
    r = tau_star("tanh", "sin", dps=dps)
    k_ref, t_ref = ref_min("tanh", "sin", 1.5, 2.1)
    assert r.digits["tau"] >= dps and r.digits["kappa"] >= dps
    assert abs(float(r.kappa) - k_ref) <= 1e-9 and abs(float(r.tau) - t_ref) <= 1e-12


# ----------------------------------------------------------------------------- (3) the boundary κ -> ±∞
@pytest.mark.parametrize("teacher, side", [("sign", 1), ("-sign(x)", -1)])
def test_infimum_at_infinity_zero(teacher, side):
    """tanh(±∞) = ±1, so g_κ -> sign ξ and τ -> E(sign ξ - sign ξ)² = 0; at finite κ, g_κ is continuous, τ > 0."""
    r = tau_star("tanh", teacher)
    assert r.kappa == side * math.inf and r.kappa_exact == side * sp.oo
    assert r.tau == 0 and r.tau_exact == 0 and r.digits["tau"] == 17
    f = (lambda u: math.copysign(1.0, u) * side)
    vals = [_quad(lambda u, k=k: (f(u) - _tanh_G(side * k * u)[0]) ** 2 * _phi(u)) for k in (2.0, 8.0, 32.0)]
    assert vals[0] > vals[1] > vals[2] > 0


def test_infimum_at_infinity_positive():
    """Teacher 2 sign: |g_κ| < 1 gives τ(κ) > E(2 - 1)² = 1 for every finite κ, and τ -> 1 as κ -> +∞."""
    r = tau_star("tanh", "2*sign(x)")
    assert r.kappa == math.inf and abs(r.tau - 1) <= r.errors["tau"] + 1e-15
    assert r.limits["+inf"] == pytest.approx(1, abs=1e-15) and r.limits["-inf"] == pytest.approx(9, abs=1e-15)
    assert r.tau_exact is None and not r.beats_kernel


def test_infimum_at_infinity_dps():
    r = tau_star("tanh", "sign", dps=30)
    assert r.tau == 0 and mpmath.isinf(r.kappa) and r.kappa > 0 and r.digits["tau"] >= 30


def test_minimum_beyond_kappa_max_refused():
    with pytest.raises(ConvergenceError, match="kappa_max"):
        tau_star("sin", "exp(-1/2)*sin(2*x)", kappa_max=1)        # κ* = 2 > 1, sin has no limit at ∞
    with pytest.raises(ConvergenceError, match="kappa_max"):
        tau_star("relu", "relu", kappa_max="1/2")                # κ* ≈ 0.96, τ -> +∞ (unbounded student)


# ----------------------------------------------------------------------------- (4) the sRF upper bound (26)
@pytest.mark.parametrize("student, teacher", [("tanh", "sin"), ("relu", "tanh"), ("erf(x)", "erf(x)")])
def test_upper_bound_below_tau_star(student, teacher):
    """(26) optimises the coefficient of μ0 at r = κ*; τ* fixes it to 1, so (26) ≤ τ*."""
    r = result(student, teacher)
    b = bounds(student, teacher, r=float(r.kappa), c=1, gamma=1)
    assert b.upper <= r.tau + r.errors["tau"] + b.errors["upper"]


# ----------------------------------------------------------------------------- (5) the kernel bound
def test_kernel_bound_erf_closed_form():
    r = result("erf(x)", "erf(x)")
    m2, mu1 = 2 / math.pi * math.asin(2 / 3), 2 / math.sqrt(3 * math.pi)    # E erf(z)², E z erf(z)
    assert r.kernel_bound == pytest.approx(m2 - mu1**2, abs=1e-14)
    r = result("tanh", "sin")
    assert r.kernel_bound == pytest.approx((1 - math.exp(-2)) / 2 - math.exp(-1), abs=1e-14)   # E sin² - (E z sin z)²
    assert r.beats_kernel == (r.kernel_bound > 10 * r.tau)


def test_serialisation():
    d = json.loads(result("tanh", "sin").to_json())
    assert set(d["errors"]) == {"tau", "kappa", "kernel_bound", "limits", "eta_star"}
    assert "[BES+22]" in d["provenance"]["references"][0]
    assert json.loads(tau_star("tanh", "sign").to_json())["kappa"] in ("inf", "+inf")


# ----------------------------------------------------------------------------- (6) bad input
@pytest.mark.parametrize("kw", [dict(dps=0), dict(dps=1000), dict(dps=True), dict(dps=2.5), dict(dps="30"),
                                dict(kappa_max=0), dict(kappa_max=-1), dict(kappa_max=1000), dict(kappa_max="abc"),
                                dict(kappa_max=math.inf), dict(kappa_max=math.nan)])
def test_bad_parameters(kw):
    with pytest.raises(InvalidParameterError):
        tau_star("tanh", "sin", **kw)


@pytest.mark.parametrize("student, teacher", [("1", "sin"), ("exp(3*x)", "sin"), ("exp(x**2/5)", "sin"),
                                              ("tanh", "foo(x)"), ("tanh", "exp(x**2)")])
def test_bad_functions(student, teacher):
    with pytest.raises(InvalidParameterError):
        tau_star(student, teacher)


@pytest.mark.parametrize("kappa", [1e6, "abc", math.nan])
def test_bad_kappa(kappa):
    with pytest.raises(InvalidParameterError):
        tau_of_kappa("tanh", "sin", kappa)
