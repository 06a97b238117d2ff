"""The CLI prints what it printed at revision b71f2d1 (issue 34: precision set once, outputs identical before and
after): the README's deterministic commands and the precision paths (srf at float64 and 15/30/50 digits, K-group,
bounds and ``--optimize-eta``, tau-star, spectrum, hermite/gains/resolvent, mapping/cge, sweep, check).

``tests/data/golden_outputs.json`` holds, for each command of ``tests/data/make_golden_outputs.py``, the exit status,
standard output, standard error (without progress lines) and the files written, generated from a frozen worktree of
b71f2d1 in fresh processes.  Here the commands run in process through ``cli.main(argv)`` (each in an empty folder,
the package's caches emptied first, as in a fresh process; see ``make_golden_outputs.run_in_process``).  The
comparison is exact, character for character; only times, dates, versions and temporary paths are masked.  A field
that changes legitimately is regenerated with the script and argued in the commit, never masked.

Default suite: the commands marked fast (about 3 s in all on an idle core).  Slow stage: the others (about 40 s).
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import pathlib
import re
from fractions import Fraction

import pytest
import sympy as sp

DATA = pathlib.Path(__file__).resolve().parent / "data"
GOLDEN = json.loads((DATA / "golden_outputs.json").read_text())
_spec = importlib.util.spec_from_file_location("make_golden_outputs", DATA / "make_golden_outputs.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def differences(want: dict, got: dict, context: int = 1) -> list:
    """Every difference between two records of ``make_golden_outputs.record``: status, and the changed lines of
    stdout, stderr and each written file (unified diff, ``-`` golden, ``+`` now)."""
    out = []
    if want["status"] != got["status"]:
        out.append(f"exit status {want['status']} -> {got['status']}")
    for key in ("stdout", "stderr"):
        if want[key] != got[key]:
            out.append(f"{key}:")
            out += difflib.unified_diff(want[key].splitlines(), got[key].splitlines(), "golden", "now", n=context,
                                        lineterm="")
    for name in sorted(set(want["files"]) | set(got["files"])):
        a, b = want["files"].get(name), got["files"].get(name)
        if a != b:
            out.append(f"file {name}:")
            out += difflib.unified_diff((a or "<absent>").splitlines(), (b or "<absent>").splitlines(), "golden",
                                        "now", n=context, lineterm="")
    return out


def _cases(fast: bool) -> list:
    return [pytest.param(e, id=" ".join(e["argv"])[:80], marks=() if fast else pytest.mark.slow)
            for e in GOLDEN["commands"] if e["fast"] == fast]


#: The '#' lines that issue 35 (item 3) puts at the head of every CSV: the context of tests/test_output_context.py.
_CONTEXT = re.compile(r"# (onestep_theory <VERSION>|command: |parameters: |defaults: |method: |provenance: |run: )")


def without_context(want: dict, got: dict) -> dict:
    """``got`` without what issue 35 added on purpose (tested in tests/test_output_context.py), so that every printed
    result is still compared with the frozen revision: the '#' context lines at the head of a CSV (standard output
    and files), the ``"input"`` block of ``--json`` (and a sweep's ``"grid"`` as typed), and a
    top-level JSON field that echoes a typed number as typed (``"alpha0": "20"``) where the frozen output printed
    that number correctly rounded (``"20.000…"``): that field is compared by value, to the last printed digit."""
    def strip(text):
        lines = text.splitlines(keepends=True)
        k = 0
        while k < len(lines) and _CONTEXT.match(lines[k]):
            k += 1
        return "".join(lines[k:])

    stdout = strip(got["stdout"])
    try:
        now, before = json.loads(stdout), json.loads(want["stdout"])
    except ValueError:
        now = None
    if isinstance(now, dict) and isinstance(now.get("input"), dict) and "command" in now["input"]:
        typed = now.pop("input")["parameters"]
        if isinstance(before, dict) and "grid" not in before:
            now.pop("grid", None)               # a sweep's grid as typed (SweepResult.grid)
        for k, v in typed.items():
            old = before.get(k) if isinstance(before, dict) else None
            if isinstance(old, str) and now.get(k) == v != old and re.fullmatch(r"-?\d+\.\d*", old):
                exact = Fraction(sp.Rational(sp.sympify(v)).p, sp.Rational(sp.sympify(v)).q)
                if abs(Fraction(old) - exact) <= Fraction(1, 2 * 10 ** len(old.split(".")[1])):
                    now[k] = old                # the typed number, printed correctly rounded before
        stdout = json.dumps(now, indent=2) + "\n"
    return dict(got, stdout=stdout, files={n: strip(t) for n, t in got["files"].items()})


def _check(entry: dict):
    got, _ = gen.run_in_process(entry["argv"])
    diff = differences(entry, without_context(entry, got))
    assert not diff, "onestep-theory " + " ".join(entry["argv"]) + "\n" + "\n".join(diff[:80])


def test_the_golden_file_is_the_generators_and_covers_the_precision_paths():
    """The stored commands are the generator's (same words, same split fast/slow), from the frozen revision, and
    they reach every precision path of issue 34 at 15, 30 and 50 digits."""
    assert GOLDEN["revision"] == "b71f2d1"
    assert [(e["fast"], e["argv"]) for e in GOLDEN["commands"]] == [(f, list(w)) for f, w in gen.COMMANDS]
    words = [" ".join(e["argv"]) for e in GOLDEN["commands"]]
    for command in ("srf", "hermite", "resolvent", "gains"):
        for d in ("15", "30", "50"):
            assert any(w.startswith(command + " ") and f"--dps {d}" in w for w in words), (command, d)
    assert any(w.startswith("srf ") and "--dps" not in w for w in words)            # float64
    for needle in ("--readout 1:0.5,2:0.5", "--optimize-eta", "tau-star", "spectrum", "sweep", "check", "cge"):
        assert any(needle in w for w in words), needle
    assert all(e["status"] in (0, 1) for e in GOLDEN["commands"])          # no error was frozen as the answer


def test_the_comparison_sees_one_digit_and_the_masks_hide_no_result():
    """A one-digit change in a printed value is reported with its line; the masks replace times, versions, dates and
    paths and leave every other number as printed."""
    entry = next(e for e in GOLDEN["commands"] if e["argv"][:1] == ["resolvent"])
    line = next(ln for ln in entry["stdout"].splitlines() if any(c.isdigit() for c in ln))
    i = max(k for k, c in enumerate(line) if c.isdigit())
    changed = line[:i] + str((int(line[i]) + 1) % 10) + line[i + 1:]
    got = dict(entry, stdout=entry["stdout"].replace(line, changed, 1))
    assert differences(entry, got) == ["stdout:", "--- golden", "+++ now"] + differences(entry, got)[3:]
    assert "-" + line in differences(entry, got, context=0) and "+" + changed in differences(entry, got, context=0)
    assert gen.mask('"seconds": "1.25", "version": "0.2.0", "test_error": "1.25"', "") == \
        '"seconds": "<T>", "version": "<VERSION>", "test_error": "1.25"'
    assert gen.mask("# 5 point(s) in 1.0 s; 0.0416 +- 1.0e-16, 3 s", "") == "# 5 point(s) in <T>; 0.0416 +- 1.0e-16, 3 s"
    assert gen.mask("at 2026-11-27T18:36:17Z: 0.5", "") == "at <DATE>: 0.5"
    assert gen.mask_stderr("note: x = 0.5\nsaddle point: level 2/5 (3.7 s)  \n", "") == "note: x = 0.5"


@pytest.mark.parametrize("entry", _cases(fast=True))
def test_fast_command_prints_what_it_printed(entry):
    _check(entry)


@pytest.mark.parametrize("entry", _cases(fast=False))
def test_slow_command_prints_what_it_printed(entry):
    _check(entry)


#: Commands run twice on one disk cache of symbolic builds: the second (warm) run must print the same digits.
WARM = [["hermite", "tanh", "--kmax", "6", "--dps", "30"],
        ["gains", "--student", "tanh", "--teacher", "He1", "--phi", "1", "--psi", "2", "--lam", "0.5", "--ell", "1",
         "--dps", "30", "--json"],
        ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "1", "--beta",
         "1", "--lam", "1/10", "--dps", "15"]]


@pytest.mark.slow
def test_a_warm_disk_cache_prints_the_same(tmp_path):
    """The disk cache of symbolic builds (issue 35) changes speed, never a printed digit: the same command cold,
    then warm on the same cache folder (the cold run is compared with the golden outputs above)."""
    for words in WARM:
        cold, _ = gen.run_in_process(words, str(tmp_path))
        warm, _ = gen.run_in_process(words, str(tmp_path))
        diff = differences(cold, warm)
        assert not diff, "onestep-theory " + " ".join(words) + " (cold -> warm)\n" + "\n".join(diff[:80])
