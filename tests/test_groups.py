"""K readout groups (docs/theory/srf-theory.md §8): readout specs, exact reductions of the K-group saddle point,
bounds, mean spikes and D.3 against independent references."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import quad

from onestep_theory import InvalidParameterError
from onestep_theory.simulate import sample_bulks
from onestep_theory.srf import empirical_from_weights, srf_params, srf_solve
from onestep_theory.srf.grouped.groupbounds import d3_special_case, group_bounds, group_mean_spikes
from onestep_theory.srf.grouped.groups import srf_groups
from onestep_theory.srf.grouped.readout import group_index, group_params, readout
from onestep_theory.srf.spectral.spectrum import mean_spike


def _bulk(d, p, seed):
    """One sampled bulk (W0, v, theta_perp), drawn by the package's sampler."""
    return sample_bulks(d, p, 1, seed=seed)[0]


@pytest.fixture(scope="module")
def case_a():
    P = srf_params("tanh", "sin", 20, 3)
    return tuple(float(t) for t in (P.r, P.c, P.gamma))


# ---------------------------------------------------------------- readout specs

def test_readout_parsing_exact():
    rd = readout("2:0.5, 1:1/2")
    assert rd.values == (1, 2) and rd.fractions == (sp.Rational(1, 2), sp.Rational(1, 2))
    assert readout([("1", "1/3"), ("-1", "2/3")]).label == "-1:2/3,1:1/3"
    assert readout({"1": "1"}).is_uniform and readout(None).is_uniform and readout("uniform").K == 1
    assert readout("gaussian").K == 0
    assert readout("1:1/4,1:3/4").label == "1:1"                       # equal values merge
    assert readout("1:1/4,-1:1/4,2:1/2").reduced(odd=True).label == "1:1/2,2:1/2"
    assert readout("1:1/4,-1:1/4,2:1/2").reduced(odd=False).K == 3


@pytest.mark.parametrize("bad", ["1:0.5,2:0.4", "1:0", "1:-0.5,2:1.5", "x", "1:0.5:1", "1e9:1", "", "1:nan"])
def test_readout_refuses(bad):
    with pytest.raises(InvalidParameterError):
        readout(bad)


def test_counts_and_params():
    rd = readout("-1:1/3,1:1/3,2:1/3")
    for p in (3, 10, 1001):
        n = rd.counts(p)
        assert sum(n) == p and min(n) >= 1 and max(n) - min(n) <= 1
        assert np.array_equal(np.bincount(group_index(rd, p)), n)
    with pytest.raises(InvalidParameterError):
        rd.counts(2)
    # exact in, exact out: c_j = 1 + u^2 (c - 1), spike r u
    assert group_params(sp.Rational(1, 2), sp.Rational(3, 2), rd) == [(-sp.Rational(1, 2), sp.Rational(3, 2)),
                                                                      (sp.Rational(1, 2), sp.Rational(3, 2)),
                                                                      (1, 3)]
    with pytest.raises(InvalidParameterError, match="c_j"):
        group_params(1.0, 0.5, rd)                                      # c_j = 1 + 4(-0.5) < 0


# ---------------------------------------------------------------- exact reductions of the saddle point

def test_k1_finite_w_equals_f1(case_a):
    r, c, g = case_a
    W0, v, tp = _bulk(100, 100, 3)
    th = g * v + math.sqrt(1 - g * g) * tp
    ref = srf_solve("tanh", "sin", alpha=2, beta=1, lam="1/10", r=repr(r), c=repr(c), gamma=repr(g),
                    spectrum="empirical", empirical=empirical_from_weights(math.sqrt(c) * W0, v, th))
    sol = srf_groups("tanh", "sin", readout_spec="1:1", alpha=2, beta=1, lam="1/10", alpha0=20, eta=3,
                     bulks=[(W0, v, tp)], reduce=False, annealed=False, prior="finite-w")
    assert abs(float(sol.test_error) - float(ref.test_error)) < 1e-12
    # the order parameters too (K = 1: 1-vectors and 1x1 matrices)
    for k, kk in (("m", "m"), ("theta", "theta"), ("psi", "psi"), ("q2", "q2"), ("V2", "V2")):
        assert abs(sol.order[k][0] - float(ref.order[kk])) < 1e-10


def test_symmetric_readout_is_row_flip(case_a):
    """u in {1, -1}, odd sigma: on W it is the single group on W with the u = -1 rows negated (exact)."""
    r, c, g = case_a
    W0, v, tp = _bulk(100, 100, 4)
    th = g * v + math.sqrt(1 - g * g) * tp
    rd = readout("1:1/2,-1:1/2")
    sol = srf_groups("tanh", "sin", readout_spec=rd, alpha=2, beta=1, lam="1/10", alpha0=20, eta=3,
                     bulks=[(W0, v, tp)], reduce=False, annealed=False, prior="finite-w")
    Wn = W0.copy()
    Wn[group_index(rd, 100) == 0] *= -1
    ref = srf_solve("tanh", "sin", alpha=2, beta=1, lam="1/10", r=repr(r), c=repr(c), gamma=repr(g),
                    spectrum="empirical", empirical=empirical_from_weights(math.sqrt(c) * Wn, v, th))
    assert sol.m_rank == 1                                       # the singular case of §8, handled
    assert abs(float(sol.test_error) - float(ref.test_error)) < 1e-12
    assert abs(sol.order["m"][0] + sol.order["m"][1]) < 1e-8      # minimum norm: m_- = -m_+


def test_reduced_readouts_are_the_single_group_solver():
    uni = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")
    sym = srf_groups("tanh", "sin", readout_spec="1:0.5,-1:0.5", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")
    assert sym.reduced is not None and sym.test_error == uni.test_error and not sym.experimental
    # a single value u = 2: the uniform theory at (2 r, 1 + 4 (c - 1)) — exact group parameters
    P = srf_params("tanh", "sin", 20, 3, dps=30)
    two = srf_groups("tanh", "sin", readout_spec="2:1", alpha0=20, eta=3, alpha=2, beta=1, lam="1/10")
    ref = srf_solve("tanh", "sin", alpha=2, beta=1, lam="1/10", r=2 * P.r, c=1 + 4 * (P.c - 1), gamma=P.gamma)
    assert abs(float(two.test_error) - float(ref.test_error)) <= two.abs_error + ref.abs_error


def test_large_lambda_is_the_upper_bound(case_a):
    """lambda -> infinity: V, q, theta, psi -> 0 and m projects on span{mu0^(j)}: eps -> bound (26) (§6, §8),
    with the 1/lambda rate (the gap shrinks tenfold from lambda = 1e5 to 1e6; measured: from below, -0.02/lambda)."""
    # three bulks a width: the sampling error is a 95 % Student-t half-width (t = 4.30 at three, 12.7 at two)
    bulks = [_bulk(60, 60, s) for s in range(3)] + [_bulk(30, 30, s) for s in (9, 10, 11)]
    b = group_bounds("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha0=20, eta=3)
    gaps = []
    for lam in (10**5, 10**6):
        sol = srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha=2, beta=1, lam=lam, alpha0=20, eta=3,
                         bulks=bulks, prior="finite-w")
        gaps.append(float(sol.test_error) - b.upper)
        slack = sol.abs_error + b.errors["upper"]
    assert abs(gaps[1]) > 10 * slack                                # the 1/lambda term is resolved ...
    assert abs(gaps[0] / gaps[1] - 10) < 0.5                        # ... and has the 1/lambda rate: gap -> 0


def test_groups_need_bulks_and_finite_support():
    with pytest.raises(InvalidParameterError, match="bulks"):
        srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha=2, beta=1, lam=1, alpha0=20, eta=3,
                   prior="finite-w")
    with pytest.raises(InvalidParameterError, match="finite-w"):        # bulks are not silently ignored
        srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha=2, beta=1, lam=1, alpha0=20, eta=3,
                   bulks=[_bulk(50, 50, 0)])
    with pytest.raises(InvalidParameterError, match="prior"):
        srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha=2, beta=1, lam=1, alpha0=20, eta=3, prior="mp")
    with pytest.raises(InvalidParameterError, match="tau-star"):
        srf_groups("tanh", "sin", readout_spec="gaussian", alpha=2, beta=1, lam=1, alpha0=20, eta=3)
    with pytest.raises(InvalidParameterError, match="beta"):
        srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha=2, beta=2, lam=1, alpha0=20, eta=3,
                   bulks=[_bulk(50, 50, 0), _bulk(50, 50, 1)], prior="finite-w")


def test_sampler_errors_are_reported(case_a):
    """With a sampler: two widths, the error budget has every part and the widths are the asked ones."""
    calls = []

    def sampler(d, p, count, seed=0):
        calls.append((d, p, count, seed))
        return [_bulk(d, p, 100 * seed + k) for k in range(count)]

    sol = srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha=2, beta=1, lam="1/10", alpha0=20, eta=3,
                     sampler=sampler, bulk_p=80, bulk_count=2, seed=5, prior="finite-w")
    assert calls == [(80, 80, 2, 10), (40, 40, 2, 11)]
    budget = {k: v for k, v in sol.errors.items()              # not the budget: the printed r, c, γ, (r_j, c_j)'s
              if k not in ("groups", "r", "c", "gamma", "order", "per_bulk")}     # nor the order's, each bulk's
    assert set(budget) == {"test_error", "sampling", "finite_size", "discretisation", "solver"}
    assert sol.abs_error == pytest.approx(sum(v for k, v in budget.items() if k != "test_error"))
    assert sol.experimental and sol.bulk_p == 80 and len(sol.per_bulk) == 2


# ---------------------------------------------------------------- bounds, spikes, D.3

def test_bounds_bracket_and_two_groups_lower_the_upper_bound(case_a):
    b = group_bounds("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha0=20, eta=3)
    assert b.ranks == (2, 4, 2)
    assert b.upper < b.upper_single - 1e-3 and b.lower < b.lower_single
    sym = group_bounds("tanh", "sin", readout_spec="1:1/2,-1:1/2", alpha0=20, eta=3)
    assert sym.upper == sym.upper_single and sym.ranks == (1, 2, 1)
    bulks = [_bulk(80, 80, s) for s in range(2)] + [_bulk(40, 40, s) for s in (5, 6)]
    eps = [float(srf_groups("tanh", "sin", readout_spec="1:1/2,2:1/2", alpha=3, beta=1, lam=lam, alpha0=20, eta=3,
                            bulks=bulks, prior="finite-w").test_error) for lam in (1e-3, 1e-1, 10.0)]
    assert min(eps) >= b.lower and min(eps) <= b.upper


def test_bounds_vanish_for_erf_at_sqrt3():
    """[BES+22] Cor. 8 in a group: u = 2 at r = sqrt(3)/2 has the spike sqrt(3), mu0 = erf(kappa)."""
    b = group_bounds("erf(x)", "erf(x)", readout_spec="1:1/2,2:1/2", r="sqrt(3)/2", c=1, gamma=1)
    assert abs(b.upper) < 1e-12 and abs(b.lower) < 1e-12 and b.upper_single > 1e-2


def test_mean_spikes_k1_and_gram():
    one = group_mean_spikes("tanh", readout_spec="1:1", r=1.2, c=1.1, alpha=2, d=1000)
    assert one.spikes[0] == pytest.approx(mean_spike("tanh", r=1.2, c=1.1, alpha=2, d=1000), rel=1e-10)
    # two groups: n times the eigenvalues of [sqrt(pi_j pi_l) E mu0_j mu0_l]; an independent Gram by mpmath.quad
    two = group_mean_spikes("tanh", readout_spec="1:1/4,2:3/4", r=1.2, c=1.1, alpha=2, d=1000)
    cs = (1.1, 1 + 4 * 0.1)

    def mu0(u, k):                  # scipy's adaptive quadrature, nested (independent of the kappa rule)
        return quad(lambda z: math.tanh(1.2 * u * k + math.sqrt(cs[u - 1]) * z) * math.exp(-z * z / 2),
                    -np.inf, np.inf, epsabs=1e-13)[0] / math.sqrt(2 * math.pi)
    gram = [[quad(lambda k: mu0(a, k) * mu0(b, k) * math.exp(-k * k / 2), -np.inf, np.inf, epsabs=1e-12)[0]
             / math.sqrt(2 * math.pi) for b in (1, 2)] for a in (1, 2)]
    w = np.sqrt([0.25, 0.75])
    ev = np.sort(np.linalg.eigvalsh(np.array(gram, dtype=float) * np.outer(w, w)))[::-1] * 2000
    assert np.allclose(two.spikes, ev, rtol=1e-7)


def test_d3_is_a_projection():
    """(159)-(160) against an independent Gram matrix by mpmath.quad (split at the kink of relu)."""
    out = d3_special_case("relu", "sin", readout_spec="1:1/3,-2:2/3", r="0.8")
    phi = [lambda k, a=a: mpmath.mpf(0.8) * a * k if 0.8 * a * k > 0 else 0 for a in (-2, 1)]
    G = mpmath.matrix(2, 2)
    s = mpmath.matrix(2, 1)
    for i in range(2):
        s[i] = mpmath.quad(lambda k, i=i: phi[i](k) * mpmath.sin(k) * mpmath.npdf(k), [-mpmath.inf, 0, mpmath.inf])
        for j in range(2):
            G[i, j] = mpmath.quad(lambda k, i=i, j=j: phi[i](k) * phi[j](k) * mpmath.npdf(k), [-mpmath.inf, 0, mpmath.inf])
    norm2 = (1 - mpmath.exp(-2)) / 2
    ref = norm2 - (s.T * mpmath.inverse(G) * s)[0]
    assert abs(out.test_error - float(ref)) < 1e-10 + out.errors["test_error"]
    assert out.experimental and "±" in repr(out)


# ---------------------------------------------------------------- command line

def _cli(argv, capsys):
    import json

    from onestep_theory.cli.main import main
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if rc == 0 and "--json" in argv else out.err)


CASE = ["--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--alpha", "2", "--beta", "1",
        "--lam", "0.1"]


def test_cli_srf_readout(capsys):
    rc, uni = _cli(["srf", *CASE, "--json"], capsys)
    rc2, sym = _cli(["srf", *CASE, "--readout", "1:0.5,-1:0.5", "--json"], capsys)
    assert rc == rc2 == 0 and sym["test_error"] == uni["test_error"] and sym["readout"]["reduced"] == "1:1"
    rc, k2 = _cli(["srf", *CASE, "--readout", "1:0.5,2:0.5", "--prior", "finite-w", "--bulk-p", "60", "--bulk-count",
                   "2", "--json"], capsys)
    assert rc == 0 and k2["experimental"] and set(k2["errors"]) >= {"sampling", "finite_size", "discretisation"}
    assert float(k2["test_error"]) < float(uni["test_error"])
    for extra, word in ((["--bulk-p", "60"], "--bulk-p"), (["--prior", "finite-w", "--dps", "20"], "--dps")):
        rc, err = _cli(["srf", *CASE, "--readout", "1:0.5,2:0.5", *extra], capsys)
        assert rc == 2 and word in err and len(err.strip().splitlines()) == 1
    rc, err = _cli(["srf", *CASE, "--readout", "gaussian"], capsys)
    assert rc == 2 and "tau-star" in err and len(err.strip().splitlines()) == 1
    rc, err = _cli(["srf", *CASE, "--readout", "1:0.5,2:0.6"], capsys)
    assert rc == 2 and "readout" in err


def test_cli_bounds_readout_and_tau_star(capsys):
    rc, b = _cli(["bounds", "--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--eta", "3", "--readout",
                  "1:0.5,2:0.5", "--json"], capsys)
    assert rc == 0 and float(b["upper"]) < float(b["upper_single"]) and float(b["lower"]) <= float(b["upper"])
    rc, t = _cli(["tau-star", "--student", "erf", "--teacher", "erf", "--json"], capsys)
    assert rc == 0 and t["tau_exact"] == "0" and t["kappa_exact"] == "sqrt(2)"    # named erf = erf(x/sqrt 2)
    spec = ["spectrum", "--student", "tanh", "--r", "1.1", "--c", "1.02", "--gamma", "1", "--alpha", "2", "--beta", "1",
            "--readout", "1:0.5,2:0.5", "--z", "0.5:2:3", "--lam", "1/2"]
    rc, s = _cli(spec + ["--d", "1000", "--json"], capsys)
    assert rc == 0 and len(s["group_mean_spikes"]["spikes"]) == 2 and len(s["density"]) == 3
    assert set(s["stieltjes_at_minus_lambda"]) == {"1/2"}
    rc, err = _cli(spec + ["--dps", "20"], capsys)
    assert rc == 2 and "--dps" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_annealed_prior_is_the_average_of_the_sampled_one(case_a):
    """The annealed prior (docs/theory/srf-theory.md §8) is the sampled prior averaged over b, e given Omega
    (E bb^T = diag(c_g), E ee^T = Omega, E be^T = 0): every output of the map is linear in these second
    moments.  K = 2 with fractions 3/10, 7/10, a state away from the fixed point; 3000 draws, 4.5 s.e."""
    from onestep_theory.srf.grouped.finitew import GroupBulk, group_bulk, group_map
    from onestep_theory.srf.grouped.groupchannel import StateLayout
    from onestep_theory.srf.features.kappa import group_setup

    r, c, g = case_a
    rd = readout("1:3/10,2:7/10")
    gp = group_params(r, c, rd)
    cs = [b for _, b in gp]
    G = group_setup("tanh", "sin", [a for a, _ in gp], cs, g)
    base = group_bulk(*_bulk(60, 40, 1), cs, rd, annealed=True)
    L = StateLayout(2)
    x = L.pack(np.array([0.2, 0.1]), np.array([0.05, 0.15]), np.array([[0.1, 0.02], [0.02, 0.2]]),
               np.array([0.1, 0.3]), np.array([[0.3, 0.05], [0.05, 0.6]]), np.array([0.3, 0.7]))
    ann = group_map(x, G, base, 2, 1.5, 0.1, 0.0, L)[0]
    ev, U = np.linalg.eigh(base.Omega)
    root = U * np.sqrt(np.clip(ev, 0, None))
    rng = np.random.default_rng(0)
    outs = []
    for _ in range(3000):
        b = rng.standard_normal(base.p) * np.sqrt(base.cs[base.g])
        e = root @ rng.standard_normal(base.p)
        bk = GroupBulk(base.Omega, b, e, base.g, base.starts, base.d, base.cs, annealed=False)
        outs.append(group_map(x, G, bk, 2, 1.5, 0.1, 0.0, L)[0])
    outs = np.array(outs)
    mean, se = outs.mean(axis=0), outs.std(axis=0, ddof=1) / math.sqrt(len(outs))
    random_part = se > 1e-12 * (1 + np.abs(mean))          # V1, V2 do not depend on b, e (rounding only)
    assert np.all(np.abs(mean - ann)[random_part] <= 4.5 * se[random_part])
    assert np.allclose(mean[~random_part], ann[~random_part], rtol=1e-12, atol=1e-14)
    assert random_part.sum() >= 8            # theta, psi, Q1, q2 are random; m, V1, V2 are not


def test_single_negative_value_non_odd_student():
    """u = -1 with a non-odd student: the exact reduction reflects the teacher (v -> -v); the finite-W prior on
    sampled bulks (reduce=False) agrees within its error, and the result differs from u = +1."""
    kw = dict(alpha=2, beta=1, lam="1/10", r="1.2", c="1.1", gamma="0.9")
    exact = srf_groups("relu_centered", "relu_centered", readout_spec="-1:1", **kw)
    assert exact.method.startswith("reduced") and exact.reduced is not None

    def sampler(d, p, count, seed=0):
        return [_bulk(d, p, 50 * seed + k) for k in range(count)]
    fw = srf_groups("relu_centered", "relu_centered", readout_spec="-1:1", reduce=False, prior="finite-w", sampler=sampler, bulk_p=200,
                    bulk_count=2, **kw)
    assert abs(float(fw.test_error) - float(exact.test_error)) <= fw.abs_error + exact.abs_error
    plus = srf_groups("relu_centered", "relu_centered", readout_spec="1:1", **kw)
    assert abs(float(plus.test_error) - float(exact.test_error)) > 10 * fw.abs_error
