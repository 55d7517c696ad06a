"""dynamics_node's per-sample topics: τ, the addends of eq. (39) and the bounds → messages.

- ``generalized_torques``: sensor_msgs/JointState with the input sample's stamp and
  frame, q and q̇ echoed and effort = τ, in model joint order (serialized bytes when
  rclpy reads them back exactly: :class:`~robot_tv_dynamics.ros.joint_state_cdr.JointStateOutput`);
- ``generalized_terms``: Float64MultiArray ``term`` × ``joint``, the rows of
  :data:`robot_tv_dynamics.evaluation.TERM_ROWS`
  (:meth:`robot_tv_dynamics.evaluation.SampleTorques.term_rows`);
- ``mass_matrix_bounds``: Float64MultiArray ``bound`` × ``method``, the entries of
  :data:`robot_tv_dynamics.bounds.BOUND_LABELS`
  (:meth:`robot_tv_dynamics.bounds.RunningBounds.values`), the method (``sampled``,
  ``certified``, ``unavailable``) as the label of the second axis.

The layouts are built once and the messages reused. The node computes terms and bounds
only while someone subscribes: :meth:`SampleOutputs.wanted` says so, from subscriber
counts looked up at most every :data:`SUBSCRIBER_CHECK_PERIOD` (an rclpy graph query per
sample costs more than τ itself).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_tv_dynamics.bounds import BOUND_LABELS
from robot_tv_dynamics.ros.conversions import TERM_LABELS, labelled_array
from robot_tv_dynamics.ros.joint_state_cdr import JointStateOutput

#: generalized_terms / mass_matrix_bounds subscribers are looked up this often [s].
SUBSCRIBER_CHECK_PERIOD = 0.1


class SampleOutputs:
    """The three per-sample publishers of one node and their reused messages.

    Attributes:
        torques_pub: the ``generalized_torques`` publisher.
        terms_pub: the ``generalized_terms`` publisher.
        bounds_pub: the ``mass_matrix_bounds`` publisher.
    """

    def __init__(self, node: Any, joint_names: Sequence[str], qos: Any) -> None:
        """Create the publishers on ``node`` for an arm with ``joint_names``.

        Args:
            node: the rclpy node (``create_publisher``).
            joint_names: the model's joints, in order.
            qos: the QoS profile of the three topics.
        """
        self.torques_pub = node.create_publisher(JointState, "generalized_torques", qos)
        self.terms_pub = node.create_publisher(Float64MultiArray, "generalized_terms", qos)
        self.bounds_pub = node.create_publisher(Float64MultiArray, "mass_matrix_bounds", qos)
        self._subscribers, self._checked = (False, False), -math.inf
        self.set_joints(joint_names)

    def set_joints(self, joint_names: Sequence[str]) -> None:
        """The joints of every message from now on (a URDF swap)."""
        #: ``publish_torques(stamp, frame_id, q, qd, tau)``: ``generalized_torques`` for one
        #: sample, its stamp and frame, model order (the encoder's own method: no wrapper
        #: call on the 1 kHz path)
        self.publish_torques = JointStateOutput(self.torques_pub, joint_names).publish
        self._terms_msg = Float64MultiArray()
        self._terms_axes = [("term", TERM_LABELS), ("joint", list(joint_names))]
        self._bounds_msg: Float64MultiArray | None = None
        self._bounds_method = ""

    def wanted(self, now: float) -> tuple[bool, bool]:
        """Whether ``generalized_terms`` and ``mass_matrix_bounds`` have subscribers.

        Args:
            now: the monotonic clock [s]; the counts are looked up again once
                :data:`SUBSCRIBER_CHECK_PERIOD` has passed (a new subscriber gets its
                first message within that time).
        """
        if now - self._checked >= SUBSCRIBER_CHECK_PERIOD:
            self._checked = now
            self._subscribers = (self.terms_pub.get_subscription_count() > 0,
                                 self.bounds_pub.get_subscription_count() > 0)
        return self._subscribers

    def publish_terms(self, rows: np.ndarray) -> None:
        """``generalized_terms`` from the (len(TERM_LABELS), nv) rows."""
        self.terms_pub.publish(labelled_array(rows, self._terms_axes, self._terms_msg))

    def publish_bounds(self, values: np.ndarray, method: str) -> None:
        """``mass_matrix_bounds`` from the entries of ``BOUND_LABELS`` and their method."""
        if self._bounds_msg is None or self._bounds_method != method:
            self._bounds_method = method
            self._bounds_msg = labelled_array(
                values[:, None], [("bound", BOUND_LABELS), ("method", [method])])
        else:
            labelled_array(values[:, None], (), self._bounds_msg)
        self.bounds_pub.publish(self._bounds_msg)
