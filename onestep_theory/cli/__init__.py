"""Command line interface ``onestep-theory`` (docs in :mod:`onestep_theory.cli.main`)."""

from .main import build_parser, main

__all__ = ["main", "build_parser"]
