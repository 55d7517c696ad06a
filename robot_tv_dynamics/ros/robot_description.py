"""Where a node's URDF comes from, and URDF swaps at run time.

:class:`RobotDescription`: the URDF from the ``robot_description`` parameter, else the
``urdf_path`` parameter, else the first message on the ``robot_description`` topic;
later messages on the topic are URDF swaps, accepted when they keep the joints, rejected
with a reason otherwise.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from collections.abc import Callable, Sequence

import numpy as np
import rclpy
from rclpy.node import Node
from std_msgs.msg import String

from robot_tv_dynamics import limits
from robot_tv_dynamics.exceptions import RobotTvDynamicsError, URDFError
from robot_tv_dynamics.model import RobotModel, parse_locked_joints
from robot_tv_dynamics.ros.input_guard import InputGuard
from robot_tv_dynamics.ros.qos import ROBOT_DESCRIPTION_QOS


# ---------------------------------------------------------------------------- URDF
def robot_name(model: RobotModel) -> str:
    """The ``<robot name>`` of the URDF (the DiagnosticStatus hardware_id)."""
    return str(model.pinocchio_model.name) or "robot"


def same_joints(a: RobotModel, b: RobotModel) -> str | None:
    """None if ``b`` has the joints of ``a`` (names, order), else why not."""
    if list(a.joint_names) != list(b.joint_names):
        return f"the joints change from {a.joint_names} to {b.joint_names}"
    return None


def same_kinematics(a: RobotModel, b: RobotModel) -> bool:
    """Whether two models with the same joints have the same limits and Jacobians.

    Checked on the limit arrays and J(q) at three fixed configurations inside the
    limits: a URDF that only changes inertias keeps the Jacobian extremes γ, δ.
    """
    if same_joints(a, b) is not None:
        return False
    la, lb = a.joint_limits, b.joint_limits
    if not (np.array_equal(la.lower, lb.lower) and np.array_equal(la.upper, lb.upper)):
        return False
    rng = np.random.default_rng(7)
    lower = np.maximum(la.lower, -np.pi)
    upper = np.minimum(la.upper, np.pi)
    for _ in range(3):
        q = lower + rng.random(a.nv) * (upper - lower)
        if not np.allclose(a.body_jacobians_local(q), b.body_jacobians_local(q),
                           rtol=1e-12, atol=1e-12):
            return False
    return True


class RobotDescription:
    """The URDF of a node: parameter, file, or the ``robot_description`` topic.

    Order at start-up: the ``robot_description`` parameter if non-empty; else the
    ``urdf_path`` parameter if non-empty; else the first message on the
    ``robot_description`` topic (waiting up to ``timeout`` s). The topic stays
    subscribed: a later message with a different URDF is handed to ``on_swap`` when it
    parses and keeps the joints (names and order), and rejected through the
    :class:`InputGuard` otherwise; the same URDF again (robot_state_publisher
    republishes it) is ignored. Every model is built with the same ``locked_joints``.
    """

    TOPIC = "robot_description"

    def __init__(
        self, node: Node, description: str, urdf_path: str, timeout: float,
        locked_joints: Sequence[str] = (),
    ) -> None:
        """Subscribe to the topic (start-up has not happened yet: see :meth:`acquire`).

        Raises:
            InvalidInputError: a malformed ``locked_joints`` entry.
        """
        self._node = node
        self._description = description
        self._urdf_path = urdf_path
        self._timeout = timeout
        self._locked = parse_locked_joints(locked_joints)
        self._pending: str | None = None
        self.model: RobotModel | None = None
        self.source = ""
        self.on_swap: Callable[[RobotModel], None] | None = None
        self.guard: InputGuard | None = None
        self._subscription = node.create_subscription(
            String, self.TOPIC, self._on_message, ROBOT_DESCRIPTION_QOS)

    def acquire(self) -> RobotModel:
        """The model at start-up (spinning the node while waiting for the topic).

        Raises:
            URDFError: the URDF is missing, unreadable or broken; the message names the
                source and the problem.
        """
        if self._description.strip():
            self.source = "parameter robot_description"
            self.model = RobotModel.from_urdf_string(
                self._description, self.source, self._locked)
            return self.model
        if self._urdf_path.strip():
            path = os.path.expanduser(self._urdf_path.strip())
            self.source = f"parameter urdf_path ({path})"
            self.model = RobotModel.from_urdf(path, self._locked)
            return self.model
        topic = self._subscription.topic_name
        self._node.get_logger().info(
            f"robot_description and urdf_path parameters are empty: waiting for a URDF on "
            f"{topic} (transient local)"
            + (f" for up to {self._timeout:g} s" if self._timeout > 0 else ""))
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else math.inf
        while self._pending is None:
            if time.monotonic() >= deadline:
                raise URDFError(
                    f"topic {topic}",
                    f"no message within {self._timeout:g} s, and the robot_description and "
                    "urdf_path parameters are empty (give one of the three)")
            if not rclpy.ok():
                raise URDFError(f"topic {topic}", "shut down while waiting for the URDF")
            rclpy.spin_once(self._node, timeout_sec=0.1)
        self.source = f"topic {topic}"
        self.model = RobotModel.from_urdf_string(self._pending, self.source, self._locked)
        return self.model

    def _on_message(self, msg: String) -> None:
        xml = msg.data
        if len(xml) > limits.ROBOT_DESCRIPTION:
            self._reject(f"URDF swap rejected, the current model is kept: {len(xml)} "
                         f"characters (at most {limits.ROBOT_DESCRIPTION})")
            return
        if self.model is None:
            self._pending = xml
            return
        if hashlib.sha256(xml.encode("utf-8")).hexdigest() == self.model.xml_sha256:
            return
        topic = self._subscription.topic_name
        try:
            model = RobotModel.from_urdf_string(xml, f"topic {topic}", self._locked)
        except RobotTvDynamicsError as error:
            self._reject(f"URDF swap rejected, the current model is kept: {error}")
            return
        why = same_joints(self.model, model)
        if why is not None:
            self._reject(f"URDF swap rejected, the current model is kept: {why}; restart "
                         "the node to use this URDF")
            return
        self._node.get_logger().info(
            f"URDF swap on {topic}: new model {model.urdf_sha256[:12]} with the same joints "
            f"(was {self.model.urdf_sha256[:12]} from {self.source})")
        self.model = model
        self.source = f"topic {topic}"
        if self.guard is not None:
            self.guard.accept(self.TOPIC)
        if self.on_swap is not None:
            try:
                self.on_swap(model)
            except Exception as error:  # the node keeps running on what it has
                self._reject(f"URDF swap failed ({type(error).__name__}: {error})")

    def _reject(self, reason: str) -> None:
        if self.guard is not None:
            self.guard.reject(self.TOPIC, reason)
        else:  # pragma: no cover - the nodes always set a guard
            self._node.get_logger().warning(reason)
