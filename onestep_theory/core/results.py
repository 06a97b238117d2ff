"""Small result dataclasses with ``to_dict()`` / JSON and provenance.

High-precision numbers are serialised as decimal strings with the requested number
of digits; exact SymPy values are also given as SymPy strings.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import math

import mpmath
import numpy as np
import sympy as sp

from .exact import nstr
from .vouching import as_fraction, attach, digits_of, error_text, round_up, vouch, vouched

__all__ = ["Result", "VouchedResult", "serialize", "provenance", "digits_of", "vouch", "vouched", "error_text",
           "csv_text", "write_csv", "read_csv"]


def provenance(dps=None, method=None, references=(), **extra) -> dict:
    """Common provenance block: package version, precision, method, equations.  ``dps``: the digits asked at the
    result's boundary, recorded (the key ``"dps"`` of the block); it sets no precision."""
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


#: The first line of every CSV the package writes: how to read it back.
CSV_FIRST = "# onestep_theory {version}; read with onestep_theory.core.results.read_csv, or pandas.read_csv(path, " \
            "comment='#')"


def csv_text(rows: list, context: dict | None = None, fieldnames=None) -> str:
    """CSV of ``rows`` (dicts) that carries its context: ``#`` lines first (the package and version, then one
    ``# key: value`` line per entry of ``context`` -- the command, the parameters as typed, the method, the
    provenance; dicts and lists as JSON), then the header row and the rows, as the rows hold them (the vouched
    digits).  :func:`read_csv` reads both back; ``pandas.read_csv(path, comment="#")`` reads the table.

    >>> text = csv_text([{"alpha": "1/2", "value": "0.25"}], {"parameters": {"phi": "1/2"}})
    >>> print(text.split(chr(10), 1)[1])
    # parameters: {"phi": "1/2"}
    alpha,value
    1/2,0.25
    <BLANKLINE>
    >>> read_csv(io.StringIO(text))[1]
    [{'alpha': '1/2', 'value': '0.25'}]
    """
    from .. import __version__

    buf = io.StringIO()
    buf.write(CSV_FIRST.format(version=__version__) + "\n")
    for k, v in (context or {}).items():          # text as it is (on one line), anything else as JSON
        if v is not None and v != {} and v != []:
            text = v if isinstance(v, str) else json.dumps(serialize(v), ensure_ascii=False)
            buf.write(f"# {k}: {' '.join(str(text).split())}\n")
    keys = list(fieldnames or dict.fromkeys(k for r in rows for k in r))
    wr = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n", restval="")
    wr.writeheader()
    wr.writerows(rows)
    return buf.getvalue()


def write_csv(target, rows: list, context: dict | None = None, fieldnames=None) -> str | None:
    """:func:`csv_text` written to ``target`` (a path or a text buffer); the text itself when ``target`` is None."""
    text = csv_text(rows, context, fieldnames)
    if target is not None:
        with open(target, "w", newline="", encoding="utf-8") if not hasattr(target, "write") else \
                contextlib.nullcontext(target) as fh:
            fh.write(text)
    return None if target is not None else text


def read_csv(source) -> tuple:
    """``(context, rows)`` of a CSV written by :func:`csv_text` (a path or a text buffer): the ``#`` lines as a dict
    (JSON values parsed; ``"package"`` holds the first line), the rows as dicts of strings.  A CSV without ``#``
    lines reads with an empty context."""
    text = source.read() if hasattr(source, "read") else open(source, encoding="utf-8", newline="").read()
    lines = text.splitlines(keepends=True)
    context, k = {}, 0
    while k < len(lines) and lines[k].startswith("#"):
        key, sep, value = lines[k][1:].strip().partition(": ")
        if k == 0 and key.startswith("onestep_theory"):
            context["package"] = key.split(";")[0]
        elif sep:
            try:
                context[key] = json.loads(value) if value[:1] in "{[" else value
            except ValueError:
                context[key] = value
        k += 1
    return context, list(csv.DictReader(t for t in lines[k:] if not t.startswith("#")))


def serialize(value, digits_shown: int = 17):
    """Convert *value* to JSON-compatible data; mpf and SymPy numbers become strings of ``digits_shown``
    significant digits (digits to print, not a working precision; a Result serialises with its own)."""
    kind = type(value)                              # the common leaves first (a sweep serialises ~70 a point)
    if kind is float or kind is np.float64:
        v = float(value)
        return v if math.isfinite(v) else str(v)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, dict):
        return {str(k): serialize(v, digits_shown) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [serialize(v, digits_shown) for v in value]
    if isinstance(value, np.ndarray):
        return [serialize(v, digits_shown) for v in value.tolist()]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    if isinstance(value, mpmath.mpf):
        return nstr(value, digits_shown)
    if isinstance(value, mpmath.mpc):
        return {"re": nstr(value.real, digits_shown), "im": nstr(value.imag, digits_shown)}
    if isinstance(value, sp.Basic):
        if value.is_number:
            return nstr(value, digits_shown)
        return str(value)
    return str(value)


@dataclasses.dataclass
class Result:
    """Base class: subclasses are dataclasses; ``dps`` sets the digits of serialised numbers; the fields named in
    ``INPUTS`` hold parameters as given, and an exact one serialises as its exact text (``"1/2"``, ``"inf"``)."""

    INPUTS = ()

    def _dps(self) -> int:
        return getattr(self, "dps", None) or 17

    def to_dict(self, omit=()) -> dict:
        """The fields as JSON data; those in ``omit`` (a subclass prints them itself) keep their place as None."""
        d = {}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            if f.name in omit:
                d[f.name] = None
                continue
            v = getattr(self, f.name)
            exact = f.name in self.INPUTS and isinstance(v, sp.Basic) and v.is_number and not v.has(sp.Float)
            d[f.name] = ("inf" if v == sp.oo else str(v)) if exact else serialize(v, self._dps())
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
    try:
        return round_up(abs(err) if isinstance(err, float) else abs(as_fraction(err)))   # a float: exact decimals
    except (ValueError, OverflowError):             # inf, nan: nothing vouched
        return "inf"


def _shown(dval, orig, perr) -> str:
    """A field of a repr from its :meth:`~Result.to_dict` form ``dval``, the value ``orig`` and the printed errors
    ``perr`` (same structure): printed numbers unquoted, with ``± error`` where they have one; exact SymPy numbers
    as they are; strings quoted; long lists cut at :data:`_HTML_ROWS` items (counted)."""
    if isinstance(orig, Result):
        return repr(orig)
    if isinstance(orig, sp.Basic) and isinstance(dval, str) and perr is None:
        return str(orig)
    if isinstance(dval, dict):
        origs = {str(k): v for k, v in orig.items()} if isinstance(orig, dict) else {}
        perrs = perr if isinstance(perr, dict) else {}
        return "{" + ", ".join(f"{k!r}: {_shown(v, origs.get(str(k)), perrs.get(k))}" for k, v in dval.items()) + "}"
    if isinstance(dval, list):
        n = len(dval)
        origs = list(orig) if isinstance(orig, (list, tuple)) and len(orig) == n else [None] * n
        perrs = perr if isinstance(perr, list) and len(perr) == n else [None] * n
        items = [_shown(*t) for t in zip(dval[:_HTML_ROWS], origs, perrs)]
        items += [f"… ({n - _HTML_ROWS} more)"] if n > _HTML_ROWS else []
        return ("(%s)" if isinstance(orig, tuple) else "[%s]") % ", ".join(items)
    if isinstance(dval, str) and not isinstance(orig, str):
        return f"{dval} ± {perr}" if isinstance(perr, str) else dval
    return repr(dval)


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
    rounding of the printed value included, rounded up to three digits (:func:`vouch`, docs/theory/numerics.md §1).  ``ERROR_KEYS`` maps a field to its key in ``errors`` where they differ.

    The Python display keeps the same contract: ``repr`` (one line), ``str`` (one field a line) and IPython's
    pretty and HTML displays print every number with an error as ``value ± error`` (:func:`vouch`), at any dps.
    A high-precision field with an error is a :class:`~onestep_theory.core.vouching.vmpf` — the mpf itself,
    whose repr shows its vouched digits and error; float fields stay floats (their repr is the float's literal)."""

    ERROR_KEYS = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "__repr__" not in cls.__dict__:       # before @dataclass, which then keeps this repr
            cls.__repr__ = VouchedResult.__repr__
        if "_repr_pretty_" not in cls.__dict__:  # IPython takes the first of the two it meets in the MRO
            cls._repr_pretty_ = VouchedResult._repr_pretty_

    def __post_init__(self):
        self._attach()
        self.__dict__["_attached"] = True

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if self.__dict__.get("_attached") and not name.startswith("_"):
            self._attach()                        # errors (or a value, or dps) set after construction

    def _error_of(self, name: str, value, errs: dict):
        """The errors of field ``name``: ``errors[ERROR_KEYS.get(name, name)]``, or for a group of values without
        an entry of its own (an sRF solution's order parameters) the flat entries of its keys."""
        err = errs.get(self.ERROR_KEYS.get(name, name))
        if err is None and isinstance(value, dict):
            err = {k: errs[k] for k in value if isinstance(k, str) and k in errs} or None
        return err

    def _attach(self) -> None:
        """Every mpf with an error becomes a :class:`~onestep_theory.core.vouching.vmpf` carrying it."""
        errs = self.__dict__.get("errors")
        if not isinstance(errs, dict) or not errs:
            return
        for f in dataclasses.fields(self):
            if f.name not in ("errors", "provenance") and f.name in self.__dict__:
                err = self._error_of(f.name, self.__dict__[f.name], errs)
                if err is not None:
                    object.__setattr__(self, f.name, attach(self.__dict__[f.name], err, self.__dict__.get("dps")))

    def _shown_fields(self) -> list:
        """``(name, text)`` of every field but the errors (shown beside their values) and the provenance."""
        d = self.to_dict()
        derr = d.get("errors") if isinstance(d.get("errors"), dict) else {}
        out, used = [], set()
        for f in dataclasses.fields(self):
            if f.name in ("errors", "provenance") or f.name not in d:
                continue
            key = self.ERROR_KEYS.get(f.name, f.name)
            perr = derr.get(key)
            if f.name == "abs_error" and "test_error" in derr:
                perr, dval = None, derr["test_error"]
            else:
                dval = d[f.name]
            if perr is not None:
                used.add(key)
            elif isinstance(dval, dict) and f.name not in ("options", "symbolic"):
                perr = {k: derr[k] for k in dval if k in derr}
                used.update(perr)
            out.append((f.name, _shown(dval, getattr(self, f.name), perr)))
        rest = {k: v for k, v in derr.items() if k not in used}
        if rest:
            out.append(("errors", _shown(rest, None, None)))
        return out

    def _rows(self) -> list:
        try:
            return self._shown_fields()
        except Exception:                          # noqa: BLE001  (a repr never raises: the raw fields instead)
            return [(f.name, repr(getattr(self, f.name, None))) for f in dataclasses.fields(self)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{k}={v}" for k, v in self._rows()) + ")"

    def __str__(self) -> str:
        rows = self._rows()
        w = max((len(k) for k, _ in rows), default=0)
        prov = getattr(self, "provenance", None)
        method = prov.get("method") if isinstance(prov, dict) else None
        head = type(self).__name__ + (f": {method}" if method else "")
        return "\n".join([head] + [f"  {k:<{w}} = {v}" for k, v in rows])

    def _repr_pretty_(self, p, cycle) -> None:
        """IPython's plain-text display: :meth:`__str__`."""
        p.text(f"{type(self).__name__}(...)" if cycle else str(self))

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
