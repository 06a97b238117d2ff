r"""Running a finite-size study: one task per (size d, seed index), results kept in a store (docs/theory/numerics.md §8).

Every task is one repetition of a simulation protocol (:mod:`~onestep_theory.study.protocols`) at one size.  Its
seed is a ``SeedSequence`` of (root seed, a hash of the protocol and its parameters, d, seed index), and it runs
with one BLAS thread, so a task's result is the same bit for bit whichever other tasks run, in which order, in
which process and on how many workers.  A finished task is written to the store at once and never recomputed: an
interrupted study resumes where it stopped.  Tasks run serially (``workers=1``) or on Dask
(:mod:`~onestep_theory.study.cluster`).  The per-task gaps (simulation minus theory, or minus a paired reference
computed on the task's own weights) are averaged per size and extrapolated by
:func:`~onestep_theory.study.fit.extrapolate`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import time

import numpy as np

from ..core.errors import InvalidParameterError, ResourceError
from ..core.results import Result, provenance, vouch
from .cluster import dask_available, map_tasks
from .fit import DEFAULT_TOLERANCE, check_exponents, extrapolate
from .protocols import protocol_of
from .store import ResultStore, claim_owner, canonical_json

__all__ = ["task_seed", "run_task", "plan_study", "run_study", "StudyResult", "MAX_TASKS"]

#: At most this many tasks in one study (bounded work for any input).
MAX_TASKS = 10_000
#: How often a run waiting for tasks claimed by a concurrent run of the same study looks at the store (seconds).
POLL_SECONDS = 2.0
#: How long such a run waits without one of those tasks finishing before it stops (exit 3; ``--max-wait``).
MAX_WAIT = 3600.0


def task_seed(root: int, protocol: str, params: dict, d: int, k: int) -> np.random.SeedSequence:
    """The seed of task (d, k): ``SeedSequence([root, hash(protocol, params), d, k])``."""
    h = int.from_bytes(hashlib.sha256((protocol + canonical_json(params)).encode()).digest()[:8], "big")
    return np.random.SeedSequence([int(root), h, int(d), int(k)])


def run_task(protocol: str, params: dict, d: int, k: int, root: int) -> dict:
    """One repetition of ``protocol`` at size d with the seed of task (d, k), on one BLAS thread; the scalar
    results.  The same inputs give the same bits in any process."""
    from threadpoolctl import threadpool_limits

    pr = protocol_of(protocol)
    params = pr.check(params)           # one spelling per study: the seed is keyed on the canonical parameters
    with threadpool_limits(limits=1):
        return pr.simulate(params, d, task_seed(root, protocol, params, d, k))


@dataclasses.dataclass
class StudyResult(Result):
    """A finite-size study (docs/theory/numerics.md §8): per-size gaps and the extrapolation for the chosen
    comparison, the same for every other comparison the protocol offers, and how the run went (``run``: tasks
    executed and reused, seconds, executor; the only part that differs between two runs of one study)."""

    protocol: str
    params: dict
    key: str
    compare: str
    theory: float
    theory_error: float
    sizes: list
    fit: dict | None
    comparisons: dict
    notes: list
    root_seed: int
    run: dict
    provenance: dict

    @property
    def executed(self) -> int:
        return self.run["executed"]

    @property
    def reused(self) -> int:
        return self.run["reused"]

    def results(self) -> dict:
        """Everything but ``run``: identical for every run of the same study (any workers, any order, resumed)."""
        out = self.to_dict()
        out.pop("run")
        return out


def _table(rows_by_d: dict, gap) -> list:
    """Per size: the mean gap, its standard error and the tasks it averages.  A task whose paired reference is NaN
    (its solver found no fixed point) is left out and counted under ``missing``; with fewer than two tasks left the
    size has no standard error (NaN) and the comparison no fit."""
    out = []
    for d, rows in rows_by_d.items():
        v = np.asarray([gap(r) for r in rows], dtype=float)
        ok = v[np.isfinite(v)]
        row = {"d": d, "gap": float(ok.mean()) if ok.size else math.nan,
               "se": float(ok.std(ddof=1) / math.sqrt(ok.size)) if ok.size >= 2 else math.nan, "reps": int(ok.size)}
        if ok.size < v.size:
            row["missing"] = int(v.size - ok.size)
        out.append(row)
    return out


#: What a comparison's gaps are measured against, in its verdict.
_AGAINST = {"theory": "theory", "row_norms": "corrected theory", "uncorrected": "uncorrected theory"}


def _fit(table, exponents, scale, tolerance, name):
    if len(table) <= len(exponents) or any(not r["se"] > 0 for r in table):
        return None
    return extrapolate([r["d"] for r in table], [r["gap"] for r in table], [r["se"] for r in table], exponents,
                       reps=[r["reps"] for r in table], scale=scale, tolerance=tolerance,
                       name=_AGAINST.get(name, f"paired reference {name}")).to_dict()


def _checked(res, d, k, need, path):
    """A stored result that has every number the study reads (a damaged row is refused, not half-read)."""
    bad = [n for n in need if isinstance(res.get(n), bool) or not isinstance(res.get(n), (int, float))]
    if bad:
        raise InvalidParameterError("store", path, "a store whose rows hold this study's results",
                                    f"task d={d}, seed {k} has no number {bad[0]!r} (an edited or truncated row); "
                                    "use a new store")
    return res


def _check_sizes(protocol, params, d, workers, d_min):
    """The largest task's sizes and memory, checked before the theory or any task runs (bounded work: e.g.
    ``beta=1e308`` is bad input, not a saddle point that fails).  The memory counts one task per local worker
    (``workers``; None: one per core), so that a study does not start tasks that the operating system kills."""
    from ..simulate.base import sizes_spike, sizes_srf

    concurrent = workers if isinstance(workers, int) else (os.cpu_count() or 1) if dask_available() else 1
    for name, size in (("alpha", "n"), ("beta", "p"), ("alpha0", "n0")):
        v = params.get(name)        # never a size raised to 1 behind the user's back (issue 31: --beta 1e-9)
        if isinstance(v, (int, float)) and 0 < v < math.inf and v * d_min < 1:
            raise InvalidParameterError(name, v, f"a ratio with {size} = {name} * d >= 1 at the smallest size "
                                                 f"d = {d_min}, i.e. {name} >= {1 / d_min:.6g}")
    if protocol == "srf" and (params.get("norm_slope") or params.get("norm_noise")):
        k, s, c = abs(params.get("norm_slope", 0.0)), params.get("norm_noise", 0.0), params["c"]
        top = c * math.sqrt(d_min) / 6   # the squared row norms c + k w.v + s zeta / sqrt d stay > 0 (6 sigma)
        if not k + s <= top:
            raise InvalidParameterError("norm_slope" if k > s else "norm_noise", params.get("norm_slope") if k > s
                                        else s, f"|norm_slope| + norm_noise <= c sqrt(d) / 6 = {top:.4g} at the "
                                        f"smallest size d = {d_min} (the squared row norms c + k w.v + s zeta/sqrt(d) "
                                        "stay positive)")
    memory = None
    if protocol == "ablation":          # the variants' layers and step matrices (simulate.memory.ablation_peak)
        from ..simulate.ablation import variant_names
        from ..simulate.memory import ablation_peak

        names = variant_names(params.get("variants"))
        memory = (lambda *z: ablation_peak(*z, variants=len(names), degree2="degree2" in names,
                                           steps=1 + ("no_f0" in names) + ("degree2" in names)))
    if protocol in ("giant-step", "srf", "ablation"):
        sizes_srf(d, alpha=params["alpha"], beta=params["beta"], alpha0=params.get("alpha0"), concurrent=concurrent,
                  memory=memory)
    else:
        sizes_spike(d=d, phi=params["phi"], psi=params["psi"], concurrent=concurrent)


def _brief(xs):
    """A list for an error line: in full up to 8 entries, else its ends and its length (a line, not 80 kB)."""
    try:
        xs = list(xs)
    except TypeError:
        return xs
    return xs if len(xs) <= 8 else f"[{xs[0]}, {xs[1]}, {xs[2]}, ..., {xs[-1]}] ({len(xs)} entries)"


def _ladder(sizes, reps):
    """Sorted distinct sizes and the seeds per size (``reps``: one count for all, or one per size)."""
    try:
        sizes = [int(d) for d in sizes]
        counts = [reps] * len(sizes) if isinstance(reps, (int, np.integer)) else list(reps)
    except (TypeError, ValueError):
        counts = None
    allowed = f"sizes >= 10 (distinct), reps >= 2 (one count, or one per size), at most {MAX_TASKS} tasks"
    if (not counts or len(counts) != len(sizes) or len(set(sizes)) != len(sizes) or min(sizes) < 10
            or not all(isinstance(k, (int, np.integer)) and k >= 2 for k in counts) or sum(counts) > MAX_TASKS):
        raise InvalidParameterError("sizes, reps", (_brief(sizes), _brief(reps)), allowed)
    per = dict(zip(sizes, (int(k) for k in counts)))
    return sorted(per), per


def _execute(protocol, params, root_seed, st, tag, pending, done, workers, scheduler, progress) -> str:
    """Run the ``pending`` (d, k) tasks, storing each as it finishes; returns a description of the executor."""
    if not pending:
        return "none (every task was in the store)"
    by_key = {st.key(protocol, tag, d, k): (d, k) for d, k in pending}
    count = [0]

    def on_result(tkey, result, seconds):
        d, k = by_key[tkey]
        st.put(protocol, tag, d, k, result, seconds)
        done[(d, k)] = result
        count[0] += 1
        if callable(progress):
            progress(count[0], len(pending))

    if workers == 1 and scheduler is None:
        for tkey, (d, k) in by_key.items():
            ts = time.perf_counter()
            result = run_task(protocol, params, d, k, root_seed)
            on_result(tkey, result, time.perf_counter() - ts)
        return "serial"
    return map_tasks(run_task, [(tkey, (protocol, params, d, k, root_seed)) for tkey, (d, k) in by_key.items()],
                     on_result, workers=workers, scheduler=scheduler)


def plan_study(protocol: str, params: dict, sizes, reps, *, key=None, compare="theory", exponents=(0.5, 1.0),
               workers=1) -> tuple:
    """Check every input of a study before anything runs or is written (one clear error otherwise); returns
    ``(protocol, params, key, sizes, reps per size, exponents)``."""
    pr = protocol_of(protocol)
    params = pr.check(dict(params))
    key = pr.keys[0] if key is None else key
    if key not in pr.keys_for(params):
        raise InvalidParameterError("key", key, " or ".join(pr.keys_for(params)))
    if compare not in ("theory",) + pr.paired_for(params):
        raise InvalidParameterError("compare", compare, " or ".join(("theory",) + pr.paired_for(params)))
    sizes, reps = _ladder(sizes, reps)
    if workers is not None and (not isinstance(workers, int) or not 1 <= workers <= 256):
        raise InvalidParameterError("workers", workers, "an integer in [1, 256], or None (one per core)")
    _check_sizes(protocol, params, max(sizes), workers, min(sizes))
    return pr, params, key, sizes, reps, check_exponents(exponents)


def run_study(protocol: str, params: dict, sizes, reps: int, *, key: str | None = None, compare: str = "theory",
              theory=None, store=None, root_seed: int = 0, exponents=(0.5, 1.0), workers: int | None = 1,
              scheduler: str | None = None, progress=None, target_se: float | None = None,
              max_reps: int = 256, tolerance: float = DEFAULT_TOLERANCE, max_wait: float = MAX_WAIT,
              on_wait=None) -> StudyResult:
    r"""Run (or resume) a finite-size study of ``protocol`` with ``params`` over ``sizes`` × ``reps`` seeds
    (``reps`` one count, or one per size).

    Parameters
    ----------
    protocol, params :
        A protocol of :data:`~onestep_theory.study.protocols.PROTOCOLS` and its parameters.
    key : str
        The simulated quantity (default: the protocol's first, e.g. ``test_error``).
    compare : str
        ``"theory"`` (the d → ∞ value, computed here unless ``theory=(value, error)`` is given) or a paired
        reference of the protocol (``"f1"``, ``"measured"`` for ``giant-step``).  Every other comparison the
        protocol offers is reported too, under ``comparisons``.
    store :
        A :class:`~onestep_theory.study.store.ResultStore` or a path (default: in memory); tasks already in it are
        not run again.
    workers, scheduler :
        ``workers=1``: serially in this process; ``workers=N``: a local Dask cluster of N processes; ``None``: one
        process per core (serially if Dask is not installed); ``scheduler``: the Dask cluster at that address.
    progress : callable(done, total), optional
        Called after each task executed in this run.
    target_se, max_reps :
        With ``target_se``, ``reps`` is the first round: seeds are then added at every size whose standard error of
        the chosen gap is above ``target_se`` (the count its standard error says is needed, at most ``max_reps``),
        until every size meets it.  The added seeds depend only on the results, so the study stays reproducible.
    tolerance :
        Relative (default 0.01: 1 % of the theory): a verdict whose detectable gap (95 % confidence, 80 % power) is
        larger is "underpowered", never agreement (:func:`~onestep_theory.study.fit.power_verdict`).
    max_wait, on_wait :
        Tasks claimed by a concurrent run of the study are waited for, at most ``max_wait`` seconds without one of
        them finishing (then :class:`~onestep_theory.core.errors.ResourceError`, exit 3); ``on_wait(message)`` is
        called once when the wait starts.
    """
    pr, params, key, sizes, reps, exponents = plan_study(protocol, params, sizes, reps, key=key, compare=compare,
                                                         exponents=exponents, workers=workers)
    if target_se is not None and not (isinstance(target_se, (int, float)) and 0 < target_se < math.inf):
        raise InvalidParameterError("target_se", target_se, "a standard error > 0")
    if target_se is not None and (not isinstance(max_reps, int) or not max(reps.values()) <= max_reps <= 1000):
        raise InvalidParameterError("max_reps", max_reps, "an integer in [reps, 1000]")
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < math.inf):
        raise InvalidParameterError("tolerance", tolerance, "a relative tolerance > 0 (0.01: 1 % of the theory)")
    if not (isinstance(max_wait, (int, float)) and 0 <= max_wait < math.inf):
        raise InvalidParameterError("max_wait", max_wait, "seconds >= 0")
    th, th_err = pr.theory(params, key) if theory is None else (float(theory[0]), float(theory[1]))
    th_err = max(th_err, math.ulp(th) / 2)       # the float64 value's own rounding bounds its error from below
    alt = pr.alternative_theory(params, key) if theory is None else None
    full, params = params, pr.simulation_params(params)       # the tasks do not depend on theory-only options
    own = not isinstance(store, ResultStore)
    st = ResultStore(store if store is not None else ":memory:") if own else store
    tag = dict(params, root_seed=int(root_seed))
    t0, done, executed, executors = time.perf_counter(), {}, 0, []
    if workers is None:
        workers = (os.cpu_count() or 1) if (dask_available() or scheduler) else 1
    gap_of = (lambda r: r[key] - th) if compare == "theory" else (lambda r: r[key] - r[pr.paired_key(compare, key)])
    needed = [key] + [pr.paired_key(n, key) for n in pr.paired_for(full)]
    owner = claim_owner()
    try:
        reused = 0
        while True:
            pending = []
            for d in sizes:
                for k in range(reps[d]):
                    if (d, k) in done:
                        continue
                    res = st.get(protocol, tag, d, k)
                    if res is None:
                        pending.append((d, k))
                    else:
                        done[(d, k)] = _checked(res, d, k, needed, st.path)
                        reused += 1
            # claim the tasks first: a concurrent run of the same study on this store runs the others
            mine = [t for t in pending if st.claim(st.key(protocol, tag, *t), owner)]
            theirs = [t for t in pending if t not in set(mine)]
            executed += len(mine)
            executors.append(_execute(protocol, params, root_seed, st, tag, mine, done, workers, scheduler,
                                      progress))
            if theirs and callable(on_wait):
                on_wait(f"waiting for {len(theirs)} task(s) claimed by another run of this study on {st.path} (at "
                        f"most {max_wait:g} s without one finishing)")
            last = time.monotonic()
            while theirs:         # wait for the other run's tasks; take over any whose process is gone
                if time.monotonic() - last > max_wait:
                    raise ResourceError(f"waited {max_wait:g} s for {len(theirs)} task(s) claimed by another run of "
                                        f"this study on {st.path} without one finishing; rerun with --resume when "
                                        "that run has ended (a dead run's claims are taken over)")
                time.sleep(min(POLL_SECONDS, max(max_wait, 0.01)))
                for t in list(theirs):
                    res = st.get(protocol, tag, *t)
                    if res is not None:
                        done[t] = _checked(res, *t, needed, st.path)
                        reused += 1
                        theirs.remove(t)
                        last = time.monotonic()
                taken = [t for t in theirs if st.claim(st.key(protocol, tag, *t), owner)]
                if taken:
                    last = time.monotonic()
                    theirs = [t for t in theirs if t not in set(taken)]
                    executed += len(taken)
                    executors.append(_execute(protocol, params, root_seed, st, tag, taken, done, workers, scheduler,
                                              progress))
            if target_se is None:
                break
            more = {}
            for d in sizes:                   # seeds to reach the target standard error (at most max_reps)
                v = np.asarray([gap_of(done[(d, k)]) for k in range(reps[d])])
                v = v[np.isfinite(v)]           # tasks without the paired reference do not count
                if v.size < 2:
                    continue
                se = float(v.std(ddof=1) / math.sqrt(len(v)))
                need = len(v) * (se / target_se) ** 2 if se < 1e150 * target_se else math.inf
                want = max_reps if not need < max_reps else math.ceil(need)
                if want > reps[d]:
                    more[d] = want
            if not more:
                break
            reps.update(more)
    finally:
        st.release(owner)
        if own:
            st.close()
    executor = next((e for e in executors if not e.startswith("none")), executors[0])
    rows_by_d = {d: [done[(d, k)] for k in range(reps[d])] for d in sizes}
    comparisons, notes = {}, []
    against = {"theory": th} | ({alt[0]: alt[1]} if alt and alt[1] is not None else {})
    for name in tuple(against) + pr.paired_for(params):
        if name in against:
            table = _table(rows_by_d, lambda r, t=against[name]: r[key] - t)
        else:
            table = _table(rows_by_d, lambda r, ref=pr.paired_key(name, key): r[key] - r[ref])
        for row in table:
            row["relative_gap"] = row["gap"] / th if th else math.nan
        comparisons[name] = {"sizes": table, "fit": _fit(table, tuple(exponents), th, tolerance, name)}
        if name in against:
            comparisons[name]["theory"] = against[name]
    if alt and alt[1] is None:
        notes.append(f"the row-norm correction (docs/studies/mechanism.md) is not available here: {alt[2]}")
    elif alt:
        what = ("the uncorrected theory (Result 3.3)" if alt[0] == "uncorrected" else
                "the theory corrected for the row norms (docs/theory/srf-theory.md §4.11)")
        notes.append(f"{what} is {' +/- '.join(vouch(alt[1], max(alt[2], math.ulp(alt[1]) / 2)))}, "
                     f"{100 * (alt[1] - th) / th:+.2f} % of the theory: "
                     f"comparison '{alt[0]}'; the network's known gap to Result 3.3 and its mechanism, the step's "
                     "row norms: docs/studies/mechanism.md (`study giant-step --row-norms` compares with the corrected theory)")
    chosen = comparisons[compare]
    return StudyResult(
        protocol=protocol, params=full, key=key, compare=compare, theory=th, theory_error=th_err,
        sizes=chosen["sizes"], fit=chosen["fit"], comparisons=comparisons, notes=notes, root_seed=int(root_seed),
        run={"executed": executed, "reused": reused, "seconds": time.perf_counter() - t0, "executor": executor},
        provenance=provenance(method="one task per (d, seed index), SeedSequence([root, hash, d, k]), one BLAS "
                                     "thread per task; WLS extrapolation in d^-e", references=["docs/theory/numerics.md §8"]))
