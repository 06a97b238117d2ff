r"""Saddle-point equations and test error of the spiked random-features model (Result 3.3 of [CPDKLZL24]).

Implements srf-theory.md §4: order parameters (17) :math:`(m,\vartheta,\psi,q_1,q_2,V_1,V_2)`, channel
equations (18) for the square loss with label noise, the stiff mean overlap (20), the prior
equations (19) in the asymptotic Marchenko–Pastur form F3 (closed form via the Stieltjes
transform, or Gauss–Legendre quadrature of the measure) or in the empirical-spectrum form F1
for a given finite bulk, and the test error (25).

Solver (srf-theory.md §5): the κ-dependent coefficients :math:`\mu_0,\mu_1,\mu_\star^2,h,h_1,h_2` are
precomputed on Gauss–Hermite nodes; a damped fixed point with guards (domain violations revert
and raise the damping) and λ-continuation for β > 1 runs in float64; an optional Newton polish
on the fixed-point residual runs in mpmath at ``dps`` digits, on the same code path (numpy
object arrays of mpf).  Every result reports iterations, residual and status; failures raise
:class:`~onestep_theory.errors.ConvergenceError`.

References
----------
[CPDKLZL24] H. Cui et al., arXiv:2402.04980, Result 3.3, eqs. (17)–(25), App. B–C.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import mpmath
import numpy as np

from .equivalence import cge_coeffs, gh_nodes, smooth
from .errors import ConvergenceError, InvalidParameterError
from .exact import GUARD_DIGITS, float_in, to_exact
from .hermite import Activation
from .mapping import srf_params
from .results import Result, provenance

__all__ = ["SRFSolution", "SRFSetup", "srf_setup", "srf_solve", "srf_curve", "srf_sweep", "mp_integrals", "mp_integrals_quad",
           "empirical_spectrum", "empirical_from_weights", "from_trained", "ORDER", "HATS"]

ORDER = ("m", "theta", "psi", "q1", "q2", "V1", "V2")
HATS = ("hat_V1", "hat_V2", "hat_q1", "hat_q2", "hat_theta", "hat_psi")


# --------------------------------------------------------------------------- MP prior (F3)
def mp_integrals(c, beta, lam, hV1, hV2, sqrt=math.sqrt):
    r"""Closed-form Marchenko–Pastur integrals (srf-theory.md §4.5): returns ``(V1, V2, J1, J2, K0)``.

    With :math:`t=(\lambda+\hat V_2)/\hat V_1` and :math:`s=\int d\mu_{\rm MP}/(\varrho+t)` the positive root of
    :math:`c\beta ts^2+(t+c-c\beta)s-1=0`:
    :math:`V_2=s/\hat V_1`, :math:`V_1=(1-ts)/\hat V_1`, :math:`K_0=-s'/\hat V_1^2`, :math:`J_2=(s+ts')/\hat V_1^2`,
    :math:`J_1=(1-2ts-t^2s')/\hat V_1^2`.  Works for float and mpf (pass ``sqrt=mpmath.sqrt``).
    """
    L = lam + hV2
    if hV1 == 0:
        return c / L, 1 / L, c * c * (1 + beta) / L**2, c / L**2, 1 / L**2
    t = L / hV1
    bq = t + c - c * beta
    disc = sqrt(bq * bq + 4 * c * beta * t)
    # positive root without cancellation: rationalised form for bq >= 0, direct form for bq < 0 (beta > 1)
    s = 2 / (bq + disc) if bq >= 0 else (disc - bq) / (2 * c * beta * t)
    sp_ = -(c * beta * s * s + s) / (2 * c * beta * t * s + bq)
    one_m_ts = (1 - t * s) if t <= c else c * s * (1 - beta + beta * t * s)   # = 1 - ts (from the quadratic)
    j1 = 1 - 2 * t * s - t * t * sp_       # = int rho^2/(rho+t)^2; loses ~2 log10(t/c) digits for t >> c
    return one_m_ts / hV1, s / hV1, j1 / hV1**2, (s + t * sp_) / hV1**2, -sp_ / hV1**2


@functools.lru_cache(maxsize=32)
def _mp_nodes(c, beta, n):
    """Gauss–Legendre nodes on t in (0, pi) for the MP density (srf-theory.md §5, 'MP measure')."""
    xg, wg = np.polynomial.legendre.leggauss(n)
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
    r"""F1 weights (srf-theory.md §4.6, Assumption 3.2, (115)–(117)) for a given finite bulk.

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
    r"""sRF parameters of a trained first layer (srf-theory.md §4.6, 'Trained W1').

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


def empirical_spectrum(d, p, c, gamma, seed=0):
    r"""F1 weights for a freshly sampled sRF bulk :math:`\tilde W=\sqrt cW_0` (unit rows), a uniform unit ``v``
    and :math:`\theta=\gamma v+\rho\theta_\perp` (see :func:`empirical_from_weights`)."""
    rng = np.random.default_rng(seed)
    W0 = rng.standard_normal((p, d))
    W0 /= np.linalg.norm(W0, axis=1, keepdims=True)
    v = rng.standard_normal(d)
    v /= np.linalg.norm(v)
    tp = rng.standard_normal(d)
    tp -= (tp @ v) * v
    tp /= np.linalg.norm(tp)
    theta = gamma * v + math.sqrt(max(0.0, 1 - gamma * gamma)) * tp
    return empirical_from_weights(math.sqrt(c) * W0, v, theta)


# --------------------------------------------------------------------------- setup
@dataclasses.dataclass
class SRFSetup:
    """κ-node quantities of srf-theory.md §5 ('precompute'), float64 or mpf object arrays."""

    kappa: np.ndarray
    w: np.ndarray
    mu0: np.ndarray
    mu1: np.ndarray
    mus2: np.ndarray
    h: np.ndarray
    h1: np.ndarray
    h2: np.ndarray
    r: object
    c: object
    gamma: object
    mp: bool
    dps: int | None
    nodes: tuple


@functools.lru_cache(maxsize=64)
def _hp_gh(n: int, dps: int):
    """Probabilists' Gauss–Hermite nodes/weights (sum 1) at dps digits: numpy nodes polished by Newton."""
    z0, _ = gh_nodes(n)
    zs, ws = [], []
    with mpmath.workdps(dps + GUARD_DIGITS):
        for z in z0:
            zz = mpmath.mpf(float(z))
            for _ in range(60):
                h_prev, h = mpmath.mpf(0), mpmath.mpf(1)          # orthonormal h_k
                for k in range(n):
                    h_prev, h = h, (zz * h - mpmath.sqrt(k) * h_prev) / mpmath.sqrt(k + 1)
                # h = h_n, h_prev = h_{n-1};  h_n' = sqrt(n) h_{n-1}
                dz = h / (mpmath.sqrt(n) * h_prev)
                zz -= dz
                if abs(dz) < mpmath.mpf(10) ** (-(dps + GUARD_DIGITS - 2)):
                    break
            h_prev, h = mpmath.mpf(0), mpmath.mpf(1)
            for k in range(n - 1):
                h_prev, h = h, (zz * h - mpmath.sqrt(k) * h_prev) / mpmath.sqrt(k + 1)
            zs.append(zz)
            ws.append(1 / (n * h * h))
    return np.array(zs, dtype=object), np.array(ws, dtype=object)


def srf_setup(student, teacher, r, c, gamma, *, kappa_nodes: int = 101, inner_nodes: int = 61,
              dps: int | None = None) -> SRFSetup:
    """Precompute μ0, μ1, μ⋆², h, h1, h2 on the κ nodes (float64, or mpf at ``dps`` digits)."""
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    if dps is None:
        k, w = gh_nodes(kappa_nodes)
        r, c, gamma = float(r), float(c), float(gamma)
        mu0, mu1, mus2 = cge_coeffs(s, r, c, k, nodes=inner_nodes)
        rho = math.sqrt(max(0.0, 1 - gamma * gamma))
        h, e1, h2 = smooth(t, gamma * k, rho, nodes=inner_nodes)
        return SRFSetup(k, w, mu0, mu1, mus2, h, e1, h2, r, c, gamma, False, None, (kappa_nodes, inner_nodes))
    k, w = _hp_gh(kappa_nodes, dps)
    with mpmath.workdps(dps + GUARD_DIGITS):
        r, c, gamma = mpmath.mpf(r), mpmath.mpf(c), mpmath.mpf(gamma)
        mu0, mu1, mus2 = cge_coeffs(s, r, c, k, dps=dps)
        rho = mpmath.sqrt(max(mpmath.mpf(0), 1 - gamma * gamma))
        h, e1, h2 = smooth(t, np.array([gamma * kv for kv in k], dtype=object), rho, dps=dps)
    return SRFSetup(k, w, mu0, mu1, mus2, h, e1, h2, r, c, gamma, True, dps, (kappa_nodes, "tanh-sinh"))


# --------------------------------------------------------------------------- the map
@dataclasses.dataclass
class _Opts:
    alpha: object
    beta: object
    lam: object
    noise_var: object
    spike_channel: bool = True
    spectrum: str = "mp"
    empirical: tuple | None = None
    cross_term: bool = True
    mp_method: str = "closed"


class _DomainError(Exception):
    pass


def _fp_map(x, S: SRFSetup, o: _Opts):
    """One application of (18)-(20) and the prior (19): returns (new state, hats, D, eps_g)."""
    sqrt = mpmath.sqrt if S.mp else math.sqrt
    m, th, ps, q1, q2, V1, V2 = x
    mu0, mu1, ms2, k = S.mu0, S.mu1, S.mus2, S.kappa
    mu1sq = mu1 * mu1
    V = mu1sq * V1 + ms2 * V2
    q = mu1sq * q1 + ms2 * q2
    mbar = mu0 * m + mu1 * k * th
    Ek = S.h2 - 2 * mbar * S.h + mbar * mbar - 2 * mu1 * ps * S.h1 + q
    B = Ek + o.noise_var
    inv = 1 / (1 + V)
    E = lambda arr: S.w @ arr  # noqa: E731
    aB = o.alpha / o.beta
    aS = o.alpha / sqrt(o.beta)
    hV1, hV2 = aB * E(mu1sq * inv), aB * E(ms2 * inv)
    hq1, hq2 = aB * E(mu1sq * B * inv * inv), aB * E(ms2 * B * inv * inv)
    hth = aS * E(k * mu1 * (S.h - mbar) * inv) if o.spike_channel else 0 * hV1
    hps = aS * E(mu1 * S.h1 * inv)
    if E(mu0 * mu0) < 1e-14:
        m_new = 0 * hV1
    else:
        m_new = E(mu0 * (S.h - mu1 * k * th) * inv) / E(mu0 * mu0 * inv)
    sb = sqrt(o.beta)
    if o.spectrum == "mp":
        if S.mp or o.mp_method == "closed":
            V1n, V2n, J1, J2, K0 = mp_integrals(S.c, o.beta, o.lam, hV1, hV2, sqrt)
            if not S.mp and (o.lam + hV2) / max(hV1, 1e-300) > 100 * S.c:   # large t: avoid the cancellation
                V1n, V2n, J1, J2, K0 = mp_integrals_quad(S.c, o.beta, o.lam, hV1, hV2)
        else:
            V1n, V2n, J1, J2, K0 = mp_integrals_quad(S.c, o.beta, o.lam, hV1, hV2)
        Dsm = 1 - o.beta * hV1 * V1n
        if Dsm <= 0:
            raise _DomainError("Sherman-Morrison denominator D <= 0")
        th_n = sb * hth * V1n / Dsm
        ps_n = sb * hps * V1n
        q1n = hq1 * J1 + hq2 * J2 + hps * hps * J1 + hth * hth * (J1 - o.beta * V1n * V1n) / (Dsm * Dsm)
        q2n = hq1 * J2 + hq2 * K0 + hps * hps * J2 + hth * hth * J2 / (Dsm * Dsm)
    else:  # F1, srf-theory.md §4.6
        Dv, Fv, Hv, Gv = o.empirical
        Sv = o.lam + hV1 * Dv + hV2
        Gx = Gv if o.cross_term else 0 * Gv
        V1n, V2n = np.mean(Dv / Sv), np.mean(1 / Sv)
        th_n = sb * (hth * np.mean(Fv / Sv) + hps * np.mean(Gx / Sv))
        ps_n = sb * (hps * np.mean(Hv / Sv) + hth * np.mean(Gx / Sv))
        N = hq1 * Dv + hq2 + hth * hth * Fv + 2 * hth * hps * Gx + hps * hps * Hv
        q1n, q2n = np.mean(Dv * N / Sv**2), np.mean(N / Sv**2)
        Dsm = 1 - o.beta * hV1 * V1n
    new = (m_new, th_n, ps_n, q1n, q2n, V1n, V2n)
    eps = E(S.h2 - 2 * mbar * S.h + mbar * mbar - 2 * mu1 * ps * S.h1 + mu1sq * q1 + ms2 * q2)
    return new, (hV1, hV2, hq1, hq2, hth, hps), Dsm, eps


def _valid(x):
    m, th, ps, q1, q2, V1, V2 = x
    vals = [float(v) for v in x]
    return all(math.isfinite(v) for v in vals) and V1 >= 0 and V2 >= 0 and q1 >= 0 and q2 >= 0 and \
        q1 >= ps * ps * (1 - 1e-9) - 1e-15


def _residual(x, fx):
    return max(abs(float(a) - float(b)) / max(1.0, abs(float(b))) for a, b in zip(fx, x))


def _iterate(x, S, o, *, damping, tol, max_iter, conv_keys=None):
    """Damped fixed point with guards (srf-theory.md §5): returns (x, iterations, residual, status)."""
    d = damping
    it = 0
    res = math.inf
    idx = [ORDER.index(kk) for kk in conv_keys] if conv_keys else range(7)
    for it in range(1, max_iter + 1):
        try:
            fx, _, Dsm, _ = _fp_map(x, S, o)
            if not _valid(fx):
                raise _DomainError("invalid order parameters")
        except (_DomainError, ZeroDivisionError, FloatingPointError, ValueError):
            if d >= 0.98:
                return x, it, res, "domain_error"
            d = min(0.98, d + 0.5 * (1 - d))
            continue
        res = max(abs(fx[j] - x[j]) / max(1.0, abs(x[j])) for j in idx)
        if res < tol:
            return fx, it, res, "converged"
        x = tuple(d * a + (1 - d) * b for a, b in zip(x, fx))
        if Dsm < 0.1:
            d = max(d, 0.8)
    return x, it, res, "max_iter"


def _newton(x, S, o, *, tol, hstep, max_steps, mp_mode):
    """Newton on G(x) = F(x) - x with a central-difference 7x7 Jacobian; float64 or current mpmath precision."""
    num = (lambda v: v) if mp_mode else float
    x = [num(v) for v in x]
    res = math.inf
    for step in range(1, max_steps + 1):
        fx = [num(v) for v in _fp_map(x, S, o)[0]]
        g = [a - b for a, b in zip(fx, x)]
        res = max(abs(v) / max(1, abs(xv)) for v, xv in zip(g, x))
        if res < tol:
            return x, step, res
        J = [[0] * 7 for _ in range(7)]
        for j in range(7):
            e = hstep * max(1, abs(x[j]))
            fp = _fp_map([v + (e if i == j else 0) for i, v in enumerate(x)], S, o)[0]
            fm = _fp_map([v - (e if i == j else 0) for i, v in enumerate(x)], S, o)[0]
            for i in range(7):
                J[i][j] = num((fp[i] - fm[i]) / (2 * e)) - (1 if i == j else 0)
        if mp_mode:
            dx = mpmath.lu_solve(mpmath.matrix(J), mpmath.matrix(g))
        else:
            dx = np.linalg.solve(np.array(J, dtype=float), np.array(g, dtype=float))
        x = [a - dx[i] for i, a in enumerate(x)]
    raise ConvergenceError("Newton iteration on the sRF saddle point did not converge", max_steps, float(res))


def _newton_mp(x, S, o, dps, max_steps=40):
    """Newton polish at dps digits (srf-theory.md §5 'then Newton polish to the requested digits')."""
    with mpmath.workdps(dps + GUARD_DIGITS):
        x = [mpmath.mpf(v) for v in x]
        return _newton(x, S, o, tol=mpmath.mpf(10) ** (-(dps + 2)),
                       hstep=mpmath.mpf(10) ** (-(dps + GUARD_DIGITS) // 3), max_steps=max_steps, mp_mode=True)


def _newton_float(x, S, o, tol, max_steps=50):
    """float64 Newton fallback when damping fails (near-degenerate m/theta directions at small r)."""
    x, steps, res = _newton(x, S, o, tol=tol, hstep=1e-7, max_steps=max_steps, mp_mode=False)
    fx = _fp_map(x, S, o)[0]
    if not _valid(fx):
        raise ConvergenceError("Newton fallback reached an invalid point", steps, res)
    return tuple(x), steps, res


# --------------------------------------------------------------------------- public API
@dataclasses.dataclass
class SRFSolution(Result):
    """Fixed point of Result 3.3 with the test error (25) and provenance (srf-theory.md §4)."""

    test_error: object
    order: dict
    hats: dict
    D: object
    r: object
    c: object
    gamma: object
    alpha: object
    beta: object
    lam: object
    noise_var: object
    iterations: int
    newton_steps: int
    residual: object
    status: str
    options: dict
    dps: int | None
    provenance: dict

    def _dps(self):
        return self.dps or 17

    def state(self) -> tuple:
        return tuple(self.order[k] for k in ORDER)


def _resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, c_formula, strict_odd=True):
    if r is not None or c is not None or gamma is not None:
        if r is None or c is None or gamma is None:
            raise InvalidParameterError("r, c, gamma", (r, c, gamma), "all three, or alpha0 and eta instead")
        rf, cf, gf = float(r), float(c), float(gamma)
        if not (math.isfinite(rf) and rf >= 0):
            raise InvalidParameterError("r", r, "a real number >= 0")
        if not cf > 0:
            raise InvalidParameterError("c", c, "a real number > 0")
        if not 0 <= gf <= 1:
            raise InvalidParameterError("gamma", gamma, "a real number in [0, 1]")
        return r, c, gamma, None
    if alpha0 is None or eta is None:
        raise InvalidParameterError("alpha0, eta", (alpha0, eta), "both (or r, c, gamma)")
    p = srf_params(student, teacher, alpha0, eta, noise_var, c_formula=c_formula, dps=17, strict_odd=strict_odd)
    return p.r, p.c, abs(p.gamma), p


def srf_solve(student, teacher, *, alpha, beta, lam, noise_var=0, r=None, c=None, gamma=None, alpha0=None, eta=None,
              c_formula: str = "corrected", spike_channel: bool = True, spectrum: str = "mp", empirical=None,
              cross_term: bool = True, kappa_nodes: int = 101, inner_nodes: int = 61, tol: float = 1e-10,
              damping: float = 0.5, max_iter: int = 20000, init=None, dps: int | None = None,
              continuation: str = "auto", convergence: str = "all", setup: SRFSetup | None = None,
              mp_method: str = "closed", newton_fallback: bool = True, strict_odd: bool = True) -> SRFSolution:
    r"""Solve Result 3.3 of [CPDKLZL24] and return the test error (25) with every order parameter.

    Parameters
    ----------
    student, teacher : expression, name or Activation
    alpha, beta, lam : numbers
        :math:`\alpha=n/d>0`, :math:`\beta=p/d>0`, ridge :math:`\lambda>0` (sum loss, (4)).
    noise_var : number
        Label noise :math:`\Delta\ge0` (enters :math:`B(\kappa)` and, through the mapping, :math:`\mu_2^\star`).
    r, c, gamma : numbers, optional
        sRF parameters; otherwise computed from ``alpha0`` and ``eta`` by Result 3.1
        (``c_formula="corrected"`` or ``"v1"``).
    spike_channel : bool
        ``False`` switches the :math:`\vartheta` channel off (the notebook-printed variant, §4.10).
    spectrum : {"mp", "empirical"}
        F3 (asymptotic MP) or F1 with ``empirical=(D, F, H, G)`` (see :func:`empirical_spectrum`).
    dps : int, optional
        Polish by Newton in mpmath to ``dps`` digits (κ-expectations by high-precision Gauss–Hermite,
        inner expectations by tanh-sinh).
    continuation : {"auto", "off"}
        For β > 1 and λ < 1e-2, solve along a decreasing λ grid from 10 (srf-theory.md §5).
    convergence : {"all", "notebook"}
        All seven order parameters at ``tol`` (default) or the notebook's criterion
        (:math:`q_1,m,q_2,\vartheta,\psi` at 1e-4).
    strict_odd : bool
        Refuse a non-odd student when (r, c, γ) come from Result 3.1 (see :func:`~onestep_theory.mapping.srf_params`).
    newton_fallback : bool
        If the damped iteration fails, try float64 Newton (finite-difference Jacobian) from the last
        valid iterate; the status then says so.

    Examples
    --------
    >>> sol = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")   # srf-theory.md §11.4
    >>> round(float(sol.test_error), 8)
    0.04160398
    """
    al, be, la = (float_in(v, n) for v, n in ((alpha, "alpha"), (beta, "beta"), (lam, "lam")))
    nv = float_in(noise_var, "noise_var", strict=False)
    if spectrum not in ("mp", "empirical"):
        raise InvalidParameterError("spectrum", spectrum, "'mp' or 'empirical'")
    if spectrum == "empirical" and empirical is None:
        raise InvalidParameterError("empirical", None, "(D, F, H, G) arrays for spectrum='empirical'")
    if convergence not in ("all", "notebook"):
        raise InvalidParameterError("convergence", convergence, "'all' or 'notebook'")
    rr, cc, gg, mapping = _resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, c_formula, strict_odd)
    S = setup or srf_setup(student, teacher, rr, cc, gg, kappa_nodes=kappa_nodes, inner_nodes=inner_nodes)
    o = _Opts(al, be, la, nv, spike_channel, spectrum,
              tuple(np.asarray(a, dtype=float) for a in empirical) if empirical is not None else None, cross_term,
              mp_method)
    x = tuple(float(v) for v in init) if init is not None else (0.0, 0.0, 0.0, 0.1, 0.1, 1.0, 1.0)
    conv_keys = ("q1", "m", "q2", "theta", "psi") if convergence == "notebook" else None
    ctol = 1e-4 if convergence == "notebook" else tol
    total_it = 0
    if continuation == "auto" and be > 1 and la < 1e-2 and init is None:
        for lv in np.geomspace(10.0, la, 25)[:-1]:
            o.lam = float(lv)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                x, it, _, status = _iterate(x, S, o, damping=0.9, tol=max(ctol, 1e-8), max_iter=max_iter)
            total_it += it
        o.lam = la
        damping = max(damping, 0.9)
    x0 = x
    # divergent trial iterates are detected and handled (guards, fallback): no numpy warnings for them
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x, it, res, status = _iterate(x, S, o, damping=damping, tol=ctol, max_iter=max_iter, conv_keys=conv_keys)
    total_it += it
    if status != "converged" and newton_fallback:
        # Newton fallback from the last valid iterate, then from the starting point
        for start in (x, x0):
            try:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    x, nsteps, res = _newton_float(start, S, o, ctol)
                total_it += nsteps
                status = "converged (Newton fallback)"
                break
            except (ConvergenceError, np.linalg.LinAlgError, ZeroDivisionError, _DomainError, ValueError):
                continue
    if not status.startswith("converged"):
        raise ConvergenceError(f"sRF saddle point: {status} (alpha={alpha}, beta={beta}, lam={lam})", total_it, res)
    newton = 0
    if dps is not None:
        Smp = srf_setup(student, teacher, rr, cc, gg, kappa_nodes=max(kappa_nodes, 2 * dps + 41), dps=dps)
        o_mp = dataclasses.replace(o)
        with mpmath.workdps(dps + GUARD_DIGITS):
            o_mp.alpha, o_mp.beta, o_mp.lam, o_mp.noise_var = (mpmath.mpf(to_exact(v, n).p) / to_exact(v, n).q
                                                               if to_exact(v, n).is_Rational else mpmath.mpf(float(v))
                                                               for v, n in ((alpha, "alpha"), (beta, "beta"),
                                                                            (lam, "lam"), (noise_var, "noise_var")))
            x, newton, res = _newton_mp(x, Smp, o_mp, dps)
            fx, hats, Dsm, eps = _fp_map(x, Smp, o_mp)
            S = Smp
    else:
        fx, hats, Dsm, eps = _fp_map(x, S, o)
        x = fx
        fx, hats, Dsm, eps = _fp_map(x, S, o)
    return SRFSolution(
        test_error=eps, order=dict(zip(ORDER, x)), hats=dict(zip(HATS, hats)), D=Dsm, r=rr, c=cc, gamma=gg,
        alpha=alpha, beta=beta, lam=lam, noise_var=noise_var, iterations=total_it, newton_steps=newton, residual=res,
        status=status, options=dict(c_formula=c_formula, spike_channel=spike_channel, spectrum=spectrum,
                                    cross_term=cross_term, kappa_nodes=S.nodes[0], inner_nodes=S.nodes[1],
                                    convergence=convergence, damping=damping),
        dps=dps, provenance=provenance(dps=dps, method="damped fixed point (float64)" + (
            "; Newton polish (mpmath)" if dps else ""), references=["[CPDKLZL24] Result 3.3, eqs. (17)-(25)",
                                                                    "srf-theory.md §4", "srf-theory.md §5"]))


def srf_curve(student, teacher, alphas, **kw) -> list:
    r"""Learning curve over α with warm starts (srf-theory.md §5 'Continuation'); returns a list of
    :class:`SRFSolution`.  The κ-node setup is computed once for the whole curve."""
    kw = dict(kw)
    rr, cc, gg, _ = _resolve_rcg(student, teacher, kw.pop("r", None), kw.pop("c", None), kw.pop("gamma", None),
                                 kw.pop("alpha0", None), kw.pop("eta", None), kw.get("noise_var", 0),
                                 kw.get("c_formula", "corrected"), kw.get("strict_odd", True))
    setup = srf_setup(student, teacher, rr, cc, gg, kappa_nodes=kw.get("kappa_nodes", 101),
                      inner_nodes=kw.get("inner_nodes", 61))
    out = []
    init = None
    for a in alphas:
        sol = srf_solve(student, teacher, alpha=a, r=rr, c=cc, gamma=gg, setup=setup, init=init, **kw)
        out.append(sol)
        init = tuple(float(v) for v in sol.state())
    return out


SWEEPABLE = ("alpha", "beta", "lam", "eta", "alpha0", "noise_var")


def srf_sweep(student, teacher, param: str, values, **fixed) -> list:
    r"""Sweep one parameter (``alpha``, ``beta``, ``lam``, ``eta``, ``alpha0`` or ``noise_var``) with warm starts.

    The κ-node setup is shared while (r, c, γ) stay fixed (α, β, λ sweeps); sweeping η̃, α0 or the
    label noise changes (r, c, γ) through Result 3.1 and rebuilds it per point.  For a decreasing λ
    sweep the warm start acts as the continuation of srf-theory.md §5.
    Returns a list of :class:`SRFSolution`.
    """
    if param not in SWEEPABLE:
        raise InvalidParameterError("param", param, f"one of {', '.join(SWEEPABLE)}")
    if param == "alpha":
        return srf_curve(student, teacher, values, **fixed)
    out = []
    init = None
    shared = param in ("beta", "lam")
    setup = None
    if shared:
        rr, cc, gg, _ = _resolve_rcg(student, teacher, fixed.pop("r", None), fixed.pop("c", None),
                                     fixed.pop("gamma", None), fixed.pop("alpha0", None), fixed.pop("eta", None),
                                     fixed.get("noise_var", 0), fixed.get("c_formula", "corrected"),
                                     fixed.get("strict_odd", True))
        fixed.update(r=rr, c=cc, gamma=gg)
        setup = srf_setup(student, teacher, rr, cc, gg, kappa_nodes=fixed.get("kappa_nodes", 101),
                          inner_nodes=fixed.get("inner_nodes", 61))
    for v in values:
        kw = dict(fixed)
        kw[param] = repr(float(v)) if param in ("eta", "alpha0", "noise_var") and isinstance(v, float) else v
        sol = srf_solve(student, teacher, init=init, setup=setup, **kw)
        out.append(sol)
        init = tuple(float(x) for x in sol.state())
    return out
