"""``--convention NAME`` on every theory command (docs/theory/conventions.md §3): the command's parameter flags are
read in convention NAME and converted exactly to the command's own convention before the command runs."""

from __future__ import annotations

from ..core.conventions import CONVENTIONS, NATIVE, convert
from ..core.errors import InvalidParameterError

__all__ = ["FAMILY", "rewrite"]

#: Theory command -> the family whose convention its flags use.
FAMILY = {"resolvent": "spike", "gains": "spike", "mapping": "srf", "srf": "srf", "srf-curve": "srf",
          "bounds": "srf", "spectrum": "srf", "check": None, "sweep": None}


def _family_of(command, argv):
    if FAMILY[command] is not None:
        return FAMILY[command]
    from ..quantities import quantity_of

    name = None
    if command == "sweep":
        name = next((a for a in argv[1:] if not a.startswith("-")), None)
    elif "--against" in argv[:-1]:
        name = argv[argv.index("--against") + 1]
    if name is None:
        raise InvalidParameterError("--convention", None, f"a quantity given to {command} (its family decides the "
                                                          "command's convention)")
    return quantity_of(name).family


def rewrite(argv: list, flags_of) -> list:
    """``argv`` with ``--convention NAME`` removed and the flags of convention NAME replaced by the converted flags
    of the command's native convention (exact strings).  ``flags_of(command)`` gives the option strings the
    command accepts."""
    if "--convention" not in argv:
        return argv
    i = argv.index("--convention")
    if i + 1 >= len(argv):
        raise InvalidParameterError("--convention", None, " or ".join(CONVENTIONS))
    source, rest = argv[i + 1], argv[:i] + argv[i + 2:]
    if source not in CONVENTIONS:
        raise InvalidParameterError("--convention", source, " or ".join(CONVENTIONS))
    command = rest[0] if rest else None
    if command not in FAMILY:
        raise InvalidParameterError("--convention", source, f"given to a theory command ({', '.join(FAMILY)})")
    target = NATIVE[_family_of(command, rest)]
    params, out, k = {}, [], 0
    while k < len(rest):
        a = rest[k]
        name = a[2:].replace("-", "_") if a.startswith("--") else None
        if name in CONVENTIONS[source] and k + 1 < len(rest):
            params[name] = rest[k + 1]
            k += 2
            continue
        out.append(a)
        k += 1
    if not params:
        return out
    accepted = flags_of(command)
    for key, value in convert(params, source, target).items():
        flag = "--" + key.replace("_", "-")
        if flag not in accepted:
            if key in params or key == "d":       # only needed for the conversion
                continue
            raise InvalidParameterError(flag, str(value), f"a flag of {command} (from --convention {source})")
        if flag in out:
            raise InvalidParameterError(flag, str(value), f"given once: it also follows from --convention {source}")
        out += [flag, str(value)]
    return out
