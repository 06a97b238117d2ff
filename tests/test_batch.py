"""The batched float64 solver of the single-group sRF saddle point (srf.single.batch; docs/theory/numerics.md §4–5):
values equal to srf_solve's within the claimed errors, at easy and at hard points (the interpolation threshold
α = β at small λ, small λ, large α, β > 1), errors that bound the distance to an independent --dps 30 reference,
the fallback to srf_solve where the batch fails, ConvergenceError where no value can be certified, one-line errors
for bad inputs, and the wiring into srf_sweep / srf_curve / sweep."""

import sys
import warnings

import pytest

from onestep_theory.core.errors import ConvergenceError, InvalidParameterError
from onestep_theory.srf import srf_solve
from onestep_theory.srf.single import SRFSolution, srf_batch, srf_curve, srf_sweep
from onestep_theory.srf.single.saddle import ORDER

CASE = dict(alpha0=20, eta=3)            # case A (docs/studies/finite-size.md)
BATCH = "converged (batched Newton)"


def _close(b, r, keys=("test_error",) + ORDER):
    """|batch - reference| within the batch's claimed error, for every key (the test error and the state)."""
    for k in keys:
        vb, vr = float(b.value(k)), float(r.value(k))
        assert abs(vb - vr) <= b.errors[k], (k, vb, vr, b.errors[k])


@pytest.mark.parametrize("fixed", [dict(beta=1, lam="0.1"),           # case A
                                   dict(beta=1, lam="1e-3"),          # the interpolation threshold alpha = beta
                                   dict(beta="1/2", lam="1e-4"),      # small lambda
                                   dict(beta=2, lam="1e-3")],         # beta > 1, small lambda (continuation region)
                         ids=["caseA", "threshold", "small-lam", "beta2"])
def test_batch_equals_single_point_within_claims(fixed):
    alphas = ["0.3", "0.9", "1", "1.1", "3", "50"]
    got = srf_batch("tanh", "sin", [{"alpha": a} for a in alphas], **CASE, **fixed)
    assert sum(s.status == BATCH for s in got) >= 4          # the batch, not the fallback, solved most of them
    for a, b in zip(alphas, got):
        r = srf_solve("tanh", "sin", alpha=a, **CASE, **fixed)
        assert isinstance(b, SRFSolution) and b.digits >= 10 and b.options["level"] >= 1
        _close(b, r)
        assert b.abs_error <= 1e-10 * abs(float(b.test_error))


def test_two_dimensional_grid_and_its_warm_starts():
    """An (alpha, eta) grid: groups of points sharing (r, c, gamma), each warm-started (and extrapolated) from the
    last two; other inputs per point (beta, lam, noise) too."""
    pts = [{"alpha": a, "eta": e, "beta": b, "lam": "0.05", "noise_var": n}
           for e in ("1", "1.5", "2", "2.5") for a, b, n in (("0.5", 1, 0), ("2", "1/2", "0.1"), ("4", 2, 0))]
    got = srf_batch("tanh", "sin", pts, alpha0=20)
    assert [s.status for s in got].count(BATCH) >= 9
    for i in (0, 4, 8, 11):
        _close(got[i], srf_solve("tanh", "sin", alpha0=20, **pts[i]))
    assert got[4].noise_var == "0.1" and got[4].beta == "1/2"          # the inputs as typed


def test_error_bounds_the_distance_to_dps30():
    """An independent reference: mpmath polish on Arb rules at 30 digits."""
    b = srf_batch("tanh", "sin", [{"alpha": a} for a in ("1.5", "1", "2")], beta=1, lam="1e-3", **CASE)[2]
    assert b.status == BATCH
    ref = srf_solve("tanh", "sin", alpha="2", beta=1, lam="1e-3", dps=30, **CASE)
    for k in ("test_error",) + ORDER:
        assert abs(float(b.value(k)) - float(ref.value(k))) <= b.errors[k], k


@pytest.mark.slow
@pytest.mark.parametrize("alpha,beta,lam", [("0.2", 1, "0.1"), ("1", 1, "1e-4"), ("40", "1/2", "0.01"),
                                            ("3", 2, "1e-3")])
def test_error_bounds_the_distance_to_dps30_hard_points(alpha, beta, lam):
    got = srf_batch("tanh", "sin", [{"alpha": a} for a in (alpha, "0.7", alpha)], beta=beta, lam=lam, **CASE)
    ref = srf_solve("tanh", "sin", alpha=alpha, beta=beta, lam=lam, dps=30, **CASE)
    for b in (got[0], got[2]):
        for k in ("test_error",) + ORDER:
            assert abs(float(b.value(k)) - float(ref.value(k))) <= b.errors[k], (k, b.status)


def test_a_point_the_batch_cannot_solve_goes_to_srf_solve(monkeypatch):
    """Newton fails for every row (forced): srf_solve gives every value, as srf_sweep(batch=False) would."""
    mod = sys.modules["onestep_theory.srf.single.batch"]
    real = mod._newton

    def failing(*a, **k):
        out = real(*a, **k)
        return (*out[:3], out[3] & False, *out[4:])

    monkeypatch.setattr(mod, "_newton", failing)
    alphas = ["0.5", "1", "2"]
    got = srf_batch("tanh", "sin", [{"alpha": a} for a in alphas], beta=1, lam="0.1", **CASE)
    assert all(s.status != BATCH for s in got)
    for a, b in zip(alphas, got):
        _close(b, srf_solve("tanh", "sin", alpha=a, beta=1, lam="0.1", **CASE))


def test_no_value_without_its_target_convergence_error():
    """tol = 1e-13 is below the rounding floor here: the batch certifies nothing, srf_solve raises (exit 3)."""
    with pytest.raises(ConvergenceError, match="sRF test error"):
        srf_batch("tanh", "sin", [{"alpha": a} for a in ("1", "2")], beta=1, lam="1e-3", tol=1e-13, **CASE)


@pytest.mark.parametrize("bad,param", [({"alpha": "-1"}, "alpha"), ({"alpha": "abc"}, "alpha"),
                                       ({"alpha": "1", "beta": 0}, "beta"), ({"alpha": "1", "lam": None}, "lam"),
                                       ({"alpha": "1", "eta": "-2"}, "eta"), ({"alpha": "1", "noise_var": -1},
                                                                              "noise_var"),
                                       ({"alpha": "1", "step": 3}, "step"), ({"alpha": "1", "tol": 1e-20}, "tol")])
def test_bad_inputs_one_line_errors(bad, param):
    kw = dict(CASE, beta=1, lam="0.1")
    point = {k: v for k, v in bad.items() if k != "tol"}
    with pytest.raises(InvalidParameterError) as e:
        srf_batch("tanh", "sin", [{"alpha": "2"}, point], tol=bad.get("tol"), **kw)
    assert e.value.param == param and "\n" not in str(e.value)


@pytest.mark.parametrize("points", [[1, 2], "alpha", None, [{"alpha": "1"}, 5]])
def test_points_not_dicts(points):
    with pytest.raises(InvalidParameterError, match="^points="):
        srf_batch("tanh", "sin", points, beta=1, lam="0.1", **CASE)


def test_copies_equal_new_solutions():
    """The group's solutions after the first are copies with their own fields: equal to a new SRFSolution."""
    import dataclasses

    got = srf_batch("tanh", "sin", [{"alpha": a} for a in ("0.5", "1", "2", "3")], beta=1, lam="0.1", **CASE)
    b = got[3]
    new = SRFSolution(**{f.name: getattr(b, f.name) for f in dataclasses.fields(b)})
    assert b.to_dict() == new.to_dict() and repr(b) == repr(new)
    assert b.provenance is not got[0].provenance and b.order is not got[0].order


def test_sweep_and_curve_use_the_batch_and_keep_the_reference():
    values = ["0.5", "1", "2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new = srf_sweep("tanh", "sin", "lam", values, alpha=2, beta=1, **CASE)
        old = srf_sweep("tanh", "sin", "lam", values, alpha=2, beta=1, batch=False, **CASE)
        curve = srf_curve("tanh", "sin", [0.5, 1.5], beta=1, lam="0.1", **CASE)
        mp = srf_sweep("tanh", "sin", "alpha", ["1"], beta=1, lam="0.1", mp_method="quad", **CASE)
    assert [s.status for s in new].count(BATCH) == 2 and all(s.status != BATCH for s in old)
    for b, r in zip(new, old):
        _close(b, r)
    assert curve[0].alpha == "0.5" and mp[0].status != BATCH            # options the batch leaves to srf_solve


def test_quantity_sweep_uses_the_batch():
    from onestep_theory.quantities.sweep import sweep

    s = sweep("test_error", "alpha=0.5:2:3,eta=2:3:2", student="tanh", teacher="sin",
              fixed={"alpha0": "20", "beta": "1", "lam": "0.1"})
    r = srf_solve("tanh", "sin", alpha=s.rows[-1]["alpha"], eta=s.rows[-1]["eta"], alpha0=20, beta=1, lam="0.1")
    assert len(s.rows) == 6 and abs(float(s.rows[-1]["value"]) - float(r.test_error)) <= float(s.rows[-1]["error"])
    with pytest.raises(InvalidParameterError, match="^noise="):
        sweep("test_error", "alpha=0.5:2:2", student="tanh", teacher="sin",
              fixed={"alpha0": "20", "eta": "2", "beta": "1", "lam": "0.1", "noise": "-1"})
