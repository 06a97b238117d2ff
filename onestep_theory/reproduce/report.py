"""The main job: regenerate the key curves of [MLHD23] and [CPDKLZL24].

Six experiments, each with theory lines, simulation points (mean ± standard error), a table
(CSV and JSON) and, with matplotlib installed (the ``plot`` extra), a PNG:

1. resolvent traces m1, m2 over λ: theory against simulated traces (docs/theory/spike-theory.md §6, §9.4);
2. training-loss gain against α = log η / log n for Settings 1 and 2 (protocol A), with the windows
   and the Δ_ℓ plateaus (docs/theory/spike-theory.md §§5, 7, 9.2);
3. test-error gain Λ1, Λ2: corrected form, printed form and protocol B-limit simulation (§8);
4. sRF learning curves over α for the reference cases A and B (docs/theory/srf-theory.md §11.2), with direct
   sRF and full-network simulation points and the best linear baseline (§4, §10);
5. bounds (26)/(27) against η̃ with the λ-optimised test error (§6);
6. feature spectrum: histogram of simulated eigenvalues against the theory density (§7).

``report.md`` says for every experiment what theory predicts and what simulation measured.
"""

from __future__ import annotations

import json
import pathlib
import time

import numpy as np

from .. import __version__
from ..core.errors import InvalidParameterError
from ..core.results import serialize
from ..core.plotting import plotting
from .output import RUN, Log, fmt_cell
from .spikes import exp_resolvent, exp_test_gain, exp_training_gain
from .srf import exp_bounds, exp_spectrum, exp_srf_curves

__all__ = ["SIZES", "EXPERIMENTS", "run"]

SIZES = {
    "smoke": dict(res_n=600, res_reps=2, a_n=300, a_reps=1, a_alphas=[0.1, 0.3], b_n=300, b_reps=2, srf_d=150,
                  srf_reps=2, srf_alphas_sim=[1.0], srf_curve=6, bnd_eta=6, spec_d=200, n_test=2000),
    "quick": dict(res_n=1500, res_reps=3, a_n=1600, a_reps=2, a_alphas=[0.0, 0.1, 0.2, 0.28, 0.31, 0.35, 0.39, 0.43],
                  b_n=1500, b_reps=6, srf_d=800, srf_reps=3, srf_alphas_sim=[0.5, 1.5, 3.0], srf_curve=30,
                  bnd_eta=25, spec_d=1000, n_test=10000),
    "full": dict(res_n=3000, res_reps=6, a_n=3000, a_reps=4, a_alphas=list(np.round(np.linspace(0, 0.45, 16), 3)),
                 b_n=3000, b_reps=8, srf_d=2000, srf_reps=4, srf_alphas_sim=[0.2, 0.9, 1.6, 2.3, 3.0], srf_curve=60,
                 bnd_eta=60, spec_d=2000, n_test=20000),
}

EXPERIMENTS = [exp_resolvent, exp_training_gain, exp_test_gain, exp_srf_curves, exp_bounds, exp_spectrum]


def run(out, mode="quick", seed=0, quiet=False, only=None, command=None) -> dict:
    """Run the experiments and write ``report.md``, PNGs, CSV and JSON into *out*; return the summary.  Every table
    carries ``command`` (the command line; default: this call), the mode, the seed and the sizes."""
    if mode not in SIZES:
        raise InvalidParameterError("mode", mode, "'smoke', 'quick' or 'full'")
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    S = SIZES[mode]
    plt = plotting()
    log = Log(quiet)
    t0 = time.perf_counter()
    results = []
    command = command or f"onestep_theory.reproduce.run(mode={mode!r}, seed={seed!r}, only={only!r})"
    RUN.set({"command": command, "mode": mode, "seed": seed, "sizes": S})
    for i, fn in enumerate(EXPERIMENTS, 1):
        if only and i not in only:
            continue
        log(f"experiment {i}: {fn.__name__}")
        te = time.perf_counter()
        res = fn(S, seed, out, plt, log)
        res["seconds"] = time.perf_counter() - te
        results.append(res)
    total = time.perf_counter() - t0
    lines = [f"# onestep_theory reproduction report ({mode})", "",
             f"onestep_theory {__version__}; seed {seed}; total run time {total:.1f} s on this machine. "
             f"Sizes: {json.dumps(S)}. Command: `{command}`.", ""]
    if plt is None:
        lines += ["**Note:** matplotlib is not installed, so no plots were made; install the `plot` extra "
                  "(`pip install '.[plot]'`). Tables are in the CSV/JSON files.", ""]
    for i, r in enumerate(results, 1):
        lines += [f"## {i}. {r['name']}", "", r["text"], ""]
        if plt is not None:
            lines += [f"![{r['name']}]({r['file']}.png)", ""]
        lines += [f"Data: [{r['file']}.csv]({r['file']}.csv), [{r['file']}.json]({r['file']}.json). "
                  f"({r['seconds']:.1f} s)", ""]
        keys = list(r["rows"][0].keys()) if r["rows"] else []
        if keys:
            lines.append("| " + " | ".join(keys) + " |")
            lines.append("|" + "---|" * len(keys))
            for row in r["rows"][:20]:
                lines.append("| " + " | ".join(fmt_cell(row[k]) for k in keys) + " |")
            lines.append("")
    (out / "report.md").write_text("\n".join(lines))
    summary = {"mode": mode, "seed": seed, "seconds": total, "version": __version__, "command": command,
               "experiments": [{k: v for k, v in r.items() if k not in ("rows", "text")} for r in results]}
    (out / "summary.json").write_text(json.dumps(serialize(summary), indent=1))
    log(f"done: {out / 'report.md'}")
    return summary


