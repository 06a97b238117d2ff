"""The worked notebook docs/examples/checking.ipynb runs top to bottom (docs/theory/checking.md §6).

Executed cell by cell in one namespace (the notebook's code cells are plain Python; no kernel is needed), with
matplotlib's file backend; every cell must run without an error and the checks must reach their known verdicts.
"""

import json
import pathlib

import pytest

NOTEBOOK = pathlib.Path(__file__).resolve().parents[1] / "docs" / "examples" / "checking.ipynb"


@pytest.mark.slow
def test_worked_notebook_executes(check_rendered):
    pytest.importorskip("matplotlib")
    nb = json.loads(NOTEBOOK.read_text())
    assert nb["nbformat"] == 4
    import matplotlib

    matplotlib.use("Agg")                       # the kernel's inline backend, as files
    shown = []
    ns = {"__name__": "__notebook__", "display": shown.append}     # `display` is a builtin of Jupyter kernels
    for i, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        src = "".join(cell["source"])
        try:
            exec(compile(src, f"{NOTEBOOK.name}[{i}]", "exec"), ns)
        except Exception as exc:  # noqa: BLE001 - name the failing cell
            raise AssertionError(f"cell {i} failed: {type(exc).__name__}: {exc}\n{src}") from exc
    assert ns["r"].verdict.startswith("differs")                      # c_v1 against the package's c
    # cell 8's simulation decides: the package's c within 3 standard errors at both points, c_v1 rejected at both
    assert all(abs(s["z_quantity"]) < 3 and abs(s["z_formula"]) > 4 for s in ns["r"].simulation), ns["r"].simulation
    assert len(ns["curve"]) == 8 and ns["g"]._repr_latex_().startswith("$")
    assert [type(o).__name__ for o in shown] == ["Figure"]            # the learning curve is shown
    # what Jupyter renders: the HTML of every result shown, with math for the closed forms and errors beside values
    for obj in (ns["g"], ns["r"], ns["curve"]):
        check_rendered(obj._repr_html_())
    assert ns["g"]._repr_html_().count("$") >= 6 and "delta_3" in ns["g"]._repr_html_()

