"""Writes docs/studies/paired-map.md from the outputs of run_paired_map.py (every number on the page is computed here
from those outputs and the package's theory), copies the outputs next to this script, and adds the extrapolated
paired verdicts to onestep_theory/srf/features/network_map.json (the map `srf` quotes; run this after
docs/studies/make_mechanism.py, which writes the map's d = 1000 entries).

Usage: python docs/studies/paired_map/make_paired_map.py RUN_DIR      (seconds; RUN_DIR: run_paired_map.py's)
"""
import json
import math
import pathlib
import shutil
import sqlite3
import sys

import numpy as np

from onestep_theory.srf import srf_solve
from onestep_theory.study.fit import extrapolate

HERE = pathlib.Path(__file__).parent
PAGE = HERE.parent / "paired-map.md"
PKG = HERE.parents[2] / "onestep_theory" / "srf" / "features" / "network_map.json"
#: point name -> (label, the map entry's setting)
LABELS = {"caseA": ("case A", "case A"), "caseB": ("case B", "case B"), "alpha1": ("α = 1", "α = 1"),
          "alpha0_2": ("α0 = 2", "α0 = 2"), "eta2": ("η̃ = 2", "η̃ = 2"), "alpha0_100": ("α0 = 100", "α0 = 100"),
          "teacher_tanh": ("teacher tanh", "teacher tanh")}
#: the four theories: map key, paired reference, srf_solve options, label
VARIANTS = (("uncorrected", "measured", {}, "Result 3.3"),
            ("corrected", "measured_rn", {"row_norms": True}, "row norms (§4.11)"),
            ("trained", "measured_trained", {"spectrum": "trained"}, "trained bulk"),
            ("both", "measured_both", {"spectrum": "trained", "row_norms": True}, "both"))
MODEL = ("student", "teacher", "alpha", "beta", "lam", "alpha0", "eta")


def theory(params, opts):
    p = {k: repr(v) if not isinstance(v, str) else v for k, v in params.items() if k in MODEL}
    sol = srf_solve(p.pop("student"), p.pop("teacher"), **p, tol=1e-10, **opts)
    return float(sol.test_error), float(sol.abs_error)


def pct(x, th):
    return 100 * x / th


def verdict(fit):
    if fit is None:
        return None
    return {"g_inf_percent": fit["g_inf_pct"], "se_percent": fit["se_pct"],
            "detectable_percent": fit["detectable_gap_pct"], "chi2": fit["chi2"], "dof": fit["dof"],
            "status": fit["status"], "inside": fit["theory_inside"],
            "half_width_percent": abs(100 * fit["half_width"] / fit["scale"]), "tolerance_percent": fit["tolerance_pct"]}


def tasks_of(run, points):
    """Per task (d, seed index): the network's test error and its paired references — the committed
    paired_tasks.json, merged with the run's store where RUN_DIR has one (a task in both must agree: the same seed
    gives the same network)."""
    out = json.loads((HERE / "paired_tasks.json").read_text())
    f = run / "paired_map.sqlite"
    if not f.exists():
        return out
    con = sqlite3.connect(f"file:{f}?mode=ro", uri=True)
    new = {}
    for params, d, k, res, sec in con.execute("select params, d, seed_index, result, seconds from tasks where "
                                              "protocol = ?", ("giant-step",)):
        params, res = json.loads(params), json.loads(res)
        name = next((n for n, p in points.items() if all(params.get(x) == p["params"][x] for x in MODEL)), None)
        if name is not None and params.get("corrected"):
            new[(name, d, k)] = {"d": d, "k": k, "seconds": round(sec, 1),
                                 **{x: float(f"{res[x]:.10g}") for x in TASK_KEYS if x in res}}
    con.close()
    for name, rows in out.items():
        for t in rows:
            s = new.pop((name, t["d"], t["k"]), None)
            if s is not None and any(s.get(x) != t.get(x) for x in TASK_KEYS):
                sys.exit(f"{name}, d = {t['d']}, seed {t['k']}: the store's task differs from the committed one")
    for (name, d, k), t in new.items():
        out.setdefault(name, []).append(t)
    return {n: sorted(v, key=lambda t: (t["d"], t["k"])) for n, v in out.items()}


#: what each task keeps in the committed summary
TASK_KEYS = ("test_error", "theory_f1", "theory_measured", "theory_measured_rn", "theory_measured_trained",
             "theory_measured_both", "r", "c", "gamma", "norm_slope_v", "norm_noise_v")


def fitted(tasks, sizes, reps, gap, scale):
    """Per size (the first ``reps`` seeds of each, as the study): mean gap and standard error; the weighted fit
    g∞ + a/d with its verdict (study.fit.extrapolate; tolerance 1 % of Result 3.3)."""
    rows = []
    for d, n in zip(sizes, reps):
        v = np.array([gap(t) for t in tasks if t["d"] == d and t["k"] < n], dtype=float)
        ok = v[np.isfinite(v)]
        rows.append({"d": d, "gap": float(ok.mean()), "se": float(ok.std(ddof=1) / math.sqrt(ok.size)),
                     "reps": int(ok.size), **({"missing": int(v.size - ok.size)} if ok.size < v.size else {})})
    fit = extrapolate([r["d"] for r in rows], [r["gap"] for r in rows], [r["se"] for r in rows], (1.0,),
                      reps=[r["reps"] for r in rows], scale=scale, tolerance=0.01).to_dict()
    return rows, fit


def point(name, res, tasks):
    """The four variants' theory values and their verdicts at one point: paired against the theory at each task's
    measured parameters (``paired``), anchored on F1 (``anchored``: network − [F1 on the task's own trained bulk −
    trained bulk + variant], both at the measured parameters), and unpaired (``unpaired``)."""
    th0 = res["theory"]
    sizes = [r["d"] for r in res["comparisons"]["theory"]["sizes"]]
    reps = [r["reps"] for r in res["comparisons"]["theory"]["sizes"]]
    out = {"name": name, "label": LABELS[name][0], "params": {k: res["params"][k] for k in MODEL},
           "sizes": sizes, "seeds": reps, "variants": {}}
    unpaired = res["comparisons"]["theory"]
    for key, ref, opts, label in VARIANTS:
        th, err = theory(res["params"], opts)
        rk = "theory_" + ref
        rows, fit = fitted(tasks, sizes, reps, lambda t: t["test_error"] - t[rk], th0)
        arows, afit = fitted(tasks, sizes, reps, lambda t: t["test_error"] - (t["theory_f1"] - t[
            "theory_measured_trained"] + t[rk]), th0)
        # unpaired: network − this theory = (network − Result 3.3) − (this theory − Result 3.3), same errors
        uf = unpaired["fit"]
        shift = th - th0
        uv = None
        if uf is not None:
            g = uf["g_inf"] - shift
            half = uf["half_width"]
            uv = {"g_inf_percent": pct(g, th0), "se_percent": uf["se_pct"],
                  "detectable_percent": uf["detectable_gap_pct"], "inside": abs(g) <= half,
                  "status": ("outside" if abs(g) > half else
                             "inside" if uf["detectable_gap_pct"] <= uf["tolerance_pct"] else "underpowered")}
        out["variants"][key] = {
            "label": label, "theory": th, "theory_error": err, "shift_percent": pct(shift, th0),
            "paired": verdict(fit), "anchored": verdict(afit), "unpaired": uv,
            "per_size": [{"d": r["d"], "gap_percent": pct(r["gap"], th0), "se_percent": pct(r["se"], th0),
                          "reps": r["reps"], **({"missing": r["missing"]} if "missing" in r else {})} for r in rows],
            "per_size_anchored": [{"d": r["d"], "gap_percent": pct(r["gap"], th0), "se_percent": pct(r["se"], th0),
                                   "reps": r["reps"]} for r in arows]}
    return out


def cell(v):
    if v is None:
        return "no fit"
    status = {"inside": "inside", "underpowered": "inside, underpowered", "outside": "**outside**",
              "no verdict": "no verdict"}[v["status"]]
    return f"{v['g_inf_percent']:+.2f} ± {v['se_percent']:.2f} ({v['detectable_percent']:.1f}; {status})"


def tables(points):
    head = ["| point (sizes; seeds) | theory | ε_g (d → ∞) | − Result 3.3 | paired g∞ ± SE (detectable; verdict) "
            "| χ²/ν | F1-anchored g∞ ± SE (detectable; verdict) | χ²/ν | unpaired g∞ ± SE (detectable; verdict) |",
            "|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for p in points:
        where = f"{p['label']} ({', '.join(map(str, p['sizes']))}; {', '.join(map(str, p['seeds']))})"
        for key, *_ in VARIANTS:
            v = p["variants"][key]
            pv, av = v["paired"], v["anchored"]
            rows.append(f"| {where} | {v['label']} | {v['theory']:.8f} | {v['shift_percent']:+.2f} | {cell(pv)} | "
                        f"{pv['chi2']:.1f}/{pv['dof']} | {cell(av)} | {av['chi2']:.1f}/{av['dof']} | "
                        f"{cell(v['unpaired'])} |")
            where = ""
    sizes = []
    for p in points:
        sizes += [f"\n**{p['label']}** — network − reference per size (% of Result 3.3; mean ± standard error over "
                  "seeds):\n", "| reference | " + " | ".join(f"d = {d} ({n})" for d, n in zip(p["sizes"], p["seeds"]))
                  + " |", "|---|" + "---|" * len(p["sizes"])]
        for key, *_ in VARIANTS:
            v = p["variants"][key]
            for what, rows_ in (("theory at the measured parameters", v["per_size"]),
                                ("F1-anchored", v["per_size_anchored"])):
                sizes.append(f"| {v['label']}, {what} | " + " | ".join(
                    f"{r['gap_percent']:+.2f} ± {r['se_percent']:.2f}" + (f" ({r['missing']} missing)"
                                                                         if r.get("missing") else "")
                    for r in rows_) + " |")
    return "\n".join(head + rows), "\n".join(sizes)


def spread(found, tasks):
    """Per point and size: the spread over seeds (standard deviation, % of Result 3.3) of network − Result 3.3, of
    network − the theory at the measured parameters, and of the F1-anchored gap: what each pairing removes."""
    lines = ["| point | d | seeds | network − Result 3.3 | − theory at the measured (r̂, ĉ, γ̂) | F1-anchored |",
             "|---|---|---|---|---|---|"]
    for name, res in found.items():
        th = res["theory"]
        for row in res["comparisons"]["theory"]["sizes"]:
            ts = [t for t in tasks[name] if t["d"] == row["d"] and t["k"] < row["reps"]]
            sd = [float(np.std([g(t) for t in ts], ddof=1)) for g in (
                lambda t: t["test_error"], lambda t: t["test_error"] - t["theory_measured"],
                lambda t: t["test_error"] - t["theory_f1"])]
            lines.append(f"| {LABELS[name][0]} | {row['d']} | {len(ts)} | " + " | ".join(f"{100 * v / th:.2f}"
                                                                                       for v in sd) + " |")
    return "\n".join(lines)


def norms(found, tasks):
    """The measured row norms (k̂, ŝ) at each point's largest size against the step's prediction (row_norm_params at
    Result 3.1's r: docs/theory/srf-theory.md §2, Row norms)."""
    from onestep_theory.srf.features.mapping import resolve_rcg, row_norm_params

    lines = ["| point | d (seeds) | k̂ measured | k predicted | ŝ measured | s predicted |", "|---|---|---|---|---|---|"]
    for name, res in found.items():
        p = {k: repr(v) if not isinstance(v, str) else v for k, v in res["params"].items() if k in MODEL}
        r = resolve_rcg(p["student"], p["teacher"], None, None, None, p["alpha0"], p["eta"])[0]
        k, s2, _ = row_norm_params(p["student"], p["teacher"], p["alpha0"], p["eta"], 0, r)
        row = res["comparisons"]["theory"]["sizes"][-1]
        ts = [t for t in tasks[name] if t["d"] == row["d"] and t["k"] < row["reps"]]
        (km, ks), (sm, ss) = [(float(np.mean(v)), float(np.std(v, ddof=1) / math.sqrt(len(v)))) for v in
                              ([t["norm_slope_v"] for t in ts], [t["norm_noise_v"] for t in ts])]
        lines.append(f"| {LABELS[name][0]} | {row['d']} ({len(ts)}) | {km:+.4f} ± {ks:.4f} | {float(k):+.4f} | "
                     f"{sm:.4f} ± {ss:.4f} | {math.sqrt(float(s2)):.4f} |")
    return "\n".join(lines)


def update_map(points):
    """Adds each point's four theory values and verdicts to the map entry of the same setting (a new entry for a
    point the d = 1000 map has not, with its d = 1000 unpaired gap from this study)."""
    m = json.loads(PKG.read_text())
    for p in points:
        setting = LABELS[p["name"]][1]
        e = next((e for e in m["entries"] if e["setting"] == setting), None)
        if e is None or e.get("from") == "paired-map":     # a point of this page only: its d = 1000 gap from here
            res = json.loads((HERE / f"paired_{p['name']}.json").read_text())
            row = next((r for r in res["comparisons"]["theory"]["sizes"] if r["d"] == 1000), None)
            if row is None:
                continue
            if e is None:
                e = {"setting": setting}
                m["entries"].append(e)
            e.update({"from": "paired-map", "params": {k: str(float(v)) if not isinstance(v, str) else v
                                                       for k, v in p["params"].items()},
                      "d": 1000, "seeds": row["reps"], "theory": p["variants"]["uncorrected"]["theory"],
                      "theory_corrected": p["variants"]["corrected"]["theory"], "network_minus_theory": row["gap"],
                      "se": row["se"]})
        e["theory_trained"] = p["variants"]["trained"]["theory"]
        e["theory_both"] = p["variants"]["both"]["theory"]
        e["paired"] = {"sizes": p["sizes"], "seeds": p["seeds"], "fit": "g_inf + a/d, weighted; direct: network − "
                       "the theory at each network's measured parameters; anchored: network − (F1 on its own trained "
                       "bulk − trained bulk + the theory), both at the measured parameters",
                       "source": "docs/studies/paired-map.md",
                       **{key: {"direct": p["variants"][key]["paired"], "anchored": p["variants"][key]["anchored"]}
                          for key, *_ in VARIANTS}}
    done = {LABELS[p["name"]][1] for p in points}
    for e in m["entries"]:          # the d = 1000 gaps of the rest of the map, against the trained-bulk theories too
        if e["setting"] not in done:
            e["theory_trained"] = theory(e["params"], VARIANTS[2][2])[0]
            e["theory_both"] = theory(e["params"], VARIANTS[3][2])[0]
    m["paired_source"] = "docs/studies/paired-map.md (paired_map/run_paired_map.py, make_paired_map.py)"
    PKG.write_text(json.dumps(m, indent=1) + "\n")


def main():
    run = pathlib.Path(sys.argv[1])
    found = {}
    for name in LABELS:          # a point's study output from RUN_DIR, else the one committed next to this script
        f = run / f"paired_{name}.json"
        f = f if f.exists() else HERE / f.name
        if f.exists():
            if f.resolve() != (HERE / f.name).resolve():
                shutil.copy(f, HERE / f.name)
            found[name] = json.loads(f.read_text())
    tasks = tasks_of(run, found)
    (HERE / "paired_tasks.json").write_text(json.dumps(tasks, separators=(",", ":")) + "\n")
    points = [point(name, res, tasks[name]) for name, res in found.items()]
    (HERE / "paired_map_summary.json").write_text(json.dumps(points, indent=1) + "\n")
    verdicts, per_size = tables(points)
    txt = (HERE / "paired-map_template.md").read_text()
    txt = txt.replace("{{VERDICTS}}", verdicts).replace("{{PER_SIZE}}", per_size)
    txt = txt.replace("{{SPREAD}}", spread(found, tasks)).replace("{{NORMS}}", norms(found, tasks))
    sizes = sorted({t["d"] for n in found for t in tasks[n]})
    cost = ["| point | " + " | ".join(f"d = {d}" for d in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for n in found:
        cost.append(f"| {LABELS[n][0]} | " + " | ".join(
            f"{float(np.median([t['seconds'] for t in tasks[n] if t['d'] == d])):.1f}"
            if any(t["d"] == d for t in tasks[n]) else "" for d in sizes) + " |")
    txt = txt.replace("{{COSTS}}", "\n".join(cost))
    used = {n: sum(t["seconds"] for t in tasks[n]) / 60 for n in found}
    txt = txt.replace("{{COMPUTE}}", ", ".join(f"{LABELS[n][0]} {m:.1f}" for n, m in used.items()) +
                      f" (total {sum(used.values()):.0f} core-minutes, {sum(len(tasks[n]) for n in found)} networks)")
    for p in points:            # single cells quoted in the text: {{name.variant}} (paired), {{name.variant.unpaired}}
        for key, *_ in VARIANTS:
            v = p["variants"][key]
            for kind in ("paired", "anchored", "unpaired"):
                txt = txt.replace("{{%s.%s.%s}}" % (p["name"], key, kind), cell(v[kind]))
            txt = txt.replace("{{%s.%s.shift}}" % (p["name"], key), f"{v['shift_percent']:+.2f} %")
        # {{name.separates}}: can this point's paired fits tell Result 3.3 from the row-norm theory?
        det = max(p["variants"]["uncorrected"][k]["detectable_percent"] for k in ("paired", "anchored"))
        sh = abs(p["variants"]["corrected"]["shift_percent"])
        def where(key, p=p):
            out = [p["variants"][key][k]["status"] == "outside" for k in ("paired", "anchored")]
            return "outside in both" if all(out) else "inside in both" if not any(out) else "outside in one"
        txt = txt.replace("{{%s.separates}}" % p["name"], (
            f"Result 3.3 is {where('uncorrected')} paired estimates and the row-norm theory {where('corrected')}; "
            f"their detectable gaps (up to {det:.1f} %) are " + (
                f"larger than the row-norm shift ({sh:.2f} %), so a study of this size tells the two theories apart "
                "with less than 80 % power" if det > sh else f"below the row-norm shift ({sh:.2f} %), so a study of "
                "this size tells the two theories apart with at least 80 % power")))
    left = [t for t in txt.split("{{")[1:]]
    if left:
        print("placeholders without a value (their point has not run):", sorted({t.split("}}")[0] for t in left}))
    PAGE.write_text(txt)
    update_map(points)
    print(verdicts)


if __name__ == "__main__":
    main()
