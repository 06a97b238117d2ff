"""Output helpers of the reproduction: tables (CSV + JSON), z-scores against the
standard error (docs/theory/srf-theory.md §10), log."""

from __future__ import annotations

import csv
import json
import pathlib
import sys
import time

from ..core.results import serialize

__all__ = ["Log", "write_table", "z_score", "fmt_cell"]

class Log:
    """Progress lines on stderr with the elapsed time (silent with ``quiet``)."""

    def __init__(self, quiet):
        self.quiet = quiet
        self.t0 = time.perf_counter()

    def __call__(self, msg):
        if not self.quiet:
            print(f"[reproduce {time.perf_counter() - self.t0:6.1f} s] {msg}", file=sys.stderr, flush=True)


def write_table(out: pathlib.Path, name: str, rows: list, extra: dict):
    """``name.csv`` (the rows) and ``name.json`` (rows and extra data) in ``out``."""
    if rows:
        with open(out / f"{name}.csv", "w", newline="") as fh:
            keys = list(dict.fromkeys(k for r in rows for k in r))
            wr = csv.DictWriter(fh, fieldnames=keys)
            wr.writeheader()
            wr.writerows(rows)
    (out / f"{name}.json").write_text(json.dumps(serialize({"rows": rows, **extra}), indent=1))


def z_score(sim_mean, sim_se, theory):
    """(simulation - theory) / standard error (nan without a standard error)."""
    return (sim_mean - theory) / sim_se if sim_se and sim_se > 0 else float("nan")


def fmt_cell(v):
    """A table cell of report.md."""
    if isinstance(v, float):
        return "nan" if v != v else f"{v:.5g}"
    return "" if v is None else str(v)
