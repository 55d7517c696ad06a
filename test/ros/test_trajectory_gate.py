"""A FollowJointTrajectory client -> trajectory_gate -> sim_node's trajectory server, over DDS.

UR5 with 9 kg on tool0 (the simulated arm carries it as a loading process; the gate
knows it from its parameters, then from the ``payload`` topic). Goals are sent as
moveit_simple_controller_manager sends them: one FollowJointTrajectory goal per
trajectory, cancel and preemption through the action.

The efforts checked are eq. (39) of the executed motion, computed here from the
simulator's joint_states (q, q̇) and joint_accelerations (q̈) with the model and the
payload (what dynamics_node computes from the same samples), not read from the nodes.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.gate_cases import COM, Q0, Q1, quintic, theta_with_payload
from support.particle_lagrangian import find_example_robot_urdf
from support.ros_harness import LATCHED, NodeProcess, RosClient, unique_namespace

pytestmark = [pytest.mark.ros, pytest.mark.slow]

MARGIN = 0.95  # the gate's effort margin: room for the tracking feedback


def goal_message(action_type, trajectory):
    """A FollowJointTrajectory goal carrying ``trajectory`` (q, q̇, q̈ per point)."""
    from robot_tv_dynamics.ros.trajectory_conversions import trajectory_to_msg

    goal = action_type.Goal()
    goal.trajectory = trajectory_to_msg(trajectory)
    return goal


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """sim_node (controller trajectory, 9 kg on tool0) and the gate in front of it."""
    from control_msgs.action import FollowJointTrajectory
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.action import ActionClient
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    folder = tmp_path_factory.mktemp("gate")
    load = folder / "load9.yaml"
    load.write_text(
        "process: grasp\nlink: tool0\nstart: 0.0\nramp_time: 0.5\nmass: 9.0\n"
        f"com: {COM.tolist()}\napproach: {COM.tolist()}\ninertia: [0, 0, 0, 0, 0, 0]\n")
    urdf = find_example_robot_urdf("ur5")
    ns = unique_namespace("gate")
    pose = [f"{name}={value}" for name, value in zip(
        ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
         "wrist_2_joint", "wrist_3_joint"), Q0, strict=True)]
    sim = NodeProcess("sim_node", ns, folder, {
        "urdf_path": urdf, "controller": "trajectory", "loading": str(load),
        "initial_positions": pose, "publish_rate": 200.0, "legacy_theta_topics": False})
    gate = NodeProcess("trajectory_gate", ns, folder, {
        "urdf_path": urdf, "payload_mass": 9.0, "payload_com_z": float(COM[2]),
        "effort_margin": MARGIN, "controller_action": f"{ns}/sim_node/follow_joint_trajectory"})
    # τ of eq. (39) for every executed sample, under the Θ the simulated arm carries
    # (sim_node's stamped Θ, the 9 kg in it) and its q̈, as the demo runs it
    dynamics = NodeProcess("dynamics_node", ns, folder, {
        "urdf_path": urdf, "jacobian_samples": 64, "bounds_time_limit": 1.0,
        "observer_model": "off", "legacy_theta_topics": False},
        ["-r", "reference:=joint_accelerations"])
    client = RosClient()
    try:
        chain = Chain(client, sim, gate, ns, FollowJointTrajectory, ActionClient)
        chain.torques = client.collect(JointState, f"{ns}/generalized_torques")
        chain.states = client.collect(JointState, f"{ns}/joint_states")
        chain.accelerations = client.collect(JointTrajectory, f"{ns}/joint_accelerations")
        chain.diagnostics = client.collect(DiagnosticArray, f"{ns}/diagnostics")
        client.spin_until(chain.gate_action.server_is_ready, 60.0, "the gate's action", gate)
        client.spin_until(chain.sim_action.server_is_ready, 60.0, "sim_node's action", sim)
        client.spin_until(lambda: chain.states, 60.0, "joint_states", sim)
        client.spin_until(lambda: chain.torques, 60.0, "dynamics_node's torques", dynamics)
        client.spin_for(1.5)  # the load is on the flange (its 0.5 s ramp is over)
        yield chain
    finally:
        client.close()
        codes = gate.stop(), sim.stop(), dynamics.stop()
    assert codes == (0, 0, 0), (gate.output()[-2000:] + sim.output()[-2000:]
                                + dynamics.output()[-2000:])


class Chain:
    """The nodes, the client's actions and the recorded topics."""

    def __init__(self, client, sim, gate, ns, action_type, action_client) -> None:
        self.client, self.sim, self.gate, self.ns = client, sim, gate, ns
        self.type = action_type
        self.gate_action = action_client(client.node, action_type,
                                         f"{ns}/trajectory_gate/follow_joint_trajectory")
        self.sim_action = action_client(client.node, action_type,
                                        f"{ns}/sim_node/follow_joint_trajectory")
        self.states: list = []
        self.accelerations: list = []
        self.diagnostics: list = []
        self.torques: list = []

    def send(self, trajectory, direct: bool = False):
        """Send a goal (to the gate, or straight to the simulator); the accepted handle."""
        action = self.sim_action if direct else self.gate_action
        future = action.send_goal_async(goal_message(self.type, trajectory))
        handle = self.client.spin_until(lambda: future.done() and future.result(), 30.0,
                                        "the goal response", self.gate)
        assert handle.accepted
        return handle

    def result(self, handle, timeout: float = 60.0):
        future = handle.get_result_async()
        return self.client.spin_until(lambda: future.done() and future.result(), timeout,
                                      "the result", self.gate)

    def move_to(self, q, duration: float = 4.0) -> None:
        """Bring the arm to ``q`` slowly, straight through the simulator's action."""
        now = np.array(self.states[-1].position)
        if np.abs(now - q).max() < 1e-3:
            return
        response = self.result(self.send(quintic(duration, now, q), direct=True))
        assert response.status == 4, response.result.error_string  # SUCCEEDED

    def record(self):
        """Start recording: the index of the next joint state, acceleration and τ."""
        return len(self.states), len(self.accelerations), len(self.torques)

    def node_effort_ratio(self, mark, limits) -> np.ndarray:
        """|τ|/τ_max of dynamics_node's answers to the samples recorded since ``mark``."""
        from robot_tv_dynamics.ros.conversions import stamp_to_seconds

        self.client.spin_for(0.5)  # its last answers
        stamps = {stamp_to_seconds(s.header.stamp) for s in self.states[mark[0]:]}
        tau = np.array([m.effort for m in self.torques[mark[2]:]
                        if stamp_to_seconds(m.header.stamp) in stamps])
        assert len(tau) > 0.9 * len(stamps), (len(tau), len(stamps))
        return np.abs(tau) / np.asarray(limits)

    def executed(self, mark):
        """(q, q̇, q̈) of the samples recorded since ``mark``, paired by stamp."""
        from robot_tv_dynamics.ros.conversions import stamp_to_seconds

        by_stamp = {stamp_to_seconds(m.header.stamp): m.points[0].accelerations
                    for m in self.accelerations[mark[1]:]}
        rows = [(s.position, s.velocity, by_stamp[stamp_to_seconds(s.header.stamp)])
                for s in self.states[mark[0]:] if stamp_to_seconds(s.header.stamp) in by_stamp]
        assert len(rows) > 50, f"only {len(rows)} paired samples"
        return tuple(np.array([row[i] for row in rows]) for i in range(3))

    def last_decision(self):
        from robot_tv_dynamics.ros.conversions import status_level

        statuses = [s for a in self.diagnostics for s in a.status
                    if s.name == "trajectory_gate: goals" and s.message != "no goal yet"]
        return (status_level(statuses[-1]), statuses[-1].message) if statuses else None


def _off_line(q: np.ndarray) -> float:
    """Largest distance of the rows of ``q`` from the planned path (the segment Q0-Q1)."""
    d = Q1 - Q0
    fraction = np.clip((q - Q0) @ d / (d @ d), 0.0, 1.0)
    return float(np.abs(q - Q0 - np.outer(fraction, d)).max())


def _effort_ratio(ur5, q, qd, qdd) -> np.ndarray:
    theta = theta_with_payload(ur5, 9.0)
    tau = np.array([ur5.inverse_dynamics(*row, theta).tau for row in zip(q, qd, qdd,
                                                                           strict=True)])
    return np.abs(tau) / np.asarray(ur5.joint_limits.effort)


def test_an_infeasible_trajectory_is_executed_retimed_within_the_effort_limits(chain, ur5):
    chain.move_to(Q0)
    planned = quintic(1.0)
    mark = chain.record()
    response = chain.result(chain.send(planned))
    assert response.status == 4, response.result.error_string
    chain.client.spin_for(0.2)
    level, message = chain.client.spin_until(chain.last_decision, 10.0, "the gate's status")
    assert level == 1 and message.startswith("retime:"), message
    q, qd, qdd = chain.executed(mark)
    ratio = _effort_ratio(ur5, q, qd, qdd)
    assert ratio.max() <= 1.0, f"peak |tau|/tau_max {ratio.max():.4f}"
    # the same from dynamics_node, at every sample it answered during the execution
    node_ratio = chain.node_effort_ratio(mark, ur5.joint_limits.effort)
    assert node_ratio.max() <= 1.0, f"dynamics_node: peak |tau|/tau_max {node_ratio.max():.4f}"
    assert _off_line(q) <= 1e-3, f"{_off_line(q):.2e} rad off the planned path"
    np.testing.assert_allclose(q[-1], Q1, atol=2e-3)
    # the same trajectory sent straight to the arm, without the gate, is over the limits
    chain.move_to(Q0)
    mark = chain.record()
    assert chain.result(chain.send(planned, direct=True)).status == 4
    q, qd, qdd = chain.executed(mark)
    assert _effort_ratio(ur5, q, qd, qdd).max() > 1.03
    assert chain.node_effort_ratio(mark, ur5.joint_limits.effort).max() > 1.03


def test_a_cancel_mid_motion_stops_the_arm(chain):
    chain.move_to(Q0)
    handle = chain.send(quintic(4.0))
    chain.client.spin_for(1.2)
    q_cancel = np.array(chain.states[-1].position)
    cancel = handle.cancel_goal_async()
    chain.client.spin_until(lambda: cancel.done(), 10.0, "the cancel response")
    response = chain.result(handle)
    assert response.status == 5  # CANCELED
    q_canceled = np.array(chain.states[-1].position)
    chain.client.spin_for(1.0)
    q_stop = np.array(chain.states[-1].position)
    chain.client.spin_for(1.0)
    last = chain.states[-1]
    assert np.abs(np.array(last.velocity)).max() < 1e-2
    np.testing.assert_allclose(last.position, q_stop, atol=1e-3)
    # stopped where the cancel found it: short of the goal, not carried on along the path
    assert np.abs(q_stop - q_canceled).max() < 0.05, (q_cancel, q_canceled, q_stop)
    assert np.abs(q_stop - Q1).max() > 0.1 and np.abs(q_stop - Q0).max() > 0.05


def test_a_second_goal_preempts_the_first(chain):
    chain.move_to(Q0)
    first = chain.send(quintic(4.0))
    chain.client.spin_for(1.0)
    q_now = np.array(chain.states[-1].position)
    second = chain.send(quintic(3.0, q_now, Q0))
    assert chain.result(first).status == 6  # ABORTED: preempted by the controller
    response = chain.result(second)
    assert response.status == 4, response.result.error_string
    chain.client.spin_for(0.3)
    np.testing.assert_allclose(chain.states[-1].position, Q0, atol=2e-3)


def test_a_payload_above_capacity_is_refused_with_invalid_goal(chain):
    from geometry_msgs.msg import InertiaStamped

    chain.move_to(Q0)
    publisher = chain.client.publisher(InertiaStamped, f"{chain.ns}/payload", LATCHED)
    heavy = InertiaStamped()
    heavy.header.frame_id = "tool0"
    heavy.inertia.m, heavy.inertia.com.z = 25.0, float(COM[2])
    publisher.publish(heavy)
    chain.client.spin_until(lambda: "25 kg" in chain.gate.output(), 20.0,
                            "the gate to take the payload", chain.gate)
    before = np.array(chain.states[-1].position)
    response = chain.result(chain.send(quintic(4.0)))
    assert response.status == 6  # ABORTED
    assert response.result.error_code == chain.type.Result.INVALID_GOAL
    assert "cannot hold the load at rest" in response.result.error_string
    chain.client.spin_for(0.5)
    np.testing.assert_allclose(chain.states[-1].position, before, atol=1e-3)  # not moved
    heavy.inertia.m = 9.0  # back to the load the arm carries
    publisher.publish(heavy)
    chain.client.spin_until(lambda: "9 kg (from the payload topic)" in chain.gate.output(),
                            20.0, "the gate to take the payload back", chain.gate)


def test_sim_node_follows_a_trajectory_on_its_joint_trajectory_topic(chain):
    from trajectory_msgs.msg import JointTrajectory

    from robot_tv_dynamics.ros.trajectory_conversions import trajectory_to_msg

    chain.move_to(Q0)
    target = Q0 + np.array([0.2, 0.1, -0.1, 0.1, 0.2, 0.3])
    publisher = chain.client.publisher(JointTrajectory, f"{chain.ns}/sim_node/joint_trajectory")
    chain.client.wait_matched([publisher], 30.0, chain.sim)
    publisher.publish(trajectory_to_msg(quintic(1.5, Q0, target)))
    chain.client.spin_until(
        lambda: np.abs(np.array(chain.states[-1].position) - target).max() < 1e-3
        and np.abs(np.array(chain.states[-1].velocity)).max() < 1e-3, 20.0,
        "the arm at the topic's last point", chain.sim)


def test_a_feasible_trajectory_is_forwarded_with_identical_points(tmp_path):
    """The gate in front of an action server of the test's own, which records the goal."""
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient, ActionServer

    ns = unique_namespace("fwd")
    client = RosClient()
    received: list = []

    def execute(handle):
        received.append(handle.request)
        handle.succeed()
        return FollowJointTrajectory.Result()

    ActionServer(client.node, FollowJointTrajectory, f"{ns}/arm/follow_joint_trajectory",
                 execute)
    gate = NodeProcess("trajectory_gate", ns, tmp_path, {
        "urdf_path": find_example_robot_urdf("ur5"), "payload_mass": 9.0,
        "payload_com_z": float(COM[2]), "controller_action": f"{ns}/arm/follow_joint_trajectory"})
    try:
        action = ActionClient(client.node, FollowJointTrajectory,
                              f"{ns}/trajectory_gate/follow_joint_trajectory")
        client.spin_until(action.server_is_ready, 60.0, "the gate's action", gate)
        for duration in (4.0, 1.0):  # feasible, then infeasible
            goal = goal_message(FollowJointTrajectory, quintic(duration))
            goal.goal_time_tolerance.sec = 2
            sent = action.send_goal_async(goal)
            handle = client.spin_until(lambda f=sent: f.done() and f.result(), 30.0,
                                       "acceptance", gate)
            result = handle.get_result_async()
            client.spin_until(lambda r=result: r.done(), 60.0, "the result", gate)
            assert result.result().status == 4
    finally:
        client.close()
        code = gate.stop()
    assert code == 0, gate.output()[-2000:]
    assert len(received) == 2
    sent_points = goal_message(FollowJointTrajectory, quintic(4.0)).trajectory.points
    assert received[0].trajectory.points == sent_points  # forwarded unchanged
    assert received[0].goal_time_tolerance.sec == 2
    retimed = received[1].trajectory.points
    assert retimed != goal_message(FollowJointTrajectory, quintic(1.0)).trajectory.points
    assert received[1].goal_time_tolerance.sec == 2  # the goal's tolerances kept
    assert list(retimed[-1].positions) == pytest.approx(Q1.tolist(), abs=1e-9)


def test_the_gate_refuses_a_runtime_change_of_a_start_up_parameter(tmp_path):
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    ns = unique_namespace("params")
    gate = NodeProcess("trajectory_gate", ns, tmp_path, {
        "urdf_path": find_example_robot_urdf("ur5")})
    client = RosClient()
    try:
        service = client.node.create_client(SetParameters,
                                            f"{ns}/trajectory_gate/set_parameters")
        client.spin_until(service.service_is_ready, 60.0, "the parameter service", gate)
        request = SetParameters.Request(parameters=[
            Parameter(name="controller_action", value=ParameterValue(
                type=ParameterType.PARAMETER_STRING, string_value="other")),
        ])
        future = service.call_async(request)
        refused = client.spin_until(lambda: future.done() and future.result(), 20.0, "reply")
        request = SetParameters.Request(parameters=[
            Parameter(name="payload_mass", value=ParameterValue(
                type=ParameterType.PARAMETER_DOUBLE, double_value=4.0))])
        future = service.call_async(request)
        accepted = client.spin_until(lambda: future.done() and future.result(), 20.0, "reply")
        client.spin_until(lambda: "4 kg (from the parameters)" in gate.output(), 10.0,
                          "the payload log line", gate)
    finally:
        client.close()
        gate.stop()
    assert not refused.results[0].successful
    assert "read-only" in refused.results[0].reason
    assert accepted.results[0].successful


def test_every_gate_parameter_is_documented_declared_with_a_range_and_in_the_config():
    from dataclasses import fields
    from pathlib import Path

    from robot_tv_dynamics.ros.trajectory_gate import PARAMETERS, GateConfig

    docs = (Path(__file__).resolve().parents[2] / "docs" / "ros_interface.md").read_text()
    table = docs[docs.index("#### trajectory_gate"):]
    for spec in PARAMETERS:
        assert f"| `{spec.name}` |" in table, spec.name
        descriptor = spec.descriptor()
        assert descriptor.description
        if isinstance(spec.default, float):
            assert len(descriptor.floating_point_range) == 1, spec.name
        elif isinstance(spec.default, int) and not isinstance(spec.default, bool):
            assert len(descriptor.integer_range) == 1, spec.name
    declared = {s.name: list(s.default) if isinstance(s.default, tuple) else s.default
                for s in PARAMETERS}
    config = {f.name: list(f.default) if isinstance(f.default, tuple) else f.default
              for f in fields(GateConfig) if f.name != "executor"}
    assert config == declared
