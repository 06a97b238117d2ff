"""``--convention NAME`` on every theory command (docs/theory/conventions.md §3): the command's parameter flags are
read in convention NAME and converted exactly to the command's own convention before the command runs."""

from __future__ import annotations

from ..core.errors import InvalidParameterError

__all__ = ["FAMILY", "rewrite"]

#: Theory command -> the family whose convention its flags use (None: the quantity decides).
FAMILY = {"resolvent": "spike", "gains": "spike", "mapping": "srf", "srf": "srf", "srf-curve": "srf",
          "bounds": "srf", "spectrum": "srf", "check": None, "sweep": None}
_SWITCHES = {"--json", "--debug", "--simulate", "--symbolic", "--symbolic-lambda", "--center", "--allow-uncentered",
             "--allow-non-odd", "--optimize-eta", "--optimize-bias", "--no-spike-channel", "--no-cross-term",
             "--quiet", "--force"}


def _split(argv):
    """``--flag=value`` as two tokens, for ``--convention``, the parameters of the conventions, ``--over`` and
    ``--against`` only (any other ``--flag=value`` is left to argparse, e.g. ``--readout=-1:0.5,2:0.5``)."""
    from ..core.conventions import CONVENTIONS

    names = {"--convention", "--over", "--against"} | {"--" + n.replace("_", "-") for c in CONVENTIONS.values()
                                                       for n in c}
    out = []
    for a in argv:
        if a.startswith("--") and "=" in a and a.split("=", 1)[0] in names:
            out += a.split("=", 1)
        else:
            out.append(a)
    return out


def _positionals(tokens):
    """The positional tokens after the command (skipping every flag's value)."""
    out, k = [], 0
    while k < len(tokens):
        t = tokens[k]
        if t.startswith("--"):
            k += 1 if t in _SWITCHES else 2
            continue
        out.append(t)
        k += 1
    return out


def _family_of(command, tokens, source=None):
    if FAMILY[command] is not None:
        return FAMILY[command]
    from ..quantities import quantity_of
    from ..quantities.latex.textables import FAMILY_OF

    if command == "check" and "--against" not in tokens[:-1] and source in FAMILY_OF:
        return FAMILY_OF[source]              # the left-hand side names the quantity: the table's family

    name = None
    if command == "sweep":
        pos = _positionals(tokens)
        name = pos[0] if pos else None
    elif "--against" in tokens[:-1]:
        name = tokens[tokens.index("--against") + 1]
    if name is None:
        raise InvalidParameterError("--convention", None, f"a quantity given to {command} (its family decides the "
                                                          "command's convention)")
    return quantity_of(name).family


def _feeds(params, source, target) -> dict:
    """For every given parameter, the converted keys it feeds (those that vanish or change without it)."""
    from ..core.conventions import convert

    full = convert(params, source, target)
    out = {}
    for k in params:
        rest = {j: v for j, v in params.items() if j != k}
        try:
            part = convert(rest, source, target) if rest else {}
        except InvalidParameterError:           # another parameter needs it: it feeds everything
            out[k] = set(full)
            continue
        out[k] = {j for j in full if j not in part or part[j] != full[j]}
    return out


def rewrite(argv: list, flags_of) -> list:
    """``argv`` with ``--convention NAME`` removed and the flags of convention NAME replaced by the converted flags
    of the command's native convention (exact strings).  ``flags_of(command)`` gives the option strings the
    command accepts.  A given parameter that feeds no flag of the command, a converted flag also given natively,
    a second ``--convention`` and an ``--over`` range of a convention parameter are refused."""
    if not any(a == "--convention" or a.startswith("--convention=") for a in argv) or "check-paper" in argv[:1]:
        return argv                               # check-paper: --convention is the paper's table, no flags to convert
    from ..core.conventions import CONVENTIONS, NATIVE, convert      # SymPy: only when a convention is given

    argv = _split(argv)
    i = argv.index("--convention")
    if i + 1 >= len(argv) or argv[i + 1] not in CONVENTIONS:
        raise InvalidParameterError("--convention", argv[i + 1] if i + 1 < len(argv) else None,
                                    " or ".join(CONVENTIONS))
    source, rest = argv[i + 1], argv[:i] + argv[i + 2:]
    if "--convention" in rest:
        raise InvalidParameterError("--convention", source, "given once")
    c = next((j for j, a in enumerate(rest) if not a.startswith("-")), None)
    command = rest[c] if c is not None else None
    if command not in FAMILY:
        raise InvalidParameterError("--convention", source, f"given to a theory command ({', '.join(FAMILY)})")
    head, tokens = rest[:c + 1], rest[c + 1:]
    target = NATIVE[_family_of(command, tokens, source)]
    if "--over" in tokens[:-1]:
        names = {p.split("=")[0].strip() for p in tokens[tokens.index("--over") + 1].split(",")}
        clash = sorted(names & set(CONVENTIONS[source]))
        if clash:
            raise InvalidParameterError("--over", clash[0], f"a range in the command's own convention ({target}): "
                                                            f"ranges are not converted; convert the end points with "
                                                            f"`onestep-theory convert`")
    params, out, k = {}, [], 0
    while k < len(tokens):
        a = tokens[k]
        name = a[2:].replace("-", "_") if a.startswith("--") else None
        if name in CONVENTIONS[source] and k + 1 < len(tokens):
            if name in params:
                raise InvalidParameterError(a, tokens[k + 1], "given once")
            params[name] = tokens[k + 1]
            k += 2
            continue
        out.append(a)
        k += 1
    keep = ["--convention", source] if command in ("check", "sweep") else []    # it also sets their TeX table
    if not params:
        return head + out + keep
    accepted = flags_of(command)
    flag = (lambda key: "--" + key.replace("_", "-"))
    for given, keys in _feeds(params, source, target).items():
        if given != "d" and not any(flag(j) in accepted for j in keys):
            raise InvalidParameterError(flag(given), params[given], f"a parameter {command} uses (in {target} it "
                                                                    f"becomes {', '.join(sorted(keys)) or 'nothing'})")
    for key, value in convert(params, source, target).items():
        if flag(key) not in accepted:
            continue                              # e.g. d, needed only for the conversion
        if flag(key) in out:
            raise InvalidParameterError(flag(key), str(value), f"given once: it also follows from --convention {source}")
        out += [flag(key), str(value)]
    return head + out + keep
