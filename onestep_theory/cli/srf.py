"""``onestep-theory srf | bounds | spectrum`` (spiked random features, docs/theory/srf-theory.md)."""

from __future__ import annotations

from .common import (add_exact, add_json, add_table, cli_context, command, emit, exact_arg, exact_grid, exact_list,
                     float_list, int_in, output_path, rcg_kw, resolve_args, table_form)
from .groups import add_readout, density_rows, is_grouped, run_bounds_groups, run_group_spectrum, run_srf_groups
from ..core.limits import MAX_SRF_DPS


__all__ = ["COMMANDS", "rcg_args", "model_args", "solver_kw", "empirical_bulk"]

COMMANDS: dict = {}


def _dps_arg(p, default=None):
    p.add_argument("--dps", type=int_in("--dps", 1, MAX_SRF_DPS), default=default,
                   help="significant digits wanted (certified by refinement; exit 3 if unreachable)")


def rcg_args(p, need_teacher=True):
    p.add_argument("--student", required=True)
    p.add_argument("--teacher", required=need_teacher)
    p.add_argument("--noise-var", type=exact_arg, default="0", help="label-noise variance Delta >= 0")
    p.add_argument("--alpha0", type=exact_arg, help="n0/d of the gradient step ('inf' = perfect alignment)")
    p.add_argument("--eta", type=exact_arg, help="learning rate eta~ (eta = eta~ p)")
    p.add_argument("--r", type=exact_arg)
    p.add_argument("--c", type=exact_arg)
    p.add_argument("--gamma", type=exact_arg)
    p.add_argument("--c-formula", choices=["corrected", "v1"], default="corrected")
    p.add_argument("--allow-non-odd", action="store_true",
                   help="compute the Result 3.1 mapping for a non-odd student anyway (unvalidated; warns)")


def _solver_args(p):
    p.add_argument("--no-spike-channel", action="store_true", help="theta channel off (notebook-printed variant)")
    p.add_argument("--spectrum-mode", choices=["mp", "empirical", "trained"], default="mp",
                   help="F3 asymptotic MP (default), F1 on a sampled bulk (--empirical-d, --seed), or F1 with the "
                   "network's trained bulk for a finite step batch (docs/theory/trained-bulk.md; --alpha0, --eta)")
    p.add_argument("--empirical-d", type=int_in("--empirical-d", 2, 20000), default=2000)
    p.add_argument("--seed", type=int_in("--seed", 0, 2**63 - 1), default=0)
    p.add_argument("--no-cross-term", action="store_true")
    p.add_argument("--kappa-nodes", type=int_in("--kappa-nodes", 11, 2001),
                   help="fixed Gauss-Hermite kappa rule (notebook compatibility; default: adaptive panels)")
    p.add_argument("--inner-nodes", type=int_in("--inner-nodes", 5, 2001),
                   help="fixed Gauss-Hermite inner rule for smooth functions (notebook compatibility)")
    p.add_argument("--tol", type=exact_arg, help="relative error wanted in float64, in [1e-13, 0.1] (default 1e-10)")
    p.add_argument("--row-norms", action="store_true",
                   help="correct for the row-norm heterogeneity of the giant step (with --alpha0 --eta; "
                        "docs/theory/srf-theory.md §4.11, docs/studies/mechanism.md)")


def model_args(p):
    """--dps, the model and solver options, --json."""
    _dps_arg(p)
    _solver_args(p)
    add_json(p)


def solver_kw(args):
    kw = dict(spike_channel=not args.no_spike_channel, spectrum=args.spectrum_mode, cross_term=not args.no_cross_term,
              kappa_nodes=args.kappa_nodes, inner_nodes=args.inner_nodes, tol=args.tol)
    if getattr(args, "loss", None) is not None:
        kw["loss"] = args.loss
    if getattr(args, "row_norms", False):
        kw["row_norms"] = True
    return kw


def empirical_bulk(args, rcg, beta):
    from ..core.exact import to_float
    from ..simulate import sizes_srf
    from ..simulate import empirical_spectrum

    d, _, p, _ = sizes_srf(args.empirical_d, alpha=1, beta=to_float(beta, "beta"))
    return empirical_spectrum(d, p, float(rcg[1]), float(rcg[2]), seed=args.seed)


def _run_srf(args):
    # the libraries first, from this shallow frame: under CPython 3.11 a library loaded deep in the package's imports
    # maps and unmaps a 16 KiB frame-stack chunk at each call of its module bodies (13 000 times, ~0.06 s; issue 35)
    import scipy.special  # noqa: F401
    import sympy  # noqa: F401

    from ..srf.single.solve import srf_solve      # its home: not through the package's lazy names

    if is_grouped(args):
        if args.row_norms or args.table:
            from ..core.errors import InvalidParameterError

            raise InvalidParameterError("--row-norms" if args.row_norms else "--table", args.row_norms or args.table,
                                        "the uniform readout (no --readout groups)")
        return run_srf_groups(args)
    skw = solver_kw(args)
    kw = rcg_kw(args)
    if args.spectrum_mode == "empirical":
        skw["empirical"] = empirical_bulk(args, resolve_args(args)[:3], args.beta)
    # (r, c, gamma) are resolved inside srf_solve, so that the mapping's errors reach the result
    sol = srf_solve(args.student, args.teacher, alpha=args.alpha, beta=args.beta, lam=args.lam, dps=args.dps,
                    **kw, **skw)
    if "alpha0" in kw:
        sol.provenance["mapping"] = "Result 3.1 (eqs. 9-11), c_formula=" + args.c_formula
    d = sol.to_dict()
    out = {"r": d["r"], "c": d["c"], "gamma": d["gamma"], "test_error": d["test_error"], "abs_error": d["abs_error"],
           "digits": d["digits"], "order": {**d["order"], **d["hats"]}, "errors": d["errors"], "D": d["D"],
           "iterations": d["iterations"], "newton_steps": d["newton_steps"], "residual": f"{float(sol.residual):.2e}",
           "status": d["status"], "options": d["options"], **d["extra"],
           "params": {"alpha": args.alpha, "beta": args.beta, "lam": args.lam, "noise_var": args.noise_var},
           "provenance": d["provenance"]}
    lines = [f"sRF: student {args.student}, teacher {args.teacher}; r={d['r']}, c={d['c']}, gamma={d['gamma']}; "
             f"alpha={args.alpha}, beta={args.beta}, lam={args.lam}",
             f"test error eps_g = {d['test_error']}   (+/- {d['abs_error']}, {d['digits']} digits)"]
    if d["extra"]:
        lines += [f"  {k:<10} = {v}" + (f"   +/- {d['errors'][k]}" if k in d["errors"] else "")
                  for k, v in d["extra"].items()]
    for k, v in out["order"].items():
        lines.append(f"  {k:<10} = {v:<{(args.dps or 12) + 8}} +/- {d['errors'][k]}")
    lines.append(f"({sol.iterations} fixed-point iterations, {sol.newton_steps} Newton steps; error from the change "
                 f"under refined discretisation, level {sol.options['level']}, {sol.options['kappa_nodes']} kappa nodes)"
                 if "level" in sol.options else f"({sol.provenance['method']})")     # the zero readout: no solve
    if "alpha0" in kw:
        out["network"], line = _network_note(args)
        lines.append(line)
    if args.table:                       # test error, extras, order parameters: value +- error, the vouched digits
        out["table"] = _table(args, {**d, **out["order"], **d["extra"]}, d["errors"], sol.provenance,
                              "sRF saddle point and test error (Result 3.3)", ["test_error", *d["errors"]])
        lines = [out["table"].rstrip()]
    emit(args, out, "\n".join(lines))
    return 0


def _table(args, values, errors, prov, what, keys=None):
    """``--table``: the fields with their errors as a booktabs table (``quantities.table.quantity_table``)."""
    from ..quantities.table import quantity_table, tex_text

    given = {k: getattr(args, k, None) for k in ("alpha0", "eta", "r", "c", "gamma", "alpha", "beta", "lam", "noise_var")}
    if getattr(args, "command", None) == "bounds" and args.r is None and args.alpha0 is None:
        given["alpha0"] = "inf"                  # bounds' default: perfect alignment
    if getattr(args, "optimize_eta", False):
        given.pop("eta")                         # searched, not fixed
    return quantity_table(values, errors, list(dict.fromkeys(keys or errors)), context=cli_context(
        args, prov.get("method"), prov), fixed={k: v for k, v in given.items() if v is not None}, form=table_form(args),
        caption=f"{what}, student \\texttt{{{tex_text(args.student)}}}, teacher \\texttt{{{tex_text(args.teacher)}}}")


def _network_note(args):
    """For the network use case ((alpha0, eta) given): how far the theory is known to be from the one-step network
    where the map measured it, else "not measured near this setting" (docs/studies/mechanism.md;
    srf.features.network_map)."""
    from ..srf.features.network_map import network_gap, network_note

    g = network_gap(args.student, args.teacher, alpha0=args.alpha0, eta=args.eta, alpha=args.alpha, beta=args.beta,
                    lam=args.lam, noise_var=args.noise_var, loss=getattr(args, "loss", None),
                    c_formula=args.c_formula, spike_channel=not args.no_spike_channel, spectrum=args.spectrum_mode,
                    cross_term=not args.no_cross_term)
    return g, network_note(g, corrected=args.row_norms, spectrum=args.spectrum_mode)


def _run_bounds(args):
    from ..srf.optimal.bounds import bounds

    if (is_grouped(args) or args.optimize_bias) and args.dps is not None:
        from ..core.errors import InvalidParameterError

        raise InvalidParameterError("--dps", args.dps, "not given with " + ("a grouped --readout" if is_grouped(args)
                                    else "--optimize-bias") + " (float64 only: its digits follow its printed error)")
    if args.table and (is_grouped(args) or args.optimize_bias):
        from ..core.errors import InvalidParameterError

        raise InvalidParameterError("--table", args.table, "the uniform readout without --optimize-bias")
    if is_grouped(args):
        return run_bounds_groups(args)
    if args.optimize_bias:
        return _run_bias_bound(args)
    odd = not args.allow_non_odd
    if args.optimize_eta:           # explicit r, c, gamma are refused there (one line naming the parameter)
        b = bounds(args.student, args.teacher, alpha0=args.alpha0 or "inf", noise_var=args.noise_var,
                   optimize_eta=True, eta_max=args.eta_max, c_formula=args.c_formula, strict_odd=odd, dps=args.dps,
                   r=args.r, c=args.c, gamma=args.gamma)
    elif args.r is not None:
        b = bounds(args.student, args.teacher, r=args.r, c=args.c or 1, gamma=args.gamma or 1, dps=args.dps)
    else:
        b = bounds(args.student, args.teacher, alpha0=args.alpha0 or "inf", eta=args.eta, noise_var=args.noise_var,
                   c_formula=args.c_formula, strict_odd=odd, dps=args.dps)
    d = b.to_dict()
    e = d["errors"]
    lines = [f"{name:<12} = {d[k]}   +/- {e[k]}" + _criterion_note(b, k)
             for k, name in (("upper", "upper (26)"), ("lower", "lower (27)"))]
    lines += [f"{k:<12} = {d[k]}" + (f"   +/- {e[k]}" if k in e else "") + _flat_note(b, k)
              for k in ("best_linear", "r", "c", "gamma", "eta_upper", "eta_lower", "extension")]
    if b.optimized and args.eta is not None:
        lines.append(f"(the given --eta {args.eta} is not used: --optimize-eta searches [0, {args.eta_max}])")
    text = "\n".join(lines)
    if args.table:
        text = d["table"] = _table(args, d, e, b.provenance, "Bounds (26), (27) of [CPDKLZL24]" + (
            ", optimised over $\\tilde\\eta$ (28)" if b.optimized else ""))
    emit(args, d, text)
    return 0


def _criterion_note(b, k):
    """How a bound met ``--dps`` (``b.dps``): stated when by the absolute criterion (a bound that is 0 within its
    error)."""
    if b.criteria.get(k) != "absolute":
        return ""
    dps = b.dps
    zero = "0 within its error" if float(getattr(b, k)) == 0 else "below its scale"
    return (f"   ({zero}: {b.digits[k]} digits absolute, |value| + error <= 10^-{b.digits[k]} ||sigma*||^2, "
            f"||sigma*||^2 ~ {float(b.scale):.6g}" + (f"; --dps {dps} met by this absolute criterion)" if dps else ")"))


def _flat_note(b, k):
    """A flat minimum (f' ~ (eta - eta*)^p, p >= 3): its argmin has about 1/p of the digits; a minimiser at an end
    of the range; a bound constant in eta."""
    info = b.search.get(k[4:], {}) if k.startswith("eta_") else {}
    o = info.get("order", 1)
    if info.get("at_end"):
        return "   (at an end of [0, eta_max]: the bound decreases towards it; widen --eta-max if it is eta_max)"
    if o == 0:
        return "   (the bound is constant in eta within its errors: every eta in the range minimises it)"
    return f"   (flat minimum, f' ~ (eta - eta*)^{o}: the argmin has ~1/{o} of the digits)" if o > 1 else ""


def _run_bias_bound(args):
    from ..srf.optimal.bounds import bias_lower_bound

    rr, cc, gg, _ = resolve_args(args)
    out = bias_lower_bound(args.student, args.teacher, r=rr, c=cc, gamma=gg, bias_max=args.bias_max)
    d = out.to_dict()
    text = (f"lower bound (27) minimised over a common bias b: {d['lower']}  +/- {d['errors']['lower']}  at b = "
            f"{d['bias']}  +/- {d['errors']['bias']}"
            + (" (at the end of the range: widen --bias-max)" if out.at_boundary else "")
            + f"\nwithout bias (b = 0): {d['lower_at_zero']}  +/- {d['errors']['lower_at_zero']}")
    emit(args, d, text)
    return 0


def _run_spectrum(args):
    from ..core.results import vouched
    import numpy as np

    from ..srf.spectral.spectrum import spectrum

    if is_grouped(args):
        return run_group_spectrum(args)
    rr, cc, gg, _ = resolve_args(args)
    xs = list(args.z) if args.z else None          # exact texts: the --dps polish reads each x as typed
    sp_ = spectrum(args.student, r=rr, c=cc, alpha=args.alpha, beta=args.beta, xs=xs, lams=args.lam, dps=args.dps)
    d = sp_.to_dict()
    if args.d:
        from ..core.precision import precision
        with precision(args.dps or 15):     # exact product at the working precision
            d["mean_spike"] = vouched(sp_.mean_spike_per_d * args.d, sp_.errors["mean_spike_per_d"] * args.d)
    lines = ["bulk density of Phi^T Phi / p on the real axis: Im V2(x + i0)/pi (docs/theory/srf-theory.md §7.1); "
             "exactly 0 outside the support",
             "edges of the support: " + ",  ".join(f"{v} +/- {e}" if v is not None else "not resolved by the kappa "
                                                   "rule (§7.1)" for v, e in zip(d["edges"], d["errors"]["edges"]))]
    lines += density_rows(args, xs or sp_.x, d, sp_.provenance)     # each x as printed is the point computed
    lines += [f"V2(-{k}) = {v}  +/- {d['errors']['stieltjes'][k]}" for k, v in d["stieltjes_at_minus_lambda"].items()]
    lines.append(f"atom at 0: {d['atom_at_zero']}  +/- {d['errors']['atom_at_zero']};  mean spike / d = alpha E mu0^2 = {d['mean_spike_per_d']}"
                 f"  +/- {d['errors']['mean_spike_per_d']}" + (f";  mean spike = {d['mean_spike']}" if args.d else ""))
    emit(args, d, "\n".join(lines))
    return 0


def _run_mapping(args):
    from ..srf.features.mapping import srf_params_checked

    p = srf_params_checked(args.student, args.teacher, args.alpha0, args.eta, args.noise_var, c_formula=args.c_formula,
                           dps=args.dps, strict_odd=not args.allow_non_odd)
    d = p.to_dict()
    names = {"r": "spike strength r (10)", "c": "bulk variance c (11)", "gamma": "alignment gamma (9)",
             "mu1": "mu1 = E sigma'", "mu1_check_sq": "check mu1^2", "mu1_star": "mu1*", "mu2_star": "mu2* (incl. noise)"}
    lines = [f"Result 3.1 of [CPDKLZL24]: student {args.student}, teacher {args.teacher}, alpha0={args.alpha0}, "
             f"eta={args.eta}, noise_var={args.noise_var}, c_formula={args.c_formula}"]
    lines += [f"  {names[k]:<22} = {d[k]}   +/- {d['errors'][k]}" for k in names]
    emit(args, d, "\n".join(lines))
    return 0


def _run_cge(args):
    from ..core.results import vouch
    from ..srf.features.cge import cge_values

    rr, cc, gg, mapping = resolve_args(args)
    v = cge_values(args.student, rr, cc, args.kappa, dps=args.dps)
    d = v.to_dict()
    d["kappa"] = list(args.kappa)
    if mapping is not None:             # r, c from Result 3.1, with the mapping's errors
        for k, val in (("r", rr), ("c", cc)):
            d[k], d.setdefault("errors", {})[k] = vouch(val, mapping.errors[k], args.dps)
    rc = (f"r={d['r']} +/- {d['errors']['r']}, c={d['c']} +/- {d['errors']['c']}" if mapping is not None else
          f"r={args.r}, c={args.c}")
    lines = [f"conditional Gaussian equivalence (15): student {args.student}, {rc}",
             f"{'kappa':>10}  {'mu0':<{(args.dps or 15) + 8}} {'mu1':<{(args.dps or 15) + 8}} mu*^2"]
    for i, k in enumerate(args.kappa):
        lines.append(f"{k:>10}  {d['mu0'][i]:<{(args.dps or 15) + 8}} {d['mu1'][i]:<{(args.dps or 15) + 8}} "
                     f"{d['mustar2'][i]}")
    emit(args, d, "\n".join(lines))
    return 0


@command(COMMANDS, "mapping", "network -> sRF parameters r, c, gamma (Result 3.1 of [CPDKLZL24]) with error estimates")
def _setup_mapping(p):
    p.add_argument("--student", required=True)
    p.add_argument("--teacher", required=True)
    add_exact(p, ("--alpha0", "n0/d of the gradient step ('inf' allowed)"), ("--eta", "learning rate eta~ (eta = eta~ p)"))
    p.add_argument("--noise-var", type=exact_arg, default="0", help="label-noise variance Delta >= 0")
    p.add_argument("--c-formula", choices=["corrected", "v1"], default="corrected")
    p.add_argument("--allow-non-odd", action="store_true")
    _dps_arg(p, 15)
    add_json(p)
    return _run_mapping


@command(COMMANDS, "cge", "mu0, mu1, mu*^2 of the conditional Gaussian equivalence (15) at given kappa")
def _setup_cge(p):
    rcg_args(p, need_teacher=False)
    p.add_argument("--kappa", required=True, type=exact_list, help="kappa values, e.g. '0,1/2,1'")
    _dps_arg(p)
    add_json(p)
    return _run_cge


@command(COMMANDS, "srf", "sRF saddle point and test error (Result 3.3 of [CPDKLZL24])")
def _setup_srf(p):
    rcg_args(p)
    add_exact(p, ("--alpha", "n/d"), ("--beta", "p/d"), ("--lam", "ridge lambda > 0 (sum loss)"))
    model_args(p)
    add_readout(p, bulks=True)
    add_table(p)
    p.add_argument("--loss", default=None, help="readout loss (docs/theory/srf-theory.md §4.9): square (default), "
                   "logistic, hinge, or an expression in y, yhat (float64, noiseless labels; checked on entry: convex "
                   "in yhat, bounded below, finite; kinks such as Abs, Max allowed, §13; write --loss=-EXPR for a "
                   "leading minus); adds class_error, train_loss")
    return _run_srf


@command(COMMANDS, "bounds", "upper (26) / lower (27) bounds, eta-optimised (28), best linear baseline")
def _setup_bounds(p):
    rcg_args(p)
    p.add_argument("--optimize-eta", action="store_true")
    p.add_argument("--eta-max", type=exact_arg, default="10", help="largest learning rate of the (28) search")
    p.add_argument("--optimize-bias", action="store_true",
                   help="the lower bound (27) minimised over a common first-layer bias b (docs/theory/srf-theory.md §4.9)")
    p.add_argument("--bias-max", type=exact_arg, default="3", help="the bias search range [-b, b] (at most 20)")
    add_readout(p)
    add_table(p)
    _dps_arg(p)
    add_json(p)
    return _run_bounds


@command(COMMANDS, "spectrum", "bulk density of Phi^T Phi / p, Stieltjes transform at -lambda, mean spike (docs/theory/srf-theory.md §7)")
def _setup_spectrum(p):
    rcg_args(p, need_teacher=False)
    add_exact(p, ("--alpha", "n/d"), ("--beta", "p/d"))
    p.add_argument("--z", type=exact_grid("--z"), help="grid of real parts x ('a:b:k', exact: each x is read as typed); "
                   "default automatic")
    p.add_argument("--lam", type=exact_grid("--lam"), default=["0.1", "0.5", "1", "3"],
                   help="lambdas for V2(-lambda) (exact)")
    p.add_argument("--d", type=int_in("--d", 1, 10**9), help="dimension, to report the mean spike location n E mu0^2")
    p.add_argument("--csv", type=output_path, help="also write the density table (x, density, error) as CSV")
    add_readout(p)
    _dps_arg(p)
    add_json(p)
    return _run_spectrum
