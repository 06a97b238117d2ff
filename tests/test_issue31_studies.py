"""Issue 31 (items 4, 6, hostile input, bounded waits), audited on the user's path: a verdict's 95 % interval is
printed with it, so "inside" can be checked by the reader (t quantile from scipy, not from the code under test); the
advice of a fit with no degree of freedom is one that can be followed; the study's theory value is printed to its
vouched digits (checked against gains at 40 digits); a store locked by another process ends with one line (exit 3),
a 10 001-size ladder with one short line (exit 2), a non-binary teacher with the hinge loss before any task runs."""

import math
import sqlite3
import time

import pytest
from scipy import stats

from onestep_theory.cli.main import main
from onestep_theory.study.fit import extrapolate, power_verdict
from onestep_theory.study import store as store_mod

TH = 0.0325182080                # a theory value: the scale of the % units


@pytest.mark.parametrize("nu", [1.0, 2.5, 10.0, math.inf])
def test_inside_and_underpowered_state_their_interval(nu):
    """An estimate 8 standard errors from the theory is "inside" only on few degrees of freedom, and the verdict then
    shows the interval that makes it so: t_{0.975, nu} se (scipy), in % of the theory, with the dof."""
    se = 0.013 * TH
    half = (stats.norm.ppf(0.975) if math.isinf(nu) else stats.t.ppf(0.975, nu)) * se
    v = power_verdict(-8 * se, se, nu, scale=TH)
    assert abs(v["half_width"] - half) < 1e-9 * half
    if 8 * se <= half:
        assert v["status"] == "underpowered" and f"95 % interval +- {100 * half / TH:.2g} %" in v["verdict"]
        assert f"{nu:.3g} dof" in v["verdict"]
    else:
        assert v["status"] == "outside"
    ok = power_verdict(-0.1 * 0.002 * TH, 0.002 * TH, nu, scale=TH, tolerance=0.05)      # powered and inside
    assert ok["status"] == "inside" and f"95 % interval +- {100 * ok['half_width'] / TH:.2g} %" in ok["verdict"]
    assert "smallest detectable gap" in ok["verdict"]


def test_zero_dof_advice_can_be_followed():
    """Two sizes: with one exponent the only advice is another size (there is no term left to drop)."""
    one = extrapolate([50, 100], [0.001, 0.002], [1e-3, 1e-3], exponents=(1,), scale=TH)
    assert one.status == "no verdict" and one.verdict.endswith("add a size (--d)")
    two = extrapolate([50, 100, 200], [0.001, 0.002, 0.0], [1e-3] * 3, exponents=(0.5, 1), scale=TH)
    assert two.status == "no verdict" and "fit fewer terms (e.g. --exponents 1)" in two.verdict


@pytest.mark.slow
def test_study_theory_is_printed_to_its_vouched_digits(tmp_path, capsys):
    """The spike-model's theory was printed '(+/- 0.0e+00)' (two float64 values equal): the header's value +- error
    now contains the 40-digit delta of gains, and the CSV/JSON carry the same verdict fields."""
    from mpmath import mp, mpf

    from onestep_theory.spikes import gains

    argv = ["study", "spike-model", "--student", "tanh", "--teacher", "sin", "--phi", "0.5", "--psi", "0.5",
            "--lam", "0.1", "--ell", "1", "--d", "20,30,40", "--reps", "2", "--exponents", "1", "--workers", "1",
            "--quiet", "--store", str(tmp_path / "s.sqlite")]
    assert main(argv) == 0
    head = capsys.readouterr().out.splitlines()[0]
    value, err = head.split("delta = ")[1].split(";")[0].split(" (+/- ")
    err = err.rstrip(")")
    assert float(err) > 0
    with mp.workdps(50):
        ref = mpf(str(gains("tanh", "sin", "0.5", "0.5", "0.1", ell=1, dps=40).delta[-1]).split(" ")[0])
        assert abs(mpf(value) - ref) <= mpf(err), (value, err, ref)


def test_locked_store_ends_with_one_line_exit_3(tmp_path, capsys, monkeypatch):
    """Another process holds the store's write lock: the study ends after the lock timeout (shortened here) with
    one line naming the lock, exit 3 (a resource), not 'unreadable' with exit 2 and never a wait without bound."""
    path = tmp_path / "locked.sqlite"
    argv = ["study", "traces", "--student", "tanh", "--phi", "0.5", "--psi", "0.5", "--lam", "0.1", "--d", "20,30,40",
            "--reps", "2", "--exponents", "1", "--workers", "1", "--quiet", "--store", str(path)]
    assert main(argv) == 0
    capsys.readouterr()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    connect = sqlite3.connect
    monkeypatch.setattr(store_mod.sqlite3, "connect", lambda *a, **k: connect(*a, **dict(k, timeout=0.2)))
    try:
        t0 = time.monotonic()
        assert main(argv + ["--resume"]) == 3
        assert time.monotonic() - t0 < 20
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "locked by another process" in err, err


@pytest.mark.parametrize("count, words", [(6000, ["(6000 entries)", "at most 10000 tasks"]),     # 12 000 tasks
                                           (10_001, ["(10001 entries)", "--d"])])                # past the list cap
def test_huge_size_ladder_is_refused_in_one_short_line(tmp_path, capsys, count, words):
    """A ladder of thousands of sizes was refused by a line echoing every size twice (80 kB)."""
    sizes = ",".join(str(10 * (i + 1)) for i in range(count))
    argv = ["study", "traces", "--student", "tanh", "--phi", "0.5", "--psi", "0.5", "--lam", "0.1", "--d", sizes,
            "--workers", "1", "--quiet", "--store", str(tmp_path / "x.sqlite")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and len(err) < 400 and all(w in err for w in words), err


def test_hinge_with_a_non_binary_teacher_fails_before_any_task(tmp_path, capsys):
    path = tmp_path / "h.sqlite"
    t0 = time.monotonic()
    assert main(["study", "giant-step", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3",
                 "--alpha", "3", "--beta", "1", "--lam", "0.1", "--loss", "hinge", "--d", "50,100", "--reps", "2",
                 "--workers", "1", "--quiet", "--store", str(path)]) == 2
    assert time.monotonic() - t0 < 10
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--teacher" in err and "hinge" in err, err


def test_store_that_cannot_be_written_is_read_as_a_snapshot(tmp_path, capsys, monkeypatch):
    """`store ls|show|export` of a store on a read-only mount (or a file one may not write) read it; they ended
    'unreadable: unable to open database file' (the store's open wrote a lock and pragmas). Here the permission is
    denied through os.access (the tests run as any user); the read-only mount itself was checked by hand."""
    path = tmp_path / "ro.sqlite"
    with store_mod.ResultStore(path) as st:
        st.put("traces", {"lam": 0.1}, 50, 0, {"m1": 5.5}, seconds=0.1)
    before = path.read_bytes()
    monkeypatch.setattr(store_mod.os, "access", lambda *a, **k: False)
    assert main(["store", "ls", str(path)]) == 0
    assert "traces" in capsys.readouterr().out
    assert main(["store", "export", str(path), "--format", "json"]) == 0
    assert "5.5" in capsys.readouterr().out and path.read_bytes() == before
    with store_mod.ResultStore(path, create=False) as st:       # a snapshot: it never writes
        with pytest.raises(Exception, match="readonly"):
            st.put("traces", {"lam": 0.1}, 50, 1, {"m1": 5.6}, seconds=0.1)
        assert st.count() == 1
    assert path.read_bytes() == before


def test_a_step_past_the_theory_range_is_refused_before_it_overflows(capsys):
    """`simulate giant-step --eta 1e308` ran the step (numpy 'overflow encountered in matmul' on stderr) before the
    theory column refused it: two lines. Now one line, before any draw; the ablation's simulator likewise."""
    from onestep_theory import InvalidParameterError
    from onestep_theory.simulate.ablation import sim_ablation

    assert main(["simulate", "giant-step", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "1e308",
                 "--alpha", "3", "--beta", "1", "--lam", "0.1", "--d", "40"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--eta" in err and "overflow" not in err, err
    with pytest.raises(InvalidParameterError, match="eta"):
        sim_ablation("tanh", "sin", 40, alpha0=20, eta=1e308, alpha=3, beta=1, lam=0.1)


def test_grouped_readout_says_not_measured(capsys):
    """`srf --readout` with (alpha0, eta): the map measured the uniform readout only; the K-group path said nothing
    about the network, now "not measured near this setting" (text and JSON), and never a measured gap."""
    import json

    base = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "3", "--beta",
            "1", "--lam", "0.1", "--readout", "1:0.5,2:0.5"]
    assert main(base) == 0
    net = [ln for ln in capsys.readouterr().out.splitlines() if "one-step network" in ln]
    assert len(net) == 1 and "not measured near this setting" in net[0] and "%" not in net[0], net
    assert main(base + ["--json"]) == 0
    got = json.loads(capsys.readouterr().out)["network"]
    assert got["match"] is None and got["entry"] is None and "uniform readout" in got["reason"]


@pytest.mark.slow
def test_refused_study_leaves_no_store_and_simulate_names_the_teacher(tmp_path):
    """Lead's audit of R's leftovers: a study refused on its parameters (hinge with a non-binary teacher) leaves no
    empty store behind; ``simulate`` names the teacher that is not ±1; an empty --store is named as such."""
    import subprocess
    import sys
    base = [sys.executable, "-m", "onestep_theory"]
    model = ["--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "3", "--beta", "1",
             "--lam", "0.1", "--d", "50"]
    store = tmp_path / "h.sqlite"
    r = subprocess.run(base + ["study", "giant-step", *model, "--reps", "2", "--loss", "hinge", "--store", str(store)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.iterdir())
    r = subprocess.run(base + ["simulate", "giant-step", *model, "--loss", "hinge"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "--teacher=sin" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = subprocess.run(base + ["study", "giant-step", *model, "--reps", "2", "--store", ""], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and "empty path" in r.stderr, r.stderr
