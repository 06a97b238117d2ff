"""Small result dataclasses with ``to_dict()`` / JSON and provenance.

High-precision numbers are serialised as decimal strings with the requested number
of digits; exact SymPy values are also given as SymPy strings.
"""

from __future__ import annotations

import dataclasses
import fractions
import json
import math

import mpmath
import numpy as np
import sympy as sp

from .exact import nstr, to_mpf
from .precision import workdps

__all__ = ["Result", "VouchedResult", "serialize", "provenance", "digits_of", "vouch", "vouched", "error_text"]


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
        """The result as an HTML table for notebooks: each field with its error (``value ± error`` where the result
        has ``errors`` for it), nested fields as nested tables, lists of rows as tables, closed forms (a ``latex``
        entry) as math; the provenance in one line below.  Numbers as serialised: the digits they earned."""
        d = self.to_dict()
        errors = d.get("errors") if isinstance(d.get("errors"), dict) else {}
        body = _html_table({k: v for k, v in d.items() if k not in ("provenance", "errors")}, errors)
        prov = d.get("provenance") if isinstance(d.get("provenance"), dict) else {}
        foot = "; ".join(f"{k} {prov[k]}" for k in ("method", "version", "dps") if prov.get(k) not in (None, ""))
        return (f"<p><b>{type(self).__name__}</b></p>{body}"
                + (f"<p style='font-size:smaller'>{_esc(foot)}</p>" if foot else ""))


#: Rows and items shown per list in a notebook table (the rest is counted).
_HTML_ROWS = 20


def _esc(text) -> str:
    import html

    text = str(text)
    return html.escape(text if len(text) <= 400 else text[:400] + " …")


def _merged(d: dict) -> dict:
    """A ``{value, abs_error, …}`` entry (Hermite coefficients, moments) with the error beside the value."""
    if "value" in d and "abs_error" in d:
        d = dict(d, value=f"{d['value']} ± {d['abs_error']}")
        d.pop("abs_error")
    return d


def _html_value(v, err=None, depth=0) -> str:
    """One field of :meth:`Result._repr_html_`."""
    if isinstance(v, dict):
        v = _merged(v)
        if "latex" in v:          # a closed form: math for the notebook's typesetter (entities decoded first)
            import html

            return f"${html.escape(str(v['latex']))}$"
        if depth >= 3:
            return _esc(json.dumps(v))
        return _html_table(v, err if isinstance(err, dict) else {}, depth + 1)
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(r, dict) for r in v):
            v = [_merged(r) for r in v]
            cols = list(dict.fromkeys(k for r in v[:_HTML_ROWS] for k in r))
            head = "".join(f"<th>{_esc(c)}</th>" for c in cols)
            rows = "".join("<tr>" + "".join(f"<td>{_html_value(r.get(c, ''), None, depth + 1)}</td>" for c in cols)
                           + "</tr>" for r in v[:_HTML_ROWS])
            more = f"<tr><td colspan='{len(cols)}'>… {len(v) - _HTML_ROWS} more rows</td></tr>" \
                if len(v) > _HTML_ROWS else ""
            return f"<table><tr>{head}</tr>{rows}{more}</table>"
        errs = err if isinstance(err, (list, tuple)) and len(err) == len(v) else [None] * len(v)
        items = [_html_value(a, e, depth + 1) for a, e in zip(v[:_HTML_ROWS], errs)]
        return ", ".join(items) + (f", … ({len(v) - _HTML_ROWS} more)" if len(v) > _HTML_ROWS else "")
    text = _esc("" if v is None else v)
    if err is not None and not isinstance(err, (dict, list, tuple)):
        text += f" ± {_esc(err)}"
    return text


def _html_table(d: dict, errors: dict, depth=0) -> str:
    """Rows of ``d``; a nested group of fields without errors of its own takes them from the flat ``errors`` (an
    sRF solution's order parameters, whose errors sit beside the test error's)."""
    def err_of(k, v):
        e = errors.get(k)
        return errors if e is None and isinstance(v, dict) and depth == 0 else e

    rows = "".join(f"<tr><th style='text-align:left'>{_esc(k)}</th><td style='text-align:left'>"
                   f"{_html_value(v, err_of(k, v), depth)}</td></tr>" for k, v in d.items())
    return f"<table>{rows}</table>"


def digits_of(value, err) -> int:
    """Significant digits vouched for by an absolute error estimate."""
    v, e = abs(float(value)), float(err)
    if v == 0 or not math.isfinite(e):
        return 0
    if e == 0:
        return 17
    return max(0, int(math.floor(-math.log10(e / v))))


def _as_fraction(value) -> fractions.Fraction:
    """The exact binary (or rational) value of a float, an mpf, an int or a SymPy Rational."""
    if isinstance(value, mpmath.mpf):
        sign, man, exp, _ = value._mpf_
        f = fractions.Fraction(int(man)) * (fractions.Fraction(2) ** int(exp))
        return -f if sign else f
    if isinstance(value, sp.Rational):
        return fractions.Fraction(int(value.p), int(value.q))
    return fractions.Fraction(value)


def _round_up(x: fractions.Fraction, sig: int = 3) -> str:
    """``x >= 0`` rounded *up* to ``sig`` significant digits, in exponent form (an error never shrinks in print)."""
    if x <= 0:
        return "0"
    e = math.floor(math.log10(x.numerator) - math.log10(x.denominator))
    while fractions.Fraction(10) ** e > x:          # exact correction of the float log
        e -= 1
    while fractions.Fraction(10) ** (e + 1) <= x:
        e += 1
    scale = fractions.Fraction(10) ** (e - sig + 1)
    m = math.ceil(x / scale)
    if m >= 10 ** sig:
        m, e = m // 10 + (m % 10 > 0), e + 1
    text = str(m)
    return f"{text[0]}.{text[1:]}e{e:+03d}" if sig > 1 else f"{text}e{e:+03d}"


def vouch(value, err, cap: int | None = None) -> tuple:
    """``(value_text, error_text)``: the contract of every printed theory number (docs/theory/numerics.md §1).

    The value is printed to the decimal place of the error's leading digit plus one guard digit (at most
    ``cap`` significant digits); the printed error is the estimate ``err`` *plus the rounding of the printed
    value*, rounded up to three significant digits.  So the interval ``printed ± printed error`` contains
    every number within ``err`` of ``value`` — a reader may use the printed pair as it stands.

    >>> vouch(0.12323667957530252, 3.45e-14)
    ('0.123236679575303', '3.50e-14')
    >>> vouch(2 / 3, 0.0, cap=5)          # an exact value: the error is the rounding alone
    ('0.66667', '3.34e-06')
    """
    if isinstance(value, sp.Basic) and not isinstance(value, sp.Rational):
        with workdps(60 if cap is None else cap + 20):
            value = to_mpf(value, 50 if cap is None else cap + 10)
    e = float(err)
    if not math.isfinite(float(value)):                # kappa* = +-inf (a limit), nan: printed as words
        return (str(float(value)) if isinstance(value, float) else mpmath.nstr(value)), (
            "0" if e == 0 else _round_up(fractions.Fraction(e)) if math.isfinite(e) else "inf")
    if not math.isfinite(e):
        return (nstr(value, 3) if not isinstance(value, float) else f"{value:.3g}"), "inf"
    if float(value) == 0:
        exact_zero = _as_fraction(value) == 0
        return "0", ("0" if e == 0 and exact_zero else _round_up(fractions.Fraction(e)))
    mag = math.floor(math.log10(abs(float(value))))
    if e > 0:
        n = mag - (math.floor(math.log10(e)) - 1) + 1          # to the error's decimal place + one guard digit
    elif cap is not None:
        n = int(cap)
    elif isinstance(value, mpmath.mpf):                        # all the digits the binary value holds
        n = max(17, int(value._mpf_[3] * 0.30103) + 2)
    else:
        n = 17
    if cap is not None:
        n = min(n, int(cap))
    n = max(1, min(n, 17 if isinstance(value, float) else 320))
    if isinstance(value, float) or isinstance(value, (np.floating,)):
        text = f"{float(value):.{n}g}"
    else:
        with workdps(n + 10):
            text = mpmath.nstr(mpmath.mpf(value) if not isinstance(value, sp.Rational) else
                               mpmath.mpf(value.p) / value.q, n, strip_zeros=False, min_fixed=-6, max_fixed=15)
    text = text.replace(".e", "e")                     # mpmath prints one digit as "2.e-40"
    rounding = abs(fractions.Fraction(text) - _as_fraction(value))
    return text, _round_up(fractions.Fraction(e) + rounding)


def vouched(value, err, cap: int | None = None) -> str:
    """The value text of :func:`vouch`."""
    return vouch(value, err, cap)[0]


def error_text(value, err, cap: int | None = None) -> str:
    """The error text of :func:`vouch` (the estimate plus the rounding of the printed value, rounded up)."""
    return vouch(value, err, cap)[1]


def _vouch_like(value, err, cap=None):
    """``value`` (a number, a list or a dict of numbers) printed to the digits its ``err`` vouches for."""
    if err is None or value is None:
        return serialize(value), None
    if isinstance(err, dict):
        return {k: _vouch_like(value[k], e, cap) for k, e in err.items()}
    if isinstance(err, (list, tuple)):
        return [_vouch_like(v, e, cap) for v, e in zip(value, err)]
    return vouch(value, err, cap)


def _error_only(err):
    """An error with no printed value of its own, rounded up to three digits."""
    if isinstance(err, dict):
        return {k: _error_only(e) for k, e in err.items()}
    if isinstance(err, (list, tuple)):
        return [_error_only(e) for e in err]
    if err is None:
        return None
    e = float(err)
    return _round_up(fractions.Fraction(e)) if math.isfinite(e) else "inf"


def _split(pairs, which):
    if isinstance(pairs, tuple) and len(pairs) == 2 and not isinstance(pairs[0], tuple):
        return pairs[which]
    if isinstance(pairs, dict):
        return {k: _split(v, which) for k, v in pairs.items()}
    if isinstance(pairs, list):
        return [_split(v, which) for v in pairs]
    return pairs[which]


@dataclasses.dataclass
class VouchedResult(Result):
    """A result with an ``errors`` dict (absolute error estimates): :meth:`to_dict` prints every field that
    has an error to the digits it vouches for (at most ``dps`` when the result has one) and the errors, the
    rounding of the printed value included, rounded up to three digits (:func:`vouch`, docs/theory/numerics.md §1).  ``ERROR_KEYS`` maps a field to its key in ``errors`` where they differ."""

    ERROR_KEYS = {}

    def to_dict(self) -> dict:
        d = super().to_dict()
        errs = getattr(self, "errors", None) or {}
        fields = {f.name for f in dataclasses.fields(self)}
        printed_errors = {}
        for name in fields - {"errors"}:
            key = self.ERROR_KEYS.get(name, name)
            if key in errs:
                value = getattr(self, name)
                pairs = _vouch_like(value, errs[key], getattr(self, "dps", None))
                d[name] = _split(pairs, 0)
                if isinstance(value, dict):             # entries without an error (counts, labels) as they are
                    d[name] = {**serialize(value, self._dps()), **d[name]}
                printed_errors[key] = _split(pairs, 1)
        if errs:
            d["errors"] = {k: printed_errors[k] if k in printed_errors else _error_only(e) for k, e in errs.items()}
        return d
