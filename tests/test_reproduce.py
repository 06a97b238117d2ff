"""`reproduce --smoke` in the default suite: files written, numbers consistent with the theory functions."""

import json

import pytest

from onestep_theory.reproduce import run
from onestep_theory.spikes.resolvent import resolvent
from onestep_theory.spikes import gains
from onestep_theory.srf import srf_solve


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    summary = run(out, mode="smoke", seed=0, quiet=True)
    return out, summary


def test_files_written(smoke):
    out, summary = smoke
    assert (out / "report.md").exists() and (out / "summary.json").exists()
    for i, stem in enumerate(["exp1_resolvent", "exp2_training_gain", "exp3_test_gain", "exp4_srf_curves",
                              "exp5_bounds", "exp6_spectrum"], 1):
        assert (out / f"{stem}.json").exists() and (out / f"{stem}.csv").exists()
        assert f"## {i}." in (out / "report.md").read_text()
    try:
        import matplotlib  # noqa: F401

        assert (out / "exp1_resolvent.png").exists()
    except ImportError:
        assert "matplotlib is not installed" in (out / "report.md").read_text()


def test_theory_values_in_json_match_theory_functions(smoke):
    out, _ = smoke
    rows = json.loads((out / "exp1_resolvent.json").read_text())["rows"]
    for r in rows:
        th = resolvent("tanh", 1, 2, repr(float(r["lam"])))
        assert float(r["theory"]) == pytest.approx(float(getattr(th, r["quantity"])), rel=1e-12)
    rows = json.loads((out / "exp3_test_gain.json").read_text())["rows"]
    r = next(x for x in rows if x["student"] == "tanh" and x["quantity"] == "lambda_test")
    assert float(r["theory"]) == pytest.approx(float(gains("tanh", "He1", "1/2", "1/2", "1/10", ell=1,
                                                           noise_var="1.0").lambda_test[0]), rel=1e-12)
    d = json.loads((out / "exp4_srf_curves.json").read_text())
    cA = d["curves"]["A"]
    sol = srf_solve("tanh", "sin", r=cA["r"], c=cA["c"], gamma=cA["gamma"], alpha=cA["alpha"][2], beta=1, lam=0.1)
    assert float(cA["test_error"][2]) == pytest.approx(float(sol.test_error), rel=1e-8)


def test_simulation_within_own_standard_errors(smoke):
    """Gaps within a few of the run's own standard errors, plus the finite-size bias documented in the specs.

    At smoke size (n = 600) the traces carry an O(1/n) bias that grows as lambda -> 0, so only lambda >= 0.5
    is checked, with 2/n relative allowance; the sRF points at d = 150 are not checked here (finite-d bias of
    several %, tested at d = 600 in test_srf.py).
    """
    out, _ = smoke
    n = json.loads((out / "exp1_resolvent.json").read_text())["params"]["n"]
    for r in json.loads((out / "exp1_resolvent.json").read_text())["rows"]:
        if r["lam"] >= 0.5:
            assert abs(r["sim_mean"] - r["theory"]) <= 4 * r["sim_se"] + 2 * abs(r["theory"]) / n, r
    for r in json.loads((out / "exp3_test_gain.json").read_text())["rows"]:
        # spike-theory.md §9.5 / §8.4: B-limit agrees within 3 s.e. + 3 % (Delta) and 5-10 % (Lambda)
        allow = 0.10 if r["quantity"] == "lambda_test" else 0.03
        assert abs(r["sim_mean"] - r["theory"]) <= 3 * r["sim_se"] + allow * abs(r["theory"]), r
        if r["printed"] is not None:
            assert abs(r["sim_mean"] - r["printed"]) > 10 * r["sim_se"]        # the printed form is excluded
    for r in json.loads((out / "exp6_spectrum.json").read_text())["rows"]:
        assert abs(r["rel_gap"]) < 0.03 + (4 * r["sim_se"] / abs(r["theory"]) if r["sim_se"] else 0), r
    for r in json.loads((out / "exp5_bounds.json").read_text())["rows"]:
        assert r["lower"] - 1e-9 <= r["best_lambda_error"] <= r["upper"] + 1e-8
