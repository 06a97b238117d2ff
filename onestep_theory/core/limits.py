"""The package's bounds on the work one call may ask for, in a module that imports nothing (the command line's
argument checks read them without loading mpmath or the solvers).

``MAX_DPS``: most decimal digits of any mpmath/Arb evaluation (``core.precision``); ``MAX_SRF_DPS``: most digits of
the sRF saddle point (``srf.solve``; its Arb rules grow with the digits, docs/theory/numerics.md §5).
"""

__all__ = ["MAX_DPS", "MAX_SRF_DPS"]

MAX_DPS = 300
MAX_SRF_DPS = 100
