"""Output helpers of the reproduction: tables (CSV + JSON), z-scores against the
standard error (docs/theory/srf-theory.md §10), log."""

from __future__ import annotations

import contextvars
import json
import pathlib
import sys
import time

from ..core.results import provenance, serialize, write_csv

__all__ = ["Log", "write_table", "z_score", "fmt_cell"]

class Log:
    """Progress lines on stderr with the elapsed time (silent with ``quiet``)."""

    def __init__(self, quiet):
        self.quiet = quiet
        self.t0 = time.perf_counter()

    def __call__(self, msg):
        if not self.quiet:
            print(f"[reproduce {time.perf_counter() - self.t0:6.1f} s] {msg}", file=sys.stderr, flush=True)


#: The run a table belongs to (set by ``report.run``): its command, mode, seed and sizes, for the tables' context.
RUN = contextvars.ContextVar("reproduce_run", default={})


def write_table(out: pathlib.Path, name: str, rows: list, extra: dict):
    """``name.csv`` (the rows, after ``#`` lines of context: the run's command, mode, seed and sizes, the
    experiment's parameters as given, the version; ``core.results.read_csv``) and ``name.json`` (rows, extra data
    and the same ``context``) in ``out``."""
    run = RUN.get()
    context = {"command": run.get("command"), "parameters": {k: v for k, v in extra.items()
                                                             if isinstance(v, (str, int, float))},
               "run": {k: v for k, v in run.items() if k != "command"} or None,
               "method": f"reproduce experiment {name}: theory at the package's precision, simulation mean +- "
                         "standard error over SeedSequence-spawned repetitions",
               "provenance": provenance(references=["docs/theory/srf-theory.md §10"])}
    if rows:
        write_csv(out / f"{name}.csv", rows, context)
    (out / f"{name}.json").write_text(json.dumps(serialize({"rows": rows, **extra, "context": context}), indent=1))


def z_score(sim_mean, sim_se, theory):
    """(simulation - theory) / standard error (nan without a standard error)."""
    return (sim_mean - theory) / sim_se if sim_se and sim_se > 0 else float("nan")


def fmt_cell(v):
    """A table cell of report.md."""
    if isinstance(v, float):
        return "nan" if v != v else f"{v:.5g}"
    return "" if v is None else str(v)
