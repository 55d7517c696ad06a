"""``robot-tv-dynamics bounds``: table, JSON, progress bar, errors and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from robot_tv_dynamics import RobotModel, cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_module(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "robot_tv_dynamics.cli", *args],
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_json_output_is_one_object_with_the_documented_keys(
        urdf_paths: dict[str, str], ur5: RobotModel, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["bounds", "--urdf", urdf_paths["ur5"], "--samples", "256", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)  # exactly one JSON document
    assert {"alpha1", "alpha2", "bodies", "jacobian"} <= set(data)
    assert [b["name"] for b in data["bodies"]] == ur5.body_names
    assert all({"name", "margin", "size"} <= set(b) for b in data["bodies"])
    jac = data["jacobian"]
    assert jac["method"] == "sampled"
    for key in ("inf_lambda_min_JtJ", "sup_sigma_max_J_sq", "inf_lambda_min_JtJ_bracket",
                "sup_sigma_max_J_sq_bracket", "gap"):
        assert key in jac
    lo, hi = jac["inf_lambda_min_JtJ_bracket"]
    assert lo <= hi == jac["inf_lambda_min_JtJ"]  # sampled: the estimate is the upper end
    assert data["lemma3"]["sigma_max_Q0"] == pytest.approx(2 ** 0.5)
    mmb = data["mass_matrix_bounds"]
    assert {"alpha1", "alpha2", "weighted"} <= set(mmb) and "exact" not in mmb
    assert mmb["weighted"]["method"] == "sampled"
    assert mmb["weighted"]["alpha1"] >= mmb["alpha1"]
    assert mmb["weighted"]["alpha2"] <= mmb["alpha2"]


def test_certified_json_uses_the_certified_ends_for_alpha(
        urdf_paths: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["bounds", "--urdf", urdf_paths["ur5"], "--certified", "--time-limit", "4",
                     "--samples", "256", "--json", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == ""
    data = json.loads(captured.out)
    jac = data["jacobian"]
    assert jac["method"] == "certified" and data["alpha_method"] == "certified"
    g_lo, g_hi = jac["inf_lambda_min_JtJ_bracket"]
    d_lo, d_hi = jac["sup_sigma_max_J_sq_bracket"]
    assert 0 < g_lo <= g_hi and d_lo <= d_hi
    margins = [b["margin"] for b in data["bodies"]]
    sizes = [b["size"] for b in data["bodies"]]
    assert data["alpha1"] == pytest.approx(min(margins) * g_lo)
    assert data["alpha2"] == pytest.approx(2 * max(sizes) * d_hi)
    mmb = data["mass_matrix_bounds"]
    weighted, exact = mmb["weighted"], mmb["exact"]
    assert weighted["method"] == "certified" and exact["method"] == "certified"
    assert data["alpha1"] <= weighted["alpha1"] <= exact["lambda_min_bracket"][0]
    assert exact["lambda_min_bracket"][0] <= exact["lambda_min_bracket"][1]
    assert exact["lambda_max_bracket"][1] <= weighted["alpha2"] * (1 + 1e-6) \
        or exact["gap_max"] > 0.01
    assert weighted["alpha2"] <= data["alpha2"]
    assert mmb["loading_lower_bound"] == exact["lambda_min_bracket"][0]


def test_certified_bounds_store_the_loading_floor_and_a_sampled_run_reads_it(
        urdf_paths: dict[str, str], ur5: RobotModel, tmp_path,
        capsys: pytest.CaptureFixture[str]) -> None:
    cache = str(tmp_path / "cache")
    sampled = ["bounds", "--urdf", urdf_paths["ur5"], "--samples", "256", "--json",
               "--cache-dir", cache]
    assert cli.main(sampled) == 0
    before = json.loads(capsys.readouterr().out)["mass_matrix_bounds"]
    assert before["loading_floor"] is None and "--certified" in before["loading_floor_note"]
    assert cli.main(["bounds", "--urdf", urdf_paths["ur5"], "--certified", "--time-limit", "3",
                     "--samples", "256", "--json", "--no-progress", "--cache-dir", cache]) == 0
    certified = json.loads(capsys.readouterr().out)["mass_matrix_bounds"]
    stored = certified["loading_floor"]
    assert stored["value"] == certified["exact"]["lambda_min_bracket"][0] > 0.0
    assert stored["origin"] == "computed" and "cached in" in certified["loading_floor_note"]
    assert cli.main(sampled) == 0
    after = json.loads(capsys.readouterr().out)["mass_matrix_bounds"]["loading_floor"]
    assert after["origin"] == "cache" and after["value"] == stored["value"]
    # the floor is a lower bound of λ_min(M₀(q)) (CRBA, sampled here)
    import numpy as np
    rd = ur5.dynamics()
    rd.set_theta(ur5.theta_nominal)
    qs = np.random.default_rng(2).uniform(-np.pi, np.pi, (200, ur5.nv))
    assert min(np.linalg.eigvalsh(rd.mass_matrix(q))[0] for q in qs) >= after["value"]


def test_table_names_every_body_and_labels_the_method(
        urdf_paths: dict[str, str], panda: RobotModel, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["bounds", "--urdf", urdf_paths["panda"], "--samples", "128"])
    out = capsys.readouterr().out
    assert code == 0
    for name in panda.body_names:
        assert name in out
    assert "[sampled]" in out and "α₁" in out and "α₂" in out
    assert "Normality (Definition 2)" in out and "Assumption 2" in out and "Lemma 3" in out


def test_progress_bar_is_drawn_on_stderr_only(
        urdf_paths: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["bounds", "--urdf", urdf_paths["ur5"], "--certified", "--time-limit", "2",
                     "--samples", "64", "--json", "--progress"])
    captured = capsys.readouterr()
    assert code == 0
    assert "\r" in captured.err and "certified search [" in captured.err
    json.loads(captured.out)  # stdout stays one clean JSON object


def test_missing_file_exits_2_with_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bounds", "--urdf", "/nonexistent/robot.urdf"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "does not exist" in err and err.count("\n") == 1


def test_broken_urdf_through_python_m_gives_one_line_and_no_traceback(tmp_path) -> None:
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="x"><link name="a"/><link name="b"/><joint name="j" '
                   'type="prismatic"><parent link="a"/><child link="b"/></joint></robot>')
    result = _run_module("bounds", "--urdf", str(bad))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: URDF")
    assert "PRISMATIC without limits" in result.stderr  # urdfdom's complaint, quoted
    assert "Traceback" not in result.stderr


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bounds"]) == 2  # --urdf is required
    assert cli.main(["--no-such-option"]) == 2
    assert cli.main(["bounds", "--urdf", "x.urdf", "--time-limit", "-3"]) == 2
    capsys.readouterr()


def test_no_subcommand_runs_the_default(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.DEFAULT_COMMAND == "demo"  # the README's main job
    monkeypatch.setattr(cli, "DEFAULT_COMMAND", "bounds")
    assert cli.main([]) == 2  # dispatched to `bounds`, which then wants --urdf
    assert "--urdf" in capsys.readouterr().err


def test_subcommands_are_registered_for_others_to_extend() -> None:
    from robot_tv_dynamics.cli import bounds

    assert "bounds" in [command.name for command in cli.COMMANDS]
    parser = cli.build_parser()
    args = parser.parse_args(["bounds", "--urdf", "r.urdf"])
    assert args.handler is bounds.run and not args.certified


def test_unsupported_joint_exits_2_naming_the_joint(
        tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    urdf = tmp_path / "planar.urdf"
    urdf.write_text('<robot name="x"><link name="a"/><link name="b"><inertial><mass value="1"/>'
                    '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
                    '</link><joint name="slider" type="planar"><parent link="a"/>'
                    '<child link="b"/></joint></robot>')
    assert cli.main(["bounds", "--urdf", str(urdf)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "slider" in err and err.count("\n") == 1


def test_locked_fingers_leave_seven_bodies_and_joints(
        urdf_paths: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    lock = ["--lock", "panda_finger_joint1", "--lock", "panda_finger_joint2=0.02"]
    code = cli.main(["bounds", "--urdf", urdf_paths["panda"], *lock, "--samples", "128",
                     "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [b["name"] for b in data["bodies"]] == [f"panda_link{i}" for i in range(1, 8)]
    assert data["locked_joints"] == {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.02}
    assert not any("finger" in name for name in data["jacobian"]["active_joints"])
    assert data["urdf_sha256"] != RobotModel.from_urdf(urdf_paths["panda"]).urdf_sha256
    code = cli.main(["bounds", "--urdf", urdf_paths["panda"], *lock, "--samples", "128"])
    assert code == 0
    assert "locked joints: panda_finger_joint1 = 0, panda_finger_joint2 = 0.02" in (
        capsys.readouterr().out)


def test_unknown_locked_joint_exits_2(
        urdf_paths: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["bounds", "--urdf", urdf_paths["panda"], "--lock", "panda_hand"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith('error: joint "panda_hand" is not in the URDF')
