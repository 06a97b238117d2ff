r"""Running study tasks on Dask (``dask.distributed``, the optional extra ``[distributed]``;
docs/theory/numerics.md §8).

Each task is submitted once under a key derived from its store key, so the scheduler never runs two copies of a
task.  Results come back to the calling process in order of completion and are handed to ``on_result`` at once
(which writes them to the store: one writer, the caller).  A worker that dies (killed, out of memory, a crashed
machine) is replaced by its nanny and its tasks are rescheduled by Dask; a task that *raises* stops the study
with that error — the tasks finished before it are already stored, so ``--resume`` continues from there.  A task
that kills every worker it is given (Dask's ``KilledWorker``, typically memory) stops the study with a
:class:`~onestep_theory.core.errors.ResourceError` (exit 3, one line) saying how many tasks are stored.
"""

from __future__ import annotations

import contextlib
import logging

from ..core.errors import InvalidParameterError, ResourceError

__all__ = ["dask_available", "map_tasks", "CONNECT_TIMEOUT"]

#: How long to wait for the scheduler given by ``--scheduler`` before giving up.
CONNECT_TIMEOUT = "20s"


def dask_available() -> bool:
    """Whether ``dask.distributed`` can be imported (the ``[distributed]`` extra)."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def _client(workers, scheduler):
    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InvalidParameterError("--scheduler", scheduler, f"the address of a running Dask scheduler ({exc})") \
                from None
        with client:
            yield client
        return
    # one BLAS thread per task (run_task enforces it), so one worker process per core
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


def map_tasks(fn, tasks: list, on_result, *, workers: int | None = None, scheduler: str | None = None) -> str:
    """Run ``fn(*args)`` for every ``(key, args)`` in ``tasks`` on Dask and call ``on_result(key, result, seconds)``
    as each finishes.  ``workers`` processes on a local cluster, or the cluster at ``scheduler``.  Returns a short
    description of the executor."""
    if not dask_available():
        raise InvalidParameterError("workers", workers, "1 (serial), or install the extra: pip install "
                                    "'onestep_theory[distributed]'")
    from dask.distributed import KilledWorker, as_completed

    with _client(workers, scheduler) as client:
        futures = {client.submit(_timed, fn, *args, key=f"onestep-task-{key}", pure=False, retries=0): key
                   for key, args in tasks}
        done = 0
        try:
            for fut, (result, seconds) in as_completed(futures, with_results=True):
                on_result(futures[fut], result, seconds)
                done += 1
        except KilledWorker as exc:   # a task that kills every worker it runs on (typically: out of memory)
            raise ResourceError(f"a task killed the Dask workers it ran on ({' '.join(str(exc).split())[:160]}); "
                                f"{done} task(s) finished and stored: rerun with --resume and fewer --workers, or "
                                "smaller sizes (each worker needs the memory of one task)") from None
        finally:
            client.cancel(list(futures))
        n = len(client.nthreads())
    return f"dask ({'scheduler ' + scheduler if scheduler else 'local cluster'}, {n} worker(s) at the end)"


def _timed(fn, *args):
    import time

    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0
