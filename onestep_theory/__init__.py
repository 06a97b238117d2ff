"""onestep_theory: asymptotic theory of two-layer networks after one gradient step.

Subpackages, bottom to top (imports go one way):

``core``       errors, exact numbers and validation, the precision mechanism, safe parsing, results
``hermite``    expressions in x, Gaussian integrals, quadrature rules, Hermite polynomials, activations
``spikes``     spike theory [MLHD23]: resolvent, windows, symbolic Ω⁻¹/r_p, gains Δ_ℓ, Λ_ℓ
``srf``        spiked random features [CPDKLZL24]: mapping, cGE, saddle point, bounds, spectrum
``simulate``   finite-size numpy simulation of every theory quantity (beside the theories)
``reproduce``  the main job: theory against simulation, report and plots
``cli``        the command line ``onestep-theory``

The theory the package implements is written up in ``docs/theory/`` of the repository; docstrings cite
its sections (``docs/theory/srf-theory.md §4.6``) together with the papers' equation numbers.
"""

__version__ = "0.2.0"

from .core.errors import (  # noqa: E402  (the exceptions are light: always loaded)
    ConvergenceError,
    ExpressionError,
    HypothesisError,
    InvalidParameterError,
    OnestepError,
    QuadratureError,
    ResourceError,
)
from .core.lazy import lazy_exports  # noqa: E402

#: Public name -> the subpackage that holds it; imported on first use (``core.lazy``: a bare
#: ``import onestep_theory`` loads no SymPy, SciPy or solver).
_LAZY = {
    **dict.fromkeys(("precision", "workdps"), ".core.precision"),
    **dict.fromkeys(("Activation", "he_coeffs", "he_eval", "he_expect", "he_from_monomial", "he_poly",
                     "he_to_monomial", "he_values", "he_xi", "he_xi_row", "he_xi_table"), ".hermite"),
    **dict.fromkeys(("delta_symbolic", "gains", "resolvent", "resolvent_sweep", "window"), ".spikes"),
    **dict.fromkeys(("SRFOptions", "best_linear", "bounds", "cge_values", "spectrum", "group_bounds", "readout",
                     "srf_curve", "srf_groups", "srf_params", "srf_solve", "srf_sweep"), ".srf"),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "__version__",
    "Activation",
    "ConvergenceError",
    "ExpressionError",
    "HypothesisError",
    "InvalidParameterError",
    "OnestepError",
    "QuadratureError",
    "ResourceError",
    "precision",
    "workdps",
    "he_coeffs",
    "he_eval",
    "he_expect",
    "he_from_monomial",
    "he_poly",
    "he_to_monomial",
    "he_values",
    "he_xi",
    "he_xi_row",
    "he_xi_table",
    "delta_symbolic",
    "gains",
    "resolvent",
    "resolvent_sweep",
    "window",
    "SRFOptions",
    "group_bounds",
    "readout",
    "srf_groups",
    "best_linear",
    "bounds",
    "cge_values",
    "spectrum",
    "srf_curve",
    "srf_params",
    "srf_solve",
    "srf_sweep",
]
