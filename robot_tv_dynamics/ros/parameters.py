"""Node parameters: declared with descriptors, turned into one config dataclass per node.

:class:`ParameterSpec` and :func:`declare_parameters`: every parameter is declared with a
``ParameterDescriptor`` (description, and a range where one is meaningful); the node's
config dataclass (whose first fields are :class:`UrdfConfig` or :class:`CommonConfig`)
is built from the declared values by :func:`config_from_parameters`.

**At runtime** every parameter is one of two kinds, said by its spec's ``runtime``:

- :data:`LIVE`: a set (``ros2 param set``, the SetParameters service, a launch event)
  takes effect at once. :class:`RuntimeParameters` is the node's one set-parameters
  callback: it builds the new config dataclass and hands it, with the names that
  changed, to the node's ``apply`` function, which rebuilds what they feed (validate
  before mutate: an error refuses the whole set with its message and changes nothing);
- :data:`START_UP`: read once, while the node starts (topics, QoS, the URDF, searches
  run at start-up). Declared ``read_only``, so a set is refused ("Trying to set a
  read-only parameter") and ``ros2 param describe`` says why in its constraints.

A spec without a ``runtime`` is refused at runtime by the callback and fails the
package's tests (:func:`unclassified`): a new parameter must say which kind it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    ParameterType,
    SetParametersResult,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from robot_tv_dynamics.exceptions import RobotTvDynamicsError

#: A parameter that takes effect when set at runtime (the node's set-parameters callback).
LIVE = "live"
#: A parameter read at start-up only: declared read-only, a runtime set is refused.
START_UP = "start-up"
#: What a START_UP parameter's descriptor says when its spec gives no ``note``.
RESTART_NOTE = "read at start-up: restart the node to change it"
#: Why a parameter that decides which topics or subscriptions exist is read-only.
TOPICS_NOTE = "read at start-up (it decides the node's topics): restart the node"
#: Why a subscription's depth and reliability are read-only.
QOS_NOTE = ("read at start-up (a subscription's QoS is fixed when it is made): restart "
            "the node")


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
        runtime: :data:`LIVE` (applied when set at runtime) or :data:`START_UP`
            (read-only); None: not classified (refused at runtime, and a test fails).
        note: for a START_UP parameter, what to do instead of setting it (default
            :data:`RESTART_NOTE`); for a LIVE one, what a set does besides the new
            value (e.g. "the estimate restarts"). In the descriptor's constraints.
    """

    name: str
    default: Any
    description: str
    unit: str = ""
    low: float | int | None = None
    high: float | int | None = None
    runtime: str | None = None
    note: str = ""

    def descriptor(self) -> ParameterDescriptor:
        """The ParameterDescriptor (ranges; read-only and the note for START_UP)."""
        text = self.description + (f" [{self.unit}]" if self.unit else "")
        descriptor = ParameterDescriptor(name=self.name, description=text)
        if self.runtime == START_UP:
            descriptor.read_only = True
            descriptor.additional_constraints = self.note or RESTART_NOTE
        elif self.runtime == LIVE:
            descriptor.additional_constraints = (
                "applied when set at runtime" + (f"; {self.note}" if self.note else ""))
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


def unclassified(specs: Sequence[ParameterSpec]) -> list[str]:
    """The names of the specs that are neither :data:`LIVE` nor :data:`START_UP`."""
    return [spec.name for spec in specs if spec.runtime not in (LIVE, START_UP)]


#: The node's apply function: (new config, names that changed) → a note for the log
#: ("" if none). Raises RobotTvDynamicsError to refuse the set (nothing changed).
ApplyParameters = Callable[[Any, frozenset[str]], str]


class RuntimeParameters:
    """The set-parameters callback of one node: LIVE sets applied, everything else refused.

    Registered once the node is built (its parts exist). For a set of parameters
    (atomic, as rclpy calls it): any of the node's specs that is not LIVE refuses the
    whole set with a reason (START_UP ones never get here: rclpy refuses read-only
    parameters first); the others form a new config (``node.config`` with the new
    values, string arrays as tuples), which ``apply`` takes over; then ``node.config``
    becomes it and the node logs what changed. A parameter that is not one of the
    node's specs (rclpy's own ``use_sim_time``) is left to rclpy.

    Attributes:
        applied: how many sets were applied (for the node's own status).
    """

    def __init__(self, node: Node, specs: Sequence[ParameterSpec],
                 apply: ApplyParameters) -> None:
        """Register the callback on ``node`` (whose ``config`` is a frozen dataclass)."""
        self._node = node
        self._specs = {spec.name: spec for spec in specs}
        self._apply = apply
        self.applied = 0
        node.add_on_set_parameters_callback(self.on_set)

    def on_set(self, parameters: list[Parameter]) -> SetParametersResult:
        """Apply or refuse one atomic set (rclpy's on-set callback)."""
        changes: dict[str, Any] = {}
        for parameter in parameters:
            spec = self._specs.get(parameter.name)
            if spec is None:
                continue  # rclpy's own (use_sim_time): its own callbacks act on it
            if spec.runtime != LIVE:
                return SetParametersResult(successful=False, reason=(
                    f"{spec.name} is not classified as applied at runtime or read at "
                    "start-up: refused (the package must classify every parameter)"))
            value = parameter.value
            if isinstance(spec.default, list):
                value = tuple(str(item) for item in (value or ()))
            changes[spec.name] = value
        if not changes:
            return SetParametersResult(successful=True)
        config = self._node.config  # type: ignore[attr-defined]
        known = {f.name for f in fields(config)}
        try:
            new = replace(config, **{k: v for k, v in changes.items() if k in known})
            note = self._apply(new, frozenset(changes))
        except RobotTvDynamicsError as error:
            return SetParametersResult(successful=False, reason=str(error))
        self._node.config = new  # type: ignore[attr-defined]
        self.applied += 1
        text = ", ".join(f"{name} = {value!r}" for name, value in sorted(changes.items()))
        self._node.get_logger().info(f"parameters applied: {text}" + (f"; {note}" if note else ""))
        return SetParametersResult(successful=True)


#: The URDF source and log throttling (every node of the package declares them).
URDF_PARAMETERS = (
    ParameterSpec(
        "robot_description", "",
        "URDF text; when empty, urdf_path, then the robot_description topic are used",
        runtime=START_UP, note="read at start-up: publish a new URDF on the "
        "robot_description topic instead (taken over when it has the same joints)"),
    ParameterSpec(
        "urdf_path", "",
        "path of a URDF file, used when the robot_description parameter is empty",
        runtime=START_UP, note="read at start-up: publish a new URDF on the "
        "robot_description topic instead (taken over when it has the same joints)"),
    ParameterSpec(
        "robot_description_timeout", 10.0,
        "how long start-up waits for the robot_description topic when both URDF parameters "
        "are empty; 0 waits forever", "s", 0.0, 3600.0, runtime=START_UP,
        note="only used while the node starts"),
    ParameterSpec(
        "log_throttle", 1.0,
        "at most one log line per input topic per this period about rejected messages",
        "s", 0.0, 3600.0, runtime=LIVE),
    ParameterSpec(
        "locked_joints", [],
        'joints made fixed, e.g. gripper fingers: entries "name" (locked at 0 clipped into '
        'its limits) or "name=position" [rad or m]; their links merge into the parent body '
        "and they leave the dofs, the joint_states read and the outputs", runtime=START_UP,
        note="read at start-up (it changes the model's dofs): restart the node"),
)
#: What dynamics_node and monitor_node declare in common: the above and the executor.
COMMON_PARAMETERS = URDF_PARAMETERS + (
    ParameterSpec(
        "executor", "events",
        'executor that runs the callbacks: "events" (rclpy.experimental.EventsExecutor, in '
        'C++, far less overhead per message; used when this rclpy has it, else '
        '"single_threaded") or "single_threaded" (rclpy.executors.SingleThreadedExecutor)',
        runtime=START_UP),
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
