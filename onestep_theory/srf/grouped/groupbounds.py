r"""Bounds, mean spikes and the D.3 special case for K readout groups (docs/theory/srf-theory.md §8, §6, §7).

With the group coefficients :math:`\mu_j^{(l)}` of (32) (:func:`~onestep_theory.srf.features.kappa.group_setup`):

* upper bound (26): the squared distance from :math:`\sigma_\star` to :math:`\mathrm{span}\{\mu_0^{(l)}\}_{l\le K}`;
* lower bound (27): the distance to :math:`\mathrm{span}\{\mu_0^{(l)},\kappa\mu_1^{(l)}\}_{l\le K}` (for γ < 1
  the derived extension of §6: the teacher's :math:`h_1` is projected on :math:`\mathrm{span}\{\mu_1^{(l)}\}` too);
* both minimised over η̃ (28);
* the up-to-K mean spikes of :math:`\Phi^\top\Phi/p`: :math:`n\times` the eigenvalues of
  :math:`[\sqrt{\pi_j\pi_l}\,\mathbb E\mu_0^{(j)}\mu_0^{(l)}]` (§8, Spectrum);
* the D.3 special case (159)–(160) (no bulk, γ = 1), experimental.

Dependent directions (a symmetric readout with an odd σ, §8's singular case) are dropped by a rank-revealing
SVD.  Float64; errors from a refined κ-rule.

References
----------
[CPDKLZL24] arXiv:2402.04980, (26)–(28), App. D (158)–(164); [DPCKLL24] arXiv:2410.18938; docs/theory/srf-theory.md §8.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...core.errors import InvalidParameterError
from ...core.exact import binary_exact, check_real, float_in
from ...core.results import VouchedResult, digits_of, provenance
from ...core.search import certified_argmin, differences
from ...hermite.activation import Activation
from ...hermite.expressions import breakpoints, is_odd
from ...hermite.quadrature import normal_rule
from ..features.kappa import group_setup
from ..features.mapping import resolve_rcg, srf_params
from ..optimal.bounds import best_linear_checked, eta_search_range
from .readout import group_params, readout

__all__ = ["GroupBounds", "GroupMeanSpikes", "D3Special", "group_bounds", "group_mean_spikes", "d3_special_case"]

_RANK_TOL = 1e-9


def _distance(w, basis, h, norm2):
    """``norm2`` minus the squared norm of the projection of h on span(basis) in L2(w); rank by SVD."""
    sw = np.sqrt(w)
    B = np.asarray(basis).T * sw[:, None]
    U, sv, _ = np.linalg.svd(B, full_matrices=False)
    keep = sv > _RANK_TOL * sv[0] if sv.size and sv[0] > 0 else np.zeros(0, bool)
    c = U[:, keep].T @ (sw * h)
    return norm2 - float(c @ c), int(keep.sum()), float(sv[0] / sv[keep][-1]) if keep.any() else 1.0


def _both(G, norm2, extension):
    K = G.mu0.shape[0]
    up, ru, cu = _distance(G.w, G.mu0, G.h, norm2)
    lo, rl, cl = _distance(G.w, np.vstack([G.mu0, G.mu1 * G.kappa]), G.h, norm2)
    if extension:
        e, _, _ = _distance(G.w, G.mu1, G.h1, float(G.w @ (G.h1 * G.h1)))
        lo -= float(G.w @ (G.h1 * G.h1)) - e
    return up, lo, (ru, rl, K), max(cu, cl)


@dataclasses.dataclass
class GroupBounds(VouchedResult):
    """K-group bounds (26)/(27) (η̃-optimised (28) if ``optimized``), the single-group (u ≡ 1) ones for
    comparison, and the ranks of the spans (``ranks``: upper, lower, K)."""

    upper: float
    lower: float
    upper_single: float
    lower_single: float
    best_linear: float
    readout: dict
    groups: list
    ranks: tuple
    r: object
    c: object
    gamma: object
    eta_upper: object
    eta_lower: object
    optimized: bool
    extension: bool
    experimental: bool
    errors: dict
    digits: dict
    provenance: dict


def _at(student, teacher, gp, gamma, norm2, level):
    G = group_setup(student, teacher, [a for a, _ in gp], [b for _, b in gp], gamma, level=level)
    return _both(G, norm2, gamma < 1)


def _evaluate(student, teacher, gp, gamma, norm2):
    """Both bounds at levels 0 and 1 of the κ-rule: values of the finer, errors = change + rounding·condition."""
    up0, lo0, _, _ = _at(student, teacher, gp, gamma, norm2, 0)
    up, lo, ranks, cond = _at(student, teacher, gp, gamma, norm2, 1)
    rnd = 1e-15 * norm2 * cond * cond
    return up, lo, ranks, {"upper": abs(up - up0) + rnd, "lower": abs(lo - lo0) + rnd}


def group_bounds(student, teacher, *, readout_spec, r=None, c=None, gamma=None, alpha0="inf", eta=None,
                 noise_var=0, optimize_eta=False, eta_max=10, c_formula="corrected", strict_odd=True) -> GroupBounds:
    r"""K-group bounds (26), (27) of docs/theory/srf-theory.md §8 at given uniform-readout (r, c, γ) or from
    (α0, η̃) by Result 3.1 (group j: :math:`(r\varsigma_j, 1+\varsigma_j^2(c-1))`); ``optimize_eta`` minimises
    each over :math:`\tilde\eta\in[0,\tilde\eta_{\max}]` (28).  Also returns the single-group bounds
    (:math:`u\equiv1`, same r, c, γ): the K-group upper bound is never above it (its span contains
    :math:`\mu_0` of the group :math:`\varsigma=1` when present; in general it is a different span).

    >>> b = group_bounds("erf(x)", "erf(x)", readout_spec="1:0.5,2:0.5", r="sqrt(3)/2", c=1, gamma=1)
    >>> abs(b.upper) < 1e-12      # the group u = 2 has the spike sqrt(3): [BES+22] Cor. 8
    True
    """
    rd = readout(readout_spec)
    if rd.kind != "finite":
        raise InvalidParameterError("readout", rd.label, "a finite support ('value:fraction,...')")
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    red = rd.reduced(odd=is_odd(s.expr))
    norm2 = float(t.second_moment(20))
    refs = ["[CPDKLZL24] (26)-(28), App. D", "docs/theory/srf-theory.md §8", "docs/theory/srf-theory.md §6"]
    if optimize_eta:
        em = eta_search_range(eta_max, r, c, gamma)

        def rcg(e):
            p = srf_params(s, t, alpha0, binary_exact(e), noise_var, c_formula=c_formula, strict_odd=strict_odd,
                           dps=17)
            return float(p.r), float(p.c), abs(float(p.gamma))

        def val(e, j):
            rr, cc, gg = rcg(e)
            return _at(s, t, group_params(rr, cc, red), gg, norm2, 0)[j]

        def refined(e, j):
            rr, cc, gg = rcg(float(e))
            res = _evaluate(s, t, group_params(rr, cc, red), gg, norm2)
            return res[j], res[3][("upper", "lower")[j]]

        # (28): the certified argmin (docs/theory/numerics.md §9), derivative by differences of the refined values
        best, out, errs = [], [], {}
        for j, key in enumerate(("upper", "lower")):
            m = certified_argmin(lambda e, j=j: val(e, j), differences(lambda e, mp, j=j: refined(e, j)),
                                 lambda e, mp, j=j: refined(e, j), 0.0, em)         # float64 (mp False)
            best.append(m.x)
            out.append(m.value)
            errs[key], errs["eta_" + key] = m.errors["value"], m.errors["x"]
        rr, cc, gg = rcg(best[0])
        # (r, c, γ) at η̃ = eta_upper carry its error: the largest change at eta_upper ± its error
        moved = [rcg(min(em, max(0.0, best[0] + h * errs["eta_upper"]))) for h in (-1, 1)]
        rcg_err = [max(abs(m[i] - v) for m in moved) for i, v in enumerate((rr, cc, gg))]
        ranks = _evaluate(s, t, group_params(rr, cc, red), gg, norm2)[2]
        single = _evaluate(s, t, [(rr, cc)], gg, norm2)
        up, lo, eu, el = out[0], out[1], best[0], best[1]
    else:
        rr, cc, gg, mapping = resolve_rcg(s, t, r, c, gamma, alpha0 if eta is not None else None, eta, noise_var,
                                          c_formula, strict_odd)
        if r is None and eta is None:
            raise InvalidParameterError("eta", None, "a learning rate eta >= 0 (or r, c, gamma)")
        rcg_err = [float(mapping.errors[k]) if mapping is not None else 0.0 for k in ("r", "c", "gamma")]
        rr, cc, gg = float(rr), float(cc), float(gg)
        up, lo, ranks, errs = _evaluate(s, t, group_params(rr, cc, red), gg, norm2)
        single = _evaluate(s, t, [(rr, cc)], gg, norm2)
        eu = el = None
    bl, bl_err = best_linear_checked(t)
    vals = dict(upper=up, lower=lo, upper_single=single[0], lower_single=single[1], best_linear=bl, r=rr, c=cc,
                gamma=gg)
    gp = group_params(rr, cc, red)
    ulp = 2.0 ** -52          # the floats' rounding: the value's and (for r_j, c_j) the product's
    errs = dict(errs, upper_single=single[3]["upper"], lower_single=single[3]["lower"], best_linear=bl_err,
                **{k: e + ulp * abs(vals[k]) for k, e in zip(("r", "c", "gamma"), rcg_err)},
                groups=[dict(value=None, fraction=None, r=abs(float(u)) * rcg_err[0] + ulp * abs(a),
                             c=float(u) ** 2 * rcg_err[1] + ulp * abs(b)) for u, (a, b) in zip(red.values, gp)])
    return GroupBounds(
        upper=up, lower=lo, upper_single=single[0], lower_single=single[1], best_linear=bl,
        readout=dict(rd.to_dict(), reduced=red.label),
        groups=[dict(value=str(v), fraction=str(f), r=a, c=b) for v, f, (a, b) in zip(red.values, red.fractions, gp)],
        ranks=ranks, r=rr, c=cc, gamma=gg, eta_upper=eu, eta_lower=el, optimized=bool(optimize_eta),
        extension=gg < 1, experimental=True, errors=errs,
        digits={k: digits_of(vals[k] if k in vals else (eu, el)[k == "eta_lower"], errs[k]) for k in errs
                if k != "groups"},
        provenance=provenance(method="least squares in L2(N(0,1)) on the K-group basis (SVD), refined kappa rule",
                              references=refs))


@dataclasses.dataclass
class GroupMeanSpikes(VouchedResult):
    r"""Up to K mean spikes of :math:`\Phi^\top\Phi/p` (largest first) with ``errors['spikes']`` (change under a
    refined κ-rule plus rounding), ``n = αd`` (docs/theory/srf-theory.md §8, Spectrum)."""

    spikes: list
    readout: dict
    n: float
    errors: dict
    digits: dict
    provenance: dict


def group_mean_spikes(student, *, readout_spec, r, c, alpha, d) -> GroupMeanSpikes:
    r"""Up to K mean spikes of :math:`A=\Phi^\top\Phi/p` (docs/theory/srf-theory.md §8, Spectrum; (191) at K = 1):
    :math:`n=\alpha d` times the eigenvalues of :math:`[\sqrt{\pi_j\pi_l}\,\mathbb E_\kappa\mu_0^{(j)}\mu_0^{(l)}]`,
    largest first, with their errors (change under a refined κ-rule)."""
    rd = readout(readout_spec)
    if rd.kind != "finite":
        raise InvalidParameterError("readout", rd.label, "a finite support ('value:fraction,...')")
    n = float_in(alpha, "alpha") * float_in(d, "d")
    rr, cc = float(check_real(r, "r", 0, None)), float_in(c, "c")
    gp = group_params(rr, cc, rd)
    sq = np.sqrt([float(f) for f in rd.fractions])
    out = []
    for level in (0, 1):
        G = group_setup(student, student, [a for a, _ in gp], [b for _, b in gp], 1.0, level=level)
        M = (G.mu0 * G.w) @ G.mu0.T * np.outer(sq, sq)
        out.append(np.clip(np.sort(np.linalg.eigvalsh(M))[::-1], 0, None) * n)    # PSD: rounding below 0 is 0
    err = np.abs(out[1] - out[0]) + 1e-14 * n * max(1.0, float(np.max(np.abs(out[1]))))
    spikes, errs = out[1].tolist(), err.tolist()
    return GroupMeanSpikes(spikes=spikes, readout=rd.to_dict(), n=n, errors={"spikes": errs},
                           digits={"spikes": [digits_of(v, e) for v, e in zip(spikes, errs)]},
                           provenance=provenance(method="eigenvalues of the group Gram matrix of mu0", references=[
                               "docs/theory/srf-theory.md §8", "[CPDKLZL24] (191)"]))


@dataclasses.dataclass
class D3Special(VouchedResult):
    """App. D.3 (159)–(160) (experimental, docs/theory/srf-theory.md §8): the test error with ``errors['test_error']``,
    the least-squares readout ``m``, the Gram ``K`` and ``s`` on the readout's support."""

    test_error: float
    m: list
    K: list
    s: list
    readout: dict
    r: float
    experimental: bool
    errors: dict
    digits: dict
    provenance: dict


def d3_special_case(student, teacher, *, readout_spec, r) -> D3Special:
    r"""App. D.3 (159)–(160) as reconstructed in docs/theory/srf-theory.md §8 (experimental): no bulk, γ = 1, features
    :math:`\sigma(ra\kappa)`.  Solves :math:`\sum_b\rho_bK(a,b)m_b=s(a)` (minimum norm) and returns
    :math:`\varepsilon_g=\|\sigma_\star\|^2-\sum_a\rho_am_as(a)` with ``m``, ``K``, ``s`` and an error (change
    under a refined rule split at every kink :math:`b/(ra)` of σ and of :math:`\sigma_\star`)."""
    rd = readout(readout_spec)
    if rd.kind != "finite":
        raise InvalidParameterError("readout", rd.label, "a finite support ('value:fraction,...')")
    s = Activation.from_any(student, "student")
    t = Activation.from_any(teacher, "teacher")
    rr = float(check_real(r, "r", 0, None))
    a, rho = (np.array(v) for v in rd.floats())
    hard = sorted({float(b) / (rr * av) for b in breakpoints(s.expr) for av in a if rr * av != 0}
                  | {float(b) for b in breakpoints(t.expr)})
    hmax = min([1.0] + [1.0 / abs(rr * av) for av in a if av != 0])
    fs, ft = s.numpy(), t.numpy()
    res = []
    for level in (0, 1):
        rule = normal_rule(tuple(hard), (), digits=16, level=level, hmax=hmax)
        k, w = rule.nodes, rule.weights
        phi = np.array([fs(rr * av * k) for av in a])
        tk = ft(k)
        Kab = (phi * w) @ phi.T
        sa = phi @ (w * tk)
        m = np.linalg.lstsq(Kab * rho[None, :], sa, rcond=1e-12)[0]
        res.append((float(w @ (tk * tk)) - float(np.sum(rho * m * sa)), m, Kab, sa))
    eps, m, Kab, sa = res[1]
    err = abs(eps - res[0][0]) + 1e-14 * max(1.0, float(np.max(np.abs(Kab)))) * float(np.max(np.abs(m)) + 1) ** 2
    return D3Special(test_error=eps, m=m.tolist(), K=Kab.tolist(), s=sa.tolist(), readout=rd.to_dict(), r=rr,
                     experimental=True, errors={"test_error": err}, digits={"test_error": digits_of(eps, err)},
                     provenance=provenance(method="(159) by least squares, (160)", references=[
                         "[CPDKLZL24] App. D.3 (158)-(164)", "docs/theory/srf-theory.md §8"]))
