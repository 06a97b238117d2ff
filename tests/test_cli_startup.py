"""Start-up (issue 23): ``import onestep_theory`` and every ``onestep-theory … --help`` load no SymPy, SciPy, NumPy,
mpmath or Arb; the public API is unchanged (lazy attributes, onestep_theory/core/lazy.py).  The times themselves
are measured by benchmarks/bench_startup.py, not here."""

import importlib
import json
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
