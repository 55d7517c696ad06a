"""Parameters that fit a node to a real cell and act at runtime: efforts, payload frame.

:data:`EFFORT_PARAMETERS` (what the driver's ``effort`` means: τ = sign·gain·(effort −
offset), :mod:`robot_tv_dynamics.inputs.efforts`) are declared by every node that reads
efforts. :func:`on_parameters_set` registers a set-parameters callback for a group of
parameters: a new value is checked together with the others of its group and applied at
once, or the whole request is refused with the reason (``ros2 param set`` prints it);
parameters outside the group pass untouched, so several groups (and other callbacks) can
watch one node.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter

from robot_tv_dynamics.exceptions import RobotTvDynamicsError
from robot_tv_dynamics.inputs.efforts import PRESETS, EffortMap, effort_map_from_text
from robot_tv_dynamics.ros.parameters import ParameterSpec

#: What a driver's effort means (every node that reads joint_states efforts).
EFFORT_PARAMETERS = (
    ParameterSpec(
        "effort_preset", "",
        f"the driver's effort dialect: {' or '.join(sorted(PRESETS))}; empty = efforts are "
        "joint torques [N·m, N]; effort_gain/offset/sign override the preset's"),
    ParameterSpec(
        "effort_gain", "",
        "tau = sign*gain*(effort - offset): one gain > 0 for all joints or one per joint "
        "(model joint order), comma-separated; empty = 1 or the preset's",
        "N·m per effort unit"),
    ParameterSpec(
        "effort_offset", "",
        "the effort meaning zero torque: one value or one per joint, comma-separated; "
        "empty = 0 or the preset's", "effort unit"),
    ParameterSpec(
        "effort_sign", "",
        "+1 or -1: one value or one per joint, comma-separated; empty = +1 or the preset's"),
)
EFFORT_NAMES = tuple(spec.name for spec in EFFORT_PARAMETERS)

#: How joint_states naming joints the model lacks are read (every node reading them).
JOINT_PARAMETERS = (
    ParameterSpec(
        "strict_joints", False,
        "reject joint_states that name joints the model does not have; false: those joints "
        "(a gripper's, from MoveIt's robot_description) are skipped, with one log line per "
        "name list"),
)


def unknown_joints_logger(logger: Any) -> Callable[[list[str]], None]:
    """The one log line of a name list with joints the model does not have."""
    def log(names: list[str]) -> None:
        logger.info(f"joint_states: skipping joints the model does not have: {names} "
                    "(strict_joints is false)")
    return log


#: The frame payloads are given and reported in (every node that takes or reports one).
PAYLOAD_PARAMETERS = (
    ParameterSpec(
        "payload_frame", "",
        "frame of the payloads that go in or out (mass, COM and inertia about the COM in its "
        "axes): a URDF link fixed to the load's body; empty = the URDF's flange frame "
        "(tool0, flange, panda_link8, fr3_link8) when it has one on that body, else the "
        "load's link"),
)


def effort_map_of(values: dict[str, Any], joint_names: Collection[str]) -> EffortMap:
    """The :class:`EffortMap` of the four effort parameters' values, checked for the joints.

    Raises:
        InvalidInputError: an unknown preset, a text that is not numbers, values out of
            range, or a list neither 1 nor one per joint long.
    """
    return effort_map_from_text(
        str(values["effort_preset"]), str(values["effort_gain"]),
        str(values["effort_offset"]), str(values["effort_sign"])).check_joints(
            list(joint_names))


def on_parameters_set(node: Node, names: Collection[str],
                      apply: Callable[[dict[str, Any]], None]) -> None:
    """Call ``apply`` with the group's values whenever one of ``names`` is set.

    ``apply`` gets every parameter of the group (the new values merged into the current
    ones) and raises :class:`~robot_tv_dynamics.exceptions.RobotTvDynamicsError` to refuse;
    the request then fails with its message and nothing changes.
    """
    group = frozenset(names)

    def callback(params: list[Parameter]) -> SetParametersResult:
        changed = {p.name: p.value for p in params if p.name in group}
        if not changed:
            return SetParametersResult(successful=True)
        values = {name: node.get_parameter(name).value for name in group}
        values.update(changed)
        try:
            apply(values)
        except RobotTvDynamicsError as error:
            return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(callback)
