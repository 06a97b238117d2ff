"""``onestep-theory study``: a finite-size study of a simulation protocol against the sRF theory, resumable
(docs/theory/numerics.md §8)."""

from __future__ import annotations

from .common import Progress, add_json, command, emit, float_arg, float_list, int_in, output_path

__all__ = ["COMMANDS"]

COMMANDS: dict = {}


def _run(args):
    from ..core.errors import InvalidParameterError
    from ..srf import srf_solve
    from ..study import ResultStore, run_study

    params = dict(student=args.student, teacher=args.teacher, alpha=args.alpha, beta=args.beta, lam=args.lam)
    if args.protocol == "giant-step":
        params.update(alpha0=args.alpha0, eta=args.eta)
        theory = srf_solve(args.student, args.teacher, alpha0=repr(args.alpha0), eta=repr(args.eta),
                           alpha=repr(args.alpha), beta=repr(args.beta), lam=repr(args.lam))
    else:
        if None in (args.r, args.c, args.gamma):
            raise InvalidParameterError("r, c, gamma", (args.r, args.c, args.gamma), "all three for the srf protocol")
        params.update(r=args.r, c=args.c, gamma=args.gamma)
        theory = srf_solve(args.student, args.teacher, r=repr(args.r), c=repr(args.c), gamma=repr(args.gamma),
                           alpha=repr(args.alpha), beta=repr(args.beta), lam=repr(args.lam))
    sizes = [int(round(v)) for v in args.d]
    with ResultStore(args.store) as st:
        tag = dict(params, root_seed=args.seed)
        done = sum(st.has(args.protocol, tag, d, k) for d in sizes for k in range(args.reps))
        if done and not args.resume:
            raise InvalidParameterError("--store", args.store, f"a new store, or --resume: it already holds {done} "
                                        "finished task(s) of this study")
        out = run_study(args.protocol, params, sizes, args.reps, float(theory.test_error), store=st,
                        root_seed=args.seed, exponents=tuple(args.exponents),
                        progress=Progress("study", args.quiet))
    out["theory_error"] = theory.abs_error
    out["store"] = args.store
    fit = out["fit"]
    lines = [f"finite-size study, {args.protocol}: theory eps_g = {float(theory.test_error):.10g} "
             f"(+/- {theory.abs_error:.1e}); {out['executed']} task(s) run, {out['reused']} reused from {args.store}",
             f"{'d':>8} {'gap':>12} {'se':>10} {'relative':>10}"]
    lines += [f"{r['d']:>8} {r['gap']:>12.5g} {r['se']:>10.2g} {r['relative_gap']:>10.3%}" for r in out["sizes"]]
    if fit is not None:
        lines.append(f"g_inf = {fit['g_inf']:.4g} +- {fit['se']:.2g} (chi2 {fit['chi2']:.2f} on {fit['dof']} dof); "
                     f"{fit['verdict']}")
    emit(args, out, "\n".join(lines))
    return 0


@command(COMMANDS, "study", "finite-size study: gaps to the sRF theory on a ladder of d, extrapolated to d -> inf")
def _setup(p):
    p.add_argument("protocol", choices=["giant-step", "srf"])
    p.add_argument("--student", required=True)
    p.add_argument("--teacher", required=True)
    for name, hlp in (("--alpha", "n/d"), ("--beta", "p/d"), ("--lam", "ridge lambda > 0")):
        p.add_argument(name, type=float_arg(name), required=True, help=hlp)
    p.add_argument("--alpha0", type=float_arg("--alpha0"), help="n0/d (giant-step)")
    p.add_argument("--eta", type=float_arg("--eta"), help="eta tilde (giant-step)")
    for name in ("--r", "--c", "--gamma"):
        p.add_argument(name, type=float_arg(name), help="sRF parameter (srf protocol)")
    p.add_argument("--d", type=float_list, required=True, help="sizes, e.g. 250,500,1000")
    p.add_argument("--reps", type=int_in("--reps", 2, 1000), default=4, help="seeds per size (default 4)")
    p.add_argument("--seed", type=int_in("--seed", 0, 2**63 - 1), default=0, help="root seed")
    p.add_argument("--exponents", type=float_list, default=[0.5, 1.0], help="exponents e_k of the d^-e_k terms")
    p.add_argument("--store", type=output_path, default="onestep-study.sqlite",
                   help="results store (SQLite; default onestep-study.sqlite)")
    p.add_argument("--resume", action="store_true", help="continue a study already in the store (no task runs twice)")
    p.add_argument("--quiet", action="store_true")
    add_json(p)
    return _run
