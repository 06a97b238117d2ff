r"""Figures a paper can use (docs/theory/checking.md §9): a 2-D sweep as a heatmap on the grid's own scale, a 1-D
curve with its error band, each with overlays, in a two-column-paper style (3.4 in wide by default, 8 pt STIX
fonts, mathtext labels), written as PNG, PDF or SVG by the file's suffix.

Drawing only, from arrays and metadata: every overlay (:class:`Overlay`) arrives computed, with its error, from
the layer that may compute it (:mod:`~onestep_theory.quantities.overlays`, the CLI for a study's store).  The
heatmap has a colour bar naming the quantity and its units, contours on request, the fixed parameters in the
title, and a hatched mask over the points whose error exceeds a relative tolerance.  Log axes get ticks at 1, 2, 5
times powers of ten (or only powers), and tick labels that would overlap are thinned until none do.
matplotlib is optional (:func:`~onestep_theory.core.plotting.plotting`).

>>> grid_scale([0.5, 1, 2, 4]), grid_scale([1, 2, 3]), tex_name("eta")
('log', 'lin', '$\\tilde\\eta$')
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import __version__
from ..core.errors import InvalidParameterError
from ..core.plotting import plotting
from .registry import formula_tex, quantity_of

__all__ = ["Overlay", "STYLE", "WIDTH", "tex_name", "quantity_label", "grid_scale", "sweep_grid", "heatmap", "curve",
           "tick_overlaps", "fixed_caption"]

#: Width of a one-column figure of a two-column paper (inches); ``width=7`` spans both columns.
WIDTH = 3.4
#: The rcParams of every figure (a two-column paper: 8 pt text, 7 pt ticks, STIX text and mathtext like Times).
STYLE = {"font.size": 8, "axes.labelsize": 8, "axes.titlesize": 7, "xtick.labelsize": 7, "ytick.labelsize": 7,
         "legend.fontsize": 7, "font.family": "STIXGeneral", "mathtext.fontset": "stix", "axes.linewidth": 0.6,
         "lines.linewidth": 1.0, "xtick.major.width": 0.6, "ytick.major.width": 0.6, "xtick.direction": "in",
         "ytick.direction": "in", "hatch.linewidth": 0.5, "hatch.color": "0.25", "legend.frameon": False,
         "axes.formatter.use_mathtext": True, "savefig.dpi": 300, "figure.dpi": 100,
         "pdf.fonttype": 42, "ps.fonttype": 42}          # TrueType in PDF/EPS: journals refuse Type 3 fonts

#: Quantity -> (mathtext label, units); quantities not listed show their description.
_LABELS = {"test_error": (r"test error $\varepsilon_g$", r"units of $y^2$"),
           "bound_upper": (r"upper bound (26)", r"units of $y^2$"), "bound_lower": (r"lower bound (27)",
                                                                           r"units of $y^2$"),
           "train_loss_f0": (r"$\mathcal{L}_{\rm tr}(F_0)$", r"units of $y^2$"),
           "test_loss_f0": (r"$\mathcal{L}_{\rm te}(F_0)$", r"units of $y^2$"),
           "r": (r"spike strength $r$", ""), "c": (r"bulk variance $c$", ""), "gamma": (r"alignment $\gamma$", ""),
           "m1": (r"$m_1$", ""), "m2": (r"$m_2$", ""), "dm1": (r"$\partial_\lambda m_1$", ""),
           "dm2": (r"$\partial_\lambda m_2$", ""), "stieltjes": (r"Stieltjes transform $V_2(-\lambda)$", "")}
_LABELS.update({f"delta_{k}": (rf"training-loss gain $\Delta_{k}$", r"units of $y^2$") for k in range(1, 9)})
_LABELS.update({f"lambda_{k}": (rf"test-error gain $\Lambda_{k}$", r"units of $y^2$") for k in range(1, 9)})


@dataclasses.dataclass(frozen=True)
class Overlay:
    """A computed curve drawn over a figure: ``kind`` ``line`` (x, y, optional band ``yerr``), ``points`` (error
    bars ``xerr``/``yerr``), ``hline``/``vline`` (one value ``y[0]``/``x[0]`` with its error band); ``name`` is the
    artist's id (``overlay:<name>``), ``label`` its legend text (mathtext)."""

    name: str
    label: str
    x: tuple = ()
    y: tuple = ()
    xerr: tuple | None = None
    yerr: tuple | None = None
    kind: str = "line"


def tex_name(param: str, family: str = "srf") -> str:
    """The parameter's mathtext name in the notation of the ``family``'s paper (``alpha0`` -> ``$\\alpha_0$``;
    the label noise is Δ in the sRF papers, :math:`\\sigma_\\varepsilon^2` in the spike papers)."""
    tex = {**formula_tex("spike" if family == "srf" else "srf"), **formula_tex(family), "noise_var": r"\Delta"}
    return f"${tex[param]}$" if param in tex else param


def quantity_label(quantity: str) -> str:
    """The colour-bar / y-axis label: the quantity's name in mathtext and its units."""
    name, units = _LABELS.get(quantity, (quantity_of(quantity).describe, ""))
    return f"{name} ({units})" if units else name


def fixed_caption(fixed: dict, student=None, teacher=None, family: str = "srf") -> str:
    """The fixed parameters as typed, in mathtext (``$\\alpha_0=20$, $\\beta=1$``), after student/teacher."""
    who = f"{student}" + (f" / {teacher}" if teacher else "") if student else ""
    order = {k: i for i, k in enumerate(("alpha0", "eta", "r", "c", "gamma", "alpha", "beta", "lam", "phi", "psi",
                                         "noise", "noise_var"))}
    parts = [f"{tex_name(k, family)[:-1]}={v}$" if tex_name(k, family).startswith("$") else f"{k}={v}"
             for k, v in sorted(fixed.items(), key=lambda kv: order.get(kv[0], len(order)))]
    return ", ".join(([who] if who else []) + parts)


def grid_scale(values) -> str:
    """``log`` for a geometric grid of positive values (equal ratios; two points: a ratio of at least 10, the rule
    of docs/theory/checking.md §3), else ``lin``."""
    v = np.asarray(values, dtype=float)
    if len(v) < 2 or not np.all(v > 0):
        return "lin"
    if len(v) == 2:
        return "log" if v[1] / v[0] >= 10 else "lin"
    d = np.diff(np.log(v))
    return "log" if np.allclose(d, d[0], rtol=1e-6, atol=0) and not np.allclose(np.diff(v), v[1] - v[0],
                                                                             rtol=1e-6, atol=0) else "lin"


def sweep_grid(res, value: str = "value", error: str = "error") -> tuple:
    """``(names, axes, values, errors)`` of a sweep (:class:`~onestep_theory.quantities.sweep.SweepResult`) whose
    grid has one or two swept parameters (those with more than one point): ``values``/``errors`` of shape
    ``(len(axes[0]),)`` or ``(len(axes[0]), len(axes[1]))`` (the first name along the first index)."""
    axes = {k: list(dict.fromkeys(r[k] for r in res.rows)) for k in res.over}
    names = [k for k in res.over if len(axes[k]) > 1] or list(res.over)[:1]
    if len(names) > 2:
        raise InvalidParameterError("--plot", ",".join(names), "a sweep of one or two parameters (this one sweeps "
                                                               f"{len(names)}: fix all but two)")
    shape = [len(axes[k]) for k in res.over]
    num = np.array([_number(r[value]) for r in res.rows]).reshape(shape)
    err = np.array([_number(r[error]) for r in res.rows]).reshape(shape)
    keep = tuple(slice(None) if k in names else 0 for k in res.over)
    return names, [np.array([float(a) for a in axes[k]]) for k in names], num[keep], err[keep]


def _number(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _edges(v, scale):
    """Cell edges around the grid's points, on its own scale (geometric midpoints on a log grid)."""
    t = np.log(v) if scale == "log" else np.asarray(v, dtype=float)
    if len(t) == 1:
        e = np.array([t[0] - 0.5, t[0] + 0.5]) if scale == "log" else np.array([t[0] * 0.9, t[0] * 1.1 + 1e-9])
    else:
        mid = (t[1:] + t[:-1]) / 2
        e = np.concatenate([[2 * t[0] - mid[0]], mid, [2 * t[-1] - mid[-1]]])
    return np.exp(e) if scale == "log" else e


#: The ticks of a log axis, from dense to sparse: every integer, 1-2-5, powers of ten (times 10^k).
_SUBS = (tuple(float(k) for k in range(1, 10)), (1.0, 2.0, 5.0), (1.0,))


def _density(lo, hi) -> int:
    """The index in :data:`_SUBS` of a log axis from ``lo`` to ``hi``."""
    decades = math.log10(hi / lo)
    return 0 if decades < 0.5 else 1 if decades < 2 else 2


def _axis(ax, which, scale, lo, hi, subs=None):
    """A log axis with ticks at k x 10^k below half a decade, 1, 2, 5 x 10^k below two decades, else powers of ten,
    labelled as plain numbers from 1e-3 to 1e4, no minor labels; the ``subs`` given when thinning."""
    from matplotlib import ticker

    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log" if scale == "log" else "linear")
    (ax.set_xlim if which == "x" else ax.set_ylim)(lo, hi)
    if scale != "log":
        return
    if subs is None:
        subs = _SUBS[_density(lo, hi)]
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    axis.set_minor_locator(ticker.LogLocator(base=10, subs=np.arange(2, 10) * 1.0))
    axis.set_minor_formatter(ticker.NullFormatter())
    plain = 1e-3 <= lo and hi <= 1e4
    axis.set_major_formatter(ticker.FuncFormatter(
        lambda v, _: f"{v:g}" if plain else rf"$10^{{{round(math.log10(v))}}}$" if v > 0 and abs(
            math.log10(v) - round(math.log10(v))) < 1e-9 else f"{v:g}"))


def tick_overlaps(fig) -> list:
    """The pairs of visible tick labels (of any axes of ``fig``, the colour bar's included) whose boxes overlap,
    as ``[(axes index, 'x'|'y', text1, text2)]`` — empty for a legible figure."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    out = []
    for i, ax in enumerate(fig.axes):
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labs = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            boxes = [t.get_window_extent(r) for t in labs]
            out += [(i, which, labs[j].get_text(), labs[j + 1].get_text()) for j in range(len(boxes) - 1)
                    if boxes[j].overlaps(boxes[j + 1])]
    return out


def _declutter(fig, ax, scales, limits):
    """Thin the tick labels of ``ax`` until none overlap (powers of ten only on a log axis, fewer bins on a linear
    one)."""
    from matplotlib import ticker

    dens = {w: _density(*limits[w]) for w in limits if scales[w] == "log"}
    for nbins in (5, 4, 3, 2):
        bad = {w for i, w, _, _ in tick_overlaps(fig) if fig.axes[i] is ax}
        if not bad:
            return
        for which in bad:
            if scales[which] == "log":
                dens[which] = min(dens[which] + 1, len(_SUBS) - 1)
                _axis(ax, which, "log", *limits[which], subs=_SUBS[dens[which]])
            else:
                (ax.xaxis if which == "x" else ax.yaxis).set_major_locator(ticker.MaxNLocator(nbins))


def _sci(v) -> str:
    """``v`` with one digit in mathtext (``$4\\times10^{-14}$``)."""
    if not v > 0:
        return "0"
    m, e = f"{v:.0e}".split("e")
    if int(e) in (-1, 0, 1):
        return f"{v:.1g}"
    return f"${'' if m == '1' else m + chr(92) + 'times'}10^{{{int(e)}}}$"


def _legend(fig, handles, labels):
    """The legend below the axes, outside the data: two columns if they fit the figure's width, else one."""
    if not handles:
        return None
    for ncol in (2, 1):
        leg = fig.legend(handles, labels, loc="outside lower center", ncol=ncol, handlelength=1.5, columnspacing=0.8,
                         handletextpad=0.4)
        fig.canvas.draw()
        if leg.get_window_extent().width <= fig.bbox.width or ncol == 1:
            return leg
        leg.remove()


def _figure(plt, width, aspect):
    w = float(width)
    if not 1 <= w <= 20:
        raise InvalidParameterError("--width", width, "inches in [1, 20]")
    # a wide figure (both columns) keeps about the height of a one-column one
    return plt.figure(figsize=(w, w * aspect if w <= 4 else max(4 * aspect, 0.42 * w)), layout="constrained")


def _save(plt, fig, path, title, dpi, command=None):
    """Write ``fig`` by the suffix of ``path`` (the title, the package version and the ``command`` that made it in
    the file's metadata) and close it; with ``path`` None return the figure instead (a notebook's, or a test's)."""
    if path is None:
        return fig
    meta = {"Title": title, "Creator": f"onestep_theory {__version__}"}
    if command:
        meta["Subject" if str(path).lower().endswith((".pdf", ".eps", ".ps")) else "Description"] = command
    fig.savefig(path, dpi=dpi, metadata=meta)
    plt.close(fig)
    return str(path)


def _draw_overlays(ax, overlays):
    """Draw each overlay with a gid ``overlay:<name>`` (its band or bars: ``overlay:<name>:error``)."""
    for k, o in enumerate(overlays):
        col = "C0" if o.name.startswith("limit") else f"C{(k + 1) % 10}"       # a limit: the curve's colour
        if o.kind in ("hline", "vline"):
            v, e = float((o.y if o.kind == "hline" else o.x)[0]), float(((o.yerr if o.kind == "hline" else o.xerr)
                                                                        or (0,))[0])
            line = (ax.axhline if o.kind == "hline" else ax.axvline)(v, color=col, ls="--", lw=0.9, label=o.label)
            if e > 0:
                band = (ax.axhspan if o.kind == "hline" else ax.axvspan)(v - e, v + e, color=col, alpha=0.25, lw=0)
                band.set_gid(f"overlay:{o.name}:error")
        elif o.kind == "points":
            cont = ax.errorbar(o.x, o.y, xerr=o.xerr, yerr=o.yerr, fmt="o", ms=2.5, color=col, capsize=1.5,
                               elinewidth=0.6, label=o.label)
            line = cont.lines[0]
            for c in cont.lines[2]:
                c.set_gid(f"overlay:{o.name}:error")
        else:
            x, y = np.asarray(o.x, float), np.asarray(o.y, float)
            keep = np.isfinite(x)                                        # a limit at infinity: not on the axis
            line, = ax.plot(x[keep], y[keep], "-", color=col, lw=1.0, label=o.label)
            if o.yerr is not None:
                e = np.asarray(o.yerr, float)
                lo, hi = (e[0][keep], e[1][keep]) if e.ndim == 2 else (e[keep], e[keep])   # asymmetric: below, above
                y = y[keep]
                ax.fill_between(x[keep], y - lo, y + hi, color=col, alpha=0.3, lw=0).set_gid(f"overlay:{o.name}:error")
        line.set_gid(f"overlay:{o.name}")


def heatmap(path, xs, ys, values, errors, *, names, quantity, fixed=None, student=None, teacher=None, tol=None,
            contours=None, overlays=(), width=WIDTH, dpi=300, scales=None, command=None) -> str:
    """Write the heatmap of ``values[i, j]`` at ``(xs[i], ys[j])`` to ``path`` (None: return the figure): cells on the grid's own scale
    (:func:`grid_scale` unless ``scales``), a colour bar labelled :func:`quantity_label`, ``contours`` (a number of
    levels or the levels) with labels, a hatched grey mask where ``errors > tol * |values|`` or the value is not a
    number, ``overlays``, the fixed parameters as the title.  Returns ``path``."""
    plt = _plt(path)
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    Z, E = np.asarray(values, float).T, np.asarray(errors, float).T          # rows along y
    sx, sy = scales or (grid_scale(xs), grid_scale(ys))
    xe, ye = _edges(xs, sx), _edges(ys, sy)
    with plt.rc_context(STYLE):
        fig = _figure(plt, width, 0.82)
        ax = fig.add_subplot()
        finite = Z[np.isfinite(Z)]
        norm = None
        if finite.size and finite.min() > 0 and finite.max() / finite.min() >= 30:
            from matplotlib.colors import LogNorm

            norm = LogNorm(finite.min(), finite.max())
        mesh = ax.pcolormesh(xe, ye, np.ma.masked_invalid(Z), shading="flat", cmap="viridis", norm=norm,
                             rasterized=True)
        mesh.set_gid("heatmap")
        cb = fig.colorbar(mesh, ax=ax, pad=0.02, fraction=0.06)
        cb.set_label(quantity_label(quantity))
        if contours is not None and finite.size and np.ptp(finite) > 0:
            from matplotlib import patheffects

            levels = contours
            if norm is not None and isinstance(contours, int):      # a log colour scale: levels equally spaced in log
                levels = sorted({float(f"{v:.2g}") for v in np.geomspace(finite.min(), finite.max(), contours + 2)[1:-1]})
            cs = ax.contour(xs, ys, Z, levels=levels, colors="k", linewidths=0.5)
            cs.set_gid("contours")
            for t in ax.clabel(cs, fontsize=6, fmt="%.3g"):
                t.set_path_effects([patheffects.withStroke(linewidth=1.6, foreground="w")])
            cb.add_lines(cs)
        bad = ~np.isfinite(Z) | (False if tol is None else E > float(tol) * np.abs(Z))
        if np.any(bad):
            from matplotlib.patches import Patch

            hatch = ax.pcolor(xe, ye, np.ma.masked_array(np.ones_like(Z), ~bad), cmap="Greys", vmin=0, vmax=2.5,
                              hatch="////", edgecolor="none", alpha=0.55, linewidth=0,
                              antialiased=False)
            hatch.set_gid("error-mask")
            what = "no value" if tol is None else f"error > {_sci(float(tol))}" + r"$\,\times$ value"
        _draw_overlays(ax, overlays)
        handles, labels = ax.get_legend_handles_labels()
        if np.any(bad):
            handles.append(Patch(facecolor="0.75", hatch="////", edgecolor="0.25", lw=0))
            labels.append(what)
        if handles:
            _legend(fig, handles, labels)
        limits = {"x": (xe[0], xe[-1]), "y": (ye[0], ye[-1])}
        _axis(ax, "x", sx, *limits["x"])
        _axis(ax, "y", sy, *limits["y"])
        fam = quantity_of(quantity).family
        ax.set_xlabel(tex_name(names[0], fam))
        ax.set_ylabel(tex_name(names[1], fam))
        title = fixed_caption(dict(fixed or {}), student, teacher, fam)
        if tol is not None and not np.any(bad):
            title += f"\nevery error $\\leq${_sci(float(tol))}$\\,\\times$ value"
        fig.suptitle(title, fontsize=7)
        _declutter(fig, ax, {"x": sx, "y": sy}, limits)
        return _save(plt, fig, path, f"{quantity} over {names[0]}, {names[1]}; {title}", dpi, command)


def curve(path, xs, ys, errors, *, name, quantity, fixed=None, student=None, teacher=None, overlays=(),
          label=None, width=WIDTH, dpi=300, scale=None, command=None) -> str:
    """Write the curve ``ys ± errors`` against ``xs`` (parameter ``name``) with ``overlays`` to ``path`` (None:
    return the figure): the band
    drawn where the errors are visible (else their size is stated in the legend), the legend outside the data,
    the fixed parameters as the title.  Returns ``path``."""
    plt = _plt(path)
    xs, ys, errs = (np.asarray(a, float) for a in (xs, ys, errors))
    far = ~np.isfinite(xs)                  # a point at infinity (alpha0 = inf) is the curve's limit: a line
    overlays = [Overlay(f"limit{k}", f"{label or 'theory'} at {tex_name(name)[:-1]}=\\infty$", y=(ys[i],),
                        yerr=(errs[i],), kind="hline") for k, i in enumerate(np.flatnonzero(far))] + list(overlays)
    xs, ys, errs = xs[~far], ys[~far], errs[~far]
    if not len(xs):
        raise InvalidParameterError("--values", "inf", "finite values besides inf (a curve needs an axis)")
    sx = scale or grid_scale(xs)
    with plt.rc_context(STYLE):
        fig = _figure(plt, width, 0.78)
        ax = fig.add_subplot()
        span = np.ptp(np.concatenate([ys] + [np.asarray(o.y, float) for o in overlays if o.kind != "vline"]))
        big = np.nanmax(errs) if errs.size else 0.0
        lab = label or "theory"
        note = "" if big > 2e-3 * span else f"\ntheory's errors $\\leq${_sci(big)}: within the line"
        line, = ax.plot(xs, ys, "-", color="C0", lw=1.2, label=lab, zorder=3)
        line.set_gid("curve")
        if big > 2e-3 * span:
            ax.fill_between(xs, ys - errs, ys + errs, color="C0", alpha=0.3, lw=0).set_gid("curve:error")
        _draw_overlays(ax, overlays)
        lo, hi = (xs.min(), xs.max()) if len(xs) > 1 else (xs[0] * 0.9, xs[0] * 1.1)
        _axis(ax, "x", sx, lo, hi)
        fam = quantity_of(quantity).family
        ax.set_xlabel(tex_name(name, fam))
        ax.set_ylabel(quantity_label(quantity))
        _legend(fig, *ax.get_legend_handles_labels())
        title = fixed_caption(dict(fixed or {}), student, teacher, fam)
        fig.suptitle(title + note, fontsize=7)
        _declutter(fig, ax, {"x": sx, "y": "lin"}, {"x": (lo, hi)})
        return _save(plt, fig, path, f"{quantity} over {name}; {title}", dpi, command)


def _plt(path):
    plt = plotting()
    if plt is None:
        raise InvalidParameterError("--plot", path, "a file, with matplotlib installed (pip install "
                                    "'onestep_theory[plot]')")
    return plt
