"""Every derivations/ script must run and exit 0 (each prints its conclusion)."""

import pathlib
import subprocess
import sys

import pytest

SCRIPTS = sorted((pathlib.Path(__file__).parents[1] / "derivations").glob("*.py"))


@pytest.mark.slow        # eleven subprocesses, about 55 s: the slow stage (CI runs it at every stop)
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_derivation_script(script):
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "CONCLUSION" in p.stdout
