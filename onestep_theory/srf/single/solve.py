r"""Solve the saddle-point equations of Result 3.3 [CPDKLZL24] with an honest error estimate.

:func:`srf_solve` drives the pieces: (r, c, γ) from Result 3.1 (:mod:`~onestep_theory.srf.features.mapping`), the κ-rule
(:mod:`~onestep_theory.srf.features.kappa`), the map (:mod:`~onestep_theory.srf.single.saddle`) and the solvers
(:mod:`~onestep_theory.srf.single.solvers`); the whole solve is repeated on refined rules until the change meets
the target (docs/theory/numerics.md §5).

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
from ...core.exact import check_dps, check_real, float_in, to_exact, to_mpf
from ...core.limits import MAX_SRF_DPS
from ...core.precision import GUARD_DIGITS, precision
from ...core.results import digits_of, provenance
from ...hermite.activation import Activation
from ...hermite.expressions import breakpoints
from ..features.kappa import SRFSetup, srf_setup
from ..features.mapping import resolve_rcg, row_norm_params
from ..loss.losscheck import check_teacher
from ..loss.losses import loss as loss_of
from .saddle import HATS, ORDER, DomainError, MapOptions, all_values
from .solution import SRFSolution, combine_errors, rounding_floor
from .solvers import general_budget, jacobian, mp_solver_error, polish, solve_float

__all__ = ["SRFOptions", "srf_solve", "MAX_LEVEL", "MIN_TOL"]

_EPS64 = 2.0 ** -52

#: Refinement levels tried before giving up (nodes grow by quadrature.GROWTH per level).
MAX_LEVEL = 4
#: Smallest relative error tolerance of the float64 path; below it ask for ``dps``.
MIN_TOL = 1e-13
#: Seconds a general-loss solve may take (docs/theory/srf-theory.md §13); then ConvergenceError (exit 3)
GENERAL_LIMIT = 900.0


@dataclasses.dataclass(frozen=True)
class SRFOptions:
    r"""Model variants and numerical choices of :func:`srf_solve` (defaults: the package's recommendation).

    Model variants (docs/theory/srf-theory.md §2, §4.6, §4.10):

    * ``c_formula``: ``"corrected"`` or ``"v1"`` (Result 3.1, when (r, c, γ) come from α0 and η̃);
    * ``strict_odd``: refuse a non-odd student in the mapping (``False``: warn and compute);
    * ``spike_channel``: ``False`` switches the :math:`\vartheta` channel off (the notebook-printed variant);
    * ``spectrum``: ``"mp"`` (F3) or ``"empirical"`` (F1) with ``empirical=(D, F, H, G)``
      (:func:`~onestep_theory.srf.single.priors.empirical_from_weights`); ``cross_term`` keeps G in F1.

    Discretisation: ``kappa_nodes``/``inner_nodes`` select the reference notebook's fixed Gauss–Hermite
    rules (the error is then the change when both counts are doubled); ``mp_method`` is ``"closed"``
    (Stieltjes transform) or ``"quad"`` (quadrature of the MP measure).

    Solver (docs/theory/numerics.md §4): ``damping``, ``max_iter`` of the damped fixed point;
    ``continuation`` (``"auto"``: for β > 1 and λ < 1e-2 solve along a decreasing λ grid from 10, or
    ``"off"``); ``convergence`` (``"all"``: hybrid Powell to the fixed point, or ``"notebook"``: the
    notebook's damped iteration stopped on :math:`q_1,m,q_2,\vartheta,\psi` at 1e-4, whose distance from the
    fixed point is then part of ``abs_error``); ``fallback``: try the other solver when the first fails.

    ``loss`` (docs/theory/srf-theory.md §4.9): ``None``/``"square"`` (the closed-form square loss), ``"logistic"``,
    ``"hinge"``, an expression in ``y, yhat`` or a :class:`~onestep_theory.srf.loss.losses.Loss` (a Loss object always
    runs the general channel, float64, noiseless labels).  The solution's ``extra`` then holds the
    training loss and, for ±1 teachers, the classification error.  Entry checks and kinked losses:
    docs/theory/srf-theory.md §13 (a classification loss refuses a teacher whose labels are not ±1 before any
    work; the solve is bounded by :data:`GENERAL_LIMIT` seconds).

    ``row_norms=True`` (docs/theory/srf-theory.md §4.11): the correction for the row-norm heterogeneity of the
    giant step (§2 "Row norms"), which Result 3.3 leaves out and which puts the network several percent from it
    (docs/studies/mechanism.md); (r, c, γ) from α0 and η̃.  ``row_norms=(k, s2)``: a given heterogeneity (squared
    row norms :math:`c+k\,w_i^{0\top}v+s\zeta_i/\sqrt d`, e.g. measured on trained weights), with any (r, c, γ).
    Square loss, F3 prior, a twice-differentiable odd student; the solution's ``extra`` then holds ``row_norm_k``
    and ``row_norm_s2``.
    """

    c_formula: str = "corrected"
    strict_odd: bool = True
    spike_channel: bool = True
    spectrum: str = "mp"
    empirical: tuple | None = None
    cross_term: bool = True
    kappa_nodes: int | None = None
    inner_nodes: int | None = None
    mp_method: str = "closed"
    damping: float = 0.5
    max_iter: int = 20000
    continuation: str = "auto"
    convergence: str = "all"
    fallback: bool = True
    loss: object = None
    row_norms: object = False

    _CHOICES = {"c_formula": ("corrected", "v1"), "spectrum": ("mp", "empirical"), "mp_method": ("closed", "quad"),
                "continuation": ("auto", "off"), "convergence": ("all", "notebook")}

    @classmethod
    def build(cls, options=None, overrides=None) -> "SRFOptions":
        """``options`` with the keyword ``overrides`` applied, every field checked."""
        base = options if options is not None else cls()
        if not isinstance(base, cls):
            raise InvalidParameterError("options", options, "an SRFOptions")
        names = {f.name for f in dataclasses.fields(cls)}
        for k in overrides or {}:
            if k not in names:
                raise InvalidParameterError(k, overrides[k], f"not an option of srf_solve (options: "
                                                              f"{', '.join(sorted(names))})")
        opt = dataclasses.replace(base, **(overrides or {}))
        for k, allowed in cls._CHOICES.items():
            if getattr(opt, k) not in allowed:
                raise InvalidParameterError(k, getattr(opt, k), " or ".join(repr(a) for a in allowed))
        if opt.spectrum == "empirical" and opt.empirical is None:
            raise InvalidParameterError("empirical", None, "(D, F, H, G) arrays for spectrum='empirical'")
        if opt.loss is not None:
            lo = loss_of(opt.loss)
            # the string "square" is the closed form (§4.3-4.4, the exact reduction of §4.9); a Loss object
            # always runs the general channel (for square: the numerical cross-check of that reduction)
            opt = dataclasses.replace(opt, loss=None if isinstance(opt.loss, str) and lo.name == "square" else lo)
        if not 0 <= float(opt.damping) < 1:
            raise InvalidParameterError("damping", opt.damping, "a real number in [0, 1)")
        if opt.row_norms is not True and opt.row_norms is not False:
            rn = opt.row_norms
            if not (isinstance(rn, (tuple, list)) and len(rn) == 2):
                raise InvalidParameterError("row_norms", rn, "True, False or a pair (k, s2) with s2 >= 0")
            check_real(rn[0], "row_norms k", None, None)
            check_real(rn[1], "row_norms s2", 0, None)
            opt = dataclasses.replace(opt, row_norms=tuple(rn))
        for k in ("kappa_nodes", "inner_nodes"):
            v = getattr(opt, k)
            if v is not None and not (isinstance(v, int) and 2 <= v <= 4001):
                raise InvalidParameterError(k, v, "an integer in [2, 4001]")
        if not (isinstance(opt.max_iter, int) and 1 <= opt.max_iter <= 10**7):
            raise InvalidParameterError("max_iter", opt.max_iter, "an integer in [1, 10^7]")
        return opt


def srf_solve(student, teacher, *, alpha, beta, lam, noise_var=0, r=None, c=None, gamma=None, alpha0=None, eta=None,
              tol: float | None = None, dps: int | None = None, options: SRFOptions | None = None, init=None,
              setup: SRFSetup | None = None, **option_overrides) -> SRFSolution:
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

    Examples
    --------
    >>> sol = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")   # docs/theory/srf-theory.md §11.4
    >>> round(float(sol.test_error), 8), sol.digits >= 10
    (0.04160398, True)
    """
    opt = SRFOptions.build(options, option_overrides)
    al, be, la = (float_in(v, n) for v, n in ((alpha, "alpha"), (beta, "beta"), (lam, "lam")))
    nv = float_in(noise_var, "noise_var", strict=False)
    if tol is not None:
        tol = float_in(tol, "tol")
        if not MIN_TOL <= tol <= 0.1:
            raise InvalidParameterError("tol", tol, f"a real number in [{MIN_TOL:g}, 0.1] (use dps for more digits)")
    dps = check_dps(dps, MAX_SRF_DPS)
    target = 10.0 ** -dps if dps is not None else (tol or 1e-10)
    if opt.loss is not None:             # before any work: labels the loss cannot take are refused at once
        check_teacher(opt.loss, Activation.from_any(teacher, "teacher"))
    rr, cc, gg, mapping = resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, opt.c_formula,
                                      opt.strict_odd, dps)
    o = MapOptions(al, be, la, nv, opt.spike_channel, opt.spectrum,
                   tuple(np.asarray(a, dtype=float) for a in opt.empirical) if opt.empirical is not None else None,
                   opt.cross_term, opt.mp_method)
    if opt.loss is not None:
        if dps is not None:
            raise InvalidParameterError("dps", dps, f"None with the {opt.loss.name} loss (the general channel is float64)")
        if nv != 0:
            raise InvalidParameterError("noise_var", noise_var, f"0 with the {opt.loss.name} loss (labels are the "
                                        "teacher's values)")
        if opt.kappa_nodes or opt.inner_nodes or opt.convergence == "notebook":
            raise InvalidParameterError("loss", opt.loss.name, "the default numerics (no notebook options)")
        t = Activation.from_any(teacher, "teacher")
        o.loss, o.teacher_fn = opt.loss, t.numpy()
        o.teacher_kinks = tuple(float(b) for b in breakpoints(t.expr))
    rn = None
    if opt.row_norms is not False:
        bad = ("the general loss" if opt.loss is not None else "spectrum='empirical'" if opt.spectrum != "mp" else
               "the notebook's fixed rules" if (opt.kappa_nodes or opt.inner_nodes) else None)
        if bad:
            raise InvalidParameterError("row_norms", opt.row_norms, f"the square loss, the F3 prior and the default "
                                        f"rules (not {bad})")
        if opt.row_norms is True:
            if mapping is None:
                raise InvalidParameterError("row_norms", True, "alpha0 and eta (the correction is a property of the "
                                            "network's step), or an explicit (k, s2)")
            rn = row_norm_params(student, teacher, alpha0, eta, noise_var, rr, dps or 15)
        else:                   # an explicit heterogeneity (k, s2): exact, no error of its own
            with precision(dps or 15):
                rn = (*(_mpf_exact(v, n) for v, n in zip(opt.row_norms, ("row_norms k", "row_norms s2"))),
                      {"k": 0.0, "s2": 0.0})
        o.row_norms = (float(rn[0]), float(rn[1]))
    x = tuple(float(v) for v in init) if init is not None else (0.0, 0.0, 0.0, 0.1, 0.1, 1.0, 1.0)
    conv_keys = ("q1", "m", "q2", "theta", "psi") if opt.convergence == "notebook" else None
    ctol = 1e-4 if opt.convergence == "notebook" else 1e-12

    def level_setup(level, mp_dps=None):
        if (setup is not None and level == setup.level and mp_dps is None and not setup.mp
                and (opt.row_norms is False or setup.dmu0 is not None)):
            return setup
        if opt.kappa_nodes or opt.inner_nodes:
            f = 2 ** level
            return srf_setup(student, teacher, rr, cc, gg, dps=mp_dps, kappa_nodes=(opt.kappa_nodes or 101) * f,
                             inner_nodes=(opt.inner_nodes or 61) * f)
        digits = 16 if mp_dps is None else dps + 2
        return srf_setup(student, teacher, rr, cc, gg, digits=digits, level=level, dps=mp_dps,
                         curvature=opt.row_norms is not False)

    # ---- float64: level 0 from the start (or warm start), then each refinement warm-started
    total_it = 0
    S = level_setup(setup.level if setup is not None else 0)
    if o.loss is not None:
        o.deadline = time.monotonic() + GENERAL_LIMIT
        o.eval_budget = general_budget(x, S, o)
    try:
        x, it, res, status = solve_float(S, o, x, damping=opt.damping, tol=ctol, max_iter=opt.max_iter,
                                         continuation=opt.continuation, conv_keys=conv_keys,
                                         fallback=opt.fallback, first=init is None)
    finally:
        o.eval_budget = None
    total_it += it
    Jinv = _chord_inverse(x, S, o, total_it)
    cond = max(1.0, float(np.linalg.norm(Jinv, np.inf)))

    def floor(eps, Sl):        # rounding (docs/theory/numerics.md §5)
        return rounding_floor(eps, cond, len(Sl.kappa), Sl.mp)
    newton = 0
    levels = []       # (level, setup, x, values, solver error of the values)

    def finish(Sl, xl, tol_step, max_steps):
        nonlocal newton
        if opt.convergence == "notebook":
            # keep the early-stopped iterate; its distance from the fixed point (polished on the same
            # rules) is part of its error
            vals0 = all_values(xl, Sl, o)
            _, valsp, serrp = finish_polished(Sl, xl, tol_step, max_steps)
            return xl, vals0, {k: abs(vals0[k] - valsp[k]) + serrp[k] for k in vals0}
        return finish_polished(Sl, xl, tol_step, max_steps)

    def finish_polished(Sl, xl, tol_step, max_steps):
        nonlocal newton
        xl, steps, last, vals = polish(xl, Sl, o, Jinv, tol=tol_step, max_steps=max_steps)
        newton += steps
        # the solver's error: the change of every quantity under the last (not applied) correction,
        # to first order J-propagated; for the order parameters it is the correction itself
        shifted = all_values([a + d for a, d in zip(xl, last)], Sl, o) if not Sl.mp else None
        serr = {k: abs(vals[k] - shifted[k]) for k in vals} if shifted is not None else \
            mp_solver_error(vals, last, xl)
        return xl, vals, serr

    def refine(start_level, mp_dps, tol_step, steps, rnd):
        """Solve on successive rule levels until the change meets the target (or the limits)."""
        xl = x if mp_dps is None else [mpmath.mpf(v) for v in x]
        for lev in range(start_level, start_level + max(1, MAX_LEVEL) + 1):
            try:
                Sl = S if (mp_dps is None and lev == S.level) else level_setup(lev, mp_dps)
            except InvalidParameterError as exc:
                if exc.param != "quadrature":
                    raise
                if len(levels) < 2:
                    raise ConvergenceError(f"sRF saddle point: no error estimate possible ({exc})", total_it) from None
                break                                # node limit reached: report what we have
            xl, vals, serr = finish(Sl, xl, tol_step, steps)
            levels.append((lev, Sl, xl, vals, serr))
            if len(levels) >= 2:
                err = combine_errors(levels[-2][3], vals, serr, floor(rnd, Sl))
                if err["test_error"] <= target * abs(float(vals["test_error"])):
                    break

    if dps is None:
        refine(S.level, None, 1e-15, 8, _EPS64)
        method = f"{status} + chord Newton (float64), error from refined discretisation"
    else:
        with precision(dps):
            o_mp = dataclasses.replace(o)
            o_mp.alpha, o_mp.beta, o_mp.lam, o_mp.noise_var = (_mpf_exact(v, n) for v, n in (
                (alpha, "alpha"), (beta, "beta"), (lam, "lam"), (noise_var, "noise_var")))
            if o.empirical is not None:
                o_mp.empirical = tuple(np.array([mpmath.mpf(float(t)) for t in arr], dtype=object)
                                       for arr in o.empirical)
            if rn is not None:
                o_mp.row_norms = (rn[0], rn[1])
            o = o_mp
            wd = dps + GUARD_DIGITS
            refine(0, wd, mpmath.mpf(10) ** -(wd - 3), 40, 10.0 ** -wd)
        method = (f"{status} (float64), chord-Newton polish in mpmath on Arb rules, error from refined "
                  "discretisation")
    lev, S, x, vals, serr = levels[-1]
    errors = combine_errors(levels[-2][3], vals, serr, floor(_EPS64 if dps is None else 10.0 ** -(dps + GUARD_DIGITS), S))
    if mapping is not None:
        # (r, c, gamma) from Result 3.1 carry their own (tiny) errors: they are reported, and their relative
        # size, amplified by the condition of the fixed point, is added to every quantity's error
        rel = max(mapping.errors[k] / max(abs(float(getattr(mapping, k))), 1.0) for k in ("r", "c", "gamma"))
        errors = {k: e + 10.0 * cond * rel * max(1.0, abs(float(vals[k]))) for k, e in errors.items()}
        errors.update({k: mapping.errors[k] for k in ("r", "c", "gamma")})
    if rn is not None:
        rel = max(rn[2]["k"] / max(abs(float(rn[0])), 1.0), rn[2]["s2"] / max(abs(float(rn[1])), 1.0))
        errors = {k: e + 10.0 * cond * rel * max(1.0, abs(float(vals[k]))) if k in vals else e
                  for k, e in errors.items()}
        errors.update(row_norm_k=rn[2]["k"], row_norm_s2=rn[2]["s2"])
    digits = digits_of(vals["test_error"], errors["test_error"])
    if errors["test_error"] > target * abs(float(vals["test_error"])):
        want = f"{dps} digits" if dps is not None else f"a relative error of {target:g}"
        raise ConvergenceError(f"sRF test error: {want} requested, only {digits} digits reached (estimated error "
                               f"{errors['test_error']:.1e} after {lev} refinements)", total_it + newton,
                               errors["test_error"])
    res = max(abs(float(vals[k]) - float(x[i])) / max(1.0, abs(float(x[i]))) for i, k in enumerate(ORDER))
    return SRFSolution(
        test_error=vals["test_error"], abs_error=errors["test_error"], digits=digits,
        order={k: vals[k] for k in ORDER}, hats={k: vals[k] for k in HATS}, errors=errors, D=vals["D"],
        r=rr, c=cc, gamma=gg,
        alpha=alpha, beta=beta, lam=lam, noise_var=noise_var, iterations=total_it, newton_steps=newton,
        residual=res, status=status,
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
    if not (np.all(np.isfinite(Jinv)) and cond < 1 / _EPS64):
        raise ConvergenceError(f"{what} (I - J numerically singular, condition {cond:.1e})", evaluations)
    return Jinv


def _mpf_exact(v, name):
    """An input number at the working precision, exact where the input is (Rationals stay exact)."""
    e = to_exact(v, name) if not isinstance(v, float) else to_exact(repr(v), name)
    return to_mpf(e, mpmath.mp.dps - GUARD_DIGITS)


