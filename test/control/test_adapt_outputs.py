"""``adapt --bag`` and ``adapt --suite``: the MCAP read back, the suite's table and claim."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.cli import main
from robot_tv_dynamics.control.setups import initial_estimate
from robot_tv_dynamics.control.suite import COLUMNS, natural_definiteness, projection_line
from robot_tv_dynamics.inertia import consistency_margin
from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader
from robot_tv_dynamics.loading import load_loading_process
from robot_tv_dynamics.paths import example_robot_urdf, package_config_dir

UR5 = str(example_robot_urdf("ur_description/urdf/ur5_robot.urdf"))


def _stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def test_adapt_bag_holds_the_runs_joint_states_torques_and_estimates(tmp_path):
    bag = tmp_path / "run.mcap"
    code = main(["adapt", "--controller", "natural", "--scenario", "release", "--urdf", UR5,
                 "--duration", "0.3", "--out", str(tmp_path / "out"), "--bag", str(bag)])
    assert code == 0
    model = RobotModel.from_urdf(UR5)
    topics = ("/joint_states", "/reference_joint_states", "/inertial_parameters_stamped",
              "/estimates/controller/inertial_parameters_stamped")
    got: dict[str, list] = {t: [] for t in topics}
    with open_bag(bag) as recording:
        assert set(recording.topics) == set(topics)
        assert all(kind == "sensor_msgs/msg/JointState" for kind in recording.topics.values())
        for topic, log_time, msg in recording.messages(list(topics)):
            assert abs(log_time * 1e-9 - _stamp(msg)) < 1e-9
            got[topic].append(msg)
    n = len(got["/joint_states"])
    assert n == 16  # 0.3 s recorded at 50 Hz, both ends included
    assert all(len(v) == n for v in got.values())
    stamps = [_stamp(m) for m in got["/joint_states"]]
    assert stamps[0] == pytest.approx(100.0) and np.allclose(np.diff(stamps), 0.02)
    first = got["/joint_states"][0]
    assert list(first.name) == list(model.joint_names)
    assert len(first.effort) == model.nv and np.all(np.isfinite(first.effort))
    # the torque holds the UR5 up: of the order of its gravity torque at the start pose
    q0 = np.array(first.position)
    gravity = model.inverse_dynamics(q0, np.zeros(model.nv), np.zeros(model.nv),
                                     model.theta_nominal).tau
    assert np.abs(np.array(first.effort) - gravity).max() < 0.5 * np.abs(gravity).max()
    truth = BodyVectorReader("truth", model.body_names, "phi")
    estimate = BodyVectorReader("estimate", model.body_names, "phi")
    _, theta0, theta_dot0 = truth.read(got["/inertial_parameters_stamped"][0])
    assert theta0 is not None and theta_dot0 is not None
    body = model.link_attachment("tool0").body
    # the release file's block: 0.8 kg held at the start, on the flange's body
    # (the body itself is the unknown truth: its own mass ±30 % of 0.19 kg)
    assert theta0[body, 0] - model.theta_nominal[body, 0] == pytest.approx(0.8, abs=0.06)
    hats = [estimate.read(m)[1] for m in got["/estimates/controller/inertial_parameters_stamped"]]
    # Θ̂ starts at the known estimate (URDF + the held block) and adapts
    assert np.allclose(hats[0], initial_estimate(
        model, load_loading_process(tmp_path / "out" / "scenario.yaml")), atol=1e-3)
    assert np.abs(hats[-1] - hats[0]).max() > 1e-6


def test_the_release_scenario_holds_the_block_then_lets_it_go():
    process = load_loading_process(package_config_dir() / "loading" / "release.yaml")
    assert process.state(1.9).phi[0] == pytest.approx(0.8)
    assert process.state(2.2).phi[0] == pytest.approx(0.0, abs=1e-12)


def test_the_wrong_initial_estimate_is_consistent_and_far_from_the_urdf():
    model = RobotModel.from_urdf(UR5)
    wrong = initial_estimate(model, wrong=True)
    nominal = model.theta_nominal
    massive = nominal[:, 0] > 0
    assert np.all(np.atleast_1d(consistency_margin(wrong))[massive] > 0.0)
    ratio = wrong[massive, 0] / nominal[massive, 0]
    assert np.all((ratio > 0.5) & (ratio < 1.5)) and np.abs(ratio - 1.0).max() > 0.3


def test_the_suite_writes_its_table_and_asserts_the_natural_laws_definiteness(tmp_path):
    code = main(["adapt", "--suite", "--arms", "ur5", "--scenarios", "wrong_estimate,release",
                 "--controllers", "natural,slotine-li", "--duration", "0.2",
                 "--out", str(tmp_path)])
    assert code == 0
    with (tmp_path / "suite.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == COLUMNS
    # wrong_estimate (no load: one plant) + release on both plants, × 2 controllers
    assert [(r["scenario"], r["plant"], r["controller"]) for r in rows] == [
        ("wrong_estimate", "generalized", "natural"), ("wrong_estimate", "generalized",
                                                       "slotine-li"),
        ("release", "generalized", "natural"), ("release", "generalized", "slotine-li"),
        ("release", "classical", "natural"), ("release", "classical", "slotine-li")]
    for row in rows:
        if row["controller"] == "natural":
            assert float(row["min_eig_J_hat"]) > 0.0
            assert int(row["consistency_violations"]) == 0
        else:
            assert row["min_eig_J_hat"] == ""  # the gradient law has no Ĵ
    text = (tmp_path / "suite.md").read_text()
    assert "natural laws: Ĵ positive definite at every step of all 3 runs" in text
    assert (tmp_path / "suite.png").stat().st_size > 10_000


def test_the_definiteness_check_names_a_run_that_lost_it():
    rows = [{"arm": "ur5", "scenario": "fill", "plant": "classical", "controller": "natural",
             "j_hat_positive_definite": False, "min_eig_J_hat": -1e-3},
            {"arm": "ur5", "scenario": "fill", "plant": "classical",
             "controller": "slotine-li", "j_hat_positive_definite": None,
             "min_eig_J_hat": None}]
    ok, line = natural_definiteness(rows)
    assert not ok and "NOT positive definite" in line and "ur5 fill classical natural" in line
    ok, line = natural_definiteness(rows[1:])
    assert ok and "no natural-law run" in line


def test_the_projection_line_says_where_projected_is_natural_and_where_not():
    base = {"arm": "ur5", "plant": "generalized", "excitation": "persistent",
            "tracking_rms_rad": 1e-3, "inf_margin_every_step": 2e-4}
    rows = [{**base, "scenario": "fill", "controller": "natural"},
            {**base, "scenario": "fill", "controller": "projected"},
            {**base, "scenario": "drain", "controller": "natural"},
            {**base, "scenario": "drain", "controller": "projected",
             "inf_margin_every_step": 5e-5}]
    line = projection_line(rows)
    assert "in 1 of 2 cases" in line
    assert "differ in: ur5 drain generalized (inf μ: projected 5e-05, natural 0.0002)" in line
    assert "no projected run" in projection_line(rows[:1])
