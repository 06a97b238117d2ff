"""The single-group saddle point (level 2 of the srf rooms): the map of Result 3.3 — channel (18) for the square and a
general convex loss, mean overlap (20), prior (19) in the Marchenko–Pastur and empirical forms, test error (25) —
its solvers, the refinement that gives every value its error, and warm-started sweeps (docs/theory/srf-theory.md §4,
§5; docs/theory/numerics.md §4–5).

Imports ``features`` and ``loss``. Public names: ``srf_solve`` (``solve``); ``SRFOptions``, ``SRFSolution``
(``solution``); ``HATS``, ``ORDER`` (``saddle``); ``mp_integrals``, ``mp_integrals_quad``,
``empirical_from_weights``, ``from_trained`` (``priors``); ``srf_curve``, ``srf_sweep`` (``sweep``); ``srf_batch``
(``batch``: many float64 points at once).
"""

from .priors import empirical_from_weights, from_trained, mp_integrals, mp_integrals_quad
from .saddle import HATS, ORDER
from .solution import SRFOptions, SRFSolution
from .solve import srf_solve
from .batch import srf_batch
from .sweep import srf_curve, srf_sweep

__all__ = ["SRFOptions", "srf_solve", "SRFSolution", "HATS", "ORDER", "mp_integrals", "mp_integrals_quad",
           "empirical_from_weights", "from_trained", "srf_curve", "srf_sweep", "srf_batch"]
