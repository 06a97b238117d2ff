r"""Running a finite-size study: one task per (size d, seed index), results kept in a store (docs/theory/numerics.md §8).

Every task is one repetition of a simulation protocol at one size.  Its seed is a ``SeedSequence`` of
(root seed, a hash of the protocol and its parameters, d, seed index), so a task's result does not depend on
which other tasks run, in which order or on how many workers.  A finished task is written to the store at once
and never recomputed: an interrupted study resumes where it stopped.  The gaps (simulation minus theory) are
averaged per size and extrapolated by :func:`~onestep_theory.study.fit.extrapolate`.
"""

from __future__ import annotations

import hashlib
import math
import time

import numpy as np

from ..core.errors import InvalidParameterError
from ..core.results import provenance
from ..simulate import sim_giant_step, sim_srf
from .fit import extrapolate
from .store import ResultStore, canonical_json

__all__ = ["PROTOCOLS", "task_seed", "run_task", "run_study"]

#: Protocols a study can run: name -> the simulator (one repetition per task).
PROTOCOLS = {"giant-step": sim_giant_step, "srf": sim_srf}
_MAX_TASKS = 10_000


def task_seed(root: int, protocol: str, params: dict, d: int, k: int) -> np.random.SeedSequence:
    """The seed of task (d, k): ``SeedSequence([root, hash(protocol, params), d, k])``."""
    h = int.from_bytes(hashlib.sha256((protocol + canonical_json(params)).encode()).digest()[:8], "big")
    return np.random.SeedSequence([int(root), h, int(d), int(k)])


def run_task(protocol: str, params: dict, d: int, k: int, root: int) -> dict:
    """One repetition of ``protocol`` at size d with the seed of task (d, k); returns the scalar results."""
    sim = PROTOCOLS[protocol](d=d, seed=task_seed(root, protocol, params, d, k), reps=1, progress=None, **params)
    return {name: float(st.mean) for name, st in sim.stats.items()}


def run_study(protocol: str, params: dict, sizes, reps: int, theory: float, *, store=None, root_seed: int = 0,
              key: str = "test_error", exponents=(0.5, 1.0), progress=None) -> dict:
    r"""Run (or resume) a study of ``protocol`` with ``params`` over ``sizes`` × ``reps`` seeds, serially.

    ``theory`` is the asymptotic value of ``key``; the per-size gaps :math:`\hat\varepsilon-\varepsilon_{\rm theory}`
    (mean, standard error over the seeds) are extrapolated to :math:`d\to\infty`.  ``store`` is a
    :class:`~onestep_theory.study.store.ResultStore` or a path; tasks already in it are not run again.  Returns
    a dict with the per-size table, the fit, and how many tasks were executed and reused.
    """
    if protocol not in PROTOCOLS:
        raise InvalidParameterError("protocol", protocol, " or ".join(PROTOCOLS))
    sizes = sorted({int(d) for d in sizes})
    if not sizes or sizes[0] < 10 or not isinstance(reps, int) or reps < 2 or len(sizes) * reps > _MAX_TASKS:
        raise InvalidParameterError("sizes, reps", (sizes, reps), f"sizes >= 10, reps >= 2, at most {_MAX_TASKS} tasks")
    own = not isinstance(store, ResultStore)
    st = ResultStore(store if store is not None else ":memory:") if own else store
    t0, executed, reused, rows = time.perf_counter(), 0, 0, []
    try:
        total = len(sizes) * reps
        for d in sizes:
            vals = []
            for k in range(reps):
                tag = dict(params, root_seed=int(root_seed))
                res = st.get(protocol, tag, d, k)
                if res is None:
                    ts = time.perf_counter()
                    res = run_task(protocol, params, d, k, root_seed)
                    st.put(protocol, tag, d, k, res, time.perf_counter() - ts)
                    executed += 1
                else:
                    reused += 1
                vals.append(res[key] - theory)
                if callable(progress):
                    progress(executed + reused, total)
            v = np.asarray(vals)
            rows.append({"d": d, "gap": float(v.mean()), "se": float(v.std(ddof=1) / math.sqrt(len(v))),
                         "relative_gap": float(v.mean() / theory) if theory else math.nan, "reps": len(v)})
    finally:
        if own:
            st.close()
    fit = extrapolate([r["d"] for r in rows], [r["gap"] for r in rows], [r["se"] for r in rows], exponents) \
        if len(rows) > len(exponents) else None
    return {"protocol": protocol, "params": params, "theory": theory, "key": key, "sizes": rows,
            "fit": fit.to_dict() if fit is not None else None, "executed": executed, "reused": reused,
            "seconds": time.perf_counter() - t0,
            "provenance": provenance(method="serial tasks, SeedSequence per (root, protocol, d, k); WLS extrapolation",
                                     references=["docs/theory/numerics.md §8"])}
