"""dynamics_node's parameters: their specs (descriptors, ranges) and the config dataclass.

:data:`PARAMETERS` is what the node declares (after the
:data:`~robot_tv_dynamics.ros.parameters.COMMON_PARAMETERS` every model node has);
:class:`DynamicsNodeConfig` is built from their values and handed to the parts of the
node. Every parameter is in docs/ros_interface.md, "Parameters", and config/tv_dynamics.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_tv_dynamics.ros import parameters
from robot_tv_dynamics.ros.cell_parameters import (
    EFFORT_PARAMETERS,
    JOINT_PARAMETERS,
    PAYLOAD_PARAMETERS,
)
from robot_tv_dynamics.ros.parameters import LIVE, START_UP, ParameterSpec
from robot_tv_dynamics.ros.stamped_topics import legacy_parameter

#: Why the settings of the Jacobian-extremes search are read-only.
EXTREMES_NOTE = "read at start-up (the Jacobian extremes are found once): restart the node"
#: Why observer_model is read-only.
OBSERVER_NOTE = "read at start-up (it decides the observers' topics): restart the node"

#: The node's parameters, in declaration order.
PARAMETERS = parameters.COMMON_PARAMETERS + (
    ParameterSpec(
        "acceleration_cutoff", 20.0,
        "corner frequency of the critically damped 2nd-order filter that differentiates "
        "q̇ into q̈ when no reference covers a sample (delay 1/(pi f_c))", "Hz", 0.1, 1000.0,
        runtime=LIVE, note="the q̈ filter restarts"),
    ParameterSpec(
        "theta_rate_cutoff", 5.0,
        "corner frequency of the filter that differentiates Θ into Θ̇ when "
        "inertial_parameter_rates is not being published", "Hz", 0.01, 1000.0,
        runtime=START_UP),
    ParameterSpec(
        "max_gap", 0.5,
        "a gap between samples longer than this restarts the differentiating filters",
        "s", 1e-3, 3600.0,
        runtime=START_UP),
    ParameterSpec(
        "rate_timeout", 0.5,
        "inertial_parameter_rates / psi / psi_rates older than this are stale: Θ̇ falls back "
        "to filtered differences, Ψ and Ψ̇ to zero; 0 = never stale", "s", 0.0, 3600.0,
        runtime=START_UP),
    ParameterSpec(
        "theta_window", 0.05,
        "a joint sample waits at most this long (joint-sample time) for a stamped Θ / Ψ at "
        "or after its stamp (inertial_parameters_stamped, psi_stamped), then is answered "
        "with the held value and counted late in the 'theta pairing' status; 0 never waits",
        "s", 0.0, 1.0,
        runtime=START_UP),
    ParameterSpec(
        "reference_tolerance", 0.0,
        "a sample up to this long before the first or after the last reference point "
        "still takes q̈ from the reference (end value held)", "s", 0.0, 10.0,
        runtime=START_UP),
    ParameterSpec(
        "joint_states_depth", 100,
        "queue depth of the joint_states subscription, and of inertial_parameters, "
        "inertial_parameter_rates, psi and psi_rates (so that a backlog of samples meets "
        "the Θ that arrived with it) and of the per-sample outputs (τ, terms, bounds, "
        "contacts: a reader that lags behind a burst still gets every answer)", "", 1, 10000,
        runtime=START_UP, note=parameters.QOS_NOTE),
    ParameterSpec(
        "joint_states_reliable", False,
        "subscribe joint_states RELIABLE (then best-effort publishers do not match); "
        "default BEST_EFFORT, which matches both",
        runtime=START_UP, note=parameters.QOS_NOTE),
    ParameterSpec(
        "publish_terms", True,
        "publish generalized_terms (computed only while it has subscribers)",
        runtime=LIVE),
    ParameterSpec(
        "publish_bounds", True,
        "publish mass_matrix_bounds (computed only while it has subscribers)",
        runtime=LIVE),
    ParameterSpec(
        "bounds_decimation", 1,
        "publish mass_matrix_bounds on every k-th answered sample", "", 1, 100000,
        runtime=LIVE),
    ParameterSpec(
        "cache_dir", "auto",
        "directory of the on-disk bounds cache (Jacobian extremes keyed by the URDF hash and "
        "the search settings); auto: $XDG_CACHE_HOME/robot_tv_dynamics, else "
        "~/.cache/robot_tv_dynamics; empty disables the cache",
        runtime=START_UP, note=EXTREMES_NOTE),
    ParameterSpec(
        "certified_bounds", False,
        "compute certified brackets of the Jacobian extremes (branch and bound) instead of "
        "sampled estimates",
        runtime=START_UP, note=EXTREMES_NOTE),
    ParameterSpec(
        "bounds_time_limit", 60.0,
        "time limit of the Jacobian-extremes search at start-up", "s", 0.1, 86400.0,
        runtime=START_UP, note=EXTREMES_NOTE),
    ParameterSpec(
        "jacobian_samples", 4096,
        "quasi-random configurations of the Jacobian-extremes search", "", 16, 10_000_000,
        runtime=START_UP, note=EXTREMES_NOTE),
    ParameterSpec(
        "effort_warn_ratio", 0.9,
        "planned_trajectory: the status is WARN when a joint's peak |tau|/tau_max reaches this",
        "", 0.0, 100.0,
        runtime=START_UP),
    ParameterSpec(
        "retime_effort_margin", 1.0,
        "retime_request: the retimed trajectory keeps |tau| within this fraction of each "
        "joint's effort limit", "", 0.01, 1.0,
        runtime=START_UP),
    ParameterSpec(
        "friction_file", "",
        "joint friction YAML (robot-tv-dynamics identify writes friction.yaml): when given, "
        "tau_f = viscous qd + coulomb tanh(qd/coulomb_velocity) + offset is added to "
        "generalized_torques and subtracted from measured efforts for the observer",
        runtime=START_UP),
    ParameterSpec(
        "observer_model", "generalized",
        "momentum observer on joint_states efforts: generalized (Theta(t), Psi(t) of eq. 39), "
        "classical (the Theta of the first sample, held), both, or off",
        runtime=START_UP, note=OBSERVER_NOTE),
    ParameterSpec(
        "observer_gain", 50.0,
        "K_O of the momentum observer; the residual follows tau_ext with the time constant "
        "1/K_O (docs/observer.md: choosing it against velocity noise)", "1/s", 0.1, 10000.0,
        runtime=START_UP),
    ParameterSpec(
        "contact_threshold", 5.0,
        "contact when |r_i| (contact_mode joint) or |r| (norm) exceeds this", "N·m",
        1e-6, 1e6,
        runtime=START_UP),
    ParameterSpec(
        "contact_release", 0.5,
        "a contact ends when the residual falls below this fraction of the threshold "
        "(hysteresis)", "", 0.01, 1.0,
        runtime=START_UP),
    ParameterSpec(
        "contact_mode", "joint", "contact test per joint (joint) or on the residual's norm",
        runtime=START_UP),
    ParameterSpec(
        "diagnostics_period", 1.0,
        "period of the node's own input status on /diagnostics", "s", 0.01, 3600.0,
        runtime=LIVE),
    legacy_parameter(
        "publish the unstamped Float64MultiArray generalized_terms and mass_matrix_bounds "
        "beside generalized_terms_stamped and mass_matrix_bounds_stamped"),
) + JOINT_PARAMETERS + EFFORT_PARAMETERS + PAYLOAD_PARAMETERS


@dataclass(frozen=True)
class DynamicsNodeConfig(parameters.CommonConfig):
    """The dynamics node's parameters (see ``PARAMETERS`` for meaning and units)."""

    acceleration_cutoff: float = 20.0
    theta_rate_cutoff: float = 5.0
    max_gap: float = 0.5
    rate_timeout: float = 0.5
    theta_window: float = 0.05
    reference_tolerance: float = 0.0
    joint_states_depth: int = 100
    joint_states_reliable: bool = False
    strict_joints: bool = False
    publish_terms: bool = True
    publish_bounds: bool = True
    bounds_decimation: int = 1
    cache_dir: str = "auto"
    certified_bounds: bool = False
    bounds_time_limit: float = 60.0
    jacobian_samples: int = 4096
    effort_warn_ratio: float = 0.9
    retime_effort_margin: float = 1.0
    friction_file: str = ""
    observer_model: str = "generalized"
    observer_gain: float = 50.0
    contact_threshold: float = 5.0
    contact_release: float = 0.5
    contact_mode: str = "joint"
    diagnostics_period: float = 1.0
    effort_preset: str = ""
    effort_gain: str = ""
    effort_offset: str = ""
    effort_sign: str = ""
    payload_frame: str = ""
    legacy_theta_topics: bool = True
