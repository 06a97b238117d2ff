r"""The plot of a finite-size study (docs/theory/numerics.md §8): gap against :math:`d^{-1/2}` with error bars, the
fitted :math:`g(d)=g_\infty+\sum_ka_kd^{-e_k}` and its extrapolated value at :math:`d=\infty` (95 % interval)."""

from __future__ import annotations

import numpy as np

from ..core.errors import InvalidParameterError
from ..core.plotting import plotting

__all__ = ["plot_study"]


def plot_study(result, path) -> str:
    """Write the plot of ``result`` (a :class:`~onestep_theory.study.run.StudyResult` or its ``to_dict()``) to
    ``path`` (PNG, PDF or SVG by suffix); every comparison of the study is one series.  Returns ``path``."""
    plt = plotting()
    if plt is None:
        raise InvalidParameterError("--plot", path, "a file, with matplotlib installed (pip install "
                                    "'onestep_theory[plot]')")
    res = result if isinstance(result, dict) else result.to_dict()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, (name, comp) in enumerate(res["comparisons"].items()):
        rows = comp["sizes"]
        x = np.array([r["d"] for r in rows], dtype=float) ** -0.5
        # to_dict() writes a NaN (a size whose paired reference is missing) as the string "nan": read every number back
        ax.errorbar(x, [float(r["gap"]) for r in rows], yerr=[float(r["se"]) for r in rows], fmt="o", color=f"C{i}",
                    capsize=3,
                    label="simulation - " + {"row_norms": "corrected theory (row norms)", "uncorrected":
                                             "uncorrected theory"}.get(name, name) + ("" if "theory" in comp else " (paired)"))
        fit = comp["fit"]
        if fit is not None:
            xs = np.linspace(0, x.max() * 1.05, 200)
            # the coefficient of d^-e (key "d^-e") multiplies x^(2e), x = d^-1/2
            ys = float(fit["g_inf"]) + sum(float(a) * xs ** (2 * float(k[3:])) for k, a in fit["coefficients"].items())
            ax.plot(xs, ys, "-", color=f"C{i}", lw=1)
            half = float(fit["half_width"]) if "half_width" in fit else 1.96 * float(fit["se"])   # t on its dof
            ax.errorbar([0], [float(fit["g_inf"])], yerr=[half], fmt="s", color=f"C{i}", capsize=4, mfc="none")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel(r"$d^{-1/2}$")
    ax.set_ylabel(f"gap in {res['key']}")
    pr = res.get("params", {})
    what = ", ".join(f"{k}={pr[k]}" for k in ("student", "teacher", "alpha0", "eta", "alpha", "beta", "lam") if k in pr)
    ax.set_title(f"finite-size study, {res['protocol']}: {what}", fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return str(path)
