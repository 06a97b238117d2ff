"""(f) The K-group equations of docs/theory/srf-theory.md §8 reduce to the single-group ones.

Symbolic part (SymPy): with K = 1 the K-group channel equations (hats, mean overlap, test error) and the
annealed prior (b, e averaged given Omega) become, term by term, the single-group equations (18)-(20), (25)
and the Omega-basis prior of §4.5 (theta = sqrt(beta) hat_theta c V2, psi = sqrt(beta) hat_psi V1, the
hat_theta^2 c and hat_psi^2 terms of q1, q2).

Numeric part (float64, one sampled bulk, d = p = 200):
  1. K = 1 on the finite-W prior with the sampled v, theta_perp  ==  the F1 solver (srf_solve, spectrum
     "empirical") on the same bulk;
  2. readout {1, -1} (odd student) on W  ==  F1 on W with the rows of the u = -1 group negated
     (the symmetry w -> -w of §8's singular case; the mean-overlap system has rank 1);
  3. two groups with the same value u = 1 (a singular system, minimum-norm m)  ==  K = 1.
  4. the annealed prior at K = 1  ==  F1 with the Omega-basis weights F = c, H = D, G = 0 on the same Omega.
All four must agree to 1e-10 (they are the same fixed point; the solvers stop at 1e-12).
Usage: python f_kgroup_reduces.py   (about 10 s)
"""

import math

import numpy as np
import sympy as sp

from onestep_theory.simulate import sample_bulks
from onestep_theory.srf import empirical_from_weights, srf_params, srf_solve
from onestep_theory.srf.grouped.groups import srf_groups
from onestep_theory.srf.grouped.readout import Readout, group_index, readout


def symbolic():
    k, al, be, V1, V2, Q1, q2, m, th, ps, hth, hps, c, Dl = sp.symbols(
        "kappa alpha beta V1 V2 Q1 q2 m theta psi hattheta hatpsi c Delta", real=True)
    mu0, mu1, ms2, h, h1, h2 = sp.symbols("mu0 mu1 mus2 h h1 h2", real=True)
    K = 1
    # K-group channel with 1x1 matrices and 1-vectors (sums over groups written out)
    MU0, MU1, MS2 = [mu0], [mu1], [ms2]
    V1m, Q1m, V2v, q2v, mv, thv, psv = [[V1]], [[Q1]], [V2], [q2], [m], [th], [ps]
    V = sum(MU1[j] * MU1[l] * V1m[j][l] for j in range(K) for l in range(K)) + sum(MS2[j] * V2v[j] for j in range(K))
    q = sum(MU1[j] * MU1[l] * Q1m[j][l] for j in range(K) for l in range(K)) + sum(MS2[j] * q2v[j] for j in range(K))
    mbar = sum(MU0[j] * mv[j] + MU1[j] * k * thv[j] for j in range(K))
    E = h2 - 2 * mbar * h + mbar**2 - 2 * sum(MU1[j] * psv[j] for j in range(K)) * h1 + q
    groups = [al / be * MU1[0] * MU1[0] / (1 + V), al / be * MS2[0] * (E + Dl) / (1 + V) ** 2,
              al / sp.sqrt(be) * k * MU1[0] * (h - mbar) / (1 + V), al / sp.sqrt(be) * MU1[0] * h1 / (1 + V),
              MU0[0] * (h - k * MU1[0] * thv[0]) / (1 + V), E]
    # the single-group equations as printed in §4.2-4.4 and (25)
    Vs, qs, mbs = mu1**2 * V1 + ms2 * V2, mu1**2 * Q1 + ms2 * q2, mu0 * m + mu1 * k * th
    Es = h2 - 2 * mbs * h + mbs**2 - 2 * mu1 * ps * h1 + qs
    single = [al / be * mu1**2 / (1 + Vs), al / be * ms2 * (Es + Dl) / (1 + Vs) ** 2,
              al / sp.sqrt(be) * k * mu1 * (h - mbs) / (1 + Vs), al / sp.sqrt(be) * mu1 * h1 / (1 + Vs),
              mu0 * (h - mu1 * k * th) / (1 + Vs), Es]
    ok = all(sp.simplify(a - b) == 0 for a, b in zip(groups, single))
    # annealed prior at K = 1: theta_j = sqrt(beta) hat_theta_j c_j V2_j, psi = sqrt(beta) sum_l V1_jl hat_psi_l,
    # N gets hat_psi hat_psi^T on Omega and hat_theta^2 c on the diagonal: in the eigenbasis of Omega (D, S)
    D, S, hq1, hq2 = sp.symbols("D S hatq1 hatq2", positive=True)
    N_group = hq1 * D + hps**2 * D + hq2 + hth**2 * c          # (Omega o (hat Q1 + hat psi^2) + hat q2 + hat theta^2 c)
    q1_single = (hq1 * D**2 + hq2 * D) / S**2 + hps**2 * D**2 / S**2 + c * hth**2 * D / S**2   # J1, J2 terms of §4.5
    q2_single = (hq1 * D + hq2) / S**2 + hps**2 * D / S**2 + c * hth**2 / S**2                  # J2, K0 terms
    ok &= sp.simplify(D * N_group / S**2 - q1_single) == 0 and sp.simplify(N_group / S**2 - q2_single) == 0
    print(f"symbolic: K = 1 channel, mean overlap, test error and annealed prior = single-group equations: {ok}")
    return ok


def bulk(d, p, seed):
    """One sampled bulk (W0, v, theta_perp), drawn by the package's sampler."""
    return sample_bulks(d, p, 1, seed=seed)[0]


def numeric(d=200):
    P = srf_params("tanh", "sin", 20, 3)
    r, c, g = (float(t) for t in (P.r, P.c, P.gamma))
    W0, v, tp = bulk(d, d, 7)
    th = g * v + math.sqrt(1 - g * g) * tp
    kw = dict(alpha=2, beta=1, lam="1/10", alpha0=20, eta=3, reduce=False, annealed=False, prior="finite-w")

    def f1(W):
        emp = empirical_from_weights(math.sqrt(c) * W, v, th)
        return float(srf_solve("tanh", "sin", alpha=2, beta=1, lam="1/10", r=repr(r), c=repr(c), gamma=repr(g),
                               spectrum="empirical", empirical=emp).test_error)

    ref = f1(W0)
    e1 = float(srf_groups("tanh", "sin", readout_spec="1:1", bulks=[(W0, v, tp)], **kw).test_error)
    rd = readout("1:1/2,-1:1/2")
    sol2 = srf_groups("tanh", "sin", readout_spec=rd, bulks=[(W0, v, tp)], **kw)
    Wn = W0.copy()
    Wn[group_index(rd, d) == 0] *= -1            # the u = -1 group (values sorted: -1 first)
    ref2 = f1(Wn)
    same = Readout("finite", (sp.Integer(1), sp.Integer(1)), (sp.Rational(1, 2), sp.Rational(1, 2)))
    e3 = float(srf_groups("tanh", "sin", readout_spec=same, bulks=[(W0, v, tp)], **kw).test_error)
    # 4. the annealed prior at K = 1 is F1 with the Omega-basis weights F = c, H = D, G = 0 (§4.6, last paragraph)
    Wt = math.sqrt(c) * W0
    Wv = Wt @ v
    D = np.clip(np.linalg.eigvalsh(Wt @ Wt.T - np.outer(Wv, Wv)), 0, None)
    ref4 = float(srf_solve("tanh", "sin", alpha=2, beta=1, lam="1/10", r=repr(r), c=repr(c), gamma=repr(g),
                           spectrum="empirical", empirical=(D, np.full_like(D, c), D, 0 * D)).test_error)
    e4 = float(srf_groups("tanh", "sin", readout_spec="1:1", bulks=[(W0, v, tp)], **dict(kw, annealed=True)).test_error)
    gaps = [abs(e1 - ref), abs(float(sol2.test_error) - ref2), abs(e3 - ref), abs(e4 - ref4)]
    print(f"1. K = 1 finite-W {e1:.15f}  vs F1 {ref:.15f}   gap {gaps[0]:.1e}")
    print(f"2. u in {{1,-1}}  {float(sol2.test_error):.15f}  vs F1 flipped rows {ref2:.15f}   gap {gaps[1]:.1e}"
          f"   (rank of the m-system: {sol2.m_rank})")
    print(f"3. u in {{1,1}}   {e3:.15f}  vs F1 {ref:.15f}   gap {gaps[2]:.1e}")
    print(f"4. annealed K = 1 {e4:.15f}  vs F1 with F = c, H = D, G = 0 {ref4:.15f}   gap {gaps[3]:.1e}")
    return max(gaps) < 1e-10 and sol2.m_rank == 1


if __name__ == "__main__":
    ok = symbolic() & numeric()
    print("CONCLUSION: the K-group equations reduce to the single-group ones" if ok else
          "CONCLUSION: FAILED — the K-group equations do not reduce")
    raise SystemExit(0 if ok else 1)
