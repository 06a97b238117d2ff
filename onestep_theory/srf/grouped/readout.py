r"""Initial second layer :math:`a^0=u/\sqrt p` of the one-giant-step network (docs/theory/srf-theory.md §8).

A :class:`Readout` is the law of the entries :math:`u_i`: uniform (:math:`u\equiv1`, the setting of
Result 3.1), a finite support :math:`\{\varsigma_1,\dots,\varsigma_K\}` with fractions
:math:`\pi_1,\dots,\pi_K` (K groups), or standard Gaussian ([BES+22]'s large-learning-rate setting, §9).
Values and fractions are exact SymPy numbers; the fractions must sum to 1 exactly.

Spec strings (API and CLI alike): ``"uniform"``, ``"gaussian"``, or ``"value:fraction,…"`` such as
``"1:0.5,2:0.5"`` or ``"1:1/3,-1:2/3"``.

References
----------
[DPCKLL24] arXiv:2410.18938; [CPDKLZL24] arXiv:2402.04980, Sec. 4.4 and App. D; docs/theory/srf-theory.md §8.
"""

from __future__ import annotations

import dataclasses

import mpmath
import numpy as np
import sympy as sp

from ...core.errors import InvalidParameterError
from ...core.exact import to_exact, to_mpf

__all__ = ["Readout", "readout", "group_params", "group_index", "MAX_GROUPS"]

#: Largest number of groups of a finite-support readout (the K-group saddle point costs O(K^2) per step).
MAX_GROUPS = 12
#: Largest |u| of a readout value.
MAX_VALUE = 100
_SPEC = "'uniform', 'gaussian', or 'value:fraction,...' (e.g. '1:0.5,2:0.5') with fractions > 0 summing to 1"


@dataclasses.dataclass(frozen=True)
class Readout:
    """Law of :math:`u_i` in :math:`a^0=u/\\sqrt p` (docs/theory/srf-theory.md §8)."""

    kind: str                       # "uniform", "finite" or "gaussian"
    values: tuple = (sp.Integer(1),)
    fractions: tuple = (sp.Integer(1),)

    @property
    def K(self) -> int:
        """Number of groups (0 for a Gaussian readout)."""
        return 0 if self.kind == "gaussian" else len(self.values)

    @property
    def is_uniform(self) -> bool:
        return self.kind == "uniform" or (self.kind == "finite" and self.values == (sp.Integer(1),))

    @property
    def label(self) -> str:
        if self.kind != "finite":
            return self.kind
        return ",".join(f"{v}:{f}" for v, f in zip(self.values, self.fractions))

    def floats(self) -> tuple:
        """``(values, fractions)`` as float64 tuples."""
        return tuple(float(v) for v in self.values), tuple(float(f) for f in self.fractions)

    def reduced(self, odd: bool) -> "Readout":
        r"""The same network with equivalent groups merged (docs/theory/srf-theory.md §8, the singular case).

        Equal values always merge.  For an odd student, :math:`\varsigma` and :math:`-\varsigma` merge too:
        a neuron :math:`\sigma(-r\varsigma\kappa+\tilde w^\top x)=-\sigma(r\varsigma\kappa-\tilde w^\top x)`
        is a neuron of the :math:`+\varsigma` group with the bulk row :math:`-\tilde w` (the same law) and
        its readout sign flipped (the same ridge penalty): the test error is unchanged.
        """
        if self.kind != "finite":
            return self
        merged: dict = {}
        for v, f in zip(self.values, self.fractions):
            key = abs(v) if odd else v
            merged[key] = merged.get(key, 0) + f
        keys = sorted(merged, key=lambda e: float(e))
        return Readout("finite", tuple(keys), tuple(merged[k] for k in keys))

    def counts(self, p: int) -> list:
        """Group sizes for ``p`` neurons: largest remainders of :math:`\\pi_jp`, at least one per group."""
        if self.kind != "finite":
            raise InvalidParameterError("readout", self.label, "a finite-support readout")
        p = int(p)
        if p < self.K:
            raise InvalidParameterError("p", p, f"at least {self.K} neurons (one per readout group)")
        raw = [f * p for f in self.fractions]
        base = [max(1, int(sp.floor(v))) for v in raw]
        order = sorted(range(self.K), key=lambda j: -float(raw[j] - sp.floor(raw[j])))
        i = 0
        while sum(base) < p:
            base[order[i % self.K]] += 1
            i += 1
        while sum(base) > p:
            j = max(range(self.K), key=lambda j: base[j])
            base[j] -= 1
        return base

    def to_dict(self) -> dict:
        return {"kind": self.kind, "values": [str(v) for v in self.values],
                "fractions": [str(f) for f in self.fractions], "label": self.label}


UNIFORM = Readout("uniform")


def readout(spec=None) -> Readout:
    """Parse a readout spec (None, ``"uniform"``, ``"gaussian"``, ``"v:f,…"``, a sequence of (value, fraction)
    pairs, a dict value → fraction, or a :class:`Readout`) into a checked :class:`Readout`.

    >>> readout("1:1/2, 2:0.5").label
    '1:1/2,2:1/2'
    >>> readout("1:0.5,-1:0.5").reduced(odd=True).label
    '1:1'
    """
    if spec is None:
        return UNIFORM
    if isinstance(spec, Readout):
        return spec
    if isinstance(spec, str):
        s = spec.strip().lower()
        if s in ("uniform", "ones", "1"):
            return UNIFORM
        if s in ("gaussian", "normal", "gauss"):
            return Readout("gaussian", (), ())
        pairs = []
        for item in spec.split(","):
            if item.count(":") != 1:
                raise InvalidParameterError("readout", spec, _SPEC)
            pairs.append(tuple(t.strip() for t in item.split(":")))
    elif isinstance(spec, dict):
        pairs = list(spec.items())
    else:
        try:
            pairs = [tuple(pq) for pq in spec]
        except TypeError:
            raise InvalidParameterError("readout", spec, _SPEC) from None
        if any(len(pq) != 2 for pq in pairs):
            raise InvalidParameterError("readout", spec, _SPEC)
    if not 1 <= len(pairs) <= MAX_GROUPS:
        raise InvalidParameterError("readout", spec, f"1 to {MAX_GROUPS} groups")
    vals, fracs = [], []
    for v, f in pairs:
        ve = to_exact(v, "readout value")
        fe = to_exact(f, "readout fraction")
        if abs(float(ve)) > MAX_VALUE:
            raise InvalidParameterError("readout value", v, f"a real number in [-{MAX_VALUE}, {MAX_VALUE}] (the "
                                        "spike r u sets the resolution of the kappa rule)")
        if not fe > 0:
            raise InvalidParameterError("readout fraction", f, "a real number in (0, 1]")
        vals.append(ve)
        fracs.append(fe)
    total = sp.nsimplify(sum(fracs))
    if sp.simplify(total - 1) != 0:
        raise InvalidParameterError("readout", spec, f"fractions summing to 1 exactly (they sum to {total})")
    merged: dict = {}
    for v, f in zip(vals, fracs):
        merged[v] = merged.get(v, 0) + f
    keys = sorted(merged, key=lambda e: float(e))
    return Readout("finite", tuple(keys), tuple(merged[k] for k in keys))


def group_params(r, c, rd: Readout) -> list:
    r"""Per-group sRF parameters ``[(r_j, c_j)]`` of a finite-support readout (docs/theory/srf-theory.md §8, step map).

    The row update of §1 is linear in :math:`u_i`, so group j gets the spike :math:`r\varsigma_j` (same
    :math:`v,\gamma`) and the bulk variance :math:`c_j=1+\varsigma_j^2(c-1)`, where (r, c) are the
    parameters of the uniform readout (Result 3.1: :math:`c-1=\tilde\eta^2\check\mu_1^2\mu_2^\star/\alpha_0`).
    Works on floats, mpf and exact SymPy numbers alike.
    """
    if rd.kind != "finite":
        raise InvalidParameterError("readout", rd.label, "a finite-support readout ('value:fraction,...')")
    out = []
    for v in rd.values:
        if isinstance(r, mpmath.mpf) or isinstance(c, mpmath.mpf):
            v = to_mpf(v)                     # exact, at the ambient precision
        elif not (isinstance(r, sp.Basic) and isinstance(c, sp.Basic)):
            v = float(v)
        cj = 1 + v * v * (c - 1)
        if not cj > 0:
            raise InvalidParameterError("c", c, f"c > 1 - 1/u^2 for every readout value (c_j = {cj} at u = {v})")
        out.append((r * v, cj))
    return out


def group_index(rd: Readout, p: int):
    """Group of each of ``p`` neurons: contiguous blocks in the order of ``rd.values``, sizes ``rd.counts(p)``
    (the one assignment shared by the simulator and the finite-W theory)."""
    return np.repeat(np.arange(rd.K), rd.counts(p))
