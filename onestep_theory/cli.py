"""Command line interface ``onestep-theory`` (also ``python -m onestep_theory``).

Every sub-command prints a human-readable table, or JSON with ``--json`` (numbers as
decimal strings at the requested precision).  Bad input prints one line naming the
parameter and the valid range and exits with status 2; there is never a traceback
for a user error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import warnings

from . import __version__
from .errors import ConvergenceError, InvalidParameterError, OnestepError
from .precision import MAX_DPS

#: Largest power of the xi table (its exact integers grow like p!; the JSON of p = 400 is 8 MB).
MAX_XI = 400

__all__ = ["main", "build_parser", "output_path", "output_dir"]

EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_NUMERIC = 3


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line and exit status 2.

    A negative number after a flag (``--lam -1e-300``, ``--eta -1/2``) is read as the flag's value, not
    as another flag, so that the range check can name it.
    """

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(/\d+)?$|^-inf$")

    def error(self, message):  # noqa: D401
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


# --------------------------------------------------------------------------- arg types
def _int_in(name, lo, hi):
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer in [{lo}, {hi}], got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{name} must be an integer in [{lo}, {hi}], got {v}")
        return v

    conv.__name__ = name
    return conv


def exact_arg(text):
    """Argument type that keeps the user's text, so exact strings ("1/3", "0.1", "sqrt(2)/2") reach the API."""
    return text


def add_dps(p, default=15):
    p.add_argument("--dps", type=_int_in("--dps", 1, MAX_DPS), default=default,
                   help=f"decimal digits of the result (default {default})")


def output_path(text):
    """Argument type of an output file: checked before any work starts (its folder exists and is
    writable, and the path is not a folder)."""
    path = os.path.abspath(text)
    folder = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder of {text!r} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise argparse.ArgumentTypeError(f"{text!r} is not writable")
    return text


def output_dir(text):
    """Argument type of an output folder: created now (before any work) if missing, and probed for writing."""
    path = os.path.abspath(text)
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a folder")
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, ".onestep-write-test")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} cannot be written ({exc.strerror})") from None
    return text


def add_json(p):
    p.add_argument("--json", action="store_true", help="print JSON (numbers as decimal strings)")


def emit(args, payload: dict, text: str) -> None:
    """Print *payload* as JSON if ``--json`` was given, else *text*."""
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2))
    else:
        print(text)


# --------------------------------------------------------------------------- hermite
def _cmd_hermite(args) -> int:
    from .exact import nstr
    from .hermite import he_coeffs

    res = he_coeffs(args.expression, args.kmax, args.dps, center=args.center, param="EXPR")
    d = res.to_dict()
    lines = [f"Hermite coefficients of {res.expression}  (probabilists' He_k, Z ~ N(0,1); dps={res.dps})",
             f"{'k':>3}  {'c_k':<{res.dps + 8}}  exact"]
    for k, (v, e) in enumerate(zip(res.values, res.exact)):
        lines.append(f"{k:>3}  {nstr(v, res.dps):<{res.dps + 8}}  {e if e is not None else '-'}")
    for key, label in (("mean", "E sigma"), ("second_moment", "E sigma^2"), ("c_gt1", "c_>1"), ("c_star", "c_star")):
        ent = d[key]
        lines.append(f"{label:<10} = {ent['value']}" + (f"   [{ent['exact']}]" if ent["exact"] else ""))
    if res.breakpoints:
        lines.append(f"kinks at x = {', '.join(res.breakpoints)}")
    emit(args, d, "\n".join(lines))
    return 0


def _cmd_xi(args) -> int:
    from .hermite import he_xi_row

    rows = [he_xi_row(p) for p in range(args.P + 1)] if not args.row else [he_xi_row(args.P)]
    first = 0 if not args.row else args.P
    payload = {
        "definition": "x^p = sum_i xi[p][i] He_i(x)",
        "rows": {str(first + j): [str(v) for v in r] for j, r in enumerate(rows)},
        "reference": "hermite.md §3",
    }
    text = "\n".join(f"p={first + j:<3} " + " ".join(str(v) for v in r) for j, r in enumerate(rows))
    emit(args, payload, text)
    return 0


# --------------------------------------------------------------------------- parser
COMMANDS = {}


def command(name, help_text):
    """Register a sub-command: the decorated function adds arguments and returns the handler."""

    def deco(fn):
        COMMANDS[name] = (help_text, fn)
        return fn

    return deco


@command("hermite", "Hermite coefficients c_0..c_K and Gaussian moments of an expression")
def _setup_hermite(p):
    p.add_argument("expression", metavar="EXPR", help="name (tanh, relu, relu_centered, sign, erf, sin, softplus, "
                   "sigmoid, He1..He9) or SymPy expression in x, e.g. 'Max(x,0) - 1/sqrt(2*pi)'")
    p.add_argument("--kmax", type=_int_in("--kmax", 0, 200), default=6, help="largest degree K (default 6)")
    p.add_argument("--center", action="store_true", help="expand sigma - E sigma(Z) instead")
    add_dps(p)
    add_json(p)
    return _cmd_hermite


@command("xi", "monomial-to-Hermite coefficients xi_{p,i} (x^p = sum_i xi_{p,i} He_i), exact integers")
def _setup_xi(p):
    p.add_argument("P", type=_int_in("P", 0, MAX_XI), help="largest power p")
    p.add_argument("--row", action="store_true", help="print only row P")
    add_json(p)
    return _cmd_xi


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="onestep-theory",
                     description="Asymptotic theory of two-layer networks after one gradient step "
                                 "[MLHD23, CPDKLZL24]: Hermite layer, spike theory, spiked random features.")
    parser.add_argument("--version", action="version", version=f"onestep-theory {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (help_text, setup) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        p.set_defaults(_handler=setup(p))
    return parser


def _load_plugins() -> None:
    """Import the modules that register further sub-commands (kept lazy and optional)."""
    import importlib

    for mod in ("cli_theory", "cli_simulate", "cli_srf", "reproduce"):
        try:
            importlib.import_module(f".{mod}", __package__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{mod}":
                raise


def main(argv=None) -> int:
    _load_plugins()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:          # usage errors (one line, status 2), --help and --version (status 0)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "_handler", None):
        parser.print_help()
        return EXIT_USAGE
    def one_line(message, category, filename, lineno, file=None, line=None):
        print(f"onestep-theory {args.command}: warning: {' '.join(str(message).split())}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = one_line
            return args._handler(args)
    except InvalidParameterError as exc:
        msg = str(exc)
        flag = "--" + str(exc.param).replace("_", "-")
        argv_list = sys.argv[1:] if argv is None else list(argv)
        if flag in argv_list and msg.startswith(f"{exc.param}="):
            msg = flag + msg[len(str(exc.param)):]
        print(f"onestep-theory {args.command}: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except ConvergenceError as exc:
        print(f"onestep-theory {args.command}: numerical failure: {exc}", file=sys.stderr)
        return EXIT_NUMERIC
    except OnestepError as exc:
        print(f"onestep-theory {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"onestep-theory {args.command}: error: out of memory (reduce the sizes or the digits)", file=sys.stderr)
        return EXIT_INTERNAL
    except BrokenPipeError:  # output piped into e.g. `head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001  (the CLI boundary: one line, never a traceback)
        if args.debug:
            raise
        msg = " ".join(str(exc).split())[:300]
        print(f"onestep-theory {args.command}: internal error: {type(exc).__name__}: {msg} "
              f"(please report it; rerun with --debug for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
