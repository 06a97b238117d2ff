r"""K readout groups: the finite-W saddle point of docs/theory/srf-theory.md §8 (experimental).

With :math:`a^0=u/\sqrt p` and :math:`u_i\in\{\varsigma_1,\dots,\varsigma_K\}`, group j has the spike
:math:`r\varsigma_j` and bulk variance :math:`c_j` (:func:`~onestep_theory.srf.readout.group_params`), the
features (32) use the coefficients (15) at :math:`(r\varsigma_j,c_j)`, and the saddle point has K-vector
and K×K order parameters.  The prior side is evaluated on a **sampled** bulk
:math:`\tilde W=\mathrm{diag}(\sqrt{c_{g(i)}})W_0` (rows of :math:`W_0` uniform on the sphere): the fully
asymptotic K-group form is not specified (§8, Uncertain).  The value is the mean over independent bulks
and its error includes their standard error.

Readouts that reduce to one group (equal values; :math:`\pm\varsigma` for an odd σ) are solved exactly by
the asymptotic single-group solver :func:`~onestep_theory.srf.solve.srf_solve`.

References
----------
[DPCKLL24] arXiv:2410.18938; [CPDKLZL24] arXiv:2402.04980, Sec. 4.4, App. D, (32), (136)–(138);
docs/theory/srf-theory.md §8, §4.6.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.linalg
from scipy.optimize import root

from ..core.errors import ConvergenceError, InvalidParameterError
from ..core.exact import float_in
from ..core.results import VouchedResult, digits_of, provenance
from ..hermite.activation import Activation
from ..hermite.expressions import is_odd, x
from .kappa import GroupSetup, group_setup
from .mapping import resolve_rcg
from .readout import Readout, group_index, group_params, readout
from .saddle import DomainError
from .solve import srf_solve

__all__ = ["GroupBulk", "GroupSolution", "StateLayout", "group_bulk", "group_map", "srf_groups", "MAX_BULK_P"]

#: Largest width p of a sampled bulk (each map application inverts a p×p matrix).
MAX_BULK_P = 3000


@dataclasses.dataclass
class GroupBulk:
    r"""Prior data of the finite-W K-group saddle point (docs/theory/srf-theory.md §8): :math:`\Omega=\tilde W\Pi\tilde W^\top`,
    :math:`b=\sqrt d\tilde Wv`, :math:`e=\sqrt d\tilde W\theta_\perp` and the contiguous group blocks."""

    Omega: np.ndarray
    b: np.ndarray
    e: np.ndarray
    g: np.ndarray
    starts: np.ndarray
    d: int
    cs: np.ndarray
    annealed: bool = True

    @property
    def p(self) -> int:
        return self.Omega.shape[0]

    def blocksum(self, X) -> np.ndarray:
        """:math:`(\\sum_{i\\in j,k\\in l}X_{ik})_{jl}`."""
        return np.add.reduceat(np.add.reduceat(X, self.starts, axis=0), self.starts, axis=1)

    def groupsum(self, v) -> np.ndarray:      # (sum_{i in j} v_i)_j
        return np.add.reduceat(v, self.starts)


def group_bulk(W0, v, theta_perp, cs, rd: Readout, annealed: bool = True) -> GroupBulk:
    r"""The bulk :math:`\tilde W=\mathrm{diag}(\sqrt{c_{g(i)}})W_0` of a sampled :math:`(W_0,v,\theta_\perp)`
    (``simulate.sample_bulks``) with the groups of ``rd`` (:func:`~onestep_theory.srf.readout.group_index`).

    ``annealed=True`` averages the prior over the directions ``v``, :math:`\theta_\perp` given Ω (their
    quadratic forms fluctuate by :math:`O(p^{-1/2})`, the spectrum of Ω only by :math:`O(p^{-1})`);
    ``False`` keeps the sampled vectors (the finite-W form as printed, docs/theory/srf-theory.md §8)."""
    W0 = np.asarray(W0, dtype=float)
    p, d = W0.shape
    if p > MAX_BULK_P:
        raise InvalidParameterError("bulk p", p, f"a sampled bulk of at most {MAX_BULK_P} rows")
    g = group_index(rd, p)
    v = np.asarray(v, dtype=float)
    v = v / np.linalg.norm(v)
    tp = np.asarray(theta_perp, dtype=float)
    tp = tp - (tp @ v) * v
    tp = tp / np.linalg.norm(tp)
    Wt = np.sqrt(np.asarray([float(c) for c in cs]))[g][:, None] * W0
    Wv, We = Wt @ v, Wt @ tp
    Omega = Wt @ Wt.T - np.outer(Wv, Wv)
    starts = np.concatenate([[0], np.cumsum(rd.counts(p))[:-1]])
    return GroupBulk(Omega, math.sqrt(d) * Wv, math.sqrt(d) * We, g, starts, d,
                     np.asarray([float(c) for c in cs]), bool(annealed))


class StateLayout:
    """Packing of the state (m, θ, ψ, Q1, q2, V1, V2): K-vectors and upper triangles of the K×K matrices."""

    def __init__(self, K):
        self.K = K
        self.iu = np.triu_indices(K)
        t = len(self.iu[0])
        self.sizes = (K, K, K, t, K, t, K)
        self.size = sum(self.sizes)

    def unpack(self, x):
        parts, i = [], 0
        for n in self.sizes:
            parts.append(np.asarray(x[i:i + n], dtype=float))
            i += n
        m, th, ps, q1, q2, v1, v2 = parts
        return m, th, ps, self.sym(q1), q2, self.sym(v1), v2

    def sym(self, t):
        M = np.zeros((self.K, self.K))
        M[self.iu] = t
        return M + np.triu(M, 1).T

    def pack(self, m, th, ps, Q1, q2, V1, V2):
        return np.concatenate([m, th, ps, Q1[self.iu], q2, V1[self.iu], V2])


def group_map(x, G: GroupSetup, bulk: GroupBulk, alpha, beta, lam, noise_var, layout: StateLayout):
    r"""One application of the K-group channel, mean-overlap and finite-W prior equations of
    docs/theory/srf-theory.md §8.  Returns (new packed state, values dict); the test error (25) with the group sums
    is ``values["test_error"]`` at the state ``x``."""
    m, th, ps, Q1, q2, V1, V2 = layout.unpack(x)
    mu0, mu1, ms2, k, w = G.mu0, G.mu1, G.mus2, G.kappa, G.w
    V = np.einsum("jn,jl,ln->n", mu1, V1, mu1) + V2 @ ms2
    q = np.einsum("jn,jl,ln->n", mu1, Q1, mu1) + q2 @ ms2
    mbar = m @ mu0 + k * (th @ mu1)
    Ek = G.h2 - 2 * mbar * G.h + mbar * mbar - 2 * (ps @ mu1) * G.h1 + q
    inv = 1 / (1 + V)
    wi, wi2 = w * inv, w * (Ek + noise_var) * inv * inv
    aB, aS = alpha / beta, alpha / math.sqrt(beta)
    hV1, hV2 = aB * (mu1 * wi) @ mu1.T, aB * (ms2 @ wi)
    hQ1, hq2 = aB * (mu1 * wi2) @ mu1.T, aB * (ms2 @ wi2)
    hth = aS * (mu1 @ (wi * k * (G.h - mbar)))
    hps = aS * (mu1 @ (wi * G.h1))
    # mean overlaps: minimum-norm solution (singular when some mu0^(j) are dependent, §8)
    A = (mu0 * wi) @ mu0.T
    rhs = mu0 @ (wi * (G.h - k * (th @ mu1)))
    m_new = np.linalg.lstsq(A, rhs, rcond=1e-10)[0] if np.max(np.abs(A)) > 1e-14 else np.zeros(layout.K)
    # finite-W prior
    gi, p = bulk.g, bulk.p
    S = bulk.Omega * hV1[np.ix_(gi, gi)]
    S[np.diag_indices(p)] += lam + hV2[gi]
    try:
        Z = scipy.linalg.cho_solve(scipy.linalg.cho_factor(S, lower=True), np.eye(p))
    except np.linalg.LinAlgError:
        raise DomainError("S is not positive definite") from None
    V1n = bulk.blocksum(Z * bulk.Omega) / p
    V2n = bulk.groupsum(np.diag(Z)) / p
    sb = math.sqrt(beta)
    if bulk.annealed:
        # b, e averaged given Omega: E[b b^T] = diag(c_g), E[e e^T] = Omega, E[b e^T] = 0 (the K-group
        # counterpart of the Omega-basis form of §4.5; docs/theory/srf-theory.md §8)
        thn, psn = sb * hth * bulk.cs * V2n, sb * V1n @ hps
        N = bulk.Omega * (hQ1 + np.outer(hps, hps))[np.ix_(gi, gi)]
        N[np.diag_indices(p)] += (hq2 + hth * hth * bulk.cs)[gi]
        T = Z @ N @ Z
    else:
        f = hth[gi] * bulk.b + hps[gi] * bulk.e
        s = Z @ f
        thn, psn = sb * bulk.groupsum(bulk.b * s) / p, sb * bulk.groupsum(bulk.e * s) / p
        N = bulk.Omega * hQ1[np.ix_(gi, gi)]
        N[np.diag_indices(p)] += hq2[gi]
        T = Z @ N @ Z + np.outer(s, s)
    Q1n = bulk.blocksum(bulk.Omega * T) / p
    q2n = bulk.groupsum(np.diag(T)) / p
    new = layout.pack(m_new, thn, psn, Q1n, q2n, V1n, V2n)
    vals = dict(test_error=float(w @ Ek), m=m_new, theta=thn, psi=psn, Q1=Q1n, q2=q2n, V1=V1n, V2=V2n,
                hat_V1=hV1, hat_V2=hV2, hat_Q1=hQ1, hat_q2=hq2, hat_theta=hth, hat_psi=hps,
                m_rank=int(np.linalg.matrix_rank(A, tol=1e-10 * max(np.max(np.abs(A)), 1e-300))))
    return new, vals


def _solve_one(F, x0, tol, max_iter):
    """Float64 fixed point of ``F``: hybrid Powell (scipy.optimize.root) on F(x) - x, then a damped iteration
    that backs off (more damping) whenever a trial state leaves the domain.  Returns (x, evaluations)."""
    fev = 0

    def Fc(x):
        nonlocal fev
        fev += 1
        return F(x)

    x = np.asarray(x0, dtype=float)
    try:
        sol = root(lambda y: Fc(y) - y, x, method="hybr", options={"xtol": tol})
        if np.all(np.isfinite(sol.x)) and np.all(np.isfinite(sol.fun)) and \
                np.max(np.abs(sol.fun) / np.maximum(1, np.abs(sol.x))) < 100 * tol:
            return sol.x, fev
    except DomainError:
        pass
    try:
        fx = Fc(x)
    except DomainError:
        raise ConvergenceError("K-group saddle point: the starting state is outside the domain (S not positive "
                               "definite)", fev) from None
    damp, res = 0.5, math.inf
    for _ in range(max_iter):
        res = float(np.max(np.abs(fx - x) / np.maximum(1, np.abs(x))))
        if res < tol:
            return fx, fev
        xn = damp * x + (1 - damp) * fx
        try:
            fn = Fc(xn)
        except DomainError:
            damp = (1 + damp) / 2          # back off towards the last valid state
            if damp > 0.999:
                break
            continue
        x, fx = xn, fn
    raise ConvergenceError(f"K-group saddle point: no convergence (hybrid Powell, then damped iteration: residual "
                           f"{res:.1e} after {fev} evaluations)", fev, res)


def _jacobian(F, x):
    """Forward-difference Jacobian of G = F - id at x (backward where a forward step leaves the domain)."""
    f0 = F(x)
    J = np.empty((len(x), len(x)))
    for i in range(len(x)):
        h = 1e-7 * max(1.0, abs(x[i]))
        e = np.zeros_like(x)
        e[i] = h
        try:
            J[:, i] = (F(x + e) - f0) / h
        except DomainError:
            J[:, i] = (f0 - F(x - e)) / h
    return J - np.eye(len(x))


@dataclasses.dataclass
class GroupSolution(VouchedResult):
    r"""Test error (25) of the K-group theory (docs/theory/srf-theory.md §8) with its error budget.

    ``errors``: ``test_error`` (total), ``sampling`` (standard error over the sampled bulks),
    ``discretisation`` (change under a refined κ-rule), ``solver`` (change under a tighter tolerance).
    ``order`` holds the group order parameters of the first bulk; ``reduced`` the single-group
    :class:`~onestep_theory.srf.solution.SRFSolution` when the readout reduces to one group.
    """

    ERROR_KEYS = {"test_error": "test_error"}

    test_error: object
    abs_error: float
    digits: int
    readout: dict
    groups: list
    r: object
    c: object
    gamma: object
    alpha: object
    beta: object
    lam: object
    noise_var: object
    method: str
    experimental: bool
    per_bulk: list
    bulk_d: int | None
    bulk_p: int | None
    order: dict
    m_rank: int | None
    iterations: int
    residual: float
    errors: dict
    reduced: object
    provenance: dict


def srf_groups(student, teacher, *, readout_spec, alpha, beta, lam, noise_var=0, r=None, c=None, gamma=None,
               alpha0=None, eta=None, bulks=None, c_formula="corrected", strict_odd=True, tol=1e-10,
               max_iter=5000, reduce=True, annealed=True, sampler=None, bulk_p=600, bulk_count=4,
               seed=0) -> GroupSolution:
    r"""Test error of the network with initial readout :math:`a^0=u/\sqrt p` (docs/theory/srf-theory.md §8).

    ``readout_spec``: a :class:`~onestep_theory.srf.readout.Readout` or spec string (``"1:0.5,2:0.5"``).
    (r, c, γ) are the uniform-readout parameters (given, or Result 3.1 from ``alpha0``, ``eta``); group j
    uses :math:`(r\varsigma_j,\ 1+\varsigma_j^2(c-1))`.  A readout that reduces to one group is solved by
    :func:`~onestep_theory.srf.solve.srf_solve` (asymptotic, exact to its error).

    Otherwise the experimental finite-W prior runs on sampled bulks ``(W0, v, theta_perp)`` with p/d = β:
    either ``bulks`` given, or drawn by ``sampler(d, p, count, seed=…)`` (``onestep_theory.simulate.sample_bulks``;
    this module draws no random numbers) — ``bulk_count`` bulks of width ``bulk_p`` and as many of width
    ``bulk_p // 2``.  The value is the mean over the widest bulks; ``errors`` holds its standard error
    (``sampling``, one standard error), the change from the half width plus the standard error of that
    change (``finite_size``, the prior's O(1/p) bias), the κ-rule change (``discretisation``) and one
    Newton correction (``solver``), both with a finite-difference Jacobian; with one bulk or one width the
    error is not estimable (NaN, 0 digits).  ``annealed`` (default) averages the prior over v and
    :math:`\theta_\perp` given Ω (:func:`group_bulk`).  ``reduce=False`` keeps the groups as given and always
    uses the finite-W prior (a check: at K = 1 and ``annealed=False`` it is the F1 prior of §4.6).

    >>> sol = srf_groups("tanh", "sin", readout_spec="1:0.5,-1:0.5", alpha0=20, eta=3, alpha=1, beta=1, lam="0.1")
    >>> sol.method.startswith("reduced"), round(float(sol.test_error), 8)    # = the uniform readout (§11.4)
    (True, 0.04160398)
    """
    rd = readout(readout_spec)
    if rd.kind != "finite":
        raise InvalidParameterError("readout", rd.label, "a finite support ('value:fraction,...'); for a Gaussian "
                                    "readout the theory is tau-star ([BES+22] eq. 5.1)")
    s = Activation.from_any(student, "student")
    al, be, la = (float_in(v, n) for v, n in ((alpha, "alpha"), (beta, "beta"), (lam, "lam")))
    nv = float_in(noise_var, "noise_var", strict=False)
    tol = float_in(tol, "tol")
    if not 1e-13 <= tol <= 1e-3:
        raise InvalidParameterError("tol", tol, "a real number in [1e-13, 1e-3]")
    rr, cc, gg, _ = resolve_rcg(student, teacher, r, c, gamma, alpha0, eta, noise_var, c_formula, strict_odd)
    red = rd.reduced(odd=is_odd(s.expr)) if reduce else rd
    gp = group_params(float(rr), float(cc), red)
    groups = [dict(value=str(v), fraction=str(f), r=rj, c=cj) for v, f, (rj, cj) in zip(red.values, red.fractions, gp)]
    common = dict(readout=dict(rd.to_dict(), reduced=red.label), groups=groups, r=rr, c=cc, gamma=gg, alpha=alpha,
                  beta=beta, lam=lam, noise_var=noise_var, experimental=red.K > 1)
    refs = ["[CPDKLZL24] Sec. 4.4, App. D, (32)", "[DPCKLL24] arXiv:2410.18938", "docs/theory/srf-theory.md §8"]
    if reduce and red.K == 1:
        r1, c1 = group_params(rr, cc, red)[0]          # exact (or mpf) group parameters
        t1 = teacher
        if gp[0][0] < 0:      # negative spike (non-odd sigma): v -> -v, i.e. the teacher reflected (§8, Package)
            ta = Activation.from_any(teacher, "teacher")
            t1, r1 = Activation(ta.expr.subs(x, -x), ta.center, f"{ta.name}(-x)"), -r1
        sol = srf_solve(student, t1, alpha=alpha, beta=beta, lam=lam, noise_var=noise_var, r=r1, c=c1, gamma=gg,
                        tol=tol)
        return GroupSolution(test_error=sol.test_error, abs_error=sol.abs_error, digits=sol.digits, method=(
            f"reduced to one group (u = {red.values[0]}): asymptotic single-group saddle point"), per_bulk=[],
            bulk_d=None, bulk_p=None, order=sol.order, m_rank=None, iterations=sol.iterations, residual=sol.residual,
            errors={"test_error": sol.abs_error}, reduced=sol,
            provenance=provenance(method="srf_solve on the reduced readout", references=refs), **common)
    if bulks is None:
        if sampler is None:
            raise InvalidParameterError("bulks", None, "sampled bulks, or a sampler (onestep_theory.simulate.sample_bulks) "
                                        "for a readout of K >= 2 groups")
        bp = int(bulk_p)
        if not 20 <= bp <= MAX_BULK_P or not 2 <= int(bulk_count) <= 64:
            raise InvalidParameterError("bulk_p, bulk_count", (bulk_p, bulk_count),
                                        f"bulk_p in [20, {MAX_BULK_P}] and bulk_count in [2, 64]")
        if round(bp / 2 / be) < 20:
            raise InvalidParameterError("bulk_p", bulk_p, f"at least {math.ceil(40 * be)} at beta = {be:g} (the half "
                                        "width needs d >= 20)")
        bulks = []
        for k, pk in enumerate((bp, bp // 2)):      # the half size measures the finite-p change
            dk = round(pk / be)
            bulks += list(sampler(dk, max(1, round(be * dk)), int(bulk_count), seed=2 * int(seed) + k))
    sizes = {}
    for W0, v, tp in bulks:
        W0 = np.asarray(W0)
        if W0.ndim != 2 or W0.shape[1] < 20 or abs(W0.shape[0] / W0.shape[1] - be) > 1.0 / W0.shape[1] + 1e-12:
            raise InvalidParameterError("bulks", f"shape {W0.shape}", f"p x d bulks, d >= 20, with p/d = beta = {be:g}")
        sizes.setdefault(W0.shape[0], []).append((W0, v, tp))
    if not sizes:
        raise InvalidParameterError("bulks", 0, "at least one sampled bulk")
    layout = StateLayout(red.K)
    cs = [cj for _, cj in gp]
    o = (al, be, la, nv)
    pis = np.array([float(f) for f in red.fractions])
    x0 = layout.pack(np.zeros(red.K), np.zeros(red.K), np.zeros(red.K), 0.1 * np.diag(pis), 0.1 * pis,
                     np.diag(pis * float(cc)), pis.copy())
    spikes = [rj for rj, _ in gp]
    G0 = group_setup(student, teacher, spikes, cs, gg, level=0)
    G1 = group_setup(student, teacher, spikes, cs, gg, level=1)
    runs = {}
    for pk in sorted(sizes, reverse=True):
        runs[pk] = _finite_w(sizes[pk], G0, G1, cs, red, annealed, o, layout, x0, tol, max_iter)
        x0 = runs[pk]["x"]
    main = runs[max(runs)]
    per = main["per"]
    mean = float(np.mean(per))
    se = float(np.std(per, ddof=1) / math.sqrt(len(per))) if len(per) > 1 else math.nan
    # finite p: the change from the next smaller bulk size (an O(1/p) effect), with its own sampling error
    if len(runs) > 1:
        small = runs[sorted(runs)[-2]]["per"]
        se_small = float(np.std(small, ddof=1) / math.sqrt(len(small))) if len(small) > 1 else math.nan
        size_err = abs(float(np.mean(small)) - mean) + math.hypot(se, se_small)
    else:
        size_err = math.nan
    err = se + size_err + main["disc"] + main["solv"]      # NaN when any part is not estimable
    bulk_p = max(runs)
    return GroupSolution(
        test_error=mean, abs_error=err, digits=digits_of(mean, err) if math.isfinite(err) else 0, method=(
            f"finite-W K-group saddle point ({'annealed' if annealed else 'sampled'} prior) on {len(per)} sampled "
            f"bulks of p = {bulk_p} (and {sum(len(v) for v in sizes.values()) - len(per)} smaller); hybrid Powell"),
        per_bulk=per, bulk_d=main["d"], bulk_p=bulk_p, order=main["order"], m_rank=main["rank"],
        iterations=sum(r["fev"] for r in runs.values()), residual=main["res"],
        errors={"test_error": err, "sampling": se, "finite_size": size_err, "discretisation": main["disc"],
                "solver": main["solv"]}, reduced=None,
        provenance=provenance(method="finite-W K-group saddle point (experimental)", references=refs), **common)


def _finite_w(bulks, G0, G1, cs, red, annealed, o, layout, x0, tol, max_iter) -> dict:
    """Solve on each bulk of one size.  Errors of the values (max over bulks): ``solver``, the change under one
    Newton correction with a finite-difference Jacobian; ``discretisation``, the change to the fixed point of
    the coarser κ-rule (one Newton step with the same Jacobian, computed on the first bulk of the size)."""
    per, disc, solv, fev, res, order, rank, d, J = [], 0.0, 0.0, 0, 0.0, None, None, None, None
    for W0, v, tp in bulks:
        bulk = group_bulk(W0, v, tp, cs, red, annealed=annealed)
        d = bulk.d
        run = (lambda y, G, bulk=bulk: group_map(y, G, bulk, *o, layout))
        x, n1 = _solve_one(lambda y: run(y, G1)[0], x0, tol * 1e-2, max_iter)
        f1, vals = run(x, G1)
        if J is None:
            J = _jacobian(lambda y: run(y, G1)[0], x)
            n1 += len(x) + 1
        res = max(res, float(np.max(np.abs(f1 - x) / np.maximum(1, np.abs(x)))))
        try:
            xs = x - np.linalg.solve(J, f1 - x)
            xc = x - np.linalg.solve(J, run(x, G0)[0] - x)
            solv = max(solv, abs(run(xs, G1)[1]["test_error"] - vals["test_error"]))
            disc = max(disc, abs(run(xc, G0)[1]["test_error"] - vals["test_error"]))
        except (np.linalg.LinAlgError, DomainError):
            solv = disc = math.nan            # not estimable: reported, and the total becomes NaN
        n1 += 4
        per.append(vals["test_error"])
        fev += n1
        x0 = x
        if order is None:
            order = {k: np.asarray(vals[k]).tolist() for k in ("m", "theta", "psi", "Q1", "q2", "V1", "V2")}
            rank = vals["m_rank"]
    return dict(per=per, disc=disc, solv=solv, fev=fev, res=res, order=order, rank=rank, d=d, x=x0)
