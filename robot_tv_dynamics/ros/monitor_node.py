"""monitor_node: uniform physical consistency of Θ(t) on ``/diagnostics`` (Definition 3).

Subscribes ``inertial_parameters_stamped`` (Θ(t), true or estimated, and Θ̇(t) when
published, sensor_msgs/JointState-shaped: :mod:`~robot_tv_dynamics.inputs.body_vectors`)
and judges every sample at its own stamp, in stamp order: the running inf/sup, the
filtered Θ̇ (when ``velocity`` is empty) and the trend all run on the stamps, never on
receive times. While ``legacy_theta_topics`` is true (deprecated) it also takes the
unstamped ``inertial_parameters`` / ``inertial_parameter_rates`` arrays (on receive
times) until the first stamped Θ arrives, then ignores them. It runs
:class:`~robot_tv_dynamics.consistency.monitor.ConsistencyMonitor` (margins μ_l, sizes
ν_l, running inf/sup, rates, trend prediction, hysteresis) and publishes

- ``/diagnostics`` (diagnostic_msgs/DiagnosticArray): one DiagnosticStatus per body,
  named ``"<node's full name>: <body>"`` (``"<full name>: <status_prefix>: <body>"``
  when ``status_prefix`` is set), hardware_id = the URDF's robot name, level OK / WARN /
  ERROR (STALE when Θ stops arriving), the reasons as the message and the numbers as
  key-values; plus the node's own ``"<full name>: input"`` status (prefixed the same
  way). Published at ``publish_rate`` and at once when a body
  changes level;
- ``consistency_stamped`` (sensor_msgs/JointState, ``<body>/<field>``, position = μ, ν,
  ε, level, inf μ, sup ν, rate, predicted time to crossing), on every stamped Θ sample,
  with **the header stamp of the Θ it judged**;
- ``consistency`` (Float64MultiArray ``body`` × ``field``, the same table, no stamp),
  on every Θ sample while ``legacy_theta_topics`` is true;
- with ``mass_bounds`` true, ``mass_matrix_lower_bounds`` (sensor_msgs/JointState, the
  stamp of the Θ judged): the certified weighted α₁ʷ(t), the paper's α₁(t), the loading
  floor inf_q λ_min(M₀) and whether this Θ keeps it, and a ``monitor_node: mass matrix``
  status (:mod:`~robot_tv_dynamics.ros.live_bounds`; the per-arm searches run once in
  the background and are cached in ``cache_dir``).

Each level change is logged once, when it happens. Topics and parameters:
docs/ros_interface.md, "Parameters".
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_tv_dynamics import limits
from robot_tv_dynamics.consistency.monitor import (
    TABLE_FIELDS,
    ConsistencyMonitor,
    Level,
    MonitorConfig,
)
from robot_tv_dynamics.consistency.rated import rated_size_bound
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.model.frames import input_frame
from robot_tv_dynamics.ros import input_guard, node_base, parameters, qos, robot_description
from robot_tv_dynamics.ros.conversions import BodyArrayReader, labelled_array, make_status
from robot_tv_dynamics.ros.joint_state_cdr import JointStateSample, subscribe_joint_states
from robot_tv_dynamics.ros.live_bounds import LiveBoundsOutput
from robot_tv_dynamics.ros.parameters import LIVE, START_UP, ParameterSpec
from robot_tv_dynamics.ros.stamped_topics import (
    ConsistencyOutput,
    DeprecationNotice,
    StampAxis,
    legacy_parameter,
)

NODE_NAME = "monitor_node"
#: The parameters of the rated-payload bound (applied together, at runtime too).
RATED_NAMES = ("rated_payload", "rated_payload_distance", "payload_frame")
_INF = math.inf

PARAMETERS = parameters.COMMON_PARAMETERS + (
    ParameterSpec(
        "margin_fraction", 0.1,
        "epsilon_l = margin_fraction x the body's nominal margin lambda_min(f(Phi_l)) "
        "(the URDF's), unless uniform_margin is set", "", 0.0, 1.0,
        runtime=LIVE),
    ParameterSpec(
        "uniform_margin", 0.0,
        "when > 0: epsilon_l = uniform_margin for every body (0 = unset)", "kg·m² or kg",
        0.0, _INF,
        runtime=LIVE),
    ParameterSpec(
        "upper_bound", 0.0,
        "when > 0: ERROR when lambda_max(f(Phi_l)) exceeds it, for every body (0 = use "
        "upper_factor)", "kg·m² or kg", 0.0, _INF,
        runtime=LIVE),
    ParameterSpec(
        "upper_factor", 10.0,
        "when upper_bound is 0: the bound is upper_factor x the body's nominal "
        "lambda_max(f(Phi_l)); 0 disables the upper check", "", 0.0, 1e9,
        runtime=LIVE),
    ParameterSpec(
        "rated_payload", 0.0,
        "the cell's rated payload: when > 0 (and upper_bound is 0), the body carrying "
        "payload_frame is held to the size any load up to this mass within "
        "rated_payload_distance of that frame can give, times (1 + warn_band), so a load "
        "within the rating never warns; 0 = upper_factor for that body too", "kg", 0.0,
        1e5, runtime=LIVE),
    ParameterSpec(
        "rated_payload_distance", 0.1,
        "radius about payload_frame's origin within which the rated payload's mass lies "
        "(from the arm's payload diagram)", "m", 0.0, 100.0, runtime=LIVE),
    ParameterSpec(
        "payload_frame", "",
        "the frame the rated payload is carried at; empty = the URDF's flange frame (tool0, "
        "flange, panda_link8, fr3_link8)", runtime=LIVE),
    ParameterSpec(
        "rate_bound", 0.0,
        "ERROR when sigma_max(f(dPhi_l/dt)) exceeds it; 0 disables the rate check",
        "per s", 0.0, _INF,
        runtime=LIVE),
    ParameterSpec(
        "warn_band", 1.0,
        "WARN band b in front of each threshold: margin < (1+b) epsilon, size > bound/(1+b), "
        "rate > rate_bound/(1+b)", "", 0.0, 1e3,
        runtime=LIVE),
    ParameterSpec(
        "horizon", 2.0,
        "WARN when the margin is predicted to reach epsilon within this time (0 disables "
        "the prediction)", "s", 0.0, 86400.0,
        runtime=START_UP),
    ParameterSpec(
        "trend_window", 2.0,
        "window of the least-squares line through the margins that predicts the crossing",
        "s", 0.01, 86400.0,
        runtime=START_UP),
    ParameterSpec(
        "hysteresis", 0.1,
        "an active condition clears only once its quantity is past the threshold by this "
        "fraction (no flapping on a noisy margin)", "", 0.0, 10.0,
        runtime=START_UP),
    ParameterSpec(
        "rate_cutoff", 5.0,
        "corner frequency of the filter that differentiates Θ into Θ̇ when "
        "inertial_parameter_rates is absent or stale", "Hz", 0.01, 1000.0,
        runtime=START_UP),
    ParameterSpec(
        "rate_timeout", 0.5,
        "inertial_parameter_rates older than this are stale (filtered differences are used); "
        "0 = never stale", "s", 0.0, 3600.0,
        runtime=START_UP),
    ParameterSpec(
        "publish_rate", 1.0, "rate of /diagnostics publication (also on every level change)",
        "Hz", 0.01, 1000.0,
        runtime=LIVE),
    ParameterSpec(
        "stale_timeout", 5.0,
        "STALE when no inertial_parameters arrived for this long (after the first); 0 "
        "disables", "s", 0.0, 86400.0,
        runtime=LIVE),
    ParameterSpec(
        "status_prefix", "",
        'prefix of every DiagnosticStatus name after the node\'s full name, "<node>: <prefix>: '
        '<body>" and "<node>: <prefix>: input"; empty: "<node>: <body>"',
        runtime=LIVE),
    ParameterSpec(
        "mass_bounds", False,
        "publish mass_matrix_lower_bounds and a 'mass matrix' status per Theta: the certified "
        "weighted alpha1 (from z_l = lambda_min(Z(Phi_l))) and the loading floor "
        "inf_q lambda_min(M0) of the base arm, which holds while every load "
        "Phi_l - Phi0_l is consistent (searched once per arm in the background, cached)",
        runtime=START_UP, note=parameters.TOPICS_NOTE),
    ParameterSpec(
        "cache_dir", "auto",
        "folder of the bounds cache (mass_bounds); auto: $XDG_CACHE_HOME/robot_tv_dynamics, "
        "else ~/.cache/robot_tv_dynamics; empty disables the cache",
        runtime=START_UP),
    ParameterSpec(
        "bounds_time_limit", 60.0,
        "time limit of each per-arm certified search of mass_bounds (run once per arm)", "s",
        0.1, 86400.0,
        runtime=START_UP),
    legacy_parameter(
        "read the unstamped inertial_parameters / inertial_parameter_rates arrays (until a "
        "stamped Θ arrives on inertial_parameters_stamped) and publish the unstamped "
        "consistency array beside consistency_stamped"),
)


@dataclass(frozen=True)
class MonitorNodeConfig(parameters.CommonConfig):
    """The monitor node's parameters (see ``PARAMETERS`` for meaning and units)."""

    margin_fraction: float = 0.1
    uniform_margin: float = 0.0
    upper_bound: float = 0.0
    upper_factor: float = 10.0
    rated_payload: float = 0.0
    rated_payload_distance: float = 0.1
    payload_frame: str = ""
    rate_bound: float = 0.0
    warn_band: float = 1.0
    horizon: float = 2.0
    trend_window: float = 2.0
    hysteresis: float = 0.1
    rate_cutoff: float = 5.0
    rate_timeout: float = 0.5
    publish_rate: float = 1.0
    stale_timeout: float = 5.0
    status_prefix: str = ""
    mass_bounds: bool = False
    cache_dir: str = "auto"
    bounds_time_limit: float = 60.0
    legacy_theta_topics: bool = True

    def monitor_config(self) -> MonitorConfig:
        """The core :class:`~robot_tv_dynamics.consistency.MonitorConfig` (same-named fields).

        Its fields that are not parameters keep the core's defaults.
        """
        return parameters.config_from_parameters(MonitorConfig, asdict(self))


def status_name(prefix: str, name: str) -> str:
    """The DiagnosticStatus name of ``name``: ``"<prefix>: <name>"``, or ``name`` alone."""
    prefix = prefix.strip()
    return f"{prefix}: {name}" if prefix else name


class MonitorNode(node_base.ModelNode):
    """Per-body uniform consistency of Θ(t), published on /diagnostics."""

    def __init__(self) -> None:
        """Declare parameters, load the URDF, create topics and the publish timer.

        Raises:
            URDFError: no usable URDF (the node cannot start).
            rclpy.exceptions.ParameterException: a parameter of the wrong type or range.
        """
        super().__init__(NODE_NAME, PARAMETERS, MonitorNodeConfig)

    def _input_status_period(self) -> float:
        return max(1.0 / self.config.publish_rate, 1.0)

    def _start(self, model: RobotModel) -> None:
        cfg = self.config
        self._monitor = ConsistencyMonitor(
            model.body_names, model.theta_nominal, cfg.monitor_config())
        self._guard.name = status_name(cfg.status_prefix, "input")
        self._live_bounds = (
            LiveBoundsOutput(self, cfg.cache_dir, cfg.bounds_time_limit) if cfg.mass_bounds
            else None)
        self._set_model(model)
        self._rated = ""  # the rated bound in words, for the log and the status
        self._hold_rated(model, self._rated_bound(model, cfg))
        self._theta_time = -math.inf
        self._rates: np.ndarray | None = None
        self._rates_time = -math.inf
        self._stale = False
        #: stamps of the stamped Θ on one axis; None until the first stamped Θ was judged
        self._axis = StampAxis()
        self._judged_stamp: object | None = None
        self._deprecated = DeprecationNotice(self.get_logger())
        self._consistency_stamped_pub = self.create_publisher(
            JointState, "consistency_stamped", qos.RELIABLE_QOS)
        stream = qos.stream_qos(10)
        # as bytes: the hundred-odd names of a stamped Θ are parsed once, not per message
        subscribe_joint_states(
            self, "inertial_parameters_stamped", self._on_theta_stamped, stream,
            lambda reason: self._guard.reject("inertial_parameters_stamped", reason))
        self._consistency_pub = None
        if cfg.legacy_theta_topics:
            self._consistency_pub = self.create_publisher(
                Float64MultiArray, "consistency", qos.RELIABLE_QOS)
            self.create_subscription(
                Float64MultiArray, "inertial_parameters", self._on_theta, stream)
            self.create_subscription(
                Float64MultiArray, "inertial_parameter_rates", self._on_rates, stream)
        self._diagnostics_timer = self.create_timer(1.0 / cfg.publish_rate,
                                                    self._publish_diagnostics)
        eps = ", ".join(f"{n} {e:.3g}" for n, e in zip(
            model.body_names, self._monitor.epsilon, strict=True))
        self.get_logger().info(
            f"ready: {model.n_bodies} bodies from {self._description.source}; epsilon: {eps}"
            + (f"; {self._rated}" if self._rated else ""))

    def _set_model(self, model: RobotModel) -> None:
        self._model = model
        self._status_names = [
            status_name(self.config.status_prefix, name) for name in model.body_names]
        self._theta_reader = BodyArrayReader("inertial_parameters", model.body_names, "phi", 10)
        self._rates_reader = BodyArrayReader(
            "inertial_parameter_rates", model.body_names, "phi", 10, limits.THETA_RATE)
        self._stamped_reader = BodyVectorReader(
            "inertial_parameters_stamped", model.body_names, "phi")
        self._axes = [("body", model.body_names), ("field", TABLE_FIELDS)]
        self._consistency_msg = Float64MultiArray()
        self._consistency_stamped_out: ConsistencyOutput | None = None
        if self._live_bounds is not None:
            self._live_bounds.set_model(model)

    def _rated_bound(self, model: RobotModel, cfg: MonitorNodeConfig
                     ) -> tuple[int, float, str] | None:
        """(body, U_l, the bound in words) of the rated payload; None: not used.

        Raises:
            InvalidInputError: no flange frame and none named.
        """
        if cfg.upper_bound > 0.0 or cfg.rated_payload <= 0.0:
            return None
        frame = input_frame(model, cfg.payload_frame)
        if frame is None:
            raise InvalidInputError("payload_frame", "the URDF has no flange frame (tool0, "
                                    "flange, panda_link8, fr3_link8): name the frame")
        at = model.link_attachment(frame)
        size = rated_size_bound(model.theta_nominal[at.body], cfg.rated_payload,
                                at.translation, cfg.rated_payload_distance)
        bound = (1.0 + cfg.warn_band) * size
        return at.body, bound, (
            f"rated payload {cfg.rated_payload:g} kg within {cfg.rated_payload_distance:g} m "
            f"of {frame}: body {model.body_names[at.body]} WARN above size {size:.4g}, ERROR "
            f"above {bound:.4g}")

    def _hold_rated(self, model: RobotModel, rated: tuple[int, float, str] | None) -> None:
        """The monitor's bounds from the nominal Θ, the rated body held to its own bound."""
        self._monitor.set_nominal(model.theta_nominal)  # upper_bound / upper_factor
        self._rated = ""
        if rated is not None:
            self._monitor.set_upper(rated[0], rated[1])
            self._rated = rated[2]
            self.get_logger().info(self._rated)

    def _apply(self, config: MonitorNodeConfig, names: frozenset[str]) -> str:
        """Take over the LIVE thresholds, rate and names (``stale_timeout`` is read per use)."""
        thresholds = config.monitor_config()  # raises for values the monitor refuses
        rated = self._rated_bound(self._model, config)  # raises for a frame it cannot use
        if thresholds != self._monitor.config:
            self._monitor.set_config(thresholds)  # U_l from the nominal Θ again
        if thresholds != self._monitor.config or any(name in names for name in RATED_NAMES):
            self._hold_rated(self._model, rated)
        if "publish_rate" in names:
            self._diagnostics_timer = self._replace_timer(
                self._diagnostics_timer, 1.0 / config.publish_rate, self._publish_diagnostics)
            self._guard.period = max(1.0 / config.publish_rate, 1.0)
        if "status_prefix" in names:
            self._status_names = [status_name(config.status_prefix, name)
                                  for name in self._model.body_names]
            self._guard.name = status_name(config.status_prefix, "input")
        return ""

    def _on_urdf_swap(self, model: RobotModel) -> None:
        self._set_model(model)
        self._monitor.body_names = list(model.body_names)
        self._monitor.set_nominal(model.theta_nominal)
        try:
            self._hold_rated(model, self._rated_bound(model, self.config))
        except RobotTvDynamicsError as error:
            self._guard.reject("rated_payload", f"{error}: upper_factor is used")
        self._guard.hardware_id = robot_description.robot_name(model)

    # ------------------------------------------------------------------ inputs
    @input_guard.guarded("inertial_parameter_rates")
    def _on_rates(self, msg: Float64MultiArray) -> None:
        if self._judged_stamp is not None:  # the stamped Θ carries its own Θ̇
            self._guard.accept("inertial_parameter_rates")
            return
        self._deprecated("inertial_parameter_rates", "inertial_parameters_stamped.velocity")
        try:
            self._rates = self._rates_reader.read(msg)
        except RobotTvDynamicsError as error:
            self._guard.reject("inertial_parameter_rates", error)
            return
        self._rates_time = time.monotonic()
        self._guard.accept("inertial_parameter_rates")

    @input_guard.guarded("inertial_parameters")
    def _on_theta(self, msg: Float64MultiArray) -> None:
        """A legacy unstamped Θ, judged on its receive time (until a stamped Θ arrives)."""
        if self._judged_stamp is not None:  # the stamped Θ is judged: skip the legacy one
            self._guard.accept("inertial_parameters")
            return
        self._deprecated("inertial_parameters", "inertial_parameters_stamped")
        now = time.monotonic()
        try:
            theta = self._theta_reader.read(msg)
            timeout = self.config.rate_timeout
            fresh = self._rates is not None and (
                timeout == 0.0 or now - self._rates_time <= timeout)
            transitions = self._monitor.update(now, theta, self._rates if fresh else None)
        except RobotTvDynamicsError as error:
            self._guard.reject("inertial_parameters", error)
            return
        self._guard.accept("inertial_parameters")
        self._judged(now, transitions, None, theta)

    @input_guard.guarded("inertial_parameters_stamped")
    def _on_theta_stamped(self, msg: JointStateSample | JointState) -> None:
        """A stamped Θ (Θ̇ with it or filtered over the stamps), judged at its stamp."""
        topic = "inertial_parameters_stamped"
        now = time.monotonic()
        monitor = self._monitor
        try:
            _, theta, theta_dot = self._stamped_reader.read(msg)
            if theta is None:
                raise InvalidInputError(f"{topic}.position", "is empty (no Θ)")
            t = self._axis.seconds(msg.header.stamp, f"{topic}.header.stamp")
            restart = self._judged_stamp is None and monitor.samples > 0
            if restart:  # the legacy samples were judged on receive times: another axis
                monitor = copy.deepcopy(monitor)
                monitor.reset()
            elif monitor.time is not None and t <= monitor.time:
                how = "repeats" if t == monitor.time else "is older than"
                raise InvalidInputError(
                    f"{topic}.header.stamp",
                    f"{how} the last Θ judged ({t - monitor.time:+.9f} s): Θ is judged in "
                    "stamp order, this one is not judged")
            transitions = monitor.update(t, theta, theta_dot)
        except RobotTvDynamicsError as error:
            self._guard.reject(topic, error)
            return
        if restart:
            self._monitor = monitor
            self.get_logger().info(
                f"{topic}: the first stamped Θ; the legacy inertial_parameters are ignored "
                "from now on and the statistics restart on the stamps")
        self._guard.accept(topic)
        self._judged_stamp = msg.header.stamp
        self._judged(now, transitions, msg.header.stamp, theta)

    def _judged(self, now: float, transitions: list, stamp: object | None,
                theta: np.ndarray) -> None:
        """Publish the table of the Θ just judged (stamped with ``stamp`` when it has one)."""
        self._theta_time = now
        if self._stale:
            self._stale = False
            self.get_logger().info("inertial_parameters arrive again")
        for transition in transitions:
            self._log_transition(transition.level, transition.message)
        table = self._monitor.table()
        if stamp is not None:
            if self._consistency_stamped_out is None:  # the first, or after a URDF swap
                self._consistency_stamped_out = ConsistencyOutput(
                    self._consistency_stamped_pub, self._model.body_names)
            self._consistency_stamped_out.publish(stamp, table)
        if self._consistency_pub is not None:
            self._consistency_pub.publish(
                labelled_array(table, self._axes, self._consistency_msg))
        if self._live_bounds is not None:
            self._live_bounds.judged(theta, stamp)
        if transitions:
            self._publish_diagnostics()

    def _log_transition(self, level: Level, message: str) -> None:
        logger = self.get_logger()
        if level == Level.ERROR:
            logger.error(message)
        elif level == Level.WARN:
            logger.warning(message)
        else:
            logger.info(message)

    # ------------------------------------------------------------------ output
    def _publish_diagnostics(self) -> None:
        monitor, hardware_id = self._monitor, self._guard.hardware_id
        now = time.monotonic()
        timeout = self.config.stale_timeout
        statuses = []
        if monitor.samples == 0:
            for l, name in enumerate(self._status_names):
                statuses.append(make_status(
                    name, int(Level.OK),
                    "no inertial_parameters received yet; the URDF's nominal values are shown",
                    hardware_id, [
                        ("margin", float(monitor.nominal_mu[l])),
                        ("size", float(monitor.nominal_nu[l])),
                        ("epsilon", float(monitor.epsilon[l])),
                        ("upper bound", float(monitor.upper[l])),
                        ("rate bound", monitor.rate_bound),
                        ("samples", 0)]))
        else:
            judged = self._judged_stamp
            stamp_text = ("unstamped (legacy inertial_parameters)" if judged is None else
                          f"{judged.sec}.{judged.nanosec:09d}")  # type: ignore[attr-defined]
            stale = timeout > 0.0 and now - self._theta_time > timeout
            if stale and not self._stale:
                self._stale = True
                self.get_logger().warning(
                    f"no inertial_parameters for {now - self._theta_time:.1f} s: STALE")
            for l in range(monitor.n_bodies):
                s = monitor.status(l)
                level, message = int(s.level), s.message
                if stale:
                    level = int(Level.STALE)
                    message = (f"no inertial_parameters for {now - self._theta_time:.1f} s "
                               f"(last: {s.level.name}, {s.message})")
                statuses.append(make_status(
                    self._status_names[l], level, message, hardware_id, [
                        ("margin", s.mu), ("size", s.nu), ("epsilon", s.epsilon),
                        ("upper bound", s.upper), ("inf margin", s.inf_mu),
                        ("sup size", s.sup_nu), ("rate", s.rate),
                        ("rate bound", monitor.rate_bound),
                        ("predicted time to crossing", s.time_to_crossing),
                        ("nominal margin", float(monitor.nominal_mu[l])),
                        ("samples", monitor.samples),
                        ("theta stamp", stamp_text)]))
        if self._live_bounds is not None:
            statuses.append(self._live_bounds.status(
                status_name(self.config.status_prefix, "mass matrix"),
                hardware_id))
        self._guard.publish(statuses)

    def destroy_node(self) -> None:
        """Stop the bounds thread (a search under way ends with the process), destroy."""
        live = getattr(self, "_live_bounds", None)
        if live is not None:
            live.stop()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C / SIGTERM; exit code 1 if it cannot start."""
    return node_base.run_node(MonitorNode, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
