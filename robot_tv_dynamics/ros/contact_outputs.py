"""dynamics_node's momentum observers: ``external_torques`` and the contact status.

The adapter around :mod:`robot_tv_dynamics.observer` for a node: when a joint_states
sample carries efforts (measured joint torques), the friction of ``friction_file`` is
subtracted and the generalized observer (Θ(t), Ψ(t) of the sample's state) and/or the
classical one (Θ of the first sample, held: the arm as it was when observing started,
e.g. with an empty container) advance; their residual r ≈ τ̂_ext is published with the
sample's stamp, and a :class:`~robot_tv_dynamics.observer.ContactDetector` with
hysteresis turns it into a ``dynamics_node: contact`` status on ``/diagnostics``
(OK / ERROR naming the joint and the value). A sample whose efforts are missing, of the
wrong size or non-finite gives no residual, and the reason is on the
``dynamics_node: observer`` status; the torques of eq. (39) are answered regardless.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sensor_msgs.msg import JointState

from robot_tv_dynamics.exceptions import RobotTvDynamicsError
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inputs import ModelState
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer import ContactDetector, MomentumObserver, ObserverConfig
from robot_tv_dynamics.ros.conversions import make_status
from robot_tv_dynamics.ros.joint_state_cdr import JointStateOutput

#: ``observer_model`` values: which observers run.
OBSERVER_MODELS = ("generalized", "classical", "both", "off")
#: Topic of each observer's residual.
TOPICS = {"generalized": "external_torques", "classical": "external_torques_classical"}


class ContactOutputs:
    """The observers, detectors and publishers of one dynamics node (module docstring)."""

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
        self.model = model
        self.friction = friction
        kinds = {"generalized": ("generalized",), "classical": ("classical",),
                 "both": ("generalized", "classical"), "off": ()}[config.observer_model]
        self._configs = {kind: ObserverConfig(gain=config.observer_gain, kind=kind)
                         for kind in kinds}
        self.observers: dict[str, MomentumObserver | None] = dict.fromkeys(kinds)
        self.detectors = {kind: ContactDetector(
            model.joint_names, config.contact_threshold, release=config.contact_release,
            mode=config.contact_mode) for kind in kinds}
        self.publishers = {kind: node.create_publisher(JointState, TOPICS[kind], qos)
                           for kind in kinds}
        self._outputs = {kind: JointStateOutput(self.publishers[kind], model.joint_names)
                         for kind in kinds}
        self.samples = 0
        self.dropped = 0
        self.reason = ""
        self.last: dict[str, np.ndarray] = {}

    def on_sample(self, msg: Any, effort: np.ndarray | None, state: ModelState) -> None:
        """Advance every observer with one sample's efforts (None: the sample has none)."""
        if not self.observers:
            return
        if effort is None:
            self._drop("joint_states carries no effort (measured torque): no residual")
            return
        tau = effort if self.friction is None else effort - self.friction.torque(state.qd)
        for kind in self.observers:
            observer = self.observers[kind]
            if observer is None:  # built at the first sample: the classical Θ is its Θ
                observer = self.observers[kind] = MomentumObserver(
                    self.model, self._configs[kind], theta_nominal=state.theta)
            try:
                residual = observer.update(state.t, state.q, state.qd, tau, state)
                self.detectors[kind].update(state.t, residual)
            except RobotTvDynamicsError as error:
                self._drop(f"{kind} observer: {error}")
                continue
            self.detectors[kind].forget_closed()
            self.last[kind] = residual
            # the sample's stamp and frame, its q and q̇ in model order, r as effort
            self._outputs[kind].publish(
                msg.header.stamp, msg.header.frame_id, state.q, state.qd, residual)
        self.samples += 1

    def _drop(self, reason: str) -> None:
        self.dropped += 1
        self.reason = reason

    def statuses(self, hardware_id: str) -> list[Any]:
        """The ``dynamics_node: contact`` and ``dynamics_node: observer`` statuses now."""
        if not self.observers:
            return []
        out = []
        for kind, detector in self.detectors.items():
            name = "dynamics_node: contact" + ("" if kind == "generalized" else f" ({kind})")
            residual = self.last.get(kind)
            peak = float(np.max(np.abs(residual))) if residual is not None else 0.0
            if detector.in_contact:
                joints = detector.active_joints
                value = ({j: float(residual[self.model.joint_names.index(j)]) for j in joints}
                         if residual is not None else {})
                text = ", ".join(f"{j} {v:+.3g} N·m" for j, v in value.items())
                out.append(make_status(name, 2, f"contact: {text}", hardware_id,
                                       [("observer", kind), ("max |r|", peak)]))
            else:
                out.append(make_status(name, 0, "no contact", hardware_id,
                                       [("observer", kind), ("max |r|", peak)]))
        level = 1 if self.dropped and self.reason else 0
        message = self.reason if level else "residuals published"
        out.append(make_status("dynamics_node: observer", level, message, hardware_id, [
            ("samples", self.samples), ("dropped", self.dropped),
            ("friction", "friction_file" if self.friction is not None else "none")]))
        self.reason = ""
        return out
