r"""The TeX tokeniser of the LaTeX reader (docs/theory/checking.md §7): tokens with spacing, sizing, labels and a final
period dropped and synonyms unified, and the helpers that look at a token list (an argument's end, a parenthesised
group, whether a group is a sum).
"""

from __future__ import annotations

import re

__all__ = ["TexError", "tokens", "join_tokens", "after_arg", "group_at", "top_sum", "is_lambda"]

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\d+(?:\.\d+)?|\.\d+|[A-Za-z]|\s+|.", re.S)
_DROP = {r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg", r"\bigl", r"\bigr", r"\Bigl", r"\Bigr",
         r"\biggl", r"\biggr", r"\Biggl", r"\Biggr", r"\displaystyle", r"\textstyle", r"\,", r"\;", r"\:", r"\!",
         r"\ ", r"\quad", r"\qquad", r"\boxed", r"\nonumber", r"\limits", "$", "~", "&", r"\[", r"\]", "\\\\",
         r"\notag"}
_SIZE = re.compile(r"\\[Bb]ig+[lr]?|\\left|\\right")
_MAX_DIGITS = 50
_SYNONYM = {r"\dfrac": r"\frac", r"\tfrac": r"\frac", r"\times": r"\cdot", "[": "(", "]": ")",
            r"\{": "(", r"\}": ")", r"\lbrack": "(", r"\rbrack": ")", r"\lbrace": "(", r"\rbrace": ")", r"\lvert": "|",
            r"\rvert": "|", r"\vert": "|", r"\epsilon": r"\varepsilon"}


class TexError(Exception):
    """A formula the reader cannot take (the message says why)."""


def tokens(tex: str) -> list:
    """The tokens of ``tex`` with spacing and sizing dropped and synonyms unified (``\\dfrac`` is ``\\frac``)."""
    out, sized, skip, root = [], False, 0, False
    for t in _TOKEN.findall(tex):
        if skip:                                         # the argument of \label{...} or \tag{...}
            skip += (t == "{") - (t == "}")
            skip -= skip == 1 and t == "}"
            continue
        if t in (r"\label", r"\tag"):
            skip = 1
            continue
        if t == "." and sized:                           # \left. and \right.: an invisible delimiter
            sized = False
            continue
        sized = t in (r"\left", r"\right") or (sized and t.isspace())
        if t.isspace() or t in _DROP or _SIZE.fullmatch(t):
            continue
        if t[0].isdigit() and len(t) > _MAX_DIGITS:
            raise TexError(f"a number longer than {_MAX_DIGITS} digits")
        if t == "[" and out[-1:] == [r"\sqrt"]:        # \sqrt[3]{x}: the brackets stay brackets
            root = True
            out.append(t)
            continue
        if t == "]" and root:
            root = False
            out.append(t)
            continue
        out.append(_SYNONYM.get(t, t))
    while out and out[-1] in (".", ",", ";"):            # the sentence's punctuation after a displayed formula
        out.pop()
    return out


def after_arg(toks, j) -> int:
    """The index after the TeX argument starting at ``toks[j]`` (a braced group or one token)."""
    if j < len(toks) and toks[j] == "{":
        depth = 0
        while j < len(toks):
            depth += (toks[j] == "{") - (toks[j] == "}")
            j += 1
            if depth == 0:
                break
        return j
    return j + 1


def group_at(toks, j) -> tuple:
    """The tokens inside the parenthesis at ``toks[j]`` and the index of its match (or the end)."""
    depth, k = 0, j
    while k < len(toks):
        depth += (toks[k] == "(") - (toks[k] == ")")
        if depth == 0:
            break
        k += 1
    return toks[j + 1:k], k


def top_sum(tokens, binary=False) -> bool:
    """Whether ``tokens`` hold a + or - outside braces and parentheses (a sum, not one factor); with ``binary``, a
    leading sign does not count (``(-\\lambda)`` is one term)."""
    depth = 0
    for j, t in enumerate(tokens):
        depth += (t in ("{", "(")) - (t in ("}", ")"))
        if depth == 0 and t in ("+", "-") and not (binary and j == 0):
            return True
    return False


def is_lambda(tokens) -> bool:
    return [t for t in tokens if t not in ("{", "}")] == [r"\lambda"]


def join_tokens(toks) -> str:
    """Tokens back to TeX (a space only where a command would swallow the next letter)."""
    out = ""
    for t in toks:
        if out and re.search(r"\\[A-Za-z]+$", out) and t[:1].isalpha():
            out += " "
        out += t
    return out
