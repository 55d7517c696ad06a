"""dynamics_node and monitor_node as separate processes over real DDS (no mocks).

Each node runs as ``python -m robot_tv_dynamics.ros.<node>`` on a private
ROS_DOMAIN_ID (see ros_harness.py); this process talks to it with rclpy.
"""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String  # noqa: E402
from support.dynamics_client import (  # noqa: E402
    ANSWER_TIMEOUT,
    PAYLOAD_LINK,
    START_TIMEOUT,
    DynamicsClient,
    dynamics_parameters,
    joint_state,
    payload_msg,
    random_state,
    reference_msg,
)
from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402
from support.ros_harness import (  # noqa: E402
    BEST_EFFORT,
    LATCHED,
    NodeProcess,
    node_env,
    short_name,
    task_name,
    unique_namespace,
)
from visualization_msgs.msg import MarkerArray  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.consistency import spectral_statistics  # noqa: E402
from robot_tv_dynamics.ros import bringup  # noqa: E402
from robot_tv_dynamics.ros import conversions as cv  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("extremes_cache")


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("node_logs")


@pytest.fixture(scope="module")
def dynamics(log_dir, cache_dir, panda_urdf):
    node = NodeProcess("dynamics_node", unique_namespace("dyn"), log_dir,
                       dynamics_parameters(cache_dir, urdf_path=panda_urdf))
    # its first start computes γ, δ in the background (mass_matrix_bounds only after):
    # the tests below want every output from their first sample on
    deadline = time.monotonic() + START_TIMEOUT
    while not re.search(r"Jacobian extremes \((computed|cache) in", node.output()):
        assert node.alive and time.monotonic() < deadline, node.output()[-3000:]
        time.sleep(0.1)
    yield node
    code = node.stop()
    assert code == 0, f"dynamics_node exit code {code} on SIGINT:\n{node.output()[-3000:]}"


# ---------------------------------------------------------------------------- messages


# ---------------------------------------------------------------------------- dynamics
def test_torques_equal_the_library_for_the_same_inputs_and_keep_the_stamp(
        tester, dynamics, panda):
    client = DynamicsClient(tester, dynamics, panda)
    rng = np.random.default_rng(0)
    state = client.set_state(rng)
    client.sync(state, rng)
    for _ in range(25):
        q, qd = random_state(panda, rng)
        t, answer = client.ask(q, qd)
        want = client.expected(state, t, q, qd)
        assert list(answer.name) == panda.joint_names
        assert cv.stamp_to_seconds(answer.header.stamp) == t
        np.testing.assert_allclose(answer.position, q, rtol=0, atol=0)
        np.testing.assert_allclose(answer.velocity, qd, rtol=0, atol=0)
        np.testing.assert_allclose(answer.effort, want.tau, rtol=1e-9, atol=1e-9)
    # the last sample's terms (each addend of eq. 39) and mass-matrix bounds
    tester.spin_until(lambda: len(client.terms) and len(client.bounds), ANSWER_TIMEOUT,
                      "terms and bounds")
    tester.spin_for(0.2)
    terms, bounds = client.terms[-1], client.bounds[-1]
    axis, labels = cv.parse_dim_label(terms.layout.dim[0].label)
    assert axis == "term" and labels == list(cv.TERM_LABELS)
    assert cv.parse_dim_label(terms.layout.dim[1].label) == ("joint", panda.joint_names)
    rows = np.array(terms.data).reshape(len(labels), panda.nv)
    breakdown = want.breakdown()
    for label, row in zip(labels, rows, strict=True):
        expected = want.tau if label == "tau" else breakdown[label]
        np.testing.assert_allclose(row, expected, rtol=1e-9, atol=1e-9, err_msg=label)
    np.testing.assert_allclose(rows[:-1].sum(axis=0), rows[-1], rtol=1e-9, atol=1e-9)
    axis, names = cv.parse_dim_label(bounds.layout.dim[0].label)
    assert axis == "bound" and bounds.layout.dim[1].label == "method:sampled"
    values = dict(zip(names, bounds.data, strict=True))
    eig = np.linalg.eigvalsh(want.mass_matrix)
    assert values["lambda_min_M"] == pytest.approx(eig[0], rel=1e-9)
    assert values["lambda_max_M"] == pytest.approx(eig[-1], rel=1e-9)
    assert values["lower_bound_q"] <= eig[0] and values["upper_bound_q"] >= eig[-1]
    assert values["mass_rate_bound"] >= values["mass_rate_sigma_max"] > 0
    assert values["alpha1"] == pytest.approx(values["inf_margin"] * values["gamma"])
    assert values["alpha2"] == pytest.approx(2 * values["sup_size"] * values["delta"])
    assert values["certified"] == 0.0


def test_torques_only_path_equals_the_library_and_terms_follow_a_subscriber(
        tester, log_dir, cache_dir, panda_urdf, panda):
    """Nobody subscribes generalized_terms / mass_matrix_bounds: τ comes from the
    matrix-free bias force and equals the library's; once terms are subscribed they
    are published and τ is unchanged."""
    node = NodeProcess("dynamics_node", unique_namespace("tau"), log_dir,
                       dynamics_parameters(cache_dir, urdf_path=panda_urdf))
    try:
        client = DynamicsClient(tester, node, panda, all_outputs=False)
        ns = node.namespace
        assert tester.node.count_subscribers(f"{ns}/generalized_terms") == 0
        assert tester.node.count_subscribers(f"{ns}/mass_matrix_bounds") == 0
        rng = np.random.default_rng(6)
        state = client.set_state(rng)
        client.sync(state, rng)
        for _ in range(15):
            q, qd = random_state(panda, rng)
            t, answer = client.ask(q, qd)
            np.testing.assert_allclose(answer.effort, client.expected(state, t, q, qd).tau,
                                       rtol=1e-9, atol=1e-9)
        client.terms = tester.collect(Float64MultiArray, f"{ns}/generalized_terms")

        def terms_published():
            client.ask(*random_state(panda, rng))
            return client.terms

        tester.spin_until(terms_published, ANSWER_TIMEOUT, "generalized_terms", node)
        q, qd = random_state(panda, rng)
        t, answer = client.ask(q, qd)
        tester.spin_for(0.2)
        want = client.expected(state, t, q, qd)
        np.testing.assert_allclose(answer.effort, want.tau, rtol=1e-9, atol=1e-9)
        rows = np.array(client.terms[-1].data).reshape(len(cv.TERM_LABELS), panda.nv)
        np.testing.assert_allclose(rows[-1], want.tau, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(rows[cv.TERM_LABELS.index("coriolis")],
                                   want.breakdown()["coriolis"], rtol=1e-9, atol=1e-9)
    finally:
        assert node.stop() == 0


def test_locked_fingers_answer_seven_joints_equal_to_the_reduced_model(
        tester, log_dir, cache_dir, panda_urdf):
    """locked_joints = the fingers at 2 cm: τ on the 7 arm joints equals the library's
    reduced model, for joint_states with the 7 joints and with the fingers still in."""
    fingers = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}
    arm = RobotModel.from_urdf(panda_urdf, locked_joints=fingers)
    node = NodeProcess("dynamics_node", unique_namespace("lock"), log_dir, dynamics_parameters(
        cache_dir, urdf_path=panda_urdf,
        locked_joints=[f"{name}={position}" for name, position in fingers.items()]))
    try:
        client = DynamicsClient(tester, node, arm, all_outputs=False)
        rng = np.random.default_rng(8)
        state = client.set_state(rng)
        client.sync(state, rng)
        with_fingers = [*arm.joint_names, *fingers]
        for i in range(10):
            q, qd = random_state(arm, rng)
            if i % 2:  # as a driver publishes them: the fingers too (ignored)
                t, answer = client.ask(np.r_[q, 0.03, 0.01], np.r_[qd, 0.1, -0.1], with_fingers)
            else:
                t, answer = client.ask(q, qd)
            assert list(answer.name) == arm.joint_names and len(answer.effort) == 7
            np.testing.assert_allclose(answer.effort, client.expected(state, t, q, qd).tau,
                                       rtol=1e-9, atol=1e-9)
    finally:
        assert node.stop() == 0


def flat(values, dims=None) -> Float64MultiArray:
    msg = Float64MultiArray(data=[float(v) for v in np.ravel(values)])
    if dims:
        msg.layout.dim = [MultiArrayDimension(label=a, size=b, stride=c) for a, b, c in dims]
    return msg


def test_every_bad_input_is_rejected_with_a_reason_and_the_next_good_sample_answered(
        tester, dynamics, panda, urdf_paths):
    client = DynamicsClient(tester, dynamics, panda)
    rng = np.random.default_rng(1)
    state = client.set_state(rng, scale=0.9)
    client.sync(state, rng)
    n, nv = panda.n_bodies, panda.nv
    names = panda.joint_names
    good_q, good_qd = random_state(panda, rng)
    nan_q = good_q.copy()
    nan_q[2] = np.nan
    inf_qd = good_qd.copy()
    inf_qd[4] = np.inf
    theta = np.array(state["theta"])
    theta_nan = theta.copy()
    theta_nan[3, 5] = np.nan
    swapped = [("phi", 10, 10 * n), ("body", n, n)]
    bad_psi = cv.body_array(np.zeros((n, 10)), panda.body_names, "phi")
    psi_inf = np.zeros((n, 12))
    psi_inf[1, 1] = np.inf
    with open(urdf_paths["panda"]) as stream:
        broken = stream.read()[:-200]
    with open(urdf_paths["ur5"]) as stream:
        ur5 = stream.read()
    description = tester.publisher(String, f"{dynamics.namespace}/robot_description", LATCHED)
    tester.wait_matched([description], ANSWER_TIMEOUT, dynamics)
    late = client.t - 10.0

    def js(q, qd, t=None, names_=None, position=None):
        msg = joint_state(panda, client.next_stamp() if t is None else t, q, qd, names_)
        if position is not None:
            msg.position = position
        return msg

    cases = [
        ("joint_states", lambda: js(nan_q, good_qd), 'non-finite value for "panda_joint3"'),
        ("joint_states", lambda: js(good_q, inf_qd), "joint_states.velocity: non-finite"),
        ("joint_states", lambda: js(good_q, good_qd, position=[0.0] * (nv - 2)),
         f"has {nv - 2} entries for {nv} names"),
        ("joint_states", lambda: js(good_q, good_qd, names_=[*names[:-1], "elbow"]),
         'joint "elbow" is not in the URDF'),
        ("joint_states", lambda: js(good_q[:-1], good_qd[:-1], names_=names[:-1]),
         "lacks the model joints"),
        ("joint_states", lambda: js(good_q, good_qd, t=late), "goes backwards"),
        ("joint_states", lambda: js(good_q, good_qd, t=0.0), "is zero (unstamped)"),
        ("inertial_parameters", lambda: flat(theta.T, swapped),
         'dimension labels must be "body" x "phi"'),
        ("inertial_parameters", lambda: flat(theta[:-1]), f"has {10 * (n - 1)} values"),
        ("inertial_parameters", lambda: cv.body_array(theta_nan, panda.body_names),
         f'non-finite value at body "{panda.body_names[3]}"'),
        ("inertial_parameters",
         lambda: cv.labelled_array(theta, [("body", [*panda.body_names[:-1], "tool"]),
                                           ("phi", None)]),
         'body "tool" is not in the URDF'),
        ("inertial_parameter_rates", lambda: cv.body_array(np.zeros((n, 12)), panda.body_names,
                                                           "phi"),
         f"expected sizes {n} x 10"),
        ("psi", lambda: bad_psi, 'dimension labels must be "body" x "psi"'),
        ("psi_rates", lambda: cv.body_array(psi_inf, panda.body_names, "psi"),
         "psi_rates.data: non-finite"),
        ("payload", lambda: payload_msg("gripper_tool", 1.0, [0, 0, 0], [1e-3] * 3),
         'link "gripper_tool" is not in the URDF'),
        ("payload", lambda: payload_msg(PAYLOAD_LINK, -1.0, [0, 0, 0], [1e-3] * 3),
         "negative"),
        ("payload", lambda: payload_msg(PAYLOAD_LINK, 1.0, [0, 0, 0], [1e-3, 1e-3, 3e-3]),
         "describe no physical body"),
        ("payload", lambda: payload_msg(PAYLOAD_LINK, 1.0, [np.nan, 0, 0], [1e-3] * 3),
         "non-finite"),
        ("reference", lambda: reference_msg([*names[:-1], "elbow"], 0, [0.0], np.zeros((1, nv))),
         'joint "elbow" is not in the URDF'),
        ("reference", lambda: reference_msg(names, 0, [0.0], np.zeros((1, 0))),
         "accelerations are required"),
        ("reference", lambda: reference_msg(names, 0, [1.0, 1.0], np.zeros((2, nv))),
         "strictly increasing"),
        ("robot_description", lambda: String(data=broken), "URDF swap rejected"),
        ("robot_description", lambda: String(data=ur5), "the joints change"),
    ]
    for topic, build, reason in cases:
        publisher = description if topic == "robot_description" else client.pub[topic]
        since = len(client.diagnostics)
        publisher.publish(build())
        status = client.input_status(f"rejected {topic}: ", reason, since=since)
        assert cv.status_level(status) == 1, status
        assert {kv.key: kv.value for kv in status.values}[f"{topic} last rejection"]
        assert dynamics.alive, f"dynamics_node died after bad {topic}"
        q, qd = random_state(panda, rng)
        t, answer = client.ask(q, qd)  # the next good sample is answered ...
        np.testing.assert_allclose(  # ... from the last good state
            answer.effort, client.expected(state, t, q, qd).tau, rtol=1e-9, atol=1e-9,
            err_msg=f"after bad {topic} ({reason})")
    log = dynamics.output()
    assert "Traceback" not in log
    # one throttled line per topic and period (log_throttle 0.5 s), not one per message
    lines = re.findall(r"dynamics_node\.joint_states\]: rejected a message on joint_states", log)
    assert 1 <= len(lines) < sum(topic == "joint_states" for topic, _, _ in cases)


def test_robot_description_topic_gives_the_model_and_swaps_are_checked(
        tester, log_dir, cache_dir, urdf_paths):
    ns = unique_namespace("desc")
    with open(urdf_paths["panda"]) as stream:
        xml = stream.read()
    description = tester.publisher(String, f"{ns}/robot_description", LATCHED)
    description.publish(String(data=xml))  # latched before the node exists
    node = NodeProcess("dynamics_node", ns, log_dir, dynamics_parameters(cache_dir))
    try:
        model = RobotModel.from_urdf_string(xml)
        client = DynamicsClient(tester, node, model)
        rng = np.random.default_rng(2)
        q, qd = random_state(model, rng)[0], np.zeros(model.nv)  # q̇ = 0: the filter gives q̈ = 0
        t, answer = client.ask(q, qd)
        want = model.inverse_dynamics(q, qd, qd, model.theta_nominal)
        np.testing.assert_allclose(answer.effort, want.tau, rtol=1e-9, atol=1e-9)
        assert "from topic" in node.output()
        # a URDF with the same joints and a heavier link 7 is accepted ...
        heavier = re.sub(r'(<link name="panda_link7">.*?<mass value=")([^"]+)"',
                         lambda m: f'{m.group(1)}{float(m.group(2)) + 2.0}"', xml, count=1,
                         flags=re.S)
        assert heavier != xml
        swapped = RobotModel.from_urdf_string(heavier)
        description.publish(String(data=heavier))
        tester.spin_until(lambda: "URDF swap" in node.output(), ANSWER_TIMEOUT, "the swap", node)
        t, answer = client.ask(q, qd)
        want = swapped.inverse_dynamics(q, qd, qd, swapped.theta_nominal)
        np.testing.assert_allclose(answer.effort, want.tau, rtol=1e-9, atol=1e-9)
        # ... one with other joints is not (the swapped model stays)
        with open(urdf_paths["ur5"]) as stream:
            description.publish(String(data=stream.read()))
        client.input_status("the joints change")
        t, answer = client.ask(q, qd)
        np.testing.assert_allclose(answer.effort, want.tau, rtol=1e-9, atol=1e-9)
    finally:
        assert node.stop() == 0


@pytest.mark.parametrize(("parameters", "message"), [
    ({"robot_description_timeout": 1.0}, "no message within 1 s"),
    ({"urdf_path": "/nonexistent/arm.urdf"}, "/nonexistent/arm.urdf"),
    ({"robot_description": "<robot name='x'><link name='a'/></robot>"}, "no movable joint"),
    ({"acceleration_cutoff": -5.0}, "acceleration_cutoff"),
    ({"urdf_path": find_example_robot_urdf("panda"), "locked_joints": ["panda_hand"]},
     'joint "panda_hand" is not in the URDF'),
])
def test_missing_or_broken_urdf_stops_start_up_with_one_clear_message(
        log_dir, parameters, message):
    node = NodeProcess("dynamics_node", unique_namespace("bad"), log_dir, parameters)
    try:
        assert node.wait(30.0) == 1
    finally:
        node.stop()
    output = node.output()
    assert "Traceback" not in output
    fatal = [line for line in output.splitlines() if "cannot start" in line]
    assert len(fatal) == 1 and message in fatal[0], output


# ---------------------------------------------------------------------------- monitor
def monitor_statuses(arrays, names):
    """[(time index, name, level, message)] of body statuses, in arrival order."""
    out = []
    for i, array in enumerate(arrays):
        for s in array.status:
            if task_name(s.name) in names:
                out.append((i, task_name(s.name), cv.status_level(s), s.message))
    return out


def stream_theta(tester, publisher, names, theta_of_t, seconds, rate=50.0):
    """Publish Θ(t) at ``rate`` Hz for ``seconds`` s (t from the first sample)."""
    start = time.monotonic()
    k = 0
    while (now := time.monotonic() - start) < seconds:
        if now >= k / rate:
            publisher.publish(cv.body_array(theta_of_t(now), names))
            k += 1
        tester.executor.spin_once(timeout_sec=0.002)


@pytest.fixture
def monitor(tester, log_dir, panda_urdf):
    node = NodeProcess("monitor_node", unique_namespace("mon"), log_dir,
                       {"urdf_path": panda_urdf, "publish_rate": 10.0})
    ns = node.namespace
    theta_pub = tester.publisher(Float64MultiArray, f"{ns}/inertial_parameters", BEST_EFFORT)
    diagnostics = tester.collect(DiagnosticArray, f"{ns}/diagnostics")
    consistency = tester.collect(Float64MultiArray, f"{ns}/consistency")
    tester.wait_matched([theta_pub], 30.0, node)
    yield node, theta_pub, diagnostics, consistency
    assert node.stop() == 0


def test_monitor_stays_ok_for_a_stream_varying_thirty_percent(tester, monitor, panda):
    node, theta_pub, diagnostics, consistency = monitor
    rng = np.random.default_rng(4)
    phases = rng.uniform(0, 2 * np.pi, panda.n_bodies)
    sent = []

    def theta(t):
        wave = 0.5 * np.sin(2 * np.pi * t / 8.0 + phases) + 0.5 * rng.uniform(-1, 1, len(phases))
        sent.append(np.array(panda.theta_nominal) * (1.0 + 0.3 * wave)[:, None])
        return sent[-1]

    stream_theta(tester, theta_pub, panda.body_names, theta, 5.0)
    tester.spin_until(lambda: len(consistency) > 100, ANSWER_TIMEOUT, "consistency arrays")
    statuses = monitor_statuses(diagnostics, set(panda.body_names))
    assert len({s[1] for s in statuses}) == panda.n_bodies
    assert len(statuses) >= 3 * panda.n_bodies
    assert all(level == 0 for _, _, level, _ in statuses), [s for s in statuses if s[2]]
    last = consistency[-1]
    assert cv.parse_dim_label(last.layout.dim[0].label) == ("body", panda.body_names)
    axis, fields = cv.parse_dim_label(last.layout.dim[1].label)
    table = np.array(last.data).reshape(panda.n_bodies, len(fields))
    mus = [spectral_statistics(th)[0] for th in sent]
    assert any(np.allclose(table[:, fields.index("mu")], mu, rtol=1e-12) for mu in mus)
    assert np.all(table[:, fields.index("level")] == 0)
    assert " -> " not in node.output()  # no transition logged


def test_monitor_raises_error_for_a_body_decaying_to_one_percent(tester, monitor, panda):
    node, theta_pub, diagnostics, _ = monitor
    k = 6
    body = panda.body_names[k]
    def theta(t):
        out = np.array(panda.theta_nominal)
        out[k] *= max(np.exp(-t / 0.5), 0.01)
        return out

    stream_theta(tester, theta_pub, panda.body_names, theta, 4.0)

    def error_status():
        for _, _name, level, message in monitor_statuses(diagnostics, {body}):
            if level == 2:
                return message
        return None

    message = tester.spin_until(error_status, ANSWER_TIMEOUT, f"ERROR for {body}", node)
    assert "below epsilon" in message
    others = monitor_statuses(diagnostics, set(panda.body_names) - {body})
    assert others and all(level == 0 for _, _, level, _ in others)
    statuses = [s for a in diagnostics for s in a.status]
    values = {kv.key: kv.value for kv in next(s for s in reversed(statuses)
                                               if task_name(s.name) == body).values}
    assert {"margin", "size", "epsilon", "inf margin", "sup size", "rate",
            "predicted time to crossing"} <= set(values)
    # a Θ with the wrong layout is rejected with the reason, and the node goes on
    bad = cv.labelled_array(np.zeros((10, panda.n_bodies)), [("phi", None), ("body", None)])

    def rejected():
        theta_pub.publish(bad)
        tester.spin_for(0.1)
        return any(short_name(s.name) == "monitor_node: input" and "dimension labels" in s.message
                   for a in diagnostics for s in a.status)

    tester.spin_until(rejected, ANSWER_TIMEOUT, "the rejection on /diagnostics", node)
    log = node.output()
    assert len(re.findall(rf"body {body}: \w+ -> ERROR", log)) == 1, log
    assert node.alive


def test_monitor_with_a_status_prefix_publishes_prefixed_names(tester, log_dir, panda_urdf,
                                                              panda):
    prefix = "estimates/classical"
    node = NodeProcess("monitor_node", unique_namespace("pre"), log_dir,
                       {"urdf_path": panda_urdf, "publish_rate": 10.0, "status_prefix": prefix})
    try:
        ns = node.namespace
        theta_pub = tester.publisher(Float64MultiArray, f"{ns}/inertial_parameters",
                                     BEST_EFFORT)
        diagnostics = tester.collect(DiagnosticArray, f"{ns}/diagnostics")
        tester.wait_matched([theta_pub], 30.0, node)
        stream_theta(tester, theta_pub, panda.body_names,
                     lambda t: np.array(panda.theta_nominal), 1.0)
        prefixed = {f"{prefix}: {body}" for body in panda.body_names}

        def every_body_reported():
            names = {task_name(s.name) for a in diagnostics for s in a.status
                     if any(kv.key == "samples" and kv.value != "0" for kv in s.values)}
            return prefixed <= names

        tester.spin_until(every_body_reported, ANSWER_TIMEOUT, "prefixed body statuses", node)
        names = {task_name(s.name) for a in diagnostics for s in a.status}
        assert names == prefixed | {f"{prefix}: input"}, names
        assert not monitor_statuses(diagnostics, set(panda.body_names))  # no bare body name
        assert all(level == 0 for _, _, level, _ in monitor_statuses(diagnostics, prefixed))
    finally:
        assert node.stop() == 0


# ---------------------------------------------------------------------------- bring-up
def test_cli_bring_up_starts_the_nodes_with_the_config(tester, tmp_path, panda_urdf, panda):
    ns = unique_namespace("cli")
    log = open(tmp_path / "bringup.log", "w")
    running = bringup.bring_up(panda_urdf, namespace=ns, env=node_env(), stdout=log,
                               stderr=log, ros_args=["-p", "jacobian_samples:=256",
                                                     "-p", f"cache_dir:={tmp_path}"])
    try:
        torques = tester.collect(JointState, f"{ns}/generalized_torques")
        consistency = tester.collect(Float64MultiArray, f"{ns}/consistency")
        markers = tester.collect(MarkerArray, f"{ns}/inertia_markers")
        js_pub = tester.publisher(JointState, f"{ns}/joint_states")
        theta_pub = tester.publisher(Float64MultiArray, f"{ns}/inertial_parameters")
        tester.wait_matched([js_pub, theta_pub], START_TIMEOUT)

        def answered():
            js_pub.publish(joint_state(panda, time.time(), np.zeros(panda.nv),
                                       np.zeros(panda.nv)))
            theta_pub.publish(cv.body_array(np.array(panda.theta_nominal), panda.body_names))
            tester.spin_for(0.1)
            return torques and consistency and markers

        tester.spin_until(answered, ANSWER_TIMEOUT, "the three nodes to answer")
        assert running.poll() is None
    finally:
        codes = running.stop()
        log.close()
    assert codes == {"dynamics_node": 0, "monitor_node": 0, "markers_node": 0}, (
        tmp_path / "bringup.log").read_text()
