"""Small result dataclasses with ``to_dict()`` / JSON and provenance.

High-precision numbers are serialised as decimal strings with the requested number
of digits; exact SymPy values are also given as SymPy strings.
"""

from __future__ import annotations

import dataclasses
import json
import math

import mpmath
import numpy as np
import sympy as sp

from .exact import nstr

__all__ = ["Result", "VouchedResult", "serialize", "provenance", "digits_of", "vouched"]


def provenance(dps=None, method=None, references=(), **extra) -> dict:
    """Common provenance block: package version, precision, method, equations."""
    from .. import __version__

    out = {"package": "onestep_theory", "version": __version__}
    if dps is not None:
        out["dps"] = dps
    if method is not None:
        out["method"] = method
    if references:
        out["references"] = list(references)
    out.update(extra)
    return out


def serialize(value, dps: int = 17):
    """Convert *value* to JSON-compatible data; mpf and SymPy numbers become strings."""
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, dict):
        return {str(k): serialize(v, dps) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [serialize(v, dps) for v in value]
    if isinstance(value, np.ndarray):
        return [serialize(v, dps) for v in value.tolist()]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    if isinstance(value, mpmath.mpf):
        return nstr(value, dps)
    if isinstance(value, mpmath.mpc):
        return {"re": nstr(value.real, dps), "im": nstr(value.imag, dps)}
    if isinstance(value, sp.Basic):
        if value.is_number:
            return nstr(value, dps)
        return str(value)
    return str(value)


@dataclasses.dataclass
class Result:
    """Base class: subclasses are dataclasses; ``dps`` sets the digits of serialised numbers."""

    def _dps(self) -> int:
        return getattr(self, "dps", None) or 17

    def to_dict(self) -> dict:
        d = {}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            d[f.name] = serialize(getattr(self, f.name), self._dps())
        return d

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def _repr_html_(self) -> str:
        """A table of the fields for notebooks (numbers as serialised: the digits they earned)."""
        import html

        def cell(v):
            text = v if isinstance(v, str) else json.dumps(v)
            return html.escape(text if len(text) <= 300 else text[:300] + " ...")

        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                       f"{cell(v)}</td></tr>" for k, v in self.to_dict().items() if k != "provenance")
        return f"<p><b>{type(self).__name__}</b></p><table>{rows}</table>"


def digits_of(value, err) -> int:
    """Significant digits vouched for by an absolute error estimate."""
    v, e = abs(float(value)), float(err)
    if v == 0 or not math.isfinite(e):
        return 0
    if e == 0:
        return 17
    return max(0, int(math.floor(-math.log10(e / v))))


def vouched(value, err, cap: int | None = None) -> str:
    """Decimal string of ``value`` with only the digits its absolute error ``err`` vouches for (at most ``cap``)."""
    v = float(value)
    if v == 0:
        return "0"
    dg = digits_of(value, err) if cap is None else min(digits_of(value, err), cap)
    if dg < 1:
        return f"{v:.1e}"
    return nstr(value, min(dg, 200)) if not isinstance(value, float) else f"{v:.{min(dg, 17)}g}"


def _vouch_like(value, err):
    """``value`` (a number, a list or a dict of numbers) printed to the digits its ``err`` vouches for."""
    if isinstance(err, dict):
        return {k: _vouch_like(value[k], e) for k, e in err.items()}
    if isinstance(err, (list, tuple)):
        return [_vouch_like(v, e) for v, e in zip(value, err)]
    return vouched(value, err)


def _error_text(err):
    if isinstance(err, dict):
        return {k: _error_text(e) for k, e in err.items()}
    if isinstance(err, (list, tuple)):
        return [_error_text(e) for e in err]
    return f"{float(err):.2e}"


@dataclasses.dataclass
class VouchedResult(Result):
    """A result with an ``errors`` dict (absolute error estimates): :meth:`to_dict` prints every field that
    has an error to the digits it vouches for, and the errors themselves to three digits
    (docs/theory/numerics.md §1).  ``ERROR_KEYS`` maps a field to its key in ``errors`` where they differ."""

    ERROR_KEYS = {}

    def to_dict(self) -> dict:
        d = super().to_dict()
        errs = getattr(self, "errors", None) or {}
        fields = {f.name for f in dataclasses.fields(self)}
        for name in fields - {"errors"}:
            key = self.ERROR_KEYS.get(name, name)
            if key in errs:
                d[name] = _vouch_like(getattr(self, name), errs[key])
        if errs:
            d["errors"] = _error_text(errs)
        return d
