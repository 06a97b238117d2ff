"""``onestep-theory reproduce``: the main job (:func:`onestep_theory.reproduce.report.run`)."""

from __future__ import annotations

import pathlib

from .common import add_json, cli_context, command, emit, int_in, output_dir

__all__ = ["COMMANDS"]

COMMANDS: dict = {}


def _run_cli(args):
    mode = "full" if args.full else ("smoke" if args.smoke else "quick")
    from ..core.results import serialize
    from ..reproduce.report import run

    summary = run(args.out, mode=mode, seed=args.seed, quiet=args.quiet, command=cli_context(args)["command"])
    report = pathlib.Path(args.out) / "report.md"
    files = sorted(str(f) for f in pathlib.Path(args.out).iterdir() if f.is_file() and not f.name.startswith("."))
    emit(args, {"report": str(report), "files": files, **serialize(summary)},
         f"wrote {report} ({summary['seconds']:.1f} s, mode {mode})")
    return 0


@command(COMMANDS, "reproduce", "regenerate the papers' key curves: report.md, plots, CSV/JSON (main job)")
def _setup(p):
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="default: under 3 minutes on 2 cores")
    g.add_argument("--full", action="store_true", help="publication sizes (reports its run time)")
    g.add_argument("--smoke", action="store_true", help="tiny sizes for the test suite")
    p.add_argument("--out", default="out", type=output_dir, help="output directory (default out/)")
    p.add_argument("--seed", type=int_in("--seed", 0, 2**63 - 1), default=0)
    p.add_argument("--quiet", action="store_true")
    add_json(p)
    return _run_cli
