"""Shared fixtures: real robots from example-robot-data, hypothesis settings."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402

settings.register_profile(
    "default", deadline=None, max_examples=60, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

ROBOTS = ("panda", "ur5")


#: ``RTD_TEST_LANE`` = ``realtime`` or ``other`` keeps only that lane's tests (unset: all).
LANES = ("realtime", "other")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every ``ros`` test is also ``realtime``: it runs live nodes against the wall clock.

    Except a ``ros`` test marked ``no_deadline``: it needs rclpy or DDS but nothing in it
    must keep up with the wall clock (an rclpy node in the process, a node's imports, an
    install's node answering once within a minute), so it runs in the ``other`` lane.
    ``scripts/run_tests.sh`` runs the ``realtime`` lane in one process at normal
    priority and, at the same time, the ``other`` lane on every core at idle priority,
    so that no CPU-bound test starves a node that must keep up with 1 kHz joint states.
    The lane is chosen by ``RTD_TEST_LANE`` and composes
    with any ``-m`` or ``-k`` given.
    """
    for item in items:
        if (item.get_closest_marker("ros") is not None
                and item.get_closest_marker("no_deadline") is None):
            item.add_marker(pytest.mark.realtime)
    lane = os.environ.get("RTD_TEST_LANE", "")
    if not lane:
        return
    if lane not in LANES:
        raise pytest.UsageError(f"RTD_TEST_LANE={lane!r}: use one of {', '.join(LANES)}")
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        live = item.get_closest_marker("realtime") is not None
        (keep if live == (lane == "realtime") else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.fixture(scope="session", autouse=True)
def private_bounds_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """XDG_CACHE_HOME in a temporary folder: the bounds cache's "auto" folder never in ~."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg_cache"))


@pytest.fixture(scope="session")
def urdf_paths() -> dict[str, str]:
    """Paths of the Panda and UR5 URDFs shipped by example-robot-data."""
    return {name: find_example_robot_urdf(name) for name in ROBOTS}


@pytest.fixture(scope="session")
def panda_urdf(urdf_paths: dict[str, str]) -> str:
    """Path of the Panda's URDF."""
    return urdf_paths["panda"]


@pytest.fixture(scope="session")
def ur5_urdf(urdf_paths: dict[str, str]) -> str:
    """Path of the UR5's URDF."""
    return urdf_paths["ur5"]


@pytest.fixture(scope="session", params=ROBOTS)
def robot(request: pytest.FixtureRequest, urdf_paths: dict[str, str]) -> RobotModel:
    """Each real robot in turn."""
    return RobotModel.from_urdf(urdf_paths[request.param])


@pytest.fixture(scope="session")
def panda(urdf_paths: dict[str, str]) -> RobotModel:
    """The Franka Panda (9 dof with the two finger joints)."""
    return RobotModel.from_urdf(urdf_paths["panda"])


@pytest.fixture(scope="session")
def ur5(urdf_paths: dict[str, str]) -> RobotModel:
    """The UR5 (6 dof)."""
    return RobotModel.from_urdf(urdf_paths["ur5"])


#: The Panda's finger joints, locked where the hand is one body with the flange.
PANDA_FINGERS = ("panda_finger_joint1", "panda_finger_joint2")


@pytest.fixture(scope="session")
def panda_locked(urdf_paths: dict[str, str]) -> RobotModel:
    """The Panda with its fingers locked (7 dof: the hand one body with the flange)."""
    return RobotModel.from_urdf(urdf_paths["panda"], list(PANDA_FINGERS))
