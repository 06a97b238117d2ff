r"""Numerical solvers of the sRF saddle point :math:`x=F(x)` (docs/theory/numerics.md §4).

* float64: MINPACK's hybrid Powell method (``scipy.optimize.root(method="hybr")``) on
  :math:`G(x)=F(x)-x`; the damped fixed point with guards (docs/theory/srf-theory.md §5) and the
  λ-continuation are the fallbacks, and the damped iteration is the algorithm of the reference
  notebook (``convergence="notebook"``);
* polish: chord Newton :math:`x\leftarrow x+(I-J)^{-1}(F(x)-x)` with a fixed float64 Jacobian, in float64
  or in mpmath at the working precision on rules computed in Arb.

Failures raise :class:`~onestep_theory.core.errors.ConvergenceError`; nothing returns an unconverged or
unphysical state.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy.optimize import root

from ...core.errors import ConvergenceError
from ...core.precision import ulps
from .saddle import HATS, ORDER, DomainError, fp_map, general_extras, is_valid

__all__ = ["iterate", "jacobian", "solve_float", "polish", "mp_solver_error", "solve_packed", "packed_jacobian",
           "general_budget", "GENERAL_SECONDS"]

#: about this many seconds of map applications may be spent on the float64 solve of a general loss
GENERAL_SECONDS = 120.0

_CAUGHT = (DomainError, ZeroDivisionError, FloatingPointError, ValueError, np.linalg.LinAlgError)


def iterate(x, S, o, *, damping, tol, max_iter, conv_keys=None):
    """Damped fixed point with guards (docs/theory/srf-theory.md §5): a domain violation reverts the step
    and raises the damping.  Returns ``(x, iterations, residual, status)``."""
    d = damping
    it = 0
    res = math.inf
    idx = [ORDER.index(kk) for kk in conv_keys] if conv_keys else range(7)
    for it in range(1, max_iter + 1):
        try:
            fx, _, Dsm, _ = fp_map(x, S, o)
            if not is_valid(fx):
                raise DomainError("invalid order parameters")
        except _CAUGHT:
            if d >= 0.98:
                return x, it, res, "domain_error"
            d = min(0.98, d + 0.5 * (1 - d))
            continue
        res = max(abs(fx[j] - x[j]) / max(1.0, abs(x[j])) for j in idx)
        if res < tol:
            return fx, it, res, "converged"
        x = tuple(d * a + (1 - d) * b for a, b in zip(x, fx))
        if Dsm < 0.1:
            d = max(d, 0.8)
    return x, it, res, "max_iter"


def general_budget(x, S, o) -> int:
    """Map applications allowed to the float64 solve of a general loss (docs/theory/srf-theory.md §13): about
    :data:`GENERAL_SECONDS` of them at the cost of one application measured here, between 600 and 3000 (the
    hinge grid of §13 needs at most about 530).  The answer does not depend on the budget, only whether one is
    found: an exhausted budget raises ConvergenceError."""
    import time
    cost = 0.0
    for _ in range(2):                   # the second application: the first builds the inner rules
        t0 = time.perf_counter()
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                fp_map(tuple(float(v) for v in x), S, o)
        except _CAUGHT:
            pass
        cost = max(time.perf_counter() - t0, 1e-4)
    return int(min(3000, max(600, GENERAL_SECONDS / cost)))


def _hybr(x, S, o, tol):
    """``scipy.optimize.root(method="hybr")`` on G(x) = F(x) - x; ``(x, evaluations)`` of a valid fixed
    point, or ``(None, evaluations)``.  A trial point outside the domain gets a large residual, so the
    trust region shrinks away from it."""
    def g(v):
        try:
            fx = fp_map(tuple(v), S, o)[0]
            out = np.array([float(a) for a in fx]) - v
            return out if np.all(np.isfinite(out)) else np.full(7, 1e6)
        except _CAUGHT:
            return np.full(7, 1e6)

    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sol = root(g, np.array([float(v) for v in x]), method="hybr", options={"xtol": tol, "maxfev": 2000})
    if not sol.success:
        return None, sol.nfev
    xs = tuple(float(v) for v in sol.x)
    try:
        fx = fp_map(xs, S, o)[0]
    except _CAUGHT:
        return None, sol.nfev
    scale = max(1.0, max(abs(v) for v in xs))
    if not is_valid(fx) or max(abs(float(a) - b) for a, b in zip(fx, xs)) > 1e-8 * scale:
        return None, sol.nfev
    return xs, sol.nfev


def jacobian(x, S, o, hstep=1e-7):
    """Forward-difference Jacobian of the map F (float64; 7 evaluations).  Its error (about 1e-7
    relative) only slows the chord-Newton polish to ~7 digits per step; the fixed point is unchanged."""
    x = [float(v) for v in x]
    f0 = [float(v) for v in fp_map(x, S, o)[0]]
    J = np.empty((7, 7))
    for j in range(7):
        e = hstep * max(1.0, abs(x[j]))
        xp = list(x)
        xp[j] += e
        fp = fp_map(xp, S, o)[0]
        J[:, j] = [(float(a) - b) / e for a, b in zip(fp, f0)]
    return J


def _continuation(x, S, o, tol, max_iter, damped_only):
    """Solve along a decreasing geometric λ grid from 10 down to ``o.lam`` with warm starts (each step by
    hybr, the damped iteration as fallback); returns (x, evaluations)."""
    total, la = 0, o.lam
    try:
        for lv in np.geomspace(10.0, float(la), 25)[:-1]:
            o.lam = float(lv)
            xs, n = (None, 0) if damped_only else _hybr(x, S, o, 1e-10)
            total += n
            if xs is None:
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    xs, n, _, _ = iterate(x, S, o, damping=0.9, tol=max(tol, 1e-8), max_iter=max_iter)
                total += n
            x = xs
    except ConvergenceError as exc:      # its message quotes the step's lam: say what that number is
        raise ConvergenceError(f"{str(exc).rsplit(' (iterations=', 1)[0]}; lam = {o.lam:.3g} there is a step of the "
                               f"lambda-continuation from 10 towards the lam = {float(la):g} given", exc.iterations,
                               exc.residual) from None
    finally:
        o.lam = la
    return x, total


def solve_float(S, o, x, *, damping, tol, max_iter, continuation, conv_keys, fallback, first):
    """float64 fixed point (module docstring): returns ``(x, evaluations, residual, status)``.

    Default (``conv_keys=None``): hybr; if it fails and ``fallback``, the damped iteration, then hybr from
    where it stopped, then (``continuation="auto"``, β > 1, λ < 1e-2, cold start) the λ-continuation.
    Measured evaluations of F on the level-0 rules (benchmarks, section [6]): case A 22 (damped: 72);
    small r 20 (damped: fails); β = 2, λ = 1e-3 about 280 (hybr fails, damped 160).  The notebook mode
    (``conv_keys``) is the damped iteration, after the continuation where it applies.
    """
    total = 0
    hard = first and continuation == "auto" and ((float(o.beta) > 1 and float(o.lam) < 1e-2)
                                                 or getattr(o, "loss", None) is not None)
    if conv_keys is not None:
        if hard:
            x, total = _continuation(x, S, o, tol, max_iter, damped_only=True)
            damping = max(damping, 0.9)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            xd, it, res, status = iterate(x, S, o, damping=damping, tol=tol, max_iter=max_iter, conv_keys=conv_keys)
        if status != "converged":
            raise ConvergenceError(f"sRF saddle point: {status} (alpha={o.alpha}, beta={o.beta}, lam={o.lam})",
                                   total + it, res)
        return tuple(xd), total + it, res, "converged (damped fixed point)"
    xs, total = _hybr(x, S, o, 1e-12)
    if xs is not None:
        return xs, total, 0.0, "converged (hybr)"
    res = math.inf
    if fallback:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            xd, it, res, status = iterate(x, S, o, damping=damping, tol=tol, max_iter=max_iter)
        total += it
        if status == "converged":
            return tuple(xd), total, res, "converged (damped fixed point)"
        xs, n = _hybr(xd, S, o, 1e-12)
        total += n
        if xs is not None:
            return xs, total, 0.0, "converged (damped, then hybr)"
        if hard:
            xc, n = _continuation(x, S, o, tol, max_iter, damped_only=False)
            xs, m = _hybr(xc, S, o, 1e-12)
            total += n + m
            if xs is not None:
                return xs, total, 0.0, "converged (lambda-continuation)"
    raise ConvergenceError(f"sRF saddle point: no valid fixed point found (alpha={o.alpha}, beta={o.beta}, "
                           f"lam={o.lam})", total, res)


def polish(x, S, o, Jinv, *, tol, max_steps):
    """Newton steps x <- x + (I - J)^-1 (F(x) - x) with a fixed float64 Jacobian (chord method).

    Runs in float64 or, for an mpf setup, in mpmath at the current precision.  Stops when a
    correction falls below ``tol`` (relative) or stops contracting (rounding floor).  Returns
    ``(x, steps, last, vals)``: the state, the map evaluations, the size of the last correction
    (componentwise: the solver's error estimate, docs/theory/numerics.md §5) and every reported
    quantity at ``x`` (from the same evaluation).
    """
    mp_mode = S.mp
    Jm = mpmath.matrix(Jinv.tolist()) if mp_mode else Jinv
    x = list(x)
    prev = math.inf
    for step in range(1, max_steps + 1):
        fx, hats, Dsm, eps = fp_map(x, S, o)
        g = [a - b for a, b in zip(fx, x)]
        if mp_mode:
            dxm = Jm * mpmath.matrix(g)
            dx = [dxm[i] for i in range(7)]
        else:
            dx = list(Jinv @ np.array([float(v) for v in g]))
        size = max(abs(float(d)) / max(1.0, abs(float(xv))) for d, xv in zip(dx, x))
        if size < tol or (step > 2 and size > 0.5 * prev) or step == max_steps:
            vals = dict(zip(ORDER, fx))
            vals.update(zip(HATS, hats))
            vals["D"], vals["test_error"] = Dsm, eps
            if o.loss is not None:
                vals.update(general_extras(x, S, o))
            return x, step, [abs(d) for d in dx], vals
        prev = size
        x = [a + d for a, d in zip(x, dx)]
    raise AssertionError("unreachable")


def mp_solver_error(vals, last, x) -> dict:
    """Solver error of an mpmath polish: the last correction (relative size, at least 100 units of
    the working precision's last digit) applied to every quantity (they depend smoothly on the state)."""
    rel = max(float(d) / max(1.0, abs(float(v))) for d, v in zip(last, x))
    rel = max(rel, ulps(2, float, why="a correction below the rounding of the map's sums (100 ulps) is not resolved"))
    out = {k: rel * max(1.0, abs(float(v))) for k, v in vals.items()}
    out.update({k: float(d) for k, d in zip(ORDER, last)})
    return out


def solve_packed(F, x0, tol, max_iter, what="K-group saddle point"):
    """Float64 fixed point of a map ``F`` on a packed state (the K-group saddle points of docs/theory/srf-theory.md
    §8, §8.1): hybrid Powell (scipy.optimize.root) on F(x) - x, then a damped iteration that backs off (more
    damping) whenever a trial state leaves the domain.  Returns (x, evaluations)."""
    fev = 0

    def Fc(x):
        nonlocal fev
        fev += 1
        return F(x)

    x = np.asarray(x0, dtype=float)
    try:
        sol = root(lambda y: Fc(y) - y, x, method="hybr", options={"xtol": tol})
        if np.all(np.isfinite(sol.x)) and np.all(np.isfinite(sol.fun)) and \
                np.max(np.abs(sol.fun) / np.maximum(1, np.abs(sol.x))) < 100 * tol:
            return sol.x, fev
    except DomainError:
        pass
    try:
        fx = Fc(x)
    except DomainError:
        raise ConvergenceError(f"{what}: the starting state is outside the domain (S not positive "
                               "definite)", fev) from None
    damp, res = 0.5, math.inf
    for _ in range(max_iter):
        res = float(np.max(np.abs(fx - x) / np.maximum(1, np.abs(x))))
        if res < tol:
            return fx, fev
        xn = damp * x + (1 - damp) * fx
        try:
            fn = Fc(xn)
        except DomainError:
            damp = (1 + damp) / 2          # back off towards the last valid state
            if damp > 0.999:
                break
            continue
        x, fx = xn, fn
    raise ConvergenceError(f"{what}: no convergence (hybrid Powell, then damped iteration: residual "
                           f"{res:.1e} after {fev} evaluations)", fev, res)


def packed_jacobian(F, x):
    """Forward-difference Jacobian of G = F - id at x (backward where a forward step leaves the domain)."""
    f0 = F(x)
    J = np.empty((len(x), len(x)))
    for i in range(len(x)):
        h = 1e-7 * max(1.0, abs(x[i]))
        e = np.zeros_like(x)
        e[i] = h
        try:
            J[:, i] = (F(x + e) - f0) / h
        except DomainError:
            J[:, i] = (f0 - F(x - e)) / h
    return J - np.eye(len(x))
