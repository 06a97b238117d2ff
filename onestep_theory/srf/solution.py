"""Result object of the sRF saddle point (docs/theory/srf-theory.md §4, docs/theory/numerics.md §5)."""

from __future__ import annotations

import dataclasses

from ..core.results import Result, vouched
from .saddle import ORDER

__all__ = ["SRFSolution", "combine_errors"]


@dataclasses.dataclass
class SRFSolution(Result):
    """Fixed point of Result 3.3 with the test error (25), error estimates and provenance
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

    def vouched(self, key: str) -> str:
        """The value of ``key`` (``test_error``, an order parameter or a hat) to the digits vouched for."""
        v = self.test_error if key == "test_error" else (self.order.get(key, self.hats.get(key)))
        if key == "D":
            v = self.D
        return vouched(v, self.errors[key])

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["test_error"] = self.vouched("test_error")
        d["order"] = {k: self.vouched(k) for k in self.order}
        d["hats"] = {k: self.vouched(k) for k in self.hats}
        d["D"] = self.vouched("D")
        d["extra"] = {k: (vouched(v, self.errors[k]) if k in self.errors else v) for k, v in self.extra.items()}
        d["abs_error"] = f"{float(self.abs_error):.2e}"
        d["errors"] = {k: f"{float(e):.2e}" for k, e in self.errors.items()}
        return d


def combine_errors(coarse: dict, fine: dict, solver: dict, rounding: float) -> dict:
    """Error estimate of every quantity: refinement change + solver step + rounding (docs/theory/numerics.md §5)."""
    return {k: float(abs(fine[k] - coarse[k])) + float(solver[k]) + rounding * max(1.0, abs(float(fine[k])))
            for k in fine}
