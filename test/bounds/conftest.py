"""Fixtures of the bounds tests."""

from __future__ import annotations

import pytest

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics import bounds as B

#: The Panda with its two finger joints locked at 0.
LOCK = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}


@pytest.fixture(scope="module")
def arms(urdf_paths: dict[str, str]) -> dict[str, RobotModel]:
    """The Panda, the UR5 and the Panda with its fingers locked."""
    return {"panda": RobotModel.from_urdf(urdf_paths["panda"]),
            "ur5": RobotModel.from_urdf(urdf_paths["ur5"]),
            "panda_locked": RobotModel.from_urdf(urdf_paths["panda"], locked_joints=LOCK)}


@pytest.fixture(scope="module")
def certified(ur5: RobotModel, panda: RobotModel) -> dict[str, B.JacobianExtremes]:
    """Short certified searches (box budget, so the result is reproducible)."""
    return {
        "ur5": B.certified_jacobian_extremes(ur5, time_limit=60.0, max_boxes=6000,
                                             samples=1024),
        "panda": B.certified_jacobian_extremes(panda, time_limit=60.0, max_boxes=256,
                                               samples=256),
    }


