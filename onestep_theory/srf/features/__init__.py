"""The network → sRF features (level 1 of the srf rooms, bottom): the equivalent parameters (r, c, γ) of Result 3.1 and
the row-norm heterogeneity (docs/theory/srf-theory.md §2, §4.11), the conditional Gaussian equivalence (15) and the
Gaussian smoothing it rests on (§3), the κ-rules with the coefficients and teacher quantities on them (§4.2;
docs/theory/numerics.md §3), and the measured gap between the theory and the network (``network_map``).

Imports nothing else from srf. Public names: ``SRFParams``, ``srf_params``, ``srf_params_checked``, ``resolve_rcg``,
``row_norm_params``, ``NonOddWarning`` (``mapping``); ``network_gap``, ``network_note`` (``network_map``);
``smooth``, ``smooth_arb``, ``smoothing_closed_form`` (``smoothing``); ``CGEValues``, ``cge_values``,
``cge_coeffs``, ``cge_arb``, ``cge_symbolic``, ``cge_curvature`` (``cge``); ``SRFSetup``, ``srf_setup``,
``GroupSetup``, ``group_setup`` (``kappa``).
"""

from .cge import CGEValues, cge_arb, cge_coeffs, cge_curvature, cge_symbolic, cge_values
from .kappa import GroupSetup, SRFSetup, group_setup, srf_setup
from .mapping import NonOddWarning, SRFParams, resolve_rcg, row_norm_params, srf_params, srf_params_checked
from .network_map import network_gap, network_note
from .smoothing import smooth, smooth_arb, smoothing_closed_form

__all__ = ["SRFParams", "srf_params", "srf_params_checked", "resolve_rcg", "row_norm_params", "NonOddWarning",
           "network_gap", "network_note", "smooth", "smooth_arb", "smoothing_closed_form", "CGEValues", "cge_values",
           "cge_coeffs", "cge_arb", "cge_symbolic", "cge_curvature", "SRFSetup", "srf_setup", "GroupSetup",
           "group_setup"]
