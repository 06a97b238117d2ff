r"""The curves a theorist draws over a phase diagram or a learning curve (docs/theory/checking.md §9), each computed
with its error as a :class:`~onestep_theory.quantities.figures.Overlay`: the best-linear baseline and the bounds
(26)/(27) (docs/theory/srf-theory.md §6), the η̃ minimising a bound, (28), the row-norm-corrected theory (§4.11),
and the grid's argmin of a 2-D sweep along one parameter.  A study's simulated points come from its store, read by
the CLI (the study layer is beside this one).

>>> import numpy as np
>>> z = np.array([[3., 2., 1., 2.], [3., 1., 2., 4.]])          # two x values, four y values
>>> o = grid_argmin([1, 2], [10, 20, 30, 40], z, np.zeros_like(z), name="eta")
>>> o.y, o.yerr
((30.0, 20.0), ((10.0, 10.0), (10.0, 10.0)))
"""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import InvalidParameterError
from ..core.exact import to_float
from ..srf import bounds, srf_sweep
from ..srf.optimal.bounds import best_linear_checked
from .figures import WIDTH, Overlay, curve, heatmap, sweep_grid, tex_name
from .grid import parse_over
from .registry import quantity_of

__all__ = ["OVERLAYS_1D", "OVERLAYS_2D", "best_linear_overlay", "bound_overlays", "row_norms_overlay",
           "eta_star_overlays", "grid_argmin", "parse_contours", "parse_with", "check_sweep_plot", "check_curve_with", "study_overlays",
           "sweep_figure", "curve_figure"]

#: Overlay names of ``srf-curve --with`` (``study:STORE`` besides, read by the CLI) and of ``sweep --with``.
OVERLAYS_1D = ("best-linear", "bounds", "row-norms")
OVERLAYS_2D = ("argmin", "eta-star")


def best_linear_overlay(teacher) -> Overlay:
    r"""The best linear (kernel) baseline :math:`\varepsilon_{\rm lin}=\|\sigma_\star\|^2-\mu_1^{\star2}-\mu_0^{
    \star2}` (docs/theory/srf-theory.md §6) as a horizontal line with its error."""
    v, e = best_linear_checked(teacher)
    return Overlay("best-linear", r"best linear $\varepsilon_{\rm lin}$", y=(float(v),), yerr=(float(e),),
                   kind="hline")


def _rcg_or_map(fixed: dict) -> dict:
    """The keywords of :func:`~onestep_theory.srf.optimal.bounds.bounds` from the curve's fixed parameters."""
    if all(fixed.get(k) is not None for k in ("r", "c", "gamma")):
        return {k: fixed[k] for k in ("r", "c", "gamma")}
    if fixed.get("eta") is None:
        raise InvalidParameterError("--with", "bounds", "--alpha0 and --eta (or --r --c --gamma)")
    opts = {k: fixed[k] for k in ("c_formula", "strict_odd") if k in fixed}
    return {"alpha0": fixed.get("alpha0") or "inf", "eta": fixed["eta"], "noise_var": fixed.get("noise_var") or 0,
            **opts}


def bound_overlays(student, teacher, param: str, xs, fixed: dict) -> list:
    r"""The lower bound (27) (valid at every α, λ, β) and the upper bound (26) on :math:`\min_\lambda\varepsilon_g`
    (docs/theory/srf-theory.md §6) along a curve over ``param``: horizontal lines when ``param`` is α, β or λ
    (the bounds do not depend on them), else curves over η̃, α0 or the noise."""
    if param in ("alpha", "beta", "lam"):
        b = bounds(student, teacher, **_rcg_or_map(fixed))
        return [Overlay("bound-lower", "lower bound (27)", y=(float(b.lower),), yerr=(float(b.errors["lower"]),),
                        kind="hline"),
                Overlay("bound-upper", r"bound (26) on $\min_\lambda\varepsilon_g$", y=(float(b.upper),),
                        yerr=(float(b.errors["upper"]),), kind="hline")]
    if param not in ("eta", "alpha0", "noise_var") or fixed.get("r") is not None:
        raise InvalidParameterError("--with", "bounds", "a curve over alpha, beta, lam, eta, alpha0 or noise_var "
                                                        "(with --alpha0 --eta)")
    rows = [bounds(student, teacher, **_rcg_or_map(dict(fixed, **{param: x}))) for x in xs]
    x = tuple(to_float(v, param) for v in xs)
    return [Overlay("bound-lower", "lower bound (27)", x=x, y=tuple(float(b.lower) for b in rows),
                    yerr=tuple(float(b.errors["lower"]) for b in rows)),
            Overlay("bound-upper", r"bound (26) on $\min_\lambda\varepsilon_g$", x=x,
                    y=tuple(float(b.upper) for b in rows), yerr=tuple(float(b.errors["upper"]) for b in rows))]


def row_norms_overlay(student, teacher, param: str, xs, fixed: dict) -> Overlay:
    r"""The test error corrected for the row-norm heterogeneity of the step (docs/theory/srf-theory.md §4.11) along
    the curve, each point with its error (``fixed``: the keywords of
    :func:`~onestep_theory.srf.srf_sweep`, with ``alpha0`` and ``eta``)."""
    if fixed.get("eta") is None and param != "eta":
        raise InvalidParameterError("--with", "row-norms", "--alpha0 and --eta (the network's step)")
    sols = srf_sweep(student, teacher, param, xs, **dict(fixed, row_norms=True))
    return Overlay("row-norms", r"row-norm corrected (§4.11)", x=tuple(to_float(v, param) for v in xs),
                   y=tuple(float(s.test_error) for s in sols), yerr=tuple(float(s.abs_error) for s in sols))


def eta_star_overlays(student, teacher, *, alpha0="inf", noise_var=0, eta_max=10, axis="y") -> list:
    r"""The η̃ minimising the upper bound (26) and the lower bound (27), (28) (docs/theory/srf-theory.md §6), each
    with its certified error, as lines across a phase diagram whose ``axis`` (``x`` or ``y``) is η̃: they do not
    depend on α, β or λ."""
    b = bounds(student, teacher, alpha0=alpha0, noise_var=noise_var, optimize_eta=True, eta_max=eta_max)
    out = []
    for key, name, lab in (("eta_lower", "eta-star-lower", "(27)"), ("eta_upper", "eta-star-upper", "(26)")):
        v, e = float(getattr(b, key)), float(b.errors[key])
        lab = rf"$\tilde\eta$ minimising {lab}" + (" (at the search's end)" if b.search[key[4:]]["at_end"] else "")
        out.append(Overlay(name, lab, **({"y": (v,), "yerr": (e,), "kind": "hline"} if axis == "y" else
                                         {"x": (v,), "xerr": (e,), "kind": "vline"})))
    return out


def grid_argmin(xs, ys, values, errors, *, name: str) -> Overlay:
    r"""At each ``xs[i]`` the ``ys[j]`` minimising ``values[i, j]``, with an error bar reaching the neighbouring
    grid points (for a quantity with one minimum along y the true argmin lies strictly between them) and every
    point whose value is within the combined errors of the minimum.  Columns whose minimum is at the grid's edge
    are left out (the minimum may lie outside the range)."""
    ys = np.asarray(ys, float)
    z, e = np.asarray(values, float), np.asarray(errors, float)
    px, py, lo, hi = [], [], [], []
    for i, x in enumerate(np.asarray(xs, float)):
        if not np.all(np.isfinite(z[i])):
            continue
        k = int(np.argmin(z[i]))
        tie = np.flatnonzero(z[i] - e[i] <= z[i, k] + e[i, k])
        a, b = tie.min() - 1, tie.max() + 1          # tie holds k: the bracket of every candidate minimum
        if a < 0 or b >= len(ys):
            continue
        px.append(float(x))
        py.append(float(ys[k]))
        lo.append(float(ys[k] - ys[a]))
        hi.append(float(ys[b] - ys[k]))
    label = rf"argmin over {tex_name(name)} on the grid" + ("" if px else ": at its edge everywhere")
    return Overlay("argmin", label, x=tuple(px), y=tuple(py),
                   yerr=(tuple(lo), tuple(hi)), kind="points" if len(px) <= 24 else "line")


def parse_contours(text):
    """``--contours``: a number of levels (1 to 40) or the levels themselves, increasing (``0.03,0.04,1/20``).

    >>> parse_contours("8"), parse_contours("0.03, 1/20")
    (8, [0.03, 0.05])
    """
    from ..core.exact import to_exact

    allowed = "a number of levels in [1, 40], or increasing levels a,b,c (exact strings such as 1/20 allowed)"
    items = [t.strip() for t in str(text).split(",")]
    if len(items) == 1 and items[0].isdigit():
        n = int(items[0])
        if not 1 <= n <= 40:
            raise InvalidParameterError("--contours", text, allowed)
        return n
    try:
        levels = [float(to_exact(t, "--contours")) for t in items]
    except (InvalidParameterError, ValueError, TypeError):
        raise InvalidParameterError("--contours", text, allowed) from None
    if not levels or len(levels) > 40 or not all(math.isfinite(v) for v in levels) or any(
            b <= a for a, b in zip(levels, levels[1:])):
        raise InvalidParameterError("--contours", text, allowed)
    return levels


def parse_with(text, allowed, *, study: bool = False) -> list:
    """The overlay names of ``--with`` (comma-separated, each among ``allowed``; ``study:STORE`` where ``study``)."""
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    names = ", ".join(allowed + (("study:STORE",) if study else ()))
    if not items:
        raise InvalidParameterError("--with", text, f"overlays among {names}")
    for t in items:
        if t == "spike":
            raise InvalidParameterError("--with", t, f"overlays among {names} (the eta~ where a spike leaves the bulk "
                                                     "is not computed: docs/theory/srf-theory.md §7, open point 2)")
        if not (t in allowed or (study and t.startswith("study:") and t[6:].strip())):
            raise InvalidParameterError("--with", t, f"overlays among {names}")
    return items


def check_pixels(width, dpi) -> None:
    """A raster image of at most 12 000 pixels across (``width`` inches at ``dpi``): bounded memory."""
    if float(width) * int(dpi) > 12000:
        raise InvalidParameterError("--dpi", dpi, f"at most {int(12000 // float(width))} at --width {float(width):g} "
                                                  "(12 000 pixels across)")


def check_curve_with(names, *, plot, row_norms, param, given_rcg, width=WIDTH, dpi=300) -> None:
    """The overlays of ``srf-curve --with``, checked before the solves: a plot file, no row-norm overlay on a corrected
    curve, bounds along η̃, α0 or the noise only through the mapping."""
    check_pixels(width, dpi)
    if names and not plot:
        raise InvalidParameterError("--with", ",".join(names), "given with --plot FILE")
    if "row-norms" in names and row_norms:
        raise InvalidParameterError("--with", "row-norms", "a curve without --row-norms (it is the corrected one)")
    if "bounds" in names and given_rcg and param in ("eta", "alpha0", "noise_var"):
        raise InvalidParameterError("--with", "bounds", "a curve over alpha, beta or lam when r, c, gamma are given")


def study_overlays(points: dict) -> list:
    """Overlays of a store's studies (:func:`~onestep_theory.study.points.study_points`: ``{protocol: [(x, mean,
    se, d, seeds)]}``): the means at the largest d with bars of two standard errors."""
    out = []
    for protocol, pts in points.items():
        ds = sorted({p[3] for p in pts})
        what = {"giant-step": "network", "srf": "sRF simulation"}.get(protocol, protocol)
        out.append(Overlay(f"study:{protocol}", f"{what}, $d={ds[-1] if len(ds) == 1 else 'max'}$" + r", $\pm2$ s.e.",
                           x=tuple(p[0] for p in pts), y=tuple(p[1] for p in pts),
                           yerr=tuple(2 * p[2] for p in pts), kind="points"))
    return out


def check_sweep_plot(over, *, contours=None, with_=(), width=WIDTH, dpi=300) -> list:
    """The swept names (one or two) of a sweep to be plotted, checked before any work: a grid of more than two
    swept parameters, or contours and overlays on a 1-D grid, are refused."""
    check_pixels(width, dpi)
    grid = parse_over(over, need_count=True)
    names = [k for k, v in grid.items() if v[2] > 1] or list(grid)[:1]
    if len(names) > 2:
        raise InvalidParameterError("--plot", ",".join(names), "a sweep of one or two parameters (this one sweeps "
                                                               f"{len(names)}: fix all but two)")
    if len(names) == 1 and (contours is not None or with_):
        raise InvalidParameterError("--contours" if contours is not None else "--with", contours or ",".join(with_),
                                    "a 2-D sweep (a 1-D sweep draws a curve)")
    if "eta-star" in with_ and "eta" not in names:
        raise InvalidParameterError("--with", "eta-star", "a 2-D sweep over eta")
    return names


def sweep_figure(res, path, *, contours=None, tol=None, with_=(), width=WIDTH, dpi=300, command=None) -> str:
    """The figure of a sweep: a curve for one swept parameter (with the ``formula``'s values and errors when the
    sweep has one), a heatmap (:func:`~.figures.heatmap`) for two, with the overlays ``with_`` (``argmin`` along the
    second parameter, ``eta-star``) computed here; ``command`` goes into the file's metadata."""
    names, axes, z, e = sweep_grid(res)
    fixed = dict(res.fixed, **{k: res.rows[0][k] for k in res.over if k not in names})    # a one-point range
    if "noise" in quantity_of(res.quantity).params and "noise" not in fixed and "noise" not in res.over:
        fixed["noise"] = "0"                            # the default of every quantity with label noise
    who = dict(fixed=fixed, student=res.student, teacher=res.teacher, width=width, dpi=dpi, command=command)
    if len(names) == 1:
        ovs = []
        if getattr(res, "formula", None) is not None:
            _, _, fz, fe = sweep_grid(res, "formula", "formula_error")
            text = res.formula if len(res.formula) <= 40 else res.formula[:37] + "..."
            ovs.append(Overlay("formula", f"formula: {text}".replace("$", r"\$"), x=tuple(axes[0]), y=tuple(fz),
                               yerr=tuple(fe)))
        return curve(path, axes[0], z, e, name=names[0], quantity=res.quantity, overlays=ovs, **who)
    ovs = []
    if "argmin" in with_:
        ovs.append(grid_argmin(axes[0], axes[1], z, e, name=names[1]))
    if "eta-star" in with_:
        if quantity_of(res.quantity).family != "srf":
            raise InvalidParameterError("--with", "eta-star", "an sRF quantity")
        ovs += eta_star_overlays(res.student, res.teacher, alpha0=res.fixed.get("alpha0", "inf"),
                                 noise_var=res.fixed.get("noise", 0), axis="y" if names[1] == "eta" else "x")
    return heatmap(path, axes[0], axes[1], z, e, names=names, quantity=res.quantity, tol=tol, contours=contours,
                   overlays=ovs, **who)


def curve_figure(path, *, student, teacher, param, values, sols, fixed, caption, with_=(), extra=(),
                 row_norms=False, width=WIDTH, dpi=300, command=None) -> str:
    """The figure of an sRF learning curve (``sols`` over ``values`` of ``param``; ``fixed``: the keywords of
    :func:`~onestep_theory.srf.srf_sweep`) with the overlays ``with_`` computed here and ``extra`` ones given
    (a study's points); ``caption``: the fixed parameters as typed."""
    ovs = []
    for w in with_:
        if w == "best-linear":
            ovs.append(best_linear_overlay(teacher))
        elif w == "bounds":
            ovs += bound_overlays(student, teacher, param, values, fixed)
        elif w == "row-norms":
            if row_norms:
                raise InvalidParameterError("--with", w, "a curve without --row-norms (it is the corrected one)")
            ovs.append(row_norms_overlay(student, teacher, param, values, fixed))
    lab = "theory (25)" + (", row norms (§4.11)" if row_norms else "")
    return curve(path, [to_float(v, param) for v in values], [float(s.test_error) for s in sols],
                 [float(s.abs_error) for s in sols], name=param, quantity="test_error", fixed=caption,
                 student=student, teacher=teacher, overlays=ovs + list(extra), label=lab, width=width, dpi=dpi,
                 command=command)
