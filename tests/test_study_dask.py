"""Finite-size studies on a real ``dask.distributed`` cluster of worker processes (docs/theory/numerics.md §8):
results identical to the serial run whatever the workers, a worker killed mid-study without losing or repeating a
task, an interrupted study resumed without recomputation, a scheduler that cannot be reached."""

import json
import os
import signal

import pytest

distributed = pytest.importorskip("distributed")

from onestep_theory import InvalidParameterError  # noqa: E402
from onestep_theory.study import ResultStore, run_study  # noqa: E402
from onestep_theory.study import cluster as study_cluster  # noqa: E402

# each task takes ~0.1-0.3 s, long enough for a worker to die in the middle of one
PARAMS = dict(student="tanh", teacher="sin", r=1.1, c=1.02, gamma=0.97, alpha=2.0, beta=1.0, lam=0.1, n_test=20000)
SIZES, REPS = [100, 200, 400], 4
THEORY = (0.04, 0.0)


def _canon(res):
    return json.dumps(res.results(), sort_keys=True)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as lc:
        yield lc.scheduler_address


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("serial") / "serial.sqlite")
    return run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=1), path


@pytest.mark.slow     # 17 s: a two-process Dask cluster (slow stage)
def test_two_worker_processes_give_the_serial_result_bit_for_bit(serial, tmp_path):
    """A local cluster started by the study itself (``workers=2``), then the serial run: identical results, and
    identical store exports apart from the timing columns."""
    path = str(tmp_path / "dask.sqlite")
    res = run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, workers=2)
    assert res.run["executor"].startswith("dask (local cluster")
    assert res.executed == len(SIZES) * REPS and _canon(res) == _canon(serial[0])
    with ResultStore(path) as a, ResultStore(serial[1]) as b:
        strip = (lambda rows: [(r["key"], r["result"]) for r in rows])
        assert strip(a.rows()) == strip(b.rows())


@pytest.mark.slow
def test_a_worker_killed_mid_study(serial, cluster, tmp_path):
    """SIGKILL one worker process after the first result: Dask reschedules its task, the nanny restarts it, and the
    study completes with every task stored exactly once and the serial result."""
    client = distributed.Client(cluster)
    calls, killed = [], []

    def progress(done, total):
        calls.append(done)
        if len(calls) == 1:
            killed.append(sorted(client.run(os.getpid).values())[0])
            os.kill(killed[0], signal.SIGKILL)

    try:
        path = str(tmp_path / "killed.sqlite")
        res = run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, scheduler=cluster, progress=progress)
        client.wait_for_workers(2, timeout=30)
        assert killed[0] not in client.run(os.getpid).values()      # the worker did die (and was replaced)
    finally:
        client.close()
    n = len(SIZES) * REPS
    assert calls == list(range(1, n + 1))                    # each task reported once, none lost
    with ResultStore(path) as st:
        assert st.count() == n and len(st.done_keys()) == n
    assert _canon(res) == _canon(serial[0])


@pytest.mark.slow
def test_interrupted_study_resumes_without_recomputation(serial, cluster, tmp_path):
    path = str(tmp_path / "stop.sqlite")

    def stop(done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, scheduler=cluster, progress=stop)
    with ResultStore(path) as st:
        stored = st.count()
    assert stored == 3
    res = run_study("srf", PARAMS, SIZES, REPS, theory=THEORY, store=path, scheduler=cluster)
    assert res.reused == 3 and res.executed == len(SIZES) * REPS - 3
    assert _canon(res) == _canon(serial[0])


@pytest.mark.slow
def test_unreachable_scheduler_is_one_clear_error(monkeypatch):
    monkeypatch.setattr(study_cluster, "CONNECT_TIMEOUT", "1s")
    with pytest.raises(InvalidParameterError, match="scheduler"):
        run_study("srf", PARAMS, [30, 60], 2, theory=THEORY, scheduler="tcp://127.0.0.1:9")


@pytest.mark.slow
def test_a_task_that_kills_its_workers_is_one_resource_error():
    """Issue 23: a task that kills every worker it runs on (out of memory, here os._exit) ended the study in Dask's
    KilledWorker and exit 1; it is a ResourceError naming what to do, and the CLI exits 3 with one line."""
    from onestep_theory import ResourceError
    from onestep_theory.study.cluster import map_tasks

    seen = []
    with pytest.raises(ResourceError, match="killed the Dask workers.*--resume"):
        map_tasks(os._exit, [("boom", (1,))], lambda *a: seen.append(a), workers=1)
    assert seen == []
