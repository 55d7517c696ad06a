"""The arm as lines: joint origins from the package's own forward kinematics.

Body frame l is the frame of joint l (docs/concepts.md, "The model"), so the joint origins are
the body-frame origins z_l(q) of :meth:`RobotModel.kinematics`, in the base frame (the
URDF's root link). The skeleton joins each body's origin to its parent's (the base
origin for the first bodies): a line strip along a serial arm, a tree where the chain
branches (the Panda's two fingers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.arrays import Array, readonly
from robot_tv_dynamics.dynamics.kinematics import Kinematics
from robot_tv_dynamics.model import RobotModel


@dataclass(frozen=True)
class Skeleton:
    """Joint origins and the segments between them, in the base frame.

    Attributes:
        points: the base origin then the N joint origins, (N+1, 3) [m].
        segments: index pairs into ``points`` (parent, child), (N, 2).
    """

    points: Array
    segments: Array

    def segment_points(self) -> Array:
        """The segments' end points, (N, 2, 3) [m] (a line list)."""
        return np.asarray(self.points[self.segments])


def parent_points(model: RobotModel) -> Array:
    """For each body, the index in :attr:`Skeleton.points` of its parent's origin, (N,)."""
    parents = np.asarray(model.pinocchio_model.parents, dtype=np.intp)[1:]
    return readonly(parents.copy())  # Pinocchio joint j+1 is point j+1; the universe is 0


def skeleton(model: RobotModel, kinematics: Kinematics) -> Skeleton:
    """The skeleton at the configuration of ``kinematics`` (from ``model.kinematics(q)``)."""
    points = np.vstack([np.zeros((1, 3)), np.asarray(kinematics.positions)])
    parents = parent_points(model)
    segments = np.column_stack([parents, np.arange(1, model.n_bodies + 1)])
    return Skeleton(points=readonly(points), segments=readonly(segments))
