"""``onestep-theory simulate {resolvent,spikes,giant-step,srf,spectrum}`` (finite-size simulation)."""

from __future__ import annotations


from .common import add_debug, add_json, command, emit, exact_arg, float_arg, float_list, int_in, Progress

__all__ = ["COMMANDS"]


COMMANDS: dict = {}


def _common(p, seed=True):
    p.add_argument("--seed", type=int_in("--seed", 0, 2**63 - 1), default=0, help="root seed (default 0)")
    p.add_argument("--reps", type=int_in("--reps", 1, 100000), default=1, help="repetitions (default 1)")
    p.add_argument("--force", action="store_true",
                   help="run even if the estimated peak memory exceeds 80%% of the available memory (never beyond "
                        "the available memory itself)")
    p.add_argument("--quiet", action="store_true", help="no progress indicator on stderr")
    add_json(p)


def _sizes_spike(p):
    p.add_argument("--n", type=int_in("--n", 1, 10**7), help="samples per dataset")
    p.add_argument("--d", type=int_in("--d", 1, 10**7), help="input dimension")
    p.add_argument("--N", type=int_in("--N", 1, 10**7), help="width")
    p.add_argument("--phi", type=float_arg("--phi"), help="d/n")
    p.add_argument("--psi", type=float_arg("--psi"), help="d/N")


def _stat_text(res, theory=None):
    lines = [f"{res.protocol}: " + ", ".join(f"{k}={v}" for k, v in res.params.items()
                                            if k in ("student", "teacher", "n", "d", "N", "p", "n0", "lam"))
             + (f", readout={res.params['readout']['label']}" if res.params.get("readout", {}).get("kind", "uniform")
                != "uniform" else ""),
             f"{'quantity':<22} {'mean':>14} {'s.e.':>11}" + (f" {'theory':>14}" if theory else "")]
    for k, st in res.stats.items():
        se = st.se
        line = f"{k:<22} {st.mean:>14.8g} {se:>11.3g}" if se == se else f"{k:<22} {st.mean:>14.8g} {'-':>11}"
        if theory and k in theory:
            line += f" {float(theory[k]):>14.8g}"
        lines.append(line)
    lines.append(f"({res.reps} repetition(s), seed {res.seed}, {res.seconds:.1f} s)")
    return "\n".join(lines)


def _emit(args, res, theory=None):
    d = res.to_dict()
    if theory:
        from ..core.results import serialize

        d["theory"] = serialize(theory, 17)
    emit(args, d, _stat_text(res, theory))
    return 0


# --------------------------------------------------------------------------- sub-commands
def _run_resolvent(args):
    from ..simulate import sim_resolvent

    res = sim_resolvent(args.student, args.n, args.d, args.N, phi=args.phi, psi=args.psi, lam=args.lam,
                        bulk=args.bulk, init=args.init, seed=args.seed, reps=args.reps, force=args.force,
                        progress=Progress("simulate resolvent", args.quiet))
    return _emit(args, res)


def _run_spikes(args):
    from .. import simulate as S

    prog = Progress("simulate spikes", args.quiet)
    if args.model == "network":
        res = S.sim_spikes(args.student, args.teacher, args.n, args.d, args.N, phi=args.phi, psi=args.psi,
                           lam=args.lam, alpha=args.alpha, eta_scale=args.eta_scale, eta=args.eta,
                           noise_var=args.noise_var, gradient=args.gradient, n_test=args.n_test,
                           singular=args.singular, ell=args.ell or 2, seed=args.seed, reps=args.reps, force=args.force, progress=prog)
    else:
        res = S.sim_spike_model(args.student, args.teacher, args.n, args.d, args.N, phi=args.phi, psi=args.psi,
                                lam=args.lam, ell=args.ell if args.ell is not None else 2, mode=args.model,
                                bulk=args.bulk, alpha=args.alpha, eta_scale=args.eta_scale, eta=args.eta,
                                noise_var=args.noise_var, seed=args.seed, reps=args.reps, force=args.force, progress=prog)
    return _emit(args, res)


def _ratios(args, need_alpha0=False):
    """Sizes may be given by d and ratios (alpha, beta, alpha0) or by n, p, n0 (converted to ratios)."""
    from ..core.errors import InvalidParameterError

    for ratio, size in (("alpha", "n"), ("beta", "p")) + ((("alpha0", "n0"),) if need_alpha0 else ()):
        if getattr(args, size) is not None:
            setattr(args, ratio, getattr(args, size) / args.d)
        if getattr(args, ratio) is None:
            raise InvalidParameterError(ratio, None, f"a ratio > 0 (--{ratio}) or a size (--{size})")


def _readout_theory(th, spec):
    """Theory column of giant-step: Result 3.1 for the uniform readout; per group of a finite-support readout
    (docs/theory/srf-theory.md §8 step map) r_j = |u_j| r, c_j = 1 + u_j^2 (c - 1), gamma_j = sign(u_j) gamma,
    keyed like the simulator's group diagnostics (the overall keys then have no column); none for a Gaussian one."""
    from ..srf.grouped.readout import group_params, readout

    rd = readout(spec)
    if rd.is_uniform:
        return {"r": th.r, "c": th.c, "gamma": th.gamma}
    if rd.kind != "finite":
        return {}
    out = {}
    for v, (rj, cj) in zip(rd.values, group_params(th.r, th.c, rd)):
        sign = 1 if v > 0 else -1 if v < 0 else 0
        out.update({f"r[{v}]": abs(rj), f"c[{v}]": cj, f"gamma[{v}]": sign * th.gamma})
    return out


def _run_giant(args):
    from ..srf.features.mapping import srf_params
    from ..simulate import sim_giant_step

    _ratios(args, need_alpha0=True)
    lam = args.lam if len(args.lam) > 1 else args.lam[0]
    res = sim_giant_step(args.student, args.teacher, args.d, alpha0=args.alpha0, eta=args.eta, alpha=args.alpha,
                         beta=args.beta, lam=lam, noise_var=args.noise_var, n_test=args.n_test, seed=args.seed,
                         reps=args.reps, force=args.force, progress=Progress("simulate giant-step", args.quiet),
                         readout=args.readout, loss=args.loss)
    # theory column for comparison only: a non-odd student gets the (unvalidated) mapping with a warning
    th = srf_params(args.student, args.teacher, repr(res.params["alpha0"]), repr(args.eta), repr(args.noise_var),
                    strict_odd=False)
    return _emit(args, res, _readout_theory(th, args.readout))


def _srf_rcg(args):
    """(r, c, γ) from --r --c --gamma, or from --alpha0/--n0 and --eta by Result 3.1 (one home: resolve_rcg)."""
    from ..core.errors import InvalidParameterError
    from ..srf.features.mapping import resolve_rcg

    if args.n0 is not None:
        args.alpha0 = args.n0 / args.d
    if args.r is None and args.alpha0 is not None and getattr(args, "teacher", None) is None:
        raise InvalidParameterError("teacher", None, "a teacher expression (needed by the mapping)")
    text = (lambda v: None if v is None else repr(v))
    r, c, g, _ = resolve_rcg(args.student, getattr(args, "teacher", None), text(args.r), text(args.c), text(args.gamma),
                             text(args.alpha0), text(args.eta), text(args.noise_var))
    return float(r), float(c), float(g)


def _run_srf(args):
    from ..simulate import sim_srf

    _ratios(args)
    r, c, g = _srf_rcg(args)
    res = sim_srf(args.student, args.teacher, args.d, r=r, c=c, gamma=g, alpha=args.alpha, beta=args.beta,
                  lam=args.lam, noise_var=args.noise_var, n_test=args.n_test, seed=args.seed, reps=args.reps, force=args.force,
                  progress=Progress("simulate srf", args.quiet), readout=args.readout, loss=args.loss)
    return _emit(args, res)


def _run_spectrum(args):
    from ..simulate import sim_spectrum

    _ratios(args)
    r, c, g = _srf_rcg(args)
    res = sim_spectrum(args.student, args.d, r=r, c=c, gamma=g, alpha=args.alpha, beta=args.beta, lam=args.lam,
                       seed=args.seed, reps=args.reps, force=args.force,
                       progress=Progress("simulate spectrum", args.quiet), readout=args.readout)
    return _emit(args, res)


@command(COMMANDS, "simulate", "finite-size numpy simulation: resolvent, spikes, giant-step, srf, spectrum")
def _setup(p):
    sub = p.add_subparsers(dest="protocol", metavar="PROTOCOL", required=True, parser_class=type(p))
    add = sub.add_parser

    def protocol(name, help_text):
        q = add(name, help=help_text)
        add_debug(q)
        return q

    q = protocol("resolvent","traces m1, m2 and their lambda-derivatives (docs/theory/spike-theory.md §9.4)")
    q.add_argument("--student", required=True)
    _sizes_spike(q)
    q.add_argument("--lam", type=float_list, default=[0.5], help="ridge lambda(s) > 0 (list 'a,b' or 'a:b:k')")
    q.add_argument("--bulk", choices=["nonlinear", "gaussian"], default="nonlinear")
    q.add_argument("--init", choices=["sphere", "gaussian"], default="sphere")
    _common(q)
    q.set_defaults(_run=_run_resolvent)

    q = protocol("spikes","one-step network (protocol A) or Gaussian-equivalent spike model (B)")
    q.add_argument("--student", required=True)
    q.add_argument("--teacher", required=True)
    q.add_argument("--noise-var", type=float_arg("--noise-var"), default=0.0)
    _sizes_spike(q)
    q.add_argument("--lam", type=float_arg("--lam"), default=0.1)
    q.add_argument("--alpha", type=float_arg("--alpha"), help="step-size exponent: eta = c n^alpha")
    q.add_argument("--eta-scale", type=float_arg("--eta-scale"), default=1.0, help="c in eta = c n^alpha (default 1)")
    q.add_argument("--eta", type=float_arg("--eta"), help="explicit step size (overrides --alpha)")
    q.add_argument("--ell", type=int_in("--ell", 0, 8), help="number of spikes (models limit/finite)")
    q.add_argument("--model", choices=["network", "limit", "finite"], default="network",
                   help="network = protocol A; limit/finite = protocol B (default network)")
    q.add_argument("--bulk", choices=["gaussian", "nonlinear"], default="gaussian", help="bulk of protocol B")
    q.add_argument("--gradient", choices=["exact", "label_only", "rank_one"], default="exact")
    q.add_argument("--n-test", type=int_in("--n-test", 1, 10**8))
    q.add_argument("--singular", action="store_true", help="top singular values of F and spike overlaps")
    _common(q)
    q.set_defaults(_run=_run_spikes)

    for name, helptext, fn in (("giant-step", "one giant step + ridge, measured r, c, gamma (docs/theory/srf-theory.md §10.2)",
                                _run_giant),
                               ("srf", "direct spiked-random-features ridge (docs/theory/srf-theory.md §10.1)", _run_srf),
                               ("spectrum", "eigenvalues of Phi^T Phi / p (docs/theory/srf-theory.md §10.3)", _run_spectrum)):
        q = protocol(name, helptext)
        q.add_argument("--student", required=True)
        q.add_argument("--teacher", required=name == "giant-step")
        q.add_argument("--noise-var", type=float_arg("--noise-var"), default=0.0)
        q.add_argument("--d", type=int_in("--d", 1, 10**7), required=True)
        q.add_argument("--alpha", type=float_arg("--alpha"), help="n/d (or give --n)")
        q.add_argument("--beta", type=float_arg("--beta"), help="p/d (or give --p)")
        q.add_argument("--alpha0", type=float_arg("--alpha0"), help="n0/d (or give --n0)")
        q.add_argument("--n", type=int_in("--n", 1, 10**8), help="readout samples (instead of --alpha)")
        q.add_argument("--p", type=int_in("--p", 1, 10**8), help="width (instead of --beta)")
        q.add_argument("--n0", type=int_in("--n0", 1, 10**8), help="step batch (instead of --alpha0)")
        q.add_argument("--eta", type=float_arg("--eta"), required=name == "giant-step", help="eta tilde (eta = eta~ p)")
        if name != "giant-step":
            q.add_argument("--r", type=float_arg("--r"))
            q.add_argument("--c", type=float_arg("--c"))
            q.add_argument("--gamma", type=float_arg("--gamma"))
        if name == "srf":
            q.add_argument("--lam", type=float_arg("--lam"), default=0.1, help="ridge lambda > 0")
        else:
            q.add_argument("--lam", type=float_list, default=[0.1] if name == "giant-step" else [0.1, 0.5, 1, 3],
                           help="ridge lambda(s) > 0 (list 'a,b' or 'a:b:k'; one decomposition serves the path)")
        if name != "spectrum":
            q.add_argument("--n-test", type=int_in("--n-test", 1, 10**8), default=20000)
            q.add_argument("--loss", default=None, help="readout loss (docs/theory/srf-theory.md §4.9): square (default, "
                           "ridge), logistic (L-BFGS), hinge (dual), or an expression in y, yhat; reports class_error")
        q.add_argument("--readout", type=exact_arg, default=None, metavar="SPEC",
                       help="law of u in a0 = u/sqrt(p) (docs/theory/srf-theory.md §8): 'uniform' (default), "
                            + ("'gaussian', " if name == "giant-step" else "")
                            + "or groups 'value:fraction,...' such as '1:0.5,2:0.5' or '1:1/3,-1:2/3' (fractions "
                              "summing to 1)"
                            + ("" if name == "giant-step" else "; r, c are the uniform readout's: group u gets "
                               "the spike r u and the bulk variance 1 + u^2 (c - 1)")
                            + "; a spec starting with '-' needs '=': --readout=-1:0.5,1:0.5")
        _common(q)
        q.set_defaults(_run=fn)
    return _run


def _run(args):
    """Run the protocol; an allocation that fails although the estimate fitted (another process took the memory,
    or --force) is a resource failure: one line, exit 3."""
    try:
        return args._run(args)
    except MemoryError:
        from ..core.errors import ResourceError
        from ..simulate import available_memory

        raise ResourceError(f"out of memory during the simulation (available now {available_memory() / 2**30:.3g} "
                            f"GiB{', run with --force' if args.force else ''}); reduce d or the ratios") from None
