"""The simulation behind ``check --simulate`` (docs/theory/checking.md §4): the quantity measured at the first
points of a check (mean ± standard error) and a z-score of the formula and of the package against it."""

from __future__ import annotations

import math

import mpmath
import sympy as sp

from .registry import quantity_of

__all__ = ["simulate_rows"]


def simulate_rows(name, formula, rows, student, teacher, d, reps, seed) -> list:
    """Mean ± standard error of the simulated quantity at the first points (docs/theory/checking.md §4)."""
    from .. import simulate as S

    q = quantity_of(name)
    out = []
    for r in rows:
        p = {k: float(sp.sympify(v)) for k, v in r["point"].items()}
        f = float(mpmath.mpf(r["formula"])) if r["agrees"] or not r["formula"].startswith("undefined") else math.nan
        v = float(mpmath.mpf(r["quantity"]))
        if q.family == "spike":
            nv = p.get("noise", 0.0)
            if name in ("m1", "m2", "dm1", "dm2"):
                res = S.sim_resolvent(student, d=d, phi=p["phi"], psi=p["psi"], lam=p["lam"], reps=reps, seed=seed)
                st = res[{"m1": "m1", "m2": "m2", "dm1": "dm1_dlam", "dm2": "dm2_dlam"}[name]]
            else:
                ell = int(name.split("_")[1]) if name.startswith(("delta_", "lambda_")) else 1
                res = S.sim_spike_model(student, teacher, d=d, phi=p["phi"], psi=p["psi"], lam=p["lam"], ell=ell,
                                        noise_var=nv, reps=reps, seed=seed)
                st = res[{"delta": "delta", "lambda": "lambda_test", "train": "train_loss_F0",
                          "test": "test_loss_F0"}[name.split("_")[0]]]
        elif name not in ("r", "c", "gamma", "test_error"):
            out.append({"point": p, "note": f"check does not simulate {name}"})
            continue
        else:
            kw = {k: p.get(k, dflt) for k, dflt in (("alpha", 1.0), ("beta", 1.0), ("lam", 0.1))}
            res = S.sim_giant_step(student, teacher, d, alpha0=p["alpha0"], eta=p["eta"], noise_var=p.get("noise", 0.0),
                                   reps=reps, seed=seed, **kw)
            st = res[name]
        se = st.se if st.se > 0 else math.nan
        out.append({"point": p, "d": d, "reps": reps, "sim_mean": st.mean, "sim_se": st.se,
                    "z_formula": (f - st.mean) / se, "z_quantity": (v - st.mean) / se})
    return out
