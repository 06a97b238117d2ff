r"""A displayed equation as a paper prints it, split into what ``check`` compares (docs/theory/checking.md §7.5).

A display holds one or more equations (``\Delta_1=…,\qquad\Delta_2=…``), each a chain of sides joined by relations
(``\mathcal L_{\rm tr}(\mathbf F_0)\to\lambda[…]=\lambda\tfrac\psi\phi[…]``), perhaps ending in a sign claim
(``\to\Delta_\ell\ge0``) and a remark (``\quad(\text{needs }c_2\ne0)``).  This module finds those pieces on the token
list of :func:`~onestep_theory.quantities.latex.texlex.tokens`; it reads no name (that is
:mod:`~onestep_theory.quantities.latex.tex`'s work):

* **relations** ``=``; ``:=``, ``\coloneqq``, ``\equiv``, ``\triangleq``, ``\stackrel{\rm def}{=}`` (a definition,
  checked as ``=``); ``=:`` and ``\eqqcolon`` (the right side is defined: the sides swap); ``\approx \simeq``
  (checked as ``=``, and the verdict says so); ``\to \rightarrow \longrightarrow`` with any annotation
  (``\to_P``, ``\xrightarrow{P}``, ``\overset{P}{\to}``, ``\stackrel{\mathbb P}{\longrightarrow}``: the limit is
  what the package computes, so it is checked as ``=``);
* a final **sign claim** ``\ge 0``, ``\geq0``, ``>0``, ``\le 0``, ``<0``: checked at every point;
* **separators**: a comma or semicolon outside every group, between two pieces that each hold a relation;
* **remarks**: a trailing parenthesis or comma-piece of prose (``\text{…}``), set aside and shown.

Any other relation (``\ne``, ``\sim``, ``\propto``, an inequality between two expressions) is refused with one line.
"""

from __future__ import annotations

import dataclasses

from .texlex import TexError, after_arg, join_tokens

__all__ = ["Equation", "split_display", "RELATIONS"]

#: Relation token -> how it is checked ("=": equal; "def": a definition; "approx": approximately; "limit": a limit).
RELATIONS = {"=": "=", r"\coloneqq": "def", r"\coloneq": "def", r"\equiv": "def", r"\triangleq": "def",
             r"\doteq": "def", r"\eqqcolon": "def-reversed", r"\approx": "approx", r"\simeq": "approx",
             r"\to": "limit", r"\rightarrow": "limit", r"\longrightarrow": "limit", r"\xrightarrow": "limit",
             r"\longmapsto": None, r"\mapsto": None}
_SIGNS = {r"\ge": ">=", r"\geq": ">=", r"\geqslant": ">=", ">": ">", r"\le": "<=", r"\leq": "<=",
          r"\leqslant": "<=", "<": "<"}
_REFUSED = {r"\ne": "'≠' states no value to check", r"\neq": "'≠' states no value to check",
            r"\sim": "'∼' (distributed as / of the order of) is not an equation",
            r"\propto": "'∝' leaves the constant free: write the equation with its constant",
            r"\asymp": "'≍' (of the same order) is not an equation", r"\ll": "'≪' is not an equation",
            r"\gg": "'≫' is not an equation", r"\in": "'∈' is not an equation", r"\iff": "'⟺' joins statements",
            r"\implies": "'⟹' joins statements", r"\Rightarrow": "'⟹' joins statements"}
_STACK = {r"\overset", r"\stackrel", r"\underset"}
_PROSE = {r"\text", r"\textrm", r"\mbox", r"\textup", r"\textit", r"\textnormal"}
_MAX_EQUATIONS = 12


@dataclasses.dataclass(frozen=True)
class Equation:
    """One equation of a display: ``sides`` (token lists; ``sides[0]`` is the left-hand side), ``relations``
    (``len(sides) - 1`` kinds of :data:`RELATIONS`), ``sign`` (a final claim ``">= 0"`` …, or None) and
    ``remarks`` (prose set aside)."""

    sides: tuple
    relations: tuple
    sign: str | None
    remarks: tuple

    @property
    def lhs(self) -> str:
        return join_tokens(self.sides[0])


def _depth_walk(toks):
    """``(index, token, depth)`` with the depth in braces, parentheses and brackets before the token."""
    depth = 0
    for j, t in enumerate(toks):
        if t in ("{", "(", r"\langle"):
            depth += 1
            yield j, t, depth - 1
            continue
        if t in ("}", ")", r"\rangle"):
            depth -= 1
        yield j, t, depth


def _relation_at(toks, j):
    """``(kind, end)`` if a relation starts at ``toks[j]`` (``end``: the index after it, with its annotation), else
    None.  ``:`` ``=`` is ``:=``; ``=`` ``:`` is ``=:``; a stacked relation is the relation under its label."""
    t = toks[j]
    if t == ":" and j + 1 < len(toks) and toks[j + 1] == "=":
        return "def", j + 2
    if t == "=":
        if j + 1 < len(toks) and toks[j + 1] == ":":
            return "def-reversed", j + 2
        return "=", j + 1
    if t in _STACK:
        k = after_arg(toks, j + 1)                       # the label ({P}, {\rm def})
        inner_end = after_arg(toks, k)
        inner = [x for x in toks[k:inner_end] if x not in ("{", "}")]
        if len(inner) == 1 and (inner[0] in RELATIONS or inner[0] in _SIGNS):
            kind = RELATIONS.get(inner[0]) or "sign"
            return (kind if kind != "=" or t == r"\underset" else "def"), inner_end
        return None
    if t in RELATIONS and RELATIONS[t] is not None:
        k = j + 1
        if t == r"\xrightarrow" and k < len(toks) and toks[k] == "(":      # \xrightarrow[below]{above}
            depth = 0                                    # (the tokeniser reads [ ] as ( ))
            while k < len(toks):
                depth += (toks[k] == "(") - (toks[k] == ")")
                k += 1
                if depth == 0:
                    break
        if t == r"\xrightarrow":
            k = after_arg(toks, k)
        while k < len(toks) and toks[k] in ("_", "^"):                  # \to_P, \to^{a.s.}
            k = after_arg(toks, k + 1)
        return RELATIONS[t], k
    return None


def _pieces(toks, stops) -> list:
    """The token list split at the top-level tokens of ``stops`` (returned with the separators)."""
    out, cur = [], []
    for j, t, d in _depth_walk(toks):
        if d == 0 and t in stops:
            out.append((cur, t))
            cur = []
        else:
            cur.append(t)
    out.append((cur, None))
    return out


def _has_relation(toks) -> bool:
    return any(d == 0 and (_relation_at(toks, j) is not None or t in _SIGNS or t in _REFUSED)
               for j, t, d in _depth_walk(toks))


def _prose(toks) -> bool:
    return any(t in _PROSE for t in toks)


def _strip_remark(toks, remarks) -> list:
    """A trailing parenthesis holding prose (``\\quad(\\text{needs }c_2\\ne0)``) is a remark, set aside."""
    if toks and toks[-1] == ")":
        depth = 0
        for j in range(len(toks) - 1, -1, -1):
            depth += (toks[j] == ")") - (toks[j] == "(")
            if depth == 0:
                if _prose(toks[j:]):
                    remarks.append(join_tokens(toks[j:]))
                    return toks[:j]
                break
    return toks


def _prose_split(toks, remarks) -> list:
    """Top-level prose in a display: ``\\text{and}`` separates two equations (a comma); any other prose
    (``\\quad\\text{as } n\\to\\infty``, ``\\text{for }\\phi=\\psi``, ``\\text{(bulk)}``) starts a remark that runs
    to the end of the display, set aside."""
    out, depth, j = [], 0, 0
    while j < len(toks):
        t = toks[j]
        if depth == 0 and t in _PROSE:
            end = after_arg(toks, j + 1)
            word = "".join(x for x in toks[j + 1:end] if x not in ("{", "}")).strip()
            if word in ("and", "or", ","):
                out.append(",")
                j = end
                continue
            remarks.append(join_tokens(toks[j:]))
            break
        depth += (t in ("{", "(")) - (t in ("}", ")"))
        out.append(t)
        j += 1
    return out


def split_display(toks) -> list:
    """The :class:`Equation` s of a display (token list), or ``[]`` if it holds no relation (a bare formula)."""
    if not _has_relation(toks):
        return []
    eqs, remarks, cur = [], [], []
    toks = _prose_split(toks, remarks)
    for piece, _ in _pieces(toks, {",", ";"}):
        if not piece:
            continue
        if piece[0] in _PROSE or _prose(piece) and not _has_relation(piece):
            remarks.append(join_tokens(piece))           # ", \text{for } \lambda>0": a condition, set aside
            continue
        if _has_relation(piece) and _has_relation(cur):
            eqs.append(cur)                              # the next equation of the display
            cur = list(piece)
        else:                                            # a comma inside one equation: the reader refuses it
            cur = cur + [","] + piece if cur else list(piece)
    if cur:
        eqs.append(cur)
    if len(eqs) > _MAX_EQUATIONS:
        raise TexError(f"more than {_MAX_EQUATIONS} equations in one display")
    return [_equation(_strip_remark(e, remarks), tuple(remarks)) for e in eqs]


def _equation(toks, remarks) -> Equation:
    sides, rels, cur, j = [], [], [], 0
    depth = 0
    while j < len(toks):
        t = toks[j]
        rel = _relation_at(toks, j) if depth == 0 else None
        if rel is None and depth == 0 and t in _SIGNS:
            rel = ("sign:" + _SIGNS[t], j + 1)
        if rel is None and depth == 0 and t in _REFUSED:
            raise TexError(_REFUSED[t])
        if rel is not None:
            sides.append(cur)
            rels.append(rel[0])
            cur, j = [], rel[1]
            continue
        depth += (t in ("{", "(")) - (t in ("}", ")"))
        cur.append(t)
        j += 1
    sides.append(cur)
    sign = None
    if rels and rels[-1].startswith("sign"):
        last = [t for t in sides[-1] if t not in ("{", "}")]
        if last != ["0"] or rels[-1] == "sign":
            raise TexError(f"an inequality between two expressions ('{join_tokens(sides[-2])} … "
                           f"{join_tokens(sides[-1])}') is not checked: only a final '\\ge 0' or '\\le 0'")
        sign = rels[-1][5:] + " 0"
        sides, rels = sides[:-1], rels[:-1]
    if any(r.startswith("sign") for r in rels):
        raise TexError("an inequality inside a chain is not checked: only a final '\\ge 0' or '\\le 0'")
    if not rels:
        raise TexError("a sign claim with nothing equated: write the equation, then '\\ge 0'")
    if "def-reversed" in rels:
        if len(rels) != 1:
            raise TexError("'=:' in a chain: write one definition 'formula =: NAME'")
        sides, rels = sides[::-1], ["def"]
    empty = [k for k, s in enumerate(sides) if not s]
    if empty:
        raise TexError("a relation with nothing on its " + ("left" if empty[0] == 0 else "right") + " side")
    return Equation(tuple(tuple(s) for s in sides), tuple(rels), sign, remarks)
