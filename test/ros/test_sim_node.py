"""sim_node over real DDS: effort_commands drive the simulated arm (controller:=none)."""

from __future__ import annotations

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from support.ros_harness import BEST_EFFORT, NodeProcess, RosClient, unique_namespace

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.ros import conversions as cv

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def _drift_after(tmp_path, panda: RobotModel, hold: bool, seconds: float = 1.5) -> float:
    """Largest |q − q₀| of the arm joints over ``seconds`` of simulated time.

    ``hold``: a PD + gravity controller closed over DDS through effort_commands,
    τ = G(q, Θ) + M(q, Θ) (K_p (q₀ − q) − K_d q̇) on the latest joint state; else zero
    torque.
    """
    node = NodeProcess("sim_node", unique_namespace("sim"), tmp_path, {
        "controller": "none", "wait_for_subscribers": 1, "wait_timeout": 60.0})
    client = RosClient()
    try:
        ns = node.namespace
        states = client.collect(JointState, f"{ns}/joint_states", BEST_EFFORT)
        thetas = client.collect(Float64MultiArray, f"{ns}/inertial_parameters", BEST_EFFORT)
        efforts = client.publisher(Float64MultiArray, f"{ns}/effort_commands", BEST_EFFORT)
        client.spin_until(lambda: states and thetas, 60.0, "the first state and Θ", node)
        reader = cv.BodyArrayReader("inertial_parameters", panda.body_names, "phi", 10)
        q0 = np.array(states[0].position)
        t0 = cv.stamp_to_seconds(states[0].header.stamp)
        zeros = np.zeros(panda.nv)
        drift = 0.0
        while True:
            q, qd = np.array(states[-1].position), np.array(states[-1].velocity)
            tau = zeros
            if hold:
                terms = panda.inverse_dynamics(q, zeros, zeros, reader.read(thetas[-1]))
                # gains through M(q): the 15 g fingers get gains that suit their mass
                tau = terms.gravity + terms.mass_matrix @ (25.0 * (q0 - q) - 10.0 * qd)
            efforts.publish(Float64MultiArray(data=[float(x) for x in tau]))
            client.spin_for(0.005)
            drift = max(drift, float(np.abs(q - q0)[:7].max()))
            if cv.stamp_to_seconds(states[-1].header.stamp) - t0 >= seconds:
                break
            assert node.alive, node.output()[-3000:]
    finally:
        client.close()
        code = node.stop()
    assert code == 0 and "FATAL" not in node.output(), node.output()[-3000:]
    return drift


def test_effort_commands_drive_the_simulated_arm(tmp_path, panda):
    held = _drift_after(tmp_path, panda, hold=True)
    falling = _drift_after(tmp_path, panda, hold=False)
    # without torque the arm falls; the commanded torques hold it near q₀ (the samples
    # before the first command arrives are unactuated)
    assert falling > 0.5, falling
    assert held < 0.1, (held, falling)  # measured: 0.024 vs 7.7 rad


def test_sim_node_puts_the_load_on_the_tool_flange_of_any_arm_upright(tmp_path):
    """A UR5 with the Panda's fill scenario: the load goes on tool0, the cup upright."""
    from robot_tv_dynamics.paths import example_robot_urdf

    urdf = example_robot_urdf("ur_description/urdf/ur5_robot.urdf")
    node = NodeProcess("sim_node", unique_namespace("simur5"), tmp_path, {
        "urdf_path": str(urdf), "loading": "fill", "duration": 0.2,
        "real_time_factor": 0.0})
    try:
        code = node.wait(120)
    finally:
        node.stop()
    output = node.output()
    assert code == 0, output[-3000:]
    assert "load on tool0 (tool flange)" in output, output[-3000:]
    assert "container axis 0° from vertical at the start pose" in output, output[-3000:]


def test_sim_node_stamps_theta_and_psi_with_their_joint_samples_time(tmp_path, panda):
    """The stamped Θ/Θ̇ and Ψ/Ψ̇ carry the stamp of the joint_states sample they belong
    to; with legacy_theta_topics false the unstamped arrays are not published."""
    from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader

    node = NodeProcess("sim_node", unique_namespace("simst"), tmp_path, {
        "controller": "none", "wait_for_subscribers": 1, "wait_timeout": 60.0,
        "legacy_theta_topics": False})
    client = RosClient()
    try:
        ns = node.namespace
        theta = client.collect(JointState, f"{ns}/inertial_parameters_stamped", BEST_EFFORT)
        psi = client.collect(JointState, f"{ns}/psi_stamped", BEST_EFFORT)
        states = client.collect(JointState, f"{ns}/joint_states", BEST_EFFORT)
        client.spin_until(lambda: len(states) > 30 and len(theta) > 30 and len(psi) > 30,
                          60.0, "30 samples of each", node)
        assert client.node.count_publishers(f"{ns}/inertial_parameters") == 0
        assert client.node.count_publishers(f"{ns}/psi") == 0
        joint = {cv.stamp_to_seconds(m.header.stamp) for m in states}
        for topic, messages, axis in (("theta", theta, "phi"), ("psi", psi, "psi")):
            reader = BodyVectorReader(topic, panda.body_names, axis)
            stamps = {cv.stamp_to_seconds(m.header.stamp) for m in messages}
            common = stamps & joint
            assert len(common) >= 0.9 * min(len(stamps), len(joint)), topic
            _, value, rate = reader.read(messages[-1])
            assert value is not None and rate is not None, topic
    finally:
        client.close()
        code = node.stop()
    assert code == 0 and "FATAL" not in node.output(), node.output()[-3000:]
