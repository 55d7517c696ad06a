"""dynamics_node pairs stamped Θ/Ψ with each joint sample by stamp, over real DDS.

This process is the relay: it publishes joint_states and the stamped Θ, Θ̇ (and Ψ, Ψ̇)
of each sample with a random 0–20 ms delay on Θ/Ψ, so that joint_states goes first or
second at random. τ of the node must equal eq. (39) (the library's inverse dynamics)
with the exact Θ(t), Ψ(t) at each sample's stamp to 1e-9 relative, with and without
published rates (Θ published at every other stamp: the node interpolates, which is
exact for the linear Θ(t) used here). The same schedule on the legacy unstamped topics
(paired by arrival) shows the error the stamp rule removes.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from support.particle_lagrangian import find_example_robot_urdf
from support.ros_harness import NodeProcess, short_name, unique_namespace
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_tv_dynamics import phi_from_mass_com_inertia
from robot_tv_dynamics.ros import conversions as cv

pytestmark = [pytest.mark.ros, pytest.mark.slow]

START_TIMEOUT = 60.0
STEP = 1.0 / 256.0   # stamp spacing [s]: an exact binary fraction keeps stamps exact
PERIOD = 0.006       # wall time between two joint samples [s]
N_SAMPLES = 120


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    process = NodeProcess(
        "dynamics_node", unique_namespace("stamped"), tmp_path_factory.mktemp("logs"),
        {"cache_dir": str(cache), "jacobian_samples": 256, "rate_timeout": 0.0,
         "diagnostics_period": 0.2, "theta_window": 0.25,
         "urdf_path": find_example_robot_urdf("panda")})
    yield process
    assert process.stop() == 0, process.output()[-3000:]


def scenario(model, seed):
    """Joint samples, Θ(t), Ψ(t) linear in t, and the relay's schedule."""
    rng = np.random.default_rng(seed)
    t0 = float(int(time.time())) + 10.0 * seed + 0.5  # later runs, later stamps
    t = t0 + STEP * np.arange(N_SAMPLES)
    q = rng.uniform(-1.2, 1.2, (N_SAMPLES, model.nv))
    qd = rng.uniform(-1.5, 1.5, (N_SAMPLES, model.nv))
    theta_rate = np.zeros((model.n_bodies, 10))
    theta_rate[-1] = phi_from_mass_com_inertia(0.8, np.array([0.0, 0.0, 0.05]),
                                               np.diag([2e-3, 2e-3, 1e-3]))
    psi0 = 0.01 * rng.normal(size=(model.n_bodies, 12))
    psi_rate = 0.02 * rng.normal(size=(model.n_bodies, 12))
    schedule = []  # (wall offset [s], order, kind, k)
    for k in range(N_SAMPLES):
        schedule.append((k * PERIOD, 1, "joint", k))
        if k % 2 == 0 or k == N_SAMPLES - 1:  # Θ/Ψ at every other stamp: interpolated
            schedule.append((k * PERIOD + rng.uniform(0.0, 0.02), int(rng.integers(2)),
                             "loads", k))
    schedule.sort()
    return t0, t, q, qd, theta_rate, psi0, psi_rate, schedule


def run(tester, node, model, stamped: bool, rates: bool, seed: int):
    """Stream one jittered scenario; (max relative τ error, samples compared)."""
    ns = node.namespace
    names = model.body_names
    t0, t, q, qd, theta_rate, psi0, psi_rate, schedule = scenario(model, seed)
    theta0 = np.array(model.theta_nominal)

    def theta_at(s):
        return theta0 + theta_rate * (s - t0)

    def psi_at(s):
        return psi0 + psi_rate * (s - t0)

    pubs = {"joint": tester.publisher(JointState, f"{ns}/joint_states"),
            "reference": tester.publisher(JointTrajectory, f"{ns}/reference")}
    if stamped:
        pubs["theta"] = tester.publisher(JointState, f"{ns}/inertial_parameters_stamped")
        pubs["psi"] = tester.publisher(JointState, f"{ns}/psi_stamped")
    else:
        for topic in ("inertial_parameters", "inertial_parameter_rates", "psi", "psi_rates"):
            pubs[topic] = tester.publisher(Float64MultiArray, f"{ns}/{topic}")
    torques = tester.collect(JointState, f"{ns}/generalized_torques")
    tester.wait_matched(list(pubs.values()), START_TIMEOUT, node)
    # q̈ from a reference: constant over the run, the same for the node and the check
    qdd = np.linspace(-1.0, 1.0, model.nv)
    reference = JointTrajectory(joint_names=list(model.joint_names))
    reference.header.stamp = Time(sec=int(t0) - 10)
    reference.points = [JointTrajectoryPoint(accelerations=[float(a) for a in qdd],
                                             time_from_start=Duration(sec=s))
                        for s in (0, 100)]
    pubs["reference"].publish(reference)
    tester.spin_for(0.5)

    def publish_loads(k, s=None):
        s = float(t[k]) if s is None else s
        if stamped:
            pubs["theta"].publish(cv.body_joint_state(
                s, names, "phi", theta_at(s), theta_rate if rates else None))
            pubs["psi"].publish(cv.body_joint_state(s, names, "psi", psi_at(s),
                                                    psi_rate if rates else None))
        else:
            pubs["inertial_parameters"].publish(cv.body_array(theta_at(s), names, "phi"))
            pubs["psi"].publish(cv.body_array(psi_at(s), names, "psi"))
            if rates:
                pubs["inertial_parameter_rates"].publish(
                    cv.body_array(theta_rate, names, "phi"))
                pubs["psi_rates"].publish(cv.body_array(psi_rate, names, "psi"))

    # Θ/Ψ one step before the first sample: a series with no sample yet is not waited
    # for (a sample before any Θ takes the URDF's), so prime it on the same line
    publish_loads(0, float(t[0]) - STEP)
    tester.spin_for(0.3)
    start = time.monotonic() + 0.05
    for offset, _, kind, k in schedule:
        while time.monotonic() < start + offset:
            tester.executor.spin_once(timeout_sec=max(0.0, start + offset - time.monotonic()))
        if kind == "joint":
            msg = JointState(name=list(model.joint_names))
            msg.header.stamp = cv.seconds_to_stamp(float(t[k]))
            msg.position = [float(x) for x in q[k]]
            msg.velocity = [float(x) for x in qd[k]]
            pubs["joint"].publish(msg)
        else:
            publish_loads(k)
    keys = {cv.seconds_to_stamp(float(s)).nanosec: k for k, s in enumerate(t)}
    tester.spin_until(lambda: len({m.header.stamp.nanosec for m in torques
                                   if m.header.stamp.nanosec in keys}) >= N_SAMPLES - 2,
                      20.0, "the torques of every sample", node)
    tester.spin_for(0.3)
    errors = []
    for msg in torques:
        k = keys.get(msg.header.stamp.nanosec)
        if k is None:
            continue
        s = float(t[k])
        # without published rates the rate is the slope of the segment, exact here
        want = model.inverse_dynamics(q[k], qd[k], qdd, theta_at(s), theta_rate,
                                      psi_at(s), psi_rate).tau
        errors.append(np.abs(np.asarray(msg.effort) - want).max() / np.abs(want).max())
    for pub in pubs.values():
        tester.node.destroy_publisher(pub)
    return float(np.max(errors)), len(errors)


@pytest.mark.parametrize("rates", [True, False], ids=["rates", "no-rates"])
def test_tau_by_stamp_over_dds_equals_eq39_with_the_exact_theta(tester, node, panda, rates):
    error, count = run(tester, node, panda, stamped=True, rates=rates, seed=1 if rates else 2)
    print(f"stamped topics ({'with' if rates else 'without'} rates): max relative τ error "
          f"{error:.2e} over {count} samples")
    assert count >= N_SAMPLES - 2  # best effort on one host: a sample may be lost
    assert error <= 1e-9


def test_the_arrival_rule_over_dds_under_the_same_jitter_is_off(tester, panda, tmp_path):
    process = NodeProcess(
        "dynamics_node", unique_namespace("arrival"), tmp_path,
        {"cache_dir": str(tmp_path), "jacobian_samples": 256, "rate_timeout": 0.0,
         "urdf_path": find_example_robot_urdf("panda")})
    try:
        error, count = run(tester, process, panda, stamped=False, rates=True, seed=2)
    finally:
        assert process.stop() == 0
    print(f"legacy topics, arrival rule (with rates): max relative τ error {error:.2e} "
          f"over {count} samples")
    assert error > 1e-6


def test_late_theta_beyond_the_window_is_reported(tester, node, panda):
    """Θ that stops arriving: samples are answered after theta_window, and counted late."""
    diagnostics = tester.collect(DiagnosticArray, f"{node.namespace}/diagnostics")
    joint = tester.publisher(JointState, f"{node.namespace}/joint_states")
    tester.wait_matched([joint], START_TIMEOUT, node)
    t0 = float(int(time.time())) + 100.0  # after every stamp of the runs above
    for k in range(100):  # 0.39 s of stamps, no Θ after them: 0.25 s window passed
        msg = JointState(name=list(panda.joint_names))
        msg.header.stamp = cv.seconds_to_stamp(t0 + STEP * k)
        msg.position = [0.1] * panda.nv
        msg.velocity = [0.0] * panda.nv
        joint.publish(msg)
        tester.spin_for(0.002)

    def late():
        for array in diagnostics:
            for status in array.status:
                if (short_name(status.name) == "dynamics_node: theta pairing"
                        and status.level == b"\x01"):
                    return status
        return None

    status = tester.spin_until(late, 10.0, "a theta pairing WARN", node)
    values = {v.key: v.value for v in status.values}
    assert int(values["samples late"]) > 0, values
