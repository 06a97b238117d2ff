"""Bounds and optima (level 3 of the srf rooms): the bounds (26)–(31) on the test error and the best linear readout,
their optima over η̃ (28) and over a first-layer bias by certified argmins (docs/theory/numerics.md §9), the trainable
bias, and [BES+22]'s τ* and κ* (docs/theory/srf-theory.md §6, §4.9, §9).

Imports ``features``, ``loss`` and ``single``. Public names: ``Bounds``, ``BiasBound``, ``bounds``, ``best_linear``,
``best_linear_checked``, ``bias_lower_bound`` (``bounds``, on the rules of ``boundrule``, optimised by
``optimize``); ``TauStar``, ``tau_star`` (``taustar``); ``TrainedBias``, ``trained_bias`` (``bias``).
"""

from .bias import TrainedBias, trained_bias
from .bounds import BiasBound, Bounds, best_linear, best_linear_checked, bias_lower_bound, bounds
from .taustar import TauStar, tau_star

__all__ = ["Bounds", "BiasBound", "bounds", "best_linear", "best_linear_checked", "bias_lower_bound", "TauStar",
           "tau_star", "TrainedBias", "trained_bias"]
