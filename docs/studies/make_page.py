"""Writes docs/studies/finite-size.md from the study JSON files (every number copied by this script)."""
import json, sys, pathlib
S = pathlib.Path(sys.argv[1]); out = pathlib.Path(sys.argv[2])
def load(n): return json.load(open(S / n))
def rows(d):
    th = d["theory"]; lines = []
    for name, comp in d["comparisons"].items():
        label = {"theory": "network − theory" if d["protocol"] == "giant-step" else "direct sRF − theory", "f1": "network − F1 theory on its own weights (paired)",
                 "measured": "network − theory at its measured (r, c, γ) (paired)"}[name]
        cells = [f"{100*r['relative_gap']:+.2f} ± {100*r['se']/th:.2f}" for r in comp["sizes"]]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines
def fits(tag, files):
    # the stored per-size gaps refitted by the package's extrapolate (as `study --resume` would): the verdict with
    # the t interval on its degrees of freedom and the smallest gap the study could detect (docs/theory/numerics.md §8)
    from onestep_theory.study import extrapolate
    lines = []
    for ex, f in files:
        d = load(f); th = d["theory"]
        for name, comp in d["comparisons"].items():
            t = comp["sizes"]
            ff = extrapolate([r["d"] for r in t], [r["gap"] for r in t], [r["se"] for r in t],
                             tuple(comp["fit"]["exponents"]), reps=[r["reps"] for r in t], scale=th)
            status = {"outside": "**outside**", "inside": "inside", "underpowered": "inside, underpowered"}[ff.status]
            lines.append(f"| {tag} | {name} | {ex} | {ff.g_inf_pct:+.2f} ± {ff.se_pct:.2f} | {ff.chi2:.1f}/{ff.dof} | "
                         f"{ff.nu:.0f} | {ff.detectable_gap_pct:.1f} | {status} |")
    return lines
def head(d):
    return "| comparison | " + " | ".join(f"d = {r['d']} ({r['reps']} seeds)" for r in d["comparisons"]["theory"]["sizes"]) + " |\n|---|" + "---|" * len(d["comparisons"]["theory"]["sizes"])
A, As, B, Bs = load("caseA_network.json"), load("caseA_srf.json"), load("caseB_network.json"), load("caseB_srf.json")
txt = open(S / "page_template.md").read()
txt = txt.replace("{{A_THEORY}}", f"{A['theory']:.10f}").replace("{{B_THEORY}}", f"{B['theory']:.10f}")
txt = txt.replace("{{A_TABLE}}", head(A) + "\n" + "\n".join(rows(A) + rows(As)))
txt = txt.replace("{{B_TABLE}}", head(B) + "\n" + "\n".join(rows(B) + rows(Bs)))
fl = ["| case | comparison | exponents | g∞ − theory (% of theory) | χ²/ν | dof of the error | smallest detectable gap (%) | "
      "theory in the 95 % interval |", "|---|---|---|---|---|---|---|---|"]
fl += fits("A network", [("½, 1", "caseA_network.json"), ("1", "caseA_network_e1.json"), ("½", "caseA_network_e05.json")])
fl += fits("A sRF", [("½, 1", "caseA_srf.json"), ("1", "caseA_srf_e1.json")])
fl += fits("B network", [("½, 1", "caseB_network.json"), ("1", "caseB_network_e1.json"), ("½", "caseB_network_e05.json")])
fl += fits("B sRF", [("½, 1", "caseB_srf.json"), ("1", "caseB_srf_e1.json")])
txt = txt.replace("{{FITS}}", "\n".join(fl))
out.write_text(txt)
print(txt[:3000])
