"""Two runs of one study on one store split the tasks (issue 23: two concurrent `study --resume` computed every task
twice): claims in the store (ResultStore.claim), taken over when their process is gone."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from onestep_theory.study import ResultStore, run_study
from onestep_theory.study import run as study_run
from onestep_theory.study.store import STALE_AFTER, claim_owner

PARAMS = dict(student="tanh", teacher="sin", r=1.1, c=1.02, gamma=0.97, alpha=2.0, beta=1.0, lam=0.1, n_test=500)


def test_claims_are_exclusive_until_stored_or_stale(tmp_path):
    import socket

    with ResultStore(str(tmp_path / "c.sqlite")) as st:
        a, b = claim_owner(), claim_owner()
        assert a != b
        assert st.claim("k1", a) and st.claim("k1", a)            # a holds it (again)
        assert not st.claim("k1", b)                              # a's process (this one) is alive
        dead = f"{socket.gethostname()}:{2**22 + 12345}:x"        # no such pid
        assert st.claim("k2", dead) and st.claim("k2", b)         # a dead claimer's task is taken over
        far = "elsewhere.example:1:x"
        assert st.claim("k3", far) and not st.claim("k3", b)
        st._con.execute("UPDATE claims SET since = ? WHERE key = 'k3'", (time.time() - STALE_AFTER - 1,))
        assert st.claim("k3", b)                                  # an old claim from another machine expires
        st.release(b)
        assert st.claim("k2", a) and st.claim("k3", a)
        st.put("srf", {"x": 1}, 10, 0, {"v": 1.0}, 0.1)
        key = st.key("srf", {"x": 1}, 10, 0)
        assert not st.claim(key, a)                               # stored: nothing to run


def test_a_run_waits_for_the_tasks_another_run_claimed(tmp_path, monkeypatch):
    """Tasks claimed by another live process are not run here: their results are read from the store when the
    other run writes them (here a thread plays the other run), and counted as reused."""
    monkeypatch.setattr(study_run, "POLL_SECONDS", 0.05)
    path = str(tmp_path / "w.sqlite")
    other = claim_owner()
    tag = dict(PARAMS, root_seed=0)
    theirs = [(30, 0), (60, 1)]
    with ResultStore(path) as st:
        for d, k in theirs:
            assert st.claim(st.key("srf", tag, d, k), other)

    def other_run():
        time.sleep(0.5)
        with ResultStore(path) as st2:
            for d, k in theirs:
                st2.put("srf", tag, d, k, study_run.run_task("srf", PARAMS, d, k, 0), 0.1)

    th = threading.Thread(target=other_run)
    th.start()
    res = run_study("srf", PARAMS, [30, 60], 2, theory=(0.04, 0.0), store=path, workers=1)
    th.join()
    assert res.run["executed"] == 2 and res.run["reused"] == 2
    again = run_study("srf", PARAMS, [30, 60], 2, theory=(0.04, 0.0), store=path, workers=1)
    assert again.run["executed"] == 0 and again.results() == res.results()


@pytest.mark.slow
def test_two_concurrent_command_line_runs_split_the_tasks(tmp_path):
    """The user's case: the same `study --resume` started twice at once on one store."""
    store = str(tmp_path / "s.sqlite")
    argv = [sys.executable, "-m", "onestep_theory", "study", "srf", "--student", "tanh", "--teacher", "sin",
            "--r", "1.1", "--c", "1.02", "--gamma", "0.97", "--alpha", "2", "--beta", "1", "--lam", "0.1",
            "--d", "150,300", "--reps", "6", "--workers", "1", "--store", store, "--resume", "--json", "--quiet"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    runs = [json.loads(o[0])["run"] for o in outs]
    assert sum(r["executed"] for r in runs) == 12, runs              # every task once
    assert all(r["executed"] + r["reused"] == 12 for r in runs), runs
    assert json.loads(outs[0][0])["comparisons"] == json.loads(outs[1][0])["comparisons"]
