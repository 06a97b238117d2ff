r"""The trained bulk's deterministic equivalent for a finite step batch (docs/theory/trained-bulk.md): the prior
side of Result 3.3 [CPDKLZL24] in the F1 form (docs/theory/srf-theory.md §4.6) with the limiting measure of the
trained bulk :math:`\tilde W=W^1-\mathbf 1\bar w^\top` in place of a sampled one (``spectrum="trained"``).

Conditionally on the step's samples the bulk's rows are Gaussian with population covariance
:math:`T/d`, :math:`T=I+\tau M`, :math:`M=X^\top D_wX/n_0`, :math:`w=y^2/\mu_2^\star`, :math:`\tau=c-1`
(trained-bulk.md (1)–(3)).  Every prior integral is a function of :math:`t=(\lambda+\hat V_2)/\hat V_1` through
the normalised trace :math:`\bar\kappa(t)` of :math:`(t+\beta'T)^{-1}`, the Silverstein variable δ and three
quadratic forms (trained-bulk.md (4)–(12)); their t-derivatives are taken by the complex step
(trained-bulk.md §4); the row-norm correction on top is :func:`trained_row_norm_terms` and the
``row_norms`` of :func:`trained_prior` (trained-bulk.md §7).  Float64 and mpf (numpy object arrays) run the same code.

References
----------
[CPDKLZL24] arXiv:2402.04980, Result 3.3, (19), Assumption 3.2; docs/theory/trained-bulk.md §§1–5.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import sympy as sp

from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import to_exact, to_float, to_mpf
from ...core.precision import arb_to_mpf, ulps, working_digits
from ...hermite.activation import Activation
from ...hermite.evaluate import arb_callable
from ...hermite.expressions import breakpoints
from ...hermite.quadrature import normal_rule

__all__ = ["StepLaw", "step_law", "trained_law", "resolvents", "trained_prior", "trained_row_norm_terms",
           "trained_moments"]


@dataclasses.dataclass
class StepLaw:
    r"""The step batch's law on a rule for :math:`s\sim\mathcal N(0,1)` (trained-bulk.md §2): weights ``wq``,
    :math:`y=\sigma_\star(s)` and the constants :math:`\tau=c-1`, :math:`1/\alpha_0`, :math:`\mu_1^\star`,
    :math:`\mu_2^\star`, :math:`a=\mathbb E[ws^2]`, :math:`\beta`.  Arrays float64 or object (mpf)."""

    wq: np.ndarray
    s: np.ndarray
    y: np.ndarray
    tau: object
    inv_a0: object
    beta: object
    mu1s: object
    mu2s: object

    def __post_init__(self):
        self.w = self.y * self.y / self.mu2s
        self.a = self.wq @ (self.w * self.s * self.s)
        self.G2 = self.mu1s * self.mu1s + self.mu2s * self.inv_a0        # |g|^2, Result 3.1 (9)-(10)


def step_law(wq, s, y, tau, inv_a0, beta, mu2s=None) -> StepLaw:
    r"""A :class:`StepLaw` from a rule (``wq``, ``s``) and the teacher's values ``y`` on it (noiseless labels);
    :math:`\mu_1^\star=\mathbb E[ys]`, :math:`\mu_2^\star=\mathbb E[y^2]` on the same rule unless given."""
    mu1s = wq @ (y * s)
    mu2s = wq @ (y * y) if mu2s is None else mu2s
    return StepLaw(wq, s, y, tau, inv_a0, beta, mu1s, mu2s)


def trained_law(teacher, mapping, noise_var=0, alpha0=None):
    r"""The step batch's law for ``spectrum="trained"`` (trained-bulk.md §2, §5): a callable
    ``law(S, beta) -> StepLaw`` on a rule for :math:`s` refined with the κ-rule ``S`` (its level, its digits,
    float64 or mpf at the ambient precision), cached per level and precision; :math:`\tau=c-1` from ``S.c``.

    Needs the network's step batch — ``mapping`` ((r, c, γ) from α0 and η̃), or ``alpha0`` beside (r, c, γ) given
    directly (a network's measured parameters, docs/studies/paired-map.md) — and noiseless labels."""
    if mapping is None and alpha0 is None:
        raise InvalidParameterError("spectrum", "trained", "alpha0 and eta (the trained bulk is the step's: (r, c, "
                                    "gamma) given directly need alpha0 beside them, the step batch's size n0/d)")
    if noise_var != 0:
        raise InvalidParameterError("noise_var", noise_var, "0 with spectrum='trained' (label noise in the step's "
                                    "law is not derived: docs/theory/trained-bulk.md §6)")
    t = Activation.from_any(teacher, "teacher")
    a0 = sp.sympify(mapping.alpha0) if mapping is not None else to_exact(alpha0, "alpha0", allow_infinite=True)
    if not a0 > 0:
        raise InvalidParameterError("alpha0", alpha0, "a real number > 0 (or inf)")
    inv_exact = sp.Integer(0) if a0 == sp.oo else 1 / a0
    kinks = tuple(float(b) for b in breakpoints(t.expr))
    cache = {}

    def law(S, beta) -> StepLaw:
        key = (S.level, S.mp, working_digits() if S.mp else 16, float(S.digits))
        if key not in cache:
            rule = normal_rule(kinks, (), digits=S.digits, level=S.level, hmax=0.5, arb=S.mp)
            if S.mp:
                s, wq = rule.mp()
                f = arb_callable(t.expr)
                y = np.array([arb_to_mpf(f(v)) for v in rule.nodes], dtype=object)
                inv = to_mpf(inv_exact)
            else:
                s, wq = np.asarray(rule.nodes, float), np.asarray(rule.weights, float)
                y = np.asarray(t.numpy()(s), float)
                inv = to_float(inv_exact)
            cache[key] = (wq, s, y, inv)
        wq, s, y, inv = cache[key]
        return step_law(wq, s, y, S.c - 1, inv, beta)

    return law


def _solve(L: StepLaw, t, start=None):
    r"""The fixed point :math:`(\delta,\bar\kappa)` of trained-bulk.md (5)–(6) at (real or complex) ``t`` by Newton
    on :math:`F(\delta,\bar\kappa)=0`; returns ``(delta, kbar, e, beta')``."""
    mp = isinstance(t, (mpmath.mpf, mpmath.mpc))
    tiny = ulps(3, why="1000 ulps: below it a value is rounding") if mp else 1e-15
    b, tau = L.beta, L.tau
    # start: the isotropic (Marchenko-Pastur, scale c) solution
    if start is None:
        c = 1 + tau
        sq = mpmath.sqrt if mp else (np.sqrt if isinstance(t, complex) else math.sqrt)
        bq = t + c - c * b
        gs = 2 / (bq + sq(bq * bq + 4 * c * b * t))          # g = 1/(t(1+delta))
        delta = 1 / (t * gs) - 1
        kbar = 1 / (t + b / (1 + delta))
    else:
        delta, kbar = start
    for it in range(200):
        bp = b / (1 + delta)
        eps = bp * tau * L.inv_a0                       # e = eps * kbar
        e = eps * kbar
        den = 1 / (1 + L.w * e)
        phi = L.wq @ (L.w * den)
        dphi = -(L.wq @ (L.w * L.w * den * den))       # d phi / d e
        f1 = kbar * (t + bp + bp * tau * phi) - 1
        f2 = delta * bp - 1 + t * kbar
        # derivatives: bp = b/(1+delta), d bp/d delta = -bp/(1+delta)
        dbp = -bp / (1 + delta)
        de_dd, de_dk = dbp * tau * L.inv_a0 * kbar, eps
        j11 = kbar * (dbp + dbp * tau * phi + bp * tau * dphi * de_dd)
        j12 = (t + bp + bp * tau * phi) + kbar * bp * tau * dphi * de_dk
        j21 = bp + delta * dbp
        j22 = t
        det = j11 * j22 - j12 * j21
        dd = (f1 * j22 - f2 * j12) / det
        dk = (j11 * f2 - j21 * f1) / det
        delta, kbar = delta - dd, kbar - dk
        if abs(dd) <= tiny * (1 + abs(delta)) and abs(dk) <= tiny * abs(kbar):
            bp = b / (1 + delta)
            return delta, kbar, bp * tau * L.inv_a0 * kbar, bp
    raise ConvergenceError(f"trained-bulk resolvent: Newton did not converge at t={t}", it)


def resolvents(L: StepLaw, t, start=None):
    r"""The four F1 functions of trained-bulk.md (10)–(12) at ``t``: :math:`g=\langle1/(t+D)\rangle`,
    :math:`f_F=\langle F/(t+D)\rangle`, :math:`f_G=\langle G/(t+D)\rangle`, :math:`f_H=\langle H/(t+D)\rangle`,
    and the fixed point ``(delta, kbar)`` (a warm start).

    Without step noise (τ = 0) these are the Ω-basis F3 functions of c = 1 (trained-bulk.md §4): with
    :math:`\beta=1`, :math:`g(1)=(\sqrt5-1)/2` and :math:`f_F=g`, :math:`f_H=1-g`:

    >>> s, wq = np.polynomial.hermite_e.hermegauss(40)
    >>> L = step_law(wq / wq.sum(), s, np.tanh(s), 0.0, 2.0, 1.0)
    >>> (g, fF, fG, fH), _ = resolvents(L, 1.0)
    >>> [abs(float(v)) < 1e-14 for v in (g - (5 ** 0.5 - 1) / 2, fF - g, fH - (1 - g), fG)]
    [True, True, True, True]
    """
    delta, kbar, e, bp = _solve(L, t, start)
    b, tau = L.beta, L.tau
    den = kbar / (1 + L.w * e) * L.inv_a0        # E[. kbar/(1+we)]/alpha0 weights
    ys, wss = L.y, L.w * L.s
    Qyy = L.wq @ (ys * ys * den)
    Qyb = bp * tau * (L.wq @ (ys * wss * den))   # the (beta' tau)-scaled g_perp^T K b
    Qbb = bp * tau * (L.wq @ (wss * wss * den))
    kth = 1 / (t + bp + bp * tau * (L.a - Qbb))  # theta^T (t + beta'T)^{-1} theta
    gth = L.mu1s
    G2 = L.G2
    Av = ((gth - Qyb) ** 2 * kth + Qyy) / G2
    Atv = (gth - Qyb) * kth / (G2 ** 0.5 if not isinstance(G2, (mpmath.mpf,)) else mpmath.sqrt(G2))
    At = kth
    gam2 = gth * gth / G2
    gam = gam2 ** 0.5 if not isinstance(gam2, mpmath.mpf) else mpmath.sqrt(gam2)
    if gth < 0:
        gam = -gam
    rho2 = 1 - gam2
    g = 1 / (t * (1 + delta))
    fF = (1 - t * Av) / (t * Av) / b
    if rho2 > 0:
        rho = rho2 ** 0.5 if not isinstance(rho2, mpmath.mpf) else mpmath.sqrt(rho2)
        Apv = (Atv - gam * Av) / rho
        Ap = (At - 2 * gam * Atv + gam2 * Av) / rho2
        fG = -Apv / (b * Av)
        fH = (1 - t * Ap + t * Apv * Apv / Av) / b
    else:
        fG = fH = 0 * g
    return (g, fF, fG, fH), (delta, kbar)


def _values_and_slopes(L: StepLaw, t, start=None):
    """(g, fF, fG, fH) and their t-derivatives by the complex step (trained-bulk.md §4)."""
    mp = isinstance(t, mpmath.mpf)
    vals, st = resolvents(L, t, start)
    if mp:
        h = mpmath.mpf(10) ** (-working_digits()) * (1 + abs(t))
        tc = mpmath.mpc(t, h)
        sc = (mpmath.mpc(st[0]), mpmath.mpc(st[1]))
        cv, _ = resolvents(L, tc, sc)
        slopes = tuple(mpmath.im(v) / h for v in cv)
    else:
        h = 1e-30 * (1 + abs(t))
        cv, _ = resolvents(L, complex(t, h), (complex(st[0]), complex(st[1])))
        slopes = tuple(complex(v).imag / h for v in cv)
    return vals, slopes, st


def trained_prior(L: StepLaw, lam, hV1, hV2, hq1, hq2, hth, hps, cross_term=True, start=None, row_norms=None):
    r"""The prior equations (F1 form, docs/theory/srf-theory.md §4.6) with the trained bulk's deterministic
    equivalent (trained-bulk.md (13)): returns ``(V1, V2, theta, psi, q1, q2, D, start)`` with D the
    Sherman–Morrison denominator :math:`1-\beta\hat V_1V_1` and ``start`` the warm start of the next call.

    ``row_norms=(k, s2, hat_omega)``: the row-norm direction :math:`\delta c=kW^0v+s\zeta/\sqrt d` as a third F1
    direction with :math:`f_{cv}=kg`, :math:`f_{c\perp}=0`, :math:`f_{cc}=(k^2+s^2)g` (trained-bulk.md (15))."""
    t = (lam + hV2) / hV1
    (g, fF, fG, fH), (dg, dF, dG, dH), st = _values_and_slopes(L, t, start)
    if not cross_term:
        fG, dG = 0 * fG, 0 * dG
    b = L.beta
    sb = mpmath.sqrt(b) if isinstance(b, mpmath.mpf) else math.sqrt(b)
    i1, i2 = 1 / hV1, 1 / (hV1 * hV1)
    V1, V2 = (1 - t * g) * i1, g * i1
    S2_0, S2_1, S2_2 = -dg * i2, (g + t * dg) * i2, (1 - 2 * t * g - t * t * dg) * i2   # <D^k/S^2>
    th = sb * (hth * fF + hps * fG) * i1
    ps = sb * (hps * fH + hth * fG) * i1
    nF, nG, nH = -dF * i2, -dG * i2, -dH * i2              # <X/S^2>
    dF_, dG_, dH_ = (fF + t * dF) * i2, (fG + t * dG) * i2, (fH + t * dH) * i2   # <D X/S^2>
    q1 = hq1 * S2_2 + hq2 * S2_1 + hth * hth * dF_ + 2 * hth * hps * dG_ + hps * hps * dH_
    q2 = hq1 * S2_1 + hq2 * S2_0 + hth * hth * nF + 2 * hth * hps * nG + hps * hps * nH
    if row_norms is not None:            # trained-bulk.md (15)-(16)
        kk, s2, hom = row_norms
        th = th + sb * hom * kk * g * i1
        cc = hom * hom * (kk * kk + s2) + 2 * hth * hom * kk
        q1, q2 = q1 + cc * S2_1, q2 + cc * S2_0
    return V1, V2, th, ps, q1, q2, 1 - b * hV1 * V1, st


def trained_row_norm_terms(S, o, m, th, ps, V2, inv, aS, sqrt):
    r"""The channel side of the row-norm correction on the trained bulk (trained-bulk.md §7, (16)): the coefficient
    of ϑ in :math:`\bar m` (:math:`\mu_1\kappa`: the norms' direction :math:`W^0v` is not folded into ϑ), the
    term :math:`g\,\Omega_c` with the overlap :math:`\Omega_c=\hat a^\top\delta c/\sqrt p` eliminated exactly
    (it is linear), :math:`s^2`, and :math:`\hat\omega(\bar m)`; the signature of the F3 form's terms
    (docs/theory/srf-theory.md §4.11)."""
    kk, s2 = o.row_norms
    g = S.dmu0
    E = lambda arr: S.w @ arr  # noqa: E731
    a_th = S.mu1 * S.kappa
    base = S.mu0 * m + a_th * th
    ell = sqrt(o.beta) * V2
    A, B = aS * E(g * (S.h - base) * inv), aS * E(g * g * inv)
    if o.spike_channel:
        th0, C = aS * E(a_th * (S.h - base) * inv), aS * E(a_th * g * inv)
    else:
        th0 = C = 0 * A
    w2 = kk * kk + s2
    oc = ell * (w2 * A + kk * th0) / (1 + ell * (w2 * B + kk * C))
    return a_th, g * oc, s2, (lambda mbar: aS * E(g * (S.h - mbar) * inv))


def trained_moments(L: StepLaw):
    r"""The first two moments of the trained bulk's Gram spectrum in closed form (trained-bulk.md (14)):
    :math:`m_1=c`, :math:`m_2=(1+\beta)c^2+\beta\tau^2\,\mathbb E[w^2]/\alpha_0`."""
    c = 1 + L.tau
    Ew2 = L.wq @ (L.w * L.w)
    return c, (1 + L.beta) * c * c + L.beta * L.tau * L.tau * Ew2 * L.inv_a0
