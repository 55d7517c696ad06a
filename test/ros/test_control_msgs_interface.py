"""control_msgs' FollowJointTrajectory as the set-up builds it: Jazzy's type hashes, DDS goals.

The expected hashes are the ``RIHS01_`` strings of control_msgs as released for ROS 2
Jazzy (5.x), read from the type description (``rosidl_generator_type_description``) of a
Jazzy build of the upstream package, not computed here: a MoveIt or a
joint_trajectory_controller of that release and the gate must agree on them, or their
endpoints do not match.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.ros_harness import RosClient, node_env, unique_namespace

pytestmark = [pytest.mark.ros]

#: control_msgs/action/FollowJointTrajectory of the Jazzy release.
JAZZY_FOLLOW_JOINT_TRAJECTORY = (
    "RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6")
#: The parts a client and a server exchange, and the two tolerance messages.
JAZZY_HASHES = {
    "control_msgs/action/FollowJointTrajectory_Goal":
        "RIHS01_8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
    "control_msgs/action/FollowJointTrajectory_Result":
        "RIHS01_8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220",
    "control_msgs/action/FollowJointTrajectory_Feedback":
        "RIHS01_3fd0aaecf71725121ae1ff7f01098a5e0da581e672be18a6b2c286cb43d96b49",
    "control_msgs/action/FollowJointTrajectory_FeedbackMessage":
        "RIHS01_80398fcb9674a79081a9906e2ccf0c804dd7cb15e22e362e606ee87186beab71",
    "control_msgs/action/FollowJointTrajectory_SendGoal":
        "RIHS01_b13789dddc325a7a962825c45e28c77d37237ec129dd0c34dc5994562938c57f",
    "control_msgs/msg/JointTolerance":
        "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    "control_msgs/msg/JointComponentTolerance":
        "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
}


def _installed_type_hashes() -> dict[str, str]:
    from ament_index_python.packages import get_package_share_directory

    share = Path(get_package_share_directory("control_msgs"))
    description = json.loads((share / "action" / "FollowJointTrajectory.json").read_text())
    return {row["type_name"]: row["hash_string"] for row in description["type_hashes"]}


def test_follow_joint_trajectory_type_hash_is_the_jazzy_release_hash():
    hashes = _installed_type_hashes()
    assert hashes["control_msgs/action/FollowJointTrajectory"] == JAZZY_FOLLOW_JOINT_TRAJECTORY
    for name, expected in JAZZY_HASHES.items():
        assert hashes[name] == expected, name


def test_result_constants_are_control_msgs_error_codes():
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointComponentTolerance

    result = FollowJointTrajectory.Result
    assert (result.SUCCESSFUL, result.INVALID_GOAL, result.INVALID_JOINTS,
            result.OLD_HEADER_TIMESTAMP, result.PATH_TOLERANCE_VIOLATED,
            result.GOAL_TOLERANCE_VIOLATED) == (0, -1, -2, -3, -4, -5)
    assert (JointComponentTolerance.X_AXIS, JointComponentTolerance.ROTATION) == (1, 5)


#: An action server in its own process: accepts a goal, sends one feedback with the
#: first point as "desired", succeeds with the number of points in error_string.
SERVER = textwrap.dedent("""
    import sys, rclpy
    from rclpy.action import ActionServer
    from rclpy.executors import ExternalShutdownException
    from control_msgs.action import FollowJointTrajectory as F
    rclpy.init()
    node = rclpy.create_node("fjt_echo", namespace=sys.argv[1])
    def execute(handle):
        feedback = F.Feedback(joint_names=handle.request.trajectory.joint_names)
        feedback.desired = handle.request.trajectory.points[0]
        handle.publish_feedback(feedback)
        handle.succeed()
        return F.Result(error_code=F.Result.SUCCESSFUL,
                        error_string=str(len(handle.request.trajectory.points)))
    server = ActionServer(node, F, "follow_joint_trajectory", execute)
    print("ready", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
""")


def test_goal_round_trip_over_dds_and_endpoint_hash(tmp_path):
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint

    namespace = unique_namespace("fjt")
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-c", SERVER, namespace], env=node_env(),
                              stdout=log, stderr=subprocess.STDOUT)
    client = RosClient()
    try:
        action = ActionClient(client.node, FollowJointTrajectory,
                              f"{namespace}/follow_joint_trajectory")
        client.spin_until(action.server_is_ready, 60.0, "the action server")
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = ["a", "b"]
        goal.trajectory.points = [
            JointTrajectoryPoint(positions=[0.1 * k, -0.1 * k]) for k in range(3)]
        feedback: list = []
        sent = action.send_goal_async(goal, feedback_callback=feedback.append)
        handle = client.spin_until(lambda: sent.done() and sent.result(), 30.0, "acceptance")
        assert handle.accepted
        result = handle.get_result_async()
        response = client.spin_until(lambda: result.done() and result.result(), 30.0,
                                     "the result")
        assert response.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
        assert response.result.error_string == "3"
        client.spin_until(lambda: feedback, 10.0, "feedback")
        assert list(feedback[0].feedback.desired.positions) == [0.0, -0.0]
        # the server's feedback writer announces the type hash its typesupport carries
        infos = client.node.get_publishers_info_by_topic(
            f"{namespace}/follow_joint_trajectory/_action/feedback")
        assert infos, "no feedback publisher on the graph"
        assert str(infos[0].topic_type_hash) == JAZZY_HASHES[
            "control_msgs/action/FollowJointTrajectory_FeedbackMessage"]
    finally:
        client.close()
        server.terminate()
        server.wait(10)
        log.close()
