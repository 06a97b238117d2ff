r"""Peak memory of the simulation protocols, estimated before anything is allocated (docs/theory/numerics.md §1,
bounded work; the limit itself is :func:`~onestep_theory.simulate.base.check_memory`).

Each estimate follows its protocol's code phase by phase — the arrays alive at the same time, in float64 words —
and returns the largest phase in bytes.  The activations' own temporaries (a user's expression may build several
arrays of its argument's size) are measured once per callable by :func:`elementwise_copies`.  Measured (issue 31):
the arrays counted cover the peak traced by ``tracemalloc`` (NumPy's arrays included) for every protocol, by 1.0 to
1.8 at d = 200 to 800 (tests/test_simulate_memory.py checks it at d = 300); with the allowance (:data:`SLACK`) the
estimate is 1.14 to 1.82 times the peak resident memory of a run at d = 1600.

Sizes: ``d`` input dimension; sRF ``n`` readout samples, ``p`` width, ``n0`` step samples; spikes ``n``, ``N`` width;
``g`` the smaller side of the Gram matrix; ``B`` the test batch.
"""

from __future__ import annotations

import math
import os
import threading
import tracemalloc

import numpy as np

from ..core.errors import InvalidParameterError

__all__ = ["MEMORY_SHARE", "available_memory", "check_memory", "elementwise_copies", "srf_peak", "spike_peak", "ablation_peak", "bulks_peak"]

#: Share of the available memory a simulation may plan to use without ``force``.
MEMORY_SHARE = 0.8


def available_memory() -> int:
    """Bytes of memory available now (MemAvailable of /proc/meminfo; physical memory otherwise)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**34


def check_memory(nbytes: float, force: bool, what: str, concurrent: int = 1) -> None:
    """Refuse, before anything is allocated, a simulation whose estimated peak memory (``simulate.memory``), times the
    ``concurrent`` tasks that run at once (a study's workers), exceeds :data:`MEMORY_SHARE` of the available memory;
    ``force`` lifts that limit up to the available memory itself, never beyond."""
    avail = available_memory()
    need = float(nbytes) * concurrent
    if need <= MEMORY_SHARE * avail or (force and need <= avail):
        return
    each = f" per task, {concurrent} tasks at once" if concurrent > 1 else ""
    gib = (lambda b: f"{b / 2**30:.3g} GiB")
    if force:
        allowed = (f"sizes whose arrays fit in memory: estimated peak {gib(nbytes)}{each}, more than the "
                   f"{gib(avail)} available (force=True, `simulate --force`, lifts the {MEMORY_SHARE:.0%} limit only up to "
                   f"the available memory)")
    else:
        allowed = (f"sizes whose arrays fit in memory: estimated peak {gib(nbytes)}{each}, limit {gib(MEMORY_SHARE * avail)}"
                   f" ({MEMORY_SHARE:.0%} of the {gib(avail)} available; reduce d or the ratios"
                   + (", or the workers" if concurrent > 1 else "; force=True, `simulate --force`, lifts the limit up to the "
                      "available memory") + ")")
    raise InvalidParameterError("d", what, allowed)


#: What an elementwise callable is assumed to allocate, per element of its argument, when it cannot be measured.
DEFAULT_COPIES = 4.0
_COPIES: dict = {}
_LOCK = threading.Lock()


def elementwise_copies(fn) -> float:
    """Peak bytes allocated by the elementwise float64 callable ``fn`` (its result included), per byte of its
    argument: measured once with ``tracemalloc`` on 2¹⁶ points in [−4, 4], at least 1.  While ``tracemalloc`` is
    already tracing (someone else's measurement) it is not measured: :data:`DEFAULT_COPIES`.

    >>> 1 <= elementwise_copies(np.tanh) <= 1.05
    True
    """
    if fn in _COPIES:
        return _COPIES[fn]
    t = np.linspace(-4.0, 4.0, 1 << 16)
    with _LOCK:                  # one measurement at a time (a study's threads)
        if tracemalloc.is_tracing():
            return DEFAULT_COPIES
        tracemalloc.start()
        try:
            with np.errstate(all="ignore"):
                np.asarray(fn(t))
            peak = tracemalloc.get_traced_memory()[1]
        except Exception:        # noqa: BLE001 -- the protocol evaluates it again and reports its own error
            return DEFAULT_COPIES
        finally:
            tracemalloc.stop()
    _COPIES[fn] = max(1.0, math.ceil(100.0 * peak / t.nbytes) / 100.0)
    return _COPIES[fn]


#: Allowance on top of the arrays counted: 10 % (LAPACK's buffers and the allocator's slack outside tracemalloc's
#: view) and 32 MiB (BLAS thread buffers, the interpreter's own objects).
SLACK, SLACK_BYTES = 1.1, 2**25


def _bytes(words) -> float:
    return 8.0 * SLACK * words + SLACK_BYTES


def _batch(batch, n_test) -> int:
    """Rows of a test batch (the protocol checks ``batch`` and ``n_test`` itself)."""
    try:
        return int(min(int(batch), int(n_test)))
    except (TypeError, ValueError, OverflowError):
        return 4000


def _ridge(n, p, n_lam, loss):
    """Words of a ridge readout on an n x p feature matrix, beyond the features: the Gram matrix and its Cholesky
    copy (eigh for more than 6 λ: input copy, vectors and LAPACK workspace), or L-BFGS's history for a loss."""
    g = min(n, p)
    if loss:
        return 2 * n * p + 64 * (n + p)       # F = Phi/sqrt(p), the history and the bounds of the dual
    return n * p + (5 if n_lam > 6 else 2) * g * g + 4 * (n + p)


def srf_peak(protocol, d, n, p, n0=0, *, kf=DEFAULT_COPIES, kd=DEFAULT_COPIES, batch=4000, n_test=20000, n_lam=1,
             loss=False, features="network", hook=False) -> float:
    """Bytes at the peak of one repetition of ``sim_srf`` (``protocol="srf"``), ``sim_giant_step``
    (``"giant-step"``), ``sim_spectrum`` (``"spectrum"``) or ``sim_trained_bias`` (``"bias"``); ``kf``, ``kd``: the
    student's and its derivative's :func:`elementwise_copies`; ``hook``: giant-step's ``weights_hook`` is a study's
    paired F1 reference (``from_trained`` and the eigenpairs of the p x p matrix of ``empirical_from_weights``)."""
    n0 = n0 or 0
    B = _batch(batch, n_test) if protocol != "spectrum" else 0
    g = min(n, p)
    W = 2 * p * d                                     # the bulk and the first layer (W0 and W1 for the network)
    feat = W + n * d + (1 + kf) * n * p               # X, X W^T and sigma of it
    test = W + B * d + (2 + kf) * B * p               # a test batch, its pre-activations, features, scaled
    phases = [3 * p * d, feat]
    if protocol == "srf":
        if features == "cgep":
            phases.append(W + n * d + 6 * n * p)
        phases += [W + n * p + _ridge(n, p, n_lam, loss), test + n * p]
    elif protocol == "giant-step":
        Zs = n0 * p
        phases += [p * d + n0 * d + max((1 + kf) * Zs, (1 + kd) * Zs, Zs + 2 * p * d), 5 * p * d,
                   W + n * p + _ridge(n, p, n_lam, loss),
                   test + (0 if loss else n * p + (3 if n_lam > 6 else 1) * g * g)]
        if hook:
            phases += [4 * p * d, 3 * p * d + 6 * p * p]
    elif protocol == "spectrum":
        phases.append(W + n * p + 3 * g * g)
    elif protocol == "bias":
        phases += [W + 2 * n * p + kf * n * p, W + 3 * n * p + 2 * g * g, test + 2 * n * p + B * p]
    else:
        raise ValueError(protocol)
    return _bytes(max(phases) + 16 * (n + d + p + n0 + B))


def spike_peak(protocol, n, d, N, *, kf=DEFAULT_COPIES, kd=DEFAULT_COPIES, batch=2000, n_test=None, singular=False,
               gaussian_bulk=False, mode="limit", ell=2, poly_teacher=True) -> float:
    """Bytes at the peak of one repetition of ``sim_resolvent`` (``"resolvent"``), ``sim_spikes`` (``"spikes"``)
    or ``sim_spike_model`` (``"spike-model"``, ``mode`` limit or finite)."""
    g = min(n, N)
    F0 = N * n + max(kf, 4 if gaussian_bulk else 0) * n * N      # Z0 and the bulk features
    if protocol == "resolvent":
        base = N * d + n * d
        phases = [base + F0, base + n * N + 5 * g * g, base + n * N + g * g + 3 * n * g,
                  base + n * N + 2 * n * g + 2 * g * d]
        extra = 0
    elif protocol == "spikes":
        B = _batch(batch, n_test if n_test is not None else 2 * n)
        step = N * d + 2 * n * d + max((1 + max(kf, kd)) * n * N, n * N + 2 * N * d)
        base = 2 * N * d + n * d
        phases = [step, base + (1 + kf) * n * N, base + n * N + 2 * g * g,
                  base + n * N + g * g + 5 * n * n, base + n * N + g * g + n * n + 2 * n * d,
                  base + B * d + (2 + kf) * B * N + (n * N if singular else 0)]
        extra = 16 * B
    elif protocol == "spike-model":
        base = N * d + 2 * n * d
        phases = [base + F0, base + n * N + 2 * n * n + 2 * n * (ell + 1)]
        if mode == "finite":
            phases.append(base + 4 * n * N + 4 * g * g)
        # the exact test risk: a tensor Gauss-Hermite rule (40^3 points), or chunks of 500 000 Gaussian draws
        extra = 16 * 40**3 if poly_teacher else 12 * 500_000
    else:
        raise ValueError(protocol)
    return _bytes(max(phases) + extra + 16 * (n + d + N))


def ablation_peak(d, n, p, n0, *, variants, steps, kf=DEFAULT_COPIES, kd=DEFAULT_COPIES, chunk=4096, batch=4000,
                  n_test=20000, degree2=False) -> float:
    """Bytes at the peak of one repetition of ``sim_ablation`` with ``variants`` first layers (the network
    included) and ``steps`` step matrices (D, no_f0, degree2)."""
    n0 = n0 or 0
    C, B = min(chunk, n0), _batch(batch, n_test)
    pd = p * d
    phases = [pd + n0 * d + (steps + 1) * pd + C * p * (2 + max(kf, kd, 5 if degree2 else 0)),
              (3 + steps + variants + 4) * pd + p * p,
              (1 + variants) * pd + n * d + (2 + kf) * n * p + 2 * min(n, p) ** 2,
              (2 + variants) * pd + B * d + (8 + kf) * B * p]
    return _bytes(max(phases) + 16 * (n + d + p + n0 + B))


def bulks_peak(d, p, count) -> float:
    """Bytes of ``sample_bulks``: ``count`` bulks (p x d and two d-vectors) and the temporaries of the last."""
    return _bytes((count + 1) * (p + 2) * d + 16 * (p + d))
