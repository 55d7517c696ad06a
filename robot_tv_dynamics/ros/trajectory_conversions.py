"""trajectory_msgs/JointTrajectory ↔ the trajectory evaluation core (MoveIt pipeline).

The dynamics node answers a planned trajectory (``planned_trajectory``) with the same
trajectory whose points carry the torques of eq. (39) under the current payload
(``planned_trajectory_efforts``) and a DiagnosticStatus naming every joint whose
effort limit the trajectory would exceed. Everything but the message handling is in
:mod:`robot_tv_dynamics.evaluation`; this module converts and assembles, so the node
only subscribes, calls :func:`evaluate_planned_trajectory` and publishes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticStatus
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_tv_dynamics import limits
from robot_tv_dynamics.evaluation import (
    Trajectory,
    TrajectoryEvaluation,
    effort_verdict,
    evaluate,
    trajectory_from_message,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros.conversions import make_status, to_float_array

#: Default name of the DiagnosticStatus about planned trajectories.
STATUS_NAME = "dynamics_node: planned_trajectory"


def trajectory_from_msg(msg: JointTrajectory, topic: str = "planned_trajectory") -> Trajectory:
    """The core :class:`~robot_tv_dynamics.evaluation.Trajectory` of a message.

    Empty ``velocities``/``accelerations`` in every point mean "not given" (they are
    then derived by :func:`~robot_tv_dynamics.evaluation.efforts`, which says how).

    Raises:
        InvalidInputError: no points or more than :data:`limits.TRAJECTORY_POINTS`, wrong
            vector sizes, NaN/Inf, values beyond :mod:`robot_tv_dynamics.limits`,
            times that do not increase; the message names ``topic`` and the point.
    """
    if len(msg.points) > limits.TRAJECTORY_POINTS:
        raise InvalidInputError(
            f"{topic}.points",
            f"has {len(msg.points)} points (at most {limits.TRAJECTORY_POINTS})")
    try:
        trajectory = trajectory_from_message(msg)
    except InvalidInputError as error:
        argument = error.argument.replace("trajectory", topic, 1)
        raise InvalidInputError(argument, error.problem) from None
    for field, values, bound in (
            ("positions", trajectory.positions, limits.POSITION),
            ("velocities", trajectory.velocities, limits.VELOCITY),
            ("accelerations", trajectory.accelerations, limits.ACCELERATION),
            ("time_from_start", trajectory.time_from_start, limits.TIME_FROM_START)):
        if values is not None:
            limits.check_bounded(values, bound, f"{topic}.points.{field}")
    return trajectory


def seconds_to_duration(seconds: float) -> Duration:
    """Seconds [s] → builtin_interfaces/Duration (rounded to the nanosecond)."""
    ns = int(round(seconds * 1e9))
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def trajectory_to_msg(
    trajectory: Trajectory, efforts: np.ndarray | None = None, frame_id: str = "",
) -> JointTrajectory:
    """A JointTrajectory message from a core trajectory (stamp left zero = "now").

    Args:
        trajectory: the trajectory.
        efforts: τ per point in the trajectory's column order, (K, n) [N·m or N];
            None leaves ``effort`` empty.
        frame_id: header frame.
    """
    msg = JointTrajectory()
    msg.header.frame_id = frame_id
    msg.joint_names = list(trajectory.joint_names)
    for k in range(trajectory.n_points):
        point = JointTrajectoryPoint()
        point.positions = to_float_array(trajectory.positions[k])
        if trajectory.velocities is not None:
            point.velocities = to_float_array(trajectory.velocities[k])
        if trajectory.accelerations is not None:
            point.accelerations = to_float_array(trajectory.accelerations[k])
        if efforts is not None:
            point.effort = to_float_array(efforts[k])
        point.time_from_start = seconds_to_duration(float(trajectory.time_from_start[k]))
        msg.points.append(point)
    return msg


def with_efforts(msg: JointTrajectory, result: TrajectoryEvaluation) -> JointTrajectory:
    """The same trajectory with each point's ``effort`` = τ of eq. (39), in its joint order.

    Header, joint names, positions, velocities, accelerations and times are copied as
    they came (velocities/accelerations the planner left out stay empty).

    Args:
        msg: the planned trajectory.
        result: its evaluation (:func:`~robot_tv_dynamics.evaluation.efforts`).
    """
    efforts = result.efforts_in_trajectory_order()
    if efforts.shape != (len(msg.points), len(msg.joint_names)):
        raise InvalidInputError(
            "result", f"efforts of shape {efforts.shape} do not fit the message "
            f"({len(msg.points)} points × {len(msg.joint_names)} joints)")
    out = JointTrajectory()
    out.header = msg.header
    out.joint_names = list(msg.joint_names)
    for point, tau in zip(msg.points, efforts, strict=True):
        out.points.append(JointTrajectoryPoint(
            positions=point.positions, velocities=point.velocities,
            accelerations=point.accelerations, effort=to_float_array(tau),
            time_from_start=point.time_from_start))
    return out


def effort_status(
    result: TrajectoryEvaluation, hardware_id: str, name: str = STATUS_NAME,
    warn_ratio: float = 0.9,
) -> DiagnosticStatus:
    """The DiagnosticStatus of :func:`~robot_tv_dynamics.evaluation.effort_verdict`.

    ERROR names every joint over its limit (peak ratio and time); WARN when the largest
    ratio reaches ``warn_ratio`` or a joint has no limit; OK otherwise.
    """
    verdict = effort_verdict(result, warn_ratio)
    return make_status(name, verdict.level, verdict.message, hardware_id, verdict.values)


@dataclass(frozen=True)
class PlannedTrajectoryReport:
    """What the node publishes for one planned trajectory.

    Attributes:
        result: the evaluation (efforts, ratios, violations, max payload).
        efforts_msg: the trajectory with ``effort`` filled (``planned_trajectory_efforts``).
        status: the verdict for ``/diagnostics``.
    """

    result: TrajectoryEvaluation
    efforts_msg: JointTrajectory
    status: DiagnosticStatus


def evaluate_planned_trajectory(
    model: RobotModel,
    msg: JointTrajectory,
    theta: np.ndarray,
    hardware_id: str,
    default_positions: np.ndarray | Mapping[str, float] | None = None,
    *,
    topic: str = "planned_trajectory",
    warn_ratio: float = 0.9,
    status_name: str = STATUS_NAME,
) -> PlannedTrajectoryReport:
    """Evaluate a planned trajectory under the node's current Θ (payload included).

    The payload is whatever ``theta`` holds (the node's Θ after the ``payload`` topic);
    it is held constant along the trajectory. Joints the trajectory does not list stay
    at ``default_positions`` (e.g. the last joint_states sample) with zero velocity.

    Args:
        model: the arm.
        msg: the planned trajectory.
        theta: Θ, (N, 10), eq. (7) order [kg, kg·m, kg·m²].
        hardware_id: robot name for the status.
        default_positions: positions of unlisted joints, (nv,) model order or a mapping
            [rad or m]; None = 0.
        topic: topic name used in error messages.
        warn_ratio: WARN threshold of the peak effort ratio.
        status_name: name of the DiagnosticStatus.

    Raises:
        InvalidInputError: malformed trajectory (the node rejects it).
        UnknownNameError: a joint the URDF does not have.
    """
    trajectory = trajectory_from_msg(msg, topic)
    result = evaluate(model, trajectory, None, theta=theta, default_positions=default_positions,
                      compute_max_payload=False)
    return PlannedTrajectoryReport(
        result=result, efforts_msg=with_efforts(msg, result),
        status=effort_status(result, hardware_id, status_name, warn_ratio))


#: Name of the DiagnosticStatus about retime requests.
RETIME_STATUS_NAME = "dynamics_node: retime"


def retime_planned_trajectory(
    model: RobotModel,
    msg: JointTrajectory,
    theta: np.ndarray,
    hardware_id: str,
    default_positions: np.ndarray | None = None,
    *,
    effort_margin: float = 1.0,
    velocity_scale: float = 1.0,
) -> tuple[JointTrajectory | None, Any]:
    """The fastest effort-feasible timing of a planned path under the node's current Θ.

    The payload is what ``theta`` holds (URDF + the ``payload`` topic), constant along the
    motion (:func:`robot_tv_dynamics.retiming.retime` with ``theta``); unlisted joints stay
    at ``default_positions``.

    Returns:
        (the retimed trajectory with efforts, or None when no timing keeps the limits;
        a DiagnosticStatus: OK with the durations before/after and the peak ratio, or
        ERROR with the reason).

    Raises:
        InvalidInputError: malformed trajectory (the node rejects it).
        UnknownNameError: a joint the URDF does not have.
    """
    from robot_tv_dynamics.exceptions import RetimingError
    from robot_tv_dynamics.retiming import retime

    trajectory = trajectory_from_msg(msg, "retime_request")
    try:
        result = retime(model, trajectory, None, theta=theta, default_positions=default_positions,
                        effort_margin=effort_margin, velocity_scale=velocity_scale,
                        compare_uniform=False)
    except RetimingError as error:
        return None, make_status(RETIME_STATUS_NAME, 2, f"no feasible timing: {error}",
                                 hardware_id)
    peak = float(np.nanmax(result.peak_ratio_after))
    out = trajectory_to_msg(result.trajectory, frame_id=msg.header.frame_id)
    status = make_status(
        RETIME_STATUS_NAME, 0,
        f"retimed {result.duration_before:.3f} s → {result.duration_after:.3f} s, peak "
        f"|τ|/τ_max {peak:.3f}", hardware_id,
        [("duration_before", result.duration_before), ("duration_after", result.duration_after),
         ("peak_effort_ratio", peak)])
    return out, status
