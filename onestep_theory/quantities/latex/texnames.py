r"""Reading the names of a LaTeX formula (docs/theory/checking.md §7): the recursive reader that normalises the
tokens (:mod:`onestep_theory.quantities.latex.texlex`) and replaces every name by a placeholder for SymPy's LaTeX parser.

A *name* is a letter or a Greek command with its decorations (``\\tilde \\hat \\check \\bar``), its subscript, its
star and a word superscript; its :func:`tex_key` is what the symbol tables (:mod:`onestep_theory.quantities.latex.textables`)
are keyed by.  The meaning of a name is not decided here: the :class:`Reader` asks the ``resolve`` callable it is
given (:func:`onestep_theory.quantities.latex.tex.read_latex` supplies it).
"""

from __future__ import annotations

import sympy as sp

from .texlex import TexError, after_arg, group_at, is_lambda, tokens, top_sum

__all__ = ["Reader", "tex_key", "entry_key", "FUNCS", "MAX_TEX_NAMES"]

FUNCS = {r"\exp", r"\log", r"\ln", r"\sin", r"\cos", r"\tan", r"\sinh", r"\cosh", r"\tanh"}
_WORDS = {r"\mathrm", r"\operatorname", r"\text", r"\textrm", r"\mathit", r"\mathsf", r"\rm", r"\mathbf"}
_DECOS = {r"\tilde": "tilde", r"\widetilde": "tilde", r"\hat": "hat", r"\widehat": "hat", r"\check": "check",
          r"\bar": "bar", r"\overline": "bar", r"\mathcal": "cal"}
_BOLD = {r"\mathbf", r"\boldsymbol", r"\bm", r"\mathbb"}
_STARS = {r"\star", "*", r"\ast"}
_ALIAS = {"varphi": "phi", "varepsilon": "epsilon", "epsilon": "epsilon"}
_NOT_READ = {r"\over", r"\sum", r"\prod", r"\int", r"\lim", r"\max", r"\min", r"\det", r"\langle", r"\rangle",
             r"\mathbb", r"\nabla", r"\infty", r"\Vert", r"\mid", r"\top", r"\sup", r"\inf"}
#: Most names one formula may hold (each costs the LaTeX parser about 20 ms).
MAX_TEX_NAMES = 80


def tex_key(base: str, decos=(), sub: str = "", star: bool = False, sup: str = "") -> tuple:
    """The key of a name: Greek letters by name (``phi``; ``\\varphi`` is ``phi``), decorations sorted, the
    subscript without braces, spaces, commas or star, whether it carries a star, and a word superscript."""
    return (_ALIAS.get(base, base), tuple(sorted(decos)), sub, bool(star), sup)


class Reader:
    """Recursive reader of the token list; emits normalised TeX with a placeholder ``Q_{k}`` per name."""

    def __init__(self, tokens, resolve):
        self.t, self.i, self.resolve = tokens, 0, resolve
        self.slots, self.met, self.used = {}, {}, [0]

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else None

    def take(self):
        tok = self.peek()
        if tok is None:
            raise TexError("the formula ends too early (an argument is missing)")
        self.i += 1
        return tok

    def arg(self) -> list:
        """One TeX argument as a token list: a braced group, a command or one character (``\\frac43``)."""
        tok = self.take()
        if tok == "{":
            depth, start = 1, self.i
            while depth:
                tok = self.take()
                depth += (tok == "{") - (tok == "}")
            return self.t[start:self.i - 1]
        if tok[0].isdigit() and len(tok) > 1 and "." not in tok:    # \frac43: the arguments are 4 and 3
            self.t[self.i - 1:self.i] = [tok[0], tok[1:]]
            return [tok[0]]
        if tok == r"\frac":                                 # x^\frac12
            a, b = self.arg(), self.arg()
            return [r"\frac", "{", *a, "}", "{", *b, "}"]
        return [tok]

    def sub(self, tokens) -> str:
        r = Reader(tokens, self.resolve)
        r.slots, r.met, r.used = self.slots, self.met, self.used
        return r.run()

    def run(self) -> str:
        out = []
        while self.peek() is not None:
            out.append(self.item())
            if out[-1] == "/":
                out += self._operand()
                if self.peek() not in (None, "+", "-", ")", "/", r"\cdot", "|"):
                    raise TexError("'a/b c' is ambiguous (a/(b c) or (a/b) c): write \\frac{a}{b c}, or parentheses")
        return " ".join(x for x in out if x)

    def _operand(self) -> list:
        """The items of the divisor after a '/': one factor with its powers, primes and subscripts."""
        if self.peek() is None:
            raise TexError("a '/' without a divisor")
        out, depth = [], 0
        if self.peek() == "|":                           # 1/|m_1|: the absolute value is the divisor
            out.append(self.item())
            while self.peek() not in (None, "|"):
                out.append(self.item())
            out.append(self.item() if self.peek() is not None else "")
            return out + [self.item() for _ in iter(lambda: self.peek() in ("^", "_", "!"), False)]
        while self.peek() is not None:
            out.append(self.item())
            depth += out[-1].count("(") - out[-1].count(")")
            if depth <= 0 and out[-1] not in FUNCS:          # a function's argument belongs to the divisor
                break
        while self.peek() in ("^", "_", "!"):
            out.append(self.item())
        return out

    def item(self) -> str:
        tok = self.peek()
        if tok == "{":
            whole = self.i == 0
            inner = self.arg()
            if top_sum(inner) and not (whole and self.peek() is None):
                raise TexError("braces do not print: '{a+b} c' shows as a + b c on the page; write parentheses")
            return "{" + self.sub(inner) + "}"
        if tok == r"\frac":
            self.take()
            num, den = self.arg(), self.arg()
            d = _derivative(num, den)
            if d is not None:
                body = d if d else self._after_derivative()
                return self._paren(self.name_tokens(body, deriv=True), operator=not d, of_lambda=True)
            return r"\frac{" + self.sub(num) + "}{" + self.sub(den) + "}"
        if tok == r"\sqrt":
            self.take()
            root = ""
            if self.peek() == "(":
                raise TexError("write a square root as \\sqrt{x}")
            if self.peek() == "[":                    # \sqrt[3]{x}
                self.take()
                inner = []
                while self.peek() != "]":
                    inner.append(self.take())
                self.take()
                root = "[" + self.sub(inner) + "]"
            return r"\sqrt" + root + "{" + self.sub(self.arg()) + "}"
        if tok in (r"\partial", "d") or tok in _WORDS:
            inline = self._inline_derivative()            # \partial m_2/\partial\lambda, dm_2/d\lambda inline
            if inline is not None:
                return inline
        if tok == r"\partial":
            self.take()
            if self.peek() != "_" or not is_lambda(self._peek_arg(1)):
                raise TexError(r"\partial is read only as a lambda-derivative: \partial_\lambda m_2 or "
                                r"\frac{\partial m_2}{\partial\lambda}")
            self.take()
            self.arg()
            return self._paren(self.name_tokens(self._after_derivative(), deriv=True), operator=True, of_lambda=True)
        if tok in FUNCS:
            j = self.i + 1
            while j < len(self.t) and self.t[j] in ("^", "_"):
                j = after_arg(self.t, j + 1)
            if j >= len(self.t) or self.t[j] != "(":
                raise TexError(f"write the argument of {tok} in parentheses ({tok}(x)): '{tok} x/y' is ambiguous")
            self.take()
            return tok
        if tok in _WORDS:
            self.take()
            word = _word(self.arg()) if tok != r"\rm" else self.take()
            if (rf"\{word}") in FUNCS:
                return rf"\{word}"
            if tok in (r"\text", r"\textrm"):        # prose: \text{psi} is the word psi, not the letter
                raise TexError(f"\\text{{{word}}} is prose, not a name (write the symbol itself)")
            if word == "e":
                return self._paren(self.slot(sp.E, "e", "Euler's number"), shown="e")
            return self.name_from(word)
        if tok in (r"\cdot", "+", "-", "(", ")", "/", "|", "!"):
            self.take()
            return tok
        if tok in ("^", "_"):
            self.take()
            return tok + "{" + self.sub(self.arg()) + "}"
        if tok == r"\pi":
            self.take()
            return self._paren(self.slot(sp.pi, r"\pi", "pi"), shown=r"\pi")
        if tok == ".":
            raise TexError("a lone '.' (a decimal needs digits, e.g. 0.5)")
        if tok[0].isdigit() or tok[0] == ".":
            self.take()
            if "." in tok:                               # exact: 0.25 is 25/100
                whole, frac = tok.split(".")
                return r"\frac{" + str(int((whole or "0") + frac)) + "}{" + str(10 ** len(frac)) + "}"
            return tok
        if tok in ("=", ",", ";", "<", ">", r"\approx", r"\le", r"\ge", r"\to", r"\equiv"):
            raise TexError(f"'{tok}' inside the formula: paste one expression (a left-hand side 'X =' is allowed)")
        if tok in _NOT_READ or tok[0] == "\\" and not tok[1:].isalpha():
            raise TexError(f"'{tok}' is not a name or an operator the reader takes")
        return self.name_from(None)

    def _paren(self, text, operator=False, of_lambda=False, shown="") -> str:
        """``text`` (a name, a derivative or a constant) before what follows: ``(\\lambda)`` after a function of λ
        is its argument (also after a power: ``m_1^2(\\lambda)``), any other one-term parenthesis right after a
        name reads like an argument and is refused, a parenthesis with a sum or after a power is a product; a power after the operator form ``\\partial_\\lambda m_2^2`` would be ambiguous."""
        if operator and self.peek() == "^":
            raise TexError("a power after d/dlambda NAME is ambiguous: write (\\partial_\\lambda m_2)^2")
        powered = self.peek() == "^"
        j = after_arg(self.t, self.i + 1) if powered else self.i     # past a power: m_1^2(\lambda)
        if j < len(self.t) and self.t[j] == "(" and (of_lambda or not powered):
            group, end = group_at(self.t, j)
            if of_lambda and group == [r"\lambda"]:
                del self.t[j:end + 1]                    # m_1(\lambda): the argument, not a product
            elif not top_sum(group, binary=True) and (end + 1 >= len(self.t) or self.t[end + 1] != "^"
                                                      or "^" not in group):
                # a power after it does not make \gamma(\alpha_0)^2 a product (ambiguous); a power inside does:
                # \alpha(\check\mu_1^2)^{3/2}, as SymPy prints a product
                raise TexError(f"{shown or text}(x) with one term x reads like an argument: write the product "
                               f"without the parenthesis, or \\cdot" + (f"; {shown}(\\lambda) is {shown}" if of_lambda
                                                                         else ""))
        return text + (r" \cdot" if self.peek() == "(" else "")

    def _differential_at(self, j):
        """The index after a differential (``\\partial``, ``d``, ``\\mathrm{d}``) starting at ``j``, or None."""
        t = self.t
        if j >= len(t):
            return None
        if t[j] in (r"\partial", "d"):
            return j + 1
        if t[j] in _WORDS and j + 1 < len(t):
            end = after_arg(t, j + 1)
            return end if [x for x in t[j + 1:end] if x not in ("{", "}")] == ["d"] else None
        return None

    def _inline_derivative(self):
        """``\\partial X/\\partial\\lambda`` (or with ``d``) at the cursor: the λ-derivative of the name X, or None
        (cursor unchanged) when the tokens are not that."""
        start = self.i
        k = self._differential_at(start)
        if k is None:
            return None
        self.i = k
        try:
            self.name_from(None, dry=True)
        except (TexError, IndexError):
            self.i = start
            return None
        body_end = self.i
        k2 = self._differential_at(body_end + 1) if self.peek() == "/" else None
        end = after_arg(self.t, k2) if k2 is not None and k2 < len(self.t) else None
        lam = None if end is None else (self.t[k2 + 1:end - 1] if self.t[k2] == "{" else [self.t[k2]])
        if lam is None or not is_lambda(lam) or body_end == k:
            self.i = start
            return None
        body = self.t[k:body_end]
        self.i = end
        return self._paren(self.name_tokens(body, deriv=True), operator=True, of_lambda=True)

    def _peek_arg(self, k) -> list:
        """The tokens of the argument ``k`` tokens ahead, without consuming them (see :func:`after_arg`)."""
        j = self.i + k
        if j >= len(self.t):
            return []
        end = after_arg(self.t, j)
        return self.t[j + 1:end - 1] if self.t[j] == "{" else [self.t[j]]

    def _after_derivative(self) -> list:
        """The name differentiated by a preceding ``\\frac{\\partial}{\\partial\\lambda}`` or ``\\partial_\\lambda``."""
        start = self.i
        if self.peek() == "(":
            raise TexError("write the derivative of one name (d/dlambda of m_1 or m_2)")
        if self.peek() == "{":                           # \partial_\lambda{m_2}
            return self.arg()
        self.name_from(None, dry=True)
        return self.t[start:self.i]

    def name_tokens(self, tokens, deriv=False) -> str:
        r = Reader(list(tokens), self.resolve)
        r.slots, r.met, r.used = self.slots, self.met, self.used
        text = r.name_from(None, deriv=deriv)
        if r.peek() is not None:
            raise TexError(f"'{' '.join(tokens)}' is not one name (a derivative is of one name: m_1 or m_2)")
        return text

    def name_from(self, word, deriv=False, dry=False) -> str:
        """Read one name at the cursor (or the word of ``\\mathrm{word}``) with its decorations, subscript, star and
        primes; emit its placeholder (and ``\\cdot`` before a parenthesis: a name is never a function)."""
        decos = []
        if word is None:
            while self.peek() in _DECOS:
                decos.append(_DECOS[self.take()])
                inner = self.arg()
                while inner and inner[0] in _DECOS:          # \tilde{\hat x}
                    decos.append(_DECOS[inner.pop(0)])
                if not inner or len(inner) > 1 and inner[1] not in ("_", "^"):     # \check{\mu_1} is fine
                    raise TexError(f"a decoration applies to one name, not '{' '.join(inner)}'")
                self.t[self.i:self.i] = inner
            tok = self.take()
            if tok in _WORDS:
                word = _word(self.arg()) if tok != r"\rm" else self.take()
                base = word
            elif tok[0] == "\\" and tok[1:].isalpha():
                base = tok[1:]
            elif tok.isalpha() and len(tok) == 1:
                base = tok
            else:
                raise TexError(f"'{tok}' where a name was expected")
        else:
            base = word
        if not base.isalnum():
            raise TexError(f"'{base}' is not a name")
        if base == "d" and word is not None:
            raise TexError("a differential d: write the derivative as \\frac{d m_2}{d\\lambda}")
        sub, star, sup, power, has_sub = "", False, "", None, False
        while self.peek() in ("_", "^", "'"):
            tok = self.peek()
            if tok == "'" or self._peek_arg(1) in ([r"\prime"], ["'"]):
                if deriv:
                    raise TexError("a second lambda-derivative is not in the tables")
                self.take()
                if tok != "'":
                    self.arg()
                deriv = True
                continue
            a = self._peek_arg(1)
            text = [x for x in a if x not in _WORDS and x not in ("{", "}")]
            if tok == "_":
                if has_sub:
                    raise TexError(f"a second subscript on {base}")
                self.take()
                self.arg()
                has_sub = True
                star = star or any(x in _STARS for x in a)
                sub = "".join(x.lstrip("\\") for x in text if x not in _STARS and x != ",")
                continue
            if any(x in _STARS for x in a):               # ^\star, ^{\star 2}
                self.take()
                self.arg()
                star = True
                rest = [x for x in a if x not in _STARS]
                if rest:
                    power = self.sub(rest)
                continue
            if len(text) > 1 and all(x.isalpha() and len(x) == 1 for x in text) and len(a) != len(text) and \
                    not sup:                                  # ^{\rm slide}: part of the name
                self.take()
                self.arg()
                sup = "".join(text)
                continue
            after = self.i + 1 + (len(a) + 2 if self.peek(1) == "{" else 1)
            if not has_sub and power is None and after < len(self.t) and self.t[after] == "_":
                self.take()                                   # \sigma^2_\varepsilon: the power before the
                power = self.sub(self.arg())                  # subscript
                continue
            break                                             # a power: the caller reads it
        if dry:
            return ""
        key = tex_key(base, decos, sub, star, sup)
        tex = _render(base, decos, sub, star, sup)
        arg, end = None, None
        if self.peek() == "(" and power is None:          # L_{tr}(\mathbf F_0): an argument, if the name takes one
            group, end = group_at(self.t, self.i)
            arg = "".join(x for x in group if x not in ("{", "}") and x not in _WORDS and x not in _BOLD)
        value, meaning, shown, of_lambda, took = self.resolve(key, tex, deriv, arg)
        if took:
            del self.t[self.i:end + 1]
            shown = f"{shown}({arg})"
        text = self.slot(value, (r"\partial_\lambda " if deriv else "") + shown, meaning)
        if power is not None:
            text = "{" + text + "}^{" + power + "}"
        return self._paren(text, of_lambda=of_lambda and power is None, shown=shown)

    def slot(self, value, tex, meaning) -> str:
        self.used[0] += 1
        if self.used[0] > MAX_TEX_NAMES:
            raise TexError(f"more than {MAX_TEX_NAMES} names in one formula")
        k = self.slots.setdefault(value, len(self.slots))
        self.met[tex] = meaning
        return f"Q_{{{k}}}"


def _word(tokens) -> str:
    return "".join(t for t in tokens if t not in _WORDS)


def _derivative(num, den):
    """``\\frac{\\partial X}{\\partial\\lambda}`` (``d``, ``\\mathrm{d}`` too): the tokens of X, ``[]`` for
    ``\\frac{\\partial}{\\partial\\lambda} X``; None if this is an ordinary fraction."""
    def strip(tokens):
        t = list(tokens)
        if t[:1] == [r"\partial"] or t[:1] == ["d"]:
            return t[1:]
        if t[:2] in ([r"\mathrm", "d"], [r"\rm", "d"], [r"\operatorname", "d"]):
            return t[2:]
        if t[:1] and t[0] in _WORDS and t[1:4] == ["{", "d", "}"]:
            return t[4:]
        return None
    n, d = strip(num), strip(den)
    if n is None or d is None or not is_lambda(d):
        return None
    return n


def _render(base, decos, sub, star, sup) -> str:
    s = ("\\" + base) if len(base) > 1 else base
    for d in decos:
        s = f"\\{'mathcal' if d == 'cal' else d}{{{s}}}"
    if sub:
        s += "_" + (sub if len(sub) == 1 else "{" + sub + "}")
    if star or sup:
        s += "^" + ("\\star" if star else "") + (r"{\rm " + sup + "}" if sup else "")
    return s


def entry_key(tex: str) -> tuple:
    """The key of the one name written ``tex`` (a table entry or a ``--symbol`` name)."""
    reader = Reader(tokens(tex), None)
    keys = []
    def resolve(key, shown, deriv, arg=None):
        if deriv:
            raise TexError(f"'{tex}' is a derivative: give the meaning of the name itself")
        keys.append(key)
        return sp.Integer(0), "", shown, False, False

    reader.resolve = resolve
    if reader.run() != "Q_{0}" or len(keys) != 1:
        raise TexError(f"'{tex}' is not one name (no power, no second name)")
    return keys[0]
