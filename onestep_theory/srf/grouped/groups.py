r"""K readout groups: the test error of a network with a non-uniform initial readout (docs/theory/srf-theory.md §8).

With :math:`a^0=u/\sqrt p` and :math:`u_i\in\{\varsigma_1,\dots,\varsigma_K\}`, group j has the spike
:math:`r\varsigma_j` and bulk variance :math:`c_j` (:func:`~onestep_theory.srf.grouped.readout.group_params`), the
features (32) use the coefficients (15) at :math:`(r\varsigma_j,c_j)`, and the saddle point has K-vector
and K×K order parameters.  :func:`srf_groups` solves it with

* the asymptotic prior (default; docs/theory/srf-theory.md §8.1, :mod:`~onestep_theory.srf.grouped.kgroup`): float64 or
  any ``dps``, error from refinement;
* the finite-W prior on sampled bulks (``prior="finite-w"``, :mod:`~onestep_theory.srf.grouped.finitew`): the check,
  with the 95 % sampling error over the bulks and their O(1/p) bias.

Readouts that reduce to one group (equal values; :math:`\pm\varsigma` for an odd σ) are solved exactly by
the asymptotic single-group solver :func:`~onestep_theory.srf.single.solve.srf_solve`.

References
----------
[DPCKLL24] arXiv:2410.18938, App. D; [CPDKLZL24] arXiv:2402.04980, Sec. 4.4, App. D, (32), (136)–(138);
docs/theory/srf-theory.md §8, §8.1, §4.6.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...core.errors import ConvergenceError, InvalidParameterError
from ...core.exact import check_dps, float_in, to_exact
from ...core.limits import MAX_SRF_DPS
from ...core.precision import asked_digits, precision, ulps
from ...core.results import VouchedResult, digits_of, provenance
from ...hermite.activation import Activation
from ...hermite.expressions import is_odd, x
from ..features.mapping import resolve_rcg
from ..single.solve import srf_solve
from .finitew import finite_w_solve
from .kgroup import check_kgroup_work, solve_kgroup
from .readout import group_params, readout

__all__ = ["GroupSolution", "srf_groups", "PRIORS"]

#: The priors of :func:`srf_groups`.
PRIORS = ("asymptotic", "finite-w")


@dataclasses.dataclass
class GroupSolution(VouchedResult):
    r"""Test error (25) of the K-group theory (docs/theory/srf-theory.md §8) with its error budget.

    ``errors``: ``test_error`` (total) and its parts: asymptotic prior ``discretisation`` (change under a refined
    κ-rule), ``solver`` (the last Newton correction), ``rounding``, ``r``, ``c``, ``gamma`` (Result 3.1) and
    ``mapping`` (their effect); finite-W prior ``sampling`` (95 % Student-t half-width over the bulks), ``finite_size``,
    ``discretisation`` (change under a refined κ-rule), ``solver`` (change under a tighter tolerance).
    ``order`` holds the group order parameters (finite-W: their means over the widest bulks, ``errors["order"]``
    the test error's budget taken entry by entry); ``reduced`` the single-group
    :class:`~onestep_theory.srf.single.solution.SRFSolution` when the readout reduces to one group.
    """

    ERROR_KEYS = {"test_error": "test_error"}

    test_error: object
    abs_error: float
    digits: int
    readout: dict
    groups: list
    r: object
    c: object
    gamma: object
    alpha: object
    beta: object
    lam: object
    noise_var: object
    method: str
    experimental: bool
    per_bulk: list
    bulk_d: int | None
    bulk_p: int | None
    order: dict
    m_rank: int | None
    iterations: int
    residual: float
    errors: dict
    reduced: object
    provenance: dict
    dps: int | None = None


def srf_groups(student, teacher, *, readout_spec, alpha, beta, lam, noise_var=0, r=None, c=None, gamma=None,
               alpha0=None, eta=None, prior="asymptotic", dps=None, tol=None, c_formula="corrected", strict_odd=True,
               max_iter=5000, reduce=True, bulks=None, annealed=True, sampler=None, bulk_p=600, bulk_count=4,
               seed=0, progress=None) -> GroupSolution:
    r"""Test error of the network with initial readout :math:`a^0=u/\sqrt p` (docs/theory/srf-theory.md §8).

    ``readout_spec``: a :class:`~onestep_theory.srf.grouped.readout.Readout` or spec string (``"1:0.5,2:0.5"``).
    (r, c, γ) are the uniform-readout parameters (given, or Result 3.1 from ``alpha0``, ``eta``); group j
    uses :math:`(r\varsigma_j,\ 1+\varsigma_j^2(c-1))`.  A readout that reduces to one group is solved by
    :func:`~onestep_theory.srf.single.solve.srf_solve` (asymptotic, exact to its error).

    ``prior="asymptotic"`` (default): the deterministic-equivalent prior of §8.1
    (:func:`~onestep_theory.srf.grouped.kgroup.solve_kgroup`), float64 to the relative error ``tol`` (default 1e-10), or
    ``dps`` certified digits (mpmath on Arb rules); ConvergenceError when the target is not reached.

    ``prior="finite-w"``: the finite-W prior on sampled bulks ``(W0, v, theta_perp)`` with p/d = β (float64),
    either ``bulks`` given, or drawn by ``sampler(d, p, count, seed=…)`` (``onestep_theory.simulate.sample_bulks``;
    this module draws no random numbers) — ``bulk_count`` bulks of width ``bulk_p`` and as many of width
    ``bulk_p // 2``.  The value is the mean over the widest bulks; ``errors`` holds its 95 % Student-t
    half-width (``sampling``), the change from the half width plus the half-width of that change (``finite_size``, the
    prior's O(1/p) bias), the κ-rule change (``discretisation``) and one Newton correction (``solver``); with
    one bulk or one width the error is not estimable (NaN, 0 digits).  ``annealed`` (default) averages the prior
    over v and :math:`\theta_\perp` given Ω (:func:`~onestep_theory.srf.grouped.finitew.group_bulk`).  ``reduce=False``
    keeps the groups as given (a check of the reductions).  The asymptotic prior's work is bounded before it starts
    (:func:`~onestep_theory.srf.grouped.kgroup.check_kgroup_work`: K (dps + 10)^2 at most
    :data:`~onestep_theory.srf.grouped.kgroup.MAX_KGROUP_WORK`); ``progress(i, n)`` is called after each κ-rule level (finite-W: after each bulk).

    >>> sol = srf_groups("tanh", "sin", readout_spec="1:0.5,-1:0.5", alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")
    >>> sol.method.startswith("reduced"), round(float(sol.test_error), 8)    # = the uniform readout (§11.4)
    (True, 0.04160398)
    >>> two = srf_groups("tanh", "sin", readout_spec="1:0.5,2:0.5", alpha0=20, eta=3, alpha=2, beta=1, lam="0.1")
    >>> two.digits >= 12, round(float(two.test_error), 10)
    (True, 0.0277423693)
    """
    rd = readout(readout_spec)
    if rd.kind != "finite":
        raise InvalidParameterError("readout", rd.label, "a finite support ('value:fraction,...'); for a Gaussian "
                                    "readout the theory is tau-star ([BES+22] eq. 5.1)")
    if prior not in PRIORS:
        raise InvalidParameterError("prior", prior, " or ".join(repr(v) for v in PRIORS))
    s = Activation.from_any(student, "student")
    al, be, la = (float_in(v, n) for v, n in ((alpha, "alpha"), (beta, "beta"), (lam, "lam")))
    nv = float_in(noise_var, "noise_var", strict=False)
    dps = check_dps(dps, MAX_SRF_DPS)
    if tol is not None:
        tol = float_in(tol, "tol")
        if not 1e-13 <= tol <= 1e-3:
            raise InvalidParameterError("tol", tol, "a real number in [1e-13, 1e-3] (use dps for more digits)")
    if dps is not None and prior != "asymptotic":
        raise InvalidParameterError("dps", dps, "None with the finite-W prior (float64 on sampled bulks)")
    if prior == "asymptotic" and (bulks is not None or sampler is not None):
        raise InvalidParameterError("bulks" if bulks is not None else "sampler", "given",
                                    "sampled bulks only with prior='finite-w' (the asymptotic prior needs none)")
    red = rd.reduced(odd=is_odd(s.expr)) if reduce else rd
    if prior == "asymptotic" and red.K >= 2:
        check_kgroup_work(red.K, dps)             # bounded work, before the mapping's digits are computed
    refs = ["[CPDKLZL24] Sec. 4.4, App. D, (32)", "[DPCKLL24] arXiv:2410.18938", "docs/theory/srf-theory.md §8"]
    if reduce and red.K == 1:
        with precision(dps or 15):
            rr, cc, gg, mapping = resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, c_formula,
                                              strict_odd, dps)
            gp = group_params(*_typed(rr, cc), red)
            # the errors of (r u, 1 + u^2 (c - 1), gamma) that srf_solve grows its errors by (as the mapping's on the
            # single path): the mapping's, times |u|, u^2, plus the products' rounding (floats: 2^-52; else 10 ulps
            # of the working precision)
            unit = 2.0 ** -52 if any(isinstance(v, float) for v in gp[0]) else float(ulps(
                1, why="r u and 1 + u^2 (c - 1) rounded at the working precision: 10 ulps"))
            ge = _group_errors(gp, red, mapping, unit)[0]
            rcg_err = dict(r=ge["r"], c=ge["c"], gamma=float(mapping.errors["gamma"]) if mapping is not None else 0.0)
        r1, c1 = gp[0]
        t1 = teacher
        if float(r1) < 0:      # negative spike (non-odd sigma): v -> -v, i.e. the teacher reflected (§8, Package)
            ta = Activation.from_any(teacher, "teacher")
            t1, r1 = Activation(ta.expr.subs(x, -x), ta.center, f"{ta.name}(-x)"), -r1
        sol = srf_solve(student, t1, alpha=alpha, beta=beta, lam=lam, noise_var=noise_var, r=r1, c=c1, gamma=gg,
                        tol=tol, dps=dps, rcg_errors=rcg_err)
        return _reduced(sol, rd, red, refs, gp, rr, cc, gg, alpha, beta, lam, noise_var, mapping)
    if prior == "finite-w":
        rr, cc, gg, mapping = resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, c_formula,
                                          strict_odd)
        gp = group_params(float(rr), float(cc), red)
        fw = finite_w_solve(student, teacher, red, gp, gg, cc, (al, be, la, nv), bulks=bulks, sampler=sampler,
                            bulk_p=bulk_p, bulk_count=bulk_count, seed=seed, annealed=annealed, tol=tol or 1e-10,
                            max_iter=max_iter, progress=progress)
        main, err = fw["main"], fw["err"]
        return GroupSolution(
            test_error=fw["mean"], abs_error=err, digits=digits_of(fw["mean"], err) if math.isfinite(err) else 0,
            method=(f"finite-W K-group saddle point ({'annealed' if annealed else 'sampled'} prior) on "
                    f"{len(fw['per'])} sampled bulks of p = {fw['bulk_p']} (and {fw['n_small']} smaller); hybrid Powell"),
            per_bulk=fw["per"], bulk_d=main["d"], bulk_p=fw["bulk_p"], order=fw["order"], m_rank=main["rank"],
            iterations=fw["fev"], residual=main["res"],
            errors={"test_error": err, "sampling": fw["se"], "finite_size": fw["size_err"],
                    "discretisation": fw["disc"], "solver": fw["solv"], "order": fw["order_err"],
                    "per_bulk": [fw["disc"] + fw["solv"]] * len(fw["per"]),     # each bulk's own refinement
                    "groups": _group_errors(gp, red, mapping), **_rcg_errors(mapping)}, reduced=None,
            provenance=provenance(method="finite-W K-group saddle point on sampled bulks", references=refs),
            **_common(rd, red, gp, rr, cc, gg, alpha, beta, lam, noise_var, experimental=True))
    with precision(dps or 15):        # the boundary of the asymptotic prior (float64 too: the mapping's digits)
        return _asymptotic(student, teacher, rd, red, refs, alpha, beta, lam, noise_var, r, c, gamma, alpha0, eta,
                           c_formula, strict_odd, tol or 1e-10, dps is not None, max_iter, progress)


def _group_errors(gp, red, mapping, unit=2.0 ** -52) -> list:
    """Errors of the groups' (r_j, c_j) = (r u_j, 1 + u_j^2 (c - 1)): the mapping's errors of r, c (when Result 3.1
    gave them) times |u_j|, u_j^2, plus the rounding, ``unit`` relative (default: as printed, floats; two units: the
    product too)."""
    er, ec = ((float(mapping.errors[k]) if mapping is not None else 0.0) for k in ("r", "c"))
    return [dict(value=None, fraction=None, r=abs(float(u)) * er + unit * abs(float(a)),
                 c=float(u) ** 2 * ec + unit * abs(float(b))) for u, (a, b) in zip(red.values, gp)]


def _typed(rr, cc) -> tuple:
    """(r, c) for the group parameters: a float given by the user is the decimal it prints (the package's reading
    of a float, as ``srf_solve`` reads one at ``dps``), so that r u and 1 + u^2 (c - 1) are not rounded in float64
    (c = 1.1 at u = 2 gave c_2 = 1.4000000000000004, solved as such to 20 digits)."""
    return tuple(to_exact(repr(v), n) if isinstance(v, float) else v for v, n in ((rr, "r"), (cc, "c")))


def _rcg_errors(mapping) -> dict:
    """The errors of (r, c, γ) from Result 3.1 (none when the user gave them: exact)."""
    return {} if mapping is None else {k: mapping.errors[k] for k in ("r", "c", "gamma")}


def _common(rd, red, gp, rr, cc, gg, alpha, beta, lam, noise_var, experimental):
    groups = [dict(value=str(v), fraction=str(f), r=float(rj), c=float(cj))
              for v, f, (rj, cj) in zip(red.values, red.fractions, gp)]
    return dict(readout=dict(rd.to_dict(), reduced=red.label), groups=groups, r=rr, c=cc, gamma=gg, alpha=alpha,
                beta=beta, lam=lam, noise_var=noise_var, experimental=experimental)


def _reduced(sol, rd, red, refs, gp, rr, cc, gg, alpha, beta, lam, noise_var, mapping=None):
    """A readout of one group after the reductions of §8: the single-group solution ``sol`` at
    :math:`(r\varsigma, c_\varsigma)` (:func:`~onestep_theory.srf.single.solve.srf_solve`, the boundary)."""
    dps = sol.dps
    digits = sol.digits if dps is None else min(sol.digits, dps)         # dps: the printed digits (as _asymptotic)
    return GroupSolution(test_error=sol.test_error, abs_error=sol.abs_error, digits=digits, method=(
        f"reduced to one group (u = {red.values[0]}): asymptotic single-group saddle point"), per_bulk=[],
        bulk_d=None, bulk_p=None, order=sol.order, m_rank=None, iterations=sol.iterations, residual=sol.residual,
        errors={"test_error": sol.abs_error, "order": {k: sol.errors[k] for k in sol.order if k in sol.errors},
                "groups": _group_errors(gp, red, mapping), **_rcg_errors(mapping)}, reduced=sol, dps=dps,
        provenance=provenance(dps=dps, method="srf_solve on the reduced readout", references=refs),
        **_common(rd, red, gp, rr, cc, gg, alpha, beta, lam, noise_var, experimental=False))


def _asymptotic(student, teacher, rd, red, refs, alpha, beta, lam, noise_var, r, c, gamma, alpha0, eta, c_formula,
                strict_odd, tol, mp, max_iter, progress=None):
    """K >= 2 groups with the asymptotic prior of §8.1 (:func:`~onestep_theory.srf.grouped.kgroup.solve_kgroup`), at
    the ambient precision set by :func:`srf_groups`: in mpmath (``mp``, to the digits asked there) or float64."""
    inputs = dict(alpha=alpha, beta=beta, lam=lam, noise_var=noise_var)
    dps = asked_digits() if mp else None        # the digits asked at the boundary
    rr, cc, gg, mapping = resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, c_formula,
                                      strict_odd, dps)
    gp = group_params(*_typed(rr, cc), red)
    out = solve_kgroup(student, teacher, [g[0] for g in gp], [g[1] for g in gp], gg, red.fractions,
                       alpha=float_in(alpha, "alpha"), beta=float_in(beta, "beta"), lam=float_in(lam, "lam"),
                       noise_var=float_in(noise_var, "noise_var", strict=False), tol=tol, mp=mp,
                       inputs=inputs, max_iter=max_iter, progress=progress)
    errors = {k: v for k, v in out.errors.items() if k not in ("test_error", "order")}
    value = out.test_error
    err = out.errors["test_error"]
    order_err = out.errors["order"]
    if mapping is not None:
        # (r, c, gamma) from Result 3.1 carry their own errors: their relative size, amplified by the condition
        # of the fixed point, is added (as in srf_solve) -- to the test error and to every order parameter
        rel = max(mapping.errors[k] / max(abs(float(getattr(mapping, k))), 1.0) for k in ("r", "c", "gamma"))
        errors["mapping"] = 10.0 * out.cond * rel * max(1.0, abs(float(value)))
        err += errors["mapping"]
        errors.update({k: mapping.errors[k] for k in ("r", "c", "gamma")})
        order_err = {k: (np.asarray(e) + 10.0 * out.cond * rel * np.maximum(1.0, np.abs(np.asarray(
            out.order[k], dtype=float)))).tolist() for k, e in order_err.items()}
    errors["test_error"] = err
    digits = digits_of(value, err) if dps is None else min(digits_of(value, err), dps)     # dps: the printed digits
    if err > out.target * abs(float(value)):
        want = f"{dps} digits" if dps is not None else f"a relative error of {out.target:g}"
        raise ConvergenceError(f"K-group sRF test error: {want} requested, only {digits} digits reached (estimated "
                               f"error {err:.1e} after {out.level} refinements)", out.iterations, err)
    order = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in out.order.items()}
    errors.update(order=order_err, groups=_group_errors(gp, red, mapping))
    how = "float64" if dps is None else f"mpmath at {dps} digits on Arb rules"
    return GroupSolution(
        test_error=value, abs_error=err, digits=digits,
        method=(f"asymptotic K-group saddle point (deterministic-equivalent prior, §8.1): hybrid Powell, chord "
                f"Newton in {how}; error from the refined kappa-rule (level {out.level}, {out.nodes} nodes)"),
        per_bulk=[], bulk_d=None, bulk_p=None, order=order, m_rank=out.m_rank, iterations=out.iterations,
        residual=out.residual, errors=errors, reduced=None, dps=dps,
        provenance=provenance(dps=dps, method="asymptotic K-group saddle point", references=refs + [
            "docs/theory/srf-theory.md §8.1"]),
        **_common(rd, red, gp, rr, cc, gg, alpha, beta, lam, noise_var, experimental=False))
