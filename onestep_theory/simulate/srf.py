r"""Simulation protocols of the spiked random-features theory [CPDKLZL24] (docs/theory/srf-theory.md §10).

* :func:`sim_giant_step` — the full network: one giant step, ridge on fresh data, measured r, c, γ (§10.2);
* :func:`sim_srf` — the spiked random-features ridge directly, with the order parameters (§10.1);
* :func:`sim_spectrum` — eigenvalues of ΦᵀΦ/p, the top (mean) spike and the Stieltjes transform (§10.3);
* :func:`empirical_spectrum` — F1 weights of a sampled bulk for the saddle point (§4.6);
* :func:`sample_bulks` — sampled bulks :math:`(W_0,v,\theta_\perp)` for the finite-W K-group theory (§8).

Every protocol takes ``readout``, the law of :math:`u` in :math:`a^0=u/\sqrt p` (docs/theory/srf-theory.md §8;
:func:`onestep_theory.srf.grouped.readout.readout` parses it): the uniform default reproduces the :math:`a^0=\mathbf 1/\sqrt p`
results bit for bit; a finite support assigns the groups in contiguous blocks (``group_index``).

Theory modules never draw random numbers: every random object of the sRF model is drawn here.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..core.errors import InvalidParameterError
from ..core.exact import check_real
from ..srf.features.mapping import MAX_ETA
from ..core.results import provenance
from ..srf.single.priors import empirical_from_weights
from ..srf.grouped.readout import group_index, group_params
from ..srf.grouped.readout import readout as parse_readout
from .memory import bulks_peak, srf_peak
from .base import (Fn, Ridge, fit_convex, SimulationResult, check_memory, check_reps, collect, lam_grid, nonnegative, positive,
                   readout_loss, report_progress, sizes_srf, spawn, sphere_rows, test_mse, unit_vector)

__all__ = ["sim_giant_step", "sim_srf", "sim_spectrum", "empirical_spectrum", "srf_weights", "ridge_sum",
           "sample_bulks", "norm_shifts"]


def _readout(spec):
    """The checked readout; every uniform spelling ("uniform", "1:1", None) becomes the one uniform readout."""
    rd = parse_readout(spec)
    return parse_readout(None) if rd.is_uniform else rd


def _groups(rd, p):
    """``(labels, bounds)`` of a finite-support readout: group j is the rows ``bounds[j]:bounds[j+1]``
    (``group_index``'s contiguous blocks) and its stat keys end in ``[label]``, the group's value."""
    idx = group_index(rd, p)
    bounds = np.searchsorted(idx, np.arange(rd.K + 1))
    return [str(v) for v in rd.values], [slice(int(bounds[j]), int(bounds[j + 1])) for j in range(rd.K)]


def _step_stats(D, W1, theta):
    """(r, gamma, c) of docs/theory/srf-theory.md §10.2 step 4 for the rows D = W1 - W0 of one set of neurons."""
    dbar = D.mean(axis=0)
    r_hat = float(np.linalg.norm(dbar))
    return {"r": r_hat, "gamma": float(theta @ dbar) / r_hat if r_hat > 0 else 0.0,
            "c": float(np.sum((W1 - dbar) ** 2)) / W1.shape[0]}


def ridge_sum(Phi, y, p, n_lam=1):
    """Readout (4) of docs/theory/srf-theory.md: min sum (y - a^T phi/sqrt p)^2 + lam ||a||^2."""
    return Ridge(Phi / math.sqrt(p), y, n_mu=n_lam)


def sim_giant_step(student, teacher, d, *, alpha0, eta, alpha, beta, lam=0.1, noise_var=0.0, n_test=20000,
                   seed=0, reps=1, batch=4000, progress=None, force=False, readout=None, loss=None,
                   weights_hook=None) -> SimulationResult:
    r"""Full network protocol of docs/theory/srf-theory.md §10.2 (one giant step, ridge on fresh data).

    :math:`W^0` with unit rows, :math:`a^0=u/\sqrt p`, step on :math:`n_0=\alpha_0d`
    samples with :math:`\eta=\tilde\eta p` (row update of §1, the initial output kept), ridge
    (4) with sum loss on :math:`n=\alpha d` fresh samples, test error (5) on ``n_test`` fresh
    points.  Diagnostics: with :math:`\bar\Delta` the mean row of :math:`W^1-W^0`,
    :math:`\hat r=\|\bar\Delta\|`, :math:`\hat\gamma=\theta^\top\bar\Delta/\hat r`,
    :math:`\hat c=\frac1p\sum_i\|w_i^1-\bar\Delta\|^2`.  ``lam`` may be a list (one
    decomposition serves the path).

    ``readout`` (docs/theory/srf-theory.md §8): uniform :math:`u\equiv1` (default); a finite support, group j
    getting ``counts(p)[j]`` neurons in contiguous blocks (no extra random draws), with the diagnostics of each
    group j under the keys ``r[v]``, ``c[v]``, ``gamma[v]`` (v the group's value; :math:`\bar\Delta_j` the
    group's mean row, :math:`\hat c_j` the group's mean of :math:`\|w_i^1-\bar\Delta_j\|^2`), predicted at
    :math:`|v|r`, :math:`1+v^2(c-1)`, :math:`\mathrm{sign}(v)\gamma`; or Gaussian, :math:`u\sim\mathcal N(0,I_p)`
    drawn from the weights stream after :math:`W^0,\theta` (keys ``u_mean``, ``u_std``).  The overall keys
    ``r``, ``c``, ``gamma`` always use the mean row over all neurons.

    ``loss`` (docs/theory/srf-theory.md §4.9): the readout minimises :math:`\sum\ell(y,f)+\frac\lambda2\|a\|^2`
    instead (:func:`~onestep_theory.simulate.base.fit_convex`; one λ); the result then also has
    ``class_error`` (:math:`\mathbb P[\mathrm{sign}f\ne\mathrm{sign}y]` on the test points).

    ``weights_hook(W0, W1, theta)``, if given, is called once per repetition with the first layer before and
    after the step and the teacher direction; the scalars of the dict it returns join that repetition's results
    (a paired comparison on the repetition's own weights, e.g. the F1 theory of docs/theory/numerics.md §8).
    """
    rd = _readout(readout)
    if weights_hook is not None and not callable(weights_hook):
        raise InvalidParameterError("weights_hook", weights_hook, "a callable (W0, W1, theta) -> dict, or None")
    ls = readout_loss(loss, lam, teacher)
    s, t = Fn(student, "student"), Fn(teacher, "teacher")
    n_lam = lam_grid(lam).size
    d, n, p, n0 = sizes_srf(d, alpha=alpha, beta=beta, alpha0=alpha0, force=force, memory=lambda *z: srf_peak(
        "giant-step", *z, kf=s.kf, kd=s.kd, batch=batch, n_test=n_test, n_lam=n_lam, loss=ls is not None,
        hook=weights_hook is not None))
    labels, blocks = _groups(rd, p) if rd.kind == "finite" else ([], [])
    u_groups = np.repeat(np.array(rd.floats()[0]), [b.stop - b.start for b in blocks]) if blocks else None
    lams = lam_grid(lam)
    check_reps(reps)
    eta = float(check_real(eta, "eta", 0, MAX_ETA))      # the theory's range; beyond, the step overflows
    noise_var = nonnegative(noise_var, "noise_var")
    t0, rows = time.perf_counter(), []
    for k, (rw, rtr, rte) in enumerate(spawn(seed, reps)):
        W0 = sphere_rows(rw, p, d)
        theta = unit_vector(rw, d)
        u = rw.standard_normal(p) if rd.kind == "gaussian" else u_groups     # None: uniform
        X0 = rtr.standard_normal((n0, d))
        y0 = t.f(X0 @ theta) + math.sqrt(noise_var) * rtr.standard_normal(n0)
        Z = X0 @ W0.T
        if u is None:
            e = y0 - s.f(Z).sum(axis=1) / p      # f = (1/sqrt p) a^T sigma, a = 1/sqrt p
        else:
            e = y0 - (s.f(Z) @ u) / p            # f = (1/p) sum_i u_i sigma(w_i . x)
        M = s.df(Z)
        del Z
        M *= e[:, None]
        if u is not None:
            M *= u[None, :]
        W1 = W0 + (eta / n0) * (M.T @ X0)
        del M, X0
        D = W1 - W0
        row = _step_stats(D, W1, theta)
        for lab, b in zip(labels, blocks):
            row.update({f"{key}[{lab}]": val for key, val in _step_stats(D[b], W1[b], theta).items()})
        del D
        if weights_hook is not None:
            row.update({str(k): float(v) for k, v in weights_hook(W0, W1, theta).items()})
        if rd.kind == "gaussian":
            row.update(u_mean=float(u.mean()), u_std=float(u.std(ddof=1)) if p > 1 else 0.0)
        X = rtr.standard_normal((n, d))
        y = t.f(X @ theta) + math.sqrt(noise_var) * rtr.standard_normal(n)
        Phi = s.f(X @ W1.T)
        del X
        feats = (lambda Xt: s.f(Xt @ W1.T) / math.sqrt(p))
        if ls is not None:
            a, info = fit_convex(Phi / math.sqrt(p), y, float(lams[0]), ls)
            del Phi
            row["test_error"], row["class_error"] = test_mse(feats, d, a, n_test, batch, rte,
                                                             lambda Xt: t.f(Xt @ theta), classify=True)
            row["readout_iterations"] = info["iterations"]
            rows.append(row)
            report_progress(progress, k + 1, reps)
            continue
        rg = ridge_sum(Phi, y, p, lams.size)
        del Phi
        if lams.size == 1:
            row["test_error"] = test_mse(feats, d, rg.coef(lams[0]), n_test, batch, rte, lambda Xt: t.f(Xt @ theta))
        else:
            coefs = np.stack([rg.coef(lv) for lv in lams], axis=1)
            errs = test_mse(feats, d, coefs, n_test, batch, rte, lambda Xt: t.f(Xt @ theta))
            for lv, ev in zip(lams, errs):
                row[f"test_error@{lv:g}"] = float(ev)
        rows.append(row)
        report_progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="giant-step",
        params=dict(student=s.act.name, teacher=t.act.name, d=d, n=n, p=p, n0=n0, alpha=n / d, beta=p / d,
                    alpha0=n0 / d, eta=eta, lam=lams.tolist(), noise_var=noise_var, n_test=n_test,
                    readout=rd.to_dict(), loss=ls.name if ls is not None else "square",
                    **({"group_sizes": rd.counts(p)} if blocks else {})),
        stats=collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="exact one-step gradient; ridge by Cholesky/eigh",
                              references=["docs/theory/srf-theory.md §10.2", "docs/theory/srf-theory.md §1"]
                              + (["docs/theory/srf-theory.md §8"] if rd.kind != "uniform" else [])))


def _bulk(rw, d, p):
    """The sRF bulk draws of docs/theory/srf-theory.md §10.1 step 1, in their order: W0 (unit rows), v, theta_perp."""
    W0 = sphere_rows(rw, p, d)
    v = unit_vector(rw, d)
    tp = rw.standard_normal(d)
    tp -= (tp @ v) * v
    tp /= np.linalg.norm(tp)
    return W0, v, tp


def _row_params(p, r, c, rd):
    """Per-neuron ``(sqrt(c_j), r_j)`` arrays and the groups ``(labels, blocks)`` of docs/theory/srf-theory.md §8
    (``group_params``); ``None`` for the uniform readout."""
    if rd.kind == "uniform":
        return None
    gp = group_params(float(r), float(c), rd)
    labels, blocks = _groups(rd, p)
    sizes = [b.stop - b.start for b in blocks]
    sc = np.repeat(np.sqrt([cj for _, cj in gp]), sizes)
    rr = np.repeat(np.array([rj for rj, _ in gp], dtype=float), sizes)
    return sc, rr, labels, blocks


def srf_weights(rw, d, p, r, c, gamma, readout=None):
    r"""docs/theory/srf-theory.md §10.1 step 1: the bulk :math:`\tilde W`, ``v``, :math:`\theta_\perp` and
    :math:`\theta=\gamma v+\rho\theta_\perp`; the network's rows are :math:`\tilde w_i+r_iv`.

    Uniform readout: :math:`\tilde W=\sqrt cW_0`, :math:`r_i=r`.  A finite-support ``readout`` (§8): neuron i of
    group j has :math:`\tilde w_i=\sqrt{c_j}w^0_i` and :math:`r_i=r_j`, with ``(r_j, c_j) = group_params(r, c,
    readout)[j]`` (c the uniform readout's bulk variance); the draws are the same.
    """
    W0, v, tp = _bulk(rw, d, p)
    rho = math.sqrt(max(0.0, 1 - gamma**2))
    theta = gamma * v + rho * tp
    rows = _row_params(p, r, c, _readout(readout))
    Wt = math.sqrt(c) * W0 if rows is None else rows[0][:, None] * W0
    return Wt, v, tp, theta


def sample_bulks(d, p, count, seed=0, force=False) -> list:
    r"""``count`` independent sampled bulks ``(W0, v, theta_perp)`` for the finite-W theories
    (docs/theory/srf-theory.md §8 "Finite-W saddle point", §4.6): :math:`W_0\in\mathbb R^{p\times d}` with unit
    rows, a uniform unit ``v`` and a unit :math:`\theta_\perp\perp v`.

    Draw k uses the k-th child of ``SeedSequence(seed)`` (:func:`~onestep_theory.simulate.base.spawn`), so it
    does not depend on ``count``, and it is the bulk of repetition k of :func:`sim_srf` and :func:`sim_spectrum`
    with the same seed (their :math:`\tilde W` is :math:`\sqrt{c_j}W_0` row by row).
    """
    d, p = positive(d, "d", True), positive(p, "p", True)
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 1:
        raise InvalidParameterError("count", count, "an integer >= 1")
    check_memory(bulks_peak(d, p, int(count)), force, f"{count} bulks of d={d}, p={p}")
    return [_bulk(rw, d, p) for rw, _, _ in spawn(seed, int(count))]


def _group_params_dict(rd, p, r, c) -> dict:
    """``params`` entries of a readout: its ``to_dict()``, and for groups their sizes and (r_j, c_j)."""
    out = {"readout": rd.to_dict()}
    if rd.kind == "finite":
        out["groups"] = [{"value": str(v), "size": k, "r": rj, "c": cj}
                         for v, k, (rj, cj) in zip(rd.values, rd.counts(p), group_params(r, c, rd))]
    return out


def norm_shifts(Wt, v, c, slope, noise, rng) -> np.ndarray:
    r"""Row-norm shifts :math:`\delta c=k\,W_0v+s\zeta/\sqrt d` of an sRF bulk :math:`\tilde W=\sqrt cW_0`, spike v
    (docs/theory/srf-theory.md §2, "Row norms"): ``slope`` k, ``noise`` s, ζ standard Gaussian from ``rng``."""
    p, d = Wt.shape
    return float(slope) * (Wt @ v) / math.sqrt(c) + float(noise) * rng.standard_normal(p) / math.sqrt(d)


def sim_srf(student, teacher, d, *, r, c, gamma, alpha, beta, lam=0.1, noise_var=0.0, n_test=20000,
            features="network", mu_fns=None, seed=0, reps=1, batch=4000, progress=None, force=False,
            readout=None, loss=None, norm_slope=0.0, norm_noise=0.0) -> SimulationResult:
    r"""Direct spiked-random-features ridge simulation (docs/theory/srf-theory.md §10.1); with ``loss`` the readout of
    docs/theory/srf-theory.md §4.9 (as in :func:`sim_giant_step`, with ``class_error``).

    Features :math:`\sigma(XW^\top)` with :math:`W=\sqrt cW_0+r\mathbf 1v^\top`, labels
    :math:`\sigma_\star(X\theta)+\sqrt\Delta\varepsilon`, ridge (4), test error (5), and the measured
    order parameters of (17): :math:`m=\mathbf 1^\top\hat a/\sqrt p`,
    :math:`\vartheta=\hat a^\top\tilde Wv/\sqrt p`, :math:`\psi=\hat a^\top\tilde W\theta_\perp/\sqrt p`,
    :math:`q_1=\hat a^\top\Omega\hat a/p` (:math:`\Omega=\tilde W\Pi\tilde W^\top`), :math:`q_2=\|\hat a\|^2/p`.

    ``features="cgep"`` replaces every row by :math:`\mu_0(\kappa)\mathbf 1+\mu_1(\kappa)\tilde Wx+\mu_\star(\kappa)\xi`
    (Result 3.2), with ``mu_fns = (mu0, mu1, mustar)`` vectorised float64 callables of κ.

    A finite-support ``readout`` gives the K-group sRF of docs/theory/srf-theory.md §8 (rows
    :math:`\sqrt{c_j}w^0_i+r_jv`, see :func:`srf_weights`; (r, c) are the uniform readout's), and the group
    order parameters of §8 "Finite-W saddle point" under ``m[v]``, ``theta[v]``, ``psi[v]``, ``q2[v]`` (v the
    group's value): :math:`m_j=\mathbf 1^\top P_j\hat a/\sqrt p`, :math:`\vartheta_j=\hat a^\top P_j\tilde Wv/\sqrt
    p`, :math:`\psi_j=\hat a^\top P_j\tilde W\theta_\perp/\sqrt p`, :math:`q_{2,j}=\|P_j\hat a\|^2/p`; the
    aggregate keys are their sums (``q1`` with the grouped bulk).  Only ``features="network"`` has groups.

    ``norm_slope`` k and ``norm_noise`` s give the bulk the row-norm heterogeneity of the giant step
    (docs/theory/srf-theory.md §2, "Row norms"; uniform readout): row i of :math:`\tilde W` gets squared norm
    :math:`c+\delta c_i`, :math:`\delta c=k\,W_0v+s\,\zeta/\sqrt d` (:math:`\zeta` standard Gaussian, from a
    fourth stream of the repetition's seed, so the other draws do not change).  With ``features="cgep"`` the rows
    keep norm c and the features get the corrected conditional mean
    :math:`\mu_0(\kappa)\mathbf 1+\partial_c\mu_0(\kappa)\,\delta c` instead, ``mu_fns`` then giving
    :math:`\partial_c\mu_0` as a fourth callable.
    """
    rd = _readout(readout)
    ls = readout_loss(loss, lam, teacher)
    s, t = Fn(student, "student"), Fn(teacher, "teacher")
    d, n, p, _ = sizes_srf(d, alpha=alpha, beta=beta, force=force, memory=lambda *z: srf_peak(
        "srf", *z, kf=s.kf, batch=batch, n_test=n_test, loss=ls is not None, features=features))
    lams = lam_grid(lam)
    if lams.size != 1:
        raise InvalidParameterError("lam", lam, "one ridge lambda > 0 (the order parameters are measured per lambda)")
    lam = float(lams[0])
    check_reps(reps)
    r, c, gamma = float(r), float(c), float(gamma)
    if not (math.isfinite(r) and r >= 0):
        raise InvalidParameterError("r", r, "a real number >= 0")
    if not (math.isfinite(c) and c > 0):
        raise InvalidParameterError("c", c, "a real number > 0")
    if not -1 <= gamma <= 1:
        raise InvalidParameterError("gamma", gamma, "a real number in [-1, 1]")
    if features not in ("network", "cgep"):
        raise InvalidParameterError("features", features, "'network' or 'cgep'")
    if features == "cgep" and mu_fns is None:
        raise InvalidParameterError("mu_fns", None, "(mu0, mu1, mustar) callables for features='cgep'")
    if features == "cgep" and rd.kind != "uniform":
        raise InvalidParameterError("readout", rd.label, "the uniform readout for features='cgep'")
    rows_ = _row_params(p, r, c, rd)
    noise_var = nonnegative(noise_var, "noise_var")
    try:
        ks, kn = float(norm_slope), float(norm_noise)
    except (TypeError, ValueError):
        ks = kn = math.nan
    if not (math.isfinite(ks) and math.isfinite(kn) and kn >= 0):
        raise InvalidParameterError("norm_slope, norm_noise", (norm_slope, norm_noise), "finite, norm_noise >= 0")
    het = ks != 0 or kn != 0
    if het and (rd.kind != "uniform" or (features == "cgep" and len(mu_fns) != 4)):
        raise InvalidParameterError("readout" if rd.kind != "uniform" else "mu_fns", rd.label if rd.kind != "uniform"
                                    else mu_fns, "the uniform readout and, for cgep, (mu0, mu1, mustar, dmu0_dc)")
    t0, rows = time.perf_counter(), []
    for k, (rw, rtr, rte, rh) in enumerate(spawn(seed, reps, streams=4)):
        Wt, v, tp, theta = srf_weights(rw, d, p, r, c, gamma, rd)
        dc = None
        if het:
            dc = norm_shifts(Wt, v, c, ks, kn, rh)
            if features == "network":
                Wt = Wt * np.sqrt(np.clip(1.0 + dc / c, 0.0, None))[:, None]
        W = Wt + r * v[None, :] if rows_ is None else Wt + rows_[1][:, None] * v[None, :]

        def feat(X, rng=None, W=W, Wt=Wt, v=v, dc=dc):
            if features == "network":
                return s.f(X @ W.T)
            kap = X @ v
            m0, m1, ms = (f(kap) for f in mu_fns[:3])
            out = m0[:, None] + m1[:, None] * (X @ Wt.T) + ms[:, None] * rng.standard_normal((X.shape[0], p))
            if dc is not None:
                out += mu_fns[3](kap)[:, None] * dc[None, :]
            return out

        X = rtr.standard_normal((n, d))
        y = t.f(X @ theta) + math.sqrt(noise_var) * rtr.standard_normal(n)
        Phi = feat(X, rtr)
        del X
        feats = (lambda Xt, feat=feat: feat(Xt, rte) / math.sqrt(p))
        if ls is None:
            ahat = ridge_sum(Phi, y, p).coef(lam)
            row = {"test_error": test_mse(feats, d, ahat, n_test, batch, rte, lambda Xt: t.f(Xt @ theta))}
        else:
            ahat, info = fit_convex(Phi / math.sqrt(p), y, lam, ls)
            te, ce = test_mse(feats, d, ahat, n_test, batch, rte, lambda Xt: t.f(Xt @ theta), classify=True)
            row = {"test_error": te, "class_error": ce, "readout_iterations": info["iterations"]}
        del Phi
        sp_ = math.sqrt(p)
        Wv = Wt @ v
        Wtp = Wt @ tp
        WPa = Wt.T @ ahat - (Wv @ ahat) * v         # Pi W~^T a
        row.update(m=float(ahat.sum()) / sp_, theta=float(ahat @ Wv) / sp_, psi=float(ahat @ Wtp) / sp_,
                   q1=float(WPa @ WPa) / p, q2=float(ahat @ ahat) / p)
        for lab, b in zip(*rows_[2:]) if rows_ else ():
            a = ahat[b]
            row.update({f"m[{lab}]": float(a.sum()) / sp_, f"theta[{lab}]": float(a @ Wv[b]) / sp_,
                        f"psi[{lab}]": float(a @ Wtp[b]) / sp_, f"q2[{lab}]": float(a @ a) / p})
        rows.append(row)
        report_progress(progress, k + 1, reps)
    return SimulationResult(
        protocol=f"srf-{features}",
        params=dict(student=s.act.name, teacher=t.act.name, d=d, n=n, p=p, alpha=n / d, beta=p / d, r=r, c=c,
                    gamma=gamma, lam=lam, noise_var=noise_var, n_test=n_test, **_group_params_dict(rd, p, r, c),
                    **({"norm_slope": ks, "norm_noise": kn} if het else {})),
        stats=collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="Cholesky ridge (4)", references=["docs/theory/srf-theory.md §10.1", "docs/theory/srf-theory.md §4.1"]))


def sim_spectrum(student, d, *, r, c, gamma=1.0, alpha, beta, lam=(0.1, 0.5, 1.0, 3.0), seed=0, reps=1,
                 progress=None, force=False, readout=None) -> SimulationResult:
    r"""Spectrum of :math:`A=\Phi^\top\Phi/p` for sRF features (docs/theory/srf-theory.md §10.3, §7).

    Returns the top eigenvalue (the mean spike, predicted at :math:`n\,\mathbb E_\kappa\mu_0^2`),
    the empirical Stieltjes transform :math:`\frac1p\sum_k(\lambda_k+\lambda)^{-1}` at each λ
    (theory :math:`V_2(\lambda)`), and the eigenvalues of the first repetition in ``extra``.  A finite-support
    ``readout`` gives the K-group features of :func:`sim_srf` (docs/theory/srf-theory.md §8).
    """
    rd = _readout(readout)
    s = Fn(student, "student")
    d, n, p, _ = sizes_srf(d, alpha=alpha, beta=beta, force=force,
                           memory=lambda *z: srf_peak("spectrum", *z, kf=s.kf))
    rows_ = _row_params(p, float(r), float(c), rd)
    lams = lam_grid(lam)
    check_reps(reps)
    t0 = time.perf_counter()
    rows = []
    extra = {}
    for k, (rw, rtr, _) in enumerate(spawn(seed, reps)):
        Wt, v, _, _ = srf_weights(rw, d, p, float(r), float(c), float(gamma), rd)
        W = Wt + float(r) * v[None, :] if rows_ is None else Wt + rows_[1][:, None] * v[None, :]
        X = rtr.standard_normal((n, d))
        Phi = s.f(X @ W.T)
        del X
        ev = np.linalg.eigvalsh(Phi.T @ Phi / p) if p <= n else np.concatenate(
            [np.linalg.eigvalsh(Phi @ Phi.T / p), np.zeros(p - n)])
        ev = np.sort(np.clip(ev, 0, None))
        row = {"top_eigenvalue": float(ev[-1]), "second_eigenvalue": float(ev[-2])}
        for lv in lams:
            row[f"stieltjes@{lv:g}"] = float(np.mean(1.0 / (ev + lv)))
        rows.append(row)
        if k == 0:
            extra["eigenvalues"] = ev.tolist()
        report_progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="spectrum", params=dict(student=s.act.name, d=d, n=n, p=p, alpha=n / d, beta=p / d, r=float(r),
                                         c=float(c), gamma=float(gamma), lam=lams.tolist(),
                                         **_group_params_dict(rd, p, float(r), float(c))),
        stats=collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra=extra,
        provenance=provenance(method="dense eigendecomposition", references=["docs/theory/srf-theory.md §10.3", "§7"]))


def empirical_spectrum(d, p, c, gamma, seed=0):
    r"""F1 weights (docs/theory/srf-theory.md §4.6) of a freshly sampled sRF bulk :math:`\tilde W=\sqrt cW_0` (unit
    rows), a uniform unit ``v`` and :math:`\theta=\gamma v+\rho\theta_\perp`, drawn as in :func:`sim_srf`; see
    :func:`~onestep_theory.srf.single.priors.empirical_from_weights`."""
    Wt, v, _, theta = srf_weights(np.random.default_rng(seed), int(d), int(p), 0.0, float(c), float(gamma))
    return empirical_from_weights(Wt, v, theta)
