"""dynamics_node's momentum observers on ROS: ``external_torques`` and the contact status.

The adapter around :class:`robot_tv_dynamics.observer.live.LiveObservers` (which does
everything but the messages: friction, the generalized and/or classical observer, the
contact detectors with hysteresis, the status contents): when a joint_states sample
carries efforts (measured joint torques), each observer's residual r ≈ τ̂_ext is
published with the sample's stamp and frame, q and q̇ in model order
(``external_torques``, ``external_torques_classical``), and the observers' statuses
become ``dynamics_node: contact`` / ``dynamics_node: observer`` DiagnosticStatus entries
(OK / ERROR naming the joint and the value; WARN with the reason when a sample's efforts
were missing, of the wrong size or non-finite). The torques of eq. (39) are answered
regardless.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sensor_msgs.msg import JointState

from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inputs import ModelState
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer.live import NO_EFFORT, OBSERVER_MODELS, LiveObservers
from robot_tv_dynamics.ros.conversions import make_status
from robot_tv_dynamics.ros.joint_state_cdr import JointStateOutput

__all__ = ["OBSERVER_MODELS", "TOPICS", "ContactOutputs"]

#: Topic of each observer's residual.
TOPICS = {"generalized": "external_torques", "classical": "external_torques_classical"}


class ContactOutputs:
    """The observers of one dynamics node and their publishers (module docstring).

    Attributes:
        observers: the core :class:`~robot_tv_dynamics.observer.live.LiveObservers`.
        publishers: the residual publisher of each observer kind.
    """

    def __init__(
        self, node: Any, model: RobotModel, config: Any, friction: FrictionParameters | None,
        qos: Any,
    ) -> None:
        """Build the observers named by ``config.observer_model`` and their publishers.

        Args:
            node: the rclpy node (publishers are created on it).
            model: the arm.
            config: the node config (``observer_model``, ``observer_gain``,
                ``contact_threshold``, ``contact_release``, ``contact_mode``).
            friction: subtracted from the measured efforts; None = none.
            qos: QoS profile of the residual topics.

        Raises:
            InvalidInputError: an unknown observer model or bad detector settings.
        """
        self.observers = LiveObservers(
            model, config.observer_model, gain=config.observer_gain,
            threshold=config.contact_threshold, release=config.contact_release,
            mode=config.contact_mode, friction=friction)
        kinds = self.observers.kinds
        self.publishers = {kind: node.create_publisher(JointState, TOPICS[kind], qos)
                           for kind in kinds}
        self._outputs = {kind: JointStateOutput(self.publishers[kind], model.joint_names)
                         for kind in kinds}

    def on_sample(self, msg: Any, effort: np.ndarray | None, state: ModelState,
                  no_effort: str = NO_EFFORT) -> None:
        """Advance every observer with one sample's efforts.

        ``effort`` None: the sample has none usable, because ``no_effort`` (which the
        observer status then says).
        """
        for kind, residual in self.observers.update(effort, state, no_effort).items():
            # the sample's stamp and frame, its q and q̇ in model order, r as effort
            self._outputs[kind].publish(
                msg.header.stamp, msg.header.frame_id, state.q, state.qd, residual)

    def statuses(self, hardware_id: str) -> list[Any]:
        """The ``dynamics_node: contact`` and ``dynamics_node: observer`` statuses now."""
        return [make_status(s.name, s.level, s.message, hardware_id, s.values)
                for s in self.observers.statuses()]
