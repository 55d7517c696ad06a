"""``robot-tv-dynamics evaluate``: cli/evaluate.py (run() in-process and as a subprocess)."""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from support.examples import EXAMPLES, UR5_JOINTS, ur5_move, write_bag

from robot_tv_dynamics.cli import evaluate as evaluate_cli

REPO = Path(__file__).resolve().parents[2]


def run_cli(argv, capsys):
    parser = argparse.ArgumentParser(prog="robot-tv-dynamics evaluate")
    evaluate_cli.add_arguments(parser)
    code = evaluate_cli.run(parser.parse_args(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def subprocess_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"]
                                     if env.get("PYTHONPATH") else "")
    return env


def run_subprocess(argv):
    code = ("import sys; from robot_tv_dynamics.cli import main; "
            f"sys.exit(main({['evaluate', *argv]!r}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=subprocess_env(), cwd=REPO, timeout=120)


def write_payload(path, mass):
    path.write_text(yaml.safe_dump({
        "link": "tool0", "mass": mass, "com": [0.0, 0.0, 0.08],
        "inertia": {"ixx": 0.003 * mass, "iyy": 0.003 * mass, "izz": 0.0017 * mass,
                    "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}}))
    return path


@pytest.fixture
def ur5_args(urdf_paths):
    return ["--urdf", urdf_paths["ur5"], "--trajectory", str(EXAMPLES / "ur5_trajectory.yaml"),
            "--payload", str(EXAMPLES / "ur5_payload.yaml")]


def test_table_reports_peaks_violations_and_both_max_payloads(ur5_args, capsys):
    code, out, err = run_cli(ur5_args, capsys)
    assert code == 0, err
    for joint in UR5_JOINTS:
        assert joint in out
    assert "violations: none" in out
    assert "max payload (eq. 39 along the trajectory" in out
    assert "MoveIt static max payload" in out
    assert "shoulder_lift_joint saturates" in out


def test_json_is_one_object_with_points_violations_and_max_payload(ur5_args, capsys):
    code, out, _ = run_cli([*ur5_args, "--json"], capsys)
    assert code == 0
    data = json.loads(out)  # exactly one JSON document on stdout
    assert len(data["points"]) == 21
    point = data["points"][5]
    assert point["t"] == pytest.approx(0.5)
    assert len(point["effort"]) == 6
    assert set(point["terms"]) >= {"inertia", "coriolis", "gravity"}
    assert data["violations"] == []
    assert data["max_payload_mass"] > 0
    assert data["max_payload_joint"] == "shoulder_lift_joint"
    assert data["moveit_static_max_payload_mass"] > data["max_payload_mass"]
    assert data["payload"]["link"] == "tool0"


def test_heavy_payload_exits_1_and_lists_violations(urdf_paths, tmp_path, capsys):
    payload = write_payload(tmp_path / "heavy.yaml", 15.0)
    code, out, _ = run_cli(["--urdf", urdf_paths["ur5"], "--trajectory",
                            str(EXAMPLES / "ur5_trajectory.yaml"), "--payload", str(payload),
                            "--json"], capsys)
    assert code == evaluate_cli.EXIT_VIOLATION
    data = json.loads(out)
    assert data["violations"]
    assert {"joint", "t", "ratio"} <= set(data["violations"][0])
    assert "shoulder_lift_joint" in {v["joint"] for v in data["violations"]}
    assert all(v["ratio"] > 1.0 for v in data["violations"])
    code, out, _ = run_cli(["--urdf", urdf_paths["ur5"], "--trajectory",
                            str(EXAMPLES / "ur5_trajectory.yaml"), "--payload", str(payload)],
                           capsys)
    assert code == 1 and "EXCEEDS" in out and "shoulder_lift_joint:" in out


def test_csv_and_plot_are_written(ur5_args, tmp_path, capsys):
    csv_path, png_path = tmp_path / "out.csv", tmp_path / "out.png"
    code, out, _ = run_cli([*ur5_args, "--json", "--csv", str(csv_path), "--plot",
                            str(png_path)], capsys)
    assert code == 0
    data = json.loads(out)
    with csv_path.open() as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == 21 * 6
    assert {"t", "joint", "effort", "ratio"} <= set(rows[0])
    row = rows[5 * 6 + 1]
    assert row["joint"] == "shoulder_lift_joint"
    assert float(row["t"]) == pytest.approx(0.5)
    assert float(row["effort"]) == pytest.approx(data["points"][5]["effort"][1])
    assert float(row["ratio"]) == pytest.approx(abs(float(row["effort"])) / 150.0)
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png_path.stat().st_size > 10_000


def test_rosbag_input_through_the_cli(urdf_paths, tmp_path, capsys):
    trajectory = ur5_move(n=11)
    write_bag(tmp_path / "bag", trajectory, "mcap")
    code, out, err = run_cli(["--urdf", urdf_paths["ur5"], "--trajectory",
                              str(tmp_path / "bag"), "--payload",
                              str(EXAMPLES / "ur5_payload.yaml"), "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert [p["t"] for p in data["points"]] == pytest.approx(trajectory.time_from_start)


def test_loading_process_payload_through_the_cli(urdf_paths, capsys):
    code, out, err = run_cli([
        "--urdf", urdf_paths["panda"], "--trajectory", str(EXAMPLES / "panda_trajectory.yaml"),
        "--payload", str(REPO / "config" / "loading" / "grasp.yaml"), "--time-offset", "0.5",
        "--hold", "panda_finger_joint1=0.02", "--hold", "panda_finger_joint2=0.02", "--json"],
        capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["payload"]["link"] == "panda_hand"
    assert data["points"][-1]["payload_mass"] == pytest.approx(0.8)
    assert data["points"][0]["positions"][7] == pytest.approx(0.02)


def test_locked_fingers_give_the_efforts_of_the_held_fingers(urdf_paths, capsys):
    """Fingers locked at 2 cm = fingers held there at rest: the arm's efforts are equal."""
    common = ["--urdf", urdf_paths["panda"], "--trajectory",
              str(EXAMPLES / "panda_trajectory.yaml"), "--payload",
              str(EXAMPLES / "panda_payload.yaml"), "--json"]
    code, out, err = run_cli(common + ["--hold", "panda_finger_joint1=0.02",
                                       "--hold", "panda_finger_joint2=0.02"], capsys)
    assert code == 0, err
    held = json.loads(out)
    code, out, err = run_cli(common + ["--lock", "panda_finger_joint1=0.02",
                                       "--lock", "panda_finger_joint2=0.02"], capsys)
    assert code == 0, err
    locked = json.loads(out)
    assert locked["locked_joints"] == {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}
    assert held["locked_joints"] == {}
    assert locked["joint_names"] == held["joint_names"][:7]
    for a, b in zip(locked["points"], held["points"], strict=True):
        np.testing.assert_allclose(a["effort"], b["effort"][:7], rtol=1e-10, atol=1e-10)
    assert locked["max_payload_mass"] == pytest.approx(held["max_payload_mass"], rel=1e-9)


@pytest.mark.parametrize(("argv", "expected"), [
    (["--lock", "panda_jiont1"], 'joint "panda_jiont1" is not in the URDF'),
    (["--lock", "panda_finger_joint1=0.5"], '"panda_finger_joint1": position 0.5 is outside'),
    (["--lock", "panda_finger_joint1=x"], "--lock: expected JOINT or JOINT=POSITION"),
])
def test_bad_lock_exits_2_with_one_error_line(urdf_paths, capsys, argv, expected):
    code, out, err = run_cli([
        "--urdf", urdf_paths["panda"], "--trajectory",
        str(EXAMPLES / "panda_trajectory.yaml"), *argv], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and expected in err and err.count("\n") == 1


@pytest.mark.parametrize(("case", "expected"), [
    ("unknown_joint", 'joint "elbow_jiont" is not in the URDF'),
    ("non_monotonic", "times must increase strictly; point 2"),
    ("payload_link", 'link "tool9" is not in the URDF'),
    ("missing_file", "no_such_trajectory.yaml"),
    ("bad_hold", "--hold"),
    ("bad_urdf", "does not specify limits"),
])
def test_bad_input_exits_2_with_one_error_line(urdf_paths, tmp_path, capsys, case, expected):
    trajectory = {"joint_names": UR5_JOINTS, "points": [
        {"positions": [0.0] * 6, "time_from_start": 0.0},
        {"positions": [0.1] * 6, "time_from_start": 1.0},
        {"positions": [0.2] * 6, "time_from_start": 2.0}]}
    payload = {"link": "tool0", "mass": 1.0}
    extra = []
    if case == "unknown_joint":
        trajectory["joint_names"] = [*UR5_JOINTS[:2], "elbow_jiont", *UR5_JOINTS[3:]]
    elif case == "non_monotonic":
        trajectory["points"][2]["time_from_start"] = 0.5
    elif case == "payload_link":
        payload["link"] = "tool9"
    elif case == "bad_hold":
        extra = ["--hold", "shoulder_pan_joint"]
    urdf = urdf_paths["ur5"]
    if case == "bad_urdf":  # urdfdom's own complaint ends up in the one error line
        urdf = tmp_path / "bad.urdf"
        urdf.write_text("<robot name='x'><link name='a'/><link name='b'/><joint name='j' "
                        "type='revolute'><parent link='a'/><child link='b'/></joint></robot>")
    traj_path = tmp_path / ("no_such_trajectory.yaml" if case == "missing_file" else "t.yaml")
    if case != "missing_file":
        traj_path.write_text(yaml.safe_dump(trajectory))
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(payload))
    code, out, err = run_cli(["--urdf", str(urdf), "--trajectory", str(traj_path),
                              "--payload", str(tmp_path / "p.yaml"), *extra], capsys)
    assert code == 2, err
    assert out == ""
    assert err.startswith("error: ")
    assert expected in err
    assert err.count("\n") == 1


def test_subprocess_bad_input_exit_code_without_traceback(urdf_paths, tmp_path):
    (tmp_path / "p.yaml").write_text(yaml.safe_dump({"link": "tool9", "mass": 1.0}))
    result = run_subprocess(["--urdf", urdf_paths["ur5"], "--trajectory",
                             str(EXAMPLES / "ur5_trajectory.yaml"), "--payload",
                             str(tmp_path / "p.yaml")])
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith('error: link "tool9" is not in the URDF')
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_missing_accelerations_are_noted_in_the_output(urdf_paths, tmp_path, capsys):
    t, q = np.linspace(0.0, 2.0, 21), np.linspace(0.0, 0.5, 21)
    trajectory = {"joint_names": UR5_JOINTS, "points": [
        {"positions": [float(x)] * 6, "velocities": [0.25] * 6,
         "time_from_start": {"sec": int(tk), "nanosec": int(round((tk % 1) * 1e9))}}
        for tk, x in zip(t, q, strict=True)]}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(trajectory))
    code, out, _ = run_cli(["--urdf", urdf_paths["ur5"], "--trajectory", str(path)], capsys)
    assert code == 0
    assert "note: accelerations were not given: derived by second-order finite differences" \
        in out
    assert "payload: none" in out


def test_subprocess_success_exit_code(ur5_args):
    result = run_subprocess([*ur5_args, "--json"])
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)


def test_wired_into_the_package_cli(ur5_args):
    """The package CLI runs it: ``python -m robot_tv_dynamics.cli evaluate``."""
    result = subprocess.run(
        [sys.executable, "-m", "robot_tv_dynamics.cli", "evaluate", *ur5_args, "--json"],
        capture_output=True, text=True, env=subprocess_env(), cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["max_payload_joint"] == "shoulder_lift_joint"
