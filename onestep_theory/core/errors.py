"""Exception hierarchy of onestep_theory.

Every error raised for bad input is an :class:`InvalidParameterError` that names
the offending parameter and the range of valid values, so that the command line
can print it as one line and exit with status 2.
"""

from __future__ import annotations

__all__ = [
    "OnestepError",
    "InvalidParameterError",
    "ExpressionError",
    "HypothesisError",
    "ConvergenceError",
    "QuadratureError",
    "ResourceError",
]


class OnestepError(Exception):
    """Base class of every error raised by onestep_theory."""


class InvalidParameterError(OnestepError, ValueError):
    """A parameter is outside its valid range.

    Parameters
    ----------
    param : str
        Name of the parameter, as spelled in the API and on the command line.
    value : object
        The value that was given.
    allowed : str
        Human readable description of the valid values, e.g. ``"a real number > 0"``.
    detail : str, optional
        Extra explanation appended to the message.
    """

    def __init__(self, param: str, value, allowed: str, detail: str = ""):
        self.param = param
        self.value = value
        self.allowed = allowed
        self.detail = detail
        msg = f"{param}={value!s}: expected {allowed}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)


class ExpressionError(InvalidParameterError):
    """An activation or teacher expression cannot be used.

    Raised for unparsable text, forbidden names, extra free symbols, complex or
    undefined values on the real line, and functions that are not square
    integrable under the standard Gaussian.
    """

    def __init__(self, param: str, value, reason: str,
                 allowed: str = "a real SymPy expression in x, square-integrable under N(0,1)"):
        self.reason = reason
        super().__init__(param, value, allowed, reason)


class HypothesisError(InvalidParameterError):
    """A hypothesis of a theorem is violated (e.g. ``c_1 = 0`` or a non-centred activation)."""


class ConvergenceError(OnestepError, ArithmeticError):
    """A solver did not reach the requested residual.

    Attributes
    ----------
    iterations : int
        Iterations performed.
    residual : float
        Final residual (``inf`` when not available).
    """

    def __init__(self, message: str, iterations: int = 0, residual: float = float("inf")):
        self.iterations = iterations
        self.residual = residual
        super().__init__(f"{message} (iterations={iterations}, residual={residual:.3g})")


class QuadratureError(ConvergenceError):
    """A quadrature did not reach the requested accuracy."""


class ResourceError(OnestepError):
    """Valid work that the machine could not finish: a worker process killed (out of memory) in a study.  The
    command line prints it as one line and exits with status 3, like a numerical failure; what finished is kept."""
