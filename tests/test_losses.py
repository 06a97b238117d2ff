"""General convex losses (docs/theory/srf-theory.md §4.9): proximal operators against brute-force minimisation, the
square loss through the general channel against the closed form, and theory against simulation."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from onestep_theory import InvalidParameterError
from onestep_theory.simulate import sim_giant_step, sim_srf
from onestep_theory.simulate.base import fit_convex
from onestep_theory.srf import srf_params, srf_solve
from onestep_theory.srf.loss.losses import LOSSES, Loss, loss

POINTS = [(1.0, 0.3, 0.7), (-1.0, 2.0, 3.0), (1.0, -1.5, 0.2), (1.0, 0.95, 0.5), (-1.0, -0.2, 8.0), (1.0, 7.0, 0.01)]
NAMES = ["square", "logistic", "hinge", "log(1 + exp(-y*yhat)) + (y - yhat)**2/10"]


@pytest.mark.parametrize("name", NAMES)
def test_prox_is_the_minimiser(name):
    L = loss(name)
    for y, w, V in POINTS:
        x, dx = L.prox(y, w, V)
        obj = (lambda t: (t - w) ** 2 / (2 * V) + float(L.value(y, t)))
        ref = minimize_scalar(obj, bounds=(w - 60, w + 60), method="bounded", options={"xatol": 1e-12}).x
        assert abs(float(x) - ref) < 1e-7 * (1 + abs(ref))            # bounded Brent's own tolerance
        assert obj(float(x)) <= obj(ref) + 1e-13                      # and never worse than it
        h = 1e-6
        if L.smooth or abs(y * w - 1) > 10 * h and abs(y * w - (1 - V * y * y)) > 10 * h:
            fd = (float(L.prox(y, w + h, V)[0]) - float(L.prox(y, w - h, V)[0])) / (2 * h)
            assert abs(float(dx) - fd) < 1e-6


def test_prox_vectorised_and_extreme():
    rng = np.random.default_rng(0)
    y = np.sign(rng.standard_normal(20000))
    w, V = rng.standard_normal(20000) * 30, np.abs(rng.standard_normal(20000)) * 50 + 1e-3
    for name in ("logistic", "log(1 + exp(-y*yhat))"):
        x, dx = loss(name).prox(y, w, V)
        g = x - w - V * y / (1 + np.exp(y * x))                       # the optimality condition of the logistic prox
        assert np.max(np.abs(g) / (1 + np.abs(x))) < 1e-12 and np.all((dx > 0) & (dx <= 1))


def test_loss_specs():
    assert loss("Logistic") is LOSSES["logistic"]
    L = Loss.from_callables("quartic", lambda y, x: (y - x) ** 4 / 4 + (y - x) ** 2 / 2,
                            lambda y, x: -(y - x) ** 3 - (y - x), lambda y, x: 3 * (y - x) ** 2 + 1)
    x, _ = L.prox(1.0, 0.0, 1.0)
    u = [r.real for r in np.roots([1, 0, 2, -1]) if abs(r.imag) < 1e-12][0]   # x = 1 - u with u^3 + 2u - 1 = 0
    assert abs(float(x) - (1 - u)) < 1e-12
    # the square loss given with its prox as a callable: the general channel then equals the closed form
    sq = Loss.from_callables("my square", lambda y, x: 0.5 * (y - x) ** 2, lambda y, x: x - y,
                             prox=lambda y, w, V: ((w + V * y) / (1 + V), np.broadcast_to(1 / (1 + V), np.shape(w))))
    assert sq.fout(1.0, 0.2, 0.5)[0] == pytest.approx((1.0 - 0.2) / 1.5, rel=1e-15)
    for bad in ("__import__('os').system('true')", "y + z", 3):
        with pytest.raises(InvalidParameterError):
            loss(bad)
    with pytest.raises(InvalidParameterError):
        Loss.from_callables("bad", 1, 2, 3)
    with pytest.raises(InvalidParameterError, match="d2, or prox"):
        Loss.from_callables("no curvature", lambda y, x: x, lambda y, x: x)


def test_square_through_the_general_channel():
    """§4.9 with the square prox, averaged numerically over (z, xi), equals the closed form (18)-(20)."""
    ref = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")
    gen = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10", loss=LOSSES["square"])
    assert abs(float(gen.test_error) - float(ref.test_error)) <= gen.abs_error + ref.abs_error
    for k in ("m", "theta", "psi", "q1", "q2", "V1", "V2"):
        assert abs(float(gen.order[k]) - float(ref.order[k])) <= gen.errors[k] + ref.errors[k]
    assert srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10", loss="square").test_error == \
        ref.test_error                                                # the string: the closed form itself


def test_general_loss_refusals():
    kw = dict(alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")
    with pytest.raises(InvalidParameterError, match="dps"):
        srf_solve("tanh", "sign", loss="hinge", dps=20, **kw)
    with pytest.raises(InvalidParameterError, match="noise_var"):
        srf_solve("tanh", "sign", loss="hinge", noise_var="0.1", **kw)
    with pytest.raises(InvalidParameterError, match="lam"):
        sim_srf("tanh", "sign", 50, r=1, c=1, gamma=1, alpha=1, beta=1, lam=[0.1, 0.2], loss="hinge")


def test_fit_convex_optimality():
    rng = np.random.default_rng(1)
    F = rng.standard_normal((300, 80)) / math.sqrt(80)
    y = np.sign(rng.standard_normal(300))
    a, info = fit_convex(F, y, 0.5, LOSSES["logistic"])
    grad = F.T @ (-y / (1 + np.exp(y * (F @ a)))) + 0.5 * a
    assert np.max(np.abs(grad)) < 1e-6 and info["method"] == "L-BFGS"
    a, info = fit_convex(F, y, 0.5, LOSSES["hinge"])
    # KKT of the hinge primal: a = F^T (alpha y)/lam with alpha in [0,1], alpha = 1 where y f < 1, 0 where y f > 1
    assert info["optimality"] < 1e-6 * max(1.0, float(np.sum(np.maximum(0, 1 - y * (F @ a))))) + 1e-9


@pytest.mark.slow      # default-suite budget: simulation, 4 s
def test_hinge_theory_against_srf_simulation():
    P = srf_params("tanh", "sign", 20, 3)
    th = srf_solve("tanh", "sign", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10", loss="hinge")
    sim = sim_srf("tanh", "sign", 400, r=float(P.r), c=float(P.c), gamma=float(P.gamma), alpha=2, beta=1, lam=0.1,
                  loss="hinge", reps=3, seed=4, n_test=10000)
    for key, val in (("test_error", th.test_error), ("class_error", th.extra["class_error"])):
        st = sim.stats[key]
        assert abs(st.mean - float(val)) <= 4 * st.se + th.errors[key]


@pytest.mark.slow
def test_logistic_theory_against_network_and_srf():
    """Issue 13's acceptance setting: tanh/sign, alpha0 = 20, eta = 3, alpha = 2, beta = 1, lambda = 0.1.

    The classification error agrees at finite d (direct sRF d = 1200, network d = 600, 8 seeds, 4 s.e.), and the
    direct sRF's q2, extrapolated from d and 2d, equals the theory's.  The test MSE of the logistic readout is not
    asserted here: it is dominated by m^2 E mu0^2 with m ~ 8.7, whose seed-to-seed spread is heavy-tailed (measured
    per-seed MSE 16.7 ... 21.7 at d = 1200; means 20.08 +- 0.24, 18.45 +- 0.42, 20.29 +- 0.50 at d = 600, 1200,
    2400 against 20.52), so a 4 s.e. test on 8 seeds is not reliable (see the closing note of issue 13)."""
    P = srf_params("tanh", "sign", 20, 3)
    th = srf_solve("tanh", "sign", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10", loss="logistic")
    kw = dict(r=float(P.r), c=float(P.c), gamma=float(P.gamma), alpha=2, beta=1, lam=0.1, loss="logistic", reps=8)
    small = sim_srf("tanh", "sign", 600, seed=21, **kw).stats
    large = sim_srf("tanh", "sign", 1200, seed=22, **kw).stats
    net = sim_giant_step("tanh", "sign", 600, alpha0=20, eta=3, alpha=2, beta=1, lam=0.1, loss="logistic", reps=8,
                         seed=23).stats
    ce = float(th.extra["class_error"])
    for st in (large["class_error"], net["class_error"]):
        assert abs(st.mean - ce) <= 4 * st.se + th.errors["class_error"]
    q2 = float(th.order["q2"])
    ext = 2 * large["q2"].mean - small["q2"].mean               # O(1/d) bias of q2: extrapolate from d, 2d
    assert abs(ext - q2) <= 4 * math.hypot(2 * large["q2"].se, small["q2"].se) + th.errors["q2"]


# ---------------------------------------------------------------- common bias (docs/theory/srf-theory.md §4.9)

def test_shifted_activation_exact():
    from onestep_theory.hermite.activation import Activation

    relu = Activation.from_any("relu").shifted("1/2")
    # E max(0, z + 1/2) = phi(1/2) + Phi(1/2)/2 (closed form)
    ref = math.exp(-1 / 8) / math.sqrt(2 * math.pi) + 0.5 * 0.5 * (1 + math.erf(0.5 / math.sqrt(2)))
    assert abs(float(relu.mean(20)) - ref) < 1e-15
    assert Activation.from_any("tanh").shifted(0).expr == Activation.from_any("tanh").expr


def test_bias_lower_bound_odd_pair():
    from onestep_theory.srf.optimal.bounds import bias_lower_bound

    # odd student and teacher: (27)(b) is even in b, so b* = 0 and nothing is gained
    odd = bias_lower_bound("tanh", "sin", r="1.13", c="1.02", gamma="0.97")
    assert abs(odd.bias) <= odd.errors["bias"] < 1e-6
    assert abs(odd.lower - odd.lower_at_zero) <= odd.errors["lower"] + odd.errors["lower_at_zero"]



@pytest.mark.slow
def test_bias_lower_bound_gains_for_relu():
    from onestep_theory.srf.optimal.bounds import bias_lower_bound, bounds

    out = bias_lower_bound("relu", "relu", r=1, c=1, gamma=1)
    assert out.lower < out.lower_at_zero - 100 * out.errors["lower"]
    # the optimum against the bound of the shifted student computed by bounds(), and an independent grid that
    # avoids the optimiser's points: nothing on it lies below the reported minimum
    b = bounds(f"Max(0, x + {float(out.bias)!r})", "relu", r=1, c=1, gamma=1)
    assert abs(b.lower - out.lower) <= b.errors["lower"] + out.errors["lower"] + 1e-9
    for bb in (-0.73, -0.21, 0.04, 0.61):
        assert bounds(f"Max(0, x + {bb!r})", "relu", r=1, c=1, gamma=1).lower >= out.lower - out.errors["lower"]


def test_cli_loss(capsys):
    import json

    from onestep_theory.cli.main import main
    base = ["--student", "tanh", "--teacher", "sign", "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta", "1",
            "--lam", "0.1"]
    assert main(["srf", *base, "--loss", "hinge", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["loss"] == "hinge" and 0 < float(d["class_error"]) < 0.5 and "class_error" in d["errors"]
    assert main(["simulate", "srf", *base[:4], "--d", "60", *base[8:], "--alpha0", "20", "--eta", "3", "--loss",
                 "hinge", "--quiet", "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert "class_error" in json.dumps(sim)
    assert main(["srf", *base, "--loss", "y + import"]) == 2
    assert "loss" in capsys.readouterr().err
    assert main(["srf", *base, "--loss", "hinge", "--dps", "20"]) == 2


@pytest.mark.slow
def test_training_objective_against_ridge():
    """The asymptotic training objective 2 E<l(y, prox)> + lam beta q2 / alpha (docs/theory/srf-theory.md §4.9) against
    min_a [||y - Phi a/sqrt p||^2 + lam ||a||^2] / n of the direct sRF at a fixed bias (d = 400, 4 seeds)."""
    from onestep_theory.simulate.bias import sim_trained_bias
    from onestep_theory.srf.optimal.bias import training_objective

    obj, err, _ = training_objective("tanh", "relu", 0.5, alpha=2, beta=1, lam="1/10", r="1.2", c="1.1", gamma="0.9")
    sim = sim_trained_bias("tanh", "relu", 400, r=1.2, c=1.1, gamma=0.9, alpha=2, beta=1, lam=0.1, bias_max=1e-9,
                           reps=4, seed=8, n_test=2000)           # b pinned to 0 ... 1e-9: the objective at b = 0
    obj0, err0, _ = training_objective("tanh", "relu", 0.0, alpha=2, beta=1, lam="1/10", r="1.2", c="1.1",
                                       gamma="0.9")
    st = sim.stats["objective"]
    assert abs(st.mean - obj0) <= 4 * st.se + err0
    assert obj < obj0                                               # the bias helps this non-centred teacher


@pytest.mark.slow
def test_trained_bias_against_simulation():
    """tanh student, uncentred relu teacher (the bias supplies the mean the odd student lacks): theory b* = 0.691,
    test error 0.2217 (0.3428 at b = 0); the jointly trained (a, b) of the direct sRF at d = 800, 6 seeds."""
    from onestep_theory.simulate.bias import sim_trained_bias
    from onestep_theory.srf.optimal.bias import trained_bias

    th = trained_bias("tanh", "relu", alpha=2, beta=1, lam="1/10", r="1.2", c="1.1", gamma="0.9", bias_max=1.5)
    sim = sim_trained_bias("tanh", "relu", 800, r=1.2, c=1.1, gamma=0.9, alpha=2, beta=1, lam=0.1, bias_max=1.5,
                           reps=6, seed=2)
    assert th.test_error < th.test_error_at_zero - 0.05
    assert "±" in repr(th) and set(th.to_dict()) >= {"bias", "errors", "digits", "provenance"}
    for key in ("bias", "objective", "test_error"):
        val, err = getattr(th, key), th.errors[key]
        st = sim.stats[key]
        assert abs(st.mean - val) <= 4 * st.se + err


@pytest.mark.slow
def test_cli_square_loss_30_digits(capsys):
    """Issue 13's acceptance: `srf ... --loss square --dps 30` equals the default solver to 30 digits."""
    import json

    from onestep_theory.cli.main import main
    base = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta",
            "1", "--lam", "0.1", "--dps", "30", "--json"]
    assert main(base) == 0
    ref = json.loads(capsys.readouterr().out)
    assert main(base + ["--loss", "square"]) == 0
    sq = json.loads(capsys.readouterr().out)
    assert sq["test_error"] == ref["test_error"] and sq["digits"] >= 30
