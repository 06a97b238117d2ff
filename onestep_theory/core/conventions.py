r"""Parameter conventions of the papers, converted exactly (docs/theory/conventions.md).

Four conventions name the same model (docs/theory/srf-theory.md §1) differently.  Every conversion goes through
the package's sRF convention ``cui24``; exact inputs give exact outputs (SymPy numbers), so a round trip returns
its inputs exactly.

==========  ================================================================================================
convention  parameters (``name``: meaning)
==========  ================================================================================================
``cui24``   [CPDKLZL24], the package's sRF commands: ``alpha`` = n/d, ``beta`` = p/d, ``alpha0`` = n0/d,
            ``eta`` = η̃ (η = η̃ p), ``lam`` (sum loss, readout a/√p), ``noise_var`` = Δ
``dandi24`` the normalisation η = η̃_d·d of the theory table (docs/theory/conventions.md §2): ``eta_d`` = η̃ β;
            ``alpha, beta, alpha0, lam, noise_var`` as in cui24; the primed conjugates
            ``hat_theta`` = ϑ̂/√β, ``hat_psi`` = ψ̂/√β (docs/theory/srf-theory.md §4.8)
``moniri23`` [MLHD23], the package's spike commands: ``phi`` = d/n = 1/α, ``psi`` = d/N = 1/β, ``lam`` = λβ/α
            (mean loss, readout without 1/√N), ``noise_var`` = σ_ε²; one n serves the step and the readout
``ba22``    [BES+22]: ``psi1`` = n/d = α (= α0), ``psi2`` = N/d = β, ``lam`` = λβ/α, ``eta`` = η̃√N with
            N = β d (needs ``d``), ``noise_var``
==========  ================================================================================================

>>> convert({"alpha": 2, "beta": "1/2", "lam": "1/10"}, "cui24", "moniri23")
{'phi': 1/2, 'psi': 2, 'lam': 1/40}
"""

from __future__ import annotations

import sympy as sp

from .errors import InvalidParameterError
from .exact import to_exact

__all__ = ["CONVENTIONS", "NATIVE", "convert", "express", "round_trip"]

#: Convention -> its parameters (in the order they are printed).
CONVENTIONS = {
    "cui24": ("alpha", "beta", "alpha0", "eta", "lam", "noise_var", "hat_theta", "hat_psi", "d"),
    "dandi24": ("alpha", "beta", "alpha0", "eta_d", "lam", "noise_var", "hat_theta", "hat_psi", "d"),
    "moniri23": ("phi", "psi", "lam", "noise_var", "d"),
    "ba22": ("psi1", "psi2", "eta", "lam", "noise_var", "d"),
}
#: The convention of each command family's inputs.
NATIVE = {"spike": "moniri23", "srf": "cui24"}

_POSITIVE = {"alpha", "beta", "alpha0", "phi", "psi", "psi1", "psi2", "lam", "d"}
_NONNEG = {"eta", "eta_d", "noise_var"}


def _need(p, names, what, conv):
    missing = [n for n in names if n not in p]
    if missing:
        raise InvalidParameterError(what, p[what] if what in p else None,
                                    f"given together with {', '.join(missing)} (its {conv} value depends on them)")


def _to_cui(p: dict, conv: str) -> dict:
    q = {k: p[k] for k in ("noise_var", "d") if k in p}
    if conv in ("cui24", "dandi24"):
        q.update({k: p[k] for k in ("alpha", "beta", "alpha0", "lam", "hat_theta", "hat_psi") if k in p})
        if conv == "cui24" and "eta" in p:
            q["eta"] = p["eta"]
        if conv == "dandi24":
            if "eta_d" in p:
                _need(p, ["beta"], "eta_d", conv)
                q["eta"] = p["eta_d"] / p["beta"]
            for h in ("hat_theta", "hat_psi"):
                if h in p:
                    _need(p, ["beta"], h, conv)
                    q[h] = p[h] * sp.sqrt(p["beta"])
        return q
    if conv == "moniri23":
        if "phi" in p:
            q["alpha"] = 1 / p["phi"]
        if "psi" in p:
            q["beta"] = 1 / p["psi"]
        if "lam" in p:                                       # lam_M = lam * beta / alpha = lam * phi / psi
            _need(p, ["phi", "psi"], "lam", conv)
            q["lam"] = p["lam"] * p["psi"] / p["phi"]
        return q
    # ba22
    if "psi1" in p:
        q["alpha"] = q["alpha0"] = p["psi1"]
    if "psi2" in p:
        q["beta"] = p["psi2"]
    if "lam" in p:
        _need(p, ["psi1", "psi2"], "lam", conv)
        q["lam"] = p["lam"] * p["psi1"] / p["psi2"]
    if "eta" in p:
        _need(p, ["psi2", "d"], "eta", conv)
        q["eta"] = p["eta"] / sp.sqrt(p["psi2"] * p["d"])
    return q


def _from_cui(q: dict, conv: str) -> dict:
    out = {k: q[k] for k in ("noise_var", "d") if k in q}
    if conv == "cui24":
        out.update(q)
    elif conv == "dandi24":
        out.update({k: q[k] for k in ("alpha", "beta", "alpha0", "lam") if k in q})
        if "eta" in q:
            _need(q, ["beta"], "eta", conv)
            out["eta_d"] = q["eta"] * q["beta"]
        for h in ("hat_theta", "hat_psi"):
            if h in q:
                _need(q, ["beta"], h, conv)
                out[h] = q[h] / sp.sqrt(q["beta"])
    elif conv == "moniri23":
        for k in ("eta", "hat_theta", "hat_psi"):
            if k in q:
                raise InvalidParameterError(k, q[k], "absent: moniri23 has no counterpart (its step is "
                                                     "eta = c n^a, a different scaling; no sRF order parameters)")
        if "alpha0" in q and ("alpha" not in q or q["alpha0"] != q["alpha"]):
            raise InvalidParameterError("alpha0", q["alpha0"], "equal to alpha: moniri23 uses one n for the step "
                                                               "and the readout")
        if "alpha" in q:
            out["phi"] = 1 / q["alpha"]
        if "beta" in q:
            out["psi"] = 1 / q["beta"]
        if "lam" in q:
            _need(q, ["alpha", "beta"], "lam", conv)
            out["lam"] = q["lam"] * q["beta"] / q["alpha"]
    else:
        for k in ("hat_theta", "hat_psi"):
            if k in q:
                raise InvalidParameterError(k, q[k], "absent: ba22 has no sRF order parameters")
        if "alpha0" in q and ("alpha" not in q or q["alpha0"] != q["alpha"]):
            raise InvalidParameterError("alpha0", q["alpha0"], "equal to alpha: ba22 has n0 = n (psi1)")
        if "alpha" in q:
            out["psi1"] = q["alpha"]
        if "beta" in q:
            out["psi2"] = q["beta"]
        if "lam" in q:
            _need(q, ["alpha", "beta"], "lam", conv)
            out["lam"] = q["lam"] * q["beta"] / q["alpha"]
        if "eta" in q:
            _need(q, ["beta", "d"], "eta", conv)
            out["eta"] = q["eta"] * sp.sqrt(q["beta"] * q["d"])
    return out


def _check(params: dict, conv: str) -> dict:
    if conv not in CONVENTIONS:
        raise InvalidParameterError("convention", conv, " or ".join(CONVENTIONS))
    if not isinstance(params, dict) or not params:
        raise InvalidParameterError("params", params, f"a non-empty dict of {conv} parameters")
    out = {}
    for k, v in params.items():
        if k not in CONVENTIONS[conv]:
            raise InvalidParameterError(k, v, f"a parameter of {conv}: {', '.join(CONVENTIONS[conv])}")
        x = to_exact(v, k)
        if (k in _POSITIVE and not x.is_positive) or (k in _NONNEG and not x.is_nonnegative):
            raise InvalidParameterError(k, v, "a real number > 0" if k in _POSITIVE else "a real number >= 0")
        out[k] = x
    return out


def convert(params: dict, source: str, target: str) -> dict:
    """``params`` of convention ``source`` in convention ``target`` (exact SymPy numbers, in the target's order).

    Only the given parameters are converted; one that needs another (``lam`` needs the ratios) says so, and one
    without a counterpart in ``target`` is refused with a clear error.
    """
    p = _check(params, source)
    if target not in CONVENTIONS:
        raise InvalidParameterError("to", target, " or ".join(CONVENTIONS))
    out = _from_cui(_to_cui(p, source), target)
    return {k: out[k] if out[k].is_Rational else sp.simplify(out[k]) for k in CONVENTIONS[target] if k in out}


def express(source: str, target: str, symbols: dict) -> dict:
    """Every parameter of convention ``source`` that has a counterpart, as an expression in ``symbols`` (parameter
    name of ``target`` -> SymPy symbol): the symbolic form of :func:`convert`, used to read a formula written in one
    convention against a quantity of another (docs/theory/checking.md §7).  A parameter without a counterpart
    (``eta`` of ``moniri23``, ``eta`` of ``ba22`` without ``d``) is left out.

    >>> import sympy as sp
    >>> phi, psi, lam = sp.symbols("phi psi lam", positive=True)
    >>> express("cui24", "moniri23", {"phi": phi, "psi": psi, "lam": lam})["lam"]
    lam*psi/phi
    """
    for conv in (source, target):
        if conv not in CONVENTIONS:
            raise InvalidParameterError("convention", conv, " or ".join(CONVENTIONS))
    q = _to_cui(dict(symbols), target)
    while True:
        try:
            out = _from_cui(q, source)
            break
        except InvalidParameterError as exc:        # no counterpart: leave that parameter out
            if exc.param not in q:
                raise
            q = {k: v for k, v in q.items() if k != exc.param}
    return {k: v for k, v in out.items() if k in CONVENTIONS[source]}


def round_trip(params: dict, source: str, target: str) -> bool:
    """Whether converting to ``target`` and back returns every given parameter exactly (a conversion may add one
    the target implies, e.g. ``alpha0 = alpha`` from ba22)."""
    back = convert(convert(params, source, target), target, source)
    given = _check(params, source)
    return set(given) <= set(back) and all(sp.simplify(back[k] - given[k]) == 0 for k in given)
