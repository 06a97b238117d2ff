"""Issue 31 item 5 (the contract in Python), the results the audit found printing numbers without an error: the
K-group solution's order parameters and per-group (r_j, c_j), ``srf_params``, the resolvent's c1, c_>1 and quartic
roots, ``group_bounds``' r, c, γ, groups and best linear error, and ``best_linear()`` itself.  On the *repr text*:
every printed ``value ± error`` contains an independent reference — the same quantity computed at dps + 20 (its own
error allowed for), a closed form, or exact arithmetic — at float64, 15 and 30 digits; the fields stay numbers.
Also: the two unguarded linear solves of the spectrum become ConvergenceError (exit 3).
"""

from __future__ import annotations

import ast
import fractions
import re

import mpmath
import numpy as np
import pytest

F = fractions.Fraction
NUM = r"[-+]?\d[\d.]*(?:e[-+]?\d+)?"
ERR = r"\d[\d.]*e[-+]\d+|0|inf"
PAIR = re.compile(rf"({NUM}) ± ({ERR})")


def field(text: str, name: str):
    """The field ``name=`` (or dict key ``'name': ``) of a repr as Python data, each ``v ± e`` a ``(v, e)`` pair of
    strings: a single pair, or a list / dict / tuple of them (balanced brackets)."""
    m = re.search(rf"(?:\b{name}=|'{name}': )", text)
    assert m, (name, text[:300])
    rest = text[m.end():]
    if rest[0] in "[{(":
        depth, i = 0, 0
        for i, ch in enumerate(rest):
            depth += ch in "[{("
            depth -= ch in "]})"
            if depth == 0:
                break
        body = rest[:i + 1]
    else:
        body = PAIR.match(rest).group(0)
    return ast.literal_eval(PAIR.sub(lambda p: f"('{p.group(1)}', '{p.group(2)}')", body))


def contains(pair, ref, ref_err=0) -> bool:
    """``|printed - reference| <= printed error + reference error``, exactly (Fractions)."""
    v, e = pair
    return abs(F(v) - F(ref)) <= F(e) + F(ref_err)


def exact(x) -> F:
    """An mpf (or float) as the exact Fraction of its binary value (mpmath.mpf(x) would round it)."""
    if not isinstance(x, mpmath.mpf):
        return F(x)
    sign, man, exp, _ = x._mpf_
    man = -man if sign else man
    return F(man) * F(2) ** exp if exp >= 0 else F(man, 2 ** -exp)


def sig(text: str) -> int:
    return len(text.lstrip("-").split("e")[0].replace(".", "").lstrip("0"))


def usable(x) -> None:
    """A field stays a number: an mpf (arithmetic gives plain mpf), a float, numpy."""
    assert isinstance(x, mpmath.mpf) and type(x * 1) is mpmath.mpf and float(x) == np.float64(x)


# --------------------------------------------------------------------------------------------- srf_params
MAPPINGS = [("tanh", "sin", "20", "31/10"), ("erf", "erf", "inf", "3")]


@pytest.mark.parametrize("dps", [15, 30])
@pytest.mark.parametrize("case", MAPPINGS)
def test_srf_params_prints_errors_on_demand(case, dps):
    """``srf_params`` stays one evaluation (its errors empty until displayed), and its repr, str and to_dict print
    every value with an error that contains ``srf_params_checked`` at dps + 20."""
    from onestep_theory.srf.features.mapping import srf_params, srf_params_checked

    p = srf_params(*case, dps=dps)
    assert p.errors == {}                                       # cheap for inner loops: nothing computed yet
    text = repr(p)
    ref = srf_params_checked(*case, dps=dps + 20)
    for k in ("r", "c", "gamma", "mu1", "mu1_check_sq", "mu1_star", "mu2_star"):
        pair = field(text, k)
        assert contains(pair, exact(getattr(ref, k).plain), ref.errors[k]), (k, pair, getattr(ref, k))
        assert sig(pair[0]) <= dps and F(pair[1]) <= max(abs(F(pair[0])), 1) * F(1, 10 ** (dps - 1)), (k, pair)
        assert repr(getattr(p, k)) == " ± ".join(pair) and f"= {' ± '.join(pair)}" in str(p)
        # the estimate itself (all the binary digits held, before the printed rounding) holds too
        assert abs(exact(getattr(p, k).plain) - exact(getattr(ref, k).plain)) <= F(p.errors[k]) + F(ref.errors[k])
        usable(getattr(p, k))
    assert p.to_dict()["errors"]["r"] == field(text, "r")[1]


# --------------------------------------------------------------------------------------------- resolvent
def _match(roots, ref):
    """The reference ``(root, error)`` nearest to each printed root (the root finder's order may change with the
    precision)."""
    def z(a):
        return complex(float(F(a["re"][0])), float(F(a["im"][0]))) if isinstance(a, dict) else float(F(a[0]))

    def zr(a):
        return complex(a["re"], a["im"]) if isinstance(a, dict) else complex(a)
    return [min(ref, key=lambda t: abs(zr(t[0][0]) - z(r[0]))) for r in roots]


@pytest.mark.parametrize("dps", [15, 30])
@pytest.mark.parametrize("how", ["student tanh", "student softplus", "constants"])
def test_resolvent_constants_and_roots_carry_errors(how, dps):
    """c1, c_>1 and every root (m1, m2), complex ones by their real and imaginary parts, against dps + 20."""
    from onestep_theory.spikes.resolvent import resolvent, resolvent_from_constants

    def run(d):
        if how == "constants":
            return resolvent_from_constants("1/2", "1/2", "1/10", 1, "1/2", dps=d)
        if how == "student tanh":
            return resolvent("tanh", 1, 2, "1/2", dps=d)
        return resolvent("log(1+exp(x))", "1/3", 2, "1/7", dps=d)

    r, ref = run(dps), run(dps + 20)
    text = repr(r)
    for k in ("c1", "c_gt1"):
        pair = field(text, k)
        assert contains(pair, exact(getattr(ref, k)), ref.errors[k]), (k, pair)
        assert sig(pair[0]) <= dps and repr(getattr(r, k)) == " ± ".join(pair)
        assert abs(exact(getattr(r, k)) - exact(getattr(ref, k))) <= F(r.errors[k]) + F(ref.errors[k]), k
        usable(getattr(r, k))
    roots = field(text, "roots")
    assert len(roots) == len(ref.roots) >= 3
    for (x, y), ((xr, yr), (ex, ey)) in zip(roots, _match(roots, list(zip(ref.roots, ref.errors["roots"])))):
        if y is None:                                       # complex: (re, im) each with its error
            for part in ("re", "im"):
                assert contains(x[part], exact(xr[part]), ex[part]), (part, x, xr)
        else:
            assert contains(x, exact(xr), ex) and contains(y, exact(yr), ey), ((x, y), (xr, yr))
    assert r.digits.keys() == {"m1", "m2", "dm1_dlam", "dm2_dlam"}


# --------------------------------------------------------------------------------------------- best linear, bounds
def test_best_linear_is_a_value_with_its_error():
    """best_linear("sin") = (1 - e^-2)/2 - e^-1 exactly ([BES+22] Prop. 1 with the sin moments); the value is an
    mpf whose repr is value ± error; float() is the float of before."""
    from onestep_theory.srf.optimal.bounds import best_linear, best_linear_checked

    v = best_linear("sin")
    pair = PAIR.fullmatch(repr(v)).groups()
    with mpmath.workdps(60):
        truth = (1 - mpmath.exp(-2)) / 2 - mpmath.exp(-1)
        assert contains(pair, exact(truth), F(1, 10**55))
    usable(v)
    assert float(v) == best_linear_checked("sin")[0] and f"{v:.5f}" == "0.06445"
    ref, ref_err = best_linear_checked("tanh", 35)
    assert contains(PAIR.fullmatch(repr(best_linear("tanh"))).groups(), exact(ref), ref_err)


@pytest.mark.parametrize("given", [False, True])
def test_group_bounds_prints_r_c_gamma_groups_and_best_linear_with_errors(given):
    """From the mapping (tanh/sin, α0 = 20, η̃ = 3) against srf_params_checked at 35 digits; given (r = √3/2 exact,
    c = 1, γ = 1: erf/erf, [BES+22] Cor. 8) against exact values; group j: (r u_j, 1 + u_j² (c - 1)) exactly."""
    from onestep_theory.srf.features.mapping import srf_params_checked
    from onestep_theory.srf.grouped.groupbounds import group_bounds
    from onestep_theory.srf.optimal.bounds import best_linear_checked

    if given:
        b = group_bounds("erf(x)", "erf(x)", readout_spec="1:0.5,2:0.5", r="sqrt(3)/2", c=1, gamma=1)
        with mpmath.workdps(60):
            ref = {"r": (exact(mpmath.sqrt(3) / 2), F(1, 10**55)), "c": (F(1), 0), "gamma": (F(1), 0)}
        bl = best_linear_checked("erf(x)", 35)
    else:
        b = group_bounds("tanh", "sin", readout_spec="1:0.5,2:0.5", alpha0=20, eta=3)
        p = srf_params_checked("tanh", "sin", 20, 3, dps=35)
        ref = {k: (exact(getattr(p, k).plain), p.errors[k]) for k in ("r", "c", "gamma")}
        bl = best_linear_checked("sin", 35)
    text = repr(b)
    for k, (v, e) in ref.items():
        assert contains(field(text, k), v, e), (k, field(text, k), v)
    assert contains(field(text, "best_linear"), exact(bl[0]), bl[1])
    for g in field(text, "groups"):
        u = F(g["value"])
        assert contains(g["r"], u * ref["r"][0], abs(u) * F(ref["r"][1]))
        assert contains(g["c"], 1 + u * u * (ref["c"][0] - 1), u * u * F(ref["c"][1]))
    assert isinstance(b.r, float) and isinstance(b.best_linear, float)      # float fields stay floats


@pytest.mark.slow
def test_group_bounds_optimized_r_c_gamma_cover_the_eta_error():
    """--optimize-eta: r, c, γ are those at η̃ = eta_upper, which is known to its error only (the argmin's claim:
    tests/test_issue31_optimizers.py): the printed r, c, γ ± error contain r, c, γ at both ends of that interval
    (the argmin ± its error before rounding; srf_params_checked at 35 digits), so wherever η̃* lies in it."""
    from onestep_theory.srf.features.mapping import srf_params_checked
    from onestep_theory.srf.grouped.groupbounds import group_bounds

    b = group_bounds("tanh", "sin", readout_spec="1:0.5,2:0.5", alpha0=20, optimize_eta=True)
    text = repr(b)
    assert contains(field(text, "eta_upper"), F(b.eta_upper), b.errors["eta_upper"])
    eta, e = F(b.eta_upper), F(b.errors["eta_upper"])
    for end in (eta - e, eta + e):
        p = srf_params_checked("tanh", "sin", 20, f"{end.numerator}/{end.denominator}", dps=35)
        for k in ("r", "c", "gamma"):
            assert contains(field(text, k), exact(getattr(p, k).plain), p.errors[k]), (k, end)


# --------------------------------------------------------------------------------------------- K groups
def _flat(x):
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], str):
        return [tuple(x)]
    return [p for item in x for p in _flat(item)] if isinstance(x, list) else [x]


@pytest.mark.slow
def test_kgroup_order_parameters_and_groups_against_dps_50():
    """Two groups (tanh/sin from the mapping): every order parameter, the groups' (r_j, c_j), r, c, γ and the test
    error printed at float64, 15 and 30 digits contain the 50-digit solve (its own errors allowed for)."""
    from onestep_theory.srf import srf_groups

    kw = dict(readout_spec="1:1/2,2:1/2", alpha0=20, eta=3, alpha="1.6", beta=1, lam=F(1, 3))
    ref = srf_groups("tanh", "sin", dps=50, **kw)
    ref_order = {k: [(exact(v), F(e)) for v, e in zip(np.ravel(np.asarray(ref.order[k], dtype=object)),
                                                      np.ravel(ref.errors["order"][k]))] for k in ref.order}
    for dps in (None, 15, 30):
        sol = srf_groups("tanh", "sin", dps=dps, **kw)
        text = repr(sol)
        order = field(text, "order")
        assert order.keys() == ref_order.keys()
        for k, pairs in order.items():
            held = zip(np.ravel(np.asarray(sol.order[k], dtype=object)), np.ravel(sol.errors["order"][k]))
            for pair, (v, e), (x, ex) in zip(_flat(pairs), ref_order[k], held):
                assert contains(pair, v, e), (dps, k, pair, v)
                assert dps is None or sig(pair[0]) <= dps
                assert abs(exact(x) - v) <= F(ex) + e, (dps, k, x, v)     # the estimate before the rounding
        for g, gr in zip(field(text, "groups"), ref.groups):
            assert contains(g["r"], exact(gr["r"]), 2 * 2.0 ** -52 * gr["r"]) and \
                contains(g["c"], exact(gr["c"]), 2 * 2.0 ** -52 * gr["c"]), (dps, g, gr)
        for k in ("r", "c", "gamma", "test_error"):
            assert contains(field(text, k), exact(getattr(ref, k)), ref.errors[k]), (dps, k)
        if dps:
            usable(sol.order["m"][0])
            assert repr(sol.order["V1"][0][1]) == " ± ".join(order["V1"][0][1])
        else:
            assert type(sol.order["m"][0]) is float                          # float64: floats stay floats


@pytest.mark.slow
def test_reduced_readout_order_and_rcg_carry_errors():
    """A readout that reduces to one group (±1, odd σ): the order parameters (the single-group solver's errors) and
    r, c, γ (the mapping's) are printed with errors, at 15 digits against 35."""
    from onestep_theory.srf import srf_groups

    kw = dict(readout_spec="1:1/2,-1:1/2", alpha0=20, eta=3, alpha="1.6", beta=1, lam=F(1, 3))
    sol, ref = srf_groups("tanh", "sin", dps=15, **kw), srf_groups("tanh", "sin", dps=35, **kw)
    text = repr(sol)
    order = field(text, "order")
    for k, pair in order.items():
        assert contains(pair, exact(ref.order[k]), ref.errors["order"][k]), (k, pair)
    for k in ("r", "c", "gamma"):
        assert contains(field(text, k), exact(getattr(ref, k)), ref.errors[k])


# --------------------------------------------------------------------------------------------- linear solves
def test_singular_jacobian_of_the_stieltjes_fixed_point_is_a_convergence_error(monkeypatch):
    from onestep_theory.core.errors import ConvergenceError
    import importlib

    sp_mod = importlib.import_module("onestep_theory.srf.spectral.spectrum")

    def singular(a):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(sp_mod.np.linalg, "inv", singular)
    with pytest.raises(ConvergenceError, match="singular Jacobian"):
        sp_mod.stieltjes("tanh", 2.0 + 0.5j, r=1, c=1, alpha=2, beta=1)


def test_singular_fold_system_at_dps_exits_3(monkeypatch, capsys):
    """A singular mpmath fold system in polish_edge (spectrum --dps): one line, exit 3 (was: 'internal error')."""
    from onestep_theory.cli.main import main
    from onestep_theory.srf.spectral import realaxis

    def singular(*a, **k):
        raise ZeroDivisionError("matrix is numerically singular")

    monkeypatch.setattr(realaxis.mpmath, "lu_solve", singular)
    code = main(["spectrum", "--student", "sin", "--r", "0", "--c", "1/2", "--gamma", "1", "--alpha", "3/4",
                 "--beta", "1", "--lam", "1/2", "--z", "0.5:2:3", "--dps", "15"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and "singular fold system" in err[-1] and "internal error" not in " ".join(err), err


def test_exact_printout_keeps_its_vouched_digits():
    """A test error printed exactly as '1' (zeros dropped: vouch prints the value itself) keeps the digits its error
    vouches for; a rounded printout counts at most its printed digits (lead's audit: `--loss yhat**2` said 1 digit)."""
    import dataclasses

    from onestep_theory.srf import srf_solve
    sol = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")
    one = dataclasses.replace(sol, test_error=1.0, digits=13)
    assert one.printed_digits("1") == 13
    assert one.printed_digits("1.00") == 13
    assert one.printed_digits("1.000000000000001") == 13
    near = dataclasses.replace(sol, test_error=0.1, digits=13)          # 0.1 is no float: '0.1' is a rounding
    assert near.printed_digits("0.1") == 1


def test_resolvent_json_digits_are_those_printed():
    """`resolvent --json`'s digits never exceed what its printed value and printed error vouch (lead's last read:
    it said 23 digits beside a 15-digit value, from the stored value's raw error)."""
    import json
    import subprocess
    import sys

    for dps in ("15", "30"):
        out = subprocess.run([sys.executable, "-m", "onestep_theory", "resolvent", "--student", "tanh", "--phi", "1/2",
                              "--psi", "3", "--lam", "1/5", "--dps", dps, "--json"], capture_output=True, text=True,
                             timeout=120, check=True).stdout
        d = json.loads(out)
        for k, n in d["digits"].items():
            printed = len(d[k].lstrip("-").split("e")[0].replace(".", "").lstrip("0"))
            assert int(dps) - 1 <= n <= printed, (dps, k, n, d[k], d["errors"][k])
