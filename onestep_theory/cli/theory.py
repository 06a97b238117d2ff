"""``onestep-theory resolvent`` and ``onestep-theory gains`` (spike theory, docs/theory/spike-theory.md §§6–8)."""

from __future__ import annotations

import warnings

from .common import add_dps, add_exact, add_json, command, emit, exact_arg, int_in
from ..core.errors import InvalidParameterError


__all__ = ["COMMANDS"]

COMMANDS: dict = {}


def _run_resolvent(args):
    import mpmath

    from ..core.exact import nstr
    from ..core.results import digits_of
    from ..spikes.resolvent import resolvent

    r = resolvent(args.student, args.phi, args.psi, args.lam, args.dps)
    full = r.to_dict()
    d = {k: full[k] for k in ("m1", "m2", "dm1_dlam", "dm2_dlam", "c1", "c_gt1", "residual", "iterations", "method",
                              "dps")}
    d.update(student=args.student, phi=args.phi, psi=args.psi, lam=args.lam, provenance=r.provenance,
             errors={k: e for k, e in full["errors"].items() if k != "roots"},
             digits={})
    # the digits of the printed pair (value as printed, its printed error), never more than are printed
    d["digits"] = {k: digits_of(mpmath.mpf(d[k]), mpmath.mpf(e)) for k, e in d["errors"].items()}
    text = "\n".join(f"{k:<9} = {d[k]}   +/- {d['errors'][k]}" for k in ("m1", "m2", "dm1_dlam", "dm2_dlam")) + \
        f"\n(student {args.student}: c1={d['c1']} +/- {d['errors']['c1']}, c_>1={d['c_gt1']} +/- " \
        f"{d['errors']['c_gt1']}; residual {nstr(r.residual, 3)}, {r.iterations} Newton step(s))"
    emit(args, d, text)
    return 0


def _run_gains(args):
    from ..spikes.gains import gains

    if args.symbolic_lambda and args.test_form != "corrected":
        raise InvalidParameterError("test_form", args.test_form, "'corrected' with --symbolic-lambda")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        g = gains(args.student, args.teacher, args.phi, args.psi, args.lam, ell=args.ell, alpha=args.alpha,
                  noise_var=args.noise_var, dps=args.dps, test_form=args.test_form, absent_spikes=args.absent_spikes,
                  center=args.center, allow_uncentered=args.allow_uncentered, symbolic=args.symbolic)
    if args.symbolic_lambda:         # closed forms of the corrected Lambda_k (docs/theory/spike-theory.md §8.5)
        from ..spikes.lambda_symbolic import lambda_closed_forms

        g.symbolic.update(lambda_closed_forms(g.ell, tuple(g.dropped), centered_teacher=not args.allow_uncentered))
    d = g.to_dict()
    e = d["errors"]
    lines = [f"student {g.student}, teacher {g.teacher}, phi={args.phi}, psi={args.psi}, lam={args.lam}, "
             f"noise_var={args.noise_var}, ell={g.ell}   (value +/- error, the error including the rounding)"]
    for k, (v, err) in enumerate(zip(d["delta"], e["delta"]), 1):
        lines.append(f"Delta_{k}  = {v}   +/- {err}")
    for k, (v, err, ok) in enumerate(zip(d["lambda_test"], e["lambda_test"], d["lambda_validated"]), 1):
        lines.append(f"Lambda_{k} = {v}   +/- {err}" + ("" if ok else "   (unvalidated)") + f"   [{g.test_form}]")
    lines.append(f"baseline L_tr(F0) = {d['baseline_train']}   +/- {e['baseline_train']}")
    lines.append(f"baseline L_te(F0) = {d['baseline_test']}   +/- {e['baseline_test']}")
    for w in g.warnings:
        lines.append(f"note: {w}")
    for k, v in g.symbolic.items():
        lines.append(f"{k} = {v['sympy']}\n  LaTeX: {v['latex']}")
    emit(args, d, "\n".join(lines))
    return 0


@command(COMMANDS, "resolvent", "random-features resolvent traces m1, m2 and their lambda-derivatives (docs/theory/spike-theory.md §6)")
def _setup_resolvent(p):
    p.add_argument("--student", required=True)
    add_exact(p, ("--phi", "d/n (exact strings such as 1/2 welcome)"), ("--psi", "d/N"), ("--lam", "ridge lambda > 0"))
    add_dps(p)
    add_json(p)
    return _run_resolvent


@command(COMMANDS, "gains", "training-loss gains Delta_l and test-error gains Lambda (docs/theory/spike-theory.md §§7-8)")
def _setup_gains(p):
    p.add_argument("--student", required=True)
    p.add_argument("--teacher", required=True)
    p.add_argument("--noise-var", type=exact_arg, default="0")
    add_exact(p, ("--phi", "d/n"), ("--psi", "d/N"), ("--lam", "ridge lambda > 0"))
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--ell", type=int_in("--ell", 1, 8), help="number of spikes")
    g.add_argument("--alpha", type=exact_arg, help="step-size exponent (eta ~ n^alpha); ell = its window")
    p.add_argument("--test-form", choices=["corrected", "slide"], default="corrected")
    p.add_argument("--absent-spikes", choices=["refuse", "formal", "drop"], default="refuse",
                   help="what to do when c_k = 0 for some k <= ell (default refuse)")
    p.add_argument("--center", action="store_true", help="centre student and teacher explicitly")
    p.add_argument("--allow-uncentered", action="store_true", help="keep a teacher offset (unvalidated)")
    p.add_argument("--symbolic", action="store_true", help="also print the closed forms of Delta_1..Delta_l")
    p.add_argument("--symbolic-lambda", action="store_true",
                   help="also print the closed forms of the corrected Lambda_1..Lambda_l (combine with --symbolic)")
    add_dps(p)
    add_json(p)
    return _run_gains
