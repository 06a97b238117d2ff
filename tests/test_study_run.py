"""Finite-size studies (docs/theory/numerics.md §8): tasks independent of order, resumable without recomputation."""

import json

import pytest

from onestep_theory import InvalidParameterError
from onestep_theory.cli.main import main
from onestep_theory.study import ResultStore, run_study, run_task

PARAMS = dict(student="tanh", teacher="sin", r=1.1, c=1.02, gamma=0.97, alpha=2.0, beta=1.0, lam=0.1, n_test=2000)
SIZES = [30, 60, 120]


def test_resume_runs_nothing_twice_and_order_does_not_matter(tmp_path):
    path = str(tmp_path / "s.sqlite")
    first = run_study("srf", PARAMS, SIZES, 2, 0.04, store=path, root_seed=3)
    assert first["executed"] == 6 and first["reused"] == 0
    again = run_study("srf", PARAMS, SIZES, 2, 0.04, store=path, root_seed=3)
    assert again["executed"] == 0 and again["reused"] == 6 and again["sizes"] == first["sizes"]
    # one more seed per size: only the new tasks run
    more = run_study("srf", PARAMS, SIZES, 3, 0.04, store=path, root_seed=3)
    assert more["executed"] == 3 and more["reused"] == 6
    # a task alone (another order, another process state) gives the stored value bit for bit
    with ResultStore(path) as st:
        stored = st.get("srf", dict(PARAMS, root_seed=3), 60, 1)
    assert run_task("srf", PARAMS, 60, 1, 3) == stored
    # a different root seed is a different study
    other = run_study("srf", PARAMS, SIZES, 2, 0.04, store=path, root_seed=4)
    assert other["executed"] == 6


def test_study_refusals():
    with pytest.raises(InvalidParameterError):
        run_study("network", PARAMS, SIZES, 2, 0.04)
    with pytest.raises(InvalidParameterError):
        run_study("srf", PARAMS, SIZES, 1, 0.04)


def test_cli_study_resume(tmp_path, capsys):
    store = str(tmp_path / "cli.sqlite")
    argv = ["study", "srf", "--student", "tanh", "--teacher", "sin", "--r", "1.1", "--c", "1.02", "--gamma", "0.97",
            "--alpha", "2", "--beta", "1", "--lam", "0.1", "--d", "30,60,120", "--reps", "2", "--store", store,
            "--quiet", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["executed"] == 6 and len(out["sizes"]) == 3 and "verdict" in out["fit"]
    assert main(argv) == 2                                    # the study is in the store: --resume needed
    assert "--resume" in capsys.readouterr().err
    assert main(argv + ["--resume"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["executed"] == 0 and again["sizes"] == out["sizes"]
