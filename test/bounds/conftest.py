"""Fixtures of the bounds tests."""

from __future__ import annotations

import pytest

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics import bounds as B


@pytest.fixture(scope="module")
def certified(ur5: RobotModel, panda: RobotModel) -> dict[str, B.JacobianExtremes]:
    """Short certified searches (box budget, so the result is reproducible)."""
    return {
        "ur5": B.certified_jacobian_extremes(ur5, time_limit=60.0, max_boxes=6000,
                                             samples=1024),
        "panda": B.certified_jacobian_extremes(panda, time_limit=60.0, max_boxes=256,
                                               samples=256),
    }


