"""A client of a running dynamics_node and the messages the node tests send it.

Shared by the node tests (test/ros/test_ros_nodes.py, test/ros/test_fuzz.py): joint states,
payloads and references as the node reads them, and :class:`DynamicsClient`, which
publishes them and collects the node's answers over real DDS.
"""

from __future__ import annotations

import time

import numpy as np
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_tv_dynamics import RobotModel, phi_from_mass_com_inertia
from robot_tv_dynamics.ros import conversions as cv
from support.ros_harness import LATCHED, NodeProcess, RosClient, short_name

START_TIMEOUT = 60.0  # a cold start: the Jacobian extremes take a few s on 2 cores


ANSWER_TIMEOUT = 10.0


PAYLOAD_LINK = "panda_hand"


def dynamics_parameters(cache_dir, **more):
    return {"cache_dir": str(cache_dir), "jacobian_samples": 256, "rate_timeout": 0.0,
            "diagnostics_period": 0.2, "log_throttle": 0.5, **more}


def stamp_of(seconds: float) -> Time:
    return cv.seconds_to_stamp(seconds)


def stamp_key(stamp: Time) -> tuple[int, int]:
    return stamp.sec, stamp.nanosec


def joint_state(model: RobotModel, t: float, q, qd, names=None) -> JointState:
    msg = JointState()
    msg.header.stamp = stamp_of(t)
    msg.name = list(names if names is not None else model.joint_names)
    msg.position = [float(x) for x in q]
    msg.velocity = [float(x) for x in qd]
    return msg


def payload_msg(link: str, mass: float, com, inertia_diag) -> InertiaStamped:
    msg = InertiaStamped()
    msg.header.frame_id = link
    msg.inertia.m = float(mass)
    msg.inertia.com.x, msg.inertia.com.y, msg.inertia.com.z = (float(c) for c in com)
    msg.inertia.ixx, msg.inertia.iyy, msg.inertia.izz = (float(c) for c in inertia_diag)
    return msg


def reference_msg(joints, start_sec: int, offsets, accelerations) -> JointTrajectory:
    msg = JointTrajectory()
    msg.header.stamp = Time(sec=start_sec)
    msg.joint_names = list(joints)
    for offset, acc in zip(offsets, accelerations, strict=True):
        point = JointTrajectoryPoint()
        point.time_from_start = Duration(sec=int(offset), nanosec=0)
        point.accelerations = [float(a) for a in acc]
        msg.points.append(point)
    return msg


def reference_qdd(start_sec: int, offsets, accelerations, t: float) -> np.ndarray:
    times = start_sec + np.asarray(offsets, dtype=float)
    return np.array([np.interp(t, times, accelerations[:, j])
                     for j in range(accelerations.shape[1])])


class DynamicsClient:
    """Publishers and subscriptions for one dynamics_node, plus the state it was sent."""

    def __init__(self, tester: RosClient, node: NodeProcess, model: RobotModel,
                 all_outputs: bool = True):
        """Publishers of every input; subscriptions of the torques (and, with
        ``all_outputs``, of the terms and bounds, which the node computes only then)."""
        ns = node.namespace
        self.tester, self.node, self.model = tester, node, model
        self.pub = {
            "joint_states": tester.publisher(JointState, f"{ns}/joint_states"),
            "inertial_parameters": tester.publisher(
                Float64MultiArray, f"{ns}/inertial_parameters"),
            "inertial_parameter_rates": tester.publisher(
                Float64MultiArray, f"{ns}/inertial_parameter_rates"),
            "psi": tester.publisher(Float64MultiArray, f"{ns}/psi"),
            "psi_rates": tester.publisher(Float64MultiArray, f"{ns}/psi_rates"),
            "payload": tester.publisher(InertiaStamped, f"{ns}/payload", LATCHED),
            "reference": tester.publisher(JointTrajectory, f"{ns}/reference"),
        }
        self.torques = tester.collect(JointState, f"{ns}/generalized_torques")
        self.terms: list = []
        self.bounds: list = []
        if all_outputs:
            self.terms = tester.collect(Float64MultiArray, f"{ns}/generalized_terms")
            self.bounds = tester.collect(Float64MultiArray, f"{ns}/mass_matrix_bounds")
        self.diagnostics = tester.collect(DiagnosticArray, f"{ns}/diagnostics")
        self.t = float(int(time.time()))
        tester.wait_matched(list(self.pub.values()), START_TIMEOUT, node)

    def set_state(self, rng: np.random.Generator, scale: float = 1.2) -> dict:
        """Publish a full known state (Θ, Θ̇, Ψ, Ψ̇, payload, reference); return it."""
        m = self.model
        n = m.n_bodies
        state = {
            "theta": scale * np.array(m.theta_nominal),
            "theta_dot": 0.05 * np.array(m.theta_nominal) * rng.choice([-1, 1], (n, 1)),
            "psi": 0.01 * rng.normal(size=(n, 12)),
            "psi_dot": 0.01 * rng.normal(size=(n, 12)),
            "payload": (0.8 + rng.uniform(), [0.0, 0.01, 0.06], [2e-3, 3e-3, 1e-3]),
            "ref_start": int(self.t) - 1,
            "ref_offsets": np.arange(0, 400),
            "ref_acc": rng.normal(size=(400, m.nv)),
        }
        self.publish_state(state)
        return state

    def publish_state(self, state: dict) -> None:
        names = self.model.body_names
        self.pub["inertial_parameters"].publish(cv.body_array(state["theta"], names, "phi"))
        self.pub["inertial_parameter_rates"].publish(
            cv.body_array(state["theta_dot"], names, "phi"))
        self.pub["psi"].publish(cv.body_array(state["psi"], names, "psi"))
        self.pub["psi_rates"].publish(cv.body_array(state["psi_dot"], names, "psi"))
        self.pub["payload"].publish(payload_msg(PAYLOAD_LINK, *state["payload"]))
        self.pub["reference"].publish(reference_msg(
            self.model.joint_names, state["ref_start"], state["ref_offsets"], state["ref_acc"]))

    def expected(self, state: dict, t: float, q, qd, model: RobotModel | None = None):
        m = model or self.model
        mass, com, diag = state["payload"]
        phi = phi_from_mass_com_inertia(mass, com, np.diag(diag))
        theta = m.theta_with_link_inertia(state["theta"], PAYLOAD_LINK, phi)
        qdd = reference_qdd(state["ref_start"], state["ref_offsets"], state["ref_acc"], t)
        return m.inverse_dynamics(q, qd, qdd, theta, state["theta_dot"], state["psi"],
                                  state["psi_dot"])

    def next_stamp(self) -> float:
        self.t += 0.015625  # 1/64 s: exact binary fractions keep stamps exact
        return self.t

    def ask(self, q, qd, names=None) -> tuple[float, JointState]:
        """Send one joint_states sample and wait for the torques with its stamp.

        A sample sent before the node's reader has matched this writer can be lost
        (best effort), so an unanswered sample is sent again with a new stamp.
        """
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while True:
            t = self.next_stamp()
            msg = joint_state(self.model, t, q, qd, names)
            self.pub["joint_states"].publish(msg)
            key = stamp_key(msg.header.stamp)
            try:
                answer = self.tester.spin_until(
                    lambda key=key: next(
                        (m for m in self.torques if stamp_key(m.header.stamp) == key), None),
                    1.0, f"torques stamped {t}", self.node)
                return t, answer
            except AssertionError:
                if time.monotonic() > deadline or not self.node.alive:
                    raise

    def sync(self, state: dict, rng: np.random.Generator) -> None:
        """Re-publish the state until a probe sample is answered from all of it."""
        deadline = time.monotonic() + 20.0
        while True:
            q, qd = rng.uniform(-1, 1, self.model.nv), rng.uniform(-1, 1, self.model.nv)
            t, answer = self.ask(q, qd)
            if np.allclose(answer.effort, self.expected(state, t, q, qd).tau, rtol=1e-9,
                           atol=1e-9):
                return
            assert time.monotonic() < deadline, "the node never used the published state"
            self.publish_state(state)
            self.tester.spin_for(0.2)

    def input_status(self, *texts: str, since: int = 0, timeout: float = 5.0):
        """The first "<node>: input" status after ``diagnostics[since]`` saying all ``texts``."""
        name = f"{self.node.name}: input"

        def find():
            for array in self.diagnostics[since:]:
                for status in array.status:
                    if short_name(status.name) == name and all(t in status.message for t in texts):
                        return status
            return None

        return self.tester.spin_until(find, timeout, f'diagnostics "{name}" saying {texts}',
                                      self.node)


def random_state(model, rng):
    return rng.uniform(-1.5, 1.5, model.nv), rng.uniform(-2, 2, model.nv)
