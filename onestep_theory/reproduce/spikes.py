"""Experiments 1–3 of the reproduction: the spike theory of [MLHD23] (docs/theory/spike-theory.md §6–9)."""

from __future__ import annotations

import warnings

import numpy as np

from .output import write_table, z_score

__all__ = ["exp_resolvent", "exp_training_gain", "exp_test_gain"]


def exp_resolvent(S, seed, out, plt, log):
    from ..spikes.resolvent import resolvent
    from ..simulate import sim_resolvent

    lams = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0]
    sim = sim_resolvent("tanh", n=S["res_n"], phi=1, psi=2, lam=lams, reps=S["res_reps"], seed=seed)
    rows = []
    for lv in lams:
        th = resolvent("tanh", 1, 2, repr(lv))
        for key in ("m1", "m2"):
            st = sim[f"{key}@{lv:g}"]
            rows.append(dict(lam=lv, quantity=key, theory=float(getattr(th, key)), sim_mean=st.mean, sim_se=st.se,
                             z=z_score(st.mean, st.se, float(getattr(th, key)))))
    write_table(out, "exp1_resolvent", rows, {"params": sim.params})
    if plt:
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        grid = np.geomspace(0.03, 3, 60)
        from ..spikes.resolvent import resolvent_sweep
        from ..hermite.activation import Activation

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
    text = (f"Theory (docs/theory/spike-theory.md §6, quartic root + Newton) against the traces of §9.4 at n = {S['res_n']}, "
            f"d = {S['res_n']}, N = {S['res_n'] // 2} ({S['res_reps']} repetitions). Largest gap {relmax:.2e} "
            f"relative, {zmax:.2f} standard errors. The traces fluctuate by O(1/n), so agreement is at the "
            f"3-4 digit level.")
    return dict(name="Resolvent traces m1, m2", file="exp1_resolvent", rows=rows, text=text, max_z=zmax)


def exp_training_gain(S, seed, out, plt, log):
    from ..simulate import sim_spikes
    from ..spikes.gains import gains, window_bounds

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
    write_table(out, "exp2_training_gain", rows, {"plateaus": res, "student": "relu_centered", "phi": 0.5, "psi": 0.5,
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
            f"docs/theory/spike-theory.md §9.2 expects ~15 %), so the gains rise smoothly across the window edges instead of "
            f"jumping; this is the expected finite-n behaviour, not a 3-standard-error test.")
    return dict(name="Training-loss gain across the alpha windows", file="exp2_training_gain", rows=rows, text=text,
                max_z=float("nan"))


def exp_test_gain(S, seed, out, plt, log):
    from ..simulate import sim_spike_model
    from ..spikes.gains import gains

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
                             z=z_score(st.mean, st.se, float(th)),
                             z_printed=None if prn is None else z_score(st.mean, st.se, float(prn))))
    write_table(out, "exp3_test_gain", rows, {"phi": 0.5, "psi": 0.5, "lam": 0.1, "n": S["b_n"]})
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


