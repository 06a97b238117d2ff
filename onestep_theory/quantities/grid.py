r"""Parameter ranges and grids of ``check`` and ``sweep`` (docs/theory/checking.md §3): one parser, one rule for the
scale, one quasi-random design.

A range is ``a:b`` (check: sampled) or ``a:b:n`` (sweep: n grid points), optionally ``:log`` or ``:lin``.  Without a
suffix the scale is logarithmic when :math:`0<a` and :math:`b/a\ge10` (a ratio spanning a decade is natural on a log
scale: λ, φ, ψ, η̃), linear otherwise.  Bounds may be exact strings (``1/10``).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InvalidParameterError
from ..core.exact import to_exact

__all__ = ["MAX_POINTS", "parse_range", "parse_over", "grid_points", "sample_points"]

#: At most this many points in a sweep or a check (bounded work for any input): a 200 x 200 phase diagram (the
#: batched sRF test error: about 170 MB and 5 s of CPU for 40 000 points, measured; docs/theory/checking.md §9).
MAX_POINTS = 40_000


def parse_range(name: str, text: str, *, need_count: bool) -> tuple:
    """``(lo, hi, n, scale)`` of ``text`` (``a:b[:n][:log|lin]``); ``n`` is None when not given."""
    parts = [t.strip() for t in str(text).split(":")]
    scale = None
    if parts and parts[-1] in ("log", "lin"):
        scale = parts.pop()
    allowed = f"a range a:b{':n' if need_count else '[:n]'}[:log|lin] with a < b and n in [1, {MAX_POINTS}]"
    if len(parts) not in (2, 3) or (need_count and len(parts) != 3):
        raise InvalidParameterError(name, text, allowed)
    try:
        lo, hi = (float(to_exact(p, name)) for p in parts[:2])
        n = int(parts[2]) if len(parts) == 3 else None
    except (ValueError, TypeError, InvalidParameterError):
        raise InvalidParameterError(name, text, allowed) from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi) or (n is not None and not 1 <= n <= MAX_POINTS):
        raise InvalidParameterError(name, text, allowed)
    if scale is None:
        scale = "log" if 0 < lo and hi / lo >= 10 else "lin"
    if scale == "log" and lo <= 0:
        raise InvalidParameterError(name, text, "a log range with 0 < a < b")
    return lo, hi, n, scale


def parse_over(spec, *, need_count: bool) -> dict:
    """``{"phi": "0.1:10", …}`` or the text ``"phi=0.1:10,lam=1e-3:10"`` → ``{name: (lo, hi, n, scale)}``."""
    if isinstance(spec, str):
        items = {}
        for part in (p for p in spec.split(",") if p.strip()):
            if "=" not in part:
                raise InvalidParameterError("over", spec, "NAME=RANGE items separated by commas, e.g. lam=1e-3:10")
            k, v = part.split("=", 1)
            items[k.strip()] = v.strip()
        spec = items
    if not isinstance(spec, dict) or not spec:
        raise InvalidParameterError("over", spec, "at least one NAME=RANGE")
    return {k: parse_range(k, v, need_count=need_count) if not isinstance(v, tuple) else v for k, v in spec.items()}


def _map(u, lo, hi, scale) -> str:
    """The point at fraction ``u`` of the range, as an exact decimal string of 12 significant digits (so that
    every path that reads it sees the same exact number)."""
    v = lo * (hi / lo) ** u if scale == "log" else lo + (hi - lo) * u
    return f"{min(max(float(v), lo), hi):.12g}"


def grid_points(over: dict) -> list:
    """The full grid (row-major, the last name fastest) of ``{name: (lo, hi, n, scale)}`` as a list of dicts of
    exact decimal strings."""
    names = list(over)
    axes = []
    for k in names:
        lo, hi, n, scale = over[k]
        axes.append([_map(0.0, lo, hi, scale)] if n == 1 else [_map(u, lo, hi, scale) for u in np.linspace(0, 1, n)])
    total = int(np.prod([len(a) for a in axes]))
    if total > MAX_POINTS:
        raise InvalidParameterError("over", total, f"a grid of at most {MAX_POINTS} points")
    idx = np.indices([len(a) for a in axes]).reshape(len(axes), -1).T
    return [{k: axes[j][i] for j, (k, i) in enumerate(zip(names, row))} for row in idx]


def sample_points(over: dict, n: int, seed: int = 0) -> list:
    """``n`` quasi-random points (scrambled Halton, fixed seed: the same points every run) over the ranges."""
    from scipy.stats import qmc

    if not isinstance(n, int) or not 1 <= n <= MAX_POINTS:
        raise InvalidParameterError("n", n, f"an integer in [1, {MAX_POINTS}]")
    names = list(over)
    u = qmc.Halton(d=len(names), scramble=True, seed=seed).random(n)
    return [{k: _map(u[i, j], over[k][0], over[k][1], over[k][3]) for j, k in enumerate(names)} for i in range(n)]
