"""Locked joints: joints made fixed at a position (e.g. a gripper's fingers), and the cache key.

Locked joints are made fixed with Pinocchio's ``buildReducedModel``: they leave
``joint_names``, the limits and the dofs, and their child links merge into the parent
body, whose Φ gains theirs through the locked placement (exact, Φ maps linearly under a
rigid transform).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence

import pinocchio as pin

from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    UnknownNameError,
    UnsupportedJointError,
)

#: What ``locked_joints`` accepts: joint name → position [rad or m] (None: the default
#: position), or a sequence of joint names (each at the default position: 0 clipped
#: into the joint's limits).
LockedJoints = Mapping[str, float | None] | Sequence[str]


def parse_locked_joints(
    items: Iterable[str], argument: str = "locked_joints"
) -> dict[str, float | None]:
    """``"JOINT"`` / ``"JOINT=POSITION"`` strings (CLI ``--lock``, node parameter) as a mapping.

    Args:
        items: one entry per locked joint; without ``=POSITION`` the joint is locked at
            0 clipped into its limits.
        argument: the option or parameter name, for error messages.

    Returns:
        Joint name → position [rad or m], or None for the default position.

    Raises:
        InvalidInputError: an empty name, a position that is not a finite number, or a
            joint named twice.
    """
    out: dict[str, float | None] = {}
    for item in items:
        name, sep, value = str(item).partition("=")
        name = name.strip()
        position: float | None = None
        if sep:
            try:
                position = float(value)
            except ValueError:
                position = math.nan
        if not name or (position is not None and not math.isfinite(position)):
            raise InvalidInputError(
                argument, f'expected JOINT or JOINT=POSITION with a finite number, got "{item}"')
        if name in out:
            raise InvalidInputError(argument, f'joint "{name}" is given twice')
        out[name] = position
    return out


def model_sha256(xml: str, locked_joints: Mapping[str, float] | None = None) -> str:
    """The cache key of a model: SHA-256 of the URDF text, plus the locked joints if any.

    Without locked joints it is the hash of the text alone; with them, of the text
    followed by a canonical JSON of the locked joints (sorted names, positions as
    floats), so that models of one URDF with different locked sets never share a key.
    """
    digest = hashlib.sha256(xml.encode("utf-8"))
    if locked_joints:
        canonical = json.dumps(
            {name: float(position) for name, position in sorted(locked_joints.items())},
            sort_keys=True)
        digest.update(b"\0locked_joints:" + canonical.encode("utf-8"))
    return digest.hexdigest()


def lock_positions(
    model: pin.Model, locked_joints: LockedJoints | None, source: str
) -> dict[str, float]:
    """Validated positions of the locked joints, in the model's joint order.

    Raises:
        UnknownNameError: a name that is not a movable joint of the URDF.
        UnsupportedJointError: a locked joint that is not 1-dof.
        InvalidInputError: a position that is not finite or outside the joint's limits.
    """
    if locked_joints is None:
        return {}
    if isinstance(locked_joints, str):
        raise InvalidInputError(
            "locked_joints", "expected a mapping joint → position or a sequence of joint "
            f'names, got the string "{locked_joints}"')
    requested: Mapping[str, float | None] = (
        locked_joints if isinstance(locked_joints, Mapping)
        else parse_locked_joints(locked_joints))
    names = [str(model.names[j]) for j in range(1, model.njoints)]
    for name in requested:
        if name not in names:
            raise UnknownNameError("joint", name, names)
    out: dict[str, float] = {}
    for j in range(1, model.njoints):
        name = names[j - 1]
        if name not in requested:
            continue
        joint = model.joints[j]
        if joint.nv != 1 or joint.nq not in (1, 2):
            raise UnsupportedJointError(source, name, joint.shortname())
        value = requested[name]
        continuous = joint.nq == 2
        lower = -math.inf if continuous else float(model.lowerPositionLimit[joint.idx_q])
        upper = math.inf if continuous else float(model.upperPositionLimit[joint.idx_q])
        if value is None:
            position = min(max(0.0, lower), upper)
        else:
            try:
                position = float(value)
            except (TypeError, ValueError):
                position = math.nan
            if not math.isfinite(position):
                raise InvalidInputError(
                    "locked_joints", f'joint "{name}": position {value!r} is not a finite number')
            if not lower <= position <= upper:
                raise InvalidInputError(
                    "locked_joints", f'joint "{name}": position {position:g} is outside its '
                    f"limits [{lower:g}, {upper:g}]")
        out[name] = position
    return out


def reduced_model(model: pin.Model, locked: Mapping[str, float]) -> pin.Model:
    """``model`` with the ``locked`` joints fixed at their positions (buildReducedModel)."""
    q_reference = pin.neutral(model)
    ids = []
    for name, position in locked.items():
        j = model.getJointId(name)
        joint = model.joints[j]
        if joint.nq == 2:
            q_reference[joint.idx_q:joint.idx_q + 2] = (math.cos(position), math.sin(position))
        else:
            q_reference[joint.idx_q] = position
        ids.append(j)
    return pin.buildReducedModel(model, ids, q_reference)
