"""Θ that carries its time, out of the nodes, over real DDS: the stamps are the data's.

- monitor_node judges each stamped Θ at its stamp: ``consistency_stamped`` carries that
  stamp exactly (to the nanosecond), μ of each body is λ_min of f(Φ) (built here from
  eq. (9) by hand), an older Θ is refused with a reason, the legacy Θ is ignored once
  stamped Θ arrived and said to be deprecated;
- estimator_node stamps Θ̂ with the last joint_states sample it used;
- dynamics_node applies a ``payload`` from its stamp on: samples before it keep the
  URDF's Θ (τ checked against the library's eq. (39) with and without the payload);
- markers_node draws Θ interpolated at the stamp of the joint sample that poses it, and
  colours it by the monitor's level judged at or before that stamp;
- the Foxglove layout's paths resolve, on these real messages, to the entries they
  name.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from support.by_hand import margin_by_hand
from support.ros_harness import (
    BEST_EFFORT,
    LATCHED,
    RELIABLE,
    NodeProcess,
    short_name,
    unique_namespace,
)
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import MarkerArray

from robot_tv_dynamics import phi_from_mass_com_inertia
from robot_tv_dynamics.consistency.monitor import TABLE_FIELDS, Level
from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader
from robot_tv_dynamics.ros import conversions as cv
from robot_tv_dynamics.visualization import lead_radius
from robot_tv_dynamics.visualization.look import LEVEL_COLORS

pytestmark = [pytest.mark.ros, pytest.mark.slow]

TIMEOUT = 60.0
LAST = 6  # panda_link7
LAYOUT = Path(__file__).resolve().parents[2] / "config" / "foxglove" / \
    "stamped_inertial_parameters.json"



def stamp_pair(stamp) -> tuple[int, int]:
    return int(stamp.sec), int(stamp.nanosec)


def collect_matched(tester, msg_type, topic, qos=RELIABLE):
    """(messages list, subscription): wait on ``subscription.get_publisher_count()``."""
    received: list = []
    return received, tester.node.create_subscription(msg_type, topic, received.append, qos)




def layout_paths() -> list[tuple[str, int, str]]:
    """(topic, index, label) of every plotted path of the stamped layout."""
    layout = json.loads(LAYOUT.read_text())
    out = []
    for config in layout["configById"].values():
        for path in config.get("paths", []):
            topic, _, field = path["value"].partition(".")
            out.append((topic, int(field.removeprefix("position[").removesuffix("]")),
                        path["label"]))
    return out


def expected_entry(label: str) -> str:
    """The entry a layout label names, for the demo's payload body."""
    field = {"m": "m", "μ": "mu", "ε": "epsilon"}[label.split()[0]]
    return f"panda_link7/{field}"


# ---------------------------------------------------------------------------- monitor
def test_the_monitors_consistency_carries_the_judged_thetas_stamp_exactly(
        tester, tmp_path, panda, panda_urdf):
    node = NodeProcess("monitor_node", unique_namespace("monst"), tmp_path,
                       {"urdf_path": panda_urdf, "publish_rate": 10.0})
    ns, names = node.namespace, panda.body_names
    legacy = tester.publisher(Float64MultiArray, f"{ns}/inertial_parameters", RELIABLE)
    stamped = tester.publisher(JointState, f"{ns}/inertial_parameters_stamped", RELIABLE)
    out, out_sub = collect_matched(tester, JointState, f"{ns}/consistency_stamped")
    old, old_sub = collect_matched(tester, Float64MultiArray, f"{ns}/consistency")
    diagnostics = tester.collect(DiagnosticArray, f"{ns}/diagnostics")
    try:
        tester.wait_matched([legacy, stamped], TIMEOUT, node)
        tester.spin_until(lambda: out_sub.get_publisher_count() and old_sub.get_publisher_count(),
                          TIMEOUT, "the node's outputs to match", node)
        tester.spin_for(0.5)  # the node's subscriptions see the publishers too
        nominal = np.array(panda.theta_nominal)

        def legacy_judged():
            legacy.publish(cv.body_array(nominal, names))  # judged on its receive time
            tester.spin_for(0.1)
            return old

        tester.spin_until(legacy_judged, TIMEOUT, "the legacy consistency", node)
        assert not out  # a legacy Θ has no stamp to carry

        # stamps a float of Unix seconds would not keep (0.2 µs resolution)
        stamps = [Time(sec=1_700_000_000 + k, nanosec=123_456_789 + 7 * k) for k in range(20)]
        thetas = []
        for k, stamp in enumerate(stamps):
            theta = nominal.copy()
            theta[LAST] *= 1.0 + 0.02 * k  # a growing load, consistent throughout
            thetas.append(theta)
            stamped.publish(cv.body_joint_state(stamp, names, "phi", theta))
            tester.spin_for(0.01)
        tester.spin_until(lambda: len(out) >= len(stamps), TIMEOUT,
                          "a consistency_stamped per stamped Θ", node)
        assert [stamp_pair(m.header.stamp) for m in out] == [stamp_pair(s) for s in stamps]
        for msg, theta in zip(out, thetas, strict=True):
            entries = dict(zip(msg.name, msg.position, strict=True))
            for l, body in enumerate(names):
                assert entries[f"{body}/mu"] == pytest.approx(margin_by_hand(theta[l]),
                                                              rel=1e-9, abs=1e-15), body
            assert entries[f"{names[LAST]}/level"] == 0.0
        # the layout's μ and ε paths name the payload body's entries of this message
        checked = 0
        for topic, index, label in layout_paths():
            if topic == "/consistency_stamped":
                assert out[-1].name[index] == expected_entry(label), (topic, index, label)
                checked += 1
        assert checked == 2

        # an older Θ than the last judged: refused with the reason, nothing published
        count = len(out)
        stamped.publish(cv.body_joint_state(stamps[5], names, "phi", thetas[5]))

        def refused():
            return any(short_name(s.name) == "monitor_node: input"
                       and "older than the last Θ judged" in s.message
                       for a in diagnostics for s in a.status)

        tester.spin_until(refused, TIMEOUT, "the out-of-order Θ refused", node)
        # the legacy Θ is now ignored: no table from it, stamped or not
        legacy_count = len(old)
        legacy.publish(cv.body_array(0.5 * nominal, names))
        tester.spin_for(0.5)
        assert len(out) == count and len(old) == legacy_count
    finally:
        code = node.stop()
    log = node.output()
    assert code == 0, log[-3000:]
    assert log.count("read inertial_parameters (std_msgs/Float64MultiArray, no stamp): "
                     "deprecated") == 1, log[-3000:]
    assert "statistics restart on the stamps" in log, log[-3000:]


def test_without_legacy_topics_the_monitor_neither_reads_nor_writes_the_arrays(
        tester, tmp_path, panda_urdf):
    node = NodeProcess("monitor_node", unique_namespace("monnl"), tmp_path,
                       {"urdf_path": panda_urdf, "legacy_theta_topics": False})
    ns = node.namespace
    try:
        stamped = tester.publisher(JointState, f"{ns}/inertial_parameters_stamped", RELIABLE)
        tester.wait_matched([stamped], TIMEOUT, node)
        # the graph learns a node's endpoints one by one: wait for the one it must have,
        # then give any legacy endpoint (created after it) time to appear as well
        tester.spin_until(lambda: tester.node.count_publishers(f"{ns}/consistency_stamped"),
                          TIMEOUT, "consistency_stamped's publisher", node)
        tester.spin_for(0.5)
        assert tester.node.count_subscribers(f"{ns}/inertial_parameters") == 0
        assert tester.node.count_publishers(f"{ns}/consistency") == 0
        assert tester.node.count_publishers(f"{ns}/consistency_stamped") == 1
    finally:
        assert node.stop() == 0, node.output()[-3000:]


# ---------------------------------------------------------------------------- estimator
def test_the_estimators_theta_hat_carries_the_stamp_of_its_last_joint_sample(
        tester, tmp_path, panda, panda_urdf):
    node = NodeProcess("estimator_node", unique_namespace("estst"), tmp_path, {
        "urdf_path": panda_urdf, "publish_period": 0.0, "excitation_threshold": 0.0,
        "legacy_theta_topics": False})
    ns = node.namespace
    joint = tester.publisher(JointState, f"{ns}/joint_states", RELIABLE)
    out, out_sub = collect_matched(tester, JointState, f"{ns}/inertial_parameters_stamped")
    loads, loads_sub = collect_matched(tester, InertiaStamped, f"{ns}/payload_estimate")
    rng = np.random.default_rng(3)
    n = 80
    stamps = [Time(sec=1_700_000_100, nanosec=3_906_250 * k + 11) for k in range(n)]
    try:
        tester.wait_matched([joint], TIMEOUT, node)
        tester.spin_until(lambda: out_sub.get_publisher_count()
                          and loads_sub.get_publisher_count(), TIMEOUT, "the outputs", node)
        tester.spin_for(0.5)
        assert tester.node.count_publishers(f"{ns}/inertial_parameters") == 0
        for stamp in stamps:
            q = rng.uniform(-1.0, 1.0, panda.nv)
            qd = rng.uniform(-1.0, 1.0, panda.nv)
            tau = panda.inverse_dynamics(q, qd, np.zeros(panda.nv), panda.theta_nominal).tau
            msg = JointState(name=list(panda.joint_names))
            msg.header.stamp = stamp
            msg.position, msg.velocity = q.tolist(), qd.tolist()
            msg.effort = (tau + rng.normal(0.0, 0.3, panda.nv)).tolist()
            joint.publish(msg)
            tester.spin_for(0.005)
        last = stamp_pair(stamps[-1])
        tester.spin_until(lambda: out and stamp_pair(out[-1].header.stamp) == last,
                          TIMEOUT, "the estimate stamped with the last joint sample", node)
        tester.spin_for(0.2)
        sent = [stamp_pair(s) for s in stamps]
        got = [stamp_pair(m.header.stamp) for m in out]
        assert set(got) <= set(sent) and got == sorted(got), got
        assert len(got) >= n // 2  # an update (and an estimate) per sample after warm-up
        assert [stamp_pair(m.header.stamp) for m in loads] == got
        reader = BodyVectorReader("inertial_parameters_stamped", panda.body_names, "phi")
        _, theta_hat, _ = reader.read(out[-1])
        assert theta_hat is not None and np.isfinite(theta_hat).all()
        # the layout's mass paths name the payload body's mass in this real message
        checked = 0
        for topic, index, label in layout_paths():
            if topic.endswith("inertial_parameters_stamped"):
                assert out[-1].name[index] == expected_entry(label), (topic, index, label)
                checked += 1
        assert checked == 4
    finally:
        code = node.stop()
    assert code == 0, node.output()[-3000:]


# ---------------------------------------------------------------------------- payload
def test_a_stamped_payload_applies_from_its_stamp_on_in_the_dynamics_node(
        tester, tmp_path, panda, panda_urdf):
    node = NodeProcess("dynamics_node", unique_namespace("payst"), tmp_path, {
        "urdf_path": panda_urdf, "cache_dir": str(tmp_path), "jacobian_samples": 256})
    ns = node.namespace
    pubs = [tester.publisher(JointState, f"{ns}/joint_states", RELIABLE),
            tester.publisher(JointTrajectory, f"{ns}/reference", RELIABLE),
            tester.publisher(InertiaStamped, f"{ns}/payload", LATCHED)]
    joint, reference, payload = pubs
    torques, torques_sub = collect_matched(tester, JointState, f"{ns}/generalized_torques")
    step, n, switch = 1.0 / 256.0, 40, 20
    t0 = float(int(time.time())) + 0.5
    t = t0 + step * np.arange(n)
    rng = np.random.default_rng(5)
    q = rng.uniform(-1.0, 1.0, (n, panda.nv))
    qd = rng.uniform(-1.0, 1.0, (n, panda.nv))
    qdd = np.linspace(-1.0, 1.0, panda.nv)
    phi = phi_from_mass_com_inertia(2.0, np.array([0.0, 0.0, 0.1]),
                                    np.diag([4e-3, 4e-3, 2e-3]))
    try:
        tester.wait_matched(pubs, TIMEOUT, node)
        tester.spin_until(torques_sub.get_publisher_count, TIMEOUT, "the torques", node)
        tester.spin_for(0.5)
        plan = JointTrajectory(joint_names=list(panda.joint_names))
        plan.header.stamp = Time(sec=int(t0) - 10)
        plan.points = [JointTrajectoryPoint(accelerations=qdd.tolist(),
                                            time_from_start=Duration(sec=s)) for s in (0, 100)]
        reference.publish(plan)
        load = InertiaStamped()
        load.header.stamp = cv.seconds_to_stamp(float(t[switch]))
        load.header.frame_id = "panda_hand"
        load.inertia.m = 2.0
        load.inertia.com.z = 0.1
        load.inertia.ixx, load.inertia.iyy, load.inertia.izz = 4e-3, 4e-3, 2e-3
        payload.publish(load)  # arrives before every sample, applies from t[switch]
        tester.spin_for(0.5)
        for k in range(n):
            msg = JointState(name=list(panda.joint_names))
            msg.header.stamp = cv.seconds_to_stamp(float(t[k]))
            msg.position, msg.velocity = q[k].tolist(), qd[k].tolist()
            joint.publish(msg)
            tester.spin_for(0.005)
        keys = {stamp_pair(cv.seconds_to_stamp(float(s))): k for k, s in enumerate(t)}
        tester.spin_until(lambda: len({stamp_pair(m.header.stamp) for m in torques}
                                      & set(keys)) >= n, 20.0, "every sample's τ", node)
    finally:
        code = node.stop()
    assert code == 0, node.output()[-3000:]
    nominal = np.array(panda.theta_nominal)
    loaded = panda.theta_with_link_inertia(nominal, "panda_hand", phi)
    seen = set()
    for msg in torques:
        k = keys.get(stamp_pair(msg.header.stamp))
        if k is None:
            continue
        seen.add(k)
        without = panda.inverse_dynamics(q[k], qd[k], qdd, nominal).tau
        with_load = panda.inverse_dynamics(q[k], qd[k], qdd, loaded).tau
        assert np.abs(with_load - without).max() > 1.0  # the payload is visible in τ
        want = with_load if k >= switch else without
        np.testing.assert_allclose(msg.effort, want, rtol=1e-9, atol=1e-9 * np.abs(want).max(),
                                   err_msg=f"sample {k} (payload from sample {switch})")
    assert seen == set(range(n))
    assert f"from stamp {t[switch]:.9f} s on" in node.output()


# ---------------------------------------------------------------------------- markers
def test_markers_draw_theta_at_the_stamp_of_the_pose(tester, tmp_path, panda, panda_urdf):
    node = NodeProcess("markers_node", unique_namespace("markst"), tmp_path, {
        "urdf_path": panda_urdf, "publish_rate": 20.0, "status_timeout": 0.0})
    ns, names = node.namespace, panda.body_names
    joint = tester.publisher(JointState, f"{ns}/joint_states", BEST_EFFORT)
    stamped = tester.publisher(JointState, f"{ns}/inertial_parameters_stamped", RELIABLE)
    status = tester.publisher(JointState, f"{ns}/consistency_stamped", RELIABLE)
    received, received_sub = collect_matched(tester, MarkerArray, f"{ns}/inertia_markers")
    nominal = np.array(panda.theta_nominal)
    light, heavy = nominal.copy(), nominal.copy()
    heavy[LAST] *= 3.0  # Θ at t1 and t2; the pose at their midpoint sees 2×

    def pose(seconds):
        msg = JointState(name=list(panda.joint_names))
        msg.header.stamp = cv.seconds_to_stamp(seconds)
        msg.position = [0.0] * panda.nv
        return msg

    def ball(markers):
        for m in markers.markers:
            if (m.ns, m.id) == ("truth/lead", LAST):
                return m.scale.x
        return None

    def box_colour(markers):
        for m in markers.markers:
            if (m.ns, m.id) == ("truth/box", LAST) and m.action == m.ADD:
                return (m.color.r, m.color.g, m.color.b)
        return None

    t1, t2 = 1_700_000_200.0, 1_700_000_201.0
    try:
        tester.wait_matched([joint, stamped, status], TIMEOUT, node)
        tester.spin_until(received_sub.get_publisher_count, TIMEOUT, "the markers", node)
        tester.spin_for(0.5)
        stamped.publish(cv.body_joint_state(t1, names, "phi", light))
        stamped.publish(cv.body_joint_state(t2, names, "phi", heavy))
        tester.spin_for(0.2)
        for seconds, scale in ((0.5 * (t1 + t2), 2.0), (t2, 3.0), (t1, 1.0)):
            want = 2 * lead_radius(scale * light[LAST, 0])
            tester.publish_until(  # best effort: the pose again until it is drawn
                lambda seconds=seconds: joint.publish(pose(seconds)),
                lambda want=want: received and ball(received[-1]) is not None
                and abs(ball(received[-1]) - want) <= 1e-9 * want, TIMEOUT,
                f"the ball of Θ at the pose's stamp ({scale}× the mass)", node)
        # levels: the newest judged at or before the pose's stamp, never interpolated
        table = np.zeros((panda.n_bodies, 8))
        for seconds, level in ((t1, 2.0), (t2, 0.0)):
            table[:, 3] = level
            msg = JointState(name=[f"{b}/{f}" for b in names for f in TABLE_FIELDS])
            msg.header.stamp = cv.seconds_to_stamp(seconds)
            msg.position = table.ravel().tolist()
            status.publish(msg)
        tester.spin_for(0.2)
        for seconds, level in ((0.5 * (t1 + t2), Level.ERROR), (t2, Level.OK),
                               (t1 + 0.999, Level.ERROR)):
            want = LEVEL_COLORS[level][:3]
            tester.publish_until(
                lambda seconds=seconds: joint.publish(pose(seconds)),
                lambda want=want: received and box_colour(received[-1]) is not None
                and np.allclose(box_colour(received[-1]), want, atol=1e-6), TIMEOUT,
                f"the {level.name} colour at pose stamp {seconds - t1:.3f} s", node)
    finally:
        code = node.stop()
    assert code == 0, node.output()[-3000:]


# ---------------------------------------------------------------------------- terms, bounds
def test_terms_and_bounds_carry_the_stamp_of_their_joint_sample(tester, tmp_path, ur5,
                                                                 urdf_paths):
    """Each joint sample's addends and bounds, stamped with it; the legacy arrays agree."""
    node = NodeProcess("dynamics_node", unique_namespace("tbst"), tmp_path, {
        "urdf_path": urdf_paths["ur5"], "cache_dir": str(tmp_path), "jacobian_samples": 256,
        "observer_model": "off"})
    ns = node.namespace
    joint = tester.publisher(JointState, f"{ns}/joint_states", RELIABLE)
    reference = tester.publisher(JointTrajectory, f"{ns}/reference", RELIABLE)
    terms, terms_sub = collect_matched(tester, JointState, f"{ns}/generalized_terms_stamped")
    bounds, bounds_sub = collect_matched(tester, JointState, f"{ns}/mass_matrix_bounds_stamped")
    old_terms = tester.collect(Float64MultiArray, f"{ns}/generalized_terms")
    old_bounds = tester.collect(Float64MultiArray, f"{ns}/mass_matrix_bounds")
    rng = np.random.default_rng(11)
    n = 30
    t0 = float(int(time.time())) + 0.25
    stamps = [cv.seconds_to_stamp(t0 + 0.004 * k + 1e-6 * k) for k in range(n)]
    q = rng.uniform(-1.0, 1.0, (n, ur5.nv))
    qd = rng.uniform(-1.0, 1.0, (n, ur5.nv))
    qdd = np.linspace(-1.0, 1.0, ur5.nv)

    def sample(k: int, stamp) -> JointState:
        msg = JointState(name=list(ur5.joint_names))
        msg.header.stamp, msg.header.frame_id = stamp, "base_link"
        msg.position, msg.velocity = q[k].tolist(), qd[k].tolist()
        return msg

    try:
        tester.wait_matched([joint, reference], TIMEOUT, node)
        tester.spin_until(lambda: terms_sub.get_publisher_count()
                          and bounds_sub.get_publisher_count(), TIMEOUT, "the outputs", node)
        plan = JointTrajectory(joint_names=list(ur5.joint_names))
        plan.header.stamp = Time(sec=int(t0) - 10)
        plan.points = [JointTrajectoryPoint(accelerations=qdd.tolist(),
                                            time_from_start=Duration(sec=s)) for s in (0, 100)]
        reference.publish(plan)
        # the bounds start once γ, δ are known (computed in the background at first start)
        warm = itertools.count()
        tester.publish_until(lambda: joint.publish(sample(0, cv.seconds_to_stamp(
            t0 - 5.0 + 0.001 * next(warm)))), lambda: bounds and old_bounds, TIMEOUT,
            "the first bounds", node, period=0.05)
        tester.spin_for(0.3)
        for k, stamp in enumerate(stamps):
            joint.publish(sample(k, stamp))
            tester.spin_for(0.005)
        keys = {stamp_pair(s): k for k, s in enumerate(stamps)}
        tester.spin_until(lambda: {stamp_pair(m.header.stamp) for m in terms} >= set(keys)
                          and {stamp_pair(m.header.stamp) for m in bounds} >= set(keys),
                          20.0, "every sample's terms and bounds", node)
        tester.spin_for(0.3)
    finally:
        code = node.stop()
    assert code == 0, node.output()[-3000:]
    theta = np.array(ur5.theta_nominal)
    for msg in terms:
        k = keys.get(stamp_pair(msg.header.stamp))
        if k is None:
            continue
        assert msg.header.frame_id == "base_link"
        value = dict(zip(msg.name, msg.position, strict=True))
        want = ur5.inverse_dynamics(q[k], qd[k], qdd, theta)
        for j, name in enumerate(ur5.joint_names):
            assert value[f"tau/{name}"] == pytest.approx(want.tau[j], abs=1e-9)
            assert value[f"gravity/{name}"] == pytest.approx(want.gravity[j], abs=1e-9)
            assert value[f"inertia/{name}"] == pytest.approx((want.mass_matrix @ qdd)[j],
                                                             abs=1e-9)
    for msg in bounds:
        k = keys.get(stamp_pair(msg.header.stamp))
        if k is None:
            continue
        value = dict(zip(msg.name, msg.position, strict=True))
        method = msg.name[0].split("/", 1)[1]
        M = ur5.inverse_dynamics(q[k], qd[k], qdd, theta).mass_matrix
        assert value[f"lambda_min_M/{method}"] == pytest.approx(np.linalg.eigvalsh(M)[0],
                                                                rel=1e-9)
    # the legacy arrays: the same numbers, message for message, while legacy_theta_topics
    stamped_terms = [np.array(m.position) for m in terms]
    assert len(old_terms) == len(stamped_terms)
    for old, new in zip(old_terms, stamped_terms, strict=True):
        np.testing.assert_array_equal(np.array(old.data), new)
    assert len(old_bounds) == len(bounds)
    for old, new in zip(old_bounds, bounds, strict=True):
        np.testing.assert_array_equal(np.array(old.data), np.array(new.position))


def test_without_legacy_topics_the_dynamics_node_publishes_only_stamped_terms_and_bounds(
        tester, tmp_path, urdf_paths):
    node = NodeProcess("dynamics_node", unique_namespace("tbnl"), tmp_path, {
        "urdf_path": urdf_paths["ur5"], "cache_dir": str(tmp_path), "jacobian_samples": 64,
        "legacy_theta_topics": False})
    ns = node.namespace
    try:
        tester.spin_until(lambda: tester.node.count_publishers(
            f"{ns}/mass_matrix_bounds_stamped"), TIMEOUT, "the stamped bounds' publisher", node)
        tester.spin_for(0.5)
        assert tester.node.count_publishers(f"{ns}/generalized_terms_stamped") == 1
        assert tester.node.count_publishers(f"{ns}/generalized_terms") == 0
        assert tester.node.count_publishers(f"{ns}/mass_matrix_bounds") == 0
    finally:
        assert node.stop() == 0, node.output()[-3000:]
