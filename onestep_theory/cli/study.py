"""``onestep-theory study`` (a finite-size study of a simulation protocol, resumable, serial or on Dask) and
``onestep-theory store ls|show|export`` (the results store) (docs/theory/numerics.md §8)."""

from __future__ import annotations

import json
import os
import sys

from .common import (Progress, add_json, cli_context, command, emit, float_arg, float_list, int_in, output_path,
                     plot_path)

__all__ = ["COMMANDS"]

COMMANDS: dict = {}

#: The protocols of ``study.protocols.PROTOCOLS``, listed here so that ``study --help`` loads no simulator
#: (tests/test_cli_startup.py checks the two agree).
PROTOCOL_NAMES = ("giant-step", "srf", "spike-model", "traces", "ablation")

#: Command-line flag -> protocol parameter name.
_PARAMS = {"student": "student", "teacher": "teacher", "alpha": "alpha", "beta": "beta", "lam": "lam",
           "alpha0": "alpha0", "eta": "eta", "r": "r", "c": "c", "gamma": "gamma", "phi": "phi", "psi": "psi",
           "ell": "ell", "noise_var": "noise_var", "n_test": "n_test", "variants": "variants",
           "features": "features", "norm_slope": "norm_slope", "norm_noise": "norm_noise", "row_norms": "row_norms",
           "readout": "readout", "loss": "loss", "corrected": "corrected"}


def _params(args, pr):
    from ..core.errors import InvalidParameterError

    given = {name: getattr(args, flag) for flag, name in _PARAMS.items() if getattr(args, flag) is not None}
    unused = [n for n in given if n not in pr.required + pr.optional]
    if unused:
        raise InvalidParameterError("--" + unused[0].replace("_", "-"), given[unused[0]],
                                    f"a flag of another protocol ({pr.name} takes only "
                                    f"{', '.join('--' + n.replace('_', '-') for n in pr.required + pr.optional)})")
    return pr.check(given)


def _variants_arg(text):
    """``--variants``: a comma-separated list of ablation variants, checked and put in canonical order."""
    import argparse

    from ..core.errors import InvalidParameterError
    from ..simulate.ablation import variant_names

    try:
        names = [v for v in variant_names(text) if v != "network"]
    except InvalidParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not names:
        raise argparse.ArgumentTypeError("name at least one variant besides network (the network is always built)")
    return ",".join(names)


def _run(args):
    from ..core.errors import InvalidParameterError
    from ..core.results import vouch, write_csv
    from ..study import ResultStore, plan_study, protocol_of, run_study
    from ..study.plot import plot_study

    pr = protocol_of(args.protocol)
    params = _params(args, pr)
    if not all(float(v).is_integer() for v in args.d):
        raise InvalidParameterError("--d", ",".join(f"{v:g}" for v in args.d), "integer sizes, e.g. 250,500,1000")
    sizes = [int(v) for v in args.d]
    if not all(float(k).is_integer() and 2 <= k <= 1000 for k in args.reps) or len(args.reps) not in (1, len(sizes)):
        raise InvalidParameterError("--reps", ",".join(f"{k:g}" for k in args.reps),
                                    "one integer in [2, 1000], or one per size")
    reps = [int(k) for k in args.reps] * (len(sizes) if len(args.reps) == 1 else 1)
    if args.scheduler is not None and args.workers is not None:
        raise InvalidParameterError("--workers", args.workers, "not given with --scheduler (the cluster has its own)")
    if not 0 < args.tolerance <= 100:
        raise InvalidParameterError("--tolerance", f"{args.tolerance:g}", "a percentage of the theory in (0, 100]")
    if not 0 <= args.max_wait <= 7 * 86400:
        raise InvalidParameterError("--max-wait", f"{args.max_wait:g}", "seconds in [0, 604800]")
    plan_study(args.protocol, params, sizes, reps, key=args.key, compare=args.compare,
               exponents=tuple(args.exponents), workers=args.workers)   # every check before the store is touched
    fresh = not os.path.exists(args.store)
    try:
        res = _execute(args, params, sizes, reps, ResultStore, protocol_of, run_study)
    except InvalidParameterError:
        if fresh and os.path.exists(args.store) and not _rows(args.store, ResultStore):
            for suffix in ("", "-wal", "-shm"):     # a study refused on its parameters leaves no empty store behind
                if os.path.exists(args.store + suffix):
                    os.remove(args.store + suffix)
        raise
    out = res.to_dict()
    run = out["run"]
    out["run"] = {"executed": run["executed"], "reused": run["reused"]}    # stdout: the same for the same study
    out["store"] = args.store
    if args.plot:
        out["plot"] = plot_study(res, args.plot)
    if args.csv:
        # per size, then the extrapolation (d = inf) with its verdict; gap and se absolute, *_pct in % of the theory
        cols = ["comparison", "d", "reps", "gap", "se", "relative_gap", "gap_pct", "se_pct", "detectable_gap",
                "detectable_gap_pct", "status", "verdict"]
        table = []
        for name, comp in res.comparisons.items():
            table += [[name, r["d"], r["reps"], repr(r["gap"]), repr(r["se"]), repr(r["relative_gap"]),
                       repr(100 * r["relative_gap"]), repr(100 * r["se"] / abs(res.theory)) if res.theory else
                       "", "", "", "", ""] for r in comp["sizes"]]
            f = comp["fit"]
            if f is not None:
                table.append([name, "inf", "", repr(f["g_inf"]), repr(f["se"]), "" if f["g_inf_pct"] is None else
                              repr(f["g_inf_pct"] / 100), *(("", "") if f["g_inf_pct"] is None else
                                                            (repr(f["g_inf_pct"]), repr(f["se_pct"]))),
                              repr(f["detectable_gap"]), "" if f["detectable_gap_pct"] is None else
                              repr(f["detectable_gap_pct"]), f["status"], f["verdict"]])
        write_csv(args.csv, [dict(zip(cols, r)) for r in table], cli_context(args, res.provenance.get("method"),
                                                                             res.provenance), cols)
    if not args.quiet:
        print(f"study: {run['executed']} task(s) run ({run['executor']}), {run['reused']} reused, "
              f"{run['seconds']:.1f} s", file=sys.stderr)
    th_text, th_err = vouch(res.theory, res.theory_error)     # its earned digits (docs/theory/numerics.md §1)
    lines = [f"finite-size study, {res.protocol}: theory {res.key} = {th_text} (+/- {th_err}); "
             f"{run['executed']} task(s) run ({run['executor']}), {run['reused']} reused from {args.store}"]
    for name, comp in res.comparisons.items():
        what = {"row_norms": "theory corrected for the row norms (docs/theory/srf-theory.md §4.11)",
                "uncorrected": "uncorrected theory (Result 3.3)"}.get(name, name)
        lines.append(f"[{'*' if name == res.compare else ' '}] simulation - {what}"
                     + (" (paired, on each task's own weights)" if "theory" not in comp else ""))
        lines.append(f"{'d':>8} {'reps':>5} {'gap':>12} {'se':>10} {'% of theory':>12}")
        lines += [f"{r['d']:>8} {r['reps']:>5} {r['gap']:>12.5g} {r['se']:>10.2g} {r['relative_gap']:>12.3%}"
                  + (f"  ({r['missing']} task(s) without this reference: its solver found no fixed point)"
                     if r.get("missing") else "") for r in comp["sizes"]]
        fit = comp["fit"]
        if fit is not None:
            lines.append(f"    d -> inf: g_inf = {fit['g_inf']:.4g} +- {fit['se']:.2g} ({res.key}, absolute)"
                         + ("" if fit["g_inf_pct"] is None else f" = {fit['g_inf_pct']:+.2f} +- {fit['se_pct']:.2g} % "
                            "of the theory") + f"; chi2 {fit['chi2']:.2f} on {fit['dof']} dof")
            lines.append(f"    verdict: {fit['verdict']}")
        else:
            lines.append(f"    no extrapolation, no verdict: it needs more than {len(args.exponents)} sizes and a "
                         "standard error > 0 at every size")
    lines += [f"note: {n}" for n in res.notes]
    lines.append(f"(gap and se in units of {res.key}; '% of theory' relative to {th_text}; a verdict 'inside' "
                 f"needs a detectable gap <= --tolerance {args.tolerance:g} %)")
    emit(args, out, "\n".join(lines))
    return 0


@command(COMMANDS, "study", "finite-size study: gaps to the theory on a ladder of d, extrapolated to d -> inf")
def _setup(p):
    p.add_argument("protocol", choices=PROTOCOL_NAMES)
    p.add_argument("--student", required=True)
    p.add_argument("--teacher", help="teacher (giant-step, srf, spike-model)")
    for name, hlp in (("--alpha", "n/d (giant-step, srf)"), ("--beta", "p/d (giant-step, srf)"),
                      ("--lam", "ridge lambda > 0"), ("--alpha0", "n0/d (giant-step, ablation)"),
                      ("--eta", "eta tilde (giant-step, ablation)"), ("--r", "sRF spike (srf)"), ("--c", "sRF bulk variance (srf)"),
                      ("--gamma", "sRF overlap (srf)"), ("--phi", "d/n (spike-model, traces)"),
                      ("--psi", "d/N (spike-model, traces)"), ("--noise-var", "label noise variance")):
        p.add_argument(name, type=float_arg(name), help=hlp)
    p.add_argument("--ell", type=int_in("--ell", 0, 8), help="number of spikes (spike-model)")
    p.add_argument("--n-test", type=int_in("--n-test", 100, 10**7), help="test points per task")
    p.add_argument("--features", choices=["network", "cgep"],
                   help="srf: the sRF network (default) or its conditional Gaussian equivalent (Result 3.2)")
    p.add_argument("--norm-slope", type=float_arg("--norm-slope"),
                   help="srf: row-norm heterogeneity, slope k of the squared row norms against w0_i.v, v the spike "
                        "direction (the ablation's norm_slope_v; docs/theory/srf-theory.md §2, Row norms)")
    p.add_argument("--norm-noise", type=float_arg("--norm-noise"),
                   help="srf: row-norm heterogeneity, the spread s of the rest (times sqrt d)")
    p.add_argument("--row-norms", action="store_const", const=True, default=None,
                   help="giant-step, ablation: compare with the theory corrected for the step's row norms "
                        "(docs/theory/srf-theory.md §4.11); the stored tasks are the same")
    p.add_argument("--corrected", action="store_const", const=True, default=None,
                   help="giant-step: also the paired references at each network's measured parameters with the "
                        "measured row norms, on the trained bulk, and both (docs/studies/paired-map.md; new tasks)")
    p.add_argument("--readout", help="giant-step, srf: the initial readout a0 = u/sqrt(p), 'uniform' (default) or "
                                     "'value:fraction,...' e.g. '1:0.5,2:0.5', compared with the asymptotic K-group "
                                     "theory (docs/theory/srf-theory.md §8.1; no paired references)")
    p.add_argument("--loss", help="giant-step: the readout loss, square (default), logistic, hinge or an expression in "
                                  "y, yhat (docs/theory/srf-theory.md §4.9); adds --key class_error")
    p.add_argument("--variants", type=_variants_arg,
                   help="ablation: the variants to build, comma-separated (default all; docs/studies/mechanism.md)")
    p.add_argument("--key", help="simulated quantity (default: test_error; class_error with --loss; delta or "
                                 "lambda_test; m1, m2, ...)")
    p.add_argument("--compare", default="theory", help="theory (default), or a paired reference: f1, measured "
                                                        "(giant-step); a variant such as srf or no_self (ablation; "
                                                        "docs/studies/mechanism.md); every one is reported")
    p.add_argument("--d", type=float_list, required=True, help="sizes, e.g. 250,500,1000")
    p.add_argument("--reps", type=float_list, default=[4], help="seeds per size: one count, or one per size "
                                                               "(e.g. 24,16,8; default 4)")
    p.add_argument("--target-se", type=float_arg("--target-se"),
                   help="add seeds at every size until the standard error of the gap is at most this")
    p.add_argument("--max-reps", type=int_in("--max-reps", 2, 1000), default=256,
                   help="most seeds per size with --target-se (default 256)")
    p.add_argument("--tolerance", type=float_arg("--tolerance"), default=1.0,
                   help="percent of the theory (default 1): a study that cannot detect a gap this small (95 %% "
                        "confidence, 80 %% power) is reported as underpowered, never as agreement")
    p.add_argument("--max-wait", type=float_arg("--max-wait"), default=3600.0,
                   help="seconds to wait for tasks claimed by a concurrent run of the study without one finishing "
                        "(default 3600; then exit 3)")
    p.add_argument("--seed", type=int_in("--seed", 0, 2**63 - 1), default=0, help="root seed")
    p.add_argument("--exponents", type=float_list, default=[0.5, 1.0], help="exponents e_k of the d^-e_k terms")
    p.add_argument("--workers", type=int_in("--workers", 1, 256),
                   help="1: serial; N: a local Dask cluster of N processes (default: one per core, serial without "
                        "the [distributed] extra)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:8786)")
    p.add_argument("--store", type=output_path, default="onestep-study.sqlite",
                   help="results store (SQLite; default onestep-study.sqlite)")
    p.add_argument("--resume", action="store_true", help="continue a study already in the store (no task runs twice)")
    p.add_argument("--plot", type=plot_path, help="plot of gap vs d^-1/2 with the fit (PNG/PDF/SVG)")
    p.add_argument("--csv", type=output_path, help="per-size gaps of every comparison as CSV")
    p.add_argument("--quiet", action="store_true")
    add_json(p)
    return _run


def _execute(args, params, sizes, reps, ResultStore, protocol_of, run_study):
    """Run the study in its store (``--resume`` checked against what the store holds)."""
    from ..core.errors import InvalidParameterError
    with ResultStore(args.store) as st:
        tag = dict(protocol_of(args.protocol).simulation_params(params), root_seed=args.seed)
        done = sum(st.has(args.protocol, tag, d, k) for d, n in zip(sizes, reps) for k in range(n))
        if done and not args.resume:
            raise InvalidParameterError("--store", args.store, f"a new store, or --resume: it already holds {done} "
                                        "finished task(s) of this study")
        res = run_study(args.protocol, params, sizes, reps, key=args.key, compare=args.compare, store=st,
                        root_seed=args.seed, exponents=tuple(args.exponents), workers=args.workers,
                        scheduler=args.scheduler, progress=Progress("study", args.quiet, unit="task", eta=True),
                        target_se=args.target_se, max_reps=args.max_reps, tolerance=args.tolerance / 100,
                        max_wait=args.max_wait,
                        on_wait=None if args.quiet else lambda msg: print(f"study: {msg}", file=sys.stderr))
    return res


def _rows(path, ResultStore):
    """Whether the store at ``path`` holds any row (a store that cannot be read counts as holding some)."""
    try:
        with ResultStore(path, create=False) as st:
            return bool(st.count(all_versions=True))
    except Exception:
        return True


def _store(args):
    from ..study import ResultStore
    from ..study.store import canonical_json

    with ResultStore(args.path, create=False) as st:
        if args.action == "export":
            n = st.export(args.out or sys.stdout, args.format, protocol=args.protocol, all_versions=args.all_versions,
                          context=cli_context(args))
            if args.out:
                print(f"{n} task(s) written to {args.out}", file=sys.stderr)
            return 0
        rows = st.rows(args.protocol, all_versions=args.all_versions)
    studies = {}
    for r in rows:
        s = studies.setdefault((r["protocol"], r["version"], canonical_json(r["params"])), {})
        s[r["d"]] = s.get(r["d"], 0) + 1
    if args.action == "ls":
        listing = [{"protocol": pr, "version": v, "params": json.loads(params), "tasks": sum(c.values()),
                    "tasks_per_d": {str(d): c[d] for d in sorted(c)}} for (pr, v, params), c in studies.items()]
        text = "\n".join(f"{s['protocol']:<12} v{s['version']:<8} {s['tasks']:>5} task(s)  "
                         f"d: {', '.join(f'{d}x{k}' for d, k in s['tasks_per_d'].items())}\n    {s['params']}"
                         for s in listing) or f"{args.path}: no task stored"
        emit(args, {"store": args.path, "studies": listing}, text)
        return 0
    text = "\n".join(f"{r['protocol']:<12} d={r['d']:<6} k={r['seed_index']:<4} {r['seconds'] or 0:8.2f} s  "
                     f"{r['result']}" for r in rows) or f"{args.path}: no task stored"
    emit(args, {"store": args.path, "tasks": rows}, text)
    return 0


@command(COMMANDS, "store", "the results store of finite-size studies: ls | show | export")
def _setup_store(p):
    p.add_argument("action", choices=["ls", "show", "export"])
    p.add_argument("path", help="the store (SQLite file written by `study`)")
    p.add_argument("--protocol", help="only this protocol")
    p.add_argument("--all-versions", action="store_true", help="also rows of other package versions")
    p.add_argument("--format", choices=["csv", "json"], default="csv", help="export format (default csv)")
    p.add_argument("--out", type=output_path, help="export to this file (default: standard output)")
    add_json(p)
    return _store
