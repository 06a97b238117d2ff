r"""Every quantity the package computes, by name: its parameters, its value with an error estimate at a point, its
closed form where the package has one, and the simulation that measures it (docs/theory/checking.md §1).

This is the one table behind ``check`` (a printed formula against a quantity) and ``sweep`` (a quantity over a
grid).  Spike-theory quantities take (φ, ψ, λ) in the convention of [MLHD23] (docs/theory/spike-theory.md §1);
sRF quantities take (α, β, λ, α0, η̃) in that of [CPDKLZL24] (docs/theory/srf-theory.md §1).

=======================  =====================================================
quantity                 what
=======================  =====================================================
``m1 m2 dm1 dm2``        resolvent traces and their λ-derivatives
``delta_1 … delta_8``    training-loss gain Δ_ℓ (closed form)
``lambda_1 … lambda_8``  test-error gain Λ_ℓ, corrected (closed form)
``train_loss_f0``        RF training loss L_tr(F0) (closed form)
``test_loss_f0``         RF test loss L_te(F0) (closed form)
``r c gamma``            Result 3.1's sRF parameters (closed form)
``test_error``           sRF test error (25)
``bound_upper``          upper bound (26) at Result 3.1's (r, c, γ)
``bound_lower``          lower bound (27)
``stieltjes``            Stieltjes transform of ΦᵀΦ/p at z = −λ (V2)
=======================  =====================================================

Definitions: docs/theory/spike-theory.md §6 (traces), §7 (Δ_ℓ, L_tr(F0)), §8.1 (L_te(F0)), §8.5 (Λ_ℓ);
docs/theory/srf-theory.md §2 (r, c, γ), §4.7 (test error), §6 (bounds), §7 (spectrum).
"""

from __future__ import annotations

import dataclasses
import math
import typing

import mpmath
import sympy as sp

from ..core.caches import cached, cached_at_precision
from ..core.errors import InvalidParameterError
from ..core.precision import asked_digits, precision, refined, tolerance, working_digits
from ..hermite import Activation
from ..spikes import CSTAR2, DM1, DM2, LAM, M1, M2, MAX_ELL, PHI, PSI, S2, cstar_symbols, delta_symbolic, gains
from ..spikes import lambda_symbolic, resolvent
from ..srf import bounds, srf_params_checked, srf_solve
from ..srf.spectral.spectrum import stieltjes_checked

__all__ = ["Quantity", "QUANTITIES", "quantity_of", "symbols_of", "formula_names", "formula_tex", "closed_form",
           "constants", "evaluate", "Evaluation", "formula_value", "SRF_SYMBOLS"]

_KMAX = MAX_ELL
#: sRF symbols of formulas (docs/theory/checking.md §2).
SRF_SYMBOLS = {
    **{n: sp.Symbol(n if n != "lam" else "lambda", positive=True) for n in ("c", "alpha", "beta", "lam", "alpha0",
                                                                              "mu2s")},
    **{n: sp.Symbol(n, nonnegative=True) for n in ("eta", "noise", "mu1c2")},
    **{n: sp.Symbol(n, real=True) for n in ("r", "gamma", "mu1", "mu1s")},      # negative for e.g. -tanh(x)
}
#: The formula name of every symbol (to print a difference in the names a user typed).
_POSITIVE = ("phi", "psi", "lam", "alpha", "beta", "alpha0")
_NONNEG = ("eta", "noise")


@dataclasses.dataclass(frozen=True)
class Quantity:
    """A named quantity: family (``spike`` or ``srf``), its parameters, whether it needs a teacher, a one-line
    description and the section of docs/theory that defines it."""

    name: str
    family: str
    params: tuple
    teacher: bool
    describe: str
    ref: str


def _spike(name, describe, ref, teacher=True):
    return Quantity(name, "spike", ("phi", "psi", "lam") + (("noise",) if teacher else ()), teacher, describe, ref)


def _srf(name, describe, ref, params=("alpha", "beta", "lam", "alpha0", "eta", "noise")):
    return Quantity(name, "srf", params, True, describe, ref)


QUANTITIES = {q.name: q for q in (
    [_spike(n, d, "docs/theory/spike-theory.md §6", teacher=False) for n, d in (
        ("m1", "resolvent trace m1"), ("m2", "resolvent trace m2"), ("dm1", "d m1 / d lambda"),
        ("dm2", "d m2 / d lambda"))]
    + [_spike(f"delta_{k}", f"training-loss gain Delta_{k}", "docs/theory/spike-theory.md §7") for k in
       range(1, _KMAX + 1)]
    + [_spike(f"lambda_{k}", f"test-error gain Lambda_{k} (corrected)", "docs/theory/spike-theory.md §8.5") for k in
       range(1, _KMAX + 1)]
    + [_spike("train_loss_f0", "RF training loss L_tr(F0)", "docs/theory/spike-theory.md §7.1"),
       _spike("test_loss_f0", "RF test loss L_te(F0)", "docs/theory/spike-theory.md §8.1")]
    + [_srf(n, d, "docs/theory/srf-theory.md §2", ("alpha0", "eta", "noise")) for n, d in (
        ("r", "spike strength r (Result 3.1)"), ("c", "bulk variance c (Result 3.1, corrected (11))"),
        ("gamma", "alignment gamma (Result 3.1)"))]
    + [_srf("test_error", "sRF test error (25)", "docs/theory/srf-theory.md §4.7"),
       _srf("bound_upper", "upper bound (26)", "docs/theory/srf-theory.md §6", ("alpha0", "eta", "noise")),
       _srf("bound_lower", "lower bound (27)", "docs/theory/srf-theory.md §6", ("alpha0", "eta", "noise")),
       _srf("stieltjes", "Stieltjes transform of Phi^T Phi / p at z = -lam (V2)", "docs/theory/srf-theory.md §7")])}


def quantity_of(name: str) -> Quantity:
    """The quantity called ``name``; a clear error listing the valid names otherwise."""
    if name not in QUANTITIES:
        raise InvalidParameterError("quantity", name, ", ".join(QUANTITIES))
    return QUANTITIES[name]


def symbols_of(family: str) -> dict:
    """See :func:`_symbols_of` (a fresh dict each call; the symbols are built once)."""
    return dict(_symbols_of(family))


@cached(maxsize=None)
def _symbols_of(family: str) -> dict:
    """The names a formula of ``family`` may use, mapped to the package's SymPy symbols (docs/theory/checking.md
    §2).  Spike: ``m1 m2 dm1 dm2 phi psi lam c1..c8 c_gt1 cs0..cs8 c_star2 noise b rho``; sRF: ``r c gamma alpha beta
    lam alpha0 eta noise mu1 mu1c2 mu1s mu2s``."""
    if family == "srf":
        return dict(SRF_SYMBOLS)
    cs = cstar_symbols(_KMAX)
    out = {"m1": M1, "m2": M2, "dm1": DM1, "dm2": DM2, "phi": PHI, "psi": PSI, "lam": LAM, "c_star2": CSTAR2,
           "noise": S2, "c_gt1": sp.Symbol("c_gt1", positive=True)}
    out.update({f"c{k}": sp.Symbol(f"c{k}", real=True) for k in range(_KMAX + 1)})
    out.update({f"cs{k}": cs[k] for k in range(_KMAX + 1)})
    b = sp.sqrt(cs[1] ** 2 + PHI * (CSTAR2 + S2))
    out.update({"b": b, "rho": cs[1] / b})
    return out


def formula_names(family: str) -> dict:
    """Package symbol -> the formula name of :func:`symbols_of` (``dm1_dlam`` -> ``dm1``, ``c_star_1`` -> ``cs1``)."""
    return {v: sp.Symbol(k) for k, v in symbols_of(family).items() if isinstance(v, sp.Symbol)}


def formula_tex(family: str) -> dict:
    """Formula name -> its LaTeX in the package's notation (docs/theory/checking.md §2), to show a formula as
    understood (``cs1`` -> ``c_{\\star,1}``, ``dm2`` -> ``\\partial_\\lambda m_2``, ``eta`` -> ``\\tilde\\eta``)."""
    if family == "srf":
        return {"r": "r", "c": "c", "gamma": r"\gamma", "alpha": r"\alpha", "beta": r"\beta", "lam": r"\lambda",
                "alpha0": r"\alpha_0", "eta": r"\tilde\eta", "noise": r"\Delta", "mu1": r"\mu_1",
                "mu1c2": r"\check\mu_1^2", "mu1s": r"\mu_1^\star", "mu2s": r"\mu_2^\star"}
    out = {"m1": "m_1", "m2": "m_2", "dm1": r"{\partial_\lambda m_1}", "dm2": r"{\partial_\lambda m_2}", "phi": r"\phi",
           "psi": r"\psi", "lam": r"\lambda", "c_gt1": "c_{>1}", "c_star2": r"{c_\star^2}",
           "noise": r"{\sigma_\varepsilon^2}", "b": "b", "rho": r"\rho"}
    out.update({f"c{k}": f"c_{k}" for k in range(_KMAX + 1)})
    out.update({f"cs{k}": rf"c_{{\star,{k}}}" for k in range(_KMAX + 1)})
    return out


def closed_form(name: str):
    r"""The package's closed form of quantity ``name`` in the symbols of :func:`symbols_of`, or None.

    :math:`\Delta_\ell`: docs/theory/spike-theory.md §7.3 (``delta_symbolic``); :math:`\Lambda_\ell`: §8.5
    (``lambda_symbolic``); :math:`\mathcal L_{\rm tr}(F_0)=\lambda\frac\psi\phi[c_{\star,1}^2m_2+(c_\star^2-c_{\star,1}^2
    +\sigma_\varepsilon^2)m_1]` (§7.1); :math:`\mathcal L_{\rm te}(F_0)=\frac\phi\psi[c_{\star,1}^2(-\partial_\lambda m_2)
    +(c_\star^2-c_{\star,1}^2+\sigma_\varepsilon^2)(-\partial_\lambda m_1)]/m_1^2` (§8.1); r, γ, c: Result 3.1 of
    [CPDKLZL24], eqs. (9)–(11) (docs/theory/srf-theory.md §2).
    """
    q = quantity_of(name)
    if name.startswith("delta_"):
        return delta_symbolic(int(name[6:]))
    if name.startswith("lambda_"):
        return lambda_symbolic(int(name[7:]))
    cs = cstar_symbols(1)
    if name == "train_loss_f0":
        return LAM * PSI / PHI * (cs[1] ** 2 * M2 + (CSTAR2 - cs[1] ** 2 + S2) * M1)
    if name == "test_loss_f0":
        return PHI / PSI * (cs[1] ** 2 * (-DM2) + (CSTAR2 - cs[1] ** 2 + S2) * (-DM1)) / M1 ** 2
    if q.family == "srf" and name in ("r", "c", "gamma"):
        S = SRF_SYMBOLS
        g = sp.sqrt(S["mu1s"] ** 2 + S["mu2s"] / S["alpha0"])
        return {"r": S["eta"] * S["mu1"] * g, "gamma": S["mu1s"] / g,
                "c": 1 + S["eta"] ** 2 / S["alpha0"] * S["mu2s"] * S["mu1c2"]}[name]
    return None


def constants(family: str, student, teacher, dps: int) -> dict:
    """Values of the activation constants of :func:`symbols_of` (symbol -> mpf at ``dps`` digits) and, for the
    spike theory, the exact teacher coefficients where they are known (symbol -> SymPy number) under ``"exact"``.
    Cached by (family, student, teacher) and the working precision: a sweep or a check computes them once, not at
    every point."""
    with precision(int(dps)):
        try:
            out = _constants_cached(family, student, teacher)
        except TypeError:                                   # an unhashable student or teacher
            out = _constants(family, student, teacher)
    return dict(out, exact=dict(out["exact"]))


@cached_at_precision(maxsize=64)
def _constants_cached(family, student, teacher):
    return _constants(family, student, teacher)


def _constants(family, student, teacher) -> dict:
    """:func:`constants` at the digits asked at the enclosing boundary (the activations' numeric constants are
    public entries taking the digits asked)."""
    s = Activation.from_any(student, "student", center=family == "spike")
    t = Activation.from_any(teacher, "teacher") if teacher is not None else None
    syms = symbols_of(family)
    out, exact = {}, {}
    dps = asked_digits()
    if family == "spike":
        for k in range(_KMAX + 1):
            out[syms[f"c{k}"]] = s.coeff(k, dps)
        out[syms["c_gt1"]] = s.c_gt1(dps)
        if t is not None:
            for k in range(_KMAX + 1):
                out[syms[f"cs{k}"]] = t.coeff(k, dps)
                ce = t.coeff_exact(k)
                if ce is not None:
                    exact[syms[f"cs{k}"]] = ce
            out[CSTAR2] = t.c_star(dps) ** 2
            _put(exact, CSTAR2, _exact_or_none(lambda: t.c_star(None) ** 2))
        for k in range(_KMAX + 1):
            _put(exact, syms[f"c{k}"], _exact_or_none(lambda: s.coeff_exact(k)))
        _put(exact, syms["c_gt1"], _exact_or_none(lambda: s.c_gt1(None)))
    else:
        mu1 = s.coeff(1, dps)
        out[syms["mu1"]] = mu1
        out[syms["mu1c2"]] = s.deriv_second_moment(dps) - mu1 ** 2
        out[syms["mu1s"]] = t.coeff(1, dps)
        out["teacher_norm2"] = t.second_moment(dps)
        # the exact constants where the activations have them (a formula true for this teacher is proved so)
        m1, d2 = _exact_or_none(lambda: s.coeff_exact(1)), _exact_or_none(lambda: s.deriv_second_moment(None))
        _put(exact, syms["mu1"], m1)
        _put(exact, syms["mu1c2"], d2 - m1 ** 2 if m1 is not None and d2 is not None else None)
        _put(exact, syms["mu1s"], _exact_or_none(lambda: t.coeff_exact(1)))
        t2 = _exact_or_none(lambda: t.second_moment(None))
        _put(exact, syms["mu2s"], t2 + syms["noise"] if t2 is not None else None)
    out["exact"] = exact
    return out


def _exact_or_none(fn):
    """``fn()`` if it gives an exact SymPy number (no float inside), else None."""
    try:
        v = fn()
    except (ValueError, TypeError, ArithmeticError):
        return None
    if isinstance(v, sp.Expr) and v.is_number and not v.has(sp.Float) and v.is_finite:
        return v
    return None


def _put(d, key, value):
    if value is not None:
        d[key] = value


class Evaluation(typing.NamedTuple):
    """What :func:`evaluate` returns: the quantity's ``value`` and ``error`` (a bound), the ``values`` of every
    symbol a formula of the family may use (docs/theory/checking.md §2), a ``state`` that warm-starts the next point
    of a sweep, and the ``errors`` of those symbol values (symbol -> bound)."""

    value: object
    error: float
    values: dict
    state: object
    errors: dict


#: Why the registry's values are computed 10 digits beyond the D asked (:func:`refined`): the formula's rounding and the
#: comparisons of ``check`` stay below the digits asked (evaluate's floor 10^-(D+8): 2 digits of margin).
_BEYOND = "the registry's values carry 10 digits beyond those asked"
#: Why the resolvent, gains and mapping are asked 5 digits beyond: their own error estimates (refinement), not their
#: rounding, then decide the digits of the values the formula sees.
_OWN = "the inputs asked 5 digits beyond: their error estimates, not their rounding, decide the digits"


def evaluate(name: str, point: dict, student, teacher=None, *, dps: int = 15, state=None) -> Evaluation:
    """:class:`Evaluation` of quantity ``name`` at ``point`` (a dict of its parameters, numbers or exact
    strings); ``state`` warm-starts the next point of a sweep."""
    value, err, vals, state, errs = _evaluate(name, point, student, teacher, dps, state)
    with precision(dps), refined(10, why=_BEYOND):
        floor = tolerance(-2, float, why="the values' error floor: 2 digits of margin before their last one")
    errors = {s: errs.get(s, floor * max(1.0, abs(float(v))) if mpmath.isfinite(v) else 0)   # alpha0 = inf: exact
              for s, v in vals.items()}
    return Evaluation(value, err, vals, state, errors)


def formula_value(expr, vals: dict, errors: dict, dps: int):
    """``(value, error)`` of the formula ``expr`` (package symbols) at the symbol ``vals``, or ``None`` where it is
    undefined (complex, infinite, 0/0).  The value is computed at ``dps`` + 10 digits; the error bounds the
    propagation of the symbols' stated ``errors`` (twice the first-order term :math:`\\sum_s|\\partial_sf|\\,
    \\mathrm{err}_s`, the derivatives exact from SymPy, the factor 2 covering the second order) plus the rounding
    at dps + 10 digits, measured against a second evaluation at dps + 20 digits (ten times that change, and
    :math:`10^{-(D+9)}|f|`): relative to the value, so a tiny quantity is not buried under an absolute floor
    (docs/theory/checking.md §4)."""
    free, f, grad = _compiled(expr)
    args = [vals[s] for s in free]
    try:
        with precision(dps), refined(10, why=_BEYOND):
            with refined(why="the rounding of the evaluation: from a second one, 10 digits finer"):
                fine = _real_value(f(*args))
            v = _real_value(f(*args))
            if v is None or fine is None or not mpmath.isfinite(v):
                return None
            prop = sum(abs(mpmath.mpf(g(*args))) * mpmath.mpf(errors[s]) for s, g in zip(free, grad))
            if not mpmath.isfinite(prop):
                return None
            rounding = 10 * abs(v - fine) + tolerance(-1, why="10 units of the last digit the values carry") * abs(v)
            return v, float(2 * prop + rounding)
    except (ZeroDivisionError, ValueError, TypeError, OverflowError):
        return None


def _real_value(v):
    """An evaluation's real mpf, or None (complex with an imaginary part, infinite, undefined)."""
    if isinstance(v, mpmath.mpc):
        v = v.real if v.imag == 0 else None
    return mpmath.mpf(v) if v is not None else None


@cached(maxsize=256)
def _compiled(expr):
    free = sorted(expr.free_symbols, key=str)
    return (free, sp.lambdify(free, expr, modules="mpmath"),
            [sp.lambdify(free, sp.diff(expr, s), modules="mpmath") for s in free])


def _evaluate(name, point, student, teacher, dps, state):
    q = quantity_of(name)
    if q.teacher and teacher is None:
        raise InvalidParameterError("teacher", None, f"a teacher: {name} depends on it")
    missing = [p for p in q.params if p not in point and p != "noise"]
    if missing:
        raise InvalidParameterError(missing[0], None, f"a value for {name} (it depends on {', '.join(q.params)})")
    for k, v in point.items():
        if k not in q.params:
            raise InvalidParameterError(k, v, f"a parameter of {name}: {', '.join(q.params)}")
        x = float(_mp(v, k == "alpha0"))       # alpha0 = inf: perfect alignment, as the mapping accepts it
        if (k in _POSITIVE and not x > 0) or (k in _NONNEG and not x >= 0) or not (math.isfinite(x) or
                                                                                 k == "alpha0"):
            raise InvalidParameterError(k, v, ("a finite real number " if k != "alpha0" else "a real number or inf ")
                                        + ("> 0" if k in _POSITIVE else ">= 0"))
    syms = symbols_of(q.family)
    with precision(dps), refined(10, why=_BEYOND):
        const = constants(q.family, student, teacher, asked_digits())
    vals = {k: v for k, v in const.items() if k not in ("exact", "teacher_norm2")}
    noise = point.get("noise", 0)
    if q.family == "spike":
        phi, psi, lam = (point[k] for k in ("phi", "psi", "lam"))
        with precision(dps), refined(5, why=_OWN):
            res = resolvent(student, phi, psi, lam, dps=asked_digits())
        with precision(dps), refined(10, why=_BEYOND):
            vals.update({M1: res.m1, M2: res.m2, DM1: res.dm1_dlam, DM2: res.dm2_dlam, PHI: _mp(phi),
                         PSI: _mp(psi), LAM: _mp(lam), S2: _mp(noise)})
        errs = {M1: res.errors["m1"], M2: res.errors["m2"], DM1: res.errors["dm1_dlam"],
                DM2: res.errors["dm2_dlam"]}
        if name in ("m1", "m2", "dm1", "dm2"):
            key = {"m1": "m1", "m2": "m2", "dm1": "dm1_dlam", "dm2": "dm2_dlam"}[name]
            return getattr(res, key), float(res.errors[key]), vals, None, errs
        ell = int(name.split("_")[1]) if name.startswith(("delta_", "lambda_")) else 1

        # the gains carry their own error estimates (a second evaluation at 10 more digits)
        with precision(dps), refined(5, why=_OWN):
            g = gains(student, teacher, phi, psi, lam, ell=ell, noise_var=noise, dps=asked_digits())
        key = ("delta" if name.startswith("delta_") else "lambda_test" if name.startswith("lambda_") else
               "baseline_train" if name == "train_loss_f0" else "baseline_test")
        v, e = getattr(g, key), g.errors[key]
        v, e = (v[-1], e[-1]) if isinstance(v, list) else (v, e)
        return v, float(e), vals, None, errs
    S = SRF_SYMBOLS
    a0, eta = point["alpha0"], point["eta"]
    with precision(dps), refined(5, why=_OWN):
        p = srf_params_checked(student, teacher, a0, eta, noise, dps=asked_digits())
    with precision(dps), refined(10, why=_BEYOND):       # the typed values become mpf here
        vals.update({S["r"]: p.r, S["c"]: p.c, S["gamma"]: p.gamma, S["alpha0"]: _mp(a0, True), S["eta"]: _mp(eta),
                     S["noise"]: _mp(noise), S["mu2s"]: p.mu2_star})
        for k in ("alpha", "beta", "lam"):
            if k in point:
                vals[S[k]] = _mp(point[k])
    errs = {S["r"]: p.errors["r"], S["c"]: p.errors["c"], S["gamma"]: p.errors["gamma"],
            S["mu2s"]: p.errors["mu2_star"]}
    if name in ("r", "c", "gamma"):
        # the error from a second evaluation at 10 more digits (srf_params_checked), not a guess
        return getattr(p, name), float(p.errors[name]), vals, None, errs
    if name == "test_error":
        sol = srf_solve(student, teacher, alpha=point["alpha"], beta=point["beta"], lam=point["lam"],
                        noise_var=noise, alpha0=a0, eta=eta, dps=dps if dps > 15 else None, init=state)
        return sol.test_error, float(sol.abs_error), vals, sol.state(), errs
    if name == "stieltjes":
        with precision(dps), refined(10, why=_BEYOND):       # the typed lambda becomes z = -lambda here
            z = -_mp(point["lam"]) if dps > 15 else -float(_mp(point["lam"]))
        _, v2, _, e2 = stieltjes_checked(student, z, r=float(p.r) if dps <= 15 else p.r,
                                         c=float(p.c) if dps <= 15 else p.c, alpha=point["alpha"], beta=point["beta"],
                                         dps=dps if dps > 15 else None)
        return v2.real, float(e2), vals, None, errs
    b = bounds(student, teacher, alpha0=a0, eta=eta, noise_var=noise, dps=dps if dps > 15 else None)
    key = "upper" if name == "bound_upper" else "lower"
    return getattr(b, key), float(b.errors[key]), vals, None, errs


def _mp(v, allow_infinite=False):
    from ..core.exact import to_exact

    if isinstance(v, float):
        return mpmath.mpf(v)
    x = to_exact(v, allow_infinite=allow_infinite)
    if x.is_infinite:
        return mpmath.inf if x > 0 else -mpmath.inf
    # k: SymPy evaluates 5 digits beyond the working ones: the value is then rounded once, to the working precision
    return mpmath.mpf(x.p) / x.q if x.is_Rational else mpmath.mpf(sp.N(x, working_digits() + 5))

