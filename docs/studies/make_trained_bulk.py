"""Writes docs/studies/trained-bulk.md's tables from the stored outputs (no simulation): the case-B network study
(caseB_network.json, docs/studies/finite-size.md: 144 networks, d = 250..4000) against Result 3.3 and against the
trained-bulk option (docs/theory/trained-bulk.md), the same study's paired F1 on each network's own trained bulk as
the F1 cross-check, and the unpaired F1 on sampled trained bulks (trained_bulk/f1_caseB.json, check_f1.py).
Usage: python docs/studies/make_trained_bulk.py  (prints the markdown tables)."""
import json
import math
import pathlib

from onestep_theory.srf.single.solve import srf_solve
from onestep_theory.study.fit import extrapolate

HERE = pathlib.Path(__file__).parent
net = json.load(open(HERE / "caseB_network.json"))
kw = dict(alpha0="1/2", eta=1, alpha=3, beta=1, lam="0.1")
t33 = srf_solve("tanh", "tanh", **kw)
tr = srf_solve("tanh", "tanh", spectrum="trained", **kw)
shift = float(tr.test_error - t33.test_error)
th = float(t33.test_error)
assert abs(th - net["theory"]) < 1e-12
print(f"Result 3.3: {t33.test_error}; trained bulk: {tr.test_error}; shift {100 * shift / th:+.3f} % "
      f"(errors {t33.abs_error:.1e}, {tr.abs_error:.1e})\n")
S = net["comparisons"]
ds = [s["d"] for s in S["theory"]["sizes"]]
reps = [s["reps"] for s in net["sizes"]]
gap = [s["gap"] for s in S["theory"]["sizes"]]
se = [s["se"] for s in S["theory"]["sizes"]]
# F1 on each network's own trained bulk (at its measured r, c, gamma) minus Result 3.3, per size: network - theory
# minus the paired network - F1; its error: the network's (unpaired) and the paired error added in quadrature
f1 = [g - s["gap"] for g, s in zip(gap, S["f1"]["sizes"])]
f1se = [math.hypot(a, s["se"]) for a, s in zip(se, S["f1"]["sizes"])]
pc = lambda v: 100 * v / th  # noqa: E731
print("| comparison | " + " | ".join(f"d = {d} ({r})" for d, r in zip(ds, reps)) + " |")
print("|---|" + "---|" * len(ds))
print("| network − Result 3.3 | " + " | ".join(f"{pc(g):+.2f} ± {pc(s):.2f}" for g, s in zip(gap, se)) + " |")
print("| network − trained bulk | " + " | ".join(f"{pc(g - shift):+.2f} ± {pc(s):.2f}" for g, s in zip(gap, se))
      + " |")
print("| F1 on the network's own bulk − Result 3.3 | " + " | ".join(f"{pc(g):+.2f} ± {pc(s):.2f}"
                                                                   for g, s in zip(f1, f1se)) + " |")
print(f"\ntrained bulk − Result 3.3: {pc(shift):+.2f} (theory, error < 1e-10 %)\n")
print("| quantity | exponents | g∞ (% of Result 3.3) | χ²/ν | detectable gap (%) | the compared theory in the 95 % interval |")
print("|---|---|---|---|---|---|")
for name, g, s in (("network − Result 3.3", gap, se), ("network − trained bulk", [x - shift for x in gap], se),
                   ("F1 on own bulk − trained bulk", [x - shift for x in f1], f1se)):
    for ex in ((1.0,), (0.5,), (0.5, 1.0)):
        f = extrapolate(ds, g, s, exponents=ex, reps=reps, scale=th)
        ver = {"inside": "inside", "underpowered": "inside, underpowered", "outside": "**outside**"}.get(
            f.status, f.status)
        print(f"| {name} | {', '.join(f'{e:g}' for e in ex)} | {f.g_inf_pct:+.2f} ± {f.se_pct:.2f} | "
              f"{f.chi2:.1f}/{f.dof} | {f.detectable_gap_pct:.1f} | {ver} |")
p = HERE / "trained_bulk" / "f1_caseB.json"
if p.exists():
    r = json.load(open(p))
    print("\nUnpaired F1 on sampled trained bulks at Result 3.1's (r, c, γ) (check_f1.py), % of Result 3.3:")
    print("| d (seeds) | " + " | ".join(f"{d} ({len(v['values'])})" for d, v in r["sizes"].items()) + " | d → ∞ (1/d) |")
    print("|---|" + "---|" * (len(r["sizes"]) + 1))
    e = r["extrapolated"]
    print("| F1 − Result 3.3 | " + " | ".join(f"{pc(v['mean'] - th):+.2f} ± {pc(v['se']):.2f}"
                                            for v in r["sizes"].values())
          + f" | {pc(e['value'] - th):+.2f} ± {pc(e['se']):.2f} (χ² {e['chi2']:.1f}/{e['dof']}) |")
