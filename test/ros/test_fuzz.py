"""Every subscribed topic under random and extreme content, over real DDS (seeded).

Four nodes run (dynamics, monitor, markers, sim). Phase 1 sends ``FUZZ_MESSAGES``
random messages (seed ``SEED``) spread over every input of every node — NaN, ±Inf,
1e308, denormals, empty and 10⁵-element arrays, wrong layouts, duplicate / unicode /
empty names, stamps at 0, negative, 2³¹−1, backwards, equal, nanosec ≥ 10⁹, payloads
with negative / zero / huge mass and non-PSD inertia, 10⁴-point trajectories, garbage
and 5 MB robot_description — mixed with good ones. Phase 2 sends one message of each
bad *kind* and waits for its reason on ``/diagnostics``; after each, the next good
sample must be answered with τ equal to :meth:`RobotModel.inverse_dynamics` of the
last good state. No node may die or log a traceback. Phase 3: the RSS of
dynamics_node over ``RSS_WINDOW`` s of good joint_states at 1 kHz grows by at most
``RSS_BOUND_MB``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String
from support.dynamics_client import (
    PAYLOAD_LINK,
    START_TIMEOUT,
    DynamicsClient,
    dynamics_parameters,
    joint_state,
    payload_msg,
    random_state,
    reference_msg,
)
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

from robot_tv_dynamics.consistency import spectral_statistics
from robot_tv_dynamics.ros import conversions as cv
from robot_tv_dynamics.ros.stamped_topics import consistency_joint_state

pytestmark = [pytest.mark.ros, pytest.mark.slow]

SEED = 20261201
FUZZ_MESSAGES = 1500
RSS_WINDOW = 8.0  # s at 1 kHz
RSS_BOUND_MB = 8.0
HUGE = 1e308
DENORMAL = 5e-324
#: The rare giants, sent once each in phase 1: huge arrays, a 5 MB URDF, long trajectories.
GIANTS = ("1e4 entries", "5 MB", "too many points")


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def nodes(tmp_path_factory, panda_urdf):
    logs = tmp_path_factory.mktemp("fuzz_logs")
    cache = tmp_path_factory.mktemp("fuzz_cache")
    common = {"urdf_path": panda_urdf, "log_throttle": 0.5}
    started = {
        "dynamics": NodeProcess("dynamics_node", unique_namespace("fzd"), logs,
                                dynamics_parameters(cache, **common)),
        "monitor": NodeProcess("monitor_node", unique_namespace("fzm"), logs,
                               {**common, "publish_rate": 5.0}),
        "markers": NodeProcess("markers_node", unique_namespace("fzk"), logs,
                               {**common, "publish_rate": 20.0}),
        "sim": NodeProcess("sim_node", unique_namespace("fzs"), logs,
                           {**common, "controller": "none", "publish_rate": 100.0}),
    }
    yield started
    codes = {name: node.stop() for name, node in started.items()}
    for name, node in started.items():
        assert "Traceback" not in node.output(), (name, node.output()[-3000:])
        assert "FATAL" not in node.output(), (name, node.output()[-3000:])
    assert codes == dict.fromkeys(started, 0), codes



# ---------------------------------------------------------------------------- messages
def multiarray(values, dims=(), offset=0) -> Float64MultiArray:
    msg = Float64MultiArray(data=np.ravel(np.asarray(values, dtype=np.float64)).tolist())
    msg.layout.dim = [MultiArrayDimension(label=a, size=b, stride=c) for a, b, c in dims]
    msg.layout.data_offset = offset
    return msg


def trajectory(joints, positions, accelerations=None, times=None) -> JointTrajectory:
    msg = JointTrajectory(joint_names=list(joints))
    k = len(positions)
    times = np.arange(1, k + 1) * 0.01 if times is None else times
    for p in range(k):
        point = JointTrajectoryPoint(positions=[float(x) for x in positions[p]])
        if accelerations is not None:
            point.accelerations = [float(x) for x in accelerations[p]]
        sec = int(np.floor(times[p]))
        point.time_from_start.sec = sec
        point.time_from_start.nanosec = int(round((times[p] - sec) * 1e9)) % 1_000_000_000
        msg.points.append(point)
    return msg


class Fuzzer:
    """Bad-message builders per (node, topic, kind) with the reason each must give."""

    def __init__(self, model, rng, client: DynamicsClient, urdf_xml: str):
        self.m, self.rng, self.client, self.xml = model, rng, client, urdf_xml
        n, nv = model.n_bodies, model.nv
        self.good_theta = np.array(model.theta_nominal)
        names = list(model.joint_names)
        bodies = list(model.body_names)

        def js(q=None, qd=None, names_=None, sec=None, nanosec=0, t=None):
            q0, qd0 = random_state(model, rng)
            msg = joint_state(model, client.next_stamp() if t is None else t,
                              q0 if q is None else q, qd0 if qd is None else qd, names_)
            if sec is not None:
                msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
            return msg

        def with_entry(base, index, value):
            out = np.array(base, dtype=float)
            out[index] = value
            return out

        def body(values, axis="phi"):
            return cv.body_array(values, bodies, axis)

        zeros_q = np.zeros(nv)
        big = 10**5
        # (node, topic, kind) -> (builder, reason substring)
        self.kinds: dict[tuple[str, str, str], tuple] = {
            ("dynamics", "joint_states", "nan"): (
                lambda: js(q=with_entry(zeros_q, 1, np.nan)), "non-finite value for"),
            ("dynamics", "joint_states", "inf velocity"): (
                lambda: js(qd=with_entry(zeros_q, 3, -np.inf)), "velocity: non-finite"),
            ("dynamics", "joint_states", "1e308 position"): (
                lambda: js(q=with_entry(zeros_q, 0, HUGE)), "beyond the bound"),
            ("dynamics", "joint_states", "1e308 velocity"): (
                lambda: js(qd=with_entry(zeros_q, 2, HUGE)), "velocity: value"),
            ("dynamics", "joint_states", "empty"): (
                lambda: js(q=[], qd=[], names_=[]), "lacks the model joints"),
            # the node reads joint_states as bytes (ros/joint_state_cdr.py): bytes that
            # are no JointState are rejected, whatever a publisher sends
            ("dynamics", "joint_states", "truncated bytes"): (
                lambda: serialize_message(js())[:60], "cannot be deserialized"),
            ("dynamics", "joint_states", "big-endian garbage"): (
                lambda: b"\x00\x00\x00\x00" + bytes(range(7, 90)), "cannot be deserialized"),
            # 10⁴ joints (≈ 0.3 MB): a best-effort message of megabytes is lost in DDS
            # fragments often enough to make the reason's arrival a matter of luck
            ("dynamics", "joint_states", "1e4 entries"): (
                lambda: js(q=np.zeros(big // 10), qd=np.zeros(big // 10),
                           names_=[f"j{i}" for i in range(big // 10)]), "is not in the URDF"),
            ("dynamics", "joint_states", "sizes"): (
                lambda: js(q=zeros_q[:-1], qd=zeros_q), "entries for"),
            ("dynamics", "joint_states", "duplicate names"): (
                lambda: js(names_=[*names[:-1], names[0]]), "appears twice"),
            ("dynamics", "joint_states", "unicode names"): (
                lambda: js(names_=[*names[:-1], "гелenk_☃"]), "is not in the URDF"),
            ("dynamics", "joint_states", "empty name"): (
                lambda: js(names_=[*names[:-1], ""]), "is not in the URDF"),
            ("dynamics", "joint_states", "stamp 0"): (lambda: js(t=0.0), "is zero"),
            ("dynamics", "joint_states", "negative stamp"): (
                lambda: js(sec=-5), "is negative"),
            ("dynamics", "joint_states", "stamp 2^31-1"): (
                lambda: js(sec=2**31 - 1), "int32 maximum"),
            ("dynamics", "joint_states", "nanosec 1e9"): (
                lambda: js(sec=int(client.t) + 1, nanosec=1_500_000_000), "nanosec"),
            ("dynamics", "joint_states", "future"): (
                lambda: js(t=time.time() + 3 * 86400.0), "ahead of this node's clock"),
            ("dynamics", "joint_states", "backwards"): (
                lambda: js(t=client.t - 5.0), "goes backwards"),
            ("dynamics", "joint_states", "equal"): (lambda: js(t=client.t), "repeats"),
            ("dynamics", "inertial_parameters", "1e308"): (
                lambda: body(with_entry(self.good_theta, (2, 0), HUGE)), "beyond the bound"),
            ("dynamics", "inertial_parameters", "nan"): (
                lambda: body(with_entry(self.good_theta, (1, 4), np.nan)), "non-finite"),
            # 10⁴ values (80 kB): Θ streams best effort, and 10⁵ (800 kB) lost its
            # fragments on a loaded machine through every resend of a 10 s wait
            ("dynamics", "inertial_parameters", "1e4 entries"): (
                lambda: multiarray(np.zeros(big // 10)), "values, expected"),
            ("dynamics", "inertial_parameters", "3 dims"): (
                lambda: multiarray(np.zeros(n * 10), [("body", n, 10 * n), ("phi", 10, 10),
                                                      ("x", 1, 1)]), "expected 2 dimensions"),
            ("dynamics", "inertial_parameters", "duplicate bodies"): (
                lambda: cv.labelled_array(self.good_theta, [
                    ("body", [*bodies[:-1], bodies[0]]), ("phi", None)]), "duplicates"),
            ("dynamics", "inertial_parameters", "unicode body"): (
                lambda: cv.labelled_array(self.good_theta, [
                    ("body", [*bodies[:-1], "Körper☃"]), ("phi", None)]), "is not in the URDF"),
            ("dynamics", "inertial_parameters", "offset"): (
                lambda: multiarray(np.zeros(n * 10), offset=2**31), "data_offset"),
            ("dynamics", "inertial_parameter_rates", "1e308"): (
                lambda: body(with_entry(np.zeros((n, 10)), (0, 0), HUGE)), "beyond the bound"),
            ("dynamics", "psi", "1e308"): (
                lambda: body(with_entry(np.zeros((n, 12)), (3, 3), -HUGE), "psi"),
                "beyond the bound"),
            ("dynamics", "psi_rates", "inf"): (
                lambda: body(with_entry(np.zeros((n, 12)), (0, 1), np.inf), "psi"),
                "non-finite"),
            ("dynamics", "payload", "negative mass"): (
                lambda: payload_msg(PAYLOAD_LINK, -1.0, [0, 0, 0], [1e-3] * 3), "negative"),
            ("dynamics", "payload", "1e308 mass"): (
                lambda: payload_msg(PAYLOAD_LINK, HUGE, [0, 0, 0], [1e-3] * 3),
                "beyond the bound"),
            ("dynamics", "payload", "non-PSD inertia"): (
                lambda: payload_msg(PAYLOAD_LINK, 1.0, [0, 0, 0], [1e-3, -1e-3, 1e-3]),
                "payload"),
            ("dynamics", "payload", "unknown link"): (
                lambda: payload_msg("☃_link", 1.0, [0, 0, 0], [1e-3] * 3), "is not in the URDF"),
            # an empty frame_id is the node's payload_frame (the flange):
            # test_dynamics_parts.py::test_a_payload_without_frame_id_goes_to_the_payload_frame
            ("dynamics", "reference", "1e308 accelerations"): (
                lambda: reference_msg(names, 0, [0.0, 1.0], np.full((2, nv), HUGE)),
                "beyond the bound"),
            ("dynamics", "reference", "too many points"): (
                lambda: reference_msg(names, 0, np.arange(20_001), np.zeros((20_001, nv))),
                "points (at most"),
            ("dynamics", "reference", "duplicate joints"): (
                lambda: reference_msg([*names[:-1], names[0]], 0, [0.0], np.zeros((1, nv))),
                "duplicates"),
            ("dynamics", "planned_trajectory", "1e308 positions"): (
                lambda: trajectory(names, np.full((3, nv), HUGE)), "beyond the bound"),
            ("dynamics", "planned_trajectory", "nan positions"): (
                lambda: trajectory(names, with_entry(np.zeros((3, nv)), (1, 1), np.nan)),
                "planned_trajectory"),
            ("dynamics", "planned_trajectory", "too many points"): (
                lambda: trajectory(names, np.zeros((10_001, nv))), "points (at most"),
            ("dynamics", "robot_description", "garbage"): (
                lambda: String(data="<robot name='x'><link name=☃"), "URDF swap rejected"),
            ("dynamics", "robot_description", "5 MB"): (
                lambda: String(data="x" * (5 * 1024 * 1024)), "characters (at most"),
            ("monitor", "inertial_parameters", "1e308"): (
                lambda: body(with_entry(self.good_theta, (0, 6), HUGE)), "beyond the bound"),
            ("monitor", "inertial_parameter_rates", "nan"): (
                lambda: body(with_entry(np.zeros((n, 10)), (0, 6), np.nan)), "non-finite"),
            ("monitor", "robot_description", "garbage"): (
                lambda: String(data="\x00\xff not xml ☃"), "URDF swap rejected"),
            ("markers", "inertial_parameters", "1e308"): (
                lambda: body(with_entry(self.good_theta, (4, 9), -HUGE)), "beyond the bound"),
            ("markers", "joint_states", "1e308"): (
                lambda: js(q=with_entry(zeros_q, 0, HUGE)), "beyond the bound"),
            ("markers", "consistency", "level 7"): (
                lambda: cv.labelled_array(np.full((n, 1), 7.0), [("body", bodies),
                                                                 ("field", ["level"])]),
                "levels must be 0..3"),
            # the stamped Θ and levels (only bad ones: a good stamped Θ makes the nodes
            # ignore the legacy arrays, whose reasons are checked above)
            ("monitor", "inertial_parameters_stamped", "1e308"): (
                lambda: cv.body_joint_state(client.next_stamp(), bodies, "phi", with_entry(
                    self.good_theta, (0, 6), HUGE)), "beyond the bound"),
            ("monitor", "inertial_parameters_stamped", "stamp 0"): (
                lambda: cv.body_joint_state(Time(), bodies, "phi", self.good_theta),
                "is zero"),
            ("markers", "inertial_parameters_stamped", "unknown name"): (
                lambda: cv.body_joint_state(client.next_stamp(), ["☃"], "phi", np.ones((1, 10))),
                "is not <body>/<parameter>"),
            ("markers", "consistency_stamped", "level 7"): (
                lambda: consistency_joint_state(Time(sec=5), bodies, np.full((n, 8), 7.0)),
                "levels must be 0..3"),
            ("sim", "effort_commands", "1e308"): (
                lambda: Float64MultiArray(data=[HUGE] + [0.0] * (nv - 1)),
                "beyond its effort limit"),
            ("sim", "effort_commands", "wrong size"): (
                lambda: Float64MultiArray(data=[0.0] * (nv + 3)), "finite values"),
        }

    def random_message(self, node: str, topic: str):
        """A random message for ``topic``: a bad kind, or random (often bad) content."""
        rng = self.rng
        kinds = [k for k in self.kinds if k[0] == node and k[1] == topic
                 and k[2] not in GIANTS]
        if kinds and rng.uniform() < 0.5:
            return self.kinds[kinds[rng.integers(len(kinds))]][0]()
        pool = np.array([np.nan, np.inf, -np.inf, HUGE, -HUGE, DENORMAL, 0.0, -1.0, 1e6, 1e-3])
        if topic in ("joint_states",):
            q, qd = random_state(self.m, rng)
            q[rng.integers(self.m.nv)] = rng.choice(pool)
            return joint_state(self.m, self.client.next_stamp(), q, qd)
        if topic in ("inertial_parameters", "inertial_parameter_rates", "psi", "psi_rates",
                     "consistency"):
            width = 12 if topic.startswith("psi") else 10
            values = rng.choice(pool, (self.m.n_bodies, width)) if rng.uniform() < 0.5 else (
                self.good_theta * rng.uniform(0.5, 1.5) if width == 10
                else rng.normal(size=(self.m.n_bodies, width)) * 1e-2)
            return cv.body_array(values, self.m.body_names, "psi" if width == 12 else "phi")
        if topic == "payload":
            return payload_msg(PAYLOAD_LINK, float(rng.choice(pool)),
                               rng.choice(pool, 3) * 1e-2, np.abs(rng.choice(pool, 3)))
        if topic == "effort_commands":
            return Float64MultiArray(data=rng.choice(pool, self.m.nv).tolist())
        return self.kinds[kinds[rng.integers(len(kinds))]][0]()


# ---------------------------------------------------------------------------- test
def test_fuzzing_every_input_kills_nothing_gives_reasons_and_keeps_answering(
        tester, nodes, panda, panda_urdf):
    rng = np.random.default_rng(SEED)
    dyn = nodes["dynamics"]
    client = DynamicsClient(tester, dyn, panda)
    with open(panda_urdf) as stream:
        xml = stream.read()
    fuzz = Fuzzer(panda, rng, client, xml)
    ns = {name: node.namespace for name, node in nodes.items()}
    types = {"joint_states": JointState, "inertial_parameters": Float64MultiArray,
             "inertial_parameter_rates": Float64MultiArray, "psi": Float64MultiArray,
             "psi_rates": Float64MultiArray, "payload": InertiaStamped,
             "reference": JointTrajectory, "planned_trajectory": JointTrajectory,
             "robot_description": String, "consistency": Float64MultiArray,
             "inertial_parameters_stamped": JointState, "consistency_stamped": JointState,
             "effort_commands": Float64MultiArray}
    pubs = {}
    for node, topic, _ in fuzz.kinds:
        if (node, topic) in pubs:
            continue
        if node == "dynamics" and topic in client.pub:
            pubs[(node, topic)] = client.pub[topic]
        else:
            qos = (LATCHED if topic == "robot_description" else
                   BEST_EFFORT if topic in ("joint_states", "effort_commands") else RELIABLE)
            pubs[(node, topic)] = tester.publisher(types[topic], f"{ns[node]}/{topic}", qos)
    diagnostics = {name: tester.collect(DiagnosticArray, f"{ns[name]}/diagnostics")
                   for name in nodes}
    consistency = tester.collect(Float64MultiArray, f"{ns['monitor']}/consistency")
    markers = tester.collect(MarkerArray, f"{ns['markers']}/inertia_markers")
    sim_states = tester.collect(JointState, f"{ns['sim']}/joint_states", BEST_EFFORT)
    tester.wait_matched(list(pubs.values()), START_TIMEOUT, dyn)

    # phase 1: random messages over every input
    keys = sorted(pubs)
    sent = 0
    for i in range(FUZZ_MESSAGES):
        node, topic = keys[rng.integers(len(keys))]
        if topic == "robot_description" and rng.uniform() < 0.8:
            continue
        pubs[(node, topic)].publish(fuzz.random_message(node, topic))
        sent += 1
        if i % 50 == 0:
            tester.spin_for(0.005)
            assert all(n.alive for n in nodes.values()), {
                k: n.output()[-2000:] for k, n in nodes.items() if not n.alive}
    # the rare giants once each: 10⁴-element arrays, a 5 MB URDF, 10⁴-point trajectories
    for key, (build, _) in fuzz.kinds.items():
        if key[2] in GIANTS:
            pubs[key[:2]].publish(build())
            sent += 1
    # and a 10⁵-element Θ array (800 kB): the node must survive it if it arrives
    pubs[("dynamics", "inertial_parameters")].publish(multiarray(np.zeros(10**5)))
    sent += 1
    planned = trajectory(panda.joint_names, rng.uniform(-1, 1, (10_000, panda.nv)))
    pubs[("dynamics", "planned_trajectory")].publish(planned)  # accepted, ~3 s of work
    sent += 1
    assert sent >= 1000
    tester.spin_for(1.0)
    assert all(n.alive for n in nodes.values())

    # phase 2: each bad kind gives its reason, and the next good sample is answered right
    state = client.set_state(rng, scale=0.9)
    client.sync(state, rng)
    for (node, topic, kind), (build, reason) in fuzz.kinds.items():
        since = len(diagnostics[node])
        message = build()
        pubs[(node, topic)].publish(message)
        name = f"{nodes[node].name}: input"
        sent_at = [time.monotonic()]

        def found(node=node, since=since, name=name, topic=topic, reason=reason,
                  message=message, sent_at=sent_at, key=(node, topic), kind=kind):
            # a best-effort stream may lose a message of megabytes (its fragments) before
            # the node sees it: what is tested is the reason once it arrives, so resend
            # (not the latched URDF, which the good one replaces afterwards)
            if (kind in GIANTS and topic != "robot_description"
                    and time.monotonic() - sent_at[0] > 2.0):
                pubs[key].publish(message)
                sent_at[0] = time.monotonic()
            for array in diagnostics[node][since:]:
                for status in array.status:
                    values = {kv.key: kv.value for kv in status.values}
                    if short_name(status.name) == name and reason in values.get(
                            f"{topic} last rejection", ""):
                        return status
            return None

        tester.spin_until(found, 30.0 if kind in GIANTS else 10.0,
                          f"{node} reason for {topic} {kind}: {reason}",
                          nodes[node])
        if node == "dynamics":
            if topic == "robot_description":
                pubs[(node, topic)].publish(String(data=xml))  # the latched one again
            q, qd = random_state(panda, rng)
            t, answer = client.ask(q, qd)
            np.testing.assert_allclose(
                answer.effort, client.expected(state, t, q, qd).tau, rtol=1e-9, atol=1e-9,
                err_msg=f"after {topic} {kind}")
    # monitor: a good Θ after the bad ones gives the library's margins
    theta = np.array(panda.theta_nominal) * 1.1
    mu, _, _ = spectral_statistics(theta)

    def monitor_answered():
        pubs[("monitor", "inertial_parameters")].publish(cv.body_array(theta, panda.body_names))
        tester.spin_for(0.05)
        if not consistency:
            return False
        table = np.array(consistency[-1].data).reshape(panda.n_bodies, -1)
        return np.allclose(table[:, 0], mu, rtol=1e-9, atol=1e-12)

    tester.spin_until(monitor_answered, 10.0, "the monitor's margins of a good Θ")
    # markers and sim keep publishing
    n_markers, n_states = len(markers), len(sim_states)

    def still_publishing():
        pubs[("markers", "joint_states")].publish(joint_state(
            panda, client.next_stamp(), np.zeros(panda.nv), np.zeros(panda.nv)))
        tester.spin_for(0.05)
        return len(markers) > n_markers and len(sim_states) > n_states

    tester.spin_until(still_publishing, 10.0, "markers and sim output")
    assert all(n.alive for n in nodes.values())


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def accepted_joint_states(client: DynamicsClient) -> int:
    """The node's own count of accepted joint_states (its latest input status)."""
    name = f"{client.node.name}: input"
    for array in reversed(client.diagnostics):
        for status in array.status:
            if short_name(status.name) == name:
                values = {kv.key: kv.value for kv in status.values}
                return int(values.get("joint_states accepted", "0"))
    return 0


def test_dynamics_node_memory_stays_bounded_at_1_khz(tester, nodes, panda):
    dyn = nodes["dynamics"]
    client = DynamicsClient(tester, dyn, panda)
    rng = np.random.default_rng(SEED + 1)
    pub = client.pub["joint_states"]
    q, qd = random_state(panda, rng)
    client.t = float(int(time.time())) + 120.0  # past every stamp the fuzz test sent

    def stream(count: int) -> int:
        """Publish ``count`` samples, at most one per ms (a loaded machine sends slower)."""
        sent = 0
        next_time = time.monotonic()
        while sent < count:
            client.t += 2.0**-10  # ~1 ms, exact in binary
            pub.publish(joint_state(panda, client.t, q, qd))
            sent += 1
            next_time += 1e-3
            if sent % 10 == 0:  # diagnostics in; torques are not all taken (depth 100)
                tester.executor.spin_once(timeout_sec=0)
            delay = next_time - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        return sent

    stream(2000)  # warm-up: caches, allocator arenas
    tester.spin_for(0.5)
    before = rss_kb(dyn.process.pid)
    answered = accepted_joint_states(client)
    started = time.monotonic()
    sent = stream(int(1000 * RSS_WINDOW))
    seconds = time.monotonic() - started
    after = rss_kb(dyn.process.pid)
    tester.spin_for(0.5)
    answered = accepted_joint_states(client) - answered
    growth_mb = (after - before) / 1024
    print(f"dynamics_node RSS {before / 1024:.1f} MB -> {after / 1024:.1f} MB "
          f"(+{growth_mb:.2f} MB) over {sent} samples in {seconds:.1f} s, "
          f"{answered} answered")
    # it was working, not idle (measured 4434–8000 of 8000, depending on the load of the
    # shared machine)
    assert answered > 0.25 * sent, dyn.output()[-3000:]
    assert growth_mb <= RSS_BOUND_MB, (before, after)
    assert dyn.alive


def test_joint_states_are_answered_while_a_long_planned_trajectory_is_evaluated(
        tester, nodes, panda):
    """A 10⁴-point planned trajectory (~3 s) no longer blocks the torques."""
    dyn = nodes["dynamics"]
    client = DynamicsClient(tester, dyn, panda)
    client.t = float(int(time.time())) + 240.0  # past every stamp sent before
    rng = np.random.default_rng(SEED + 2)
    planned = tester.publisher(JointTrajectory, f"{dyn.namespace}/planned_trajectory")
    efforts = tester.collect(JointTrajectory, f"{dyn.namespace}/planned_trajectory_efforts")
    tester.wait_matched([planned], START_TIMEOUT, dyn)
    client.ask(*random_state(panda, rng))  # the stream is up
    k = 10_000
    times = np.arange(1, k + 1) * 1e-3
    plan = trajectory(panda.joint_names, rng.uniform(-1, 1, (k, panda.nv)), times=times)
    start = time.monotonic()
    planned.publish(plan)
    latencies = []
    while not efforts and time.monotonic() - start < 60.0:
        asked = time.monotonic()
        client.ask(*random_state(panda, rng))
        latencies.append(time.monotonic() - asked)
    took = time.monotonic() - start
    assert efforts and len(efforts[0].points) == k
    print(f"planned trajectory of {k} points answered after {took:.2f} s; meanwhile "
          f"{len(latencies)} joint_states answered, slowest {max(latencies):.3f} s")
    # before: the evaluation ran in the executor, so the first sample waited the whole
    # ~3 s and nothing else was answered meanwhile. Now the stream goes on; single slow
    # answers remain (rclpy converts the 10⁴-point message in the executor thread, and
    # the job shares the GIL), measured 0.2 s idle, up to 4 s at load average 4.
    assert len(latencies) >= 5, latencies
    assert float(np.median(latencies)) < 0.2, latencies
