"""retime_request → retimed_trajectory: payload-aware retiming served by dynamics_node."""

from __future__ import annotations

import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from support.examples import ur5_move, ur5_payload
from support.particle_lagrangian import find_example_robot_urdf
from support.ros_harness import NodeProcess, RosClient, short_name, unique_namespace
from trajectory_msgs.msg import JointTrajectory

from robot_tv_dynamics.evaluation import evaluate
from robot_tv_dynamics.ros.conversions import status_level
from robot_tv_dynamics.ros.trajectory_conversions import (
    retime_planned_trajectory,
    trajectory_from_msg,
    trajectory_to_msg,
)


def heavy_theta(model):
    payload = ur5_payload(mass=8.0)
    return model.theta_with_link_inertia(
        model.theta_nominal, payload.link, model.urdf_link_phi(payload.link) + payload.phi())


def test_the_retimed_path_keeps_the_limits_that_the_input_breaks(ur5):
    theta = heavy_theta(ur5)
    fast = ur5_move(duration=0.6, n=31)
    assert evaluate(ur5, fast, None, theta=theta).violations  # the input is infeasible
    out, status = retime_planned_trajectory(ur5, trajectory_to_msg(fast), theta, "ur5")
    assert status_level(status) == 0, status.message
    retimed = trajectory_from_msg(out)
    check = evaluate(ur5, retimed, None, theta=theta)  # independent of TOPP-RA's constraint
    assert np.nanmax(check.peak_ratio) <= 1.0 + 5e-3, check.peak_ratio
    np.testing.assert_allclose(retimed.positions[[0, -1]], fast.positions[[0, -1]], atol=1e-9)
    assert retimed.time_from_start[-1] > fast.time_from_start[-1]


def test_a_payload_too_heavy_to_hold_gives_an_error_status_and_no_trajectory(ur5):
    payload = ur5_payload(mass=60.0)
    theta = ur5.theta_with_link_inertia(
        ur5.theta_nominal, payload.link, ur5.urdf_link_phi(payload.link) + payload.phi())
    out, status = retime_planned_trajectory(ur5, trajectory_to_msg(ur5_move()), theta, "ur5")
    assert out is None and status_level(status) == 2
    assert "hold" in status.message or "static" in status.message, status.message


@pytest.mark.ros
def test_dynamics_node_answers_a_retime_request_off_the_hot_path(tmp_path):
    ns = unique_namespace("retime")
    node = NodeProcess("dynamics_node", ns, tmp_path, {
        "urdf_path": find_example_robot_urdf("ur5"), "jacobian_samples": 64,
        "bounds_time_limit": 1.0})
    client = RosClient()
    try:
        retimed = client.collect(JointTrajectory, f"{ns}/retimed_trajectory")
        diagnostics = client.collect(DiagnosticArray, f"{ns}/diagnostics")
        request = client.publisher(JointTrajectory, f"{ns}/retime_request")
        client.wait_matched([request], 60.0, node)
        slow = ur5_move(duration=6.0, n=31)  # the arm alone: much faster is feasible
        request.publish(trajectory_to_msg(slow, frame_id="request-17"))  # a request id
        client.spin_until(lambda: retimed, 60.0, "retimed_trajectory", node)
        statuses = client.spin_until(lambda: [s for a in diagnostics for s in a.status
                                              if short_name(s.name) == "dynamics_node: retime"],
                                     10.0, "the retime status")
    finally:
        client.close()
        code = node.stop()
    assert code == 0, node.output()[-3000:]
    assert retimed[0].header.frame_id == "request-17"  # the reply names its request
    out = trajectory_from_msg(retimed[0])
    assert out.time_from_start[-1] < 0.5 * slow.time_from_start[-1]
    np.testing.assert_allclose(out.positions[-1], slow.positions[-1], atol=1e-9)
    assert status_level(statuses[0]) == 0, statuses[0].message


@pytest.mark.ros
def test_a_urdf_swap_during_a_retime_request_leaves_it_wholly_on_one_model(monkeypatch):
    """The request's model, Θ and margin are taken together when it arrives.

    A first request holds the retiming thread; a second is queued; the URDF is swapped
    (the handler the robot_description subscription calls, on this thread as on the
    executor's); then the thread is released. The second request must run on the model
    it arrived with and that model's Θ, not on the new model with the old Θ.
    """
    import re
    import threading

    import rclpy

    from robot_tv_dynamics import RobotModel
    from robot_tv_dynamics.ros import dynamics_node

    urdf = find_example_robot_urdf("ur5")
    calls, entered, release = [], threading.Event(), threading.Event()
    real = dynamics_node.retime_planned_trajectory

    def recording(model, msg, theta, hardware_id, last_q, **kwargs):
        calls.append((model, np.array(theta)))
        if len(calls) == 1:
            entered.set()
            assert release.wait(60.0)
        return real(model, msg, theta, hardware_id, last_q, **kwargs)

    monkeypatch.setattr(dynamics_node, "retime_planned_trajectory", recording)
    from support.ros_harness import DOMAIN_ID

    rclpy.init(domain_id=DOMAIN_ID, args=[  # the default context: the node's own
        "--ros-args", "-p", f"urdf_path:={urdf}", "-p", "jacobian_samples:=64",
        "-r", f"__ns:={unique_namespace('race')}"])
    node = None
    try:
        node = dynamics_node.DynamicsNode()
        old_model, old_theta = node._model, np.array(node._inputs.theta)
        msg = trajectory_to_msg(ur5_move(duration=3.0, n=21))
        node._on_retime_request(msg)  # holds the thread
        assert entered.wait(60.0)
        node._on_retime_request(msg)  # queued behind it
        # the same arm with a heavier wrist: the swap is accepted, Θ changes
        xml = open(urdf, encoding="utf-8").read()
        heavier = re.sub(r'(<link name="wrist_3_link">.*?<mass value=")([0-9.]+)',
                         lambda m: m.group(1) + str(float(m.group(2)) + 5.0), xml,
                         count=1, flags=re.S)
        node._on_urdf_swap(RobotModel.from_urdf_string(heavier))
        new_theta = np.array(node._inputs.theta)
        assert node._model is not old_model and not np.array_equal(new_theta, old_theta)
        release.set()
        deadline = time.monotonic() + 120.0
        while len(calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(calls) == 2
        node._retimer.stop()
    finally:
        release.set()
        if node is not None:
            node.destroy_node()
        rclpy.shutdown()
    second_model, second_theta = calls[1]
    assert second_model is old_model
    np.testing.assert_array_equal(second_theta, old_theta)
