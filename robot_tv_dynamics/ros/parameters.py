"""Node parameters: declared with descriptors, turned into one config dataclass per node.

:class:`ParameterSpec` and :func:`declare_parameters`: every parameter is declared with a
``ParameterDescriptor`` (description, and a range where one is meaningful); the node's
config dataclass (whose first fields are :class:`UrdfConfig` or :class:`CommonConfig`)
is built from the declared values by :func:`config_from_parameters`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType
from rclpy.node import Node
from rclpy.parameter import Parameter


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
