"""The disk cache of symbolic builds (onestep_theory/core/caches.py, issue 35 item 4): a hit is exactly the fresh
build, a corrupt or tampered entry is rebuilt, ``--no-cache`` and ``ONESTEP_THEORY_NO_CACHE`` write nothing,
concurrent processes are safe, another version invalidates, an unwritable folder costs nothing but time.

These tests set the environment themselves (no ``monkeypatch``: tests/conftest.py runs a test that monkeypatches
without the disk cache)."""

import json
import os
import pathlib
import subprocess
import sys

import mpmath
import pytest
import sympy as sp

import onestep_theory
from onestep_theory.core import caches
from onestep_theory.core.caches import clear_caches, disk_cached
from onestep_theory.hermite.expressions import x

ENV_DIR, ENV_OFF = caches.ENV_DIR, caches.ENV_OFF


@pytest.fixture
def cache_dir(tmp_path):
    """A fresh, enabled disk cache in ``tmp_path/cache`` (the environment restored afterwards)."""
    saved = {k: os.environ.get(k) for k in (ENV_DIR, ENV_OFF)}
    folder = tmp_path / "cache"
    os.environ[ENV_DIR] = str(folder)
    os.environ.pop(ENV_OFF, None)
    yield folder
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def entries(folder) -> list:
    d = pathlib.Path(folder) / "symbolic"
    return sorted(d.glob("*.json")) if d.exists() else []


CALLS = []


@disk_cached("test_disk_cache.build")
def build(e, k):
    """A symbolic build that counts its calls (a hit does not call it)."""
    CALLS.append((e, k))
    return sp.expand((e + 1) ** k), "expanded", k, None


def stored_values(folder) -> list:
    return [caches._decode(json.loads(p.read_text())["value"]) for p in entries(folder)]


def test_hit_is_the_fresh_build_for_the_engines_closed_forms(cache_dir):
    """E sin(a + sZ), an exact moment, a centred coefficient, pieces, and a numeric bundle (mpf bit for bit): the
    build of an empty cache is stored, and read back (the process cache emptied) identical."""
    from onestep_theory.hermite.activation import _coeff_exact
    from onestep_theory.hermite.expressions import pieces
    from onestep_theory.hermite.moments import _bundle, moment_exact
    from onestep_theory.srf.features.smoothing import smoothing_closed_form

    cases = [(smoothing_closed_form, (sp.sin(x),)), (moment_exact, (sp.sin(x) + x**3 / 7, 3)),
             (_coeff_exact, (sp.Max(x, 0), True, 2)), (pieces, (sp.Abs(x - sp.Rational(1, 3)),))]
    for fn, args in cases:
        clear_caches()
        fresh = fn(*args)                               # built (the disk is empty for it) and stored
        n = len(entries(cache_dir))
        assert fresh in stored_values(cache_dir)
        clear_caches()
        hit = fn(*args)                                 # from the disk: the process cache is empty
        assert len(entries(cache_dir)) == n
        assert hit == fresh and sp.srepr(hit) == sp.srepr(fresh), fn.__name__
    cf = smoothing_closed_form(sp.sin(x))
    a, s = sorted(cf[0].free_symbols, key=str)
    assert sp.simplify(cf[0] - sp.exp(-s**2 / 2) * sp.sin(a)) == 0     # the closed form itself, independently
    with mpmath.workdps(60):                            # c_1 of tanh, E[Z tanh Z], by mpmath's own quadrature
        ref = mpmath.quad(lambda t: t * mpmath.tanh(t) * mpmath.npdf(t), [-mpmath.inf, 0, mpmath.inf])
    for prec in (53, 153):
        with mpmath.workprec(prec):
            fresh = _bundle(sp.tanh(x), 3)
            hit = caches._decode(caches._encode(fresh))
            clear_caches()
            again = _bundle(sp.tanh(x), 3)
        assert [v._mpf_ for v in again] == [v._mpf_ for v in hit] == [v._mpf_ for v in fresh]
        assert abs(fresh[1] - ref) < mpmath.mpf(2) ** (-prec / 2)


def test_corrupt_partial_and_tampered_entries_are_rebuilt(cache_dir, tmp_path):
    CALLS.clear()
    want = build(x, 3)
    assert build(x, 3) == want and len(CALLS) == 1                          # a hit: no second build
    (path,) = entries(cache_dir)
    text = path.read_text()
    marker = tmp_path / "ran"
    evil = json.loads(text)
    evil["value"] = {"t": [{"e": f"__import__('os').system('touch {marker}')"}, "x", {"i": "3"}, None]}
    evil2 = json.loads(text)                  # a string SymPy would sympify, i.e. parse and evaluate as Python
    evil2["value"] = {"t": [{"e": f"sin('__import__(\"os\").system(\"touch {marker}\")')"}, "x", {"i": "3"}, None]}
    for bad in (text[: len(text) // 2], "", "{not json", json.dumps(evil), json.dumps(evil2)):
        path.write_text(bad)
        assert build(x, 3) == want
        assert json.loads(path.read_text())["value"] == json.loads(text)["value"]     # rewritten whole
    assert len(CALLS) == 6 and not marker.exists()


def test_no_cache_flag_and_environment_write_nothing(cache_dir):
    from onestep_theory.cli.main import main

    argv = ["hermite", "x**3/11 + x", "--kmax", "2"]
    with caches.disk_cache_off():
        CALLS.clear()
        build(x, 2)
        build(x, 2)
    assert len(CALLS) == 2 and entries(cache_dir) == []
    clear_caches()
    assert main(["--no-cache", *argv]) == 0 and entries(cache_dir) == []
    assert os.environ.get(ENV_OFF) is None                                  # restored after the command
    clear_caches()
    assert main([*argv, "--no-cache"]) == 0 and entries(cache_dir) == []
    clear_caches()
    os.environ[ENV_OFF] = "1"
    assert main(argv) == 0 and entries(cache_dir) == []
    del os.environ[ENV_OFF]
    clear_caches()
    assert main(argv) == 0 and len(entries(cache_dir)) > 0                  # the control: it does write


WRITER = """
import sys, sympy as sp
from onestep_theory.core.caches import disk_cached
x = sp.Symbol("x", real=True)

@disk_cached("test_disk_cache.concurrent")
def f(k):
    return sp.expand((x + sp.Rational(1, 3)) ** k) * sp.exp(-x / k), k

for rnd in range(2):
    for k in range(1, 25):
        assert f(k) == (sp.expand((x + sp.Rational(1, 3)) ** k) * sp.exp(-x / k), k), k
"""


def test_concurrent_processes(cache_dir):
    """Two processes write and read the same 24 entries at once: every value they read is right, every entry
    left is whole, no temporary file is left."""
    env = {**os.environ, ENV_DIR: str(cache_dir)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len(entries(cache_dir)) == 24 and not list((cache_dir / "symbolic").glob(".tmp-*"))
    values = stored_values(cache_dir)
    assert sorted(v[1] for v in values) == list(range(1, 25))


def test_dummy_symbols_are_never_stored(cache_dir):
    """A Dummy's identity is its process's counter: a stored one would equal another process's unrelated Dummy."""
    CALLS.clear()
    d = sp.Dummy("t")
    build(d, 2)
    build(d, 2)
    assert len(CALLS) == 2 and entries(cache_dir) == []


def test_another_version_does_not_read_the_entries(cache_dir):
    saved = onestep_theory.__version__
    CALLS.clear()
    build(x + 2, 2)
    try:
        onestep_theory.__version__ = saved + ".post1"
        caches._STATE["files"].clear()
        build(x + 2, 2)
        assert len(CALLS) == 2 and len(entries(cache_dir)) == 2
    finally:
        onestep_theory.__version__ = saved
        caches._STATE["files"].clear()
    build(x + 2, 2)
    assert len(CALLS) == 2


def test_unwritable_folder_still_works_silently(cache_dir, tmp_path, capfd):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    os.environ[ENV_DIR] = str(blocker / "cache")            # below a file: no folder can be made
    CALLS.clear()
    assert build(x - 1, 2) == build(x - 1, 2) == (sp.expand(x**2), "expanded", 2, None)
    assert len(CALLS) == 2
    assert capfd.readouterr() == ("", "")
    caches._STATE["unwritable"].discard(str(blocker / "cache" / "symbolic"))


def test_bounded_size(cache_dir):
    saved = caches.MAX_ENTRIES, caches.PRUNE_EVERY
    try:
        caches.MAX_ENTRIES, caches.PRUNE_EVERY = 8, 1
        for k in range(20):
            build(x, k)
        assert 0 < len(entries(cache_dir)) <= 8
        CALLS.clear()
        build(x, 19)
        assert CALLS == []                                              # the newest is kept
    finally:
        caches.MAX_ENTRIES, caches.PRUNE_EVERY = saved


def test_default_folder_is_the_users_cache_directory():
    saved = {k: os.environ.get(k) for k in (ENV_DIR, "XDG_CACHE_HOME")}
    try:
        os.environ.pop(ENV_DIR, None)
        os.environ["XDG_CACHE_HOME"] = "/somewhere/cache"
        if sys.platform.startswith("linux"):
            assert caches.disk_cache_dir() == pathlib.Path("/somewhere/cache/onestep_theory")
            os.environ["XDG_CACHE_HOME"] = "relative/ignored"
            assert caches.disk_cache_dir() == pathlib.Path.home() / ".cache" / "onestep_theory"
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_srf_loads_only_the_rooms_it_uses():
    """Start-up (issue 35): ``from onestep_theory.srf import srf_solve`` loads neither the grouped, optimal nor
    spectral rooms; an old module path imported before a public name of the same spelling does not hide it."""
    code = ("import sys, warnings; from onestep_theory.srf import srf_solve; "
            "print(sorted({m.split('.')[2] for m in sys.modules if m.startswith('onestep_theory.srf.')})); "
            "warnings.simplefilter('ignore'); import importlib; importlib.import_module('onestep_theory.srf.' + "
            "'bounds'); import onestep_theory.srf as s; "
            "print(callable(s.bounds), type(s.bounds).__name__, s.spectrum.__module__)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rooms, public = p.stdout.splitlines()
    assert rooms == "['features', 'loss', 'single']"
    assert public == "True function onestep_theory.srf.spectral.spectrum"
