"""dynamics_node's per-sample topics: τ, the addends of eq. (39) and the bounds → messages.

Every output carries the stamp and frame of the joint sample it answers:

- ``generalized_torques``: sensor_msgs/JointState, q and q̇ echoed and effort = τ, in
  model joint order (serialized bytes when rclpy reads them back exactly:
  :class:`~robot_tv_dynamics.ros.joint_state_cdr.JointStateOutput`);
- ``generalized_terms_stamped``: sensor_msgs/JointState-shaped, ``name`` =
  ``<term>/<joint>`` for the rows of :data:`robot_tv_dynamics.evaluation.TERM_ROWS`
  (:meth:`robot_tv_dynamics.evaluation.SampleTorques.term_rows`) × the model's joints,
  row-major, ``position`` = the values [N·m or N];
- ``mass_matrix_bounds_stamped``: the same shape, ``name`` = ``<bound>/<method>`` for
  the entries of :data:`robot_tv_dynamics.bounds.BOUND_LABELS`
  (:meth:`robot_tv_dynamics.bounds.RunningBounds.values`) and the method of γ, δ
  (``sampled``, ``certified``, ``unavailable``), ``position`` = the values;
- with ``legacy``: the unstamped Float64MultiArray ``generalized_terms`` (``term`` ×
  ``joint``) and ``mass_matrix_bounds`` (``bound`` × ``method``) of the previous release
  (deprecated, behind the node's ``legacy_theta_topics``).

The names are laid out once (per method for the bounds) and the messages sent as bytes.
The node computes terms and bounds only while someone subscribes to either form:
:meth:`SampleOutputs.wanted` says so, from subscriber counts looked up at most every
:data:`SUBSCRIBER_CHECK_PERIOD` (an rclpy graph query per sample costs more than τ
itself).
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
#: The stamped topics and the legacy unstamped ones they replace.
TERMS_TOPIC, BOUNDS_TOPIC = "generalized_terms_stamped", "mass_matrix_bounds_stamped"
LEGACY_TERMS_TOPIC, LEGACY_BOUNDS_TOPIC = "generalized_terms", "mass_matrix_bounds"


def term_names(joint_names: Sequence[str]) -> list[str]:
    """``<term>/<joint>`` of ``generalized_terms_stamped`` (term-major, model joint order)."""
    return [f"{term}/{joint}" for term in TERM_LABELS for joint in joint_names]


def bound_names(method: str) -> list[str]:
    """``<bound>/<method>`` of ``mass_matrix_bounds_stamped``, in BOUND_LABELS order."""
    return [f"{label}/{method}" for label in BOUND_LABELS]


class SampleOutputs:
    """The per-sample publishers of one node and their reused messages.

    Attributes:
        torques_pub: the ``generalized_torques`` publisher.
        terms_stamped_pub: the ``generalized_terms_stamped`` publisher.
        bounds_stamped_pub: the ``mass_matrix_bounds_stamped`` publisher.
        terms_pub: the legacy ``generalized_terms`` publisher (None without ``legacy``).
        bounds_pub: the legacy ``mass_matrix_bounds`` publisher (None without ``legacy``).
    """

    def __init__(self, node: Any, joint_names: Sequence[str], qos: Any,
                 legacy: bool = True) -> None:
        """Create the publishers on ``node`` for an arm with ``joint_names``.

        Args:
            node: the rclpy node (``create_publisher``).
            joint_names: the model's joints, in order.
            qos: the QoS profile of the topics.
            legacy: also publish the unstamped Float64MultiArray terms and bounds.
        """
        self.torques_pub = node.create_publisher(JointState, "generalized_torques", qos)
        self.terms_stamped_pub = node.create_publisher(JointState, TERMS_TOPIC, qos)
        self.bounds_stamped_pub = node.create_publisher(JointState, BOUNDS_TOPIC, qos)
        self.terms_pub = self.bounds_pub = None
        if legacy:
            self.terms_pub = node.create_publisher(Float64MultiArray, LEGACY_TERMS_TOPIC, qos)
            self.bounds_pub = node.create_publisher(Float64MultiArray, LEGACY_BOUNDS_TOPIC, qos)
        self._subscribers, self._checked = (False, False), -math.inf
        self.set_joints(joint_names)

    def set_joints(self, joint_names: Sequence[str]) -> None:
        """The joints of every message from now on (a URDF swap)."""
        #: ``publish_torques(stamp, frame_id, q, qd, tau)``: ``generalized_torques`` for one
        #: sample, its stamp and frame, model order (the encoder's own method: no wrapper
        #: call on the 1 kHz path)
        self.publish_torques = JointStateOutput(self.torques_pub, joint_names).publish
        self._terms_out = JointStateOutput(self.terms_stamped_pub, term_names(joint_names),
                                           filled=("position",))
        self._terms_msg = Float64MultiArray()
        self._terms_axes = [("term", TERM_LABELS), ("joint", list(joint_names))]
        self._bounds_msg: Float64MultiArray | None = None
        self._bounds_out: JointStateOutput | None = None
        self._bounds_method = ""

    def wanted(self, now: float) -> tuple[bool, bool]:
        """Whether the terms and the bounds have subscribers (stamped or legacy).

        Args:
            now: the monotonic clock [s]; the counts are looked up again once
                :data:`SUBSCRIBER_CHECK_PERIOD` has passed (a new subscriber gets its
                first message within that time).
        """
        if now - self._checked >= SUBSCRIBER_CHECK_PERIOD:
            self._checked = now
            self._subscribers = (
                _subscribed(self.terms_stamped_pub, self.terms_pub),
                _subscribed(self.bounds_stamped_pub, self.bounds_pub))
        return self._subscribers

    def publish_terms(self, stamp: Any, frame_id: str, rows: np.ndarray) -> None:
        """The (len(TERM_LABELS), nv) rows of the sample with ``stamp`` and ``frame_id``."""
        self._terms_out.publish(stamp, frame_id, np.ascontiguousarray(rows).ravel())
        if self.terms_pub is not None:
            self.terms_pub.publish(labelled_array(rows, self._terms_axes, self._terms_msg))

    def publish_bounds(self, stamp: Any, frame_id: str, values: np.ndarray,
                       method: str) -> None:
        """The entries of ``BOUND_LABELS`` and their method, for the sample with ``stamp``."""
        if self._bounds_out is None or self._bounds_method != method:
            self._bounds_method = method
            self._bounds_out = JointStateOutput(self.bounds_stamped_pub, bound_names(method),
                                                filled=("position",))
            self._bounds_msg = None
        self._bounds_out.publish(stamp, frame_id, np.asarray(values, dtype=np.float64))
        if self.bounds_pub is None:
            return
        if self._bounds_msg is None:
            self._bounds_msg = labelled_array(
                values[:, None], [("bound", BOUND_LABELS), ("method", [method])])
        else:
            labelled_array(values[:, None], (), self._bounds_msg)
        self.bounds_pub.publish(self._bounds_msg)


def _subscribed(stamped: Any, legacy: Any | None) -> bool:
    """Whether either publisher has a subscriber."""
    return stamped.get_subscription_count() > 0 or (
        legacy is not None and legacy.get_subscription_count() > 0)
