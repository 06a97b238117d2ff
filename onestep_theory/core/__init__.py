"""Bottom layer: errors, exact numbers and validation, the one precision mechanism, safe parsing, results.

Nothing here imports from the rest of the package.  Only the exceptions load with the package; every other
name is imported on first use (``core.lazy``).  ``onestep_theory.core.precision`` is the module; its context
manager is ``onestep_theory.core.precision.precision`` (also ``onestep_theory.precision``).
"""

from .errors import (ConvergenceError, ExpressionError, HypothesisError, InvalidParameterError, OnestepError,
                     QuadratureError, ResourceError)
from .lazy import lazy_exports

_LAZY = {
    **dict.fromkeys(("check_dps", "check_positive", "check_range", "check_real", "float_in", "nstr", "to_exact",
                     "to_float", "to_mpf"), ".exact"),
    **dict.fromkeys(("GUARD_DIGITS", "arb_to_mpf", "mpf_to_arb", "with_dps", "workdps", "refined", "working_digits",
                     "asked_digits"), ".precision"),
    "MAX_DPS": ".limits",
    **dict.fromkeys(("Result", "digits_of", "provenance", "serialize", "vouched"), ".results"),
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = ["ConvergenceError", "ExpressionError", "HypothesisError", "InvalidParameterError", "OnestepError",
           "QuadratureError", "ResourceError", "check_dps", "check_positive", "check_range", "check_real", "float_in",
           "nstr", "to_exact", "to_float", "to_mpf", "GUARD_DIGITS", "MAX_DPS", "arb_to_mpf", "mpf_to_arb", "with_dps",
           "workdps", "refined", "working_digits", "asked_digits", "Result", "digits_of", "provenance", "serialize", "vouched"]
