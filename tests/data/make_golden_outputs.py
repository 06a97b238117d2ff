"""Golden outputs of the CLI (issue 34): what the README's commands and the precision paths print, frozen.

What: runs every command of ``COMMANDS`` below in a fresh ``python -m onestep_theory`` process, each in an empty
temporary folder, and writes ``tests/data/golden_outputs.json``: for each command its words, its exit status, its
standard output, its standard error and the text files it wrote (``--csv``), with the masks of ``mask`` applied.
``tests/test_golden_outputs.py`` runs the same commands and compares, character for character, after setting aside
what issue 35 added on purpose to every output (``comparable``).  ``--refreeze WORDS --reason TEXT --revision REV``
reruns only the stored commands containing WORDS (an output that changed legitimately: the entry keeps the
revision, the reason and its diff from before, under ``refrozen``).

Why: issue 34 (precision set once) moves how ``dps`` is threaded through the srf layer; its "Done when" requires the
printed outputs of the README commands to be identical before and after.  The stored file was generated from
revision b71f2d1 (the revision before that refactoring), from a frozen worktree of it, by this script run from a
folder where the editable install does not shadow the worktree:

    git worktree add /tmp/golden_base b71f2d1
    cd /tmp && PYTHONPATH=/tmp/golden_base python /work/main/tests/data/make_golden_outputs.py

(the script prints the package it imported on standard error; check that it is the worktree's).  It takes about
1.5 minutes of CPU (each command is a fresh process, about 1.3 s of start-up each; 6 minutes of wall-clock time
on the shared 2-core machine).

Which commands: every deterministic command that README.md, docs/theory/checking.md and docs/theory/conventions.md
show (as tests/test_readme.py extracts them) and that runs in under ~8 s, plus the precision paths: srf at float64
and 15/30/50 digits, the K-group theory (``--readout``), the bounds and ``--optimize-eta``, tau-star, spectrum with
its density, hermite/gains/resolvent at 15/30/50, mapping/cge, sweep and check.  Left out: ``reproduce --quick``
(about 5 minutes), the simulations and studies (minutes; their numbers are seeded but BLAS-dependent, and they are
not on the precision path), ``store ls`` (it reads the study's store), ``srf --loss logistic`` (40 s) and
``check --simulate`` (22 s), ``--help`` (its layout follows the terminal's width).

Masks (only fields that change from run to run, never a result): absolute paths of the temporary folder -> ``<TMP>``,
the package version (``onestep_theory X.Y.Z``, ``"version": ...``), the date/time stamps (ISO dates), and timings
(``in N s``, the JSON fields ``seconds``, ``elapsed``, ``time``); on standard error, the progress lines that end in
``(N s)`` are dropped (whether they show depends on the elapsed time).  No number that is a result is masked.  The
``fast`` flag of each command says whether the default test suite runs it or the slow stage; both run in process
(``run_in_process``), the slow ones are the high-precision and the symbolic ``check`` commands.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

#: (fast, words after ``onestep-theory``).  fast: run in process by the default suite (each well under 1 s there).
README_CMDS = [
    (True, ["hermite", "Max(x,0)", "--kmax", "4"]),
    (True, ["hermite", "tanh", "--kmax", "5", "--dps", "50", "--json"]),
    (True, ["xi", "40", "--json"]),
    (True, ["resolvent", "--student", "tanh", "--phi", "1", "--psi", "2", "--lam", "1/2", "--dps", "40"]),
    (True, ["gains", "--student", "relu_centered", "--teacher", "x + (x**2-1)/sqrt(2)", "--phi", "1", "--psi", "2",
            "--lam", "0.5", "--ell", "2"]),
    (True, ["gains", "--student", "relu_centered", "--teacher", "He1", "--phi", "1", "--psi", "2", "--lam", "0.5",
            "--alpha", "0.3", "--json"]),
    (True, ["gains", "--student", "relu_centered", "--teacher", "x + (x**2-1)/sqrt(2)", "--phi", "1", "--psi", "2",
            "--lam", "0.5", "--ell", "6", "--symbolic", "--absent-spikes", "drop"]),
    (True, ["gains", "--student", "relu_centered", "--teacher", "x + (x**2-1)/sqrt(2)", "--phi", "1", "--psi", "2",
            "--lam", "0.5", "--ell", "2", "--symbolic-lambda"]),
    (False, ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "1",
             "--beta", "1", "--lam", "1/10", "--dps", "30", "--json"]),
    (False, ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "3",
             "--beta", "1", "--lam", "1/10", "--row-norms"]),
    (True, ["srf-curve", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alphas",
            "0.2:3:15", "--beta", "1", "--lam", "0.1", "--csv", "curve.csv"]),
    (True, ["bounds", "--student", "tanh", "--teacher", "sin", "--optimize-eta"]),
    (False, ["spectrum", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2",
             "--beta", "1", "--d", "1000"]),
    (False, ["bounds", "--student", "tanh", "--teacher", "sin", "--eta", "3", "--dps", "20"]),
    (True, ["mapping", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--dps", "30"]),
    (True, ["cge", "--student", "tanh", "--alpha0", "20", "--eta", "3", "--teacher", "sin", "--kappa", "0,1/2,1",
            "--dps", "30"]),
    (True, ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2",
            "--beta", "1", "--lam", "0.1", "--readout", "1:0.5,2:0.5", "--json"]),
    (False, ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2",
             "--beta", "1", "--lam", "0.1", "--readout", "1:0.5,2:0.5", "--dps", "30"]),
    (True, ["bounds", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--readout",
            "1:0.5,2:0.5"]),
    (False, ["spectrum", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2",
            "--beta", "1", "--readout", "1:0.5,2:0.5", "--d", "1000", "--z", "0.5:8:16"]),
    (False, ["tau-star", "--student", "erf", "--teacher", "erf", "--json"]),
    (False, ["check", "cs1**4/(cs1**2 + phi*(c_star2 + noise))*(-dm2)", "--against", "lambda_1", "--student",
             "tanh", "--teacher", "He1", "--json"]),
    (False, ["check", "psi*lam*cs1**4*m2/(phi*b**2)", "--against", "delta_1", "--student", "tanh", "--teacher",
             "He1"]),
    (False, ["check", "--latex", r"\Delta_1=\frac{\psi\lambda c_{\star,1}^4m_2}{\phi\,b^2}", "--against", "delta_1",
             "--student", "tanh", "--teacher", "He1"]),
    (False, ["check", "--latex", r"c=1+\frac{\tilde\eta^2}{\alpha_0}\,\mu_2^\star\,\check\mu_1^2", "--against", "c",
             "--student", "tanh", "--teacher", "sin"]),
    (False, ["check", "--latex", r"\Lambda_1=\frac{c_{\star,1}^4}{c_{\star,1}^2+\phi(c_\star^2+\sigma_\varepsilon^2)}"
             r"\Big(-\frac{\partial m_2}{\partial\lambda}\Big)", "--against", "lambda_1", "--student", "tanh",
             "--teacher", "He1"]),
    (False, ["check", "--latex",
             r"\lambda\frac{\psi}{\phi}\left[c_{\star,1}^2 m_2+(c_\star^2-c_{\star,1}^2+\sigma^2)m_1\right]",
             "--symbol", "sigma=noise", "--against", "train_loss_f0", "--student", "tanh", "--teacher", "He1"]),
    (False, ["sweep", "delta_2", "--student", "relu_centered", "--teacher", "x + (x**2-1)/sqrt(2)", "--over",
            "lam=1e-3:10:40", "--phi", "1", "--psi", "2", "--csv", "out.csv"]),
    (True, ["convert", "--from", "cui24", "--to", "moniri23", "alpha=2", "beta=1/2", "lam=1/10", "--json"]),
    (True, ["gains", "--convention", "cui24", "--alpha", "2", "--beta", "1/2", "--lam", "1/10", "--student", "tanh",
            "--teacher", "He1", "--ell", "1"]),
    (False, ["check", "--latex", r"\Lambda_1^{\rm slide}=\frac{c_{\star,1}^4}{c_{\star,1}^2+\phi(c_\star^2+"
             r"\sigma_\varepsilon^2)}\Big(-\frac{\partial m_2}{\partial\lambda}\Big)", "--against", "lambda_1",
             "--student", "tanh", "--teacher", "He1", "--n", "8"]),
    (False, ["check", "--latex", r"\gamma=\frac{\mu_1^\star}{\sqrt{\mu_1^{\star2}+\mu_2^\star/\alpha_0}}",
             "--against", "gamma", "--student", "tanh", "--teacher", "sin", "--n", "8"]),
    (False, ["sweep", "lambda_1", "--over", "lam=1e-3:10:5", "--phi", "1", "--psi", "2", "--student",
             "relu_centered", "--teacher", "x + (x**2-1)/sqrt(2)", "--latex",
             r"\frac\phi\psi\frac{c_{\star,1}^4}{b^2}\frac{-\partial_\lambda m_2}{m_1^2}"]),
]

SRF = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "1", "--beta",
       "1", "--lam", "1/10"]
KGROUP = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta",
          "1", "--lam", "0.1", "--readout", "1:0.5,2:0.5"]
#: The precision paths of issue 34: float64 and 15/30/50 digits through each srf entry, and the spike layer.
PRECISION_CMDS = [
    (True, SRF),
    (True, SRF + ["--json"]),
    (True, SRF + ["--dps", "15"]),
    (False, SRF + ["--dps", "50", "--json"]),
    (False, KGROUP + ["--dps", "15", "--json"]),
    (False, ["srf-curve", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alphas",
            "1/2,2", "--beta", "1", "--lam", "1/10", "--dps", "20", "--json"]),
    (False, ["bounds", "--student", "tanh", "--teacher", "sin", "--optimize-eta", "--dps", "15", "--json"]),
    (False, ["bounds", "--student", "tanh", "--teacher", "sin", "--eta", "3", "--dps", "50", "--json"]),
    (False, ["bounds", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--readout",
            "1:0.5,2:0.5", "--json"]),
    (True, ["mapping", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--json"]),
    (True, ["mapping", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--dps", "50",
            "--json"]),
    (False, ["tau-star", "--student", "erf", "--teacher", "erf", "--dps", "30"]),
    (False, ["tau-star", "--student", "tanh", "--teacher", "tanh", "--dps", "15", "--json"]),
    (False, ["spectrum", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2",
            "--beta", "1", "--z", "0.5:6:6", "--lam", "1/10", "--dps", "15", "--json"]),
    (False, ["spectrum", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2",
             "--beta", "1", "--z", "1:5:3", "--lam", "1/10", "--dps", "30", "--json"]),
    (True, ["hermite", "tanh", "--kmax", "6", "--dps", "30"]),
    (True, ["hermite", "log(1+exp(x))", "--kmax", "4", "--dps", "15", "--json"]),
    (True, ["hermite", "tanh(x) + x*exp(-x**2)", "--kmax", "4", "--dps", "40"]),
    (True, ["resolvent", "--student", "tanh", "--phi", "1", "--psi", "2", "--lam", "1/2", "--dps", "15", "--json"]),
    (True, ["resolvent", "--student", "log(1+exp(x))", "--phi", "1/3", "--psi", "2", "--lam", "1/7", "--dps",
            "30"]),
    (True, ["resolvent", "--student", "tanh", "--phi", "1", "--psi", "2", "--lam", "1/2", "--dps", "50", "--json"]),
    (True, ["gains", "--student", "tanh", "--teacher", "He1", "--phi", "1", "--psi", "2", "--lam", "0.5", "--ell",
            "1", "--dps", "30", "--json"]),
    (True, ["gains", "--student", "tanh(x) + log(1+exp(x))", "--center", "--teacher", "x + (x**2-1)/sqrt(2)",
            "--phi", "1/2", "--psi", "2", "--lam", "1/10", "--ell", "2", "--dps", "15", "--json"]),
    (True, ["gains", "--student", "tanh(x) + log(1+exp(x))", "--center", "--teacher", "x + (x**2-1)/sqrt(2)",
            "--phi", "1/2", "--psi", "2", "--lam", "1/10", "--ell", "2", "--dps", "50"]),
    (True, ["sweep", "delta_1", "--student", "tanh", "--teacher", "He1", "--over", "lam=1/10:2:3", "--phi", "1",
            "--psi", "2", "--dps", "30", "--json"]),
    (True, ["sweep", "test_error", "--student", "tanh", "--teacher", "sin", "--over", "alpha=1:3:3", "--beta", "1",
            "--lam", "1/10", "--alpha0", "20", "--eta", "3", "--dps", "15", "--json"]),
]

COMMANDS = README_CMDS + PRECISION_CMDS

#: (pattern, replacement): the fields that change from run to run.  Never a result: each pattern is anchored on a
#: word that names a time, a date, a version or a path.
MASKS = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?"), "<DATE>"),
    (re.compile(r'("(?:version|onestep_theory|package_version)"\s*:\s*)"[^"]*"'), r'\1"<VERSION>"'),
    (re.compile(r"(onestep[-_]theory\s+(?:version\s+)?)\d+\.\d+(\.\d+)?\S*"), r"\1<VERSION>"),
    (re.compile(r'("(?:seconds|elapsed|elapsed_s|time|time_s|wall|cpu_seconds)"\s*:\s*)"?[0-9.eE+-]+"?'), r'\1"<T>"'),
    (re.compile(r"\b(in|took|elapsed)\s+\d+(\.\d+)?\s*(s|ms|seconds)\b"), r"\1 <T>"),
]


#: A progress line on standard error ("... level 2/5 (3.7 s)"): whether it shows depends on the elapsed time.
PROGRESS = re.compile(r"\(\d+(\.\d+)? s\)\s*$")


def mask_stderr(text: str, tmp: str) -> str:
    """Standard error masked as ``mask`` does, without its progress lines (``PROGRESS``) and blank lines."""
    lines = re.split(r"[\r\n]+", text)
    return mask("\n".join(ln for ln in lines if ln.strip() and not PROGRESS.search(ln)), tmp)


def mask(text: str, tmp: str) -> str:
    """The run-dependent fields of ``text`` replaced (see ``MASKS``); ``tmp`` (the run's folder) -> ``<TMP>``."""
    if tmp:
        text = text.replace(str(pathlib.Path(tmp).resolve()), "<TMP>").replace(tmp, "<TMP>")
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return text


def written_files(folder: pathlib.Path, tmp: str) -> dict:
    """The text files a command wrote into its folder (``--csv``), masked."""
    return {p.name: mask(p.read_text(), tmp) for p in sorted(folder.iterdir()) if p.is_file()}


def record(words: list, stdout: str, stderr: str, status: int, folder: pathlib.Path) -> dict:
    """One command's outputs as stored: exit status, masked stdout/stderr, files written."""
    tmp = str(folder)
    return {"argv": words, "status": status, "stdout": mask(stdout, tmp), "stderr": mask_stderr(stderr, tmp),
            "files": written_files(folder, tmp)}


def run_fresh(words: list, timeout: float = 300) -> tuple:
    """``words`` in a fresh ``python -m onestep_theory`` process in an empty folder: (record, seconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = tempfile.mkdtemp(prefix="run-", dir=tmp)
        env = dict(_env(), ONESTEP_THEORY_CACHE_DIR=tempfile.mkdtemp(prefix="cache-", dir=tmp))   # a cold disk cache
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "onestep_theory", *words], cwd=work, capture_output=True, text=True,
                           timeout=timeout, env=env)
        return record(words, p.stdout, p.stderr, p.returncode, pathlib.Path(work)), time.perf_counter() - t0


def run_in_process(words: list, cache_dir: str | None = None) -> tuple:
    """``words`` through ``onestep_theory.cli.main(argv)`` in this process, in an empty folder, the package's caches
    emptied first (``core.caches.clear_caches``), as a fresh process starts: (record, seconds).  Used by the tests
    (no start-up cost).  The caches are emptied because at b71f2d1 one printed field depends on them:
    ``gains --student tanh --teacher He1 ... --dps 30 --json`` prints ``resolvent.residual`` 3.587e-42 in a fresh
    process and 0 after ``hermite tanh --kmax 6 --dps 30`` ran in the same process (value and errors identical:
    ``hermite.moments.numeric_bundle`` reuses a pass with a larger K, equal to the first within the quadrature's
    tolerance, not bit for bit).  For the same reason the disk cache of symbolic builds (issue 35) is a new empty
    folder per command unless ``cache_dir`` is given (a warm cache: see the test of warm runs)."""
    import contextlib
    import io
    import os

    from onestep_theory.cli import main as cli_main
    from onestep_theory.core.caches import clear_caches

    clear_caches()

    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        here, saved = os.getcwd(), os.environ.get("ONESTEP_THEORY_CACHE_DIR")
        os.environ["ONESTEP_THEORY_CACHE_DIR"] = cache_dir or tempfile.mkdtemp(prefix="cache-", dir=tmp)
        work = tempfile.mkdtemp(prefix="run-", dir=tmp)
        os.chdir(work)
        try:
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = cli_main(list(words))
            sec = time.perf_counter() - t0
        finally:
            os.chdir(here)
            if saved is None:
                os.environ.pop("ONESTEP_THEORY_CACHE_DIR", None)
            else:
                os.environ["ONESTEP_THEORY_CACHE_DIR"] = saved
        return record(words, out.getvalue(), err.getvalue(), int(status or 0), pathlib.Path(work)), sec


def _env() -> dict:
    import os

    env = dict(os.environ)
    env.pop("COLUMNS", None)
    env["PYTHONHASHSEED"] = "0"
    return env


#: The '#' lines that issue 35 (item 3) puts in every CSV (its context, tested in tests/test_output_context.py).
#: The frozen outputs of b71f2d1 have none of them, so removing them hides no line that was compared.
CONTEXT = re.compile(r"# (onestep_theory <VERSION>|command: |parameters: |defaults: |method: |provenance: |run: )")


def comparable(got: dict, frozen: dict) -> dict:
    """``got`` without what issue 35 added on purpose (tested in tests/test_output_context.py), so that every printed
    result is still compared with the frozen revision: the '#' context lines of a CSV (``CONTEXT``; standard output
    and files), the ``"input"`` block of ``--json`` (and a sweep's ``"grid"`` as typed, where the frozen output had
    none), and a top-level JSON field that echoes a typed number as typed (``"alpha0": "20"``) where the frozen output
    printed that number correctly rounded (``"20.000…"``): that field is compared by value, to the last printed
    digit.  Nothing else is touched: every value, error, digit count and verdict is compared character for character."""
    import json
    from fractions import Fraction

    import sympy as sp

    def strip(text):
        return "".join(ln for ln in text.splitlines(keepends=True) if not CONTEXT.match(ln))

    stdout = strip(got["stdout"])
    try:
        now, before = json.loads(stdout), json.loads(frozen["stdout"])
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


def refreeze(doc: dict, needles: list, reason: str, revision: str) -> None:
    """Replace the entries whose command contains one of ``needles`` by a fresh run of this revision, made
    ``comparable`` with the entry it replaces; the entry keeps the reason, the revision and its diff from before."""
    import difflib

    for i, e in enumerate(doc["commands"]):
        words = " ".join(e["argv"])
        if not any(n in words for n in needles):
            continue
        rec, _ = run_fresh(e["argv"])
        rec = comparable(rec, e)
        diff = [ln for key in ("stdout", "stderr") for ln in difflib.unified_diff(
            e[key].splitlines(), rec[key].splitlines(), f"{key} before", f"{key} {revision}", n=0, lineterm="")]
        for name in sorted(set(e["files"]) | set(rec["files"])):
            diff += difflib.unified_diff(e["files"].get(name, "").splitlines(), rec["files"].get(name, "").splitlines(),
                                         f"{name} before", f"{name} {revision}", n=0, lineterm="")
        if not diff:                  # unchanged: nothing to record (a record without a diff would say nothing)
            print(f"unchanged, not refrozen: {words[:100]}", file=sys.stderr)
            continue
        history = list(e.get("refrozen", [])) + [{"revision": revision, "reason": reason, "diff": diff}]
        doc["commands"][i] = dict(rec, fast=e["fast"], refrozen=history)
        print(f"refrozen: {words[:100]} ({len(diff)} diff lines)", file=sys.stderr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(pathlib.Path(__file__).with_name("golden_outputs.json")))
    ap.add_argument("--revision", default="b71f2d1")
    ap.add_argument("--refreeze", action="append", default=[], metavar="WORDS",
                    help="only rerun the stored commands containing WORDS (repeatable), keeping the others")
    ap.add_argument("--reason", default="", help="with --refreeze: why the output changed legitimately (required)")
    args = ap.parse_args(argv)
    import onestep_theory

    print(f"package: {onestep_theory.__file__}", file=sys.stderr)
    if args.refreeze:
        if not args.reason.strip():
            ap.error("--refreeze needs --reason (a changed output is argued, never just accepted)")
        doc = json.loads(pathlib.Path(args.out).read_text())
        refreeze(doc, args.refreeze, args.reason, args.revision)
        pathlib.Path(args.out).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        return 0
    entries = []
    for fast, words in COMMANDS:
        rec, sec = run_fresh(words)
        rec["fast"] = fast
        entries.append(rec)
        print(f"{sec:6.1f}s rc={rec['status']} {' '.join(words)[:110]}", file=sys.stderr)
    doc = {"revision": args.revision, "generator": "tests/data/make_golden_outputs.py", "commands": entries}
    pathlib.Path(args.out).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
