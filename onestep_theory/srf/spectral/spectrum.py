r"""Spectrum of the learned-feature covariance :math:`A=\Phi^\top\Phi/p` (docs/theory/srf-theory.md §7; [DPCKLL24]).

Bulk (189)–(190): the V-equations of Result 3.3 with :math:`\lambda\to-z`, :math:`z\in\mathbb C^+`,

.. math::
    \hat V_j=\tfrac\alpha\beta\mathbb E_\kappa\Big[\frac{\mu_j^2}{1+\mu_1^2V_1+\mu_\star^2V_2}\Big],\quad
    V_2(z)=\int\frac{d\mu_{\rm MP}}{-z+\hat V_1\varrho+\hat V_2},\quad g(z)\simeq V_2(z),\quad
    \rho_A(x)=\tfrac1\pi\,\mathrm{Im}\,V_2(x+i\eta),

solved with the closed-form Stieltjes transform of the MP measure at complex
:math:`t=(-z+\hat V_2)/\hat V_1` (root with :math:`\mathrm{sign\,Im}\,s=-\mathrm{sign\,Im}\,t`), damping and
continuation in x.  The mean spike (191): :math:`\lambda_{\max}(A)\simeq n\,\mathbb E_\kappa\mu_0^2`.
"""

from __future__ import annotations

import cmath
import dataclasses
import math

import mpmath
import numpy as np
import sympy as sp

from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import binary_exact, check_dps, check_real, float_in, to_exact, to_float, to_mpf
from ...core.limits import MAX_SRF_DPS
from ...core.precision import precision, ulps
from ...core.results import VouchedResult, digits_of, provenance
from ...hermite.activation import Activation
from .realaxis import EPS, moments
from .grid import grid_texts
from .realdensity import density_real

__all__ = ["stieltjes", "stieltjes_checked", "density", "density_real", "mean_spike", "Spectrum", "spectrum",
           "ridge_points"]


def _mp_stieltjes_complex(c, beta, t):
    """s = int dmu_MP/(rho + t) for complex t: root of c beta t s^2 + (t + c - c beta) s - 1 = 0 (docs/theory/srf-theory.md
    §4.5 closed form), on the branch sign Im s = -sign Im t with s ~ 1/t at large |t| (§7 'Numerics').
    Works for Python complex and for mpmath ``mpc``."""
    a, b = c * beta * t, t + c - c * beta
    sqrt = cmath.sqrt if isinstance(t, complex) else mpmath.sqrt
    disc = sqrt(b * b + 4 * a)
    roots = [(-b + disc) / (2 * a), (-b - disc) / (2 * a)]
    if t.imag != 0:
        good = [s for s in roots if s.imag * t.imag < 0]
        if len(good) == 1:
            return good[0]
    return min(roots, key=lambda s: abs(s * t - 1))      # s ~ 1/t branch


def _vmap(V, M, z, al, be, c):
    """One application of (189)–(190): (V1, V2) -> the MP integrals at the hats of (V1, V2)."""
    w, _, m1s, ms2 = M
    V1, V2 = V
    den = 1 + m1s * V1 + ms2 * V2
    hV1 = al / be * (w @ (m1s / den))
    hV2 = al / be * (w @ (ms2 / den))
    t = (-z + hV2) / hV1
    s = _mp_stieltjes_complex(c, be, t)
    return (1 - t * s) / hV1, s / hV1


def stieltjes(student, z, *, r, c, alpha, beta, level: int = 0, damping=0.5, tol=1e-13, max_iter=20000, init=None,
              dps: int | None = None, _with_error: bool = False):
    r""":math:`g(z)\simeq V_2(z)` for complex z (or :math:`z=-\lambda<0`): returns ``(V1, V2)``.

    float64: a damped fixed point, then two Newton steps (complex 2×2 Jacobian by central
    differences).  With ``dps``: chord-Newton in mpmath (``mpc``) on Arb-computed κ-rules, from the
    float64 root.  Raises :class:`~onestep_theory.errors.ConvergenceError` if the iteration fails.
    """
    M = moments(student, r, c, level)
    c_f, al, be = to_float(c, "c"), to_float(alpha, "alpha"), to_float(beta, "beta")
    zc = complex(z)
    V = init if init is not None else (complex(1.0, 0.1), complex(1.0, 0.1))
    V = (complex(V[0]), complex(V[1]))
    err, best, since = math.inf, math.inf, 0
    for it in range(1, max_iter + 1):
        n = _vmap(V, M, zc, al, be, c_f)
        err = max(abs(n[0] - V[0]), abs(n[1] - V[1])) / max(1.0, abs(V[1]))
        V = (damping * V[0] + (1 - damping) * n[0], damping * V[1] + (1 - damping) * n[1])
        if err < tol or not all(map(cmath.isfinite, V)):
            break
        best, since = (err, 0) if err < 0.9 * best else (best, since + 1)
        if since > 50 and best < 1e-8:
            # stalled at the rounding floor of the map (large |z|: the MP root loses ~|t| eps); the Newton
            # steps below finish, and their last step is the error estimate
            err = 0.0
            break
    if not err < tol:
        raise ConvergenceError(f"Stieltjes transform at z={z} did not converge", it, err)
    J = np.empty((2, 2), dtype=complex)
    for j in range(2):
        h = 1e-6 * max(1.0, abs(V[j]))
        vp, vm = list(V), list(V)
        vp[j] += h
        vm[j] -= h
        fp, fm = _vmap(vp, M, zc, al, be, c_f), _vmap(vm, M, zc, al, be, c_f)
        J[:, j] = [(fp[i] - fm[i]) / (2 * h) for i in range(2)]
    try:
        Jinv = np.linalg.inv(np.eye(2) - J)
    except np.linalg.LinAlgError:
        raise ConvergenceError(f"Stieltjes transform at z={z}: singular Jacobian of the fixed point", it, err) from None
    if dps is None:
        for _ in range(2):
            n = _vmap(V, M, zc, al, be, c_f)
            dv = Jinv @ np.array([n[0] - V[0], n[1] - V[1]])
            V = (V[0] + dv[0], V[1] + dv[1])
        step = float(np.max(np.abs(dv)))
        return (V, step) if _with_error else V
    with precision(dps):
        Mm = moments(student, r, c, level, mp=True)
        zm = mpmath.mpc(z) if not isinstance(z, str) else mpmath.mpc(mpmath.mpf(z))
        al_m, be_m, c_m = (v if isinstance(v, mpmath.mpf) else to_mpf(to_exact(v)) for v in (alpha, beta, c))
        tol = ulps(3, why="converged: 1000 ulps of the working precision")
        Jm = mpmath.matrix(Jinv.tolist())
        V = [mpmath.mpc(v) for v in V]
        step = mpmath.inf
        for _ in range(40):
            n = _vmap(V, Mm, zm, al_m, be_m, c_m)
            dv = Jm * mpmath.matrix([n[0] - V[0], n[1] - V[1]])
            V = [V[0] + dv[0], V[1] + dv[1]]
            new = max(abs(dv[0]), abs(dv[1]))
            if new < tol or new > step / 2:
                step = new
                break
            step = new
        res = (tuple(V), float(step))
    return res if _with_error else res[0]


def stieltjes_checked(student, z, *, r, c, alpha, beta, dps=None, init=None):
    """``(V1, V2, err1, err2)``: :func:`stieltjes` at two κ-rule levels; errors = change + last Newton step."""
    out = []
    for level in (0, 1):
        (V, step) = stieltjes(student, z, r=r, c=c, alpha=alpha, beta=beta, level=level, dps=dps, init=init,
                              _with_error=True)
        out.append((V, step))
    (V0, _), (V1, step) = out
    with precision(dps or 15):
        rnd = 1e-14 if dps is None else ulps(2, float, why="a sum over a κ-rule: 100 ulps")
    errs = [float(abs(a - b)) + float(step) + rnd * max(1.0, float(abs(a))) for a, b in zip(V1, V0)]
    return V1[0], V1[1], errs[0], errs[1]


def density(student, xs, *, r, c, alpha, beta, eta=None, nodes=None):
    r"""Bulk density :math:`\frac1\pi\mathrm{Im}V_2(x+i\eta)` on a grid, continuation in x with warm starts."""
    xs = np.asarray(xs, dtype=float)
    if eta is None:
        eta = 1e-3 * max(float(np.max(np.abs(xs))), 1e-3)
    out = np.empty_like(xs)
    init = None
    for i, xv in enumerate(xs):
        V1, V2 = stieltjes(student, complex(xv, eta), r=r, c=c, alpha=alpha, beta=beta, init=init)
        if V2.imag < -1e-10:
            raise ConvergenceError(f"Im V2 < 0 at x={xv}: wrong branch", 0, float(-V2.imag))
        out[i] = V2.imag / math.pi
        init = (V1, V2)
    return out


def mean_spike(student, *, r, c, alpha, d, nodes=None) -> float:
    r""":math:`n\,\mathbb E_\kappa\mu_0(\kappa)^2` with :math:`n=\alpha d` (191)."""
    w, mu0, _, _ = moments(student, r, c)
    return to_float(alpha, "alpha") * d * float(w @ (mu0 * mu0))


@dataclasses.dataclass
class Spectrum(VouchedResult):
    """Bulk density on the real axis and the edges of its support, :math:`V_2(-\\lambda)`, the atom at 0 and the
    mean spike, each with an error estimate (``errors``; docs/theory/srf-theory.md §7.1)."""

    ERROR_KEYS = {"stieltjes_at_minus_lambda": "stieltjes"}

    x: list
    density: list
    edges: list
    stieltjes_at_minus_lambda: dict
    atom_at_zero: object
    mean_spike_per_d: object
    errors: dict
    dps: int | None
    provenance: dict


def ridge_points(lams) -> list:
    """``[(key, exact lambda)]`` of the ridge values at which :math:`V_2(-\\lambda)` is reported: the key is the string
    as typed (or ``%g`` of a number); each λ must be a finite real number > 0."""
    out = []
    for lv in lams:
        lam_x = to_exact(lv, "lam")
        if not lam_x > 0:
            raise InvalidParameterError("lam", lv, "finite real numbers > 0")
        out.append((str(lv) if isinstance(lv, str) else f"{float(lam_x):g}", lam_x))
    return out


#: Largest density grid (bounded work).
MAX_GRID = 20000


def spectrum(student, *, r, c, alpha, beta, xs=None, lams=(0.1, 0.5, 1.0, 3.0), eta=None, nodes=None,
             dps: int | None = None) -> Spectrum:
    """Bulk density on a grid and the edges of its support (on the real axis, :func:`density_real`),
    :math:`V_2(\\lambda)` at :math:`z=-\\lambda`, the atom and the mean spike per d, with error estimates (two
    κ-rule levels and the last Newton step); ``dps`` polishes every value in mpmath and certifies it (or raises
    :class:`~onestep_theory.errors.ConvergenceError`).  The default grid covers (0, 1.05 × top edge]; ``eta``
    is accepted for compatibility and ignored (docs/theory/srf-theory.md §7.1)."""
    al, be = float_in(alpha, "alpha"), float_in(beta, "beta")
    r = check_real(r, "r", 0, None)
    c = check_real(c, "c", 0, None)
    if not float(c) > 0:
        raise InvalidParameterError("c", c, "a real number > 0")

    dps = check_dps(dps, MAX_SRF_DPS)
    exact_xs = None
    if xs is not None:
        exact_xs = list(np.ravel(np.asarray(xs, dtype=object)))
        if len(exact_xs) > MAX_GRID or not all(isinstance(v, str) or math.isfinite(float(v)) for v in exact_xs):
            raise InvalidParameterError("z", f"{len(exact_xs)} points", f"at most {MAX_GRID} finite grid points")
        exact_xs = [v if isinstance(v, str) else binary_exact(v) for v in exact_xs]
        xs = np.array([float(to_exact(v, "z")) if isinstance(v, str) else float(v) for v in exact_xs], dtype=float)
        if xs.size > MAX_GRID or not np.all(np.isfinite(xs)):
            raise InvalidParameterError("z", f"{xs.size} points", f"at most {MAX_GRID} finite grid points")
    if xs is None:
        top = density_real(student, [], r=r, c=c, alpha=alpha, beta=beta)[2][-1]
        n = 200 if dps is None else 40
        xs = 1.05 * top * np.arange(1, n + 1) / n
        if dps is not None:     # each x is the decimal printed (repr), read exactly: not the binary float beside it
            exact_xs = grid_texts(xs)
    dens, derr, edges, eerr = density_real(student, xs if exact_xs is None else exact_xs, r=r, c=c, alpha=alpha,
                                           beta=beta, dps=dps)
    st, sterr = {}, {}
    for key, lam_x in ridge_points(lams):
        with precision(dps or 15):          # exact lambda becomes an mpf here, at the working precision
            z = -float(lam_x) if dps is None else -to_mpf(lam_x)
        _, V2, _, e2 = stieltjes_checked(student, z, r=r, c=c, alpha=alpha, beta=beta, dps=dps)
        st[key] = V2.real
        sterr[key] = e2
    sp_vals = []
    for level in (0, 1):
        if dps is None:
            w, mu0, _, _ = moments(student, r, c, level)
            sp_vals.append(al * float(w @ (mu0 * mu0)))
        else:
            with precision(dps):
                w, mu0, _, _ = moments(student, r, c, level, mp=True)
                sp_vals.append(to_mpf(to_exact(alpha)) * (w @ (mu0 * mu0)))
    with precision(dps or 15):
        rnd = 1e-14 if dps is None else ulps(2, float, why="a sum over a κ-rule: 100 ulps")
    sp_err = float(abs(sp_vals[1] - sp_vals[0])) + rnd
    with precision(dps or 15):        # the atom (1 - alpha/beta)_+ is exact: its error is its rounding
        # a student without a nonlinear part (affine in x) has rank(Phi) <= d (+ O(1)): the atom is
        # (1 - min(alpha, 1)/beta)_+, not (1 - alpha/beta)_+ (found by review: x at alpha = 2, beta = 3 printed 1/3)
        expr = Activation.from_any(student, "student").expr
        xsym = next(iter(expr.free_symbols), None)
        affine = xsym is None or (expr.is_polynomial(xsym) and sp.degree(expr, xsym) <= 1)
        rank = sp.Min(to_exact(alpha, "alpha"), 1) if affine else to_exact(alpha, "alpha")
        atom = sp.Max(0, 1 - rank / to_exact(beta, "beta"))
        atom = float(atom) if dps is None else to_mpf(atom)
        atom_err = float(abs(atom)) * (EPS if dps is None else ulps(1, float, why="an exact value rounded once"))
    errors = {"density": derr, "edges": eerr, "stieltjes": sterr, "mean_spike_per_d": sp_err,
              "atom_at_zero": atom_err}
    if dps is not None:
        # the mean spike is 0 for odd sigma at r = 0: absolute criterion, its error against alpha E[mu0^2 + c mu1^2
        # + mu*^2] (the scale of the features' second moment)
        w, mu0, m1s, ms2 = moments(student, r, c, 1)
        spread = al * float(w @ (mu0 * mu0 + float(c) * m1s + ms2))
        worst = min([digits_of(v, e) for v, e in zip(st.values(), sterr.values())]
                    + [digits_of(max(abs(sp_vals[1]), spread), sp_err)])
        if worst < dps:
            raise ConvergenceError(f"spectrum: {dps} digits requested, only {worst} reached", 0, sp_err)
    return Spectrum(x=list(map(float, xs)), density=dens, edges=edges, stieltjes_at_minus_lambda=st,
                    atom_at_zero=atom, mean_spike_per_d=sp_vals[1], errors=errors,
                    dps=dps, provenance=provenance(dps=dps, method="V2(-lambda): damped fixed point + Newton with the "
                                                   "complex MP Stieltjes transform; density: Newton on the real axis "
                                                   "(Im z = 0+) from an eta-homotopy, edges: folds (F, det J) = 0; "
                                                   "errors from a refined kappa rule and the last Newton step",
                                                   references=["[DPCKLL24]", "[CPDKLZL24] App. F (189)-(191)",
                                                               "docs/theory/srf-theory.md §7.1",
                                                               "docs/theory/numerics.md §5"]))
