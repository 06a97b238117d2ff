"""matplotlib, optional: the one place that imports it (the ``plot`` extra), with the file-only Agg backend."""

from __future__ import annotations

__all__ = ["plotting"]


def plotting():
    """matplotlib.pyplot with the Agg backend, or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        return None
