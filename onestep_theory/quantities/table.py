r"""Tables of theory values for a paper (``--table latex``): a ``booktabs`` table of value ± error that prints only
the digits the error vouches for (docs/theory/numerics.md §1, docs/theory/checking.md §5).

Every number comes as the pair :func:`~onestep_theory.core.vouching.vouch` printed (the value to the error's
decimal place and one guard digit, the error with the rounding of the printed value included, rounded up), so
the table shows exactly the digits of the text and JSON outputs, never one more.  Two forms:

* ``siunitx`` (the default): ``\num{0.204381872790303(46)}`` -- the value's digits, then the error in units of
  the last digit, rounded *up* to an integer.  Compact, aligned by ``siunitx``, the convention of physics journals.
* ``pm``: ``$0.204381872790303 \pm 4.6\times10^{-14}$`` -- the same interval, for a document without ``siunitx``.

Both intervals contain ``value ± error`` of the result (the unit count is rounded up), hence the true value.
The parameters are printed as typed (``1/2`` stays ``1/2``); the fixed ones stand in the caption and in a ``%``
comment line with the command, the version and the method.

>>> print(latex_number("0.204381872790303", "4.52e-14"))
\num{0.204381872790303(46)}
>>> print(latex_number("1.2345679e+400", "1.01e+394", form="pm"))
$1.2345679\times10^{400} \pm 1.1\times10^{394}$
"""

from __future__ import annotations

import fractions
import math
import re

from ..core.errors import InvalidParameterError

__all__ = ["FORMS", "TEX_NAMES", "latex_number", "latex_table", "quantity_table", "tex_name", "tex_text"]

FORMS = ("siunitx", "pm")

#: Parameter and quantity names -> their symbols (the papers' notation, docs/theory/conventions.md).
TEX_NAMES = {"alpha": r"\alpha", "beta": r"\beta", "lam": r"\lambda", "alpha0": r"\alpha_0", "eta": r"\tilde\eta",
             "noise_var": r"\Delta", "noise": r"\Delta", "phi": r"\phi", "psi": r"\psi", "r": "r", "c": "c",
             "gamma": r"\gamma", "kappa": r"\kappa", "test_error": r"\varepsilon_g", "value": r"\text{value}",
             "formula": r"\text{formula}", "best_linear": r"\varepsilon_{\rm lin}", "m1": "m_1", "m2": "m_2",
             "dm1": r"\partial_\lambda m_1", "dm2": r"\partial_\lambda m_2", "bound_upper": r"\varepsilon_{(26)}",
             "bound_lower": r"\varepsilon_{(27)}", "stieltjes": "V_2(-\\lambda)", "train_loss_f0": r"\mathcal L_{\rm tr}(F_0)",
             "test_loss_f0": r"\mathcal L_{\rm te}(F_0)", "class_error": r"\varepsilon_{\rm class}",
             "train_loss": r"\mathcal L_{\rm tr}", "m": "m", "theta": r"\theta", "q1": "q_1", "q2": "q_2",
             "V1": "V_1", "V2": "V_2", "D": "D", "quantity": r"\text{quantity}", "upper": r"\varepsilon_{(26)}",
             "lower": r"\varepsilon_{(27)}", "eta_upper": r"\tilde\eta^*_{(26)}", "eta_lower": r"\tilde\eta^*_{(27)}",
             "scale": r"\|\sigma_\star\|^2",
             **{f"hat_{k}": rf"\hat{{{v}}}" for k, v in (("V1", "V_1"), ("V2", "V_2"), ("q1", "q_1"), ("q2", "q_2"),
                                                       ("theta", r"\theta"), ("psi", r"\psi"), ("m", "m"))}}

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_NUMBER = re.compile(r"^([-+]?)(\d+)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$")


def tex_text(s) -> str:
    """Plain text made safe for LaTeX."""
    return "".join(_SPECIAL.get(ch, ch) for ch in str(s))


def tex_name(name: str) -> str:
    """The math symbol of a parameter or quantity name (``delta_2`` -> ``\\Delta_{2}``), else the name as text."""
    m = re.fullmatch(r"(delta|lambda)_(\d+)", name)
    if m:
        return "$" + (r"\Delta" if m.group(1) == "delta" else r"\Lambda") + "_{" + m.group(2) + "}$"
    return f"${TEX_NAMES[name]}$" if name in TEX_NAMES else r"\texttt{" + tex_text(name) + "}"


def _typed(text) -> str:
    """A parameter value as typed: a number or a ratio in math mode, anything else as text."""
    s = str(text).strip()
    if re.fullmatch(r"[-+]?[\d.]+(?:[eE][-+]?\d+)?(?:/[\d.]+)?|[-+]?inf", s):
        return "$" + s.replace("inf", r"\infty") + "$"
    return r"\texttt{" + tex_text(s) + "}"


def _assign(name, value) -> str:
    """``$\\lambda = 1/10$`` (one formula where both sides are math)."""
    lhs, rhs = tex_name(name), _typed(value)
    if lhs.startswith("$") and rhs.startswith("$"):
        return lhs[:-1] + " = " + rhs[1:]
    return f"{lhs} $=$ {rhs}"


def _power(e: int) -> str:
    return rf"\times10^{{{e}}}"


def latex_number(value: str, error: str, form: str = "siunitx") -> str:
    r"""The printed pair ``(value, error)`` of :func:`~onestep_theory.core.vouching.vouch` as LaTeX: the value's
    digits as printed, the error in units of its last digit rounded up (``siunitx``: ``\num{1.2345(12)}``; ``pm``:
    ``$1.2345 \pm 1.2\times10^{-3}$``).  A zero value is written to the error's decimal place and one more; so is a
    value whose last digit is 100 times the error or more (its zeros written out: the error is not inflated to a unit
    of that digit), and a value printed 1000 times below its error's place is rounded there, the rounding added to the
    error; a value with no vouched digit (error ``inf``, a non-finite value) as a dash with the word.

    >>> latex_number("0", "4.52e-14"), latex_number("3e-7", "5.1e-6"), latex_number("1", "0")
    ('\\num{0.0(46)e-14}', '\\num{3(51)e-7}', '\\num{1}')
    >>> latex_number("1", "1.4e-14"), latex_number("3e-301", "2.6e-14")     # never inflated to a unit of the value
    ('\\num{1.000000000000000(14)}', '\\num{0.0(27)e-14}')
    """
    if form not in FORMS:
        raise InvalidParameterError("table", form, f"one of {', '.join(FORMS)}")
    m = _NUMBER.match(str(value).strip())
    if m is None or str(error).strip().lower() in ("inf", "nan", ""):
        return rf"--- (\text{{{tex_text(value)}}}, no digit vouched)" if m is None else r"--- (no digit vouched)"
    sign, whole, frac, exp = m.group(1).replace("+", ""), m.group(2), m.group(3) or "", int(m.group(4) or 0)
    err = fractions.Fraction(str(error).strip())
    if err < 0:
        raise InvalidParameterError("error", error, "an error >= 0")
    ten = fractions.Fraction(10)
    lead = None
    if err > 0:                             # the error's leading decimal place, exactly (no float: 1e400 is fine)
        lead = len(str(err.numerator)) - len(str(err.denominator))
        while ten ** lead > err:
            lead -= 1
        while ten ** (lead + 1) <= err:
            lead += 1
    if lead is not None and err / ten ** (exp - len(frac)) >= 1000:
        # a value printed far below its error's place (3e-301 +/- 2.6e-14): rounded to the error's place and one
        # more, the rounding added to the error (the interval contains the printed one)
        v, P = fractions.Fraction(sign + whole + "." + (frac or "0")) * ten ** exp, lead - 1
        vr = round(v / ten ** P)
        err = err + abs(v - vr * ten ** P)
        lead += (ten ** (lead + 1) <= err)
        sign, whole, frac, exp = ("-" if vr < 0 else ""), str(abs(vr)), "", P
    if int(whole) == 0 and not frac.strip("0") and lead is not None:    # a zero value: the error's place and one more
        whole, frac, exp = "0", "0", lead
    elif lead is not None and ten ** (exp - len(frac)) >= 100 * err:
        # the value's last printed digit two decades and more above the error (an exact "1" +/- 1.4e-14): its zeros
        # written out to the error's place and one more, so that the error is not inflated to a unit of that digit
        frac += "0" * (exp - len(frac) - (lead - 1))
    place = exp - len(frac)
    units = math.ceil(err / fractions.Fraction(10) ** place) if err > 0 else 0
    mant = sign + whole + ("." + frac if frac else "")
    if form == "siunitx":
        return r"\num{" + mant + (f"({units})" if units else "") + (f"e{exp}" if exp else "") + "}"
    shown = mant + (_power(exp) if exp else "")
    if not units:
        return f"${shown}$"
    u = str(units)
    e_text = u[0] + ("." + u[1:] if len(u) > 1 else "")
    e_exp = place + len(u) - 1
    return f"${shown} \\pm {e_text}" + (_power(e_exp) if e_exp else "") + "$"


def latex_table(rows: list, columns: list, errors: dict, *, caption: str = "", fixed: dict | None = None,
                context: dict | None = None, form: str = "siunitx", label: str | None = None,
                names: dict | None = None) -> str:
    r"""A ``booktabs`` table (``table`` + ``tabular``) of ``rows`` (dicts of printed strings).

    ``columns``: the keys shown, in order; ``errors``: value column -> the column of its printed error (those
    columns are shown as :func:`latex_number`, the error columns are not shown on their own); every other column
    is a parameter, shown as typed (a column ``quantity`` holds names, shown as symbols); ``names`` renames a
    column's header (``{"value": "test_error"}``).  ``fixed`` (name -> value as typed) goes into the caption and a ``%`` line;
    ``context`` (the command, parameters, method, provenance of :func:`~onestep_theory.cli.common.cli_context`
    or a result's) into ``%`` lines.  Needs ``\usepackage{booktabs}`` (and ``siunitx`` for the default form).
    """
    from .. import __version__

    shown = [c for c in columns if c not in errors.values()]
    ctx = context or {}
    head = [f"% onestep_theory {__version__}: a table of value +- error, only the vouched digits "
            f"(needs \\usepackage{{booktabs{',siunitx' if form == 'siunitx' else ''}}})"]
    for key in ("command", "method"):
        if ctx.get(key):
            head.append(f"% {key}: " + " ".join(str(ctx[key]).split()))
    if fixed:
        head.append("% fixed: " + ", ".join(f"{k} = {v}" for k, v in fixed.items()))
    body = [" & ".join(tex_name((names or {}).get(c, c)) for c in shown) + r" \\"]
    for r in rows:
        cells = [latex_number(r[c], r[errors[c]], form) if c in errors else tex_name(r[c]) if c == "quantity" else
                 _typed(r.get(c, "")) for c in shown]
        body.append(" & ".join(cells) + r" \\")
    fixed_text = ", ".join(_assign(k, v) for k, v in (fixed or {}).items())
    cap = "; ".join(t for t in (caption, fixed_text) if t)
    cap += (". Each value with its error" + (" in units of the last digit" if form == "siunitx" else "")
            + ": only the digits the error vouches for.")
    spec = "l" * len(shown)
    return "\n".join(head + [r"\begin{table}", r"\centering", r"\caption{" + cap + "}"]
                     + ([r"\label{" + tex_text(label) + "}"] if label else [])
                     + [r"\begin{tabular}{" + spec + "}", r"\toprule", body[0], r"\midrule", *body[1:], r"\bottomrule",
                        r"\end{tabular}", r"\end{table}"]) + "\n"


def quantity_table(values: dict, errors: dict, keys=None, **kw) -> str:
    """A two-column table (quantity, value ± error) of one result's printed fields ``values`` (a ``to_dict``) with
    their printed ``errors``, in the order of ``keys`` (default: of ``errors``); a field without an error is left out
    (nothing vouches for its digits).  ``kw``: those of :func:`latex_table` (caption, fixed, context, form)."""
    rows = [{"quantity": k, "value": values[k], "error": errors[k]} for k in (keys or errors)
            if isinstance(values.get(k), str) and isinstance(errors.get(k), str)]
    return latex_table(rows, ["quantity", "value"], {"value": "error"}, **kw)
