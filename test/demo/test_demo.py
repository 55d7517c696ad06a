"""A short demo end to end over real DDS: sim, dynamics and monitor nodes, the bag, the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

REQUIRED = ("/joint_states", "/inertial_parameters", "/generalized_torques", "/diagnostics")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    env = os.environ.copy()
    env.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))
    result = subprocess.run(
        [sys.executable, "-m", "robot_tv_dynamics.demo", "--duration", "3", "--out", str(out),
         "--no-progress"],
        env=env, capture_output=True, text=True, timeout=240)
    return out, result


def test_demo_writes_the_bag_report_and_summary(demo_run):
    out, result = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("run.mcap", "report.png", "summary.json"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name


def test_bag_is_readable_by_rosbags_with_the_required_topics(demo_run):
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    out, result = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    counts: dict[str, int] = {}
    store = get_typestore(Stores.ROS2_JAZZY)
    with AnyReader([out / "run.mcap"], default_typestore=store) as reader:
        for connection, _, raw in reader.messages():
            reader.deserialize(raw, connection.msgtype)
            counts[connection.topic] = counts.get(connection.topic, 0) + 1
    for topic in REQUIRED:
        assert counts.get(topic, 0) > 0, (topic, counts)


def test_summary_has_the_keys(demo_run):
    out, result = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads((out / "summary.json").read_text())
    for key in ("scenario", "duration_s", "real_time_factor", "bodies", "estimators"):
        assert key in data
    assert data["scenario"] == "fill" and data["duration_s"] > 2.5
    for body in data["bodies"]:
        assert {"name", "inf_mu", "sup_nu"} <= set(body)
    for name in ("classical", "projected"):
        est = data["estimators"][name]
        for key in ("alarms", "min_lambda_min_M_hat", "alpha1", "lead_time_s"):
            assert key in est
        for alarm in est["alarms"]:
            assert {"t", "body", "kind"} <= set(alarm)

def test_default_scenario_shows_the_papers_warning(demo_run):
    """Classical: alarm, then λ_min(M(q, Θ̂)) ≤ 0 later; projected: no alarm, ≥ α₁ > 0."""
    out, _ = demo_run
    data = json.loads((out / "summary.json").read_text())
    classical, projected = data["estimators"]["classical"], data["estimators"]["projected"]
    assert classical["alarms"], "the classical estimate must lose uniform consistency"
    assert all(alarm["body"] == "panda_link7" for alarm in classical["alarms"])
    assert classical["min_lambda_min_M_hat"] <= 0
    assert classical["lead_time_s"] is not None and classical["lead_time_s"] > 0
    assert classical["alpha1"] is None  # inf μ̂ < 0: Theorem 2 gives no bound
    assert projected["alarms"] == []
    assert projected["alpha1"] is not None and projected["alpha1"] > 0
    assert projected["min_lambda_min_M_hat"] >= projected["alpha1"]


def test_status_names_on_diagnostics_are_told_apart_by_the_prefix():
    from robot_tv_dynamics.demo import TRUTH, status_prefix, status_source

    assert status_prefix("classical") == "estimates/classical"
    assert status_source("estimates/classical: panda_link7") == ("classical", "panda_link7")
    assert status_source("estimates/projected: monitor_projected: input") == (
        "projected", "monitor_projected: input")
    assert status_source("panda_link7") == (TRUTH, "panda_link7")
    assert status_source("dynamics_node: input") == (TRUTH, "dynamics_node: input")
    assert status_source("estimates/other: panda_link7") == (
        TRUTH, "estimates/other: panda_link7")


def test_every_monitor_reports_on_the_shared_diagnostics_with_its_prefix(demo_run):
    """One /diagnostics in the bag with the three monitors' statuses; live alarms read it."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    from robot_tv_dynamics.demo import RECORDED

    out, result = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    assert not [topic for topic in RECORDED if topic.endswith("/diagnostics")
                and topic != "/diagnostics"]
    names: set[str] = set()
    with AnyReader([out / "run.mcap"], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as r:
        assert "/estimates/classical/diagnostics" not in {c.topic for c in r.connections}
        for connection, _, raw in r.messages():
            if connection.topic == "/diagnostics":
                names |= {s.name for s in r.deserialize(raw, connection.msgtype).status}
    for prefix in ("", "estimates/classical: ", "estimates/projected: "):
        assert f"{prefix}panda_link7" in names, sorted(names)
    assert {"estimates/classical: monitor_classical: input", "monitor_truth: input",
            "dynamics_node: input"} <= names, sorted(names)
    data = json.loads((out / "summary.json").read_text())
    classical, projected = data["estimators"]["classical"], data["estimators"]["projected"]
    assert {alarm["body"] for alarm in classical["live_alarms"]} == {"panda_link7"}
    assert projected["live_alarms"] == []


def test_dynamics_node_reproduces_the_applied_torque(demo_run):
    """τ of eq. (39) from the node (true Θ, Θ̇, Ψ, Ψ̇, simulator q̈) = the sim's applied τ.

    Float64MultiArray carries no stamp: a joint_states sample the node handles before the
    same tick's Θ/Ψ arrive uses the previous tick's. Samples before the loading starts
    (Θ constant) must all agree; overall most must.
    """
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    out, result = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    store = get_typestore(Stores.ROS2_JAZZY)
    applied, computed = {}, {}
    with AnyReader([out / "run.mcap"], default_typestore=store) as reader:
        for connection, _, raw in reader.messages():
            if connection.topic not in ("/joint_states", "/generalized_torques"):
                continue
            msg = reader.deserialize(raw, connection.msgtype)
            key = (msg.header.stamp.sec, msg.header.stamp.nanosec)
            target = applied if connection.topic == "/joint_states" else computed
            target[key] = np.asarray(msg.effort)
    common = sorted(set(applied) & set(computed))
    assert len(common) > 20
    epoch = json.loads(_info(out))["epoch"]
    times = np.array([sec + 1e-9 * nsec - epoch for sec, nsec in common])
    errors = np.array([np.abs(applied[k] - computed[k]).max() for k in common])
    before_loading = times < 1.95  # the fill starts at 2 s
    assert before_loading.sum() > 10
    assert errors[before_loading].max() < 1e-8, errors[before_loading].max()
    assert np.mean(errors < 1e-8) > 0.8, np.quantile(errors, [0.5, 0.9, 1.0])


def _info(out: Path) -> str:
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    with AnyReader([out / "run.mcap"], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as r:
        for connection, _, raw in r.messages():
            if connection.topic == "/simulation_info":
                return r.deserialize(raw, connection.msgtype).data
    raise AssertionError("no /simulation_info")
