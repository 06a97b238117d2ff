"""Lazy attributes of a package (PEP 562): ``import onestep_theory`` loads no theory until a name is used.

A package lists its public names and the submodule that holds each (:func:`lazy_exports`); the first access of a
name imports that submodule and caches the value in the package, so later accesses cost nothing.  A submodule name
(``onestep_theory.srf``) is imported on first access too.  This keeps ``onestep-theory --help`` and
``import onestep_theory`` free of SymPy, SciPy and the solvers (issue 23, ``benchmarks/bench_startup.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package: str, table: dict):
    """``(__getattr__, __dir__)`` for the package ``package`` whose public ``name`` lives in ``table[name]`` (a
    relative module, e.g. ``".srf"``)."""

    def __getattr__(name):
        mod = table.get(name)
        if mod is not None:
            value = getattr(importlib.import_module(mod, package), name)
        elif importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f".{name}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
