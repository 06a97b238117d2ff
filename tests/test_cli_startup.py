"""Start-up (issue 23): ``import onestep_theory`` and every ``onestep-theory … --help`` load no SymPy, SciPy, NumPy,
mpmath or Arb; the public API is unchanged (lazy attributes, onestep_theory/core/lazy.py).  The times themselves
are measured by benchmarks/bench_startup.py, not here."""

import importlib
import json
import os
import subprocess
import sys

import pytest

import onestep_theory
from onestep_theory.cli.main import COMMAND_INDEX, build_parser

HEAVY = ("sympy", "scipy", "numpy", "mpmath", "flint", "matplotlib", "pandas", "distributed")

_PROBE = """
import json, sys
heavy = {heavy!r}
loaded = lambda: sorted({{m.split('.')[0] for m in sys.modules}} & set(heavy))
out = {{}}
import onestep_theory
out['import onestep_theory'] = loaded()
from onestep_theory.cli.main import COMMAND_INDEX, main
for argv in [['--help'], ['--version']] + [[c, '--help'] for c in COMMAND_INDEX]:
    code = main(argv)
    out[' '.join(argv)] = loaded() if code == 0 else 'exit %s' % code
print(json.dumps(out))
"""


def test_help_and_import_load_no_numerical_library():
    p = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(out) == len(COMMAND_INDEX) + 3
    assert {k: v for k, v in out.items() if v != []} == {}


def test_command_index_is_the_modules_own_table():
    """COMMAND_INDEX (what --help lists without importing) names every command of every command module, with the
    module's own help line, in the modules' order."""
    seen = {}
    for name, (module, help_text) in COMMAND_INDEX.items():
        mod = importlib.import_module(f"onestep_theory.cli.{module}")
        assert name in mod.COMMANDS and mod.COMMANDS[name][0] == help_text, name
        seen.setdefault(module, []).append(name)
    for module, names in seen.items():
        assert list(importlib.import_module(f"onestep_theory.cli.{module}").COMMANDS) == names
    full = build_parser()          # every command's arguments: each setup runs once, without error
    sub = next(a for a in full._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMAND_INDEX)


def test_study_protocol_names_are_the_protocols():
    from onestep_theory.cli.study import PROTOCOL_NAMES
    from onestep_theory.study import PROTOCOLS

    assert PROTOCOL_NAMES == tuple(PROTOCOLS)


@pytest.mark.parametrize("package", ["onestep_theory", "onestep_theory.core"])
def test_lazy_public_names_resolve_to_their_homes(package):
    pkg = importlib.import_module(package)
    for name in pkg.__all__:
        value = getattr(pkg, name)
        assert value is not None, name
        if hasattr(value, "__module__") and callable(value):
            assert getattr(importlib.import_module(value.__module__), getattr(value, "__name__", name), value) is value
    assert set(pkg.__all__) <= set(dir(pkg))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        pkg.no_such_name   # noqa: B018


def test_star_import_and_submodules():
    ns = {}
    exec("from onestep_theory import *", ns)
    assert set(onestep_theory.__all__) <= set(ns)
    from onestep_theory.srf.single.solve import srf_solve

    assert ns["srf_solve"] is srf_solve is onestep_theory.srf_solve
    assert onestep_theory.study.run_study is importlib.import_module("onestep_theory.study.run").run_study
    import onestep_theory.core.precision as prec

    assert onestep_theory.core.precision is prec and onestep_theory.precision is prec.precision


def test_heartbeat_shows_elapsed_time_and_clears_its_line(capsys):
    """Issue 23: a theory command that runs longer than 2 s shows that it works (on a terminal; here forced on with
    short times), and leaves no trace when it ends; off, it prints nothing."""
    import time

    from onestep_theory.cli.main import Heartbeat

    with Heartbeat("onestep-theory srf", True, after=0.05, every=0.05):
        time.sleep(0.4)
    err = capsys.readouterr().err
    assert "onestep-theory srf: working (0 s)" in err and err.endswith("\r") and err.rstrip("\r").endswith(" ")
    with Heartbeat("onestep-theory srf", False, after=0.0, every=0.01):
        time.sleep(0.1)
    assert capsys.readouterr().err == ""
    with Heartbeat("quick", True, after=5.0):      # ends before it is due: nothing shown
        pass
    assert capsys.readouterr().err == ""


def test_srf_start_loads_no_store_no_thread_pool_no_physics(tmp_path):
    """Issue 35 item 4: a repeated cold ``srf`` (its symbolic builds in the disk cache) loads neither SQLite (the
    results store: the CLI catches its errors only where it was loaded), threadpoolctl (the batched grids pin BLAS
    with it when they run) nor sympy.physics (SymPy's ``simplify`` of a build from scratch)."""
    probe = ("import io, json, sys, contextlib\nfrom onestep_theory.cli.main import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n    code = main(sys.argv[1:])\n"
             "print(json.dumps([code, out.getvalue(), sorted(m for m in sys.modules if m.split('.')[0] in "
             "('sqlite3', '_sqlite3', 'threadpoolctl') or m.startswith('sympy.physics'))]))")
    argv = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "1", "--beta",
            "1", "--lam", "1/10"]
    env = {**os.environ, "ONESTEP_THEORY_CACHE_DIR": str(tmp_path)}
    env.pop("ONESTEP_THEORY_NO_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=300, env=env)
            for _ in range(2)]           # the first fills the disk cache, the second starts as a user's repeated call
    assert all(p.returncode == 0 for p in runs), runs[-1].stderr[-2000:]
    (code1, text1, _), (code2, text2, loaded) = (json.loads(p.stdout.strip().splitlines()[-1]) for p in runs)
    assert code1 == code2 == 0 and "test error eps_g" in text2 and text1 == text2
    assert loaded == []
