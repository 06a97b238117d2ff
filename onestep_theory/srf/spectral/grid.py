r"""The x grid of a density (docs/theory/srf-theory.md §7.1, §8.1): each point is the text printed for it, read
exactly.

A density printed beside ``x = 0.0860714`` must be the density *at* 0.0860714 (within its printed error), not at a
point beside it: near a square-root edge :math:`\rho'(x)` is unbounded, so a printed x rounded to 6 digits (or a
30-digit density computed at a binary float printed short) can put the printed pair outside its own error.  One
rule for every density table (single group, K groups; text, JSON, CSV): :func:`x_text` gives the text printed,
:func:`read_x` the exact number that text is and the float64 point nearest it, with their gap (the float64 solvers
compute at the float; the gap is part of the error they report).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from ...core.exact import to_exact

__all__ = ["x_text", "read_x", "grid_texts"]


def x_text(v) -> str:
    """The text printed for the grid point ``v``: a float's shortest repr (the decimal that reads back as that float:
    a default grid's point); an exact number (a typed text, a SymPy number) as the shortest decimal equal to it --
    the repr of its float when that reads back *exactly* as the number -- else its exact text as typed.

    >>> x_text(0.25), x_text("1.50"), x_text("1/3"), x_text("4.18544380446248026"), x_text(sp.Rational(3, 8))
    ('0.25', '1.5', '1/3', '4.18544380446248026', '0.375')
    """
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    x = to_exact(v, "z")
    f = float(x)
    if x.is_Rational and Fraction(repr(f)) == Fraction(int(x.p), int(x.q)):
        return repr(f)
    return " ".join(v.split()) if isinstance(v, str) else str(x)


def read_x(text) -> tuple:
    r"""``(exact, float, gap)`` of a printed grid point (:func:`x_text`): the exact number the text is (SymPy), the
    float64 nearest it, and an upper bound on :math:`|x_{\rm exact}-x_{\rm float}|` (0 when the float is the number).

    >>> read_x("0.5")[2], read_x("0.1")[2] <= 2.0 ** -57
    (0.0, True)
    """
    x = to_exact(text, "z")
    f = float(x)
    if x.is_Rational:
        gap = abs(Fraction(int(x.p), int(x.q)) - Fraction(f))
        return x, f, float(gap) * (1 + 2.0 ** -50) if gap else 0.0
    return x, f, float(abs(sp.N(x - sp.Rational(*f.as_integer_ratio()), 20))) * (1 + 1e-10) + 1e-300


def grid_texts(xs) -> list:
    """:func:`x_text` of every point of ``xs`` (a list or array of typed texts, exact numbers or floats)."""
    return [x_text(v) for v in np.ravel(np.asarray(xs, dtype=object))]
