"""Per-sample outputs are as deep as the joint_states queue; events and diagnostics 10.

A reliable writer overwrites what a reader lagging by more than its depth has not yet
acknowledged, so a node that answers every joint sample keeps as many answers as it
keeps samples. The nodes are built in this process (no peer, no clock to keep up with)
and their publishers' QoS read back.
"""

from __future__ import annotations

import pytest
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from support.particle_lagrangian import find_example_robot_urdf
from support.ros_harness import DOMAIN_ID, unique_namespace

pytestmark = [pytest.mark.ros, pytest.mark.no_deadline]

DEPTH = 321  # not a default anywhere


def publisher_profiles(node) -> dict[str, QoSProfile]:
    """Topic name (relative) → the QoS of the node's publisher on it."""
    return {publisher.topic_name.rsplit("/", 1)[-1]: publisher.qos_profile
            for publisher in node.publishers}


@pytest.mark.parametrize("module, per_sample", [
    ("dynamics_node", ("generalized_torques", "generalized_terms_stamped",
                       "mass_matrix_bounds_stamped", "external_torques",
                       "external_torques_classical", "generalized_terms",
                       "mass_matrix_bounds")),
    ("estimator_node", ("inertial_parameters_stamped", "inertial_parameters",
                        "inertial_parameter_rates")),
])
def test_per_sample_outputs_follow_joint_states_depth(module, per_sample):
    import importlib

    node_module = importlib.import_module(f"robot_tv_dynamics.ros.{module}")
    node_class = next(value for name, value in vars(node_module).items()
                      if name.endswith("Node") and isinstance(value, type)
                      and value.__module__ == node_module.__name__)
    rclpy.init(domain_id=DOMAIN_ID, args=[
        "--ros-args", "-p", f"urdf_path:={find_example_robot_urdf('ur5')}",
        "-p", f"joint_states_depth:={DEPTH}", "-p", "jacobian_samples:=64",
        "-p", "legacy_theta_topics:=true", "-p", "observer_model:=both",
        "-r", f"__ns:={unique_namespace('depth')}"])
    node = None
    try:
        node = node_class()
        profiles = publisher_profiles(node)
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.shutdown()
    depths = {topic: profile.depth for topic, profile in profiles.items()}
    for topic in per_sample:
        assert depths.get(topic) == DEPTH, (topic, depths)
        assert profiles[topic].reliability == ReliabilityPolicy.RELIABLE, topic
        assert profiles[topic].durability == DurabilityPolicy.VOLATILE, topic
    # events, one-off outputs and diagnostics keep the default depth (rclpy's own
    # parameter_events aside)
    assert depths["diagnostics"] == 10, depths
    others = {topic: depth for topic, depth in depths.items()
              if topic not in (*per_sample, "parameter_events") and depth not in (1, 10)}
    assert not others, others
