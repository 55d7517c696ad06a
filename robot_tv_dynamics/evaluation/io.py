r"""Reading the ``evaluate`` command's files: payload and trajectory YAML, rosbag2 bags."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.evaluation.payload import Load, payload_from_dict
from robot_tv_dynamics.evaluation.trajectory import (
    JOINT_TRAJECTORY_TYPE,
    Trajectory,
    trajectory_from_dict,
    trajectory_from_message,
)
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    RecordingError,
)
from robot_tv_dynamics.loading import load_loading_process


# ====================================================================== files
def load_payload(path: str | Path) -> Load:
    """Read a payload YAML: a constant payload, or a loading process (has ``process:``).

    Raises:
        InvalidInputError: unreadable file, malformed YAML or content.
    """
    data = _read_yaml(path, "payload")
    if isinstance(data, Mapping) and "process" in data:
        return load_loading_process(path)
    return payload_from_dict(data)


def load_trajectory(path: str | Path, topic: str | None = None) -> Trajectory:
    """Read a trajectory from YAML or from the first JointTrajectory of a rosbag2.

    Args:
        path: a YAML file (JointTrajectory shape), or a rosbag2 directory, ``.mcap`` or
            ``.db3`` file.
        topic: bag topic to read; None = the first topic of type
            ``trajectory_msgs/msg/JointTrajectory``.

    Raises:
        InvalidInputError: missing or unreadable file, no JointTrajectory in the bag,
            malformed content.
    """
    path = Path(path)
    if path.is_dir() or path.suffix in (".mcap", ".db3"):
        return trajectory_from_message(read_bag_joint_trajectory(path, topic))
    if topic is not None:
        raise InvalidInputError("topic", "only applies to rosbag2 input")
    return trajectory_from_dict(_read_yaml(path, "trajectory"))


def read_bag_joint_trajectory(path: str | Path, topic: str | None = None) -> Any:
    """The first JointTrajectory message of a rosbag2 (read with ``rosbags``).

    Args:
        path: bag directory (with ``metadata.yaml``) or a single ``.mcap``/``.db3`` file.
        topic: topic to read; None = the first JointTrajectory topic.

    Returns:
        The deserialized message (fields as in ``trajectory_msgs/msg/JointTrajectory``).
    """
    try:
        with open_bag(path) as bag:
            # No topic named: the first JointTrajectory message on any such topic.
            chosen = ([bag.choose_topic(JOINT_TRAJECTORY_TYPE, topic)] if topic is not None
                      else bag.topics_of_type(JOINT_TRAJECTORY_TYPE)
                      or [bag.choose_topic(JOINT_TRAJECTORY_TYPE)])
            for _, _, message in bag.messages(chosen):
                return message
    except RecordingError as error:
        argument = "topic" if topic is not None and "topic" in error.problem else "trajectory"
        raise InvalidInputError(argument, f"{path}: {error.problem}") from None
    raise InvalidInputError("trajectory", f"the bag {path} has no message on {chosen}")


def _read_yaml(path: str | Path, what: str) -> Any:
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidInputError(what, f"cannot read {path}: {error.strerror or error}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise InvalidInputError(what, f"{path} is not valid YAML: {error}") from None
