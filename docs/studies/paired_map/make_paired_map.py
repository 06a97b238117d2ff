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
import sys

from onestep_theory.srf import srf_solve

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
    sol = srf_solve(p.pop("student"), p.pop("teacher"), **p, tol=1e-12, **opts)
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


def point(name, res):
    """The four variants' theory values and their paired and unpaired verdicts at one point."""
    th0 = res["theory"]
    out = {"name": name, "label": LABELS[name][0], "params": {k: res["params"][k] for k in MODEL},
           "sizes": [r["d"] for r in res["comparisons"]["theory"]["sizes"]],
           "seeds": [r["reps"] for r in res["comparisons"]["theory"]["sizes"]], "variants": {}}
    unpaired = res["comparisons"]["theory"]
    for key, ref, opts, label in VARIANTS:
        th, err = theory(res["params"], opts)
        c = res["comparisons"][ref]
        pv = verdict(c["fit"])
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
            "label": label, "theory": th, "theory_error": err, "shift_percent": pct(shift, th0), "paired": pv,
            "unpaired": uv,
            "per_size": [{"d": r["d"], "gap_percent": pct(r["gap"], th0), "se_percent": pct(r["se"], th0),
                          "reps": r["reps"], **({"missing": r["missing"]} if "missing" in r else {})}
                         for r in c["sizes"]]}
    return out


def cell(v):
    if v is None:
        return "no fit"
    status = {"inside": "inside", "underpowered": "inside, underpowered", "outside": "**outside**",
              "no verdict": "no verdict"}[v["status"]]
    return f"{v['g_inf_percent']:+.2f} ± {v['se_percent']:.2f} ({v['detectable_percent']:.1f}; {status})"


def tables(points):
    head = ["| point (sizes; seeds) | theory | ε_g (d → ∞) | − Result 3.3 | paired g∞ ± SE (detectable; verdict) "
            "| χ²/ν | unpaired g∞ ± SE (detectable; verdict) |", "|---|---|---|---|---|---|---|"]
    rows = []
    for p in points:
        where = f"{p['label']} ({', '.join(map(str, p['sizes']))}; {', '.join(map(str, p['seeds']))})"
        for key, *_ in VARIANTS:
            v = p["variants"][key]
            pv = v["paired"]
            chi = f"{pv['chi2']:.1f}/{pv['dof']}" if pv else ""
            rows.append(f"| {where} | {v['label']} | {v['theory']:.8f} | {v['shift_percent']:+.2f} | {cell(pv)} | "
                        f"{chi} | {cell(v['unpaired'])} |")
            where = ""
    sizes = []
    for p in points:
        sizes += [f"\n**{p['label']}** — network − theory at the network's measured parameters, per size "
                  "(% of Result 3.3):\n", "| theory | " + " | ".join(f"d = {d} ({n})" for d, n in
                                                                       zip(p["sizes"], p["seeds"])) + " |",
                  "|---|" + "---|" * len(p["sizes"])]
        for key, *_ in VARIANTS:
            v = p["variants"][key]
            sizes.append(f"| {v['label']} | " + " | ".join(
                f"{r['gap_percent']:+.2f} ± {r['se_percent']:.2f}" + (f" ({r['missing']} missing)"
                                                                     if r.get("missing") else "")
                for r in v["per_size"]) + " |")
    return "\n".join(head + rows), "\n".join(sizes)


def update_map(points):
    """Adds each point's four theory values and verdicts to the map entry of the same setting (a new entry for a
    point the d = 1000 map has not, with its d = 1000 unpaired gap from this study)."""
    m = json.loads(PKG.read_text())
    for p in points:
        setting = LABELS[p["name"]][1]
        e = next((e for e in m["entries"] if e["setting"] == setting), None)
        if e is None:
            res = json.loads((HERE / f"paired_{p['name']}.json").read_text())
            row = next((r for r in res["comparisons"]["theory"]["sizes"] if r["d"] == 1000), None)
            if row is None:
                continue
            e = {"setting": setting, "params": {k: str(float(v)) if not isinstance(v, str) else v
                                                for k, v in p["params"].items()},
                 "d": 1000, "seeds": row["reps"], "theory": p["variants"]["uncorrected"]["theory"],
                 "theory_corrected": p["variants"]["corrected"]["theory"], "network_minus_theory": row["gap"],
                 "se": row["se"]}
            m["entries"].append(e)
        e["theory_trained"] = p["variants"]["trained"]["theory"]
        e["theory_both"] = p["variants"]["both"]["theory"]
        e["paired"] = {"sizes": p["sizes"], "seeds": p["seeds"], "fit": "g_inf + a/d, weighted",
                       "source": "docs/studies/paired-map.md",
                       **{key: p["variants"][key]["paired"] for key, *_ in VARIANTS}}
    m["paired_source"] = "docs/studies/paired-map.md (paired_map/run_paired_map.py, make_paired_map.py)"
    PKG.write_text(json.dumps(m, indent=1) + "\n")


def main():
    run = pathlib.Path(sys.argv[1])
    points = []
    for name in LABELS:
        f = run / f"paired_{name}.json"
        if f.exists():
            if f.resolve() != (HERE / f.name).resolve():
                shutil.copy(f, HERE / f.name)
            points.append(point(name, json.loads(f.read_text())))
    (HERE / "paired_map_summary.json").write_text(json.dumps(points, indent=1) + "\n")
    verdicts, per_size = tables(points)
    txt = (HERE / "paired-map_template.md").read_text()
    txt = txt.replace("{{VERDICTS}}", verdicts).replace("{{PER_SIZE}}", per_size)
    for p in points:            # single cells quoted in the text: {{name.variant}} (paired), {{name.variant.unpaired}}
        for key, *_ in VARIANTS:
            v = p["variants"][key]
            txt = txt.replace("{{%s.%s}}" % (p["name"], key), cell(v["paired"]))
            txt = txt.replace("{{%s.%s.unpaired}}" % (p["name"], key), cell(v["unpaired"]))
            txt = txt.replace("{{%s.%s.shift}}" % (p["name"], key), f"{v['shift_percent']:+.2f} %")
    left = [t for t in txt.split("{{")[1:]]
    if left:
        print("placeholders without a value (their point has not run):", sorted({t.split("}}")[0] for t in left}))
    PAGE.write_text(txt)
    update_map(points)
    print(verdicts)


if __name__ == "__main__":
    main()
