"""The package's bounds on the work one call may ask for, in a module that imports nothing (the command line's
argument checks read them without loading mpmath or the solvers).

``MAX_DPS``: most decimal digits of any mpmath/Arb evaluation (``core.precision``); ``MAX_SRF_DPS``: most digits of
the sRF saddle point (``srf.single.solve``; its Arb rules grow with the digits, docs/theory/numerics.md §5);
``WORK_HEADROOM``: digits an inner evaluation may run above the digits asked at a public boundary (the guard
digits, 10, plus the 10 of the refinement that estimates the error, plus 10 to spare), so that a user's
``dps = MAX_DPS`` is never refused by an inner check naming a ``dps`` the user did not type.
"""

__all__ = ["MAX_DPS", "MAX_SRF_DPS", "WORK_HEADROOM"]

MAX_DPS = 300
MAX_SRF_DPS = 100
WORK_HEADROOM = 30
