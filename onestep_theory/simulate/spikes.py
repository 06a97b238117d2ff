r"""Simulation protocols of the spike theory [MLHD23] (docs/theory/spike-theory.md §9).

* :func:`sim_resolvent` — protocol C: the traces m1, m2 and their λ-derivatives (§9.4);
* :func:`sim_spikes` — protocol A: the full one-step network, training and test gains (§9.2);
* :func:`sim_spike_model` — protocol B: the Gaussian-equivalent spike model, limit or finite (§9.3).
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.linalg as sla

from ..core.caches import cached
from ..core.errors import InvalidParameterError
from ..core.results import provenance
from ..hermite.quadrature import gauss_hermite
from .memory import spike_peak
from .base import (Fn, Ridge, SimulationResult, check_reps, collect, lam_grid, nonnegative, report_progress,
                   sizes_spike, spawn, sphere_rows, test_mse, unit_vector)

__all__ = ["sim_resolvent", "sim_spikes", "sim_spike_model"]


def sim_resolvent(student, n=None, d=None, N=None, *, phi=None, psi=None, lam=0.5, bulk="nonlinear",
                  init="sphere", seed=0, reps=1, progress=None, force=False) -> SimulationResult:
    r"""Empirical resolvent traces (docs/theory/spike-theory.md §9.4, Protocol C).

    .. math::
        m_1=\tfrac\phi\psi\operatorname{tr}\bar R_0,\quad
        m_2=\tfrac\phi\psi\tfrac1d\operatorname{tr}(\tilde X^\top\bar R_0\tilde X),\quad
        \partial_\lambda m_1=-\tfrac\phi\psi n\operatorname{tr}\bar R_0^2,\quad
        \partial_\lambda m_2=-\tfrac\phi\psi\tfrac nd\operatorname{tr}(\tilde X^\top\bar R_0^2\tilde X),

    with :math:`\bar R_0=(F_0F_0^\top+\lambda nI_n)^{-1}` and :math:`F_0=\sigma(\tilde XW_0^\top)` (centred
    σ, unit rows of :math:`W_0`), or the Gaussian equivalent :math:`c_1\tilde XW_0^\top+c_{>1}Z`
    (``bulk="gaussian"``).  One eigendecomposition of the smaller Gram matrix per
    repetition serves every λ.
    """
    if bulk not in ("nonlinear", "gaussian"):
        raise InvalidParameterError("bulk", bulk, "'nonlinear' or 'gaussian'")
    s = Fn(student, "student", center=True)
    n, d, N = sizes_spike(n, d, N, phi, psi, force=force, memory=lambda *z: spike_peak(
        "resolvent", *z, kf=s.kf if bulk == "nonlinear" else 0, gaussian_bulk=bulk == "gaussian"))
    lams = lam_grid(lam)
    check_reps(reps)
    if init not in ("sphere", "gaussian"):
        raise InvalidParameterError("init", init, "'sphere' or 'gaussian'")
    c1, cg = s.c(1), s.c_gt1()
    ratio = N / n  # phi/psi
    t0 = time.perf_counter()
    rows = []
    for k, (rw, rtr, _) in enumerate(spawn(seed, reps)):
        W0 = sphere_rows(rw, N, d) if init == "sphere" else rw.standard_normal((N, d)) / math.sqrt(d)
        X = rtr.standard_normal((n, d))
        Z0 = X @ W0.T
        F0 = c1 * Z0 + cg * rtr.standard_normal((n, N)) if bulk == "gaussian" else s.f(Z0)
        del Z0
        if N <= n:
            sv, V = np.linalg.eigh(F0.T @ F0)
            sv = np.clip(sv, 0, None)
            U = F0 @ V
            keep = sv > 1e-12 * max(sv.max(), 1.0)
            U = U[:, keep] / np.sqrt(sv[keep])
            sv = sv[keep]
        else:
            sv, U = np.linalg.eigh(F0 @ F0.T)
            sv = np.clip(sv, 0, None)
        n_zero = n - sv.size
        P = U.T @ X                      # projections of X on the eigenvectors
        proj = np.sum(P * P, axis=1)     # ||u_i^T X||^2
        rest = float(np.sum(X * X)) - float(proj.sum())
        row = {}
        for lam_v in lams:
            mu = lam_v * n
            w1 = 1.0 / (sv + mu)
            tr1 = float(w1.sum()) + n_zero / mu
            tr2 = (float(proj @ w1) + rest / mu) / d
            tr1sq = float((w1**2).sum()) + n_zero / mu**2
            tr2sq = (float(proj @ w1**2) + rest / mu**2) / d
            suffix = "" if lams.size == 1 else f"@{lam_v:g}"
            row["m1" + suffix] = ratio * tr1
            row["m2" + suffix] = ratio * tr2
            row["dm1_dlam" + suffix] = -ratio * n * tr1sq
            row["dm2_dlam" + suffix] = -ratio * n * tr2sq
        rows.append(row)
        report_progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="resolvent", params=dict(student=s.act.name, n=n, d=d, N=N, phi=d / n, psi=d / N,
                                          lam=lams.tolist(), bulk=bulk, init=init, c1=c1, c_gt1=cg),
        stats=collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="eigendecomposition of the smaller Gram matrix",
                              references=["docs/theory/spike-theory.md §9.4", "docs/theory/spike-theory.md §6.1"]))


# --------------------------------------------------------------------------- protocols A and B
def _draw_spike_data(rw, rtr, n, d, N, init, beta_star, teacher, sd):
    """docs/theory/spike-theory.md §9.2 step 1: W0, beta_star, a (weights stream), step set (X, y), readout set (Xt, yt)."""
    W0 = sphere_rows(rw, N, d) if init == "sphere" else rw.standard_normal((N, d)) / math.sqrt(d)
    bstar = unit_vector(rw, d) if beta_star == "sphere" else rw.standard_normal(d) / math.sqrt(d)
    a = rw.standard_normal(N) / math.sqrt(N)
    X = rtr.standard_normal((n, d))
    y = teacher.f(X @ bstar) + sd * rtr.standard_normal(n)
    Xt = rtr.standard_normal((n, d))
    yt = teacher.f(Xt @ bstar) + sd * rtr.standard_normal(n)
    return W0, bstar, a, X, y, Xt, yt



def _one_step(X, y, W0, a, s: Fn, eta, gradient, c1):
    """W = W0 - eta grad L(W0), docs/theory/spike-theory.md §2.3 (exact, label_only or rank_one)."""
    n = X.shape[0]
    if gradient == "rank_one":
        beta = X.T @ y / n
        return W0 + eta * c1 * np.outer(a, beta)
    Z0 = X @ W0.T
    if gradient == "exact":
        r = y - s.f(Z0) @ a
    else:
        r = y
    M = s.df(Z0)
    del Z0
    M *= r[:, None]
    M *= a[None, :]
    G = M.T @ X
    G *= eta / n
    return W0 + G


def _left_overlaps(F, u, ell, k_top):
    """Top singular values of F and |<left singular vector j, u^k/||u^k||>| for k <= ell (docs/theory/spike-theory.md §9.2
    step 5, §5.2: the outlier left singular vectors align with the u^{o k})."""
    from scipy.sparse.linalg import svds

    k = min(k_top, min(F.shape) - 1)
    Ul, sv, _ = svds(F, k=k, random_state=0)
    order = np.argsort(sv)[::-1]
    sv, Ul = sv[order], Ul[:, order]
    over = {}
    for p in range(1, ell + 1):
        up = u**p
        up = up / np.linalg.norm(up)
        over[p] = np.abs(Ul.T @ up)
    return sv, over


def sim_spikes(student, teacher, n=None, d=None, N=None, *, phi=None, psi=None, lam=0.1, alpha=None,
               eta_scale=1.0, eta=None, noise_var=0.0, gradient="exact", init="sphere", beta_star="sphere",
               n_test=None, singular=False, ell=2, seed=0, reps=1, batch=2000, progress=None, force=False) -> SimulationResult:
    r"""Full non-linear one-step pipeline (docs/theory/spike-theory.md §9.2, Protocol A).

    Two independent datasets of size n (step and readout); one gradient step with
    :math:`\eta=c\,n^\alpha` (``eta_scale`` = c) or a given ``eta``; ridge readout; the
    penalised training optimum :math:`\mathcal L_{\rm tr}=\lambda\tilde y^\top(FF^\top+\lambda n)^{-1}\tilde y`
    (§2.4) for :math:`F_0` and :math:`F`, their difference, test risks on
    :math:`n_{\rm test}\ge2n` fresh points (noise-free target plus :math:`\sigma_\varepsilon^2`),
    :math:`\|\beta\|^2`, :math:`\beta^\top\beta_\star`, the empirical :math:`m_1,m_2`, and with
    ``singular=True`` the top singular values of F and the overlaps of its top left
    singular vectors with :math:`(\tilde X\beta)^{\circ k}`.
    """
    s = Fn(student, "student", center=True)
    t = Fn(teacher, "teacher")
    n, d, N = sizes_spike(n, d, N, phi, psi, force=force, memory=lambda *z: spike_peak(
        "spikes", *z, kf=s.kf, kd=s.kd, batch=batch, n_test=n_test, singular=singular))
    lam = float(lam_grid(lam)[0])
    check_reps(reps)
    if gradient not in ("exact", "label_only", "rank_one"):
        raise InvalidParameterError("gradient", gradient, "'exact', 'label_only' or 'rank_one'")
    if init not in ("sphere", "gaussian"):
        raise InvalidParameterError("init", init, "'sphere' or 'gaussian'")
    if beta_star not in ("sphere", "gaussian"):
        raise InvalidParameterError("beta_star", beta_star, "'sphere' or 'gaussian'")
    noise_var = nonnegative(noise_var, "noise_var")
    if eta is None:
        if alpha is None:
            raise InvalidParameterError("alpha", alpha, "a real exponent (eta = c n^alpha), or give eta")
        eta = float(eta_scale) * n ** float(alpha)
    eta = nonnegative(eta, "eta")
    n_test = int(n_test) if n_test is not None else 2 * n
    c1 = s.c(1)
    sd = math.sqrt(noise_var)
    ratio = N / n
    t0 = time.perf_counter()
    rows = []
    extra = {}
    for k, (rw, rtr, rte) in enumerate(spawn(seed, reps)):
        W0, bstar, a, X, y, Xt, yt = _draw_spike_data(rw, rtr, n, d, N, init, beta_star, t, sd)
        beta = X.T @ y / n
        W = _one_step(X, y, W0, a, s, eta, gradient, c1)
        del X
        row = {"beta_norm2": float(beta @ beta), "beta_dot_beta_star": float(beta @ bstar)}
        mu = lam * n
        for tag, Wm in (("F0", W0), ("F", W)):
            F = s.f(Xt @ Wm.T)
            rg = Ridge(F, yt)
            row[f"train_loss_{tag}"] = rg.objective(mu) / n
            ahat = rg.coef(mu)
            if tag == "F0":
                # empirical m1, m2 (docs/theory/spike-theory.md §9.4) from the same Cholesky
                Kmat = F @ F.T
                Kmat[np.diag_indices_from(Kmat)] += mu
                L = sla.cholesky(Kmat, lower=True, overwrite_a=True, check_finite=False)
                Linv = sla.solve_triangular(L, np.eye(n), lower=True, check_finite=False)
                row["m1"] = ratio * float(np.sum(Linv * Linv))
                B = Linv @ Xt
                row["m2"] = ratio * float(np.sum(B * B)) / d
                del Linv, B, L, Kmat
            elif singular:
                sv, over = _left_overlaps(F, Xt @ beta, ell, ell + 3)
                extra.setdefault("singular_values", []).append(sv.tolist())
                extra.setdefault("overlaps", []).append({str(p): o.tolist() for p, o in over.items()})
            del F, rg
            feats = (lambda Z, Wm=Wm: s.f(Z @ Wm.T))
            row[f"test_loss_{tag}"] = test_mse(feats, d, ahat, n_test, batch, rte, lambda Z: t.f(Z @ bstar)) + noise_var
        row["train_gain"] = row["train_loss_F0"] - row["train_loss_F"]
        row["test_gain"] = row["test_loss_F0"] - row["test_loss_F"]
        rows.append(row)
        report_progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="spikes", params=dict(student=s.act.name, teacher=t.act.name, n=n, d=d, N=N, phi=d / n, psi=d / N,
                                       lam=lam, alpha=alpha, eta=eta, noise_var=noise_var, gradient=gradient,
                                       init=init, beta_star=beta_star, n_test=n_test),
        stats=collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra=extra,
        provenance=provenance(method="Cholesky ridge; exact one-step gradient",
                              references=["docs/theory/spike-theory.md §9.2", "docs/theory/spike-theory.md §2"]))


# --------------------------------------------------------------------------- protocol B
@cached(maxsize=8)
def _gh3(nodes):
    """Tensor probabilists' Gauss-Hermite rule in R^3 (weights sum to 1), built once per node count."""
    z, wz = gauss_hermite(nodes)
    Z = np.stack(np.meshgrid(z, z, z, indexing="ij"), -1).reshape(-1, 3)
    W = (wz[:, None, None] * wz[None, :, None] * wz[None, None, :]).reshape(-1)
    return Z, W


def _gauss3_expect(fn, cov, rng=None, nodes=40, draws=2_000_000):
    """E fn(g) for g ~ N(0, cov) in R^3: tensor Gauss–Hermite (polynomial fn) or Monte-Carlo."""
    L = np.linalg.cholesky(cov + 1e-300 * np.eye(3)) if np.all(np.linalg.eigvalsh(cov) > 0) else None
    if L is None:
        w, V = np.linalg.eigh(cov)
        L = V * np.sqrt(np.clip(w, 0, None))
    if rng is None:
        Z, W = _gh3(nodes)
        return float(W @ fn(Z @ L.T))
    tot = 0.0
    chunk = 500_000
    done = 0
    while done < draws:
        m = min(chunk, draws - done)
        tot += float(fn(rng.standard_normal((m, 3)) @ L.T).sum())
        done += m
    return tot / draws


def sim_spike_model(student, teacher, n=None, d=None, N=None, *, phi=None, psi=None, lam=0.1, ell=2,
                    mode="limit", bulk="gaussian", alpha=None, eta_scale=1.0, eta=None, noise_var=0.0,
                    init="sphere", beta_star="sphere", seed=0, reps=1, progress=None, force=False) -> SimulationResult:
    r"""Gaussian-equivalent spike model (docs/theory/spike-theory.md §9.3, Protocol B).

    ``mode="limit"`` (B-limit, used for validation): infinitely strong, unpenalised spikes
    :math:`U=[(u/\|\beta\|)^{\circ k}]_{k\le\ell}`, :math:`\hat c=(U^\top\bar R_0U)^{-1}U^\top\bar R_0\tilde y`,
    :math:`\mathcal L_{\rm tr}=\lambda[\tilde y^\top\bar R_0\tilde y-\tilde y^\top\bar R_0U\hat c]`; ``ell=0`` is the
    random-features baseline.  ``mode="finite"`` (B-finite): features
    :math:`F_0+\sum_k\gamma_ku^{\circ k}(a^{\circ k})^\top`, :math:`\gamma_k=c_1^kc_k\eta^k`.

    The test risk is exact given the sample (§9.3): it depends on x only through the Gaussian
    vector :math:`(\beta_\star^\top x,\beta^\top x,v^\top x)`, evaluated by tensor Gauss–Hermite
    for a polynomial teacher and by :math:`2\cdot10^6` draws otherwise, plus
    :math:`c_{>1}^2\|\hat a_0\|^2+\sigma_\varepsilon^2`.  ``bulk="nonlinear"`` uses
    :math:`\sigma(\tilde XW_0^\top)` (training quantities only).
    Returns ``train_loss`` and ``train_loss_F0`` (= ℓ = 0), ``delta`` (their difference),
    ``test_loss``, ``test_loss_F0`` and ``lambda_test`` (their difference).
    """
    import sympy as sp

    if mode not in ("limit", "finite"):
        raise InvalidParameterError("mode", mode, "'limit' or 'finite'")
    if bulk not in ("gaussian", "nonlinear"):
        raise InvalidParameterError("bulk", bulk, "'gaussian' or 'nonlinear'")
    if not isinstance(ell, (int, np.integer)) or ell < 0 or ell > 8:
        raise InvalidParameterError("ell", ell, "an integer in [0, 8]")
    s = Fn(student, "student", center=True)
    t = Fn(teacher, "teacher")
    poly_teacher = t.act.expr.is_polynomial(sp.Symbol("x", real=True))
    n, d, N = sizes_spike(n, d, N, phi, psi, force=force, memory=lambda *z: spike_peak(
        "spike-model", *z, kf=s.kf if bulk == "nonlinear" else 0, gaussian_bulk=bulk == "gaussian", mode=mode,
        ell=ell, poly_teacher=poly_teacher))
    lam = float(lam_grid(lam)[0])
    check_reps(reps)
    noise_var = nonnegative(noise_var, "noise_var")
    c1, cg = s.c(1), s.c_gt1()
    if mode == "finite":
        if eta is None:
            if alpha is None:
                raise InvalidParameterError("alpha", alpha, "a real exponent (eta = c n^alpha), or give eta")
            eta = float(eta_scale) * n ** float(alpha)
        gam = [c1**k * s.c(k) * float(eta) ** k for k in range(1, ell + 1)]
    sd = math.sqrt(noise_var)
    t0 = time.perf_counter()
    rows = []
    for k, (rw, rtr, rte) in enumerate(spawn(seed, reps)):
        W0, bstar, a, X, y, Xt, yt = _draw_spike_data(rw, rtr, n, d, N, init, beta_star, t, sd)
        beta = X.T @ y / n
        del X
        Z0 = Xt @ W0.T
        F0 = c1 * Z0 + cg * rtr.standard_normal((n, N)) if bulk == "gaussian" else s.f(Z0)
        del Z0
        bnorm = float(np.linalg.norm(beta))
        u = Xt @ beta / bnorm
        mu = lam * n
        if mode == "limit":
            Kmat = F0 @ F0.T
            Kmat[np.diag_indices_from(Kmat)] += mu
            cf = sla.cho_factor(Kmat, lower=True, overwrite_a=True, check_finite=False)
            Ry = sla.cho_solve(cf, yt, check_finite=False)
            base = lam * float(yt @ Ry)
            if ell > 0:
                U = np.stack([u**p for p in range(1, ell + 1)], axis=1)
                RU = sla.cho_solve(cf, U, check_finite=False)
                chat = np.linalg.solve(U.T @ RU, RU.T @ yt)
            else:
                U = np.zeros((n, 0))
                chat = np.zeros(0)
            resid = yt - U @ chat
            a0 = F0.T @ sla.cho_solve(cf, resid, check_finite=False)
            train = lam * float(yt @ sla.cho_solve(cf, resid, check_finite=False))
            a0_base = F0.T @ Ry
            scale_c = chat  # coefficients of (x^T beta / ||beta||)^k
        else:
            Ffull = F0.copy()
            for p, g in enumerate(gam, start=1):
                Ffull += g * np.outer(u**p * bnorm**p, a**p)
            rg = Ridge(Ffull, yt)
            train = rg.objective(mu) / n
            ahat = rg.coef(mu)
            scale_c = np.array([gam[p - 1] * float(ahat @ a**p) * bnorm**p for p in range(1, ell + 1)])
            a0 = ahat
            rg0 = Ridge(F0, yt)
            base = rg0.objective(mu) / n
            a0_base = rg0.coef(mu)
            del Ffull
        row = {"train_loss": train, "train_loss_F0": base, "delta": base - train}
        if bulk == "gaussian":
            risks = []
            for cc, aa in ((scale_c, a0), (np.zeros(0), a0_base)):
                v = c1 * (W0.T @ aa)
                vecs = np.stack([bstar, beta / bnorm, v])
                cov = vecs @ vecs.T

                def err(G, cc=cc):
                    pred = G[:, 2].copy()
                    for p, cp in enumerate(cc, start=1):
                        pred += cp * G[:, 1] ** p
                    return (t.f(G[:, 0]) - pred) ** 2

                e = _gauss3_expect(err, cov, None if poly_teacher else rte)
                risks.append(e + cg**2 * float(aa @ aa) + noise_var)
            row["test_loss"], row["test_loss_F0"] = risks
            row["lambda_test"] = risks[1] - risks[0]
        rows.append(row)
        report_progress(progress, k + 1, reps)
    return SimulationResult(
        protocol=f"spike-model-{mode}",
        params=dict(student=s.act.name, teacher=t.act.name, n=n, d=d, N=N, phi=d / n, psi=d / N, lam=lam, ell=ell,
                    bulk=bulk, noise_var=noise_var, c1=c1, c_gt1=cg, eta=eta),
        stats=collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="Cholesky; exact Gaussian test risk",
                              references=["docs/theory/spike-theory.md §9.3", "docs/theory/spike-theory.md §5.3"]))


