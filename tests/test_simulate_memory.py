"""Memory of the simulations (issue 31): estimated before allocating, covering the real peak, a soft limit that
--force lifts only up to the available memory, and an allocation failure as a resource error (exit 3).

The available memory is monkeypatched; nothing here allocates more than a few MiB.  The peaks are traced by
tracemalloc (NumPy's arrays included), an independent measurement of what the estimates model."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import onestep_theory.simulate as S
from onestep_theory.cli.main import main
from onestep_theory.core.errors import InvalidParameterError
from onestep_theory.simulate import base, memory
from onestep_theory.simulate.bias import sim_trained_bias

GIB = 2**30


def test_soft_limit_force_and_the_machine(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 10 * GIB)
    memory.check_memory(7.9 * GIB, False, "fits")                          # under 80 %
    with pytest.raises(InvalidParameterError) as err:
        memory.check_memory(9 * GIB, False, "d=1")
    msg = str(err.value)
    assert "estimated peak 9 GiB" in msg and "limit 8 GiB" in msg and "10 GiB available" in msg and "--force" in msg
    memory.check_memory(9 * GIB, True, "forced")                           # --force: up to the machine
    with pytest.raises(InvalidParameterError, match="only up to the available memory"):
        memory.check_memory(10.5 * GIB, True, "d=2")                       # never beyond it
    with pytest.raises(InvalidParameterError, match="2 tasks at once"):
        memory.check_memory(4.5 * GIB, False, "d=3", concurrent=2)


def test_elementwise_copies():
    assert 1.0 <= memory.elementwise_copies(np.tanh) <= 1.05
    assert memory.elementwise_copies(lambda t: np.stack([t, t + 1]).sum(axis=0)) >= 2.9     # stack, t + 1, sum
    tracemalloc.start()
    try:
        assert memory.elementwise_copies(lambda t: t + 1) == memory.DEFAULT_COPIES    # not measured while tracing
    finally:
        tracemalloc.stop()


def test_cli_refuses_before_allocating(monkeypatch, capsys):
    """The issue's command: d = 10^6 with --force ended 'out of memory', exit 1.  Now: exit 2, one line with the
    estimate, the available memory and what --force does."""
    monkeypatch.setattr(memory, "available_memory", lambda: 16 * GIB)
    argv = ["simulate", "srf", "--student", "tanh", "--teacher", "sin", "--d", "1000000", "--alpha", "1", "--beta",
            "1", "--r", "1", "--c", "1", "--gamma", "1", "--quiet"]
    for force in ([], ["--force"]):
        assert main(argv + force) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "estimated peak" in err[0] and "16 GiB available" in err[0] and "--force" in err[0]
        assert ("only up to the available memory" in err[0]) == bool(force)


def test_cli_allocation_failure_is_a_resource_error(monkeypatch, capsys):
    def boom(*a, **k):
        raise MemoryError()

    monkeypatch.setattr(S, "sim_srf", boom)
    assert main(["simulate", "srf", "--student", "tanh", "--teacher", "sin", "--d", "50", "--alpha", "1", "--beta",
                 "1", "--r", "1", "--c", "1", "--gamma", "1", "--force", "--quiet"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "resource failure: out of memory" in err[0] and "--force" in err[0]


RUNS = {
    "resolvent": lambda d: S.sim_resolvent("tanh", d=d, phi=0.5, psi=0.5, lam=[0.1, 1]),
    "spikes": lambda d: S.sim_spikes("tanh", "tanh", d=d, phi=0.5, psi=0.5, alpha=0.5, n_test=2 * d),
    "spike-model": lambda d: S.sim_spike_model("tanh", "He2", d=d, phi=0.5, psi=0.5, mode="finite", eta=1.0),
    "giant-step": lambda d: S.sim_giant_step("tanh(x) + x**3/20", "sin", d, alpha0=2, eta=3, alpha=1, beta=3,
                                             lam=[0.01, 0.1, 1, 2, 3, 4, 5], n_test=1000),
    "srf": lambda d: S.sim_srf("tanh", "sin", d, r=1, c=1, gamma=1, alpha=3, beta=1, n_test=1000),
    "spectrum": lambda d: S.sim_spectrum("relu_centered", d, r=1, c=1, alpha=2, beta=1),
    "ablation": lambda d: S.sim_ablation("tanh", "sin", d, alpha0=2, eta=3, alpha=3, beta=1, n_test=500,
                                         variants="srf,gaussian_bulk,degree2"),
    "bias": lambda d: sim_trained_bias("tanh", "sin", d, r=1, c=1, gamma=1, alpha=2, beta=1, n_test=1000),
    "bulks": lambda d: S.sample_bulks(d, d, 3),
}


@pytest.mark.parametrize("name", [k for k in RUNS if k != "bias"])        # bias: 7 s at d = 160
def test_estimate_covers_the_traced_peak(name, monkeypatch):
    """The arrays each estimate counts (without its allowance, but for 256 KiB of Python objects) cover the peak
    tracemalloc sees (d = 300)."""
    seen = []

    def record(nbytes, force, what, concurrent=1):
        seen.append(nbytes)

    RUNS[name](12)                       # parse, lambdify and measure the activations' copies first
    monkeypatch.setattr(base, "check_memory", record)
    monkeypatch.setattr(S.srf, "check_memory", record)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        RUNS[name](300)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    counted = (max(seen) - memory.SLACK_BYTES) / memory.SLACK + 2**18
    assert counted >= peak, (name, counted / peak)


@pytest.mark.parametrize("name", ["resolvent", "spikes", "giant-step", "srf", "spectrum", "ablation", "bias"])
def test_refused_before_allocating(name, monkeypatch):
    """With 64 MiB available, d = 1000 is refused having allocated (traced) less than 2 MiB."""
    monkeypatch.setattr(memory, "available_memory", lambda: 64 * 2**20)
    RUNS[name](12)
    tracemalloc.start()
    try:
        with pytest.raises(InvalidParameterError, match="estimated peak"):
            RUNS[name](1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20, peak


@pytest.mark.parametrize("argv,flag", [
    (["simulate", "giant-step", "--student", "tanh", "--teacher", "tanh", "--alpha0", "1", "--eta", "1",
      "--alpha", "1", "--beta", "1e-9", "--lam", "0.1", "--d", "200"], "--beta"),
    (["simulate", "srf", "--student", "tanh", "--teacher", "tanh", "--r", "1", "--c", "1", "--gamma", "1",
      "--alpha", "1/1000", "--beta", "1", "--lam", "0.1", "--d", "200"], "--alpha"),
])
def test_a_size_that_rounds_to_zero_is_refused_not_raised_to_one(capsys, argv, flag):
    """Issue 31: beta * d < 1/2 ran with the width silently raised to p = 1.  Now exit 2, one line naming the
    ratio and its smallest valid value (0.5/d)."""
    from onestep_theory.cli import main

    rc = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and flag in lines[0] and "0.0025" in lines[0], lines


def test_an_ablation_study_is_sized_with_the_ablation_estimate(monkeypatch):
    """A study is checked before any task runs with its own protocol's estimate: an ablation builds one first
    layer per variant, so with the available memory between the srf estimate and the ablation one, plan_study of
    an ablation refuses (naming d) while the giant-step study of the same sizes is accepted."""
    from onestep_theory.study.run import plan_study

    d, ratios = 400, dict(alpha=1, beta=1, alpha0=1)
    n = p = n0 = d
    srf_need = max(memory.srf_peak(k, d, n, p, n0, hook=True) for k in ("srf", "spectrum", "giant-step"))
    from onestep_theory.simulate.ablation import variant_names
    names = variant_names(None)
    abl_need = memory.ablation_peak(d, n, p, n0, variants=len(names), degree2=True,
                                    steps=1 + ("no_f0" in names) + ("degree2" in names))
    assert abl_need > 1.5 * srf_need
    limit = (srf_need * abl_need) ** 0.5                  # between the two estimates
    monkeypatch.setattr(memory, "available_memory", lambda: int(limit / memory.MEMORY_SHARE))
    common = dict(student="tanh", teacher="tanh", eta=1, lam="1/10", **ratios)
    plan_study("giant-step", common, [d], 2)
    with pytest.raises(InvalidParameterError, match="d"):
        plan_study("ablation", common, [d], 2)
