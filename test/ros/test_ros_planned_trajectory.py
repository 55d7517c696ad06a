"""planned_trajectory → planned_trajectory_efforts + diagnostics: ros/trajectory_conversions.py."""

from __future__ import annotations

import numpy as np
import pytest
from support.examples import UR5_JOINTS, ur5_move, ur5_payload  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

from robot_tv_dynamics.evaluation import ERROR, OK, Trajectory, evaluate  # noqa: E402
from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError  # noqa: E402
from robot_tv_dynamics.ros.conversions import status_level  # noqa: E402
from robot_tv_dynamics.ros.trajectory_conversions import (  # noqa: E402
    evaluate_planned_trajectory,
    trajectory_from_msg,
    trajectory_to_msg,
    with_efforts,
)


def theta_with(model, payload):
    return model.theta_with_link_inertia(
        model.theta_nominal, payload.link, model.urdf_link_phi(payload.link) + payload.phi())


def reordered_subset():
    """UR5 move without the pan joint, columns reversed, no accelerations."""
    full = ur5_move(n=11)
    columns = [5, 4, 3, 2, 1]
    return Trajectory(tuple(UR5_JOINTS[i] for i in columns), full.time_from_start,
                      full.positions[:, columns], full.velocities[:, columns], None)


def test_message_round_trip_keeps_the_trajectory():
    trajectory = ur5_move(n=7)
    back = trajectory_from_msg(trajectory_to_msg(trajectory))
    assert back.joint_names == trajectory.joint_names
    np.testing.assert_allclose(back.time_from_start, trajectory.time_from_start, atol=1e-9)
    np.testing.assert_array_equal(back.positions, trajectory.positions)
    np.testing.assert_array_equal(back.velocities, trajectory.velocities)
    np.testing.assert_array_equal(back.accelerations, trajectory.accelerations)


def test_efforts_are_filled_in_the_messages_joint_order(ur5):
    trajectory = reordered_subset()
    msg = trajectory_to_msg(trajectory)
    msg.header.frame_id = "base_link"
    theta = theta_with(ur5, ur5_payload())
    report = evaluate_planned_trajectory(ur5, msg, theta, "ur5",
                                         default_positions={"shoulder_pan_joint": 0.3})
    out = report.efforts_msg
    assert out.header.frame_id == "base_link"
    assert list(out.joint_names) == list(msg.joint_names)
    reference = evaluate(ur5, trajectory, None, theta=theta,
                         default_positions={"shoulder_pan_joint": 0.3})
    for k, point in enumerate(out.points):
        assert len(point.accelerations) == 0  # left as the planner sent it
        np.testing.assert_array_equal(point.positions, msg.points[k].positions)
        np.testing.assert_allclose(
            point.effort, reference.effort[k, [UR5_JOINTS.index(n) for n in msg.joint_names]],
            rtol=1e-12, atol=1e-10)
    assert report.result.positions[0, 0] == 0.3


def test_status_names_the_overloaded_joint(ur5):
    msg = trajectory_to_msg(ur5_move(n=11))
    heavy = evaluate_planned_trajectory(ur5, msg, theta_with(ur5, ur5_payload(15.0)), "ur5")
    assert status_level(heavy.status) == ERROR
    assert "shoulder_lift_joint" in heavy.status.message
    assert heavy.status.hardware_id == "ur5"
    keys = {kv.key for kv in heavy.status.values}
    assert "shoulder_lift_joint peak effort ratio" in keys
    light = evaluate_planned_trajectory(ur5, msg, theta_with(ur5, ur5_payload(1.0)), "ur5")
    assert status_level(light.status) == OK
    assert "within effort limits" in light.status.message


def test_bad_messages_raise_errors_naming_the_topic(ur5):
    msg = trajectory_to_msg(ur5_move(n=5))
    msg.points[3].time_from_start = msg.points[1].time_from_start
    with pytest.raises(InvalidInputError, match="planned_trajectory.time_from_start.*point 3"):
        evaluate_planned_trajectory(ur5, msg, ur5.theta_nominal, "ur5")
    msg = trajectory_to_msg(ur5_move(n=5))
    msg.joint_names[2] = "elbow"
    with pytest.raises(UnknownNameError, match='joint "elbow"'):
        evaluate_planned_trajectory(ur5, msg, ur5.theta_nominal, "ur5")
    with pytest.raises(InvalidInputError, match="planned_trajectory.points"):
        evaluate_planned_trajectory(ur5, JointTrajectory(joint_names=UR5_JOINTS),
                                    ur5.theta_nominal, "ur5")


def test_with_efforts_rejects_a_result_of_another_trajectory(ur5):
    result = evaluate(ur5, ur5_move(n=5), None, compute_max_payload=False)
    with pytest.raises(InvalidInputError, match="do not fit"):
        with_efforts(trajectory_to_msg(ur5_move(n=6)), result)


# ---------------------------------------------------------------------------- over DDS
def _inertia_stamped(payload):
    from geometry_msgs.msg import InertiaStamped

    msg = InertiaStamped()
    msg.header.frame_id = payload.link
    msg.inertia.m = payload.mass
    msg.inertia.com.x, msg.inertia.com.y, msg.inertia.com.z = (float(x) for x in payload.com)
    i = payload.inertia
    msg.inertia.ixx, msg.inertia.iyy, msg.inertia.izz = i[0, 0], i[1, 1], i[2, 2]
    msg.inertia.ixy, msg.inertia.ixz, msg.inertia.iyz = i[0, 1], i[0, 2], i[1, 2]
    return msg


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_dynamics_node_answers_a_planned_trajectory_over_dds(ur5, urdf_paths, tmp_path):
    from diagnostic_msgs.msg import DiagnosticArray
    from support.ros_harness import LATCHED, NodeProcess, RosClient, unique_namespace

    namespace = unique_namespace("planned")
    node = NodeProcess("dynamics_node", namespace, tmp_path, {
        "urdf_path": urdf_paths["ur5"], "jacobian_samples": 64, "cache_dir": str(tmp_path),
        "diagnostics_period": 0.2})
    client = RosClient()
    try:
        trajectory_pub = client.publisher(JointTrajectory, f"{namespace}/planned_trajectory")
        payload_pub = client.publisher(type(_inertia_stamped(ur5_payload())),
                                       f"{namespace}/payload", LATCHED)
        answers = client.collect(JointTrajectory, f"{namespace}/planned_trajectory_efforts")
        statuses: list = []
        client.node.create_subscription(
            DiagnosticArray, f"{namespace}/diagnostics",
            lambda msg: statuses.extend(s for s in msg.status if "planned_trajectory" in s.name
                                        and "input" not in s.name), 100)
        client.wait_matched([trajectory_pub, payload_pub], 60.0, node)

        # 1. the arm alone, a reordered subset without accelerations: efforts as the core
        trajectory = reordered_subset()
        trajectory_pub.publish(trajectory_to_msg(trajectory))
        client.spin_until(lambda: answers and statuses, 10.0, "the first answer", node)
        reference = evaluate(ur5, trajectory, None)
        columns = [UR5_JOINTS.index(name) for name in trajectory.joint_names]
        efforts = np.array([point.effort for point in answers[0].points])
        np.testing.assert_allclose(efforts, reference.effort[:, columns], rtol=1e-9, atol=1e-9)
        assert list(answers[0].joint_names) == list(trajectory.joint_names)
        assert status_level(statuses[-1]) == OK

        # 2. a heavy payload on tool0: efforts under it, the status names the joint
        heavy = ur5_payload(15.0)
        payload_pub.publish(_inertia_stamped(heavy))
        full = ur5_move(n=11)
        expected = evaluate(ur5, full, None, theta=theta_with(ur5, heavy)).effort

        def answered_with_payload():
            got = np.array([point.effort for point in answers[-1].points])
            return got.shape == expected.shape and np.allclose(got, expected, atol=1e-6)

        for _ in range(20):  # the payload may still be in flight: resend until it counts
            statuses.clear()
            count = len(answers)
            trajectory_pub.publish(trajectory_to_msg(full))
            client.spin_until(lambda n=count: len(answers) > n, 10.0, "an answer", node)
            if answered_with_payload():
                break
        assert answered_with_payload()
        client.spin_until(lambda: any(status_level(s) == ERROR for s in statuses), 5.0,
                          "an ERROR status", node)
        error = next(s for s in statuses if status_level(s) == ERROR)
        assert "shoulder_lift_joint" in error.message

        # 3. a bad trajectory is rejected and the node keeps answering
        bad = trajectory_to_msg(full)
        bad.joint_names[0] = "no_such_joint"
        trajectory_pub.publish(bad)
        count = len(answers)
        trajectory_pub.publish(trajectory_to_msg(full))
        client.spin_until(lambda: len(answers) > count, 10.0, "an answer after a rejection",
                          node)
        assert len(answers) == count + 1
        assert node.alive
    finally:
        client.close()
        code = node.stop()
    assert code == 0, node.output()[-3000:]
    assert "Traceback" not in node.output()
