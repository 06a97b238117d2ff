r"""Prior equations (19) of [CPDKLZL24]: the spectral integrals of the bulk.

* F3, the asymptotic Marchenko–Pastur form: :func:`mp_integrals` in closed form through the Stieltjes
  transform, or :func:`mp_integrals_quad` by Gauss–Legendre quadrature of the measure
  (docs/theory/srf-theory.md §4.5);
* F1, the empirical-spectrum form for a given finite bulk: :func:`empirical_from_weights` and
  :func:`from_trained` (docs/theory/srf-theory.md §4.6).

References
----------
[CPDKLZL24] arXiv:2402.04980, eq. (19), App. B–C, Assumption 3.2, (115)–(117).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from ...core.caches import cached
from ...core.precision import refined
from ...hermite.quadrature import gauss_legendre

__all__ = ["mp_integrals", "mp_integrals_quad", "empirical_from_weights", "from_trained"]


def mp_integrals(c, beta, lam, hV1, hV2, sqrt=math.sqrt):
    r"""Closed-form Marchenko–Pastur integrals (docs/theory/srf-theory.md §4.5): returns ``(V1, V2, J1, J2, K0)``.

    With :math:`t=(\lambda+\hat V_2)/\hat V_1` and :math:`s=\int d\mu_{\rm MP}/(\varrho+t)` the positive root of
    :math:`c\beta ts^2+(t+c-c\beta)s-1=0`:
    :math:`V_2=s/\hat V_1`, :math:`V_1=(1-ts)/\hat V_1`, :math:`K_0=-s'/\hat V_1^2`, :math:`J_2=(s+ts')/\hat V_1^2`,
    :math:`J_1=(1-2ts-t^2s')/\hat V_1^2`.  Works for float and mpf (pass ``sqrt=mpmath.sqrt``).
    """
    L = lam + hV2
    # t > x_+ / eps (x_+ = c(1+sqrt(beta))^2 the spectrum's top, eps the unit of the working precision): hV1 rho <=
    # eps L on the support, so the hV1 = 0 forms are exact to rounding; the closed form overflowed there in float64
    # (t^2 > 1e308: a loss of scale 1e-300) and, in mpmath, lost 2 log10(t/c) digits to cancellation (an even
    # student at r = 0: mu1 = 0 to rounding, hV1 ~ 1e-80, printed q1 = -2e-111 +/- 3e-23 where the limit is 0.9637)
    mp = isinstance(hV1, mpmath.mpf)
    unit = mpmath.mpf(2) ** -mpmath.mp.prec if mp else 2.0 ** -52
    if hV1 == 0 or L * unit > hV1 * c * (1 + sqrt(beta)) ** 2:
        return c / L, 1 / L, c * c * (1 + beta) / L**2, c / L**2, 1 / L**2
    if mp and L > 10 * c * hV1:
        # the cancellation in j1 and J2 costs 2 log10(t/c) digits: computed with as many more (at most twice the
        # working digits: beyond, the hV1 = 0 forms above apply), then rounded back
        lost = math.ceil(2 * float(mpmath.log10(L / (c * hV1)))) + 2
        with refined(lost, why="the closed form's cancellation at large t = (lam + hV2)/hV1: 2 log10(t/c) digits"):
            out = _closed(c, beta, L, hV1, sqrt)
        return tuple(+v for v in out)
    return _closed(c, beta, L, hV1, sqrt)


def _closed(c, beta, L, hV1, sqrt):
    """The closed forms of :func:`mp_integrals` at t = L / hV1 > 0 (at the ambient precision)."""
    t = L / hV1
    bq = t + c - c * beta
    disc = sqrt(bq * bq + 4 * c * beta * t)
    # positive root without cancellation: rationalised form for bq >= 0, direct form for bq < 0 (beta > 1)
    s = 2 / (bq + disc) if bq >= 0 else (disc - bq) / (2 * c * beta * t)
    sp_ = -(c * beta * s * s + s) / (2 * c * beta * t * s + bq)
    one_m_ts = (1 - t * s) if t <= c else c * s * (1 - beta + beta * t * s)   # = 1 - ts (from the quadratic)
    j1 = 1 - 2 * t * s - t * t * sp_       # = int rho^2/(rho+t)^2; loses ~2 log10(t/c) digits for t >> c
    return one_m_ts / hV1, s / hV1, j1 / hV1**2, (s + t * sp_) / hV1**2, -sp_ / hV1**2


@cached(maxsize=32)
def _mp_nodes(c, beta, n):
    """Gauss–Legendre nodes on t in (0, pi) for the MP density (docs/theory/srf-theory.md §5, 'MP measure')."""
    xg, wg = gauss_legendre(n)
    t = (xg + 1) * math.pi / 2
    w = wg * math.pi / 2
    xm, xp = c * (1 - math.sqrt(beta)) ** 2, c * (1 + math.sqrt(beta)) ** 2
    rho = xm + (xp - xm) * np.cos(t / 2) ** 2
    dens = (xp - xm) ** 2 * np.sin(t) ** 2 / (8 * math.pi * beta * c * rho)
    atom = max(0.0, 1 - 1 / beta)
    return rho, w * dens, atom


def mp_integrals_quad(c, beta, lam, hV1, hV2, nodes=800):
    r"""The same integrals by Gauss–Legendre quadrature of :math:`\mu_{\rm MP}` plus the atom (float64).

    :math:`\varrho=x_-+(x_+-x_-)\cos^2\frac t2`, :math:`d\mu=\frac{(x_+-x_-)^2\sin^2t}{8\pi\beta c\varrho}dt` (§5).
    """
    rho, w, atom = _mp_nodes(float(c), float(beta), int(nodes))
    S = lam + hV1 * rho + hV2
    S0 = lam + hV2
    return (float(w @ (rho / S)), float(w @ (1 / S)) + atom / S0, float(w @ (rho**2 / S**2)),
            float(w @ (rho / S**2)), float(w @ (1 / S**2)) + atom / S0**2)


def empirical_from_weights(W_tilde, v, theta):
    r"""F1 weights (docs/theory/srf-theory.md §4.6, Assumption 3.2, (115)–(117)) for a given finite bulk.

    Inputs: the bulk :math:`\tilde W\in\mathbb R^{p\times d}`, a unit vector ``v`` and the teacher ``theta``.
    With :math:`\gamma=\theta^\top v`, :math:`\theta_\perp=(\theta-\gamma v)/\rho` and the eigenpairs
    :math:`(D_i,u_i)` of :math:`\Omega=\tilde W\Pi\tilde W^\top`: :math:`F_i=d(u_i^\top\tilde Wv)^2`,
    :math:`H_i=d(u_i^\top\tilde W\theta_\perp)^2`, :math:`G_i=d(u_i^\top\tilde Wv)(u_i^\top\tilde W\theta_\perp)`
    (H = G = 0 if ρ = 0).  Returns ``(D, F, H, G)``.
    """
    Wt = np.asarray(W_tilde, dtype=float)
    p, d = Wt.shape
    v = np.asarray(v, dtype=float)
    v = v / np.linalg.norm(v)
    theta = np.asarray(theta, dtype=float)
    theta = theta / np.linalg.norm(theta)
    gam = float(theta @ v)
    rho = math.sqrt(max(0.0, 1 - gam * gam))
    Wv = Wt @ v
    Omega = Wt @ Wt.T - np.outer(Wv, Wv)
    D, U = np.linalg.eigh(Omega)
    D = np.clip(D, 0, None)
    a = U.T @ Wv
    if rho < 1e-12:
        z = np.zeros_like(D)
        return D, d * a * a, z, z
    b = U.T @ (Wt @ ((theta - gam * v) / rho))
    return D, d * a * a, d * b * b, d * a * b


def from_trained(W1, W0=None):
    r"""sRF parameters of a trained first layer (docs/theory/srf-theory.md §4.6, 'Trained W1').

    With :math:`\bar w` the mean row of :math:`W^1-W^0` (or of :math:`W^1` if ``W0`` is None):
    :math:`r=\|\bar w\|`, :math:`v=\bar w/r`, :math:`\tilde W=W^1-\mathbf 1\bar w^\top`,
    :math:`c=\|\tilde W\|_F^2/p`.  Per-neuron variation of the row norms is ignored (one c), an
    approximation.  Returns ``(r, c, v, W_tilde)``.
    """
    W1 = np.asarray(W1, dtype=float)
    wbar = (W1 - (np.asarray(W0, dtype=float) if W0 is not None else 0)).mean(axis=0)
    r = float(np.linalg.norm(wbar))
    Wt = W1 - wbar[None, :]
    return r, float(np.sum(Wt * Wt)) / W1.shape[0], wbar / r, Wt
