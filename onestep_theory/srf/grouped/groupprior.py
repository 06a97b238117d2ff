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

from ...core.errors import ConvergenceError

__all__ = ["kgroup_resolvent", "kgroup_prior", "PriorDomainError", "PriorConvergenceError", "MAX_STEPS"]

#: Newton steps allowed for the K-vector fixed point (quadratic convergence: a handful suffice).
MAX_STEPS = 200
#: Convergence of the ν Newton: the last relative correction below this many units of the working precision.
STEP_ULPS = 256
#: ... or, once the corrections stop shrinking (the rounding floor of the map), below this many units.  The old
#: rule (stop when the step stops shrinking, whatever its size) returned ν off by O(1) where it grows from a poor
#: start (tests/test_kgroup_speed.py).
FLOOR_ULPS = 2 ** 20


class PriorDomainError(ValueError):
    """The hats leave the domain of the prior (a non-positive ν, a singular system)."""


class PriorConvergenceError(ConvergenceError, PriorDomainError):
    """Newton on ν did not converge: a ConvergenceError, and (for a trial state of an outer solver, which then
    damps or restarts) a domain error of the prior."""


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

    Solves :math:`1/\nu_j=\lambda+\hat V_{2,j}+c_jR_{jj}(\nu)` by Newton's method in :math:`u=1/\nu` from
    ``nu0`` (default: the lower bound :math:`\nu_j=1/(\lambda+\hat V_{2,j}+c_j\hat V_{1,jj})`, the value at
    Δ = 0); the map is monotone, so the positive root is unique.  In u the equation is
    :math:`u_j=\lambda+\hat V_{2,j}+c_jR_{jj}` with :math:`R=(A^{-1}+\Delta)^{-1}` concave and bounded in
    :math:`1/u`: Newton converges quadratically from the start even where ν is huge (a group with
    :math:`\beta\pi_j>1` at small λ; in ν it only doubled per step).  For complex λ = -z (Im z > 0; the
    spectrum) the root has Im ν > 0.  A Newton step that leaves the domain is halved; if Newton does not converge,
    damped fixed-point steps bring the start into its basin (``fallback``).  Converged means the last full
    relative correction is below :data:`STEP_ULPS` units of the working precision, or, when the corrections stop
    shrinking (the rounding floor), below :data:`FLOOR_ULPS` units; otherwise
    :class:`PriorConvergenceError` (a :class:`~onestep_theory.core.errors.ConvergenceError`) is raised — an
    unconverged root is never returned.  Runs at the ambient precision for mpf input.  Returns
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
    tol = mpmath.mpf(2) ** (-mpmath.mp.prec) * STEP_ULPS if mp else 2.0 ** -52 * STEP_ULPS
    # the root: nu > 0 for real lambda > 0; Im nu > 0 for lambda = -z, z in the upper half plane (a Stieltjes
    # transform; the spectrum of docs/theory/srf-theory.md §8)
    cplx = np.iscomplexobj(nu)
    valid = (lambda v: v.imag > 0) if cplx else (lambda v: v > 0)  # noqa: E731
    b = beta * pis * cs
    u = 1 / nu
    prev, size = None, math.inf
    for step in range(1, MAX_STEPS + 1):
        _, _, R = _pieces(hV1, nu, beta, pis, cs)
        g = u - lam2 - cs * np.diagonal(R)
        J = -((cs[:, None] * R * R) * (b * nu * nu)[None, :])
        for j in range(len(nu)):
            J[j, j] += 1
        du = _solve(J, -g)
        new = u + du
        size = max(abs(a) / abs(v) for a, v in zip(du, new))       # the full Newton correction
        # a step may leave the domain from a poor start: halve it (the root is inside)
        for halved in range(61):
            if all(valid(1 / v) for v in new):
                break
            du = du / 2
            new = u + du
        else:
            break
        u, nu = new, 1 / new
        if not size == size:                # NaN: the hats are out of the domain
            break
        if size < tol and not halved:
            delta, M, R = _pieces(hV1, nu, beta, pis, cs)
            return nu, delta, M, R, step
        if prev is not None and step > 6 and size >= prev:
            if size < tol * FLOOR_ULPS / STEP_ULPS and not halved:
                # on the rounding floor of an ill-conditioned R (hats spanning many decades): the noise of the
                # map, not a distance to the root; it enters the outer solver's last correction
                delta, M, R = _pieces(hV1, nu, beta, pis, cs)
                return nu, delta, M, R, step
            break                                               # stalled above the floor: not converged
        prev = size
    if fallback and all(valid(v) for v in nu):
        return kgroup_resolvent(lam, hV1, hV2, beta, pis, cs, _iterate(nu, lam2, hV1, beta, pis, cs),
                                fallback=False)
    if fallback:
        return kgroup_resolvent(lam, hV1, hV2, beta, pis, cs, _iterate(
            1 / (lam2 + cs * np.diagonal(hV1).copy()), lam2, hV1, beta, pis, cs), fallback=False)
    raise PriorConvergenceError(f"Newton on nu (docs/theory/srf-theory.md §8.1) did not converge: last relative "
                                f"correction {float(size):.1e} above {float(tol):.1e}", step, float(size))


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


def prior_jacobian(nu, delta, M, R, beta, pis, cs):
    r"""Jacobian of the prior's :math:`(V_1, V_2)` with respect to the hats :math:`(\hat V_1, \hat V_2)` at the root
    ``(nu, delta, M, R)`` of :func:`kgroup_resolvent`, both packed as (upper triangle of the K×K matrix, K-vector)
    — float64 or complex (docs/theory/srf-theory.md §8.1, "Second order").

    Along :math:`(\hat V_1,\hat V_2)\to(\hat V_1+tN_1,\hat V_2+tN_2)` the fixed point moves by
    :math:`L\,d\nu=-\nu^2\circ(N_2+c\circ\mathrm{diag}(M^\top N_1M))`,
    :math:`L=I-\mathrm{diag}(\nu^2c)(R\circ R)\mathrm{diag}(\beta\pi c)`, and
    :math:`dV_1=\frac1\beta(M\,d\Delta\,M^\top-PN_1P)`, :math:`dV_2=\pi\circ d\nu`, with :math:`P=M\Delta`,
    :math:`d\Delta=\beta\pi c\circ d\nu` (the derivatives behind :func:`kgroup_prior`'s :math:`Q_1, q_2`).  The
    columns are these directions for the packed coordinates (an off-diagonal coordinate moves both entries).

    >>> import numpy as np
    >>> A, b = np.array([[1.0, 0.3], [0.3, 0.8]]), np.array([0.2, 0.1])
    >>> pis, cs, iu = np.array([0.4, 0.6]), np.array([1.0, 1.5]), np.triu_indices(2)
    >>> def V(A):                               # packed (V1, V2) at the hats (A, b), lambda = 0.1, beta = 1
    ...     nu, delta, M, R, _ = kgroup_resolvent(0.1, A, b, 1.0, pis, cs)
    ...     return np.concatenate([(M * delta[None, :])[iu], pis * nu])
    >>> J = prior_jacobian(*kgroup_resolvent(0.1, A, b, 1.0, pis, cs)[:4], 1.0, pis, cs)
    >>> E, h = np.array([[0.0, 1.0], [1.0, 0.0]]), 1e-6          # the packed off-diagonal coordinate
    >>> bool(np.allclose((V(A + h * E) - V(A - h * E)) / (2 * h), J[:, 1], atol=1e-8))
    True
    """
    K = len(nu)
    i0, i1 = np.triu_indices(K)
    f = np.where(i0 == i1, 1.0, 2.0)
    L = np.eye(K) - ((nu * nu * cs)[:, None] * (R * R)) * (beta * pis * cs)[None, :]
    rhs = np.concatenate([-(nu * nu * cs)[:, None] * (M[i0] * M[i1] * f[:, None]).T, np.diag(-(nu * nu))], axis=1)
    try:
        dnu = np.linalg.solve(L, rhs)                           # (K, t + K)
    except np.linalg.LinAlgError:
        raise PriorDomainError("singular K x K system") from None
    dD = (beta * pis * cs)[:, None] * dnu
    dV1 = np.einsum("ak,kq,bk->abq", M, dD, M)
    P = M * delta[None, :]
    t = len(i0)
    outer = P[:, i0][:, None, :] * P[i1, :].T[None, :, :]       # P[:, j] P[l, :] for each packed (j, l)
    dV1[:, :, :t] -= outer + np.where(i0 == i1, 0.0, 1.0)[None, None, :] * np.transpose(outer, (1, 0, 2))
    return np.concatenate([dV1[i0, i1, :] / beta, pis[:, None] * dnu], axis=0)
