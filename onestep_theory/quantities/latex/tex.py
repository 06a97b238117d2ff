r"""A formula as the paper prints it: LaTeX read into the package's formula names (docs/theory/checking.md §7).

SymPy's LaTeX parser (ANTLR backend, the optional extra ``latex``) does the parsing; this module is the thin layer
in front of it that makes a pasted formula mean what its paper means:

1. **Normalise.** Spacing (``\, \; \! \quad``), sizing (``\left \right \big \Big``), ``\displaystyle``,
   ``\boxed``, ``\tfrac \dfrac``, unbraced arguments (``\frac\psi\phi``, ``\frac43``), ``\cdot \times``, square
   brackets, decimal literals (read exactly: ``0.1`` is 1/10) and the left-hand side ``\Delta_1 =`` are taken care of.
2. **Name.** Every name — a letter or Greek command with its decorations (``\tilde \hat \check \bar``), subscript
   and star (``^\star ^{\star} _\star ^* ^{\star 2}``) — is looked up whole in the symbol table of the paper's
   convention (:mod:`onestep_theory.quantities.latex.textables`) and replaced by a placeholder, so ``\phi(…)`` is a
   product, ``\mu_1^{\star 2}`` is the square of μ1⋆ and ``\tilde\eta`` is one symbol.  λ-derivatives
   (``\frac{\partial m_2}{\partial\lambda}``, ``\partial_\lambda m_2``, ``m_2'``, ``\frac{d m_2}{d\lambda}``) are
   names of their own.  A name outside the table is an error naming it and listing the table.
3. **Parse** with ``sympy.parsing.latex.parse_latex`` and replace each placeholder by its meaning in the formula
   names of the quantity's family (docs/theory/checking.md §2); parameters of another convention are converted
   exactly (:func:`~onestep_theory.core.conventions.express`).

The result is the formula as text in the package's names, which then takes the ordinary path of ``check`` (the
safe parser, docs/theory/numerics.md §1) — so a pasted formula and a re-typed one are checked identically.

>>> f = read_latex(r"\Delta_1=\frac{\psi\lambda c_{\star,1}^4m_2}{\phi\,b^2}", "spike")
>>> f.formula, f.dropped
('cs1**4*lam*m2*psi/(b**2*phi)', '\\Delta_1')

References: SymPy, ``sympy.parsing.latex`` (ANTLR grammar ``LaTeX.g4``); [MLHD23] arXiv:2310.07891,
[CPDKLZL24] arXiv:2402.04980, [BES+22] arXiv:2205.01445 for the tables.
"""

from __future__ import annotations

import dataclasses
import re

from ...core.conventions import NATIVE
from ...core.errors import InvalidParameterError
from ...core.syntax import MAX_EXPR_CHARS, MAX_EXPR_DEPTH
from .textables import FAMILY_OF
from .texlex import TexError, join_tokens, tokens
from .texnames import entry_key
from .texread import TexFormula, TexSide, read_side, table_by_key

__all__ = ["TexFormula", "TexSide", "TexEquation", "read_latex", "read_equations", "equation_target", "INSTALL"]

#: How to install the optional parser (printed when it is missing).
INSTALL = "pip install 'onestep_theory[latex]'  (antlr4-python3-runtime 4.11)"

@dataclasses.dataclass(frozen=True)
class TexEquation:
    """One equation of a display: its left-hand side (:class:`TexSide`, None for a bare formula), the right-hand
    sides (:class:`TexFormula`, one per relation of a chain), the ``relations`` (``=``, ``def``, ``approx``,
    ``limit``), a final sign claim (``">= 0"``) and the remarks set aside."""

    source: str
    convention: str
    family: str
    lhs: TexSide | None
    rights: tuple
    relations: tuple
    sign: str | None
    remarks: tuple

    def to_dict(self) -> dict:
        return {"source": self.source, "convention": self.convention, "family": self.family,
                "lhs": self.lhs.to_dict() if self.lhs else None, "rights": [r.to_dict() for r in self.rights],
                "relations": list(self.relations), "sign": self.sign, "remarks": list(self.remarks)}


def read_latex(tex: str, family: str, convention: str | None = None, symbols: dict | None = None, *,
               ell: int | None = None) -> TexFormula:
    r"""Read the LaTeX formula ``tex`` — one formula, or one equation ``LHS = formula`` — into the formula names of
    ``family`` (``"spike"`` or ``"srf"``), with the symbol table of ``convention`` (default: the family's own,
    ``moniri23`` or ``cui24``), the overrides ``symbols`` (TeX name -> a reading of an ambiguous name, or an
    expression in the table's vocabulary: ``{"sigma": "noise"}``, ``{"kappa": "c_gt1"}``) and the window ``ell``
    (for ``\Delta_\ell``).  A left-hand side is read too (garbage is refused) and shown in ``dropped``; see
    :func:`read_equations` for the equation itself (docs/theory/checking.md §7)."""
    eqs = read_equations(tex, family, convention, symbols, ell=ell, any_name=True)
    if len(eqs) != 1 or len(eqs[0].rights) != 1:
        raise InvalidParameterError("latex", tex, "one formula, or 'NAME = formula'",
                                    f"found {len(eqs)} equations with {sum(len(e.rights) for e in eqs)} right-hand "
                                    "sides: paste one right-hand side")
    e = eqs[0]
    return dataclasses.replace(e.rights[0], source=tex, dropped=e.lhs.tex if e.lhs else None)


def read_equations(tex: str, family: str | None, convention: str | None = None, symbols: dict | None = None, *,
                   ell: int | None = None, against: str | None = None, any_name: bool = False) -> list:
    r"""The equations of the display ``tex`` (:class:`TexEquation`; one :class:`TexEquation` without a left-hand side
    for a bare formula), every side read with one table (docs/theory/checking.md §7.5).  With ``family`` None the
    family is the convention's, and with both None the one whose native table names the left-hand side's quantity
    (``\Delta_2`` → the spike theory, ``\gamma`` → the sRF one).  A left-hand side that is one name outside the
    table (``c_{\rm v1}``, a paper's own name) is taken to be the quantity ``against``, if given, and marked
    ``"unlisted"`` (with ``any_name``, also without ``against``: ``read_latex``'s ``NAME = formula``)."""
    from .equation import split_display

    if family is not None and family not in NATIVE:
        raise InvalidParameterError("family", family, " or ".join(NATIVE))
    if ell is not None and (isinstance(ell, bool) or not isinstance(ell, int) or not 1 <= ell <= 8):
        raise InvalidParameterError("ell", ell, "the window, an integer in 1..8")
    toks = _tokens_checked(tex, symbols)
    try:
        eqs = split_display(toks)
    except TexError as exc:
        raise InvalidParameterError("latex", tex, "an equation the checker takes", str(exc)) from None
    if family is None:
        family = FAMILY_OF[convention] if convention is not None else None
    if family is None:
        errors, readable = [], []
        for fam in NATIVE:                     # the native table that names the left-hand side's quantity
            try:
                kind = read_side(eqs[0].sides[0], tex, fam, None, symbols, ell, lhs=True)[0].kind if eqs else None
            except InvalidParameterError as exc:
                errors.append(exc)
                continue
            readable.append(fam)
            if kind == "quantity":
                family = fam
                break
        if family is None and errors and not readable:
            raise errors[0]
        if family is None and len(readable) == 1:      # read by one table only (\Delta_2 - \Delta_1)
            family = readable[0]
        if family is None:
            raise InvalidParameterError("against", None, "the quantity (--against) or the convention (--convention): "
                                                         "the left-hand side names no quantity of a native table")
    convention = convention or NATIVE[family]
    if not eqs:
        used = set()
        right = read_side(toks, tex, family, convention, symbols, ell, used=used)[1]
        _warn_unused(symbols, used)
        return [TexEquation(tex, convention, family, None, (right,), (), None, ())]
    out, used = [], set()
    for e in eqs:
        lhs = _unlisted(e.sides[0], convention, symbols, against, any_name)
        lhs = lhs or read_side(e.sides[0], tex, family, convention, symbols, ell, lhs=True, used=used)[0]
        rights = tuple(read_side(s, tex, family, convention, symbols, ell, used=used)[1] for s in e.sides[1:])
        out.append(TexEquation(tex, convention, family, lhs, rights, e.relations, e.sign, e.remarks))
    _warn_unused(symbols, used)
    return out


def _warn_unused(symbols, used):
    """A ``--symbol`` for a name the formula does not use is worth a warning (a typo in the name, or the wrong
    formula): it is not silently ignored."""
    import warnings

    for name in symbols or {}:
        if _norm_key(name) not in used:
            warnings.warn(f"--symbol {name}=…: the formula does not use {name} (ignored)", stacklevel=4)


def equation_target(tex: str, convention: str | None = None, *, symbols: dict | None = None,
                    ell: int | None = None) -> str | None:
    r"""The quantity the (first) equation of ``tex`` names on its left-hand side (``"delta_2"`` for
    ``\Delta_2 = …``), or None when there is no left-hand side or it is an expression; InvalidParameterError when
    the display cannot be read (docs/theory/checking.md §7.5)."""
    eq = read_equations(tex, FAMILY_OF[convention] if convention in FAMILY_OF else None, convention, symbols,
                        ell=ell)[0]
    return eq.lhs.quantity if eq.lhs is not None else None


_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu",
          "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "Gamma", "Delta", "Theta",
          "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega", "vartheta", "varrho", "varsigma"}


def _unlisted(side, convention, symbols, against, any_name=False):
    r"""The left-hand side ``side`` as the quantity ``against`` when it is one name that names no quantity: a name the
    table does not list (``c_{\rm v1}``, the paper's own), or a printed variant it lists (``\Lambda_1^{\rm slide}``,
    whose meaning would make the check a tautology).  None otherwise (the side is read as it stands: ``\tau_1``)."""
    if against is None and not any_name:
        return None
    try:
        key = entry_key(join_tokens(side))
    except (TexError, IndexError):
        return None
    if any(_norm_key(k) == key for k in (symbols or {})):
        return None
    e = table_by_key(convention).get(key)
    if e is not None and not e.variant:
        return None                                  # a name the table defines: read as it stands (\tau_1, b)
    if e is None and not (len(key[0]) == 1 and key[0].isalpha() or key[0] in _GREEK):
        return None                                  # \foo, \input: not a letter a paper names a quantity by
    why = (f"not in the {convention} table" if e is None else f"the {convention} table's {e.describe}, a printed "
           "variant")
    return TexSide(tex=join_tokens(side), kind="unlisted", quantity=against, formula=against, latex=join_tokens(side),
                   names={join_tokens(side): f"{why}: taken to be the quantity checked, {against}"})


def _norm_key(name):
    try:
        return entry_key(re.sub(r"^([A-Za-z]{2,})", r"\\\1", name.strip()))
    except (TexError, IndexError):
        return None


def _tokens_checked(tex, symbols) -> list:
    if symbols is not None and not isinstance(symbols, dict):
        raise InvalidParameterError("symbols", symbols, "a dict NAME -> MEANING")
    if not isinstance(tex, str) or not tex.strip():
        raise InvalidParameterError("latex", tex, "a LaTeX formula as text")
    if len(tex) > MAX_EXPR_CHARS:
        raise InvalidParameterError("latex", tex[:40] + "...", f"at most {MAX_EXPR_CHARS} characters")
    try:
        import antlr4  # noqa: F401  (parse_latex imports it only when called)
        from importlib.metadata import version

        if not version("antlr4-python3-runtime").startswith("4.11"):
            raise ImportError("SymPy's LaTeX grammar needs the ANTLR runtime 4.11")
    except ImportError:
        raise InvalidParameterError("latex", tex[:40], f"the optional LaTeX parser installed: {INSTALL}") from None
    depth = 0
    for ch in tex:
        depth += (ch == "{") - (ch == "}")
        if depth > MAX_EXPR_DEPTH:
            raise InvalidParameterError("latex", tex[:40], f"braces nested at most {MAX_EXPR_DEPTH} deep")
    try:
        return tokens(tex)
    except TexError as exc:
        raise InvalidParameterError("latex", tex[:40], "a formula in the names of the table", str(exc)) from None


