"""``onestep-theory check`` (a printed formula against a quantity), ``sweep`` (any quantity over a grid) and
``convert`` (parameters between the papers' conventions), ``srf-curve`` (the sRF learning curve) (docs/theory/checking.md,
docs/theory/conventions.md, docs/theory/srf-theory.md)."""

from __future__ import annotations

import json

from .common import (add_json, add_table, cli_context, command, emit, exact_arg, exact_grid, int_in, output_path,
                     plot_path, rcg_kw, resolve_args, table_form, typed_echo)
from .srf import empirical_bulk, model_args, rcg_args, solver_kw

__all__ = ["COMMANDS"]

COMMANDS: dict = {}

def _run_curve(args):
    from ..core.results import serialize, vouch, vouched, write_csv
    from ..srf.optimal.bounds import best_linear_checked
    from ..srf import srf_sweep

    from ..core.errors import InvalidParameterError

    if args.sweep in ("eta", "alpha0") and args.values and getattr(args, args.sweep) is None:
        import argparse                                 # the swept one need not be given too (it is replaced)

        kw = rcg_kw(argparse.Namespace(**{**vars(args), args.sweep: args.values[0]}))
    else:
        kw = rcg_kw(args)
    if args.alphas is not None and (args.sweep is not None or args.values is not None):
        raise InvalidParameterError("sweep", args.sweep, "either --alphas LIST, or --sweep PARAM --values LIST, not both")
    if (args.sweep is None) != (args.values is None):
        raise InvalidParameterError("sweep", args.sweep, "--sweep PARAM together with --values LIST")
    values = args.alphas if args.alphas is not None else args.values
    if values is None:
        raise InvalidParameterError("values", None, "--alphas, or --sweep PARAM --values LIST")
    fixed = dict(alpha=args.alpha, beta=args.beta, lam=args.lam, dps=args.dps, **kw, **solver_kw(args))
    if args.spectrum_mode == "empirical":
        if args.sweep in ("eta", "alpha0", "beta", "noise_var"):
            raise InvalidParameterError("sweep", args.sweep, "alpha or lam with --spectrum-mode empirical "
                                        "(the sampled bulk is fixed by beta, c, gamma)")
        rr, cc, gg, _ = resolve_args(args)
        for k in ("alpha0", "eta"):
            fixed.pop(k, None)
        fixed.update(r=rr, c=cc, gamma=gg, empirical=empirical_bulk(args, (rr, cc, gg), args.beta))
    param = "alpha" if args.alphas is not None else args.sweep
    fixed.pop(param, None)
    if param in ("eta", "alpha0") and "r" in fixed:
        raise InvalidParameterError("sweep", param, "alpha, beta or lam when r, c, gamma are given")
    if param in ("eta", "alpha0"):
        fixed.update(alpha0=args.alpha0, eta=args.eta)
        fixed.pop(param)
    extra = _curve_overlays(args, param)          # checked, a study's points read: before the solves
    sols = srf_sweep(args.student, args.teacher, param, values, **fixed)
    bl = vouched(*best_linear_checked(args.teacher, args.dps), args.dps)
    rows = []
    for v, s in zip(values, sols):                 # the fields of the row as to_dict prints them, and only those
        p = s.printed(("test_error", *s.order, "r", "c", "gamma"))
        rows.append({param: v, "test_error": p["test_error"][0], "abs_error": p["test_error"][1],
                     "digits": s.printed_digits(p["test_error"][0]), **{k: p[k][0] for k in s.order},
                     "r": p["r"][0], "c": p["c"][0], "gamma": p["gamma"][0], "iterations": s.iterations,
                     "best_linear": bl})
    ctx = cli_context(args, _curve_method(sols), sols[0].provenance)
    if args.csv:
        write_csv(args.csv, rows, ctx)
    out = {"sweep": param, "rows": rows, "fixed": {k: serialize(v) for k, v in fixed.items()}}
    if args.plot:
        from ..quantities.overlays import curve_figure

        caption = {k: getattr(args, k) for k in ("alpha0", "eta", "r", "c", "gamma", "alpha", "beta", "lam", "noise_var")
                   if getattr(args, k) is not None and k != param}
        out["plot"] = curve_figure(args.plot, student=args.student, teacher=args.teacher, param=param, values=values,
                                   sols=sols, fixed=fixed, caption=caption, with_=extra[0], extra=extra[1],
                                   row_norms=args.row_norms, width=args.width, dpi=args.dpi, command=ctx["command"])
    text = write_csv(None, rows, ctx).rstrip()
    if args.table:
        from ..quantities.table import latex_number, latex_table, tex_name, tex_text

        bl_tex = latex_number(*vouch(*best_linear_checked(args.teacher, args.dps), args.dps), table_form(args))
        given = {k: getattr(args, k) for k in ("alpha0", "eta", "r", "c", "gamma", "alpha", "beta", "lam", "noise_var")}
        text = out["table"] = latex_table(
            rows, [param, "test_error"], {"test_error": "abs_error"}, context=ctx, form=table_form(args),
            fixed={k: v for k, v in given.items() if v is not None and k != param},
            caption=f"sRF test error (Result 3.3) over {tex_name(param)}, student \\texttt{{{tex_text(args.student)}}}, teacher "
                    f"\\texttt{{{tex_text(args.teacher)}}}; best linear baseline {bl_tex}")
    emit(args, out, text)
    return 0


def _curve_method(sols) -> str:
    """The method line of an sRF curve's outputs: the solver, the digits asked (the solutions'), the kappa rule, the
    spectrum."""
    o, dps = sols[0].options, sols[0].dps
    levels = sorted({s.options.get("level") for s in sols if s.options.get("level") is not None})
    return (f"{sols[0].provenance.get('method')}; {'float64' if dps is None else f'{dps} digits'}; kappa rule "
            f"{o.get('kappa_nodes')} nodes ({o.get('inner')}), refinement level(s) {levels}; spectrum "
            f"{o.get('spectrum')}")




def _curve_overlays(args, param) -> tuple:
    """``(names, study overlays)`` of ``srf-curve --with``, checked, each ``study:STORE`` read (before the solves)."""
    from ..quantities.overlays import OVERLAYS_1D, check_curve_with, parse_with, study_overlays

    names = parse_with(args.with_, OVERLAYS_1D, study=True) if args.with_ is not None else []
    check_curve_with(names, plot=args.plot, row_norms=args.row_norms, param=param, given_rcg=args.r is not None,
                     width=args.width, dpi=args.dpi)
    studies = []
    for w in (n for n in names if n.startswith("study:")):
        from ..study.points import study_points

        given = {k: getattr(args, k) for k in ("alpha0", "eta", "r", "c", "gamma", "alpha", "beta", "lam", "noise_var")}
        studies += study_overlays(study_points(w[6:].strip(), param, given, args.student, args.teacher))
    return [n for n in names if not n.startswith("study:")], studies


def _width(text):
    import argparse
    import math

    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not 1 <= v <= 20:
        raise argparse.ArgumentTypeError(f"--width must be inches in [1, 20], got {text!r}")
    return v


def _add_figure(p, grid: bool):
    """The figure options of sweep (``grid``: the heatmap's) and srf-curve (docs/theory/checking.md §9)."""
    if grid:
        p.add_argument("--contours", help="heatmap contours: a number of levels, or the levels a,b,c")
        p.add_argument("--tol", dest="mask_tol", type=exact_arg, help="hatch the points whose error exceeds TOL x |value|")
    p.add_argument("--with", dest="with_", help="overlays: " + ("argmin (over the second parameter), eta-star (the eta "
                   "minimising the bounds, (28))" if grid else "best-linear, bounds, row-norms, study:STORE"))
    p.add_argument("--width", type=_width, default=3.4, help="figure width in inches, in [1, 20] (3.4: one column; 7: two)")
    p.add_argument("--dpi", type=int_in("--dpi", 50, 1200), default=300, help="PNG resolution (default 300)")


@command(COMMANDS, "srf-curve", "sRF learning curve over alpha (or a sweep of lam, beta, eta, alpha0) with warm starts")
def _setup_curve(p):
    rcg_args(p)
    p.add_argument("--alphas", type=exact_grid("--alphas"), help="alpha values: 'a,b,c' or 'start:stop:num' (exact)")
    p.add_argument("--sweep", choices=["alpha", "beta", "lam", "eta", "alpha0", "noise_var"],
                   help="sweep another parameter (with --values)")
    p.add_argument("--values", type=exact_grid("--values", infinite=True), help="values of the swept parameter "
                                                                              "('inf' for alpha0)")
    p.add_argument("--alpha", type=exact_arg, help="n/d when sweeping another parameter")
    p.add_argument("--beta", type=exact_arg, default="1")
    p.add_argument("--lam", type=exact_arg, default="1/10")
    p.add_argument("--csv", type=output_path, help="also write the table to this CSV file ('#' lines first: the "
                                                   "command, the parameters as typed, the version, the method)")
    add_table(p)
    p.add_argument("--plot", type=plot_path, help="the curve with its error band (PNG/PDF/SVG by suffix)")
    _add_figure(p, grid=False)
    model_args(p)
    return _run_curve


#: Flag -> parameter name of a quantity (docs/theory/checking.md §1).
_FIXED = {"phi": "phi", "psi": "psi", "lam": "lam", "noise_var": "noise", "alpha": "alpha", "beta": "beta",
          "alpha0": "alpha0", "eta": "eta"}


def _add_fixed(p):
    for flag in _FIXED:
        p.add_argument("--" + flag.replace("_", "-"), type=exact_arg, help=f"fixed {flag} (exact strings such as 1/3)")
    p.add_argument("--student", required=True)
    p.add_argument("--teacher")


def _fixed(args) -> dict:
    return {name: getattr(args, flag) for flag, name in _FIXED.items() if getattr(args, flag) is not None}


def _add_latex(p):
    p.add_argument("--latex", help="the formula as LaTeX, as the paper prints it (docs/theory/checking.md §7; needs "
                                   "the extra [latex])")
    p.add_argument("--symbol", action="append", default=[], metavar="NAME=MEANING",
                   help="what a TeX name means: a reading of an ambiguous name (sigma=noise) or an expression in "
                        "the formula names (kappa=c_gt1); repeatable")


def _tex_kw(args) -> dict:
    """``latex``, ``convention`` and ``symbols`` for check/sweep (the convention reaches them only with --latex)."""
    from ..core.errors import InvalidParameterError

    symbols = {}
    for item in args.symbol:
        name, eq, meaning = item.partition("=")
        if not eq or not name.strip() or not meaning.strip():
            raise InvalidParameterError("--symbol", item, "NAME=MEANING (e.g. sigma=noise)")
        if name.strip() in symbols:
            raise InvalidParameterError("--symbol", item, "each name once")
        symbols[name.strip()] = meaning.strip()
    if args.latex is None:
        if symbols:
            raise InvalidParameterError("--symbol", args.symbol[0], "only together with --latex")
        return {}
    return {"latex": args.latex, "convention": getattr(args, "convention", None), "symbols": symbols}


def _understood(u) -> list:
    """The report lines of a LaTeX formula as understood (before the verdict, so that a misreading shows)."""
    lines = [f"read as ({u['convention']} table): {u['formula']}", f"  LaTeX: {u['latex']}"]
    lhs = u.get("lhs")
    if lhs:
        what = {"quantity": f"the quantity {lhs['quantity']}", "unlisted": next(iter(lhs["names"].values())),
                "expression": f"an expression, checked as ({lhs['formula']}) - formula = 0"}
        lines.append(f"  left-hand side: {lhs['tex']} = {what[lhs['kind']]}")
    elif u.get("dropped"):
        lines.append(f"  left-hand side set aside: {u['dropped']}")
    for r in u.get("remarks") or []:
        lines.append(f"  remark set aside: {r}")
    lines.append("  names: " + "; ".join(f"{k} = {v}" for k, v in {**(lhs or {}).get("names", {}),
                                                                   **u["names"]}.items()))
    return lines


def _check_lines(res) -> list:
    """The report of one checked right-hand side."""
    lines = _understood(res.understood) if res.understood else []
    lines += [f"{res.status}: {res.verdict}", f"proof: {res.proof['status']} -- {res.proof['detail']}"
              + (f" ({res.proof['note']})" if res.proof.get("note") else ""),
              f"worst point: {res.worst['point']}: formula {res.worst['formula']}, "
              f"{res.against if not res.lhs or res.lhs['kind'] != 'expression' else res.lhs['formula']} "
              f"{res.worst['quantity']} (+/- {res.worst['quantity_error']})"]
    if res.sampled:
        lines.append("sampled: " + ", ".join(f"{k} in [{v.split(':')[0]}, {v.split(':')[1]}] ({v.split(':')[2]})"
                                             for k, v in res.sampled.items()))
    return lines


def _check(args):
    from ..core.errors import InvalidParameterError
    from ..quantities import check

    if (args.formula is None) == (args.latex is None):
        raise InvalidParameterError("formula", args.formula, "either FORMULA (the package's names) or --latex TEX")
    if args.formula is not None and args.against is None:
        raise InvalidParameterError("against", None, "the quantity FORMULA is checked against (--against)")
    res = check(args.formula, args.against, student=args.student, teacher=args.teacher, fixed=_fixed(args),
                over=args.over, n=args.n, dps=args.dps, simulate=args.simulate, sim_points=args.sim_points,
                sim_d=args.sim_d, sim_reps=args.sim_reps, seed=args.seed, ell=args.ell, **_tex_kw(args))
    out = res.to_dict()
    out["overall"], out["exit_code"] = res.overall, res.exit_code
    if args.plot:
        out["plot"] = _plot_check(res, args.plot)
    lines = _check_lines(res)
    for k, part in enumerate(res.parts, 2):
        lines += [f"-- part {k} of the display --"] + _check_lines(part)
    if res.parts:
        lines.append(f"overall: {res.overall}")
    for s in res.simulation:
        if "note" in s:
            lines.append(f"simulation at {s['point']}: {s['note']}")
            continue
        lines.append(f"simulation at {s['point']} (d={s['d']}, {s['reps']} reps): {s['sim_mean']:.6g} +- "
                     f"{s['sim_se']:.2g}; z(formula) = {s['z_formula']:+.1f}, z({res.against}) = {s['z_quantity']:+.1f}")
    if args.report:
        with open(args.report, "w") as fh:
            fh.write(json.dumps(typed_echo(args, out), indent=1) if args.report.endswith(".json") else
                     "\n".join([f"# {cli_context(args)['command']}"] + lines) + "\n")   # with the command as typed
    emit(args, out, "\n".join(lines))
    return res.exit_code


def _plot_check(res, path):
    from ..core.errors import InvalidParameterError
    from ..core.plotting import plotting

    plt = plotting()
    if plt is None:
        raise InvalidParameterError("--plot", path, "a file, with matplotlib installed")
    q = [float(r["quantity"]) for r in res.points]
    f = [float(r["formula"]) for r in res.points]
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot(q, f, "o", ms=4, label="points")
    lo, hi = min(q + f), max(q + f)
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.6, label="formula = quantity")
    ax.set_xlabel(f"{res.against} (package)")
    ax.set_ylabel("formula")
    ax.set_title(res.verdict[:80], fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return str(path)


@command(COMMANDS, "check", "check a printed formula or equation against a quantity: symbolic proof, points, "
                            "simulation; exit status like diff")
def _setup_check(p):
    p.description = ("Check a printed formula or equation against the package. Exit status like diff/cmp: 0 the "
                     "formula is identical to the quantity (proof) or agrees at every point, 1 it differs, 2 bad "
                     "input, 3 numerical failure (docs/theory/checking.md §4, §7.5).")
    p.add_argument("formula", nargs="?", help="SymPy expression in the quantity's symbols (docs/theory/checking.md "
                                              "§2); or give --latex")
    p.add_argument("--against", help="the quantity (delta_2, lambda_1, m1, c, test_error, ...); optional when the "
                                     "--latex equation's left-hand side names it")
    p.add_argument("--ell", type=int_in("--ell", 1, 8), help="the window ell of \\Delta_\\ell, \\Lambda_\\ell, "
                                                             "\\mathcal L(\\mathbf F) in --latex")
    _add_latex(p)
    _add_fixed(p)
    p.add_argument("--over", help="ranges sampled, e.g. phi=0.1:10,psi=0.1:10,lam=1e-3:10 (log where natural)")
    p.add_argument("--n", type=int_in("--n", 1, 10000), default=64, help="points (default 64)")
    p.add_argument("--dps", type=int_in("--dps", 15, 60), default=15, help="digits compared (default 15)")
    p.add_argument("--simulate", action="store_true", help="also simulate the quantity at a few points")
    p.add_argument("--sim-points", type=int_in("--sim-points", 1, 20), default=3)
    p.add_argument("--sim-d", type=int_in("--sim-d", 20, 4000), default=400, help="simulation size d")
    p.add_argument("--sim-reps", type=int_in("--sim-reps", 2, 100), default=4)
    p.add_argument("--seed", type=int_in("--seed", 0, 2**31 - 1), default=0)
    p.add_argument("--plot", type=plot_path, help="formula against the quantity (PNG/PDF/SVG)")
    p.add_argument("--report", type=output_path, help="write the report (.json: JSON, else text)")
    add_json(p)
    return _check


def _sweep(args):
    from ..core.errors import InvalidParameterError
    from ..quantities import sweep
    from ..quantities.overlays import OVERLAYS_2D, check_sweep_plot, parse_contours, parse_with

    contours = parse_contours(args.contours) if args.contours is not None else None     # all checked before the work
    with_ = parse_with(args.with_, OVERLAYS_2D) if args.with_ is not None else []
    if args.plot:
        check_sweep_plot(args.over, contours=contours, with_=with_, width=args.width, dpi=args.dpi)
    elif contours is not None or with_ or args.mask_tol is not None:
        raise InvalidParameterError("--plot", None, "a plot file for --contours, --tol, --with")
    if args.mask_tol is not None:
        from ..core.exact import check_range

        check_range(args.mask_tol, "--tol", 0, None)
    res = sweep(args.quantity, args.over, student=args.student, teacher=args.teacher, fixed=_fixed(args),
                dps=args.dps, formula=args.formula, **_tex_kw(args))
    out = res.to_dict()
    ctx = cli_context(args)                  # the command line and the parameters as typed
    if args.csv:
        res.to_csv(args.csv, context=ctx)
        out["csv"] = args.csv
    if args.plot:
        from ..quantities.overlays import sweep_figure

        out["plot"] = sweep_figure(res, args.plot, contours=contours, tol=args.mask_tol, with_=with_,
                                   width=args.width, dpi=args.dpi, command=ctx["command"])
    text = res.to_csv(context=ctx) + f"# {len(res)} point(s) in {res.seconds:.1f} s"
    if res.understood:
        text = "\n".join("# " + line for line in _understood(res.understood)) + "\n" + text
    if args.table:
        text = out["table"] = res.to_latex(ctx, table_form(args))
    emit(args, out, text if not args.csv else f"{len(res)} row(s) written to {args.csv}")
    return 0


@command(COMMANDS, "sweep", "any quantity over a grid of its parameters: CSV/JSON, plot")
def _setup_sweep(p):
    p.add_argument("quantity", help="delta_2, lambda_1, m1, train_loss_f0, r, c, test_error, bound_upper, ...")
    p.add_argument("--over", required=True, help="grid, e.g. lam=1e-3:10:40 (a:b:n[:log|lin]; several "
                                                 "comma-separated names make a product grid)")
    _add_fixed(p)
    p.add_argument("--formula", help="also the value of this formula (the package's names) at every point")
    _add_latex(p)
    p.add_argument("--dps", type=int_in("--dps", 15, 60), default=15, help="digits (default 15)")
    p.add_argument("--csv", type=output_path, help="write the rows as CSV ('#' lines first: the command, the "
                                                   "parameters as typed, the version, the method)")
    add_table(p)
    p.add_argument("--plot", type=plot_path, help="a curve (one swept parameter) or a heatmap (two), PNG/PDF/SVG")
    _add_figure(p, grid=True)
    add_json(p)
    return _sweep


def _convert(args):
    from ..core.conventions import CONVENTIONS, convert, round_trip
    from ..core.errors import InvalidParameterError

    params = {}
    for item in args.params:
        if "=" not in item:
            raise InvalidParameterError("params", item, f"NAME=VALUE items of {args.source}: "
                                                        f"{', '.join(CONVENTIONS.get(args.source, ()))}")
        k, v = item.split("=", 1)
        params[k.strip()] = v.strip()
    out = convert(params, args.source, args.target)
    back = round_trip(params, args.source, args.target)
    payload = {"from": args.source, "to": args.target, "input": params, "output": {k: str(v) for k, v in out.items()},
               "round_trip_exact": back, "references": ["docs/theory/conventions.md §1"]}
    text = "\n".join(f"{k} = {v}" for k, v in payload["output"].items())
    text += f"\n(round trip {args.target} -> {args.source} {'exact' if back else 'NOT exact'})"
    emit(args, payload, text)
    return 0


@command(COMMANDS, "convert", "parameters between the conventions of Moniri, Cui, Dandi and Ba et al. (exact)")
def _setup_convert(p):
    p.add_argument("--from", dest="source", required=True, help="cui24, dandi24, moniri23 or ba22")
    p.add_argument("--to", dest="target", required=True, help="cui24, dandi24, moniri23 or ba22")
    p.add_argument("params", nargs="+", help="NAME=VALUE, exact strings kept exact (alpha=2 beta=1/2 lam=1/10)")
    add_json(p)
    return _convert
