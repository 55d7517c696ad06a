"""The arm: a fixed-base URDF as N bodies with inertial parameters Θ (:class:`RobotModel`).

- :mod:`~robot_tv_dynamics.model.robot`: :class:`RobotModel` (construction, bodies, links,
  limits);
- :mod:`~robot_tv_dynamics.model.equations`: :class:`EquationsOfMotion`, the base of
  :class:`RobotModel` with what it evaluates at a state (input checks, kinematics,
  eq. (39) through :mod:`robot_tv_dynamics.dynamics`, the regressor, the energies);
- :mod:`~robot_tv_dynamics.model.locking`: locked joints and the model's cache key;
- :mod:`~robot_tv_dynamics.model.frames`: the URDF's flange frame, and a payload moved
  exactly between frames of one body.

URDF parsing lives in :mod:`robot_tv_dynamics.urdf`.
"""

from robot_tv_dynamics.model.equations import EquationsOfMotion
from robot_tv_dynamics.model.locking import LockedJoints, model_sha256, parse_locked_joints
from robot_tv_dynamics.model.robot import JointLimits, LinkAttachment, RobotModel

__all__ = [
    "EquationsOfMotion",
    "JointLimits",
    "LinkAttachment",
    "LockedJoints",
    "RobotModel",
    "model_sha256",
    "parse_locked_joints",
]
