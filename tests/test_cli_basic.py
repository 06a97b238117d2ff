"""CLI: hermite and xi commands, JSON, one-line errors with exit status 2."""

import json
import time

import mpmath
import pytest

from .conftest import agree, run_cli


def test_hermite_tanh_50_digits_fast():
    t = time.perf_counter()
    rc, out, err = run_cli("hermite", "tanh", "--kmax", "5", "--dps", "50", "--json")
    elapsed = time.perf_counter() - t
    assert rc == 0, err
    d = json.loads(out)
    with mpmath.workdps(70):
        ref = mpmath.quad(lambda z: (1 - mpmath.tanh(z) ** 2) * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])
    assert agree(d["coefficients"][1]["value"], ref, 50)
    assert d["coefficients"][2]["value"] == "0" and d["coefficients"][2]["exact"] == "0"
    # timing is measured in benchmarks/, not asserted here


def test_hermite_relu_exact_and_50_digits():
    rc, out, _ = run_cli("hermite", "Max(x,0)", "--kmax", "4", "--json", "--dps", "50")
    assert rc == 0
    d = json.loads(out)
    assert d["coefficients"][2]["exact"] == "sqrt(2)/(4*sqrt(pi))"
    assert d["coefficients"][3]["exact"] == "0"
    with mpmath.workdps(70):
        assert agree(d["coefficients"][2]["value"], 1 / (2 * mpmath.sqrt(2 * mpmath.pi)), 50)
        assert agree(d["coefficients"][4]["value"], -1 / (24 * mpmath.sqrt(2 * mpmath.pi)), 50)
    rc, out, _ = run_cli("hermite", "Max(x,0)", "--kmax", "4")
    assert "sqrt(2)/(4*sqrt(pi))" in out


@pytest.mark.parametrize("args,param", [
    (("hermite", "exp(x**2)"), "EXPR"),
    (("hermite", "__import__('os')"), "EXPR"),
    (("hermite", "tanh", "--dps", "0"), "--dps"),
    (("hermite", "tanh", "--kmax", "abc"), "--kmax"),
    (("xi", "-3"), "P"),
    (("nonexistent",), "invalid choice"),
])
def test_cli_errors_one_line_exit_2(args, param):
    rc, out, err = run_cli(*args)
    assert rc == 2
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert param in lines[0]
    assert "Traceback" not in err


def test_xi_json_exact_strings():
    rc, out, _ = run_cli("xi", "40", "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["rows"]["4"] == ["3", "0", "6", "0", "1"]
    assert int(d["rows"]["40"][0]) == 319830986772877770815625  # (39)!! = E Z^40


def test_python_m_help():
    rc, out, _ = run_cli("--help")
    assert rc == 0 and "hermite" in out
