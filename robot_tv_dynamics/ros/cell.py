"""How a bring-up points the nodes at a cell: remaps, sim time, parameters, log level.

:class:`CellOptions` is what ``launch/tv_dynamics.launch.py`` takes as the arguments
``joint_states``, ``robot_description``, ``use_sim_time``, ``params_file``,
``locked_joints`` and ``log_level``, and ``python -m robot_tv_dynamics.ros.bringup`` as
``--joint-states``, ``--robot-description``, ``--use-sim-time``, ``--params-file``,
``--locked-joints`` and ``--log-level``. Every node of the bring-up gets the same:

- ``joint_states`` / ``robot_description`` remapped to the cell's topics (e.g. a
  driver's ``/ur/joint_states``, MoveIt's ``/robot_description``);
- ``params_file`` after the package's config file (its ``/**/dynamics_node:`` block
  applies to that node only, ``/**:`` to every node), before ``urdf_path``;
- ``use_sim_time`` (the nodes' clock follows ``/clock``: a bag replayed with
  ``--clock``) and ``locked_joints`` (e.g. a gripper's fingers in MoveIt's URDF) as
  parameters, after the files;
- ``--log-level`` for every node's logger.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from robot_tv_dynamics.exceptions import InvalidInputError

#: The log levels ``--log-level`` takes (rcutils severities).
LOG_LEVELS = ("debug", "info", "warn", "error", "fatal")


@dataclass(frozen=True)
class CellOptions:
    """What every node of a bring-up gets to talk to a cell (module docstring).

    Attributes:
        joint_states: topic the nodes read (and sim_node writes) as ``joint_states``.
        robot_description: topic of the URDF (when no URDF parameter is given).
        use_sim_time: the nodes' clock is ``/clock``.
        params_file: a parameter file after the package's config ("" = none).
        locked_joints: joints made fixed in every node's model (e.g. gripper fingers).
        log_level: one of :data:`LOG_LEVELS`.
    """

    joint_states: str = "joint_states"
    robot_description: str = "robot_description"
    use_sim_time: bool = False
    params_file: str = ""
    locked_joints: tuple[str, ...] = ()
    log_level: str = "info"

    def __post_init__(self) -> None:
        """Check the values.

        Raises:
            InvalidInputError: an empty topic, an unknown log level, a parameter file
                that does not exist, an empty locked-joint name.
        """
        for name in ("joint_states", "robot_description"):
            if not getattr(self, name).strip():
                raise InvalidInputError(name, "the topic name is empty")
        if self.log_level not in LOG_LEVELS:
            raise InvalidInputError("log_level", f'"{self.log_level}" is not one of '
                                    f"{', '.join(LOG_LEVELS)}")
        if self.params_file and not os.path.isfile(self.params_file):
            raise InvalidInputError("params_file", f"{self.params_file} does not exist")
        if any(not joint.strip() for joint in self.locked_joints):
            raise InvalidInputError("locked_joints", f"an empty name in {self.locked_joints}")

    @classmethod
    def parse_joints(cls, text: str) -> tuple[str, ...]:
        """``"a,b=0.02"`` → ``("a", "b=0.02")`` (the ``locked_joints`` entries)."""
        return tuple(item.strip() for item in text.split(",") if item.strip())

    def remappings(self) -> dict[str, str]:
        """``from → to`` of the topics that differ from the nodes' own names."""
        return {topic: target for topic, target in (
            ("joint_states", self.joint_states), ("robot_description", self.robot_description))
            if target != topic}

    def parameters(self) -> dict[str, object]:
        """The parameters every node gets after the files (only those that are set)."""
        out: dict[str, object] = {}
        if self.use_sim_time:
            out["use_sim_time"] = True
        if self.locked_joints:
            out["locked_joints"] = list(self.locked_joints)
        return out

    def log_arguments(self) -> list[str]:
        """The ``--ros-args`` part that sets the log level (none for the default ``info``)."""
        return [] if self.log_level == "info" else ["--log-level", self.log_level]
