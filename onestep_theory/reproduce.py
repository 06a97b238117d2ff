"""``onestep-theory reproduce``: regenerate the key curves of [MLHD23] and [CPDKLZL24].

Six experiments, each with theory lines, simulation points (mean ± standard error), a table
(CSV and JSON) and, with matplotlib installed (the ``plot`` extra), a PNG:

1. resolvent traces m1, m2 over λ: theory against simulated traces (spike-theory.md §6, §9.4);
2. training-loss gain against α = log η / log n for Settings 1 and 2 (protocol A), with the windows
   and the Δ_ℓ plateaus (spike-theory.md §§5, 7, 9.2);
3. test-error gain Λ1, Λ2: corrected form, printed form and protocol B-limit simulation (§8);
4. sRF learning curves over α for the reference cases A and B (srf-theory.md §11.2), with direct
   sRF and full-network simulation points and the best linear baseline (§4, §10);
5. bounds (26)/(27) against η̃ with the λ-optimised test error (§6);
6. feature spectrum: histogram of simulated eigenvalues against the theory density (§7).

``report.md`` says for every experiment what theory predicts and what simulation measured.
"""

from __future__ import annotations

import csv
import json
import pathlib
import sys
import time
import warnings

import numpy as np

from .cli import _int_in, command, output_dir
from .results import serialize

__all__ = ["SIZES", "run"]

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


class _Log:
    def __init__(self, quiet):
        self.quiet = quiet
        self.t0 = time.perf_counter()

    def __call__(self, msg):
        if not self.quiet:
            print(f"[reproduce {time.perf_counter() - self.t0:6.1f} s] {msg}", file=sys.stderr, flush=True)


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        return None


def _write(out: pathlib.Path, name: str, rows: list, extra: dict):
    if rows:
        with open(out / f"{name}.csv", "w", newline="") as fh:
            keys = list(dict.fromkeys(k for r in rows for k in r))
            wr = csv.DictWriter(fh, fieldnames=keys)
            wr.writeheader()
            wr.writerows(rows)
    (out / f"{name}.json").write_text(json.dumps(serialize({"rows": rows, **extra}), indent=1))


def _z(sim_mean, sim_se, theory):
    return (sim_mean - theory) / sim_se if sim_se and sim_se > 0 else float("nan")


# --------------------------------------------------------------------------- experiments
def exp_resolvent(S, seed, out, plt, log):
    from .resolvent import resolvent
    from .simulate import sim_resolvent

    lams = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
    sim = sim_resolvent("tanh", n=S["res_n"], phi=1, psi=2, lam=lams, reps=S["res_reps"], seed=seed)
    rows = []
    for lv in lams:
        th = resolvent("tanh", 1, 2, repr(lv))
        for key in ("m1", "m2"):
            st = sim[f"{key}@{lv:g}"]
            rows.append(dict(lam=lv, quantity=key, theory=float(getattr(th, key)), sim_mean=st.mean, sim_se=st.se,
                             z=_z(st.mean, st.se, float(getattr(th, key)))))
    _write(out, "exp1_resolvent", rows, {"params": sim.params})
    if plt:
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        grid = np.geomspace(0.03, 3, 60)
        from .resolvent import resolvent_sweep
        from .hermite import Activation

        act = Activation.from_any("tanh")
        m1, m2, *_ = resolvent_sweep(1.0, 2.0, grid, float(act.coeff(1, 17)), float(act.c_gt1(17)))
        ax.plot(grid, m1, label="m1 theory")
        ax.plot(grid, m2, label="m2 theory")
        for key, mk in (("m1", "o"), ("m2", "s")):
            r = [x for x in rows if x["quantity"] == key]
            ax.errorbar([x["lam"] for x in r], [x["sim_mean"] for x in r], yerr=[x["sim_se"] for x in r], fmt=mk,
                        label=f"{key} simulation")
        ax.set_xscale("log")
        ax.set_xlabel("lambda")
        ax.set_title("Resolvent traces, tanh, phi=1, psi=2")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "exp1_resolvent.png", dpi=120)
        plt.close(fig)
    zmax = max(abs(r["z"]) for r in rows)
    relmax = max(abs(r["sim_mean"] / r["theory"] - 1) for r in rows)
    text = (f"Theory (spike-theory.md §6, quartic root + Newton) against the traces of §9.4 at n = {S['res_n']}, "
            f"d = {S['res_n']}, N = {S['res_n'] // 2} ({S['res_reps']} repetitions). Largest gap {relmax:.2e} "
            f"relative, {zmax:.2f} standard errors. The traces fluctuate by O(1/n), so agreement is at the "
            f"3-4 digit level.")
    return dict(name="Resolvent traces m1, m2", file="exp1_resolvent", rows=rows, text=text, max_z=zmax)


def exp_training_gain(S, seed, out, plt, log):
    from .simulate import sim_spikes
    from .spikes import gains, window_bounds

    res = {}
    rows = []
    for tag, teacher, nv in (("setting1", "He1", 1.0), ("setting2", "He1 + He2/sqrt(2)", 0.0)):
        plateaus = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for ell in range(1, 5):
                g = gains("relu_centered", teacher, "1/2", "1/2", "1/10", ell=ell, noise_var=repr(nv),
                          absent_spikes="drop")
                plateaus.append(float(g.delta[-1]))
        for a in S["a_alphas"]:
            log(f"exp2 {tag} alpha={a}")
            sim = sim_spikes("relu_centered", teacher, n=S["a_n"], d=S["a_n"] // 2, N=S["a_n"], lam=0.1, alpha=a,
                             noise_var=nv, reps=S["a_reps"], seed=seed, n_test=S["a_n"])
            st = sim["train_gain"]
            w = next((l for l in range(1, 5) if float(window_bounds(l)[0]) < a < float(window_bounds(l)[1])), None)
            th = plateaus[w - 1] if w else float("nan")
            rows.append(dict(setting=tag, alpha=a, window=w, theory_plateau=th, sim_mean=st.mean, sim_se=st.se))
        res[tag] = plateaus
    _write(out, "exp2_training_gain", rows, {"plateaus": res, "student": "relu_centered", "phi": 0.5, "psi": 0.5,
                                             "lam": 0.1, "n": S["a_n"]})
    if plt:
        fig, axs = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
        for ax, tag in zip(axs, ("setting1", "setting2")):
            for ell in range(1, 5):
                lo, hi = (float(v) for v in window_bounds(ell))
                ax.hlines(res[tag][ell - 1], lo, hi, colors="C0", label="Delta_l plateau" if ell == 1 else None)
                ax.axvline(hi, color="0.8", lw=0.8)
            r = [x for x in rows if x["setting"] == tag]
            ax.errorbar([x["alpha"] for x in r], [x["sim_mean"] for x in r], yerr=[x["sim_se"] or 0 for x in r],
                        fmt="o", color="C1", label=f"network, n={S['a_n']}")
            ax.set_xlabel("alpha = log eta / log n")
            ax.set_title(tag)
        axs[0].set_ylabel("L_tr(F0) - L_tr(F)")
        axs[0].legend()
        fig.tight_layout()
        fig.savefig(out / "exp2_training_gain.png", dpi=120)
        plt.close(fig)
    inside = [r for r in rows if r["window"]]
    rel = [abs(r["sim_mean"] / r["theory_plateau"] - 1) for r in inside if r["theory_plateau"] > 0]
    text = (f"Full non-linear network (protocol A, centred ReLU, phi = psi = 1/2, lambda = 0.1, n = {S['a_n']}). "
            f"Theory plateaus Setting 1: {', '.join(f'{v:.4f}' for v in res['setting1'])} (flat: no non-linear "
            f"feature in a linear teacher); Setting 2: {', '.join(f'{v:.4f}' for v in res['setting2'])} "
            f"(staircase: the quadratic spike enters at alpha = 1/4; c_3 = 0 for ReLU, so the cubic spike is absent). "
            f"Inside the windows the simulated gains are within {100 * max(rel):.0f} % of the plateaus at most. "
            f"Protocol A converges slowly in n (the spike-to-bulk ratio grows only as a power of n; "
            f"spike-theory.md §9.2 expects ~15 %), so the gains rise smoothly across the window edges instead of "
            f"jumping; this is the expected finite-n behaviour, not a 3-standard-error test.")
    return dict(name="Training-loss gain across the alpha windows", file="exp2_training_gain", rows=rows, text=text,
                max_z=float("nan"))


def exp_test_gain(S, seed, out, plt, log):
    from .simulate import sim_spike_model
    from .spikes import gains

    rows = []
    cases = (("tanh", "He1", 1.0, 1), ("relu_centered", "He1 + He2/sqrt(2)", 0.0, 2))
    for student, teacher, nv, ell in cases:
        log(f"exp3 {student} ell={ell}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = gains(student, teacher, "1/2", "1/2", "1/10", ell=ell, noise_var=repr(nv))
            gs = gains(student, teacher, "1/2", "1/2", "1/10", ell=ell, noise_var=repr(nv), test_form="slide")
        sim = sim_spike_model(student, teacher, n=S["b_n"], phi=0.5, psi=0.5, lam=0.1, ell=ell, noise_var=nv,
                              reps=S["b_reps"], seed=seed)
        for key, th, prn in (("lambda_test", g.lambda_test[-1], gs.lambda_test[-1]), ("delta", g.delta[-1], None)):
            st = sim[key]
            rows.append(dict(student=student, teacher=teacher, ell=ell, quantity=key, theory=float(th),
                             printed=None if prn is None else float(prn), sim_mean=st.mean, sim_se=st.se,
                             z=_z(st.mean, st.se, float(th)),
                             z_printed=None if prn is None else _z(st.mean, st.se, float(prn))))
    _write(out, "exp3_test_gain", rows, {"phi": 0.5, "psi": 0.5, "lam": 0.1, "n": S["b_n"]})
    if plt:
        fig, ax = plt.subplots(figsize=(6, 3.8))
        lab = [f"{r['quantity']}\n{r['student']}, l={r['ell']}" for r in rows]
        xs = np.arange(len(rows))
        ax.bar(xs - 0.2, [r["theory"] for r in rows], 0.4, label="theory (corrected)")
        ax.errorbar(xs + 0.2, [r["sim_mean"] for r in rows], yerr=[2 * (r["sim_se"] or 0) for r in rows], fmt="o",
                    color="C1", label="simulation (B-limit), 2 s.e.")
        ax.set_xticks(xs, lab, fontsize=7)
        ax.set_title("Gains; printed Lambda: " + ", ".join(f"{r['printed']:.3f}" for r in rows if r["printed"]))
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "exp3_test_gain.png", dpi=120)
        plt.close(fig)
    zs = [abs(r["z"]) for r in rows]
    lam_rows = [r for r in rows if r["quantity"] == "lambda_test"]
    text = (f"Gaussian-equivalent spike model (protocol B-limit, n = {S['b_n']}, {S['b_reps']} repetitions). "
            + "; ".join(f"{r['student']} l={r['ell']}: Lambda corrected {r['theory']:.4f}, printed {r['printed']:.4f}, "
                        f"simulated {r['sim_mean']:.4f} ± {r['sim_se']:.4f} ({r['z']:+.1f} s.e. from corrected, "
                        f"{r['z_printed']:+.0f} s.e. from printed)" for r in lam_rows)
            + f". Largest gap of the corrected theory (Lambda and Delta): {max(zs):.1f} standard errors; the spec "
              f"reports 5-10 % finite-n agreement for Lambda. The printed form exceeds the largest possible gain.")
    return dict(name="Test-error gains Lambda_1, Lambda_2", file="exp3_test_gain", rows=rows, text=text,
                max_z=max(zs))


def exp_srf_curves(S, seed, out, plt, log):
    from .bounds import best_linear
    from .mapping import srf_params
    from .simulate import sim_giant_step, sim_srf
    from .srf import srf_curve

    cases = {"A": ("tanh", "sin", 20, 3), "B": ("tanh", "tanh", 0.5, 1)}
    rows = []
    curves = {}
    for tag, (st_, te, a0, eta) in cases.items():
        p = srf_params(st_, te, repr(a0), repr(eta))
        r, c, g = p.floats()
        alphas = list(np.linspace(0.2, 3, S["srf_curve"]))
        sols = srf_curve(st_, te, alphas, r=r, c=c, gamma=g, beta=1, lam=0.1)
        curves[tag] = dict(alpha=alphas, test_error=[float(s.test_error) for s in sols], best_linear=best_linear(te),
                           r=r, c=c, gamma=g)
        for a in S["srf_alphas_sim"]:
            log(f"exp4 case {tag} alpha={a}")
            th = float(srf_curve(st_, te, [a], r=r, c=c, gamma=g, beta=1, lam=0.1)[0].test_error)
            s1 = sim_srf(st_, te, S["srf_d"], r=r, c=c, gamma=g, alpha=a, beta=1, lam=0.1, n_test=S["n_test"],
                         reps=S["srf_reps"], seed=seed)["test_error"]
            s2 = sim_giant_step(st_, te, S["srf_d"], alpha0=a0, eta=eta, alpha=a, beta=1, lam=0.1,
                                n_test=S["n_test"], reps=S["srf_reps"], seed=seed)["test_error"]
            rows.append(dict(case=tag, alpha=a, theory=th, srf_mean=s1.mean, srf_se=s1.se, z_srf=_z(s1.mean, s1.se, th),
                             net_mean=s2.mean, net_se=s2.se, net_rel_gap=s2.mean / th - 1,
                             z_net=_z(s2.mean, s2.se, th)))
    _write(out, "exp4_srf_curves", rows, {"curves": curves, "beta": 1, "lam": 0.1, "d": S["srf_d"]})
    if plt:
        fig, axs = plt.subplots(1, 2, figsize=(10, 3.8))
        for ax, tag in zip(axs, cases):
            cv = curves[tag]
            ax.plot(cv["alpha"], cv["test_error"], label="sRF theory")
            ax.axhline(cv["best_linear"], ls="--", color="0.5", label="best linear")
            r = [x for x in rows if x["case"] == tag]
            ax.errorbar([x["alpha"] for x in r], [x["srf_mean"] for x in r], yerr=[x["srf_se"] or 0 for x in r],
                        fmt="o", label=f"sRF simulation, d={S['srf_d']}")
            ax.errorbar([x["alpha"] + 0.04 for x in r], [x["net_mean"] for x in r], yerr=[x["net_se"] or 0 for x in r],
                        fmt="s", label="network, one giant step")
            ax.set_xlabel("alpha = n/d")
            ax.set_title(f"case {tag}: {cases[tag][0]} / {cases[tag][1]}, alpha0={cases[tag][2]}, eta={cases[tag][3]}")
            ax.legend(fontsize=7)
        axs[0].set_ylabel("test error")
        fig.tight_layout()
        fig.savefig(out / "exp4_srf_curves.png", dpi=120)
        plt.close(fig)
    zs = [abs(r["z_srf"]) for r in rows if r["z_srf"] == r["z_srf"]]
    net = [r["net_rel_gap"] for r in rows]
    text = (f"Result 3.3 (F3, corrected c, spike channel on) against direct sRF ridge simulation at d = p = "
            f"{S['srf_d']} and against the full network after one giant step ({S['srf_reps']} repetitions). "
            f"sRF simulation: largest gap {max(zs) if zs else float('nan'):.1f} standard errors. Network: relative "
            f"gaps {', '.join(f'{100 * r_[0]:+.1f} % ({r_[1]:+.1f} s.e.)' for r_ in zip(net, [r['z_net'] for r in rows]))}"
            f". The sRF simulation on the mapped parameters isolates the saddle point; the network also tests "
            f"the mapping of Result 3.1, an approximation (one bulk variance c for all neurons, the fluctuation part "
            f"of the step treated as an isotropic bulk). srf-theory.md §10.4 quotes the network 0.5-4 % *above* "
            f"theory at d = 2000; gaps of a few % of either sign are that approximation's finite-d error, and a "
            f"consistent sign opposite to the spec's (network below theory) is reported here as measured, not "
            f"explained. Feature "
            f"learning shows as test errors below the best linear baseline "
            f"({curves['A']['best_linear']:.4f} for sin, {curves['B']['best_linear']:.4f} for tanh).")
    return dict(name="sRF learning curves (cases A and B)", file="exp4_srf_curves", rows=rows, text=text,
                max_z=max(zs) if zs else float("nan"))


def exp_bounds(S, seed, out, plt, log):
    from .bounds import bounds, best_linear
    from .srf import srf_solve

    etas = list(np.linspace(0.05, 8, S["bnd_eta"]))
    lams = np.geomspace(1e-3, 1e6, 19)
    rows = []
    for e in etas:
        b = bounds("tanh", "sin", alpha0="inf", eta=repr(float(e)))
        errs = []
        init = None
        for lv in lams[::-1]:
            s = srf_solve("tanh", "sin", r=b.r, c=b.c, gamma=b.gamma, alpha=2, beta=1, lam=float(lv), init=init)
            init = s.state()
            errs.append(float(s.test_error))
        rows.append(dict(eta=float(e), upper=b.upper, lower=b.lower, best_lambda_error=min(errs),
                         best_lambda=float(lams[::-1][int(np.argmin(errs))]),
                         tight_upper=bool(int(np.argmin(errs)) == 0)))
    opt = bounds("tanh", "sin", optimize_eta=True)
    # eps_g(lambda) -> upper bound (26) as lambda -> infinity; at lambda = 1e6 the excess is O(1e-6)/lambda
    viol = [r for r in rows if not (r["lower"] - 1e-9 <= r["best_lambda_error"] <= r["upper"] + 1e-8)]
    _write(out, "exp5_bounds", rows, {"optimized": opt.to_dict(), "best_linear": best_linear("sin"), "alpha": 2,
                                      "beta": 1, "alpha0": "inf"})
    if plt:
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        ax.plot(etas, [r["upper"] for r in rows], label="upper bound (26)")
        ax.plot(etas, [r["lower"] for r in rows], label="lower bound (27)")
        ax.plot(etas, [r["best_lambda_error"] for r in rows], "o", ms=3, label="min over lambda of eps_g (alpha=2)")
        ax.axhline(best_linear("sin"), ls="--", color="0.5", label="best linear")
        ax.set_xlabel("eta~")
        ax.set_yscale("log")
        ax.set_title("tanh student, sin teacher, gamma = 1")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "exp5_bounds.png", dpi=120)
        plt.close(fig)
    text = (f"Bounds (26)/(27) at perfect alignment (gamma = c = 1) for tanh/sin over {len(etas)} values of eta~, "
            f"with the test error minimised over 19 values of lambda in [1e-3, 1e6] at alpha = 2, beta = 1. The "
            f"optimised test error lies between the bounds at {len(rows) - len(viol)}/{len(rows)} points; at "
            f"{sum(r['tight_upper'] for r in rows)} of them the best lambda is the largest one, i.e. the upper bound "
            f"(26) is attained in the limit lambda -> infinity (the test error then decreases monotonically in "
            f"lambda). eta~-optimised (28): upper "
            f"{opt.upper:.5f} at eta~ = {opt.eta_upper:.3f}, lower {opt.lower:.2e} at eta~ = {opt.eta_lower:.3f}; "
            f"best linear {best_linear('sin'):.5f}.")
    return dict(name="Bounds (26)/(27) against the learning rate", file="exp5_bounds", rows=rows, text=text,
                max_z=float("nan"), violations=len(viol))


def exp_spectrum(S, seed, out, plt, log):
    from .mapping import srf_params
    from .simulate import sim_spectrum
    from .spectrum import density, mean_spike, stieltjes

    p = srf_params("tanh", "sin", 20, 3)
    r, c, g = p.floats()
    d = S["spec_d"]
    lams = [0.1, 0.5, 1.0, 3.0]
    sim = sim_spectrum("tanh", d, r=r, c=c, gamma=g, alpha=2, beta=1, lam=lams, reps=2, seed=seed)
    rows = []
    for lv in lams:
        _, V2 = stieltjes("tanh", -lv, r=r, c=c, alpha=2, beta=1)
        st = sim[f"stieltjes@{lv:g}"]
        rows.append(dict(quantity=f"V2({-lv:g})", theory=V2.real, sim_mean=st.mean, sim_se=st.se,
                         rel_gap=st.mean / V2.real - 1))
    spike = mean_spike("tanh", r=r, c=c, alpha=2, d=d)
    st = sim["top_eigenvalue"]
    rows.append(dict(quantity="top eigenvalue", theory=spike, sim_mean=st.mean, sim_se=st.se,
                     rel_gap=st.mean / spike - 1))
    ev = np.array(sim.extra["eigenvalues"][:-1])
    xs = np.linspace(1e-3, float(np.quantile(ev, 0.999)) * 1.1, 160)
    dens = density("tanh", xs, r=r, c=c, alpha=2, beta=1)
    _write(out, "exp6_spectrum", rows, {"x": xs.tolist(), "density": dens.tolist(), "d": d, "alpha": 2, "beta": 1,
                                        "r": r, "c": c})
    if plt:
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        ax.hist(ev, bins=80, density=True, alpha=0.5, label=f"simulated eigenvalues, d=p={d}")
        ax.plot(xs, dens, label="theory density (Im V2 / pi)")
        ax.set_xlabel("eigenvalue of Phi^T Phi / p")
        ax.set_title(f"bulk; top eigenvalue {st.mean:.1f} (theory n E mu0^2 = {spike:.1f})", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "exp6_spectrum.png", dpi=120)
        plt.close(fig)
    gaps = [abs(r_["rel_gap"]) for r_ in rows]
    st_gaps = ", ".join("%+.2f %%" % (100 * r_["rel_gap"]) for r_ in rows[:-1])
    text = (f"Spectrum of Phi^T Phi / p for the sRF of case A at alpha = 2, beta = 1, d = {d}. Stieltjes transform at "
            f"z = -lambda (the most robust check, srf-theory.md §10.3): relative gaps "
            f"{st_gaps} (spec: 0.2-0.4 % at d = 1500). Mean "
            f"spike: simulated {st.mean:.2f} against n E mu0^2 = {spike:.2f} ({100 * rows[-1]['rel_gap']:+.1f} %; "
            f"spec: about 3 %).")
    return dict(name="Feature spectrum", file="exp6_spectrum", rows=rows, text=text, max_z=float("nan"),
                max_rel_gap=max(gaps))


EXPERIMENTS = [exp_resolvent, exp_training_gain, exp_test_gain, exp_srf_curves, exp_bounds, exp_spectrum]


def run(out, mode="quick", seed=0, quiet=False, only=None) -> dict:
    """Run the experiments and write ``report.md``, PNGs, CSV and JSON into *out*; return the summary."""
    from . import __version__

    if mode not in SIZES:
        from .errors import InvalidParameterError

        raise InvalidParameterError("mode", mode, "'smoke', 'quick' or 'full'")
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    S = SIZES[mode]
    plt = _plt()
    log = _Log(quiet)
    t0 = time.perf_counter()
    results = []
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
             f"Sizes: {json.dumps(S)}.", ""]
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
                lines.append("| " + " | ".join(_fmt(row[k]) for k in keys) + " |")
            lines.append("")
    (out / "report.md").write_text("\n".join(lines))
    summary = {"mode": mode, "seed": seed, "seconds": total, "version": __version__,
               "experiments": [{k: v for k, v in r.items() if k not in ("rows", "text")} for r in results]}
    (out / "summary.json").write_text(json.dumps(serialize(summary), indent=1))
    log(f"done: {out / 'report.md'}")
    return summary


def _fmt(v):
    if isinstance(v, float):
        return "nan" if v != v else f"{v:.5g}"
    return "" if v is None else str(v)


def _run_cli(args):
    mode = "full" if args.full else ("smoke" if args.smoke else "quick")
    summary = run(args.out, mode=mode, seed=args.seed, quiet=args.quiet)
    print(f"wrote {pathlib.Path(args.out) / 'report.md'} ({summary['seconds']:.1f} s, mode {mode})")
    return 0


@command("reproduce", "regenerate the papers' key curves: report.md, plots, CSV/JSON (main job)")
def _setup(p):
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="default: under 3 minutes on 2 cores")
    g.add_argument("--full", action="store_true", help="publication sizes (reports its run time)")
    g.add_argument("--smoke", action="store_true", help="tiny sizes for the test suite")
    p.add_argument("--out", default="out", type=output_dir, help="output directory (default out/)")
    p.add_argument("--seed", type=_int_in("--seed", 0, 2**63 - 1), default=0)
    p.add_argument("--quiet", action="store_true")
    return _run_cli
