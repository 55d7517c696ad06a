"""sim_node's joint_trajectory_controller face: a FollowJointTrajectory action and a topic.

With ``controller: trajectory`` sim_node tracks trajectories as a ros2_control arm does
(:class:`~robot_tv_dynamics.simulation.trajectory_follower.TrajectoryFollower`), and
:class:`TrajectoryServer` takes them the way joint_trajectory_controller does:

- ``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory): a goal
  naming joints the URDF lacks, or malformed, is rejected; an accepted goal starts at
  once and replaces the running one, which ends aborted with "preempted by a newer
  goal"; feedback (desired, actual, error) at ``feedback_rate``; the goal succeeds when
  its last point's time is reached (and, with ``goal_tolerance`` entries, the joints are
  within them by then + ``goal_time_tolerance``, else GOAL_TOLERANCE_VIOLATED); a
  cancel holds the arm where it is and ends the goal canceled;
- ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory): the same without a goal (it
  preempts a running goal too).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.node import Node
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_tv_dynamics.exceptions import RobotTvDynamicsError
from robot_tv_dynamics.ros import qos
from robot_tv_dynamics.ros.conversions import to_float_array
from robot_tv_dynamics.ros.trajectory_conversions import trajectory_from_msg
from robot_tv_dynamics.simulation.trajectory_follower import TrajectoryFollower

Result = FollowJointTrajectory.Result
#: The arm's latest (t [s], q, q̇), as the stepping thread left it.
State = Callable[[], tuple[float, np.ndarray, np.ndarray]]


class TrajectoryServer:
    """Goals and trajectory messages into a :class:`TrajectoryFollower` (module docstring)."""

    def __init__(self, node: Node, follower: TrajectoryFollower, lock: threading.Lock,
                 state: State, feedback_rate: float = 50.0) -> None:
        """Serve the action and subscribe the topic on ``node``.

        Args:
            node: sim_node.
            follower: the tracking controller the stepping thread runs.
            lock: guards ``follower`` against the stepping thread.
            state: the arm's latest (t, q, q̇).
            feedback_rate: feedback and completion checks per second [Hz].
        """
        self._node = node
        self._follower = follower
        self._lock = lock
        self._state = state
        self._names = list(follower.model.joint_names)
        self._active: tuple[ServerGoalHandle, Future] | None = None
        self._goal_tolerance: dict[int, float] = {}
        self._goal_time_tolerance = 0.0
        self._server = ActionServer(
            node, FollowJointTrajectory, "~/follow_joint_trajectory", self._execute,
            goal_callback=self._on_goal, handle_accepted_callback=self._on_accepted,
            cancel_callback=self._on_cancel)
        node.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_topic,
                                 qos.RELIABLE_QOS)
        node.create_timer(1.0 / feedback_rate, self._tick)

    # ------------------------------------------------------------------ goals
    def _on_goal(self, request: Any) -> GoalResponse:
        try:
            trajectory_from_msg(request.trajectory, "goal.trajectory")
            unknown = sorted(set(request.trajectory.joint_names) - set(self._names))
        except RobotTvDynamicsError as error:
            self._node.get_logger().error(f"goal rejected: {error}")
            return GoalResponse.REJECT
        if unknown:
            self._node.get_logger().error(f"goal rejected: joints {unknown} are not in the URDF")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle: ServerGoalHandle) -> None:
        self._preempt("preempted by a newer goal")
        goal_handle.execute()

    def _on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        return CancelResponse.ACCEPT

    async def _execute(self, goal_handle: ServerGoalHandle) -> Any:
        request = goal_handle.request
        self._start(request.trajectory)
        self._goal_tolerance = {self._names.index(tol.name): tol.position
                                for tol in request.goal_tolerance
                                if tol.name in self._names and tol.position > 0.0}
        tolerance = request.goal_time_tolerance
        self._goal_time_tolerance = tolerance.sec + 1e-9 * tolerance.nanosec
        done = Future()
        self._active = (goal_handle, done)
        return await done

    def _on_topic(self, msg: JointTrajectory) -> None:
        try:
            trajectory_from_msg(msg, "joint_trajectory")
        except RobotTvDynamicsError as error:
            self._node.get_logger().error(f"joint_trajectory rejected: {error}")
            return
        self._preempt("preempted by a trajectory on joint_trajectory")
        self._start(msg)

    def _start(self, msg: JointTrajectory) -> None:
        """Hand the trajectory over; it starts at the stepping thread's next control step."""
        trajectory = trajectory_from_msg(msg, "goal.trajectory")
        with self._lock:
            self._follower.start(trajectory)

    def _preempt(self, reason: str) -> None:
        """End the running goal (aborted, ``reason``) without stopping the arm."""
        if self._active is None:
            return
        goal_handle, done = self._active
        self._active = None
        if goal_handle.is_active:
            goal_handle.abort()
        done.set_result(Result(error_code=Result.SUCCESSFUL, error_string=reason))

    # ------------------------------------------------------------------ progress
    def _tick(self) -> None:
        """Feedback of the running goal; end it when canceled or its time is up."""
        if self._active is None:
            return
        goal_handle, done = self._active
        t, q, qd = self._state()
        with self._lock:
            if self._follower.starting:
                return  # the stepping thread has not taken it over yet
            q_r, qd_r, _ = self._follower.reference(t)
            end = self._follower.end_time
        if goal_handle.is_cancel_requested:
            with self._lock:
                self._follower.hold()  # where the arm is at the next control step
            self._active = None
            goal_handle.canceled()
            done.set_result(Result(error_code=Result.SUCCESSFUL, error_string="canceled"))
            return
        goal_handle.publish_feedback(self._feedback(t, q, qd, q_r, qd_r))
        if t < end:
            return
        error = {i: abs(q[i] - q_r[i]) for i in self._goal_tolerance}
        outside = {i: e for i, e in error.items() if e > self._goal_tolerance[i]}
        if outside and t < end + self._goal_time_tolerance:
            return
        self._active = None
        if outside:
            i, e = max(outside.items(), key=lambda item: item[1])
            goal_handle.abort()
            done.set_result(Result(
                error_code=Result.GOAL_TOLERANCE_VIOLATED,
                error_string=f'joint "{self._names[i]}" is {e:.4g} from its goal (tolerance '
                             f"{self._goal_tolerance[i]:.4g})"))
            return
        goal_handle.succeed()
        done.set_result(Result(error_code=Result.SUCCESSFUL))

    def _feedback(self, t: float, q: np.ndarray, qd: np.ndarray, q_r: np.ndarray,
                  qd_r: np.ndarray) -> Any:
        feedback = FollowJointTrajectory.Feedback(joint_names=self._names)
        feedback.header.stamp = self._node.get_clock().now().to_msg()
        feedback.desired = JointTrajectoryPoint(positions=to_float_array(q_r),
                                                velocities=to_float_array(qd_r))
        feedback.actual = JointTrajectoryPoint(positions=to_float_array(q),
                                               velocities=to_float_array(qd))
        feedback.error = JointTrajectoryPoint(positions=to_float_array(q_r - q),
                                              velocities=to_float_array(qd_r - qd))
        return feedback
