r"""Network after one giant step → equivalent spiked-random-features parameters (r, c, γ).

Implements Result 3.1 of [CPDKLZL24], eqs. (9)–(12), as specified in docs/theory/srf-theory.md §2:

.. math::
    \gamma=\frac{\mu_1^\star}{\sqrt{\mu_1^{\star2}+\mu_2^\star/\alpha_0}},\qquad
    r=\tilde\eta\,\mu_1\sqrt{\mu_1^{\star2}+\mu_2^\star/\alpha_0},\qquad
    c=1+\frac{\tilde\eta^2}{\alpha_0}\mu_2^\star\check\mu_1^2,

with :math:`\mu_1=\mathbb E\sigma'(z)`, :math:`\check\mu_1^2=\mathbb E\sigma'(z)^2-\mu_1^2`,
:math:`\mu_1^\star=\mathbb E[z\sigma_\star(z)]` and :math:`\mu_2^\star=\|\sigma_\star\|^2+\Delta`
(label noise included).  The earlier variant ``c_formula="v1"`` multiplies the increment of
:math:`c` by :math:`\mu_1^2` (the authors' notebook until May 2024).

References
----------
[CPDKLZL24] H. Cui et al., arXiv:2402.04980, Result 3.1 and App. A (33)–(56).
"""

from __future__ import annotations

import dataclasses
import warnings

import mpmath
import sympy as sp

from ...core.caches import cached
from ...core.errors import HypothesisError, InvalidParameterError
from ...core.exact import check_range, check_real, to_exact, to_mpf
from ...core.precision import GUARD_DIGITS, precision, workdps
from ...core.results import VouchedResult, provenance
from ...hermite.activation import Activation

__all__ = ["SRFParams", "srf_params", "srf_params_checked", "resolve_rcg", "NonOddWarning", "row_norm_params"]


#: Largest learning rate and step-batch ratio accepted (beyond them r, c overflow any useful scale).
MAX_ETA = 10**6
MAX_ALPHA0 = 10**12


class NonOddWarning(UserWarning):
    """Result 3.1 was derived and validated for odd activations only (docs/theory/srf-theory.md §2, Validity)."""


@dataclasses.dataclass
class SRFParams(VouchedResult):
    """Spike strength ``r``, bulk variance ``c`` and alignment ``gamma`` of the sRF model (Def. 3.1)."""

    INPUTS = ("alpha0", "eta", "noise_var")           # serialised exact, as given ("1/2", "inf"): never rounded

    r: object
    c: object
    gamma: object
    mu1: object
    mu1_check_sq: object
    mu1_star: object
    mu2_star: object
    alpha0: object
    eta: object
    noise_var: object
    c_formula: str
    dps: int
    provenance: dict
    errors: dict = dataclasses.field(default_factory=dict)

    def floats(self) -> tuple:
        return float(self.r), float(self.c), float(self.gamma)


def srf_params_checked(student, teacher, alpha0, eta, noise_var=0, *, c_formula: str = "corrected", dps: int = 15,
                       strict_odd: bool = True) -> SRFParams:
    """:func:`srf_params` with an error estimate: the values at ``dps`` + 5 digits compared with an
    independent evaluation at ``dps`` + 15 (quadratures at other tolerances, other working precision)."""
    lo = srf_params(student, teacher, alpha0, eta, noise_var, c_formula=c_formula, dps=dps + 5, strict_odd=strict_odd)
    hi = srf_params(student, teacher, alpha0, eta, noise_var, c_formula=c_formula, dps=dps + 15,
                    strict_odd=strict_odd)
    keys = ("r", "c", "gamma", "mu1", "mu1_check_sq", "mu1_star", "mu2_star")
    with workdps(dps + 20):
        lo.errors = {k: float(abs(getattr(lo, k) - getattr(hi, k))) + 10.0 ** -(dps + 4) * max(1.0, abs(float(getattr(lo, k))))
                     for k in keys}
    lo.dps = dps
    return lo


def _student_constants(student: Activation, dps: int):
    mu1 = student.coeff(1, dps)  # E[z sigma] = E sigma'
    m2p = student.deriv_second_moment(dps)
    with precision(dps):
        return mu1, m2p - mu1**2


def srf_params(student, teacher, alpha0, eta, noise_var=0, *, c_formula: str = "corrected", dps: int = 20,
               strict_odd: bool = True) -> SRFParams:
    r"""Equivalent sRF parameters of a network after one giant step (Result 3.1 of [CPDKLZL24]).

    Parameters
    ----------
    student, teacher : str, sympy.Expr or Activation
        :math:`\sigma` (needs :math:`\sigma'\in L^2`) and :math:`\sigma_\star`.
    alpha0 : number or "inf"
        Step batch ratio :math:`n_0/d > 0`; ``"inf"`` gives perfect alignment (γ = 1, c = 1).  The
        random-features limit (no step: r = 0, c = 1, γ = 0) is ``eta=0``.
    eta : number
        :math:`\tilde\eta\ge0` with :math:`\eta=\tilde\eta p`.
    noise_var : number
        Label-noise variance :math:`\Delta\ge0` (enters :math:`\mu_2^\star`).
    c_formula : {"corrected", "v1"}
        Eq. (11) as validated by simulation (default) or the earlier variant with the extra
        :math:`\mu_1^2` factor.
    strict_odd : bool
        Result 3.1 assumes an odd student (:math:`\mathbb E\sigma=\mathbb E\sigma''=0`).  By default a
        non-odd student is refused with a clear error; ``strict_odd=False`` computes the (unvalidated)
        mapping anyway and warns, as docs/theory/srf-theory.md §2 describes.  User-supplied (r, c, γ) are always accepted.

    Examples
    --------
    >>> p = srf_params("tanh", "sin", 20, 3)                  # docs/theory/srf-theory.md §11.2, case A
    >>> [mpmath.nstr(v, 11) for v in (p.r, p.gamma, p.c)]
    ['1.1340555093', '0.97185444449', '1.0189732005']
    """
    if c_formula not in ("corrected", "v1"):
        raise InvalidParameterError("c_formula", c_formula, "'corrected' or 'v1'")
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    a0 = to_exact(alpha0, "alpha0", allow_infinite=True)
    if not (a0 > 0) or (a0 != sp.oo and a0 > MAX_ALPHA0):
        # n0 = alpha0 d > 0 samples make the step; the random-features limit (no step) is eta = 0
        raise InvalidParameterError("alpha0", alpha0, f"a real number in (0, {MAX_ALPHA0:g}], or inf (for no step, "
                                    "give eta = 0)")
    et = check_range(eta, "eta", 0, MAX_ETA, lo_open=False, hi_open=False)
    dv = check_range(noise_var, "noise_var", 0, None, lo_open=False)
    _check_odd(s, strict_odd, dps)
    mu1, mu1c2 = _student_constants(s, dps)
    with precision(dps):
        mu1s = t.coeff(1, dps)
        t_norm2 = t.second_moment(dps)
        mu2s = t_norm2 + to_mpf(dv, dps)
        e = to_mpf(et, dps)
        if et == 0:
            r, c, g = mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(0)
        elif a0 == sp.oo:
            r, c, g = e * mu1 * abs(mu1s), mpmath.mpf(1), mpmath.mpf(1) if mu1s >= 0 else mpmath.mpf(-1)
        else:
            al = to_mpf(a0, dps)
            g_norm = mpmath.sqrt(mu1s**2 + mu2s / al)
            g = mu1s / g_norm
            r = e * mu1 * g_norm
            inc = e**2 / al * mu2s * mu1c2
            c = 1 + (inc * mu1**2 if c_formula == "v1" else inc)
    return SRFParams(r=r, c=c, gamma=g, mu1=mu1, mu1_check_sq=mu1c2, mu1_star=mu1s, mu2_star=mu2s,
                     alpha0=a0, eta=et, noise_var=dv, c_formula=c_formula, dps=dps,
                     provenance=provenance(dps=dps, method="closed form",
                                           references=["[CPDKLZL24] Result 3.1, eqs. (9)-(12)",
                                                       "docs/theory/srf-theory.md §2"]))


def _check_odd(s: Activation, strict: bool, dps: int) -> None:
    """Result 3.1 assumes E sigma = E sigma'' = 0 (docs/theory/srf-theory.md §2, Validity)."""
    mean = s.mean(dps)
    z_dsig = s.derivative().coeff(1, dps)  # E[z sigma'(z)] = E sigma''
    if abs(mean) > 1e-12 or abs(z_dsig) > 1e-12:
        msg = (f"Result 3.1 assumes an odd student (E sigma = {mpmath.nstr(mean, 5)}, "
               f"E sigma'' = {mpmath.nstr(z_dsig, 5)}); the mapping is unvalidated here")
        if strict:
            raise HypothesisError("student", s.name, "an odd activation (E sigma = E sigma'' = 0)",
                                  msg + "; give r, c, gamma explicitly, or allow it (strict_odd=False, "
                                  "CLI --allow-non-odd)")
        warnings.warn(msg, NonOddWarning, stacklevel=3)


@cached(maxsize=256)
def _mapping_cached(student, teacher, alpha0, eta, noise_var, c_formula, digits):
    """:func:`srf_params_checked` cached on its arguments (a sweep resolves the same (r, c, γ) at every point)."""
    return srf_params_checked(student, teacher, alpha0, eta, noise_var, c_formula=c_formula, dps=digits)


def resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var=0, c_formula="corrected", strict_odd=True,
                dps=None):
    """The sRF parameters (r, c, γ): checked when given, else from (α0, η̃) by Result 3.1 (docs/theory/srf-theory.md §2).

    The one place where (r, c, γ) are resolved.  Returns ``(r, c, gamma, mapping)`` with ``mapping`` the
    :class:`SRFParams` (or None when r, c, γ were given); the constants carry ``dps`` + guard digits.
    """
    if r is not None or c is not None or gamma is not None:
        if r is None or c is None or gamma is None:
            raise InvalidParameterError("r, c, gamma", (r, c, gamma), "all three, or alpha0 and eta instead")
        rr, cc, gg = (check_real(v, n, lo, hi) for v, n, lo, hi in
                      ((r, "r", 0, None), (c, "c", None, None), (gamma, "gamma", 0, 1)))
        if not float(cc) > 0:
            raise InvalidParameterError("c", c, "a real number > 0")
        return rr, cc, gg, None
    if alpha0 is None or eta is None:
        raise InvalidParameterError("alpha0, eta", (alpha0, eta), "both (or r, c, gamma)")
    # the constants carry GUARD_DIGITS + 2 more digits than asked, with an error estimate from a second
    # evaluation at 10 more digits; |gamma| is taken inside the precision context (outside it mpmath would
    # round to 53 bits: issue 21)
    digits = max(17, (dps or 0) + GUARD_DIGITS + 2)
    args = (student, teacher, alpha0, eta, noise_var, c_formula, digits)
    try:
        p = _mapping_cached(*args) if strict_odd else None      # a non-odd student warns at every call
    except TypeError:                                           # an unhashable argument: no cache
        p = None
    if p is None:
        p = srf_params_checked(*args[:5], c_formula=c_formula, dps=digits, strict_odd=strict_odd)
    p = dataclasses.replace(p, errors=dict(p.errors))             # the cached object stays unchanged
    with workdps(digits + 5 + GUARD_DIGITS):     # the precision srf_params_checked evaluated at
        g = -p.gamma if p.gamma < 0 else +p.gamma
    return p.r, p.c, g, p


def _row_norm_values(student, teacher, alpha0, eta, noise_var, r, dps: int) -> tuple:
    """(k, s²) of :func:`row_norm_params` at ``dps`` digits."""
    from ...hermite.expressions import is_odd, x
    from ...hermite.moments import he_expect

    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    a0 = to_exact(alpha0, "alpha0", allow_infinite=True)
    et = to_exact(eta, "eta")
    if not is_odd(s.expr):
        raise InvalidParameterError("row_norms", s.name, "an odd student (the row-norm derivation uses E sigma'' = 0)")
    with precision(dps):
        mu1 = s.coeff(1, dps)
        he3 = 6 * s.coeff(3, dps)                                 # E[sigma He_3] = E[sigma' He_2] = h_1
        k = 2 * to_mpf(r, dps) * he3 / mu1
        if a0 == sp.oo or et == 0:
            return k, mpmath.mpf(0)
        sp2z2 = he_expect(sp.diff(s.expr, x) ** 2 * x**2, dps)    # E[sigma'(z)^2 z^2]
        h2 = sp2z2 - 2 * mu1 * he3 - mu1**2                      # E[h^2], h = (sigma' - mu1) z
        mu2s = t.second_moment(dps) + to_mpf(to_exact(noise_var, "noise_var"), dps)
        mu1c2 = s.deriv_second_moment(dps) - mu1**2              # check mu_1^2 = E sigma'^2 - mu_1^2
        e2, al = to_mpf(et, dps) ** 2, to_mpf(a0, dps)
        s2 = 4 * e2 * (h2 - he3**2) * mu2s / al + 2 * e2**2 * mu2s**2 * mu1c2**2 / al**2
        return k, s2


@cached(maxsize=64)
def row_norm_params(student, teacher, alpha0, eta, noise_var, r, dps: int = 15) -> tuple:
    r"""The row-norm heterogeneity of the trained bulk (docs/theory/srf-theory.md §2, "Row norms"): the squared row
    norms are :math:`c+k\,w_i^{0\top}v+s\,\zeta_i/\sqrt d`, with

    .. math::
        k=\frac{2r\,\mathbb E[\sigma He_3]}{\mu_1},\qquad
        s^2=\frac{4\tilde\eta^2}{\alpha_0}\big(\mathbb E[h^2]-\mathbb E[\sigma He_3]^2\big)\mu_2^\star
        +\frac{2\tilde\eta^4}{\alpha_0^2}\mu_2^{\star2}\check\mu_1^4,\qquad h(z)=(\sigma'(z)-\mu_1)z

    (:math:`s=0` for :math:`\alpha_0=\infty`; the second term is the row-to-row fluctuation of
    :math:`\|(\Delta W)_i\|^2`).  Odd students only (the derivation uses :math:`\mathbb E\sigma''=0`).  Returns ``(k, s2, errors)``: mpf values at ``dps`` digits and their
    error estimates (the change from a second evaluation at ``dps`` + 10 digits, plus the rounding).

    >>> k, s2, err = row_norm_params("tanh", "sin", 20, 3, 0, "1.1340555093")
    >>> round(float(k), 6), round(float(s2), 6)
    (-1.361511, 0.039002)
    """
    lo = _row_norm_values(student, teacher, alpha0, eta, noise_var, r, dps + GUARD_DIGITS)
    hi = _row_norm_values(student, teacher, alpha0, eta, noise_var, r, dps + GUARD_DIGITS + 10)
    errs = {name: float(abs(a - b)) + 10.0 ** -(dps + GUARD_DIGITS) * max(1.0, abs(float(b)))
            for name, a, b in (("k", lo[0], hi[0]), ("s2", lo[1], hi[1]))}
    return lo[0], lo[1], errs
