"""``study giant-step`` with a grouped readout (docs/theory/srf-theory.md §8) and with a general loss (§4.9):
canonical parameters, the keys and paired references each offers, tasks identical to the simulator's, refusals."""

import math

import numpy as np
import pytest

from onestep_theory import InvalidParameterError
from onestep_theory.cli.main import main
from onestep_theory.simulate import sim_giant_step
from onestep_theory.study import PROTOCOLS, run_study, run_task, task_seed

GS = PROTOCOLS["giant-step"]
BASE = dict(student="tanh", teacher="sin", alpha0=20, eta=3, alpha=2, beta=1, lam=0.1, n_test=2000)


def test_readout_and_loss_are_canonical():
    # the uniform readout and the square loss are the plain study: the same tasks, the same store keys
    assert GS.check(dict(BASE, readout="uniform")) == BASE
    assert GS.check(dict(BASE, readout="1:1")) == BASE
    assert GS.check(dict(BASE, loss="square")) == BASE
    # every spelling of one readout is one study
    for spec in ("1:0.5,2:0.5", "2:1/2,1:1/2", "1:0.50,2:0.5"):
        assert GS.check(dict(BASE, readout=spec))["readout"] == "1:1/2,2:1/2"
    assert GS.check(dict(BASE, loss="Logistic"))["loss"] == "logistic"
    assert task_seed(0, "giant-step", GS.check(dict(BASE, readout="2:1/2,1:1/2")), 40, 0).entropy == \
        task_seed(0, "giant-step", GS.check(dict(BASE, readout="1:0.5,2:0.5")), 40, 0).entropy


@pytest.mark.parametrize("extra, name", [
    (dict(readout="gaussian"), "readout"), (dict(readout="1:0.5"), "readout"), (dict(loss="cubic"), "loss"),
    (dict(readout="1:0.5,2:0.5", loss="logistic"), "loss"), (dict(loss="hinge", row_norms=True), "row_norms"),
    (dict(readout="1:0.5,2:0.5", row_norms=True), "row_norms"), (dict(loss=object()), "loss")])
def test_refusals_name_the_parameter(extra, name):
    with pytest.raises(InvalidParameterError) as exc:
        GS.check(dict(BASE, **extra))
    assert exc.value.param == name


def test_keys_and_paired_references_follow_the_parameters():
    grouped, lossy = GS.check(dict(BASE, readout="1:0.5,2:0.5")), GS.check(dict(BASE, loss="hinge"))
    assert GS.paired_for(grouped) == () and GS.keys_for(grouped) == ("test_error",)
    assert GS.paired_for(lossy) == ("measured",) and GS.keys_for(lossy) == ("test_error", "class_error")
    assert GS.paired_for(GS.check(dict(BASE))) == ("f1", "measured")
    assert GS.paired_key("measured", "class_error") == "theory_measured@class_error"
    assert GS.paired_key("measured", "test_error") == GS.paired_key("measured") == "theory_measured"
    for params, kw in ((grouped, {"compare": "f1"}), (dict(BASE), {"key": "class_error"})):
        with pytest.raises(InvalidParameterError):
            run_study("giant-step", params, [40, 60], 2, theory=(0.03, 0.0), **kw)


def test_grouped_task_is_the_simulator_bit_for_bit():
    """A study task is sim_giant_step with the task's seed, the readout passed through (its per-group diagnostics
    included), and no paired reference (none is derived for K groups)."""
    params = GS.check(dict(BASE, readout="1:0.5,2:0.5"))
    got = run_task("giant-step", params, 40, 1, 7)
    ref = sim_giant_step(d=40, seed=task_seed(7, "giant-step", params, 40, 1), reps=1, **params)
    assert got == {k: float(v.mean) for k, v in ref.stats.items()}
    assert {"r[1]", "r[2]", "c[1]", "c[2]"} <= set(got) and not any(k.startswith("theory_") for k in got)
    # the groups change the step: r[2] / r[1] is the readout ratio 2 up to the sampling of the step
    assert abs(got["r[2]"] / got["r[1]"] - 2) < 0.1
    res = run_study("giant-step", dict(BASE, readout="1:0.5,2:0.5"), [30, 40], 2, theory=(0.03, 0.0), workers=1)
    assert set(res.comparisons) == {"theory"} and res.params["readout"] == "1:1/2,2:1/2"


def test_cli_refuses_with_one_line(capsys):
    base = ["study", "giant-step", "--student", "tanh", "--teacher", "sin", "--alpha", "2", "--beta", "1",
            "--lam", "0.1", "--alpha0", "20", "--eta", "3", "--d", "40,60", "--store", ":memory:"]
    for extra, word in ((["--readout", "gaussian"], "readout"), (["--loss", "logistic", "--readout", "1:0.5,2:0.5"],
                                                                  "loss"), (["--key", "class_error"], "key")):
        assert main(base + extra) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and word in err, err
    srf = ["study", "srf", "--student", "tanh", "--teacher", "sin", "--alpha", "2", "--beta", "1", "--lam", "0.1",
           "--r", "1", "--c", "1", "--gamma", "1", "--d", "40,60", "--readout", "1:0.5,2:0.5", "--store", ":memory:"]
    for extra in (["--features", "cgep"], ["--norm-slope", "0.5"]):       # the K-group theory has neither
        assert main(srf + extra) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "readout" in err, err


def test_study_srf_with_a_readout_uses_the_asymptotic_theory():
    """``study srf --readout``: direct K-group sRF tasks against the asymptotic K-group theory (§8.1)."""
    from onestep_theory.srf.grouped.groups import srf_groups

    p = PROTOCOLS["srf"].check(dict(student="tanh", teacher="sin", alpha=2.0, beta=1.0, lam=0.1, r=1.1, c=1.02,
                                    gamma=0.97, readout="2:0.5,1:0.5"))
    assert p["readout"] == "1:1/2,2:1/2"
    value, err = PROTOCOLS["srf"].theory(p, "test_error")
    ref = srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha="2.0", beta="1.0", lam="0.1", r="1.1", c="1.02",
                     gamma="0.97")
    assert value == float(ref.test_error) and err == ref.abs_error < 1e-12
    got = PROTOCOLS["srf"].simulate(p, 40, task_seed(0, "srf", p, 40, 0))
    assert 0 < got["test_error"] < 1


@pytest.mark.slow
def test_loss_study_classification_error_against_its_theory(tmp_path):
    """Logistic readout (tanh/sign, alpha0 = 20, eta = 3, alpha = 2): each task carries the theory at its measured
    (r, c, gamma) for both keys, and the classification error is extrapolated against the d -> inf theory.  The
    paired gap of the classification error at d = 200 is within 4 standard errors of the paired gap measured at
    d = 250 in docs/studies/readouts-losses.md (-1.71 +- 0.78 % of 0.0798, i.e. -0.00136 +- 0.00062)."""
    params = dict(student="tanh", teacher="sign", alpha0=20, eta=3, alpha=2, beta=1, lam=0.1, n_test=4000,
                  loss="logistic")
    res = run_study("giant-step", params, [100, 200], 3, key="class_error", workers=1, store=str(tmp_path / "l.db"))
    assert set(res.comparisons) == {"theory", "measured"}
    assert 0.05 < res.theory < 0.1 and res.theory_error < 1e-8
    row = res.comparisons["measured"]["sizes"][-1]
    assert math.isfinite(row["se"]) and abs(row["gap"] + 0.00136) <= 4 * math.hypot(row["se"], 0.00062), row
    te = run_study("giant-step", params, [100, 200], 3, workers=1, store=str(tmp_path / "l.db"))
    assert te.executed == 0 and te.reused == 6 and te.key == "test_error"
    assert np.isfinite(te.theory)


def test_a_paired_reference_without_fixed_point_is_left_out_and_counted():
    """A general-loss task whose measured-(r, c, gamma) theory has no fixed point stores NaN for it; the paired
    comparison averages the other tasks and counts the missing one, the comparison with the theory keeps all."""
    from onestep_theory.study.run import _table

    rows = {100: [{"test_error": 1.0, "theory_measured": 0.5}, {"test_error": 2.0, "theory_measured": float("nan")},
                  {"test_error": 3.0, "theory_measured": 2.0}],
            200: [{"test_error": 1.0, "theory_measured": float("nan")}, {"test_error": 1.0, "theory_measured": 0.0}]}
    paired = _table(rows, lambda r: r["test_error"] - r["theory_measured"])
    assert paired[0] == {"d": 100, "gap": 0.75, "se": 0.25, "reps": 2, "missing": 1}
    assert paired[1]["reps"] == 1 and math.isnan(paired[1]["se"]) and paired[1]["missing"] == 1
    plain = _table(rows, lambda r: r["test_error"])
    assert plain[0]["reps"] == 3 and "missing" not in plain[0]


def test_plot_and_json_of_a_study_with_a_missing_paired_reference(tmp_path, monkeypatch):
    """A size whose paired reference is missing everywhere has a NaN standard error: the plot and the JSON still
    work (found by the hinge study of docs/studies/readouts-losses.md: the plot raised a TypeError)."""
    pytest.importorskip("matplotlib")
    import json

    from onestep_theory.cli.common import decimal_strings
    from onestep_theory.study import protocols
    from onestep_theory.study.plot import plot_study

    def fake(*args, **kw):
        return {"theory_measured": float("nan"), "theory_measured_error": float("nan"),
                "theory_measured@class_error": float("nan"), "theory_measured_error@class_error": float("nan")}

    monkeypatch.setattr(protocols, "_paired_references", fake)
    res = run_study("giant-step", dict(BASE, teacher="sign", loss="logistic"), [30, 40, 50], 2, theory=(0.08, 0.0),
                    key="class_error", workers=1)
    assert all(r["missing"] == 2 and r["reps"] == 0 for r in res.comparisons["measured"]["sizes"])
    assert res.comparisons["measured"]["fit"] is None and res.comparisons["theory"]["sizes"][0]["reps"] == 2
    assert plot_study(res, tmp_path / "p.png") and (tmp_path / "p.png").stat().st_size > 0
    json.dumps(decimal_strings(res.to_dict()))


@pytest.mark.slow
def test_hinge_solver_reaches_the_fixed_point_near_result_31():
    """The hinge channel's cold start failed (no valid fixed point) at r +- 0.01 around Result 3.1's (r, c, gamma)
    (tanh/sign, alpha0 = 20, eta = 3, alpha = 2), the paired references of most hinge study tasks; the lambda-
    continuation fallback reaches it.  Check: the three values lie on a smooth curve (second difference 4e-4 where
    the first is 0.04) and the classification error is unchanged to 1e-5, as the teacher overlap is."""
    from onestep_theory.srf import srf_params, srf_solve

    m = srf_params("tanh", "sign", 20, 3)
    r, c, g = float(m.r), float(m.c), float(m.gamma)
    sols = [srf_solve("tanh", "sign", r=r + dr, c=c, gamma=g, alpha=2, beta=1, lam=0.1, loss="hinge")
            for dr in (-0.01, 0.0, 0.01)]
    e = [float(s.test_error) for s in sols]
    assert abs(e[0] - e[2]) > 0.03 and abs(e[0] + e[2] - 2 * e[1]) < 0.05 * abs(e[0] - e[2])
    assert max(abs(float(s.extra["class_error"]) - float(sols[1].extra["class_error"])) for s in sols) < 1e-5


def test_sizes_and_memory_are_checked_before_the_theory(monkeypatch):
    """Issue 23: `--beta 1e308` was a saddle point that failed (exit 3); a tiny target standard error overflowed.
    Both are bad input or bounded work now; the memory of a study counts its concurrent workers."""
    from onestep_theory.simulate import memory

    with pytest.raises(InvalidParameterError, match="beta"):
        run_study("giant-step", dict(BASE, beta=1e308), [40, 60], 2, workers=1)       # no theory runs first
    per_task = max(memory.srf_peak(k, 60, 60, 30, 1200) for k in ("srf", "spectrum", "giant-step"))   # d = 60
    avail = 1.5 * per_task
    monkeypatch.setattr(memory, "available_memory", lambda: avail)
    assert per_task < 0.8 * avail < 2 * per_task                               # one task fits, two do not
    params = dict(BASE, alpha=1, beta=0.5, alpha0=20)
    run_study("giant-step", params, [20, 60], 2, theory=(0.03, 0.0), workers=1)
    with pytest.raises(InvalidParameterError, match="tasks at once"):
        run_study("giant-step", params, [20, 60], 2, theory=(0.03, 0.0), workers=2)


def test_unreachable_target_standard_error_stops_at_max_reps():
    params = dict(student="tanh", phi=1.0, psi=2.0, lam=0.5)
    res = run_study("traces", params, [20, 30], 2, key="m1", theory=(1.0, 0.0), workers=1, target_se=1e-300,
                    max_reps=3)
    assert [r["reps"] for r in res.sizes] == [3, 3]
