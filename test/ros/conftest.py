"""Fixtures shared by the node tests over real rclpy and DDS."""

from __future__ import annotations

import pytest
from support.ros_harness import local_discovery

local_discovery()  # before any participant of this process exists


@pytest.fixture(scope="module")
def tester():
    """One rclpy client node per test module (ros_harness.RosClient), closed after it."""
    from support.ros_harness import RosClient

    client = RosClient()
    yield client
    client.close()
