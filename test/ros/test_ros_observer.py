"""dynamics_node's momentum observers over real DDS, on sim_node's fill with a collision.

One run of the simulated Panda: a 40 N push on panda_link7 from 1.0 s to 1.3 s (a
collision: it acts on the arm, not in the published efforts), then the cup fills from
2.0 s to 4.0 s. The generalized observer (Θ(t), Ψ(t) from sim_node's topics) must see
the push and nothing of the fill; the classical one (the URDF's Θ) sees the push and
takes the fill for a collision too.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from support.particle_lagrangian import find_example_robot_urdf
from support.ros_harness import LATCHED, NodeProcess, RosClient, short_name, unique_namespace

from robot_tv_dynamics.ros import conversions as cv

pytestmark = [pytest.mark.ros, pytest.mark.slow]

THRESHOLD = 1.0  # [N·m] per joint
PUSH = (1.0, 1.3)  # [s] simulated time
FILL = (2.0, 4.0)
GAIN = 50.0  # [1/s]: the residual's time constant is 20 ms


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    logs = tmp_path_factory.mktemp("observer_logs")
    urdf = find_example_robot_urdf("panda")
    ns = unique_namespace("obs")
    dynamics = NodeProcess("dynamics_node", ns, logs, {
        "urdf_path": urdf, "observer_model": "both", "observer_gain": GAIN,
        "contact_threshold": THRESHOLD, "diagnostics_period": 0.1,
        "jacobian_samples": 64, "bounds_time_limit": 1.0, "cache_dir": ""})
    client = RosClient()
    generalized = client.collect(JointState, f"{ns}/external_torques")
    classical = client.collect(JointState, f"{ns}/external_torques_classical")
    torques = client.collect(JointState, f"{ns}/generalized_torques")
    diagnostics = client.collect(DiagnosticArray, f"{ns}/diagnostics")
    info = client.collect(String, f"{ns}/simulation_info", LATCHED)
    sim = None
    try:
        client.spin_until(lambda: "ready" in dynamics.output(), 120.0, "dynamics_node ready",
                          dynamics)
        # this client hears every output of dynamics_node before the simulation starts
        client.wait_readers_matched([f"{ns}/{topic}" for topic in (
            "external_torques", "external_torques_classical", "generalized_torques",
            "diagnostics")], 60.0, dynamics)
        # joint_states' one subscriber is dynamics_node (2 was never reached: the
        # simulation then waited its whole 60 s wait_timeout before stepping)
        sim = NodeProcess("sim_node", ns, logs, {
            "urdf_path": urdf, "loading": "fill", "duration": 4.6, "publish_rate": 100.0,
            "wait_for_subscribers": 1, "wait_timeout": 60.0,
            "collision_link": "panda_link7", "collision_force_z": -40.0,
            "collision_start": PUSH[0], "collision_duration": PUSH[1] - PUSH[0]})
        client.spin_until(lambda: sim.process.poll() is not None, 120.0, "the simulation",
                          sim)
        client.spin_for(0.5)
    finally:
        sim_code = sim.stop() if sim is not None else None
        code = dynamics.stop()
        client.close()
    assert sim_code == 0, sim.output()[-3000:]
    assert code == 0 and "FATAL" not in dynamics.output(), dynamics.output()[-3000:]
    epoch = json.loads(info[-1].data)["epoch"]
    return {"generalized": generalized, "classical": classical, "torques": torques,
            "diagnostics": diagnostics, "epoch": epoch}


def residuals(messages, epoch):
    t = np.array([cv.stamp_to_seconds(m.header.stamp) - epoch for m in messages])
    r = np.array([np.asarray(m.effort) for m in messages])
    return t, r


def test_every_answered_sample_has_both_residuals(run):
    assert len(run["torques"]) > 300
    assert len(run["generalized"]) == len(run["torques"]) == len(run["classical"])


def test_generalized_observer_sees_the_push_and_not_the_fill(run):
    t, r = residuals(run["generalized"], run["epoch"])
    peak = np.abs(r).max(axis=1)
    during_push = (t > PUSH[0] + 0.1) & (t < PUSH[1])
    fill = (t > FILL[0]) & (t < FILL[1] + 0.5)
    assert peak[during_push].min() > THRESHOLD, peak[during_push].min()
    assert peak[fill].max() < 0.2 * THRESHOLD, peak[fill].max()  # measured: ~0.02 N·m
    first = t[(peak > THRESHOLD) & (t >= PUSH[0])][0]
    assert first - PUSH[0] < 0.05, first  # 1/K_O = 20 ms lag plus one 10 ms sample


def test_classical_observer_takes_the_fill_for_a_collision(run):
    t, r = residuals(run["classical"], run["epoch"])
    peak = np.abs(r).max(axis=1)
    before = t < PUSH[0]
    fill = (t > FILL[0]) & (t < FILL[1] + 0.5)
    assert peak[before].max() < 0.2 * THRESHOLD  # same Θ as the truth before anything
    assert peak[fill].max() > THRESHOLD, peak[fill].max()  # the false collision


def test_contact_status_on_diagnostics(run):
    levels: dict[str, list[tuple[float, int]]] = {}
    for array in run["diagnostics"]:
        for status in array.status:
            if short_name(status.name).startswith("dynamics_node: contact"):
                t = cv.stamp_to_seconds(array.header.stamp) - run["epoch"]
                levels.setdefault(short_name(status.name), []).append((t, cv.status_level(status)))
    generalized = levels["dynamics_node: contact"]
    classical = levels["dynamics_node: contact (classical)"]
    assert any(level == 2 for t, level in generalized if PUSH[0] < t < PUSH[1] + 0.2)
    assert not any(level == 2 for t, level in generalized if FILL[0] + 0.1 < t < FILL[1])
    assert any(level == 2 for t, level in classical if FILL[0] < t < FILL[1] + 0.5)
