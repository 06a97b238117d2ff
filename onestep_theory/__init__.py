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

from .core.errors import (  # noqa: E402
    ConvergenceError,
    ExpressionError,
    HypothesisError,
    InvalidParameterError,
    OnestepError,
    QuadratureError,
)
from .core.precision import precision, workdps  # noqa: E402
from .hermite import (  # noqa: E402
    Activation,
    he_coeffs,
    he_eval,
    he_expect,
    he_from_monomial,
    he_poly,
    he_to_monomial,
    he_values,
    he_xi,
    he_xi_row,
    he_xi_table,
)
from .spikes import delta_symbolic, gains, resolvent, resolvent_sweep, window  # noqa: E402
from .srf import (  # noqa: E402
    SRFOptions,
    best_linear,
    bounds,
    cge_values,
    spectrum,
    group_bounds,
    readout,
    srf_curve,
    srf_groups,
    srf_params,
    srf_solve,
    srf_sweep,
)

__all__ = [
    "__version__",
    "Activation",
    "ConvergenceError",
    "ExpressionError",
    "HypothesisError",
    "InvalidParameterError",
    "OnestepError",
    "QuadratureError",
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
