r"""A store's studies as simulated points along one parameter (docs/theory/numerics.md §8), for the overlays of a
learning curve (``srf-curve --with study:STORE``, docs/theory/checking.md §9).

Each study in the store (one protocol at one parameter setting, a ladder of sizes d) whose student, teacher and
every parameter other than the swept one equal the curve's gives one point: the mean of its measured quantity at
its largest d, with the standard error of that mean over the stored seeds (at least two).  Nothing is fitted or
extrapolated here: the point is what was measured, at the size stated.
"""

from __future__ import annotations

import math

from ..core.errors import InvalidParameterError
from .store import ResultStore, canonical_json

__all__ = ["study_points", "NUMERIC"]

#: The parameters compared between a study and a curve (numbers; equal to 12 significant digits).
NUMERIC = ("alpha", "beta", "lam", "alpha0", "eta", "noise_var", "r", "c", "gamma")


def _same(a, b) -> bool:
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
    return x == y or abs(x - y) <= 1e-12 * max(abs(x), abs(y))


def study_points(path, param: str, fixed: dict, student: str, teacher: str, key: str = "test_error") -> dict:
    """``{protocol: [(x, mean, se, d, seeds), ...]}`` sorted by x: every study of ``path`` at ``student``/``teacher``
    whose parameters other than ``param`` equal ``fixed`` (floats compared to 12 digits; a parameter the study has
    and ``fixed`` lacks does not match), measured at its largest d.  A store without such a study is refused."""
    from ..core.exact import to_float

    try:
        with ResultStore(path, create=False) as st:
            rows = st.rows()
    except InvalidParameterError as exc:
        raise InvalidParameterError("--with", f"study:{path}", f"a results store of study ({exc.allowed})") from None
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["protocol"], canonical_json(r["params"])), []).append(r)
    out: dict = {}
    for (protocol, _), rs in groups.items():
        p = rs[0]["params"]
        if str(p.get("student")) != str(student) or str(p.get("teacher")) != str(teacher) or param not in p:
            continue
        if any(k != param and (fixed.get(k) is None or not _same(p[k], to_float(fixed[k], k)))
               for k in NUMERIC if k in p):
            continue
        d = max(r["d"] for r in rs)
        vals = [float(r["result"][key]) for r in rs if r["d"] == d and key in r["result"]]
        if len(vals) < 2:
            continue
        m = sum(vals) / len(vals)
        se = math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1) / len(vals))
        out.setdefault(protocol, []).append((float(p[param]), m, se, d, len(vals)))
    if not out:
        raise InvalidParameterError("--with", f"study:{path}", f"a store holding a study of {student} / {teacher} "
                                                               f"along {param} at the curve's other parameters")
    return {k: sorted(v) for k, v in out.items()}
