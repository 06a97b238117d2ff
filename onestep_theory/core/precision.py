"""The one precision mechanism of the package: mpmath and Arb (python-flint) together.

The model is mpmath's (``_wrap_specfun``): a public function takes ``dps``, the digits the user asks for,
and sets the working precision **once** at its boundary, with :func:`precision` (a context manager) or
the decorator :func:`with_dps`: ``dps + GUARD_DIGITS`` digits in mpmath *and* in python-flint's Arb
context, both restored on exit, so no global precision ever leaks.  Everything below the boundary takes
no precision argument: it computes at the ambient precision (:func:`working_digits`), and reads the digits
asked with :func:`asked_digits`.  An inner routine that needs more raises the precision locally with
:func:`refined`, which names its reason: the second evaluation that estimates an error (``REFINE_DIGITS``
more digits), a cancellation, a root finder's extra precision.  ``GUARD_DIGITS`` is used here only.  A tolerance
or a digit count that is not a precision is :func:`tolerance` (``10^-(D + k)``), :func:`ulps` (``10^-(W - k)``) or
:func:`past_asked` (``D + k``), each with the reason for ``k``: no ``dps ± k`` arithmetic is written elsewhere.

The split between the two libraries (docs/theory/numerics.md §2): Arb evaluates the integrands of
Gaussian expectations (elementary functions on ball arithmetic, about 5x faster than mpmath per
call) and gives Gauss–Legendre nodes at any precision; mpmath runs the solvers (Newton, root
finding), whose inputs are converted once with :func:`arb_to_mpf`.  ``gmpy2``, when installed, is
picked up by mpmath as its integer backend.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import numbers

import flint
import mpmath

from .errors import ConvergenceError, InvalidParameterError
from .limits import MAX_DPS, WORK_HEADROOM

#: Guard digits added to every evaluation of a result of ``dps`` digits (docs/theory/hermite.md §5.1: at least 10).
GUARD_DIGITS = 10
#: Digits the error-estimating second evaluation runs above the first (docs/theory/numerics.md §1): the
#: change between the two bounds the first one's error when the second is this much more accurate.
REFINE_DIGITS = 10

__all__ = ["GUARD_DIGITS", "REFINE_DIGITS", "workdps", "precision", "with_dps", "refined", "boundary_digits", "working_digits",
           "asked_digits", "past_asked", "tolerance", "ulps", "arb_to_mpf", "mpf_to_arb", "signed_man_exp"]



@contextlib.contextmanager
def workdps(digits: int):
    """Work with ``digits`` decimal digits in mpmath and Arb; both are restored on exit.

    >>> with workdps(40):
    ...     mpmath.mp.dps, flint.ctx.dps
    (40, 40)
    >>> mpmath.mp.dps
    15
    """
    digits = int(digits)
    with mpmath.workdps(digits), flint.ctx.workdps(digits):
        yield


def _asked(dps) -> int:
    """``dps`` as the digits asked at a boundary: an integer in [1, MAX_DPS + WORK_HEADROOM] (an inner
    boundary, e.g. a refinement's second evaluation, may ask above ``MAX_DPS``), else a clear error."""
    if isinstance(dps, bool) or not isinstance(dps, numbers.Real) or dps != int(dps) \
            or not 1 <= int(dps) <= MAX_DPS + WORK_HEADROOM:
        raise InvalidParameterError("dps", dps, f"an integer in [1, {MAX_DPS + WORK_HEADROOM}]")
    return int(dps)


def precision(dps: int):
    """The boundary: :func:`workdps` with ``dps + GUARD_DIGITS`` digits, the context for a result of ``dps``
    digits (``dps`` validated here; the guard digits are added here and nowhere else).

    >>> with precision(30):
    ...     working_digits(), asked_digits()
    (40, 30)
    >>> precision(0)
    Traceback (most recent call last):
    ...
    onestep_theory.core.errors.InvalidParameterError: dps=0: expected an integer in [1, 330]
    """
    return workdps(boundary_digits(dps))


def boundary_digits(dps: int) -> int:
    """The working digits of a boundary that asks for ``dps`` digits: ``dps + GUARD_DIGITS`` (``dps`` checked)."""
    return _asked(dps) + GUARD_DIGITS


def with_dps(fn):
    """Decorator form of :func:`precision`: ``fn(..., dps=D)`` (keyword or positional) runs at ``D`` + guard
    digits; a call without ``dps`` (or with ``dps=None``) runs at the caller's precision.

    >>> @with_dps
    ... def probe(x, dps=None):
    ...     return working_digits()
    >>> probe(1, 20), probe(1, dps=20), probe(1) == mpmath.mp.dps
    (30, 30, True)
    """
    sig = inspect.signature(fn)
    if "dps" not in sig.parameters:
        raise TypeError(f"with_dps: {fn.__qualname__} has no 'dps' parameter")

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        dps = sig.bind_partial(*args, **kw).arguments.get("dps")
        if dps is None:
            return fn(*args, **kw)
        with precision(dps):
            return fn(*args, **kw)

    return wrapper


def working_digits() -> int:
    """The ambient working precision in decimal digits (mpmath's, which :func:`workdps` keeps Arb's equal to)."""
    return mpmath.mp.dps


def asked_digits() -> int:
    """The digits asked at the enclosing boundary: the working digits less the guard digits (at least 1).

    Below a boundary this is the ``dps`` of the tolerances (a quadrature converged to ``10**-(D+4)``, a
    rounding term ``10**-(D+GUARD_DIGITS-2)`` written as ``10**-(working_digits() - 2)``)."""
    return max(1, mpmath.mp.dps - GUARD_DIGITS)


@contextlib.contextmanager
def refined(extra: int = REFINE_DIGITS, *, why: str):
    """Raise the working precision of mpmath and Arb by ``extra`` digits, locally, for the reason ``why``.

    The default is the error estimate's second evaluation (:data:`REFINE_DIGITS` more digits: the values
    computed inside are the reference the first evaluation is compared with).  ``why`` is required, so
    that every local increase of precision says at the call what it is for.

    >>> with precision(15), refined(why="error estimate"):
    ...     working_digits(), asked_digits()
    (35, 25)
    """
    if not why:
        raise ValueError("refined: give the reason (why=...)")
    with workdps(mpmath.mp.dps + int(extra)):
        yield


def past_asked(k: int, *, why: str) -> int:
    """``D + k``, ``D`` = :func:`asked_digits`: a digit count ``k`` past the digits asked (``k`` < 0: before them)
    that is not a working precision -- a quadrature rule's accuracy, a resource bound -- with ``why`` deriving ``k``.

    >>> with precision(30):
    ...     past_asked(2, why="the rule's accuracy: its discretisation 2 digits below the last one asked")
    32
    """
    if not why:
        raise ValueError("past_asked: say where k comes from (why=...)")
    return asked_digits() + int(k)


def tolerance(k: int = 0, kind=mpmath.mpf, *, why: str):
    """``10^-(D + k)`` as a ``kind`` (``mpmath.mpf``, ``float``, ``flint.arb``), ``D`` = :func:`asked_digits`: a
    convergence tolerance ``k`` digits past those asked (``k`` < 0: a margin before them), ``why`` deriving ``k``.

    >>> with precision(15):
    ...     tolerance(4, float, why="c_>1 cancels: 4 digits") == 10.0 ** -19
    True
    """
    if not why:
        raise ValueError("tolerance: say where k comes from (why=...)")
    return kind(10) ** -past_asked(k, why=why)


def ulps(k: int = 0, kind=mpmath.mpf, *, why: str):
    """``10^-(W - k)`` as a ``kind`` (``mpmath.mpf``, ``float``, ``flint.arb``), ``W`` = :func:`working_digits`:
    ``10^k`` units of the last working digit -- a rounding floor, a Newton stop above the round-off -- ``why``
    deriving ``k``.

    >>> with precision(15):
    ...     ulps(3, why="Newton: 1000 ulps") == mpmath.mpf(10) ** -22
    True
    """
    if not why:
        raise ValueError("ulps: say where k comes from (why=...)")
    return kind(10) ** -(working_digits() - int(k))


def arb_to_mpf(v) -> mpmath.mpf:
    """Midpoint of an Arb ball (or a flint number) as an ``mpf``, rounded to the current mpmath precision
    (exact inside :func:`workdps`, which sets mpmath and Arb to the same precision)."""
    man, exp = v.mid().man_exp()
    return mpmath.mpf((int(man), int(exp)))


def mpf_to_arb(v) -> flint.arb:
    """An ``mpf`` (or int/float) as an exact Arb number."""
    if isinstance(v, flint.arb):
        return v
    if not isinstance(v, mpmath.mpf):
        v = mpmath.mpf(v)                  # int/float: exact at any precision >= 53 bits
    if v == 0:
        return flint.arb(0)
    man, exp = signed_man_exp(v)
    return flint.arb((flint.fmpz(man), flint.fmpz(exp)))


def signed_man_exp(v) -> tuple:
    """``(man, exp)`` with ``v = man * 2**exp`` exactly, sign included (``mpf.man_exp`` drops the sign)."""
    # an mpf is read as it is: mpmath.mpf(v) would round it to the ambient precision (53 bits outside a
    # precision context, the bug class of issue 21)
    sign, man, exp, _ = (v if isinstance(v, mpmath.mpf) else mpmath.mpf(v))._mpf_
    return (-int(man) if sign else int(man)), int(exp)


# ---- refinement to a target (issue 34 item 4): the one loop "compute on rule level L = 0, 1, ...; stop when the
# change meets the target" (docs/theory/numerics.md §1, §5), in the manner of mpmath's
# QuadratureRule.summation / estimate_error.  A value on level L carries the error
#     |v_L - v_{L-1}| + (the solver's last correction) + u max(1, |v_L|)            (error_of)
# and the loop (refine) stops at the first level whose errors meet their Targets, after MAX_LEVEL refinements, or
# at the rules' node limit.  Users: srf.single.solve, srf.grouped.kgroup, srf.optimal.boundrule.

__all__ += ["EPS64", "MAX_LEVEL", "Target", "Refined", "error_of", "refine"]

#: Spacing of float64 at 1 (``numpy.finfo(float).eps``): the rounding unit of the float64 paths.
EPS64 = 2.0 ** -52
#: Refinements of a rule tried before giving up (``MAX_LEVEL + 1`` levels computed at most; the node count grows
#: by ``hermite.quadrature.GROWTH`` per level).
MAX_LEVEL = 4


@dataclasses.dataclass(frozen=True)
class Target:
    r"""The error wanted of one value: ``rel`` relative and ``abs`` absolute,
    :math:`\epsilon\le\mathrm{rel}\,|v|+\mathrm{abs}` (either may be 0; ``abs`` e.g. a rounding floor the change
    cannot go below); with ``scale`` a value that is 0 within its error meets ``rel`` absolutely, of that scale
    (:math:`|v|+\epsilon\le\mathrm{rel}\cdot\mathrm{scale}`: docs/theory/numerics.md §9, the bounds).

    >>> Target.of(None).met(0.5, 4e-11), Target.of(30).met(0.5, 4e-11)
    (True, False)
    >>> Target(1e-10, scale=0.5).met(1e-13, 1e-12)          # a zero value, absolute of the scale
    True
    """

    rel: float = 0.0
    abs: float = 0.0
    scale: float | None = None

    @classmethod
    def of(cls, dps=None, tol: float = 1e-10, scale=None) -> "Target":
        """The relative target of a result of ``dps`` digits (:math:`10^{-\\mathrm{dps}}`), or ``tol`` in float64."""
        return cls(rel=tol if dps is None else 10.0 ** -dps, scale=None if scale is None else float(scale))

    def met(self, value, err) -> bool:
        v, e = abs(float(value)), float(err)
        if e <= self.rel * v + self.abs:
            return True
        return self.scale is not None and v + e <= self.rel * self.scale


def error_of(change, solver=0.0, rounding: float = 0.0, value=1.0) -> float:
    r"""The error of a refined value (module docstring): ``change`` :math:`|v_L-v_{L-1}|`, the ``solver``'s last
    correction (absolute), and the relative ``rounding`` term scaled by :math:`\max(1,|v_L|)`.

    >>> error_of(2.0 ** -20, 2.0 ** -30, 2.0 ** -50, 4.0) == 2.0 ** -20 + 2.0 ** -30 + 2.0 ** -48
    True
    """
    return float(change) + float(solver) + rounding * max(1.0, abs(float(value)))


@dataclasses.dataclass
class Refined:
    """What :func:`refine` computed: ``levels`` (the step's results, coarsest first: ``levels[-1]`` is the value
    reported, ``levels[-2]`` the one it was compared with), ``estimate`` (the estimate's first element for that
    pair) and ``met`` (every target met)."""

    levels: list
    estimate: object
    met: bool

    @property
    def last(self):
        return self.levels[-1]


def refine(step, estimate, *, start: int = 0, max_level: int = MAX_LEVEL, what: str = "refinement",
           progress=None, first: int = 2) -> Refined:
    """Compute ``step(level, previous)`` for level = ``start``, ``start`` + 1, … (``previous``: the step's result
    on the level before, None at first: a warm start) until the targets are met.

    ``estimate(coarse, fine) -> (errors, checks)``: the errors of ``fine`` (anything the caller reports) and
    ``checks``, an iterable of ``(value, error, Target)``; the loop stops when every check is met, after
    ``max_level`` refinements (``max_level`` + 1 levels), or when ``step`` raises InvalidParameterError naming
    ``quadrature`` (the rule's node limit: the levels so far are kept; with fewer than two there is no error
    estimate, and ConvergenceError says so).  ``progress(i, n)`` is called after each level.  ``first``: the levels
    before the first estimate (1 for a step that measures its own error against the next rule level, e.g. τ* of
    srf.optimal.taustar: then ``coarse`` is None on the first level).

    >>> out = refine(lambda L, prev: sum(2.0 ** -k for k in range(4 * L + 8)),
    ...              lambda a, b: ((e := error_of(abs(b - a))), [(b, e, Target(1e-6))]))
    >>> len(out.levels), out.met, abs(out.last - 2) <= out.estimate
    (5, True, True)
    """
    levels, errors, met = [], None, False
    n = max(1, int(max_level)) + 1
    for level in range(start, start + n):
        try:
            res = step(level, levels[-1] if levels else None)
        except InvalidParameterError as exc:
            if exc.param != "quadrature":
                raise
            if len(levels) < first:
                raise ConvergenceError(f"{what}: no error estimate possible ({exc})", len(levels)) from None
            break                                # node limit reached: report what we have
        levels.append(res)
        if progress is not None:
            progress(level - start + 1, n)
        if len(levels) >= first:
            errors, checks = estimate(levels[-2] if len(levels) >= 2 else None, levels[-1])
            if all(t.met(v, e) for v, e, t in checks):
                met = True
                break
    return Refined(levels, errors, met)
