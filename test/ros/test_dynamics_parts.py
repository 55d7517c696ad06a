"""dynamics_node's ROS glue, each part without a node: messages in, arrays and messages out.

InertialInputs (Θ/Ψ/payload messages → ModelInputs and RunningBounds), StampedPairing and
StampReader (samples waiting for their stamped Θ), SampleOutputs (arrays → the three
per-sample topics), TrajectoryJobs (planned trajectories and retiming in their threads).
Message packages are imported, rclpy is not initialised: fakes stand in for the node,
its publishers, subscriptions and input guard. Values are checked against Pinocchio
(rnea, PseudoInertia) and the core evaluation, not against the parts themselves.
"""

from __future__ import annotations

import time

import numpy as np
import pinocchio as pin
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from support.examples import ur5_move
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_tv_dynamics import bounds as B
from robot_tv_dynamics import limits
from robot_tv_dynamics.evaluation import evaluate
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inputs import InputRules, ModelInputs, TimelineRules
from robot_tv_dynamics.ros import conversions as cv
from robot_tv_dynamics.ros.dynamics_outputs import SUBSCRIBER_CHECK_PERIOD, SampleOutputs
from robot_tv_dynamics.ros.inertial_inputs import InertialInputs
from robot_tv_dynamics.ros.stamped_pairing import CLOCK_READ_PERIOD, StampedPairing, StampReader
from robot_tv_dynamics.ros.trajectory_conversions import trajectory_from_msg, trajectory_to_msg
from robot_tv_dynamics.ros.trajectory_jobs import TrajectoryJobs, TrajectorySnapshot


# ---------------------------------------------------------------------------- fakes
class Guard:
    hardware_id = "ur5"

    def __init__(self) -> None:
        self.accepted: list[str] = []
        self.rejected: list[tuple[str, str]] = []
        self.statuses: list[object] = []

    def accept(self, topic: str) -> None:
        self.accepted.append(topic)

    def reject(self, topic: str, error: object) -> None:
        self.rejected.append((topic, str(error)))

    def publish(self, extra=()) -> None:
        self.statuses.extend(extra)


class Publisher:
    def __init__(self, topic: str = "") -> None:
        self.topic, self.messages, self.subscribers = topic, [], 0

    def publish(self, msg) -> None:
        self.messages.append(msg)

    def get_subscription_count(self) -> int:
        return self.subscribers


class Subscription:
    def __init__(self, topic: str, publishers: int = 0) -> None:
        self.topic, self.publishers = topic, publishers

    def get_publisher_count(self) -> int:
        return self.publishers


class Node:
    def __init__(self) -> None:
        self.publishers: dict[str, Publisher] = {}
        self.subscriptions: list[Subscription] = []

    def create_publisher(self, _type, topic, _qos) -> Publisher:
        return self.publishers.setdefault(topic, Publisher(topic))

    def create_subscription(self, _type, topic, _callback, _qos, **_options) -> Subscription:
        self.subscriptions.append(Subscription(topic))
        return self.subscriptions[-1]


class Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, text, **_kw) -> None:
        self.lines.append(text)

    warning = info


def wait_for(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert condition()


def pinocchio_margin_size(theta: np.ndarray) -> tuple[float, float]:
    """min_l λ_min(f(Φ_l)), max_l λ_max(f(Φ_l)) by Pinocchio's PseudoInertia (eq. 9)."""
    eig = np.array([np.linalg.eigvalsh(pin.PseudoInertia.FromDynamicParameters(
        np.array([m, h1, h2, h3, i11, i12, i22, i13, i23, i33])).toMatrix())
        for m, h1, h2, h3, i11, i22, i33, i12, i23, i13 in theta])
    return float(eig[:, 0].min()), float(eig[:, -1].max())


@pytest.fixture
def inputs(ur5) -> ModelInputs:
    return ModelInputs(ur5, InputRules(timeline=TimelineRules(window=0.05, history=2.0)))


@pytest.fixture
def inertial(ur5, inputs):
    guard, released = Guard(), []
    running = B.RunningBounds(ur5.n_bodies, None)
    running.update(inputs.theta)
    part = InertialInputs(guard, inputs, ur5, running, Logger(),
                          release=lambda: released.append(1), clock=lambda: 100.0,
                          reference_tolerance=0.0)
    return part, guard, released


# ---------------------------------------------------------------------------- inertial inputs
def test_a_theta_message_reaches_the_inputs_and_the_running_bounds(ur5, inputs, inertial):
    part, guard, _ = inertial
    theta = np.array(ur5.theta_nominal)
    theta[-1] *= 0.3  # a lighter wrist: a smaller margin than the URDF's
    part.on_theta(cv.body_array(theta, ur5.body_names))
    assert guard.accepted == ["inertial_parameters"] and not guard.rejected
    np.testing.assert_allclose(inputs.theta, theta, rtol=0, atol=1e-12)
    assert part.bounds.min_margin == pytest.approx(pinocchio_margin_size(theta)[0], rel=1e-9)
    assert part.bounds.uniform.min_margin == pytest.approx(part.bounds.min_margin, rel=1e-12)


def test_a_bad_theta_message_is_rejected_and_changes_nothing(ur5, inputs, inertial):
    part, guard, _ = inertial
    before = (np.array(inputs.theta), part.bounds.min_margin, part.bounds.uniform)
    bad = np.array(ur5.theta_nominal)
    bad[2, 4] = np.nan
    part.on_theta(cv.body_array(bad, ur5.body_names))
    part.on_theta(cv.body_array(np.ones((2, 10)), ur5.body_names[:2]))  # wrong bodies
    assert [topic for topic, _ in guard.rejected] == ["inertial_parameters"] * 2
    assert not guard.accepted
    np.testing.assert_array_equal(inputs.theta, before[0])
    assert (part.bounds.min_margin, part.bounds.uniform) == before[1:]


def test_a_stamped_theta_releases_waiting_samples_and_wins_over_the_legacy_one(
        ur5, inputs, inertial):
    part, guard, released = inertial
    theta = np.array(ur5.theta_nominal)
    theta[-1] *= 2.0
    part.on_theta_stamped(cv.body_joint_state(1.0, ur5.body_names, "phi", theta))
    assert guard.accepted == ["inertial_parameters_stamped"] and released == [1]
    assert len(inputs.theta_series) == 1
    assert part.bounds.max_size == pytest.approx(pinocchio_margin_size(theta)[1], rel=1e-9)
    margin = part.bounds.min_margin
    part.on_theta(cv.body_array(0.1 * theta, ur5.body_names))  # legacy: skipped now
    assert guard.accepted[-1] == "inertial_parameters" and part.bounds.min_margin == margin
    part.on_theta_stamped(cv.body_joint_state(2.0, ur5.body_names, "phi"))  # no position
    assert guard.rejected[-1][0] == "inertial_parameters_stamped"
    assert "neither position" in guard.rejected[-1][1] and released == [1]


def test_a_payload_without_frame_id_goes_to_the_payload_frame(ur5, inputs, inertial):
    from geometry_msgs.msg import InertiaStamped

    part, guard, _ = inertial
    msg = InertiaStamped()
    msg.inertia.m, msg.inertia.com.z = 2.0, 0.05
    msg.inertia.ixx = msg.inertia.iyy = msg.inertia.izz = 1e-3
    part.on_payload(msg)  # no payload_frame (a URDF without a flange): refused
    assert guard.rejected[-1][0] == "payload" and "is empty" in guard.rejected[-1][1]
    part.payload_frame = "tool0"  # the dynamics_node default on the UR5
    part.on_payload(msg)
    assert guard.accepted[-1] == "payload" and set(inputs.payloads) == {"tool0"}
    assert inputs.theta[-1, 0] == pytest.approx(ur5.theta_nominal[-1, 0] + 2.0, rel=1e-12)


def test_subscribe_creates_every_state_topic_and_returns_the_stamped_ones(inertial):
    part, _, _ = inertial
    node = Node()
    stamped = part.subscribe(node, "stream", "reliable")
    assert sorted(s.topic for s in node.subscriptions) == sorted([
        "inertial_parameters", "inertial_parameter_rates", "psi", "psi_rates", "payload",
        "reference", "inertial_parameters_stamped", "psi_stamped"])
    assert [s.topic for s in stamped] == ["inertial_parameters_stamped", "psi_stamped"]


# ---------------------------------------------------------------------------- pairing
def test_without_stamped_inputs_a_sample_is_answered_at_once(inputs):
    pairing, answered = StampedPairing(0.05, Logger(), 1.0), []
    pairing.push(10.0, "a")
    pairing.release(inputs, lambda msg, t: answered.append((msg, t)))
    assert answered == [("a", 10.0)] and pairing.counts["on_time"] == 1
    assert cv.status_level(pairing.status("ur5")) == 0
    with pytest.raises(InvalidInputError, match="repeats"):
        pairing.push(10.0, "b")


def test_a_sample_waits_for_an_announced_theta_then_is_answered_late(inputs):
    logger = Logger()
    pairing, answered = StampedPairing(0.05, logger, 1.0), []
    pairing.subscriptions = (Subscription("inertial_parameters_stamped", publishers=1),
                             Subscription("psi_stamped"))
    for t in (1.00, 1.02):  # within the window: both wait
        pairing.push(t, t)
        pairing.release(inputs, lambda msg, t: answered.append(t))
    assert answered == [] and len(pairing) == 2
    pairing.push(1.10, 1.10)  # more than the window past both
    pairing.release(inputs, lambda msg, t: answered.append(t))
    assert answered == [1.00, 1.02] and pairing.counts["late"] == 2 and len(pairing) == 1
    status = pairing.status("ur5")
    assert cv.status_level(status) == 1 and "2 sample(s) late" in status.message
    assert "2 sample(s) answered without" in logger.lines[-1]
    assert cv.status_level(pairing.status("ur5")) == 0  # nothing new since


def test_a_sample_waits_for_its_ticks_streamed_reference_not_for_a_finished_one(inputs, ur5):
    """One-point references per tick (a controller's q̈): DDS may deliver the sample
    first; it waits (within the window) for the reference of its own stamp, whose q̈ it
    then takes, and a reference that ended longer ago than the window holds nothing."""
    from robot_tv_dynamics.inputs.reference import ReferenceAccelerations

    names = ur5.joint_names

    def reference(t: float, qdd: float) -> ReferenceAccelerations:
        return ReferenceAccelerations(names, names, t, [0.0], np.full((1, ur5.nv), qdd),
                                      tolerance=1e-4)

    pairing, answered = StampedPairing(0.05, Logger(), 1.0), []
    q = np.zeros(ur5.nv)

    def answer(msg, t):
        answered.append((t, inputs.sample(t, q, q, now=0.0).qdd[0]))

    inputs.set_reference(reference(1.000, 1.0))
    pairing.push(1.000, "a")
    pairing.release(inputs, answer)
    assert answered == [(1.000, 1.0)]  # covered: answered at once
    pairing.push(1.001, "b")  # before its reference
    pairing.release(inputs, answer)
    assert len(answered) == 1 and len(pairing) == 1
    inputs.set_reference(reference(1.001, 2.0))
    pairing.release(inputs, answer)
    assert answered[-1] == (1.001, 2.0) and pairing.counts["late"] == 0
    pairing.push(1.2, "c")  # the stream ended 0.2 s ago (> window): not waited for
    pairing.release(inputs, answer)
    assert [t for t, _ in answered] == [1.000, 1.001, 1.2]


def test_the_stamp_reader_reads_the_clock_once_per_period():
    reads = []

    def clock() -> float:
        reads.append(1)
        return 1000.0

    reader = StampReader(clock)
    for k in range(5):
        assert reader.read(cv.seconds_to_stamp(999.0 + k), 50.0 + 0.1 * CLOCK_READ_PERIOD * k
                           ) == pytest.approx(999.0 + k)
    assert len(reads) == 1
    reader.read(cv.seconds_to_stamp(999.0), 50.0 + 2 * CLOCK_READ_PERIOD)
    assert len(reads) == 2
    with pytest.raises(InvalidInputError):  # far in the future: checked again, refused
        reader.read(cv.seconds_to_stamp(1000.0 + 10 * limits.STAMP_FUTURE),
                    50.0 + 2 * CLOCK_READ_PERIOD)
    assert len(reads) == 3


# ---------------------------------------------------------------------------- outputs
def test_the_outputs_carry_the_arrays_with_their_labels(ur5):
    node = Node()
    outputs = SampleOutputs(node, ur5.joint_names, "qos")
    q, qd, tau = np.arange(6.0), np.arange(6.0) + 10, np.arange(6.0) + 20
    outputs.publish_torques(cv.seconds_to_stamp(5.25), "base", q, qd, tau)
    sent = node.publishers["generalized_torques"].messages[-1]
    msg = deserialize_message(sent, JointState) if isinstance(sent, bytes) else sent
    assert list(msg.name) == list(ur5.joint_names) and msg.header.frame_id == "base"
    assert cv.stamp_to_seconds(msg.header.stamp) == 5.25
    np.testing.assert_array_equal(np.array(msg.effort), tau)
    values = np.arange(len(B.BOUND_LABELS), dtype=float)
    stamps = [cv.seconds_to_stamp(5.25 + 0.001 * k) for k in range(3)]
    outputs.publish_bounds(stamps[0], "base", values, B.SAMPLED)
    outputs.publish_bounds(stamps[1], "base", values + 1, B.UNAVAILABLE)
    outputs.publish_bounds(stamps[2], "base", values + 2, B.UNAVAILABLE)
    stamped = [received(m) for m in node.publishers["mass_matrix_bounds_stamped"].messages]
    assert [(m.header.stamp.sec, m.header.stamp.nanosec) for m in stamped] == [
        (s.sec, s.nanosec) for s in stamps]
    assert list(stamped[0].name) == [f"{label}/{B.SAMPLED}" for label in B.BOUND_LABELS]
    assert list(stamped[2].name) == [f"{label}/{B.UNAVAILABLE}" for label in B.BOUND_LABELS]
    np.testing.assert_array_equal(np.array(stamped[2].position), values + 2)
    assert not stamped[2].velocity and not stamped[2].effort
    first, second, third = node.publishers["mass_matrix_bounds"].messages
    assert second is not first and third is second  # a new layout per method, then reused
    assert first.layout.dim[1].label == cv.dim_label("method", [B.SAMPLED])
    labels = [d.label for d in second.layout.dim]
    assert labels == [cv.dim_label("bound", B.BOUND_LABELS), cv.dim_label("method", [
        B.UNAVAILABLE])]
    np.testing.assert_array_equal(np.array(third.data), values + 2)
    rows = np.arange(len(cv.TERM_LABELS) * 6, dtype=float).reshape(-1, 6)
    outputs.publish_terms(stamps[1], "base", rows)
    terms = node.publishers["generalized_terms"].messages[-1]
    assert terms.layout.dim[0].label == cv.dim_label("term", cv.TERM_LABELS)
    np.testing.assert_array_equal(np.array(terms.data), rows.ravel())
    stamped = received(node.publishers["generalized_terms_stamped"].messages[-1])
    assert (stamped.header.stamp.sec, stamped.header.stamp.nanosec) == (
        stamps[1].sec, stamps[1].nanosec) and stamped.header.frame_id == "base"
    by_name = dict(zip(stamped.name, stamped.position, strict=True))
    for k, term in enumerate(cv.TERM_LABELS):
        for j, joint in enumerate(ur5.joint_names):
            assert by_name[f"{term}/{joint}"] == rows[k, j]


def received(sent):
    """A published JointState as its subscriber reads it (bytes or a message)."""
    return deserialize_message(sent, JointState) if isinstance(sent, bytes) else sent


def test_without_legacy_only_the_stamped_terms_and_bounds_exist(ur5):
    node = Node()
    outputs = SampleOutputs(node, ur5.joint_names, "qos", legacy=False)
    assert set(node.publishers) == {"generalized_torques", "generalized_terms_stamped",
                                    "mass_matrix_bounds_stamped"}
    outputs.publish_terms(cv.seconds_to_stamp(2.0), "", np.zeros((len(cv.TERM_LABELS), 6)))
    outputs.publish_bounds(cv.seconds_to_stamp(2.0), "", np.zeros(len(B.BOUND_LABELS)),
                           B.SAMPLED)
    assert len(node.publishers["generalized_terms_stamped"].messages) == 1
    assert outputs.wanted(1.0) == (False, False)
    node.publishers["generalized_terms_stamped"].subscribers = 1
    assert outputs.wanted(1.0 + 2 * SUBSCRIBER_CHECK_PERIOD) == (True, False)


def test_subscribers_are_looked_up_once_per_period(ur5):
    node = Node()
    outputs = SampleOutputs(node, ur5.joint_names, "qos")
    assert outputs.wanted(10.0) == (False, False)
    node.publishers["mass_matrix_bounds"].subscribers = 1
    assert outputs.wanted(10.0 + 0.5 * SUBSCRIBER_CHECK_PERIOD) == (False, False)
    assert outputs.wanted(10.0 + 2 * SUBSCRIBER_CHECK_PERIOD) == (False, True)


# ---------------------------------------------------------------------------- trajectories
def jobs_for(ur5, theta=None):
    guard, planned, retimed = Guard(), Publisher(), Publisher()
    snapshot = TrajectorySnapshot(ur5, np.array(ur5.theta_nominal if theta is None else theta),
                                  None, "ur5")
    jobs = TrajectoryJobs(guard, planned, retimed, lambda: snapshot)
    return jobs, guard, planned, retimed


def test_a_planned_trajectory_gets_the_torques_pinocchio_computes(ur5):
    jobs, guard, planned, _ = jobs_for(ur5)
    move = ur5_move(duration=2.0, n=11)
    try:
        jobs.on_planned_trajectory(trajectory_to_msg(move))
        wait_for(lambda: planned.messages)
    finally:
        jobs.stop()
    model, data = ur5.pinocchio_model, ur5.pinocchio_model.createData()
    order = [ur5.joint_names.index(j) for j in move.joint_names]
    for k, point in enumerate(planned.messages[0].points):
        q, qd, qdd = (np.empty(ur5.nv) for _ in range(3))
        q[order], qd[order], qdd[order] = (
            move.positions[k], move.velocities[k], move.accelerations[k])
        expected = pin.rnea(model, data, q, qd, qdd)[order]
        np.testing.assert_allclose(np.array(point.effort), expected, atol=1e-8)
    assert guard.accepted == ["planned_trajectory"] and len(guard.statuses) == 1


def test_a_trajectory_with_too_many_points_is_refused_before_any_work(ur5):
    jobs, guard, planned, retimed = jobs_for(ur5)
    msg = JointTrajectory(joint_names=list(ur5.joint_names),
                          points=[JointTrajectoryPoint()] * (limits.TRAJECTORY_POINTS + 1))
    try:
        jobs.on_planned_trajectory(msg)
        jobs.on_retime_request(msg)
    finally:
        jobs.stop()
    assert [topic for topic, _ in guard.rejected] == ["planned_trajectory", "retime_request"]
    assert all("at most" in reason for _, reason in guard.rejected)
    assert not planned.messages and not retimed.messages and not guard.accepted


def test_a_retimed_path_keeps_the_effort_limits_of_the_snapshot(ur5):
    jobs, guard, _, retimed = jobs_for(ur5)
    fast = ur5_move(duration=0.3, n=31)
    try:
        jobs.on_retime_request(trajectory_to_msg(fast))
        assert guard.accepted == ["retime_request"]  # accepted when queued
        wait_for(lambda: retimed.messages)
    finally:
        jobs.stop()
    out = trajectory_from_msg(retimed.messages[0])
    check = evaluate(ur5, out, None, theta=ur5.theta_nominal)  # not TOPP-RA's constraint
    assert np.nanmax(check.peak_ratio) <= 1.0 + 5e-3
    assert out.time_from_start[-1] > fast.time_from_start[-1]
    assert cv.status_level(guard.statuses[-1]) == 0
