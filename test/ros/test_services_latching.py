"""What a cell calls and what a restarted node remembers, over real DDS.

- estimator_node's ``~/tare`` and ``~/reset`` (std_srvs/Trigger) on a UR5 carrying 1 kg
  on ``tool0`` (efforts computed here by the library's eq. (39) with the load):
  the estimate reaches 1 kg; tare makes that load part of the base (the estimate is
  then ≈ 0 kg on the same data, Θ̂ still carries it); reset restarts from the URDF
  (≈ 1 kg again); tare before any estimate is refused with a reason;
- ``payload_estimate`` is latched: a reader that joins late gets the last estimate;
- ``payload`` is latched: a dynamics_node started *after* the payload was published
  (a restarted node) answers with it; a volatile publisher is named as not matching.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import InertiaStamped
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from support.ros_harness import BEST_EFFORT, LATCHED, RELIABLE, NodeProcess, unique_namespace
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_tv_dynamics import phi_from_mass_com_inertia
from robot_tv_dynamics.ros import conversions as cv

pytestmark = [pytest.mark.ros, pytest.mark.slow]

TIMEOUT = 60.0
MASS = 1.0
COM = np.array([0.0, 0.0, 0.05])
INERTIA = np.diag([2e-3, 2e-3, 1e-3])
RATE = 200.0  # sample stamps [Hz]


def load_phi() -> np.ndarray:
    return phi_from_mass_com_inertia(MASS, COM, INERTIA)


class Motion:
    """Sinusoids per joint; the efforts of the UR5 with 1 kg on tool0, stamps 5 ms apart."""

    def __init__(self, ur5) -> None:
        self.model = ur5
        self.theta = ur5.theta_with_link_inertia(np.array(ur5.theta_nominal), "tool0",
                                                 load_phi())
        n = ur5.nv
        self.q0 = np.array([0.0, -1.2, 1.2, -1.5, -1.5, 0.0])[:n]
        self.amplitude = np.full(n, 0.6)
        self.omega = 2 * math.pi * np.linspace(0.3, 0.7, n)
        self.phase = np.linspace(0.0, 2.0, n)
        self.t0 = float(int(time.time()))
        self._k = itertools.count()

    def sample(self) -> JointState:
        k = next(self._k)
        t = k / RATE
        arg = self.omega * t + self.phase
        q = self.q0 + self.amplitude * np.sin(arg)
        qd = self.amplitude * self.omega * np.cos(arg)
        qdd = -self.amplitude * self.omega**2 * np.sin(arg)
        tau = self.model.inverse_dynamics(q, qd, qdd, self.theta).tau
        msg = JointState(name=list(self.model.joint_names))
        msg.header.stamp = cv.seconds_to_stamp(self.t0 + t)
        msg.position, msg.velocity, msg.effort = q.tolist(), qd.tolist(), tau.tolist()
        return msg


def call(tester, client, node) -> Trigger.Response:
    tester.spin_until(lambda: client.wait_for_service(timeout_sec=0.0), TIMEOUT,
                      f"{client.srv_name}", node)
    future = client.call_async(Trigger.Request())
    tester.spin_until(future.done, TIMEOUT, f"{client.srv_name} answer", node)
    return future.result()


def feed(tester, publisher, motion: Motion, n: int) -> None:
    for _ in range(n):
        publisher.publish(motion.sample())
        tester.spin_for(0.002)


def test_tare_and_reset_move_the_estimates_zero_and_back(tester, tmp_path, ur5, urdf_paths):
    node = NodeProcess("estimator_node", unique_namespace("tare"), tmp_path, {
        "urdf_path": urdf_paths["ur5"], "noise_std": "0.05", "excitation_threshold": 0.0,
        "publish_period": 0.0, "legacy_theta_topics": False})
    ns = node.namespace
    joint = tester.publisher(JointState, f"{ns}/joint_states", RELIABLE)
    estimates = tester.collect(InertiaStamped, f"{ns}/payload_estimate", RELIABLE)
    theta_hat = tester.collect(JointState, f"{ns}/inertial_parameters_stamped", RELIABLE)
    tare = tester.node.create_client(Trigger, f"{ns}/estimator_node/tare")
    reset = tester.node.create_client(Trigger, f"{ns}/estimator_node/reset")
    motion = Motion(ur5)
    body = ur5.body_names.index("wrist_3_link")
    nominal_mass = float(ur5.theta_nominal[body][0])

    def mass() -> float:
        return estimates[-1].inertia.m if estimates else math.nan

    try:
        tester.wait_matched([joint], TIMEOUT, node)
        early = call(tester, tare, node)
        assert not early.success and "nothing to tare" in early.message
        feed(tester, joint, motion, 800)
        tester.spin_until(lambda: abs(mass() - MASS) < 0.05, 20.0, "the estimate of 1 kg", node)
        assert estimates[-1].header.frame_id == "tool0"  # the flange: payload_frame's default
        # a reader joining now gets the last estimate at once (latched)
        late = tester.collect(InertiaStamped, f"{ns}/payload_estimate", LATCHED)
        tester.spin_until(lambda: late, 10.0, "the latched estimate", node)
        assert late[-1].inertia.m == pytest.approx(mass(), abs=1e-12)

        before = len(estimates)
        answer = call(tester, tare, node)
        assert answer.success and "kg on wrist_3_link" in answer.message, answer.message
        # the fresh estimate at once (the geometric filter starts at 1 g: log-Cholesky)
        tester.spin_until(lambda: len(estimates) > before and abs(mass()) <= 1e-3 + 1e-12,
                          10.0, "the zero load after the tare", node)
        feed(tester, joint, motion, 600)
        tester.spin_for(0.5)
        assert abs(mass()) < 0.05, mass()  # the same data: no load beyond the tare
        row = np.array(theta_hat[-1].position).reshape(ur5.n_bodies, 10)[body]
        assert row[0] == pytest.approx(nominal_mass + MASS, abs=0.05)  # Θ̂ still carries it

        before = len(estimates)
        answer = call(tester, reset, node)
        assert answer.success and "tare is forgotten" in answer.message, answer.message
        tester.spin_until(lambda: len(estimates) > before and abs(mass()) <= 1e-3 + 1e-12,
                          10.0, "the zero load after the reset", node)
        feed(tester, joint, motion, 800)
        tester.spin_until(lambda: abs(mass() - MASS) < 0.05, 20.0, "1 kg again", node)
    finally:
        code = node.stop()
    assert code == 0, node.output()[-3000:]


def test_a_dynamics_node_started_after_the_payload_answers_with_it(tester, tmp_path, ur5,
                                                                   urdf_paths):
    ns = unique_namespace("latch")
    payload = tester.publisher(InertiaStamped, f"{ns}/payload", LATCHED)
    load = InertiaStamped()
    load.header.frame_id = "tool0"
    load.inertia.m = MASS
    load.inertia.com.x, load.inertia.com.y, load.inertia.com.z = COM
    load.inertia.ixx, load.inertia.iyy, load.inertia.izz = np.diag(INERTIA)
    payload.publish(load)  # before the node exists: it must get it when it starts
    volatile = tester.publisher(InertiaStamped, f"{ns}/payload", RELIABLE)
    joint = tester.publisher(JointState, f"{ns}/joint_states", BEST_EFFORT)
    reference = tester.publisher(JointTrajectory, f"{ns}/reference", RELIABLE)
    torques = tester.collect(JointState, f"{ns}/generalized_torques")
    node = NodeProcess("dynamics_node", ns, tmp_path, {
        "urdf_path": urdf_paths["ur5"], "cache_dir": str(tmp_path), "jacobian_samples": 64})
    qdd = np.linspace(-1.0, 1.0, ur5.nv)
    q, qd = np.array([0.1, -1.0, 1.1, -0.4, 0.5, 0.2]), np.linspace(0.2, -0.2, ur5.nv)
    try:
        tester.wait_matched([joint, reference], TIMEOUT, node)
        plan = JointTrajectory(joint_names=list(ur5.joint_names))
        plan.header.stamp = Time(sec=int(time.time()) - 10)
        plan.points = [JointTrajectoryPoint(accelerations=qdd.tolist(),
                                            time_from_start=Duration(sec=s)) for s in (0, 100)]
        reference.publish(plan)
        tester.spin_for(0.5)
        stamps = itertools.count()

        def sample() -> JointState:
            msg = JointState(name=list(ur5.joint_names))
            msg.header.stamp = cv.seconds_to_stamp(time.time() - 1.0 + 1e-4 * next(stamps))
            msg.position, msg.velocity = q.tolist(), qd.tolist()
            return msg

        tester.publish_until(lambda: joint.publish(sample()), lambda: len(torques) >= 3,
                             TIMEOUT, "torques", node, period=0.05)
        tester.spin_until(lambda: "payload is latched, publish it reliable and transient "
                          "local" in node.output(), 20.0, "the volatile publisher named", node)
        assert volatile.get_subscription_count() == 0
    finally:
        code = node.stop()
    assert code == 0, node.output()[-3000:]
    loaded = ur5.theta_with_link_inertia(np.array(ur5.theta_nominal), "tool0", load_phi())
    want = ur5.inverse_dynamics(q, qd, qdd, loaded).tau
    without = ur5.inverse_dynamics(q, qd, qdd, np.array(ur5.theta_nominal)).tau
    assert np.abs(want - without).max() > 0.5  # the payload is visible in τ
    np.testing.assert_allclose(torques[-1].effort, want, rtol=1e-9, atol=1e-9)
