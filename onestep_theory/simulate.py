r"""Finite-size numpy simulation of every theory quantity.

Protocols (names follow the specification):

==========================  ===========================================================  ==========================
function                    what it simulates                                            specification
==========================  ===========================================================  ==========================
:func:`sim_resolvent`       traces m1, m2 and their λ-derivatives of the RF resolvent     spike-theory.md §9.4
:func:`sim_spikes`          one-step network (protocol A): training/test gains            spike-theory.md §9.2
:func:`sim_spike_model`     Gaussian-equivalent spike model (protocol B, limit/finite)    spike-theory.md §9.3
:func:`sim_giant_step`      one giant step, ridge on fresh data, measured r, c, γ         srf-theory.md §10.2
:func:`sim_srf`             direct spiked-random-features ridge, order parameters         srf-theory.md §10.1
:func:`sim_spectrum`        eigenvalues of ΦᵀΦ/p, top (mean) spike, Stieltjes transform   srf-theory.md §10.3
==========================  ===========================================================  ==========================

Every routine takes ``seed`` (an int, a :class:`numpy.random.SeedSequence` or a
:class:`numpy.random.Generator`) and ``reps``; repetition *k* uses the *k*-th child of
``SeedSequence(seed).spawn(reps)``, itself split into independent streams for weights,
training data and test data.  Each quantity is returned as mean, standard error and
per-repetition values (:class:`Stat`).  Ridge problems are solved through
:class:`Ridge` (Cholesky, or one eigendecomposition for a λ path); no explicit inverse
is ever formed.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import time

import numpy as np
import scipy.linalg as sla

from .errors import InvalidParameterError
from .exact import float_in
from .hermite import Activation
from .results import Result, provenance

__all__ = [
    "Stat",
    "SimulationResult",
    "Ridge",
    "spawn",
    "sizes_spike",
    "sizes_srf",
    "sim_resolvent",
    "sim_spikes",
    "sim_spike_model",
    "sim_giant_step",
    "sim_srf",
    "sim_spectrum",
]


# --------------------------------------------------------------------------- statistics
@dataclasses.dataclass
class Stat:
    """Mean, standard error (``std(ddof=1)/sqrt(reps)``; ``nan`` for one repetition) and values."""

    values: list

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def se(self) -> float:
        v = np.asarray(self.values, dtype=float)
        return float(np.std(v, ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")

    def to_dict(self) -> dict:
        se = self.se
        return {"mean": self.mean, "se": None if math.isnan(se) else se, "values": [float(v) for v in self.values]}


@dataclasses.dataclass
class SimulationResult(Result):
    """Output of a simulation protocol.

    ``stats`` maps quantity names to :class:`Stat`; ``extra`` holds arrays that are not
    averaged (e.g. eigenvalues of the first repetition).
    """

    protocol: str
    params: dict
    stats: dict
    seed: object
    reps: int
    seconds: float
    extra: dict
    provenance: dict

    def __getitem__(self, key) -> Stat:
        return self.stats[key]

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["stats"] = {k: v.to_dict() for k, v in self.stats.items()}
        return d


def spawn(seed, reps: int, streams: int = 3) -> list:
    """``reps`` tuples of ``streams`` independent Generators (weights, train, test)."""
    if isinstance(seed, np.random.Generator):
        children = seed.bit_generator.seed_seq.spawn(reps)
    elif isinstance(seed, np.random.SeedSequence):
        children = seed.spawn(reps)
    else:
        if seed is not None and (not isinstance(seed, (int, np.integer)) or seed < 0):
            raise InvalidParameterError("seed", seed, "an integer >= 0, a SeedSequence or a Generator")
        children = np.random.SeedSequence(seed).spawn(reps)
    return [tuple(np.random.default_rng(s) for s in c.spawn(streams)) for c in children]


def _collect(rows: list) -> dict:
    keys = rows[0].keys()
    return {k: Stat([r[k] for r in rows]) for k in keys}


def _check_reps(reps):
    if not isinstance(reps, (int, np.integer)) or isinstance(reps, bool) or reps < 1:
        raise InvalidParameterError("reps", reps, "an integer >= 1")


def _pos(value, name, integer=False):
    v = float_in(value, name)
    if integer:
        if v != int(v):
            raise InvalidParameterError(name, value, "an integer >= 1")
        return int(v)
    return v


def _nonneg(value, name):
    return float_in(value, name, strict=False)


def _lams(lam) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(lam, dtype=float))
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise InvalidParameterError("lam", lam, "real number(s) > 0")
    return arr


#: Share of the available memory a simulation may plan to use without ``force``.
MEMORY_SHARE = 0.8


def available_memory() -> int:
    """Bytes of memory available now (MemAvailable of /proc/meminfo; physical memory otherwise)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**34


def check_memory(nbytes: float, force: bool, what: str) -> None:
    """Refuse a simulation whose estimated peak memory exceeds the available memory (unless ``force``)."""
    avail = available_memory()
    if nbytes > MEMORY_SHARE * avail and not force:
        raise InvalidParameterError("d", what, f"sizes whose arrays fit in memory: estimated peak {nbytes / 2**30:.3g} "
                                    f"GiB, available {avail / 2**30:.3g} GiB (reduce d or the ratios, or force=True, "
                                    "CLI --force)")


def sizes_spike(n=None, d=None, N=None, phi=None, psi=None, force=False) -> tuple:
    """Resolve (n, d, N) of the spike theory from sizes and/or ratios φ = d/n, ψ = d/N."""
    if d is None:
        if n is None or phi is None:
            raise InvalidParameterError("d", d, "an integer >= 1 (or give n and phi)")
        d = round(_pos(phi, "phi") * _pos(n, "n", True))
    d = _pos(d, "d", True)
    if n is None:
        if phi is None:
            raise InvalidParameterError("n", n, "an integer >= 1 (or give phi)")
        n = max(1, round(d / _pos(phi, "phi")))
    n = _pos(n, "n", True)
    if N is None:
        if psi is None:
            raise InvalidParameterError("N", N, "an integer >= 1 (or give psi)")
        N = max(1, round(d / _pos(psi, "psi")))
    N = _pos(N, "N", True)
    if phi is not None and abs(d / n - float(phi)) > 0.01 * float(phi):
        raise InvalidParameterError("phi", phi, f"consistent with d/n = {d}/{n}", "mismatched sizes")
    if psi is not None and abs(d / N - float(psi)) > 0.01 * float(psi):
        raise InvalidParameterError("psi", psi, f"consistent with d/N = {d}/{N}", "mismatched sizes")
    # two datasets X (n x d), weights (N x d), features (n x N) twice, Gram/eigen (min(n, N)^2) twice
    check_memory(8.0 * (2 * n * d + N * d + 2 * n * N + 2 * min(n, N) ** 2), force, f"n={n}, d={d}, N={N}")
    return n, d, N


def sizes_srf(d, alpha=None, beta=None, alpha0=None, n=None, p=None, n0=None, force=False) -> tuple:
    """Resolve (d, n, p, n0) of the sRF theory from d and α = n/d, β = p/d, α0 = n0/d."""
    d = _pos(d, "d", True)
    if n is None:
        n = max(1, round(_pos(alpha, "alpha") * d)) if alpha is not None else None
    if p is None:
        p = max(1, round(_pos(beta, "beta") * d)) if beta is not None else None
    if n0 is None and alpha0 is not None:
        n0 = max(1, round(_pos(alpha0, "alpha0") * d))
    for v, name in ((n, "n"), (p, "p")):
        if v is None:
            raise InvalidParameterError(name, v, "an integer >= 1 (or give the ratio)")
        _pos(v, name, True)
    # X (n x d), W (p x d), features (n x p) twice, Gram (min(n, p)^2) twice, the step batch (n0 x d, n0 x p),
    # a test batch of 4000 rows
    m = (n0 or 0)
    check_memory(8.0 * (n * d + 2 * p * d + 2 * n * p + 2 * min(n, p) ** 2 + m * (d + p) + 4000 * (d + p)), force,
                 f"d={d}, n={n}, p={p}" + (f", n0={n0}" if n0 else ""))
    return d, int(n), int(p), (int(n0) if n0 is not None else None)


# --------------------------------------------------------------------------- random objects
def _sphere_rows(rng, rows, d) -> np.ndarray:
    w = rng.standard_normal((rows, d))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    return w


def _unit(rng, d) -> np.ndarray:
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v)


class _Fn:
    """float64 callables of an activation: value, derivative, and Hermite constants."""

    def __init__(self, spec, param, center=False):
        self.act = Activation.from_any(spec, param, center=center)
        self.f = self.act.numpy()
        self._df = None

    @property
    def df(self):
        if self._df is None:
            self._df = self.act.numpy_derivative()
        return self._df

    def c(self, k) -> float:
        return float(self.act.coeff(k, 17))

    def c_gt1(self) -> float:
        return float(self.act.c_gt1(17))


# --------------------------------------------------------------------------- ridge
class Ridge:
    r"""Ridge regression :math:`\min_a\|y-Fa\|^2+\mu\|a\|^2` for many μ without inverses.

    ``method="cholesky"`` factorises :math:`F^\top F+\mu I` (or :math:`FF^\top+\mu I`, whichever
    is smaller) for each μ; ``method="eigh"`` diagonalises the smaller Gram matrix once and
    serves every μ in :math:`O(m^2)`.  ``"auto"`` picks eigh for more than 6 values of μ.

    Methods return the coefficients :math:`\hat a(\mu)` and the optimum value
    :math:`\mu\,y^\top(FF^\top+\mu I)^{-1}y`.
    """

    def __init__(self, F: np.ndarray, y: np.ndarray, n_mu: int = 1, method: str = "auto"):
        self.F = F
        self.y = y
        self.n, self.N = F.shape
        self.primal = self.N <= self.n
        if method == "auto":
            method = "eigh" if n_mu > 6 else "cholesky"
        if method not in ("eigh", "cholesky"):
            raise InvalidParameterError("method", method, "'auto', 'eigh' or 'cholesky'")
        self.method = method
        self.G = F.T @ F if self.primal else F @ F.T
        self.b = F.T @ y if self.primal else y
        self.yy = float(y @ y)
        if method == "eigh":
            self.s, self.V = np.linalg.eigh(self.G)
            self.s = np.clip(self.s, 0, None)
            self.bV = self.V.T @ self.b

    def _solve(self, mu, rhs):
        if self.method == "eigh":
            return self.V @ ((self.V.T @ rhs) / (self.s + mu)[:, None] if rhs.ndim == 2 else
                             (self.V.T @ rhs) / (self.s + mu))
        m = self.G.copy()
        m[np.diag_indices_from(m)] += mu
        cf = sla.cho_factor(m, lower=True, overwrite_a=True, check_finite=False)
        return sla.cho_solve(cf, rhs, check_finite=False)

    def coef(self, mu: float) -> np.ndarray:
        """:math:`\\hat a(\\mu)=(F^\\top F+\\mu)^{-1}F^\\top y=F^\\top(FF^\\top+\\mu)^{-1}y`."""
        if self.method == "eigh":
            z = self.V @ (self.bV / (self.s + mu))
        else:
            z = self._solve(mu, self.b)
        return z if self.primal else self.F.T @ z

    def objective(self, mu: float) -> float:
        """:math:`\\min_a\\|y-Fa\\|^2+\\mu\\|a\\|^2=\\mu\\,y^\\top(FF^\\top+\\mu)^{-1}y`."""
        if self.method == "eigh":
            q = float(np.sum(self.bV**2 / (self.s + mu)))
        else:
            q = float(self.b @ self._solve(mu, self.b))
        return self.yy - q if self.primal else mu * q


def _predict(F_test_fn, a, n_test, batch, rng_test, target_fn):
    """Mean squared error over n_test fresh points, in batches (features built per batch)."""
    sq = 0.0
    done = 0
    while done < n_test:
        m = min(batch, n_test - done)
        Xt = rng_test.standard_normal((m, F_test_fn.d))
        err = target_fn(Xt) - F_test_fn(Xt) @ a
        sq += float(err @ err)
        done += m
    return sq / n_test


class _Features:
    def __init__(self, d, fn):
        self.d = d
        self.fn = fn

    def __call__(self, X):
        return self.fn(X)


def _progress(progress, i, total):
    if callable(progress):
        progress(i, total)
    elif progress not in (None, False):
        raise InvalidParameterError("progress", progress, "a callable(i, total), None or False")


def _teacher(teacher_spec):
    t = _Fn(teacher_spec, "teacher")
    return t


# --------------------------------------------------------------------------- protocol C
def sim_resolvent(student, n=None, d=None, N=None, *, phi=None, psi=None, lam=0.5, bulk="nonlinear",
                  init="sphere", seed=0, reps=1, progress=None, force=False) -> SimulationResult:
    r"""Empirical resolvent traces (spike-theory.md §9.4, Protocol C).

    .. math::
        m_1=\tfrac\phi\psi\operatorname{tr}\bar R_0,\quad
        m_2=\tfrac\phi\psi\tfrac1d\operatorname{tr}(\tilde X^\top\bar R_0\tilde X),\quad
        \partial_\lambda m_1=-\tfrac\phi\psi n\operatorname{tr}\bar R_0^2,\quad
        \partial_\lambda m_2=-\tfrac\phi\psi\tfrac nd\operatorname{tr}(\tilde X^\top\bar R_0^2\tilde X),

    with :math:`\bar R_0=(F_0F_0^\top+\lambda nI_n)^{-1}` and :math:`F_0=\sigma(\tilde XW_0^\top)` (centred
    σ, unit rows of :math:`W_0`), or the Gaussian equivalent :math:`c_1\tilde XW_0^\top+c_{>1}Z`
    (``bulk="gaussian"``).  One eigendecomposition of the smaller Gram matrix per
    repetition serves every λ.
    """
    n, d, N = sizes_spike(n, d, N, phi, psi, force=force)
    lams = _lams(lam)
    _check_reps(reps)
    if bulk not in ("nonlinear", "gaussian"):
        raise InvalidParameterError("bulk", bulk, "'nonlinear' or 'gaussian'")
    if init not in ("sphere", "gaussian"):
        raise InvalidParameterError("init", init, "'sphere' or 'gaussian'")
    s = _Fn(student, "student", center=True)
    c1, cg = s.c(1), s.c_gt1()
    ratio = N / n  # phi/psi
    t0 = time.perf_counter()
    rows = []
    for k, (rw, rtr, _) in enumerate(spawn(seed, reps)):
        W0 = _sphere_rows(rw, N, d) if init == "sphere" else rw.standard_normal((N, d)) / math.sqrt(d)
        X = rtr.standard_normal((n, d))
        Z0 = X @ W0.T
        F0 = c1 * Z0 + cg * rtr.standard_normal((n, N)) if bulk == "gaussian" else s.f(Z0)
        del Z0
        if N <= n:
            sv, V = np.linalg.eigh(F0.T @ F0)
            sv = np.clip(sv, 0, None)
            U = F0 @ V
            keep = sv > 1e-12 * max(sv.max(), 1.0)
            U = U[:, keep] / np.sqrt(sv[keep])
            sv = sv[keep]
        else:
            sv, U = np.linalg.eigh(F0 @ F0.T)
            sv = np.clip(sv, 0, None)
        n_zero = n - sv.size
        P = U.T @ X                      # projections of X on the eigenvectors
        proj = np.sum(P * P, axis=1)     # ||u_i^T X||^2
        rest = float(np.sum(X * X)) - float(proj.sum())
        row = {}
        for lam_v in lams:
            mu = lam_v * n
            w1 = 1.0 / (sv + mu)
            tr1 = float(w1.sum()) + n_zero / mu
            tr2 = (float(proj @ w1) + rest / mu) / d
            tr1sq = float((w1**2).sum()) + n_zero / mu**2
            tr2sq = (float(proj @ w1**2) + rest / mu**2) / d
            suffix = "" if lams.size == 1 else f"@{lam_v:g}"
            row["m1" + suffix] = ratio * tr1
            row["m2" + suffix] = ratio * tr2
            row["dm1_dlam" + suffix] = -ratio * n * tr1sq
            row["dm2_dlam" + suffix] = -ratio * n * tr2sq
        rows.append(row)
        _progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="resolvent", params=dict(student=s.act.name, n=n, d=d, N=N, phi=d / n, psi=d / N,
                                          lam=lams.tolist(), bulk=bulk, init=init, c1=c1, c_gt1=cg),
        stats=_collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="eigendecomposition of the smaller Gram matrix",
                              references=["spike-theory.md §9.4", "spike-theory.md §6.1"]))


# --------------------------------------------------------------------------- protocols A and B
def _draw_spike_data(rw, rtr, n, d, N, init, beta_star, teacher, sd):
    """spike-theory.md §9.2 step 1: W0, beta_star, a (weights stream), step set (X, y), readout set (Xt, yt)."""
    W0 = _sphere_rows(rw, N, d) if init == "sphere" else rw.standard_normal((N, d)) / math.sqrt(d)
    bstar = _unit(rw, d) if beta_star == "sphere" else rw.standard_normal(d) / math.sqrt(d)
    a = rw.standard_normal(N) / math.sqrt(N)
    X = rtr.standard_normal((n, d))
    y = teacher.f(X @ bstar) + sd * rtr.standard_normal(n)
    Xt = rtr.standard_normal((n, d))
    yt = teacher.f(Xt @ bstar) + sd * rtr.standard_normal(n)
    return W0, bstar, a, X, y, Xt, yt



def _one_step(X, y, W0, a, s: _Fn, eta, gradient, c1):
    """W = W0 - eta grad L(W0), spike-theory.md §2.3 (exact, label_only or rank_one)."""
    n = X.shape[0]
    if gradient == "rank_one":
        beta = X.T @ y / n
        return W0 + eta * c1 * np.outer(a, beta)
    Z0 = X @ W0.T
    if gradient == "exact":
        r = y - s.f(Z0) @ a
    else:
        r = y
    M = s.df(Z0)
    del Z0
    M *= r[:, None]
    M *= a[None, :]
    G = M.T @ X
    G *= eta / n
    return W0 + G


def _left_overlaps(F, u, ell, k_top):
    """Top singular values of F and |<left singular vector j, u^k/||u^k||>| for k <= ell (spike-theory.md §9.2
    step 5, §5.2: the outlier left singular vectors align with the u^{o k})."""
    from scipy.sparse.linalg import svds

    k = min(k_top, min(F.shape) - 1)
    Ul, sv, _ = svds(F, k=k, random_state=0)
    order = np.argsort(sv)[::-1]
    sv, Ul = sv[order], Ul[:, order]
    over = {}
    for p in range(1, ell + 1):
        up = u**p
        up = up / np.linalg.norm(up)
        over[p] = np.abs(Ul.T @ up)
    return sv, over


def sim_spikes(student, teacher, n=None, d=None, N=None, *, phi=None, psi=None, lam=0.1, alpha=None,
               eta_scale=1.0, eta=None, noise_var=0.0, gradient="exact", init="sphere", beta_star="sphere",
               n_test=None, singular=False, ell=2, seed=0, reps=1, batch=2000, progress=None, force=False) -> SimulationResult:
    r"""Full non-linear one-step pipeline (spike-theory.md §9.2, Protocol A).

    Two independent datasets of size n (step and readout); one gradient step with
    :math:`\eta=c\,n^\alpha` (``eta_scale`` = c) or a given ``eta``; ridge readout; the
    penalised training optimum :math:`\mathcal L_{\rm tr}=\lambda\tilde y^\top(FF^\top+\lambda n)^{-1}\tilde y`
    (§2.4) for :math:`F_0` and :math:`F`, their difference, test risks on
    :math:`n_{\rm test}\ge2n` fresh points (noise-free target plus :math:`\sigma_\varepsilon^2`),
    :math:`\|\beta\|^2`, :math:`\beta^\top\beta_\star`, the empirical :math:`m_1,m_2`, and with
    ``singular=True`` the top singular values of F and the overlaps of its top left
    singular vectors with :math:`(\tilde X\beta)^{\circ k}`.
    """
    n, d, N = sizes_spike(n, d, N, phi, psi, force=force)
    lam = float(_lams(lam)[0])
    _check_reps(reps)
    if gradient not in ("exact", "label_only", "rank_one"):
        raise InvalidParameterError("gradient", gradient, "'exact', 'label_only' or 'rank_one'")
    if init not in ("sphere", "gaussian"):
        raise InvalidParameterError("init", init, "'sphere' or 'gaussian'")
    if beta_star not in ("sphere", "gaussian"):
        raise InvalidParameterError("beta_star", beta_star, "'sphere' or 'gaussian'")
    noise_var = _nonneg(noise_var, "noise_var")
    if eta is None:
        if alpha is None:
            raise InvalidParameterError("alpha", alpha, "a real exponent (eta = c n^alpha), or give eta")
        eta = float(eta_scale) * n ** float(alpha)
    eta = _nonneg(eta, "eta")
    n_test = int(n_test) if n_test is not None else 2 * n
    s = _Fn(student, "student", center=True)
    t = _teacher(teacher)
    c1 = s.c(1)
    sd = math.sqrt(noise_var)
    ratio = N / n
    t0 = time.perf_counter()
    rows = []
    extra = {}
    for k, (rw, rtr, rte) in enumerate(spawn(seed, reps)):
        W0, bstar, a, X, y, Xt, yt = _draw_spike_data(rw, rtr, n, d, N, init, beta_star, t, sd)
        beta = X.T @ y / n
        W = _one_step(X, y, W0, a, s, eta, gradient, c1)
        del X
        row = {"beta_norm2": float(beta @ beta), "beta_dot_beta_star": float(beta @ bstar)}
        mu = lam * n
        for tag, Wm in (("F0", W0), ("F", W)):
            F = s.f(Xt @ Wm.T)
            rg = Ridge(F, yt)
            row[f"train_loss_{tag}"] = rg.objective(mu) / n
            ahat = rg.coef(mu)
            if tag == "F0":
                # empirical m1, m2 (spike-theory.md §9.4) from the same Cholesky
                Kmat = F @ F.T
                Kmat[np.diag_indices_from(Kmat)] += mu
                L = sla.cholesky(Kmat, lower=True, overwrite_a=True, check_finite=False)
                Linv = sla.solve_triangular(L, np.eye(n), lower=True, check_finite=False)
                row["m1"] = ratio * float(np.sum(Linv * Linv))
                B = Linv @ Xt
                row["m2"] = ratio * float(np.sum(B * B)) / d
                del Linv, B, L, Kmat
            elif singular:
                sv, over = _left_overlaps(F, Xt @ beta, ell, ell + 3)
                extra.setdefault("singular_values", []).append(sv.tolist())
                extra.setdefault("overlaps", []).append({str(p): o.tolist() for p, o in over.items()})
            del F, rg
            feats = _Features(d, lambda Z, Wm=Wm: s.f(Z @ Wm.T))
            row[f"test_loss_{tag}"] = _predict(feats, ahat, n_test, batch, rte, lambda Z: t.f(Z @ bstar)) + noise_var
        row["train_gain"] = row["train_loss_F0"] - row["train_loss_F"]
        row["test_gain"] = row["test_loss_F0"] - row["test_loss_F"]
        rows.append(row)
        _progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="spikes", params=dict(student=s.act.name, teacher=t.act.name, n=n, d=d, N=N, phi=d / n, psi=d / N,
                                       lam=lam, alpha=alpha, eta=eta, noise_var=noise_var, gradient=gradient,
                                       init=init, beta_star=beta_star, n_test=n_test),
        stats=_collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra=extra,
        provenance=provenance(method="Cholesky ridge; exact one-step gradient",
                              references=["spike-theory.md §9.2", "spike-theory.md §2"]))


# --------------------------------------------------------------------------- protocol B
@functools.lru_cache(maxsize=8)
def _gh3(nodes):
    """Tensor probabilists' Gauss-Hermite rule in R^3 (weights sum to 1), built once per node count."""
    from .equivalence import gh_nodes

    z, wz = gh_nodes(nodes)
    Z = np.stack(np.meshgrid(z, z, z, indexing="ij"), -1).reshape(-1, 3)
    W = (wz[:, None, None] * wz[None, :, None] * wz[None, None, :]).reshape(-1)
    return Z, W


def _gauss3_expect(fn, cov, rng=None, nodes=40, draws=2_000_000):
    """E fn(g) for g ~ N(0, cov) in R^3: tensor Gauss–Hermite (polynomial fn) or Monte-Carlo."""
    L = np.linalg.cholesky(cov + 1e-300 * np.eye(3)) if np.all(np.linalg.eigvalsh(cov) > 0) else None
    if L is None:
        w, V = np.linalg.eigh(cov)
        L = V * np.sqrt(np.clip(w, 0, None))
    if rng is None:
        Z, W = _gh3(nodes)
        return float(W @ fn(Z @ L.T))
    tot = 0.0
    chunk = 500_000
    done = 0
    while done < draws:
        m = min(chunk, draws - done)
        tot += float(fn(rng.standard_normal((m, 3)) @ L.T).sum())
        done += m
    return tot / draws


def sim_spike_model(student, teacher, n=None, d=None, N=None, *, phi=None, psi=None, lam=0.1, ell=2,
                    mode="limit", bulk="gaussian", alpha=None, eta_scale=1.0, eta=None, noise_var=0.0,
                    init="sphere", beta_star="sphere", seed=0, reps=1, progress=None, force=False) -> SimulationResult:
    r"""Gaussian-equivalent spike model (spike-theory.md §9.3, Protocol B).

    ``mode="limit"`` (B-limit, used for validation): infinitely strong, unpenalised spikes
    :math:`U=[(u/\|\beta\|)^{\circ k}]_{k\le\ell}`, :math:`\hat c=(U^\top\bar R_0U)^{-1}U^\top\bar R_0\tilde y`,
    :math:`\mathcal L_{\rm tr}=\lambda[\tilde y^\top\bar R_0\tilde y-\tilde y^\top\bar R_0U\hat c]`; ``ell=0`` is the
    random-features baseline.  ``mode="finite"`` (B-finite): features
    :math:`F_0+\sum_k\gamma_ku^{\circ k}(a^{\circ k})^\top`, :math:`\gamma_k=c_1^kc_k\eta^k`.

    The test risk is exact given the sample (§9.3): it depends on x only through the Gaussian
    vector :math:`(\beta_\star^\top x,\beta^\top x,v^\top x)`, evaluated by tensor Gauss–Hermite
    for a polynomial teacher and by :math:`2\cdot10^6` draws otherwise, plus
    :math:`c_{>1}^2\|\hat a_0\|^2+\sigma_\varepsilon^2`.  ``bulk="nonlinear"`` uses
    :math:`\sigma(\tilde XW_0^\top)` (training quantities only).
    Returns ``train_loss`` and ``train_loss_F0`` (= ℓ = 0), ``delta`` (their difference),
    ``test_loss``, ``test_loss_F0`` and ``lambda_test`` (their difference).
    """
    import sympy as sp

    n, d, N = sizes_spike(n, d, N, phi, psi, force=force)
    lam = float(_lams(lam)[0])
    _check_reps(reps)
    if mode not in ("limit", "finite"):
        raise InvalidParameterError("mode", mode, "'limit' or 'finite'")
    if bulk not in ("gaussian", "nonlinear"):
        raise InvalidParameterError("bulk", bulk, "'gaussian' or 'nonlinear'")
    if not isinstance(ell, (int, np.integer)) or ell < 0 or ell > 8:
        raise InvalidParameterError("ell", ell, "an integer in [0, 8]")
    noise_var = _nonneg(noise_var, "noise_var")
    s = _Fn(student, "student", center=True)
    t = _teacher(teacher)
    c1, cg = s.c(1), s.c_gt1()
    if mode == "finite":
        if eta is None:
            if alpha is None:
                raise InvalidParameterError("alpha", alpha, "a real exponent (eta = c n^alpha), or give eta")
            eta = float(eta_scale) * n ** float(alpha)
        gam = [c1**k * s.c(k) * float(eta) ** k for k in range(1, ell + 1)]
    poly_teacher = t.act.expr.is_polynomial(sp.Symbol("x", real=True))
    sd = math.sqrt(noise_var)
    t0 = time.perf_counter()
    rows = []
    for k, (rw, rtr, rte) in enumerate(spawn(seed, reps)):
        W0, bstar, a, X, y, Xt, yt = _draw_spike_data(rw, rtr, n, d, N, init, beta_star, t, sd)
        beta = X.T @ y / n
        del X
        Z0 = Xt @ W0.T
        F0 = c1 * Z0 + cg * rtr.standard_normal((n, N)) if bulk == "gaussian" else s.f(Z0)
        del Z0
        bnorm = float(np.linalg.norm(beta))
        u = Xt @ beta / bnorm
        mu = lam * n
        if mode == "limit":
            Kmat = F0 @ F0.T
            Kmat[np.diag_indices_from(Kmat)] += mu
            cf = sla.cho_factor(Kmat, lower=True, overwrite_a=True, check_finite=False)
            Ry = sla.cho_solve(cf, yt, check_finite=False)
            base = lam * float(yt @ Ry)
            if ell > 0:
                U = np.stack([u**p for p in range(1, ell + 1)], axis=1)
                RU = sla.cho_solve(cf, U, check_finite=False)
                chat = np.linalg.solve(U.T @ RU, RU.T @ yt)
            else:
                U = np.zeros((n, 0))
                chat = np.zeros(0)
            resid = yt - U @ chat
            a0 = F0.T @ sla.cho_solve(cf, resid, check_finite=False)
            train = lam * float(yt @ sla.cho_solve(cf, resid, check_finite=False))
            a0_base = F0.T @ Ry
            scale_c = chat  # coefficients of (x^T beta / ||beta||)^k
        else:
            Ffull = F0.copy()
            for p, g in enumerate(gam, start=1):
                Ffull += g * np.outer(u**p * bnorm**p, a**p)
            rg = Ridge(Ffull, yt)
            train = rg.objective(mu) / n
            ahat = rg.coef(mu)
            scale_c = np.array([gam[p - 1] * float(ahat @ a**p) * bnorm**p for p in range(1, ell + 1)])
            a0 = ahat
            rg0 = Ridge(F0, yt)
            base = rg0.objective(mu) / n
            a0_base = rg0.coef(mu)
            del Ffull
        row = {"train_loss": train, "train_loss_F0": base, "delta": base - train}
        if bulk == "gaussian":
            risks = []
            for cc, aa in ((scale_c, a0), (np.zeros(0), a0_base)):
                v = c1 * (W0.T @ aa)
                vecs = np.stack([bstar, beta / bnorm, v])
                cov = vecs @ vecs.T

                def err(G, cc=cc):
                    pred = G[:, 2].copy()
                    for p, cp in enumerate(cc, start=1):
                        pred += cp * G[:, 1] ** p
                    return (t.f(G[:, 0]) - pred) ** 2

                e = _gauss3_expect(err, cov, None if poly_teacher else rte)
                risks.append(e + cg**2 * float(aa @ aa) + noise_var)
            row["test_loss"], row["test_loss_F0"] = risks
            row["lambda_test"] = risks[1] - risks[0]
        rows.append(row)
        _progress(progress, k + 1, reps)
    return SimulationResult(
        protocol=f"spike-model-{mode}",
        params=dict(student=s.act.name, teacher=t.act.name, n=n, d=d, N=N, phi=d / n, psi=d / N, lam=lam, ell=ell,
                    bulk=bulk, noise_var=noise_var, c1=c1, c_gt1=cg, eta=eta),
        stats=_collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="Cholesky; exact Gaussian test risk",
                              references=["spike-theory.md §9.3", "spike-theory.md §5.3"]))


# --------------------------------------------------------------------------- sRF protocols
def _ridge_sum(Phi, y, lam, p, n_lam=1):
    """Readout (4) of srf-theory.md: min sum (y - a^T phi/sqrt p)^2 + lam ||a||^2."""
    return Ridge(Phi / math.sqrt(p), y, n_mu=n_lam)


def sim_giant_step(student, teacher, d, *, alpha0, eta, alpha, beta, lam=0.1, noise_var=0.0, n_test=20000,
                   seed=0, reps=1, batch=4000, progress=None, force=False) -> SimulationResult:
    r"""Full network protocol of srf-theory.md §10.2 (one giant step, ridge on fresh data).

    :math:`W^0` with unit rows, :math:`a^0=\mathbf 1/\sqrt p`, step on :math:`n_0=\alpha_0d`
    samples with :math:`\eta=\tilde\eta p` (row update of §1, the initial output kept), ridge
    (4) with sum loss on :math:`n=\alpha d` fresh samples, test error (5) on ``n_test`` fresh
    points.  Diagnostics: with :math:`\bar\Delta` the mean row of :math:`W^1-W^0`,
    :math:`\hat r=\|\bar\Delta\|`, :math:`\hat\gamma=\theta^\top\bar\Delta/\hat r`,
    :math:`\hat c=\frac1p\sum_i\|w_i^1-\bar\Delta\|^2`.  ``lam`` may be a list (one
    decomposition serves the path).
    """
    d, n, p, n0 = sizes_srf(d, alpha=alpha, beta=beta, alpha0=alpha0, force=force)
    lams = _lams(lam)
    _check_reps(reps)
    eta = _nonneg(eta, "eta")
    noise_var = _nonneg(noise_var, "noise_var")
    s = _Fn(student, "student")
    t = _teacher(teacher)
    t0 = time.perf_counter()
    rows = []
    for k, (rw, rtr, rte) in enumerate(spawn(seed, reps)):
        W0 = _sphere_rows(rw, p, d)
        theta = _unit(rw, d)
        X0 = rtr.standard_normal((n0, d))
        y0 = t.f(X0 @ theta) + math.sqrt(noise_var) * rtr.standard_normal(n0)
        Z = X0 @ W0.T
        e = y0 - s.f(Z).sum(axis=1) / p          # f = (1/sqrt p) a^T sigma, a = 1/sqrt p
        M = s.df(Z)
        del Z
        M *= e[:, None]
        W1 = W0 + (eta / n0) * (M.T @ X0)
        del M, X0
        dbar = (W1 - W0).mean(axis=0)
        r_hat = float(np.linalg.norm(dbar))
        row = {"r": r_hat, "gamma": float(theta @ dbar) / r_hat if r_hat > 0 else 0.0,
               "c": float(np.sum((W1 - dbar) ** 2)) / p}
        X = rtr.standard_normal((n, d))
        y = t.f(X @ theta) + math.sqrt(noise_var) * rtr.standard_normal(n)
        Phi = s.f(X @ W1.T)
        del X
        rg = _ridge_sum(Phi, y, None, p, lams.size)
        del Phi
        feats = _Features(d, lambda Xt: s.f(Xt @ W1.T) / math.sqrt(p))
        if lams.size == 1:
            row["test_error"] = _predict(feats, rg.coef(lams[0]), n_test, batch, rte, lambda Xt: t.f(Xt @ theta))
        else:
            coefs = np.stack([rg.coef(lv) for lv in lams], axis=1)
            errs = _predict_many(feats, coefs, n_test, batch, rte, lambda Xt: t.f(Xt @ theta))
            for lv, ev in zip(lams, errs):
                row[f"test_error@{lv:g}"] = ev
        rows.append(row)
        _progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="giant-step",
        params=dict(student=s.act.name, teacher=t.act.name, d=d, n=n, p=p, n0=n0, alpha=n / d, beta=p / d,
                    alpha0=n0 / d, eta=eta, lam=lams.tolist(), noise_var=noise_var, n_test=n_test),
        stats=_collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="exact one-step gradient; ridge by Cholesky/eigh",
                              references=["srf-theory.md §10.2", "srf-theory.md §1"]))


def _predict_many(feats, coefs, n_test, batch, rng_test, target_fn):
    sq = np.zeros(coefs.shape[1])
    done = 0
    while done < n_test:
        m = min(batch, n_test - done)
        Xt = rng_test.standard_normal((m, feats.d))
        err = target_fn(Xt)[:, None] - feats(Xt) @ coefs
        sq += np.sum(err * err, axis=0)
        done += m
    return sq / n_test


def _srf_weights(rw, d, p, r, c, gamma):
    """srf-theory.md §10.1 step 1: W = sqrt(c) W0 + r 1 v^T, theta = gamma v + rho theta_perp."""
    W0 = _sphere_rows(rw, p, d)
    v = _unit(rw, d)
    tp = rw.standard_normal(d)
    tp -= (tp @ v) * v
    tp /= np.linalg.norm(tp)
    rho = math.sqrt(max(0.0, 1 - gamma**2))
    theta = gamma * v + rho * tp
    Wt = math.sqrt(c) * W0
    return Wt, v, tp, theta


def sim_srf(student, teacher, d, *, r, c, gamma, alpha, beta, lam=0.1, noise_var=0.0, n_test=20000,
            features="network", mu_fns=None, seed=0, reps=1, batch=4000, progress=None, force=False) -> SimulationResult:
    r"""Direct spiked-random-features ridge simulation (srf-theory.md §10.1).

    Features :math:`\sigma(XW^\top)` with :math:`W=\sqrt cW_0+r\mathbf 1v^\top`, labels
    :math:`\sigma_\star(X\theta)+\sqrt\Delta\varepsilon`, ridge (4), test error (5), and the measured
    order parameters of (17): :math:`m=\mathbf 1^\top\hat a/\sqrt p`,
    :math:`\vartheta=\hat a^\top\tilde Wv/\sqrt p`, :math:`\psi=\hat a^\top\tilde W\theta_\perp/\sqrt p`,
    :math:`q_1=\hat a^\top\Omega\hat a/p` (:math:`\Omega=\tilde W\Pi\tilde W^\top`), :math:`q_2=\|\hat a\|^2/p`.

    ``features="cgep"`` replaces every row by :math:`\mu_0(\kappa)\mathbf 1+\mu_1(\kappa)\tilde Wx+\mu_\star(\kappa)\xi`
    (Result 3.2), with ``mu_fns = (mu0, mu1, mustar)`` vectorised float64 callables of κ.
    """
    d, n, p, _ = sizes_srf(d, alpha=alpha, beta=beta, force=force)
    lam = float(_lams(lam)[0])
    _check_reps(reps)
    r, c, gamma = float(r), float(c), float(gamma)
    if not (math.isfinite(r) and r >= 0):
        raise InvalidParameterError("r", r, "a real number >= 0")
    if not (math.isfinite(c) and c > 0):
        raise InvalidParameterError("c", c, "a real number > 0")
    if not -1 <= gamma <= 1:
        raise InvalidParameterError("gamma", gamma, "a real number in [-1, 1]")
    if features not in ("network", "cgep"):
        raise InvalidParameterError("features", features, "'network' or 'cgep'")
    if features == "cgep" and mu_fns is None:
        raise InvalidParameterError("mu_fns", None, "(mu0, mu1, mustar) callables for features='cgep'")
    noise_var = _nonneg(noise_var, "noise_var")
    s = _Fn(student, "student")
    t = _teacher(teacher)
    t0 = time.perf_counter()
    rows = []
    for k, (rw, rtr, rte) in enumerate(spawn(seed, reps)):
        Wt, v, tp, theta = _srf_weights(rw, d, p, r, c, gamma)
        W = Wt + r * v[None, :]

        def feat(X, rng=None, W=W, Wt=Wt, v=v):
            if features == "network":
                return s.f(X @ W.T)
            kap = X @ v
            m0, m1, ms = (f(kap) for f in mu_fns)
            return m0[:, None] + m1[:, None] * (X @ Wt.T) + ms[:, None] * rng.standard_normal((X.shape[0], p))

        X = rtr.standard_normal((n, d))
        y = t.f(X @ theta) + math.sqrt(noise_var) * rtr.standard_normal(n)
        Phi = feat(X, rtr)
        del X
        rg = _ridge_sum(Phi, y, None, p)
        del Phi
        ahat = rg.coef(lam)
        feats = _Features(d, lambda Xt, feat=feat: feat(Xt, rte) / math.sqrt(p))
        row = {"test_error": _predict(feats, ahat, n_test, batch, rte, lambda Xt: t.f(Xt @ theta))}
        sp_ = math.sqrt(p)
        Wv = Wt @ v
        Wtp = Wt @ tp
        WPa = Wt.T @ ahat - (Wv @ ahat) * v         # Pi W~^T a
        row.update(m=float(ahat.sum()) / sp_, theta=float(ahat @ Wv) / sp_, psi=float(ahat @ Wtp) / sp_,
                   q1=float(WPa @ WPa) / p, q2=float(ahat @ ahat) / p)
        rows.append(row)
        _progress(progress, k + 1, reps)
    return SimulationResult(
        protocol=f"srf-{features}",
        params=dict(student=s.act.name, teacher=t.act.name, d=d, n=n, p=p, alpha=n / d, beta=p / d, r=r, c=c,
                    gamma=gamma, lam=lam, noise_var=noise_var, n_test=n_test),
        stats=_collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra={},
        provenance=provenance(method="Cholesky ridge (4)", references=["srf-theory.md §10.1", "srf-theory.md §4.1"]))


def sim_spectrum(student, d, *, r, c, gamma=1.0, alpha, beta, lam=(0.1, 0.5, 1.0, 3.0), seed=0, reps=1,
                 progress=None, force=False) -> SimulationResult:
    r"""Spectrum of :math:`A=\Phi^\top\Phi/p` for sRF features (srf-theory.md §10.3, §7).

    Returns the top eigenvalue (the mean spike, predicted at :math:`n\,\mathbb E_\kappa\mu_0^2`),
    the empirical Stieltjes transform :math:`\frac1p\sum_k(\lambda_k+\lambda)^{-1}` at each λ
    (theory :math:`V_2(\lambda)`), and the eigenvalues of the first repetition in ``extra``.
    """
    d, n, p, _ = sizes_srf(d, alpha=alpha, beta=beta, force=force)
    lams = _lams(lam)
    _check_reps(reps)
    s = _Fn(student, "student")
    t0 = time.perf_counter()
    rows = []
    extra = {}
    for k, (rw, rtr, _) in enumerate(spawn(seed, reps)):
        Wt, v, _, _ = _srf_weights(rw, d, p, float(r), float(c), float(gamma))
        W = Wt + float(r) * v[None, :]
        X = rtr.standard_normal((n, d))
        Phi = s.f(X @ W.T)
        del X
        ev = np.linalg.eigvalsh(Phi.T @ Phi / p) if p <= n else np.concatenate(
            [np.linalg.eigvalsh(Phi @ Phi.T / p), np.zeros(p - n)])
        ev = np.sort(np.clip(ev, 0, None))
        row = {"top_eigenvalue": float(ev[-1]), "second_eigenvalue": float(ev[-2])}
        for lv in lams:
            row[f"stieltjes@{lv:g}"] = float(np.mean(1.0 / (ev + lv)))
        rows.append(row)
        if k == 0:
            extra["eigenvalues"] = ev.tolist()
        _progress(progress, k + 1, reps)
    return SimulationResult(
        protocol="spectrum", params=dict(student=s.act.name, d=d, n=n, p=p, alpha=n / d, beta=p / d, r=float(r),
                                         c=float(c), gamma=float(gamma), lam=lams.tolist()),
        stats=_collect(rows), seed=seed if not isinstance(seed, np.random.Generator) else "generator",
        reps=reps, seconds=time.perf_counter() - t0, extra=extra,
        provenance=provenance(method="dense eigendecomposition", references=["srf-theory.md §10.3", "§7"]))
