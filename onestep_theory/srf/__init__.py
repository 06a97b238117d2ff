"""Spiked random-features theory [CPDKLZL24, DPCKLL24, BES+22] (docs/theory/srf-theory.md): the network → sRF
mapping, conditional Gaussian equivalence, the saddle point and test error, bounds and the feature spectrum.

The theory lives in rooms (sub-packages), each named by what it holds and citing its sections of
docs/theory/srf-theory.md; imports go one way, from bottom to top: a room imports only rooms of a lower level, rooms
of one level are independent (checked by tests/test_house.py).

============  =====  =====================================================================  ==================
room          level  what it holds                                                          sections
============  =====  =====================================================================  ==================
``features``  1      (r, c, γ) of Result 3.1, row norms, cGE (15), smoothing, κ-rules, the  §2, §3, §4.2, §4.11
                     measured network map
``loss``      1      readout losses, proximal operators, entry checks of a user loss        §4.9, §13
``single``    2      the single-group saddle point: map, solvers, errors, sweeps            §4, §5
``spectral``  2      the feature spectrum: Stieltjes transform, density, edges, mean spike  §7, §7.1
``optimal``   3      bounds (26)–(31), η̃* and bias optima, the trainable bias, τ*, κ*       §6, §9, §4.9
``grouped``   4      readouts, the K-group saddle point, its bounds and spectrum            §8, §8.1
============  =====  =====================================================================  ==================

The public names below are those of the rooms.  The module paths before the rooms (``onestep_theory.srf.kgroup``,
…) still import, for one release, through one mechanism: the table ``MOVED`` and its import hook ``_OldPaths``,
with a :class:`DeprecationWarning` naming the new path.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

from ..core.lazy import lazy_exports

#: Public name -> its room, loaded on first use (``onestep-theory srf`` loads features, loss and single only).
_LAZY = {
    **dict.fromkeys(("CGEValues", "NonOddWarning", "SRFParams", "SRFSetup", "cge_arb", "cge_coeffs", "cge_symbolic",
                     "cge_values", "resolve_rcg", "smooth", "smooth_arb", "smoothing_closed_form", "srf_params",
                     "srf_params_checked", "srf_setup"), ".features"),
    **dict.fromkeys(("GroupBounds", "GroupSolution", "Readout", "d3_special_case", "group_bounds",
                     "group_mean_spikes", "group_params", "readout", "srf_groups"), ".grouped"),
    **dict.fromkeys(("Bounds", "best_linear", "bounds"), ".optimal"),
    **dict.fromkeys(("HATS", "ORDER", "SRFOptions", "SRFSolution", "empirical_from_weights", "from_trained",
                     "mp_integrals", "mp_integrals_quad", "srf_curve", "srf_solve", "srf_sweep"), ".single"),
    **dict.fromkeys(("Spectrum", "density", "mean_spike", "spectrum", "stieltjes"), ".spectral"),
}
_public, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = ["GroupBounds", "d3_special_case", "group_bounds", "group_mean_spikes", "GroupSolution", "srf_groups",
           "Readout", "group_params", "readout", "Bounds", "best_linear", "bounds", "CGEValues", "cge_arb",
           "cge_coeffs", "cge_symbolic", "cge_values", "SRFSetup", "srf_setup", "NonOddWarning", "SRFParams",
           "resolve_rcg", "srf_params", "srf_params_checked", "empirical_from_weights", "from_trained", "mp_integrals",
           "mp_integrals_quad", "HATS", "ORDER", "smooth", "smooth_arb", "smoothing_closed_form", "SRFSolution",
           "SRFOptions", "srf_solve", "Spectrum", "density", "mean_spike", "spectrum", "stieltjes", "srf_curve",
           "srf_sweep"]

#: Each module of the flat srf/ before the rooms (issue 33) → the room that holds it now.  The old path
#: ``onestep_theory.srf.<module>`` imports the module ``onestep_theory.srf.<room>.<module>`` (the same object)
#: with a DeprecationWarning; it will be removed in the release after 0.2.
MOVED = {
    **dict.fromkeys(("mapping", "network_map", "smoothing", "cge", "kappa"), "features"),
    **dict.fromkeys(("losscheck", "losses"), "loss"),
    **dict.fromkeys(("channel", "priors", "saddle", "solvers", "solution", "solve", "sweep"), "single"),
    **dict.fromkeys(("realaxis", "realdensity", "spectrum"), "spectral"),
    **dict.fromkeys(("boundrule", "bounds", "optimize", "taustar", "bias"), "optimal"),
    **dict.fromkeys(("readout", "groupchannel", "groupprior", "kgroup", "finitew", "groups", "groupbounds",
                     "groupspectrum"), "grouped"),
}


def _warn_moved(old: str, new: str) -> None:
    """The DeprecationWarning of an old path, attributed to the first frame outside the import system (the
    frames of ``importlib._bootstrap`` are skipped by :func:`warnings.warn` itself, uncounted)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and (frame.f_globals.get("__name__", "").partition(".")[0] == "importlib"
                                 or frame.f_globals.get("__name__") == __name__):
        if "_bootstrap" not in frame.f_code.co_filename:
            level += 1
        frame = frame.f_back
    warnings.warn(f"{old} moved to {new} (issue 33); the old path will be removed in the next release",
                  DeprecationWarning, stacklevel=level)


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import hook of :data:`MOVED`: ``import onestep_theory.srf.kgroup`` gives the module
    ``onestep_theory.srf.grouped.kgroup`` itself (monkeypatching either name patches the one module)."""

    def find_spec(self, fullname, path=None, target=None):
        parent, _, name = fullname.rpartition(".")
        if parent != __name__ or name not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        name = spec.name.rpartition(".")[2]
        new = f"{__name__}.{MOVED[name]}.{name}"
        _warn_moved(spec.name, new)
        module = importlib.import_module(new)
        self.specs = {**getattr(self, "specs", {}), new: module.__spec__}
        return module

    def exec_module(self, module):
        module.__spec__ = self.specs[module.__name__]      # the import system gave it the old path's spec


class _Package(types.ModuleType):
    """This package: an old path imported as a submodule never replaces a public name of the same spelling
    (``bounds``, ``spectrum``, ``readout`` stay the functions)."""

    def __setattr__(self, name, value):
        if name in MOVED and isinstance(value, types.ModuleType) and (name in vars(self) or name in _LAZY):
            return
        super().__setattr__(name, value)


def __getattr__(name):
    """A public name, loaded on first use; ``onestep_theory.srf.kgroup`` as an attribute: the moved module, with the
    DeprecationWarning."""
    if name in MOVED and name not in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    return _public(name)


sys.modules[__name__].__class__ = _Package
if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
    sys.meta_path.append(_OldPaths())
