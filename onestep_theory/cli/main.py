"""Command line interface ``onestep-theory`` (also ``python -m onestep_theory``).

Every sub-command prints a human-readable table, or JSON with ``--json`` (numbers as decimal strings to the
digits they earned).  Bad input prints one line naming the parameter and the valid range and exits with
status 2; non-convergence exits with 3; there is never a traceback for a user error.

The commands are the explicit table :data:`COMMAND_INDEX` (command -> its module and help line): a module lists
its own commands (``COMMANDS``); this module imports only the module of the command that runs, never the other way
round, so ``onestep-theory --help`` loads no theory (``benchmarks/bench_startup.py``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import warnings

from .. import __version__
from ..core.caches import disk_cache_off
from ..core.errors import ConvergenceError, InvalidParameterError, OnestepError, ResourceError
from .convention import FAMILY, rewrite
from .common import EXIT_INTERNAL, EXIT_NUMERIC, EXIT_USAGE, OUTPUT_DESTS, Parser, add_debug

__all__ = ["main", "build_parser", "COMMAND_INDEX", "record_typed", "Heartbeat"]

#: Command -> (its module in ``onestep_theory.cli``, its help line), in the order of ``--help``.  The help line is
#: the module's own (``COMMANDS``; tests/test_cli_startup.py checks that the two agree).
COMMAND_INDEX = {
    "hermite": ("hermite", "Hermite coefficients c_0..c_K and Gaussian moments of an expression"),
    "xi": ("hermite", "monomial-to-Hermite coefficients xi_{p,i} (x^p = sum_i xi_{p,i} He_i), exact integers"),
    "resolvent": ("theory", "random-features resolvent traces m1, m2 and their lambda-derivatives "
                            "(docs/theory/spike-theory.md §6)"),
    "gains": ("theory", "training-loss gains Delta_l and test-error gains Lambda (docs/theory/spike-theory.md §§7-8)"),
    "mapping": ("srf", "network -> sRF parameters r, c, gamma (Result 3.1 of [CPDKLZL24]) with error estimates"),
    "cge": ("srf", "mu0, mu1, mu*^2 of the conditional Gaussian equivalence (15) at given kappa"),
    "srf": ("srf", "sRF saddle point and test error (Result 3.3 of [CPDKLZL24])"),
    "srf-curve": ("quantities", "sRF learning curve over alpha (or a sweep of lam, beta, eta, alpha0) with warm starts"),
    "bounds": ("srf", "upper (26) / lower (27) bounds, eta-optimised (28), best linear baseline"),
    "spectrum": ("srf", "bulk density of Phi^T Phi / p, Stieltjes transform at -lambda, mean spike "
                        "(docs/theory/srf-theory.md §7)"),
    "tau-star": ("groups", "[BES+22] tau* and kappa* (eq. 5.1): the large-learning-rate limit of a Gaussian readout"),
    "check": ("quantities", "check a printed formula or equation against a quantity: symbolic proof, points, "
                            "simulation; exit status like diff"),
    "check-paper": ("paper", "check every displayed equation of a TeX paper against the package: one report"),
    "sweep": ("quantities", "any quantity over a grid of its parameters: CSV/JSON, plot"),
    "convert": ("quantities", "parameters between the conventions of Moniri, Cui, Dandi and Ba et al. (exact)"),
    "simulate": ("simulate", "finite-size numpy simulation: resolvent, spikes, giant-step, srf, spectrum"),
    "study": ("study", "finite-size study: gaps to the theory on a ladder of d, extrapolated to d -> inf"),
    "store": ("study", "the results store of finite-size studies: ls | show | export"),
    "reproduce": ("reproduce", "regenerate the papers' key curves: report.md, plots, CSV/JSON (main job)"),
}


#: Commands that report their own progress on stderr (``cli.common.Progress``); the others get a heartbeat.
OWN_PROGRESS = ("simulate", "study", "reproduce")


def command_of(argv) -> str | None:
    """The sub-command named in ``argv`` (the first token that is not an option; the global options take no
    value), or None."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``onestep-theory``.  Every command is listed; its arguments (and its module) are loaded for
    ``only`` alone when it is given (what :func:`main` does), for every command otherwise."""
    parser = Parser(prog="onestep-theory",
                    description="Asymptotic theory of two-layer networks after one gradient step "
                                "[MLHD23, CPDKLZL24]: Hermite layer, spike theory, spiked random features.")
    parser.add_argument("--version", action="version", version=f"onestep-theory {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    parser.add_argument("--no-cache", action="store_true", help="build every closed form anew: no disk cache "
                        "(also ONESTEP_THEORY_NO_CACHE=1; the cache: ONESTEP_THEORY_CACHE_DIR, else the user's cache "
                        "directory; safe to delete)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (module, help_text) in COMMAND_INDEX.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only is not None and name != only:
            continue
        add_debug(p)
        p.add_argument("--no-cache", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        setup = importlib.import_module(f".{module}", __package__).COMMANDS[name][1]
        p.set_defaults(_handler=setup(p))
        if name in FAMILY:
            p.add_argument("--convention", help="read the parameter flags in this convention (cui24, dandi24, "
                                                "moniri23, ba22; docs/theory/conventions.md)")
    return parser


def _flags(parser, command) -> set:
    """The option strings sub-command ``command`` accepts."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {o for a in sub.choices[command]._actions for o in a.option_strings}


#: Options whose value may start with '-' (a formula: ``--latex '-\frac{…}'``); argparse would read it as an option.
_TEXT_OPTIONS = ("--latex", "--formula", "--symbol")


def _glued(argv: list) -> list:
    """``--latex -X`` as ``--latex=-X`` (argparse takes a value starting with '-' only when glued)."""
    out, k = [], 0
    while k < len(argv):
        a = argv[k]
        if a in _TEXT_OPTIONS and k + 1 < len(argv) and argv[k + 1].startswith("-") and argv[k + 1] != "--" and \
                not argv[k + 1].startswith("--"):
            out.append(f"{a}={argv[k + 1]}")
            k += 2
            continue
        out.append(a)
        k += 1
    return out


class Heartbeat:
    """Elapsed time on a terminal's stderr while a command without its own progress (a theory command: an sRF
    saddle point with a general loss or K groups, Hermite coefficients at hundreds of digits) runs longer than
    ``after`` seconds; the line is cleared when the command ends.  Off unless ``enabled`` (the command line turns
    it on for a terminal only, so that logs and pipes stay clean)."""

    def __init__(self, label, enabled, after=2.0, every=1.0):
        import threading

        self.label, self.enabled, self.after, self.every = label, enabled, after, every
        self.stop, self.shown, self.thread = threading.Event(), 0, None
        if enabled:
            self.thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self):
        t0 = time.perf_counter()
        if self.stop.wait(self.after):
            return
        while True:
            text = f"\r{self.label}: working ({time.perf_counter() - t0:.0f} s)"
            print(text, end="", file=sys.stderr, flush=True)
            self.shown = len(text)
            if self.stop.wait(self.every):
                return

    def __enter__(self):
        if self.thread is not None:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.thread is not None:
            self.stop.set()
            self.thread.join()
            if self.shown:
                print("\r" + " " * self.shown + "\r", end="", file=sys.stderr, flush=True)
        return False


def record_typed(parser, argv) -> dict:
    """Keep the text of every value of ``parser``'s arguments as typed (each argument type is wrapped to note its
    text first); ``common.cli_context`` reads it from the parsed namespace (``args.typed_context``)."""
    raw, actions = {}, []
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    for p in [parser] + ([] if sub is None else list(dict.fromkeys(sub.choices.values()))):
        for a in p._actions:
            if a.dest in OUTPUT_DESTS or a.dest == "command" or a.help == argparse.SUPPRESS:
                continue
            actions.append(a)
            if callable(a.type) and not getattr(a.type, "typed_dest", None):
                def conv(text, _orig=a.type, _dest=a.dest):
                    raw[_dest] = text
                    return _orig(text)

                conv.__name__, conv.typed_dest = getattr(a.type, "__name__", "value"), a.dest
                a.type = conv
    return {"argv": list(argv), "raw": raw, "actions": actions}


def _store_errors() -> tuple:
    """The results store's errors (``sqlite3.Error``) where SQLite was loaded, else none: a command that opened no
    store raised none, and ``sqlite3`` stays unloaded at the start of the others (issue 35 item 4)."""
    mod = sys.modules.get("sqlite3")
    return (mod.Error,) if mod is not None else ()


def main(argv=None) -> int:
    typed = list(sys.argv[1:] if argv is None else argv)      # the command line as typed, for output files
    argv = _glued(typed)
    name = command_of(argv)
    parser = build_parser(only=name if name in COMMAND_INDEX else "")
    context = record_typed(parser, typed)
    try:
        if name != "check-paper":      # its --convention names the paper's TeX table: no flags to convert
            argv = rewrite(argv, lambda command: _flags(parser, command))
    except InvalidParameterError as exc:
        print(f"onestep-theory {argv[0] if argv else ''}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:          # usage errors (one line, status 2), --help and --version (status 0)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "_handler", None):
        parser.print_help()
        return EXIT_USAGE
    args.command = " ".join(v for v in (args.command, getattr(args, "protocol", None)) if v)
    args.typed_context = context

    def one_line(message, category, filename, lineno, file=None, line=None):
        print(f"onestep-theory {args.command}: warning: {' '.join(str(message).split())}", file=sys.stderr)

    # commands with their own progress (repetitions, tasks, experiments) do not get the heartbeat
    beat = sys.stderr.isatty() and name not in OWN_PROGRESS and not getattr(args, "quiet", False)
    try:
        with warnings.catch_warnings(), Heartbeat(f"onestep-theory {args.command}", beat), \
                disk_cache_off(args.no_cache):
            warnings.simplefilter("default")
            warnings.showwarning = one_line
            return args._handler(args)
    except InvalidParameterError as exc:
        msg = str(exc)
        flag = "--" + str(exc.param).replace("_", "-")
        if any(a == flag or a.startswith(flag + "=") for a in argv) and msg.startswith(f"{exc.param}="):
            msg = flag + msg[len(str(exc.param)):]
        print(f"onestep-theory {args.command}: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except ConvergenceError as exc:
        print(f"onestep-theory {args.command}: numerical failure: {exc}", file=sys.stderr)
        return EXIT_NUMERIC
    except ResourceError as exc:
        print(f"onestep-theory {args.command}: resource failure: {exc}", file=sys.stderr)
        return EXIT_NUMERIC
    except OnestepError as exc:
        print(f"onestep-theory {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except MemoryError:      # a resource limit, not bad input and not a bug: exit 3 like ResourceError
        print(f"onestep-theory {args.command}: resource failure: out of memory (reduce the sizes or the digits)",
              file=sys.stderr)
        return EXIT_NUMERIC
    except BrokenPipeError:  # output piped into e.g. `head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:   # an output file that cannot be written (a full device, a vanished folder)
        where = exc.filename or getattr(args, "csv", None) or getattr(args, "report", None) or \
            getattr(args, "out", None) or "an output file"
        print(f"onestep-theory {args.command}: error: cannot write {where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except _store_errors() as exc:  # the results store (e.g. a full disk); finished tasks stay stored
        print(f"onestep-theory {args.command}: error: the store {getattr(args, 'store', None) or ''} cannot be "
              f"written ({' '.join(str(exc).split())[:120]}); the tasks finished so far are kept", file=sys.stderr)
        return EXIT_NUMERIC
    except Exception as exc:  # noqa: BLE001  (the CLI boundary: one line, never a traceback)
        if args.debug:
            raise
        msg = " ".join(str(exc).split())[:300]
        print(f"onestep-theory {args.command}: internal error: {type(exc).__name__}: {msg} "
              f"(please report it; rerun with --debug for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
