"""estimator_node: Θ̂(t) of a link's load from measured joint efforts.

On every ``joint_states`` sample with efforts (matched by joint name) the node takes q,
q̇ and the measured effort τ_m, forms q̈ by the shared input rules (causal filter, delay
1/(π f_c); q, q̇, τ_m are delayed by the same amount), builds the load body's regressor
rows y = τ_m − τ_f − τ_0 + R_b Φ_b⁰ = R_b Φ_b against the base model (the URDF, or an
identified URDF, plus ``friction_file``), checks the excitation and updates one load
filter (:class:`~robot_tv_dynamics.estimation.load.LoadFilter`, the same as
``robot-tv-dynamics estimate``: classical or projected RLS on the load, or the EKF on its
log-Cholesky parameters; the reported load is always a body). It publishes, at most
every ``publish_period`` (sample stamps):

- ``inertial_parameters_stamped`` (sensor_msgs/JointState-shaped,
  :mod:`~robot_tv_dynamics.inputs.body_vectors`): the full Θ̂ (the base model with the
  load body's row = base share + reported load) in ``position``, Θ̇̂ in ``velocity`` when
  the estimator models a rate (the load filters do not: empty), **stamped with the last
  joint_states sample the estimate has used** (its update's measurement, not the publish
  time), what monitor_node and dynamics_node take;
- while ``legacy_theta_topics`` is true (deprecated): the same Θ̂ (and Θ̇̂) unstamped on
  ``inertial_parameters`` / ``inertial_parameter_rates`` (Float64MultiArray ``body`` ×
  ``phi``);
- ``payload_estimate`` (geometry_msgs/InertiaStamped, frame_id = ``payload_frame``, the same
  stamp): the load alone, mass, COM and inertia about the COM in the link frame (franka
  ``set_load``, UR ``set_payload``);
- ``/diagnostics``: ``estimator_node: <link>`` (method, excitation, held updates,
  covariance trace, margin λ_min(f(Φ̂_b)) against ε, the recursion's raw margin, skipped
  updates, detected changes and the stamp of the last, samples left out while the q̈
  filter settled, converged or not) and the input status.

Bad input never stops the node: joint_states without efforts, NaN, unknown joints or a
stamp going backwards are rejected with a diagnostics reason (no estimate from them).
An unknown ``link`` or a friction file for other joints stops start-up with one message.
Every parameter: README.md, "ROS 2 interface"; the methods: docs/estimation.md.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import InertiaStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from robot_tv_dynamics.estimation import METHODS, OnlineLoadEstimator
from robot_tv_dynamics.estimation.online import load_estimate
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.friction import FrictionParameters, load_friction_file
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.model.frames import load_in_frame, payload_frame_for
from robot_tv_dynamics.ros import input_guard, node_base, qos
from robot_tv_dynamics.ros.cell_parameters import (
    EFFORT_NAMES,
    apply_groups,
    effort_map_of,
    unknown_joints_logger,
)
from robot_tv_dynamics.ros.conversions import (
    JointStateReader,
    body_array,
    body_joint_state,
    make_status,
)
from robot_tv_dynamics.ros.estimator_parameters import (
    ESTIMATOR_SETTINGS,
    PARAMETERS,
    RESTART,
    EstimatorNodeConfig,
    default_link,
    parse_noise,
    settings_from_config,
    settings_values,
    summary_noise,
)
from robot_tv_dynamics.ros.joint_state_cdr import subscribe_joint_states
from robot_tv_dynamics.ros.stamped_topics import DeprecationNotice

__all__ = ["ESTIMATOR_SETTINGS", "NODE_NAME", "PARAMETERS", "RESTART", "EstimatorNode",
           "EstimatorNodeConfig", "default_link", "main", "parse_noise",
           "settings_from_config", "settings_values", "summary_noise"]

NODE_NAME = "estimator_node"


class EstimatorNode(node_base.ModelNode):
    """The live payload estimator (see the module docstring)."""

    def __init__(self) -> None:
        """Declare parameters, load the URDF and the friction file, build the estimator.

        Raises:
            URDFError: no usable URDF.
            UnknownNameError: ``link`` is not in the URDF.
            FrictionFileError: a friction file for other joints (or unreadable).
            InvalidInputError: an unknown method or a setting out of range.
        """
        super().__init__(NODE_NAME, PARAMETERS, EstimatorNodeConfig)

    # ------------------------------------------------------------------ start-up
    def _input_status_period(self) -> float:
        return self.config.diagnostics_period

    def _start(self, model: RobotModel) -> None:
        cfg = self.config
        #: Θ of the base model the load is estimated against after ``~/tare`` (None: the
        #: URDF's); kept by parameter sets, forgotten by ``~/reset`` and a URDF swap
        self._tare: np.ndarray | None = None
        self._last_stamp: Time | None = None
        self._build(model, cfg, None)
        # at most one Θ̂ per joint sample: as deep as the joint_states queue
        sample_qos = qos.stream_qos(cfg.joint_states_depth, reliable=True)
        self._theta_stamped_pub = self.create_publisher(
            JointState, "inertial_parameters_stamped", sample_qos)
        self._theta_pub = self._rate_pub = None
        if cfg.legacy_theta_topics:
            self._theta_pub = self.create_publisher(
                Float64MultiArray, "inertial_parameters", sample_qos)
            self._rate_pub = self.create_publisher(
                Float64MultiArray, "inertial_parameter_rates", sample_qos)
            DeprecationNotice(self.get_logger())(
                "inertial_parameters", "inertial_parameters_stamped", "publishing")
        self._payload_pub = self.create_publisher(
            InertiaStamped, "payload_estimate", qos.LATCHED_QOS)
        self.create_service(Trigger, "~/tare", self._on_tare)
        self.create_service(Trigger, "~/reset", self._on_reset)
        subscribe_joint_states(  # bytes, decoded without building messages
            self, "joint_states", self._on_joint_states,
            qos.stream_qos(cfg.joint_states_depth, cfg.joint_states_reliable),
            lambda reason: self._guard.reject("joint_states", reason))
        self._diagnostics_timer = self.create_timer(cfg.diagnostics_period,
                                                    self._publish_diagnostics)
        est = self._estimator
        self.get_logger().info(
            f"ready: {cfg.method} estimate of the load on {est.measurement.link} (body "
            f"{model.body_names[est.measurement.body]}), epsilon = {est.epsilon:.4g}; q̈ by a "
            f"2nd-order filter, f_c = {cfg.acceleration_cutoff:g} Hz, delay "
            f"{1e3 * est.delay:.1f} ms; model {self._description.source}; efforts "
            f"{self._efforts.describe()}; payload_estimate in frame {self._frame}")

    def _build(self, model: RobotModel, cfg: EstimatorNodeConfig,
               tare: np.ndarray | None) -> None:
        """A new estimator for ``model`` with ``cfg``'s settings (all built, then assigned).

        ``tare``: the base Θ (N, 10) the load is estimated against (None: the URDF's).

        Raises:
            RobotTvDynamicsError: an unknown method or link, a bad file or setting
                (nothing changed).
        """
        if cfg.method not in METHODS:
            raise InvalidInputError("method", f'"{cfg.method}" is not one of {list(METHODS)}')
        friction: FrictionParameters | None = None
        if cfg.friction_file.strip():
            friction = load_friction_file(
                Path(cfg.friction_file.strip()).expanduser(), model.joint_names)
        noise = parse_noise(cfg.noise_std)
        if cfg.identification_summary.strip():
            noise = summary_noise(cfg.identification_summary.strip(), model.joint_names)
        link = cfg.link.strip() or default_link(model)
        efforts = effort_map_of({name: getattr(cfg, name) for name in EFFORT_NAMES},
                                model.joint_names)
        frame = payload_frame_for(model, link, cfg.payload_frame)
        estimator = OnlineLoadEstimator(model, link, settings_from_config(cfg, noise), friction,
                                        theta_base=tare)
        self._model = model
        self._estimator = estimator
        self._efforts = efforts
        self._frame = frame
        self._joints = JointStateReader(
            model.joint_names, cfg.strict_joints, ignored=model.locked_joints,
            on_unknown=unknown_joints_logger(self.get_logger()))
        self._last_publish = -math.inf
        self._origin_ns: int | None = None

    def _apply(self, config: EstimatorNodeConfig, names: frozenset[str]) -> str:
        """Take over the LIVE parameters; a new estimator setting restarts the estimate."""
        note = ""
        if names & ESTIMATOR_SETTINGS:
            self._build(self._model, config, self._tare)  # may refuse: the old one is kept
            note = f"the estimate restarts from the base model ({config.method} on " \
                   f"{self._estimator.measurement.link})"
        else:
            apply_groups(config, names, (
                (EFFORT_NAMES, self._set_efforts), (("payload_frame",), self._set_payload_frame),
                (("strict_joints",), self._set_strict_joints)))  # may refuse
        if "diagnostics_period" in names:
            self._diagnostics_timer = self._replace_timer(
                self._diagnostics_timer, config.diagnostics_period, self._publish_diagnostics)
            self._guard.period = config.diagnostics_period
        return note

    def _set_efforts(self, values: dict[str, str]) -> None:
        """Apply new effort parameters from the next sample on (raise to refuse them)."""
        self._efforts = effort_map_of(values, self._model.joint_names)
        self.get_logger().info(f"efforts now {self._efforts.describe()}")

    def _set_strict_joints(self, values: dict[str, bool]) -> None:
        self._joints.strict = bool(values["strict_joints"])

    def _set_payload_frame(self, values: dict[str, str]) -> None:
        """Report the load in another frame from the next estimate on (raise to refuse)."""
        link = self._estimator.measurement.link
        self._frame = payload_frame_for(self._model, link, str(values["payload_frame"]))
        self.get_logger().info(f"payload_estimate now in frame {self._frame}")

    def _on_urdf_swap(self, model: RobotModel) -> None:
        try:
            self._build(model, self.config, None)
        except RobotTvDynamicsError as error:
            self._guard.reject("robot_description", f"estimator not rebuilt: {error}")
            return
        tare, self._tare = self._tare, None
        self.get_logger().warning(
            "URDF swapped: the estimate restarts from the new base model"
            + (" (the tare is forgotten)" if tare is not None else ""))

    # ------------------------------------------------------------------ services
    def _on_tare(self, request: Trigger.Request, response: Trigger.Response
                 ) -> Trigger.Response:
        """``~/tare``: the load estimated now becomes part of the base; zero load from here."""
        est = self._estimator
        if est.estimator.updates == 0:
            response.success = False
            response.message = ("no estimate yet (no update from joint_states with efforts): "
                                "nothing to tare")
            return response
        load, tare = est.load, np.array(est.theta_hat)
        try:
            self._build(self._model, self.config, tare)
        except RobotTvDynamicsError as error:
            response.success, response.message = False, f"not tared: {error}"
            return response
        self._tare = tare
        response.success = True
        response.message = (
            f"tared: the estimated load ({load.mass:.4g} kg on {est.measurement.link}) is part "
            "of the base model now; the estimate restarts from zero load")
        self._restarted(response.message)
        return response

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response
                  ) -> Trigger.Response:
        """``~/reset``: the estimate restarts from the URDF's base model (a tare forgotten)."""
        try:
            self._build(self._model, self.config, None)
        except RobotTvDynamicsError as error:
            response.success, response.message = False, f"not reset: {error}"
            return response
        tare, self._tare = self._tare, None
        response.success = True
        response.message = (
            f"reset: the {self.config.method} estimate on {self._estimator.measurement.link} "
            "restarts from the URDF's base model and the prior"
            + (" (the tare is forgotten)" if tare is not None else ""))
        self._restarted(response.message)
        return response

    def _restarted(self, message: str) -> None:
        """Log a restart and publish the fresh (zero-load) estimate at the last sample's stamp."""
        self.get_logger().info(message)
        if self._last_stamp is not None:  # the latched estimate must not keep the old load
            self._publish(self._last_stamp)

    # ------------------------------------------------------------------ input
    def _read_efforts(self, msg: JointState) -> np.ndarray:
        """τ_m in model order (after ``self._joints.read`` accepted the names) [N·m, N].

        The published effort e becomes τ = sign·gain·(e − offset) (effort parameters).
        """
        n = len(msg.name)
        if len(msg.effort) != n:
            raise InvalidInputError(
                "joint_states.effort",
                f"has {len(msg.effort)} entries for {n} names: the estimator needs measured "
                "joint efforts (no estimate from this message)")
        take = self._joints.indices(msg.name)
        tau = np.frombuffer(msg.effort, dtype=np.float64)[take] if n else np.zeros(0)
        if not np.isfinite(tau).all():
            bad = self._model.joint_names[int(np.flatnonzero(~np.isfinite(tau))[0])]
            raise InvalidInputError("joint_states.effort", f'non-finite value for "{bad}"')
        return self._efforts.torque(tau)

    def _sample_time(self, msg: JointState) -> float:
        """The stamp as 1 s + the exact time since the first sample (integer ns).

        Relative times keep the filters' step exact (an epoch stamp as a float rounds to
        0.24 µs) and equal to what ``robot-tv-dynamics estimate`` computes from a bag.
        """
        ns = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)
        if ns == 0:
            self._estimator.check_stamp(0.0)  # raises: unstamped
        if self._origin_ns is None:
            self._origin_ns = ns
        return 1.0 + (ns - self._origin_ns) * 1e-9

    @input_guard.guarded("joint_states")
    def _on_joint_states(self, msg: JointState) -> None:
        est = self._estimator
        try:
            q, qd = self._joints.read(msg)
            tau = self._read_efforts(msg)
            t = self._sample_time(msg)
            est.check_stamp(t)
        except RobotTvDynamicsError as error:
            self._guard.reject("joint_states", error)
            return
        self._guard.accept("joint_states")
        self._last_stamp = msg.header.stamp
        changed = est.add_sample(t, q, qd, tau)
        if changed and t - self._last_publish >= self.config.publish_period:
            self._last_publish = t
            self._publish(msg.header.stamp)

    # ------------------------------------------------------------------ output
    def _publish(self, stamp: Time) -> None:
        """Θ̂, Θ̇̂ and the load, stamped with ``stamp``: the last joint sample used."""
        est = self._estimator
        names = self._model.body_names
        rate = est.theta_rate_hat
        stamp = Time(sec=int(stamp.sec), nanosec=int(stamp.nanosec))
        self._theta_stamped_pub.publish(
            body_joint_state(stamp, names, "phi", est.theta_hat, rate))
        if self._theta_pub is not None and self._rate_pub is not None:
            self._theta_pub.publish(body_array(est.theta_hat, names, "phi"))
            if rate is not None:
                self._rate_pub.publish(body_array(rate, names, "phi"))
        load = load_estimate(load_in_frame(
            self._model, est.load.phi, est.measurement.link, self._frame))
        msg = InertiaStamped()
        msg.header.stamp = stamp
        msg.header.frame_id = self._frame
        inertia = msg.inertia
        inertia.m = float(load.mass)
        inertia.com.x, inertia.com.y, inertia.com.z = (float(v) for v in load.com)
        i = load.inertia
        inertia.ixx, inertia.ixy, inertia.ixz = float(i[0, 0]), float(i[0, 1]), float(i[0, 2])
        inertia.iyy, inertia.iyz, inertia.izz = float(i[1, 1]), float(i[1, 2]), float(i[2, 2])
        self._payload_pub.publish(msg)

    def _status(self) -> object:
        est, cfg = self._estimator, self.config
        updates = est.estimator.updates
        if est.samples == 0:
            level, message = 1, "no joint_states with efforts yet: no estimate"
        elif not est.excited:
            level, message = 1, (
                f"poorly excited (excitation {est.excitation.excitation:.3g} < "
                f"{cfg.excitation_threshold:g}): only the directions the data determine "
                "are updated (at rest: mass, COM across gravity), the rest held")
        elif est.margin < est.epsilon * (1.0 - 1e-9):
            level, message = 1, (
                f"estimate outside the uniform band: margin {est.margin:.3g} < epsilon "
                f"{est.epsilon:.3g}")
        else:
            level, message = 0, "estimating"
        converged = bool(updates > 0 and est.excited and est.mass_std < cfg.converged_mass_std)
        if level == 0:
            message += ", converged" if converged else ", converging"
        load = est.load
        return make_status(
            f"{NODE_NAME}: {est.measurement.link}", level, message, self._guard.hardware_id, [
                ("method", cfg.method), ("link", est.measurement.link),
                ("payload_frame", self._frame),
                ("body", self._model.body_names[est.measurement.body]),
                ("samples", est.samples), ("updates", updates), ("held", est.held),
                ("partial", est.partial),
                ("excited", est.excited), ("excitation", est.excitation.excitation),
                ("covariance_trace", est.covariance_trace), ("mass", load.mass),
                ("mass_std", est.mass_std), ("margin", est.margin), ("epsilon", est.epsilon),
                ("beta", est.beta),
                ("consistent", est.margin >= est.epsilon * (1.0 - 1e-9)),
                ("raw_margin", est.raw_margin),
                ("skipped", sum(est.estimator.skipped.values())),
                ("changes", est.estimator.changes),
                ("change_alarms", est.estimator.alarms),
                ("changes_withdrawn", est.estimator.withdrawn),
                ("changes_continued", est.estimator.continued),
                ("in_contact", est.estimator.in_contact),
                ("contact_holds", est.estimator.contacts),
                ("last_change_stamp", est.change_stamps[-1] if est.change_stamps else "none"),
                ("settling", est.settling), ("converged", converged),
                ("delay_ms", 1e3 * est.delay), *settings_values(est.settings),
                ("converged_mass_std", cfg.converged_mass_std),
                ("publish_period", cfg.publish_period)])

    def _publish_diagnostics(self) -> None:
        self._guard.publish([self._status()])


def main(args: list[str] | None = None) -> int:
    """Run the node until shut down (Ctrl-C, SIGTERM)."""
    return node_base.run_node(EstimatorNode, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
