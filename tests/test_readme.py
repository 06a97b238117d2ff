"""Every shell command that README.md, docs/theory/checking.md and docs/theory/conventions.md show runs as shown,
in the order written (issue 23): exit status 0 (or the status its comment states: ``check`` exits like diff, 1 when
the formula differs), and valid JSON wherever ``--json`` is given.

The commands run in one temporary folder (so files they write, such as ``curve.csv`` or the study store, are seen by
the commands after them, as a reader's shell would).  The install step of the quick start and the test command are
the CI's own (``.ci/run``); every other line runs.  Slow stage: the whole README takes minutes.
"""

from __future__ import annotations

import json
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "docs" / "theory" / "checking.md", ROOT / "docs" / "theory" / "conventions.md"]


#: A comment stating the exit status a command is shown with (``check`` exits like diff: 1 when it differs).
EXIT = re.compile(r"#.*\bexit status (\d)\b")


def expected_exit(path: pathlib.Path) -> dict:
    """Command line (as words) -> the exit status its comment states (0 when it states none)."""
    out = {}
    for line in path.read_text().splitlines():
        m = EXIT.search(line)
        if m:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
            lexer.whitespace_split, lexer.commenters = True, "#"
            out[tuple(lexer)] = int(m.group(1))
    return out


def shell_commands(path: pathlib.Path) -> list:
    """The command lines of the ```bash blocks of ``path``, comments removed (``#`` outside quotes)."""
    out, inside = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```bash" if not inside else False
            continue
        if not inside:
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
        lexer.whitespace_split, lexer.commenters = True, "#"
        words = list(lexer)
        if words:
            out.append(words)
    return out


def runnable(words: list) -> list | None:
    """The part of a README line that this test runs: `pip install X && CMD` runs CMD; the test command itself
    (`python -m pytest`) is the CI's; everything else as it stands."""
    if "&&" in words:
        words = words[words.index("&&") + 1:]
    if words[:1] == ["pip"] or words[:3] == ["python", "-m", "pytest"]:
        return None
    return words


COMMANDS = [(p.name, w) for p in DOCS for w in (runnable(ws) for ws in shell_commands(p)) if w is not None]
EXPECTED = {k: v for p in DOCS for k, v in expected_exit(p).items()}


def test_the_readme_has_commands_and_no_placeholders():
    assert len(COMMANDS) >= 35
    for _, words in COMMANDS:
        assert words[0] in ("onestep-theory", "python"), words
        assert "..." not in words and not any(w.startswith("[--") for w in words), words


@pytest.mark.slow
def test_every_readme_command_runs_as_shown(tmp_path):
    for source, words in COMMANDS:
        argv = [sys.executable, "-m", "onestep_theory", *words[1:]] if words[0] == "onestep-theory" else \
            [sys.executable, *words[1:]]
        p = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=900)
        want = EXPECTED.get(tuple(words), 0)          # as the line's comment states ("exit status 1": differs)
        assert p.returncode == want, (source, " ".join(words), p.returncode, want, p.stderr[-2000:])
        if "--json" in words:
            json.loads(p.stdout)


@pytest.mark.slow
def test_the_readme_python_block_runs_and_its_exact_comments_hold(tmp_path):
    """The README's Python API block runs as shown (about 20 s); the comments that state exact facts are checked
    against independent references: E[relu He_2]/2! = sqrt(2)/(4 sqrt(pi)), x^6 = 15 He_0 + 45 He_2 + 15 He_4 + He_6,
    alpha = 0.3 lies in the window (1/4, 1/3) of ell = 2, [BES+22] Cor. 8 kappa* = sqrt(3), and the printed Delta_1
    pasted as LaTeX is identical (docs/theory/spike-theory.md §7.1)."""
    import re

    import sympy as sp

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert blocks
    ns: dict = {}
    exec(compile("\n".join(blocks), "README.md", "exec"), ns)      # noqa: S102  (our own README)
    assert sp.simplify(ns["relu"].coeff(2) - sp.sqrt(2) / (4 * sp.sqrt(sp.pi))) == 0
    assert tuple(ns["ot"].he_xi_row(6)) == (15, 0, 45, 0, 15, 0, 1)
    assert ns["window"]("0.3").ell == 2
    assert sp.simplify(ns["tau_star"]("erf(x)", "erf(x)").kappa_exact - sp.sqrt(3)) == 0
    assert ns["c"].verdict.startswith("identical (symbolic proof)")
