r"""The zero readout: a general loss minimised at :math:`\hat y=0` for every label (docs/theory/srf-theory.md §13).

If :math:`0\in\partial_{\hat y}\ell(y,0)` for every label y (``exp(yhat**2)``, ``Min(0, yhat)**2``, ``Abs(yhat)``,
``y**2*yhat**4``), the training objective :math:`\sum_\mu\ell(y_\mu,\hat y_\mu)+\frac\lambda2\|a\|^2` is minimised
by :math:`a=0` exactly, for every data set: each loss term is at its minimum there and the ridge is strictly
smallest.  (:func:`~onestep_theory.srf.loss.losscheck.zero_minimiser` puts a minimiser within :math:`h=10^{-60}` of 0
on every label the teacher takes; a displaced one moves :math:`\hat y` by :math:`O(\sqrt h)`, far below the
printed errors.)  So :math:`\hat y\equiv0` and, with
:math:`g=\gamma\kappa+\rho z\sim\mathcal N(0,1)`,

.. math:: \varepsilon_g=\mathbb E_g[\sigma_\star(g)^2],\qquad \mathcal L_{\rm tr}=\mathbb E_g[\ell(\sigma_\star(g),0)],
          \qquad m=\vartheta=\psi=q_1=q_2=\hat q_1=\hat q_2=\hat\vartheta=\hat\psi=0

exactly (the saddle point's a = 0 fixed point sits on the boundary q = 0 of the map's domain, where the iterative
solver cannot polish it: ``exp(yhat**2)`` ended in "no valid fixed point", ``Min(0, yhat)**2`` in "5 digits
reached", exit 3).  The classification error :math:`\mathbb P[\mathrm{sign}\,\hat y\ne\mathrm{sign}\,y]` counts
the tie :math:`\mathrm{sign}\,0=0` as an error, as the simulators do (``np.sign``): :math:`\mathbb P[\sigma_\star(g)\ne0]`
(a fair coin on ties would give 1/2).  The susceptibilities: with :math:`\omega\equiv0` the prox is 0 and
:math:`\partial_\omega f_{\rm out}=-k/(1+Vk)`, :math:`k=\ell''(y,0)`; for a constant k this is the square loss
:math:`\frac k2(y-\hat y)^2`, whose V-equations do not involve the labels, so
:math:`V_{1,2}=V^{\rm sq}_{1,2}(\lambda/k)/k`, :math:`\hat V_{1,2}=k\hat V^{\rm sq}_{1,2}(\lambda/k)`,
:math:`\mathcal D=\mathcal D^{\rm sq}(\lambda/k)` (the closed-form square solve; k = 0: :math:`V_1=c/\lambda`,
:math:`V_2=1/\lambda`, :math:`\mathcal D=1` for the Marchenko–Pastur prior).  Where ℓ is kinked at 0 or k depends on
the label they are not reported (a one-sided curvature has no linear response).

Integrals over g: composite Gauss–Legendre on [-14, 14] (Gaussian mass beyond: 3e-44) in panels of width ≤ 1 split
at the teacher's kinks; the error is the change from 20 to 40 nodes per panel, plus rounding, plus the tail
estimated from the integrand at ±14.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ...core.errors import ConvergenceError
from ...core.exact import to_exact
from ...core.precision import EPS64
from ...core.results import digits_of, provenance
from ...hermite.activation import Activation
from ...hermite.expressions import breakpoints
from ...hermite.quadrature import gauss_legendre
from ..loss.losscheck import teacher_labels, zero_minimiser
from .saddle import HATS, ORDER
from .solution import SRFSolution

__all__ = ["zero_readout"]

_G = 14.0
_TAIL = math.erfc(_G / math.sqrt(2))          # P(|g| > 14)
_V_KEYS = ("V1", "V2", "hat_V1", "hat_V2", "D")


def _gauss_mean(fns, kinks, n):
    """:math:`\\mathbb E_g[f(g)]` for each f in ``fns`` (vectorised), Gauss–Legendre, ``n`` nodes per panel."""
    cuts = sorted({-_G, _G, *(b for b in kinks if -_G < b < _G)})
    edges = np.concatenate([np.linspace(a, b, max(2, math.ceil(b - a) + 1)) for a, b in zip(cuts[:-1], cuts[1:])])
    edges = np.unique(edges)
    t, wt = gauss_legendre(n)
    half, mid = np.diff(edges) / 2, (edges[1:] + edges[:-1]) / 2
    g = (mid[:, None] + half[:, None] * t[None, :]).ravel()
    w = (half[:, None] * wt[None, :]).ravel() * np.exp(-g * g / 2) / math.sqrt(2 * math.pi)
    out = []
    for f in fns:
        v = np.broadcast_to(np.asarray(f(g), float), g.shape)
        out.append((float(w @ v), float(np.abs(w) @ np.abs(v))))
    return out


def _mean_with_error(fns, kinks):
    """``[(value, error)]``: 40 nodes per panel against 20, plus rounding and the tail beyond ±14."""
    coarse, fine = _gauss_mean(fns, kinks, 20), _gauss_mean(fns, kinks, 40)
    ends = [np.abs(np.asarray(f(np.array([-_G, _G])), float)) for f in fns]
    return [(v, abs(v - c) + 64 * EPS64 * a + 10 * _TAIL * float(np.max(e)))
            for (c, _), (v, a), e in zip(coarse, fine, ends)]


def zero_readout(p, student, teacher, square):
    """The solution for a loss minimised at ŷ = 0 on every label, or None (the general solve then runs).

    ``p`` is srf_solve's checked problem; ``square(lam)`` solves the closed-form square loss at the same inputs and
    ridge ``lam`` (it gives V1, V2 and their conjugates)."""
    L = p.opt.loss
    if L is None or L.expr is None:
        return None
    act = Activation.from_any(teacher, "teacher")
    labels = teacher_labels(act, limit=10**4)
    zero, k = zero_minimiser(L.expr, labels)          # every label the teacher takes on [-8, 8] (<= 1603 of them)
    if not zero:
        return None
    tf = act.numpy()
    kinks = [float(b) for b in breakpoints(act.expr)]
    y = sp.Symbol("y", real=True)
    at0 = L.expr.xreplace({s: (y if s.name == "y" else sp.S.Zero) for s in L.expr.free_symbols})
    l0 = sp.lambdify(y, at0, "numpy")
    with np.errstate(all="ignore"):
        (te, te_err), (tl, tl_err), (ce, ce_err) = _mean_with_error(
            [lambda g: tf(g) ** 2, lambda g: l0(np.broadcast_to(np.asarray(tf(g), float), np.shape(g))),
             lambda g: np.abs(np.sign(tf(g)))], kinks)
    vals = {key: 0.0 for key in ORDER + HATS}
    errors = {key: 0.0 for key in vals}
    note = ("yhat = 0 exactly: the loss is smallest at yhat = 0 for every label, so a = 0 minimises the training "
            "objective (class_error counts the tie sign(0) = 0 as an error, as the simulators' np.sign does)")
    rr, cc, gg = p.rcg
    Vpart, why = _susceptibilities(p, square, k, cc)
    if Vpart is None:
        for key in _V_KEYS:
            vals.pop(key, None), errors.pop(key, None)
        note += "; V1, V2 and their conjugates not reported: " + why
    else:
        vals.update(Vpart[0]), errors.update(Vpart[1])
    errors.update(test_error=te_err, train_loss=tl_err, class_error=ce_err)
    rcg_err = getattr(p, "rcg_err", None) or ({n: p.mapping.errors[n] for n in ("r", "c", "gamma")}
                                               if p.mapping is not None else None)
    if rcg_err:                          # Result 3.1's errors, or those given with (r, c, gamma)
        errors.update(rcg_err)
    order = {key: vals[key] for key in ORDER if key in vals}
    hats = {key: vals[key] for key in HATS if key in vals}
    return SRFSolution(
        test_error=te, abs_error=te_err, digits=digits_of(te, te_err), order=order, hats=hats, errors=errors,
        D=vals.get("D"), r=rr, c=cc, gamma=gg, **p.inputs, iterations=0, newton_steps=0, residual=0.0,
        status="zero readout (exact)", options=dict(spectrum=p.opt.spectrum, inner="Gauss-Legendre in g, 20/40"),
        dps=None, extra={"class_error": ce, "train_loss": tl, "loss": L.name, "readout": note},
        provenance=provenance(method="a = 0 minimises the training objective exactly (the loss is smallest at "
                              "yhat = 0 on every label); eps_g = E[teacher(g)^2] by Gauss-Legendre, error from "
                              "doubled nodes", references=["docs/theory/srf-theory.md §13", "[CPDKLZL24] (25)"]))


def _susceptibilities(p, square, k, c):
    """``((values, errors), None)`` of V1, V2, hat_V1, hat_V2, D for a constant curvature k at 0 (MP prior), else
    ``(None, why)``."""
    if k is None:
        return None, ("the loss is kinked or has no finite curvature at yhat = 0 (one-sided or infinite: no linear "
                      "response)" if not p.opt.loss.smooth else "its curvature at yhat = 0 depends on the label or "
                      "is not finite")
    if p.opt.spectrum != "mp":
        return None, f"not derived for the {p.opt.spectrum!r} prior"
    lv = p.inputs["lam"]
    lam = to_exact(repr(lv) if isinstance(lv, float) else lv, "lam")
    if k == 0:                          # no curvature: S = lam, V1 = E_MP[rho]/lam = c/lam, V2 = 1/lam
        cf = float(c)
        V1, V2 = cf / float(lam), 1 / float(lam)
        return ({"V1": V1, "V2": V2, "hat_V1": 0.0, "hat_V2": 0.0, "D": 1.0},
                {"V1": 4 * EPS64 * V1 + (p.mapping.errors["c"] / float(lam) if p.mapping is not None else 0.0),
                 "V2": 4 * EPS64 * V2, "hat_V1": 0.0, "hat_V2": 0.0, "D": 0.0}), None
    lk = lam / k
    what = f"the square-loss solve at lam/k = {float(lk):.3g} (k = {float(k):.3g}, the curvature at yhat = 0)"
    try:
        with np.errstate(all="ignore"):
            sq = square(str(lk) if lk.is_Rational else repr(float(lk)))
    except ConvergenceError as exc:
        return None, f"{what} failed: {exc}"
    kf = float(k)
    scale = {"V1": 1 / kf, "V2": 1 / kf, "hat_V1": kf, "hat_V2": kf, "D": 1.0}
    vals = {n: float(sq.value(n)) * s for n, s in scale.items()}
    errs = {n: sq.errors[n] * s + 4 * EPS64 * abs(vals[n]) for n, s in scale.items()}
    if not all(errs[n] < abs(vals[n]) for n in ("V1", "V2")):
        return None, f"{what} does not resolve them"
    return (vals, errs), None
