"""What a sweep runs: trajectory files from paths, directories and globs, paired with URDFs.

A trajectory is paired with every URDF that has all the joints it lists, a payload with
every URDF that has its link. A trajectory that cannot be read, or that fits no URDF,
becomes one row per payload carrying the error (as every other trajectory has one row
per payload); a payload that cannot be read or fits no URDF becomes one row of its own.
Nothing given is dropped silently.
"""

from __future__ import annotations

import glob
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robot_tv_dynamics.evaluation import Payload, load_payload, load_trajectory
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    RobotTvDynamicsError,
    UnknownNameError,
)
from robot_tv_dynamics.model import RobotModel

#: Kinds of work a sweep item can be.
KINDS = ("evaluate", "retime")
#: File endings read as trajectories inside a directory (a rosbag2 directory counts too).
TRAJECTORY_SUFFIXES = (".yaml", ".yml", ".mcap", ".db3")


@dataclass(frozen=True)
class SweepItem:
    """One trajectory × payload on one URDF (plain data: it travels to a Dask worker).

    Attributes:
        kind: ``"evaluate"`` or ``"retime"``.
        urdf: the URDF file ("" for an item that fits no URDF: ``problem`` says why).
        trajectory: the trajectory file (YAML or rosbag2).
        payload: the payload or loading-process YAML, or None (the arm alone).
        locked: joints locked in the model (``RobotModel.from_urdf``'s argument).
        topic: bag topic (None: the first JointTrajectory topic).
        options: keyword arguments of evaluate / retime (time_offset, effort_margin, …).
        problem: set when the item cannot run at all; its row carries this error.
    """

    kind: str
    urdf: str
    trajectory: str
    payload: str | None = None
    locked: Mapping[str, float | None] | None = None
    topic: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    problem: str | None = None


def _is_glob(text: str) -> bool:
    return any(char in text for char in "*?[")


def _is_bag(path: Path) -> bool:
    return path.is_dir() and (path / "metadata.yaml").is_file()


def expand_trajectories(specs: Sequence[str | Path]) -> list[str]:
    """Trajectory files from files, directories and (quoted) globs, in a stable order.

    A rosbag2 directory (with ``metadata.yaml``) is one trajectory; another directory
    contributes its ``*.yaml``, ``*.yml``, ``*.mcap``, ``*.db3`` files and rosbag2
    subdirectories (not recursively); a glob its matches.

    Raises:
        InvalidInputError: a path that does not exist, a glob or directory without
            trajectories.
    """
    out: list[str] = []
    for spec in specs:
        text = str(spec)
        if _is_glob(text):
            matches = sorted(glob.glob(text))
            if not matches:
                raise InvalidInputError("--trajectory", f"{text!r} matches no file")
            out.extend(matches)
            continue
        path = Path(text)
        if not path.exists():
            raise InvalidInputError("--trajectory", f"{text} does not exist")
        if path.is_dir() and not _is_bag(path):
            found = sorted(str(child) for child in path.iterdir()
                           if (child.is_file() and child.suffix.lower() in TRAJECTORY_SUFFIXES)
                           or _is_bag(child))
            if not found:
                raise InvalidInputError("--trajectory", f"directory {text} holds no "
                                        "trajectory (*.yaml, *.yml, *.mcap, *.db3, rosbag2)")
            out.extend(found)
        else:
            out.append(text)
    return list(dict.fromkeys(out))


def is_many(trajectories: Sequence[str], payloads: Sequence[str], urdfs: Sequence[str]) -> bool:
    """Whether the inputs ask for a sweep (several of anything, a directory or a glob)."""
    if len(trajectories) != 1 or len(payloads) > 1 or len(urdfs) != 1:
        return True
    path = Path(trajectories[0])
    return _is_glob(trajectories[0]) or (path.is_dir() and not _is_bag(path))


def plan_items(
    kind: str, urdfs: Sequence[str], trajectories: Sequence[str], payloads: Sequence[str],
    *, locked: Mapping[str, float | None] | None = None, topic: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> list[SweepItem]:
    """Every item of the sweep (module docstring for the pairing).

    Args:
        kind: ``"evaluate"`` or ``"retime"``.
        urdfs: URDF files (each is loaded once here, to pair by joint and link names).
        trajectories: trajectory files (see :func:`expand_trajectories`).
        payloads: payload / loading-process YAMLs; empty = the arm alone.
        locked: joints to lock, each in the URDFs that have it.
        topic: bag topic.
        options: keyword arguments of evaluate / retime for every item.

    Raises:
        InvalidInputError: an unknown kind, no URDF or no trajectory.
        URDFError: a URDF that cannot be loaded (the whole sweep is bad input).
        UnknownNameError: a locked joint that no URDF has.
    """
    if kind not in KINDS:
        raise InvalidInputError("kind", f"must be one of {KINDS}, got {kind!r}")
    if not urdfs or not trajectories:
        raise InvalidInputError("sweep", "needs at least one URDF and one trajectory")
    options = dict(options or {})
    locks = _locks_per_urdf(urdfs, locked)
    models = {urdf: RobotModel.from_urdf(urdf, locks[urdf]) for urdf in urdfs}
    names = {urdf: set(m.joint_names) | set(m.locked_joints) for urdf, m in models.items()}
    links = {urdf: set(m.link_names) for urdf, m in models.items()}
    payload_fits: dict[str | None, list[str]] = {}
    problems: list[SweepItem] = []
    for payload in payloads:
        try:
            load = load_payload(payload)
        except RobotTvDynamicsError as error:  # one row says why
            problems.append(SweepItem(kind, "", "", payload, None, topic, options,
                                      f"{type(error).__name__}: {error}"))
            continue
        link = load.link if isinstance(load, Payload) else str(load.link)
        payload_fits[payload] = [urdf for urdf in urdfs if link in links[urdf]]
        if not payload_fits[payload]:
            problems.append(SweepItem(kind, "", "", payload, locked, topic, options,
                                      f'the payload link "{link}" is in none of the URDFs'))
    if not payloads:
        payload_fits[None] = list(urdfs)
    items: list[SweepItem] = []
    for trajectory in trajectories:
        try:
            joints = set(load_trajectory(trajectory, topic).joint_names)
        except RobotTvDynamicsError as error:  # one row per payload says why
            problems.extend(SweepItem(kind, "", trajectory, load_file, None, topic, options,
                                      f"{type(error).__name__}: {error}")
                            for load_file in payload_fits)
            continue
        fits = [urdf for urdf in urdfs if joints <= names[urdf]]
        if not fits:
            problems.extend(SweepItem(kind, "", trajectory, load_file, locked, topic, options,
                                      f"the joints {sorted(joints)} are not all in any URDF")
                            for load_file in payload_fits)
            continue
        for load_file, where in payload_fits.items():
            items.extend(SweepItem(kind, urdf, trajectory, load_file, locks[urdf], topic,
                                   options)
                         for urdf in fits if urdf in where)
    return items + problems


def _locks_per_urdf(urdfs: Sequence[str], locked: Mapping[str, float | None] | None
                    ) -> dict[str, dict[str, float | None] | None]:
    """The locked joints each URDF has (a Panda's fingers are not locked on a UR5)."""
    if not locked:
        return {urdf: None for urdf in urdfs}
    joints = {urdf: set(RobotModel.from_urdf(urdf).joint_names) for urdf in urdfs}
    for name in locked:
        if not any(name in names for names in joints.values()):
            raise UnknownNameError("joint", name, sorted(set().union(*joints.values())))
    return {urdf: ({name: value for name, value in locked.items() if name in joints[urdf]}
                   or None) for urdf in urdfs}
