"""One registry of the package's caches (docs/theory/numerics.md §7: symbolic builds and rules are cached,
keyed on the expression and the numerical parameters).

Every cache is made with :func:`cached` (an ``functools.lru_cache`` that registers itself) or registered with
:func:`register`; :func:`clear_caches` empties them all — for cold timings in ``benchmarks/`` and after a test
has monkeypatched a rule, so that nothing computed under the patch is served later.

Symbolic builds that are the same at every call (closed forms, exact moments, pieces) are also kept on disk
across processes by :func:`disk_cached` (issue 35: a cold start near the import floor of the libraries), in
:func:`disk_cache_dir`; ``--no-cache`` or ``ONESTEP_THEORY_NO_CACHE=1`` turns that off (then every build is made
in the process, as :func:`clear_caches` followed by a run with ``ONESTEP_THEORY_NO_CACHE=1`` measures).
"""

from __future__ import annotations

import functools
import json
import os
import pathlib

__all__ = ["cached", "cached_at_precision", "register", "clear_caches", "disk_cached", "disk_cache_dir",
           "disk_cache_enabled", "disk_cache_off"]

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


# --------------------------------------------------------------------------- the disk cache of symbolic builds
#: Environment: the cache folder (default: the user's cache directory), and a switch that turns the cache off.
ENV_DIR, ENV_OFF = "ONESTEP_THEORY_CACHE_DIR", "ONESTEP_THEORY_NO_CACHE"
#: Bounds: entries and bytes in the folder (the oldest used are deleted beyond them), the size of one entry.
MAX_ENTRIES, MAX_BYTES, MAX_ENTRY_BYTES = 4096, 64 << 20, 256 << 10
#: The folder is measured (and pruned) at a process's first write and then every PRUNE_EVERY writes.
PRUNE_EVERY = 32
_MISS = object()
_STATE: dict = {"files": {}, "unwritable": set(), "names": None, "writes": 0}


def disk_cache_dir():
    """The folder of the disk cache (a ``pathlib.Path``; it may not exist yet): ``$ONESTEP_THEORY_CACHE_DIR``,
    else the user's cache directory (the convention of platformdirs) — ``$XDG_CACHE_HOME/onestep_theory`` or
    ``~/.cache/onestep_theory`` (Linux), ``~/Library/Caches/onestep_theory`` (macOS),
    ``%LOCALAPPDATA%\\onestep_theory\\Cache`` (Windows).  Deleting it is always safe."""
    import sys

    if os.environ.get(ENV_DIR):
        return pathlib.Path(os.environ[ENV_DIR]).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or pathlib.Path.home() / "AppData" / "Local"
        return pathlib.Path(base) / "onestep_theory" / "Cache"
    if sys.platform == "darwin":
        return pathlib.Path.home() / "Library" / "Caches" / "onestep_theory"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return pathlib.Path(xdg if os.path.isabs(xdg) else pathlib.Path.home() / ".cache") / "onestep_theory"


def disk_cache_enabled() -> bool:
    """False when ``$ONESTEP_THEORY_NO_CACHE`` is set to anything but ``""``/``0`` (``--no-cache`` sets it)."""
    return os.environ.get(ENV_OFF, "").strip().lower() in ("", "0", "false", "no")


class disk_cache_off:
    """Context manager: no disk cache inside (``onestep-theory --no-cache``); through the environment, so that
    worker processes started inside inherit it.  ``disk_cache_off(False)`` changes nothing."""

    def __init__(self, off: bool = True):
        self.off = off

    def __enter__(self):
        self.saved = os.environ.get(ENV_OFF)
        if self.off:
            os.environ[ENV_OFF] = "1"
        return self

    def __exit__(self, *exc):
        if self.off:
            if self.saved is None:
                os.environ.pop(ENV_OFF, None)
            else:
                os.environ[ENV_OFF] = self.saved
        return False


def _fingerprint(module_file: str) -> str:
    """What an entry is valid for: the versions of the package and of SymPy, mpmath (and its backend),
    python-flint and NumPy, and the source of the engine (``hermite/``, ``core/exact.py``, ``core/syntax.py``,
    ``core/precision.py``, this module) and of the module of the cached function — an edited checkout (an editable
    install keeps its version) never reads an entry of other code."""
    import hashlib

    import flint
    import mpmath
    import numpy
    import sympy

    from .. import __version__

    files = _STATE["files"]
    if module_file not in files:
        if None not in files:           # the common part, once per process
            pkg = pathlib.Path(__file__).resolve().parent.parent
            paths = sorted(pkg.glob("hermite/*.py")) + [pkg / "core" / n for n in ("exact.py", "syntax.py",
                                                                                      "caches.py", "precision.py")]
            h = hashlib.sha256(f"onestep_theory {__version__} sympy {sympy.__version__} mpmath {mpmath.__version__} "
                               f"python-flint {flint.__version__} numpy {numpy.__version__} "
                               f"{mpmath.libmp.BACKEND}\n".encode())
            for p in paths:
                h.update(_source(p))
            files[None] = h.hexdigest()
        files[module_file] = hashlib.sha256((files[None] + "\n").encode() + _source(module_file)).hexdigest()
    return files[module_file]


def _source(path) -> bytes:

    try:
        return pathlib.Path(path).read_bytes()
    except OSError:
        return f"missing {path}".encode()


def _encode(v):
    """A value as JSON-able data: None, bool, int, str, tuples of these, SymPy objects (as ``srepr``) and mpmath
    reals (their exact binary ``(sign, mantissa, exponent, bits)``)."""
    import mpmath
    import sympy

    if isinstance(v, mpmath.mpf):
        sign, man, exp, bc = v._mpf_
        return {"f": [sign, hex(man), exp, bc]}
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return {"i": str(v)}
    if isinstance(v, tuple):
        return {"t": [_encode(u) for u in v]}
    if isinstance(v, sympy.Basic):
        if v.atoms(sympy.Dummy, sympy.Wild):     # their identity is the process's: never across processes
            raise TypeError("a Dummy or Wild symbol")
        return {"e": sympy.srepr(v)}
    raise TypeError(f"not cacheable on disk: {type(v).__name__}")


def _sympy_names() -> dict:
    """The names an ``srepr`` may use: SymPy's classes and singletons (no functions, no attributes)."""
    if _STATE["names"] is None:
        import sympy
        from sympy.functions.elementary.piecewise import ExprCondPair

        names = {n: v for n, v in vars(sympy).items() if not n.startswith("_") and (
            isinstance(v, type) and issubclass(v, sympy.Basic) or isinstance(v, sympy.Basic))}
        names["ExprCondPair"] = ExprCondPair
        _STATE["names"] = names
    return _STATE["names"]


def _build(node, names):
    """The SymPy object of an ``srepr`` syntax tree, built from a whitelist: calls of SymPy classes with numbers or
    nested calls as arguments (a string only as a Symbol's name or a Float's digits), SymPy singletons, unary minus.
    Anything else raises ``ValueError``: no code runs, nothing is parsed."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, (int, str, bool)):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _build(node.operand, names)
        if isinstance(v, type):
            raise ValueError("minus a class")
        return -v
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
        args = [_build(a, names) for a in node.args]
        # a string only as the name of a Symbol or the digits of a Float: elsewhere SymPy would sympify (parse) it
        if any(isinstance(a, str) and (i or node.func.id not in ("Symbol", "Float")) for i, a in enumerate(args)):
            raise ValueError("a string argument")
        if node.func.id == "Pow" and all(isinstance(a, int) or getattr(a, "is_Integer", False) for a in args) \
                and abs(int(args[1])) > 4096:
            raise ValueError("a huge integer power")      # bounded work even for a tampered entry
        kw = {k.arg: _build(k.value, names) for k in node.keywords if k.arg}
        if len(kw) != len(node.keywords) or not all(isinstance(v, int) for v in kw.values()):
            raise ValueError("keyword arguments")
        return names[node.func.id](*args, **kw)
    raise ValueError(f"not an srepr node: {type(node).__name__}")


def _decode(d):
    import ast

    if d is None or isinstance(d, (bool, str)):
        return d
    if isinstance(d, dict) and len(d) == 1:
        (tag, v), = d.items()
        if tag == "i":
            return int(v)
        if tag == "t":
            return tuple(_decode(u) for u in v)
        if tag == "e":
            return _build(ast.parse(v, mode="eval").body, _sympy_names())
        if tag == "f":
            import mpmath

            sign, man, exp, bc = v
            return mpmath.mp.make_mpf((int(sign), mpmath.libmp.MPZ(int(man, 16)), int(exp), int(bc)))
    raise ValueError("not an entry")


def _same(a, b) -> bool:
    """Identical values: equal, and for mpmath reals the same binary representation."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    if type(a) is not type(b):
        return False
    return a._mpf_ == b._mpf_ if hasattr(a, "_mpf_") else bool(a == b)


def _entry(key: str, module_file: str):
    import hashlib

    fp = _fingerprint(module_file)
    folder = disk_cache_dir() / "symbolic"
    return folder, folder / (hashlib.sha256(f"{fp}\n{key}".encode()).hexdigest()[:40] + ".json"), fp


def _read(path, fp: str, key: str):
    """The value stored under ``key``, or ``_MISS`` (no entry; a partial, corrupt or foreign one is a miss)."""
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        if d.get("fp") != fp or d.get("key") != key:
            return _MISS
        value = _decode(d["value"])
    except Exception:  # noqa: BLE001  (no entry, unreadable, truncated, tampered: rebuilt and rewritten)
        return _MISS
    try:
        os.utime(path)                   # last use, for the pruning
    except OSError:
        pass
    return value


def _write(folder, path, fp: str, key: str, value) -> None:
    """Store ``value`` atomically (a temporary file, then ``os.replace``), only if it reads back equal; never
    raises — an unwritable folder is not tried again by the process, silently."""
    import tempfile

    if str(folder) in _STATE["unwritable"]:
        return
    try:
        data = _encode(value)
        if not _same(_decode(data), value):
            return
        text = json.dumps({"fp": fp, "key": key, "value": data})
    except Exception:  # noqa: BLE001  (not representable: computed every time)
        return
    if len(text) > MAX_ENTRY_BYTES:
        return
    tmp = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        tmp = None
        _STATE["writes"] += 1
        if _STATE["writes"] % PRUNE_EVERY == 1 % PRUNE_EVERY:
            _prune(folder)
    except OSError:
        _STATE["unwritable"].add(str(folder))
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _prune(folder) -> None:
    """Keep the folder within :data:`MAX_ENTRIES` and :data:`MAX_BYTES`: the least recently used entries go first
    (down to three quarters); temporary files of writers that died go after an hour."""
    import time

    entries, now = [], time.time()
    with os.scandir(folder) as it:
        for e in it:
            try:
                st = e.stat()
            except OSError:
                continue
            if e.name.startswith(".tmp-"):
                if now - st.st_mtime > 3600:
                    _unlink(e.path)
                continue
            entries.append((st.st_mtime, st.st_size, e.path))
    size = sum(s for _, s, _ in entries)
    if len(entries) <= MAX_ENTRIES and size <= MAX_BYTES:
        return
    entries.sort()
    while entries and (len(entries) > MAX_ENTRIES * 3 // 4 or size > MAX_BYTES * 3 // 4):
        _, s, p = entries.pop(0)
        size -= s
        _unlink(p)


def _unlink(path) -> None:

    try:
        os.unlink(path)
    except OSError:
        pass


def disk_cached(name: str, *, at_precision: bool = False):
    """Cache a symbolic build on disk (docs/theory/numerics.md §7), under :func:`cached` for the process.

    For functions of SymPy objects, ints, bools and strings (and tuples of these) whose value is of the same kinds
    and depends on nothing else: the same at every call, e.g. the closed form of E sin(a + sZ).  An entry is keyed
    on ``name``, the arguments' ``srepr`` and :func:`_fingerprint` (package and SymPy versions, source), is JSON
    with the value's ``srepr`` — read back by a whitelist of SymPy classes, never ``eval`` nor ``pickle``, so a
    tampered entry cannot run code — and is written only if it reads back equal to the value (a hit is exactly
    the fresh build).  Off with ``--no-cache`` or ``ONESTEP_THEORY_NO_CACHE=1``; safe with concurrent processes
    (atomic replace; a partial or corrupt entry is a miss, rebuilt); bounded (:data:`MAX_ENTRIES`,
    :data:`MAX_BYTES`); an unwritable folder only costs the time.  ``at_precision``: a function that computes at
    the ambient precision (as :func:`cached_at_precision`): the working precisions of mpmath and Arb join the key.
    """


    def deco(fn):
        module_file = fn.__code__.co_filename

        @functools.wraps(fn)
        def wrapper(*args):
            if not disk_cache_enabled():
                return fn(*args)
            try:
                key = f"{name}\n{json.dumps(_encode(args))}"
                if at_precision:
                    import flint
                    import mpmath

                    key += f"\nprec {mpmath.mp.prec} {flint.ctx.prec}"
            except TypeError:
                return fn(*args)
            folder, path, fp = _entry(key, module_file)
            value = _read(path, fp, key)
            if value is _MISS:
                value = fn(*args)
                _write(folder, path, fp, key, value)
            return value

        return wrapper

    return deco
