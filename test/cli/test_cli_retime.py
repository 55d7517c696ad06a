"""``robot-tv-dynamics retime`` (cli/retime.py): via cli.main and as a subprocess."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from support.particle_lagrangian import find_example_robot_urdf

from robot_tv_dynamics import RobotModel, cli
from robot_tv_dynamics.cli import retime as command
from robot_tv_dynamics.evaluation import evaluate, load_payload, load_trajectory

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "config" / "examples"
LOADING = REPO / "config" / "loading"


def run_main(argv, capsys):
    code = cli.main(["retime", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def fast_ur5_trajectory(path, duration=0.7):
    """The example UR5 move squeezed into ``duration`` seconds (exceeds the limits)."""
    data = yaml.safe_load((EXAMPLES / "ur5_trajectory.yaml").read_text())
    total = 2.0
    k = duration / total
    for point in data["points"]:
        time = point["time_from_start"]
        t = (time["sec"] + 1e-9 * time["nanosec"]) * k
        point["time_from_start"] = t
        point["velocities"] = [v / k for v in point["velocities"]]
        point["accelerations"] = [a / k**2 for a in point["accelerations"]]
    path.write_text(yaml.safe_dump(data))
    return path


def heavy_payload(path, mass=6.0, link="tool0"):
    path.write_text(yaml.safe_dump({
        "link": link, "mass": mass, "com": [0.0, 0.0, 0.08],
        "inertia": {"ixx": 0.003 * mass, "iyy": 0.003 * mass, "izz": 0.0017 * mass}}))
    return path



def test_subcommand_is_registered_with_add_arguments_and_run():
    entry = cli.command_named("retime")
    assert entry is not None and entry.load() is command and entry.help
    assert callable(command.add_arguments) and callable(command.run)
    assert "retime" in cli.build_parser().format_help()


def test_json_summary_reports_durations_ratios_and_active_constraints(
        tmp_path, ur5_urdf, capsys):
    trajectory = fast_ur5_trajectory(tmp_path / "fast.yaml")
    payload = heavy_payload(tmp_path / "payload.yaml")
    out = tmp_path / "retimed.yaml"
    code, stdout, err = run_main(["--urdf", ur5_urdf, "--trajectory", str(trajectory),
                                  "--payload", str(payload), "--out", str(out), "--json"],
                                 capsys)
    assert code == 0, err
    report = json.loads(stdout)
    for key in ("duration_before", "duration_after", "peak_ratio_before", "peak_ratio_after",
                "peak_ratio_playback", "active_constraints", "binding_constraint",
                "uniform_scaling_duration", "within_limits", "runtime", "effort_limits"):
        assert key in report, key
    assert report["duration_before"] == pytest.approx(0.7)
    assert max(report["peak_ratio_before"].values()) > 1.0
    assert max(report["peak_ratio_after"].values()) <= 1.0 + 2e-3
    assert report["within_limits"] is True
    assert report["duration_after"] < report["uniform_scaling_duration"]
    binding = report["binding"]  # the binding constraint as a record, ratios before/after
    assert f'{binding["kind"]} {binding["joint"]}' == report["binding_constraint"]
    if binding["kind"] == "effort":
        assert binding["ratio_before"] == report["peak_ratio_before"][binding["joint"]]
        assert binding["ratio_after"] == report["peak_ratio_after"][binding["joint"]]
    else:
        assert binding["ratio_after"] == pytest.approx(
            report["peak_velocity_ratio_after"][binding["joint"]], rel=1e-12)
    # the written trajectory, read back and checked by evaluate on its own
    model = RobotModel.from_urdf(ur5_urdf)
    retimed = load_trajectory(out)
    result = evaluate(model, retimed, load_payload(payload), compute_max_payload=False)
    assert float(np.nanmax(result.effort_ratio)) <= 1.0 + 2e-3
    assert retimed.time_from_start[-1] == pytest.approx(report["duration_after"], abs=1e-6)
    original = load_trajectory(trajectory)  # every waypoint is an output point
    distance = np.min(np.linalg.norm(original.positions[:, None] - retimed.positions[None],
                                     axis=2), axis=1)
    assert np.max(distance) < 1e-9
    for key in ("duration_in", "duration_out", "duration_uniform_scaling", "max_effort_ratio"):
        assert isinstance(report[key], float), key
    assert report["duration_out"] == report["duration_after"]
    assert set(report["scaling"]) >= {"max_velocity_scaling_factor",
                                      "max_acceleration_scaling_factor"}
    assert all(set(entry) >= {"joint", "t"} for entry in report["saturating"])
    points = yaml.safe_load(out.read_text())["points"]
    assert set(points[0]) == {"positions", "velocities", "accelerations", "effort",
                              "time_from_start"}


def test_evaluate_accepts_the_retimed_output_with_exit_0(tmp_path, ur5_urdf, capsys):
    trajectory = fast_ur5_trajectory(tmp_path / "fast.yaml")
    payload = heavy_payload(tmp_path / "payload.yaml")
    out = tmp_path / "retimed.yaml"
    base = ["--urdf", ur5_urdf, "--payload", str(payload), "--json"]
    assert cli.main(["evaluate", *base, "--trajectory", str(trajectory)]) == 1
    capsys.readouterr()
    assert run_main([*base, "--trajectory", str(trajectory), "--out", str(out)], capsys)[0] == 0
    assert cli.main(["evaluate", *base, "--trajectory", str(out)]) == 0


def test_table_and_plot(tmp_path, ur5_urdf, capsys):
    trajectory = fast_ur5_trajectory(tmp_path / "fast.yaml")
    plot = tmp_path / "retime.png"
    code, stdout, err = run_main(["--urdf", ur5_urdf, "--trajectory", str(trajectory),
                                  "--payload", str(heavy_payload(tmp_path / "p.yaml")),
                                  "--plot", str(plot), "--rate", "100"], capsys)
    assert code == 0, err
    assert "duration: 0.7000 s ->" in stdout
    assert "binding constraint:" in stdout and "shoulder_lift_joint" in stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_payload_too_heavy_exits_1_naming_the_joint(tmp_path, ur5_urdf, capsys):
    code, stdout, err = run_main(["--urdf", ur5_urdf,
                                  "--trajectory", str(EXAMPLES / "ur5_trajectory.yaml"),
                                  "--payload", str(heavy_payload(tmp_path / "p.yaml", 40.0))],
                                 capsys)
    assert code == 1
    assert err.startswith("error: retime: joint \"shoulder_lift_joint\" cannot hold the load")
    assert "% over" in err and "Traceback" not in err


@pytest.mark.parametrize("problem", ["nan", "unknown_joint", "no_file", "margin", "loading"])
def test_bad_input_exits_2_with_one_error_line(problem, tmp_path, ur5_urdf, capsys):
    data = yaml.safe_load((EXAMPLES / "ur5_trajectory.yaml").read_text())
    extra: list[str] = []
    if problem == "nan":
        data["points"][3]["positions"][1] = math.nan
    elif problem == "unknown_joint":
        data["joint_names"][0] = "no_such_joint"
    elif problem == "margin":
        extra = ["--effort-margin", "-1"]
    elif problem == "loading":  # a payload file given as a loading process
        extra = ["--loading", str(EXAMPLES / "ur5_payload.yaml")]
    trajectory = tmp_path / "t.yaml"
    trajectory.write_text(yaml.safe_dump(data))
    if problem == "no_file":
        trajectory = tmp_path / "missing.yaml"
    code, stdout, err = run_main(["--urdf", ur5_urdf, "--trajectory", str(trajectory), *extra],
                                 capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert {"nan": "finite", "unknown_joint": "no_such_joint", "no_file": "missing.yaml",
            "margin": "effort_margin", "loading": "process"}[problem] in lines[0]


def test_loading_process_with_link_override_and_time_offset(tmp_path, capsys):
    urdf = find_example_robot_urdf("panda")
    code, stdout, err = run_main([
        "--urdf", urdf, "--lock", "panda_finger_joint1", "--lock", "panda_finger_joint2",
        "--trajectory", str(EXAMPLES / "panda_trajectory.yaml"),
        "--loading", str(LOADING / "fill.yaml"), "--link", "panda_link8",
        "--time-offset", "1.5", "--no-uniform", "--json"], capsys)
    assert code == 0, err
    report = json.loads(stdout)
    assert report["payload"]["link"] == "panda_link8"
    assert report["payload"]["process"] == "FillProcess"
    assert report["load_converged"] is True
    assert report["uniform_scaling_duration"] is None
    assert report["locked_joints"] == {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
    assert any("indexed by time" in note for note in report["notes"])


def test_subprocess_resolves_relative_paths_against_the_callers_cwd(tmp_path, ur5_urdf):
    fast_ur5_trajectory(tmp_path / "fast.yaml")
    heavy_payload(tmp_path / "payload.yaml")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"]
                                     if env.get("PYTHONPATH") else "")
    done = subprocess.run(
        [sys.executable, "-m", "robot_tv_dynamics.cli", "retime", "--urdf", ur5_urdf,
         "--trajectory", "fast.yaml", "--payload", "payload.yaml", "--out", "out.yaml",
         "--json", "--no-uniform"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["within_limits"] is True
    assert (tmp_path / "out.yaml").is_file()


def test_acceleration_limit_per_joint_and_velocity_scale(tmp_path, ur5_urdf, capsys):
    out = tmp_path / "out.yaml"
    code, stdout, err = run_main([
        "--urdf", ur5_urdf, "--trajectory", str(EXAMPLES / "ur5_trajectory.yaml"),
        "--acceleration-limit", "shoulder_pan_joint=1.5", "--velocity-scale", "0.5",
        "--rate", "200", "--smoothing", "0.02", "--out", str(out), "--json", "--no-uniform"],
        capsys)
    assert code == 0, err
    retimed = load_trajectory(out)
    assert np.max(np.abs(retimed.accelerations[:, 0])) <= 1.5 * (1 + 1e-2)
    assert np.max(np.abs(retimed.velocities) / 3.15) <= 0.5 * (1 + 1e-6)
    report = json.loads(stdout)
    assert "shoulder_pan_joint" in report["active_constraints"]["acceleration"]
    assert report["duration_after"] > 1.0


def test_mixing_a_common_and_per_joint_acceleration_limit_is_bad_input(ur5_urdf, capsys):
    code, _, err = run_main(["--urdf", ur5_urdf, "--trajectory",
                             str(EXAMPLES / "ur5_trajectory.yaml"), "--acceleration-limit", "2",
                             "--acceleration-limit", "elbow_joint=1"], capsys)
    assert code == 2 and "not both" in err


def test_rosbag2_input_is_retimed(tmp_path, ur5_urdf, capsys):
    from support.examples import write_bag

    trajectory = load_trajectory(fast_ur5_trajectory(tmp_path / "fast.yaml"))
    bag = tmp_path / "plan_bag"
    write_bag(bag, trajectory, "mcap")
    code, stdout, err = run_main(["--urdf", ur5_urdf, "--trajectory", str(bag),
                                  "--payload", str(heavy_payload(tmp_path / "p.yaml")),
                                  "--json", "--no-uniform"], capsys)
    assert code == 0, err
    report = json.loads(stdout)
    assert report["duration_before"] == pytest.approx(0.7)
    assert max(report["peak_ratio_after"].values()) <= 1.0 + 2e-3


def test_input_without_velocities_is_retimed_rest_to_rest(tmp_path, ur5_urdf, capsys):
    data = yaml.safe_load((EXAMPLES / "ur5_trajectory.yaml").read_text())
    for point in data["points"]:
        del point["velocities"], point["accelerations"]
    path = tmp_path / "positions_only.yaml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "out.yaml"
    code, stdout, err = run_main(["--urdf", ur5_urdf, "--trajectory", str(path),
                                  "--out", str(out), "--json", "--no-uniform"], capsys)
    assert code == 0, err
    retimed = load_trajectory(out)
    np.testing.assert_allclose(retimed.velocities[[0, -1]], 0.0, atol=1e-12)
    assert any("no velocities" in note for note in json.loads(stdout)["notes"])


def test_building_the_command_line_does_not_load_toppra():
    code = ("import sys; from robot_tv_dynamics import cli; cli.build_parser(); "
            "print('toppra' in sys.modules)")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"]
                                     if env.get("PYTHONPATH") else "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_loading_index_path_keeps_the_load_at_the_waypoints(tmp_path, capsys):
    urdf = find_example_robot_urdf("panda")
    loading = tmp_path / "fill.yaml"
    data = yaml.safe_load((LOADING / "fill.yaml").read_text())
    data.update({"start": 0.5, "fill_time": 1.0, "mass_flow": 0.4})  # inside the 2 s move
    loading.write_text(yaml.safe_dump(data))
    out = tmp_path / "out.yaml"
    code, stdout, err = run_main([
        "--urdf", urdf, "--lock", "panda_finger_joint1", "--lock", "panda_finger_joint2",
        "--trajectory", str(EXAMPLES / "panda_trajectory.yaml"), "--loading", str(loading),
        "--loading-index", "path", "--out", str(out), "--json"], capsys)
    assert code == 0, err
    report = json.loads(stdout)
    assert any("indexed by path position" in note for note in report["notes"])
    assert report["uniform_scaling_duration"] is None
    assert report["duration_after"] < 1.0  # the 2 s example is slow


def _independent_ratios(urdf, trajectory_file, payload_file):
    """(|τ|/τ_max, |q̇|/q̇_max) per point of a trajectory YAML, (K, 6) each: the payload
    added to Pinocchio's inertia of tool0's joint, τ by ``pin.rnea`` (not the package)."""
    import pinocchio as pin

    pmodel = pin.buildModelFromUrdf(str(urdf))
    payload = yaml.safe_load(Path(payload_file).read_text())
    frame = pmodel.frames[pmodel.getFrameId(payload["link"])]
    inertia = payload["inertia"]
    about_com = np.array([[inertia["ixx"], inertia.get("ixy", 0.0), inertia.get("ixz", 0.0)],
                          [inertia.get("ixy", 0.0), inertia["iyy"], inertia.get("iyz", 0.0)],
                          [inertia.get("ixz", 0.0), inertia.get("iyz", 0.0), inertia["izz"]]])
    body = pin.Inertia(payload["mass"], np.array(payload["com"], dtype=float), about_com)
    pmodel.inertias[frame.parentJoint] += frame.placement.act(body)
    data = pmodel.createData()
    plan = yaml.safe_load(Path(trajectory_file).read_text())
    names = [pmodel.names[j] for j in range(1, pmodel.njoints)]
    columns = [plan["joint_names"].index(name) for name in names]
    effort, velocity = [], []
    for point in plan["points"]:
        q, qd, qdd = (np.array(point[key], dtype=float)[columns]
                      for key in ("positions", "velocities", "accelerations"))
        effort.append(np.abs(pin.rnea(pmodel, data, q, qd, qdd)) / pmodel.effortLimit)
        velocity.append(np.abs(qd) / pmodel.velocityLimit)
    return names, np.array(effort), np.array(velocity)


BINDING = re.compile(r"^binding constraint: (effort|velocity) (\w+): \S+ ([\d.]+) before -> "
                     r"([\d.]+) after \(kept to ([\d.]+);", flags=re.M)


@pytest.mark.parametrize("mass,kind,joint", [(6.0, "velocity", "shoulder_pan_joint"),
                                             (9.0, "effort", "shoulder_lift_joint")])
def test_the_table_names_the_binding_constraint_with_ratios_an_rnea_of_the_files_confirms(
        tmp_path, ur5_urdf, capsys, mass, kind, joint):
    trajectory = fast_ur5_trajectory(tmp_path / "fast.yaml")
    payload = heavy_payload(tmp_path / "payload.yaml", mass=mass)
    out = tmp_path / "retimed.yaml"
    code, stdout, err = run_main(["--urdf", ur5_urdf, "--trajectory", str(trajectory),
                                  "--payload", str(payload), "--out", str(out),
                                  "--rate", "500"], capsys)
    assert code == 0, err
    found = BINDING.search(stdout)
    assert found, stdout
    assert found.group(1, 2) == (kind, joint)
    before, after, bound = (float(found.group(k)) for k in (3, 4, 5))
    names, effort_in, velocity_in = _independent_ratios(ur5_urdf, trajectory, payload)
    _, effort_out, velocity_out = _independent_ratios(ur5_urdf, out, payload)
    i = names.index(joint)
    ratio_in, ratio_out = ((effort_in, effort_out) if kind == "effort"
                           else (velocity_in, velocity_out))
    # before: the input's own points, printed to 4 decimals
    assert before == pytest.approx(ratio_in[:, i].max(), abs=6e-5)
    # after: the output at 500 Hz samples the time law about as densely as the check does
    assert after == pytest.approx(ratio_out[:, i].max(), abs=1e-3)
    assert bound == 1.0 and ratio_out[:, i].max() <= bound + 2e-3
    # binding: this joint's limit is reached (≥ 98 %) after, and it was over it before
    assert ratio_out[:, i].max() >= 0.97 and ratio_in[:, i].max() > 1.0
    # every other effort and velocity ratio of the output is within its limit as well
    assert effort_out.max() <= 1.0 + 2e-3 and velocity_out.max() <= 1.0 + 1e-3
