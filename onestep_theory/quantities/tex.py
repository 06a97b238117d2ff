r"""A formula as the paper prints it: LaTeX read into the package's formula names (docs/theory/checking.md §7).

SymPy's LaTeX parser (ANTLR backend, the optional extra ``latex``) does the parsing; this module is the thin layer
in front of it that makes a pasted formula mean what its paper means:

1. **Normalise.** Spacing (``\, \; \! \quad``), sizing (``\left \right \big \Big``), ``\displaystyle``,
   ``\boxed``, ``\tfrac \dfrac``, unbraced arguments (``\frac\psi\phi``, ``\frac43``), ``\cdot \times``, square
   brackets, decimal literals (read exactly: ``0.1`` is 1/10) and the left-hand side ``\Delta_1 =`` are taken care of.
2. **Name.** Every name — a letter or Greek command with its decorations (``\tilde \hat \check \bar``), subscript
   and star (``^\star ^{\star} _\star ^* ^{\star 2}``) — is looked up whole in the symbol table of the paper's
   convention (:mod:`onestep_theory.quantities.textables`) and replaced by a placeholder, so ``\phi(…)`` is a
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

import sympy as sp

from ..core.caches import cached
from ..core.conventions import NATIVE, express
from ..core.errors import InvalidParameterError
from ..core.syntax import CONSTANTS, FUNCTIONS, MAX_EXPR_CHARS, MAX_EXPR_DEPTH, parse_text
from .registry import closed_form, formula_names, formula_tex, symbols_of
from .textables import table
from .texlex import TexError, join_tokens, tokens
from .texnames import Reader, entry_key

__all__ = ["TexFormula", "read_latex", "INSTALL"]

#: How to install the optional parser (printed when it is missing).
INSTALL = "pip install 'onestep_theory[latex]'  (antlr4-python3-runtime 4.11)"

@dataclasses.dataclass(frozen=True)
class TexFormula:
    """A LaTeX formula as understood: ``formula`` (text in the package's formula names), ``latex`` (re-rendered),
    ``convention`` (the table used), ``names`` (each TeX name met -> its meaning), ``dropped`` (a left-hand side
    that was set aside) and ``normalised`` (the TeX given to SymPy's parser, with placeholders)."""

    source: str
    formula: str
    latex: str
    convention: str
    names: dict
    dropped: str | None
    normalised: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _vocabulary(convention, family) -> dict:
    """Name -> SymPy expression in plain symbols named by the family's formula names: the convention's parameters
    (converted exactly to the family's own convention) and the family's formula names."""
    native = NATIVE[family]
    params = {"noise_var" if k == "noise" else k: sp.Symbol(k) for k in symbols_of(family)
              if k in ("phi", "psi", "lam", "noise", "alpha", "beta", "alpha0", "eta")}
    from ..core.conventions import CONVENTIONS

    vocab = {k: sp.Symbol(k) for k in symbols_of(family) if k not in CONVENTIONS[convention]}
    vocab.update(express(convention, native, params))    # a parameter without a counterpart is absent, not
    return vocab                                          # read as a formula name of the same spelling


def _meaning(entry_text, vocab, family, tex, convention) -> sp.Expr:
    if entry_text.startswith("@"):                        # the package's closed form of a quantity
        if family != "spike":
            raise TexError(f"{tex} is a quantity of the spike theory; this quantity is an sRF one")
        return closed_form(entry_text[1:]).xreplace(formula_names(family))
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", entry_text)) - set(FUNCTIONS) - set(CONSTANTS)
    missing = sorted(names - set(vocab))
    from ..core.conventions import CONVENTIONS

    lost = [m for m in missing if m in CONVENTIONS[convention]]
    if lost:
        raise TexError(f"{tex} is the {convention} parameter {lost[0]}, which has no counterpart in "
                        f"{NATIVE[family]}, the convention of this quantity (docs/theory/conventions.md §1)")
    if missing:
        raise TexError(f"{tex} means {entry_text}, and {', '.join(missing)} has no counterpart here (a symbol "
                        f"of the other theory, or a parameter the quantity's convention lacks)")
    return parse_text(entry_text, "latex", {k: v for k, v in vocab.items() if k in names})


def read_latex(tex: str, family: str, convention: str | None = None, symbols: dict | None = None) -> TexFormula:
    r"""Read the LaTeX formula ``tex`` into the formula names of ``family`` (``"spike"`` or ``"srf"``), with the
    symbol table of ``convention`` (default: the family's own, ``moniri23`` or ``cui24``) and the overrides
    ``symbols`` (TeX name -> a reading of an ambiguous name, or an expression in the table's vocabulary:
    ``{"sigma": "noise"}``, ``{"kappa": "c_gt1"}``).  See the module docstring (docs/theory/checking.md §7)."""
    if family not in NATIVE:
        raise InvalidParameterError("family", family, " or ".join(NATIVE))
    if symbols is not None and not isinstance(symbols, dict):
        raise InvalidParameterError("symbols", symbols, "a dict NAME -> MEANING")
    if not isinstance(tex, str) or not tex.strip():
        raise InvalidParameterError("latex", tex, "a LaTeX formula as text")
    if len(tex) > MAX_EXPR_CHARS:
        raise InvalidParameterError("latex", tex[:40] + "...", f"at most {MAX_EXPR_CHARS} characters")
    convention = convention or NATIVE[family]
    entries = table(convention)
    try:
        import antlr4  # noqa: F401  (parse_latex imports it only when called)
        from importlib.metadata import version
        from sympy.parsing.latex import parse_latex

        if not version("antlr4-python3-runtime").startswith("4.11"):
            raise ImportError("SymPy's LaTeX grammar needs the ANTLR runtime 4.11")
    except ImportError:
        raise InvalidParameterError("latex", tex[:40], f"the optional LaTeX parser installed: {INSTALL}") from None
    lookup = _lookup(convention)
    overrides = _overrides(symbols or {}, lookup, convention)
    vocab = _vocabulary(convention, family)

    def resolve(key, shown, deriv):
        e = overrides.get(key, lookup.get(key))
        if e is None:
            raise TexError(f"unknown symbol {shown} in the {convention} table ({_listing(entries)}); give its "
                            f"meaning with --symbol NAME=EXPR (API: symbols={{NAME: EXPR}}) or pick another "
                            f"--convention")
        if e.refused:
            raise TexError(f"{shown} ({e.describe}): {e.refused}")
        if e.readings and e.text is None:
            opts = "; ".join(f"--symbol {shown.lstrip(chr(92))}={n} ({d})" for n, v, d in e.readings if v)
            raise TexError(f"{shown} is ambiguous in the {convention} table: say which with {opts}")
        text = e.deriv if deriv else e.text
        if text is None:
            given = " as given by --symbol" if key in overrides else ""
            raise TexError(f"the lambda-derivative of {shown}{given} is not known (the {convention} table has "
                           f"one for m_1, m_2, tau_1, tau_2)")
        return (_meaning(text, vocab, family, shown, convention), e.describe + (" (d/dlambda)" if deriv else ""),
                e.tex, e.deriv is not None or e.of_lambda)

    depth = 0
    for ch in tex:
        depth += (ch == "{") - (ch == "}")
        if depth > MAX_EXPR_DEPTH:
            raise InvalidParameterError("latex", tex[:40], f"braces nested at most {MAX_EXPR_DEPTH} deep")
    try:
        toks = tokens(tex)
    except TexError as exc:
        raise InvalidParameterError("latex", tex[:40], "a formula in the names of the table", str(exc)) from None
    parts, cur, lvl = [], [], 0
    for t in toks:                                       # the top-level '=' signs
        lvl += (t in ("{", "(")) - (t in ("}", ")"))
        if t == "=" and lvl == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    parts.append(cur)
    if len(parts) > 2:
        raise InvalidParameterError("latex", tex, "one formula, or 'NAME = formula'",
                                    f"found {len(parts) - 1} '=' signs: paste one right-hand side")
    dropped = join_tokens(parts[0]) if len(parts) == 2 else None
    if len(parts) == 2 and not parts[0]:
        raise InvalidParameterError("latex", tex, "'NAME = formula' with a name before the '='")
    body = parts[-1]
    if not body:
        raise InvalidParameterError("latex", tex, "a formula after the '='")
    reader = Reader(body, resolve)
    try:
        normalised = reader.run()
    except TexError as exc:
        raise InvalidParameterError("latex", tex, "a formula in the names of the table", str(exc)) from None
    except IndexError:
        raise InvalidParameterError("latex", tex, "balanced braces") from None
    except RecursionError:
        raise InvalidParameterError("latex", tex[:40], "a formula nested less deeply") from None
    try:                                    # strict: SymPy's parser otherwise returns the part before an error
        parsed = parse_latex(normalised, strict=True)
    except Exception as exc:  # noqa: BLE001  (any parser failure is bad input: one line)
        raise InvalidParameterError("latex", tex, "a formula SymPy's LaTeX parser reads",
                                    f"normalised to {normalised!r}: {' '.join(str(exc).split())[:200]}") from None
    if not isinstance(parsed, sp.Expr):
        raise InvalidParameterError("latex", tex, "an expression (not an equation or a relation)")
    values = {sp.Symbol(f"Q_{{{k}}}"): v for v, k in reader.slots.items()}
    lost = [s for s in values if s not in parsed.free_symbols]
    if lost:                                # a name read but not in the parse: the parser dropped a part
        raise InvalidParameterError("latex", tex, "a formula SymPy's LaTeX parser reads whole",
                                    f"a part was not read (normalised: {normalised!r})")
    stray = [str(s) for s in parsed.free_symbols if s not in values]
    funcs = [str(f.func) for f in parsed.atoms(sp.Function) if isinstance(f, sp.core.function.AppliedUndef)]
    if stray or funcs:
        raise InvalidParameterError("latex", tex, "a formula of the table's names",
                                    f"the parser left {', '.join(stray + funcs)} (normalised: {normalised!r})")
    facts = list(parsed.atoms(sp.factorial))
    if any(not (f.args[0].is_Integer and 0 <= f.args[0] <= 20) for f in facts):
        raise InvalidParameterError("latex", tex, "factorials of integers 0..20 only (2! in a coefficient)")
    parsed = parsed.xreplace({f: sp.factorial(int(f.args[0])) for f in facts})      # 2! in a printed coefficient
    formula = None
    try:                               # the shared validation layer: sizes, exponents, whitelisted functions
        expr = parsed.xreplace(values)
        formula = str(expr)
        parse_text(formula, "latex", symbols_of(family))
    except (ValueError, RecursionError, OverflowError) as exc:
        raise InvalidParameterError("latex", tex, "a formula the package can evaluate",
                                    f"read as {formula or 'a formula too large to print'}: "
                                    f"{getattr(exc, 'reason', exc)}") from None
    shown = {sp.Symbol(k): v for k, v in formula_tex(family).items()}
    rendered = sp.latex(expr, symbol_names=shown)
    return TexFormula(source=tex, formula=formula, latex=rendered, convention=convention, names=dict(reader.met),
                      dropped=dropped, normalised=normalised)


@cached(maxsize=None)
def _lookup(convention) -> dict:
    """The table of ``convention`` keyed by :func:`~onestep_theory.quantities.texnames.tex_key`."""
    return {entry_key(e.tex): e for e in table(convention)}


def _overrides(symbols, lookup, convention) -> dict:
    """``symbols`` (TeX name -> reading or expression) as entries keyed like the table."""
    from .textables import Entry

    out = {}
    for name, meaning in symbols.items():
        if not isinstance(name, str) or not isinstance(meaning, str) or not name.strip():
            raise InvalidParameterError("symbol", f"{name}={meaning}", "NAME=MEANING, both text")
        tex = re.sub(r"^([A-Za-z]{2,})", r"\\\1", name.strip())     # sigma -> \sigma, tilde\eta -> \tilde\eta
        try:
            key = entry_key(tex)
        except (TexError, IndexError) as exc:
            raise InvalidParameterError("symbol", name, "one TeX name such as sigma, c_1 or \\tilde\\eta",
                                        str(exc) if isinstance(exc, TexError) else "") from None
        if key in out:
            raise InvalidParameterError("symbol", name, "each name once")
        old = lookup.get(key)
        reading = next((r for r in (old.readings if old else ()) if r[0] == meaning.strip()), None)
        if reading is not None:
            if reading[1] is None:
                raise InvalidParameterError("symbol", f"{name}={meaning}", f"a reading with a value ({reading[2]})")
            out[key] = Entry(tex, reading[2], reading[1])
        else:
            out[key] = Entry(tex, f"given: {meaning.strip()}", meaning.strip(),
                             deriv=old.deriv if old is not None and old.text == meaning.strip() else None)
    return out


def _listing(entries) -> str:
    return ", ".join(e.tex for e in entries if not e.refused)
