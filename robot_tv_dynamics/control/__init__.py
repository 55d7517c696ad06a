"""Adaptive control of an arm whose inertial parameters are unknown (docs/adaptive.md).

One interface (:class:`Controller`: state in, τ and Θ̂ out, ``reset``; it lives with the
simulated arm and its loop in :mod:`robot_tv_dynamics.simulation`, as does the
computed-torque law on a fixed estimate, re-exported here); Slotine–Li with
the Euclidean gradient law, the natural log-det law on pseudo-inertias, the uniformly
projected natural law; one closed-loop run with
the live quantities (:func:`run_adaptive`); each law's gain from one adaptation time
(:func:`matched_gains`) and the part of a parameter the torques do not show
(:func:`unobservable_fraction`).
"""

from robot_tv_dynamics.control.gains import (
    AdaptationGains,
    excitation_matrix,
    matched_gains,
    unobservable_fraction,
)
from robot_tv_dynamics.control.natural import (
    SlotineLiNatural,
    SlotineLiProjected,
    band_budget,
    gradient_matrix,
    log_det_divergence,
    natural_step,
)
from robot_tv_dynamics.control.run import AdaptiveRun, persistent_reference, run_adaptive
from robot_tv_dynamics.control.slotine_li import SlotineLiCore, SlotineLiGradient
from robot_tv_dynamics.simulation.control import ComputedTorqueOnEstimate
from robot_tv_dynamics.simulation.interface import Controller, ControlOutput, ControlState

__all__ = ["AdaptationGains", "AdaptiveRun", "ComputedTorqueOnEstimate", "ControlOutput",
           "ControlState", "Controller", "SlotineLiCore", "SlotineLiGradient",
           "SlotineLiNatural", "SlotineLiProjected", "band_budget", "excitation_matrix",
           "gradient_matrix", "log_det_divergence", "matched_gains", "natural_step",
           "persistent_reference", "run_adaptive", "unobservable_fraction"]
