r"""Bulk spectrum of the feature covariance :math:`A=\Phi^\top\Phi/p` with K readout groups (docs/theory/srf-theory.md
§7, §8.1): the V-equations of §7 with the asymptotic K-group prior at :math:`\lambda=-z`, float64.

.. math::

    \hat V_{1,jl}=\tfrac\alpha\beta\mathbb E_\kappa\Big[\frac{\mu_1^{(j)}\mu_1^{(l)}}{1+V}\Big],\quad
    \hat V_{2,j}=\tfrac\alpha\beta\mathbb E_\kappa\Big[\frac{(\mu_\star^{(j)})^2}{1+V}\Big],\quad
    V=\sum_{jl}\mu_1^{(j)}\mu_1^{(l)}V_{1,jl}+\sum_j(\mu_\star^{(j)})^2V_{2,j},

:math:`(V_1,V_2)` from the K-vector fixed point of §8.1 at :math:`\lambda=-z`, and
:math:`g(z)=\frac1p\mathrm{Tr}(A-z)^{-1}\simeq\sum_jV_{2,j}(z)`, :math:`\rho_A(x)=\frac1\pi\mathrm{Im}\,g(x+i0)`.
At K = 1 this is :func:`~onestep_theory.srf.spectral.spectrum.stieltjes`.

References
----------
[DPCKLL24] arXiv:2410.18938, App. D, F; [CPDKLZL24] arXiv:2402.04980, App. F, (189)–(190);
docs/theory/srf-theory.md §7, §8.1.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from threadpoolctl import threadpool_limits

from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import check_real, float_in
from ...core.results import VouchedResult, provenance
from ..features.kappa import GroupSetup, group_setup
from ..spectral.grid import read_x, x_text
from ..spectral.spectrum import ridge_points
from .groupprior import PriorDomainError, kgroup_resolvent, prior_jacobian
from .readout import group_params, readout

__all__ = ["group_stieltjes", "group_density", "GroupSpectrum", "group_spectrum", "MAX_GROUP_GRID"]

#: Largest density grid of a grouped readout (each point is six K-group fixed points).
MAX_GROUP_GRID = 2000
#: Newton corrections that stop shrinking below this size (relative) are the rounding floor of the map: accepted,
#: the larger of the last two taken as the solver's error.
FLOOR = 1e-9


class VEquations:
    r"""The K-group V-equations on one κ-rule (docs/theory/srf-theory.md §7, §8.1) on the packed state
    :math:`x=(V_1^{\rm upper},V_2)`, with the analytic Jacobian of the map.

    The channel is linear in x through :math:`V(\kappa)=Cx` and the hats are :math:`\frac\alpha\beta B\,w/(1+V)`
    (B: the products :math:`\mu_1^{(j)}\mu_1^{(l)}` and :math:`(\mu_\star^{(j)})^2` at the nodes, set up once per
    rule), so :math:`\partial\,\mathrm{hats}/\partial x=-\frac\alpha\beta B\,\mathrm{diag}(w/(1+V)^2)\,C`; the
    prior's Jacobian is :func:`~onestep_theory.srf.grouped.groupprior.prior_jacobian`.  One map costs two products of
    :math:`n\times N` matrices with vectors (n = K(K+3)/2 state entries, N nodes) and a K-vector Newton."""

    def __init__(self, G: GroupSetup, *, alpha, beta, pis, cs):
        K = len(pis)
        self.K, self.iu, self.pis, self.cs, self.beta = K, np.triu_indices(K), pis, cs, beta
        self.t = len(self.iu[0])
        self.B = np.vstack([G.mu1[self.iu[0]] * G.mu1[self.iu[1]], G.mus2])            # (n, N)
        f = np.concatenate([np.where(self.iu[0] == self.iu[1], 1.0, 2.0), np.ones(K)])
        self.C = np.ascontiguousarray((self.B * f[:, None]).T)                          # (N, n)
        self.w, self.ab = G.w, alpha / beta

    def pack(self, V1, V2):
        return np.concatenate([V1[self.iu], V2])

    def unpack(self, x):
        A = np.zeros((self.K, self.K), dtype=x.dtype)
        A[self.iu] = x[:self.t]
        return A + np.triu(A, 1).T, x[self.t:]

    def __call__(self, x, z, nu0=None, jac=False):
        """``(F(x), nu)``, or ``(F(x), nu, dF/dx)`` with ``jac``, at λ = -z."""
        inv = 1 / (1 + _rmul(self.C, x))
        wi = self.w * inv
        hV1, hV2 = self.unpack(self.ab * _rmul(self.B, wi))
        nu, delta, M, R, _ = kgroup_resolvent(-z, hV1, hV2, self.beta, self.pis, self.cs, nu0)
        y = self.pack(M * delta[None, :] / self.beta, self.pis * nu)
        if not jac:
            return y, nu
        s = -self.ab * wi * inv
        Jh = (self.B * s.real) @ self.C
        if np.iscomplexobj(s):
            Jh = Jh + 1j * ((self.B * s.imag) @ self.C)
        return y, nu, prior_jacobian(nu, delta, M, R, self.beta, self.pis, self.cs) @ Jh


def _rmul(A, v):
    """A @ v for a real matrix A: two real products for a complex v (numpy would copy A to complex each time)."""
    if np.iscomplexobj(v):
        return A @ v.real + 1j * (A @ v.imag)
    return A @ v


def _damped(E: VEquations, z, x, tol, max_iter=20000):
    """The damped fixed point from ``x`` (the fallback that brings a poor start into Newton's basin): bounded,
    restarted more damped on overflow.  Returns x or None."""
    first, nu, damping, fails = x.copy(), None, 0.5, 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):     # a bad trial is caught, not printed
        for _ in range(max_iter):
            try:
                y, nu = E(x, z, nu)
            except PriorDomainError:
                nu, fails, damping = None, fails + 1, min(0.95, (1 + damping) / 2)
                if fails > 50:                  # bounded work: the start is hopeless
                    return None
                continue
            err = np.max(np.abs(y - x)) / max(1.0, np.max(np.abs(x[E.t:])))
            if not math.isfinite(err):          # overflow: restart from the first state, more damped
                x, nu, damping = first.copy(), None, min(0.95, (1 + damping) / 2)
                if damping >= 0.95:
                    return None
                continue
            x = damping * x + (1 - damping) * y
            if err < tol:
                return x
    return None


def _newton(E: VEquations, z, x, tol=1e-14, max_steps=60, J=None):
    """Newton on F(x) - x with the analytic Jacobian, re-used (chord steps) while the corrections shrink by at
    least 4 per step; ``J`` is a starting inverse of I - dF/dx (that of a neighbouring point).  Returns
    ``(x, size of the last correction, J)`` or None if it does not converge."""
    nu, prev, fresh = None, math.inf, False
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(max_steps):
            try:
                if J is None:
                    y, nu, Jf = E(x, z, nu, jac=True)
                    J, fresh = np.linalg.inv(np.eye(len(x)) - Jf), True
                else:
                    y, nu = E(x, z, nu)
                    fresh = False
            except (PriorDomainError, np.linalg.LinAlgError):
                return None
            dx = J @ (y - x)
            size = float(np.max(np.abs(dx)))
            if not math.isfinite(size):
                return None
            x = x + dx
            scale = max(1.0, float(np.max(np.abs(x))))
            if size <= tol * scale:
                return x, size, J
            if size > prev / 4:
                if fresh and size <= FLOOR * scale:     # the rounding floor: the corrections are its noise
                    return x, max(size, prev), J
                if fresh:                       # a full Newton step that does not contract: not in the basin
                    return None
                J = None                        # the chord Jacobian is stale: refresh it
            prev = size
    return None


def group_stieltjes(G, z, *, alpha, beta, pis, cs, init=None, tol=1e-14):
    r""":math:`(V_1, V_2)` of the K-group V-equations at complex z (Im z > 0) or real z < 0, and the size of the
    last Newton correction (the solver's error): Newton with the analytic Jacobian (:class:`VEquations`; ``G`` may
    be one, set up once per rule) from ``init`` (a warm start: the solution at a neighbouring point); from the
    single-group start of §7 (:math:`V=1+0.1i` per unit of mass), or when Newton does not contract, after a damped
    fixed point brings the start into its basin.  :math:`g(z)=\sum_jV_{2,j}`.  Raises ConvergenceError if both
    fail."""
    E = G if isinstance(G, VEquations) else VEquations(G, alpha=alpha, beta=beta, pis=pis, cs=cs)
    return _point(E, z, init, None, tol)[:3]


def _point(E: VEquations, z, init, jac, tol=1e-14):
    """:func:`group_stieltjes` on ``E``, seeded with the inverse Jacobian ``jac`` of a neighbouring point; returns
    ``(V1, V2, error, inverse Jacobian)``."""
    z = complex(z)
    dt = complex if z.imag != 0 else float        # z = -lambda < 0: the real ridge values
    z = z if dt is complex else z.real
    with threadpool_limits(limits=1):             # n x N products with n <= 90: threads cost more than they give
        if init is None:
            start = 1.0 + 0.1j if dt is complex else 1.0
            x = E.pack((np.diag(E.pis * E.cs) * start).astype(dt), (E.pis * start).astype(dt))
            x = _damped(E, z, x, 1e-4)
        else:
            x = E.pack(*(np.array(v, dtype=dt) for v in init))
        out = None if x is None else _newton(E, z, x, tol, J=jac)
        if out is None and init is not None:          # the warm start was not in the basin
            x = _damped(E, z, x, 1e-6)
            out = None if x is None else _newton(E, z, x, tol)
    if out is None:
        raise ConvergenceError(f"K-group Stieltjes transform at z={z} did not converge", 0)
    return (*E.unpack(out[0]), out[1], out[2])


def group_density(G0: GroupSetup, G1: GroupSetup, xs, *, alpha, beta, pis, cs, eta, progress=None, gaps=None):
    r"""Bulk density :math:`\frac1\pi\mathrm{Im}\,g(x+i0)` on the grid ``xs`` with its error: as in §7, the limit
    η → 0 by Richardson extrapolation from η, η/2, η/4 (its change taken whole), on the κ-rules ``G0`` and the
    refined ``G1`` (their difference added), plus the Newton steps; continuation in x with warm starts.
    ``gaps[i]`` bounds the distance from ``xs[i]`` (a float) to the point the density is reported at (the printed
    decimal, :func:`~onestep_theory.srf.spectral.grid.read_x`): the extrapolation :math:`2\rho_{\eta/4}-\rho_{\eta/2}`
    moves by at most :math:`(8\rho_{\eta/4}+2\rho_{\eta/2})/\eta` per unit of x (a Stieltjes transform has
    :math:`|g'(z)|\le\mathrm{Im}\,g(z)/\mathrm{Im}\,z`), added twice over the gap.
    ``progress(i, n)`` is called after each point.  Returns ``(density, errors)``."""
    kw = dict(alpha=alpha, beta=beta, pis=pis, cs=cs)
    eqs = [E if isinstance(E, VEquations) else VEquations(E, **kw) for E in (G0, G1)]
    dens, errs = [], []
    inits = {}
    for i, xv in enumerate(xs):
        rho = {}
        step = 0.0
        for lev, E in enumerate(eqs):
            for k in range(3):
                key = (lev, k)
                V1, V2, st, J = _point(E, complex(xv, eta / 2**k), *inits.get(key, (None, None)))
                g = complex(np.sum(V2))
                if g.imag < -1e-10:
                    raise ConvergenceError(f"Im g < 0 at x={xv}: wrong branch", 0, -g.imag)
                inits[key] = ((V1, V2), J)
                rho[key] = g.imag / math.pi
                step += st / math.pi * (3 if k == 1 else 2 if k == 2 else 1)
        ext = {lev: (2 * rho[(lev, 2)] - rho[(lev, 1)], 2 * rho[(lev, 1)] - rho[(lev, 0)]) for lev in (0, 1)}
        r2, r1 = ext[1]
        dens.append(r2)
        slope = (8 * abs(rho[(1, 2)]) + 2 * abs(rho[(1, 1)])) / eta
        errs.append(abs(r2 - r1) + abs(r2 - ext[0][0]) + step + (2 * slope * gaps[i] if gaps is not None else 0.0))
        if progress is not None:
            progress(i + 1, len(xs))
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
                   eta=None, progress=None) -> GroupSpectrum:
    r"""The bulk of :math:`A=\Phi^\top\Phi/p` for the readout ``readout_spec`` (K groups with
    :math:`(r\varsigma_j, c_j)`, docs/theory/srf-theory.md §8, §8.1): the density on ``xs`` (exact texts, numbers
    or floats, each point the decimal :func:`~onestep_theory.srf.spectral.grid.x_text` prints for it; default 100
    points up to four times the largest group's MP edge) by :func:`group_density`, and :math:`g(-\lambda)=\sum_jV_{2,j}` at
    each λ (error: change under the refined κ-rule plus the Newton step), float64.  The atom at 0 is
    :math:`(1-\alpha/\beta)_+`; the mean spikes are
    :func:`~onestep_theory.srf.grouped.groupbounds.group_mean_spikes`."""
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
        xs = [f"{v:.6g}" for v in np.linspace(top / 200, top, 100)]    # short decimals: each is the point
    xs = np.ravel(np.asarray(xs, dtype=object))
    if xs.size > MAX_GROUP_GRID or not all(isinstance(v, str) or math.isfinite(float(v)) for v in xs):
        raise InvalidParameterError("z", f"{xs.size} points", f"at most {MAX_GROUP_GRID} finite grid points")
    pts = [read_x(x_text(v)) for v in xs]          # the printed decimal, its float, their gap
    xs, gaps = np.array([p[1] for p in pts], dtype=float), [p[2] for p in pts]
    eta_v = float(eta) if eta is not None else 1e-3 * max(float(np.max(np.abs(xs))), 1e-3)
    G0, G1 = (group_setup(student, student, spikes, cs, 0.0, level=lev) for lev in (0, 1))
    kw = dict(alpha=al, beta=be, pis=pis, cs=cs)
    E0, E1 = (VEquations(G, **kw) for G in (G0, G1))
    dens, derr = group_density(E0, E1, xs, eta=eta_v, progress=progress, gaps=gaps, **kw)
    st, sterr = {}, {}
    for key, lam_x in ridge_points(lams):
        (_, a, _), (_, b, step) = (group_stieltjes(E, -float(lam_x), **kw) for E in (E0, E1))
        st[key] = float(np.sum(b))
        sterr[key] = abs(float(np.sum(b)) - float(np.sum(a))) + step + 1e-14 * max(1.0, abs(st[key]))
    return GroupSpectrum(readout=rd.to_dict(), x=list(map(float, xs)), density=[float(v) for v in dens],
                         stieltjes_at_minus_lambda=st, atom_at_zero=max(0.0, 1 - al / be), eta=eta_v,
                         errors={"density": [float(e) for e in derr], "stieltjes": sterr}, provenance=provenance(
                             method="K-group V-equations with the asymptotic prior at lambda = -z (Newton with the "
                                    "analytic Jacobian, warm-started in x); error from a refined kappa rule; density: eta -> 0 by Richardson",
                             references=["docs/theory/srf-theory.md §7", "docs/theory/srf-theory.md §8.1",
                                         "[CPDKLZL24] App. F (189)-(190)"]))
