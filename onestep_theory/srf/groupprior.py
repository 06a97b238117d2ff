r"""The asymptotic prior of K readout groups: the deterministic equivalent of docs/theory/srf-theory.md §8.1.

The bulk of group j has rows of variance :math:`c_j` (fraction :math:`\pi_j`, :math:`p/d=\beta`); the prior
matrix is :math:`S=\lambda I+\sum_{jl}\hat V_{1,jl}P_j\Omega P_l+\sum_j\hat V_{2,j}P_j`.  As d → ∞ every
normalised trace of its inverse follows from one K-vector fixed point (a Dyson equation of the linear pencil
of S, derived in §8.1): with :math:`A=\hat V_1`, :math:`\Delta=\mathrm{diag}(\beta\pi_kc_k\nu_k)`,
:math:`M=(I+\Delta A)^{-1}` and :math:`R=AM`,

.. math::

    \nu_j=\frac1{\lambda+\hat V_{2,j}+c_jR_{jj}},\qquad V_{2,j}=\pi_j\nu_j,\qquad
    V_1=\tfrac1\beta M\Delta ,

and the second-order traces :math:`Q_1,q_2` are the derivatives of :math:`V_1,V_2` along the hats
(:func:`kgroup_prior`).  At K = 1 this is the Marchenko–Pastur form F3 of §4.5 exactly.  The code runs on
float64 arrays and on numpy object arrays of mpf (K×K linear algebra in mpmath).

References
----------
[DPCKLL24] arXiv:2410.18938, App. D, (155)–(157); [CPDKLZL24] arXiv:2402.04980, (19), App. D;
docs/theory/srf-theory.md §8.1, §4.5.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

__all__ = ["kgroup_resolvent", "kgroup_prior"]

#: Newton steps allowed for the K-vector fixed point (quadratic convergence: a handful suffice).
MAX_STEPS = 200


class PriorDomainError(ValueError):
    """The hats leave the domain of the prior (a non-positive ν, a singular system)."""


def _is_mp(a) -> bool:
    return getattr(np.asarray(a), "dtype", None) == object


def _solve(A, b):
    """Solve A x = b for a small dense system, float64 (numpy) or mpf (mpmath LU)."""
    if _is_mp(A):
        try:
            x = mpmath.lu_solve(mpmath.matrix(A.tolist()), mpmath.matrix(list(b)))
        except ZeroDivisionError:
            raise PriorDomainError("singular K x K system") from None
        return np.array([x[i] for i in range(len(b))], dtype=object)
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        raise PriorDomainError("singular K x K system") from None


def _inv(A):
    if _is_mp(A):
        try:
            X = mpmath.inverse(mpmath.matrix(A.tolist()))
        except ZeroDivisionError:
            raise PriorDomainError("singular K x K system") from None
        return np.array(X.tolist(), dtype=object)
    try:
        return np.linalg.inv(A)
    except np.linalg.LinAlgError:
        raise PriorDomainError("singular K x K system") from None


def _eye(K, like):
    if _is_mp(like):
        E = np.empty((K, K), dtype=object)
        E[...] = mpmath.mpf(0)
        for i in range(K):
            E[i, i] = mpmath.mpf(1)
        return E
    return np.eye(K)


def _pieces(A, nu, beta, pis, cs):
    K = len(nu)
    delta = beta * pis * cs * nu
    M = _inv(_eye(K, A) + delta[:, None] * A)
    return delta, M, A @ M


def _iterate(nu, lam2, hV1, beta, pis, cs, steps=400):
    """The damped fixed point nu <- 1/(lam2 + c R_jj(nu)): a contraction on the domain (nu > 0, or Im nu > 0), used
    to bring a start into Newton's basin."""
    for _ in range(steps):
        R = _pieces(hV1, nu, beta, pis, cs)[2]
        nu = (nu + 1 / (lam2 + cs * np.diagonal(R))) / 2
    return nu


def kgroup_resolvent(lam, hV1, hV2, beta, pis, cs, nu0=None, fallback=True):
    r"""The K-vector :math:`\nu` of docs/theory/srf-theory.md §8.1 and the matrices :math:`(\Delta, M, R)`.

    Solves :math:`1/\nu_j=\lambda+\hat V_{2,j}+c_jR_{jj}(\nu)` by Newton's method from ``nu0`` (default: the
    lower bound :math:`\nu_j=1/(\lambda+\hat V_{2,j}+c_j\hat V_{1,jj})`, the value at Δ = 0); the map is
    monotone, so the positive root is unique.  For complex λ = -z (Im z > 0; the spectrum) the root has Im ν > 0.
    A Newton step that leaves the domain is halved; if that fails, damped fixed-point steps bring the start into
    Newton's basin (``fallback``).  Runs at the ambient precision for mpf input.  Returns
    ``(nu, delta, M, R, steps)``.

    >>> import numpy as np
    >>> nu = kgroup_resolvent(0.1, np.array([[1.0]]), np.array([0.2]), 1.0, np.array([1.0]), np.array([1.0]))[0]
    >>> s = nu[0] * 1.0                     # K = 1: nu = s / hat V1 of the Marchenko-Pastur form (§4.5)
    >>> t = 0.3                             # (lambda + hat V2) / hat V1
    >>> bool(abs(t * s * s + t * s - 1) < 1e-14)  # c beta t s^2 + (t + c - c beta) s - 1 = 0 at c = beta = 1
    True
    """
    mp = _is_mp(hV1)
    lam2 = lam + hV2
    nu = (1 / (lam2 + cs * np.diagonal(hV1).copy())) if nu0 is None else nu0.copy()
    tol = mpmath.mpf(2) ** (8 - mpmath.mp.prec) if mp else 4e-16
    # the root: nu > 0 for real lambda > 0; Im nu > 0 for lambda = -z, z in the upper half plane (a Stieltjes
    # transform; the spectrum of docs/theory/srf-theory.md §8)
    cplx = np.iscomplexobj(nu)
    valid = (lambda v: v.imag > 0) if cplx else (lambda v: v > 0)  # noqa: E731
    prev = None
    for step in range(1, MAX_STEPS + 1):
        delta, M, R = _pieces(hV1, nu, beta, pis, cs)
        G = 1 / nu - lam2 - cs * np.diagonal(R)
        J = (cs[:, None] * R * R) * (beta * pis * cs)[None, :]
        for j in range(len(nu)):
            J[j, j] -= 1 / (nu[j] * nu[j])
        dn = _solve(J, -G)
        new = nu + dn
        # Newton may overshoot to a negative nu from a poor start: halve the step (the root is positive)
        for _ in range(60):
            if all(valid(v) for v in new):
                break
            dn = dn / 2
            new = nu + dn
        else:
            if fallback:
                return kgroup_resolvent(lam, hV1, hV2, beta, pis, cs, _iterate(nu, lam2, hV1, beta, pis, cs),
                                        fallback=False)
            raise PriorDomainError("no positive nu" if not cplx else "no nu with Im nu > 0")
        size = max(abs(a) / abs(b) for a, b in zip(dn, new))
        nu = new
        if size < tol or (prev is not None and step > 6 and size >= prev):
            delta, M, R = _pieces(hV1, nu, beta, pis, cs)
            return nu, delta, M, R, step
        prev = size
    raise PriorDomainError(f"Newton on nu did not converge in {MAX_STEPS} steps")


def kgroup_prior(hats, beta, lam, pis, cs, nu0=None):
    r"""The asymptotic K-group prior (docs/theory/srf-theory.md §8.1): from the hats
    ``(hat_V1 (K×K), hat_V2, hat_Q1 (K×K), hat_q2, hat_theta, hat_psi)`` return
    ``(theta, psi, Q1, q2, V1, V2, nu)`` with

    .. math::

        \vartheta_j=\sqrt\beta\hat\vartheta_jc_jV_{2,j},\quad \psi=\sqrt\beta V_1\hat\psi,\quad
        Q_1=\tfrac1\beta\big(P\hat N_1P-M\,d\Delta\,M^\top\big),\quad q_{2,j}=-\pi_jd\nu_j ,

    where :math:`P=\beta V_1`, :math:`\hat N_1=\hat Q_1+\hat\psi\hat\psi^\top`,
    :math:`\hat N_{2,j}=\hat q_{2,j}+c_j\hat\vartheta_j^2` (the annealed prior: the directions v and
    :math:`\theta_\perp` averaged, exact as d → ∞) and :math:`d\nu` solves the linearised fixed point along
    :math:`(\hat N_1,\hat N_2)`:
    :math:`\big(I-\mathrm{diag}(\nu^2c)(R\circ R)\mathrm{diag}(\beta\pi c)\big)d\nu=-\nu^2\circ(\hat N_2+c\circ
    \mathrm{diag}(M^\top\hat N_1M))`.
    """
    hV1, hV2, hQ1, hq2, hth, hps = hats
    nu, delta, M, R, _ = kgroup_resolvent(lam, hV1, hV2, beta, pis, cs, nu0)
    sb = mpmath.sqrt(beta) if _is_mp(hV1) else math.sqrt(beta)
    V2 = pis * nu
    P = M * delta[None, :]                  # M Delta = beta V1 (symmetric)
    V1 = P / beta
    N1 = hQ1 + hps[:, None] * hps[None, :]
    N2 = hq2 + cs * hth * hth
    K = len(nu)
    L = _eye(K, hV1) - ((nu * nu * cs)[:, None] * (R * R)) * (beta * pis * cs)[None, :]
    dnu = _solve(L, -(nu * nu) * (N2 + cs * np.diagonal(M.T @ N1 @ M)))
    ddelta = beta * pis * cs * dnu
    Q1 = (P @ N1 @ P - (M * ddelta[None, :]) @ M.T) / beta
    q2 = -pis * dnu
    theta = sb * hth * cs * V2
    psi = sb * (V1 @ hps)
    return theta, psi, Q1, q2, V1, V2, nu
