"""What :func:`~onestep_theory.srf.single.solve.srf_solve` takes and returns: its options (model variants of Result 3.3
and the numerical choices, checked once) and the result object of the sRF saddle point (docs/theory/srf-theory.md §2,
§4, §4.9–4.11; docs/theory/numerics.md §4–5)."""

from __future__ import annotations

import dataclasses
import math

from ...core.errors import InvalidParameterError
from ...core.exact import check_real
from ...core.precision import error_of
from ...core.results import Result, VouchedResult, serialize, vouch
from ..loss.losses import loss as loss_of
from .saddle import ORDER

__all__ = ["SRFOptions", "SRFSolution", "combine_errors", "rounding_floor", "ROUNDING_SAFETY"]

#: Safety factor of :func:`rounding_floor` for the single-group solver (docs/theory/numerics.md §5): at 2, the
#: accuracy matrix fails by 1.24x on V1 at one point (the Marchenko-Pastur closed form cancels digits).
ROUNDING_SAFETY = 10.0


@dataclasses.dataclass(frozen=True)
class SRFOptions:
    r"""Model variants and numerical choices of :func:`srf_solve` (defaults: the package's recommendation).

    Model variants (docs/theory/srf-theory.md §2, §4.6, §4.10):

    * ``c_formula``: ``"corrected"`` or ``"v1"`` (Result 3.1, when (r, c, γ) come from α0 and η̃);
    * ``strict_odd``: refuse a non-odd student in the mapping (``False``: warn and compute);
    * ``spike_channel``: ``False`` switches the :math:`\vartheta` channel off (the notebook-printed variant);
    * ``spectrum``: ``"mp"`` (F3) or ``"empirical"`` (F1) with ``empirical=(D, F, H, G)``
      (:func:`~onestep_theory.srf.single.priors.empirical_from_weights`); ``cross_term`` keeps G in F1.
      ``"trained"``: F1 with the deterministic equivalent of the network's trained bulk for a finite step
      batch (docs/theory/trained-bulk.md; needs α0 and η̃, noiseless labels).

    Discretisation: ``kappa_nodes``/``inner_nodes`` select the reference notebook's fixed Gauss–Hermite
    rules (the error is then the change when both counts are doubled); ``mp_method`` is ``"closed"``
    (Stieltjes transform) or ``"quad"`` (quadrature of the MP measure).

    Solver (docs/theory/numerics.md §4): ``damping``, ``max_iter`` of the damped fixed point;
    ``continuation`` (``"auto"``: for β > 1 and λ < 1e-2 solve along a decreasing λ grid from 10, or
    ``"off"``); ``convergence`` (``"all"``: hybrid Powell to the fixed point, or ``"notebook"``: the
    notebook's damped iteration stopped on :math:`q_1,m,q_2,\vartheta,\psi` at 1e-4, whose distance from the
    fixed point is then part of ``abs_error``); ``fallback``: try the other solver when the first fails.

    ``loss`` (docs/theory/srf-theory.md §4.9): ``None``/``"square"`` (the closed-form square loss), ``"logistic"``,
    ``"hinge"``, an expression in ``y, yhat`` or a :class:`~onestep_theory.srf.loss.losses.Loss` (a Loss object always
    runs the general channel, float64, noiseless labels).  The solution's ``extra`` then holds the
    training loss and, for ±1 teachers, the classification error.  Entry checks and kinked losses:
    docs/theory/srf-theory.md §13 (a classification loss refuses a teacher whose labels are not ±1 before any
    work; the solve is bounded by :data:`GENERAL_LIMIT` seconds).

    ``row_norms=True`` (docs/theory/srf-theory.md §4.11): the correction for the row-norm heterogeneity of the
    giant step (§2 "Row norms"), which Result 3.3 leaves out and which puts the network several percent from it
    (docs/studies/mechanism.md); (r, c, γ) from α0 and η̃.  ``row_norms=(k, s2)``: a given heterogeneity (squared
    row norms :math:`c+k\,w_i^{0\top}v+s\zeta_i/\sqrt d`, e.g. measured on trained weights), with any (r, c, γ).
    Square loss, the F3 prior or the trained bulk (``spectrum="trained"``), a twice-differentiable odd
    student; the solution's ``extra`` then holds ``row_norm_k`` and ``row_norm_s2``.
    """

    c_formula: str = "corrected"
    strict_odd: bool = True
    spike_channel: bool = True
    spectrum: str = "mp"
    empirical: tuple | None = None
    cross_term: bool = True
    kappa_nodes: int | None = None
    inner_nodes: int | None = None
    mp_method: str = "closed"
    damping: float = 0.5
    max_iter: int = 20000
    continuation: str = "auto"
    convergence: str = "all"
    fallback: bool = True
    loss: object = None
    row_norms: object = False

    _CHOICES = {"c_formula": ("corrected", "v1"), "spectrum": ("mp", "empirical", "trained"),
                "mp_method": ("closed", "quad"),
                "continuation": ("auto", "off"), "convergence": ("all", "notebook")}

    @classmethod
    def build(cls, options=None, overrides=None) -> "SRFOptions":
        """``options`` with the keyword ``overrides`` applied, every field checked."""
        base = options if options is not None else cls()
        if not isinstance(base, cls):
            raise InvalidParameterError("options", options, "an SRFOptions")
        names = {f.name for f in dataclasses.fields(cls)}
        for k in overrides or {}:
            if k not in names:
                raise InvalidParameterError(k, overrides[k], f"not an option of srf_solve (options: "
                                                              f"{', '.join(sorted(names))})")
        opt = dataclasses.replace(base, **(overrides or {}))
        for k, allowed in cls._CHOICES.items():
            if getattr(opt, k) not in allowed:
                raise InvalidParameterError(k, getattr(opt, k), " or ".join(repr(a) for a in allowed))
        if opt.spectrum == "empirical" and opt.empirical is None:
            raise InvalidParameterError("empirical", None, "(D, F, H, G) arrays for spectrum='empirical'")
        if opt.loss is not None:
            lo = loss_of(opt.loss)
            # the string "square" is the closed form (§4.3-4.4, the exact reduction of §4.9); a Loss object
            # always runs the general channel (for square: the numerical cross-check of that reduction)
            opt = dataclasses.replace(opt, loss=None if isinstance(opt.loss, str) and lo.name == "square" else lo)
        if not 0 <= float(opt.damping) < 1:
            raise InvalidParameterError("damping", opt.damping, "a real number in [0, 1)")
        if opt.row_norms is not True and opt.row_norms is not False:
            rn = opt.row_norms
            if not (isinstance(rn, (tuple, list)) and len(rn) == 2):
                raise InvalidParameterError("row_norms", rn, "True, False or a pair (k, s2) with s2 >= 0")
            check_real(rn[0], "row_norms k", None, None)
            check_real(rn[1], "row_norms s2", 0, None)
            opt = dataclasses.replace(opt, row_norms=tuple(rn))
        for k in ("kappa_nodes", "inner_nodes"):
            v = getattr(opt, k)
            if v is not None and not (isinstance(v, int) and 2 <= v <= 4001):
                raise InvalidParameterError(k, v, "an integer in [2, 4001]")
        if not (isinstance(opt.max_iter, int) and 1 <= opt.max_iter <= 10**7):
            raise InvalidParameterError("max_iter", opt.max_iter, "an integer in [1, 10^7]")
        return opt


@dataclasses.dataclass
class SRFSolution(VouchedResult):
    r"""Fixed point of Result 3.3 with the test error (25), error estimates and provenance
    (docs/theory/srf-theory.md §4, docs/theory/numerics.md §5).

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
    extra: dict = dataclasses.field(default_factory=dict)     # general loss (docs/theory/srf-theory.md §4.9)

    def _dps(self):
        return self.dps or 17

    def state(self) -> tuple:
        """The seven order parameters (a warm start); the zero readout's unreported V's as the cold start's 1."""
        return tuple(self.order.get(k, 1.0) for k in ORDER)

    def value(self, key: str):
        """The value of ``key``: ``test_error``, ``D``, an order parameter, a hat, an extra, or ``r``, ``c``, ``gamma``."""
        if key in ("test_error", "D", "r", "c", "gamma"):
            return getattr(self, key)
        for table in (self.order, self.hats, self.extra):
            if key in table:
                return table[key]
        raise KeyError(key)

    def vouched(self, key: str) -> str:
        """The value of ``key`` to the digits vouched for (docs/theory/numerics.md §1)."""
        return vouch(self.value(key), self.errors[key], self.dps)[0]

    def to_dict(self) -> dict:
        # the plain fields (Result's; those printed below omitted, in their places); VouchedResult's layer is skipped:
        # every field and error it prints is printed below, by the same vouch (its output was overwritten whole)
        d = Result.to_dict(self, omit=("order", "hats", "errors", "extra", "abs_error", "digits",
                                       *(k for k in ("test_error", "D", "r", "c", "gamma") if k in self.errors)))
        printed = self.printed()
        for k in ("test_error", "D", "r", "c", "gamma"):
            if k in printed:
                d[k] = printed[k][0]
        d["order"] = {k: printed[k][0] for k in self.order}
        d["hats"] = {k: printed[k][0] for k in self.hats}
        d["extra"] = {k: (printed[k][0] if k in printed else v) for k, v in self.extra.items()}
        d["errors"] = {k: p[1] for k, p in printed.items()}
        d["abs_error"] = printed["test_error"][1]
        d["digits"] = self.printed_digits(d["test_error"])
        return d

    def printed(self, keys=None) -> dict:
        """``{key: (text, error text)}`` as :meth:`to_dict` prints them, for ``keys`` (default: every key of
        ``errors``): :func:`vouch` where ``errors`` has the key, else the serialised value and None (a caller that
        prints a few, such as ``srf-curve``'s rows, without the rest of the dict)."""
        return {k: vouch(self.value(k), self.errors[k], self.dps) if k in self.errors else
                (serialize(self.value(k), self._dps()), None) for k in (self.errors if keys is None else keys)}

    def printed_digits(self, text: str) -> int:
        """The digits vouched for, and at most as many as are printed in ``text`` (the printed test error: a correctly
        rounded printout of D digits has D digits, though its rounding alone may reach half a unit of the D-th)."""
        mant = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
        if mant and len(mant) < int(self.digits) and _exactly(text, self.test_error):
            return int(self.digits)          # the text is the value itself (its zeros dropped): no rounding to count
        return min(int(self.digits), len(mant)) if mant else 0


def _exactly(text: str, value) -> bool:
    """Whether the decimal ``text`` equals ``value`` (a float or mpf) exactly."""
    from fractions import Fraction
    try:
        v = value if isinstance(value, float) else (float(value) if float(value) == value else None)
        return v is not None and math.isfinite(v) and Fraction(text) == Fraction(v)
    except (ValueError, TypeError, OverflowError):
        return False


def combine_errors(coarse: dict, fine: dict, solver: dict, rounding: float) -> dict:
    """Error estimate of every quantity: refinement change + solver step + rounding (docs/theory/numerics.md §5)."""
    return {k: error_of(abs(fine[k] - coarse[k]), solver[k], rounding, fine[k]) for k in fine}


def rounding_floor(unit: float, cond: float, nodes: int, mp: bool, safety: float = ROUNDING_SAFETY) -> float:
    """Relative rounding error of a saddle-point value (docs/theory/numerics.md §5): rounding noise of one
    unit in F is amplified by the condition of the fixed point, ``cond`` = ||(I - J)^-1||, and grows with the
    number of κ-nodes summed, like log2 N for numpy's pairwise sums and like sqrt N for the sequential sums
    over mpf; times a measured ``safety`` factor (:data:`ROUNDING_SAFETY` for the single-group solver)."""
    return unit * safety * cond * (math.sqrt(nodes) if mp else math.log2(nodes))
