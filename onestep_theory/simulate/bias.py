r"""Direct sRF simulation with a trainable common first-layer bias (docs/theory/srf-theory.md §4.9, (130)–(132)).

Features :math:`\sigma(XW^\top+b)` of the sRF weights of §10.1; the readout and b are trained jointly on the
ridge objective (4): for each b the readout is the ridge solution, and b minimises the profiled objective
:math:`\frac1n\min_a[\|y-\Phi_ba/\sqrt p\|^2+\lambda\|a\|^2]` over :math:`[-b_{\max},b_{\max}]` (13-point grid,
then bounded Brent), the search :func:`onestep_theory.srf.optimal.bias.trained_bias` makes on the theory side.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..core.results import provenance
from ..core.search import grid_minimize
from .memory import srf_peak
from .base import Fn, SimulationResult, check_reps, collect, report_progress, sizes_srf, spawn, test_mse
from .srf import ridge_sum, srf_weights

__all__ = ["sim_trained_bias"]


def sim_trained_bias(student, teacher, d, *, r, c, gamma, alpha, beta, lam=0.1, bias_max=3.0, n_test=20000, seed=0,
                     reps=1, batch=4000, progress=None, force=False) -> SimulationResult:
    """Per repetition: the trained bias ``bias``, the training objective per sample ``objective`` and the test
    error ``test_error`` (5) at it (docs/theory/srf-theory.md §4.9)."""
    s, t = Fn(student, "student"), Fn(teacher, "teacher")
    d, n, p, _ = sizes_srf(d, alpha=alpha, beta=beta, force=force,
                           memory=lambda *z: srf_peak("bias", *z, kf=s.kf, batch=batch, n_test=n_test))
    check_reps(reps)
    lam, bm = float(lam), float(bias_max)
    t0, rows = time.perf_counter(), []
    for k, (rw, rtr, rte) in enumerate(spawn(seed, reps)):
        Wt, v, _, theta = srf_weights(rw, d, p, float(r), float(c), float(gamma))
        W = Wt + float(r) * v[None, :]
        X = rtr.standard_normal((n, d))
        y = t.f(X @ theta)
        Z = X @ W.T
        del X

        def objective(b, Z=Z):
            return ridge_sum(s.f(Z + b), y, p).objective(lam) / n
        b, _ = grid_minimize(objective, -bm, bm, 13, 1e-5)
        a = ridge_sum(s.f(Z + b), y, p).coef(lam)
        feats = (lambda Xt, b=b, W=W: s.f(Xt @ W.T + b) / math.sqrt(p))
        rows.append({"bias": b, "objective": objective(b),
                     "test_error": test_mse(feats, d, a, n_test, batch, rte, lambda Xt, th=theta: t.f(Xt @ th))})
        del Z
        report_progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="srf-trained-bias",
        params=dict(student=s.act.name, teacher=t.act.name, d=d, n=n, p=p, alpha=n / d, beta=p / d, r=float(r),
                    c=float(c), gamma=float(gamma), lam=lam, bias_max=bm, n_test=n_test),
        stats=collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="ridge profiled over b (grid + bounded Brent)",
                              references=["docs/theory/srf-theory.md §4.9", "docs/theory/srf-theory.md §10.1"]))
