"""Writes docs/studies/readouts-losses.md from the outputs of run_readouts_losses.sh and of the independent K-group
simulation (independent_kgroup.py): every number in the page's tables is copied by this script.

Usage: python make_readouts_losses.py RUN_DIR docs/studies   (RUN_DIR: where run_readouts_losses.sh ran, holding
rl_*.json, rl_*.png and independent_kgroup.jsonl, the per-seed output of independent_kgroup.py; optionally
rl_logistic_direct.txt, the output of ``logistic_checks.py direct D:SEEDS,...``).  The JSON outputs and the plots
are copied next to the page.
"""
import json
import math
import pathlib
import re
import shutil
import sys

from onestep_theory.study.fit import extrapolate

RUN, OUT = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
EXPONENTS = {"e0.5_1": "d⁻¹ᐟ² + d⁻¹", "e1": "d⁻¹", "e0.5": "d⁻¹ᐟ²"}


def load(name):
    return json.load(open(RUN / name))


def pct(x, th):
    return 100 * float(x) / th


def size_table(study, names):
    """Per-size gaps of the comparisons ``names`` (percent of the theory, ± one standard error)."""
    th = study["theory"] if isinstance(study["theory"], float) else float(study["theory"])
    head = "| d | seeds | " + " | ".join(f"network − {n}" for n in names) + " |"
    rows = [head, "|" + "---|" * (2 + len(names))]
    comps = study["comparisons"]
    for i, r in enumerate(comps["theory"]["sizes"]):
        cells = [f"{pct(comps[n]['sizes'][i]['gap'], th):+.2f} ± {pct(comps[n]['sizes'][i]['se'], th):.2f}"
                 for n in names]
        rows.append(f"| {r['d']} | {r['reps']} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def fit_table(stem, names):
    """The extrapolated gap d → ∞ under each fit model (percent of the theory), with χ²/dof and the verdict."""
    rows = ["| fit model | " + " | ".join(f"network − {n}, d → ∞ (χ²/dof)" for n in names) + " | verdict (theory) |",
            "|" + "---|" * (2 + len(names))]
    for tag, label in EXPONENTS.items():
        path = RUN / f"{stem}_{tag}.json"
        if not path.exists():
            continue
        st = load(path.name)
        th = float(st["theory"])
        cells = []
        for n in names:
            f = st["comparisons"][n]["fit"]
            cells.append("—" if f is None else
                         f"{pct(f['g_inf'], th):+.2f} ± {pct(f['se'], th):.2f} ({float(f['chi2']):.1f}/{f['dof']})")
        f = st["comparisons"]["theory"]["fit"]
        rows.append(f"| {label} | " + " | ".join(cells) + f" | {f['verdict'] if f else '—'} |")
    return "\n".join(rows)


def summary(stem, names):
    """What the prose under a loss study's tables quotes, computed here: the range of the per-size gaps, the largest
    size's gap, and each fit model's status with g_inf and the smallest gap it could detect (percent of the theory)."""
    st = load(f"{stem}_e1.json")
    th = float(st["theory"])
    out = []
    for n in names:
        rows = st["comparisons"][n]["sizes"]
        g = [pct(r["gap"], th) for r in rows]
        last = rows[-1]
        out.append(f"network − {n}: per size from {min(g):+.1f} % to {max(g):+.1f} %; at d = {last['d']} "
                   f"({last['reps']} seeds) {pct(last['gap'], th):+.2f} ± {pct(last['se'], th):.2f} %.")
        for tag, label in EXPONENTS.items():
            path = RUN / f"{stem}_{tag}.json"
            f = load(path.name)["comparisons"][n]["fit"] if path.exists() else None
            if f is None or "status" not in f:
                continue
            out.append(f"  - {label}: {f['status']}, g∞ = {pct(f['g_inf'], th):+.2f} ± {pct(f['se'], th):.2f} % "
                       f"(χ² {float(f['chi2']):.1f} on {f['dof']}), smallest detectable gap "
                       f"{pct(f['detectable_gap'], th):.1f} %.")
    return "\n".join(("- " + x) if not x.startswith("  ") else x for x in out)


def direct_lines(theory):
    """The direct sRF at Result 3.1's (r, c, gamma), from the saved output of ``logistic_checks.py direct D:SEEDS,...``
    (RUN/rl_logistic_direct.txt): one line per size and the d⁻¹ and d⁻¹ᐟ² fits, in percent of the theory."""
    pat = r"direct sRF d = (\d+), (\d+) seeds: test_error ([0-9.]+) \+- ([0-9.]+)"
    rows = sorted({int(d): (int(n), float(m), float(e))
                   for d, n, m, e in re.findall(pat, (RUN / "rl_logistic_direct.txt").read_text())}.items())
    out = [f"  - d = {d}, {n} seeds: {m:.2f} ± {e:.2f}, which is {pct(m - theory, theory):+.1f} ± "
           f"{pct(e, theory):.1f} %." for d, (n, m, e) in rows]
    for ex, label in (((1.0,), "d⁻¹"), ((0.5,), "d⁻¹ᐟ²")):
        if len(rows) > 2:
            f = extrapolate([d for d, _ in rows], [m - theory for _, (n, m, e) in rows], [e for _, (n, m, e) in rows],
                            ex, reps=[n for _, (n, m, e) in rows], scale=theory)
            out.append(f"  - fit in {label}: {f.status}, g∞ = {f.g_inf_pct:+.2f} ± {f.se_pct:.2f} % "
                       f"(χ² {f.chi2:.1f} "
                       f"on {f.dof}), smallest detectable gap {f.detectable_gap_pct:.1f} %.")
    return "\n".join(out)


def theory_line(study):
    return f"{float(study['theory']):.10g} ± {float(study['theory_error']):.1e}"


LABELS = {"ref": "the reference protocol", "uniform": "uniform readout u = 1",
          "a_norm": "(a) u normalised to mean(u²) = 1", "b_randgrp": "(b) groups drawn at random",
          "c_uphi": "(c) readout on the features u·σ", "d_nof0": "(d) step error without f0",
          "e_step_u1": "(e) step ignores u (f0 keeps it)", "f_meanloss": "(f) ridge with the mean loss",
          "g_a0plus": "(g) readout a0 + δ, penalty on δ"}


def summarise_independent(path):
    """Per size and variant of independent_kgroup.py's per-seed output: mean, standard error, and the paired shift
    from the reference protocol on the same draws."""
    rows = [json.loads(line) for line in open(path) if line.strip()]
    out = {}
    for d in sorted({r["d"] for r in rows}):
        rs = [r for r in rows if r["d"] == d]
        ref = [r["ref"] for r in rs]
        out[str(d)] = {}
        for key, label in LABELS.items():
            v = [r[key] for r in rs]
            diff = [a - b for a, b in zip(v, ref)]
            out[str(d)][key] = {"label": label, "reps": len(v), "mean": mean(v), "se": se(v), "diff": mean(diff),
                                "diff_se": se(diff)}
    return out


def mean(v):
    return sum(v) / len(v)


def se(v):
    m = mean(v)
    return math.sqrt(sum((a - m) ** 2 for a in v) / (len(v) - 1) / len(v))


def independent_table(ind, package):
    """The independent simulation's protocol variants (paired with its reference) and the package's own runs."""
    rows = ["| d | simulation | seeds | test error | ± SE | paired shift from the reference (± SE) |",
            "|---|---|---|---|---|---|"]
    for d in sorted(ind, key=int):
        for name, v in ind[d].items():
            shift = "—" if name == "ref" else f"{v['diff']:+.5f} ± {v['diff_se']:.5f}"
            rows.append(f"| {d} | independent: {v['label']} | {v['reps']} | {v['mean']:.5f} | {v['se']:.5f} | {shift} |")
        if d in package:
            p = package[d]
            rows.append(f"| {d} | the package (`study giant-step --readout 1:0.5,2:0.5`) | {p['reps']} | "
                        f"{p['mean']:.5f} | {p['se']:.5f} | — |")
    return "\n".join(rows)


def main():
    ind = summarise_independent(RUN / "independent_kgroup.jsonl")
    json.dump(ind, open(OUT / "independent_kgroup.json", "w"), indent=1)
    kg = load("rl_kgroup_e1.json")
    th = float(kg["theory"])
    package = {str(r["d"]): {"reps": r["reps"], "mean": th + float(r["gap"]), "se": float(r["se"])}
               for r in kg["comparisons"]["theory"]["sizes"]}
    subs = {"KG_THEORY": theory_line(kg), "KG_SIZES": size_table(kg, ["theory"]),
            "KG_FITS": fit_table("rl_kgroup", ["theory"]),
            "KG_INDEPENDENT": independent_table(ind, package)}
    for L in ("logistic", "hinge"):
        for key in ("class_error", "test_error"):
            st = load(f"rl_{L}_{key}_e1.json")
            subs[f"{L}_{key}_THEORY".upper()] = theory_line(st)
            subs[f"{L}_{key}_SIZES".upper()] = size_table(st, ["theory", "measured"])
            subs[f"{L}_{key}_FITS".upper()] = fit_table(f"rl_{L}_{key}", ["theory", "measured"])
    subs["LOGISTIC_TEST_ERROR_SUMMARY"] = summary("rl_logistic_test_error", ["theory", "measured"])
    subs["LOGISTIC_DIRECT"] = direct_lines(float(load("rl_logistic_test_error_e1.json")["theory"]))
    subs["LOGISTIC_CLASS_ERROR_SUMMARY"] = summary("rl_logistic_class_error", ["theory", "measured"])
    text = (OUT / "readouts-losses_template.md").read_text()
    for k, v in subs.items():
        text = text.replace("{" + k + "}", v)
    left = re.findall(r"\{[A-Z_]+\}", text)
    assert not left, left
    (OUT / "readouts-losses.md").write_text(text)
    for f in (sorted(RUN.glob("rl_*.json")) + [RUN / "rl_logistic_direct.txt"] + sorted(RUN.glob("rl_*_e1.png"))
              + [RUN / "independent_kgroup.jsonl"]):
        if f.resolve() != (OUT / f.name).resolve():
            shutil.copy(f, OUT / f.name)
    print(f"wrote {OUT / 'readouts-losses.md'}")


if __name__ == "__main__":
    main()
