"""Finite-size numpy simulation of every theory quantity (docs/theory/spike-theory.md §9,
docs/theory/srf-theory.md §10).

==========================  ===========================================================  ==========================
function                    what it simulates                                            docs/theory
==========================  ===========================================================  ==========================
:func:`sim_resolvent`       traces m1, m2 and their λ-derivatives of the RF resolvent     docs/theory/spike-theory.md §9.4
:func:`sim_spikes`          one-step network (protocol A): training/test gains            docs/theory/spike-theory.md §9.2
:func:`sim_spike_model`     Gaussian-equivalent spike model (protocol B, limit/finite)    docs/theory/spike-theory.md §9.3
:func:`sim_giant_step`      one giant step, ridge on fresh data, measured r, c, γ         docs/theory/srf-theory.md §10.2
:func:`sim_srf`             direct spiked-random-features ridge, order parameters         docs/theory/srf-theory.md §10.1
:func:`sim_spectrum`        eigenvalues of ΦᵀΦ/p, top (mean) spike, Stieltjes transform   docs/theory/srf-theory.md §10.3
:func:`sim_ablation`        the network and paired variants of its trained first layer    docs/studies/mechanism.md
==========================  ===========================================================  ==========================
"""

from .base import Ridge, SimulationResult, Stat, available_memory, check_memory, sizes_spike, sizes_srf, spawn
from .spikes import sim_resolvent, sim_spike_model, sim_spikes
from .srf import empirical_spectrum, sample_bulks, sim_giant_step, sim_spectrum, sim_srf
from .ablation import sim_ablation

__all__ = ["Ridge", "SimulationResult", "Stat", "available_memory", "check_memory", "sizes_spike", "sizes_srf", "spawn",
           "sim_resolvent", "sim_spike_model", "sim_spikes", "empirical_spectrum", "sim_giant_step", "sim_spectrum",
           "sim_srf", "sample_bulks", "sim_ablation"]
