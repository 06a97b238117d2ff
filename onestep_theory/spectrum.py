r"""Spectrum of the learned-feature covariance :math:`A=\Phi^\top\Phi/p` (srf-theory.md §7; [DPCKLL24]).

Bulk (189)–(190): the V-equations of Result 3.3 with :math:`\lambda\to-z`, :math:`z\in\mathbb C^+`,

.. math::
    \hat V_j=\tfrac\alpha\beta\mathbb E_\kappa\Big[\frac{\mu_j^2}{1+\mu_1^2V_1+\mu_\star^2V_2}\Big],\quad
    V_2(z)=\int\frac{d\mu_{\rm MP}}{-z+\hat V_1\varrho+\hat V_2},\quad g(z)\simeq V_2(z),\quad
    \rho_A(x)=\tfrac1\pi\,\mathrm{Im}\,V_2(x+i\eta),

solved with the closed-form Stieltjes transform of the MP measure at complex
:math:`t=(-z+\hat V_2)/\hat V_1` (root with :math:`\mathrm{sign\,Im}\,s=-\mathrm{sign\,Im}\,t`), damping and
continuation in x.  The mean spike (191): :math:`\lambda_{\max}(A)\simeq n\,\mathbb E_\kappa\mu_0^2`.
"""

from __future__ import annotations

import cmath
import dataclasses
import functools
import math

import numpy as np

from .errors import ConvergenceError, InvalidParameterError
from .equivalence import cge_coeffs, gh_nodes
from .hermite import Activation
from .results import Result, provenance

__all__ = ["stieltjes", "density", "mean_spike", "Spectrum", "spectrum"]


def _mp_stieltjes_complex(c, beta, t):
    """s = int dmu_MP/(rho + t) for complex t: root of c beta t s^2 + (t + c - c beta) s - 1 = 0 (srf-theory.md
    §4.5 closed form), on the branch sign Im s = -sign Im t with s ~ 1/t at large |t| (§7 'Numerics')."""
    a, b = c * beta * t, t + c - c * beta
    disc = cmath.sqrt(b * b + 4 * a)
    roots = [(-b + disc) / (2 * a), (-b - disc) / (2 * a)]
    if t.imag != 0:
        want = -math.copysign(1.0, t.imag)
        good = [s for s in roots if s.imag * want > 0]
        if len(good) == 1:
            return good[0]
    return min(roots, key=lambda s: abs(s * t - 1))      # s ~ 1/t branch


def _moments(student, r, c, nodes):
    """(weights, mu0, mu1^2, mu*^2) on the kappa nodes, cached on the expression (not the name)."""
    return _moments_cached(Activation.from_any(student, "student"), float(r), float(c), int(nodes))


@functools.lru_cache(maxsize=64)
def _moments_cached(act, r, c, nodes):
    k, w = gh_nodes(nodes)
    mu0, mu1, ms2 = cge_coeffs(act, r, c, k)
    return w, mu0, mu1 * mu1, ms2


def stieltjes(student, z, *, r, c, alpha, beta, nodes=101, damping=0.5, tol=1e-12, max_iter=20000, init=None):
    r""":math:`g(z)\simeq V_2(z)` for complex z (or :math:`z=-\lambda<0`): returns ``(V1, V2)`` as complex numbers."""
    w, _, m1s, ms2 = _moments(student, float(r), float(c), nodes)
    c, al, be = float(c), float(alpha), float(beta)
    z = complex(z)
    V1, V2 = init if init is not None else (complex(1.0, 0.1), complex(1.0, 0.1))
    for it in range(1, max_iter + 1):
        den = 1 + m1s * V1 + ms2 * V2
        hV1 = al / be * complex(w @ (m1s / den))
        hV2 = al / be * complex(w @ (ms2 / den))
        t = (-z + hV2) / hV1
        s = _mp_stieltjes_complex(c, be, t)
        n2 = s / hV1
        n1 = (1 - t * s) / hV1
        err = max(abs(n1 - V1), abs(n2 - V2)) / max(1.0, abs(V2))
        V1, V2 = damping * V1 + (1 - damping) * n1, damping * V2 + (1 - damping) * n2
        if err < tol:
            return V1, V2
    raise ConvergenceError(f"Stieltjes transform at z={z} did not converge", max_iter, err)


def density(student, xs, *, r, c, alpha, beta, eta=None, nodes=101):
    r"""Bulk density :math:`\frac1\pi\mathrm{Im}V_2(x+i\eta)` on a grid, continuation in x with warm starts."""
    xs = np.asarray(xs, dtype=float)
    if eta is None:
        eta = 1e-3 * max(float(np.max(np.abs(xs))), 1e-3)
    out = np.empty_like(xs)
    init = None
    for i, xv in enumerate(xs):
        V1, V2 = stieltjes(student, complex(xv, eta), r=r, c=c, alpha=alpha, beta=beta, nodes=nodes, init=init)
        if V2.imag < -1e-10:
            raise ConvergenceError(f"Im V2 < 0 at x={xv}: wrong branch", 0, float(-V2.imag))
        out[i] = V2.imag / math.pi
        init = (V1, V2)
    return out


def mean_spike(student, *, r, c, alpha, d, nodes=101) -> float:
    r""":math:`n\,\mathbb E_\kappa\mu_0(\kappa)^2` with :math:`n=\alpha d` (191)."""
    k, w = gh_nodes(nodes)
    mu0, _, _ = cge_coeffs(student, float(r), float(c), k)
    return float(alpha) * d * float(w @ (mu0 * mu0))


@dataclasses.dataclass
class Spectrum(Result):
    x: list
    density: list
    stieltjes_at_minus_lambda: dict
    atom_at_zero: float
    mean_spike_per_d: float
    eta: float
    provenance: dict


def spectrum(student, *, r, c, alpha, beta, xs=None, lams=(0.1, 0.5, 1.0, 3.0), eta=None, nodes=101) -> Spectrum:
    """Bulk density on a grid, :math:`V_2(\\lambda)` at :math:`z=-\\lambda`, the atom and the mean spike per d."""
    if float(alpha) <= 0 or float(beta) <= 0:
        raise InvalidParameterError("alpha, beta", (alpha, beta), "real numbers > 0")
    if xs is None:
        top = float(c) * (1 + math.sqrt(float(beta))) ** 2 * 4
        xs = np.linspace(top / 400, top, 200)
    dens = density(student, xs, r=r, c=c, alpha=alpha, beta=beta, eta=eta, nodes=nodes)
    st = {}
    for lv in lams:
        _, V2 = stieltjes(student, -float(lv), r=r, c=c, alpha=alpha, beta=beta, nodes=nodes)
        st[f"{lv:g}"] = V2.real
    k, w = gh_nodes(nodes)
    mu0, _, _ = cge_coeffs(student, float(r), float(c), k)
    return Spectrum(x=list(map(float, xs)), density=list(map(float, dens)), stieltjes_at_minus_lambda=st,
                    atom_at_zero=max(0.0, 1 - float(alpha) / float(beta)),
                    mean_spike_per_d=float(alpha) * float(w @ (mu0 * mu0)),
                    eta=float(eta) if eta is not None else 1e-3 * float(np.max(np.abs(xs))),
                    provenance=provenance(method="damped fixed point with the complex MP Stieltjes transform",
                                          references=["[DPCKLL24]", "[CPDKLZL24] App. F (189)-(191)",
                                                      "srf-theory.md §7"]))
