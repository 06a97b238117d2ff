r"""Bulk spectrum of the feature covariance :math:`A=\Phi^\top\Phi/p` with K readout groups (docs/theory/srf-theory.md
§7, §8.1): the V-equations of §7 with the asymptotic K-group prior at :math:`\lambda=-z`, float64.

.. math::

    \hat V_{1,jl}=\tfrac\alpha\beta\mathbb E_\kappa\Big[\frac{\mu_1^{(j)}\mu_1^{(l)}}{1+V}\Big],\quad
    \hat V_{2,j}=\tfrac\alpha\beta\mathbb E_\kappa\Big[\frac{(\mu_\star^{(j)})^2}{1+V}\Big],\quad
    V=\sum_{jl}\mu_1^{(j)}\mu_1^{(l)}V_{1,jl}+\sum_j(\mu_\star^{(j)})^2V_{2,j},

:math:`(V_1,V_2)` from the K-vector fixed point of §8.1 at :math:`\lambda=-z`, and
:math:`g(z)=\frac1p\mathrm{Tr}(A-z)^{-1}\simeq\sum_jV_{2,j}(z)`, :math:`\rho_A(x)=\frac1\pi\mathrm{Im}\,g(x+i0)`.
At K = 1 this is :func:`~onestep_theory.srf.spectrum.stieltjes`.

References
----------
[DPCKLL24] arXiv:2410.18938, App. D, F; [CPDKLZL24] arXiv:2402.04980, App. F, (189)–(190);
docs/theory/srf-theory.md §7, §8.1.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..core.errors import ConvergenceError, InvalidParameterError
from ..core.exact import check_real, float_in
from ..core.results import VouchedResult, provenance
from .groupprior import PriorDomainError, kgroup_resolvent
from .kappa import GroupSetup, group_setup
from .readout import group_params, readout
from .spectrum import ridge_points

__all__ = ["group_stieltjes", "group_density", "GroupSpectrum", "group_spectrum", "MAX_GROUP_GRID"]

#: Largest density grid of a grouped readout (each point is six K-group fixed points).
MAX_GROUP_GRID = 2000


def _vmap(V1, V2, G: GroupSetup, z, al, be, pis, cs, nu0):
    """One application: (V1, V2) -> the prior of §8.1 at the hats of (V1, V2), λ = -z; also returns ν."""
    mu1, ms2 = G.mu1, G.mus2
    wi = G.w / (1 + np.sum(mu1 * (V1 @ mu1), axis=0) + V2 @ ms2)
    hV1, hV2 = al / be * ((mu1 * wi) @ mu1.T), al / be * (ms2 @ wi)
    nu, delta, M, _, _ = kgroup_resolvent(-z, hV1, hV2, be, pis, cs, nu0)
    return M * delta[None, :] / be, pis * nu, nu


def group_stieltjes(G: GroupSetup, z, *, alpha, beta, pis, cs, init=None, damping=0.5, tol=1e-13,
                    max_iter=20000):
    r""":math:`(V_1, V_2)` of the K-group V-equations at complex z (Im z > 0) or real z < 0, and the size of the
    last Newton correction (the solver's error): a damped fixed point from ``init`` (default the value at
    the single-group start
    of §7, :math:`V=1+0.1i` per unit of mass), then two Newton steps with a central-difference Jacobian over
    :math:`(V_1^{\rm upper},V_2)`.  :math:`g(z)=\sum_jV_{2,j}`.  Raises ConvergenceError if the iteration fails."""
    K = len(pis)
    z = complex(z)
    dt = complex if z.imag != 0 else float        # z = -lambda < 0: the real ridge values
    z = z if dt is complex else z.real
    if init is None:
        start = 1.0 + 0.1j if dt is complex else 1.0
        V1 = (np.diag(pis * cs) * start).astype(dt)
        V2 = (pis * start).astype(dt)
    else:
        V1, V2 = (np.array(v, dtype=dt) for v in init)
    first = (V1.copy(), V2.copy())
    nu, err, fails = None, math.inf, 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):     # a bad trial is caught, not printed
        for it in range(1, max_iter + 1):
            try:
                n1, n2, nu = _vmap(V1, V2, G, z, alpha, beta, pis, cs, nu)
            except PriorDomainError:
                nu, fails = None, fails + 1
                damping = min(0.95, (1 + damping) / 2)
                if fails > 50:                  # bounded work: the start is hopeless
                    break
                continue
            err = max(np.max(np.abs(n1 - V1)), np.max(np.abs(n2 - V2))) / max(1.0, np.max(np.abs(V2)))
            if not math.isfinite(err):          # overflow: restart from the first state, more damped
                (V1, V2), nu, damping = (first[0].copy(), first[1].copy()), None, min(0.95, (1 + damping) / 2)
                if damping >= 0.95:
                    break
                continue
            V1, V2 = damping * V1 + (1 - damping) * n1, damping * V2 + (1 - damping) * n2
            if err < tol:
                break
    if not err < 1e-9:
        raise ConvergenceError(f"K-group Stieltjes transform at z={z} did not converge", it, err)
    iu = np.triu_indices(K)
    pack = (lambda a, b: np.concatenate([a[iu], b]))  # noqa: E731

    def unpack(x):
        A = np.zeros((K, K), dtype=dt)
        A[iu] = x[:len(iu[0])]
        return A + np.triu(A, 1).T, x[len(iu[0]):]

    def F(x):
        a, b = unpack(x)
        return pack(*_vmap(a, b, G, z, alpha, beta, pis, cs, nu)[:2])

    x = pack(V1, V2)
    n = len(x)
    J = np.empty((n, n), dtype=dt)
    for j in range(n):
        h = 1e-6 * max(1.0, abs(x[j]))
        e = np.zeros(n, dtype=dt)
        e[j] = h
        J[:, j] = (F(x + e) - F(x - e)) / (2 * h)
    Jinv = np.linalg.inv(np.eye(n) - J)
    for _ in range(2):
        dx = Jinv @ (F(x) - x)
        x = x + dx
    V1, V2 = unpack(x)
    return V1, V2, float(np.max(np.abs(dx)))


def group_density(G0: GroupSetup, G1: GroupSetup, xs, *, alpha, beta, pis, cs, eta):
    r"""Bulk density :math:`\frac1\pi\mathrm{Im}\,g(x+i0)` on the grid ``xs`` with its error: as in §7, the limit
    η → 0 by Richardson extrapolation from η, η/2, η/4 (its change taken whole), on the κ-rules ``G0`` and the
    refined ``G1`` (their difference added), plus the Newton steps; continuation in x with warm starts.
    Returns ``(density, errors)``."""
    dens, errs = [], []
    inits = {}
    for xv in xs:
        rho = {}
        step = 0.0
        for lev, G in ((0, G0), (1, G1)):
            for k in range(3):
                key = (lev, k)
                V1, V2, st = group_stieltjes(G, complex(xv, eta / 2**k), alpha=alpha, beta=beta, pis=pis, cs=cs,
                                             init=inits.get(key))
                g = complex(np.sum(V2))
                if g.imag < -1e-10:
                    raise ConvergenceError(f"Im g < 0 at x={xv}: wrong branch", 0, -g.imag)
                inits[key] = (V1, V2)
                rho[key] = g.imag / math.pi
                step += st / math.pi * (3 if k == 1 else 2 if k == 2 else 1)
        ext = {lev: (2 * rho[(lev, 2)] - rho[(lev, 1)], 2 * rho[(lev, 1)] - rho[(lev, 0)]) for lev in (0, 1)}
        r2, r1 = ext[1]
        dens.append(r2)
        errs.append(abs(r2 - r1) + abs(r2 - ext[0][0]) + step)
    return dens, errs


@dataclasses.dataclass
class GroupSpectrum(VouchedResult):
    """Bulk density and :math:`g(-\\lambda)` of a grouped readout, each with an error estimate (``errors``)."""

    ERROR_KEYS = {"stieltjes_at_minus_lambda": "stieltjes"}

    readout: dict
    x: list
    density: list
    stieltjes_at_minus_lambda: dict
    atom_at_zero: float
    eta: float
    errors: dict
    provenance: dict


def group_spectrum(student, *, readout_spec, r, c, alpha, beta, xs=None, lams=("1/10", "1/2", "1", "3"),
                   eta=None) -> GroupSpectrum:
    r"""The bulk of :math:`A=\Phi^\top\Phi/p` for the readout ``readout_spec`` (K groups with
    :math:`(r\varsigma_j, c_j)`, docs/theory/srf-theory.md §8, §8.1): the density on ``xs`` (default 100 points up
    to four times the largest group's MP edge) by :func:`group_density`, and :math:`g(-\lambda)=\sum_jV_{2,j}` at
    each λ (error: change under the refined κ-rule plus the Newton step), float64.  The atom at 0 is
    :math:`(1-\alpha/\beta)_+`; the mean spikes are :func:`~onestep_theory.srf.groupbounds.group_mean_spikes`."""
    rd = readout(readout_spec)
    if rd.kind != "finite":
        raise InvalidParameterError("readout", rd.label, "a finite support ('value:fraction,...')")
    al, be = float_in(alpha, "alpha"), float_in(beta, "beta")
    rr, cc = float(check_real(r, "r", 0, None)), float_in(c, "c")
    gp = group_params(rr, cc, rd)
    pis = np.array([float(f) for f in rd.fractions])
    cs = np.array([b for _, b in gp])
    spikes = [a for a, _ in gp]
    if xs is None:
        top = float(np.max(cs)) * (1 + math.sqrt(be)) ** 2 * 4
        xs = np.linspace(top / 200, top, 100)
    xs = np.asarray(xs, dtype=float)
    if xs.size > MAX_GROUP_GRID or not np.all(np.isfinite(xs)):
        raise InvalidParameterError("z", f"{xs.size} points", f"at most {MAX_GROUP_GRID} finite grid points")
    eta_v = float(eta) if eta is not None else 1e-3 * max(float(np.max(np.abs(xs))), 1e-3)
    G0, G1 = (group_setup(student, student, spikes, cs, 0.0, level=lev) for lev in (0, 1))
    kw = dict(alpha=al, beta=be, pis=pis, cs=cs)
    dens, derr = group_density(G0, G1, xs, eta=eta_v, **kw)
    st, sterr = {}, {}
    for key, lam_x in ridge_points(lams):
        (_, a, _), (_, b, step) = (group_stieltjes(G, -float(lam_x), **kw) for G in (G0, G1))
        st[key] = float(np.sum(b))
        sterr[key] = abs(float(np.sum(b)) - float(np.sum(a))) + step + 1e-14 * max(1.0, abs(st[key]))
    return GroupSpectrum(readout=rd.to_dict(), x=list(map(float, xs)), density=[float(v) for v in dens],
                         stieltjes_at_minus_lambda=st, atom_at_zero=max(0.0, 1 - al / be), eta=eta_v,
                         errors={"density": [float(e) for e in derr], "stieltjes": sterr}, provenance=provenance(
                             method="K-group V-equations with the asymptotic prior at lambda = -z (damped fixed point, "
                                    "Newton); error from a refined kappa rule; density: eta -> 0 by Richardson",
                             references=["docs/theory/srf-theory.md §7", "docs/theory/srf-theory.md §8.1",
                                         "[CPDKLZL24] App. F (189)-(190)"]))
