"""Losses that work or are refused with a reason (issue 31, item 3; docs/theory/srf-theory.md §13).

References are independent of the code under test: brute-force 1-D minimisation (scipy's bounded Brent) for the
proximal maps of kinked losses, the hinge's closed-form truncated-Gaussian ξ-averages for the split-panel rule
of a user-written hinge, and (slow) the direct sRF simulation for the hinge at the issue's setting."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import minimize_scalar

from onestep_theory import ConvergenceError, InvalidParameterError
from onestep_theory.srf import srf_solve
from onestep_theory.srf.loss.losses import LOSSES, loss

ISSUE = dict(alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")        # tanh/sign: "no valid fixed point" before
Y, YH = sp.symbols("y yhat", real=True)
PW_CONVEX = sp.Piecewise((YH**2, YH > 0), (0, True))              # Piecewise: through the API (the parser refuses it)

# hostile user losses refused on entry, with the reason the one line must name
REFUSED = [
    ("0", "does not depend on yhat"), ("1", "does not depend on yhat"), ("y**2", "does not depend on yhat"),
    ("sin(yhat)**2 + cos(yhat)**2 - 1 + 0*yhat", "does not depend on yhat"),
    ("yhat", "unbounded below"), ("-y*yhat", "unbounded below"), ("1e-10*yhat", "unbounded below"),
    ("-yhat**2", "not convex"), ("sin(yhat)", "not convex"), ("y*yhat**3", "not convex"),
    ("Heaviside(yhat)", "not convex"), ("Heaviside(-y*yhat)", "not convex"),
    ("yhat**2 - 1e-3*sin(1000*yhat)", "not convex"), (sp.Piecewise((YH**2, YH > 0), (1 - YH, True)), "not convex"),
    ("Piecewise((yhat**2, yhat > 0), (0, True))", "whitelisted"),
    ("exp(yhat**10)", "float64"), ("1e308*(y - yhat)**2", "float64"), ("log(yhat)", "float64"),
    ("sqrt(yhat)", "float64"), ("(y - yhat)**2/(yhat - yhat)", "loss"), ("log(1 + exp(yhat)) - 2*yhat", "unbounded below"),
]
# convex user losses accepted on entry (smooth and kinked)
ACCEPTED = ["Abs(y - yhat)", "Max(0, 1 - y*yhat)**2", "Max(0, 1 - y*yhat)", PW_CONVEX,
            "exp(-y*yhat)", "log(1 + exp(-y*yhat))", "(y - yhat)**4", "1e6*(y - yhat)**2", "cosh(y - yhat)", "Abs(yhat)"]


@pytest.mark.parametrize("expr, why", REFUSED)
def test_hostile_loss_refused_with_reason(expr, why):
    with pytest.raises(InvalidParameterError, match="loss") as exc:
        loss(expr)
    msg = str(exc.value)
    assert why in msg and "\n" not in msg


@pytest.mark.parametrize("expr", ACCEPTED)
def test_convex_loss_accepted(expr):
    L = loss(expr)
    assert L.smooth == (not any(t in str(expr) for t in ("Abs", "Max", "Piecewise")))


@pytest.mark.parametrize("expr", ["Abs(y - yhat)", "Max(0, 1 - y*yhat)", "Max(0, 1 - y*yhat)**2", PW_CONVEX,
                                  "Abs(yhat) + (y - yhat)**2/4"])
def test_kinked_prox_is_the_minimiser(expr):
    """The prox of a kinked loss (no second derivative across the kink) against bounded Brent on the Moreau
    objective; d prox/dω against a central difference away from the kinks (0 where the prox sits on one)."""
    L = loss(expr)
    rng = np.random.default_rng(5)
    y = np.sign(rng.standard_normal(60))
    w, V = rng.standard_normal(60) * 3, np.abs(rng.standard_normal(60)) * 3 + 0.05
    x, dx = L.prox(y, w, V)
    h = 1e-6
    xp, xm = L.prox(y, w + h, V)[0], L.prox(y, w - h, V)[0]
    for i in range(60):
        obj = (lambda t: (t - w[i]) ** 2 / (2 * V[i]) + float(L.value(y[i], t)))
        ref = minimize_scalar(obj, bounds=(w[i] - 40, w[i] + 40), method="bounded", options={"xatol": 1e-12}).x
        assert abs(x[i] - ref) < 1e-7 * (1 + abs(ref)) and obj(x[i]) <= obj(ref) + 1e-13
        fd = (xp[i] - xm[i]) / (2 * h)
        if abs(fd - (L.prox(y[i], w[i] + 2 * h, V[i])[0] - L.prox(y[i], w[i], V[i])[0]) / (2 * h)) < 1e-6:
            assert abs(dx[i] - fd) < 1e-5                  # the difference quotient is not straddling a kink


def test_user_hinge_channel_against_closed_form():
    """The user-written hinge (prox with kinks, ξ on split Gauss–Legendre panels) against the built-in hinge's
    closed-form ξ-averages (truncated Gaussian moments), at one state of a synthetic κ-rule."""
    from onestep_theory.hermite.quadrature import gauss_hermite
    from onestep_theory.srf.single.channel import general_hats, inner_rule

    k, wk = gauss_hermite(24)
    k, wk = np.asarray(k, float), np.asarray(wk, float)
    mu0, mu1, ms2 = 0.4 * np.tanh(k), 0.7 + 0.1 * k * k / (1 + k * k), 0.3 + 0 * k
    R = inner_rule(k, 0.9, (0.0,), 1)
    args = (R, np.sign, k, wk, mu0, mu1, ms2, 1.3, 0.2, 0.3, 1.4 + 0 * k, 0.9 * (0.8 + 0 * k), 1.0, 1.0)
    ref, ex_ref = general_hats(LOSSES["hinge"], *args, extras=True)
    got, ex = general_hats(loss("Max(0, 1 - y*yhat)"), *args, extras=True)
    for a, b in zip(ref, got):
        assert abs(a - b) <= 1e-9 * max(1.0, abs(a))
    for key in ("train_loss", "class_error"):
        assert abs(ex[key] - ex_ref[key]) <= 1e-9


def test_classification_loss_refuses_non_binary_teacher_at_once(monkeypatch):
    """sin is not a ±1 teacher: refused before (r, c, γ) or any saddle-point work is started."""
    import onestep_theory.srf.single.solve as solve_mod

    def boom(*a, **k):
        raise AssertionError("work started before the teacher check")
    monkeypatch.setattr(solve_mod, "resolve_rcg", boom)
    for name in ("hinge", "logistic"):
        with pytest.raises(InvalidParameterError, match="teacher") as exc:
            srf_solve("tanh", "sin", loss=name, **ISSUE)
        assert "+-1" in str(exc.value)
    with pytest.raises(InvalidParameterError, match="teacher"):
        srf_solve("tanh", "sign(x) + 1/2", loss="hinge", **ISSUE)


def test_cli_refusals_one_line(capsys):
    from onestep_theory.cli.main import main
    base = ["srf", "--student", "tanh", "--teacher", "sign", "--alpha0", "20", "--eta", "3", "--alpha", "1", "--beta",
            "1", "--lam", "0.1"]
    for spec in ("0", "yhat", "-yhat**2", "Heaviside(yhat)"):
        assert main([*base, f"--loss={spec}"]) == 2
        err = [ln for ln in capsys.readouterr().err.splitlines() if "error" in ln]
        assert len(err) == 1 and "internal error" not in err[0] and "loss" in err[0]
    assert main([*base[:4], "sin", *base[5:], "--loss", "hinge"]) == 2
    err = capsys.readouterr().err
    assert "teacher" in err and "internal error" not in err


@pytest.mark.parametrize("bad", ["singular", "nan"])
def test_singular_jacobian_is_a_convergence_error(monkeypatch, bad):
    """srf/solve.py's chord-Newton inverse is guarded: a singular or non-finite I - J raises ConvergenceError
    (exit 3), never LinAlgError."""
    import onestep_theory.srf.single.solve as solve_mod
    fake = np.eye(7) if bad == "singular" else np.full((7, 7), np.nan)
    monkeypatch.setattr(solve_mod, "jacobian", lambda *a, **k: fake)
    with pytest.raises(ConvergenceError, match="degenerate"):
        srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=2, beta=1, lam="0.1")


def test_hinge_at_the_issue_setting():
    """tanh/sign, α0 = 20, η̃ = 3, α = 1, λ = 0.1 with the hinge: solved, test and class error with errors."""
    sol = srf_solve("tanh", "sign", loss="hinge", **ISSUE)
    te, ce = float(sol.test_error), float(sol.extra["class_error"])
    assert math.isfinite(te) and sol.abs_error <= 1e-9 * te and 0 < ce < 0.5
    assert 0 < sol.errors["class_error"] < 1e-9


@pytest.mark.slow
def test_hinge_grid_and_simulation():
    """The grid around the issue's setting solves (corners and centre of α ∈ [0.5, 5], λ ∈ [1e-3, 1]), and at the
    issue's setting the theory agrees with the direct sRF (d = 500, 8 seeds) within 4 standard errors."""
    from onestep_theory.simulate import sim_srf
    from onestep_theory.srf import srf_params

    for al, la in ((0.5, "1e-3"), (0.5, 1), (5, "1e-3"), (5, 1), (2, "0.01")):
        sol = srf_solve("tanh", "sign", alpha0=20, eta=3, alpha=al, beta=1, lam=la, loss="hinge")
        assert sol.abs_error <= 1e-9 * float(sol.test_error) and 0 < float(sol.extra["class_error"]) < 0.5
    th = srf_solve("tanh", "sign", loss="hinge", **ISSUE)
    P = srf_params("tanh", "sign", alpha0=20, eta=3)
    sim = sim_srf("tanh", "sign", 500, r=float(P.r), c=float(P.c), gamma=float(P.gamma), alpha=1, beta=1, lam=0.1,
                  loss="hinge", reps=8, seed=31)
    for key, val in (("test_error", float(th.test_error)), ("class_error", float(th.extra["class_error"]))):
        st = sim.stats[key]
        assert abs(st.mean - val) <= 4 * st.se


def test_general_loss_solve_is_time_bounded(monkeypatch):
    """A general-loss solve stops at its time limit with ConvergenceError (exit 3), never runs on."""
    import onestep_theory.srf.single.solve as solve_mod
    monkeypatch.setattr(solve_mod, "GENERAL_LIMIT", 0.0)
    with pytest.raises(ConvergenceError, match="time limit"):
        srf_solve("tanh", "sign", loss="hinge", **ISSUE)
