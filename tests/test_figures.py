"""Figures a paper can use (issue 35; docs/theory/checking.md §9): the structure of the heatmap and of the curve
(axes, colour bar and its label, axis labels and scales, the fixed parameters in the title, contours, the error
mask, overlays, no overlapping tick labels, file types), not their pixels; bad figure options are one-line errors
naming the option (exit 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib.pyplot as plt  # noqa: E402

from onestep_theory.cli.main import main  # noqa: E402
from onestep_theory.core.errors import InvalidParameterError  # noqa: E402
from onestep_theory.quantities import figures  # noqa: E402
from onestep_theory.quantities.figures import Overlay, curve, heatmap, tick_overlaps  # noqa: E402
from onestep_theory.quantities.overlays import grid_argmin, parse_contours  # noqa: E402

CASE_A = ["--student", "tanh", "--teacher", "sin", "--alpha0", "20", "--beta", "1", "--lam", "1/10"]


def _gids(fig) -> set:
    out = set()
    for ax in fig.axes:
        for a in ax.get_children():
            if a.get_gid():
                out.add(a.get_gid())
    return out


@pytest.fixture
def kept(monkeypatch):
    """The figures the code closes, kept open for inspection."""
    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    return figs


def _field():
    xs, ys = np.geomspace(0.5, 5, 7), np.geomspace(0.3, 8, 6)
    z = 0.03 + 0.05 / (1 + xs[:, None]) + 0.01 * np.log(ys[None, :]) ** 2
    return xs, ys, z, 1e-14 * z


def test_heatmap_structure():
    xs, ys, z, e = _field()
    e[0, 0] = 1.0                                           # one point whose error exceeds the tolerance
    ov = [Overlay("eta-star-lower", "eta*", y=(2.3,), yerr=(0.01,), kind="hline"),
          grid_argmin(xs, ys, z, e, name="eta")]
    fig = heatmap(None, xs, ys, z, e, names=["alpha", "eta"], quantity="test_error", tol="1e-10", contours=5,
                  fixed={"lam": "1/10", "alpha0": "20"}, student="tanh", teacher="sin", overlays=ov)
    ax, cax = fig.axes                                      # the data and the colour bar
    assert cax.get_ylabel().startswith(r"test error $\varepsilon_g$") and "units" in cax.get_ylabel()
    assert (ax.get_xlabel(), ax.get_ylabel()) == (r"$\alpha$", r"$\tilde\eta$")
    assert ax.get_xscale() == ax.get_yscale() == "log"      # both grids geometric
    title = fig._suptitle.get_text()
    assert "tanh / sin" in title and r"$\alpha_0=20$" in title and r"$\lambda=1/10$" in title
    assert title.index("alpha_0") < title.index("lambda")   # the papers' order, not the order given
    assert {"heatmap", "contours", "error-mask", "overlay:eta-star-lower", "overlay:eta-star-lower:error",
            "overlay:argmin"} <= _gids(fig)
    assert not tick_overlaps(fig)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "eta*" in labels and any("error >" in t for t in labels)
    plt.close(fig)


def test_heatmap_linear_grid_and_no_mask():
    xs, ys = np.linspace(1, 3, 5), np.linspace(0, 1, 4)
    z = xs[:, None] + ys[None, :]
    fig = heatmap(None, xs, ys, z, 0 * z, names=["beta", "lam"], quantity="r", tol=1e-3)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "linear"
    assert "error-mask" not in _gids(fig) and "contours" not in _gids(fig) and not fig.legends
    # the cells are centred on the grid's points: the first edge half a step below the first point
    assert ax.get_xlim() == pytest.approx((0.75, 3.25))
    plt.close(fig)


def test_curve_band_only_where_visible():
    x = np.linspace(0.5, 4, 8)
    y = 0.05 / (1 + x)
    fig = curve(None, x, y, 1e-14 * y, name="alpha", quantity="test_error",
                overlays=[Overlay("best-linear", "lin", y=(0.06,), yerr=(1e-17,), kind="hline")])
    assert "curve:error" not in _gids(fig) and "errors" in fig._suptitle.get_text()   # invisible: said, not drawn
    assert {"curve", "overlay:best-linear"} <= _gids(fig)
    plt.close(fig)
    fig = curve(None, x, y, 0.1 * y, name="alpha", quantity="test_error")
    assert "curve:error" in _gids(fig) and fig.axes[0].get_xscale() == "linear"
    plt.close(fig)


def test_log_ticks_never_collide():
    """The issue's measured defect: a log axis over about one decade labelled at every minor tick."""
    for lo, hi in ((0.2, 3), (1e-3, 10), (1e-6, 1e3)):
        x = np.geomspace(lo, hi, 12)
        fig = curve(None, x, np.sin(x), 0 * x, name="lam", quantity="m1", width=3.4)
        assert fig.axes[0].get_xscale() == "log" and not tick_overlaps(fig), (lo, hi, tick_overlaps(fig))
        plt.close(fig)


def test_grid_argmin_brackets_the_true_argmin():
    """On y = (t - t*)^2 over a grid, the true argmin t* lies within every reported error bar."""
    ys = np.linspace(0, 10, 41)
    stars = [2.1, 4.9, 7.33]
    z = np.array([(ys - s) ** 2 for s in stars])
    o = grid_argmin([1, 2, 3], ys, z, 1e-12 + 0 * z, name="eta")
    for s, y, lo, hi in zip(stars, o.y, *o.yerr):
        assert y - lo < s < y + hi
    edge = grid_argmin([1], ys, np.array([ys]), 0 * ys[None, :], name="eta")   # minimum at the grid's edge
    assert edge.x == ()
    # values within their errors of the minimum widen the bracket to them: the true argmin 5.1 is inside
    z = (ys[None, :] - 5.1) ** 2
    tied = grid_argmin([1], ys, z, 0.2 + 0 * z, name="eta")
    lo, hi = tied.y[0] - tied.yerr[0][0], tied.y[0] + tied.yerr[1][0]
    assert lo < 5.1 < hi and (lo, hi) == pytest.approx((4.25, 5.75))     # z <= 0.41 from 4.5 to 5.5, one step more


def test_parse_contours():
    assert parse_contours("7") == 7 and parse_contours("1/20,0.06") == [0.05, 0.06]
    for bad in ("x", "0", "41", "0.1,0.1", "nan", "1,inf", ""):
        with pytest.raises(InvalidParameterError, match="--contours"):
            parse_contours(bad)


def test_file_types_by_suffix(tmp_path):
    xs, ys, z, e = _field()
    path = tmp_path / "h.pdf"                                # the PNG: test_cli_sweep_heatmap
    assert heatmap(path, xs[:3], ys[:3], z[:3, :3], e[:3, :3], names=["alpha", "eta"], quantity="m1") == str(path)
    assert path.read_bytes()[:4] == b"%PDF"
    path = tmp_path / "c.svg"
    assert curve(path, xs, z[:, 0], e[:, 0], name="alpha", quantity="m1") == str(path)
    assert b"<svg" in path.read_bytes()[:1000]


def test_cli_sweep_heatmap(tmp_path, kept, capsys):
    path = tmp_path / "h.png"
    from onestep_theory.srf import bounds

    assert main(["sweep", "test_error", "--over", "alpha=0.5:4:3,eta=1:6:3", *CASE_A, "--plot", str(path),
                 "--contours", "3", "--tol", "1e-30", "--with", "argmin,eta-star", "--dpi", "60"]) == 0
    assert path.read_bytes()[:4] == b"\x89PNG"
    fig = kept[-1]
    assert len(fig.axes) == 2 and {"error-mask", "contours", "overlay:argmin"} <= _gids(fig)
    b = bounds("tanh", "sin", alpha0="20", optimize_eta=True)            # (28) at case A's alpha0
    for which in ("lower", "upper"):
        line = next(a for a in fig.axes[0].get_lines() if a.get_gid() == f"overlay:eta-star-{which}")
        assert line.get_ydata()[0] == pytest.approx(float(getattr(b, f"eta_{which}")), abs=1e-9)
    assert r"$\Delta=0$" in fig._suptitle.get_text()                   # the default noise, stated
    assert r"$\alpha_0=20$" in fig._suptitle.get_text() and r"$\beta=1$" in fig._suptitle.get_text()
    capsys.readouterr()


def test_cli_sweep_curve_with_formula_and_metadata(tmp_path, kept, capsys):
    from PIL import Image

    path = tmp_path / "f.png"
    argv = ["sweep", "m1", "--over", "lam=1/10:10:5", "--phi", "1", "--psi", "2", "--student", "tanh", "--formula",
            "m1 + lam/100", "--plot", str(path), "--dpi", "60"]
    assert main(argv) == 0
    fig = kept[-1]
    assert {"curve", "overlay:formula"} <= _gids(fig) and fig.axes[0].get_xscale() == "log"
    assert fig.axes[0].get_xlabel() == r"$\lambda$" and r"$\phi=1$" in fig._suptitle.get_text()
    info = Image.open(path).info
    assert info["Description"].startswith("onestep-theory sweep m1") and info["Creator"].startswith("onestep_theory")
    capsys.readouterr()


def test_cli_srf_curve_overlays(tmp_path, kept, capsys):
    from onestep_theory.study import ResultStore

    store = tmp_path / "s.sqlite"
    sims = {"2": [0.0330, 0.0350, 0.0340], "3": [0.0310, 0.0330]}
    with ResultStore(store) as st:
        for a, vals in sims.items():
            params = {"alpha": float(a), "alpha0": 20.0, "beta": 1.0, "eta": 3.0, "lam": 0.1, "student": "tanh",
                      "teacher": "sin", "root_seed": 0}
            for k, v in enumerate(vals):
                st.put("giant-step", params, 250, k, {"test_error": v}, 0.1)
            st.put("giant-step", params, 125, 0, {"test_error": 1.0}, 0.1)     # a smaller d: not the point shown
    path = tmp_path / "c.png"
    assert main(["srf-curve", *CASE_A, "--eta", "3", "--alphas", "1,2,3", "--plot", str(path),
                 "--with", f"best-linear,bounds,study:{store}", "--dpi", "60"]) == 0
    fig = kept[-1]
    assert {"curve", "overlay:best-linear", "overlay:bound-lower", "overlay:bound-upper",
            "overlay:study:giant-step"} <= _gids(fig)
    ax = fig.axes[0]
    assert ax.get_xlabel() == r"$\alpha$" and ax.get_ylabel().startswith("test error")
    pts = next(a for a in ax.get_lines() if a.get_gid() == "overlay:study:giant-step")
    assert list(pts.get_xdata()) == [2.0, 3.0]
    assert list(pts.get_ydata()) == pytest.approx([np.mean(v) for v in sims.values()], rel=1e-12)
    bars = [c for c in ax.collections if c.get_gid() == "overlay:study:giant-step:error"][0]
    half = [abs(s[1, 1] - s[0, 1]) / 2 for s in bars.get_segments()]
    want = [2 * np.std(v, ddof=1) / math.sqrt(len(v)) for v in sims.values()]
    assert half == pytest.approx(want, rel=1e-9)
    assert r"$\tilde\eta=3$" in fig._suptitle.get_text() and not tick_overlaps(fig)
    capsys.readouterr()


def test_cli_curve_over_eta_bounds_and_row_norms(tmp_path, kept, capsys):
    """Along eta the bounds are curves (one value per eta, each the bound at that eta), and the row-norm overlay is
    the corrected theory at each point; a one-point range is stated in the title."""
    from onestep_theory.srf import bounds, srf_solve

    assert main(["srf-curve", *CASE_A, "--alpha", "3", "--sweep", "eta", "--values", "1,2", "--plot",
                 str(tmp_path / "e.png"), "--with", "bounds,row-norms", "--dpi", "60"]) == 0
    lines = {a.get_gid(): a for a in kept[-1].axes[0].get_lines()}
    low = [float(bounds("tanh", "sin", alpha0="20", eta=e).lower) for e in ("1", "2")]
    assert list(lines["overlay:bound-lower"].get_ydata()) == pytest.approx(low, rel=1e-9)
    rn = [float(srf_solve("tanh", "sin", alpha=3, beta=1, lam="1/10", alpha0=20, eta=e, row_norms=True).test_error)
          for e in ("1", "2")]
    assert list(lines["overlay:row-norms"].get_ydata()) == pytest.approx(rn, rel=1e-9)
    assert list(lines["curve"].get_xdata()) == [1.0, 2.0]
    # alpha0 = inf is the curve's limit, drawn as a line (no axis holds it)
    assert main(["srf-curve", *CASE_A[:4], "--eta", "3", "--alpha", "3", "--sweep", "alpha0", "--values", "10,100,inf",
                 "--plot", str(tmp_path / "i.png"), "--dpi", "60"]) == 0
    lines = {a.get_gid(): a for a in kept[-1].axes[0].get_lines()}
    assert list(lines["curve"].get_xdata()) == [10.0, 100.0] and "overlay:limit0" in lines
    assert lines["overlay:limit0"].get_ydata()[0] == pytest.approx(
        float(srf_solve("tanh", "sin", alpha=3, beta=1, lam="1/10", alpha0="inf", eta=3).test_error), rel=1e-9)
    capsys.readouterr()


@pytest.mark.parametrize("argv, flag", [
    (["sweep", "test_error", "--over", "alpha=1:2:2,eta=1:2:2", "--plot", "x.png", "--contours", "lots"], "--contours"),
    (["sweep", "test_error", "--over", "alpha=1:2:2,eta=1:2:2", "--plot", "x.png", "--with", "spike"], "--with"),
    (["sweep", "test_error", "--over", "alpha=1:2:2,eta=1:2:2,lam=1:2:2", "--plot", "x.png"], "--plot"),
    (["sweep", "test_error", "--over", "alpha=1:2:3", "--plot", "x.png", "--contours", "4"], "--contours"),
    (["sweep", "test_error", "--over", "alpha=1:2:2,eta=1:2:2", "--contours", "4"], "--plot"),
    (["sweep", "test_error", "--over", "alpha=1:2:2,eta=1:2:2", "--plot", "x.png", "--tol", "-1"], "--tol"),
    (["sweep", "test_error", "--over", "alpha=1:2:2,eta=1:2:2", "--plot", "x.png", "--width", "0.1"], "--width"),
    (["sweep", "test_error", "--over", "alpha=1:2:2,eta=1:2:2", "--plot", "x.png", "--width", "20", "--dpi", "1200"],
     "--dpi"),
    (["srf-curve", "--eta", "3", "--alphas", "1,2", "--plot", "x.png", "--with", "bounds,nope"], "--with"),
    (["srf-curve", "--eta", "3", "--alphas", "1,2", "--with", "bounds"], "--with"),
    (["srf-curve", "--eta", "3", "--alphas", "1,2", "--plot", "x.png", "--with", "row-norms", "--row-norms"], "--with"),
    (["srf-curve", "--eta", "3", "--alphas", "1,2", "--plot", "x.png", "--with", "study:/nonexistent.sqlite"],
     "--with"),
])
def test_bad_figure_options_are_one_line(argv, flag, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([*argv, *CASE_A]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and flag in err, err
    assert not (tmp_path / "x.png").exists()


def test_style_is_a_paper_column():
    assert figures.WIDTH == 3.4 and figures.STYLE["font.size"] == 8 and figures.STYLE["mathtext.fontset"] == "stix"
