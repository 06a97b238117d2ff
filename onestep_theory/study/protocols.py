r"""The simulation protocols a finite-size study can run, and the theory each is compared with
(docs/theory/numerics.md §8).

==================  =====================================================  ==============================================
protocol            one task = one repetition of                           theory (d → ∞) and per-task paired references
==================  =====================================================  ==============================================
``giant-step``      :func:`~onestep_theory.simulate.sim_giant_step`        ``srf_solve`` at Result 3.1's (r, c, γ);
                                                                           ``f1``: the F1 theory on the repetition's own
                                                                           trained first layer; ``measured``: the sRF
                                                                           theory at the repetition's measured (r, c, γ).
                                                                           ``readout`` (K groups): ``srf_groups``, no
                                                                           paired reference; ``loss``: ``srf_solve(loss=…)``,
                                                                           keys ``test_error``, ``class_error``; ``measured``
                                                                           (docs/theory/srf-theory.md §8, §4.9).
                                                                           ``corrected``: also ``measured_rn``,
                                                                           ``measured_trained``, ``measured_both``
                                                                           (:func:`corrected_references`,
                                                                           docs/studies/paired-map.md)
``srf``             :func:`~onestep_theory.simulate.sim_srf`               ``srf_solve`` at the given (r, c, γ)
``spike-model``     :func:`~onestep_theory.simulate.sim_spike_model`       ``gains``: Δ_ℓ (``delta``), Λ_ℓ (``lambda_test``)
``traces``          :func:`~onestep_theory.simulate.sim_resolvent`         ``resolvent``: m1, m2 and their λ-derivatives
``ablation``        :func:`~onestep_theory.simulate.sim_ablation`          ``srf_solve`` at Result 3.1's (r, c, γ); one
                                                                           paired reference per variant of the trained
                                                                           first layer (network − variant: the shift
                                                                           that one change makes, docs/studies/mechanism.md)
==================  =====================================================  ==============================================

A paired reference is computed inside the task from the task's own weights, so the gap
(network − reference) has the weights' fluctuation removed: the variance of the paired gap is what is left
of the data's.  Every theory value comes with an error estimate (the solver's, or the change from 15 to 25
digits for the spike theory), reported next to the gaps.
"""

from __future__ import annotations

import dataclasses
import math
from functools import partial

import numpy as np

from ..core.errors import ConvergenceError, InvalidParameterError
from ..simulate.ablation import VARIANTS

__all__ = ["PROTOCOLS", "Protocol", "protocol_of", "cge_functions", "corrected_references", "CORRECTED"]


@dataclasses.dataclass(frozen=True)
class Protocol:
    """A study protocol: its simulator, parameters, keys and theory (docs/theory/numerics.md §8)."""

    name: str
    required: tuple
    optional: tuple
    keys: tuple
    paired: tuple = ()
    #: A task's paired reference ``name`` is its result ``prefix + name``.
    paired_prefix: str = "theory_"
    #: Options that change only the theory it is compared with, not the tasks (their seeds and store keys).
    theory_only: tuple = ()

    def simulation_params(self, params: dict) -> dict:
        """The parameters that define a task (its seed and its store key): all but :attr:`theory_only` (e.g.
        ``row_norms``: compare with the corrected theory of docs/theory/srf-theory.md §4.11; stored tasks are reused)."""
        return {k: v for k, v in params.items() if k not in self.theory_only}

    def paired_for(self, params: dict) -> tuple:
        """The paired references a study of ``params`` has (an ablation: the variants it builds; a giant step with
        a grouped readout: none, with a general loss: ``measured`` only — F1 is derived for the square loss and
        one group, docs/theory/srf-theory.md §4.6)."""
        if self.name == "ablation" and params.get("variants") is not None:
            from ..simulate.ablation import variant_names

            return variant_names(params["variants"])[1:]
        if self.name == "giant-step" and _grouped(params):
            return ()
        if self.name == "giant-step" and _general_loss(params):
            return ("measured",)
        if self.name == "giant-step" and params.get("corrected"):
            return self.paired + CORRECTED
        return self.paired

    def keys_for(self, params: dict) -> tuple:
        """The quantities a study of ``params`` can extrapolate: a giant step with a general loss adds
        ``class_error`` (P[sign f ≠ sign y], docs/theory/srf-theory.md §4.9)."""
        if self.name == "giant-step" and _general_loss(params):
            return self.keys + ("class_error",)
        return self.keys

    def paired_key(self, name: str, key: str | None = None) -> str:
        """The task result that holds the paired reference ``name`` of the quantity ``key`` (default the first)."""
        return self.paired_prefix + name + ("" if key in (None, self.keys[0]) else "@" + key)

    def check(self, params: dict) -> dict:
        """``params`` with every required name present and no unknown name (one clear error otherwise); a
        ``readout`` and a ``loss`` in canonical form (the uniform readout and the square loss dropped: a study
        that names them is the same study, with the same tasks)."""
        missing = [k for k in self.required if params.get(k) is None]
        unknown = [k for k in params if k not in self.required + self.optional]
        if missing or unknown:
            raise InvalidParameterError("params", sorted(missing + unknown),
                                        f"{self.name} needs {', '.join(self.required)}; optional "
                                        f"{', '.join(self.optional) or 'none'}")
        out = {k: v for k, v in params.items() if v is not None}
        if "readout" in out:
            from ..srf.grouped.readout import readout

            rd = readout(out["readout"])
            if rd.kind == "gaussian":
                raise InvalidParameterError("readout", out["readout"], "uniform or a finite support "
                                            "'value:fraction,...' (the Gaussian readout has no d -> inf theory here)")
            out["readout"] = None if rd.is_uniform else rd.label
        if "loss" in out:
            from ..srf.loss.losses import loss

            if not isinstance(out["loss"], str):
                raise InvalidParameterError("loss", out["loss"], "a loss name (square, logistic, hinge) or an "
                                            "expression in y, yhat, as a string (a study's tasks are keyed on it)")
            out["loss"] = None if loss(out["loss"]).name == "square" else loss(out["loss"]).name
        if out.get("readout") and out.get("loss"):
            raise InvalidParameterError("loss", out["loss"], "the square loss with a grouped readout (the K-group "
                                        "theory is derived for ridge only, docs/theory/srf-theory.md §8)")
        if out.get("readout") and (out.get("features") == "cgep" or out.get("norm_slope") or out.get("norm_noise")):
            raise InvalidParameterError("readout", out["readout"], "the sRF network features without a row-norm "
                                        "heterogeneity (the K-group theory of docs/theory/srf-theory.md §8)")
        if out.get("corrected") is not None and not isinstance(out["corrected"], bool):
            raise InvalidParameterError("corrected", out["corrected"], "True or False")
        if out.get("corrected") and (out.get("readout") or out.get("loss") or out.get("noise_var")):
            raise InvalidParameterError("corrected", True, "the square loss, the uniform readout and noiseless labels "
                                        "(the trained bulk, docs/theory/trained-bulk.md §6, and the row norms, "
                                        "docs/theory/srf-theory.md §4.11)")
        out["corrected"] = out.get("corrected") or None     # False is the default study, with the same tasks
        if (out.get("readout") or out.get("loss")) and out.get("row_norms"):
            raise InvalidParameterError("row_norms", True, "the uniform readout and the square loss "
                                        "(docs/theory/srf-theory.md §4.11)")
        return {k: v for k, v in out.items() if v is not None}

    def simulate(self, params: dict, d: int, seed) -> dict:
        """One repetition at size d with ``seed``; the scalar results (means of one repetition)."""
        from .. import simulate as S

        p = dict(params)
        if self.name == "giant-step":
            corrected = p.pop("corrected", None)
            hook = None if _grouped(p) else partial(_paired_references, p["student"], p["teacher"], p["alpha"],
                                                    p["beta"], p["lam"], p.get("noise_var", 0.0), p.get("loss"),
                                                    alpha0=repr(p["alpha0"]) if corrected else None)
            res = S.sim_giant_step(d=d, seed=seed, reps=1, progress=None, weights_hook=hook, **p)
        elif self.name == "srf":
            if p.get("features") == "cgep":
                p["mu_fns"] = cge_functions(p["student"], p["r"], p["c"])
            res = S.sim_srf(d=d, seed=seed, reps=1, progress=None, **p)
        elif self.name == "ablation":
            res = S.sim_ablation(d=d, seed=seed, reps=1, progress=None, **p)
        elif self.name == "spike-model":
            res = S.sim_spike_model(d=d, seed=seed, reps=1, progress=None, **p)
        else:
            res = S.sim_resolvent(d=d, seed=seed, reps=1, progress=None, **p)
        return {name: float(st.mean) for name, st in res.stats.items()}

    def theory(self, params: dict, key: str) -> tuple:
        """``(value, error estimate)`` of ``key`` in the d → ∞ theory at ``params`` (float64)."""
        if key not in self.keys_for(params):
            raise InvalidParameterError("key", key, " or ".join(self.keys_for(params)))
        p = params
        if self.name in ("giant-step", "srf", "ablation"):
            from ..srf import srf_solve

            extra = ({"alpha0": repr(p["alpha0"]), "eta": repr(p["eta"])} if self.name != "srf"
                     else {n: repr(p[n]) for n in ("r", "c", "gamma")})
            common = dict(alpha=repr(p["alpha"]), beta=repr(p["beta"]), lam=repr(p["lam"]),
                          noise_var=repr(p.get("noise_var", 0.0)), **extra)
            if _grouped(p):
                from ..srf.grouped.groups import srf_groups

                sol = srf_groups(p["student"], p["teacher"], readout_spec=p["readout"], **common)
                return float(sol.test_error), float(sol.errors["test_error"])
            if p.get("row_norms"):
                common["row_norms"] = p["row_norms"]        # True (from the step), or an sRF's (k, s2)
            if _general_loss(p):
                common["loss"] = p["loss"]
            sol = srf_solve(p["student"], p["teacher"], **common)
            if key == "class_error":
                return float(sol.extra["class_error"]), float(sol.errors["class_error"])
            return float(sol.test_error), float(sol.abs_error)
        if self.name == "spike-model":
            from ..spikes import gains

            # the value at 15 and at 25 digits asked of gains (its boundary), their difference the error
            lo, hi = (float((g.delta if key == "delta" else g.lambda_test)[-1]) for g in (
                gains(p["student"], p["teacher"], repr(p["phi"]), repr(p["psi"]), repr(p["lam"]), ell=p.get("ell", 2),
                      noise_var=repr(p.get("noise_var", 0.0)), dps=asked) for asked in (15, 25)))
            return hi, abs(hi - lo)
        from ..spikes import resolvent

        res = resolvent(p["student"], repr(p["phi"]), repr(p["psi"]), repr(p["lam"]))
        return float(getattr(res, key)), float(res.errors[key])


    def alternative_theory(self, params: dict, key: str):
        r"""The other side of the row-norm correction (docs/theory/srf-theory.md §4.11, docs/studies/mechanism.md),
        where it applies (square loss, uniform readout, ``test_error``): ``("row_norms", value, error)`` (the
        corrected theory, for a giant step, an ablation, or an sRF simulated with ``norm_slope`` k / ``norm_noise``
        s: :math:`(k,s^2)`), ``("uncorrected", value, error)`` when the study compares with the corrected theory
        already (``row_norms``), ``(name, None, reason)`` where it cannot be computed, None where it does not apply."""
        if (self.name not in ("giant-step", "srf", "ablation") or key != "test_error" or _grouped(params)
                or _general_loss(params)):
            return None
        if self.name == "srf":
            k, s = params.get("norm_slope", 0.0), params.get("norm_noise", 0.0)
            if not (k or s):
                return None
            name, other = "row_norms", dict(params, row_norms=(float(k), float(s) ** 2))
        else:
            name = "uncorrected" if params.get("row_norms") else "row_norms"
            other = dict(params, row_norms=not params.get("row_norms"))
        try:
            return (name,) + self.theory(other, key)
        except (InvalidParameterError, ConvergenceError) as exc:
            return name, None, str(exc)


def cge_functions(student, r, c):
    r"""float64 callables :math:`(\mu_0,\mu_1,\mu_\star,\partial_c\mu_0)` of κ for the cGE features of ``srf`` with
    ``features="cgep"`` (docs/theory/srf-theory.md §3, (15) and "Corrected conditional mean"): ``cge_coeffs`` and
    ``cge_curvature``, each evaluated once per κ array (the simulator asks for all four on the same batch)."""
    import numpy as np

    from ..srf.features.cge import cge_coeffs, cge_curvature

    last = {}

    def at(k, i):
        if last.get("k") is not k:
            m0, m1, ms2 = cge_coeffs(student, r, c, k)
            last.update(k=k, vals=(m0, m1, np.sqrt(ms2), None))
        if i == 3 and last["vals"][3] is None:
            last["vals"] = last["vals"][:3] + (cge_curvature(student, r, c, k),)
        return last["vals"][i]

    return tuple((lambda k, i=i: at(k, i)) for i in range(4))


def _grouped(params) -> bool:
    """True when a study's (checked) parameters name a grouped readout (docs/theory/srf-theory.md §8)."""
    return bool(params.get("readout"))


def _general_loss(params) -> bool:
    """True when a study's (checked) parameters name a loss other than the square loss (docs/theory/srf-theory.md §4.9)."""
    return bool(params.get("loss"))


def _paired_references(student, teacher, alpha, beta, lam, noise_var, loss, W0, W1, theta, alpha0=None) -> dict:
    r"""The paired references of one giant-step repetition (docs/theory/numerics.md §8): the F1 theory on the
    trained bulk (``from_trained`` + ``empirical_from_weights``, docs/theory/srf-theory.md §4.6) and the sRF theory
    at the measured (r, c, γ); each with its solver's error estimate.  With a general ``loss`` (§4.9) only the
    latter, for the test error and the classification error (``theory_measured@class_error``); NaN where the
    general-loss solver finds no fixed point at the task's (r, c, γ) (measured: the hinge loss at 2 of 4 tasks of
    d = 250), a task the paired comparison then leaves out and counts.  With ``alpha0`` (a study with
    ``corrected``) also the corrected theories at the measured parameters (:func:`corrected_references`)."""
    from ..srf import empirical_from_weights, from_trained, srf_solve

    r, c, v, Wt = from_trained(W1, W0)
    gam = float(theta @ v)
    common = dict(r=r, c=c, gamma=gam, alpha=alpha, beta=beta, lam=lam, noise_var=noise_var, tol=1e-8)
    if loss is not None:
        try:
            ms = srf_solve(student, teacher, loss=loss, **common)
        except ConvergenceError:      # that task is left out of the paired comparison (run.py counts it)
            nan = float("nan")
            return {"theory_measured": nan, "theory_measured_error": nan, "theory_measured@class_error": nan,
                    "theory_measured_error@class_error": nan}
        return {"theory_measured": float(ms.test_error), "theory_measured_error": float(ms.abs_error),
                "theory_measured@class_error": float(ms.extra["class_error"]),
                "theory_measured_error@class_error": float(ms.errors["class_error"])}
    f1 = srf_solve(student, teacher, spectrum="empirical", empirical=empirical_from_weights(Wt, v, theta), **common)
    ms = srf_solve(student, teacher, **common)
    out = {"theory_f1": float(f1.test_error), "theory_f1_error": float(f1.abs_error),
           "theory_measured": float(ms.test_error), "theory_measured_error": float(ms.abs_error)}
    if alpha0 is not None:
        out.update(corrected_references(student, teacher, common, alpha0, W0, Wt, v))
    return out


#: The corrected paired references of a giant-step study with ``corrected`` (docs/studies/paired-map.md): the theory
#: at the task's measured (r, c, γ) with the measured row norms (§4.11), on the trained bulk (trained-bulk.md), both.
CORRECTED = ("measured_rn", "measured_trained", "measured_both")


def corrected_references(student, teacher, common, alpha0, W0, Wt, v) -> dict:
    r"""The theory at one network's measured parameters with each correction (docs/studies/paired-map.md): the
    measured row norms :math:`\hat k` (slope of :math:`\|b_i\|^2` against :math:`w^0_i\cdot\hat v`, ``norm_slope_v``)
    and :math:`\hat s` (the spread left, times √d, ``norm_noise_v``; as ``sim_ablation`` measures them) in
    ``row_norms=(k̂, ŝ²)`` (docs/theory/srf-theory.md §4.11), the trained bulk (``spectrum="trained"`` at the
    measured ĉ, docs/theory/trained-bulk.md §5), and both (§7).  ``common`` holds the measured (r, c, γ) and the
    model; :math:`\hat v` is oriented so that γ̂ ≥ 0 (the theory's convention).  A theory without a fixed point at
    these parameters is NaN (the task is left out of that comparison and counted)."""
    from ..srf import srf_solve

    p, d = Wt.shape
    sign = 1.0 if common["gamma"] >= 0 else -1.0
    nb2 = np.sum(Wt * Wt, axis=1)
    eps = sign * (W0 @ v)
    k = float(eps @ (nb2 - nb2.mean())) / float(eps @ eps)
    s = float(np.std(nb2 - nb2.mean() - k * eps)) * math.sqrt(d)
    common = dict(common, gamma=abs(common["gamma"]))
    out = {"norm_slope_v": k, "norm_noise_v": s}
    for name, extra in (("measured_rn", dict(row_norms=(k, s * s))),
                        ("measured_trained", dict(spectrum="trained", alpha0=alpha0)),
                        ("measured_both", dict(spectrum="trained", alpha0=alpha0, row_norms=(k, s * s)))):
        try:
            sol = srf_solve(student, teacher, **common, **extra)
            out["theory_" + name], out["theory_" + name + "_error"] = float(sol.test_error), float(sol.abs_error)
        except ConvergenceError:
            out["theory_" + name] = out["theory_" + name + "_error"] = float("nan")
    return out


_SRF = ("student", "teacher", "alpha", "beta", "lam")
_SPIKE = ("student", "phi", "psi", "lam")
#: Protocols by name.
PROTOCOLS = {
    "giant-step": Protocol("giant-step", _SRF + ("alpha0", "eta"), ("noise_var", "n_test", "row_norms", "readout",
                                                                 "loss", "corrected"),
                           ("test_error",), paired=("f1", "measured"), theory_only=("row_norms",)),
    "srf": Protocol("srf", _SRF + ("r", "c", "gamma"), ("noise_var", "n_test", "features", "norm_slope", "norm_noise",
                                                       "readout"), ("test_error",)),
    "spike-model": Protocol("spike-model", _SPIKE + ("teacher",), ("ell", "noise_var"), ("delta", "lambda_test")),
    "traces": Protocol("traces", _SPIKE, ("bulk",), ("m1", "m2", "dm1_dlam", "dm2_dlam")),
    "ablation": Protocol("ablation", _SRF + ("alpha0", "eta"), ("noise_var", "n_test", "variants", "row_norms"),
                         ("test_error",),
                         paired=VARIANTS[1:], paired_prefix="ablation_", theory_only=("row_norms",)),
}


def protocol_of(name: str) -> Protocol:
    """The protocol called ``name`` (a clear error naming the valid ones otherwise)."""
    if name not in PROTOCOLS:
        raise InvalidParameterError("protocol", name, " or ".join(PROTOCOLS))
    return PROTOCOLS[name]
