r"""How far the sRF theory is known to be from the one-step network: the measured map of docs/studies/mechanism.md.

Results 3.1–3.3 leave out the row-norm heterogeneity of the giant step (docs/theory/srf-theory.md §2, "Row norms";
``row_norms=True`` corrects for it, §4.11), the largest difference from the network found so far.  The map
(``network_map.json``, written by docs/studies/make_mechanism.py from docs/studies/run_mechanism.sh) holds the
measured gap network − theory at d = 1000 around case A, with its standard error over seeds, and both theory
values.  :func:`network_gap` returns the entry for a setting (the same setting if it was mapped, else the nearest
one) and the range over the whole map.
"""

from __future__ import annotations

import json
import math
import pathlib

from ..core.caches import cached

__all__ = ["network_gap"]

_KEYS = ("student", "teacher", "alpha", "beta", "lam", "alpha0", "eta")


@cached(maxsize=1)
def _entries() -> tuple:
    path = pathlib.Path(__file__).with_name("network_map.json")
    return tuple(json.loads(path.read_text())["entries"]) if path.exists() else ()


def _distance(e, want) -> float:
    p = e["params"]
    out = 0.0 if (p["student"], p["teacher"]) == (want["student"], want["teacher"]) else 10.0
    for k in ("alpha", "beta", "alpha0", "eta", "lam"):
        a, b = (min(float(v), 1e6) for v in (p[k], want[k]))       # alpha0 = inf: nearest to the largest mapped
        out += abs(math.log(a / b)) if a > 0 and b > 0 else 10.0
    return out


def network_gap(student, teacher, *, alpha0, eta, alpha, beta, lam) -> dict | None:
    """The measured gap between the one-step network and the sRF theory at or near a setting (module docstring):
    ``{"setting", "exact", "d", "seeds", "uncorrected", "corrected", "reference"}``, each of ``uncorrected`` (Result
    3.3) and ``corrected`` (with the row-norm correction, docs/theory/srf-theory.md §4.11) holding the theory value
    at the mapped setting, the gap (network − theory)/theory in percent, its standard error and the range of the
    gap over the map; ``None`` if the map is empty.  Arguments are compared as numbers (exact strings allowed)."""
    entries = _entries()
    if not entries:
        return None
    from ..core.exact import to_float

    want = {"student": str(student), "teacher": str(teacher),
            **{k: to_float(v) for k, v in dict(alpha=alpha, beta=beta, lam=lam, alpha0=alpha0, eta=eta).items()}}
    best = min(entries, key=lambda e: _distance(e, want))
    out = {"setting": best["setting"], "exact": _distance(best, want) < 1e-12, "d": best["d"], "seeds": best["seeds"],
           "reference": "docs/studies/mechanism.md; docs/theory/srf-theory.md §2 (Row norms), §4.11"}
    for key, th in (("uncorrected", "theory"), ("corrected", "theory_corrected")):
        gaps = [100 * _gap(e, th) / float(e[th]) for e in entries]
        out[key] = {"theory": float(best[th]), "gap_percent": 100 * _gap(best, th) / float(best[th]),
                    "se_percent": 100 * float(best["se"]) / float(best[th]), "range_percent": [min(gaps), max(gaps)]}
    return out


def _gap(e, th) -> float:
    """network − the theory ``th`` of a map entry (the network's mean is the uncorrected gap plus that theory)."""
    return float(e["network_minus_theory"]) + float(e["theory"]) - float(e[th])
