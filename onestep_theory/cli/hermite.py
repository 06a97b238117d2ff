"""``onestep-theory hermite | xi``: Hermite coefficients and the exact ξ table (docs/theory/hermite.md)."""

from __future__ import annotations

from .common import add_dps, add_json, command, emit, int_in

__all__ = ["COMMANDS", "MAX_XI"]

#: Largest power of the xi table (its exact integers grow like p!; the JSON of p = 400 is 8 MB).
MAX_XI = 400

COMMANDS: dict = {}


def _cmd_hermite(args) -> int:
    from ..hermite.coefficients import he_coeffs

    res = he_coeffs(args.expression, args.kmax, args.dps, center=args.center, param="EXPR")
    d = res.to_dict()
    width = len(f"-0.{'0' * res.dps}e-100")      # a column: a value of dps digits, sign, point and exponent
    lines = [f"Hermite coefficients of {res.expression}  (probabilists' He_k, Z ~ N(0,1); dps={res.dps}; "
             "value +/- error, the error including the rounding of the printed value)",
             f"{'k':>3}  {'c_k':<{width}}  {'+/-':<9}  exact"]
    for k, e in enumerate(res.exact):
        text, err, _ = res.printed("values", k)
        lines.append(f"{k:>3}  {text:<{width}}  {err:<9}  {e if e is not None else '-'}")
    for key, label in (("mean", "E sigma"), ("second_moment", "E sigma^2"), ("c_gt1", "c_>1"), ("c_star", "c_star")):
        ent = d[key]
        lines.append(f"{label:<10} = {ent['value']} +/- {ent['abs_error']}" + (f"   [{ent['exact']}]" if ent["exact"] else ""))
    if res.breakpoints:
        lines.append(f"kinks at x = {', '.join(res.breakpoints)}")
    emit(args, d, "\n".join(lines))
    return 0


def _cmd_xi(args) -> int:
    from ..hermite.polynomials import he_xi_row

    rows = [he_xi_row(p) for p in range(args.P + 1)] if not args.row else [he_xi_row(args.P)]
    first = 0 if not args.row else args.P
    payload = {
        "definition": "x^p = sum_i xi[p][i] He_i(x)",
        "rows": {str(first + j): [str(v) for v in r] for j, r in enumerate(rows)},
        "reference": "docs/theory/hermite.md §3",
    }
    text = "\n".join(f"p={first + j:<3} " + " ".join(str(v) for v in r) for j, r in enumerate(rows))
    emit(args, payload, text)
    return 0


@command(COMMANDS, "hermite", "Hermite coefficients c_0..c_K and Gaussian moments of an expression")
def _setup_hermite(p):
    p.add_argument("expression", metavar="EXPR", help="name (tanh, relu, relu_centered, sign, erf, sin, softplus, "
                   "sigmoid, He1..He9) or SymPy expression in x, e.g. 'Max(x,0) - 1/sqrt(2*pi)'")
    p.add_argument("--kmax", type=int_in("--kmax", 0, 200), default=6, help="largest degree K (default 6)")
    p.add_argument("--center", action="store_true", help="expand sigma - E sigma(Z) instead")
    add_dps(p)
    add_json(p)
    return _cmd_hermite


@command(COMMANDS, "xi", "monomial-to-Hermite coefficients xi_{p,i} (x^p = sum_i xi_{p,i} He_i), exact integers")
def _setup_xi(p):
    p.add_argument("P", type=int_in("P", 0, MAX_XI), help="largest power p")
    p.add_argument("--row", action="store_true", help="print only row P")
    add_json(p)
    return _cmd_xi
