"""An identification motion played on an arm: a slow approach, the motion, a recording.

``robot-tv-dynamics excite --play ACTION --record BAG`` imports this module when it runs
(test/test_layering.py checks that nothing else does). Against the arm's
``control_msgs/action/FollowJointTrajectory`` controller (joint_trajectory_controller,
sim_node's ``~/follow_joint_trajectory``, trajectory_gate):

1. the first ``joint_states`` sample gives where the arm is;
2. an approach goal moves it to the motion's first point on a quintic at a fraction of
   each joint's URDF velocity limit (:func:`robot_tv_dynamics.evaluation.approach`);
3. the motion's goal plays it, while every ``joint_states`` message is written to the
   bag as it arrives (every joint the driver names, efforts as published): the input of
   ``identify``.

A goal the controller rejects or ends other than with SUCCESSFUL stops the run with the
controller's error code and text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.bags import write_joint_state_bag
from robot_tv_dynamics.evaluation.trajectory import Trajectory, approach
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.model import RobotModel


class ExecutionError(RobotTvDynamicsError):
    """The controller refused a goal, failed it, or did not answer."""


@dataclass(frozen=True)
class ExecuteOptions:
    """Settings of :func:`play_on_arm`.

    Attributes:
        action: the controller's FollowJointTrajectory action name.
        record: the bag to write (must not exist).
        joint_states: the arm's joint_states topic.
        approach_speed: the approach's peak speed, a fraction of each joint's velocity
            limit, in (0, 1].
        timeout: seconds to wait for the controller's server and the first joint_states.
    """

    action: str
    record: Path
    joint_states: str = "/joint_states"
    approach_speed: float = 0.1
    timeout: float = 30.0

    def __post_init__(self) -> None:
        """Check the values.

        Raises:
            InvalidInputError: an empty action, an existing bag, a speed out of (0, 1],
                a timeout ≤ 0.
        """
        if not self.action.strip():
            raise InvalidInputError("--play", "give the controller's FollowJointTrajectory "
                                    "action, e.g. /joint_trajectory_controller/"
                                    "follow_joint_trajectory")
        if Path(self.record).exists():
            raise InvalidInputError("--record", f"{self.record} exists; remove it or choose "
                                    "another name")
        if not 0.0 < self.approach_speed <= 1.0:
            raise InvalidInputError("--approach-speed",
                                    f"must be in (0, 1], got {self.approach_speed}")
        if not self.timeout > 0.0:
            raise InvalidInputError("--server-timeout", f"must be > 0 s, got {self.timeout}")


def play_on_arm(model: RobotModel, motion: Trajectory, options: ExecuteOptions,
                say: Any = print) -> int:
    """Approach, play ``motion`` and record; the number of joint_states messages recorded.

    Raises:
        ExecutionError: no server or no joint_states within the timeout; a goal rejected
            or not SUCCESSFUL.
    """
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from sensor_msgs.msg import JointState

    from robot_tv_dynamics.ros.qos import stream_qos
    from robot_tv_dynamics.ros.trajectory_conversions import trajectory_to_msg

    rclpy.init(args=[])
    node = rclpy.create_node("excite_player")
    received: list[Any] = []
    node.create_subscription(JointState, options.joint_states, received.append,
                             stream_qos(1000))
    client = ActionClient(node, FollowJointTrajectory, options.action)

    def spin_until(done: Any, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise ExecutionError(f"no {what} within {timeout:g} s")
            rclpy.spin_once(node, timeout_sec=0.05)

    def run_goal(trajectory: Trajectory, label: str) -> None:
        goal = FollowJointTrajectory.Goal()
        goal.trajectory = trajectory_to_msg(trajectory)
        sent = client.send_goal_async(goal)
        spin_until(sent.done, options.timeout, f"answer to the {label} goal from "
                   f"{options.action}")
        handle = sent.result()
        if not handle.accepted:
            raise ExecutionError(f"{options.action} rejected the {label} goal")
        result = handle.get_result_async()
        duration = float(trajectory.time_from_start[-1])
        spin_until(result.done, duration + options.timeout, f"result of the {label} goal")
        answer = result.result().result
        if answer.error_code != FollowJointTrajectory.Result.SUCCESSFUL:
            raise ExecutionError(f"the {label} goal ended with error_code "
                                 f"{answer.error_code}: {answer.error_string or '(no text)'}")

    try:
        spin_until(lambda: client.server_is_ready(), options.timeout,
                   f"FollowJointTrajectory server at {options.action}")
        spin_until(lambda: received, options.timeout, f"joint_states on "
                   f"{options.joint_states}")
        start = approach(model, _positions(received[-1], motion.joint_names), motion,
                         options.approach_speed)
        say(f"approach: {start.time_from_start[-1]:.1f} s to the motion's start pose at "
            f"{options.approach_speed:g} of the velocity limits")
        run_goal(start, "approach")
        received.clear()
        say(f"playing the motion ({motion.time_from_start[-1]:.1f} s) on {options.action}")
        run_goal(motion, "motion")
        rclpy.spin_once(node, timeout_sec=0.2)
        count = _write(options.record, options.joint_states, received)
        say(f"recorded {count} joint_states messages → {options.record}")
        return count
    finally:
        client.destroy()
        node.destroy_node()
        rclpy.try_shutdown()


def _positions(msg: Any, joint_names: tuple[str, ...]) -> np.ndarray:
    """The named joints' positions in a JointState, in ``joint_names`` order."""
    index = {name: i for i, name in enumerate(msg.name)}
    missing = [name for name in joint_names if name not in index]
    if missing:
        raise ExecutionError(f"joint_states do not name {missing} (they name {list(msg.name)})")
    return np.array([msg.position[index[name]] for name in joint_names])


def _write(path: Path, topic: str, messages: list[Any]) -> int:
    with write_joint_state_bag(path, [topic], argument="--record") as write:
        for msg in messages:
            stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            write(topic, stamp, list(msg.name), msg.position, msg.velocity, msg.effort)
    return len(messages)
