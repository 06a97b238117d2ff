r"""The saddle-point map of Result 3.3 [CPDKLZL24]: one application of the channel equations (18), the mean
overlap (20) and the prior (19), and the test error (25).

The state is the order parameters (17) :math:`(m,\vartheta,\psi,q_1,q_2,V_1,V_2)` (:data:`ORDER`); the
conjugates are :data:`HATS`.  The same code runs on float64 arrays and on numpy object arrays of mpf.

References
----------
docs/theory/srf-theory.md §4.1–4.7; [CPDKLZL24] arXiv:2402.04980, eqs. (17)–(25).
"""

from __future__ import annotations

import dataclasses
import math
import time

import mpmath
import numpy as np

from ...core.errors import ConvergenceError
from ..features.kappa import SRFSetup
from .channel import general_hats, inner_rule
from .priors import mp_integrals, mp_integrals_quad
from .trainedbulk import trained_prior, trained_row_norm_terms

__all__ = ["ORDER", "HATS", "MapOptions", "DomainError", "fp_map", "is_valid", "all_values", "general_extras"]

ORDER = ("m", "theta", "psi", "q1", "q2", "V1", "V2")
HATS = ("hat_V1", "hat_V2", "hat_q1", "hat_q2", "hat_theta", "hat_psi")


@dataclasses.dataclass
class MapOptions:
    """Problem data and model variants entering the map (docs/theory/srf-theory.md §4, §4.10)."""

    alpha: object
    beta: object
    lam: object
    noise_var: object
    spike_channel: bool = True
    spectrum: str = "mp"
    empirical: tuple | None = None
    cross_term: bool = True
    mp_method: str = "closed"
    loss: object = None              # a losses.Loss for the general channel of §4.9; None: square, closed form
    teacher_fn: object = None        # float64 teacher (the general channel needs y pointwise)
    teacher_kinks: tuple = ()
    #: (k, s²) of the row-norm correction (docs/theory/srf-theory.md §3 "Corrected conditional mean", §4.11): the
    #: bulk rows' squared norms c + k w0_i.v + s ζ_i/√d; needs the setup's ``dmu0``.  None: Result 3.3 as printed
    row_norms: tuple | None = None
    #: map applications the float64 solver may still spend (None: no limit); the general channel costs up to
    #: seconds per application, so its solve is bounded (docs/theory/srf-theory.md §13)
    eval_budget: int | None = None
    #: time.monotonic() after which the map refuses to run (general losses: the whole solve is bounded)
    deadline: float | None = None
    #: ``spectrum="trained"``: the step's law, ``law(S, beta) -> StepLaw`` (docs/theory/trained-bulk.md §5)
    trained: object = None


class DomainError(Exception):
    """A trial state left the domain of the map (Sherman–Morrison denominator D <= 0, invalid parameters)."""


def fp_map(x, S: SRFSetup, o: MapOptions):
    """One application of (18)-(20) and the prior (19): returns (new state, hats, D, eps_g)."""
    if o.eval_budget is not None:
        if o.eval_budget <= 0:
            raise ConvergenceError("sRF saddle point: no fixed point within the budget of map applications for "
                                   f"the {getattr(o.loss, 'name', 'square')} loss (alpha={o.alpha}, beta={o.beta}, "
                                   f"lam={o.lam})", 0)
        o.eval_budget -= 1
    if o.deadline is not None and time.monotonic() > o.deadline:
        raise ConvergenceError(f"sRF saddle point with the {getattr(o.loss, 'name', 'square')} loss: time limit "
                               "reached (docs/theory/srf-theory.md §13)", 0)
    sqrt = mpmath.sqrt if S.mp else math.sqrt
    m, th, ps, q1, q2, V1, V2 = x
    mu0, mu1, ms2, k = S.mu0, S.mu1, S.mus2, S.kappa
    mu1sq = mu1 * mu1
    V = mu1sq * V1 + ms2 * V2
    q = mu1sq * q1 + ms2 * q2
    inv = 1 / (1 + V)
    E = lambda arr: S.w @ arr  # noqa: E731
    aB = o.alpha / o.beta
    aS = o.alpha / sqrt(o.beta)
    a_th = mu1 * k              # d mbar / d theta
    extra = 0                   # the omega term of the row-norm correction
    if o.row_norms is not None:
        terms = trained_row_norm_terms if o.spectrum == "trained" else _row_norm_terms    # trained-bulk.md §7
        a_th, extra, s2, hom_of = terms(S, o, m, th, ps, V2, inv, aS, sqrt)
    mbar = mu0 * m + a_th * th + extra
    Ek = S.h2 - 2 * mbar * S.h + mbar * mbar - 2 * mu1 * ps * S.h1 + q
    B = Ek + o.noise_var
    hV1, hV2 = aB * E(mu1sq * inv), aB * E(ms2 * inv)
    hq1, hq2 = aB * E(mu1sq * B * inv * inv), aB * E(ms2 * B * inv * inv)
    hth = aS * E(a_th * (S.h - mbar) * inv) if o.spike_channel else 0 * hV1
    hps = aS * E(mu1 * S.h1 * inv)
    if E(mu0 * mu0) < 1e-14:
        m_new = 0 * hV1
    else:
        m_new = E(mu0 * (S.h - a_th * th - extra) * inv) / E(mu0 * mu0 * inv)
    if o.loss is not None:       # the general convex loss (§4.9) replaces the square-loss channel (18), (20)
        hV1, hV2, hq1, hq2, hth, hps, m_new = general_hats(
            o.loss, _inner(S, o), o.teacher_fn, k, S.w, mu0, mu1, ms2, m, th, ps, V, q, o.alpha, o.beta,
            o.spike_channel)
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
            raise DomainError("Sherman-Morrison denominator D <= 0")
        th_n = sb * hth * V1n / Dsm
        ps_n = sb * hps * V1n
        q1n = hq1 * J1 + hq2 * J2 + hps * hps * J1 + hth * hth * (J1 - o.beta * V1n * V1n) / (Dsm * Dsm)
        q2n = hq1 * J2 + hq2 * K0 + hps * hps * J2 + hth * hth * J2 / (Dsm * Dsm)
        if o.row_norms is not None:        # the random direction zeta: a prior term like theta's, without v
            hom = hom_of(mbar)
            q1n = q1n + s2 * hom * hom * J2
            q2n = q2n + s2 * hom * hom * K0
    elif o.spectrum == "trained":   # F1 with the trained bulk's deterministic equivalent, trained-bulk.md §5
        if not (hV1 > 0 and o.lam + hV2 > 0):
            raise DomainError("hat V1 <= 0 or lam + hat V2 <= 0")
        rn = None if o.row_norms is None else (o.row_norms[0], s2, hom_of(mbar))
        try:
            with np.errstate(all="ignore"):
                V1n, V2n, th_n, ps_n, q1n, q2n, Dsm, _ = trained_prior(o.trained(S, o.beta), o.lam, hV1, hV2, hq1,
                                                                       hq2, hth, hps, o.cross_term, row_norms=rn)
        except (ConvergenceError, ZeroDivisionError) as err:
            raise DomainError(f"trained-bulk prior: {err}") from None
        if not all(math.isfinite(float(v)) for v in (V1n, V2n, th_n, ps_n, q1n, q2n)):
            raise DomainError("trained-bulk prior: not finite")
    else:  # F1, docs/theory/srf-theory.md §4.6
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


def _row_norm_terms(S: SRFSetup, o: MapOptions, m, th, ps, V2, inv, aS, sqrt):
    r"""The row-norm correction of docs/theory/srf-theory.md §4.11 at the current state: the coefficient of ϑ in
    :math:`\bar m` (:math:`\mu_1\kappa+g\,k/\sqrt c`, :math:`g=\partial_c\mu_0`), the ω term :math:`g\,\omega`
    (ω solved exactly: it is linear), :math:`s^2`, and :math:`\hat\omega(\bar m)`."""
    kk, s2 = o.row_norms
    g = S.dmu0
    E = lambda arr: S.w @ arr  # noqa: E731
    a_th = S.mu1 * S.kappa + g * (kk / sqrt(S.c))
    base = S.mu0 * m + a_th * th
    sb = sqrt(o.beta)
    lin = sb * s2 * V2                               # omega = lin * hat_omega
    A, Bc = aS * E(g * (S.h - base) * inv), aS * E(g * g * inv)
    om = lin * A / (1 + lin * Bc)
    return a_th, g * om, s2, (lambda mbar: aS * E(g * (S.h - mbar) * inv))


def _inner(S: SRFSetup, o: MapOptions):
    """The (z, ξ) rule of the general channel for this κ-rule, built once per setup."""
    key = (S.level, len(S.kappa), o.teacher_kinks)
    cache = S.__dict__.setdefault("inner_rules", {})
    if key not in cache:
        cache[key] = inner_rule(S.kappa, S.gamma, o.teacher_kinks, S.level)
    return cache[key]


def general_extras(x, S: SRFSetup, o: MapOptions) -> dict:
    """Training loss and classification error (§4.9) at the state x (general loss only)."""
    m, th, ps, q1, q2, V1, V2 = x
    mu1sq = S.mu1 * S.mu1
    V = mu1sq * V1 + S.mus2 * V2
    q = mu1sq * q1 + S.mus2 * q2
    return general_hats(o.loss, _inner(S, o), o.teacher_fn, S.kappa, S.w, S.mu0, S.mu1, S.mus2, m, th, ps, V, q,
                        o.alpha, o.beta, o.spike_channel, extras=True)[1]


def is_valid(x) -> bool:
    """Finite, non-negative variances and overlaps, and the Cauchy–Schwarz bound q1 >= psi^2."""
    m, th, ps, q1, q2, V1, V2 = x
    vals = [float(v) for v in x]
    return all(math.isfinite(v) for v in vals) and V1 >= 0 and V2 >= 0 and q1 >= 0 and q2 >= 0 and \
        q1 >= ps * ps * (1 - 1e-9) - 1e-15




def all_values(x, S, o) -> dict:
    """Every reported quantity at the state x: the order parameters F(x), the hats, D and (25)."""
    fx, hats, Dsm, eps = fp_map(x, S, o)
    out = dict(zip(ORDER, fx))
    out.update(zip(HATS, hats))
    out["D"] = Dsm
    out["test_error"] = eps
    if o.loss is not None:
        out.update(general_extras(x, S, o))
    return out
