"""onestep_theory: asymptotic theory of two-layer networks after one gradient step.

Layers, bottom to top: ``errors``/``exact`` → ``expressions`` → ``gauss`` → ``hermite``
→ theory modules → ``simulate`` → ``cli``.
"""

__version__ = "0.1.0"

from .errors import (  # noqa: E402
    ConvergenceError,
    ExpressionError,
    HypothesisError,
    InvalidParameterError,
    OnestepError,
    QuadratureError,
)
from .hermite import (  # noqa: E402
    Activation,
    he_coeffs,
    he_eval,
    he_expect,
    he_from_monomial,
    he_poly,
    he_to_monomial,
    he_xi,
    he_xi_row,
    he_xi_table,
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
    "he_coeffs",
    "he_eval",
    "he_expect",
    "he_from_monomial",
    "he_poly",
    "he_to_monomial",
    "he_xi",
    "he_xi_row",
    "he_xi_table",
]
