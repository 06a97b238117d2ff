"""The spectrum of the learned-feature covariance (level 2 of the srf rooms, beside ``single``): the Stieltjes
transform and density of the bulk off and on the real axis, the edges of its support and the mean spike
(docs/theory/srf-theory.md §7, §7.1).

Imports ``features``. Public names: ``Spectrum``, ``spectrum``, ``stieltjes``, ``stieltjes_checked``, ``density``,
``mean_spike`` (``spectrum``); ``density_real`` (``realdensity``, its solvers in ``realaxis``); the x of a density
table as printed and read, ``x_text``, ``read_x`` (``grid``, also used by the K-group spectrum).
"""

from .realdensity import density_real
from .spectrum import Spectrum, density, mean_spike, spectrum, stieltjes, stieltjes_checked

__all__ = ["Spectrum", "spectrum", "stieltjes", "stieltjes_checked", "density", "density_real", "mean_spike"]
