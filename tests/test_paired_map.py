"""The corrected paired references of `study giant-step` (``corrected=True``) and the map's extrapolated verdicts
(issue 36 items 2 and 4; docs/studies/paired-map.md).

References: the theory through Result 3.1's mapping (α0, η̃) against the same theory at explicit (r, c, γ) plus α0
(two code paths, the second new); a least-squares slope by numpy.polyfit; the shipped map read as plain JSON."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from onestep_theory.core.errors import InvalidParameterError
from onestep_theory.srf import srf_solve
import onestep_theory.srf.features.network_map as nm
from onestep_theory.srf.features.mapping import resolve_rcg, row_norm_params
from onestep_theory.study.protocols import CORRECTED, corrected_references, protocol_of
from onestep_theory.study.run import run_study

A = dict(student="tanh", teacher="sin", alpha=3, beta=1, lam=0.1, alpha0=20, eta=3)
B = dict(A, teacher="tanh", alpha0=0.5, eta=1)
MAP = json.loads((pathlib.Path(nm.__file__).with_name("network_map.json")).read_text())


@pytest.mark.parametrize("case", [pytest.param(A, marks=pytest.mark.slow), B])     # case A: 3 s cold
def test_trained_bulk_at_explicit_parameters_is_the_mapped_one(case):
    """spectrum="trained" at (r, c, γ) given with α0 equals the theory through Result 3.1's mapping, with and without
    the row norms at the predicted (k, s²) (the paired references' path against the named option's)."""
    p = dict(case)
    st, te, a0, eta = p.pop("student"), p.pop("teacher"), p.pop("alpha0"), p.pop("eta")
    r, c, g, _ = resolve_rcg(st, te, None, None, None, repr(a0), repr(eta))
    k, s2, _ = row_norm_params(st, te, repr(a0), repr(eta), 0, r)
    rcg = dict(r=float(r), c=float(c), gamma=float(g), alpha0=repr(a0))
    for extra, mapped in (({}, {}), ({"row_norms": (float(k), float(s2))}, {"row_norms": True})):
        x = srf_solve(st, te, **p, **rcg, spectrum="trained", tol=1e-9, **extra)
        y = srf_solve(st, te, **p, alpha0=repr(a0), eta=repr(eta), spectrum="trained", tol=1e-9, **mapped)
        assert abs(float(x.test_error) - float(y.test_error)) < 1e-9 * float(y.test_error) + 2 * float(y.abs_error)


def test_trained_bulk_needs_alpha0_beside_explicit_parameters():
    with pytest.raises(InvalidParameterError, match="alpha0"):
        srf_solve("tanh", "sin", r=1.1, c=1.02, gamma=0.97, alpha=3, beta=1, lam=0.1, spectrum="trained")
    with pytest.raises(InvalidParameterError, match="alpha0"):
        srf_solve("tanh", "sin", r=1.1, c=1.02, gamma=0.97, alpha0="-2", alpha=3, beta=1, lam=0.1, spectrum="trained")


def test_measured_row_norms_are_the_least_squares_line():
    """k̂ and ŝ of a synthetic bulk whose squared row norms are c + k w⁰ᵢ·v + noise/√d (k = −1.3, s = 0.2): the slope
    is numpy.linalg.lstsq's (as sim_ablation measures it), the spread its residual's, and the measured values within sampling error of (k, s)."""
    rng = np.random.default_rng(7)
    p, d = 1200, 400
    W0 = rng.standard_normal((p, d)) / math.sqrt(d)
    v = rng.standard_normal(d)
    v /= np.linalg.norm(v)
    eps = W0 @ v
    target = 1.02 - 1.3 * eps + 0.2 * rng.standard_normal(p) / math.sqrt(d)
    Wt = W0 * np.sqrt(target / np.sum(W0 * W0, axis=1))[:, None]
    common = dict(r=1.13, c=float(np.sum(Wt * Wt)) / p, gamma=0.97, alpha=3, beta=1, lam=0.1, noise_var=0, tol=1e-8)
    out = corrected_references("tanh", "sin", common, "20", W0, Wt, v)
    nb2 = np.sum(Wt * Wt, axis=1)      # the ablation's line: the centred norms against w⁰ᵢ·v (mean 0), no intercept
    slope = np.linalg.lstsq(eps[:, None], nb2 - nb2.mean(), rcond=None)[0][0]
    assert out["norm_slope_v"] == pytest.approx(slope, rel=1e-10)
    resid = nb2 - nb2.mean() - slope * eps
    assert out["norm_noise_v"] == pytest.approx(np.std(resid) * math.sqrt(d), rel=1e-8)
    assert abs(out["norm_slope_v"] + 1.3) < 0.05 and abs(out["norm_noise_v"] - 0.2) < 0.02
    # the orientation: with v reversed (γ̂ < 0 measured) the slope against the oriented direction is the same
    flip = corrected_references("tanh", "sin", dict(common, gamma=-0.97), "20", W0, Wt, -v)
    assert flip["norm_slope_v"] == pytest.approx(out["norm_slope_v"], rel=1e-12)
    # each correction moves the theory the way it moves at Result 3.1's parameters (case A: row norms −3 %)
    base = float(srf_solve("tanh", "sin", **common).test_error)
    assert -0.05 < out["theory_measured_rn"] / base - 1 < -0.02
    assert abs(out["theory_measured_both"] - out["theory_measured_rn"]) < 0.01 * base


def test_corrected_option_checked_and_old_studies_unchanged():
    pr = protocol_of("giant-step")
    assert pr.check(dict(A, corrected=False)) == pr.check(dict(A))         # the same tasks as before
    assert pr.paired_for(pr.check(dict(A))) == ("f1", "measured")
    assert pr.paired_for(pr.check(dict(A, corrected=True))) == ("f1", "measured") + CORRECTED
    for bad in (dict(loss="logistic"), dict(noise_var=0.1), dict(readout="1:0.5,2:0.5")):
        with pytest.raises(InvalidParameterError, match="corrected"):
            pr.check(dict(A, corrected=True, **bad))
    with pytest.raises(InvalidParameterError, match="corrected"):
        pr.check(dict(A, corrected="yes"))


def test_a_small_corrected_study(tmp_path):
    """Two sizes, two seeds of case B: every corrected comparison is reported, the tasks store k̂, ŝ, and a study
    without ``corrected`` on the same store runs its own tasks (the store keys differ) and reads as before."""
    store = str(tmp_path / "s.sqlite")
    res = run_study("giant-step", dict(B, corrected=True, n_test=500), [60, 90], [2, 2], exponents=(1.0,), workers=1,
                    store=store)
    assert set(CORRECTED) <= set(res.comparisons)
    for name in CORRECTED:
        rows = res.comparisons[name]["sizes"]
        assert all(r["reps"] == 2 and math.isfinite(r["gap"]) for r in rows)
    plain = run_study("giant-step", dict(B, n_test=500), [60], [2], exponents=(1.0,), workers=1, store=store)
    assert plain.run["executed"] == 2 and set(plain.comparisons) == {"theory", "row_norms", "f1", "measured"}


def _fake_entry(**extra):
    e = {"setting": "case A", "params": {k: str(v) for k, v in A.items()}, "d": 1000, "seeds": 8,
         "theory": 0.0325, "theory_corrected": 0.0315, "network_minus_theory": -0.001, "se": 0.0004}
    return dict(e, **extra)


def test_note_quotes_the_variant_and_its_extrapolated_verdict(monkeypatch):
    v = {"g_inf_percent": -0.5, "se_percent": 0.25, "detectable_percent": 0.8, "status": "inside"}
    paired = {"sizes": [250, 500], "seeds": [4, 4], "trained": {"direct": v, "anchored": dict(v, status="outside")}}
    monkeypatch.setattr(nm, "_entries", lambda: (_fake_entry(theory_trained=0.0330, paired=paired),))
    g = nm.network_gap("tanh", "sin", alpha0=20, eta=3, alpha=3, beta=1, lam="1/10", spectrum="trained")
    line = nm.network_note(g, spectrum="trained")
    gap = 100 * (0.0325 - 0.001 - 0.0330) / 0.0330
    assert f"{gap:+.1f} +/- {100 * 0.0004 / 0.0330:.1f} %" in line
    assert "paired -0.50 +/- 0.25 % (smallest detectable gap 0.8 %): the theory is inside" in line
    assert "anchored on F1 -0.50 +/- 0.25 % (smallest detectable gap 0.8 %): the theory is OUTSIDE" in line
    assert "the trained bulk" in line or "trained bulk" in line
    # no trained-bulk value with the row norms at this entry: said, not a number against another theory
    line2 = nm.network_note(g, corrected=True, spectrum="trained")
    assert "no measurement" in line2 and "%" not in line2.split("(")[0]
    # the uncorrected quote is unchanged in form
    assert "without the row-norm correction" in nm.network_note(g)


@pytest.mark.parametrize("entry", [e for e in MAP["entries"] if e.get("paired")])
def test_shipped_verdicts_are_consistent(entry):
    """Each shipped paired verdict: inside iff |g∞| is within its 95 % half-width; underpowered iff inside and the
    detectable gap is above the tolerance; the theory values the package's (float64 solve)."""
    for key, kind in [(k, w) for k in ("uncorrected", "corrected", "trained", "both") for w in ("direct", "anchored")]:
        v = (entry["paired"].get(key) or {}).get(kind)
        if not v:
            continue
        inside = abs(v["g_inf_percent"]) <= v["half_width_percent"]
        want = ("outside" if not inside else
                "inside" if v["detectable_percent"] <= v["tolerance_percent"] else "underpowered")
        assert v["status"] == want and v["se_percent"] > 0 and v["detectable_percent"] > 2 * v["se_percent"]


def test_cli_corrected_refused_with_a_general_loss(capsys):
    from onestep_theory.cli.main import main

    code = main(["study", "giant-step", "--student", "tanh", "--teacher", "tanh", "--alpha", "3", "--beta", "1",
                 "--lam", "0.1", "--alpha0", "0.5", "--eta", "1", "--loss", "logistic", "--corrected", "--d", "60,90"])
    err = capsys.readouterr().err
    assert code == 2 and "corrected" in err and len(err.strip().splitlines()) == 1


def test_shipped_trained_theory_values_are_the_packages():
    """The map's trained-bulk theory values (its d = 1000 gaps against the trained bulk are computed from them)."""
    e = next(e for e in MAP["entries"] if e["setting"] == "case B")
    p = e["params"]
    kw = dict(alpha0=p["alpha0"], eta=p["eta"], alpha=p["alpha"], beta=p["beta"], lam=p["lam"], tol=1e-10)
    for field, opts in (("theory_trained", {}), ("theory_both", {"row_norms": True})):
        sol = srf_solve(p["student"], p["teacher"], spectrum="trained", **kw, **opts)
        assert abs(float(sol.test_error) - e[field]) < 1e-9 * e[field]
