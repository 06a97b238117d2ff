"""``onestep-theory check-paper``: every displayed equation of a TeX paper checked against the package, one report
(docs/theory/checking.md §8)."""

from __future__ import annotations

import argparse
import os

from .common import add_json, command, emit, int_in, output_path

__all__ = ["COMMANDS"]

COMMANDS: dict = {}

_EPILOG = """\
Each display (equation, align, gather, multline, eqnarray, $$...$$, \\[...\\]; one row per equation) whose
left-hand side names a quantity (\\Delta_2 =, r :=, \\gamma =) is checked as `check --latex` checks it: symbolic
proof where the package has a closed form, and --n points at --dps digits. --map LABEL=QUANTITY checks a display
whose left-hand side is not a quantity's name (\\gamma^2 = ..., or the paper's own name of the quantity). Every
other display is listed as skipped, with why. Macros without arguments are expanded; others are reported, never
executed.

exit status: 0 every checked equation is identical or agrees; 1 an equation differs; 2 bad input (or no display
could be checked); 3 a check failed numerically (and none differs).

example: onestep-theory check-paper paper.tex --convention moniri23 --student tanh --teacher He1 \\
           --map eq:loss=train_loss_f0 --report report.html"""


def report_path(text):
    """Argument type of ``--report``: a writable file ending in .md, .html or .json (checked before any work)."""
    out = output_path(text)
    if os.path.splitext(text)[1].lower() not in (".md", ".html", ".htm", ".json"):
        raise argparse.ArgumentTypeError(f"{text!r}: a report file ending in .md, .html or .json")
    return out


def _pairs(items, flag, what) -> dict:
    """``NAME=VALUE`` items of a repeatable flag as a dict (each name once)."""
    from ..core.errors import InvalidParameterError

    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip() or not value.strip():
            raise InvalidParameterError(flag, item, what)
        if name.strip() in out:
            raise InvalidParameterError(flag, item, "each name once")
        out[name.strip()] = value.strip()
    return out


def _check_paper(args):
    from ..core.errors import InvalidParameterError
    from ..quantities.latex.paperreport import check_paper

    if not os.path.isfile(args.paper):
        raise InvalidParameterError("paper", args.paper, "a TeX file that exists")
    res = check_paper(args.paper, convention=args.convention, student=args.student, teacher=args.teacher,
                      symbols=_pairs(args.symbol, "--symbol", "NAME=MEANING (e.g. sigma=noise)") or None,
                      mapping=_pairs(args.map, "--map", "LABEL=QUANTITY (e.g. eq:loss=train_loss_f0)") or None,
                      n=args.n, dps=args.dps, ell=args.ell)
    out = res.to_dict()
    text = res.to_text()
    if args.report:
        out["report"] = res.write(args.report)
        text += f"\nreport written to {args.report}"
    emit(args, out, text)
    return res.exit_code


@command(COMMANDS, "check-paper", "check every displayed equation of a TeX paper against the package: one report")
def _setup_check_paper(p):
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _EPILOG
    p.add_argument("paper", help="the paper's TeX source (one file; \\input is never followed)")
    p.add_argument("--convention", required=True, help="the paper's notation: moniri23, cui24, dandi24 or ba22 "
                                                       "(its symbol table, docs/theory/checking.md §7)")
    p.add_argument("--student", required=True, help="student activation (tanh, relu_centered, an expression in x)")
    p.add_argument("--teacher", help="teacher (He1, sin, an expression in x)")
    p.add_argument("--symbol", action="append", default=[], metavar="NAME=MEANING",
                   help="what a TeX name means (sigma=noise, kappa=c_gt1); repeatable")
    p.add_argument("--map", action="append", default=[], metavar="LABEL=QUANTITY",
                   help="check the display with this \\label (or \\tag, or source line) against QUANTITY; repeatable")
    p.add_argument("--ell", type=int_in("--ell", 1, 8), help="the window l of \\Delta_\\ell, \\Lambda_\\ell")
    p.add_argument("--n", type=int_in("--n", 1, 1000), default=16, help="points per equation (default 16)")
    p.add_argument("--dps", type=int_in("--dps", 15, 60), default=15, help="digits compared (default 15)")
    p.add_argument("--report", type=report_path, help="write the report: .md, .html (MathJax) or .json")
    add_json(p)
    return _check_paper
