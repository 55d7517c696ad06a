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
- ``payload_estimate`` (geometry_msgs/InertiaStamped, frame_id = ``link``, the same
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

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import InertiaStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_tv_dynamics.estimation import (
    METHODS,
    ExcitationConfig,
    LoadEstimatorSettings,
    OnlineLoadEstimator,
)
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.friction import FrictionParameters, load_friction_file
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros import input_guard, node_base, parameters, qos
from robot_tv_dynamics.ros.conversions import (
    JointStateReader,
    body_array,
    body_joint_state,
    make_status,
)
from robot_tv_dynamics.ros.joint_state_cdr import subscribe_joint_states
from robot_tv_dynamics.ros.parameters import ParameterSpec
from robot_tv_dynamics.ros.stamped_topics import DeprecationNotice, legacy_parameter

NODE_NAME = "estimator_node"

PARAMETERS = parameters.COMMON_PARAMETERS + (
    ParameterSpec(
        "link", "",
        "URDF link carrying the load (estimated in its frame); empty = the last link of the "
        "chain (the body of the last revolute joint)"),
    ParameterSpec(
        "method", "geometric",
        "classical (RLS with forgetting; the reported load is its projection onto bodies), "
        "projected (RLS on the load projected onto bodies that keep the margin) or geometric "
        "(EKF on the load's log-Cholesky parameters, a body by construction)"),
    ParameterSpec(
        "friction_file", "",
        "friction YAML of the model's joints (identify's friction.yaml), subtracted from the "
        "measured efforts; empty = no friction"),
    ParameterSpec(
        "identification_summary", "",
        "summary.json of robot-tv-dynamics identify: the per-joint fit RMS of the identified "
        "model is each joint's noise level (used when noise_std is empty)"),
    ParameterSpec(
        "noise_std", "0.5",
        "noise level of each joint's effort residual: one number for all joints, or one per "
        "joint, comma-separated; rows are weighted by 1/sigma^2 (ignored when "
        "identification_summary is set)", "N·m or N"),
    ParameterSpec(
        "prior_mass_std", 1.0, "prior standard deviation of the load's mass", "kg",
        1e-9, 1e6),
    ParameterSpec(
        "prior_moment_std", 0.1, "prior standard deviation of its first moment h = m c",
        "kg·m", 1e-9, 1e6),
    ParameterSpec(
        "prior_inertia_std", 0.01, "prior standard deviation of its inertia entries",
        "kg·m²", 1e-9, 1e6),
    ParameterSpec(
        "memory", 10.0,
        "time constant of the forgetting: lambda = exp(-dt/memory) per update", "s",
        1e-3, 1e6),
    ParameterSpec(
        "huber", 2.5,
        "Huber k on the normalized innovations (rows beyond k sigma are down-weighted); 0 = "
        "plain least squares", "", 0.0, 1e6),
    ParameterSpec(
        "false_alarm_rate", 1.0 / 600.0,
        "load-change detector (grasp, release): target rate of false changes per second of "
        "motion; its GLR threshold is the chi-square quantile of this rate (1/600: one per "
        "10 min); 0 = no detector", "1/s", 0.0, 4.9),
    ParameterSpec(
        "change_confirm", 0.3,
        "a declared load change is confirmed (and reported) or withdrawn (the estimate put "
        "back) this long after it", "s", 1e-3, 60.0),
    ParameterSpec(
        "margin_fraction", 0.25,
        "epsilon = margin_fraction x lambda_min(f(Phi_b)) of the load body's base share: the "
        "uniform band the projected and geometric estimates keep", "", 1e-6, 0.999),
    ParameterSpec(
        "upper_factor", 5.0,
        "beta = upper_factor x lambda_max(f(Phi_b)) of the base share (projected method)",
        "", 1.0, 1e6),
    ParameterSpec(
        "theta_walk", 0.0,
        "random-walk density of the log-Cholesky parameters (geometric)", "1/s", 0.0, 1e6),
    ParameterSpec(
        "acceleration_cutoff", 20.0,
        "corner frequency of the filter that differentiates q̇ into q̈ (delay 1/(pi f_c); q, "
        "q̇ and the efforts are delayed by the same)", "Hz", 0.1, 1000.0),
    ParameterSpec(
        "max_gap", 0.5, "a gap between samples longer than this restarts the q̈ filter", "s",
        1e-3, 3600.0),
    ParameterSpec(
        "decimation", 1, "update the estimate on every k-th joint_states sample", "", 1, 10000),
    ParameterSpec(
        "excitation_window", 200,
        "updates averaged by the excitation check", "", 1, 1_000_000),
    ParameterSpec(
        "excitation_threshold", 1e-3,
        "lambda_min of the prior-normalized (m, h) information per update below which the "
        "estimate is held (poorly excited); 0 never holds", "", 0.0, 1e9),
    ParameterSpec(
        "converged_mass_std", 0.02,
        "the estimate is reported converged when the mass standard deviation is below this "
        "and the motion is excited", "kg", 0.0, 1e6),
    ParameterSpec(
        "publish_period", 0.01,
        "publish the estimate at most this often (sample stamps); 0 = every update", "s",
        0.0, 3600.0),
    ParameterSpec(
        "joint_states_depth", 100, "queue depth of the joint_states subscription", "", 1, 10000),
    ParameterSpec(
        "joint_states_reliable", False,
        "subscribe joint_states RELIABLE (default BEST_EFFORT, which matches both)"),
    ParameterSpec(
        "ignore_unknown_joints", False,
        "accept joint_states with joints the URDF does not have (ignoring them)"),
    ParameterSpec(
        "diagnostics_period", 1.0, "period of the node's status on /diagnostics", "s",
        0.01, 3600.0),
    legacy_parameter(
        "publish the estimate unstamped on inertial_parameters / inertial_parameter_rates "
        "(Float64MultiArray) beside inertial_parameters_stamped"),
)


@dataclass(frozen=True)
class EstimatorNodeConfig(parameters.CommonConfig):
    """The estimator node's parameters (see ``PARAMETERS`` for meaning and units)."""

    link: str = ""
    method: str = "geometric"
    friction_file: str = ""
    identification_summary: str = ""
    noise_std: str = "0.5"
    prior_mass_std: float = 1.0
    prior_moment_std: float = 0.1
    prior_inertia_std: float = 0.01
    memory: float = 10.0
    huber: float = 2.5
    false_alarm_rate: float = 1.0 / 600.0
    change_confirm: float = 0.3
    margin_fraction: float = 0.25
    upper_factor: float = 5.0
    theta_walk: float = 0.0
    acceleration_cutoff: float = 20.0
    max_gap: float = 0.5
    decimation: int = 1
    excitation_window: int = 200
    excitation_threshold: float = 1e-3
    converged_mass_std: float = 0.02
    publish_period: float = 0.01
    joint_states_depth: int = 100
    joint_states_reliable: bool = False
    ignore_unknown_joints: bool = False
    diagnostics_period: float = 1.0
    legacy_theta_topics: bool = True


def default_link(model: RobotModel) -> str:
    """The last link of the chain: the body of the last revolute (non-prismatic) joint."""
    prismatic = np.asarray(model.joint_limits.prismatic)
    bodies = [l for l in range(model.n_bodies) if not prismatic[l]] or [model.n_bodies - 1]
    return model.body_names[bodies[-1]]


def summary_noise(path: str, joint_names: list[str]) -> tuple[float, ...]:
    """Per-joint noise levels from an identification summary.json (fit RMS, identified).

    Raises:
        InvalidInputError: unreadable file, or joints missing from it.
    """
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
        rms = data["rms"]["identified"]["fit"]
        values = tuple(float(rms[name]) for name in joint_names)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InvalidInputError(
            "identification_summary", f'"{path}": no per-joint rms.identified.fit for the '
            f"joints {joint_names} ({type(error).__name__}: {error})") from None
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise InvalidInputError("identification_summary", f"fit RMS not all > 0: {values}")
    return values


def parse_noise(text: str) -> tuple[float, ...]:
    """The ``noise_std`` parameter: one number, or comma-separated numbers > 0.

    Raises:
        InvalidInputError: not numbers, or not all > 0.
    """
    try:
        values = tuple(float(item) for item in text.replace(" ", "").split(",") if item)
    except ValueError:
        raise InvalidInputError("noise_std", f'"{text}" is not comma-separated numbers') from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise InvalidInputError("noise_std", f'"{text}": need numbers > 0')
    return values


def settings_from_config(cfg: EstimatorNodeConfig, noise_std: tuple[float, ...]
                         ) -> LoadEstimatorSettings:
    """The core settings from the node's parameters."""
    return LoadEstimatorSettings(
        method=cfg.method, noise_std=noise_std,
        prior_std=(cfg.prior_mass_std, cfg.prior_moment_std, cfg.prior_inertia_std),
        memory=cfg.memory, huber=cfg.huber, false_alarm_rate=cfg.false_alarm_rate,
        change_confirm=cfg.change_confirm,
        margin_fraction=cfg.margin_fraction, upper_factor=cfg.upper_factor,
        theta_walk=cfg.theta_walk,
        acceleration_cutoff=cfg.acceleration_cutoff, max_gap=cfg.max_gap,
        decimation=cfg.decimation,
        excitation=ExcitationConfig(window=cfg.excitation_window,
                                    threshold=cfg.excitation_threshold))


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
        if cfg.method not in METHODS:
            raise InvalidInputError("method", f'"{cfg.method}" is not one of {list(METHODS)}')
        self._build(model)
        self._theta_stamped_pub = self.create_publisher(
            JointState, "inertial_parameters_stamped", qos.RELIABLE_QOS)
        self._theta_pub = self._rate_pub = None
        if cfg.legacy_theta_topics:
            self._theta_pub = self.create_publisher(
                Float64MultiArray, "inertial_parameters", qos.RELIABLE_QOS)
            self._rate_pub = self.create_publisher(
                Float64MultiArray, "inertial_parameter_rates", qos.RELIABLE_QOS)
            DeprecationNotice(self.get_logger())(
                "inertial_parameters", "inertial_parameters_stamped", "publishing")
        self._payload_pub = self.create_publisher(
            InertiaStamped, "payload_estimate", qos.RELIABLE_QOS)
        subscribe_joint_states(  # bytes, decoded without building messages
            self, "joint_states", self._on_joint_states,
            qos.stream_qos(cfg.joint_states_depth, cfg.joint_states_reliable),
            lambda reason: self._guard.reject("joint_states", reason))
        self.create_timer(cfg.diagnostics_period, self._publish_diagnostics)
        est = self._estimator
        self.get_logger().info(
            f"ready: {cfg.method} estimate of the load on {est.measurement.link} (body "
            f"{model.body_names[est.measurement.body]}), epsilon = {est.epsilon:.4g}; q̈ by a "
            f"2nd-order filter, f_c = {cfg.acceleration_cutoff:g} Hz, delay "
            f"{1e3 * est.delay:.1f} ms; model {self._description.source}")

    def _build(self, model: RobotModel) -> None:
        cfg = self.config
        friction: FrictionParameters | None = None
        if cfg.friction_file.strip():
            friction = load_friction_file(
                Path(cfg.friction_file.strip()).expanduser(), model.joint_names)
        noise = parse_noise(cfg.noise_std)
        if cfg.identification_summary.strip():
            noise = summary_noise(cfg.identification_summary.strip(), model.joint_names)
        link = cfg.link.strip() or default_link(model)
        self._model = model
        self._estimator = OnlineLoadEstimator(
            model, link, settings_from_config(cfg, noise), friction)
        self._joints = JointStateReader(
            model.joint_names, cfg.ignore_unknown_joints, ignored=model.locked_joints)
        self._last_publish = -math.inf
        self._origin_ns: int | None = None

    def _on_urdf_swap(self, model: RobotModel) -> None:
        try:
            self._build(model)
        except RobotTvDynamicsError as error:
            self._guard.reject("robot_description", f"estimator not rebuilt: {error}")
            return
        self.get_logger().warning("URDF swapped: the estimate restarts from the new base model")

    # ------------------------------------------------------------------ input
    def _read_efforts(self, msg: JointState) -> np.ndarray:
        """τ_m in model order (after ``self._joints.read`` accepted the names)."""
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
        return tau

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
        load = est.load
        msg = InertiaStamped()
        msg.header.stamp = stamp
        msg.header.frame_id = est.measurement.link
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
                ("body", self._model.body_names[est.measurement.body]),
                ("samples", est.samples), ("updates", updates), ("held", est.held),
                ("partial", est.partial),
                ("excited", est.excited), ("excitation", est.excitation.excitation),
                ("covariance_trace", est.covariance_trace), ("mass", load.mass),
                ("mass_std", est.mass_std), ("margin", est.margin), ("epsilon", est.epsilon),
                ("consistent", est.margin >= est.epsilon * (1.0 - 1e-9)),
                ("raw_margin", est.raw_margin),
                ("skipped", sum(est.estimator.skipped.values())),
                ("changes", est.estimator.changes),
                ("change_alarms", est.estimator.alarms),
                ("changes_withdrawn", est.estimator.withdrawn),
                ("last_change_stamp", est.change_stamps[-1] if est.change_stamps else "none"),
                ("settling", est.settling), ("converged", converged),
                ("delay_ms", 1e3 * est.delay)])

    def _publish_diagnostics(self) -> None:
        self._guard.publish([self._status()])


def main(args: list[str] | None = None) -> int:
    """Run the node until shut down (Ctrl-C, SIGTERM)."""
    return node_base.run_node(EstimatorNode, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
