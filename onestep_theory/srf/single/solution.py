"""Result object of the sRF saddle point (docs/theory/srf-theory.md §4, docs/theory/numerics.md §5)."""

from __future__ import annotations

import dataclasses
import math

from ...core.results import VouchedResult, vouch
from .saddle import ORDER

__all__ = ["SRFSolution", "combine_errors", "rounding_floor", "ROUNDING_SAFETY"]

#: Safety factor of :func:`rounding_floor` for the single-group solver (docs/theory/numerics.md §5): at 2, the
#: accuracy matrix fails by 1.24x on V1 at one point (the Marchenko-Pastur closed form cancels digits).
ROUNDING_SAFETY = 10.0


@dataclasses.dataclass
class SRFSolution(VouchedResult):
    r"""Fixed point of Result 3.3 with the test error (25), error estimates and provenance
    (docs/theory/srf-theory.md §4, docs/theory/numerics.md §5).

    ``abs_error`` estimates :math:`|\varepsilon_g-\varepsilon_g^{\rm exact}|` (the change under a refined
    discretisation, plus the last Newton correction, plus rounding); ``digits`` is the number of
    significant digits of ``test_error`` it vouches for.  ``errors`` holds the same estimate for
    every order parameter and conjugate.  :meth:`to_dict` prints each number to its own digits.
    """

    test_error: object
    abs_error: float
    digits: int
    order: dict
    hats: dict
    errors: dict
    D: object
    r: object
    c: object
    gamma: object
    alpha: object
    beta: object
    lam: object
    noise_var: object
    iterations: int
    newton_steps: int
    residual: object
    status: str
    options: dict
    dps: int | None
    provenance: dict
    extra: dict = dataclasses.field(default_factory=dict)     # general loss (docs/theory/srf-theory.md §4.9)

    def _dps(self):
        return self.dps or 17

    def state(self) -> tuple:
        return tuple(self.order[k] for k in ORDER)

    def value(self, key: str):
        """The value of ``key``: ``test_error``, ``D``, an order parameter, a hat, an extra, or ``r``, ``c``, ``gamma``."""
        if key in ("test_error", "D", "r", "c", "gamma"):
            return getattr(self, key)
        for table in (self.order, self.hats, self.extra):
            if key in table:
                return table[key]
        raise KeyError(key)

    def vouched(self, key: str) -> str:
        """The value of ``key`` to the digits vouched for (docs/theory/numerics.md §1)."""
        return vouch(self.value(key), self.errors[key], self.dps)[0]

    def to_dict(self) -> dict:
        d = super().to_dict()
        printed = {k: vouch(self.value(k), e, self.dps) for k, e in self.errors.items()}
        for k in ("test_error", "D", "r", "c", "gamma"):
            if k in printed:
                d[k] = printed[k][0]
        d["order"] = {k: printed[k][0] for k in self.order}
        d["hats"] = {k: printed[k][0] for k in self.hats}
        d["extra"] = {k: (printed[k][0] if k in printed else v) for k, v in self.extra.items()}
        d["errors"] = {k: p[1] for k, p in printed.items()}
        d["abs_error"] = printed["test_error"][1]
        # the digits vouched for, and at most as many as are printed (a correctly rounded printout of D digits
        # has D digits, though its rounding alone may reach half a unit of the D-th)
        mant = d["test_error"].lstrip("-").split("e")[0].replace(".", "").lstrip("0")
        d["digits"] = min(int(self.digits), len(mant)) if mant else 0
        return d


def combine_errors(coarse: dict, fine: dict, solver: dict, rounding: float) -> dict:
    """Error estimate of every quantity: refinement change + solver step + rounding (docs/theory/numerics.md §5)."""
    return {k: float(abs(fine[k] - coarse[k])) + float(solver[k]) + rounding * max(1.0, abs(float(fine[k])))
            for k in fine}


def rounding_floor(unit: float, cond: float, nodes: int, mp: bool, safety: float = ROUNDING_SAFETY) -> float:
    """Relative rounding error of a saddle-point value (docs/theory/numerics.md §5): rounding noise of one
    unit in F is amplified by the condition of the fixed point, ``cond`` = ||(I - J)^-1||, and grows with the
    number of κ-nodes summed, like log2 N for numpy's pairwise sums and like sqrt N for the sequential sums
    over mpf; times a measured ``safety`` factor (:data:`ROUNDING_SAFETY` for the single-group solver)."""
    return unit * safety * cond * (math.sqrt(nodes) if mp else math.log2(nodes))
