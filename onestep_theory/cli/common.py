"""Shared pieces of the command line: the one-line-error parser, argument types (checked before any work
starts), JSON/text output and progress.  Command modules import from here; this module imports none of them.
"""

from __future__ import annotations

import argparse
import fractions
import json
import math
import os
import re
import shlex
import sys
import time

from ..core.limits import MAX_DPS

__all__ = ["Parser", "int_in", "exact_arg", "exact_grid", "exact_text", "add_exact", "add_debug", "exact_list", "float_arg", "float_list", "add_dps", "add_json",
           "output_path", "output_dir", "emit", "command", "Progress", "EXIT_INTERNAL", "EXIT_USAGE", "EXIT_NUMERIC",
           "MAX_GRID", "rcg_kw", "resolve_args", "cli_context", "add_table",
           "table_form", "OUTPUT_DESTS", "typed_echo"]

EXIT_INTERNAL = 4            # distinct from check's 1 (differs): a crash never reads as a verdict
EXIT_USAGE = 2
EXIT_NUMERIC = 3


class Parser(argparse.ArgumentParser):
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
def int_in(name, lo, hi):
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


def add_exact(p, *specs, required=True):
    """Add exact-number arguments ``(flag, help)`` (kept as text so that "1/3" stays exact)."""
    for flag, help_text in specs:
        p.add_argument(flag, required=required, type=exact_arg, help=help_text)


def add_debug(p):
    """The hidden ``--debug`` flag, accepted after every (sub-)command as well as before it."""
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_dps(p, default=15):
    p.add_argument("--dps", type=int_in("--dps", 1, MAX_DPS), default=default,
                   help=f"decimal digits of the result (default {default})")


def output_path(text):
    """Argument type of an output file: checked before any work starts (its folder exists and is
    writable, and the path is not a folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a file name")
    path = os.path.abspath(text)
    folder = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder of {text!r} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise argparse.ArgumentTypeError(f"{text!r} is not writable")
    return text


#: File types a plot may be written as (matplotlib's common back ends).
PLOT_SUFFIXES = (".png", ".pdf", ".svg", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".pgf")


def plot_path(text):
    """Argument type of a plot file: :func:`output_path` with a suffix matplotlib writes (checked before any work)."""
    out = output_path(text)
    if os.path.splitext(text)[1].lower() not in PLOT_SUFFIXES:
        raise argparse.ArgumentTypeError(f"{text!r}: a plot file ending in {', '.join(PLOT_SUFFIXES)}")
    return out


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


def add_table(p):
    p.add_argument("--table", choices=["latex", "latex-pm"], help="print a booktabs table of value +- error, only "
                   "the vouched digits: latex as siunitx \\num{1.2345(12)}, latex-pm as $1.2345 \\pm 1.2\\times10^{-3}$")


def table_form(args) -> str:
    return "pm" if args.table == "latex-pm" else "siunitx"      # the form of quantities.table.latex_table


def add_json(p):
    p.add_argument("--json", action="store_true", help="print JSON (numbers as decimal strings)")


def decimal_strings(obj):
    """JSON data with every real number as a decimal string (a float through its shortest repr, which reads
    back as the same binary number; ``nan``/``inf`` as words); integers (counts, seeds, sizes) and booleans stay.
    The one rule for numbers in the command line's JSON."""
    if isinstance(obj, dict):
        return {k: decimal_strings(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [decimal_strings(v) for v in obj]
    import numpy as np

    if isinstance(obj, (bool, np.bool_)) or obj is None or isinstance(obj, str):
        return bool(obj) if isinstance(obj, np.bool_) else obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return repr(float(obj))
    from ..core.results import serialize

    return serialize(obj)


def emit(args, payload: dict, text: str) -> None:
    """Print *payload* as JSON (numbers as decimal strings: :func:`decimal_strings`; the parameters as typed, see
    :func:`typed_echo`) if ``--json`` was given, else *text*."""
    if getattr(args, "json", False):
        print(json.dumps(decimal_strings(typed_echo(args, payload)), indent=2))
    else:
        print(text)


def typed_echo(args, payload):
    """A command's JSON with its parameters as typed: ``"input"`` (the command line, the parameters, the defaults)
    added, and a top-level echo of a typed number (``"alpha0": "0.500000000000000000000"``) printed as typed
    (``"1/2"``) -- only where the printed decimal is that number correctly rounded (so never a computed value)."""
    if getattr(args, "typed_context", None) is None or not isinstance(payload, dict) or "input" in payload:
        return payload
    from fractions import Fraction

    from ..core.errors import OnestepError
    from ..core.exact import to_exact

    ctx, out = cli_context(args), dict(payload)
    for k, typed in ctx["parameters"].items():
        m = isinstance(out.get(k), str) and re.fullmatch(r"[-+]?\d+(?:\.(\d*))?(?:[eE]([-+]?\d+))?", out[k])
        if m and isinstance(typed, str) and out[k] != typed:
            try:
                x = to_exact(typed)
                ok = x.is_Rational and abs(Fraction(out[k]) - Fraction(int(x.p), int(x.q))) <= \
                    Fraction(10) ** (int(m.group(2) or 0) - len(m.group(1) or "")) / 2
            except (ValueError, TypeError, OnestepError):
                ok = False
            out[k] = typed if ok else out[k]
    out["input"] = {k: ctx[k] for k in ("command", "parameters", "defaults")}
    return out


#: Options that say where and how to write, not what was computed: left out of an output's parameters.
OUTPUT_DESTS = ("help", "json", "csv", "plot", "report", "out", "table", "quiet", "debug", "format", "width", "dpi",
                "contours", "mask_tol", "with_")


def cli_context(args, method=None, provenance=None) -> dict:
    """The context an output file carries (``core.results.csv_text``): the command line as typed, the parameters
    as typed (exact strings: ``"phi": "1/2"``; ``main.record_typed`` kept their text), those left at their defaults
    apart, the method and the provenance (no date: the same command writes the same file)."""
    ctx = getattr(args, "typed_context", None) or {"argv": None, "raw": {}, "actions": []}   # a handler called alone
    argv, given, defaults = ctx["argv"] or [], {}, {}
    for a in ctx["actions"]:
        value = getattr(args, a.dest, None)
        if value is None or value is False or value == []:
            continue
        text = ctx["raw"].get(a.dest, value)
        typed = not a.option_strings or any(t == o or t.startswith(o + "=") for t in argv for o in a.option_strings)
        (given if typed or text != a.default else defaults)[a.dest] = text
    return {"command": shlex.join(["onestep-theory"] + [str(t) for t in argv]) if ctx["argv"] else None,
            "parameters": given,
            "defaults": defaults, "method": method, "provenance": provenance}


def command(table: dict, name: str, help_text: str):
    """Decorator adding a sub-command to a command module's explicit ``table`` (name -> (help, setup)); the
    setup function adds the arguments and returns the handler."""

    def deco(fn):
        table[name] = (help_text, fn)
        return fn

    return deco


def exact_list(text):
    """Comma-separated exact numbers (kept as text so that "1/3" stays exact)."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items or len(items) > 1000:
        raise argparse.ArgumentTypeError(f"expected 1 to 1000 comma-separated numbers, got {text!r}")
    return items


def exact_text(value) -> str:
    """The text of an exact number as a user would type it: a terminating decimal (``1.6``) where the value has
    one, else the SymPy form (``1/3``, ``sqrt(2)/2``)."""
    import sympy as sp

    if isinstance(value, sp.Rational):
        q, twos, fives = int(value.q), 0, 0
        while q % 2 == 0:
            q, twos = q // 2, twos + 1
        while q % 5 == 0:
            q, fives = q // 5, fives + 1
        if q == 1:
            if value.q == 1:
                return str(value.p)
            places = max(twos, fives)
            text = f"{abs(value.p) * 10 ** places // int(value.q)}".rjust(places + 1, "0")
            return ("-" if value.p < 0 else "") + text[:-places] + "." + text[-places:]
    return str(value)


def exact_grid(name, infinite=False):
    """Argument type of a list of exact numbers: ``"0.1"``, ``"0.1,1/3,1"`` or ``"start:stop:num"`` (inclusive,
    evenly spaced *exactly*: ``0.2:3:15`` gives 0.2, 0.4, ..., 3).  Each value is kept as exact text (a number as
    typed, or :func:`exact_text` of a grid point), so the theory reads the same exact number from every command."""

    def conv(text):
        import sympy as sp

        from ..core.errors import InvalidParameterError
        from ..core.exact import to_exact

        bad = (f"{name} must be a number, a list 'a,b,c' or a range 'start:stop:num' of finite reals (num in "
               f"[1, {MAX_GRID}]), got {text!r}")
        try:
            rng, items = _split_list(text)
            if rng is not None:
                a, b, n = rng
                lo, hi = to_exact(a, name), to_exact(b, name)
                # exact arithmetic already: no nsimplify (it ran PSLQ on every point, 14 ms each); rational ends in
                # Fractions (the same numbers, without SymPy's 0.5 ms a point)
                if isinstance(lo, sp.Rational) and isinstance(hi, sp.Rational):
                    a, b = fractions.Fraction(int(lo.p), int(lo.q)), fractions.Fraction(int(hi.p), int(hi.q))
                    pts = (a + (b - a) * fractions.Fraction(i, max(n - 1, 1)) for i in range(n))
                    return [exact_text(sp.Rational(f.numerator, f.denominator)) for f in pts]
                return [exact_text(sp.expand(lo + (hi - lo) * sp.Rational(i, max(n - 1, 1)))) for i in range(n)]
            for v in items:                          # ``infinite``: 'inf' in a list (srf-curve --sweep alpha0)
                to_exact(v, name, allow_infinite=infinite)
            return items
        except (ValueError, TypeError, InvalidParameterError):
            raise argparse.ArgumentTypeError(bad) from None

    conv.__name__ = name
    return conv


def _real(text) -> float:
    """A finite real number from the command line: a decimal, or an exact string ("1/3", "sqrt(2)/2")."""
    try:
        if not re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", text):
            raise ValueError(text)                 # float() would read "1_0", "nan", "infinity": the parser decides
        v = float(text)
    except ValueError:
        from ..core.errors import InvalidParameterError
        from ..core.exact import to_exact

        try:
            v = float(to_exact(text.strip()))
        except (InvalidParameterError, TypeError, ValueError):
            raise ValueError(text) from None
    if not math.isfinite(v):
        raise ValueError(text)
    return v


def float_arg(name):
    def conv(text):
        try:
            return _real(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a finite real number (e.g. 0.1 or 1/3), "
                                             f"got {text!r}") from None

    return conv


#: Longest list or grid accepted on the command line (bounded work).
MAX_GRID = 10000


def _split_list(text) -> tuple:
    """``((start, stop, num), None)`` for ``"start:stop:num"``, or ``(None, [items])`` for ``"a,b,c"``; ValueError
    for anything else (num outside [1, MAX_GRID], no item, more than MAX_GRID items)."""
    if ":" in text:
        a, b, k = text.split(":")
        n = int(k)
        if not 1 <= n <= MAX_GRID:
            raise ValueError(text)
        return (a.strip(), b.strip(), n), None
    items = [v.strip() for v in text.split(",") if v.strip()]
    if not items or len(items) > MAX_GRID:
        raise ValueError(text)
    return None, items


def float_list(text):
    """Parse ``"0.1"``, ``"0.1,0.5,1"`` or ``"start:stop:num"`` (inclusive, linear) into finite floats."""
    shown = repr(text) if len(text) <= 80 else f"{text[:40]!r}...{text[-20:]!r} ({text.count(',') + 1} entries)"
    bad = f"expected a number, a list 'a,b,c' or a range 'start:stop:num' (num in [1, {MAX_GRID}]), got {shown}"
    try:
        rng, items = _split_list(text)
        if rng is not None:
            import numpy as np

            vals = [float(v) for v in np.linspace(_real(rng[0]), _real(rng[1]), rng[2])]
        else:
            vals = [_real(v) for v in items]
    except ValueError:
        raise argparse.ArgumentTypeError(bad) from None
    if not vals or not all(math.isfinite(v) for v in vals):
        raise argparse.ArgumentTypeError(bad)
    return vals


class Progress:
    """Progress indicator on stderr, shown only for runs longer than ``after`` seconds: items done / total,
    elapsed time and (with ``eta=True``) the estimated time to completion."""

    def __init__(self, label, quiet=False, after=2.0, unit="repetition", eta=False):
        self.label, self.quiet, self.after, self.unit, self.eta = label, quiet, after, unit, eta
        self.t0 = time.perf_counter()
        self.shown = False

    def __call__(self, i, total):
        el = time.perf_counter() - self.t0
        if self.quiet or (el < self.after and i < total):
            return
        if el >= self.after:
            self.shown = True
            end = "\n" if i == total else ""
            left = f", ETA {el / i * (total - i):.0f} s" if self.eta and 0 < i < total else ""
            print(f"\r{self.label}: {self.unit} {i}/{total} ({el:.1f} s{left})  ", end=end, file=sys.stderr,
                  flush=True)


def rcg_kw(args):
    """The sRF parameters of a command: --r --c --gamma, or --alpha0 --eta (Result 3.1), with the mapping options."""
    from ..core.errors import InvalidParameterError

    kw = dict(noise_var=args.noise_var, c_formula=args.c_formula, strict_odd=not args.allow_non_odd)
    if args.r is not None or args.c is not None or args.gamma is not None:
        kw.update(r=args.r, c=args.c, gamma=args.gamma)
    else:
        if args.alpha0 is None or args.eta is None:
            raise InvalidParameterError("alpha0", args.alpha0, "--alpha0 and --eta, or --r --c --gamma")
        kw.update(alpha0=args.alpha0, eta=args.eta)
    return kw


def resolve_args(args):
    """(r, c, gamma, mapping) of a command's arguments (:func:`rcg_kw`), at its ``--dps`` if it has one."""
    from ..srf.features.mapping import resolve_rcg

    kw = rcg_kw(args)
    return resolve_rcg(args.student, args.teacher, kw.get("r"), kw.get("c"), kw.get("gamma"), kw.get("alpha0"),
                       kw.get("eta"), args.noise_var, args.c_formula, not args.allow_non_odd, getattr(args, "dps", None))
