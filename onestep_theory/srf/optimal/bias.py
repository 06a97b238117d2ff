r"""A trainable common first-layer bias (docs/theory/srf-theory.md §4.9, Optional bias (130)–(132)), square loss.

With a bias b every neuron computes :math:`\sigma(w_i^\top x+b)`, so the coefficients (15) become those of
:math:`\sigma(\cdot+b)` (:meth:`~onestep_theory.hermite.activation.Activation.shifted`).  Trained together with the
readout, b minimises the training objective; asymptotically, per sample (derived: the training outputs are
:math:`\mathrm{prox}_{V\ell}(\omega)` and :math:`\|\hat a\|^2=pq_2`),
:math:`\frac1n\min_a[\sum_\mu(y_\mu-f(x_\mu))^2+\lambda\|a\|^2]\to2\,\mathbb E_\kappa\langle\ell(y,\mathrm{prox})\rangle
+\lambda\frac\beta\alpha q_2` with :math:`\ell=\frac12(y-\hat y)^2`, evaluated by the general channel at each b.
:func:`trained_bias` minimises it over b and returns the test error (25) at the minimiser.  Validated against
the simulator's joint (a, b) fit (``sim_srf(bias="train")``).
"""

from __future__ import annotations

import dataclasses

from ...core.errors import InvalidParameterError
from ...core.exact import binary_exact, check_real, float_in
from ...core.results import VouchedResult, digits_of, provenance
from ...core.search import certified_argmin, differences
from ...hermite.activation import Activation
from ..loss.losses import LOSSES
from ..single.solve import srf_solve

__all__ = ["training_objective", "trained_bias", "TrainedBias"]


@dataclasses.dataclass
class TrainedBias(VouchedResult):
    """The trained common bias b* (``bias``, certified: the true minimiser lies within ``errors['bias']``), the
    training objective there, the test error (25) at b* and at b = 0, float64 (docs/theory/srf-theory.md §4.9);
    ``at_boundary``: b* is an end of [-bias_max, bias_max]."""

    bias: float
    objective: float
    test_error: float
    test_error_at_zero: float
    at_boundary: bool
    errors: dict
    digits: dict
    provenance: dict


def training_objective(student, teacher, b, *, alpha, beta, lam, r, c, gamma):
    """``(objective, its error, the SRFSolution)`` at bias b: :math:`2\\,\\mathbb E\\langle\\ell\\rangle+\\lambda\\beta q_2/\\alpha`."""
    s = Activation.from_any(student, "student").shifted(binary_exact(b))
    al, be, la = (float_in(v, n) for v, n in ((alpha, "alpha"), (beta, "beta"), (lam, "lam")))
    sol = srf_solve(s, teacher, alpha=alpha, beta=beta, lam=lam, r=r, c=c, gamma=gamma, loss=LOSSES["square"])
    obj = 2 * sol.extra["train_loss"] + la * be / al * float(sol.order["q2"])
    err = 2 * sol.errors["train_loss"] + la * be / al * sol.errors["q2"]
    return obj, err, sol


def trained_bias(student, teacher, *, alpha, beta, lam, r, c, gamma, bias_max=3) -> TrainedBias:
    r"""The bias b* minimising the asymptotic training objective over :math:`[-b_{\max},b_{\max}]` and the test error
    there (docs/theory/srf-theory.md §4.9), square loss, noiseless labels, given (r, c, γ).

    Search: :func:`~onestep_theory.core.search.certified_argmin` (13-point grid, certified bracket of the
    objective's b-derivative by central differences of its refined values, brentq; docs/theory/numerics.md §9): the
    true b* lies within ``bias_error``.  The test error's error is its own plus :math:`|d\varepsilon_g/db|` times that.
    """
    bm = float(check_real(bias_max, "bias_max", 0, 20))
    if not bm > 0:
        raise InvalidParameterError("bias_max", bias_max, "a real number in (0, 20]")
    kw = dict(alpha=alpha, beta=beta, lam=lam, r=r, c=c, gamma=gamma)

    def obj(t, mp=False):                   # float64 only (the search is called without mp)
        v, e, _ = training_objective(student, teacher, float(t), **kw)
        return v, e

    m = certified_argmin(lambda t: obj(t)[0], differences(obj), obj, -bm, bm, points=13,
                         method="general square channel at each b; certified argmin of the training objective")
    b, db = float(m.x), float(m.errors["x"])
    obj_v, oerr, sol = training_objective(student, teacher, b, **kw)
    h = max(db, 1e-4)
    (_, _, sp_), (_, _, sm) = (training_objective(student, teacher, b + d, **kw) for d in (h, -h))
    slope = abs(float(sp_.test_error) - float(sm.test_error)) / (2 * h)
    s_b = Activation.from_any(student, "student").shifted(binary_exact(b))
    test = srf_solve(s_b, teacher, **kw)
    zero = srf_solve(student, teacher, **kw)
    vals = dict(bias=b, objective=obj_v, test_error=float(test.test_error), test_error_at_zero=float(zero.test_error))
    errs = dict(bias=db, objective=oerr + float(m.errors["value"]), test_error=test.abs_error + slope * db,
                test_error_at_zero=zero.abs_error)
    return TrainedBias(**vals, at_boundary=bool(m.at_end), errors=errs,
                       digits={k: digits_of(v, errs[k]) for k, v in vals.items()},
                       provenance=provenance(method=m.provenance["method"],
                                             references=["[CPDKLZL24] (130)-(132)", "docs/theory/srf-theory.md §4.9"]))
