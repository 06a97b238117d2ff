r"""The channel side of the K-group saddle point (docs/theory/srf-theory.md §8): the state packing, the hats,
the mean overlaps and the test error (25) with the group sums — shared by the asymptotic prior
(:mod:`~onestep_theory.srf.grouped.groupprior`) and the finite-W prior on sampled bulks
(:mod:`~onestep_theory.srf.grouped.groups`).

The same code runs on float64 arrays and on numpy object arrays of mpf (a
:class:`~onestep_theory.srf.features.kappa.GroupSetup` built with ``dps``).

References
----------
[CPDKLZL24] arXiv:2402.04980, Sec. 4.4, App. D, (18), (20), (25), (32); docs/theory/srf-theory.md §8.
"""

from __future__ import annotations

import math

import flint
import mpmath
import numpy as np

from ...core.caches import register
from ...core.precision import arb_to_mpf, mpf_to_arb
from ..features.kappa import GroupSetup

__all__ = ["StateLayout", "group_channel", "min_norm_solve", "M_RCOND", "ArbChannel"]

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


class ArbChannel:
    r""":func:`group_channel` for a setup with ``dps`` (mpf state, mpf results), on Arb matrices: the node products
    :math:`\mu_1^{(j)}\mu_1^{(l)}`, :math:`(\mu_\star^{(j)})^2` and :math:`\mu_0^{(j)}\mu_0^{(l)}` are set up once
    per κ-rule (:meth:`of`), so that V, q and the hats are products of an n×N Arb matrix with a vector (in C)
    instead of K²N mpf operations in Python.  Same equations, same order of the sums' terms up to the
    rounding of the working precision (call inside its context; midpoints are used)."""

    def __init__(self, G: GroupSetup):
        K, N = G.mu1.shape
        self.K, self.N, self.iu = K, N, np.triu_indices(K)
        a = (lambda arr: [mpf_to_arb(v) for v in np.ravel(arr)])  # noqa: E731
        mu0, mu1, ms2 = (np.array(a(m), dtype=object).reshape(K, N) for m in (G.mu0, G.mu1, G.mus2))
        i0, i1 = self.iu
        prod = [mu1[j] * mu1[l] for j, l in zip(i0, i1)]
        dbl = [2 if j != l else 1 for j, l in zip(i0, i1)]
        self.B = flint.arb_mat([list(r) for r in prod] + [list(r) for r in ms2])                       # (n, N)
        self.C = flint.arb_mat([[p[n] * f for p, f in zip(prod, dbl)] + list(ms2[:, n]) for n in range(N)])
        self.P0 = flint.arb_mat([list(mu0[j] * mu0[l]) for j, l in zip(i0, i1)])
        self.mu0, self.mu1 = flint.arb_mat([list(r) for r in mu0]), flint.arb_mat([list(r) for r in mu1])
        self.mu0T, self.mu1T = self.mu0.transpose(), self.mu1.transpose()
        self.k, self.w, self.h, self.h1, self.h2 = (a(v) for v in (G.kappa, G.w, G.h, G.h1, G.h2))

    _cache: dict = {}

    @classmethod
    def of(cls, G: GroupSetup) -> "ArbChannel":
        """The channel of ``G``, set up once (the last four setups are kept; emptied by ``clear_caches``)."""
        hit = cls._cache.get(id(G))
        if hit is None or hit[0] is not G or hit[1] != flint.ctx.prec:
            if len(cls._cache) >= 4:
                cls._cache.pop(next(iter(cls._cache)))
            hit = cls._cache[id(G)] = (G, flint.ctx.prec, cls(G))
        return hit[2]

    @staticmethod
    def _col(v):
        return flint.arb_mat([[mpf_to_arb(t)] for t in v])

    def _sym(self, col, off=0):
        t = len(self.iu[0])
        M = np.empty((self.K, self.K), dtype=object)
        for i, (j, l) in enumerate(zip(*self.iu)):
            M[j, l] = M[l, j] = arb_to_mpf(col[off + i, 0])
        return M, np.array([arb_to_mpf(col[off + t + j, 0]) for j in range(self.K)], dtype=object)

    def __call__(self, x, alpha, beta, noise_var, layout: StateLayout):
        th, ps, Q1, q2, V1, V2 = layout.unpack(x)
        N, K = self.N, self.K
        V = self.C * self._col(np.concatenate([V1[self.iu], V2]))
        q = self.C * self._col(np.concatenate([Q1[self.iu], q2]))
        inv = [1 / (1 + V[n, 0]) for n in range(N)]
        wi = [wn * vn for wn, vn in zip(self.w, inv)]
        tm = self.mu1T * self._col(th)                                  # (th @ mu1) at the nodes
        A = self.P0 * flint.arb_mat([[v] for v in wi])
        Am = np.empty((K, K), dtype=object)
        for i, (j, l) in enumerate(zip(*self.iu)):
            Am[j, l] = Am[l, j] = arb_to_mpf(A[i, 0])
        rhs = self.mu0 * flint.arb_mat([[wi[n] * (self.h[n] - self.k[n] * tm[n, 0])] for n in range(N)])
        m, rank = min_norm_solve(Am, np.array([arb_to_mpf(rhs[j, 0]) for j in range(K)], dtype=object))
        mm = self.mu0T * self._col(m)
        pm = self.mu1T * self._col(ps)
        mbar = [mm[n, 0] + self.k[n] * tm[n, 0] for n in range(N)]
        nv = mpf_to_arb(noise_var)
        Ek = [self.h2[n] - 2 * mbar[n] * self.h[n] + mbar[n] * mbar[n] - 2 * pm[n, 0] * self.h1[n] + q[n, 0]
              for n in range(N)]
        wi2 = [self.w[n] * (Ek[n] + nv) * inv[n] * inv[n] for n in range(N)]
        aB, aS = mpf_to_arb(alpha / beta), mpf_to_arb(alpha / mpmath.sqrt(beta))
        h1 = self.B * flint.arb_mat([[v] for v in wi])
        h2 = self.B * flint.arb_mat([[v] for v in wi2])
        hV1, hV2 = self._sym(h1)
        hQ1, hq2 = self._sym(h2)
        th_ = self.mu1 * flint.arb_mat([[wi[n] * self.k[n] * (self.h[n] - mbar[n])] for n in range(N)])
        ps_ = self.mu1 * flint.arb_mat([[wi[n] * self.h1[n]] for n in range(N)])
        cv = (lambda M, s: np.array([arb_to_mpf(s * M[j, 0]) for j in range(K)], dtype=object))  # noqa: E731
        eps = sum((self.w[n] * Ek[n] for n in range(N)), flint.arb(0))
        aBm = arb_to_mpf(aB)
        return (aBm * hV1, aBm * hV2, aBm * hQ1, aBm * hq2, cv(th_, aS), cv(ps_, aS)), m, arb_to_mpf(eps), rank


register(ArbChannel._cache.clear)
