r"""The channel side of the K-group saddle point (docs/theory/srf-theory.md §8): the state packing, the hats,
the mean overlaps and the test error (25) with the group sums — shared by the asymptotic prior
(:mod:`~onestep_theory.srf.groupprior`) and the finite-W prior on sampled bulks (:mod:`~onestep_theory.srf.groups`).

The same code runs on float64 arrays and on numpy object arrays of mpf (a :class:`~onestep_theory.srf.kappa.GroupSetup`
built with ``dps``).

References
----------
[CPDKLZL24] arXiv:2402.04980, Sec. 4.4, App. D, (18), (20), (25), (32); docs/theory/srf-theory.md §8.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from .kappa import GroupSetup

__all__ = ["StateLayout", "group_channel", "min_norm_solve", "M_RCOND"]

#: Relative cut-off of the singular values in the minimum-norm mean overlaps (docs/theory/srf-theory.md §8).
M_RCOND = 1e-10


class StateLayout:
    """Packing of the solver state (θ, ψ, Q1, q2, V1, V2): K-vectors and upper triangles of the K×K matrices.

    The mean overlaps m are not part of it: they have no conjugate (§4.4) and are an explicit function of
    (θ, V1, V2) (:func:`group_channel`), so the fixed point is solved without them — which keeps the residual
    well conditioned when the mean-overlap system is nearly singular (nearly equal groups)."""

    def __init__(self, K):
        self.K = K
        self.iu = np.triu_indices(K)
        t = len(self.iu[0])
        self.sizes = (K, K, t, K, t, K)
        self.size = sum(self.sizes)

    def unpack(self, x):
        parts, i = [], 0
        obj = getattr(np.asarray(x), "dtype", None) == object
        for n in self.sizes:
            parts.append(np.asarray(x[i:i + n], dtype=object if obj else float))
            i += n
        th, ps, q1, q2, v1, v2 = parts
        return th, ps, self.sym(q1), q2, self.sym(v1), v2

    def sym(self, t):
        M = np.zeros((self.K, self.K), dtype=t.dtype)
        M[self.iu] = t
        low = np.tril_indices(self.K, -1)
        M[low] = M.T[low]
        return M

    def pack(self, th, ps, Q1, q2, V1, V2):
        return np.concatenate([th, ps, Q1[self.iu], q2, V1[self.iu], V2])


def min_norm_solve(A, b):
    r"""Minimum-norm least-squares solution of the symmetric positive semi-definite system A m = b: eigenvalues
    below :data:`M_RCOND` times the largest are dropped (float64: numpy; mpf: mpmath's ``eigsy``).  Returns
    ``(m, rank)``; a zero matrix gives m = 0, rank 0."""
    K = len(b)
    mp = getattr(A, "dtype", None) == object
    top = max(abs(v) for v in np.ravel(A))
    if top <= 1e-14:
        zero = np.array([mpmath.mpf(0)] * K, dtype=object) if mp else np.zeros(K)
        return zero, 0
    if not mp:
        e, U = np.linalg.eigh(A)
    else:
        e, U = mpmath.eigsy(mpmath.matrix(A.tolist()))
        e = np.array([e[i] for i in range(K)], dtype=object)
        U = np.array(U.tolist(), dtype=object)
    keep = [i for i in range(K) if e[i] > M_RCOND * max(e)]
    proj = U.T @ b
    coef = np.array([proj[i] / e[i] if i in keep else 0 * proj[i] for i in range(K)], dtype=A.dtype)
    return U @ coef, len(keep)


def group_channel(x, G: GroupSetup, alpha, beta, noise_var, layout: StateLayout):
    r"""The K-group channel equations, mean overlaps and (25) at the state ``x`` (docs/theory/srf-theory.md §8).

    The mean overlaps m are solved first, from (θ, V1, V2) alone, and used at once.  Returns
    ``(hats, m, test_error, m_rank)`` with ``hats = (hat_V1, hat_V2, hat_Q1, hat_q2, hat_theta,
    hat_psi)``: :math:`\hat V_{1,jl}=\frac\alpha\beta\mathbb E[\mu_1^{(j)}\mu_1^{(l)}/(1+V)]`,
    :math:`\hat V_{2,j}=\frac\alpha\beta\mathbb E[(\mu_\star^{(j)})^2/(1+V)]`, :math:`\hat Q_1,\hat q_2` with an
    extra :math:`B/(1+V)`, :math:`\hat\vartheta_j=\frac\alpha{\sqrt\beta}\mathbb E[\kappa\mu_1^{(j)}(h-\bar m)/(1+V)]`,
    :math:`\hat\psi_j=\frac\alpha{\sqrt\beta}\mathbb E[\mu_1^{(j)}h_1/(1+V)]`; m is the minimum-norm solution of
    :math:`\sum_l\mathbb E[\mu_0^{(j)}\mu_0^{(l)}/(1+V)]m_l=\mathbb E[\mu_0^{(j)}(h-\kappa\sum_l\mu_1^{(l)}\vartheta_l)/(1+V)]`.
    """
    th, ps, Q1, q2, V1, V2 = layout.unpack(x)
    mu0, mu1, ms2, k, w = G.mu0, G.mu1, G.mus2, G.kappa, G.w
    V = np.sum(mu1 * (V1 @ mu1), axis=0) + V2 @ ms2
    q = np.sum(mu1 * (Q1 @ mu1), axis=0) + q2 @ ms2
    inv = 1 / (1 + V)
    wi = w * inv
    m, rank = min_norm_solve((mu0 * wi) @ mu0.T, mu0 @ (wi * (G.h - k * (th @ mu1))))
    mbar = m @ mu0 + k * (th @ mu1)
    Ek = G.h2 - 2 * mbar * G.h + mbar * mbar - 2 * (ps @ mu1) * G.h1 + q
    wi2 = w * (Ek + noise_var) * inv * inv
    aB = alpha / beta
    aS = alpha / (mpmath.sqrt(beta) if G.mp else math.sqrt(beta))
    hV1, hV2 = aB * ((mu1 * wi) @ mu1.T), aB * (ms2 @ wi)
    hQ1, hq2 = aB * ((mu1 * wi2) @ mu1.T), aB * (ms2 @ wi2)
    hth = aS * (mu1 @ (wi * k * (G.h - mbar)))
    hps = aS * (mu1 @ (wi * G.h1))
    return (hV1, hV2, hQ1, hq2, hth, hps), m, w @ Ek, rank
