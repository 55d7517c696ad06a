"""estimator_node's parameters: their specs, the config dataclass, the core settings.

:data:`PARAMETERS` is what the node declares (after the
:data:`~robot_tv_dynamics.ros.parameters.COMMON_PARAMETERS` every model node has);
:class:`EstimatorNodeConfig` is built from their values; :func:`settings_from_config`
turns it into the core's :class:`~robot_tv_dynamics.estimation.LoadEstimatorSettings`,
and :func:`settings_values` reports the running estimator's settings on its status.
The estimator settings are applied at runtime by a new estimator (the estimate
restarts: :data:`ESTIMATOR_SETTINGS`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robot_tv_dynamics.estimation import ExcitationConfig, LoadEstimatorSettings
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros import parameters
from robot_tv_dynamics.ros.cell_parameters import (
    EFFORT_PARAMETERS,
    JOINT_PARAMETERS,
    PAYLOAD_PARAMETERS,
)
from robot_tv_dynamics.ros.parameters import LIVE, START_UP, ParameterSpec
from robot_tv_dynamics.ros.stamped_topics import legacy_parameter

#: What a set of the estimator's settings does besides the new value.
RESTART = "the estimate restarts from the base model (as ~/reset)"

PARAMETERS = parameters.COMMON_PARAMETERS + (
    ParameterSpec(
        "link", "",
        "URDF link carrying the load (estimated in its frame); empty = the last link of the "
        "chain (the body of the last revolute joint)",
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "method", "geometric",
        "classical (RLS with forgetting; the reported load is its projection onto bodies), "
        "projected (RLS on the load projected onto bodies that keep the margin) or geometric "
        "(EKF on the load's log-Cholesky parameters, a body by construction)",
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "friction_file", "",
        "friction YAML of the model's joints (identify's friction.yaml), subtracted from the "
        "measured efforts; empty = no friction",
        runtime=START_UP),
    ParameterSpec(
        "identification_summary", "",
        "summary.json of robot-tv-dynamics identify: the per-joint fit RMS of the identified "
        "model is each joint's noise level; when set, it replaces noise_std",
        runtime=START_UP),
    ParameterSpec(
        "noise_std", "0.5",
        "noise level of each joint's effort residual: one number for all joints, or one per "
        "joint, comma-separated; rows are weighted by 1/sigma^2 (ignored when "
        "identification_summary is set)", "N·m or N",
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "prior_mass_std", 1.0, "prior standard deviation of the load's mass", "kg",
        1e-9, 1e6,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "prior_moment_std", 0.1, "prior standard deviation of its first moment h = m c",
        "kg·m", 1e-9, 1e6,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "prior_inertia_std", 0.01, "prior standard deviation of its inertia entries",
        "kg·m²", 1e-9, 1e6,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "memory", 10.0,
        "time constant of the forgetting: lambda = exp(-dt/memory) per update", "s",
        1e-3, 1e6,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "huber", 2.5,
        "Huber k on the normalized innovations (rows beyond k sigma are down-weighted); 0 = "
        "plain least squares", "", 0.0, 1e6,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "false_alarm_rate", 1.0 / 600.0,
        "load-change detector (grasp, release): target rate of false changes per second of "
        "motion; its GLR threshold is the chi-square quantile of this rate (1/600: one per "
        "10 min); 0 = no detector", "1/s", 0.0, 4.9,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "change_confirm", 0.3,
        "a declared load change is confirmed (and reported) or withdrawn (the estimate put "
        "back) this long after it", "s", 1e-3, 60.0,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "margin_fraction", 0.25,
        "epsilon = margin_fraction x lambda_min(f(Phi_b)) of the load body's base share: the "
        "uniform band the projected and geometric estimates keep", "", 1e-6, 0.999,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "upper_factor", 5.0,
        "beta = upper_factor x lambda_max(f(Phi_b)) of the base share, reported in the "
        "status (key beta), not applied: the load filters keep no upper bound",
        "", 1.0, 1e6,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "offset_memory", 0.0,
        "time constant of each joint's estimated torque offset (forgotten as the load is, "
        "held at rest and while a load change or a contact is suspected): the offset "
        "takes the drifting sensor bias the load's first moment would; 0 = no offsets "
        "(10 = the load's memory)",
        "s", 0.0, 1e6,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "theta_walk", 0.0,
        "random-walk density of the log-Cholesky parameters (geometric)", "1/s", 0.0, 1e6,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "acceleration_cutoff", 20.0,
        "corner frequency of the filter that differentiates q̇ into q̈ (delay 1/(pi f_c); q, "
        "q̇ and the efforts are delayed by the same)", "Hz", 0.1, 1000.0,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "max_gap", 0.5, "a gap between samples longer than this restarts the q̈ filter", "s",
        1e-3, 3600.0,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "decimation", 1, "update the estimate on every k-th joint_states sample", "", 1, 10000,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "excitation_window", 200,
        "updates averaged by the excitation check", "", 1, 1_000_000,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "excitation_threshold", 1e-3,
        "lambda_min of the prior-normalized (m, h) information per update below which the "
        "estimate is held (poorly excited); 0 never holds", "", 0.0, 1e9,
        runtime=LIVE, note=RESTART),
    ParameterSpec(
        "converged_mass_std", 0.02,
        "the estimate is reported converged when the mass standard deviation is below this "
        "and the motion is excited", "kg", 0.0, 1e6,
        runtime=LIVE),
    ParameterSpec(
        "publish_period", 0.01,
        "publish the estimate at most this often (sample stamps); 0 = every update", "s",
        0.0, 3600.0,
        runtime=LIVE),
    ParameterSpec(
        "joint_states_depth", 100,
        "queue depth of the joint_states subscription and of the estimate's per-sample "
        "outputs (inertial_parameters_stamped and the legacy Θ topics)", "", 1, 10000,
        runtime=START_UP, note=parameters.QOS_NOTE),
    ParameterSpec(
        "joint_states_reliable", False,
        "subscribe joint_states RELIABLE (default BEST_EFFORT, which matches both)",
        runtime=START_UP, note=parameters.QOS_NOTE),
    ParameterSpec(
        "diagnostics_period", 1.0, "period of the node's status on /diagnostics", "s",
        0.01, 3600.0,
        runtime=LIVE),
    legacy_parameter(
        "publish the estimate unstamped on inertial_parameters / inertial_parameter_rates "
        "(Float64MultiArray) beside inertial_parameters_stamped"),
) + JOINT_PARAMETERS + EFFORT_PARAMETERS + PAYLOAD_PARAMETERS


#: The parameters that make a new estimator when set (the estimate restarts).
ESTIMATOR_SETTINGS = frozenset(spec.name for spec in PARAMETERS if spec.note == RESTART)


@dataclass(frozen=True)
class EstimatorNodeConfig(parameters.CommonConfig):
    """The estimator node's parameters (see ``PARAMETERS`` for meaning and units)."""

    link: str = ""
    method: str = "geometric"
    friction_file: str = ""
    identification_summary: str = ""
    noise_std: str = "0.5"
    prior_mass_std: float = 1.0
    prior_moment_std: float = 0.1
    prior_inertia_std: float = 0.01
    memory: float = 10.0
    huber: float = 2.5
    false_alarm_rate: float = 1.0 / 600.0
    change_confirm: float = 0.3
    margin_fraction: float = 0.25
    upper_factor: float = 5.0
    offset_memory: float = 0.0
    theta_walk: float = 0.0
    acceleration_cutoff: float = 20.0
    max_gap: float = 0.5
    decimation: int = 1
    excitation_window: int = 200
    excitation_threshold: float = 1e-3
    converged_mass_std: float = 0.02
    publish_period: float = 0.01
    joint_states_depth: int = 100
    joint_states_reliable: bool = False
    strict_joints: bool = False
    diagnostics_period: float = 1.0
    legacy_theta_topics: bool = True
    effort_preset: str = ""
    effort_gain: str = ""
    effort_offset: str = ""
    effort_sign: str = ""
    payload_frame: str = ""


def default_link(model: RobotModel) -> str:
    """The last link of the chain: the body of the last revolute (non-prismatic) joint."""
    prismatic = np.asarray(model.joint_limits.prismatic)
    bodies = [l for l in range(model.n_bodies) if not prismatic[l]] or [model.n_bodies - 1]
    return model.body_names[bodies[-1]]


def summary_noise(path: str, joint_names: list[str]) -> tuple[float, ...]:
    """Per-joint noise levels from an identification summary.json (fit RMS, identified).

    Raises:
        InvalidInputError: unreadable file, or joints missing from it.
    """
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
        rms = data["rms"]["identified"]["fit"]
        values = tuple(float(rms[name]) for name in joint_names)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InvalidInputError(
            "identification_summary", f'"{path}": no per-joint rms.identified.fit for the '
            f"joints {joint_names} ({type(error).__name__}: {error})") from None
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise InvalidInputError("identification_summary", f"fit RMS not all > 0: {values}")
    return values


def parse_noise(text: str) -> tuple[float, ...]:
    """The ``noise_std`` parameter: one number, or comma-separated numbers > 0.

    Raises:
        InvalidInputError: not numbers, or not all > 0.
    """
    try:
        values = tuple(float(item) for item in text.replace(" ", "").split(",") if item)
    except ValueError:
        raise InvalidInputError("noise_std", f'"{text}" is not comma-separated numbers') from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise InvalidInputError("noise_std", f'"{text}": need numbers > 0')
    return values


def settings_from_config(cfg: EstimatorNodeConfig, noise_std: tuple[float, ...]
                         ) -> LoadEstimatorSettings:
    """The core settings from the node's parameters."""
    return LoadEstimatorSettings(
        method=cfg.method, noise_std=noise_std,
        prior_std=(cfg.prior_mass_std, cfg.prior_moment_std, cfg.prior_inertia_std),
        memory=cfg.memory, huber=cfg.huber, false_alarm_rate=cfg.false_alarm_rate,
        change_confirm=cfg.change_confirm,
        margin_fraction=cfg.margin_fraction, upper_factor=cfg.upper_factor,
        theta_walk=cfg.theta_walk, offset_memory=cfg.offset_memory,
        acceleration_cutoff=cfg.acceleration_cutoff, max_gap=cfg.max_gap,
        decimation=cfg.decimation,
        excitation=ExcitationConfig(window=cfg.excitation_window,
                                    threshold=cfg.excitation_threshold))


def settings_values(settings: LoadEstimatorSettings) -> list[tuple[str, object]]:
    """The running estimator's settings as status key-values, named as the parameters."""
    return [("noise_std", ",".join(f"{v:g}" for v in settings.noise_std)),
            ("prior_mass_std", settings.prior_std[0]),
            ("prior_moment_std", settings.prior_std[1]),
            ("prior_inertia_std", settings.prior_std[2]),
            ("memory", settings.memory), ("huber", settings.huber),
            ("false_alarm_rate", settings.false_alarm_rate),
            ("change_confirm", settings.change_confirm),
            ("margin_fraction", settings.margin_fraction),
            ("upper_factor", settings.upper_factor), ("theta_walk", settings.theta_walk),
            ("offset_memory", settings.offset_memory),
            ("acceleration_cutoff", settings.acceleration_cutoff),
            ("max_gap", settings.max_gap), ("decimation", settings.decimation),
            ("excitation_window", settings.excitation.window),
            ("excitation_threshold", settings.excitation.threshold)]
