"""Readout losses (level 1 of the srf rooms, bottom, beside ``features``): the convex losses of the readout, their
proximal operators and Moreau envelopes (docs/theory/srf-theory.md §4.9), and the entry checks a user loss must pass
(§13).

Imports nothing else from srf. Public names: ``Loss``, ``loss``, ``LOSSES`` (``losses``); ``check_loss``,
``check_teacher`` (``losscheck``).
"""

from .losscheck import check_loss, check_teacher
from .losses import LOSSES, Loss, loss

__all__ = ["Loss", "loss", "LOSSES", "check_loss", "check_teacher"]
