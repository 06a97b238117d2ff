"""One registry of the package's caches (docs/theory/numerics.md §7: symbolic builds and rules are cached,
keyed on the expression and the numerical parameters).

Every cache is made with :func:`cached` (an ``functools.lru_cache`` that registers itself) or registered with
:func:`register`; :func:`clear_caches` empties them all — for cold timings in ``benchmarks/`` and after a test
has monkeypatched a rule, so that nothing computed under the patch is served later.
"""

from __future__ import annotations

import functools

__all__ = ["cached", "register", "clear_caches"]

_CLEARERS: list = []


def cached(maxsize: int | None = 128):
    """``functools.lru_cache(maxsize)`` registered with :func:`clear_caches`."""

    def deco(fn):
        wrapped = functools.lru_cache(maxsize=maxsize)(fn)
        _CLEARERS.append(wrapped.cache_clear)
        return wrapped

    return deco


def register(clear) -> None:
    """Register a callable that empties a hand-made cache (e.g. ``some_dict.clear``)."""
    _CLEARERS.append(clear)


def clear_caches() -> None:
    """Empty every registered cache."""
    for clear in _CLEARERS:
        clear()
