"""Experiments 4–6 of the reproduction: the spiked random-features theory of [CPDKLZL24]
(docs/theory/srf-theory.md §4–7, §10)."""

from __future__ import annotations


import numpy as np

from .output import write_table, z_score

__all__ = ["exp_srf_curves", "exp_bounds", "exp_spectrum"]


def exp_srf_curves(S, seed, out, plt, log):
    from ..srf.optimal.bounds import best_linear
    from ..srf.features.mapping import srf_params
    from ..simulate import sim_giant_step, sim_srf
    from ..srf import srf_curve

    cases = {"A": ("tanh", "sin", 20, 3), "B": ("tanh", "tanh", 0.5, 1)}
    rows = []
    curves = {}
    for tag, (st_, te, a0, eta) in cases.items():
        p = srf_params(st_, te, repr(a0), repr(eta))
        r, c, g = p.floats()
        alphas = list(np.linspace(0.2, 3, S["srf_curve"]))
        sols = srf_curve(st_, te, alphas, r=r, c=c, gamma=g, beta=1, lam=0.1)
        curves[tag] = dict(alpha=alphas, test_error=[float(s.test_error) for s in sols], best_linear=float(best_linear(te)),
                           r=r, c=c, gamma=g)
        for a in S["srf_alphas_sim"]:
            log(f"exp4 case {tag} alpha={a}")
            th = float(srf_curve(st_, te, [a], r=r, c=c, gamma=g, beta=1, lam=0.1)[0].test_error)
            s1 = sim_srf(st_, te, S["srf_d"], r=r, c=c, gamma=g, alpha=a, beta=1, lam=0.1, n_test=S["n_test"],
                         reps=S["srf_reps"], seed=seed)["test_error"]
            s2 = sim_giant_step(st_, te, S["srf_d"], alpha0=a0, eta=eta, alpha=a, beta=1, lam=0.1,
                                n_test=S["n_test"], reps=S["srf_reps"], seed=seed)["test_error"]
            rows.append(dict(case=tag, alpha=a, theory=th, srf_mean=s1.mean, srf_se=s1.se, z_srf=z_score(s1.mean, s1.se, th),
                             net_mean=s2.mean, net_se=s2.se, net_rel_gap=s2.mean / th - 1,
                             z_net=z_score(s2.mean, s2.se, th)))
    write_table(out, "exp4_srf_curves", rows, {"curves": curves, "beta": 1, "lam": 0.1, "d": S["srf_d"]})
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
            f"of the step treated as an isotropic bulk). docs/theory/srf-theory.md §10.4 quotes the network 0.5-4 % *above* "
            f"theory at d = 2000; gaps of a few % of either sign are that approximation's finite-d error, and a "
            f"consistent sign opposite to the spec's (network below theory) is reported here as measured, not "
            f"explained. Feature "
            f"learning shows as test errors below the best linear baseline "
            f"({curves['A']['best_linear']:.4f} for sin, {curves['B']['best_linear']:.4f} for tanh).")
    return dict(name="sRF learning curves (cases A and B)", file="exp4_srf_curves", rows=rows, text=text,
                max_z=max(zs) if zs else float("nan"))


def exp_bounds(S, seed, out, plt, log):
    from ..srf.optimal.bounds import bounds, best_linear
    from ..srf import srf_solve
    from ..core.exact import binary_exact

    etas = list(np.linspace(0.05, 8, S["bnd_eta"]))
    lams = np.geomspace(1e-3, 1e6, 19)
    rows = []
    for e in etas:
        b = bounds("tanh", "sin", alpha0="inf", eta=binary_exact(e))
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
    write_table(out, "exp5_bounds", rows, {"optimized": opt.to_dict(), "best_linear": float(best_linear("sin")), "alpha": 2,
                                      "beta": 1, "alpha0": "inf"})
    if plt:
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        ax.plot(etas, [r["upper"] for r in rows], label="upper bound (26)")
        ax.plot(etas, [r["lower"] for r in rows], label="lower bound (27)")
        ax.plot(etas, [r["best_lambda_error"] for r in rows], "o", ms=3, label="min over lambda of eps_g (alpha=2)")
        ax.axhline(float(best_linear("sin")), ls="--", color="0.5", label="best linear")
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
    from ..srf.features.mapping import srf_params
    from ..simulate import sim_spectrum
    from ..srf.spectral.spectrum import density, mean_spike, stieltjes

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
    write_table(out, "exp6_spectrum", rows, {"x": xs.tolist(), "density": dens.tolist(), "d": d, "alpha": 2, "beta": 1,
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
            f"z = -lambda (the most robust check, docs/theory/srf-theory.md §10.3): relative gaps "
            f"{st_gaps} (spec: 0.2-0.4 % at d = 1500). Mean "
            f"spike: simulated {st.mean:.2f} against n E mu0^2 = {spike:.2f} ({100 * rows[-1]['rel_gap']:+.1f} %; "
            f"spec: about 3 %).")
    return dict(name="Feature spectrum", file="exp6_spectrum", rows=rows, text=text, max_z=float("nan"),
                max_rel_gap=max(gaps))


