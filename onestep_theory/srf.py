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

import flint
import sympy as sp

from .equivalence import cge_arb, default_backend, smooth, smooth_arb
from .errors import ConvergenceError, InvalidParameterError
from .evaluate import arb_callable
from .exact import check_dps, float_in, to_exact, to_mpf
from .expressions import breakpoints, is_even, is_odd
from .hermite import Activation
from .mapping import srf_params
from .precision import GUARD_DIGITS, arb_to_mpf, mpf_to_arb, precision, workdps
from .quadrature import gauss_hermite, gauss_legendre, normal_rule
from .results import Result, digits_of, provenance, vouched

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
    """κ-node quantities of docs/theory/numerics.md §4 ('precompute'), float64 or mpf object arrays."""

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
    level: int = 0
    digits: float = 16


def kappa_features(s: Activation, t: Activation | None, r: float, c: float, gamma: float):
    """Hard points, soft features and the panel cap of the κ-rule (docs/theory/numerics.md §3).

    The student's coefficients depend on κ through :math:`r\\kappa` smoothed with width :math:`\\sqrt c`: a kink
    ``b`` of σ becomes a soft feature at :math:`b/r` of width :math:`\\sqrt c/r`, and the panels are no wider
    than :math:`(1+\\sqrt c)/r`.  The teacher's enter through :math:`\\gamma\\kappa` smoothed with width ρ: a kink
    becomes a feature at :math:`b/\\gamma` of width :math:`\\rho/\\gamma` — a hard breakpoint when ρ = 0.
    """
    rho = math.sqrt(max(0.0, 1 - gamma * gamma))
    hard, soft, hmax = [], [], 1.0
    if r > 0:
        hmax = min(hmax, (1 + math.sqrt(c)) / r)
        soft += [(float(b) / r, math.sqrt(c) / r) for b in breakpoints(s.expr)]
    if t is not None and gamma > 0:
        hmax = min(hmax, (1 + rho) / gamma)
        for b in breakpoints(t.expr):
            if rho == 0:    # gamma = 1: the kink itself, exactly
                hard.append(b)
            else:
                soft.append((float(b) / gamma, rho / gamma))
    return tuple(hard), tuple(soft), hmax


def _parity(act: Activation) -> int:
    """+1 (even), -1 (odd) or 0: the parity of the moments (E f, E Zf, E f^2) under a -> -a is (p, -p, +1)."""
    if act.center:
        return 1 if is_even(act.expr) else 0
    return -1 if is_odd(act.expr) else (1 if is_even(act.expr) else 0)


def _mirrored(compute, nodes, mirror: bool, parity: int):
    """Evaluate ``compute(nodes) -> (f0, f1, f2)`` on the non-negative half of a mirrored rule and reflect
    with the parities (p, -p, +1) (an odd rule has its middle node at 0)."""
    n = len(nodes)
    if not (mirror and parity):
        return compute(nodes)
    odd = n % 2
    half = nodes[(n - odd) // 2:]
    out = []
    for v, sg in zip(compute(half), (parity, -parity, 1)):
        is_obj = isinstance(v, (list, tuple)) or getattr(v, "dtype", None) == object
        v = np.asarray(v, dtype=object if is_obj else float)
        refl = v[odd:][::-1]
        out.append(np.concatenate([sg * refl, v]) if v.dtype != object
                   else np.array([sg * u for u in refl] + list(v), dtype=object))
    return tuple(out)


def srf_setup(student, teacher, r, c, gamma, *, digits: float = 16, level: int = 0, dps: int | None = None,
              kappa_nodes: int | None = None, inner_nodes: int | None = None) -> SRFSetup:
    r"""Precompute :math:`\mu_0,\mu_1,\mu_\star^2,h,h_1,h_2` on the κ nodes (docs/theory/numerics.md §4).

    The κ-rule is :func:`~onestep_theory.quadrature.normal_rule` with the features of
    :func:`_kappa_features` at ``digits`` digits and refinement ``level``; inner expectations use
    the closed forms (piecewise polynomials) or split, scaled Gauss–Legendre panels in z.  With
    ``dps`` everything is computed in Arb at ``dps`` working digits and returned as ``mpf`` arrays.
    ``kappa_nodes``/``inner_nodes`` select the fixed Gauss–Hermite rules of the reference notebook
    (srf-theory.md §4.10) instead.  Cached by all arguments.
    """
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    if dps is None:
        r, c, gamma = float(r), float(c), float(gamma)
    else:
        # never round: an mpf keeps its precision (mpf(x) would round it to the ambient 53 bits),
        # a float is exact in binary, everything else becomes an exact SymPy number
        r, c, gamma = (v if isinstance(v, mpmath.mpf) else mpmath.mpf(v) if isinstance(v, float) else to_exact(v)
                       for v in (r, c, gamma))
    return _setup_cached(s, t, r, c, gamma, float(digits), int(level), dps, kappa_nodes, inner_nodes)


@functools.lru_cache(maxsize=48)
def _setup_cached(s, t, r, c, gamma, digits, level, dps, kappa_nodes, inner_nodes):
    rf, cf, gf = float(r), float(c), float(gamma)
    hard, soft, hmax = kappa_features(s, t, rf, cf, gf)
    ps, pt = _parity(s), _parity(t)
    inner_gh = dict(backend="gauss-hermite", nodes=inner_nodes) if inner_nodes else {}
    if dps is None:
        if kappa_nodes:
            k, w = gauss_hermite(kappa_nodes)
            mirror = True
        else:
            rule = normal_rule(hard, soft, digits=digits, level=level, hmax=hmax)
            k, w, mirror = rule.nodes, rule.weights, rule.mirror
        rho = math.sqrt(max(0.0, 1 - gf * gf))
        sc = math.sqrt(cf)

        def stud(kk):
            gh = inner_gh if inner_gh and not breakpoints(s.expr) else {}
            e0, e1, e2 = smooth(s, rf * kk, sc, digits=digits, level=level, **gh)
            m1 = e1 / sc
            return e0, m1, np.maximum(0.0, e2 - e0 * e0 - cf * m1 * m1)

        def teach(kk):
            gh = inner_gh if inner_gh and not breakpoints(t.expr) else {}
            return smooth(t, gf * kk, rho, digits=digits, level=level, **gh)

        mu0, mu1, mus2 = _mirrored(stud, k, mirror, ps)
        h, e1, h2 = _mirrored(teach, k, mirror, pt)
        nodes = (len(k), f"GH {inner_nodes}" if inner_nodes else "panels")
        return SRFSetup(k, w, mu0, mu1, mus2, h, e1, h2, rf, cf, gf, False, None, nodes, level, digits)
    with workdps(dps):
        if kappa_nodes:
            kz, wz = gauss_hermite(kappa_nodes, dps)
            k_arb, w_arb, mirror = [mpf_to_arb(v) for v in kz], [mpf_to_arb(v) for v in wz], True
        else:
            rule = normal_rule(hard, soft, digits=digits, level=level, hmax=hmax, dps=dps)
            k_arb, w_arb, mirror = list(rule.nodes), list(rule.weights), rule.mirror
        ra, ca, ga = (_arb(v) for v in (r, c, gamma))
        rho = (1 - ga * ga).sqrt() if ga * ga < 1 else flint.arb(0)

        def stud(kk):
            gh = inner_gh if inner_gh and not breakpoints(s.expr) else {}
            return cge_arb(s, ra, ca, list(kk), digits=digits, level=level, **gh)

        def teach(kk):
            gh = inner_gh if inner_gh and not breakpoints(t.expr) else {}
            backend = gh.get("backend") or default_backend(t)
            return smooth_arb(t, np.array([ga * v for v in kk], dtype=object), rho, backend=backend,
                              digits=digits, level=level, nodes=inner_nodes or 61)

        karr = np.array(k_arb, dtype=object)
        st = _mirrored(stud, karr, mirror, ps)
        te = _mirrored(teach, karr, mirror, pt)
        conv = (lambda arr: np.array([arb_to_mpf(v) for v in np.ravel(arr)], dtype=object))
        mu0, mu1, mus2 = (conv(v) for v in st)
        h, e1, h2 = (conv(v) for v in te)
        k, w = conv(karr), conv(np.array(w_arb, dtype=object))
        rm, cm, gm = (arb_to_mpf(v) for v in (ra, ca, ga))
    nodes = (len(k), f"GH {inner_nodes}" if inner_nodes else "panels")
    return SRFSetup(k, w, mu0, mu1, mus2, h, e1, h2, rm, cm, gm, True, dps, nodes, level, digits)


def _arb(v):
    if isinstance(v, mpmath.mpf):
        return mpf_to_arb(v)
    if isinstance(v, int):
        return flint.arb(v)
    return arb_callable(sp.sympify(v))(flint.arb(0))


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


def _newton(x, S, o, *, tol, hstep, max_steps):
    """float64 Newton on G(x) = F(x) - x with a central-difference 7x7 Jacobian."""
    x = [float(v) for v in x]
    res = math.inf
    for step in range(1, max_steps + 1):
        fx = [float(v) for v in _fp_map(x, S, o)[0]]
        g = [a - b for a, b in zip(fx, x)]
        res = max(abs(v) / max(1, abs(xv)) for v, xv in zip(g, x))
        if res < tol:
            return x, step, res
        J = _jacobian(x, S, o, hstep) - np.eye(7)
        dx = np.linalg.solve(J, np.array(g, dtype=float))
        x = [a - dx[i] for i, a in enumerate(x)]
    raise ConvergenceError("Newton iteration on the sRF saddle point did not converge", max_steps, float(res))


def _jacobian(x, S, o, hstep=1e-7):
    """Forward-difference Jacobian of the map F (float64; 7 evaluations).  Its error (about 1e-7
    relative) only slows the chord-Newton polish to ~7 digits per step; the fixed point is unchanged."""
    x = [float(v) for v in x]
    f0 = [float(v) for v in _fp_map(x, S, o)[0]]
    J = np.empty((7, 7))
    for j in range(7):
        e = hstep * max(1.0, abs(x[j]))
        xp = list(x)
        xp[j] += e
        fp = _fp_map(xp, S, o)[0]
        J[:, j] = [(float(a) - b) / e for a, b in zip(fp, f0)]
    return J


def _newton_float(x, S, o, tol, max_steps=50):
    """float64 Newton fallback when damping fails (near-degenerate m/theta directions at small r)."""
    x, steps, res = _newton(x, S, o, tol=tol, hstep=1e-7, max_steps=max_steps)
    fx = _fp_map(x, S, o)[0]
    if not _valid(fx):
        raise ConvergenceError("Newton fallback reached an invalid point", steps, res)
    return tuple(x), steps, res


def _solve_float(S, o, x, *, damping, tol, max_iter, continuation, conv_keys, newton_fallback, first):
    """Damped fixed point with guards, λ-continuation and a Newton fallback (docs/theory/numerics.md §4)."""
    total_it = 0
    if first and continuation == "auto" and float(o.beta) > 1 and float(o.lam) < 1e-2:
        la = o.lam
        for lv in np.geomspace(10.0, float(la), 25)[:-1]:
            o.lam = float(lv)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                x, it, _, status = _iterate(x, S, o, damping=0.9, tol=max(tol, 1e-8), max_iter=max_iter)
            total_it += it
        o.lam = la
        damping = max(damping, 0.9)
    x0 = x
    # divergent trial iterates are detected and handled (guards, fallback): no numpy warnings for them
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x, it, res, status = _iterate(x, S, o, damping=damping, tol=tol, max_iter=max_iter, conv_keys=conv_keys)
    total_it += it
    if status != "converged" and newton_fallback:
        for start in (x, x0):
            try:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    x, nsteps, res = _newton_float(start, S, o, tol)
                total_it += nsteps
                status = "converged (Newton fallback)"
                break
            except (ConvergenceError, np.linalg.LinAlgError, ZeroDivisionError, _DomainError, ValueError):
                continue
    if not status.startswith("converged"):
        raise ConvergenceError(f"sRF saddle point: {status} (alpha={o.alpha}, beta={o.beta}, lam={o.lam})",
                               total_it, res)
    return tuple(x), total_it, res, status


def _polish(x, S, o, Jinv, *, tol, max_steps):
    """Newton steps x <- x + (I - J)^-1 (F(x) - x) with a fixed float64 Jacobian (chord method).

    Runs in float64 or, for an mpf setup, in mpmath at the current precision.  Stops when a
    correction falls below ``tol`` (relative) or stops contracting (rounding floor).  Returns
    ``(x, steps, last, vals)``: the state, the map evaluations, the size of the last correction
    (componentwise: the solver's error estimate, docs/theory/numerics.md §5) and every reported
    quantity at ``x`` (from the same evaluation).
    """
    mp_mode = S.mp
    Jm = mpmath.matrix(Jinv.tolist()) if mp_mode else Jinv
    x = list(x)
    prev = math.inf
    for step in range(1, max_steps + 1):
        fx, hats, Dsm, eps = _fp_map(x, S, o)
        g = [a - b for a, b in zip(fx, x)]
        if mp_mode:
            dxm = Jm * mpmath.matrix(g)
            dx = [dxm[i] for i in range(7)]
        else:
            dx = list(Jinv @ np.array([float(v) for v in g]))
        size = max(abs(float(d)) / max(1.0, abs(float(xv))) for d, xv in zip(dx, x))
        if size < tol or (step > 2 and size > 0.5 * prev) or step == max_steps:
            vals = dict(zip(ORDER, fx))
            vals.update(zip(HATS, hats))
            vals["D"], vals["test_error"] = Dsm, eps
            return x, step, [abs(d) for d in dx], vals
        prev = size
        x = [a + d for a, d in zip(x, dx)]
    raise AssertionError("unreachable")


def _mp_solver_error(vals, last, x) -> dict:
    """Solver error of an mpmath polish: the last correction (relative size, at least one unit
    of the working precision) applied to every quantity (they depend smoothly on the state)."""
    rel = max(float(d) / max(1.0, abs(float(v))) for d, v in zip(last, x))
    rel = max(rel, 10.0 ** -(mpmath.mp.dps - 2))
    out = {k: rel * max(1.0, abs(float(v))) for k, v in vals.items()}
    out.update({k: float(d) for k, d in zip(ORDER, last)})
    return out


def _all_values(x, S, o) -> dict:
    """Every reported quantity at the state x: the order parameters F(x), the hats, D and (25)."""
    fx, hats, Dsm, eps = _fp_map(x, S, o)
    out = dict(zip(ORDER, fx))
    out.update(zip(HATS, hats))
    out["D"] = Dsm
    out["test_error"] = eps
    return out


# --------------------------------------------------------------------------- public API
@dataclasses.dataclass
class SRFSolution(Result):
    """Fixed point of Result 3.3 with the test error (25), error estimates and provenance
    (srf-theory.md §4, docs/theory/numerics.md §5).

    ``abs_error`` estimates :math:`|\varepsilon_g-\varepsilon_g^{\rm exact}|` (the change under a refined
    discretisation, plus the last Newton correction, plus rounding); ``digits`` is the number of
    significant digits of ``test_error`` it vouches for.  ``errors`` holds the same estimate for
    every order parameter and conjugate.  :meth:`to_dict` prints each number to its own digits.
    """

    test_error: object
    abs_error: float
    digits: int
    order: dict
    hats: dict
    errors: dict
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

    def vouched(self, key: str) -> str:
        """The value of ``key`` (``test_error``, an order parameter or a hat) to the digits vouched for."""
        v = self.test_error if key == "test_error" else (self.order.get(key, self.hats.get(key)))
        if key == "D":
            v = self.D
        return vouched(v, self.errors[key])

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["test_error"] = self.vouched("test_error")
        d["order"] = {k: self.vouched(k) for k in self.order}
        d["hats"] = {k: self.vouched(k) for k in self.hats}
        d["D"] = self.vouched("D")
        d["abs_error"] = f"{float(self.abs_error):.2e}"
        d["errors"] = {k: f"{float(e):.2e}" for k, e in self.errors.items()}
        return d


def _resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, c_formula, strict_odd=True, dps=None):
    if r is not None or c is not None or gamma is not None:
        if r is None or c is None or gamma is None:
            raise InvalidParameterError("r, c, gamma", (r, c, gamma), "all three, or alpha0 and eta instead")
        rr, cc, gg = (check_srf_params(v, n, lo, hi) for v, n, lo, hi in
                      ((r, "r", 0, None), (c, "c", None, None), (gamma, "gamma", 0, 1)))
        if not float(cc) > 0:
            raise InvalidParameterError("c", c, "a real number > 0")
        return rr, cc, gg, None
    if alpha0 is None or eta is None:
        raise InvalidParameterError("alpha0, eta", (alpha0, eta), "both (or r, c, gamma)")
    # the constants carry GUARD_DIGITS + 2 more digits than asked: their error stays far below the target
    p = srf_params(student, teacher, alpha0, eta, noise_var, c_formula=c_formula,
                   dps=max(17, (dps or 0) + GUARD_DIGITS + 2), strict_odd=strict_odd)
    return p.r, p.c, abs(p.gamma), p


def check_srf_params(v, name, lo, hi):
    """A finite real parameter in [lo, hi]; floats stay floats (no inexactness warning), the rest exact."""
    val = float(v) if isinstance(v, (float, mpmath.mpf, np.floating)) else to_exact(v, name)
    f = float(val)
    if not math.isfinite(f) or (lo is not None and f < lo) or (hi is not None and f > hi):
        rng = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
        raise InvalidParameterError(name, v, f"a real number in {rng}")
    return v if isinstance(v, mpmath.mpf) else val


_EPS64 = 2.0 ** -52

#: Refinement levels tried before giving up (nodes grow by quadrature.GROWTH per level).
MAX_LEVEL = 4
#: Smallest relative error tolerance of the float64 path; below it ask for ``dps``.
MIN_TOL = 1e-13


def srf_solve(student, teacher, *, alpha, beta, lam, noise_var=0, r=None, c=None, gamma=None, alpha0=None, eta=None,
              c_formula: str = "corrected", spike_channel: bool = True, spectrum: str = "mp", empirical=None,
              cross_term: bool = True, kappa_nodes: int | None = None, inner_nodes: int | None = None,
              tol: float | None = None, damping: float = 0.5, max_iter: int = 20000, init=None,
              dps: int | None = None, continuation: str = "auto", convergence: str = "all",
              setup: SRFSetup | None = None, mp_method: str = "closed", newton_fallback: bool = True,
              strict_odd: bool = True) -> SRFSolution:
    r"""Solve Result 3.3 of [CPDKLZL24] and return the test error (25) with every order parameter and an
    honest error estimate (srf-theory.md §4, docs/theory/numerics.md §§3–5).

    Parameters
    ----------
    student, teacher : expression, name or Activation
    alpha, beta, lam : numbers
        :math:`\alpha=n/d>0`, :math:`\beta=p/d>0`, ridge :math:`\lambda>0` (sum loss, (4)).
    noise_var : number
        Label noise :math:`\Delta\ge0` (enters :math:`B(\kappa)` and, through the mapping, :math:`\mu_2^\star`).
    r, c, gamma : numbers, optional
        sRF parameters; otherwise computed from ``alpha0`` and ``eta`` by Result 3.1
        (``c_formula="corrected"`` or ``"v1"``) at the working precision.
    tol : float
        Relative error wanted in the test error (float64 path; default 1e-10, at least 1e-13).  The
        discretisation is refined until the estimated error is below it.
    dps : int, optional
        Digits wanted: the float64 solution is polished by Newton in mpmath on rules computed in Arb,
        refined until ``dps`` significant digits of the test error are vouched for; otherwise
        :class:`~onestep_theory.errors.ConvergenceError` says how many were reached.
    spike_channel : bool
        ``False`` switches the :math:`\vartheta` channel off (the notebook-printed variant, §4.10).
    spectrum : {"mp", "empirical"}
        F3 (asymptotic MP) or F1 with ``empirical=(D, F, H, G)`` (see :func:`empirical_spectrum`).
    kappa_nodes, inner_nodes : int, optional
        Fixed Gauss–Hermite rules (the reference notebook's discretisation); the error is then the
        change when both counts are doubled.
    continuation : {"auto", "off"}
        For β > 1 and λ < 1e-2, solve along a decreasing λ grid from 10 (numerics.md §4).
    convergence : {"all", "notebook"}
        Stopping rule of the fixed point: all seven order parameters (default) or the notebook's
        criterion (:math:`q_1,m,q_2,\vartheta,\psi` at 1e-4).  The notebook's early-stopped iterate is
        returned as such, and its distance from the fixed point is part of ``abs_error`` (pass a ``tol``
        of about 1e-3: it is accurate to a few digits only).

    Examples
    --------
    >>> sol = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")   # srf-theory.md §11.4
    >>> round(float(sol.test_error), 8), sol.digits >= 10
    (0.04160398, True)
    """
    al, be, la = (float_in(v, n) for v, n in ((alpha, "alpha"), (beta, "beta"), (lam, "lam")))
    nv = float_in(noise_var, "noise_var", strict=False)
    if spectrum not in ("mp", "empirical"):
        raise InvalidParameterError("spectrum", spectrum, "'mp' or 'empirical'")
    if spectrum == "empirical" and empirical is None:
        raise InvalidParameterError("empirical", None, "(D, F, H, G) arrays for spectrum='empirical'")
    if convergence not in ("all", "notebook"):
        raise InvalidParameterError("convergence", convergence, "'all' or 'notebook'")
    if tol is not None:
        tol = float_in(tol, "tol")
        if not MIN_TOL <= tol <= 0.1:
            raise InvalidParameterError("tol", tol, f"a real number in [{MIN_TOL:g}, 0.1] (use dps for more digits)")
    dps = check_dps(dps, MAX_SRF_DPS)
    target = 10.0 ** -dps if dps is not None else (tol or 1e-10)
    rr, cc, gg, mapping = _resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, c_formula, strict_odd,
                                       dps)
    o = _Opts(al, be, la, nv, spike_channel, spectrum,
              tuple(np.asarray(a, dtype=float) for a in empirical) if empirical is not None else None, cross_term,
              mp_method)
    x = tuple(float(v) for v in init) if init is not None else (0.0, 0.0, 0.0, 0.1, 0.1, 1.0, 1.0)
    conv_keys = ("q1", "m", "q2", "theta", "psi") if convergence == "notebook" else None
    ctol = 1e-4 if convergence == "notebook" else 1e-12

    def level_setup(level, mp_dps=None):
        if setup is not None and level == setup.level and mp_dps is None and not setup.mp:
            return setup
        if kappa_nodes or inner_nodes:
            f = 2 ** level
            return srf_setup(student, teacher, rr, cc, gg, dps=mp_dps, kappa_nodes=(kappa_nodes or 101) * f,
                             inner_nodes=(inner_nodes or 61) * f)
        digits = 16 if mp_dps is None else dps + 2
        return srf_setup(student, teacher, rr, cc, gg, digits=digits, level=level, dps=mp_dps)

    # ---- float64: level 0 from the start (or warm start), then each refinement warm-started
    total_it = 0
    S = level_setup(setup.level if setup is not None else 0)
    x, it, res, status = _solve_float(S, o, x, damping=damping, tol=ctol, max_iter=max_iter,
                                      continuation=continuation, conv_keys=conv_keys,
                                      newton_fallback=newton_fallback, first=init is None)
    total_it += it
    J = _jacobian(x, S, o)
    Jinv = np.linalg.inv(np.eye(7) - J)
    # rounding noise in F is amplified by the condition of the fixed point, ||(I - J)^-1||, and grows
    # with the number of nodes summed: like log2 N for numpy's pairwise sums, like sqrt N for the
    # sequential sums over mpf (measured: numerics.md §5)
    cond = max(1.0, float(np.linalg.norm(Jinv, np.inf)))

    def floor(eps, Sl):
        n = len(Sl.kappa)
        return eps * 10.0 * cond * (math.sqrt(n) if Sl.mp else math.log2(n))
    newton = 0
    levels = []       # (level, setup, x, values, solver error of the values)

    def finish(Sl, xl, tol_step, max_steps):
        nonlocal newton
        if convergence == "notebook":
            # keep the early-stopped iterate; its distance from the fixed point (polished on the same
            # rules) is part of its error
            vals0 = _all_values(xl, Sl, o)
            _, valsp, serrp = finish_polished(Sl, xl, tol_step, max_steps)
            return xl, vals0, {k: abs(vals0[k] - valsp[k]) + serrp[k] for k in vals0}
        return finish_polished(Sl, xl, tol_step, max_steps)

    def finish_polished(Sl, xl, tol_step, max_steps):
        nonlocal newton
        xl, steps, last, vals = _polish(xl, Sl, o, Jinv, tol=tol_step, max_steps=max_steps)
        newton += steps
        # the solver's error: the change of every quantity under the last (not applied) correction,
        # to first order J-propagated; for the order parameters it is the correction itself
        shifted = _all_values([a + d for a, d in zip(xl, last)], Sl, o) if not Sl.mp else None
        serr = {k: abs(vals[k] - shifted[k]) for k in vals} if shifted is not None else \
            _mp_solver_error(vals, last, xl)
        return xl, vals, serr

    def refine(start_level, mp_dps, tol_step, steps, rnd):
        """Solve on successive rule levels until the change meets the target (or the limits)."""
        xl = x if mp_dps is None else [mpmath.mpf(v) for v in x]
        for lev in range(start_level, start_level + max(1, MAX_LEVEL) + 1):
            try:
                Sl = S if (mp_dps is None and lev == S.level) else level_setup(lev, mp_dps)
            except InvalidParameterError as exc:
                if exc.param != "quadrature":
                    raise
                if len(levels) < 2:
                    raise ConvergenceError(f"sRF saddle point: no error estimate possible ({exc})", total_it) from None
                break                                # node limit reached: report what we have
            xl, vals, serr = finish(Sl, xl, tol_step, steps)
            levels.append((lev, Sl, xl, vals, serr))
            if len(levels) >= 2:
                err = _errors(levels[-2][3], vals, serr, floor(rnd, Sl))
                if err["test_error"] <= target * abs(float(vals["test_error"])):
                    break

    if dps is None:
        refine(S.level, None, 1e-15, 8, _EPS64)
        method = "damped fixed point + Newton (float64), error from refined discretisation"
    else:
        with precision(dps):
            o_mp = dataclasses.replace(o)
            o_mp.alpha, o_mp.beta, o_mp.lam, o_mp.noise_var = (_mpf_exact(v, n) for v, n in (
                (alpha, "alpha"), (beta, "beta"), (lam, "lam"), (noise_var, "noise_var")))
            if o.empirical is not None:
                o_mp.empirical = tuple(np.array([mpmath.mpf(float(t)) for t in arr], dtype=object)
                                       for arr in o.empirical)
            o = o_mp
            wd = dps + GUARD_DIGITS
            refine(0, wd, mpmath.mpf(10) ** -(wd - 3), 40, 10.0 ** -wd)
        method = "damped fixed point (float64), Newton polish in mpmath on Arb rules, error from refined discretisation"
    lev, S, x, vals, serr = levels[-1]
    errors = _errors(levels[-2][3], vals, serr, floor(_EPS64 if dps is None else 10.0 ** -(dps + GUARD_DIGITS), S))
    digits = digits_of(vals["test_error"], errors["test_error"])
    if errors["test_error"] > target * abs(float(vals["test_error"])):
        want = f"{dps} digits" if dps is not None else f"a relative error of {target:g}"
        raise ConvergenceError(f"sRF test error: {want} requested, only {digits} digits reached (estimated error "
                               f"{errors['test_error']:.1e} after {lev} refinements)", total_it + newton,
                               errors["test_error"])
    res = max(abs(float(vals[k]) - float(x[i])) / max(1.0, abs(float(x[i]))) for i, k in enumerate(ORDER))
    return SRFSolution(
        test_error=vals["test_error"], abs_error=errors["test_error"], digits=digits,
        order={k: vals[k] for k in ORDER}, hats={k: vals[k] for k in HATS}, errors=errors, D=vals["D"],
        r=rr if mapping is None else S.r, c=cc if mapping is None else S.c, gamma=gg if mapping is None else S.gamma,
        alpha=alpha, beta=beta, lam=lam, noise_var=noise_var, iterations=total_it, newton_steps=newton,
        residual=res, status=status,
        options=dict(c_formula=c_formula, spike_channel=spike_channel, spectrum=spectrum, cross_term=cross_term,
                     kappa_nodes=S.nodes[0], inner=S.nodes[1], level=lev, convergence=convergence, damping=damping),
        dps=dps, provenance=provenance(dps=dps, method=method, references=[
            "[CPDKLZL24] Result 3.3, eqs. (17)-(25)", "srf-theory.md §4", "docs/theory/numerics.md §5"]))


#: Largest ``dps`` of the sRF solver (bounded work: nodes grow linearly with the digits).
MAX_SRF_DPS = 100


def _errors(coarse: dict, fine: dict, solver: dict, rounding: float) -> dict:
    """Error estimate of every quantity: refinement change + solver step + rounding (numerics.md §5)."""
    return {k: float(abs(fine[k] - coarse[k])) + float(solver[k]) + rounding * max(1.0, abs(float(fine[k])))
            for k in fine}


def _mpf_exact(v, name):
    """An input number at the working precision, exact where the input is (Rationals stay exact)."""
    e = to_exact(v, name) if not isinstance(v, float) else to_exact(repr(v), name)
    return to_mpf(e, mpmath.mp.dps - GUARD_DIGITS)


def srf_curve(student, teacher, alphas, **kw) -> list:
    r"""Learning curve over α with warm starts (docs/theory/numerics.md §4 'Continuation'); returns a list of
    :class:`SRFSolution`.  The κ-node setups are cached, so the whole curve shares them."""
    return srf_sweep(student, teacher, "alpha", alphas, **kw)


SWEEPABLE = ("alpha", "beta", "lam", "eta", "alpha0", "noise_var")


def srf_sweep(student, teacher, param: str, values, **fixed) -> list:
    r"""Sweep one parameter (``alpha``, ``beta``, ``lam``, ``eta``, ``alpha0`` or ``noise_var``) with warm starts.

    (r, c, γ) are resolved once while they stay fixed (α, β, λ sweeps); sweeping η̃, α0 or the
    label noise changes them through Result 3.1 at every point.  For a decreasing λ sweep the warm
    start acts as the continuation of docs/theory/numerics.md §4.  Returns a list of :class:`SRFSolution`.
    """
    if param not in SWEEPABLE:
        raise InvalidParameterError("param", param, f"one of {', '.join(SWEEPABLE)}")
    fixed = dict(fixed)
    fixed.pop(param, None)
    if param in ("alpha", "beta", "lam"):
        rr, cc, gg, _ = _resolve_rcg(student, teacher, fixed.pop("r", None), fixed.pop("c", None),
                                     fixed.pop("gamma", None), fixed.pop("alpha0", None), fixed.pop("eta", None),
                                     fixed.get("noise_var", 0), fixed.get("c_formula", "corrected"),
                                     fixed.get("strict_odd", True), fixed.get("dps"))
        fixed.update(r=rr, c=cc, gamma=gg)
    out = []
    init = None
    for v in values:
        kw = dict(fixed)
        kw[param] = repr(float(v)) if isinstance(v, float) else v
        sol = srf_solve(student, teacher, init=init, **kw)
        out.append(sol)
        init = tuple(float(x) for x in sol.state())
    return out
