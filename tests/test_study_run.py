"""Finite-size studies (docs/theory/numerics.md §8): tasks independent of order, resumable without recomputation,
paired references, every protocol, the command line."""

import json
import math

import numpy as np
import pytest

from onestep_theory.core.results import read_csv
from onestep_theory import InvalidParameterError
from onestep_theory.cli.main import main
from onestep_theory.study import PROTOCOLS, ResultStore, run_study, run_task, task_seed

PARAMS = dict(student="tanh", teacher="sin", r=1.1, c=1.02, gamma=0.97, alpha=2.0, beta=1.0, lam=0.1, n_test=2000)
SIZES = [30, 60, 120]
THEORY = (0.04, 0.0)


def test_resume_runs_nothing_twice_and_order_does_not_matter(tmp_path):
    path = str(tmp_path / "s.sqlite")
    first = run_study("srf", PARAMS, SIZES, 2, theory=THEORY, store=path, root_seed=3, workers=1)
    assert first.executed == 6 and first.reused == 0
    again = run_study("srf", PARAMS, SIZES, 2, theory=THEORY, store=path, root_seed=3, workers=1)
    assert again.executed == 0 and again.reused == 6 and again.results() == first.results()
    # one more seed per size: only the new tasks run
    more = run_study("srf", PARAMS, SIZES, 3, theory=THEORY, store=path, root_seed=3, workers=1)
    assert more.executed == 3 and more.reused == 6
    # per-size seed counts: only what is missing runs
    ladder = run_study("srf", PARAMS, SIZES, [4, 3, 2], theory=THEORY, store=path, root_seed=3, workers=1)
    assert ladder.executed == 1 and [r["reps"] for r in ladder.sizes] == [4, 3, 2]
    # a task alone (another order, another process state) gives the stored value bit for bit
    with ResultStore(path) as st:
        stored = st.get("srf", dict(PARAMS, root_seed=3), 60, 1)
    assert run_task("srf", PARAMS, 60, 1, 3) == stored
    # a different root seed is a different study
    other = run_study("srf", PARAMS, SIZES, 2, theory=THEORY, store=path, root_seed=4, workers=1)
    assert other.executed == 6


def test_gaps_are_the_stored_values_minus_the_theory(tmp_path):
    path = str(tmp_path / "g.sqlite")
    res = run_study("srf", PARAMS, SIZES, 3, theory=THEORY, store=path, workers=1)
    with ResultStore(path) as st:
        for row in res.sizes:
            v = [st.get("srf", dict(PARAMS, root_seed=0), row["d"], k)["test_error"] - 0.04 for k in range(3)]
            assert row["gap"] == pytest.approx(np.mean(v), abs=1e-15)
            assert row["se"] == pytest.approx(np.std(v, ddof=1) / math.sqrt(3), rel=1e-12)
    assert res.fit is not None and res.fit["dof"] == 0


def test_task_seeds_differ_per_task_and_protocol():
    seeds = {tuple(task_seed(0, pr, PARAMS, d, k).generate_state(2)) for pr in ("srf", "giant-step")
             for d in SIZES for k in range(3)}
    assert len(seeds) == 18


def test_study_refusals():
    for args, kw in ((("network", PARAMS, SIZES, 2), {}), (("srf", PARAMS, SIZES, 1), {}),
                     (("srf", PARAMS, SIZES, [2, 2]), {}), (("srf", PARAMS, [30, 30], 2), {}),
                     (("srf", PARAMS, SIZES, 2), {"key": "m1"}), (("srf", PARAMS, SIZES, 2), {"compare": "f1"}),
                     (("srf", dict(PARAMS, phi=1), SIZES, 2), {}), (("srf", PARAMS, SIZES, 2), {"workers": 0})):
        with pytest.raises(InvalidParameterError):
            run_study(*args, theory=THEORY, **kw)


def test_paired_references_track_the_network():
    """giant-step tasks carry the F1 theory on their own trained weights and the sRF theory at their measured
    (r, c, gamma).  At d = 200 both gaps must agree with the case-A study of docs/studies/finite-size.md, which
    measured them (d = 250 … 4000, 104 networks) at -3.5 % of the theory with a standard error of 0.5 % (d^-1 fit);
    the tolerance is 4 combined standard errors.  The paired gap has a smaller spread than the unpaired one (the
    weights' fluctuation is removed)."""
    params = dict(student="tanh", teacher="sin", alpha0=20, eta=3, alpha=3, beta=1, lam=0.1, n_test=4000)
    res = run_study("giant-step", params, [100, 200], 6, workers=1)
    assert set(res.comparisons) == {"theory", "row_norms", "f1", "measured"}
    th = res.theory
    for name in ("theory", "f1", "measured"):
        row = res.comparisons[name]["sizes"][-1]
        assert abs(row["gap"] + 0.035 * th) <= 4 * math.hypot(row["se"], 0.005 * th), (name, row)
    assert res.comparisons["f1"]["sizes"][-1]["se"] < res.comparisons["theory"]["sizes"][-1]["se"]


@pytest.mark.parametrize("protocol, params, key", [
    ("traces", dict(student="tanh", phi=1.0, psi=2.0, lam=0.5), "m1"),
    ("spike-model", dict(student="tanh", teacher="He1", phi=0.5, psi=0.5, lam=0.1, ell=1, noise_var=1.0), "delta"),
])
def test_spike_protocols_against_their_theory(protocol, params, key):
    res = run_study(protocol, params, [40, 80, 160], 4, key=key, workers=1)
    assert res.theory_error < 1e-10
    for row in res.sizes:
        # spike model: bias below 1.6/n, n = d/phi (measured, tests/test_spikes.py); traces: plain standard errors
        bias = 1.6 * params["phi"] / row["d"] if protocol == "spike-model" else 0.0
        assert abs(row["gap"]) <= 4 * row["se"] + bias, row
    assert set(PROTOCOLS[protocol].keys) >= {key}


@pytest.mark.slow
def test_cli_json_is_byte_identical_serial_and_on_two_workers(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    argv = ["study", "srf", "--student", "tanh", "--teacher", "sin", "--r", "1.1", "--c", "1.02", "--gamma", "0.97",
            "--alpha", "2", "--beta", "1", "--lam", "0.1", "--d", "30,60", "--reps", "3", "--store", "s.sqlite",
            "--quiet", "--json"]
    outs = []
    for workers in ("1", "2"):
        (tmp_path / workers).mkdir()
        monkeypatch.chdir(tmp_path / workers)
        assert main(argv + ["--workers", workers]) == 0
        outs.append(capsys.readouterr().out)
    # the "input" block echoes the command as typed: it differs in --workers and nowhere else; every result is
    # byte-identical (the JSON text without that block)
    first, second = (json.loads(o) for o in outs)
    ins = [d.pop("input") for d in (first, second)]
    for i, w in zip(ins, ("1", "2")):
        assert i["parameters"].pop("workers") == w and i["command"].endswith(f"--workers {w}")
        i["command"] = i["command"].removesuffix(f" --workers {w}")
    assert ins[0] == ins[1]
    assert json.dumps(first, indent=2) == json.dumps(second, indent=2)
    assert first["run"] == {"executed": 6, "reused": 0}


def test_cli_study_resume_store_and_outputs(tmp_path, capsys):
    store = str(tmp_path / "cli.sqlite")
    argv = ["study", "srf", "--student", "tanh", "--teacher", "sin", "--r", "1.1", "--c", "1.02", "--gamma", "0.97",
            "--alpha", "2", "--beta", "1", "--lam", "1/10", "--d", "30,60,120", "--reps", "2", "--store", store,
            "--workers", "1", "--quiet", "--json"]
    assert main(argv + ["--csv", str(tmp_path / "g.csv")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["run"]["executed"] == 6 and len(out["sizes"]) == 3 and "verdict" in out["fit"]
    rows = [r for r in read_csv(tmp_path / "g.csv")[1] if r["d"] != "inf"]      # d = inf: the fit
    assert [float(r["gap"]) for r in rows] == [float(r["gap"]) for r in out["sizes"]]
    assert main(argv) == 2                                    # the study is in the store: --resume needed
    assert "--resume" in capsys.readouterr().err
    assert main(argv + ["--resume"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["run"]["executed"] == 0 and again["sizes"] == out["sizes"]
    # the store commands
    assert main(["store", "ls", store, "--json"]) == 0
    ls = json.loads(capsys.readouterr().out)["studies"]
    assert len(ls) == 1 and ls[0]["tasks"] == 6 and ls[0]["tasks_per_d"] == {"30": 2, "60": 2, "120": 2}
    assert main(["store", "show", store, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["tasks"]) == 6
    assert main(["store", "export", store, "--out", str(tmp_path / "e.csv")]) == 0
    assert len(read_csv(tmp_path / "e.csv")[1]) == 6
    assert "6 task(s) written" in capsys.readouterr().err
    # refusals: one line naming the parameter
    for bad in (["--alpha0", "20"], ["--reps", "2,2"], ["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"]):
        assert main(argv[:-6] + ["--store", str(tmp_path / "n.sqlite"), "--json"] + bad) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and bad[0] in err, err
    assert main(["store", "ls", str(tmp_path / "missing.sqlite")]) == 2


def test_review_regressions_study(tmp_path, capsys):
    """Every input is checked before a task runs or the store is created; a foreign file is never rewritten."""
    store = tmp_path / "s.sqlite"
    argv = ["study", "srf", "--student", "tanh", "--teacher", "sin", "--r", "1.1", "--c", "1.02", "--gamma", "0.97",
            "--alpha", "2", "--beta", "1", "--lam", "0.1", "--reps", "2", "--store", str(store), "--workers", "1"]
    for bad, flag in ((["--d", "30,60", "--exponents", "0.5,0.5"], "exponents"), (["--d", "30.5,60"], "--d"),
                      (["--d", "30,60", "--key", "m1"], "key"), (["--d", "30,60", "--plot", "x.foo"], "--plot")):
        assert main(argv + bad) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and flag in err, err
        assert not store.exists()
    foreign = tmp_path / "foreign.sqlite"
    foreign.write_bytes(b"x")
    assert main(["store", "ls", str(foreign)]) == 2 and foreign.read_bytes() == b"x"
    with pytest.raises(InvalidParameterError):
        run_study("giant-step", dict(student="tanh", teacher="sin", alpha0=20, eta=3, alpha=3, beta=1, lam=0.1,
                                     readout="gaussian"), SIZES, 2)      # no d -> inf theory for it here


def test_target_standard_error_adds_seeds_where_needed(tmp_path):
    path = str(tmp_path / "t.sqlite")
    res = run_study("srf", PARAMS, SIZES, 3, theory=THEORY, store=path, workers=1, target_se=0.0015, max_reps=40)
    for row in res.sizes:
        assert row["se"] <= 0.0015 or row["reps"] == 40
    assert res.sizes[0]["reps"] > 3                              # the smallest size is the noisiest
    again = run_study("srf", PARAMS, SIZES, 3, theory=THEORY, store=path, workers=1, target_se=0.0015, max_reps=40)
    assert again.executed == 0 and again.results() == res.results()
    with pytest.raises(InvalidParameterError):
        run_study("srf", PARAMS, SIZES, 3, theory=THEORY, target_se=0)
