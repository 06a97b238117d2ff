"""Every quantity by name (docs/theory/checking.md): evaluate it, sweep it over a grid, check a printed formula
against it."""

from .check import CheckResult, check
from .registry import QUANTITIES, Quantity, closed_form, evaluate, quantity_of, symbols_of
from .sweep import SweepResult, sweep

__all__ = ["QUANTITIES", "Quantity", "closed_form", "evaluate", "quantity_of", "symbols_of", "CheckResult", "check",
           "SweepResult", "sweep"]
