"""Non-uniform readouts on the command line (docs/theory/srf-theory.md §8, §9): ``srf --readout``,
``bounds --readout``, ``spectrum --readout`` and ``onestep-theory tau-star``."""

from __future__ import annotations

from .common import add_json, command, emit, int_in, rcg_kw, resolve_args

__all__ = ["COMMANDS", "add_readout", "is_grouped", "run_srf_groups", "run_bounds_groups", "run_group_spectrum",
           "group_spikes", "density_rows"]

COMMANDS: dict = {}


def add_readout(p, bulks: bool = False):
    p.add_argument("--readout", default=None,
                   help="initial readout a0 = u/sqrt(p): 'uniform' (default) or 'value:fraction,...' e.g. "
                        "'1:0.5,2:0.5' (a spec starting with '-' needs --readout=-1:...); a Gaussian readout is the "
                        "tau-star command's theory ([BES+22])")
    if bulks:
        p.add_argument("--prior", choices=("asymptotic", "finite-w"), default="asymptotic",
                       help="K-group prior (docs/theory/srf-theory.md §8): 'asymptotic' (default; the deterministic "
                            "equivalent of §8.1, any --dps) or 'finite-w' (sampled bulks, float64; a check)")
        p.add_argument("--bulk-p", type=int_in("--bulk-p", 20, 3000), default=600,
                       help="with --prior finite-w: width of the sampled bulks (and half of it)")
        p.add_argument("--bulk-count", type=int_in("--bulk-count", 2, 64), default=4,
                       help="with --prior finite-w: sampled bulks per width")


class _progress:
    """:class:`~onestep_theory.cli.common.Progress` on stderr for a K-group computation (shown after 2 s, at most
    once a second), its line ended when the computation ends."""

    def __init__(self, args, what, unit):
        from .common import Progress

        self.pr = Progress(f"onestep-theory {args.command}: {what}", quiet=getattr(args, "quiet", False), unit=unit)
        self.last, self.open = -1.0, False

    def __call__(self, i, total):
        import time

        now = time.perf_counter()
        if now - self.last >= 1.0 or i == total:
            self.last = now
            self.pr(i, total)
            self.open = self.pr.shown and i < total         # Progress ends the line itself at i == total

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        import sys

        if self.open:
            print(file=sys.stderr, flush=True)
        return False


def is_grouped(args) -> bool:
    """True when ``--readout`` is given and is not the uniform readout (without it, the grouped theory is not
    loaded: start-up, issue 35)."""
    if getattr(args, "readout", None) is None:
        return False
    from ..srf.grouped.readout import readout

    return not readout(args.readout).is_uniform


def run_srf_groups(args):
    from ..core.errors import InvalidParameterError
    from ..simulate import sample_bulks
    from ..srf.grouped.groups import srf_groups

    # the K-group solver has its own prior: refuse the single-group options instead of ignoring them
    finite = args.prior == "finite-w"
    for flag, value, default in (("--dps", args.dps if finite else None, None),
                                 ("--bulk-p", 600 if finite else args.bulk_p, 600),
                                 ("--bulk-count", 4 if finite else args.bulk_count, 4),
                                 ("--spectrum-mode", args.spectrum_mode, "mp"),
                                 ("--no-spike-channel", args.no_spike_channel, False),
                                 ("--no-cross-term", args.no_cross_term, False),
                                 ("--kappa-nodes", args.kappa_nodes, None), ("--inner-nodes", args.inner_nodes, None),
                                 ("--loss", getattr(args, "loss", None), None)):
        if value != default:
            raise InvalidParameterError(flag, value, "not available with a grouped --readout" + (
                " and --prior finite-w (float64 on sampled bulks)" if finite else
                " (--bulk-p and --bulk-count belong to --prior finite-w)" if flag.startswith("--bulk") else ""))
    kw = dict(prior="finite-w", sampler=sample_bulks, bulk_p=args.bulk_p, bulk_count=args.bulk_count,
              seed=args.seed) if finite else dict(dps=args.dps)
    with _progress(args, "K-group saddle point", "sampled bulk" if finite else "kappa-rule level") as pr:
        sol = srf_groups(args.student, args.teacher, readout_spec=args.readout, alpha=args.alpha, beta=args.beta,
                         lam=args.lam, tol=args.tol, progress=pr, **kw, **rcg_kw(args))
    d = sol.to_dict()
    d.pop("reduced", None)
    # abs_error: the printed error (the rounding of the printed value included), as srf's single-group JSON; the raw
    # estimate printed beside a 15-digit value claimed 1e-22 where the printed value is 5e-17 from the truth
    out = dict(d, abs_error=d["errors"]["test_error"],
               params={"alpha": args.alpha, "beta": args.beta, "lam": args.lam, "noise_var": args.noise_var})
    lines = [f"K-group sRF ({sol.readout['label']} -> {sol.readout['reduced']}): student {args.student}, teacher "
             f"{args.teacher}; alpha={args.alpha}, beta={args.beta}, lam={args.lam}"
             + ("  [experimental]" if sol.experimental else ""),
             f"test error eps_g = {d['test_error']}   (+/- {d['errors']['test_error']}, {sol.digits} digits)"]
    for g, e in zip(d["groups"], d["errors"]["groups"]):      # as printed: vouched, with their errors
        lines.append(f"  group u={g['value']:<6} fraction {g['fraction']:<6} spike r_j = {g['r']} +/- {e['r']}, "
                     f"c_j = {g['c']} +/- {e['c']}")
    lines.append(f"({sol.method})")
    if sol.reduced is None:
        lines.append("error budget: " + ", ".join(f"{k} {v}" for k, v in d["errors"].items()
                                                  if k not in ("test_error", "order", "groups", "per_bulk")))
    if getattr(args, "alpha0", None) is not None:     # the network map measured the uniform readout only (issue 31)
        why = f"the map measured the uniform readout a0 = 1/sqrt(p) only; here --readout {sol.readout['label']}"
        out["network"] = {"match": None, "reason": why, "entry": None, "bracket": None}
        lines.append(f"against the one-step network: not measured near this setting ({why}; the map: "
                     "docs/studies/mechanism.md).")
    emit(args, out, "\n".join(lines))
    return 0


def run_bounds_groups(args):
    from ..srf.grouped.groupbounds import group_bounds

    kw = dict(c_formula=args.c_formula, strict_odd=not args.allow_non_odd, noise_var=args.noise_var)
    if args.optimize_eta:
        b = group_bounds(args.student, args.teacher, readout_spec=args.readout, alpha0=args.alpha0 or "inf",
                         optimize_eta=True, eta_max=args.eta_max, r=args.r, c=args.c, gamma=args.gamma, **kw)
    elif args.r is not None:
        b = group_bounds(args.student, args.teacher, readout_spec=args.readout, r=args.r, c=args.c or 1,
                         gamma=args.gamma or 1, **kw)
    else:
        b = group_bounds(args.student, args.teacher, readout_spec=args.readout, alpha0=args.alpha0 or "inf",
                         eta=args.eta, **kw)
    d = b.to_dict()
    lines = [f"K-group bounds, readout {b.readout['label']} (reduced {b.readout['reduced']}) [experimental]"]
    lines += [f"{name:<22} = {d[k]}   +/- {d['errors'][k]}" for k, name in
              (("upper", "upper (26), K groups"), ("lower", "lower (27), K groups"),
               ("upper_single", "upper (26), u = 1"), ("lower_single", "lower (27), u = 1"))]
    lines += [f"{'best_linear':<22} = {d['best_linear']}   +/- {d['errors']['best_linear']}",
              f"{'ranks (up, low, K)':<22} = {b.ranks}"]
    if b.optimized:
        lines += [f"{k:<22} = {d[k]}   +/- {d['errors'][k]}" for k in ("eta_upper", "eta_lower")]
    emit(args, d, "\n".join(lines))
    return 0


def group_spikes(args, rr, cc) -> dict:
    """The up-to-K mean spikes (docs/theory/srf-theory.md §8) for ``spectrum --readout … --d D``, vouched
    (``to_dict``: every value to the digits its error vouches for)."""
    from ..srf.grouped.groupbounds import group_mean_spikes

    return group_mean_spikes(args.student, readout_spec=args.readout, r=rr, c=cc, alpha=args.alpha,
                             d=args.d).to_dict()


def _run_tau_star(args):
    from ..srf.optimal.taustar import tau_star

    t = tau_star(args.student, args.teacher, dps=args.dps, kappa_max=args.kappa_max)
    d = t.to_dict()
    ex = lambda v: "" if v is None else f"   (exact: {v})"  # noqa: E731
    lines = [f"[BES+22] eq. (5.1): tau* = inf_k E(sigma*(xi) - E_xi2 sigma(k xi + xi2))^2; student {args.student}, "
             f"teacher {args.teacher}",
             f"tau*   = {d['tau']}   +/- {d['errors']['tau']}{ex(d['tau_exact'])}",
             f"kappa* = {d['kappa']}   +/- {d['errors']['kappa']}{ex(d['kappa_exact'])}",
             f"kernel lower bound ||P_>1 f*||^2 = {d['kernel_bound']}   +/- {d['errors']['kernel_bound']};  Thm. 7 beats kernels (bound > 10 tau*): "
             f"{d['beats_kernel']}",
             "in this package's convention: a neuron with spike r_eff = kappa* at c = 1 (a readout group u* = kappa*/r)",
             (f"eta*   = {d['eta_star']}   +/- {d['errors']['eta_star']}{ex(d['eta_exact'])}   (the learning rate of "
              "Result 3.1 at alpha0 = inf giving r = kappa*: kappa*/(mu1 mu1*))") if t.eta_star is not None else
             "eta*: no learning rate of Result 3.1 at alpha0 = inf reaches kappa* (mu1 mu1* = 0, or kappa* infinite "
             "or of the other sign)"]
    emit(args, d, "\n".join(lines))
    return 0


@command(COMMANDS, "tau-star", "[BES+22] tau* and kappa* (eq. 5.1): the large-learning-rate limit of a Gaussian readout")
def _setup_tau_star(p):
    from ..core.limits import MAX_SRF_DPS
    from .common import exact_arg

    p.add_argument("--student", required=True)
    p.add_argument("--teacher", required=True)
    p.add_argument("--kappa-max", type=exact_arg, default="50", help="largest |kappa| searched (limits beyond it)")
    p.add_argument("--dps", type=int_in("--dps", 1, MAX_SRF_DPS), help="digits wanted (exit 3 if unreachable)")
    add_json(p)
    return _run_tau_star


def density_rows(args, xs, d, provenance) -> list:
    """The density table of ``spectrum`` (one group or K): each x as printed, which is the point the density was
    computed at (:func:`~onestep_theory.srf.spectral.grid.x_text`: the typed text, or a float's shortest repr), put
    in the JSON ``d["x"]`` as well and, with ``--csv``, written as CSV (x, density, error); returns the text lines."""
    from ..core.results import write_csv
    from ..srf.spectral.grid import grid_texts
    from .common import cli_context

    d["x"] = grid_texts(xs)
    rows = list(zip(d["x"], d["density"], d["errors"]["density"]))
    if getattr(args, "csv", None):
        write_csv(args.csv, [{"x": x, "density": y, "error": e} for x, y, e in rows],
                  cli_context(args, provenance.get("method"), provenance))
    return [f"{'x':>12} {'density':>24}  +/-"] + [f"{x:>12} {y:>24}  {e}" for x, y, e in rows]


def run_group_spectrum(args):
    """``spectrum --readout`` with K >= 2 groups: the K-group bulk (density, g(-lambda); docs/theory/srf-theory.md
    §8.1, float64) and, with ``--d``, the up-to-K mean spikes."""
    from ..core.errors import InvalidParameterError
    from ..srf.grouped.groupspectrum import group_spectrum

    if args.dps is not None:
        raise InvalidParameterError("--dps", args.dps, "not given with a grouped --readout (the K-group spectrum is "
                                    "float64; its digits follow its printed errors)")
    rr, cc, gg, _ = resolve_args(args)
    with _progress(args, "K-group density", "point") as pr:      # --z: exact texts, each x read as typed
        gs = group_spectrum(args.student, readout_spec=args.readout, r=rr, c=cc, alpha=args.alpha, beta=args.beta,
                            xs=list(args.z) if args.z else None, lams=args.lam, progress=pr)
    d = gs.to_dict()
    if args.d:
        d["group_mean_spikes"] = group_spikes(args, rr, cc)
    lines = [f"bulk density of Phi^T Phi / p, readout {gs.readout['label']} (K groups, docs/theory/srf-theory.md "
             f"§8.1): the limit eta -> 0 of Im g(x + i eta)/pi, extrapolated from eta = {gs.eta:.3g}, eta/2, eta/4"]
    lines += density_rows(args, args.z or gs.x, d, gs.provenance)
    lines += [f"g(-{k}) = {v}  +/- {d['errors']['stieltjes'][k]}" for k, v in d["stieltjes_at_minus_lambda"].items()]
    lines.append(f"atom at 0: {gs.atom_at_zero:.6g}")
    if args.d:
        gm = d["group_mean_spikes"]
        lines.append(f"mean spikes at d = {args.d}: " + ", ".join(
            f"{v} +/- {e}" for v, e in zip(gm["spikes"], gm["errors"]["spikes"])))
    emit(args, d, "\n".join(lines))
    return 0
