"""What the dynamics backend needs from an arm, as a small record.

:class:`~robot_tv_dynamics.model.RobotModel` builds an :class:`ArmRecord`
(``RobotModel.arm_record``) and hands it to the evaluators of this package, so the
dependency runs one way: ``model`` imports ``dynamics``, never the reverse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics.arrays import Array


@dataclass(frozen=True)
class ArmRecord:
    """One fixed-base arm as the recursive backend sees it.

    Attributes:
        pinocchio_model: the (reduced) Pinocchio model, one joint per body; the backend
            copies it and never modifies it.
        theta_nominal: Θ of the URDF, (N, 10), eq. (7) order [kg, kg·m, kg·m²].
        continuous: per dof, whether the joint is continuous (angle in q, Pinocchio's
            (cos, sin) formed by the backend), (nv,).
    """

    pinocchio_model: pin.Model
    theta_nominal: Array
    continuous: npt.NDArray[np.bool_]

    @property
    def n_bodies(self) -> int:
        """N, the number of bodies (rows of Θ)."""
        return int(self.theta_nominal.shape[0])

    @property
    def nv(self) -> int:
        """The number of degrees of freedom."""
        return int(self.pinocchio_model.nv)


class HasArmRecord(Protocol):
    """Anything that describes an arm by an :class:`ArmRecord` (a ``RobotModel``)."""

    @property
    def arm_record(self) -> ArmRecord:
        """The record the backend is built from."""
        ...


def arm_record_of(arm: ArmRecord | HasArmRecord) -> ArmRecord:
    """``arm`` itself if it is an :class:`ArmRecord`, else its ``arm_record``."""
    return arm if isinstance(arm, ArmRecord) else arm.arm_record


__all__ = ["ArmRecord", "HasArmRecord", "arm_record_of"]
