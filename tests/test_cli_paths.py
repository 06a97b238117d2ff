"""CLI paths not reached by the other tests: every exit-code branch of ``main``, the argument types of
``cli/common.py`` (output file/folder, lists, progress), every ``simulate`` protocol, ``srf-curve`` sweeps and
CSV, ``gains`` text output, ``reproduce`` and ``python -m onestep_theory``.

Results are checked against independent references (closed forms, the float64 batch solver
``resolvent_sweep``, the single-point ``srf`` command against the warm-started sweep, exact identities of the
simulated quantities, seed reproducibility), never against numbers copied from a run of the code under test.
Everything runs in-process through :func:`onestep_theory.cli.main` except two small subprocess tests.
"""

import functools
import io
import json
import math
import os
import runpy
import subprocess
import sys
import warnings

import mpmath
import pytest

import onestep_theory
from onestep_theory.core.results import read_csv
from onestep_theory.cli import common, main
from onestep_theory.core.errors import ConvergenceError, InvalidParameterError, OnestepError

SRF_AE = ["--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3"]


# ----------------------------------------------------------------------------------------------- helpers
def run(argv, capsys):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_json(argv, capsys):
    rc, out, err = run(list(argv) + ["--json"], capsys)
    assert rc == 0, err
    return json.loads(out)


def assert_one_line_error(rc, out, err, cmd, *needles, code=2, kind="error"):
    """Exit *code*, nothing on stdout, exactly one line ``onestep-theory CMD: KIND: ...`` containing *needles*."""
    assert rc == code, (rc, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"onestep-theory {cmd}: {kind}: "), lines[0]
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert "Traceback" not in err


def stats_means(d):
    """The means of a simulation's JSON (numbers are decimal strings there) as floats."""
    return {k: float(v["mean"]) for k, v in d["stats"].items()}


def _gauss(f):
    return mpmath.quad(lambda z: f(z) * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])


@functools.lru_cache(maxsize=None)
def tanh_constants():
    """c1 = E[Z tanh Z] and c_{>1} = sqrt(E tanh^2 - c1^2) of tanh, by mpmath quadrature (not the package)."""
    with mpmath.workdps(30):
        c1 = _gauss(lambda z: z * mpmath.tanh(z))
        m2 = _gauss(lambda z: mpmath.tanh(z) ** 2)
        return float(c1), float(mpmath.sqrt(m2 - c1 ** 2))


SIN_C1 = math.exp(-0.5)                       # E[Z sin Z] = E cos Z
SIN_M2 = (1 - math.exp(-2)) / 2               # E[sin(Z)^2]


def mapping_tanh_sin(alpha0, eta):
    """Result 3.1 (eqs. 9-11, docs/theory/srf-theory.md §2) for student tanh, teacher sin, no noise, from
    quadratures and closed forms: gamma = mu1*/g, r = eta mu1 g, c = 1 + eta^2 mu2* check_mu1^2 / alpha0,
    with g = sqrt(mu1*^2 + mu2*/alpha0)."""
    with mpmath.workdps(30):
        mu1 = tanh_constants()[0]
        check = float(_gauss(lambda z: (1 - mpmath.tanh(z) ** 2) ** 2)) - mu1 ** 2
    g = math.sqrt(SIN_C1 ** 2 + SIN_M2 / alpha0)
    return {"r": eta * mu1 * g, "c": 1 + eta ** 2 * SIN_M2 * check / alpha0, "gamma": SIN_C1 / g}


# ----------------------------------------------------------------------------------------------- main(): exits
def test_no_command_prints_help_and_exits_2(capsys):
    rc, out, err = run([], capsys)
    assert rc == 2
    assert "usage: onestep-theory" in out and "simulate" in out


def test_version_in_process(capsys):
    rc, out, _ = run(["--version"], capsys)
    assert rc == 0
    assert out.strip() == f"onestep-theory {onestep_theory.__version__}"


def _xi_raising(monkeypatch, exc):
    """Make the ``xi`` command raise *exc* from inside its handler (the API it calls fails)."""
    import onestep_theory.hermite.polynomials as H

    def boom(p):
        raise exc

    monkeypatch.setattr(H, "he_xi_row", boom)


@pytest.mark.parametrize("exc,code,kind,needle", [
    (ConvergenceError("Newton did not converge after 50 steps", 50, 1e-3), 3, "numerical failure",
     "Newton did not converge after 50 steps"),
    (OnestepError("something the package refuses"), 2, "error", "something the package refuses"),
    (MemoryError(), 3, "resource failure", "out of memory (reduce the sizes or the digits)"),
    (RuntimeError("boom\n   on two   lines"), 4, "internal error",
     "RuntimeError: boom on two lines (please report it; rerun with --debug for the traceback)"),
])
def test_exit_codes_of_failures_inside_a_handler(monkeypatch, capsys, exc, code, kind, needle):
    _xi_raising(monkeypatch, exc)
    rc, out, err = run(["xi", "3"], capsys)
    assert_one_line_error(rc, out, err, "xi", needle, code=code, kind=kind)


def test_internal_error_message_is_truncated_to_one_short_line(monkeypatch, capsys):
    _xi_raising(monkeypatch, ValueError("x" * 5000))
    rc, out, err = run(["xi", "3"], capsys)
    assert_one_line_error(rc, out, err, "xi", "internal error: ValueError: ", code=4, kind="internal error")
    assert "x" * 300 + " (please report it" in err and "x" * 301 not in err


def test_invalid_parameter_error_names_the_flag_when_given(monkeypatch, capsys):
    _xi_raising(monkeypatch, InvalidParameterError("noise_var", "-1", "a real number >= 0"))
    rc, out, err = run(["xi", "3"], capsys)        # --noise-var not on the command line: API name kept
    assert_one_line_error(rc, out, err, "xi", "noise_var=-1: expected a real number >= 0")
    rc, out, err = run(["resolvent", "--student", "tanh", "--phi", "-1", "--psi", "2", "--lam", "1/2"], capsys)
    assert_one_line_error(rc, out, err, "resolvent", "--phi=-1: expected")


def test_keyboard_interrupt_exits_130(monkeypatch, capsys):
    _xi_raising(monkeypatch, KeyboardInterrupt())
    rc, out, err = run(["xi", "3"], capsys)
    assert rc == 130 and out == "" and err.strip() == "interrupted"


@pytest.mark.parametrize("argv", [["--debug", "xi", "3"], ["xi", "3", "--debug"]])
def test_debug_reraises_unexpected_errors(monkeypatch, capsys, argv):
    _xi_raising(monkeypatch, RuntimeError("the original exception"))
    with pytest.raises(RuntimeError, match="the original exception"):
        main(argv)


def test_debug_does_not_change_user_errors(monkeypatch, capsys):
    _xi_raising(monkeypatch, ConvergenceError("no convergence"))
    rc, out, err = run(["--debug", "xi", "3"], capsys)
    assert_one_line_error(rc, out, err, "xi", "no convergence", code=3, kind="numerical failure")


def test_broken_pipe_exits_0_and_silences_stdout(monkeypatch, capsys, tmp_path):
    """BrokenPipeError (stdout closed by e.g. ``head``): exit 0, no message, stdout redirected to /dev/null."""
    _xi_raising(monkeypatch, BrokenPipeError())
    target = tmp_path / "stdout.txt"
    with open(target, "w") as fake_stdout:
        monkeypatch.setattr(sys, "stdout", fake_stdout)
        rc = main(["xi", "3"])
        fake_stdout.write("written after the broken pipe\n")
        fake_stdout.flush()
        monkeypatch.undo()
    assert rc == 0
    assert target.read_text() == ""                 # the descriptor now points at /dev/null
    assert capsys.readouterr().err == ""


def test_warnings_are_one_line_and_name_the_command(monkeypatch, capsys):
    import onestep_theory.hermite.polynomials as H

    real = H.he_xi_row

    def warn_then_work(p):
        warnings.warn("a warning\n   spread over   lines", UserWarning)
        return real(p)

    monkeypatch.setattr(H, "he_xi_row", warn_then_work)
    rc, out, err = run(["xi", "2", "--row"], capsys)
    assert rc == 0
    assert out.split() == ["p=2", "1", "0", "1"]            # x^2 = He_2 + He_0
    assert err.strip().splitlines() == ["onestep-theory xi: warning: a warning spread over lines"]


# ----------------------------------------------------------------------------------------------- python -m
def test_python_m_version_subprocess():
    p = subprocess.run([sys.executable, "-m", "onestep_theory", "--version"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"onestep-theory {onestep_theory.__version__}"
    assert p.stderr == ""


def test_python_m_real_broken_pipe_subprocess():
    """Reader closes the pipe after a few bytes of a large output: exit 0 and no traceback."""
    p = subprocess.Popen([sys.executable, "-m", "onestep_theory", "xi", "160"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    head = p.stdout.read(5)
    p.stdout.close()
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=120) == 0, err
    assert head == b"p=0  "
    assert err == ""


def test_dunder_main_in_process(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["onestep-theory", "xi", "3", "--row"])
    with pytest.raises(SystemExit) as exc:
        runpy.run_module("onestep_theory", run_name="__main__")
    assert exc.value.code == 0
    assert capsys.readouterr().out.split() == ["p=3", "0", "3", "0", "1"]   # x^3 = He_3 + 3 He_1
    monkeypatch.setattr(sys, "argv", ["onestep-theory", "xi", "-1"])
    with pytest.raises(SystemExit) as exc:
        runpy.run_module("onestep_theory", run_name="__main__")
    assert exc.value.code == 2
    assert "argument P" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- common.py
def test_float_list_accepts_lists_and_ranges():
    assert common.float_list("0.5") == [0.5]
    assert common.float_list("1, 2,3,") == [1.0, 2.0, 3.0]
    assert common.float_list("0:1:5") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert common.float_list("2:2:1") == [2.0]
    assert len(common.float_list(f"0:1:{common.MAX_GRID}")) == common.MAX_GRID


@pytest.mark.parametrize("text", ["", ",", "abc", "1,b", "nan", "1,inf", "-inf", "1:2", "1:2:3:4", "1:2:0",
                                  f"1:2:{common.MAX_GRID + 1}", "1:2:x", "a:2:3", "1:nan:3", "1e400",
                                  ",".join(["1"] * (common.MAX_GRID + 1))])
def test_float_list_rejects(text):
    with pytest.raises(Exception) as exc:
        common.float_list(text)
    assert exc.type.__name__ == "ArgumentTypeError"
    assert "expected a number, a list 'a,b,c' or a range 'start:stop:num'" in str(exc.value)


@pytest.mark.parametrize("value", ["1:2:0", "nan", "a,b"])
def test_float_list_error_through_the_cli(capsys, value):
    rc, out, err = run(["simulate", "resolvent", "--student", "tanh", "--d", "60", "--phi", "1", "--psi", "2",
                        "--lam", value], capsys)
    assert_one_line_error(rc, out, err, "simulate resolvent", "argument --lam", repr(value))


def test_float_list_infinite_range_endpoint_is_one_line(capsys):
    # (a warning raised while parsing is outside main's one-line warning handler: in a real process Python
    # prints it with its file name and source line)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rc, out, err = run(["srf-curve", *SRF_AE, "--alphas", "1:inf:3"], capsys)
    assert_one_line_error(rc, out, err, "srf-curve", "argument --alphas", "'1:inf:3'")
    assert [str(w.message) for w in caught] == []


def test_exact_list():
    assert common.exact_list(" 0, 1/3 ,sqrt(2)/2,") == ["0", "1/3", "sqrt(2)/2"]
    for bad in ("", " , ", ",".join(["1"] * 1001)):
        with pytest.raises(Exception, match="expected 1 to 1000 comma-separated numbers"):
            common.exact_list(bad)


def test_exact_list_error_through_the_cli(capsys):
    rc, out, err = run(["cge", "--student", "tanh", "--r", "1", "--c", "1", "--gamma", "1", "--kappa", ","], capsys)
    assert_one_line_error(rc, out, err, "cge", "argument --kappa", "comma-separated")


def test_int_and_float_args():
    conv = common.int_in("--n", 1, 10)
    assert conv("10") == 10
    for bad, msg in (("0", "got 0"), ("11", "got 11"), ("1.5", "got '1.5'")):
        with pytest.raises(Exception, match=r"--n must be an integer in \[1, 10\], " + msg):
            conv(bad)
    assert common.float_arg("--eta")("-2.5e-3") == -2.5e-3
    assert common.float_arg("--eta")("1/3") == 1 / 3 and common.float_arg("--eta")("sqrt(2)/2") == 2 ** -0.5
    assert common.float_list("1/4,1/2") == [0.25, 0.5] and common.float_list("0:1/2:3") == [0, 0.25, 0.5]
    for bad in ("x", "inf", "nan", "1/0"):
        with pytest.raises(Exception, match=rf"--eta must be a finite real number \(e.g. 0.1 or 1/3\), got '{bad}'"):
            common.float_arg("--eta")(bad)


CURVE = ["srf-curve", *SRF_AE, "--alphas", "0.5,1", "--csv"]


def test_output_path_errors_are_one_line(capsys, tmp_path, monkeypatch):
    rc, out, err = run(CURVE + [tmp_path], capsys)
    assert_one_line_error(rc, out, err, "srf-curve", "argument --csv", "is a folder; give a file name")
    rc, out, err = run(CURVE + [tmp_path / "missing" / "x.csv"], capsys)
    assert_one_line_error(rc, out, err, "srf-curve", "argument --csv", "does not exist")
    # not writable (simulated: the test may run as root, which may write anywhere)
    monkeypatch.setattr(common.os, "access", lambda path, mode: False)
    rc, out, err = run(CURVE + [tmp_path / "x.csv"], capsys)
    assert_one_line_error(rc, out, err, "srf-curve", "argument --csv", "is not writable")
    assert not (tmp_path / "x.csv").exists()


def test_output_path_existing_read_only_file(tmp_path, monkeypatch):
    f = tmp_path / "ro.csv"
    f.write_text("keep")
    real = os.access
    monkeypatch.setattr(common.os, "access", lambda path, mode: False if os.fspath(path) == str(f) else real(path, mode))
    with pytest.raises(Exception, match="is not writable"):
        common.output_path(str(f))
    assert f.read_text() == "keep"
    monkeypatch.undo()
    assert common.output_path(str(f)) == str(f)


def test_output_dir(tmp_path, capsys):
    new = tmp_path / "a" / "b"
    assert common.output_dir(str(new)) == str(new)
    assert new.is_dir() and os.listdir(new) == []            # created, and the write probe removed
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(Exception, match="exists and is not a folder"):
        common.output_dir(str(afile))
    # a folder below a file cannot be created: one line naming --out, before any work
    rc, out, err = run(["reproduce", "--smoke", "--out", afile / "sub"], capsys)
    assert_one_line_error(rc, out, err, "reproduce", "argument --out", "cannot be written")


def test_progress_display(capsys):
    prog = common.Progress("job", after=0.0)
    prog(1, 3)
    prog(3, 3)
    err = capsys.readouterr().err
    assert prog.shown
    assert err.startswith("\rjob: repetition 1/3 (")
    assert "\rjob: repetition 3/3 (" in err and err.endswith(" s)  \n")       # spaces clear a longer line
    eta = common.Progress("study", after=0.0, unit="task", eta=True)
    eta(1, 4)
    eta(4, 4)
    err = capsys.readouterr().err
    assert "task 1/4 (" in err and ", ETA " in err.split("\r")[1] and "ETA" not in err.split("\r")[2]
    quiet = common.Progress("job", quiet=True, after=0.0)
    quiet(3, 3)
    slow = common.Progress("job", after=1e9)
    slow(1, 3)
    slow(3, 3)
    assert capsys.readouterr().err == "" and not quiet.shown and not slow.shown


def test_progress_through_simulate_and_quiet(monkeypatch, capsys):
    import onestep_theory.cli.simulate as SIM

    monkeypatch.setattr(SIM, "Progress", functools.partial(common.Progress, after=0.0))
    argv = ["simulate", "spectrum", "--student", "tanh", "--d", "40", "--alpha", "1", "--beta", "1", "--r", "1",
            "--c", "1", "--gamma", "1", "--reps", "3", "--lam", "0.5"]
    rc, out, err = run(argv, capsys)
    assert rc == 0
    assert [s.split(" (")[0] for s in err.split("\r") if s] == [f"simulate spectrum: repetition {i}/3"
                                                               for i in (1, 2, 3)]
    assert err.endswith("\n")
    assert "(3 repetition(s), seed 0," in out
    rc, out, err = run(argv + ["--quiet"], capsys)
    assert rc == 0 and err == ""


def test_emit_text_and_json(capsys):
    class A:
        json = False

    common.emit(A(), {"a": "1"}, "plain text")
    A.json = True
    common.emit(A(), {"a": "1"}, "plain text")
    out = capsys.readouterr().out
    text, js = out.split("\n", 1)
    assert text == "plain text" and json.loads(js) == {"a": "1"}


# ----------------------------------------------------------------------------------------------- hermite / xi
def test_hermite_of_x_squared_exact(capsys):
    """x^2 = He_2 + He_0: c_0 = 1, c_2 = 1, all others 0; E x^2 = 1, E x^4 = 3."""
    d = run_json(["hermite", "x**2", "--kmax", "4"], capsys)
    assert [c["exact"] for c in d["coefficients"]] == ["1", "0", "1", "0", "0"]
    assert [mpmath.mpf(c["value"]) for c in d["coefficients"]] == [1, 0, 1, 0, 0]
    assert d["mean"]["exact"] == "1" and d["second_moment"]["exact"] == "3"
    d = run_json(["hermite", "x**2", "--kmax", "3", "--center"], capsys)    # x^2 - 1 = He_2
    assert [c["exact"] for c in d["coefficients"]] == ["0", "0", "1", "0"]


def test_hermite_text_lists_kinks(capsys):
    rc, out, _ = run(["hermite", "Abs(x)", "--kmax", "2"], capsys)
    assert rc == 0
    assert "kinks at x = 0" in out
    assert "sqrt(2)/sqrt(pi)" in out or "sqrt(2)*sqrt(pi)/pi" in out       # E|Z| = sqrt(2/pi)


def test_xi_text_and_row(capsys):
    rc, out, _ = run(["xi", "4"], capsys)
    assert rc == 0
    # x^4 = He_4 + 6 He_2 + 3 He_0 ; x^3 = He_3 + 3 He_1
    assert out.splitlines()[-1].split() == ["p=4", "3", "0", "6", "0", "1"]
    assert out.splitlines()[3].split() == ["p=3", "0", "3", "0", "1"]
    d = run_json(["xi", "5", "--row"], capsys)
    assert d["rows"] == {"5": ["0", "15", "0", "10", "0", "1"]}             # x^5 = He_5 + 10 He_3 + 15 He_1


# ----------------------------------------------------------------------------------------------- resolvent / gains
def test_resolvent_matches_float64_batch_solver(capsys):
    from onestep_theory.spikes.resolvent import resolvent_sweep

    c1, cg = tanh_constants()
    d = run_json(["resolvent", "--student", "tanh", "--phi", "1/2", "--psi", "3", "--lam", "0.25"], capsys)
    assert abs(float(d["c1"]) - c1) < 1e-14 and abs(float(d["c_gt1"]) - cg) < 1e-14
    m1, m2, dm1, dm2, _ = resolvent_sweep(0.5, 3.0, 0.25, c1, cg)
    for key, ref in (("m1", m1), ("m2", m2), ("dm1_dlam", dm1), ("dm2_dlam", dm2)):
        assert abs(float(d[key]) / float(ref) - 1) < 1e-10, key
    rc, out, _ = run(["resolvent", "--student", "tanh", "--phi", "1/2", "--psi", "3", "--lam", "0.25"], capsys)
    assert rc == 0
    rows = {ln.split()[0]: ln.split()[2] for ln in out.splitlines() if "+/-" in ln and not ln.startswith("(")}
    assert rows == {k: d[k] for k in ("m1", "m2", "dm1_dlam", "dm2_dlam")}
    assert f"c1={d['c1']} +/- {d['errors']['c1']}, c_>1={d['c_gt1']} +/- {d['errors']['c_gt1']};" in out


GAINS = ["gains", "--student", "tanh", "--teacher", "sin", "--phi", "1", "--psi", "2", "--lam", "1/2"]


def _tanh_resolvent(phi, psi, lam):
    from onestep_theory.spikes.resolvent import resolvent_sweep

    m1, m2, dm1, dm2, _ = resolvent_sweep(phi, psi, lam, *tanh_constants())
    return float(m1), float(m2), float(dm1), float(dm2)


def test_gains_closed_forms(capsys):
    """Delta_1 = c*1^4 lam m2 psi / (phi b^2), b^2 = c*1^2 + phi c*^2, and
    L_tr(F0) = lam psi/phi [c*1^2 m2 + (c*^2 - c*1^2) m1] (docs/theory/spike-theory.md §7), sin teacher."""
    phi, psi, lam = 1.0, 2.0, 0.5
    m1, m2, _, _ = _tanh_resolvent(phi, psi, lam)
    b2 = SIN_C1 ** 2 + phi * SIN_M2
    d = run_json(GAINS + ["--ell", "1"], capsys)
    assert len(d["delta"]) == 1 and d["lambda_validated"] == [True]
    assert abs(float(d["delta"][0]) / (SIN_C1 ** 4 * lam * m2 * psi / (phi * b2)) - 1) < 1e-9
    ltr = lam * psi / phi * (SIN_C1 ** 2 * m2 + (SIN_M2 - SIN_C1 ** 2) * m1)
    assert abs(float(d["baseline_train"]) / ltr - 1) < 1e-9


def test_gains_text_slide_form_notes_and_symbolic(capsys):
    """Lambda_1^slide = c*1^4 / b^2 (-dm2/dlam), flagged unvalidated with a note; --symbolic prints the
    closed form and its LaTeX."""
    phi, psi, lam = 1.0, 2.0, 0.5
    _, m2, _, dm2 = _tanh_resolvent(phi, psi, lam)
    b2 = SIN_C1 ** 2 + phi * SIN_M2
    rc, out, err = run(GAINS + ["--ell", "1", "--test-form", "slide", "--symbolic"], capsys)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("student tanh, teacher sin, phi=1, psi=2, lam=1/2, noise_var=0, ell=1")
    delta = [ln for ln in lines if ln.startswith("Delta_1  = ")]
    assert len(delta) == 1
    assert abs(float(delta[0].split("=")[1].split("+/-")[0]) / (SIN_C1 ** 4 * lam * m2 * psi / (phi * b2)) - 1) < 1e-9
    lam_line = [ln for ln in lines if ln.startswith("Lambda_1 = ")]
    assert len(lam_line) == 1 and lam_line[0].endswith("(unvalidated)   [slide]")
    assert abs(float(lam_line[0].split()[2]) / (SIN_C1 ** 4 / b2 * -dm2) - 1) < 1e-9
    assert any(ln.startswith("note: test_form='slide'") for ln in lines)
    assert any(ln.startswith("baseline L_tr(F0) = ") for ln in lines)
    assert any(ln.startswith("baseline L_te(F0) = ") for ln in lines)
    sym = [ln for ln in lines if ln.startswith("delta_1 = ")]
    assert len(sym) == 1 and "m2" in sym[0] and "psi" in sym[0]
    assert any(ln.startswith("  LaTeX: ") for ln in lines)
    assert "warning" not in err                  # the theory's warnings become notes, not stderr lines


def test_gains_alpha_picks_the_window(capsys):
    """alpha = 1/5 lies in the window ((l-1)/(2l), l/(2l+2)) of l = 1: same answer as --ell 1."""
    a = run_json(GAINS + ["--alpha", "1/5"], capsys)
    b = run_json(GAINS + ["--ell", "1"], capsys)
    assert a["ell"] == 1 and a["delta"] == b["delta"]
    rc, out, err = run(GAINS + ["--alpha", "1/5", "--ell", "1"], capsys)
    assert_one_line_error(rc, out, err, "gains", "not allowed with argument")


# ----------------------------------------------------------------------------------------------- srf family
def _srf_point(capsys, *extra):
    d = run_json(["srf", *SRF_AE, "--beta", "1", *extra], capsys)
    return float(d["test_error"]), float(d["abs_error"])


def _close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(b))


def test_srf_curve_alphas_equals_single_point_solves(capsys, tmp_path):
    """The warm-started sweep over alpha reproduces independent single-point solves; --csv writes the
    table that is printed."""
    path = tmp_path / "curve.csv"
    rc, out, err = run(["srf-curve", *SRF_AE, "--alphas", "0.5,1", "--csv", path], capsys)
    assert rc == 0, err
    # (the printed table uses the csv module's "\r\n" line ends, like the file: compare the lines)
    assert path.read_text().splitlines() == out.rstrip("\n").splitlines()
    rows = read_csv(io.StringIO(out))[1]                   # after the "#" lines of context
    assert [float(r["alpha"]) for r in rows] == [0.5, 1.0]
    for row in rows:
        ref, ref_err = _srf_point(capsys, "--alpha", row["alpha"], "--lam", "0.1")
        assert _close(float(row["test_error"]), ref, 1e-9), (row, ref, ref_err)
    # r, c, gamma of every row: Result 3.1 in closed form
    ref = mapping_tanh_sin(20, 3)
    for row in rows:
        for k in ("r", "c", "gamma"):
            assert float(row[k]) == pytest.approx(ref[k], rel=1e-13), k


def test_srf_curve_lam_sweep_json(capsys):
    d = run_json(["srf-curve", *SRF_AE, "--sweep", "lam", "--values", "0.1,1", "--alpha", "1"], capsys)
    assert d["sweep"] == "lam"
    assert [r["lam"] for r in d["rows"]] == ["0.1", "1"]          # as typed
    assert "lam" not in d["fixed"] and float(d["fixed"]["alpha"]) == 1
    for row in d["rows"]:
        ref, _ = _srf_point(capsys, "--alpha", "1", "--lam", row["lam"])
        assert _close(float(row["test_error"]), ref)
        assert int(row["digits"]) >= 8


def test_srf_curve_eta_sweep_remaps(capsys):
    """Sweeping eta recomputes r, c, gamma from Result 3.1 at every eta."""
    rc, out, err = run(["srf-curve", *SRF_AE, "--sweep", "eta", "--values", "1,3", "--alpha", "1"], capsys)
    assert rc == 0, err
    rows = read_csv(io.StringIO(out))[1]
    for row in rows:
        ref = mapping_tanh_sin(20, float(row["eta"]))
        for k in ("r", "c", "gamma"):
            assert float(row[k]) == pytest.approx(ref[k], rel=1e-13), k
        d = run_json(["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", row["eta"],
                      "--alpha", "1", "--beta", "1", "--lam", "0.1"], capsys)
        assert _close(float(row["test_error"]), float(d["test_error"]))
    assert float(rows[0]["r"]) < float(rows[1]["r"])          # r grows with the learning rate
    assert rows[0]["gamma"] == rows[1]["gamma"]               # gamma does not depend on eta


@pytest.mark.parametrize("extra,needle", [
    (["--alphas", "1", "--sweep", "lam"], "not both"),
    (["--alphas", "1", "--values", "0.1"], "not both"),
    (["--sweep", "lam", "--alpha", "1"], "together with --values"),
    (["--values", "0.1,1", "--alpha", "1"], "together with --values"),
    (["--alpha", "1"], "--alphas, or --sweep PARAM --values LIST"),
    (["--sweep", "eta", "--values", "1,3", "--alpha", "1", "--spectrum-mode", "empirical"],
     "alpha or lam with --spectrum-mode empirical"),
    (["--sweep", "beta", "--values", "1,2", "--alpha", "1", "--spectrum-mode", "empirical"],
     "alpha or lam with --spectrum-mode empirical"),
])
def test_srf_curve_argument_combinations_rejected(capsys, extra, needle):
    rc, out, err = run(["srf-curve", *SRF_AE, *extra], capsys)
    assert_one_line_error(rc, out, err, "srf-curve", needle)


@pytest.mark.parametrize("param", ["eta", "alpha0"])
def test_srf_curve_mapping_sweep_needs_the_mapping(capsys, param):
    rc, out, err = run(["srf-curve", "--student", "tanh", "--teacher", "sin", "--r", "1", "--c", "1", "--gamma",
                        "0.9", "--sweep", param, "--values", "1,3", "--alpha", "1"], capsys)
    assert_one_line_error(rc, out, err, "srf-curve", f"--sweep={param}", "alpha, beta or lam")


def test_srf_curve_empirical_equals_single_point_empirical(capsys):
    """--spectrum-mode empirical: the sweep and the single-point solve sample the same bulk (same seed)."""
    emp = ["--spectrum-mode", "empirical", "--empirical-d", "60", "--seed", "4"]
    d = run_json(["srf-curve", *SRF_AE, "--sweep", "lam", "--values", "0.1,1", "--alpha", "1", *emp], capsys)
    assert [r["lam"] for r in d["rows"]] == ["0.1", "1"]
    for row in d["rows"]:
        ref = run_json(["srf", *SRF_AE, "--alpha", "1", "--beta", "1", "--lam", row["lam"], *emp], capsys)
        assert _close(float(row["test_error"]), float(ref["test_error"]))


def test_srf_empirical_depends_on_the_seed_only(capsys):
    base = ["srf", *SRF_AE, "--alpha", "1", "--beta", "1", "--lam", "0.1", "--spectrum-mode", "empirical",
            "--empirical-d", "60"]
    a = run_json(base + ["--seed", "1"], capsys)
    b = run_json(base + ["--seed", "1"], capsys)
    c = run_json(base + ["--seed", "2"], capsys)
    mp = run_json(["srf", *SRF_AE, "--alpha", "1", "--beta", "1", "--lam", "0.1"], capsys)
    assert a["test_error"] == b["test_error"]
    assert a["test_error"] != c["test_error"]
    assert a["options"]["spectrum"] == "empirical" and mp["options"]["spectrum"] == "mp"
    # a 60-dimensional sample of the bulk: close to, but not equal to, the asymptotic answer
    for e in (a, c):
        assert e["test_error"] != mp["test_error"]
        assert abs(float(e["test_error"]) / float(mp["test_error"]) - 1) < 0.3


def test_srf_text_output(capsys):
    rc, out, err = run(["srf", *SRF_AE, "--alpha", "1", "--beta", "1", "--lam", "0.1"], capsys)
    assert rc == 0, err
    d = run_json(["srf", *SRF_AE, "--alpha", "1", "--beta", "1", "--lam", "0.1"], capsys)
    assert f"test error eps_g = {d['test_error']}   (+/- {d['abs_error']}, {d['digits']} digits)" in out
    for k, v in d["order"].items():
        assert any(ln.split()[:3] == [k, "=", v] for ln in out.splitlines()), k


def test_srf_provenance_records_the_mapping_only_when_used(capsys):
    """Given (alpha0, eta) the parameters come from Result 3.1 (recorded); given (r, c, gamma) they are used as
    they are: the same point gives the same test error."""
    ref = mapping_tanh_sin(20, 3)
    rest = ["--alpha", "1", "--beta", "1", "--lam", "0.1"]
    by_map = run_json(["srf", *SRF_AE, *rest], capsys)
    by_rcg = run_json(["srf", "--student", "tanh", "--teacher", "sin", "--r", repr(ref["r"]), "--c", repr(ref["c"]),
                       "--gamma", repr(ref["gamma"]), *rest], capsys)
    assert by_map["provenance"]["mapping"] == "Result 3.1 (eqs. 9-11), c_formula=corrected"
    assert "mapping" not in by_rcg["provenance"]
    assert _close(float(by_rcg["test_error"]), float(by_map["test_error"]))


def test_spectrum_mean_spike_scales_with_d(capsys):
    base = ["spectrum", "--student", "tanh", "--r", "1", "--c", "1", "--gamma", "1", "--alpha", "2", "--beta", "1",
            "--z", "0.5,1"]
    d = run_json(base + ["--d", "1000"], capsys)
    assert d["x"] == ["0.5", "1.0"]                                # JSON numbers are decimal strings
    assert float(d["mean_spike"]) == pytest.approx(1000 * float(d["mean_spike_per_d"]), rel=1e-12)
    # Stieltjes transform of a positive measure at -lam: 0 < V(-lam) < 1/lam, decreasing
    v = [float(d["stieltjes_at_minus_lambda"][k]) for k in ("0.1", "0.5", "1", "3")]
    assert all(0 < x < 1 / lam for x, lam in zip(v, (0.1, 0.5, 1, 3)))
    assert v == sorted(v, reverse=True)
    rc, out, _ = run(base + ["--d", "1000"], capsys)
    assert rc == 0 and f"mean spike = {d['mean_spike']}" in out
    rc, out, _ = run(base, capsys)
    assert rc == 0 and "mean spike =" not in out


def test_cge_and_mapping_text(capsys):
    rc, out, _ = run(["cge", "--student", "tanh", "--r", "1", "--c", "1", "--gamma", "1", "--kappa", "0,1/2"], capsys)
    assert rc == 0
    rows = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines()[2:]}
    c1, cg = tanh_constants()
    # kappa = 0, c = 1: mu1 = E[tanh'(Z)] = c1 and mu*^2 = c_{>1}^2 of tanh
    assert set(rows) == {"0", "1/2"}
    assert float(rows["0"][1]) == pytest.approx(c1, rel=1e-12)
    assert float(rows["0"][2]) == pytest.approx(cg ** 2, rel=1e-10)
    assert abs(float(rows["0"][0])) < 1e-12                    # tanh is odd
    rc, out, _ = run(["mapping", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3"], capsys)
    assert rc == 0
    mu = {ln.split("=")[0].strip(): ln.split("=")[-1].split("+/-")[0].strip() for ln in out.splitlines()[1:]}
    assert float(mu["mu1*"]) == pytest.approx(SIN_C1, rel=1e-15)           # E sin'(Z) = e^{-1/2}
    assert float(mu["mu2* (incl. noise)"]) == pytest.approx(SIN_M2, rel=1e-15)     # E y^2
    ref = mapping_tanh_sin(20, 3)
    for k, label in (("r", "spike strength r (10)"), ("c", "bulk variance c (11)"), ("gamma", "alignment gamma (9)")):
        assert float(mu[label]) == pytest.approx(ref[k], rel=1e-14), k


def test_bounds_routes(capsys):
    """The three routes of ``bounds``: (r, c, gamma); (alpha0, eta) through the mapping; eta-optimised."""
    by_rcg = run_json(["bounds", "--student", "tanh", "--teacher", "sin", "--r", "1"], capsys)
    assert float(by_rcg["c"]) == float(by_rcg["gamma"]) == 1        # --c and --gamma default to 1
    assert float(by_rcg["lower"]) <= float(by_rcg["upper"]) <= float(by_rcg["best_linear"])
    by_eta = run_json(["bounds", "--student", "tanh", "--teacher", "sin", "--eta", "3"], capsys)
    # alpha0 defaults to inf: gamma = 1, c = 1, r = eta mu1 mu1*
    assert float(by_eta["r"]) == pytest.approx(3 * tanh_constants()[0] * SIN_C1, rel=1e-14)
    assert float(by_eta["gamma"]) == float(by_eta["c"]) == 1
    same = run_json(["bounds", "--student", "tanh", "--teacher", "sin", "--r", by_eta["r"]], capsys)
    assert same["upper"] == by_eta["upper"]


def test_bounds_optimize_eta_is_the_minimum_over_eta(capsys):
    """(28): the optimised upper bound equals the fixed-eta bound at eta_upper and is below the bound at
    other learning rates; r reported is Result 3.1 at eta_upper."""
    base = ["bounds", "--student", "tanh", "--teacher", "sin", "--alpha0", "20"]
    opt = run_json(base + ["--optimize-eta"], capsys)
    assert opt["optimized"] is True and 0 < float(opt["eta_upper"]) <= 10
    at_opt = run_json(base + ["--eta", opt["eta_upper"]], capsys)
    assert float(at_opt["upper"]) == pytest.approx(float(opt["upper"]), rel=1e-9)
    for eta in ("1", "3", "10"):
        assert float(opt["upper"]) <= float(run_json(base + ["--eta", eta], capsys)["upper"]) * (1 + 1e-12)
    # r is Result 3.1 at the argmin: within its printed error (which carries the argmin's) of the mapping there
    r_at = mapping_tanh_sin(20, float(opt["eta_upper"]))["r"]
    assert abs(float(opt["r"]) - r_at) <= float(opt["errors"]["r"]) * 1.01 + 1e-14
    assert 0 < float(opt["errors"]["eta_upper"]) < 1e-5


def test_srf_needs_a_route_to_r_c_gamma(capsys):
    rc, out, err = run(["srf", "--student", "tanh", "--teacher", "sin", "--alpha", "1", "--beta", "1", "--lam", "0.1"],
                       capsys)
    assert_one_line_error(rc, out, err, "srf", "alpha0", "--r --c --gamma")
    rc, out, err = run(["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--alpha", "1", "--beta",
                        "1", "--lam", "0.1"], capsys)
    assert_one_line_error(rc, out, err, "srf", "--alpha0 and --eta")


# ----------------------------------------------------------------------------------------------- simulate
SIM_SRF = ["simulate", "srf", "--student", "tanh", "--teacher", "sin", "--d", "60", "--alpha", "1", "--beta", "1",
           "--n-test", "300"]


def test_simulate_srf_seed_reproducible(capsys):
    a = run_json(SIM_SRF + ["--r", "1", "--c", "1", "--gamma", "0.9", "--seed", "5"], capsys)
    b = run_json(SIM_SRF + ["--r", "1", "--c", "1", "--gamma", "0.9", "--seed", "5"], capsys)
    c = run_json(SIM_SRF + ["--r", "1", "--c", "1", "--gamma", "0.9", "--seed", "6"], capsys)
    assert a["stats"] == b["stats"] and a["seed"] == 5
    assert stats_means(a)["test_error"] != stats_means(c)["test_error"]
    assert a["params"]["n"] == a["params"]["p"] == 60 and a["params"]["gamma"] == "0.9"
    assert all(v["se"] is None for v in a["stats"].values())              # one repetition: no s.e.


def test_simulate_srf_mapping_route_and_sizes(capsys):
    """--alpha0/--eta go through Result 3.1: same run as giving its r, c, gamma; --n/--p/--n0 are ratios * d."""
    ref = mapping_tanh_sin(2, 1)
    r, c, g = ref["r"], ref["c"], ref["gamma"]
    by_map = run_json(SIM_SRF + ["--alpha0", "2", "--eta", "1"], capsys)
    by_rcg = run_json(SIM_SRF + ["--r", repr(r), "--c", repr(c), "--gamma", repr(g)], capsys)
    for k in ("r", "c", "gamma"):
        assert float(by_map["params"][k]) == pytest.approx(ref[k], rel=1e-14)
    for k, v in stats_means(by_rcg).items():
        assert stats_means(by_map)[k] == pytest.approx(v, rel=1e-9), k
    sizes = ["simulate", "srf", "--student", "tanh", "--teacher", "sin", "--d", "60", "--n", "60", "--p", "60",
             "--n0", "120", "--eta", "1", "--n-test", "300"]
    by_sizes = run_json(sizes, capsys)
    assert by_sizes["stats"] == by_map["stats"]


def test_simulate_srf_text(capsys):
    rc, out, err = run(SIM_SRF + ["--r", "1", "--c", "1", "--gamma", "0.9", "--reps", "2", "--quiet"], capsys)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("srf-network: student=tanh, teacher=sin, d=60, n=60, p=60")
    assert lines[1].split() == ["quantity", "mean", "s.e."]
    te = [ln.split() for ln in lines if ln.startswith("test_error")][0]
    assert float(te[1]) > 0 and float(te[2]) >= 0                      # two repetitions: an s.e.
    assert lines[-1].startswith("(2 repetition(s), seed 0, ")


@pytest.mark.parametrize("extra,needle", [
    (["--beta", "1", "--r", "1", "--c", "1", "--gamma", "1"], "alpha"),       # neither --alpha nor --n
    (["--alpha", "1", "--r", "1", "--c", "1", "--gamma", "1"], "beta"),       # neither --beta nor --p
    (["--alpha", "1", "--beta", "1", "--r", "1"], "gamma"),                  # r without c, gamma
    (["--alpha", "1", "--beta", "1", "--alpha0", "2"], "eta"),               # mapping without eta
    (["--alpha", "1", "--beta", "1"], "alpha0"),                             # nothing to get r, c, gamma from
])
def test_simulate_srf_missing_parameters(capsys, extra, needle):
    rc, out, err = run(["simulate", "srf", "--student", "tanh", "--teacher", "sin", "--d", "60", *extra], capsys)
    assert_one_line_error(rc, out, err, "simulate srf", needle)


def test_simulate_srf_lambda_list_is_not_silently_truncated(capsys):
    rc, out, err = run(SIM_SRF + ["--r", "1", "--c", "1", "--gamma", "0.9", "--lam", "0.1,0.5,5", "--json"], capsys)
    if rc == 0:           # either every lambda is simulated ...
        assert json.loads(out)["params"]["lam"] == [0.1, 0.5, 5.0]
    else:                 # ... or the list is refused in one line naming --lam
        assert_one_line_error(rc, out, err, "simulate srf", "--lam")


def test_debug_flag_after_a_simulate_protocol(monkeypatch, capsys):
    import onestep_theory.simulate as S

    def boom(*a, **k):
        raise RuntimeError("the original exception")

    monkeypatch.setattr(S, "sim_srf", boom)
    with pytest.raises(RuntimeError, match="the original exception"):
        main(SIM_SRF + ["--r", "1", "--c", "1", "--gamma", "0.9", "--debug"])


def test_simulate_spectrum_identities_and_errors(capsys):
    base = ["simulate", "spectrum", "--student", "tanh", "--d", "60", "--alpha", "1", "--beta", "1"]
    d = run_json(base + ["--r", "1", "--c", "1", "--gamma", "0.9"], capsys)
    s = stats_means(d)
    assert s["top_eigenvalue"] >= s["second_eigenvalue"] > 0
    lams = (0.1, 0.5, 1, 3)
    v = [s[f"stieltjes@{lam:g}"] for lam in lams]
    assert all(0 < x < 1 / lam for x, lam in zip(v, lams)) and v == sorted(v, reverse=True)
    # against the asymptotic bulk (theory ``spectrum``), a loose finite-d check
    th = run_json(["spectrum", "--student", "tanh", "--r", "1", "--c", "1", "--gamma", "1", "--alpha", "1",
                   "--beta", "1", "--z", "1"], capsys)
    for lam in lams:
        assert s[f"stieltjes@{lam:g}"] == pytest.approx(float(th["stieltjes_at_minus_lambda"][f"{lam:g}"]),
                                                        rel=0.1)
    rc, out, err = run(base + ["--alpha0", "2", "--eta", "1"], capsys)        # the mapping needs a teacher
    assert_one_line_error(rc, out, err, "simulate spectrum", "teacher")
    d = run_json(base + ["--teacher", "sin", "--n0", "120", "--eta", "1", "--lam", "0.5"], capsys)
    assert list(stats_means(d)) == ["top_eigenvalue", "second_eigenvalue", "stieltjes@0.5"]


def test_simulate_giant_step(capsys):
    """Sizes by ratios or by counts give the same run; the theory column is Result 3.1 of the same alpha0, eta."""
    ratios = ["simulate", "giant-step", "--student", "tanh", "--teacher", "sin", "--d", "60", "--alpha", "1",
              "--beta", "1", "--alpha0", "2", "--eta", "1", "--n-test", "300", "--seed", "3"]
    a = run_json(ratios, capsys)
    b = run_json(["simulate", "giant-step", "--student", "tanh", "--teacher", "sin", "--d", "60", "--n", "60",
                  "--p", "60", "--n0", "120", "--eta", "1", "--n-test", "300", "--seed", "3"], capsys)
    assert a["stats"] == b["stats"]
    th = mapping_tanh_sin(2, 1)
    for k in ("r", "c", "gamma"):
        assert float(a["theory"][k]) == pytest.approx(th[k], rel=1e-14)
        assert stats_means(a)[k] == pytest.approx(th[k], rel=0.25)     # d = 60: loose
    c = run_json(ratios[:-1] + ["4"], capsys)
    assert stats_means(c)["test_error"] != stats_means(a)["test_error"]
    rc, out, _ = run(ratios + ["--lam", "0.1,1"], capsys)          # several lambdas: one run, a list
    assert rc == 0
    assert out.splitlines()[1].split() == ["quantity", "mean", "s.e.", "theory"]
    rc, out, err = run(ratios[:12] + ["--eta", "1"], capsys)      # no --alpha0 / --n0
    assert_one_line_error(rc, out, err, "simulate giant-step", "alpha0")


def test_simulate_resolvent_against_theory(capsys):
    """d = 60: the empirical traces are within a few per cent of the asymptotic ones (resolvent_sweep)."""
    base = ["simulate", "resolvent", "--student", "tanh", "--phi", "1", "--psi", "2", "--d", "60",
            "--lam", "0.5,1"]
    d = run_json(base + ["--seed", "3"], capsys)
    s = stats_means(d)
    for lam in (0.5, 1.0):
        m1, m2, dm1, dm2 = _tanh_resolvent(1.0, 2.0, lam)
        for k, ref in (("m1", m1), ("m2", m2)):
            assert s[f"{k}@{lam:g}"] == pytest.approx(ref, rel=0.03)
        for k, ref in (("dm1_dlam", dm1), ("dm2_dlam", dm2)):
            assert s[f"{k}@{lam:g}"] == pytest.approx(ref, rel=0.1)
    assert d["params"]["n"] == 60 and d["params"]["N"] == 30              # n = d/phi, N = d/psi
    assert run_json(base + ["--seed", "3"], capsys)["stats"] == d["stats"]
    assert stats_means(run_json(base + ["--seed", "4"], capsys))["m1@0.5"] != s["m1@0.5"]
    rc, out, _ = run(base + ["--bulk", "gaussian", "--init", "gaussian"], capsys)
    assert rc == 0 and out.startswith("resolvent: student=")


def test_simulate_spikes_network_identities(capsys):
    base = ["simulate", "spikes", "--student", "tanh", "--teacher", "sin", "--d", "60", "--phi", "1", "--psi", "2",
            "--eta", "1", "--n-test", "300"]
    d = run_json(base + ["--singular"], capsys)
    s = stats_means(d)
    assert s["train_gain"] == pytest.approx(s["train_loss_F0"] - s["train_loss_F"], abs=1e-12)
    assert s["test_gain"] == pytest.approx(s["test_loss_F0"] - s["test_loss_F"], abs=1e-12)
    sv = [float(v) for v in d["extra"]["singular_values"][0]]
    assert sv == sorted(sv, reverse=True) and sv[-1] > 0
    rc, out, err = run(base[:-4], capsys)                # neither --eta nor --alpha
    assert_one_line_error(rc, out, err, "simulate spikes", "alpha")


def test_simulate_spike_model_identities(capsys):
    """Protocol B: delta = L_tr(F0) - L_tr(F) and lambda_test = L_te(F0) - L_te(F)."""
    d = run_json(["simulate", "spikes", "--student", "tanh", "--teacher", "sin", "--d", "40", "--phi", "1",
                  "--psi", "2", "--eta", "1", "--model", "finite", "--ell", "1"], capsys)
    assert d["protocol"] == "spike-model-finite" and d["params"]["ell"] == 1
    s = stats_means(d)
    assert s["delta"] == pytest.approx(s["train_loss_F0"] - s["train_loss"], abs=1e-12)
    assert s["lambda_test"] == pytest.approx(s["test_loss_F0"] - s["test_loss"], abs=1e-12)


# ----------------------------------------------------------------------------------------------- reproduce
@pytest.mark.parametrize("flag,mode", [([], "quick"), (["--quick"], "quick"), (["--smoke"], "smoke"),
                                       (["--full"], "full")])
def test_reproduce_modes(monkeypatch, capsys, tmp_path, flag, mode):
    import onestep_theory.reproduce.report as R

    calls = []

    def fake_run(out, mode, seed, quiet, command):
        calls.append((out, mode, seed, quiet))
        assert command.startswith("onestep-theory reproduce")          # the tables' context: the command as typed
        return {"seconds": 1.5}

    monkeypatch.setattr(R, "run", fake_run)
    out_dir = tmp_path / "rep"
    rc, out, err = run(["reproduce", *flag, "--out", out_dir, "--seed", "7", "--quiet"], capsys)
    assert rc == 0, err
    assert calls == [(str(out_dir), mode, 7, True)]
    assert out_dir.is_dir()                                  # created before the work starts
    assert out.strip() == f"wrote {out_dir / 'report.md'} (1.5 s, mode {mode})"


def test_reproduce_modes_are_exclusive(monkeypatch, capsys, tmp_path):
    import onestep_theory.reproduce.report as R

    monkeypatch.setattr(R, "run", lambda *a, **k: pytest.fail("must not run"))
    rc, out, err = run(["reproduce", "--smoke", "--full", "--out", tmp_path], capsys)
    assert_one_line_error(rc, out, err, "reproduce", "--full", "not allowed with argument --smoke")


def test_reproduce_json(monkeypatch, capsys, tmp_path):
    """`reproduce --json` (every command accepts it): the report, the files written and the summary."""
    import onestep_theory.reproduce.report as R

    def fake_run(out, mode, seed, quiet, command):
        (out_dir / "report.md").write_text("# report")
        return {"seconds": 1.5, "mode": mode, "experiments": []}

    monkeypatch.setattr(R, "run", fake_run)
    out_dir = tmp_path / "rep"
    d = run_json(["reproduce", "--smoke", "--out", out_dir, "--quiet"], capsys)
    assert d["report"] == str(out_dir / "report.md") and d["files"] == [str(out_dir / "report.md")]
    assert d["mode"] == "smoke" and d["seconds"] == "1.5"
