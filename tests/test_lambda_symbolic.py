"""Exact closed forms of the corrected test-error gains Lambda_l (docs/theory/spike-theory.md §8.4, §8.5).

References used here, each independent of the symbolic build:
* the numeric matrix code ``gains(...)`` (Cholesky at working precision, ``lambda_matrix``), fed with the same
  resolvent but never with the closed form; the teacher's Hermite coefficients are written out by hand;
* the boxed formulas of §8.4 and the printed ones of §8.2, typed in from the page;
* ``delta_symbolic`` (the training gains, another build) through the identity Lambda_l = -tau_1^-2 d/dlam (Delta_l/lam).
"""

import json
import warnings

import mpmath
import pytest
import sympy as sp

from onestep_theory import InvalidParameterError
from onestep_theory.core.caches import clear_caches
from onestep_theory.spikes import (CSTAR2, DM1, DM2, LAM, M1, M2, PHI, PSI, S2, SlideFormWarning, cstar_symbols,
                                   delta_matrix, delta_symbolic, gains, lambda_closed_forms, lambda_latex, lambda_matrix,
                                   lambda_symbolic, resolvent)


R2 = sp.sqrt(2)
HE123 = "x + (x**2-1)/sqrt(2) + (x**3-3*x)/sqrt(6)"
#: student, teacher, phi, psi, lam, noise, absent_spikes, allow_uncentered, exact c*_0..3, c*^2 as used in b^2, dropped
CASES = {
    "tanh-S1": ("tanh", "He1", "1/2", "1/2", "1/10", 1, "formal", False, (0, 1, 0, 0), 1, ()),
    "tanh-S2": ("tanh", "x + (x**2-1)/sqrt(2)", "1/2", "1/2", "1/10", 0, "formal", False, (0, 1, 1 / R2, 0), 2, ()),
    "relu-formal": ("relu_centered", "x + (x**2-1)/sqrt(2)", 1, 2, "1/2", 0, "formal", False, (0, 1, 1 / R2, 0), 2, ()),
    # relu_centered has c_3 = 0: with a He3 = x^3 - 3x component, dropping the cubic spike changes Lambda_3
    "relu-drop": ("relu_centered", HE123, 1, 2, "1/2", 0, "drop", False, (0, 1, 1 / R2, 1 / sp.sqrt(6)), 3, (3,)),
    "relu-formal-He3": ("relu_centered", HE123, 1, 2, "1/2", 0, "formal", False, (0, 1, 1 / R2, 1 / sp.sqrt(6)), 3,
                        ()),
    "poly-3": ("He1 + He2/3 + He3/5", "He1 + He2/sqrt(2) + He3/sqrt(6)", "1/3", "3/2", "1/5", "1/4", "refuse", False,
               (0, 1, 1 / R2, 1 / sp.sqrt(6)), 3, ()),
    # uncentered teacher x + x^2 = He0 + He1 + He2; b^2 then uses E sigma*^2 = 1 + 3 = 4
    "uncentered": ("He1 + He2/3 + He3/5", "x + x**2", "1/2", 1, "1/3", "1/4", "refuse", True, (1, 1, 1, 0), 4, ()),
}


def _closed_form_value(ell, case, res, dps):
    """Lambda_ell from the closed form at the resolvent values, and the error propagated from the resolvent's
    stated errors (first order, derivatives of the closed form)."""
    _, _, phi, psi, _, nv, _, unc, cs, cstar2, dropped = case
    e = lambda_symbolic(ell, tuple(i for i in dropped if i <= ell), centered_teacher=not unc)
    e = e.subs({c: cs[k] for k, c in enumerate(cstar_symbols(ell))})
    e = e.subs({PHI: sp.Rational(phi), PSI: sp.Rational(psi), CSTAR2: cstar2, S2: sp.Rational(nv)})
    args = (M1, M2, DM1, DM2)
    assert e.free_symbols <= set(args)
    f = sp.lambdify(args, e, modules="mpmath")
    grads = [sp.lambdify(args, sp.diff(e, a), modules="mpmath") for a in args]
    with mpmath.workdps(dps + 20):
        x = (res.m1, res.m2, res.dm1_dlam, res.dm2_dlam)
        errs = [res.errors[k] for k in ("m1", "m2", "dm1_dlam", "dm2_dlam")]
        val = f(*x)
        err = mpmath.fsum(abs(g(*x)) * mpmath.mpf(de) for g, de in zip(grads, errs))
        return +val, +err


@pytest.mark.parametrize("name,dps", [(n, 30) for n in sorted(CASES)] + [(n, d) for n in ("poly-3", "relu-drop")
                                                                          for d in (15, 50)])
def test_closed_form_reproduces_gains(name, dps):
    case = CASES[name]
    st, te, phi, psi, lam, nv, absent, unc = case[:8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # Lambda_3 is flagged unvalidated (§8.5); not what is tested here
        g = gains(st, te, phi, psi, lam, ell=3, noise_var=nv, dps=dps, absent_spikes=absent, allow_uncentered=unc)
    assert tuple(g.dropped) == case[10]
    if name == "relu-drop":                 # the drop matters here (formal: Lambda_3 > Lambda_2)
        assert g.lambda_test[2] == g.lambda_test[1]
    res = resolvent(st, phi, psi, lam, dps=dps)
    for ell in (1, 2, 3):
        val, err = _closed_form_value(ell, case, res, dps)
        # stated error: the resolvent's errors propagated, plus rounding at dps digits
        tol = err + mpmath.mpf(10) ** -dps * max(1, abs(val))
        assert abs(val - g.lambda_test[ell - 1]) <= tol, (ell, val, g.lambda_test[ell - 1], tol)


def test_general_build_when_the_linear_spike_is_dropped():
    """Dropping row 1 (never done by ``gains``) makes the fit depend on t = m2/m1; the build keeps it exact.
    Reference: the numeric ``delta_matrix`` / ``lambda_matrix`` at arbitrary admissible values."""
    vals = {M1: sp.Rational(7, 5), M2: sp.Rational(3, 4), DM1: -sp.Rational(9, 2), DM2: -sp.Rational(6, 5),
            PHI: sp.Rational(1, 2), PSI: sp.Rational(2, 3), CSTAR2: sp.Integer(3), S2: sp.Rational(1, 4)}
    cs = (0, 1, 1 / R2, 1 / sp.sqrt(6), sp.Rational(1, 5))
    e = lambda_symbolic(4, (1,))
    assert sp.diff(e, M2) != 0
    with mpmath.workdps(40):
        mp = {k: mpmath.mpf(v.p) / v.q for k, v in vals.items()}
        b = mpmath.sqrt(1 + mp[PHI] * (mp[CSTAR2] + mp[S2]))
        h = [mpmath.mpf(sp.N(c, 50)) * (1 / b) ** k for k, c in enumerate(cs)]
        tau1, tau2 = mp[PSI] / mp[PHI] * mp[M1], mp[PSI] / mp[PHI] * mp[M2]
        q_lin, q_nl = (mp[PHI] / mp[PSI] * -mp[d] / mp[M1] ** 2 for d in (DM2, DM1))
        _, chat = delta_matrix(4, tau1, tau2, 1, h, (1,))
        want = lambda_matrix(4, q_lin, q_nl, chat, h, (1,))
        got = mpmath.mpf(str(sp.N(e.subs({c: cs[k] for k, c in enumerate(cstar_symbols(4))}).subs(vals), 45)))
        assert abs(got - want) <= mpmath.mpf(10) ** -35 * abs(want)


def test_section11_reference_values():
    """§11: tanh, phi = psi = 1/2, lam = 1/10; Lambda_1 = 0.1017283258 (S1, S2), Lambda_2 = 0.3376344419 (S2)."""
    res = resolvent("tanh", "1/2", "1/2", "1/10", dps=30)
    for name, ell, want in (("tanh-S1", 1, "0.1017283258"), ("tanh-S2", 2, "0.3376344419")):
        val, _ = _closed_form_value(ell, CASES[name], res, 30)
        assert abs(val / mpmath.mpf(want) - 1) < 1e-9


# ---------------------------------------------------------------- structure, proven symbolically
def _b2(cs):
    return cs[1] ** 2 + PHI * (CSTAR2 + S2)


B2 = sp.Symbol("B2", positive=True)


def _rational(e):
    """``e`` with b^2 as one symbol: sigma_eps^2 -> (B2 - c*1^2)/phi - c*^2 is an invertible change of variables."""
    c1 = cstar_symbols(1)[1]
    return e.subs(S2, (B2 - c1**2) / PHI - CSTAR2)


def _zero(e) -> bool:
    """Exact zero test: every expression here is a rational function of its symbols (integer powers of b^2)."""
    return sp.expand(sp.fraction(sp.together(_rational(e)))[0]) == 0


def test_reduces_to_the_boxed_forms_of_8_4():
    cs = cstar_symbols(2)
    l1 = PHI / PSI * cs[1] ** 4 / _b2(cs) * (-DM2) / M1**2
    l2 = l1 + PHI / PSI * 4 * cs[1] ** 4 * cs[2] ** 2 / (3 * _b2(cs) ** 2) * (-DM1) / M1**2
    assert _zero(lambda_symbolic(1) - l1)
    assert _zero(lambda_symbolic(2) - l2)


@pytest.mark.parametrize("ell,drop,centered", [(1, (), True), (2, (), True), (3, (), True), (4, (), True),
                                               (5, (), True), (6, (), True), (3, (2,), True), (4, (3,), True),
                                               (5, (2, 4), True), (3, (), False), (4, (3,), False)])
def test_lambda_is_minus_dlam_of_delta_over_lam(ell, drop, centered):
    r"""Lambda_l = -tau_1^{-2} d/dlam (Delta_l / lam), the derivative acting on m_1, m_2 (the teacher's energies do
    not depend on lam). The same identity links the baselines of §7.1 and §8.1."""
    E = delta_symbolic(ell, drop, centered_teacher=centered) / LAM
    assert LAM not in E.free_symbols
    rhs = -(PHI / PSI) ** 2 / M1**2 * (sp.diff(E, M1) * DM1 + sp.diff(E, M2) * DM2)
    assert _zero(lambda_symbolic(ell, drop, centered_teacher=centered) - rhs)


def test_baselines_obey_the_same_identity():
    cs1, cstar2, nv, lam = sp.symbols("c1 cs2 nv lam", positive=True)
    tau1, tau2 = PSI / PHI * M1, PSI / PHI * M2
    base_tr_over_lam = cs1**2 * tau2 + (cstar2 - cs1**2 + nv) * tau1              # §7.1
    q_lin, q_nl = PHI / PSI * (-DM2) / M1**2, PHI / PSI * (-DM1) / M1**2
    base_te = cs1**2 * q_lin + (cstar2 - cs1**2 + nv) * q_nl                        # §8.1
    d = sp.diff(base_tr_over_lam, M1) * DM1 + sp.diff(base_tr_over_lam, M2) * DM2
    assert _zero(base_te + d / tau1**2)


@pytest.mark.parametrize("ell", range(2, 7))
def test_increments_are_nonlinear_and_nonnegative(ell):
    """Lambda_l - Lambda_1 costs q_nl only (no m_2, no dm_2), and each step of the staircase is >= 0 on a grid."""
    inc = sp.cancel(_rational((lambda_symbolic(ell) - lambda_symbolic(1)) * M1**2 * PSI / (PHI * (-DM1))))
    assert not inc.free_symbols & {M1, M2, DM1, DM2}
    step = sp.cancel(_rational(lambda_symbolic(ell) - lambda_symbolic(ell - 1)) * M1**2 * PSI / (PHI * (-DM1)))
    cs = cstar_symbols(ell)
    grid = [sp.Rational(v) for v in ("-3/2", "-1/3", "1/2", "2")]
    for j in range(12):
        point = {c: grid[(j * (k + 3) + k * k) % 4] for k, c in enumerate(cs)}
        energy = sum(sp.factorial(k) * point[c] ** 2 for k, c in enumerate(cs) if k)         # c*^2
        point[B2] = point[cs[1]] ** 2 + sp.Rational(1, j + 1) * (energy + sp.Rational(j, 4))
        assert step.free_symbols <= set(point) and step.subs(point) >= 0


@pytest.mark.parametrize("ell", range(1, 7))
def test_setting1_flat_and_scale_invariant(ell):
    cs = cstar_symbols(ell)
    e = lambda_symbolic(ell)
    assert _zero(e.subs({c: 0 for c in cs[2:]}) - lambda_symbolic(1))        # §8.5: Setting 1
    kappa = sp.Symbol("kappa", positive=True)                                             # §8.3 item 2
    scaled = e.subs({M1: M1 / kappa**2, M2: M2 / kappa**2, DM1: DM1 / kappa**4, DM2: DM2 / kappa**4},
                    simultaneous=True)
    assert _zero(scaled - e)


def test_absent_spikes():
    assert _zero(lambda_symbolic(3, (3,)) - lambda_symbolic(2))
    assert _zero(lambda_symbolic(5, (5,)) - lambda_symbolic(4))
    for ell in range(2, 7):
        assert _zero(lambda_symbolic(ell, tuple(range(2, ell + 1))) - lambda_symbolic(1))
    assert lambda_symbolic(3, (1, 2, 3)) == 0
    # dropping the quadratic spike (odd student): Lambda_2 = Lambda_1
    assert _zero(lambda_symbolic(2, (2,)) - lambda_symbolic(1))


def test_differs_from_the_printed_lambda1():
    """§8.2 prints Lambda_1 = c*1^4/b^2 (-dm2/dlam); the closed form carries phi/(psi m1^2) more (§8.3)."""
    cs = cstar_symbols(1)
    printed = cs[1] ** 4 / _b2(cs) * (-DM2)
    assert not _zero(lambda_symbolic(1) - printed)
    assert _zero(lambda_symbolic(1) / printed - PHI / (PSI * M1**2))
    # the typed-in printed form is the package's test_form="slide" (derivations/d_printed_lambda_fails.py)
    res = resolvent("tanh", "1/2", "1/2", "1/10", dps=30)
    with pytest.warns(SlideFormWarning):
        gs = gains("tanh", "He1", "1/2", "1/2", "1/10", ell=1, noise_var=1, dps=30, test_form="slide")
    sub = {cs[1]: 1, CSTAR2: 1, S2: 1, PHI: sp.Rational(1, 2), PSI: sp.Rational(1, 2)}
    with mpmath.workdps(40):
        pv = sp.lambdify(DM2, printed.subs(sub), "mpmath")(res.dm2_dlam)
        cv, _ = _closed_form_value(1, CASES["tanh-S1"], res, 30)
        assert abs(pv / gs.lambda_test[0] - 1) < mpmath.mpf(10) ** -25
        assert abs(cv / pv - 1) > 0.9                       # 0.1017 against 3.2275


# ---------------------------------------------------------------- LaTeX, caching, bad input, CLI
@pytest.mark.parametrize("ell", [1, 3, 6])
def test_latex(ell):
    s = lambda_latex(lambda_symbolic(ell))
    assert s.count("{") == s.count("}") and s.count(r"\left(") == s.count(r"\right)")
    want = [r"\partial_\lambda m_2", "m_1", r"\phi", r"\psi", r"c_\star^2", r"\sigma_\varepsilon^2"]
    want += [rf"c_{{\star,{k}}}" for k in range(1, ell + 1)] + ([r"\partial_\lambda m_1"] if ell > 1 else [])
    assert all(w in s for w in want), [w for w in want if w not in s]
    assert not any(raw in s for raw in ("dm1", "dm2", "c_star", "sigma_eps", "m1", "m2"))


def test_latex_parses_back():
    """The printed LaTeX of Lambda_2 read back through the package's TeX layer (docs/theory/checking.md §7; SymPy's
    parser alone reads \\phi(...) as a function call) is Lambda_2 exactly."""
    pytest.importorskip("antlr4")
    from onestep_theory.quantities import symbols_of
    from onestep_theory.quantities.latex.tex import read_latex
    from onestep_theory.core.syntax import parse_text

    for ell in (1, 2, 3):
        e = lambda_symbolic(ell)
        back = parse_text(read_latex(lambda_latex(e), "spike").formula, "formula", symbols_of("spike"))
        assert sp.simplify(back - e) == 0, ell


def test_cached_by_arguments():
    a = lambda_symbolic(4, [3])
    assert lambda_symbolic(4, (3,)) is a and lambda_symbolic(4, {3}) is a
    clear_caches()
    sp.core.cache.clear_cache()      # SymPy's own cache would hand back the same object (order-dependent)
    b = lambda_symbolic(4, (3,))
    assert b is not a and b == a


@pytest.mark.parametrize("ell,drop", [(0, ()), (9, ()), (True, ()), (2.0, ()), ("2", ()), (None, ()), (3, (0,)),
                                      (3, (4,)), (3, 5), (3, ("a",)), (3, (True,))])
def test_bad_input(ell, drop):
    with pytest.raises(InvalidParameterError):
        lambda_symbolic(ell, drop)
    with pytest.raises(InvalidParameterError):
        lambda_closed_forms(ell, drop)


def _cli(argv, capsys):
    from onestep_theory.cli.main import main

    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_symbolic_lambda(capsys):
    rc, out, err = _cli(["gains", "--student", "relu_centered", "--teacher", "x + (x**2-1)/sqrt(2)", "--phi", "1",
                         "--psi", "2", "--lam", "1/2", "--ell", "3", "--absent-spikes", "drop", "--symbolic-lambda",
                         "--json"], capsys)
    assert rc == 0, err
    d = json.loads(out)["symbolic"]
    assert sorted(d) == ["lambda_1", "lambda_2", "lambda_3"]
    assert d["lambda_3"]["sympy"] == str(lambda_symbolic(3, (3,))) and r"\partial_\lambda m_1" in d["lambda_3"]["latex"]
    rc, out, err = _cli(["gains", "--student", "tanh", "--teacher", "He1", "--phi", "1", "--psi", "2", "--lam", "1/2",
                         "--ell", "1", "--test-form", "slide", "--symbolic-lambda"], capsys)
    assert rc == 2 and "--test-form" in err and len(err.strip().splitlines()) == 1
