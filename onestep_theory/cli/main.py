"""Command line interface ``onestep-theory`` (also ``python -m onestep_theory``).

Every sub-command prints a human-readable table, or JSON with ``--json`` (numbers as decimal strings to the
digits they earned).  Bad input prints one line naming the parameter and the valid range and exits with
status 2; non-convergence exits with 3; there is never a traceback for a user error.

The commands are the explicit table :data:`COMMAND_MODULES`: each module lists its own commands
(``COMMANDS``); this module imports them, never the other way round.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import warnings

from .. import __version__
from ..core.errors import ConvergenceError, InvalidParameterError, OnestepError
from . import groups, hermite, quantities, reproduce, simulate, srf, study, theory
from .convention import FAMILY, rewrite
from .common import EXIT_INTERNAL, EXIT_NUMERIC, EXIT_USAGE, Parser, add_debug

__all__ = ["main", "build_parser", "COMMAND_MODULES"]

#: The command groups, in the order of ``--help``.
COMMAND_MODULES = (hermite, theory, srf, groups, quantities, simulate, study, reproduce)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="onestep-theory",
                     description="Asymptotic theory of two-layer networks after one gradient step "
                                 "[MLHD23, CPDKLZL24]: Hermite layer, spike theory, spiked random features.")
    parser.add_argument("--version", action="version", version=f"onestep-theory {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (help_text, setup) in ((k, v) for mod in COMMAND_MODULES for k, v in mod.COMMANDS.items()):
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_debug(p)
        p.set_defaults(_handler=setup(p))
        if name in FAMILY:
            p.add_argument("--convention", help="read the parameter flags in this convention (cui24, dandi24, "
                                                "moniri23, ba22; docs/theory/conventions.md)")
    return parser


def _flags(parser, command) -> set:
    """The option strings sub-command ``command`` accepts."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {o for a in sub.choices[command]._actions for o in a.option_strings}


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
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
        if flag in argv and msg.startswith(f"{exc.param}="):
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
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:   # an output file that cannot be written (a full device, a vanished folder)
        where = exc.filename or getattr(args, "csv", None) or getattr(args, "report", None) or \
            getattr(args, "out", None) or "an output file"
        print(f"onestep-theory {args.command}: error: cannot write {where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.Error as exc:  # the results store (e.g. a full disk); finished tasks stay stored
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
