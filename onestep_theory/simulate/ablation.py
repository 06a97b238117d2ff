r"""Ablations of the one-giant-step network: what of the trained first layer does the sRF theory describe?
(docs/studies/mechanism.md; docs/theory/srf-theory.md §10.2, §2, §3).

:func:`sim_ablation` draws one network exactly as :func:`~onestep_theory.simulate.sim_giant_step` does (same
streams, same step), then builds **variants** of its trained first layer :math:`W^1=W^0+D`, each changing one
thing, and trains and tests the ridge readout of every variant on the **same** readout data and the same test
points.  The difference network − variant is then a paired measurement of what that one thing does to the test
error: the data's fluctuation cancels in it.

Notation (one repetition): :math:`\bar\Delta` the mean row of :math:`D`, :math:`\hat r=\|\bar\Delta\|`,
:math:`\hat v=\bar\Delta/\hat r`, :math:`\hat\gamma=\theta^\top\hat v`, :math:`F=D-\mathbf 1\bar\Delta^\top` (the
fluctuation of the step), :math:`B=W^1-\mathbf 1\bar\Delta^\top=W^0+F` (the trained bulk) and
:math:`\hat c=\|B\|_F^2/p` — the quantities of ``from_trained`` (docs/theory/srf-theory.md §4.6).

==================  ==========================================================================================
variant             first layer (everything else as in the network)
==================  ==========================================================================================
``network``         :math:`W^1` itself
``srf``             :math:`\sqrt{\hat c}\,W^0+\mathbf 1\bar\Delta^\top`: the sRF model of Definition 3.1 on the
                    task's own :math:`W^0` and spike (isotropic bulk of the measured variance)
``ideal_spike``     :math:`B+\hat r\,\mathbf 1v^\top`, :math:`v=\hat\gamma\theta+\hat\rho\theta_\perp` with a fresh
                    :math:`\theta_\perp`: the trained bulk with a spike independent of it
``gaussian_bulk``   :math:`G+\mathbf 1\bar\Delta^\top`, :math:`G=Z/\sqrt d+\Xi F/\sqrt p` (:math:`Z,\Xi` i.i.d.
                    standard): Gaussian rows with the trained bulk's row covariance :math:`I/d+F^\top F/p` (the
                    population covariance of the unit rows of :math:`W^0` is :math:`I/d`), the trained spike
``homogeneous``     no per-neuron heterogeneity (``from_trained`` averages it away): the step's spike component
                    :math:`F_i^\top\hat v` removed from every row, then every bulk row :math:`w^0_i+F_i` rescaled to
                    the norm :math:`\sqrt{\hat c}`; the trained spike
``equal_spike``     the first half of ``homogeneous``: :math:`W^1-(F\hat v)\hat v^\top` (every neuron gets the same
                    spike component from the step)
``equal_norm``      the second half: every trained bulk row :math:`b_i` rescaled to the norm :math:`\sqrt{\hat c}`
``shuffled_norm``   the trained bulk rows rescaled to a random permutation of their norms: the same spread of
                    norms, its relation to each neuron's :math:`w^0_i` (and so to θ) destroyed
``fitted_norm``     the trained bulk rows rescaled to the squared norms :math:`\bar n+\hat\beta e_i`,
                    :math:`e_i=w^{0\top}_i\hat v`, :math:`\hat\beta=\sum_ie_i(n_i-\bar n)/\sum_ie_i^2` (:math:`n_i` the
                    squared norms, :math:`\bar n` their mean): the norms' relation to the spike direction kept, the
                    rest of their spread removed
``srf_rescaled``    the sRF surrogate with the row norms that the step predicts (docs/theory/srf-theory.md §2, "Row
                    norms"): row i of :math:`\sqrt{\hat c}W^0` rescaled to squared norm
                    :math:`\hat c+k\,w^{0\top}_i\hat v`, :math:`k=2\hat r\,\mathbb E[\sigma He_3]/\mu_1`
                    (:func:`norm_slope`; nothing measured on the trained step but :math:`\hat c` and the spike)
``no_f0``           the step with the initial output :math:`f_{W^0,a^0}` dropped from the error (the theory's step)
``no_shared``       :math:`W^0+D(I-\hat s\hat s^\top)`, :math:`\hat s=W^{0\top}\mathbf 1/\|W^{0\top}\mathbf 1\|`: the
                    step without its component along the direction all initial rows share
``no_self``         row i of the fluctuation :math:`F` without its component along :math:`w^0_i` (the part of
                    the step correlated with the neuron's own initial weight; the spike is kept whole)
``isotropic``       :math:`W^0+\mathbf 1\bar\Delta^\top+E`, :math:`E` i.i.d. Gaussian of the same Frobenius norm as
                    :math:`F`: the rank-one + isotropic-fluctuation model of the step
``degree2``         the step with :math:`\sigma'` replaced by its Hermite expansion to degree 2 (the step's
                    higher Hermite orders dropped)
==================  ==========================================================================================

Diagnostics of the conditional Gaussian equivalence (Result 3.2, docs/theory/srf-theory.md §3), measured on the
network's test points: with :math:`\kappa=\hat v^\top x` and :math:`t_i=b_i^\top x` (:math:`b_i` the rows of
:math:`B`), the regression across neurons :math:`\varphi_i(x)\approx A(x)+B(x)\,t_i`, residual variance
:math:`C(x)`, which (15) predicts to be :math:`\mu_0(\kappa)`, :math:`\mu_1(\kappa)`, :math:`\mu_\star^2(\kappa)`
at :math:`(\hat r,\hat c)`.  Reported per repetition: the root-mean-square deviations ``cge_A``, ``cge_B``,
``cge_C`` (relative to the root-mean-square of the prediction) and ``cge_signal``, the correlation over test points
of :math:`A(x)-\mu_0(\kappa)` with the part of the target not explained by κ (:math:`y-\mathbb E[y\mid\kappa]`,
estimated per κ-decile; all on the first block of ``batch`` test points): a mean feature that carries information on the target beyond κ is what the equivalence
leaves out.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..core.errors import InvalidParameterError
from ..core.exact import check_real
from ..srf.features.mapping import MAX_ETA
from ..core.results import provenance
from ..srf.features.cge import cge_coeffs
from .memory import ablation_peak
from .base import (Fn, SimulationResult, check_reps, collect, nonnegative, report_progress, sizes_srf,
                   spawn, sphere_rows, unit_vector)
from .srf import ridge_sum

__all__ = ["sim_ablation", "VARIANTS", "variant_names", "step_matrices", "build_variants", "norm_slope"]

#: The variants of :func:`sim_ablation`, in the order they are reported (``network`` is always built).
VARIANTS = ("network", "srf", "ideal_spike", "gaussian_bulk", "homogeneous", "equal_spike", "equal_norm",
            "shuffled_norm", "fitted_norm", "srf_rescaled", "no_f0", "no_shared", "no_self", "isotropic", "degree2")

#: Rows of X0 per block of the step (bounded temporary memory: 3 blocks of CHUNK x p floats).
CHUNK = 4096


def variant_names(variants) -> tuple:
    """The checked variants (a list, or a comma-separated string; None: all), ``network`` first, in
    :data:`VARIANTS` order."""
    if variants is None:
        return VARIANTS
    if isinstance(variants, str):
        variants = [v.strip() for v in variants.split(",") if v.strip()]
    bad = [v for v in variants if v not in VARIANTS]
    if bad or not variants:
        raise InvalidParameterError("variants", ",".join(map(str, variants)), "names from " + ", ".join(VARIANTS))
    return tuple(v for v in VARIANTS if v == "network" or v in variants)


def _degree2(s: Fn):
    r"""The degree-2 Hermite truncation of σ': :math:`\sum_{k\le2}(k+1)a_{k+1}He_k`, with
    :math:`a_k=\mathbb E[\sigma He_k]/k!` (``Fn.c``) and :math:`He_k'=kHe_{k-1}`."""
    b0, b1, b2 = s.c(1), 2.0 * s.c(2), 3.0 * s.c(3)
    return lambda z: b0 + b1 * z + b2 * (z * z - 1.0)


def norm_slope(s: Fn) -> float:
    r"""The predicted slope, per unit spike r, of the trained bulk's squared row norm against
    :math:`w^{0\top}_i v`: :math:`k/r=2\,\mathbb E[\sigma He_3]/\mu_1` (docs/theory/srf-theory.md §2, "Row norms";
    derivations/l_row_norm_heterogeneity.py); ``Fn.c(k)`` is :math:`\mathbb E[\sigma He_k]/k!`."""
    return 2.0 * 6.0 * s.c(3) / s.c(1)


def step_matrices(s: Fn, X0, y0, W0, eta, need):
    r"""The step of docs/theory/srf-theory.md §1 (3) (uniform readout, :math:`\eta=\tilde\eta p`) and the
    variants that change it, summed over blocks of samples: ``D`` (error :math:`y-f_{W^0,a^0}`), and as ``need``
    names them ``no_f0`` (error y) and ``degree2`` (σ' truncated to degree 2).  ``s`` is the student
    (:class:`~onestep_theory.simulate.base.Fn`), ``eta`` is η̃."""
    n0, d = X0.shape
    p = W0.shape[0]
    out = {k: np.zeros((p, d)) for k in ("D",) + tuple(k for k in ("no_f0", "degree2") if k in need)}
    d2 = _degree2(s) if "degree2" in need else None
    for a in range(0, n0, CHUNK):
        Xc = X0[a:a + CHUNK]
        Z = Xc @ W0.T
        e = y0[a:a + CHUNK] - s.f(Z).sum(axis=1) / p
        if d2 is not None:
            out["degree2"] += (d2(Z) * e[:, None]).T @ Xc
        M = s.df(Z)
        del Z
        if "no_f0" in out:
            out["no_f0"] += (M * y0[a:a + CHUNK, None]).T @ Xc
        M *= e[:, None]
        out["D"] += M.T @ Xc
        del M
    for k in out:
        out[k] *= eta / n0
    return out


def build_variants(names, W0, D, steps, theta, rx, slope=0.0):
    """The first layers of the variants ``names`` (module docstring) of the network :math:`W^0+D`, as a dict
    name -> W, and the measured ``r``, ``c``, ``gamma``, ``vhat``, ``dbar``.  ``steps`` holds the changed steps
    of :func:`step_matrices` (``no_f0``, ``degree2``) when those variants are asked for; ``rx`` is the Generator of
    the variants' own draws; ``slope`` is the predicted :math:`k/r` of ``srf_rescaled`` (:func:`norm_slope`)."""
    p, d = W0.shape
    dbar = D.mean(axis=0)
    r = float(np.linalg.norm(dbar))
    vh = dbar / r if r > 0 else unit_vector(rx, d)
    F = D - dbar[None, :]
    B = W0 + F
    c = float(np.sum(B * B)) / p
    W = {"network": W0 + D}
    for name in names:
        if name == "srf":
            W[name] = math.sqrt(c) * W0 + dbar[None, :]
        elif name == "ideal_spike":
            g = float(theta @ vh)
            tp = rx.standard_normal(d)
            tp -= (tp @ theta) * theta
            tp /= np.linalg.norm(tp)
            v = g * theta + math.sqrt(max(0.0, 1 - g * g)) * tp
            W[name] = B + r * v[None, :]
        elif name == "gaussian_bulk":
            G = rx.standard_normal((p, d)) / math.sqrt(d) + (rx.standard_normal((p, p)) @ F) / math.sqrt(p)
            W[name] = G + dbar[None, :]
        elif name == "homogeneous":
            Fh = F - np.outer(F @ vh, vh)
            Bh = W0 + Fh
            nb = np.linalg.norm(Bh, axis=1)
            W[name] = Bh * (math.sqrt(c) / nb)[:, None] + dbar[None, :]
        elif name == "equal_spike":
            W[name] = W["network"] - np.outer(F @ vh, vh)
        elif name == "equal_norm":
            nb = np.linalg.norm(B, axis=1)
            W[name] = B * (math.sqrt(c) / nb)[:, None] + dbar[None, :]
        elif name == "shuffled_norm":
            nb = np.linalg.norm(B, axis=1)
            W[name] = B * (nb[rx.permutation(p)] / nb)[:, None] + dbar[None, :]
        elif name == "fitted_norm":
            nb2 = np.sum(B * B, axis=1)
            ev = W0 @ vh
            fit = nb2.mean() + (float(ev @ (nb2 - nb2.mean())) / float(ev @ ev)) * ev
            W[name] = B * np.sqrt(np.clip(fit, 0.0, None) / nb2)[:, None] + dbar[None, :]
        elif name == "srf_rescaled":
            scale = np.sqrt(np.clip(1.0 + slope * r * (W0 @ vh) / c, 0.0, None))
            W[name] = math.sqrt(c) * scale[:, None] * W0 + dbar[None, :]
        elif name == "no_f0":
            W[name] = W0 + steps["no_f0"]
        elif name == "no_shared":
            sh = W0.sum(axis=0)
            sh /= np.linalg.norm(sh)
            W[name] = W0 + D - np.outer(D @ sh, sh)
        elif name == "no_self":
            W[name] = W["network"] - np.sum(F * W0, axis=1)[:, None] * W0
        elif name == "isotropic":
            E = rx.standard_normal((p, d))
            E *= math.sqrt(float(np.sum(F * F)) / float(np.sum(E * E)))
            W[name] = W0 + dbar[None, :] + E
        elif name == "degree2":
            W[name] = W0 + steps["degree2"]
    nb2 = np.sum(B * B, axis=1)
    stats = {"r": r, "c": c, "gamma": float(theta @ vh), "vhat": vh, "dbar": dbar,
             "norm_spread": float(np.std(nb2)) * math.sqrt(d)}
    for tag, u in (("", theta), ("_v", vh)):
        eps = W0 @ u
        slope = float(eps @ (nb2 - nb2.mean())) / float(eps @ eps)
        stats["norm_slope" + tag] = slope
        stats["norm_noise" + tag] = float(np.std(nb2 - nb2.mean() - slope * eps)) * math.sqrt(d)
    return W, stats


def _cge_diagnostics(student, X, Phi_net, stats, y, W):
    """The Result 3.2 diagnostics of the module docstring on the test block X, for the first layer W with features
    Phi_net (its bulk: W minus the mean row of the step, so that its pre-activations are t_i + r kappa)."""
    kap = X @ stats["vhat"]
    T = X @ (W - stats["dbar"][None, :]).T
    tm = T.mean(axis=1, keepdims=True)
    Tc = T - tm
    pm = Phi_net.mean(axis=1, keepdims=True)
    Bx = np.sum(Tc * (Phi_net - pm), axis=1) / np.sum(Tc * Tc, axis=1)
    Ax = pm[:, 0] - Bx * tm[:, 0]
    resid = Phi_net - Ax[:, None] - Bx[:, None] * T
    Cx = np.mean(resid * resid, axis=1)
    m0, m1, ms2 = cge_coeffs(student, stats["r"], stats["c"], kap)
    out = {}
    for name, got, want in (("cge_A", Ax, m0), ("cge_B", Bx, m1), ("cge_C", Cx, ms2)):
        out[name] = float(np.sqrt(np.mean((got - want) ** 2)) / np.sqrt(np.mean(want * want)))
    # y - E[y | kappa], with E[y | kappa] estimated per kappa-decile
    edges = np.quantile(kap, np.linspace(0, 1, 11)[1:-1])
    bins = np.searchsorted(edges, kap)
    ey = np.array([y[bins == b].mean() for b in range(10)])
    yr = y - ey[bins]
    ar = Ax - m0
    ar = ar - np.array([ar[bins == b].mean() for b in range(10)])[bins]
    den = math.sqrt(float(yr @ yr) * float(ar @ ar))
    out["cge_signal"] = float(yr @ ar) / den if den > 0 else 0.0
    return out


def sim_ablation(student, teacher, d, *, alpha0, eta, alpha, beta, lam=0.1, noise_var=0.0, n_test=20000,
                 variants=None, seed=0, reps=1, batch=4000, progress=None, force=False) -> SimulationResult:
    r"""Paired ablations of the one-giant-step network (module docstring; docs/studies/mechanism.md).

    The network is :func:`~onestep_theory.simulate.sim_giant_step`'s (uniform readout, square loss, one λ; the
    same seeds give the same network, its step summed in blocks of samples).  ``variants``: names of
    :data:`VARIANTS` (a list or a comma-separated string; default all).  Per repetition: ``test_error`` (the
    network), ``ablation_<name>`` (each variant's test error on the same readout data and test points), the
    measured ``r``, ``c``, ``gamma``; the row norms of the trained bulk: ``norm_spread`` (the standard
    deviation of :math:`\|b_i\|^2` times :math:`\sqrt d`), ``norm_slope`` (the slope of :math:`\|b_i\|^2` against
    :math:`w^{0\top}_i\theta`) and ``norm_noise`` (the spread left after that regression, times :math:`\sqrt d`),
    ``norm_slope_v``, ``norm_noise_v`` (the same against :math:`w^{0\top}_i\hat v`); and the equivalence
    diagnostics ``cge_A``, ``cge_B``, ``cge_C``,
    ``cge_signal`` on the first ``batch`` test points.  Extra randomness of a variant (``ideal_spike``,
    ``gaussian_bulk``, ``isotropic``) comes from a fourth stream of the repetition's seed, so the network's draws
    do not depend on which variants are built.
    """
    names = variant_names(variants)
    s, t = Fn(student, "student"), Fn(teacher, "teacher")
    d, n, p, n0 = sizes_srf(d, alpha=alpha, beta=beta, alpha0=alpha0, force=force, memory=lambda *z: ablation_peak(
        *z, variants=len(names), steps=1 + ("no_f0" in names) + ("degree2" in names), kf=s.kf, kd=s.kd, chunk=CHUNK,
        batch=batch, n_test=n_test, degree2="degree2" in names))
    check_reps(reps)
    lam = float(lam)
    if not (math.isfinite(lam) and lam > 0):
        raise InvalidParameterError("lam", lam, "one ridge lambda > 0")
    eta = float(check_real(eta, "eta", 0, MAX_ETA))      # the theory's range; beyond, the step overflows
    noise_var = nonnegative(noise_var, "noise_var")
    n_test = int(n_test)
    if n_test < 100:
        raise InvalidParameterError("n_test", n_test, "an integer >= 100")
    k_pred = norm_slope(s)
    t0, rows = time.perf_counter(), []
    for k, (rw, rtr, rte, rx) in enumerate(spawn(seed, reps, streams=4)):
        W0 = sphere_rows(rw, p, d)
        theta = unit_vector(rw, d)
        X0 = rtr.standard_normal((n0, d))
        y0 = t.f(X0 @ theta) + math.sqrt(noise_var) * rtr.standard_normal(n0)
        steps = step_matrices(s, X0, y0, W0, eta, names)
        del X0
        Ws, st = build_variants(names, W0, steps["D"], steps, theta, rx, slope=k_pred)
        del steps
        X = rtr.standard_normal((n, d))
        y = t.f(X @ theta) + math.sqrt(noise_var) * rtr.standard_normal(n)
        coefs = {}
        for name, W in Ws.items():
            coefs[name] = ridge_sum(s.f(X @ W.T), y, p).coef(lam)
        del X
        sq = dict.fromkeys(Ws, 0.0)
        done, row = 0, {}
        while done < n_test:
            m = min(batch, n_test - done)
            Xt = rte.standard_normal((m, d))
            yt = t.f(Xt @ theta)
            for name, W in Ws.items():
                Phi = s.f(Xt @ W.T)
                err = yt - Phi @ coefs[name] / math.sqrt(p)
                sq[name] += float(err @ err)
                if name in ("network", "srf") and done == 0:
                    diag = _cge_diagnostics(s.act, Xt, Phi, st, yt, Ws[name])
                    row.update({(key if name == "network" else f"srf_{key}"): v for key, v in diag.items()})
            done += m
        row = {"test_error": sq["network"] / n_test,
               **{f"ablation_{name}": sq[name] / n_test for name in Ws if name != "network"},
               **{key: st[key] for key in ("r", "c", "gamma", "norm_spread", "norm_slope", "norm_noise", "norm_slope_v",
                                           "norm_noise_v")}, **row}
        rows.append(row)
        report_progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="ablation",
        params=dict(student=s.act.name, teacher=t.act.name, d=d, n=n, p=p, n0=n0, alpha=n / d, beta=p / d,
                    alpha0=n0 / d, eta=eta, lam=lam, noise_var=noise_var, n_test=n_test, variants=list(names)),
        stats=collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="one giant step (blocks of samples), ridge per variant on shared data",
                              references=["docs/studies/mechanism.md", "docs/theory/srf-theory.md §10.2",
                                          "docs/theory/srf-theory.md §3"]))
