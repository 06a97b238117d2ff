"""One registry of the package's caches (docs/theory/numerics.md §7: symbolic builds and rules are cached,
keyed on the expression and the numerical parameters).

Every cache is made with :func:`cached` (an ``functools.lru_cache`` that registers itself) or registered with
:func:`register`; :func:`clear_caches` empties them all — for cold timings in ``benchmarks/`` and after a test
has monkeypatched a rule, so that nothing computed under the patch is served later.
"""

from __future__ import annotations

import functools

__all__ = ["cached", "cached_at_precision", "register", "clear_caches"]

_CLEARERS: list = []


def cached(maxsize: int | None = 128):
    """``functools.lru_cache(maxsize)`` registered with :func:`clear_caches`."""

    def deco(fn):
        wrapped = functools.lru_cache(maxsize=maxsize)(fn)
        _CLEARERS.append(wrapped.cache_clear)
        return wrapped

    return deco


def cached_at_precision(maxsize: int | None = 128):
    """:func:`cached` for a function that computes at the ambient precision and takes none: the key is the
    arguments and the working precision of mpmath and Arb, read from the context (``core.precision``)."""

    def deco(fn):
        @functools.lru_cache(maxsize=maxsize)
        def at(context, *args):              # context: (mpmath's, Arb's) working precision, the key only
            return fn(*args)

        _CLEARERS.append(at.cache_clear)

        @functools.wraps(fn)
        def wrapper(*args):
            import flint      # imported on call: the command line's checks load neither library
            import mpmath

            return at((mpmath.mp.prec, flint.ctx.prec), *args)

        wrapper.cache_clear = at.cache_clear
        return wrapper

    return deco


def register(clear) -> None:
    """Register a callable that empties a hand-made cache (e.g. ``some_dict.clear``)."""
    _CLEARERS.append(clear)


def clear_caches() -> None:
    """Empty every registered cache."""
    for clear in _CLEARERS:
        clear()
