"""Spike theory of one gradient step [MLHD23] (docs/theory/spike-theory.md): the resolvent traces m1, m2,
α-windows, symbolic Ω⁻¹ and r_p, and the gains Δ_ℓ, Λ_ℓ."""

from .gains import Gains, SlideFormWarning, UnvalidatedWarning, delta_matrix, gains, lambda_matrix
from .lambda_symbolic import DM1, DM2, lambda_closed_forms, lambda_latex, lambda_symbolic
from .resolvent import Resolvent, resolvent, resolvent_from_constants, resolvent_sweep
from .symbolic import (B, CSTAR2, LAM, M1, M2, MAX_ELL, PHI, PSI, RHO, S2, cstar_symbols, delta_printed, delta_symbolic,
                       latex, omega_inv_symbolic, r_symbolic)
from .windows import Window, window, window_bounds

__all__ = ["Gains", "SlideFormWarning", "UnvalidatedWarning", "delta_matrix", "gains", "lambda_matrix", "Resolvent",
           "resolvent", "resolvent_from_constants", "resolvent_sweep", "B", "CSTAR2", "LAM", "M1", "M2", "MAX_ELL",
           "PHI", "PSI", "RHO", "S2", "cstar_symbols", "delta_printed", "delta_symbolic", "latex",
           "omega_inv_symbolic", "r_symbolic", "Window", "window", "window_bounds", "DM1", "DM2", "lambda_closed_forms",
           "lambda_latex", "lambda_symbolic"]
