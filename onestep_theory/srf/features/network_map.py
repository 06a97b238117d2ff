r"""How far the sRF theory is known to be from the one-step network: the measured map of docs/studies/mechanism.md.

Results 3.1–3.3 leave out the row-norm heterogeneity of the giant step (docs/theory/srf-theory.md §2, "Row norms";
``row_norms=True`` corrects for it, §4.11), the largest difference from the network found so far.  The map
(``network_map.json``, written by docs/studies/make_mechanism.py from docs/studies/run_mechanism.sh) holds the
measured gap network − theory at d = 1000 around case A, with its standard error over seeds, and both theory
values.  :func:`network_gap` says whether a setting was measured (docs/studies/mechanism.md, section 5, "When `srf`
quotes the map"):

* **same model**: the student and the teacher equal a mapped pair *as functions* (the parsed expressions are
  identical, or they agree at seven points to 30 digits and SymPy proves the difference zero; ``tanh`` = ``tanh(x)``
  = ``2/(1+exp(-2*x))-1``, but ``tanh(2*x)`` and ``2*tanh(x)`` are other models), with the theory the map
  compares with (square loss, no label noise, Result 3.1's corrected c, the F3 prior with the spike channel);
* ``"exact"``: every number (α, β, λ, α0, η̃) equals a mapped setting's, compared exactly;
* ``"between"``: all numbers but one equal a mapped setting's, and the one left lies strictly between two mapped
  values of the same line (settings differing only in that number), so it is off a mapped setting by less than
  the map's spacing there; both neighbours are quoted, not an interpolation;
* otherwise ``None``, with the reason ("not measured near this setting").
"""

from __future__ import annotations

import json
import math
import pathlib

from ...core.caches import cached

__all__ = ["network_gap", "network_note"]

_NUMS = ("alpha", "beta", "lam", "alpha0", "eta")
_SYMBOL = {"alpha": "α", "beta": "β", "lam": "λ", "alpha0": "α0", "eta": "η̃"}
#: the theory the map compares the network with (srf_solve's defaults)
_THEORY = {"noise_var": "0", "loss": "square", "c_formula": "corrected", "spike_channel": True, "spectrum": "mp",
           "cross_term": True}
#: the theory variants an entry may hold: key -> (its theory value's field, spectrum, row norms, what it is)
VARIANTS = {"uncorrected": ("theory", "mp", False, "Result 3.3"),
            "corrected": ("theory_corrected", "mp", True, "the row-norm correction"),
            "trained": ("theory_trained", "trained", False, "the trained bulk"),
            "both": ("theory_both", "trained", True, "the trained bulk and the row norms")}
_REFERENCE = "docs/studies/mechanism.md (section 5); docs/theory/srf-theory.md §2 (Row norms), §4.11"
_PROBES = ("-27/10", "-13/10", "-2/5", "3/10", "9/10", "17/10", "31/10")   # away from the kinks of the named ones


@cached(maxsize=1)
def _entries() -> tuple:
    path = pathlib.Path(__file__).with_name("network_map.json")
    return tuple(json.loads(path.read_text())["entries"]) if path.exists() else ()


@cached(maxsize=256)
def _same_function(a, b) -> bool:
    """Whether two parsed expressions in x are the same function: identical, or equal at :data:`_PROBES` to 30
    digits and their difference simplified to 0 by SymPy (bounded: at most 80 operations).  False when unproved."""
    import sympy as sp

    from ...hermite.expressions import x

    if a == b:
        return True
    d = a - b
    for t in _PROBES:
        try:
            v = complex(sp.N(d.subs(x, sp.Rational(t)), 30))
        except (TypeError, ValueError, ArithmeticError):
            return False
        if not abs(v) <= 1e-25:
            return False
    if sp.count_ops(d) > 80:
        return False
    return sp.simplify(d) == 0 or sp.simplify(d.rewrite(sp.exp)) == 0


def _parsed(spec, param):
    if isinstance(spec, str):      # the map's names and the typed text: parsed and checked once a process
        return _parsed_text(spec, param)
    from ...hermite.activation import Activation

    return Activation.from_any(spec, param).expr


@cached(maxsize=64)
def _parsed_text(spec: str, param: str):
    from ...hermite.activation import Activation

    return Activation.from_any(spec, param).expr


def _theory_differs(theory: dict) -> list[str]:
    from ...core.exact import to_exact

    out = []
    for k, default in _THEORY.items():
        v = theory.get(k, default)
        if k == "noise_var":
            same = to_exact(v, "noise_var") == 0
        elif k == "loss":
            same = v is None or (isinstance(v, str) and v.strip().lower() == "square")
        elif k == "spectrum":           # the map holds the trained-bulk variants too (docs/studies/paired-map.md)
            same = v in ("mp", "trained")
        else:
            same = v == default
        if not same:
            out.append(f"{k} = {v}")
    return out


def _entry(e) -> dict:
    out = {"setting": e["setting"], "params": dict(e["params"]), "d": e["d"], "seeds": e["seeds"]}
    paired = e.get("paired") or {}
    for key, (th, *_) in VARIANTS.items():
        if th in e:
            out[key] = {"theory": float(e[th]), "gap_percent": 100 * _gap(e, th) / float(e[th]),
                        "se_percent": 100 * float(e["se"]) / float(e[th])}
            if paired.get(key):         # the extrapolated paired verdict (docs/studies/paired-map.md)
                out[key]["extrapolated"] = dict(paired[key], sizes=paired["sizes"], seeds=paired["seeds"])
    return out


def _show(v) -> str:
    return "inf" if v.is_infinite else str(v)


def network_gap(student, teacher, *, alpha0, eta, alpha, beta, lam, **theory) -> dict:
    """Whether the one-step network was measured at or near a setting, and how far it was from the sRF theory
    there (module docstring; docs/studies/mechanism.md, section 5).

    Returns ``{"match", "reason", "entry", "bracket", "range_percent", "reference"}``: ``match`` is ``"exact"``,
    ``"between"`` or ``None``; ``entry`` the mapped setting quoted (for ``"between"`` the nearer neighbour) or
    ``None``; ``bracket`` the two neighbours for ``"between"``.  An entry holds ``setting``, ``params``, ``d``,
    ``seeds`` and, for ``uncorrected`` (Result 3.3) and ``corrected`` (docs/theory/srf-theory.md §4.11), the
    theory value, the gap (network − theory)/theory in percent and its standard error.  ``theory`` keywords
    (``noise_var``, ``loss``, ``c_formula``, ``spike_channel``, ``spectrum``, ``cross_term``) name the theory the
    caller compares with; the map holds the defaults only.  Numbers are compared exactly (exact strings allowed).

    >>> network_gap("tanh(x)", "sin(x)", alpha0=20, eta=3, alpha=3, beta=1, lam="0.1")["match"]
    'exact'
    >>> g = network_gap("erf", "He3", alpha0=2, eta=1, alpha=50, beta="0.1", lam=10)
    >>> g["match"] is None, g["entry"]
    (True, None)
    """
    from ...core.exact import to_exact

    entries = _entries()
    out = {"match": None, "reason": "", "entry": None, "bracket": None, "range_percent": None,
           "reference": _REFERENCE}
    if not entries:
        out["reason"] = "no measured map is shipped"
        return out
    out["range_percent"] = {key: [min(g), max(g)] for key, (th, *_) in VARIANTS.items()
                            for g in [[100 * _gap(e, th) / float(e[th]) for e in entries if th in e]] if g}
    unknown = set(theory) - set(_THEORY)
    if unknown:
        raise TypeError(f"network_gap() got unexpected keyword(s) {sorted(unknown)}")
    differs = _theory_differs(theory)
    if differs:
        out["reason"] = "the map compares the network with the square-loss, noiseless, default theory; here " + \
            ", ".join(differs)
        return out
    s, t = _parsed(student, "student"), _parsed(teacher, "teacher")
    same = [e for e in entries if _same_function(s, _parsed(e["params"]["student"], "student"))
            and _same_function(t, _parsed(e["params"]["teacher"], "teacher"))]
    if not same:
        pairs = sorted({(e["params"]["student"], e["params"]["teacher"]) for e in entries})
        out["reason"] = "the map has only " + ", ".join(f"{a}/{b}" for a, b in pairs) + " (student/teacher)"
        return out
    want = {k: to_exact(v, k, allow_infinite=True) for k, v in dict(alpha=alpha, beta=beta, lam=lam,
                                                                      alpha0=alpha0, eta=eta).items()}
    num = {id(e): {k: to_exact(e["params"][k], k) for k in _NUMS} for e in same}
    off = {id(e): [k for k in _NUMS if num[id(e)][k] != want[k]] for e in same}
    exact = [e for e in same if not off[id(e)]]
    if exact:
        out.update(match="exact", entry=_entry(exact[0]), reason="measured at this setting")
        return out
    for k in _NUMS:
        line = [e for e in same if off[id(e)] in ([k], [])]
        below = [e for e in line if num[id(e)][k] < want[k]]
        above = [e for e in line if num[id(e)][k] > want[k]]
        if below and above:
            lo = max(below, key=lambda e: num[id(e)][k])
            hi = min(above, key=lambda e: num[id(e)][k])
            # the nearer neighbour, on the scale of the parameter's logarithm (all mapped values are positive)
            near = lo if (want[k] / num[id(lo)][k]) <= (num[id(hi)][k] / want[k]) else hi
            ends = [dict(_entry(e), label=f"{_SYMBOL[k]} = {_show(num[id(e)][k])}"
                         + (f" ({e['setting']})" if e["setting"] == "case A" else "")) for e in (lo, hi)]
            out.update(match="between", entry=_entry(near), bracket=ends,
                       reason=f"{_SYMBOL[k]} = {_show(want[k])} lies between the mapped {_SYMBOL[k]} = "
                              f"{_show(num[id(lo)][k])} and {_show(num[id(hi)][k])}, the rest as mapped")
            return out
    fewest = min(len(v) for v in off.values())
    if fewest == 1:
        k = next(v[0] for v in off.values() if len(v) == 1)
        vals = sorted({num[id(e)][k] for e in same if off[id(e)] == [k]})
        what = (f"measured only at {_SYMBOL[k]} = {_show(vals[0])}" if len(vals) == 1 else
                f"measured for {_SYMBOL[k]} in [{_show(vals[0])}, {_show(vals[-1])}]")
        out["reason"] = f"{_SYMBOL[k]} = {_show(want[k])} is off the map ({what}, the rest as here)"
    else:
        def spread(e):          # ties: the smallest sum of |log ratio| over the numbers off
            return sum(abs(math.log(float(want[k] / num[id(e)][k]))) if want[k].is_finite else math.inf
                       for k in off[id(e)])

        e = min((e for e in same if len(off[id(e)]) == fewest), key=spread)
        out["reason"] = (f"{fewest} parameters differ from every mapped setting; the nearest, {e['setting']}, differs "
                         f"in " + ", ".join(_SYMBOL[k] for k in off[id(e)]))
    return out


def network_note(g: dict, corrected: bool = False, spectrum: str = "mp") -> str:
    """One line for the text output of ``srf``: the measured gap where :func:`network_gap` matched, else
    "not measured near this setting" with its reason; for the theory variant (``corrected``: the row norms,
    ``spectrum="trained"``: the trained bulk) and, where the paired map measured it, the network's extrapolated
    paired gap with its standard error, the smallest detectable gap and the verdict (docs/studies/paired-map.md)."""
    head = "against the one-step network: "
    if g["match"] is None:
        return head + f"not measured near this setting ({g['reason']}; the map: docs/studies/mechanism.md)."
    key = next(k for k, v in VARIANTS.items() if v[1] == spectrum and v[2] == bool(corrected))
    which = ("on the trained bulk, " if spectrum == "trained" else "") + ("with" if corrected else "without") + \
        " the row-norm correction"
    near = g["entry"] if g["match"] == "exact" else None
    if any(key not in e for e in [g["entry"]] + (g["bracket"] or [])):
        return head + (f"{'at this setting' if near else 'near this setting'} ({g['entry']['setting']}) the map has "
                       f"no measurement against {VARIANTS[key][3]} ({g['reason']}; docs/studies/paired-map.md).")
    lo, hi = g["range_percent"][key]
    x = near[key].get("extrapolated") if near else None
    tail = ""
    if x:
        tail = (f" Extrapolated (d = {', '.join(map(str, x['sizes']))}, g_inf + a/d), network − theory: " + "; ".join(
            f"{what} {v['g_inf_percent']:+.2f} +/- {v['se_percent']:.2f} % (smallest detectable gap "
            f"{v['detectable_percent']:.1f} %): {_STATUS[v['status']]}" for what, v in
            (("paired", x.get("direct")), ("anchored on F1", x.get("anchored"))) if v) + " (docs/studies/paired-map.md).")

    def gap(e):
        return f"{e[key]['gap_percent']:+.1f} +/- {e[key]['se_percent']:.1f} %"

    if g["match"] == "exact":
        e = g["entry"]
        where = f"at this setting ({e['setting']}) the network's test error was {gap(e)} from the theory"
        size = f"d = {e['d']}, {e['seeds']} seeds"
    else:
        a, b = g["bracket"]
        where = (f"not measured at this setting ({g['reason']}); the network was {gap(a)} from the theory at "
                 f"{a['label']} and {gap(b)} at {b['label']}")
        size = f"d = {a['d']}, {a['seeds']} and {b['seeds']} seeds"
    return (head + f"{where}, {which} ({size}; over the map {lo:+.1f} to {hi:+.1f} %; "
            f"{g['reference']})." + tail)


_STATUS = {"inside": "the theory is inside the network's 95 % interval",
           "underpowered": "the theory is inside the network's 95 % interval, underpowered (no evidence of agreement "
                           "closer than the detectable gap)",
           "outside": "the theory is OUTSIDE the network's 95 % interval", "no verdict": "no verdict"}


def _gap(e, th) -> float:
    """network − the theory ``th`` of a map entry (the network's mean is the uncorrected gap plus that theory)."""
    return float(e["network_minus_theory"]) + float(e["theory"]) - float(e[th])
