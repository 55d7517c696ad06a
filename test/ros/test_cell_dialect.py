"""estimator_node on a real cell's joint_states: amperes, another order, a gripper joint.

Two estimator_nodes (UR5, load on tool0) get the same simulated samples over real DDS: one
as joint torques in model order, the other as a UR driver in current mode publishes them
(e = offset + τ/(sign·gain) with the ``ur_e_series_current`` gains, the joints in another
order, and a gripper joint the URDF does not have, as MoveIt's robot_description adds).
The second node starts without effort parameters; they are set at runtime through its
``set_parameters`` service (a wrong-length list first, which must be refused with the
reason). With every sample delivered (RELIABLE), both must publish the same payload; the
gripper joint is skipped with one log line. A third node with ``strict_joints`` rejects
those messages instead.
"""

from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from support.ros_harness import NodeProcess, RosClient, short_name, unique_namespace

from robot_tv_dynamics.evaluation import load_payload, load_trajectory
from robot_tv_dynamics.inputs.efforts import effort_map
from robot_tv_dynamics.paths import package_config_dir
from robot_tv_dynamics.simulation.recording import simulate_recording

pytestmark = [pytest.mark.ros]

ORDER = ["wrist_3_joint", "elbow_joint", "shoulder_pan_joint", "wrist_1_joint",
         "shoulder_lift_joint", "wrist_2_joint"]
GRIPPER = "robotiq_85_left_knuckle_joint"
OFFSET, SIGN = "0.05,-0.1,0.2,0.0,0.03,-0.02", "1,-1,1,1,1,-1"
NODE = {"method": "classical", "link": "tool0", "executor": "single_threaded",
        "joint_states_reliable": True, "joint_states_depth": 1000, "publish_period": 0.0}


def _messages(model, recording, order, efforts, extra=()):
    take = [model.joint_names.index(name) for name in order]
    raw = efforts.raw(recording.effort)
    out = []
    for k, t in enumerate(recording.t):
        ns = int(round((100.0 + float(t)) * 1e9))
        msg = JointState(name=list(order) + [name for name, _ in extra])
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
        msg.position = [float(v) for v in recording.q[k, take]] + [p for _, p in extra]
        msg.velocity = [float(v) for v in recording.qd[k, take]] + [0.0] * len(extra)
        msg.effort = [float(v) for v in raw[k, take]] + [0.0] * len(extra)
        out.append(msg)
    return out


def _set(client, service, **values):
    request = SetParameters.Request(parameters=[
        Parameter(name, Parameter.Type.STRING, value).to_parameter_msg()
        for name, value in values.items()])
    future = service.call_async(request)
    client.spin_until(future.done, 20.0, "set_parameters")
    return future.result().results[0]


def test_amperes_in_another_order_set_at_runtime_give_the_clean_estimate(
        tmp_path, urdf_paths, ur5):
    examples = package_config_dir() / "examples"
    recording = simulate_recording(
        ur5, load_trajectory(str(examples / "ur5_trajectory.yaml")),
        load=load_payload(str(examples / "ur5_payload.yaml")), rate=250.0)
    dialect = effort_map("ur_e_series_current", offset=[float(v) for v in OFFSET.split(",")],
                         sign=[float(v) for v in SIGN.split(",")])
    clean = _messages(ur5, recording, ur5.joint_names, effort_map())
    ur = _messages(ur5, recording, ORDER, dialect, extra=[(GRIPPER, 0.4)])
    ns = unique_namespace("cell")
    nodes = {kind: NodeProcess("estimator_node", f"{ns}/{kind}", tmp_path,
                               {"urdf_path": urdf_paths["ur5"], **NODE,
                                "strict_joints": kind == "strict"})
             for kind in ("clean", "ur", "strict")}
    client = RosClient()
    try:
        payloads = {kind: client.collect(InertiaStamped, f"{ns}/{kind}/payload_estimate")
                    for kind in nodes}
        every = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=len(clean),
                           reliability=ReliabilityPolicy.RELIABLE)  # no sample overwritten
        pubs = {kind: client.publisher(JointState, f"{ns}/{kind}/joint_states", every)
                for kind in nodes}
        diagnostics = client.collect(DiagnosticArray, f"{ns}/ur/diagnostics")
        for kind, node in nodes.items():
            client.spin_until(lambda n=node: "ready" in n.output(), 60.0, f"{kind} ready", node)
        service = client.node.create_client(
            SetParameters, f"{ns}/ur/estimator_node/set_parameters")
        client.spin_until(lambda: service.service_is_ready(), 20.0, "the parameter service")
        refused = _set(client, service, effort_gain="12.6,12.6")
        assert not refused.successful and "effort_gain" in refused.reason
        assert "shoulder_pan_joint" in refused.reason
        accepted = _set(client, service, effort_preset="ur_e_series_current")
        assert accepted.successful, accepted.reason
        for name, value in (("effort_offset", OFFSET), ("effort_sign", SIGN)):
            result = _set(client, service, **{name: value})
            assert result.successful, result.reason
        client.wait_matched(list(pubs.values()), 20.0)
        for a, b in zip(clean, ur, strict=True):
            pubs["clean"].publish(a)
            pubs["ur"].publish(b)
            pubs["strict"].publish(b)
            client.executor.spin_once(timeout_sec=0.0)
        last = clean[-1].header.stamp

        def done(kind):
            return any(m.header.stamp == last for m in payloads[kind])
        client.spin_until(lambda: done("clean") and done("ur"), 60.0, "the last estimates")
        final = {kind: next(m for m in payloads[kind] if m.header.stamp == last).inertia
                 for kind in ("clean", "ur")}
        assert final["clean"].m > 1.0  # the 3 kg load is being seen

        def samples():  # what the node counted in its status
            values = [dict((v.key, v.value) for v in status.values) for array in diagnostics
                      for status in array.status
                      if short_name(status.name) == "estimator_node: tool0"]
            return values and int(values[-1]["samples"]) == len(ur)
        client.spin_until(samples, 10.0, f"a status counting all {len(ur)} samples")
        for field in ("m", "ixx", "iyy", "izz", "ixy", "ixz", "iyz"):
            assert getattr(final["ur"], field) == pytest.approx(
                getattr(final["clean"], field), rel=1e-9, abs=1e-12), field
        np.testing.assert_allclose(
            [final["ur"].com.x, final["ur"].com.y, final["ur"].com.z],
            [final["clean"].com.x, final["clean"].com.y, final["clean"].com.z], atol=1e-9)
        assert nodes["ur"].output().count("skipping joints the model does not have") == 1
        assert f"['{GRIPPER}']" in nodes["ur"].output()
        assert not payloads["strict"]
        assert f'joint "{GRIPPER}" is not in the URDF' in nodes["strict"].output()
        assert "efforts now ur_e_series_current" in nodes["ur"].output()
    finally:
        client.close()
        for node in nodes.values():
            node.stop()


def test_dynamics_node_observes_the_same_residual_from_amperes(tmp_path, urdf_paths, ur5):
    """The observer path: external_torques from amperes + a gripper = from clean torques."""
    examples = package_config_dir() / "examples"
    recording = simulate_recording(
        ur5, load_trajectory(str(examples / "ur5_trajectory.yaml")),
        load=load_payload(str(examples / "ur5_payload.yaml")), rate=250.0)
    dialect = effort_map("ur_e_series_current", offset=[float(v) for v in OFFSET.split(",")],
                         sign=[float(v) for v in SIGN.split(",")])
    sent = {"clean": _messages(ur5, recording, ur5.joint_names, effort_map()),
            "ur": _messages(ur5, recording, ORDER, dialect, extra=[(GRIPPER, 0.4)])}
    ns = unique_namespace("cellobs")
    common = {"urdf_path": urdf_paths["ur5"], "executor": "single_threaded",
              "observer_model": "generalized", "joint_states_reliable": True,
              "joint_states_depth": 1000, "jacobian_samples": 64, "bounds_time_limit": 1.0,
              "cache_dir": "", "publish_terms": False, "publish_bounds": False}
    nodes = {"clean": NodeProcess("dynamics_node", f"{ns}/clean", tmp_path, common),
             "ur": NodeProcess("dynamics_node", f"{ns}/ur", tmp_path, {
                 **common, "effort_preset": "ur_e_series_current", "effort_offset": OFFSET,
                 "effort_sign": SIGN})}
    client = RosClient()
    try:
        every = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=len(sent["clean"]),
                           reliability=ReliabilityPolicy.RELIABLE)
        residuals = {k: client.collect(JointState, f"{ns}/{k}/external_torques", every)
                     for k in nodes}
        torques = {k: client.collect(JointState, f"{ns}/{k}/generalized_torques", every)
                   for k in nodes}
        pubs = {k: client.publisher(JointState, f"{ns}/{k}/joint_states", every)
                for k in nodes}
        for kind, node in nodes.items():
            client.spin_until(lambda n=node: "ready" in n.output(), 120.0, kind, node)
        client.wait_matched(list(pubs.values()), 20.0)
        for a, b in zip(sent["clean"], sent["ur"], strict=True):
            pubs["clean"].publish(a)
            pubs["ur"].publish(b)
            client.executor.spin_once(timeout_sec=0.0)
        count = len(sent["clean"])
        client.spin_until(lambda: all(len(residuals[k]) == count and len(torques[k]) == count
                                      for k in nodes), 60.0,
                          f"{count} residuals and torques from each node")
    finally:
        client.close()
        for node in nodes.values():
            node.stop()
    for kind in ("clean", "ur"):  # answered in model order, whatever the input order
        assert list(torques[kind][0].name) == list(ur5.joint_names)
    tau = {k: np.array([m.effort for m in torques[k]]) for k in nodes}
    np.testing.assert_array_equal(tau["ur"], tau["clean"])
    r = {k: np.array([m.effort for m in residuals[k]]) for k in nodes}
    assert np.abs(r["clean"]).max() > 0.0
    np.testing.assert_allclose(r["ur"], r["clean"], rtol=0, atol=1e-9)
    assert nodes["ur"].output().count("skipping joints the model does not have") == 1


def test_the_cell_parameters_act_at_runtime_or_are_refused_with_the_reason(
        tmp_path, urdf_paths, ur5):
    """payload_frame and strict_joints of estimator_node; dynamics_node refuses bad values."""
    examples = package_config_dir() / "examples"
    recording = simulate_recording(
        ur5, load_trajectory(str(examples / "ur5_trajectory.yaml")),
        load=load_payload(str(examples / "ur5_payload.yaml")), rate=250.0)
    messages = _messages(ur5, recording, ORDER, effort_map(), extra=[(GRIPPER, 0.4)])
    ns = unique_namespace("cellparams")
    estimator = NodeProcess("estimator_node", f"{ns}/e", tmp_path,
                            {"urdf_path": urdf_paths["ur5"], **NODE, "link": "wrist_3_link"})
    dynamics = NodeProcess("dynamics_node", f"{ns}/d", tmp_path, {
        "urdf_path": urdf_paths["ur5"], "executor": "single_threaded",
        "jacobian_samples": 64, "bounds_time_limit": 1.0, "cache_dir": ""})
    client = RosClient()
    try:
        payloads = client.collect(InertiaStamped, f"{ns}/e/payload_estimate")
        pub = client.publisher(JointState, f"{ns}/e/joint_states", QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=len(messages),
            reliability=ReliabilityPolicy.RELIABLE))
        for node in (estimator, dynamics):
            client.spin_until(lambda n=node: "ready" in n.output(), 120.0, node.name, node)
        services = {key: client.node.create_client(
            SetParameters, f"{ns}/{key}/{name}/set_parameters")
            for key, name in (("e", "estimator_node"), ("d", "dynamics_node"))}
        for service in services.values():
            client.spin_until(service.service_is_ready, 20.0, "a parameter service")

        def set_parameter(key, name, value):
            kind = Parameter.Type.BOOL if isinstance(value, bool) else Parameter.Type.STRING
            future = services[key].call_async(SetParameters.Request(
                parameters=[Parameter(name, kind, value).to_parameter_msg()]))
            client.spin_until(future.done, 20.0, "set_parameters")
            return future.result().results[0]

        client.wait_matched([pub], 20.0)
        half = len(messages) // 2
        for msg in messages[:half]:  # the gripper joint is skipped: estimates in tool0
            pub.publish(msg)
            client.executor.spin_once(timeout_sec=0.0)
        client.spin_until(lambda: payloads, 30.0, "an estimate")

        def settled():  # the node has worked through its backlog: no estimate for 1 s
            seen = len(payloads)
            client.spin_for(1.0)
            return len(payloads) == seen
        client.spin_until(settled, 60.0, "the first half's estimates")
        assert {m.header.frame_id for m in payloads} == {"tool0"}  # the flange by default
        refused = set_parameter("e", "payload_frame", "forearm_link")
        assert not refused.successful and "forearm_link" in refused.reason
        assert set_parameter("e", "payload_frame", "wrist_3_link").successful
        assert set_parameter("e", "strict_joints", True).successful
        count = len(payloads)
        for msg in messages[half:half + 50]:  # strict: the gripper joint rejects them
            pub.publish(msg)
            client.spin_for(0.002)
        client.spin_for(1.0)
        assert len(payloads) == count
        assert f'joint "{GRIPPER}" is not in the URDF' in estimator.output()
        assert set_parameter("e", "strict_joints", False).successful
        for msg in messages[half + 50:]:
            pub.publish(msg)
            client.executor.spin_once(timeout_sec=0.0)
        client.spin_until(lambda: len(payloads) > count, 30.0, "estimates again")
        assert payloads[-1].header.frame_id == "wrist_3_link"
        # dynamics_node: values that cannot apply are refused with the reason
        bad = set_parameter("d", "effort_sign", "1,0.5")
        assert not bad.successful and "effort_sign" in bad.reason
        bad = set_parameter("d", "payload_frame", "no_such_link")
        assert not bad.successful and "no_such_link" in bad.reason
        assert set_parameter("d", "effort_preset", "franka_link_torque").successful
        assert "efforts now franka_link_torque" in dynamics.output()
    finally:
        client.close()
        for node in (estimator, dynamics):
            node.stop()
