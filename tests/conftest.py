import atexit
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import mpmath
import pytest

DATA = pathlib.Path(__file__).parent / "data"

# The disk cache of symbolic builds (onestep_theory/core/caches.py) of the test session, and of the commands it
# runs, lives in a temporary folder, never in the user's cache; removed at exit.
os.environ["ONESTEP_THEORY_CACHE_DIR"] = tempfile.mkdtemp(prefix="onestep-test-cache-")
atexit.register(shutil.rmtree, os.environ["ONESTEP_THEORY_CACHE_DIR"], True)


@pytest.fixture(autouse=True)
def _reset_mpmath_precision():
    """No test may leak mpmath precision (mpmath style: reset around every test)."""
    mpmath.mp.dps = 15
    yield
    leaked = mpmath.mp.dps
    mpmath.mp.dps = 15
    assert leaked == 15, f"global mpmath precision leaked: dps={leaked}"


@pytest.fixture(autouse=True)
def _fresh_caches_after_monkeypatch(request):
    """A test that monkeypatches (e.g. a quadrature rule) must not leave cached results computed under the
    patch for later tests: every package cache is emptied after it, and it runs without the disk cache (which
    would keep them, or serve a build that skips the patched code)."""
    if "monkeypatch" not in request.fixturenames:
        yield
        return
    from onestep_theory.core.caches import clear_caches, disk_cache_off

    with disk_cache_off():
        yield
    clear_caches()


@pytest.fixture(scope="session")
def hermite_ref():
    return json.loads((DATA / "hermite_reference.json").read_text())


def run_cli(*args, timeout=600):
    """Run ``python -m onestep_theory ARGS``; return (returncode, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "onestep_theory", *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def agree(a, b, digits):
    """|a - b| <= 10**-digits * max(1, |b|), evaluated at enough precision."""
    with mpmath.workdps(digits + 15):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        return abs(a - b) <= mpmath.mpf(10) ** (-digits) * max(1, abs(b))


@pytest.fixture
def check_rendered():
    """The check of a result's notebook HTML (tests/test_rendering.py, tests/test_notebook.py)."""
    return _check_rendered


def _check_rendered(html_text):
    """Well-formed HTML (every table closed), no raw JSON and no truncated dump, values shown with their errors."""
    from html.parser import HTMLParser

    class Tags(HTMLParser):
        def __init__(self):
            super().__init__()
            self.stack = []

        def handle_starttag(self, tag, attrs):
            if tag not in ("br", "hr", "img"):          # void elements
                self.stack.append(tag)

        def handle_endtag(self, tag):
            assert self.stack and self.stack.pop() == tag, (tag, self.stack)

    p = Tags()
    p.feed(html_text)
    assert p.stack == [], p.stack
    assert '{"' not in html_text and "': " not in html_text and " ..." not in html_text
