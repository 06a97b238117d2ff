"""Issue 31, two leftovers of its audit: numbers printed or used without their full error.

1. The finite-W prior's order parameters (``srf_groups(..., prior="finite-w")``) were those of the first sampled bulk,
   printed without an error.  They are now the means over the widest bulks with the test error's budget entry by
   entry (95 % Student-t half-width over the bulks, the change from the half width, the κ-rule and Newton changes).
   Reference: the asymptotic prior of §8.1 (another method, the p -> infinity limit the budget claims to contain).
2. The K = 1 reduced readout did not grow its errors by the errors of (r u, 1 + u^2 (c - 1), gamma) from Result 3.1,
   as the single-group path grows them by (r, c, gamma)'s.  Now ``srf_solve(..., rcg_errors=)`` (the one home of that
   growth).  Reference: the readout u = 2 at 50 digits on the non-reduced path (the K-group solver with K = 1).
"""

from __future__ import annotations

import fractions
import itertools
import json
import math
import re

import numpy as np

import pytest

from onestep_theory import InvalidParameterError
from onestep_theory.cli import main
from onestep_theory.simulate import sample_bulks
from onestep_theory.srf import srf_solve
from onestep_theory.srf.grouped.groups import srf_groups

F = fractions.Fraction
KG = dict(readout_spec="1:1/2,2:1/2", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")
CASE = dict(alpha0=20, eta=3, alpha=1, beta=1, lam="1/10")
ORDER = ("m", "theta", "psi", "Q1", "q2", "V1", "V2")
#: The test error of the readout u = 2 (tanh/sin, CASE) to 50 digits on the NON-reduced path:
#: ``srf_groups(..., readout_spec="2:1", reduce=False, dps=50)`` (the asymptotic K-group solver at K = 1; its error
#: 1.7e-57); recomputed by :func:`test_u2_reference_recomputed` (slow).
REF_U2 = "0.032855403614388520208005321252396514040606508086589"


def contains(value, error, ref) -> bool:
    """``|printed value - reference| <= printed error``, exactly (decimal strings as Fractions)."""
    return abs(F(value) - F(ref)) <= F(error)


def flat(v) -> list:
    return list(np.ravel(np.asarray(v, dtype=object)))


# ---------------------------------------------------------------- 1. finite-W order parameters

@pytest.fixture(scope="module")
def asymptotic():
    return srf_groups("tanh", "sin", **KG)


def test_finite_w_order_contains_the_asymptotic_prior(asymptotic):
    """Every order parameter (and the test error) as printed — JSON, repr — is value ± error containing the asymptotic
    prior's value (measured: 30 seeds each at p = 40 with 2 and 4 bulks, 20 and 12 at p = 80 with 4 and 8, 15 at
    K = 3: every entry contained, the largest |gap|/error 0.94; with one standard error as the sampling part, single
    entries missed in up to 25 % of the seeds, the test error in 5-17 %)."""
    sol = srf_groups("tanh", "sin", prior="finite-w", sampler=sample_bulks, bulk_p=40, bulk_count=4, seed=0, **KG)
    d = json.loads(json.dumps(sol.to_dict()))
    assert contains(d["test_error"], d["errors"]["test_error"], repr(float(asymptotic.test_error)))
    text = repr(sol)
    for k in ORDER:
        vals, errs, refs = flat(d["order"][k]), flat(d["errors"]["order"][k]), flat(asymptotic.order[k])
        assert len(vals) == len(errs) == len(refs) >= 2
        for v, e, ref in zip(vals, errs, refs):
            assert float(e) > 0 and contains(v, e, repr(float(ref))), (k, v, e, float(ref))
            assert f"{v} ± {e}" in text                           # the repr prints the same pair
    # the per-bulk values print with their own refinement's error (no bare 17-digit floats)
    assert all(float(e) > 0 for e in d["errors"]["per_bulk"]) and len(d["per_bulk"]) == 4


def test_finite_w_order_on_the_command_line(capsys, asymptotic):
    """``srf --readout … --prior finite-w --json``: every order parameter printed with its error, containing the
    asymptotic prior's value (the text output prints no order parameters, on either prior)."""
    argv = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta",
            "1", "--lam", "0.1", "--readout", "1:0.5,2:0.5", "--prior", "finite-w", "--bulk-p", "40", "--bulk-count",
            "4", "--seed", "3"]
    assert main(argv) == 0
    budget = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("error budget: ")]
    assert len(budget) == 1 and "sampling" in budget[0] and "per_bulk" not in budget[0] and "[" not in budget[0]
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in ORDER:
        for v, e, ref in zip(flat(d["order"][k]), flat(d["errors"]["order"][k]), flat(asymptotic.order[k])):
            assert contains(v, e, repr(float(ref))), (k, v, e, float(ref))


def test_finite_w_order_is_the_mean_over_the_bulks():
    """The order parameters are the means over the bulks (each bulk solved alone: the reference), not the first
    bulk's; with one bulk the error is not estimable and prints as such (inf), never as a small number."""
    bulks = sample_bulks(40, 40, 2, seed=11)
    both = srf_groups("tanh", "sin", prior="finite-w", bulks=bulks, **KG)
    alone = [srf_groups("tanh", "sin", prior="finite-w", bulks=[b], **KG) for b in bulks]
    for k in ORDER:
        mean = (np.asarray(alone[0].order[k]) + np.asarray(alone[1].order[k])) / 2
        assert np.allclose(np.asarray(both.order[k]), mean, rtol=1e-9, atol=1e-12), k
        assert not np.allclose(np.asarray(both.order[k]), np.asarray(alone[0].order[k]), rtol=1e-6), k
        d = alone[0].to_dict()
        assert set(flat(d["errors"]["order"][k])) == {"inf"}, k   # one bulk, one width: not estimable


# ---------------------------------------------------------------- 2. the K = 1 reduced path's mapping errors

@pytest.mark.parametrize("dps", [None, 15])
def test_reduced_grows_by_the_mapping_errors_as_the_single_path(dps):
    """u in {1, -1} with an odd student reduces to the uniform readout: the same problem as srf_solve(alpha0, eta),
    whose errors grow by Result 3.1's errors of (r, c, gamma).  The reduced path's errors are at least those (before:
    smaller by the growth, 5e-7 relative at float64) and its (r, c, gamma) errors are the mapping's."""
    single = srf_solve("tanh", "sin", dps=dps, **CASE)
    red = srf_groups("tanh", "sin", readout_spec="1:1/2,-1:1/2", dps=dps, **CASE)
    assert red.method.startswith("reduced") and red.test_error == single.test_error
    for k, e in single.errors.items():
        assert red.reduced.errors[k] >= e * (1 - 1e-12), k
    assert red.abs_error == red.reduced.abs_error >= single.abs_error
    assert red.abs_error <= 2 * single.abs_error        # + the products' rounding (10 working ulps): not inflated
    for k in ("r", "c", "gamma"):
        assert red.reduced.errors[k] >= single.errors[k] > 0, k
    # u = 2: (2 r, 1 + 4 (c - 1)) carry 2 and 4 times the mapping's errors of r, c
    two = srf_groups("tanh", "sin", readout_spec="2:1", dps=dps, **CASE)
    assert two.reduced.errors["r"] >= 2 * single.errors["r"] and two.reduced.errors["c"] >= 4 * single.errors["c"]


def test_growth_bounds_a_resolve_at_perturbed_r_c_gamma():
    """The one home of the growth (srf_solve's, now also fed by ``rcg_errors``) against re-solving at the corners of
    the error box of (r, c, gamma), with errors 1e-6 made large enough to be seen: every corner's test error and order
    parameters lie within the grown error (plus the corner's own)."""
    r, c, g = "1.1340555092826201", "1.0189732004581858", "0.97185444448738795"
    de = 1e-6
    base = srf_solve("tanh", "sin", alpha=1, beta=1, lam="1/10", r=r, c=c, gamma=g, tol=1e-3,
                     rcg_errors={"r": de, "c": de, "gamma": de})       # tol: the grown error is ~2e-5
    plain = srf_solve("tanh", "sin", alpha=1, beta=1, lam="1/10", r=r, c=c, gamma=g)
    assert base.abs_error > 100 * plain.abs_error                      # the growth is there, and seen
    assert base.errors["r"] == base.errors["c"] == base.errors["gamma"] == de
    for sr, sc, sg in itertools.product((-1, 1), repeat=3):
        corner = srf_solve("tanh", "sin", alpha=1, beta=1, lam="1/10", r=float(r) + sr * de, c=float(c) + sc * de,
                           gamma=float(g) + sg * de)
        for k in ("test_error", *corner.order):
            gap = abs(float(corner.value(k)) - float(base.value(k)))
            assert gap <= base.errors[k] + corner.errors[k], (k, gap, base.errors[k])


@pytest.mark.parametrize("bad", [{"r": -1e-20, "c": 0, "gamma": 0}, {"r": 1e-20, "c": 0}, {"r": float("nan"), "c": 0,
                                 "gamma": 0}, {"r": "x", "c": 0, "gamma": 0}, [1e-20, 0, 0],
                                 {"r": 0, "c": 0, "gamma": 0, "eta": 0}])
def test_rcg_errors_refused(bad):
    with pytest.raises(InvalidParameterError, match="rcg_errors"):
        srf_solve("tanh", "sin", alpha=1, beta=1, lam="1/10", r=1, c=1, gamma=1, rcg_errors=bad)
    with pytest.raises(InvalidParameterError, match="rcg_errors"):          # Result 3.1 gives its own: not both
        srf_solve("tanh", "sin", rcg_errors={"r": 0, "c": 0, "gamma": 0}, **CASE)


def test_float_inputs_are_read_as_typed_in_the_group_parameters():
    """A float r, c is the decimal it prints (as srf_solve reads a float at dps): c = 1.1 at u = 2 gives c_2 = 1.4, not
    float64's 1.4000000000000004 (before: solved at that c_2 — at dps 20 the K = 2 test error was 1.6e-18 from the
    truth with a printed error of 3.6e-22), on the reduced path and on the K-group path alike."""
    kw = dict(gamma="9/10", alpha=1, beta=1, lam="1/10", dps=15)
    for spec in ("2:1", "1:1/2,2:1/2"):
        typed = srf_groups("tanh", "sin", readout_spec=spec, r=0.5, c=1.1, **kw)
        exact = srf_groups("tanh", "sin", readout_spec=spec, r="1/2", c="11/10", **kw)
        assert typed.test_error == exact.test_error, spec


def cli_pair(capsys, *extra) -> tuple:
    """``srf --readout 2:1`` on the command line: the printed test error and its printed error (text), and JSON's."""
    argv = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "1", "--beta",
            "1", "--lam", "0.1", "--readout", "2:1", *extra]
    assert main(argv) == 0
    out = capsys.readouterr().out
    m = re.search(r"test error eps_g = (\S+)\s+\(\+/- (\S+),", out)
    assert m and "reduced to one group" in out, out
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["test_error"], d["errors"]["test_error"]) == m.groups()      # text and JSON print the same pair
    return m.groups(), d


@pytest.mark.parametrize("dps", [None, 15])
def test_reduced_u2_contains_the_50_digit_reference(capsys, dps):
    """API and CLI, float64 and --dps 15: printed value ± printed error contains the 50-digit reference of the
    non-reduced path; at --dps 15 the printed digits (JSON 'digits') are the 15 asked, not more."""
    sol = srf_groups("tanh", "sin", readout_spec="2:1", dps=dps, **CASE)
    d = sol.to_dict()
    assert contains(d["test_error"], d["errors"]["test_error"], REF_U2)
    (v, e), dj = cli_pair(capsys, *(["--dps", str(dps)] if dps else []))
    assert contains(v, e, REF_U2)
    if dps:
        assert dj["digits"] == dps and sol.digits == dps


# ---------------------------------------------------------------- slow: --dps 30 and the reference itself

@pytest.mark.slow
def test_u2_reference_recomputed():
    """REF_U2 on the non-reduced path at 50 digits, and the reduced path at 50 digits within both errors."""
    non = srf_groups("tanh", "sin", readout_spec="2:1", reduce=False, dps=50, **CASE)
    assert not non.method.startswith("reduced") and non.abs_error < 1e-52
    assert abs(F(non.to_dict()["test_error"]) - F(REF_U2)) <= F(non.to_dict()["errors"]["test_error"])
    red = srf_groups("tanh", "sin", readout_spec="2:1", dps=50, **CASE)
    assert red.method.startswith("reduced")
    assert abs(red.test_error - non.test_error) <= red.abs_error + non.abs_error


@pytest.mark.slow
def test_reduced_u2_at_dps_30_contains_the_reference(capsys):
    sol = srf_groups("tanh", "sin", readout_spec="2:1", dps=30, **CASE)
    d = sol.to_dict()
    assert contains(d["test_error"], d["errors"]["test_error"], REF_U2) and d["digits"] == 30
    text = repr(sol)
    assert f"test_error={d['test_error']} ± {d['errors']['test_error']}" in text
    (v, e), dj = cli_pair(capsys, "--dps", "30")
    assert contains(v, e, REF_U2) and dj["digits"] == 30


@pytest.mark.slow
def test_kgroup_json_abs_error_covers_the_printed_value():
    """srf --readout --json: value +/- abs_error contains the 30-digit value (abs_error was the raw estimate, which
    left out the rounding of the printed digits: 1e-22 beside a 15-digit value)."""
    import contextlib
    import io
    import json as _json

    import mpmath as _mp

    from onestep_theory.cli.main import main

    base = ["srf", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta",
            "1", "--lam", "0.1", "--readout", "1:0.5,2:0.5"]

    def run(extra):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(base + extra) in (0, None)
        return _json.loads(buf.getvalue())

    ref = run(["--dps", "30", "--json"])
    for extra in ([], ["--dps", "15"]):
        d = run(extra + ["--json"])
        with _mp.workdps(50):
            assert abs(_mp.mpf(d["test_error"]) - _mp.mpf(ref["test_error"])) <= \
                _mp.mpf(d["abs_error"]) + _mp.mpf(ref["abs_error"]), extra


@pytest.mark.parametrize("dps", [15, 30, 50])
@pytest.mark.parametrize("u_exp", [8, 20, 60])
def test_mp_integrals_at_large_t_against_the_moment_series(dps, u_exp):
    """The Marchenko-Pastur integrals at t = (lam + hat V2)/hat V1 = 10^u_exp against their series in u = 1/t from the
    moments m1 = c, m2 = c^2 (1 + beta), m3 = c^3 (1 + 3 beta + beta^2) (independent of the closed form, which lost
    2 log10(t/c) digits there: an even student's q1 at --dps came out -2e-111 instead of 0.9637)."""
    import mpmath as _mp

    from onestep_theory.core.precision import precision
    from onestep_theory.srf.single.priors import mp_integrals

    with precision(dps):
        c, beta, L = _mp.mpf(1) + _mp.mpf(1) / 3, _mp.mpf(3) / 2, _mp.mpf(7) / 10
        hV1 = L * _mp.mpf(10) ** -u_exp
        V1, V2, J1, J2, K0 = mp_integrals(c, beta, L, hV1, _mp.mpf(0), _mp.sqrt)
        u = hV1 / L
        K = (dps + 10) // u_exp + 2     # terms: u^K below the digits asked
        # the moments of the MP law (scale c, ratio beta): Narayana numbers, m_k = c^k sum_j N(k, j) beta^(j-1)
        m = [1] + [c ** k * sum(math.comb(k, j) * math.comb(k, j - 1) // k * beta ** (j - 1) for j in range(1, k + 1))
                   for k in range(1, K + 3)]

        def series(shift, power):       # E rho^shift / (1 + u rho)^power = sum_k C(power+k-1, k) (-u)^k m_(shift+k)
            return sum(math.comb(power + k - 1, k) * (-u) ** k * m[shift + k] for k in range(K))

        tol = _mp.mpf(10) ** -(dps - 1)
        assert abs(V1 * L - series(1, 1)) <= tol and abs(V2 * L - series(0, 1)) <= tol
        assert abs(J1 * L * L - series(2, 2)) <= tol * m[2]
        assert abs(J2 * L * L - series(1, 2)) <= tol and abs(K0 * L * L - series(0, 2)) <= tol


def test_finite_w_reports_progress_per_bulk():
    """The finite-W prior (3 minutes at the default p = 600) calls progress(i, n) after each bulk, both widths."""
    calls = []
    srf_groups("tanh", "sin", prior="finite-w", sampler=sample_bulks, bulk_p=40, bulk_count=2, seed=0,
               progress=lambda i, n: calls.append((i, n)), **KG)
    assert calls == [(i, 4) for i in range(1, 5)]
