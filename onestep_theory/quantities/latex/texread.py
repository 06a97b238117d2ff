r"""Reading one side of a LaTeX formula or equation (docs/theory/checking.md §7): the meaning of every TeX name in
the table of a convention (:mod:`onestep_theory.quantities.latex.textables`), SymPy's LaTeX parser on the normalised text
(:mod:`onestep_theory.quantities.latex.texnames` puts one placeholder per name), and the checks that nothing was dropped.
:mod:`onestep_theory.quantities.latex.tex` splits a display into sides and calls :func:`read_side` on each.

References: SymPy, ``sympy.parsing.latex`` (ANTLR grammar ``LaTeX.g4``).
"""

from __future__ import annotations

import dataclasses
import re

import sympy as sp

from ...core.caches import cached
from ...core.conventions import NATIVE, express
from ...core.errors import InvalidParameterError
from ...core.syntax import CONSTANTS, FUNCTIONS, parse_text
from ..registry import closed_form, formula_names, formula_tex, symbols_of
from .textables import FAMILY_OF, table
from .texlex import TexError, join_tokens
from .texnames import Reader, entry_key

__all__ = ["TexFormula", "TexSide", "read_side", "resolver", "vocabulary_of", "meaning_of", "table_by_key", "read_overrides",
           "table_listing"]


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


def vocabulary_of(convention, family) -> dict:
    """Name -> SymPy expression in plain symbols named by the family's formula names: the convention's parameters
    (converted exactly to the family's own convention) and the family's formula names."""
    native = NATIVE[family]
    params = {"noise_var" if k == "noise" else k: sp.Symbol(k) for k in symbols_of(family)
              if k in ("phi", "psi", "lam", "noise", "alpha", "beta", "alpha0", "eta")}
    from ...core.conventions import CONVENTIONS

    vocab = {k: sp.Symbol(k) for k in symbols_of(family) if k not in CONVENTIONS[convention]}
    vocab.update(express(convention, native, params))    # a parameter without a counterpart is absent, not
    return vocab                                          # read as a formula name of the same spelling


def meaning_of(entry_text, vocab, family, tex, convention) -> sp.Expr:
    if "@" in entry_text:                                 # the package's closed forms of quantities
        if family != "spike":
            raise TexError(f"{tex} is a quantity of the spike theory; this quantity is an sRF one")
        forms = {f"Q__{n}": closed_form(n).xreplace(formula_names(family))
                 for n in re.findall(r"@([a-z_0-9]+)", entry_text)}
        return parse_text(entry_text.replace("@", "Q__"), "latex", forms)
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", entry_text)) - set(FUNCTIONS) - set(CONSTANTS)
    missing = sorted(names - set(vocab))
    from ...core.conventions import CONVENTIONS

    lost = [m for m in missing if m in CONVENTIONS[convention]]
    if lost:
        raise TexError(f"{tex} is the {convention} parameter {lost[0]}, which has no counterpart in "
                        f"{NATIVE[family]}, the convention of this quantity (docs/theory/conventions.md §1)")
    if missing:
        raise TexError(f"{tex} means {entry_text}, and {', '.join(missing)} has no counterpart here (a symbol "
                        f"of the other theory, or a parameter the quantity's convention lacks)")
    return parse_text(entry_text, "latex", {k: v for k, v in vocab.items() if k in names})


@dataclasses.dataclass(frozen=True)
class TexSide:
    """The left-hand side of an equation as read (docs/theory/checking.md §7.5): ``kind`` is ``"quantity"`` (one name
    of a quantity of the package, ``quantity``) or ``"expression"`` (``formula``: text in the formula names and the
    quantity names)."""

    tex: str
    kind: str
    quantity: str | None
    formula: str
    latex: str
    names: dict

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def resolver(convention, family, symbols, ell, lhs, used=None):
    """The ``resolve`` callable of the reader (:class:`~onestep_theory.quantities.latex.texnames.Reader`): a TeX name's
    key -> (SymPy meaning, description, TeX, whether it is a function of λ, whether it took its argument).  On a
    left-hand side a name of a quantity means the quantity (a symbol named by it)."""
    from ..registry import QUANTITIES

    entries = table(convention)
    lookup = table_by_key(convention)
    overrides = readread_overrides(symbols or {}, lookup, convention)
    vocab = vocabulary_of(convention, family)
    qnames = {n: sp.Symbol(n) for n in QUANTITIES}
    for e in overrides.values():                     # a --symbol meaning is checked where it is given
        try:
            if e.text is not None:
                meaning_of(e.text, vocab, family, e.tex, convention)
        except (TexError, ValueError) as exc:
            raise InvalidParameterError("symbol", f"{e.tex}={e.text}", f"a meaning in the names of the {convention} "
                                        "table and the formula names (docs/theory/checking.md §2)",
                                        str(getattr(exc, "reason", exc))) from None

    def window(text, shown):
        if text is None or "{ell}" not in text:
            return text
        if ell is None:
            raise TexError(f"{shown} is in the window ell: give it (--ell L; API ell=L)")
        return text.replace("{ell}", str(ell))

    def resolve(key, shown, deriv, arg=None):
        if used is not None:
            used.add(key)
        e = overrides.get(key, lookup.get(key))
        if e is None:
            raise TexError(f"unknown symbol {shown} in the {convention} table ({table_listing(entries)}); give its "
                            f"meaning with --symbol NAME=EXPR (API: symbols={{NAME: EXPR}}) or pick another "
                            f"--convention")
        if e.refused:
            raise TexError(f"{shown} ({e.describe}): {e.refused}")
        if e.readings and e.text is None:
            opts = "; ".join(f"--symbol {shown.lstrip(chr(92))}={n} ({d})" for n, v, d in e.readings if v)
            raise TexError(f"{shown} is ambiguous in the {convention} table: say which with {opts}")
        text, quantity, describe, took = (e.deriv if deriv else e.text), (e.dquantity if deriv else e.quantity), \
            e.describe, False
        if e.args:
            pick = next((a for a in e.args if a[0] == arg), None)
            if pick is None:
                raise TexError(f"{shown} takes an argument: " + " or ".join(f"{shown}({a[0]})" for a in e.args))
            _, describe, text, quantity = pick
            took = True
        if lhs and e.variant:
            raise TexError(f"{shown} is the table's name for a printed variant ({e.describe}): as a left-hand side "
                           "it stands for the quantity checked: give it with --against")
        if lhs and quantity is not None:
            if FAMILY_OF[convention] != family:
                raise TexError(f"{shown} is a quantity of the {FAMILY_OF[convention]} theory, not of this one")
            q = parse_text(window(quantity, shown), "latex", qnames)
            return q, describe + (" (d/dlambda)" if deriv else ""), e.tex, e.deriv is not None or e.of_lambda, took
        if text is None and quantity is not None:
            raise TexError(f"{shown} is the quantity {quantity}, which the package has in no closed form: it may "
                           "stand only on the left-hand side")
        if text is None:
            given = " as given by --symbol" if key in overrides else ""
            raise TexError(f"the lambda-derivative of {shown}{given} is not known (the {convention} table has "
                           f"one for m_1, m_2, tau_1, tau_2)")
        return (meaning_of(window(text, shown), vocab, family, shown, convention), describe + (" (d/dlambda)" if deriv
                else ""), e.tex, e.deriv is not None or e.of_lambda, took)

    return resolve


def read_side(body, tex, family, convention, symbols, ell, lhs=False, used=None):
    """One side (a token list) read: ``(TexSide or None, TexFormula or None)`` for a left- or a right-hand side."""
    from ..registry import QUANTITIES

    convention = convention or NATIVE[family]
    resolve = resolver(convention, family, symbols, ell, lhs, used)
    shown_side = join_tokens(body)
    reader = Reader(list(body), resolve)
    where = "the left-hand side" if lhs else "a formula in the names of the table"
    try:
        normalised = reader.run()
    except TexError as exc:
        raise InvalidParameterError("latex", tex, where if not lhs else f"{where} read ({shown_side})",
                                    str(exc)) from None
    except IndexError:
        raise InvalidParameterError("latex", tex, "balanced braces") from None
    except RecursionError:
        raise InvalidParameterError("latex", tex[:40], "a formula nested less deeply") from None
    from sympy.parsing.latex import parse_latex

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
    names = symbols_of(family)
    if lhs:
        names.update({n: sp.Symbol(n) for n in QUANTITIES if n not in names})
    try:                               # the shared validation layer: sizes, exponents, whitelisted functions
        expr = parsed.xreplace(values)
        formula = str(expr)
        parse_text(formula, "latex", names)
    except (ValueError, RecursionError, OverflowError) as exc:
        raise InvalidParameterError("latex", tex, "a formula the package can evaluate",
                                    f"read as {formula or 'a formula too large to print'}: "
                                    f"{getattr(exc, 'reason', exc)}") from None
    shown = {sp.Symbol(k): v for k, v in formula_tex(family).items()}
    shown.update({sp.Symbol(n): r"\mathrm{" + n.replace("_", r"\_") + "}" for n in QUANTITIES if n not in
                  formula_tex(family)})
    rendered = sp.latex(expr, symbol_names=shown)
    if lhs:
        single = isinstance(expr, sp.Symbol) and expr.name in QUANTITIES
        return TexSide(tex=shown_side, kind="quantity" if single else "expression",
                       quantity=expr.name if single else None, formula=formula, latex=rendered,
                       names=dict(reader.met)), None
    return None, TexFormula(source=shown_side, formula=formula, latex=rendered, convention=convention,
                            names=dict(reader.met), dropped=None, normalised=normalised)


@cached(maxsize=None)
def table_by_key(convention) -> dict:
    """The table of ``convention`` keyed by :func:`~onestep_theory.quantities.latex.texnames.tex_key`."""
    return {entry_key(e.tex): e for e in table(convention)}


def readread_overrides(symbols, lookup, convention) -> dict:
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


def table_listing(entries) -> str:
    return ", ".join(e.tex for e in entries if not e.refused)
