"""Readouts and the K-group theory (level 4 of the srf rooms, top): the law of the initial readout, the K-group saddle
point with the asymptotic prior (default) or the finite-W prior on sampled bulks, its bounds, mean spikes and the
D.3 special case, and its bulk spectrum (docs/theory/srf-theory.md §8, §8.1).

Imports ``features``, ``single``, ``spectral`` and ``optimal``. Public names: ``Readout``, ``readout``,
``group_params``, ``group_index`` (``readout``); ``GroupSolution``, ``srf_groups`` (``groups``, on
``kgroup``/``groupprior`` and ``finitew``, sharing ``groupchannel``); ``GroupBounds``, ``group_bounds``,
``group_mean_spikes``, ``d3_special_case`` (``groupbounds``); ``GroupSpectrum``, ``group_spectrum``
(``groupspectrum``).
"""

from .groupbounds import GroupBounds, d3_special_case, group_bounds, group_mean_spikes
from .groups import GroupSolution, srf_groups
from .groupspectrum import GroupSpectrum, group_spectrum
from .readout import Readout, group_index, group_params, readout

__all__ = ["Readout", "readout", "group_params", "group_index", "GroupSolution", "srf_groups", "GroupBounds",
           "group_bounds", "group_mean_spikes", "d3_special_case", "GroupSpectrum", "group_spectrum"]
