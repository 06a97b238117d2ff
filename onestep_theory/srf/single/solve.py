r"""Solve the saddle-point equations of Result 3.3 [CPDKLZL24] with an honest error estimate.

:func:`srf_solve` drives the pieces: (r, c, γ) from Result 3.1 (:mod:`~onestep_theory.srf.features.mapping`), the κ-rule
(:mod:`~onestep_theory.srf.features.kappa`), the map (:mod:`~onestep_theory.srf.single.saddle`) and the solvers
(:mod:`~onestep_theory.srf.single.solvers`); the whole solve is repeated on refined rules until the change meets
the target (docs/theory/numerics.md §5; the driver :func:`~onestep_theory.core.precision.refine`).  In four steps:
the inputs checked (``_problem``), the float64 fixed point (``_solve_float``), the polish on refined rules,
in float64 or at the working precision (``_refine``), and the result with its errors (``_solution``).

References
----------
[CPDKLZL24] H. Cui et al., arXiv:2402.04980, Result 3.3, eqs. (17)–(25), App. B–C;
docs/theory/srf-theory.md §4–5.
"""

from __future__ import annotations

import dataclasses
import time

import mpmath
import numpy as np

from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import check_dps, float_in, to_exact, to_mpf
from ...core.limits import MAX_SRF_DPS
from ...core.precision import EPS64, Target, asked_digits, precision, refine, ulps, working_digits
from ...core.results import digits_of, provenance
from ...hermite.activation import Activation
from ...hermite.expressions import breakpoints
from ..features.kappa import SRFSetup, srf_setup
from ..features.mapping import resolve_rcg, row_norm_params
from ..loss.losscheck import check_teacher
from .saddle import HATS, ORDER, DomainError, MapOptions, all_values
from .solution import SRFOptions, SRFSolution, combine_errors, rounding_floor
from .solvers import general_budget, jacobian, mp_solver_error, polish, solve_float
from .trainedbulk import trained_law
from .zeroreadout import zero_readout

__all__ = ["srf_solve", "MIN_TOL"]

RCG = ("r", "c", "gamma")

#: Smallest relative error tolerance of the float64 path; below it ask for ``dps``.
MIN_TOL = 1e-13
#: Seconds a general-loss solve may take (docs/theory/srf-theory.md §13); then ConvergenceError (exit 3)
GENERAL_LIMIT = 900.0


def srf_solve(student, teacher, *, alpha, beta, lam, noise_var=0, r=None, c=None, gamma=None, alpha0=None, eta=None,
              tol: float | None = None, dps: int | None = None, options: SRFOptions | None = None, init=None,
              setup: SRFSetup | None = None, rcg_errors: dict | None = None, **option_overrides) -> SRFSolution:
    r"""Solve Result 3.3 of [CPDKLZL24] and return the test error (25) with every order parameter and an
    honest error estimate (docs/theory/srf-theory.md §4, docs/theory/numerics.md §§3–5).

    Parameters
    ----------
    student, teacher : expression, name or Activation
    alpha, beta, lam : numbers
        :math:`\alpha=n/d>0`, :math:`\beta=p/d>0`, ridge :math:`\lambda>0` (sum loss, (4)).
    noise_var : number
        Label noise :math:`\Delta\ge0` (enters :math:`B(\kappa)` and, through the mapping, :math:`\mu_2^\star`).
    r, c, gamma : numbers, optional
        sRF parameters; otherwise computed from ``alpha0`` and ``eta`` by Result 3.1
        (:func:`~onestep_theory.srf.features.mapping.resolve_rcg`) at the working precision.
    tol : float
        Relative error wanted in the test error (float64 path; default 1e-10, at least 1e-13).  The
        discretisation is refined until the estimated error is below it.
    dps : int, optional
        Digits wanted: the float64 solution is polished by Newton in mpmath on rules computed in Arb,
        refined until ``dps`` significant digits of the test error are vouched for; otherwise
        :class:`~onestep_theory.core.errors.ConvergenceError` says how many were reached.
    options : SRFOptions, optional
        Model variants and numerical choices (see :class:`SRFOptions`); single fields may also be given
        as keywords (``spike_channel=False``), which override ``options``.
    init : 7-tuple, optional
        Warm start (the state of a neighbouring solution, :meth:`SRFSolution.state`).
    setup : SRFSetup, optional
        Precomputed κ-rule (:func:`~onestep_theory.srf.features.kappa.srf_setup`) for the first level.
    rcg_errors : dict, optional
        Absolute errors ``{"r", "c", "gamma"}`` of a given (r, c, γ) that were computed (e.g. a readout group's
        :math:`(r\varsigma, 1+\varsigma^2(c-1))` from Result 3.1): grown into every error as Result 3.1's own are.

    Examples
    --------
    >>> sol = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")   # docs/theory/srf-theory.md §11.4
    >>> round(float(sol.test_error), 8), sol.digits >= 10
    (0.04160398, True)
    """
    p = _problem(student, teacher, alpha, beta, lam, noise_var, r, c, gamma, alpha0, eta, tol, dps,
                 SRFOptions.build(options, option_overrides), init, setup, rcg_errors)
    zero = zero_readout(p, student, teacher, lambda lk: srf_solve(        # a = 0 exactly (docs/theory/srf-theory.md §13)
        student, teacher, alpha=alpha, beta=beta, lam=lk, r=r, c=c, gamma=gamma, alpha0=alpha0, eta=eta,
        options=dataclasses.replace(p.opt, loss=None)))
    if zero is not None:
        return zero
    fl = _solve_float(p)
    if p.dps is None:
        out = _refine(p, fl, p.o, mp=False)
        method = f"{fl.status} + chord Newton (float64), error from refined discretisation"
    else:
        with precision(p.dps):           # the boundary: the polish and its rules at dps + guard digits
            out = _refine(p, fl, _mp_options(p), mp=True)
        method = (f"{fl.status} (float64), chord-Newton polish in mpmath on Arb rules, error from refined "
                  "discretisation")
    return _solution(p, fl, out, method)


@dataclasses.dataclass
class _Problem:
    """The checked inputs of one solve: the activations and the typed numbers, the options, the target (relative),
    (r, c, γ) with the mapping's errors, the float64 map options ``o``, the row-norm heterogeneity ``rn``
    ``(k, s2, errors)`` or None, the warm start ``x0`` and the κ-rule ``setup`` given."""

    student: object
    teacher: object
    inputs: dict
    opt: SRFOptions
    dps: int | None
    target: float
    rcg: tuple
    mapping: object
    o: MapOptions
    rn: tuple | None
    x0: tuple
    cold: bool
    setup: SRFSetup | None
    rcg_err: dict | None = None      # the absolute errors of (r, c, γ): Result 3.1's, or given with them


def _problem(student, teacher, alpha, beta, lam, noise_var, r, c, gamma, alpha0, eta, tol, dps, opt, init,
             setup, rcg_errors=None) -> _Problem:
    """Every input checked (InvalidParameterError naming it) before any work, (r, c, γ) resolved: the validation
    step of the boundary :func:`srf_solve` (``dps``, the digits asked, is checked here and kept in the problem)."""
    al, be, la = (float_in(v, n) for v, n in ((alpha, "alpha"), (beta, "beta"), (lam, "lam")))
    nv = float_in(noise_var, "noise_var", strict=False)
    if tol is not None:
        tol = float_in(tol, "tol")
        if not MIN_TOL <= tol <= 0.1:
            raise InvalidParameterError("tol", tol, f"a real number in [{MIN_TOL:g}, 0.1] (use dps for more digits)")
    dps = check_dps(dps, MAX_SRF_DPS)
    if opt.loss is not None:             # before any work: labels the loss cannot take are refused at once
        check_teacher(opt.loss, Activation.from_any(teacher, "teacher"))
    rr, cc, gg, mapping = resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, opt.c_formula,
                                      opt.strict_odd, dps)
    if mapping is not None and rcg_errors is not None:
        raise InvalidParameterError("rcg_errors", rcg_errors, "None when (r, c, gamma) come from alpha0 and eta "
                                    "(Result 3.1 gives their errors)")
    rcg_err = {k: mapping.errors[k] for k in RCG} if mapping is not None else _rcg_errors(rcg_errors)
    o = MapOptions(al, be, la, nv, opt.spike_channel, opt.spectrum,
                   tuple(np.asarray(a, dtype=float) for a in opt.empirical) if opt.empirical is not None else None,
                   opt.cross_term, opt.mp_method)
    if opt.loss is not None:
        if dps is not None:
            raise InvalidParameterError("dps", dps, f"None with the {opt.loss.name} loss (the general channel is "
                                        "float64)")
        _general_loss(o, opt, teacher, noise_var)
    rn = None
    if opt.row_norms is not False:
        with precision(dps or 15):       # the row norms' digits: those asked (15 for the float64 path)
            rn = _row_norms(opt, mapping, student, teacher, alpha0, eta, noise_var, rr)
    if rn is not None:
        o.row_norms = (float(rn[0]), float(rn[1]))
    if opt.spectrum == "trained":        # docs/theory/trained-bulk.md §5
        o.trained = trained_law(teacher, mapping, nv, alpha0)
    return _Problem(student, teacher, dict(alpha=alpha, beta=beta, lam=lam, noise_var=noise_var), opt, dps,
                    Target.of(dps, tol or 1e-10).rel, (rr, cc, gg), mapping, o, rn,
                    tuple(float(v) for v in init) if init is not None else (0.0, 0.0, 0.0, 0.1, 0.1, 1.0, 1.0),
                    init is None, setup, rcg_err)


def _general_loss(o, opt, teacher, noise_var):
    """The general channel of docs/theory/srf-theory.md §4.9, §13 (float64, noiseless, default numerics)."""
    if o.noise_var != 0:
        raise InvalidParameterError("noise_var", noise_var, f"0 with the {opt.loss.name} loss (labels are the "
                                    "teacher's values)")
    if opt.kappa_nodes or opt.inner_nodes or opt.convergence == "notebook":
        raise InvalidParameterError("loss", opt.loss.name, "the default numerics (no notebook options)")
    t = Activation.from_any(teacher, "teacher")
    o.loss, o.teacher_fn = opt.loss, t.numpy()
    o.teacher_kinks = tuple(float(b) for b in breakpoints(t.expr))


def _row_norms(opt, mapping, student, teacher, alpha0, eta, noise_var, rr):
    """``(k, s2, errors)`` of the row-norm correction (docs/theory/srf-theory.md §4.11) to the digits asked at the
    ambient boundary."""
    bad = ("the general loss" if opt.loss is not None else
           f"spectrum={opt.spectrum!r}" if opt.spectrum == "empirical" else
           "the notebook's fixed rules" if (opt.kappa_nodes or opt.inner_nodes) else None)
    if bad:
        raise InvalidParameterError("row_norms", opt.row_norms, f"the square loss, the F3 or trained prior, the "
                                    f"default rules (not {bad})")
    if opt.row_norms is True:
        if mapping is None:
            raise InvalidParameterError("row_norms", True, "alpha0 and eta (the correction is a property of the "
                                        "network's step), or an explicit (k, s2)")
        return row_norm_params(student, teacher, alpha0, eta, noise_var, rr, asked_digits())
    # an explicit heterogeneity (k, s2): exact, no error of its own
    return (*(_mpf_exact(v, n) for v, n in zip(opt.row_norms, ("row_norms k", "row_norms s2"))),
            {"k": 0.0, "s2": 0.0})


def _level_setup(p: _Problem, level, mp=False):
    """The κ-rule of ``level``: float64, or (``mp``) in Arb at the ambient working precision; the ``setup`` given
    is used at its own level in float64."""
    opt, (rr, cc, gg) = p.opt, p.rcg
    if (p.setup is not None and level == p.setup.level and not mp and not p.setup.mp
            and (opt.row_norms is False or p.setup.dmu0 is not None)):
        return p.setup
    if opt.kappa_nodes or opt.inner_nodes:
        f = 2 ** level       # the notebook's fixed rules; a kinked function's inner panels at float64's 16 digits
        return srf_setup(p.student, p.teacher, rr, cc, gg, digits=16, mp=mp, kappa_nodes=(opt.kappa_nodes or 101) * f,
                         inner_nodes=(opt.inner_nodes or 61) * f)
    return srf_setup(p.student, p.teacher, rr, cc, gg, level=level, mp=mp, curvature=opt.row_norms is not False)


@dataclasses.dataclass
class _Float:
    """The float64 fixed point on the first rule ``S``: state, map evaluations, status, the chord inverse
    :math:`(I-J)^{-1}` and its norm ``cond``."""

    S: object
    x: tuple
    iterations: int
    status: str
    Jinv: np.ndarray
    cond: float


def _solve_float(p: _Problem) -> _Float:
    """The float64 fixed point on the first rule (level 0, or the ``setup`` given), cold or warm-started
    (docs/theory/numerics.md §4)."""
    o, opt = p.o, p.opt
    S = _level_setup(p, p.setup.level if p.setup is not None else 0)
    if o.loss is not None:
        o.deadline = time.monotonic() + GENERAL_LIMIT
        o.eval_budget = general_budget(p.x0, S, o)
    try:
        x, it, _, status = solve_float(
            S, o, p.x0, damping=opt.damping, tol=1e-4 if opt.convergence == "notebook" else 1e-12,
            max_iter=opt.max_iter, continuation=opt.continuation, fallback=opt.fallback, first=p.cold,
            conv_keys=("q1", "m", "q2", "theta", "psi") if opt.convergence == "notebook" else None)
    finally:
        o.eval_budget = None
    Jinv = _chord_inverse(x, S, o, it)
    return _Float(S, x, it, status, Jinv, max(1.0, float(np.linalg.norm(Jinv, np.inf))))


def _mp_options(p: _Problem) -> MapOptions:
    """The map options at the working precision: the typed numbers exact where they are."""
    o = dataclasses.replace(p.o)
    o.alpha, o.beta, o.lam, o.noise_var = (_mpf_exact(p.inputs[n], n) for n in ("alpha", "beta", "lam", "noise_var"))
    if p.o.empirical is not None:
        o.empirical = tuple(np.array([mpmath.mpf(float(t)) for t in arr], dtype=object) for arr in p.o.empirical)
    if p.rn is not None:
        o.row_norms = (p.rn[0], p.rn[1])
    return o


def _polish_on(Sl, xl, o, Jinv, tol, max_steps, notebook):
    """Chord Newton on the rule ``Sl`` from ``xl``: ``(x, values, solver errors, map evaluations)``.  The solver's
    error is the change of every quantity under the last (not applied) correction, to first order J-propagated
    (for the order parameters: the correction itself).  ``notebook``: the early-stopped iterate is kept; its
    distance from the fixed point (polished on the same rules) is part of its error."""
    xp, steps, last, vals = polish(xl, Sl, o, Jinv, tol=tol, max_steps=max_steps)
    if Sl.mp:
        serr = mp_solver_error(vals, last, xp)
    else:
        shifted = all_values([a + d for a, d in zip(xp, last)], Sl, o)
        serr = {k: abs(vals[k] - shifted[k]) for k in vals}
    if not notebook:
        return xp, vals, serr, steps
    vals0 = all_values(xl, Sl, o)
    return xl, vals0, {k: abs(vals0[k] - vals[k]) + serr[k] for k in vals0}, steps


def _refine(p: _Problem, fl: _Float, o, mp: bool):
    """The solve on successive rule levels (:func:`~onestep_theory.core.precision.refine`) until the test error's change
    meets the target: float64 from the first rule, or (``mp``) from level 0 at the ambient working precision.
    Each level: ``(level, rule, state, values, solver errors, evaluations)``."""
    wd = working_digits() if mp else None
    unit = EPS64 if wd is None else 10.0 ** -wd
    # mpmath: Newton stops when its step is 3 digits above the working precision's unit (docs/theory/numerics.md §5)
    tol, steps = (1e-15, 8) if wd is None else (ulps(3, why="the rounding of the map's sums over the κ nodes"), 40)
    x0 = fl.x if wd is None else [mpmath.mpf(v) for v in fl.x]
    notebook = p.opt.convergence == "notebook"

    def step(lev, prev):
        Sl = fl.S if (not mp and lev == fl.S.level) else _level_setup(p, lev, mp)
        return (lev, Sl, *_polish_on(Sl, x0 if prev is None else prev[2], o, fl.Jinv, tol, steps, notebook))

    def estimate(coarse, fine):
        err = combine_errors(coarse[3], fine[3], fine[4], rounding_floor(unit, fl.cond, len(fine[1].kappa),
                                                                         fine[1].mp))
        return err, [(fine[3]["test_error"], err["test_error"], Target(p.target))]

    return refine(step, estimate, start=0 if mp else fl.S.level, what="sRF saddle point")


def _solution(p: _Problem, fl: _Float, out, method) -> SRFSolution:
    """The result: the errors of the last level, grown by the mapping's and the row norms' (amplified by the
    condition of the fixed point); ConvergenceError when the target is not met."""
    lev, S, x, vals, _, _ = out.last
    errors, dps, opt, rn, (rr, cc, gg) = out.estimate, p.dps, p.opt, p.rn, p.rcg
    if p.rcg_err is not None:          # Result 3.1's errors (or those given with r, c, γ)
        rel = max(p.rcg_err[k] / max(abs(float(v)), 1.0) for k, v in zip(RCG, p.rcg))
        errors = _grown(errors, vals, fl.cond, rel, dict(p.rcg_err))
    if rn is not None:
        errors = _grown(errors, vals, fl.cond, max(rn[2]["k"] / max(abs(float(rn[0])), 1.0),
                                                   rn[2]["s2"] / max(abs(float(rn[1])), 1.0)),
                        {"row_norm_k": rn[2]["k"], "row_norm_s2": rn[2]["s2"]})
    digits = digits_of(vals["test_error"], errors["test_error"])
    if not Target(p.target).met(vals["test_error"], errors["test_error"]):
        want = f"{dps} digits" if dps is not None else f"a relative error of {p.target:g}"
        raise ConvergenceError(f"sRF test error: {want} requested, only {digits} digits reached (estimated error "
                               f"{errors['test_error']:.1e} after {lev} refinements)",
                               fl.iterations + sum(lv[5] for lv in out.levels), errors["test_error"])
    res = max(abs(float(vals[k]) - float(x[i])) / max(1.0, abs(float(x[i]))) for i, k in enumerate(ORDER))
    return SRFSolution(
        test_error=vals["test_error"], abs_error=errors["test_error"], digits=digits,
        order={k: vals[k] for k in ORDER}, hats={k: vals[k] for k in HATS}, errors=errors, D=vals["D"],
        r=rr, c=cc, gamma=gg, **p.inputs, iterations=fl.iterations, newton_steps=sum(lv[5] for lv in out.levels),
        residual=res, status=fl.status,
        options=dict(c_formula=opt.c_formula, spike_channel=opt.spike_channel, spectrum=opt.spectrum,
                     cross_term=opt.cross_term, kappa_nodes=S.nodes[0], inner=S.nodes[1], level=lev,
                     convergence=opt.convergence, damping=opt.damping,
                     row_norms=opt.row_norms if isinstance(opt.row_norms, bool) else [str(v) for v in opt.row_norms]),
        dps=dps, extra=({k: vals[k] for k in ("class_error", "train_loss")} | {"loss": opt.loss.name}
                        if opt.loss is not None else {}) | ({"row_norm_k": rn[0], "row_norm_s2": rn[1]}
                                                            if rn is not None else {}),
        provenance=provenance(dps=dps, method=method, references=[
            "[CPDKLZL24] Result 3.3, eqs. (17)-(25)", "docs/theory/srf-theory.md §4", "docs/theory/numerics.md §5"]
            + (["docs/theory/srf-theory.md §4.11 (row-norm correction)"] if rn is not None else [])))


def _rcg_errors(given) -> dict | None:
    """``rcg_errors`` of :func:`srf_solve` checked: None, or finite errors >= 0 of all of r, c, γ (as floats)."""
    if given is None:
        return None
    try:
        out = {k: float(given[k]) for k in RCG}
    except (TypeError, KeyError, ValueError):
        out = None
    if out is None or set(given) != set(RCG) or not all(0 <= e < float("inf") for e in out.values()):
        raise InvalidParameterError("rcg_errors", given, "a dict of finite errors >= 0 for r, c and gamma")
    return out


def _grown(errors, vals, cond, rel, own) -> dict:
    """``errors`` grown by inputs that carry their own (tiny) relative error ``rel`` — (r, c, γ) of Result 3.1, the
    row norms —, amplified by the condition of the fixed point; with those inputs' errors ``own``."""
    return {k: e + 10.0 * cond * rel * max(1.0, abs(float(vals[k]))) if k in vals else e
            for k, e in errors.items()} | own


def _chord_inverse(x, S, o, evaluations):
    r""":math:`(I-J)^{-1}` of the chord-Newton polish at the float64 fixed point, guarded as in
    :func:`~onestep_theory.srf.grouped.kgroup.solve_kgroup`: a Jacobian that cannot be formed (a difference step leaves
    the map's domain), is not finite, or gives a singular or numerically singular :math:`I-J` (condition above
    :math:`1/\epsilon`: no digit of a Newton correction would be right) raises ConvergenceError
    (docs/theory/srf-theory.md §5)."""
    what = "sRF saddle point: the fixed point is degenerate"
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            A = np.eye(7) - jacobian(x, S, o)
    except (DomainError, ZeroDivisionError, FloatingPointError, ValueError, OverflowError):
        raise ConvergenceError(f"{what} (its Jacobian leaves the map's domain)", evaluations) from None
    if not np.all(np.isfinite(A)):
        raise ConvergenceError(f"{what} (its Jacobian is not finite)", evaluations)
    try:
        Jinv = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        raise ConvergenceError(f"{what} (singular Jacobian I - J)", evaluations) from None
    cond = float(np.linalg.norm(A, np.inf) * np.linalg.norm(Jinv, np.inf))
    if not (np.all(np.isfinite(Jinv)) and cond < 1 / EPS64):
        raise ConvergenceError(f"{what} (I - J numerically singular, condition {cond:.1e})", evaluations)
    return Jinv


def _mpf_exact(v, name):
    """An input number at the working precision, exact where the input is (Rationals stay exact)."""
    e = to_exact(v, name) if not isinstance(v, float) else to_exact(repr(v), name)
    return to_mpf(e)


