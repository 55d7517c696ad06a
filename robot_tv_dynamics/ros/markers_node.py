"""markers_node: Θ(t) in 3D, a lead ball and the equivalent box per body, on ``inertia_markers``.

Subscribes ``joint_states`` (positions only, matched by name), ``inertial_parameters``
(Θ(t); the URDF's until the first message) and the monitor's ``consistency`` (its
``level`` column colours each body), and for every name in the ``estimates`` parameter
``estimates/<name>/inertial_parameters`` and ``estimates/<name>/consistency`` (the
demo's topics). At ``publish_rate``, while somebody subscribes, it publishes on
``inertia_markers`` (visualization_msgs/MarkerArray, :mod:`robot_tv_dynamics.ros.markers`)
per source the scene of :func:`robot_tv_dynamics.visualization.inertia_scene`:

- ``frame_mode: base`` (default): every marker in ``base_frame`` (the URDF's root link),
  posed by the package's own forward kinematics of the latest joint_states — needs no
  TF (``tf2_msgs`` has no wheel here), works live and in a bag; the k-th estimate is
  drawn ``estimate_spacing`` m beside the true Θ along y, with its own skeleton;
- ``frame_mode: links``: each body's markers in its link frame (for a ROS install
  where robot_state_publisher provides TF); the skeleton stays in the base frame.

Topics and parameters: README.md, "ROS 2 interface"; docs/visualization.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import MarkerArray

from robot_tv_dynamics import limits
from robot_tv_dynamics.consistency.monitor import TABLE_FIELDS, Level
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError, UnknownNameError
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros import input_guard, node_base, parameters, qos
from robot_tv_dynamics.ros.conversions import BodyArrayReader, JointStateReader, parse_dim_label
from robot_tv_dynamics.ros.markers import marker_array, scene_markers
from robot_tv_dynamics.ros.parameters import ParameterSpec
from robot_tv_dynamics.visualization import base_frame_name, inertia_scene

NODE_NAME = "markers_node"
FRAME_MODES = ("base", "links")
#: The source name of the true Θ (``inertial_parameters``) in marker namespaces.
TRUTH = "truth"

PARAMETERS = parameters.COMMON_PARAMETERS + (
    ParameterSpec(
        "publish_rate", 10.0, "rate of inertia_markers publication (while subscribed)",
        "Hz", 0.1, 100.0),
    ParameterSpec(
        "frame_mode", "base",
        '"base": every marker in base_frame, posed by the package\'s forward kinematics of '
        'joint_states (no TF needed); "links": each body in its link frame (needs TF)'),
    ParameterSpec(
        "base_frame", "",
        "frame_id of base-frame markers; empty: the URDF's root link"),
    ParameterSpec(
        "estimates", [],
        "names of estimates to draw beside the true Θ: subscribes "
        "estimates/<name>/inertial_parameters and estimates/<name>/consistency"),
    ParameterSpec(
        "estimate_spacing", 1.0,
        "the k-th estimate is drawn k x this far from the true Θ along the base y axis "
        "(frame_mode base; 0 overlays them)", "m", -100.0, 100.0),
    ParameterSpec(
        "status_timeout", 2.0,
        "a body's monitor level older than this is not shown (grey: no status); 0 = never "
        "stale", "s", 0.0, 3600.0),
)


@dataclass(frozen=True)
class MarkersNodeConfig(parameters.CommonConfig):
    """The markers node's parameters (see ``PARAMETERS`` for meaning and units)."""

    publish_rate: float = 10.0
    frame_mode: str = "base"
    base_frame: str = ""
    estimates: tuple[str, ...] = ()
    estimate_spacing: float = 1.0
    status_timeout: float = 2.0


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
        self.theta: np.ndarray | None = None
        self.levels: np.ndarray | None = None
        self.levels_time = -math.inf


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
        self._set_model(model)
        self._q: np.ndarray | None = None
        self._stamp = None
        self._waiting_logged = False
        self._markers_pub = self.create_publisher(MarkerArray, "inertia_markers", qos.RELIABLE_QOS)
        stream = qos.stream_qos(10)
        self.create_subscription(JointState, "joint_states", self._on_joint_states, stream)
        for source in self._sources:
            self.create_subscription(
                Float64MultiArray, source.theta_topic, self._theta_callback(source), stream)
            self.create_subscription(
                Float64MultiArray, source.status_topic, self._status_callback(source), stream)
        self.create_timer(1.0 / cfg.publish_rate, self._publish_markers)
        self.create_timer(1.0, self._guard.publish)
        self.get_logger().info(
            f"ready: {model.n_bodies} bodies from {self._description.source}; "
            f"{len(self._sources)} source(s) {[s.name for s in self._sources]} in frame "
            f"{self._frame if cfg.frame_mode == 'base' else 'of each link'} at "
            f"{cfg.publish_rate:g} Hz")

    def _set_model(self, model: RobotModel) -> None:
        self._model = model
        self._frame = self.config.base_frame.strip() or base_frame_name(model)
        self._joints = JointStateReader(model.joint_names, ignored=model.locked_joints)
        self._theta_readers = {
            s.name: BodyArrayReader(s.theta_topic, model.body_names, "phi", 10)
            for s in self._sources}
        for source in self._sources:
            source.theta, source.levels = None, None
        self._sources[0].theta = np.array(model.theta_nominal)  # the URDF's until Θ arrives

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
        self._guard.accept("joint_states")
        self._q = q
        self._stamp = msg.header.stamp

    def _theta_callback(self, source: _Source) -> Callable[[Float64MultiArray], None]:
        @input_guard.guarded(source.theta_topic)
        def on_theta(node: MarkersNode, msg: Float64MultiArray) -> None:
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
    def _levels(self, source: _Source) -> list[Level | None] | None:
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
            if source.theta is None:
                continue
            scene = inertia_scene(model, source.theta, self._levels(source), kinematics,
                                  base_frame=base)
            markers += scene_markers(
                scene, source.name, model.n_bodies, self._frame, stamp,
                offset=(0.0, k * cfg.estimate_spacing, 0.0),
                body_frames=None if base else model.body_names)
        self._markers_pub.publish(marker_array(markers))


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C / SIGTERM; exit code 1 if it cannot start."""
    return node_base.run_node(MarkersNode, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
