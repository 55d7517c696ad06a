"""dynamics_node's trajectory requests, answered off the hot path in background threads.

- ``planned_trajectory`` → ``planned_trajectory_efforts`` (the trajectory with the
  torques of eq. (39) under the current payload) and a ``dynamics_node:
  planned_trajectory`` verdict on ``/diagnostics``
  (:func:`~robot_tv_dynamics.ros.trajectory_conversions.evaluate_planned_trajectory`,
  around :mod:`robot_tv_dynamics.evaluation`);
- ``retime_request`` → ``retimed_trajectory`` (the fastest effort-feasible timing, TOPP-RA,
  up to a second) and a ``dynamics_node: retime`` status
  (:func:`~robot_tv_dynamics.ros.trajectory_conversions.retime_planned_trajectory`,
  around :mod:`robot_tv_dynamics.retiming`).

Each runs in its own :class:`~robot_tv_dynamics.ros.background.LatestJob` thread, so
joint_states keep being answered meanwhile; a request still waiting when a newer one
arrives is dropped (said on ``/diagnostics``). A request is computed on a
:class:`TrajectorySnapshot` taken when it arrives, on the thread that also applies URDF
swaps: the worker never reads the node's (possibly swapped) model or Θ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from trajectory_msgs.msg import JointTrajectory

from robot_tv_dynamics import limits
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inputs import ModelInputs
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros import input_guard
from robot_tv_dynamics.ros.background import LatestJob
from robot_tv_dynamics.ros.trajectory_conversions import (
    evaluate_planned_trajectory,
    retime_planned_trajectory,
)


@dataclass(frozen=True)
class TrajectorySnapshot:
    """What one request is computed on, taken together when it arrives.

    Attributes:
        model: the arm.
        theta: Θ with payloads, (N, 10) [kg, kg·m, kg·m²] (a copy).
        last_q: the last joint_states positions (nv,) (a copy; None before the first):
            the positions of joints the trajectory does not list.
        hardware_id: the robot name for the statuses.
    """

    model: RobotModel
    theta: np.ndarray
    last_q: np.ndarray | None
    hardware_id: str

    @classmethod
    def take(cls, model: RobotModel, inputs: ModelInputs, hardware_id: str) -> TrajectorySnapshot:
        """The model, copies of the inputs' Θ and last q, and the robot name, now."""
        last_q = inputs.last_q
        return cls(model, np.array(inputs.theta),
                   None if last_q is None else np.array(last_q), hardware_id)


class TrajectoryJobs:
    """The planned-trajectory and retiming workers of one node (module docstring).

    Attributes:
        retimer: the retiming thread (started at construction).
    """

    def __init__(
        self, guard: Any, planned_pub: Any, retimed_pub: Any,
        snapshot: Callable[[], TrajectorySnapshot], *, warn_ratio: float = 0.9,
        effort_margin: float = 1.0,
        evaluate: Callable[..., Any] = evaluate_planned_trajectory,
        retime: Callable[..., Any] = retime_planned_trajectory,
        context_ok: Callable[[], bool] = lambda: True,
    ) -> None:
        """Start the retiming thread (the planner's starts with the first trajectory).

        Args:
            guard: the node's :class:`~robot_tv_dynamics.ros.input_guard.InputGuard`
                (accept/reject per topic, statuses on ``/diagnostics``).
            planned_pub: publisher of ``planned_trajectory_efforts``.
            retimed_pub: publisher of ``retimed_trajectory``.
            snapshot: takes the :class:`TrajectorySnapshot` a request arriving now is
                computed on (called on the subscription's thread).
            warn_ratio: ``effort_warn_ratio``: the planned-trajectory verdict is WARN when
                a joint's peak |τ|/τ_max reaches it.
            effort_margin: ``retime_effort_margin``: a retimed |τ| stays within this
                fraction of each joint's effort limit.
            evaluate: the planned-trajectory evaluation (signature of
                :func:`~robot_tv_dynamics.ros.trajectory_conversions.evaluate_planned_trajectory`).
            retime: the retiming (signature of
                :func:`~robot_tv_dynamics.ros.trajectory_conversions.retime_planned_trajectory`).
            context_ok: whether the node's context is still up (a planner error after
                shutdown is not reported).
        """
        self._guard = guard
        self._snapshot = snapshot
        self._warn_ratio = warn_ratio
        self._effort_margin = float(effort_margin)
        self._planned_pub = planned_pub
        self._retimed_pub = retimed_pub
        self._evaluate = evaluate
        self._retime = retime
        self._context_ok = context_ok
        self._planner: LatestJob | None = None  # started by the first planned trajectory
        self.retimer = LatestJob(
            "retime", lambda error: guard.reject(
                "retime_request", f"internal error ({type(error).__name__}: {error})"),
            lambda label: guard.reject(
                "retime_request", f"{label} dropped: a newer one arrived first"))

    @input_guard.guarded("planned_trajectory")
    def on_planned_trajectory(self, msg: JointTrajectory) -> None:
        """Subscription callback: :meth:`plan` on a snapshot taken now."""
        self.plan(msg, self._snapshot(), self._warn_ratio)

    @input_guard.guarded("retime_request")
    def on_retime_request(self, msg: JointTrajectory) -> None:
        """Subscription callback: :meth:`retime` on a snapshot taken now."""
        self.retime(msg, self._snapshot(), self._effort_margin)

    def _too_long(self, topic: str, msg: JointTrajectory) -> bool:
        """Refuse a trajectory of more than :data:`limits.TRAJECTORY_POINTS` before any work."""
        if len(msg.points) <= limits.TRAJECTORY_POINTS:
            return False
        self._guard.reject(topic, InvalidInputError(
            f"{topic}.points",
            f"has {len(msg.points)} points (at most {limits.TRAJECTORY_POINTS})"))
        return True

    def plan(self, msg: JointTrajectory, snapshot: TrajectorySnapshot, warn_ratio: float) -> None:
        """Queue the efforts of a planned trajectory on ``snapshot`` (published when done).

        Args:
            msg: the planned trajectory.
            snapshot: the model, Θ and q it is evaluated on.
            warn_ratio: the verdict is WARN when a joint's peak |τ|/τ_max reaches this.
        """
        if self._too_long("planned_trajectory", msg):
            return
        guard = self._guard

        def evaluate() -> None:
            try:
                report = self._evaluate(snapshot.model, msg, snapshot.theta,
                                        snapshot.hardware_id, snapshot.last_q,
                                        warn_ratio=warn_ratio)
            except RobotTvDynamicsError as error:
                guard.reject("planned_trajectory", error)
                return
            self._planned_pub.publish(report.efforts_msg)
            guard.accept("planned_trajectory")
            guard.publish(extra=[report.status])

        if self._planner is None:
            self._planner = LatestJob(
                "planned_trajectory", self._planner_error,
                lambda label: guard.reject(
                    "planned_trajectory", f"{label} dropped: a newer one arrived first"))
        self._planner.submit(f"a trajectory of {len(msg.points)} points", evaluate)

    def _planner_error(self, error: BaseException) -> None:
        if self._context_ok():
            self._guard.reject(
                "planned_trajectory", f"internal error ({type(error).__name__}: {error})")

    def retime(
        self, msg: JointTrajectory, snapshot: TrajectorySnapshot, effort_margin: float,
    ) -> None:
        """Queue a retiming of the path on ``snapshot`` (published when done).

        Args:
            msg: the path (its timing is replaced).
            snapshot: the model, Θ and q it is retimed on.
            effort_margin: |τ| stays within this fraction of each joint's effort limit.
        """
        if self._too_long("retime_request", msg):
            return
        self.retimer.submit(f"a path of {len(msg.points)} points",
                            lambda: self._retime_job(msg, snapshot, effort_margin))
        self._guard.accept("retime_request")

    def _retime_job(
        self, msg: JointTrajectory, snapshot: TrajectorySnapshot, effort_margin: float,
    ) -> None:
        """Worker thread: retime on the request's snapshot, publish the trajectory and status."""
        try:
            out, status = self._retime(
                snapshot.model, msg, snapshot.theta, snapshot.hardware_id, snapshot.last_q,
                effort_margin=effort_margin)
        except RobotTvDynamicsError as error:
            self._guard.reject("retime_request", error)
            return
        if out is not None:
            self._retimed_pub.publish(out)
        self._guard.publish(extra=[status])

    def stop(self) -> None:
        """Stop both threads (waiting jobs dropped; a running one finishes first)."""
        for worker in (self._planner, self.retimer):
            if worker is not None:
                worker.stop()
