"""Bottom layer: errors, exact numbers and validation, the one precision mechanism, safe parsing, results.

Nothing here imports from the rest of the package.
"""

from .errors import (ConvergenceError, ExpressionError, HypothesisError, InvalidParameterError, OnestepError,
                     QuadratureError)
from .exact import check_dps, check_positive, check_range, check_real, float_in, nstr, to_exact, to_float, to_mpf
from .precision import GUARD_DIGITS, MAX_DPS, arb_to_mpf, mpf_to_arb, precision, with_dps, workdps
from .results import Result, digits_of, provenance, serialize, vouched

__all__ = ["ConvergenceError", "ExpressionError", "HypothesisError", "InvalidParameterError", "OnestepError",
           "QuadratureError", "check_dps", "check_positive", "check_range", "check_real", "float_in", "nstr", "to_exact",
           "to_float", "to_mpf", "GUARD_DIGITS", "MAX_DPS", "arb_to_mpf", "mpf_to_arb", "precision", "with_dps",
           "workdps", "Result", "digits_of", "provenance", "serialize", "vouched"]
