"""markers_node: Θ(t) in 3D, a lead ball and the equivalent box per body, on ``inertia_markers``.

Subscribes ``joint_states`` (positions only, matched by name),
``inertial_parameters_stamped`` (Θ(t); the URDF's until the first message) and the
monitor's ``consistency_stamped`` (its ``level`` entries colour each body), and for every
name in the ``estimates`` parameter ``estimates/<name>/inertial_parameters_stamped`` and
``estimates/<name>/consistency_stamped`` (the demo's topics). Θ and the levels are kept
by stamp (:class:`~robot_tv_dynamics.inputs.timeline.StampedSeries`) and drawn **at the
stamp of the joint sample that poses them**: Θ interpolated there, the level of the
newest Θ judged at or before it (held at most ``status_timeout``). While
``legacy_theta_topics`` is true (deprecated) the unstamped ``inertial_parameters`` and
``consistency`` arrays are read too, for a source that has no stamped message yet (the
latest, by arrival). At ``publish_rate``, while somebody subscribes, it publishes on
``inertia_markers`` (visualization_msgs/MarkerArray, :mod:`robot_tv_dynamics.ros.markers`)
per source the scene of :func:`robot_tv_dynamics.visualization.inertia_scene`:

- ``frame_mode: base`` (default): every marker in ``base_frame`` (the URDF's root link),
  posed by the package's own forward kinematics of the latest joint_states — needs no
  TF (``tf2_msgs`` has no wheel here), works live and in a bag; the k-th estimate is
  drawn ``estimate_spacing`` m beside the true Θ along y, with its own skeleton;
- ``frame_mode: links``: each body's markers in its link frame (for a ROS install
  where robot_state_publisher provides TF); the skeleton stays in the base frame.

Topics and parameters: docs/ros_interface.md, "Parameters"; docs/visualization.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import MarkerArray

from robot_tv_dynamics import limits
from robot_tv_dynamics.consistency.monitor import TABLE_FIELDS, Level
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError, UnknownNameError
from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader
from robot_tv_dynamics.inputs.timeline import EMPTY, STALE, StampedSeries, TimelineRules
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros import input_guard, node_base, parameters, qos
from robot_tv_dynamics.ros.cell_parameters import (
    JOINT_PARAMETERS,
    apply_groups,
    unknown_joints_logger,
)
from robot_tv_dynamics.ros.conversions import BodyArrayReader, JointStateReader, parse_dim_label
from robot_tv_dynamics.ros.joint_state_cdr import subscribe_joint_states
from robot_tv_dynamics.ros.markers import MarkerStore, scene_markers
from robot_tv_dynamics.ros.parameters import LIVE, START_UP, ParameterSpec
from robot_tv_dynamics.ros.stamped_topics import (
    DeprecationNotice,
    StampAxis,
    legacy_parameter,
    read_stamped_levels,
)
from robot_tv_dynamics.visualization import base_frame_name, inertia_scene

NODE_NAME = "markers_node"
FRAME_MODES = ("base", "links")
#: A hold longer than any run: Θ drawn, and levels with ``status_timeout`` 0, never stale [s].
NEVER_STALE = 1e9
#: The source name of the true Θ (``inertial_parameters``) in marker namespaces.
TRUTH = "truth"

PARAMETERS = parameters.COMMON_PARAMETERS + (
    ParameterSpec(
        "publish_rate", 10.0, "rate of inertia_markers publication (while subscribed)",
        "Hz", 0.1, 100.0,
        runtime=LIVE),
    ParameterSpec(
        "frame_mode", "base",
        '"base": every marker in base_frame, posed by the package\'s forward kinematics of '
        'joint_states (no TF needed); "links": each body in its link frame (needs TF)',
        runtime=LIVE),
    ParameterSpec(
        "base_frame", "",
        "frame_id of base-frame markers; empty: the URDF's root link",
        runtime=LIVE),
    ParameterSpec(
        "estimates", [],
        "names of estimates to draw beside the true Θ: subscribes "
        "estimates/<name>/inertial_parameters_stamped and "
        "estimates/<name>/consistency_stamped (and the legacy unstamped ones)",
        runtime=START_UP, note=parameters.TOPICS_NOTE),
    ParameterSpec(
        "estimate_spacing", 1.0,
        "the k-th estimate is drawn k x this far from the true Θ along the base y axis "
        "(frame_mode base; 0 overlays them)", "m", -100.0, 100.0,
        runtime=LIVE),
    ParameterSpec(
        "status_timeout", 2.0,
        "a body's monitor level older than this is not shown (grey: no status): stamped "
        "levels more than this before the pose's stamp, legacy ones received longer ago; "
        "0 = never stale", "s", 0.0, 3600.0,
        runtime=START_UP),
    legacy_parameter(
        "read the unstamped inertial_parameters and consistency arrays (and those of each "
        "estimate) for a source that has sent no stamped message yet"),
) + JOINT_PARAMETERS


@dataclass(frozen=True)
class MarkersNodeConfig(parameters.CommonConfig):
    """The markers node's parameters (see ``PARAMETERS`` for meaning and units)."""

    publish_rate: float = 10.0
    frame_mode: str = "base"
    base_frame: str = ""
    estimates: tuple[str, ...] = ()
    estimate_spacing: float = 1.0
    status_timeout: float = 2.0
    legacy_theta_topics: bool = True
    strict_joints: bool = False


def read_levels(msg: Float64MultiArray, body_names: list[str], topic: str) -> np.ndarray:
    """The ``level`` column of a monitor's ``consistency`` array, in model body order.

    Only that column is read (the others hold inf, e.g. no predicted crossing). Rows are
    matched by the ``body`` names of the label when given.

    Raises:
        InvalidInputError: not a ``body`` x ``field`` array with a ``level`` field, wrong
            sizes, a level that is not 0…3.
        UnknownNameError: a body the model does not have.
    """
    dims = msg.layout.dim
    if len(dims) != 2:
        raise InvalidInputError(f"{topic}.layout", f"expected 2 dimensions, got {len(dims)}")
    axis0, names = parse_dim_label(dims[0].label)
    axis1, fields = parse_dim_label(dims[1].label)
    if axis0 != "body" or axis1 != "field":
        raise InvalidInputError(
            f"{topic}.layout", f'dimension labels must be "body" x "field", got "{axis0}" x '
            f'"{axis1}"')
    n, w, offset = int(dims[0].size), int(dims[1].size), int(msg.layout.data_offset)
    fields = fields if fields is not None else list(TABLE_FIELDS)
    if "level" not in fields or len(fields) != w:
        raise InvalidInputError(f"{topic}.layout", f"no level among {w} fields {fields}")
    if len(msg.data) != offset + n * w:
        raise InvalidInputError(f"{topic}.data", f"has {len(msg.data)} values, expected "
                                f"{offset + n * w}")
    levels = np.frombuffer(msg.data, dtype=np.float64)[offset:].reshape(n, w)[
        :, fields.index("level")]
    if not np.all(np.isin(levels, (0.0, 1.0, 2.0, 3.0))):
        raise InvalidInputError(f"{topic}.data", f"levels must be 0..3, got {levels.tolist()}")
    names = names if names is not None else list(body_names)
    if len(names) != len(body_names) or len(set(names)) != len(names):
        raise InvalidInputError(f"{topic}.layout", f"has {len(names)} bodies (duplicates?), "
                                f"the model {len(body_names)}")
    index = {name: i for i, name in enumerate(names)}
    for name in names:
        if name not in body_names:
            raise UnknownNameError("body", name, body_names)
    return np.array([levels[index[name]] for name in body_names])


class _Source:
    """One Θ stream (the true Θ or an estimate) and the monitor levels for it."""

    def __init__(self, name: str, prefix: str) -> None:
        self.name = name
        self.theta_topic = f"{prefix}inertial_parameters"
        self.status_topic = f"{prefix}consistency"
        self.theta_stamped_topic = f"{prefix}inertial_parameters_stamped"
        self.status_stamped_topic = f"{prefix}consistency_stamped"
        #: the legacy (latest by arrival) Θ and levels
        self.theta: np.ndarray | None = None
        self.levels: np.ndarray | None = None
        self.levels_time = -math.inf
        #: the stamped Θ and levels, by stamp (set up by the node with the model)
        self.theta_series: StampedSeries | None = None
        self.level_series: StampedSeries | None = None


class MarkersNode(node_base.ModelNode):
    """Lead balls, equivalent boxes and the skeleton of each Θ source, as a MarkerArray."""

    def __init__(self) -> None:
        """Declare parameters, load the URDF, create topics and the publish timer.

        Raises:
            URDFError: no usable URDF (the node cannot start).
            InvalidInputError: an unknown frame_mode or executor.
            rclpy.exceptions.ParameterException: a parameter of the wrong type or range.
        """
        super().__init__(NODE_NAME, PARAMETERS, MarkersNodeConfig)

    def _input_status_period(self) -> float:
        return 2.0

    def _start(self, model: RobotModel) -> None:
        cfg = self.config
        if cfg.frame_mode not in FRAME_MODES:
            raise InvalidInputError(
                "frame_mode", f'"{cfg.frame_mode}" is not one of {list(FRAME_MODES)}')
        self._sources = [_Source(TRUTH, "")] + [
            _Source(f"estimates/{name}", f"estimates/{name}/") for name in cfg.estimates]
        self._axis = StampAxis()  # joint_states, Θ and levels: one time axis
        self._deprecated = DeprecationNotice(self.get_logger())
        self._set_model(model)
        self._q: np.ndarray | None = None
        self._stamp = None
        self._q_time: float | None = None  # the pose's stamp on the axis (None: unstamped)
        self._waiting_logged = False
        self._markers_pub = self.create_publisher(MarkerArray, "inertia_markers", qos.RELIABLE_QOS)
        self._store = MarkerStore()  # the arrays' messages, refilled at every publish
        stream = qos.stream_qos(10)
        # every JointState-shaped input as bytes: a stamped Θ or table has a hundred-odd
        # names, parsed once per layout instead of once per message (450 messages/s in
        # the demo, of which a tenth are drawn)
        def subscribe(topic: str, callback: Callable[[Any], None]) -> None:
            subscribe_joint_states(self, topic, callback, stream,
                                   lambda reason: self._guard.reject(topic, reason))

        subscribe("joint_states", self._on_joint_states)
        for source in self._sources:
            subscribe(source.theta_stamped_topic, self._theta_stamped_callback(source))
            subscribe(source.status_stamped_topic, self._status_stamped_callback(source))
            if not cfg.legacy_theta_topics:
                continue
            self.create_subscription(
                Float64MultiArray, source.theta_topic, self._theta_callback(source), stream)
            self.create_subscription(
                Float64MultiArray, source.status_topic, self._status_callback(source), stream)
        self._markers_timer = self.create_timer(1.0 / cfg.publish_rate, self._publish_markers)
        self.create_timer(1.0, self._guard.publish)
        self.get_logger().info(
            f"ready: {model.n_bodies} bodies from {self._description.source}; "
            f"{len(self._sources)} source(s) {[s.name for s in self._sources]} in frame "
            f"{self._frame if cfg.frame_mode == 'base' else 'of each link'} at "
            f"{cfg.publish_rate:g} Hz")

    def _set_strict_joints(self, values: dict[str, bool]) -> None:
        self._joints.strict = bool(values["strict_joints"])

    def _set_model(self, model: RobotModel) -> None:
        self._model = model
        self._frame = self.config.base_frame.strip() or base_frame_name(model)
        self._joints = JointStateReader(
            model.joint_names, bool(self.get_parameter("strict_joints").value),
            ignored=model.locked_joints, on_unknown=unknown_joints_logger(self.get_logger()))
        self._theta_readers = {
            s.name: BodyArrayReader(s.theta_topic, model.body_names, "phi", 10)
            for s in self._sources}
        self._theta_stamped_readers = {
            s.name: BodyVectorReader(s.theta_stamped_topic, model.body_names, "phi")
            for s in self._sources}
        timeout = self.config.status_timeout
        theta_rules = TimelineRules(max_age=NEVER_STALE, window=0.0, history=10.0)
        level_rules = TimelineRules(max_age=timeout if timeout > 0.0 else NEVER_STALE,
                                    window=0.0, history=10.0)
        for source in self._sources:
            source.theta, source.levels = None, None
            source.theta_series = StampedSeries(
                (model.n_bodies, 10), theta_rules, source.theta_stamped_topic)
            source.level_series = StampedSeries(
                (model.n_bodies,), level_rules, source.status_stamped_topic)
        self._sources[0].theta = np.array(model.theta_nominal)  # the URDF's until Θ arrives

    def _apply(self, config: MarkersNodeConfig, names: frozenset[str]) -> str:
        """Take over the LIVE parameters (``frame_mode``, ``estimate_spacing``: per publish)."""
        if config.frame_mode not in FRAME_MODES:
            raise InvalidInputError(
                "frame_mode", f'"{config.frame_mode}" is not one of {list(FRAME_MODES)}')
        apply_groups(config, names, ((("strict_joints",), self._set_strict_joints),))
        if "base_frame" in names:
            self._frame = config.base_frame.strip() or base_frame_name(self._model)
        if "publish_rate" in names:
            self._markers_timer = self._replace_timer(
                self._markers_timer, 1.0 / config.publish_rate, self._publish_markers)
        return ""

    def _on_urdf_swap(self, model: RobotModel) -> None:
        self._set_model(model)

    # ------------------------------------------------------------------ inputs
    @input_guard.guarded("joint_states")
    def _on_joint_states(self, msg: JointState) -> None:
        try:
            take = self._joints.indices(list(msg.name))
            if len(msg.position) != len(msg.name):
                raise InvalidInputError(
                    "joint_states.position",
                    f"has {len(msg.position)} entries for {len(msg.name)} names")
            q = np.asarray(msg.position, dtype=np.float64)[take]
            if not np.isfinite(q).all():
                raise InvalidInputError("joint_states.position", "contains NaN or Inf")
            limits.check_bounded(q, limits.POSITION, "joint_states.position",
                                 list(self._joints.joint_names))
        except RobotTvDynamicsError as error:
            self._guard.reject("joint_states", error)
            return
        stamp = msg.header.stamp
        self._guard.accept("joint_states")
        self._q = q
        # the markers' header stamp (a raw sample's stamp is not a builtin_interfaces Time)
        self._stamp = Time(sec=int(stamp.sec), nanosec=int(stamp.nanosec))
        self._q_time = (None if int(stamp.sec) == 0 and int(stamp.nanosec) == 0 else
                        self._stamp_seconds(stamp, "joint_states.header.stamp"))

    def _stamp_seconds(self, stamp: object, argument: str) -> float | None:
        try:
            return self._axis.seconds(stamp, argument)
        except RobotTvDynamicsError:
            return None  # a malformed pose stamp: drawn with the newest Θ

    def _theta_stamped_callback(self, source: _Source) -> Callable[[JointState], None]:
        topic = source.theta_stamped_topic

        def theta(node: MarkersNode, msg: JointState) -> np.ndarray:
            _, value, _ = node._theta_stamped_readers[source.name].read(msg)
            if value is None:
                raise InvalidInputError(f"{topic}.position", "is empty (no Θ)")
            return value

        return self._stamped_callback(topic, theta, lambda: source.theta_series)

    def _status_stamped_callback(self, source: _Source) -> Callable[[JointState], None]:
        topic = source.status_stamped_topic

        def levels(node: MarkersNode, msg: JointState) -> np.ndarray:
            return read_stamped_levels(msg, node._model.body_names, topic)

        return self._stamped_callback(topic, levels, lambda: source.level_series)

    def _stamped_callback(
            self, topic: str, read: Callable[[MarkersNode, JointState], np.ndarray],
            series_of: Callable[[], StampedSeries | None]) -> Callable[[JointState], None]:
        """A guarded callback adding ``read(msg)`` to the series at the message's stamp."""

        @input_guard.guarded(topic)
        def on_message(node: MarkersNode, msg: JointState) -> None:
            try:
                value = read(node, msg)
                series = series_of()
                assert series is not None  # made with the model, before any callback
                series.add(node._axis.seconds(msg.header.stamp, f"{topic}.header.stamp"), value)
            except RobotTvDynamicsError as error:
                node._guard.reject(topic, error)
                return
            node._guard.accept(topic)

        return lambda msg: on_message(self, msg)

    def _theta_callback(self, source: _Source) -> Callable[[Float64MultiArray], None]:
        @input_guard.guarded(source.theta_topic)
        def on_theta(node: MarkersNode, msg: Float64MultiArray) -> None:
            if source.theta_series is not None and len(source.theta_series):
                node._guard.accept(source.theta_topic)  # the stamped Θ is drawn
                return
            node._deprecated(source.theta_topic, source.theta_stamped_topic)
            try:
                theta = node._theta_readers[source.name].read(msg)
            except RobotTvDynamicsError as error:
                node._guard.reject(source.theta_topic, error)
                return
            node._guard.accept(source.theta_topic)
            source.theta = theta

        return lambda msg: on_theta(self, msg)

    def _status_callback(self, source: _Source) -> Callable[[Float64MultiArray], None]:
        @input_guard.guarded(source.status_topic)
        def on_status(node: MarkersNode, msg: Float64MultiArray) -> None:
            if source.level_series is not None and len(source.level_series):
                node._guard.accept(source.status_topic)  # the stamped levels are used
                return
            node._deprecated(source.status_topic, source.status_stamped_topic)
            try:
                levels = read_levels(msg, node._model.body_names, source.status_topic)
            except RobotTvDynamicsError as error:
                node._guard.reject(source.status_topic, error)
                return
            node._guard.accept(source.status_topic)
            source.levels = levels
            source.levels_time = time.monotonic()

        return lambda msg: on_status(self, msg)

    # ------------------------------------------------------------------ output
    def _at(self, source: _Source) -> float | None:
        """The stamp the source is drawn at: the pose's, else its newest Θ's (None: legacy)."""
        series = source.theta_series
        if self._q_time is not None:
            return self._q_time
        if series is not None and len(series):
            return series.newest
        return None

    def _theta(self, source: _Source, t: float | None) -> np.ndarray | None:
        """Θ of the source at stamp t (interpolated, or held), else the legacy / URDF Θ."""
        series = source.theta_series
        if series is not None and len(series) and t is not None:
            return series.at(t).value
        if series is not None and len(series):
            return series.at(series.newest).value
        return source.theta

    def _levels(self, source: _Source, t: float | None = None) -> list[Level | None] | None:
        series = source.level_series
        if series is not None and len(series):
            found = series.at_or_before(series.newest if t is None else t)
            if found.status in (EMPTY, STALE) or found.value is None:
                return None
            return [Level(int(v)) for v in found.value]  # read_stamped_levels checked 0…3
        timeout = self.config.status_timeout
        if source.levels is None or (
                timeout > 0.0 and time.monotonic() - source.levels_time > timeout):
            return None
        return [Level(int(v)) for v in source.levels]  # read_levels checked 0…3

    def _publish_markers(self) -> None:
        if self._markers_pub.get_subscription_count() == 0:
            return
        cfg, model = self.config, self._model
        base = cfg.frame_mode == "base"
        if self._q is None:
            if not self._waiting_logged:
                self._waiting_logged = True
                self.get_logger().info("waiting for joint_states to place the markers")
            if base:
                return
        kinematics = model.kinematics(self._q) if self._q is not None else None
        stamp = self._stamp if self._stamp is not None else self.get_clock().now().to_msg()
        markers = []
        for k, source in enumerate(self._sources):
            t = self._at(source)
            theta = self._theta(source, t)
            if theta is None:
                continue
            scene = inertia_scene(model, theta, self._levels(source, t), kinematics,
                                  base_frame=base)
            markers += scene_markers(
                scene, source.name, model.n_bodies, self._frame, stamp,
                offset=(0.0, k * cfg.estimate_spacing, 0.0),
                body_frames=None if base else model.body_names, store=self._store)
        self._markers_pub.publish(self._store.array(markers))


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C / SIGTERM; exit code 1 if it cannot start."""
    return node_base.run_node(MarkersNode, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
