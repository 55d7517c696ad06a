"""Adaptive control of an arm whose inertial parameters are unknown (docs/adaptive.md).

One interface (:class:`Controller`: state in, τ and Θ̂ out, ``reset``); Slotine–Li with
the Euclidean gradient law, the natural log-det law on pseudo-inertias, the uniformly
projected natural law, computed torque on a fixed estimate; one closed-loop run with
the live quantities (:func:`run_adaptive`).
"""

from robot_tv_dynamics.control.computed_torque import ComputedTorqueOnEstimate
from robot_tv_dynamics.control.interface import Controller, ControlOutput, ControlState
from robot_tv_dynamics.control.natural import (
    SlotineLiNatural,
    SlotineLiProjected,
    gradient_matrix,
    log_det_divergence,
    natural_step,
)
from robot_tv_dynamics.control.run import AdaptiveRun, persistent_reference, run_adaptive
from robot_tv_dynamics.control.slotine_li import SlotineLiCore, SlotineLiGradient

__all__ = ["AdaptiveRun", "ComputedTorqueOnEstimate", "ControlOutput", "ControlState",
           "Controller", "SlotineLiCore", "SlotineLiGradient", "SlotineLiNatural",
           "SlotineLiProjected", "gradient_matrix", "log_det_divergence", "natural_step",
           "persistent_reference", "run_adaptive"]
