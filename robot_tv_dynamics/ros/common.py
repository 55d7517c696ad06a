"""What both nodes share: parameters, QoS, the URDF source, input rejection, main().

- :class:`ParameterSpec` and :func:`declare_parameters`: every parameter is declared
  with a ``ParameterDescriptor`` (description, and a range where one is meaningful);
  the node's config dataclass (whose first fields are :class:`UrdfConfig` or
  :class:`CommonConfig`) is built from the declared values.
- QoS profiles: ``robot_description`` (depth 1, reliable, transient local, as
  robot_state_publisher publishes it), streaming inputs (best effort: a best-effort
  subscription matches reliable *and* best-effort publishers, whereas a reliable one
  ignores best-effort publishers), events and outputs (reliable).
- :class:`RobotDescription`: the URDF from the ``robot_description`` parameter, else
  the ``urdf_path`` parameter, else the first message on the ``robot_description``
  topic; later messages on the topic are URDF swaps, accepted when they keep the
  joints, rejected with a reason otherwise.
- :class:`InputGuard`: rejects bad input with a throttled log line per topic and a
  ``"<node>: input"`` DiagnosticStatus on ``/diagnostics``.
- :class:`ModelNode`: the start-up of dynamics_node and monitor_node (parameters →
  config, URDF, ``/diagnostics``, input guard, URDF swaps).
- :func:`run_node`: the ``main(args=None)`` pattern of ros2/demos.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError, URDFError
from robot_tv_dynamics.model import RobotModel, parse_locked_joints
from robot_tv_dynamics.ros.conversions import make_status

# ---------------------------------------------------------------------------- QoS
#: ``robot_description``: as robot_state_publisher publishes and MoveIt subscribes it.
ROBOT_DESCRIPTION_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL)


def stream_qos(depth: int, reliable: bool = False) -> QoSProfile:
    """QoS of a streaming input (joint_states, Θ, Ψ): best effort unless ``reliable``."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=depth,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE)


#: Events (payload, reference) and every output: reliable, volatile, depth 10.
RELIABLE_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE)


# ---------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class ParameterSpec:
    """One node parameter: name, default, meaning, unit and range.

    Attributes:
        name: parameter name (also the config dataclass field).
        default: default value; its Python type is the parameter type (a list: a string
            array, handed to the config as a tuple).
        description: what it does (shown by ``ros2 param describe``).
        unit: unit in brackets in docs, e.g. ``"Hz"`` (empty if none).
        low: lower end of the range (None: no range declared).
        high: upper end of the range.
    """

    name: str
    default: Any
    description: str
    unit: str = ""
    low: float | int | None = None
    high: float | int | None = None

    def descriptor(self) -> ParameterDescriptor:
        """The ParameterDescriptor (with FloatingPointRange / IntegerRange if ranged)."""
        text = self.description + (f" [{self.unit}]" if self.unit else "")
        descriptor = ParameterDescriptor(name=self.name, description=text)
        if isinstance(self.default, list):
            descriptor.type = ParameterType.PARAMETER_STRING_ARRAY
        if self.low is not None and self.high is not None:
            if isinstance(self.default, bool):
                pass
            elif isinstance(self.default, int):
                descriptor.integer_range = [IntegerRange(
                    from_value=int(self.low), to_value=int(self.high), step=0)]
            elif isinstance(self.default, float):
                descriptor.floating_point_range = [FloatingPointRange(
                    from_value=float(self.low), to_value=float(self.high), step=0.0)]
        return descriptor

    @property
    def range_text(self) -> str:
        """The range for the docs table, e.g. ``[0, 1]`` (empty if none)."""
        if self.low is None or self.high is None:
            return ""
        return f"[{_number(self.low)}, {_number(self.high)}]"


def _number(value: float | int) -> str:
    return "∞" if value == math.inf else f"{value:g}"


def declare_parameters(node: Node, specs: Sequence[ParameterSpec]) -> dict[str, Any]:
    """Declare every parameter with its descriptor; return name → value.

    A string array with an empty default is declared by its type
    (``Parameter.Type.STRING_ARRAY``): rclpy would type the value ``[]`` as a byte array
    and then refuse strings. Left unset (also by ``[]`` in a ``--params-file``, which
    rcl reads as no value) it is the empty default; string arrays come back as tuples.

    Raises:
        rclpy.exceptions.ParameterException: a value of the wrong type or out of range
            (from ``--ros-args -p`` or a ``--params-file``); :func:`run_node` reports it.
    """
    values: dict[str, Any] = {}
    for spec in specs:
        if isinstance(spec.default, list):
            declared = node.declare_parameter(
                spec.name, spec.default or Parameter.Type.STRING_ARRAY, spec.descriptor())
            value = spec.default if declared.value is None else declared.value
            values[spec.name] = tuple(str(item) for item in value)
        else:
            values[spec.name] = node.declare_parameter(
                spec.name, spec.default, spec.descriptor()).value
    return values


def config_from_parameters(cls: type, values: dict[str, Any]) -> Any:
    """Build a config dataclass from declared parameter values (by field name)."""
    names = {f.name for f in fields(cls)}
    return cls(**{key: value for key, value in values.items() if key in names})


#: The URDF source and log throttling (every node of the package declares them).
URDF_PARAMETERS = (
    ParameterSpec(
        "robot_description", "",
        "URDF text; when empty, urdf_path, then the robot_description topic are used"),
    ParameterSpec(
        "urdf_path", "",
        "path of a URDF file, used when the robot_description parameter is empty"),
    ParameterSpec(
        "robot_description_timeout", 10.0,
        "how long start-up waits for the robot_description topic when both URDF parameters "
        "are empty; 0 waits forever", "s", 0.0, 3600.0),
    ParameterSpec(
        "log_throttle", 1.0,
        "at most one log line per input topic per this period about rejected messages",
        "s", 0.0, 3600.0),
    ParameterSpec(
        "locked_joints", [],
        'joints made fixed, e.g. gripper fingers: entries "name" (locked at 0 clipped into '
        'its limits) or "name=position" [rad or m]; their links merge into the parent body '
        "and they leave the dofs, the joint_states read and the outputs"),
)
#: What dynamics_node and monitor_node declare in common: the above and the executor.
COMMON_PARAMETERS = URDF_PARAMETERS + (
    ParameterSpec(
        "executor", "events",
        'executor that runs the callbacks: "events" (rclpy.experimental.EventsExecutor, in '
        'C++, far less overhead per message; used when this rclpy has it, else '
        '"single_threaded") or "single_threaded" (rclpy.executors.SingleThreadedExecutor)'),
)
EXECUTORS = ("events", "single_threaded")


@dataclass(frozen=True)
class UrdfConfig:
    """The fields of :data:`URDF_PARAMETERS`, first in every node's config dataclass."""

    robot_description: str = ""
    urdf_path: str = ""
    robot_description_timeout: float = 10.0
    log_throttle: float = 1.0
    locked_joints: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommonConfig(UrdfConfig):
    """The fields of :data:`COMMON_PARAMETERS` (dynamics_node and monitor_node)."""

    executor: str = "events"


# ---------------------------------------------------------------------------- input guard
class InputGuard:
    """Rejects bad input: one throttled log line per topic, and a diagnostics entry.

    The DiagnosticStatus ``"<node name>: input"`` is WARN while a message was rejected
    during the last ``period`` seconds (message: the latest topic and reason; values:
    accepted/rejected counts and the last reason per topic) and OK otherwise. It is
    published by :meth:`publish` (the node's timer) and right away at a rejection
    (at most every 0.1 s unless the reason is new).
    """

    def __init__(
        self, node: Node, publisher: Any, hardware_id: str, throttle: float, period: float,
    ) -> None:
        """Build the guard.

        Args:
            node: the node (its logger and name).
            publisher: the ``/diagnostics`` publisher.
            hardware_id: the robot name for the DiagnosticStatus.
            throttle: log throttle per topic [s].
            period: how long a rejection keeps the status at WARN [s].
        """
        self._node = node
        self._publisher = publisher
        self.hardware_id = hardware_id
        self._throttle = throttle
        self._period = period
        self.name = f"{node.get_name()}: input"
        self.accepted: dict[str, int] = {}
        self.rejected: dict[str, int] = {}
        self.reasons: dict[str, str] = {}
        self._loggers: dict[str, Any] = {}
        self._last_topic = ""
        self._last_time = -math.inf
        self._last_publish = -math.inf
        self._last_published_reason = ""

    def accept(self, topic: str) -> None:
        """Count an accepted message."""
        self.accepted[topic] = self.accepted.get(topic, 0) + 1

    def reject(self, topic: str, error: BaseException | str) -> None:
        """Reject a message: count it, log (throttled per topic), publish diagnostics."""
        reason = str(error)
        self.rejected[topic] = self.rejected.get(topic, 0) + 1
        self.reasons[topic] = reason
        self._last_topic = topic
        now = time.monotonic()
        self._last_time = now
        logger = self._loggers.get(topic)
        if logger is None:
            logger = self._loggers[topic] = self._node.get_logger().get_child(
                topic.strip("/").replace("/", "."))
        # A child logger per topic: rclpy keeps the throttle state per logger and call site.
        logger.warning(
            f"rejected a message on {topic}: {reason} (last good state kept; "
            f"{self.rejected[topic]} rejected so far)",
            throttle_duration_sec=self._throttle)
        text = f"{topic}: {reason}"
        if text != self._last_published_reason or now - self._last_publish >= 0.1:
            self.publish()

    def status(self) -> Any:
        """The DiagnosticStatus of the inputs now."""
        now = time.monotonic()
        values: list[tuple[str, object]] = []
        for topic in sorted(set(self.accepted) | set(self.rejected)):
            values.append((f"{topic} accepted", self.accepted.get(topic, 0)))
            values.append((f"{topic} rejected", self.rejected.get(topic, 0)))
            if topic in self.reasons:
                values.append((f"{topic} last rejection", self.reasons[topic]))
        if now - self._last_time <= self._period:
            level = 1
            message = f"rejected {self._last_topic}: {self.reasons[self._last_topic]}"
        else:
            level = 0
            message = "inputs accepted" if not self.rejected else (
                f"inputs accepted (last rejection {now - self._last_time:.1f} s ago on "
                f"{self._last_topic}: {self.reasons[self._last_topic]})")
        return make_status(self.name, level, message, self.hardware_id, values)

    def publish(self, extra: Sequence[Any] = ()) -> None:
        """Publish a DiagnosticArray with the input status (and ``extra`` statuses)."""
        status = self.status()
        array = DiagnosticArray()
        array.header.stamp = self._node.get_clock().now().to_msg()
        array.status = [*extra, status]
        self._publisher.publish(array)
        self._last_publish = time.monotonic()
        if self._last_topic:
            self._last_published_reason = f"{self._last_topic}: {self.reasons[self._last_topic]}"


def guarded(topic: str) -> Callable[[Callable[[Any, Any], None]], Callable[[Any, Any], None]]:
    """Decorate a subscription callback so that no exception can stop the node.

    The callbacks reject bad input themselves (the package's errors); anything else
    escaping a callback (a bug, an rclpy error) is rejected the same way, with the
    exception type in the reason, instead of unwinding ``spin``. The node must have an
    :class:`InputGuard` as ``self._guard``.
    """

    def decorate(method: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
        @functools.wraps(method)
        def callback(self: Any, msg: Any) -> None:
            try:
                method(self, msg)
            except Exception as error:
                if not rclpy.ok():  # a callback racing with shutdown: nothing to report
                    return
                self._guard.reject(topic, f"internal error ({type(error).__name__}: {error})")

        return callback

    return decorate


# ---------------------------------------------------------------------------- URDF
def robot_name(model: RobotModel) -> str:
    """The ``<robot name>`` of the URDF (the DiagnosticStatus hardware_id)."""
    return str(model.pinocchio_model.name) or "robot"


def same_joints(a: RobotModel, b: RobotModel) -> str | None:
    """None if ``b`` has the joints of ``a`` (names, order), else why not."""
    if list(a.joint_names) != list(b.joint_names):
        return f"the joints change from {a.joint_names} to {b.joint_names}"
    return None


def same_kinematics(a: RobotModel, b: RobotModel) -> bool:
    """Whether two models with the same joints have the same limits and Jacobians.

    Checked on the limit arrays and J(q) at three fixed configurations inside the
    limits: a URDF that only changes inertias keeps the Jacobian extremes γ, δ.
    """
    if same_joints(a, b) is not None:
        return False
    la, lb = a.joint_limits, b.joint_limits
    if not (np.array_equal(la.lower, lb.lower) and np.array_equal(la.upper, lb.upper)):
        return False
    rng = np.random.default_rng(7)
    lower = np.maximum(la.lower, -np.pi)
    upper = np.minimum(la.upper, np.pi)
    for _ in range(3):
        q = lower + rng.random(a.nv) * (upper - lower)
        if not np.allclose(a.body_jacobians_local(q), b.body_jacobians_local(q),
                           rtol=1e-12, atol=1e-12):
            return False
    return True


class RobotDescription:
    """The URDF of a node: parameter, file, or the ``robot_description`` topic.

    Order at start-up: the ``robot_description`` parameter if non-empty; else the
    ``urdf_path`` parameter if non-empty; else the first message on the
    ``robot_description`` topic (waiting up to ``timeout`` s). The topic stays
    subscribed: a later message with a different URDF is handed to ``on_swap`` when it
    parses and keeps the joints (names and order), and rejected through the
    :class:`InputGuard` otherwise; the same URDF again (robot_state_publisher
    republishes it) is ignored. Every model is built with the same ``locked_joints``.
    """

    TOPIC = "robot_description"

    def __init__(
        self, node: Node, description: str, urdf_path: str, timeout: float,
        locked_joints: Sequence[str] = (),
    ) -> None:
        """Subscribe to the topic (start-up has not happened yet: see :meth:`acquire`).

        Raises:
            InvalidInputError: a malformed ``locked_joints`` entry.
        """
        self._node = node
        self._description = description
        self._urdf_path = urdf_path
        self._timeout = timeout
        self._locked = parse_locked_joints(locked_joints)
        self._pending: str | None = None
        self.model: RobotModel | None = None
        self.source = ""
        self.on_swap: Callable[[RobotModel], None] | None = None
        self.guard: InputGuard | None = None
        self._subscription = node.create_subscription(
            String, self.TOPIC, self._on_message, ROBOT_DESCRIPTION_QOS)

    def acquire(self) -> RobotModel:
        """The model at start-up (spinning the node while waiting for the topic).

        Raises:
            URDFError: the URDF is missing, unreadable or broken; the message names the
                source and the problem.
        """
        if self._description.strip():
            self.source = "parameter robot_description"
            self.model = RobotModel.from_urdf_string(
                self._description, self.source, self._locked)
            return self.model
        if self._urdf_path.strip():
            path = os.path.expanduser(self._urdf_path.strip())
            self.source = f"parameter urdf_path ({path})"
            self.model = RobotModel.from_urdf(path, self._locked)
            return self.model
        topic = self._subscription.topic_name
        self._node.get_logger().info(
            f"robot_description and urdf_path parameters are empty: waiting for a URDF on "
            f"{topic} (transient local)"
            + (f" for up to {self._timeout:g} s" if self._timeout > 0 else ""))
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else math.inf
        while self._pending is None:
            if time.monotonic() >= deadline:
                raise URDFError(
                    f"topic {topic}",
                    f"no message within {self._timeout:g} s, and the robot_description and "
                    "urdf_path parameters are empty (give one of the three)")
            if not rclpy.ok():
                raise URDFError(f"topic {topic}", "shut down while waiting for the URDF")
            rclpy.spin_once(self._node, timeout_sec=0.1)
        self.source = f"topic {topic}"
        self.model = RobotModel.from_urdf_string(self._pending, self.source, self._locked)
        return self.model

    def _on_message(self, msg: String) -> None:
        if self.model is None:
            self._pending = msg.data
            return
        xml = msg.data
        if hashlib.sha256(xml.encode("utf-8")).hexdigest() == self.model.xml_sha256:
            return
        topic = self._subscription.topic_name
        try:
            model = RobotModel.from_urdf_string(xml, f"topic {topic}", self._locked)
        except RobotTvDynamicsError as error:
            self._reject(f"URDF swap rejected, the current model is kept: {error}")
            return
        why = same_joints(self.model, model)
        if why is not None:
            self._reject(f"URDF swap rejected, the current model is kept: {why}; restart "
                         "the node to use this URDF")
            return
        self._node.get_logger().info(
            f"URDF swap on {topic}: new model {model.urdf_sha256[:12]} with the same joints "
            f"(was {self.model.urdf_sha256[:12]} from {self.source})")
        self.model = model
        self.source = f"topic {topic}"
        if self.guard is not None:
            self.guard.accept(self.TOPIC)
        if self.on_swap is not None:
            try:
                self.on_swap(model)
            except Exception as error:  # the node keeps running on what it has
                self._reject(f"URDF swap failed ({type(error).__name__}: {error})")

    def _reject(self, reason: str) -> None:
        if self.guard is not None:
            self.guard.reject(self.TOPIC, reason)
        else:  # pragma: no cover - the nodes always set a guard
            self._node.get_logger().warning(reason)


# ---------------------------------------------------------------------------- node
class ModelNode(Node):
    """The start-up dynamics_node and monitor_node share; each adds what is its own.

    In order: declare ``parameters`` and build ``self.config`` (a ``config_type``, a
    :class:`CommonConfig`), check the executor, acquire the URDF
    (``self._description``, a :class:`RobotDescription`), create the ``/diagnostics``
    publisher and the :class:`InputGuard` ``self._guard`` (WARN for
    :meth:`_input_status_period` after a rejection), hand URDF swaps to
    :meth:`_on_urdf_swap`, then :meth:`_start` with the model. Any failure destroys the
    node and re-raises.
    """

    def __init__(
        self, node_name: str, parameters: Sequence[ParameterSpec], config_type: type,
    ) -> None:
        """Run the shared start-up, then :meth:`_start`.

        Raises:
            URDFError: no usable URDF (the node cannot start).
            InvalidInputError: an unknown executor.
            rclpy.exceptions.ParameterException: a parameter of the wrong type or range.
        """
        super().__init__(node_name)
        try:
            values = declare_parameters(self, parameters)
            self.config = cfg = config_from_parameters(config_type, values)
            check_executor(cfg.executor)
            self._description = RobotDescription(
                self, cfg.robot_description, cfg.urdf_path, cfg.robot_description_timeout,
                cfg.locked_joints)
            model = self._description.acquire()
            self._diagnostics_pub = self.create_publisher(
                DiagnosticArray, "/diagnostics", RELIABLE_QOS)
            self._guard = InputGuard(
                self, self._diagnostics_pub, robot_name(model), cfg.log_throttle,
                self._input_status_period())
            self._description.guard = self._guard
            self._description.on_swap = self._on_urdf_swap
            self._start(model)
        except BaseException:
            self.destroy_node()
            raise

    def _input_status_period(self) -> float:
        """How long a rejection keeps the input status at WARN [s] (``self.config`` is set)."""
        raise NotImplementedError

    def _start(self, model: RobotModel) -> None:
        """The node's own start-up: its state, topics and timers for ``model``."""
        raise NotImplementedError

    def _on_urdf_swap(self, model: RobotModel) -> None:
        """Take over an accepted URDF swap (same joints) to ``model``."""
        raise NotImplementedError


# ---------------------------------------------------------------------------- main
def check_executor(kind: str) -> None:
    """Raise InvalidInputError unless ``kind`` is one of :data:`EXECUTORS`."""
    if kind not in EXECUTORS:
        raise InvalidInputError("executor", f'"{kind}" is not one of {list(EXECUTORS)}')


def make_executor(config: Any) -> Any:
    """The executor named by ``config.executor`` (falls back to SingleThreadedExecutor)."""
    kind = getattr(config, "executor", "single_threaded")
    if kind == "events":
        try:
            from rclpy.experimental import EventsExecutor  # Jazzy 7.1.5+ / Kilted
        except ImportError:  # Humble, older Jazzy: no EventsExecutor
            pass
        else:
            return EventsExecutor()
    return SingleThreadedExecutor()


def spin(node: Node, executor: Any) -> None:
    """Run ``executor`` on ``node`` until the context shuts down (Ctrl-C, SIGTERM).

    The EventsExecutor is driven by ``spin_once`` with a timeout: its ``spin()`` in
    rclpy 7.1 (Jazzy wheels) neither runs timers nor returns on SIGINT, while
    ``spin_once`` does both.
    """
    executor.add_node(node)
    if isinstance(executor, SingleThreadedExecutor):
        executor.spin()
        return
    while rclpy.ok():
        executor.spin_once(timeout_sec=0.5)


def run_node(factory: Callable[[], Node], name: str, args: Sequence[str] | None = None) -> int:
    """``main(args=None)`` of ros2/demos: init, spin, clean shutdown; the exit code.

    A start-up error of the package (a missing or broken URDF) or a parameter of the
    wrong type/range is logged as one line and gives exit code 1, no traceback. Ctrl-C
    and SIGTERM (``ExternalShutdownException``) end with 0, as does an rclpy error raised
    by a callback in flight while the context shuts down.

    Args:
        factory: builds the node (its constructor).
        name: logger name for start-up errors (the default node name).
        args: command-line arguments for ``rclpy.init``.

    Returns:
        The process exit code.
    """
    rclpy.init(args=None if args is None else list(args))
    node = None
    code = 0
    try:
        node = factory()
        spin(node, make_executor(getattr(node, "config", None)))
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (RobotTvDynamicsError, rclpy.exceptions.ParameterException) as error:
        rclpy.logging.get_logger(name).fatal(f"cannot start: {error}")
        code = 1
    except Exception:
        if rclpy.ok():
            raise
        # a callback raced with shutdown (see scripts/ROS_WHEELS.md): not an error
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code
