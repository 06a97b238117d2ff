"""Parameter conventions (docs/theory/conventions.md): exact conversion, round trips for every pair, the ridge
relations checked against the objectives themselves, --convention on the commands."""

import json

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from onestep_theory import InvalidParameterError
from onestep_theory.cli.main import main
from onestep_theory.core.conventions import CONVENTIONS, convert, round_trip

POS = st.fractions(min_value="1/50", max_value=50)


def _full(conv, draw):
    a, b, lam, eta, d = (draw(POS) for _ in range(5))
    base = {"cui24": dict(alpha=a, beta=b, alpha0=a, eta=eta, lam=lam, noise_var=eta, d=int(d) + 1),
            "dandi24": dict(alpha=a, beta=b, alpha0=a, eta_d=eta, lam=lam, noise_var=eta, d=int(d) + 1),
            "moniri23": dict(phi=a, psi=b, lam=lam, noise_var=eta),
            "ba22": dict(psi1=a, psi2=b, lam=lam, eta=eta, noise_var=eta, d=int(d) + 1)}
    return {k: str(v) for k, v in base[conv].items()}


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_round_trip_every_pair_exactly(data):
    for source in CONVENTIONS:
        params = _full(source, data.draw)
        for target in CONVENTIONS:
            try:
                out = convert(params, source, target)
            except InvalidParameterError as exc:          # only the documented refusals
                assert source != "moniri23" and target == "moniri23" and "counterpart" in str(exc), exc
                continue
            assert all(v.is_Rational or v.is_algebraic for v in out.values())
            assert round_trip(params, source, target), (source, target, params)


def test_acceptance_values_and_refusals():
    assert convert({"alpha": 2, "beta": "1/2", "lam": "1/10"}, "cui24", "moniri23") == \
        {"phi": sp.Rational(1, 2), "psi": 2, "lam": sp.Rational(1, 40)}
    out = convert({"psi1": 2, "psi2": "1/2", "lam": "1/40", "eta": "30*sqrt(5)", "d": 1000}, "ba22", "cui24")
    assert out == {"alpha": 2, "beta": sp.Rational(1, 2), "alpha0": 2, "eta": 3, "lam": sp.Rational(1, 10), "d": 1000}
    assert convert({"eta": 3, "beta": 2, "hat_theta": "sqrt(2)"}, "cui24", "dandi24") == \
        {"beta": 2, "eta_d": 6, "hat_theta": 1}
    for params, src, dst, name in (({"eta": 1}, "cui24", "moniri23", "eta"),
                                   ({"alpha": 2, "alpha0": 3}, "cui24", "ba22", "alpha0"),
                                   ({"lam": 1}, "moniri23", "cui24", "lam"),             # needs phi and psi
                                   ({"eta": 1, "psi2": 1}, "ba22", "cui24", "eta"),      # needs d
                                   ({"alpha": -1}, "cui24", "moniri23", "alpha"),
                                   ({"phi": 1}, "cui24", "moniri23", "phi"),
                                   ({"alpha": 1}, "cui23", "moniri23", "convention")):
        with pytest.raises(InvalidParameterError, match=name):
            convert(params, src, dst)


def _ridge_predictions(F, y, pen):
    """Predictions F a of argmin ||y - F a||^2 + pen ||a||^2."""
    a = np.linalg.solve(F.T @ F + pen * np.eye(F.shape[1]), F.T @ y)
    return F @ a


@pytest.mark.parametrize("n, p", [(30, 12), (12, 30)])
def test_ridge_relations_from_the_objectives(n, p):
    """The lam rows of docs/theory/conventions.md §1 from the objectives: the same predictor in every convention."""
    rng = np.random.default_rng(0)
    S, y = np.tanh(rng.standard_normal((n, p))), rng.standard_normal(n)
    lam, d = 0.3, 20
    cui = _ridge_predictions(S / np.sqrt(p), y, lam)                      # sum loss, readout a / sqrt p
    mon = convert({"alpha": n / d, "beta": p / d, "lam": lam}, "cui24", "moniri23")
    # (1/n)||y - S a||^2 + lam_M ||a||^2  <=>  ||y - S a||^2 + n lam_M ||a||^2
    assert np.allclose(_ridge_predictions(S, y, n * float(mon["lam"])), cui, rtol=1e-10, atol=1e-12)
    ba = convert({"alpha": n / d, "alpha0": n / d, "beta": p / d, "lam": lam}, "cui24", "ba22")
    # (1/n)||y - Phi a||^2 + (lam_B / N)||a||^2 with Phi = S / sqrt N
    assert np.allclose(_ridge_predictions(S / np.sqrt(p), y, n * float(ba["lam"]) / p), cui, rtol=1e-10, atol=1e-12)


def test_cli_convert_and_convention_flag(capsys):
    assert main(["convert", "--from", "cui24", "--to", "moniri23", "alpha=2", "beta=1/2", "lam=1/10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["output"] == {"phi": "1/2", "psi": "2", "lam": "1/40"} and out["round_trip_exact"] is True
    base = ["--student", "tanh", "--teacher", "He1", "--ell", "1", "--json"]
    assert main(["gains", "--phi", "1/2", "--psi", "2", "--lam", "1/40"] + base) == 0
    native = json.loads(capsys.readouterr().out)
    assert main(["gains", "--convention", "cui24", "--alpha", "2", "--beta", "1/2", "--lam", "1/10"] + base) == 0
    assert json.loads(capsys.readouterr().out)["delta"] == native["delta"]
    srf = ["--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--json"]
    assert main(["srf", "--alpha", "2", "--beta", "1", "--lam", "1/10"] + srf) == 0
    native = json.loads(capsys.readouterr().out)
    assert main(["srf", "--convention", "moniri23", "--phi", "1/2", "--psi", "1", "--lam", "1/20"] + srf) == 0
    assert json.loads(capsys.readouterr().out)["test_error"] == native["test_error"]
    for argv, flag in ((["gains", "--convention", "nope", "--phi", "1"], "--convention"),
                       (["convert", "--from", "cui24", "--to", "moniri23", "eta=1"], "eta"),
                       (["srf", "--convention", "moniri23", "--phi", "1/2", "--psi", "1", "--lam", "1/20", "--alpha",
                         "2", "--beta", "1", "--lam", "1"] + srf, "--")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and flag in err, err
