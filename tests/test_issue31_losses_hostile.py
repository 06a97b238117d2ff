"""Hostile user losses give a result or a one-line refusal (issue 31 item 3; docs/theory/srf-theory.md §13).

The three leftovers of the issue's sweep, each by the class it stands for:

* ``exp(yhat**2)``, ``Min(0, yhat)**2`` — losses smallest at ŷ = 0 for every label: a = 0 minimises the training
  objective exactly, so ε_g = E[σ⋆(g)²] (closed forms: 1 for sign, (1 - e^-2)/2 for sin), the training loss is
  E[ℓ(y, 0)], and the a = 0 state is a fixed point of the general channel's map (checked on that map, a separate
  code path: prox by Newton, ξ-quadrature);
* ``1e-300*(y - yhat)**2`` — a loss whose scale makes the effective ridge λ/K huge: solved (the channel's f_out is
  -ℓ'(y, prox), no cancellation), against the λ → ∞ limit computed here by quadrature (only the
  unpenalised mean overlap m survives: ε = E[h²] - E[μ0 h]²/E[μ0²]) and against the closed-form square loss at
  λ/(2K); below 1e-300 it is refused (exit 2, one line).
"""

import math

import numpy as np
import pytest
import sympy as sp

from onestep_theory import InvalidParameterError
from onestep_theory.srf import srf_solve
from onestep_theory.srf.loss.losscheck import zero_minimiser
from onestep_theory.srf.loss.losses import loss

ISSUE = dict(alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")
Y, YH = sp.symbols("y yhat", real=True)
SIN2 = (1 - math.exp(-2)) / 2          # E[sin(g)^2], g ~ N(0, 1)


def _inside(value, err, truth):
    return abs(float(value) - truth) <= float(err)


@pytest.mark.parametrize("expr, zero, k", [
    ("exp(yhat**2)", True, 2), ("Min(0, yhat)**2", True, None), ("Abs(yhat)", True, None),
    ("Max(0, yhat)", True, None), ("cosh(yhat)", True, 1), ("y**2*yhat**4", True, 0),
    ("1e-300*yhat**2", True, sp.Float("2e-300")), ("sign(yhat)*yhat", True, None),
    ("(y - yhat)**2", False, None), ("(yhat - 1)**2", False, None), ("Max(0, 1 - y*yhat)", False, None),
    ("log(1 + exp(-y*yhat))", False, None), ("Abs(yhat) + (y - yhat)**2", False, None),
    ("(yhat - 1e-30)**2", False, None), ("Abs(yhat) + 1e-9*(y - yhat)**2", True, None),
    ("exp(yhat**2)*(1 + y**2)", True, None), ("Abs(yhat)**1.5", True, None), ("log(cosh(yhat))", True, 1),
    ("Heaviside(yhat - 1)*(yhat - 1)**2 + Heaviside(-1 - yhat)*(yhat + 1)**2", True, 0),
    ("cosh(yhat)**3*Abs(y*yhat)", True, None)])
def test_zero_minimiser(expr, zero, k):
    """0 minimises ℓ(y, ·) on the default labels iff ℓ'(y, -h) <= 0 <= ℓ'(y, h) (h = 1e-60; a minimiser 1e-30 away
    is seen); the curvature only where ℓ' does not jump at 0 and ℓ'' has one finite label-free value there
    (SymPy's one-sided limit never returned on the Heaviside sum)."""
    z, kk = zero_minimiser(sp.sympify(expr, {"y": Y, "yhat": YH}))
    assert z is zero
    assert kk is None if k is None else float(kk) == pytest.approx(float(k), rel=1e-15, abs=0)


def test_zero_minimiser_on_a_finite_label_set():
    """Abs(yhat - y + 1): smallest at 0 only for y = 1; decided on the labels given (the teacher's)."""
    e = sp.sympify("Abs(yhat - y + 1)", {"y": Y, "yhat": YH})
    assert zero_minimiser(e)[0] is False
    assert zero_minimiser(e, labels=[1.0])[0] is True
    assert zero_minimiser(e, labels=[1.0, -1.0])[0] is False


@pytest.mark.parametrize("teacher, te", [("sign", 1.0), ("sin", SIN2)])
@pytest.mark.parametrize("expr, tl", [("exp(yhat**2)", 1.0), ("Min(0, yhat)**2", 0.0)])
def test_zero_readout_against_closed_forms(teacher, te, expr, tl):
    sol = srf_solve("tanh", teacher, loss=expr, **ISSUE)
    assert _inside(sol.test_error, sol.abs_error, te) and sol.digits >= 12
    assert _inside(sol.extra["train_loss"], sol.errors["train_loss"], tl)
    for key in ("m", "theta", "psi", "q1", "q2"):
        assert sol.order[key] == 0 and sol.errors[key] == 0
    # the tie sign(0) = 0 counts as an error, as in the simulators (np.sign): P[teacher != 0] = 1 for sign and sin
    assert _inside(sol.extra["class_error"], sol.errors["class_error"], 1.0) and "a = 0" in sol.extra["readout"]
    d = sol.to_dict()                       # printed: value +- error holds the truth
    assert abs(float(d["test_error"]) - te) <= float(d["errors"]["test_error"])
    if expr.startswith("Min"):              # kinked at 0: no linear response, not reported (and said why)
        assert "V1" not in sol.order and "kinked" in sol.extra["readout"]


def test_zero_readout_in_a_curve_and_a_study_metric():
    """The zero readout's result serves the callers of srf_solve: a warm-started curve (state() without the
    unreported V's) and the class error a study reads."""
    from onestep_theory.srf import srf_curve
    sols = srf_curve("tanh", "sign", [1, 2], beta=1, lam="0.1", alpha0=20, eta=3, loss="Min(0, yhat)**2")
    assert [float(s.test_error) for s in sols] == [1.0, 1.0] and len(sols[0].state()) == 7


def test_zero_readout_is_a_fixed_point_of_the_general_map():
    """exp(yhat**2): V1, V2 (from the square loss at λ/2, §13) reproduced by one application of the general
    channel's map (prox by Newton, ξ Gauss–Hermite) at the a = 0 state."""
    from onestep_theory.hermite.activation import Activation
    from onestep_theory.srf.features.kappa import srf_setup
    from onestep_theory.srf.single.saddle import MapOptions, fp_map
    sol = srf_solve("tanh", "sign", loss="exp(yhat**2)", **ISSUE)
    S = srf_setup("tanh", "sign", float(sol.r), float(sol.c), float(sol.gamma), level=1)
    t = Activation.from_any("sign", "teacher")
    o = MapOptions(1.0, 1.0, 0.1, 0.0, loss=loss("exp(yhat**2)"), teacher_fn=t.numpy(), teacher_kinks=(0.0,))
    x = (0.0, 0.0, 0.0, 0.0, 0.0, float(sol.order["V1"]), float(sol.order["V2"]))
    fx, hats, D, eps = fp_map(x, S, o)
    for i, key in ((5, "V1"), (6, "V2")):
        assert abs(float(fx[i]) - float(sol.order[key])) <= 1e-10 * float(sol.order[key])
    assert max(abs(float(v)) for v in fx[:5]) == 0 and abs(float(eps) - 1) < 1e-12


def test_tiny_scale_below_the_float64_range_refused_in_one_line(capsys):
    from onestep_theory.cli.main import main
    base = ["srf", "--student", "tanh", "--teacher", "sign", "--alpha0", "20", "--eta", "3", "--alpha", "1", "--beta",
            "1", "--lam", "0.1"]
    with pytest.raises(InvalidParameterError, match="rescale the loss"):
        loss("1e-305*(y - yhat)**2")
    loss("1e-320*yhat**2")                  # smallest at 0: a = 0 whatever its scale, accepted
    for spec in ("1e-305*(y - yhat)**2", "-Abs(yhat)", "-log(yhat)", "1e200*(y - yhat)**2", "y*yhat"):
        assert main([*base, f"--loss={spec}"]) == 2
        err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        assert len(err) == 1 and "--loss" in err[0] and "internal error" not in err[0]


def _infinite_ridge_limit(r, c, g):
    """ε_g and m as λ/K → ∞ (tanh student, sign teacher): a → 0 but the mean overlap m is unpenalised (§4.4) and
    solves E_κ[μ0 (h - μ0 m)] = 0, h(κ) = erf(γκ/(ρ√2)); μ0 by 200-node Gauss–Hermite in z, κ by adaptive
    quadrature (scipy; agrees with a nested 30-digit mpmath quadrature, 0.30598098871106894463, to 3e-16)."""
    from scipy.integrate import quad
    from scipy.special import roots_hermitenorm
    r, c, g = float(r), float(c), float(g)
    rho = math.sqrt(1 - g * g)
    z, w = roots_hermitenorm(200)
    w = w / math.sqrt(2 * math.pi)

    def mu0(k):
        return float(w @ np.tanh(r * k + math.sqrt(c) * z))

    def mean(f):
        return sum(quad(lambda k: f(k) * math.exp(-k * k / 2) / math.sqrt(2 * math.pi), a, b, epsabs=1e-16,
                        epsrel=1e-13, limit=200)[0] for a, b in ((-12, 0), (0, 12)))
    A = mean(lambda k: mu0(k) * math.erf(g * k / (rho * math.sqrt(2))))
    B = mean(lambda k: mu0(k) ** 2)
    return 1 - A * A / B, A / B


@pytest.mark.slow      # two general-loss solves, about 6 s each unloaded
def test_tiny_scale_solved_against_infinite_ridge_limit():
    """1e-300*(y - yhat)**2 at λ = 0.1 is the square loss at λ = 5e298: ε_g is the λ → ∞ limit to 1e-298."""
    sol = srf_solve("tanh", "sign", loss="1e-300*(y - yhat)**2", **ISSUE)
    te, m = _infinite_ridge_limit(sol.r, sol.c, sol.gamma)
    assert _inside(sol.test_error, sol.abs_error, te) and sol.digits >= 12
    assert _inside(sol.order["m"], sol.errors["m"], m)
    # 1e-20: against the closed-form square loss at lam / (2e-20) (a different channel: no prox, no quadrature)
    gen = srf_solve("tanh", "sign", loss="1e-20*(y - yhat)**2", **ISSUE)
    sq = srf_solve("tanh", "sign", **{**ISSUE, "lam": "5e18"})
    assert abs(float(gen.test_error) - float(sq.test_error)) <= float(gen.abs_error) + float(sq.abs_error)


def test_continuation_failure_says_what_its_lam_is(monkeypatch):
    """A failure inside the λ-continuation quotes the step's λ: the message says it is a step, and the λ given
    (``exp(yhat**2)`` quoted λ = 0.383 as if typed)."""
    from onestep_theory import ConvergenceError
    import onestep_theory.srf.single.solvers as sv

    def damped(x, S, o, **kw):
        if kw.get("damping") == 0.9:        # the continuation's steps
            raise ConvergenceError(f"sRF saddle point: no fixed point within the budget (lam={o.lam})", 3)
        return x, 1, math.inf, "diverged"
    monkeypatch.setattr(sv, "_hybr", lambda x, S, o, tol: (None, 0))
    monkeypatch.setattr(sv, "iterate", damped)
    with pytest.raises(ConvergenceError) as exc:
        srf_solve("tanh", "sign", loss="exp(-y*yhat)", **ISSUE)
    msg = str(exc.value)
    assert "lam = 10 there is a step of the lambda-continuation" in msg and "lam = 0.1 given" in msg


def test_cli_zero_readout_prints_the_reason(capsys):
    """On the user's path: exit 0, the exact value with its error, and the line that says why a = 0."""
    import json

    from onestep_theory.cli.main import main
    argv = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "1", "--beta",
            "1", "--lam", "0.1", "--loss", "Min(0, yhat)**2"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "a = 0 minimises the training objective" in text and "not reported: the loss is kinked" in text
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert abs(float(d["test_error"]) - SIN2) <= float(d["abs_error"]) and d["status"] == "zero readout (exact)"


def test_prox_of_a_super_gaussian_loss_far_out():
    """exp((y - yhat)**2): l'(y, omega) overflows (or is 1e294) at omega = 30, -40, -25, so the bracket
    [omega, omega - V l'(omega)] was not finite or useless (exit 3); the doubling bracket finds the prox, checked
    against its defining equation x - omega + V l'(y, x) = 0 and bounded Brent on the Moreau objective."""
    from scipy.optimize import minimize_scalar
    L = loss("exp((y - yhat)**2)")
    y, w, V = np.array([1.0, -1, 1, -1]), np.array([30.0, -40, -25, 3]), np.array([0.5, 2, 0.1, 1])
    x, dx = L.prox(y, w, V)
    g = x - w + V * 2 * (x - y) * np.exp((x - y) ** 2)
    assert np.all(np.abs(g) <= 1e-12 * (1 + np.abs(w)))
    for yi, wi, vi, xi in zip(y, w, V, x):
        ref = minimize_scalar(lambda t: (t - wi) ** 2 / (2 * vi) + math.exp(min((yi - t) ** 2, 700.0)),
                              bounds=(yi - 4, yi + 4), method="bounded", options={"xatol": 1e-12}).x
        assert abs(xi - ref) < 1e-7
    assert np.all((dx > 0) & (dx < 1))
