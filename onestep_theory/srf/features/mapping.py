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

from ...core.caches import cached, cached_at_precision
from ...core.errors import HypothesisError, InvalidParameterError
from ...core.exact import check_range, check_real, to_exact, to_mpf
from ...core.precision import REFINE_DIGITS, asked_digits, precision, refined, tolerance, working_digits
from ...core.results import VouchedResult, provenance
from ...hermite.activation import Activation, numeric_second_moment

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

    def check(self) -> "SRFParams":
        """Fill ``errors`` of a result of :func:`srf_params` (values only, cheap for inner loops) once, on demand:
        every display (``repr``, ``str``, IPython, HTML, ``to_dict``) calls it, so no value prints without its
        error.  The error is the change against an independent evaluation at D + 15 digits (as
        :func:`srf_params_checked`) plus the rounding at D + 4; returns the result itself."""
        how = self.__dict__.pop("_unchecked", None)
        if how is not None and not self.errors:
            with precision(self.dps), refined(5 + REFINE_DIGITS, why="the reference of the error estimate"):
                hi = _values(*how)
            with precision(self.dps):
                rnd = tolerance(4, float, why="the values' rounding, counted at D + 4 (srf_params_checked's)")
            with precision(self.dps), refined(REFINE_DIGITS, why="the change, free of rounding"):
                self.errors = {k: float(abs(getattr(self, k) - getattr(hi, k)))
                               + rnd * max(1.0, abs(float(getattr(self, k)))) for k in _KEYS}
        return self

    def __repr__(self) -> str:
        return VouchedResult.__repr__(self.check())

    def __str__(self) -> str:
        return VouchedResult.__str__(self.check())

    def _repr_pretty_(self, p, cycle) -> None:
        VouchedResult._repr_pretty_(self.check(), p, cycle)

    def _repr_html_(self) -> str:
        return VouchedResult._repr_html_(self.check())

    def to_dict(self) -> dict:
        return VouchedResult.to_dict(self.check())


def srf_params_checked(student, teacher, alpha0, eta, noise_var=0, *, c_formula: str = "corrected", dps: int = 15,
                       strict_odd: bool = True) -> SRFParams:
    """:func:`srf_params` with an error estimate: the values at ``dps`` + 5 digits compared with an
    independent evaluation at ``dps`` + 15 (quadratures at other tolerances, other working precision)."""
    args = _inputs(student, teacher, alpha0, eta, noise_var, c_formula)
    with precision(dps):                # the boundary
        return _checked(*args, c_formula, strict_odd)


def _checked(s, t, a0, et, dv, c_formula, strict_odd) -> SRFParams:
    """:func:`srf_params_checked` to the digits asked at the ambient boundary, D (:func:`asked_digits`)."""
    asked = asked_digits()
    # the values as a result of D + 5 digits: their own rounding then lies 5 digits below the last digit vouched
    with refined(5, why="the values, carried 5 digits past those asked"):
        lo = _values(s, t, a0, et, dv, c_formula, strict_odd)
    # the reference: REFINE_DIGITS (10) more again, so that the change bounds the values' error
    with refined(5 + REFINE_DIGITS, why="the reference of the error estimate"):
        hi = _values(s, t, a0, et, dv, c_formula, strict_odd)
    keys = _KEYS
    rnd = tolerance(4, float, why="the values' rounding: carried to D + 5 digits, counted at D + 4")
    with refined(REFINE_DIGITS, why="the change between the two, free of rounding"):
        lo.errors = {k: float(abs(getattr(lo, k) - getattr(hi, k))) + rnd * max(1.0, abs(float(getattr(lo, k))))
                     for k in keys}
    lo.dps = asked
    lo.provenance = dict(lo.provenance, dps=asked)      # the digits asked; working_dps: the values' working precision
    return lo


#: The values of :class:`SRFParams` that carry an error.
_KEYS = ("r", "c", "gamma", "mu1", "mu1_check_sq", "mu1_star", "mu2_star")


def _student_constants(student: Activation):
    """:math:`\\mu_1` and :math:`\\check\\mu_1^2=\\mathbb E\\sigma'^2-\\mu_1^2` at the ambient precision."""
    mu1 = student.coeffs_mp(1)[1]  # E[z sigma] = E sigma'
    m2p = numeric_second_moment(student.derivative())
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

    The values cost one evaluation (an inner loop's); their ``errors`` (as :func:`srf_params_checked`'s) are computed
    once, on the first display or by :meth:`SRFParams.check`, so every printed digit carries its error.

    Examples
    --------
    >>> p = srf_params("tanh", "sin", 20, 3)                  # docs/theory/srf-theory.md §11.2, case A
    >>> [mpmath.nstr(v, 11) for v in (p.r, p.gamma, p.c)]
    ['1.1340555093', '0.97185444449', '1.0189732005']
    """
    args = _inputs(student, teacher, alpha0, eta, noise_var, c_formula)
    with precision(dps):                # the boundary
        out = _values(*args, c_formula, strict_odd)
    out.__dict__["_unchecked"] = (*args, c_formula, strict_odd)     # errors on the first display: SRFParams.check
    return out


def _inputs(student, teacher, alpha0, eta, noise_var, c_formula) -> tuple:
    """The checked inputs of Result 3.1: ``(student, teacher, alpha0, eta, noise_var)`` as Activations and exact numbers."""
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
    return s, t, a0, et, dv


def _values(s, t, a0, et, dv, c_formula, strict_odd) -> SRFParams:
    """Result 3.1 at the ambient precision, as a result of the digits asked there (:func:`asked_digits`)."""
    _check_odd(s, strict_odd, *_odd_moments(s))
    mu1, mu1c2, mu1s, t_norm2 = _activation_constants(s, t)
    mu2s = t_norm2 + to_mpf(dv)
    e = to_mpf(et)
    if et == 0:
        r, c, g = mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(0)
    elif a0 == sp.oo:
        r, c, g = e * mu1 * abs(mu1s), mpmath.mpf(1), mpmath.mpf(1) if mu1s >= 0 else mpmath.mpf(-1)
    else:
        al = to_mpf(a0)
        g_norm = mpmath.sqrt(mu1s**2 + mu2s / al)
        g = mu1s / g_norm
        r = e * mu1 * g_norm
        inc = e**2 / al * mu2s * mu1c2
        c = 1 + (inc * mu1**2 if c_formula == "v1" else inc)
    dps = asked_digits()
    return SRFParams(r=r, c=c, gamma=g, mu1=mu1, mu1_check_sq=mu1c2, mu1_star=mu1s, mu2_star=mu2s,
                     alpha0=a0, eta=et, noise_var=dv, c_formula=c_formula, dps=dps,
                     provenance=provenance(dps=dps, method="closed form",
                                           references=["[CPDKLZL24] Result 3.1, eqs. (9)-(12)",
                                                       "docs/theory/srf-theory.md §2"], working_dps=working_digits()))


@cached_at_precision(maxsize=64)
def _odd_moments(s: Activation) -> tuple:
    """``(E σ, E σ'')`` at the working precision (cached: the same at every (α0, η̃) of a sweep)."""
    return s.coeffs_mp(0)[0], s.derivative().coeffs_mp(1)[1]  # E[z sigma'(z)] = E sigma''


@cached_at_precision(maxsize=64)
def _activation_constants(s: Activation, t: Activation) -> tuple:
    """``(μ1, μ̌1², μ1⋆, E σ⋆²)`` at the working precision: the same at every (α0, η̃) of a sweep, computed once per
    precision (SymPy derivatives and quadratures: most of a sweep's Result 3.1 per η̃)."""
    return (*_student_constants(s), t.coeffs_mp(1)[1], numeric_second_moment(t))


def _check_odd(s: Activation, strict: bool, mean, z_dsig) -> None:
    """Result 3.1 assumes E sigma = E sigma'' = 0 (docs/theory/srf-theory.md §2, Validity); ``mean`` = E σ and
    ``z_dsig`` = E σ''."""
    if abs(mean) > 1e-12 or abs(z_dsig) > 1e-12:
        msg = (f"Result 3.1 assumes an odd student (E sigma = {mpmath.nstr(mean, 5)}, "
               f"E sigma'' = {mpmath.nstr(z_dsig, 5)}); the mapping is unvalidated here")
        if strict:
            raise HypothesisError("student", s.name, "an odd activation (E sigma = E sigma'' = 0)",
                                  msg + "; give r, c, gamma explicitly, or allow it (strict_odd=False, "
                                  "CLI --allow-non-odd)")
        warnings.warn(msg, NonOddWarning, stacklevel=3)


@cached_at_precision(maxsize=256)
def _mapping_cached(student, teacher, alpha0, eta, noise_var, c_formula):
    """:func:`_checked` cached on its arguments and the working precision (a sweep resolves the same (r, c, γ) at
    every point)."""
    return _checked(*_inputs(student, teacher, alpha0, eta, noise_var, c_formula), c_formula, True)


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
    # the boundary (float64: as 5 digits asked).  The constants enter a computation at the working precision, so
    # they are asked as a result of the working digits + 2 (at least 17 digits: float64's 16 + 1), with an error
    # estimate from a second evaluation at 10 more digits; |gamma| is taken inside the precision context (outside
    # it mpmath would round to 53 bits: issue 21)
    with precision(max(dps or 0, 5)), refined(2, why="the constants: 2 digits past the working precision"):
        with precision(working_digits()):
            p = _resolved(student, teacher, alpha0, eta, noise_var, c_formula, strict_odd)
            with refined(5, why="the precision the values were computed at (srf_params_checked's)"):
                g = -p.gamma if p.gamma < 0 else +p.gamma
    return p.r, p.c, g, p


def _resolved(student, teacher, alpha0, eta, noise_var, c_formula, strict_odd) -> SRFParams:
    """Result 3.1 with its errors to the digits asked at the ambient boundary (cached when hashable and odd)."""
    args = (student, teacher, alpha0, eta, noise_var, c_formula)
    try:
        p = _mapping_cached(*args) if strict_odd else None      # a non-odd student warns at every call
    except TypeError:                                           # an unhashable argument: no cache
        p = None
    if p is None:
        p = _checked(*_inputs(*args), c_formula, strict_odd)
    return dataclasses.replace(p, errors=dict(p.errors))             # the cached object stays unchanged


def _row_norm_values(student, teacher, alpha0, eta, noise_var, r) -> tuple:
    """(k, s²) of :func:`row_norm_params` at the ambient precision."""
    from ...hermite.expressions import is_odd, x
    from ...hermite.moments import he_expect

    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    a0 = to_exact(alpha0, "alpha0", allow_infinite=True)
    et = to_exact(eta, "eta")
    if not is_odd(s.expr):
        raise InvalidParameterError("row_norms", s.name, "an odd student (the row-norm derivation uses E sigma'' = 0)")
    mu1 = s.coeffs_mp(1)[1]
    he3 = 6 * s.coeffs_mp(3)[3]                               # E[sigma He_3] = E[sigma' He_2] = h_1
    k = 2 * to_mpf(r) * he3 / mu1
    if a0 == sp.oo or et == 0:
        return k, mpmath.mpf(0)
    sp2z2 = he_expect(sp.diff(s.expr, x) ** 2 * x**2, asked_digits())    # E[sigma'(z)^2 z^2], to the digits asked
    h2 = sp2z2 - 2 * mu1 * he3 - mu1**2                      # E[h^2], h = (sigma' - mu1) z
    mu2s = numeric_second_moment(t) + to_mpf(to_exact(noise_var, "noise_var"))
    mu1c2 = numeric_second_moment(s.derivative()) - mu1**2   # check mu_1^2 = E sigma'^2 - mu_1^2
    e2, al = to_mpf(et) ** 2, to_mpf(a0)
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
    # the values as a result of dps + guard digits (the digits the saddle point that uses them works at), the
    # reference REFINE_DIGITS more again
    with precision(dps), precision(working_digits()):
        lo = _row_norm_values(student, teacher, alpha0, eta, noise_var, r)
        with refined(why="the reference of the error estimate"):
            hi = _row_norm_values(student, teacher, alpha0, eta, noise_var, r)
        unit = 10.0 ** -asked_digits()         # the values' rounding at the digits they were asked to
    with mpmath.workprec(53):                  # |lo - hi| rounded to float64 (whatever the caller's precision)
        errs = {name: float(abs(a - b)) + unit * max(1.0, abs(float(b)))
                for name, a, b in (("k", lo[0], hi[0]), ("s2", lo[1], hi[1]))}
    return lo[0], lo[1], errs
