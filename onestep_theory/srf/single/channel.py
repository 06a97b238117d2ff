r"""The channel side of the saddle point for a general convex loss (docs/theory/srf-theory.md §4.9; [CPDKLZL24] (97),
(118)–(121)), float64.

Given κ, the training output is :math:`\omega=\bar m+\mu_1\psi z+s\,\xi`, :math:`s=\sqrt{q-\mu_1^2\psi^2}`, and the
label :math:`y=\sigma_\star(\gamma\kappa+\rho z)` (noiseless: the classification losses take the teacher's
labels as they are).  The averages :math:`\langle f_{\rm out}\rangle,\langle f_{\rm out}^2\rangle,
\langle\partial_\omega f_{\rm out}\rangle,\langle zf_{\rm out}\rangle` over :math:`(z,\xi)` use

* in z: composite Gauss–Legendre on :math:`[-L,L]` split exactly at the teacher's kinks
  :math:`z=(b-\gamma\kappa)/\rho` (never Gauss–Hermite across a kink);
* in ξ: probabilists' Gauss–Hermite for a smooth loss; for the hinge loss the ξ-average is taken in closed
  form (:math:`f_{\rm out}` is piecewise linear in ω: truncated Gaussian moments).

The hats, the (length-capped, docs/theory/srf-theory.md §13) Newton update of the mean overlap m (its fixed point is :math:`\mathbb E_\kappa[\mu_0\langle
f_{\rm out}\rangle]=0`), the training loss and the classification error follow.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from ...hermite.quadrature import gauss_hermite, gauss_legendre

__all__ = ["InnerRule", "general_hats", "inner_rule"]

_L = 10.0                       # z-range: the Gaussian weight beyond 10 is below 1e-22


class InnerRule:
    """z-panels (per κ node, split at the teacher's kinks) and the ξ Gauss–Hermite rule of one refinement level."""

    def __init__(self, kappa, gamma, kinks, level):
        n = 40 + 20 * level
        t, wt = gauss_legendre(n)
        rho = math.sqrt(max(0.0, 1 - gamma * gamma))
        cuts = [] if rho == 0 else [(b - gamma * kappa) / rho for b in kinks]
        edges = np.column_stack([np.full_like(kappa, -_L)] + [np.clip(c, -_L, _L) for c in cuts] +
                                [np.full_like(kappa, _L)])
        edges.sort(axis=1)
        half, mid = np.diff(edges, axis=1) / 2, (edges[:, 1:] + edges[:, :-1]) / 2
        z = (mid[:, :, None] + half[:, :, None] * t[None, None, :]).reshape(len(kappa), -1)
        wz = (half[:, :, None] * wt[None, None, :]).reshape(len(kappa), -1) * np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        self.z, self.wz, self.rho, self.gamma = z, wz, rho, gamma
        self.xi, self.wxi = gauss_hermite(32 + 16 * level)


def inner_rule(kappa, gamma, kinks, level) -> InnerRule:
    return InnerRule(np.asarray(kappa, float), float(gamma), tuple(float(b) for b in kinks), int(level))


def _hinge_averages(y, mu, s, V):
    """Closed-form ξ-averages of f_out, f_out^2, d f_out for max(0, 1 - y x) with ω ~ N(mu, s^2)."""
    ys = np.where(y != 0, y, 1.0)
    a, b = (1 - V * ys * ys) / ys, 1 / ys              # B: y w <= 1 - V y^2 (f = y); A: y w >= 1 (f = 0)
    lo, hi = np.minimum(a, b), np.maximum(a, b)         # C between them: f = (1/y - w) / V
    ss = np.maximum(s, 1e-300)
    al, be = (lo - mu) / ss, (hi - mu) / ss
    Pc = ndtr(be) - ndtr(al)
    pa, pb = np.exp(-al * al / 2) / math.sqrt(2 * math.pi), np.exp(-be * be / 2) / math.sqrt(2 * math.pi)
    Ew = mu * Pc + s * (pa - pb)                                     # E[w; C]
    with np.errstate(invalid="ignore"):
        t2 = np.where(np.isfinite(al), al * pa, 0.0) - np.where(np.isfinite(be), be * pb, 0.0)
    Ew2 = (mu * mu + s * s) * Pc + 2 * mu * s * (pa - pb) + s * s * t2
    Pb = np.where(y > 0, ndtr(al), 1 - ndtr(be))                     # B is below C for y > 0, above for y < 0
    ef = y * Pb + (Pc / ys - Ew) / V
    ef2 = y * y * Pb + (Pc / (ys * ys) - 2 * Ew / ys + Ew2) / (V * V)
    edf = -Pc / V
    # training loss ℓ(y, prox): 0 on A and C, 1 - y w - V y^2 on B
    EwB = np.where(y > 0, mu * ndtr(al) - s * pa, mu * (1 - ndtr(be)) + s * pb)
    tl = (1 - V * y * y) * Pb - y * EwB
    zero = y == 0
    return (np.where(zero, 0.0, ef), np.where(zero, 0.0, ef2), np.where(zero, 0.0, edf),
            np.where(zero, 1.0, tl))


def _xi_averages(loss, R: InnerRule, y, mu, s, Vk, extras, points=10**6):
    """ξ-averages of f_out, f_out², ∂f_out (and, with ``extras``, of ℓ(y, prox)) for a loss without a closed form,
    over blocks of κ-rows of at most ``points`` (κ, z, ξ)-points each (memory stays bounded at high levels)."""
    N, nz = mu.shape
    out = [np.empty((N, nz)) for _ in range(4)]
    M = len(R.xi) if not loss.kinks else (2 * len(loss.kinks) + 1) * _panel_nodes(len(R.xi))
    step = max(1, points // (nz * M))
    for a in range(0, N, step):
        b = slice(a, min(N, a + step))
        yb, mb, sb, vb = y[b], mu[b], s[b, None], Vk[b]
        if loss.kinks:                   # a kinked user loss: Gauss–Legendre panels in ξ split at f_out's kinks
            xi, wxi = _split_xi(loss, yb, mb, sb, vb, len(R.xi))
        else:
            xi, wxi = R.xi[None, None, :], R.wxi[None, None, :]
        om = mb[:, :, None] + sb[:, :, None] * xi
        p, dp = loss.prox(yb[:, :, None], om, vb[:, :, None])
        f, df = _fout(loss, yb[:, :, None], om, vb[:, :, None], p, dp)
        for o, v in zip(out, (f, f * f, df)):
            o[b] = np.sum(v * wxi, axis=-1)
        out[3][b] = np.sum(loss.value(yb[:, :, None], p) * wxi, axis=-1) if extras else 0.0
    return tuple(out)


def _fout(loss, y, om, V, p, dp):
    r""":math:`(f_{\rm out},\partial_\omega f_{\rm out})` without cancellation (docs/theory/srf-theory.md §13): off a
    kink the prox solves :math:`x-\omega+V\ell'(y,x)=0`, so :math:`f_{\rm out}=(x-\omega)/V=-\ell'(y,x)` and
    :math:`\partial_\omega f_{\rm out}=-\ell''/(1+V\ell'')`.  The differences :math:`(x-\omega)/V`,
    :math:`(\partial_\omega x-1)/V` lose :math:`\log_{10}(|\omega|/(V|\ell'|))` digits: with ``1e-20*(y-yhat)**2``
    at λ = 0.1 all of them (exit 3, "3 digits reached").  The rounding of x (:math:`\epsilon|x|`) enters
    :math:`-\ell'(y,x)` times :math:`\ell''` and the difference times 1/V, so f is taken from ℓ' where
    :math:`V\ell''\le1` and from the difference elsewhere (a steep loss, ``1e6*(y-yhat)**2``).  On a kink
    (:math:`\partial_\omega x=0`) the difference is kept: x = b is exact there."""
    if loss.d1 is None or loss.d2 is None:
        return (p - om) / V, (dp - 1) / V
    with np.errstate(over="ignore", invalid="ignore"):
        k = np.maximum(loss.d2(y, p), 0.0)
        on = (dp == 0) | ~(V * k <= 1)
        f = np.where(on, (p - om) / V, -loss.d1(y, p))
        df = np.where(dp == 0, -1 / V, -k / (1 + V * k))
    return f, df


def _panel_nodes(nxi):
    return max(20, nxi // 2 + 4)


def _split_xi(loss, y, mu, s, V, nxi):
    r"""ξ-nodes and weights (standard normal) per (κ, z) point, Gauss–Legendre panels on :math:`[-L,L]` split where
    :math:`f_{\rm out}` has a kink: ω at which the prox reaches or leaves a kink b of the loss,
    :math:`\omega=b+V\ell'(y,b^\mp)` (docs/theory/srf-theory.md §13).  ``nxi`` (the Gauss–Hermite count of the
    level) sets the nodes per panel, so the refinement error covers this rule too."""
    cuts = []
    for bfn in loss.kinks:
        b = np.asarray(bfn(y, mu), float)
        ok = np.isfinite(b)
        bb = np.where(ok, b, 0.0)
        dl = 1e-9 * (1 + np.abs(bb))
        for sg in (-1, 1):
            wc = bb + V * loss.d1(y, bb + sg * dl)
            cuts.append(np.where(ok & np.isfinite(wc), (wc - mu) / np.maximum(s, 1e-300), _L))
    edges = np.sort(np.stack([np.full_like(mu, -_L)] + [np.clip(c, -_L, _L) for c in cuts] + [np.full_like(mu, _L)],
                             axis=-1), axis=-1)
    t, wt = gauss_legendre(_panel_nodes(nxi))
    half, mid = np.diff(edges, axis=-1) / 2, (edges[..., 1:] + edges[..., :-1]) / 2
    xi = (mid[..., None] + half[..., None] * t).reshape(*mu.shape, -1)
    wxi = (half[..., None] * wt).reshape(*mu.shape, -1) * np.exp(-xi * xi / 2) / math.sqrt(2 * math.pi)
    return xi, wxi


def _m_step(m, g, dg):
    r"""One safeguarded Newton step on the mean overlap: :math:`g(m)=\mathbb E_\kappa[\mu_0\langle f_{\rm out}\rangle]`
    is non-increasing in m (:math:`\partial_\omega f_{\rm out}\le0`, ``dg`` :math:`=-g'\ge0`), so the step goes
    the way of g's sign; its length is at most :math:`1+|m|` (docs/theory/srf-theory.md §13).  Where
    :math:`\langle\partial_\omega f_{\rm out}\rangle` nearly vanishes (the hinge: every ω outside its margin band)
    the full step was unbounded (1e4, then 1e16 from the default start) and every later state lay on the flat
    part of the loss; the bound keeps the map's fixed points and makes the walk to a far m geometric."""
    rad = 1.0 + abs(m)
    if not (dg > 0 and math.isfinite(dg)):
        return m + (rad if g > 0 else -rad if g < 0 else 0.0)
    step = g / dg
    return m + max(-rad, min(rad, step))


def general_hats(loss, R: InnerRule, teacher_fn, k, w, mu0, mu1, ms2, m, th, ps, V, q, alpha, beta,
                 spike_channel=True, extras=False):
    r"""Hats of docs/theory/srf-theory.md §4.9 and the Newton-updated m for ``loss`` at the current state.

    Returns ``(hV1, hV2, hq1, hq2, hth, hps, m_new)`` and, with ``extras``, a dict with ``train_loss``
    (:math:`\mathbb E\langle\ell(y,\mathrm{prox})\rangle`) and ``class_error``
    (:math:`\mathbb P[\mathrm{sign}\,\hat y\ne\mathrm{sign}\,y]` for the test predictor of §4.7)."""
    mbar = mu0 * m + mu1 * k * th
    a1 = mu1 * ps
    s = np.sqrt(np.maximum(q - a1 * a1, 0.0))
    y = teacher_fn(R.gamma * k[:, None] + R.rho * R.z)                  # (N, nz)
    mu = mbar[:, None] + a1[:, None] * R.z
    Vk = V[:, None]
    if loss.closed_average != "hinge":
        ef, ef2, edf, tl = _xi_averages(loss, R, y, mu, s, Vk, extras)
    else:
        ef, ef2, edf, tl = _hinge_averages(y, mu, s[:, None], Vk)
    Ef, Ef2, Edf = (np.sum(R.wz * a, axis=1) for a in (ef, ef2, edf))
    Ezf = np.sum(R.wz * R.z * ef, axis=1)
    E = (lambda arr: w @ arr)  # noqa: E731
    aB, aS = alpha / beta, alpha / math.sqrt(beta)
    hV1, hV2 = -aB * E(mu1 * mu1 * Edf), -aB * E(ms2 * Edf)
    hq1, hq2 = aB * E(mu1 * mu1 * Ef2), aB * E(ms2 * Ef2)
    hth = aS * E(k * mu1 * Ef) if spike_channel else 0.0
    hps = aS * E(mu1 * (Ezf - a1 * Edf))
    m_new = _m_step(m, E(mu0 * Ef), E(mu0 * mu0 * -Edf)) if E(mu0 * mu0) > 1e-14 else 0.0 * m
    out = (hV1, hV2, hq1, hq2, hth, hps, m_new)
    if not extras:
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        ce = np.where(s[:, None] > 0, ndtr(-np.sign(y) * mu / np.maximum(s[:, None], 1e-300)),
                      (np.sign(mu) != np.sign(y)).astype(float))
    return out, {"train_loss": float(E(np.sum(R.wz * tl, axis=1))),
                 "class_error": float(E(np.sum(R.wz * ce, axis=1)))}
