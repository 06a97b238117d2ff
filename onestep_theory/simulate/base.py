r"""Shared infrastructure of the finite-size simulations: statistics, seeds, sizes and memory, random
objects, float64 activations, ridge solves and test errors.

The protocols live in :mod:`onestep_theory.simulate.spikes` (docs/theory/spike-theory.md §9) and
:mod:`onestep_theory.simulate.srf` (docs/theory/srf-theory.md §10).

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
import math

import numpy as np
import scipy.linalg as sla

from ..core.errors import InvalidParameterError
from ..core.exact import float_in
from ..hermite.activation import Activation
from ..core.results import Result
from ..srf.loss.losscheck import check_teacher
from ..srf.loss.losses import loss as loss_of
from .memory import MEMORY_SHARE, available_memory, check_memory, elementwise_copies, spike_peak, srf_peak

__all__ = ["Stat", "SimulationResult", "Ridge", "fit_convex", "readout_loss", "spawn", "sizes_spike", "sizes_srf", "available_memory", "check_memory",
           "collect", "check_reps", "positive", "nonnegative", "lam_grid", "sphere_rows", "unit_vector", "Fn",
           "test_mse", "report_progress", "MEMORY_SHARE"]


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

    def rows(self) -> list:
        """One dict per simulated quantity: ``quantity``, ``mean``, ``se``, ``reps``."""
        return [{"quantity": k, "mean": st.mean, "se": st.se, "reps": len(st.values)} for k, st in self.stats.items()]

    def to_frame(self):
        """:meth:`rows` as a pandas DataFrame (pandas is optional)."""
        try:
            import pandas as pd
        except ImportError:
            raise InvalidParameterError("to_frame", "pandas", "pandas installed (pip install pandas)") from None
        return pd.DataFrame(self.rows())

    def _repr_html_(self) -> str:
        from html import escape

        body = "".join(f"<tr><td>{escape(str(r['quantity']))}</td><td>{r['mean']:.6g} ± {r['se']:.2g}</td></tr>"
                       for r in self.rows())
        return (f"<p><b>simulation {escape(self.protocol)}</b> ({self.reps} repetition(s), {self.seconds:.1f} s)</p>"
                f"<table><tr><th>quantity</th><th>mean ± standard error</th></tr>{body}</table>")


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


def collect(rows: list) -> dict:
    keys = rows[0].keys()
    return {k: Stat([r[k] for r in rows]) for k in keys}


def check_reps(reps):
    if not isinstance(reps, (int, np.integer)) or isinstance(reps, bool) or reps < 1:
        raise InvalidParameterError("reps", reps, "an integer >= 1")


#: Largest size (d, n, p, N, n0) of any simulation: bounded work before the memory estimate is even formed.
MAX_SIZE = 10**9


def positive(value, name, integer=False):
    v = float_in(value, name)
    if integer:
        if v > MAX_SIZE:
            raise InvalidParameterError(name, value, f"an integer in [1, {MAX_SIZE:.0e}]")
        if v != int(v):
            raise InvalidParameterError(name, value, "an integer >= 1")
        return int(v)
    return v


def scaled_size(ratio, d, name, size_name) -> int:
    """``round(ratio * d)`` after checking the ratio and that the size stays in ``[1, MAX_SIZE]`` (a size that
    rounds to 0 is refused, never raised to 1 behind the user's back)."""
    r = positive(ratio, name)
    v = r * d
    if not v <= MAX_SIZE:                    # also catches inf from 1e308 * d
        raise InvalidParameterError(name, ratio, f"a ratio with {size_name} = {name} * d at most {MAX_SIZE:.0e} "
                                                 f"(d = {d})")
    if round(v) < 1:
        raise InvalidParameterError(name, ratio, f"a ratio with {size_name} = round({name} * d) >= 1 at d = {d}, "
                                                 f"i.e. {name} >= {0.5 / d:.6g}")
    return round(v)


def nonnegative(value, name):
    return float_in(value, name, strict=False)


def lam_grid(lam) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(lam, dtype=float))
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise InvalidParameterError("lam", lam, "real number(s) > 0")
    return arr


def sizes_spike(n=None, d=None, N=None, phi=None, psi=None, force=False, gram: str = "min", concurrent=1,
                memory=None) -> tuple:
    """Resolve (n, d, N) of the spike theory from sizes and/or ratios φ = d/n, ψ = d/N, and check the memory:
    ``memory(n, d, N)`` (bytes; ``simulate.memory``), by default the largest peak of the protocols that factor
    ``min(n, N)``² Gram matrices (``gram="min"``) or the n×n kernel (``gram="n"``)."""
    if d is None:
        if n is None or phi is None:
            raise InvalidParameterError("d", d, "an integer >= 1 (or give n and phi)")
        d = scaled_size(phi, positive(n, "n", True), "phi", "d")
    d = positive(d, "d", True)
    if n is None:
        if phi is None:
            raise InvalidParameterError("n", n, "an integer >= 1 (or give phi)")
        n = scaled_size(1 / positive(phi, "phi"), d, "phi", "n")
    n = positive(n, "n", True)
    if N is None:
        if psi is None:
            raise InvalidParameterError("N", N, "an integer >= 1 (or give psi)")
        N = scaled_size(1 / positive(psi, "psi"), d, "psi", "N")
    N = positive(N, "N", True)
    if phi is not None and abs(d / n - float(phi)) > 0.01 * float(phi):
        raise InvalidParameterError("phi", phi, f"consistent with d/n = {d}/{n}", "mismatched sizes")
    if psi is not None and abs(d / N - float(psi)) > 0.01 * float(psi):
        raise InvalidParameterError("psi", psi, f"consistent with d/N = {d}/{N}", "mismatched sizes")
    if memory is None:
        memory = (lambda n, d, N: spike_peak("resolvent", n, d, N, gaussian_bulk=True)) if gram == "min" else \
            (lambda n, d, N: max(spike_peak("spikes", n, d, N), spike_peak("spike-model", n, d, N, poly_teacher=False)))
    check_memory(memory(n, d, N), force, f"n={n}, d={d}, N={N}", concurrent)
    return n, d, N


def sizes_srf(d, alpha=None, beta=None, alpha0=None, n=None, p=None, n0=None, force=False, concurrent=1,
              memory=None) -> tuple:
    """Resolve (d, n, p, n0) of the sRF theory from d and α = n/d, β = p/d, α0 = n0/d, and check the memory of
    ``concurrent`` such simulations: ``memory(d, n, p, n0)`` (bytes; ``simulate.memory``), by default the largest
    peak of the giant-step (with a study's paired F1 reference), srf and spectrum protocols with the square loss."""
    d = positive(d, "d", True)
    if n is None:
        n = scaled_size(alpha, d, "alpha", "n") if alpha is not None else None
    if p is None:
        p = scaled_size(beta, d, "beta", "p") if beta is not None else None
    if n0 is None and alpha0 is not None:
        n0 = scaled_size(alpha0, d, "alpha0", "n0")
    for v, name in ((n, "n"), (p, "p")):
        if v is None:
            raise InvalidParameterError(name, v, "an integer >= 1 (or give the ratio)")
        positive(v, name, True)
    if memory is None:
        memory = (lambda d, n, p, n0: max(srf_peak(k, d, n, p, n0, hook=True) for k in ("srf", "spectrum")
                                          + (("giant-step",) if n0 else ())))
    check_memory(memory(d, n, p, n0), force, f"d={d}, n={n}, p={p}" + (f", n0={n0}" if n0 else ""), concurrent)
    return d, int(n), int(p), (int(n0) if n0 is not None else None)


# --------------------------------------------------------------------------- random objects
def sphere_rows(rng, rows, d) -> np.ndarray:
    w = rng.standard_normal((rows, d))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    return w


def unit_vector(rng, d) -> np.ndarray:
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v)


class Fn:
    """float64 callables of an activation: value, derivative, and Hermite constants."""

    def __init__(self, spec, param, center=False):
        self.act = Activation.from_any(spec, param, center=center)
        self.f = self.act.numpy()
        self._df = None

    @property
    def kf(self) -> float:
        """Arrays of its argument's size that ``f`` allocates at its peak (``simulate.memory.elementwise_copies``)."""
        return elementwise_copies(self.f)

    @property
    def kd(self) -> float:
        """The same for the derivative ``df``."""
        return elementwise_copies(self.df)

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


def test_mse(features, d, coefs, n_test, batch, rng_test, target_fn, classify=False):
    """Mean squared test error of the readout(s) ``coefs`` (a vector, or one column per λ) over ``n_test``
    fresh N(0, I_d) points, in batches of ``batch`` rows (features built per batch): a float, or an array.
    With ``classify`` also the classification error P[sign f != sign y] (same points): a pair."""
    coefs = np.asarray(coefs)
    many = coefs.ndim == 2
    sq = np.zeros(coefs.shape[1]) if many else 0.0
    wrong = np.zeros(coefs.shape[1]) if many else 0.0
    done = 0
    while done < n_test:
        m = min(batch, n_test - done)
        Xt = rng_test.standard_normal((m, d))
        y = target_fn(Xt)
        f = features(Xt) @ coefs
        err = (y[:, None] if many else y) - f
        sq = sq + np.sum(err * err, axis=0)
        if classify:
            wrong = wrong + np.sum(np.sign(f) != np.sign(y[:, None] if many else y), axis=0)
        done += m
    mse = sq / n_test if many else float(sq) / n_test
    if classify:
        return mse, (wrong / n_test if many else float(wrong) / n_test)
    return mse


def readout_loss(spec, lam, teacher=None):
    """The readout loss of a protocol: None for the square loss (ridge, any number of λ), else a Loss (one λ);
    with ``teacher``, a classification loss whose teacher's labels are not ±1 is refused at once, naming the teacher
    (``srf.loss.check_teacher``)."""
    if spec is None:
        return None
    ls = loss_of(spec)
    if ls.name == "square":
        return None
    if lam_grid(lam).size != 1:
        raise InvalidParameterError("lam", lam, f"one ridge lambda > 0 with the {ls.name} loss")
    if teacher is not None:
        check_teacher(ls, Activation.from_any(teacher, "teacher"))
    return ls


def fit_convex(F, y, lam, loss):
    r"""Readout :math:`\arg\min_a\sum_\mu\ell(y_\mu,(Fa)_\mu)+\frac\lambda2\|a\|^2` (docs/theory/srf-theory.md §4.9).

    Square loss: the ridge (4) (the same minimiser).  Logistic: L-BFGS (``scipy.optimize.minimize``) on the
    primal with its exact gradient.  Hinge: the dual :math:`\max_{0\le\alpha\le1}\sum\alpha_\mu-\frac1{2\lambda}
    \|F^\top(\alpha\circ y)\|^2` by L-BFGS-B, :math:`a=F^\top(\alpha\circ y)/\lambda` (labels ±1).  Returns
    ``(a, info)`` with the iterations and the optimality measure (gradient norm, or duality gap);
    :class:`~onestep_theory.core.errors.ConvergenceError` if the solver does not converge."""
    from scipy.optimize import minimize

    from ..core.errors import ConvergenceError

    name = loss.name
    if name == "square":
        return Ridge(F, y).coef(lam), {"method": "ridge", "iterations": 0, "optimality": 0.0}
    n, p = F.shape
    if name == "hinge":
        if not np.all(np.abs(np.abs(y) - 1) < 1e-12):
            raise InvalidParameterError("teacher", "labels", "labels +-1 for the hinge loss (e.g. teacher sign)")

        def dual(al):
            v = F.T @ (al * y)
            return 0.5 * (v @ v) / lam - al.sum(), y * (F @ v) / lam - 1
        r = minimize(dual, np.full(n, 0.5), jac=True, method="L-BFGS-B", bounds=[(0, 1)] * n,
                     options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10})
        a = F.T @ (r.x * y) / lam
        primal = float(np.sum(np.maximum(0, 1 - y * (F @ a))) + 0.5 * lam * (a @ a))
        gap = primal + float(r.fun)
        if not gap <= 1e-6 * max(1.0, abs(primal)):
            raise ConvergenceError(f"hinge readout: duality gap {gap:.1e} after {r.nit} iterations", r.nit, gap)
        return a, {"method": "dual L-BFGS-B", "iterations": int(r.nit), "optimality": gap}

    def obj(a):
        f = F @ a
        return float(np.sum(loss.value(y, f))) + 0.5 * lam * (a @ a), F.T @ loss.d1(y, f) + lam * a
    r = minimize(obj, np.zeros(p), jac=True, method="L-BFGS-B",
                 options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-9, "maxcor": 30})
    g = float(np.max(np.abs(obj(r.x)[1])))
    if not g <= 1e-6 * max(1.0, lam * float(np.max(np.abs(r.x)))):
        raise ConvergenceError(f"{name} readout: gradient {g:.1e} after {r.nit} L-BFGS iterations", r.nit, g)
    return r.x, {"method": "L-BFGS", "iterations": int(r.nit), "optimality": g}


def report_progress(progress, i, total):
    """Call ``progress(i, total)`` after repetition i (a callable, or None/False for silence)."""
    if callable(progress):
        progress(i, total)
    elif progress not in (None, False):
        raise InvalidParameterError("progress", progress, "a callable(i, total), None or False")
