"""Parameters that fit a node to a real cell and act at runtime: efforts, payload frame.

:data:`EFFORT_PARAMETERS` (what the driver's ``effort`` means: τ = sign·gain·(effort −
offset), :mod:`robot_tv_dynamics.inputs.efforts`) are declared by every node that reads
efforts. All of them are :data:`~robot_tv_dynamics.ros.parameters.LIVE`: the node's one
set-parameters callback (:class:`~robot_tv_dynamics.ros.parameters.RuntimeParameters`)
hands a set to the node's ``apply``, which passes each group that changed to its handler
with :func:`apply_groups`; a handler checks the new values together with the others of
its group and applies them at once, or raises and the whole request is refused with the
reason (``ros2 param set`` prints it).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from robot_tv_dynamics.inputs.efforts import PRESETS, EffortMap, effort_map_from_text
from robot_tv_dynamics.ros.parameters import LIVE, ParameterSpec

#: What a driver's effort means (every node that reads joint_states efforts).
EFFORT_PARAMETERS = (
    ParameterSpec(
        "effort_preset", "",
        f"the driver's effort dialect: {' or '.join(sorted(PRESETS))}; empty = efforts are "
        "joint torques [N·m, N]; effort_gain/offset/sign override the preset's",
        runtime=LIVE),
    ParameterSpec(
        "effort_gain", "",
        "tau = sign*gain*(effort - offset): one gain > 0 for all joints or one per joint "
        "(model joint order), comma-separated; empty = 1 or the preset's",
        "N·m per effort unit",
        runtime=LIVE),
    ParameterSpec(
        "effort_offset", "",
        "the effort meaning zero torque: one value or one per joint, comma-separated; "
        "empty = 0 or the preset's", "effort unit",
        runtime=LIVE),
    ParameterSpec(
        "effort_sign", "",
        "+1 or -1: one value or one per joint, comma-separated; empty = +1 or the preset's",
        runtime=LIVE),
)
EFFORT_NAMES = tuple(spec.name for spec in EFFORT_PARAMETERS)

#: How joint_states naming joints the model lacks are read (every node reading them).
JOINT_PARAMETERS = (
    ParameterSpec(
        "strict_joints", False,
        "reject joint_states that name joints the model does not have; false: those joints "
        "(a gripper's, from MoveIt's robot_description) are skipped, with one log line per "
        "name list",
        runtime=LIVE),
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
        "load's link",
        runtime=LIVE),
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


#: One group of parameters and what applies its values (raises to refuse them).
ParameterGroup = tuple[Collection[str], Callable[[dict[str, Any]], None]]


def apply_groups(config: Any, names: Collection[str], groups: Sequence[ParameterGroup]
                 ) -> None:
    """Hand each group with a name in ``names`` its values, read from the new ``config``.

    Raises:
        RobotTvDynamicsError: a handler refused its values (the set is refused).
    """
    for group, apply in groups:
        if any(name in names for name in group):
            apply({name: getattr(config, name) for name in group})
