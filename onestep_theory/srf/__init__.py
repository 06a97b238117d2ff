"""Spiked random-features theory [CPDKLZL24, DPCKLL24, BES+22] (docs/theory/srf-theory.md): the network → sRF
mapping, conditional Gaussian equivalence, the saddle point and test error, bounds and the feature spectrum."""

from .bounds import Bounds, best_linear, bounds
from .groupbounds import GroupBounds, d3_special_case, group_bounds, group_mean_spikes
from .groups import GroupSolution, srf_groups
from .readout import Readout, group_params, readout
from .cge import CGEValues, cge_arb, cge_coeffs, cge_symbolic, cge_values
from .kappa import SRFSetup, srf_setup
from .mapping import NonOddWarning, SRFParams, resolve_rcg, srf_params, srf_params_checked
from .priors import empirical_from_weights, from_trained, mp_integrals, mp_integrals_quad
from .saddle import HATS, ORDER
from .smoothing import smooth, smooth_arb, smoothing_closed_form
from .solution import SRFSolution
from .solve import SRFOptions, srf_solve
from .spectrum import Spectrum, density, mean_spike, spectrum, stieltjes
from .sweep import srf_curve, srf_sweep

__all__ = ["GroupBounds", "d3_special_case", "group_bounds", "group_mean_spikes", "GroupSolution", "srf_groups",
           "Readout", "group_params", "readout", "Bounds", "best_linear", "bounds", "CGEValues", "cge_arb", "cge_coeffs", "cge_symbolic", "cge_values",
           "SRFSetup", "srf_setup", "NonOddWarning", "SRFParams", "resolve_rcg", "srf_params", "srf_params_checked",
           "empirical_from_weights", "from_trained", "mp_integrals", "mp_integrals_quad", "HATS", "ORDER", "smooth",
           "smooth_arb", "smoothing_closed_form", "SRFSolution", "SRFOptions", "srf_solve", "Spectrum", "density",
           "mean_spike", "spectrum", "stieltjes", "srf_curve", "srf_sweep"]
