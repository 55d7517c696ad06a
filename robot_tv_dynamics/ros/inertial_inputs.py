"""dynamics_node's inertial inputs: Θ, Θ̇, Ψ, Ψ̇, payload and reference messages → arrays.

The subscription callbacks of the node's state topics. Each reads its message
(:mod:`robot_tv_dynamics.ros.conversions`, :mod:`robot_tv_dynamics.inputs.body_vectors`)
and hands the arrays to the node's :class:`~robot_tv_dynamics.inputs.ModelInputs` (the
rules that combine them) and, for every new Θ, to the running mass-matrix statistics
(:class:`~robot_tv_dynamics.bounds.RunningBounds`) — both or neither (validate before
mutate). A bad message is rejected through the node's
:class:`~robot_tv_dynamics.ros.input_guard.InputGuard` and changes nothing.

- ``inertial_parameters``, ``inertial_parameter_rates``, ``psi``, ``psi_rates``: the
  legacy Float64MultiArray (``body`` × ``phi``/``psi``), the latest value held; the legacy
  Θ is skipped once a stamped Θ has come;
- ``inertial_parameters_stamped``, ``psi_stamped``: JointState-shaped, paired with joint
  samples by stamp (each new one may release waiting samples: ``release``);
- ``payload``: one link's inertia replacing that link's share of its body's Φ;
- ``reference``: the trajectory q̈ is taken from where it covers a sample's stamp.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from geometry_msgs.msg import InertiaStamped
from rclpy.event_handler import QoSRequestedIncompatibleQoSInfo, SubscriptionEventCallbacks
from rclpy.qos import QoSPolicyKind
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from robot_tv_dynamics import limits
from robot_tv_dynamics.bounds import RunningBounds
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inputs import ModelInputs
from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros import input_guard, qos
from robot_tv_dynamics.ros.conversions import (
    BodyArrayReader,
    inertia_stamped_to_phi,
    joint_trajectory_to_reference,
    payload_stamp,
    read_stamp,
)


class InertialInputs:
    """The state-topic callbacks of one node (module docstring).

    Attributes:
        bounds: the running statistics every accepted Θ goes into (replaced by
            :meth:`set_model`).
    """

    def __init__(
        self, guard: Any, inputs: ModelInputs, model: RobotModel, bounds: RunningBounds,
        logger: Any, *, release: Callable[[], None], clock: Callable[[], float],
        reference_tolerance: float,
    ) -> None:
        """Callbacks for ``inputs`` of ``model``.

        Args:
            guard: the node's input guard (``self._guard``: :func:`input_guard.guarded`).
            inputs: the node's inputs.
            model: the arm (body and joint names of the messages).
            bounds: the running statistics every accepted Θ goes into.
            logger: the node's logger (the payload line).
            release: answers the joint samples a new stamped Θ / Ψ or reference may cover.
            clock: the node clock [s] (the reference's start when its stamp is zero).
            reference_tolerance: a sample this long outside the reference still takes
                its q̈ from it (end value held) [s].
        """
        self._guard = guard
        self._inputs = inputs
        self._logger = logger
        self._release = release
        self._clock = clock
        self._reference_tolerance = reference_tolerance
        #: the link of a ``payload`` whose frame_id is empty (the node's payload_frame)
        self.payload_frame: str | None = None
        self.set_model(model, bounds)

    def set_model(self, model: RobotModel, bounds: RunningBounds) -> None:
        """(Re)build the message readers of ``model``; Θ goes into ``bounds`` from now on."""
        names = model.body_names
        self._model = model
        self.bounds = bounds
        self._theta = BodyArrayReader("inertial_parameters", names, "phi", 10)
        self._theta_rate = BodyArrayReader(
            "inertial_parameter_rates", names, "phi", 10, limits.THETA_RATE)
        self._psi = BodyArrayReader("psi", names, "psi", 12)
        self._psi_rate = BodyArrayReader("psi_rates", names, "psi", 12)
        self._theta_stamped = BodyVectorReader("inertial_parameters_stamped", names, "phi")
        self._psi_stamped = BodyVectorReader("psi_stamped", names, "psi")

    def subscribe(self, node: Any, stream: Any, reliable: Any) -> tuple[Any, Any]:
        """Subscribe the callbacks on ``node``; returns the stamped Θ and Ψ subscriptions.

        Args:
            node: the rclpy node.
            stream: QoS of the Θ, Θ̇, Ψ, Ψ̇ topics (as deep as joint_states: a backlog of
                joint samples still meets the Θ that arrived with them).
            reliable: QoS of ``reference``.

        ``payload`` is latched (:data:`~robot_tv_dynamics.ros.qos.LATCHED_QOS`): a node
        that starts after the payload was published gets it. A publisher that is not
        transient local does not match; it is named as a rejection (log and
        ``/diagnostics``) with how to publish it instead.
        """
        for topic, callback in (("inertial_parameters", self.on_theta),
                                ("inertial_parameter_rates", self.on_theta_rates),
                                ("psi", self.on_psi), ("psi_rates", self.on_psi_rates)):
            node.create_subscription(Float64MultiArray, topic, callback, stream)
        node.create_subscription(
            InertiaStamped, "payload", self.on_payload, qos.LATCHED_QOS,
            event_callbacks=SubscriptionEventCallbacks(incompatible_qos=self._on_payload_qos))
        node.create_subscription(JointTrajectory, "reference", self.on_reference, reliable)
        return (node.create_subscription(
                    JointState, "inertial_parameters_stamped", self.on_theta_stamped, stream),
                node.create_subscription(JointState, "psi_stamped", self.on_psi_stamped, stream))

    def _on_payload_qos(self, info: QoSRequestedIncompatibleQoSInfo) -> None:
        """A ``payload`` publisher whose QoS cannot match the latched subscription."""
        policy = QoSPolicyKind(info.last_policy_kind).name
        self._guard.reject("payload", (
            f"a publisher does not match ({policy}): payload is latched, publish it "
            "reliable and transient local (e.g. ros2 topic pub --once --qos-durability "
            "transient_local --qos-reliability reliable ...)"))

    def change_theta(self, change: Callable[[], None]) -> None:
        """Apply ``change`` to the inputs and update the statistics, or neither.

        If the change or the statistics of the new Θ raise, the inputs (filters,
        payloads), the running μ/ν statistics and α₁/α₂ stay as they were.
        """
        with self._inputs.transaction(), self.bounds.transaction():
            change()
            self.bounds.update(self._inputs.theta)

    @input_guard.guarded("inertial_parameters")
    def on_theta(self, msg: Float64MultiArray) -> None:
        """The legacy Θ (skipped, counted accepted, once a stamped Θ has come)."""
        if len(self._inputs.theta_series):  # the stamped Θ is used: skip the legacy one's
            self._guard.accept("inertial_parameters")  # reading and statistics
            return
        try:
            theta = self._theta.read(msg)
            self.change_theta(lambda: self._inputs.set_theta(theta, time.monotonic()))
        except RobotTvDynamicsError as error:
            self._guard.reject("inertial_parameters", error)
            return
        self._guard.accept("inertial_parameters")

    @input_guard.guarded("inertial_parameter_rates")
    def on_theta_rates(self, msg: Float64MultiArray) -> None:
        """The legacy Θ̇."""
        try:
            rate = self._theta_rate.read(msg)
        except RobotTvDynamicsError as error:
            self._guard.reject("inertial_parameter_rates", error)
            return
        self._inputs.set_theta_rates(rate, time.monotonic())
        self._guard.accept("inertial_parameter_rates")

    @input_guard.guarded("psi")
    def on_psi(self, msg: Float64MultiArray) -> None:
        """The legacy Ψ."""
        try:
            psi = self._psi.read(msg)
        except RobotTvDynamicsError as error:
            self._guard.reject("psi", error)
            return
        self._inputs.set_psi(psi, time.monotonic())
        self._guard.accept("psi")

    @input_guard.guarded("psi_rates")
    def on_psi_rates(self, msg: Float64MultiArray) -> None:
        """The legacy Ψ̇."""
        try:
            psi_dot = self._psi_rate.read(msg)
        except RobotTvDynamicsError as error:
            self._guard.reject("psi_rates", error)
            return
        self._inputs.set_psi_rates(psi_dot, time.monotonic())
        self._guard.accept("psi_rates")

    @input_guard.guarded("inertial_parameters_stamped")
    def on_theta_stamped(self, msg: JointState) -> None:
        """A stamped Θ (and Θ̇ when ``velocity`` carries it); the statistics see every one."""
        topic = "inertial_parameters_stamped"
        try:
            _, theta, theta_dot = self._theta_stamped.read(msg)
            if theta is None:
                raise InvalidInputError(f"{topic}.position", "is empty (no Θ)")
            t = read_stamp(msg.header.stamp, f"{topic}.header.stamp")
            with self.bounds.transaction():  # validate before mutate
                self.bounds.update(theta + self._inputs.payload_delta)
                self._inputs.set_theta_stamped(t, theta, theta_dot)
        except RobotTvDynamicsError as error:
            self._guard.reject(topic, error)
            return
        self._guard.accept(topic)
        self._release()

    @input_guard.guarded("psi_stamped")
    def on_psi_stamped(self, msg: JointState) -> None:
        """A stamped Ψ (and Ψ̇ when ``velocity`` carries it)."""
        topic = "psi_stamped"
        try:
            _, psi, psi_dot = self._psi_stamped.read(msg)
            if psi is None:
                raise InvalidInputError(f"{topic}.position", "is empty (no Ψ)")
            t = read_stamp(msg.header.stamp, f"{topic}.header.stamp")
            self._inputs.set_psi_stamped(t, psi, psi_dot)
        except RobotTvDynamicsError as error:
            self._guard.reject(topic, error)
            return
        self._guard.accept(topic)
        self._release()

    @input_guard.guarded("payload")
    def on_payload(self, msg: InertiaStamped) -> None:
        """One link's inertia (about its COM) replacing that link's share of Θ."""
        try:
            link, phi = inertia_stamped_to_phi(msg, self.payload_frame)
            t = payload_stamp(msg)  # applied from its stamp on (zero: from the next sample)
            self.change_theta(lambda: self._inputs.set_payload(link, phi, t))
        except RobotTvDynamicsError as error:
            self._guard.reject("payload", error)
            return
        self._guard.accept("payload")
        self._logger.info(
            f'payload on link "{link}": mass {phi[0]:.6g} kg (replaces the URDF inertia of '
            f"that link from {'the next sample' if t is None else f'stamp {t:.9f} s'} on)")

    @input_guard.guarded("reference")
    def on_reference(self, msg: JointTrajectory) -> None:
        """The reference trajectory q̈ is taken from."""
        try:
            reference = joint_trajectory_to_reference(
                msg, self._model.joint_names, self._clock(), self._reference_tolerance)
        except RobotTvDynamicsError as error:
            self._guard.reject("reference", error)
            return
        self._inputs.set_reference(reference)
        self._guard.accept("reference")
        self._release()  # a sample may have waited for this tick's reference
