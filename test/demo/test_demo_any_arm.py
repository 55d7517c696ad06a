"""The demo on any arm: the UR5 with no option but --urdf, the Panda's scenarios.

What must hold: the run ends (exit 0); the load sits on the scenario's link or, when
the URDF does not have it, the chain's tool flange; a fluid container's axis is vertical
at the start pose (checked from the placement written to scenario.yaml, through the
model's forward kinematics); every alarm says whether it came before the loading
started, and the lead time counts only an alarm during or after loading. The default
output folder is the working directory's ``demo_output/``. Durations are short.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_tv_dynamics.demo import scenario_file, start_pose, tool_link
from robot_tv_dynamics.demo.scenario import link_rotation
from robot_tv_dynamics.inertia import rpy_to_rotation
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.paths import example_robot_urdf

UR5 = "ur_description/urdf/ur5_robot.urdf"
REPO = Path(__file__).resolve().parents[2]


def demo(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = os.environ.copy()
    env.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "robot_tv_dynamics.cli", "demo",
                           "--no-progress", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def container_axis_tilt_deg(model: RobotModel, scenario: Path) -> float:
    data = yaml.safe_load(scenario.read_text())
    rotation = rpy_to_rotation(list(data["container"]["origin"]["rpy"]))
    axis = link_rotation(model, data["link"], start_pose(model)) @ rotation[:, 2]
    return math.degrees(math.acos(min(1.0, axis[2] / np.linalg.norm(axis))))


def check_alarms(summary: dict) -> None:
    start = summary["load"]["loading_start_s"]
    assert start is not None and start > 0
    for name, est in summary["estimators"].items():
        for alarm in est["alarms"]:
            assert alarm["phase"] == ("before loading" if alarm["t"] < start
                                      else "during or after loading"), (name, alarm)
        assert est["alarms_before_loading"] == [a for a in est["alarms"] if a["t"] < start]
        during = [a for a in est["alarms"] if a["t"] >= start]
        if est["lead_time_s"] is not None:
            assert during, f"{name}: a lead time without an alarm during loading"
            crossing = est["first_nonpositive_lambda_min_M_hat_t"]
            assert est["lead_time_s"] == pytest.approx(crossing - during[0]["t"], abs=1e-3)


def test_the_tool_flange_is_the_last_link_below_the_last_joint():
    assert tool_link(example_robot_urdf(UR5).read_text()) == "tool0"
    assert tool_link(example_robot_urdf().read_text()) == "panda_hand_tcp"


@pytest.mark.parametrize("scenario", ["fill", "drain"])
def test_the_container_is_placed_upright_at_the_start_pose_on_both_arms(scenario, tmp_path):
    for urdf in (example_robot_urdf(), example_robot_urdf(UR5)):
        model = RobotModel.from_urdf(urdf)
        setup = scenario_file(scenario, "", tmp_path / urdf.stem, model, urdf.read_text())
        assert container_axis_tilt_deg(model, setup.path) < 0.01
        assert setup.tilt_deg is not None and setup.tilt_deg < 0.01
    assert setup.link == "tool0" and setup.link_source == "tool flange"
    assert setup.tilt_file_deg == pytest.approx(90.0, abs=0.01)  # the Panda's file on the UR5


@pytest.mark.ros
@pytest.mark.slow
def test_demo_on_the_ur5_with_only_urdf_runs_to_the_end_upright(tmp_path):
    urdf = example_robot_urdf(UR5)
    result = demo(tmp_path, "--urdf", str(urdf), "--duration", "3")
    assert result.returncode == 0, result.stderr[-3000:]
    out = tmp_path / "demo_output"  # the working directory's, not the repo's
    summary = json.loads((out / "summary.json").read_text())
    assert summary["load"]["link"] == "tool0"
    assert summary["load"]["container_tilt_deg"] < 0.01
    model = RobotModel.from_urdf(urdf)
    assert container_axis_tilt_deg(model, out / "scenario.yaml") < 0.01
    check_alarms(summary)
    assert "loading starts at" in result.stderr


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("scenario,duration", [("fill", "3"), ("drain", "2"), ("grasp", "2")])
def test_demo_on_the_panda_runs_each_scenario_with_alarms_told_apart(scenario, duration,
                                                                     tmp_path):
    result = demo(tmp_path, "--scenario", scenario, "--duration", duration,
                  "--out", "out")
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["load"]["link"] == "panda_hand"
    if scenario in ("fill", "drain"):
        model = RobotModel.from_urdf(example_robot_urdf())
        path = Path(summary["load"]["file"])
        assert container_axis_tilt_deg(model, path) < 0.01
    check_alarms(summary)
