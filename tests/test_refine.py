"""The refinement driver (core.precision.refine, Target, error_of; issue 34 item 4): its stopping rule against exact
references at 15, 30 and 50 digits, its limits (level cap, node limit), and that the three refinement loops of srf
go through it (docs/theory/numerics.md §5)."""

import pathlib
import re

import mpmath
import pytest

from onestep_theory.core.errors import ConvergenceError, InvalidParameterError
from onestep_theory.core.precision import EPS64, MAX_LEVEL, Target, error_of, precision, refine

PKG = pathlib.Path(__file__).resolve().parents[1] / "onestep_theory"


def partial_sum(n):
    """sum_{k=1}^{n} 1/k!, at the ambient precision (its limit is e - 1)."""
    return mpmath.fsum(1 / mpmath.factorial(k) for k in range(1, n + 1))


@pytest.mark.parametrize("dps", [15, 30, 50])
def test_refinement_error_bounds_the_actual_error(dps):
    """e - 1 = sum 1/k!, 6 more terms per level: the driver stops at the first level whose change meets 10^-dps
    (relative), and the estimate bounds the error against mpmath's constant e."""
    with precision(dps):
        exact = mpmath.e - 1
        unit = 10.0 ** -mpmath.mp.dps
        seen = []

        def step(level, prev):
            seen.append(prev)
            return partial_sum(6 * level + dps // 2)

        def estimate(coarse, fine):
            e = error_of(abs(fine - coarse), 0, 10 * unit, fine)
            return e, [(fine, e, Target.of(dps))]

        out = refine(step, estimate, what="e - 1")
        assert out.met and out.estimate <= 10.0 ** -dps * abs(out.last)
        assert abs(out.last - exact) <= out.estimate
        assert abs(out.levels[-2] - exact) > out.estimate / 100     # the coarser level was really coarser
    assert seen[0] is None and seen[1:] == out.levels[:-1]      # each level warm-started from the one before


def test_target_relative_absolute_and_zero_scale():
    assert Target(1e-10).met(2.0, 2e-10) and not Target(1e-10).met(2.0, 2.1e-10)
    assert not Target(1e-10).met(0.0, 1e-30)                  # a zero value never meets a relative target
    assert Target(abs=1e-8).met(0.0, 1e-8) and not Target(abs=1e-8).met(5.0, 2e-8)
    assert Target(1e-10, 1e-12).met(1.0, 1.01e-10) and not Target(1e-10, 1e-12).met(1.0, 1.02e-10)   # rel|v| + abs
    assert Target(1e-10, scale=2.0).met(1e-11, 1e-11)          # |v| + e <= 1e-10 * scale
    assert not Target(1e-10, scale=2.0).met(1e-10, 1.5e-10)
    assert Target.of(30).rel == 1e-30 and Target.of(None, 1e-12).rel == 1e-12
    assert error_of(0.5, 0.25, EPS64, 0.5) == 0.75 + EPS64     # the rounding term scales with max(1, |v|)
    assert error_of(0.5, 0.25, EPS64, -4.0) == 0.75 + 4 * EPS64


def test_level_cap_and_node_limit():
    calls = []

    def never(level, prev):                                    # changes by 1 at every level: never converges
        calls.append(level)
        return float(level)

    est = (lambda a, b: (abs(b - a), [(b, abs(b - a), Target(1e-10))]))  # noqa: E731
    progress = []
    out = refine(never, est, start=2, progress=lambda i, n: progress.append((i, n)))
    assert not out.met and calls == list(range(2, 2 + MAX_LEVEL + 1)) and out.estimate == 1.0
    assert progress == [(i, MAX_LEVEL + 1) for i in range(1, MAX_LEVEL + 2)]

    def limited(at, param="quadrature"):
        def step(level, prev):
            if level >= at:
                raise InvalidParameterError(param, level, "a rule within the node limit")
            return float(level)
        return step

    out = refine(limited(3), est)                              # the levels so far are reported, unmet
    assert out.levels == [0.0, 1.0, 2.0] and not out.met
    with pytest.raises(ConvergenceError, match="e - 1: no error estimate possible"):
        refine(limited(1), est, what="e - 1")
    with pytest.raises(InvalidParameterError, match="alpha"):   # any other refusal is the caller's
        refine(limited(1, "alpha"), est)


def test_srf_refinement_loops_use_the_one_driver():
    """srf's saddle points, bounds and tau(kappa) call core.precision.refine, and no module defines its own level
    cap or float64 unit (``MAX_LEVEL``, ``_EPS64``: defined once, in core.precision)."""
    users = {"srf/single/solve.py", "srf/grouped/kgroup.py", "srf/optimal/boundrule.py", "srf/optimal/taustar.py"}
    defined = {}
    for path in PKG.rglob("*.py"):
        text, rel = path.read_text(), str(path.relative_to(PKG))
        for name in re.findall(r"^\s*(MAX_LEVEL|_?EPS64)\s*=", text, flags=re.M):
            defined.setdefault(name, []).append(rel)
        if rel in users and re.search(r"^from \.\.\.core\.precision import [^\n]*\brefine\b", text, flags=re.M):
            users.discard(rel)
    assert defined == {"MAX_LEVEL": ["core/precision.py"], "EPS64": ["core/precision.py"]}, defined
    assert not users, f"refinement loops not through core.precision.refine: {users}"


def _limited(real, at):
    """``real`` (a κ-rule builder taking ``level=``) refusing every level from ``at`` on, as the node limit does."""
    def setup(*a, level=0, **k):
        if level >= at:
            raise InvalidParameterError("quadrature", level, "a rule within the node limit")
        return real(*a, level=level, **k)
    return setup


def test_kgroup_and_bounds_stop_at_the_node_limit(monkeypatch):
    """The node limit inside the driver: with one level there is no error estimate (ConvergenceError, exit 3, not a
    refusal of the user's input); with two the values are reported with the change between them as their error."""
    from onestep_theory.srf.grouped import kgroup
    from onestep_theory.srf.optimal import boundrule

    args = ("tanh", "sin", [1.1, 2.2], [1.02, 1.08], 0.97, [0.5, 0.5])
    kw = dict(alpha=2.0, beta=1.0, lam=0.1, noise_var=0.0, tol=1e-16)   # below the rounding: every level is run
    full = kgroup.solve_kgroup(*args, **kw)
    assert full.level == MAX_LEVEL
    real = kgroup.group_setup
    monkeypatch.setattr(kgroup, "group_setup", _limited(real, 1))
    with pytest.raises(ConvergenceError, match="K-group saddle point: no error estimate possible"):
        kgroup.solve_kgroup(*args, **kw)
    monkeypatch.setattr(kgroup, "group_setup", _limited(real, 2))
    two = kgroup.solve_kgroup(*args, **kw)
    assert two.level == 1 and abs(two.test_error - full.test_error) <= two.errors["test_error"]

    levels, real = [], boundrule.srf_setup

    def spy(*a, level=0, **k):
        levels.append(level)
        return real(*a, level=level, **k)

    monkeypatch.setattr(boundrule, "srf_setup", spy)
    b_full = boundrule.refined_bounds("tanh", "sin", 1.3, 1.0, 1.0, None, 1e-13)
    assert levels == list(range(MAX_LEVEL + 1))             # 1e-13 is not met: the cap
    monkeypatch.setattr(boundrule, "srf_setup", _limited(real, 2))
    vals, errs, _, _ = boundrule.refined_bounds("tanh", "sin", 1.3, 1.0, 1.0, None, 1e-13)
    assert all(abs(v - w) <= e for v, w, e in zip(vals, b_full[0], errs))
