"""Generalized-momentum observer for arms with time-dependent inertia.

- :mod:`.momentum`: p = ∂L/∂q̇ of eq. (30) with the Ψ coupling, and β = ∂L/∂q of its
  balance ṗ = τ + τ_ext + β (by contraction, the reference, and by two RNEA passes,
  :class:`MomentumEvaluator`);
- :mod:`.observer`: the discrete first-order observer r ≈ τ_ext (generalized or
  classical);
- :mod:`.contact`: contact detection with per-joint or norm thresholds and hysteresis;
- :mod:`.live`: the observers of a live node, one joint sample at a time (friction,
  generalized and/or classical, contact detection, the status contents of
  ``dynamics_node``);
- :mod:`.wrench`: J_cᵀF of an external wrench on a link (to simulate a collision);
- :mod:`.replay`: a rosbag2 → the observer (``robot-tv-dynamics observe``,
  :mod:`robot_tv_dynamics.cli.observe`); joint friction is :mod:`robot_tv_dynamics.friction`.

docs/observer.md explains the derivation and how to choose K_O and the threshold.
"""

from robot_tv_dynamics.observer.contact import ContactDetector, ContactEvent
from robot_tv_dynamics.observer.live import OBSERVER_MODELS, LiveObservers, ObserverStatus
from robot_tv_dynamics.observer.momentum import (
    MomentumEvaluator,
    MomentumTerms,
    generalized_momentum,
    momentum_balance,
    momentum_terms,
)
from robot_tv_dynamics.observer.observer import MomentumObserver, ObserverConfig, ObserverLoads
from robot_tv_dynamics.observer.wrench import ExternalWrench, wrench_joint_torque

__all__ = [
    "OBSERVER_MODELS",
    "ContactDetector",
    "ContactEvent",
    "ExternalWrench",
    "LiveObservers",
    "MomentumEvaluator",
    "MomentumObserver",
    "MomentumTerms",
    "ObserverConfig",
    "ObserverLoads",
    "ObserverStatus",
    "generalized_momentum",
    "momentum_balance",
    "momentum_terms",
    "wrench_joint_torque",
]
