"""The network studies of docs/studies/paired-map.md: `study giant-step` with the corrected paired references
(``corrected=True``: the theory at each task's measured r̂, ĉ, γ̂, k̂, ŝ with the row norms, on the trained bulk,
both; onestep_theory/study/protocols.py) at the map's points, in priority order, one process, one point at a time.

Resumable: every task is stored in RUN_DIR/paired_map.sqlite as it finishes and reused by a rerun; a point's
output RUN_DIR/paired_<name>.json is written when its study is complete.  ``--only NAME,...`` runs those points.

    nice -n 19 python docs/studies/paired_map/run_paired_map.py RUN_DIR [--only caseA,caseB]
"""

import argparse
import json
import pathlib
import sys
import time

from onestep_theory.study.run import run_study

A = dict(student="tanh", teacher="sin", alpha=3, beta=1, lam=0.1, alpha0=20, eta=3)
#: name -> (parameters, sizes, seeds per size), in priority order (case A and case B first).  Planned from the measured
#: per-task cost (one process at nice 19 on the shared cores: case A 0.4 / 1.8 / 5.7 / 77 s at d = 250 / 500 / 1000 /
#: 2000) and the per-task spread of the paired gap (2.7-5 % of the theory: the readout's data dominate it).
POINTS = {
    "caseA": (A, [250, 500, 1000, 2000, 4000], [32, 24, 24, 12, 4]),
    "caseB": (dict(A, teacher="tanh", alpha0=0.5, eta=1), [250, 500, 1000, 2000, 4000], [32, 24, 24, 8, 4]),
    "alpha1": (dict(A, alpha=1), [250, 500, 1000, 2000], [16, 12, 12, 8]),
    "alpha0_2": (dict(A, alpha0=2), [250, 500, 1000, 2000, 4000], [16, 12, 12, 4, 8]),
    "eta2": (dict(A, eta=2), [250, 500, 1000, 2000], [16, 12, 12, 8]),
    # to d = 1500 (issue 36 item 3): simulate.memory estimates 7.5 GiB for one d = 1500 task (3.3 at 1000, 13 at
    # 2000), so one process, after the ablation ladder of mechanism.md §7 (9 GB at d = 3000) has finished; measured
    # at nice 19 on the shared cores: 30 s per task at d = 1000, 100-120 s at 1500, peak resident 6.9 GiB at 1500
    "alpha0_100": (dict(A, alpha0=100), [250, 500, 1000, 1500], [12, 8, 12, 16]),
    "teacher_tanh": (dict(A, teacher="tanh"), [250, 500, 1000, 2000], [16, 12, 12, 8]),
}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--only", default=None)
    ap.add_argument("--skip", default="", help="points not to run now (their stored tasks stay)")
    a = ap.parse_args(argv)
    out = pathlib.Path(a.run_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = [n for n in (a.only.split(",") if a.only else list(POINTS)) if n not in a.skip.split(",")]
    for name in names:
        params, sizes, reps = POINTS[name]
        t0 = time.perf_counter()
        res = run_study("giant-step", dict(params, corrected=True), sizes, reps, exponents=(1.0,), workers=1,
                        store=str(out / "paired_map.sqlite"),
                        progress=lambda done, total, n=name: print(f"{n}: {done}/{total} "
                                                                   f"{time.perf_counter() - t0:.0f} s", flush=True))
        (out / f"paired_{name}.json").write_text(json.dumps(res.to_dict(), indent=1, default=float))
        print(f"{name}: done, {res.run['executed']} tasks run, {res.run['reused']} reused, "
              f"{res.run['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
