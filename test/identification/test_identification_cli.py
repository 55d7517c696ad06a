"""``robot-tv-dynamics identify`` end to end on an MCAP file written as ros/demo.py records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from support.identification_helpers import (
    PANDA_LOCK,
    perturbed_theta,
    random_friction,
    simulate,
    write_csv,
    write_joint_state_bag,
)

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.cli import main
from robot_tv_dynamics.cli.identify import OUTPUTS
from robot_tv_dynamics.friction import load_friction_file
from robot_tv_dynamics.identification.excitation import design_excitation

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def recording(tmp_path_factory, urdf_paths):
    model = RobotModel.from_urdf(urdf_paths["panda"], PANDA_LOCK)
    rng = np.random.default_rng(3)
    design = design_excitation(model, duration=6.0, harmonics=4, base_frequency=1 / 3,
                               candidates=8, iterations=8)
    sim = simulate(model, perturbed_theta(model, rng), design.trajectory, 200.0, 6.0,
                   np.linspace(0.05, 0.2, model.nv), random_friction(model.nv, rng), rng)
    folder = tmp_path_factory.mktemp("recording")
    names = list(model.joint_names) + PANDA_LOCK
    pad = np.zeros((sim.t.size, 2))
    bag = write_joint_state_bag(folder / "run.mcap", names, sim.t, np.c_[sim.q, pad],
                                np.c_[sim.qd, pad], np.c_[sim.tau, pad])
    return model, sim, bag


def _args(urdf, data, out):
    return ["identify", "--urdf", urdf, "--lock", PANDA_LOCK[0], "--lock", PANDA_LOCK[1],
            "--data", str(data), "--out", str(out)]


def test_identify_writes_all_five_outputs_and_prints_the_summary(recording, urdf_paths,
                                                                  tmp_path, capsys):
    model, _, bag = recording
    code = main(_args(urdf_paths["panda"], bag, tmp_path / "out") + ["--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    for name in OUTPUTS:
        assert (tmp_path / "out" / name).stat().st_size > 0, name
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["rms"] == printed["rms"]
    for key in ("urdf", "unconstrained", "identified"):
        for part in ("fit", "holdout"):
            assert set(printed["rms"][key][part]) == set(model.joint_names)
    assert printed["samples"]["fit"] > 0 and printed["samples"]["holdout"] > 0
    assert printed["condition_number"] > 1 and printed["solver"]["time_s"] >= 0
    assert printed["uniformly_consistent_identified"] is True
    assert set(printed["margins"]["identified"]) == set(model.body_names)
    # identified.urdf reproduces theta.yaml with the same locked joints
    theta = yaml.safe_load((tmp_path / "out" / "theta.yaml").read_text())
    again = RobotModel.from_urdf(tmp_path / "out" / "identified.urdf", PANDA_LOCK)
    assert np.allclose(again.theta_nominal, [theta[b] for b in model.body_names],
                       rtol=1e-12, atol=1e-14)
    # friction.yaml is what the dynamics node loads
    friction = load_friction_file(tmp_path / "out" / "friction.yaml", model.joint_names)
    assert np.allclose(friction.viscous, [printed["friction"][j]["viscous"]
                                          for j in model.joint_names])


def test_identify_table_output_and_relative_paths_resolve_against_the_cwd(
        recording, urdf_paths, tmp_path, monkeypatch, capsys):
    _, _, bag = recording
    monkeypatch.chdir(tmp_path)
    (tmp_path / "copy.mcap").write_bytes(bag.read_bytes())
    code = main(_args(urdf_paths["panda"], "copy.mcap", "rel") + ["--friction", "viscous",
                                                                  "--holdout", "0.3"])
    assert code == 0
    out = capsys.readouterr().out
    assert "condition number" in out and "every identified body has f(Φ) ⪰" in out
    assert (tmp_path / "rel" / "report.png").exists()
    data = json.loads((tmp_path / "rel" / "summary.json").read_text())
    assert data["friction_model"] == "viscous"
    assert all(v["coulomb"] == 0 for v in data["friction"].values())


def test_identify_reads_csv(recording, urdf_paths, tmp_path, capsys):
    model, sim, _ = recording
    csv = write_csv(tmp_path / "d.csv", model.joint_names, sim.t, sim.q, sim.qd, sim.tau)
    assert main(_args(urdf_paths["panda"], csv, tmp_path / "o") + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["samples"]["raw"] == sim.t.size


def test_bad_input_exits_2_with_one_line_naming_the_problem(recording, urdf_paths, tmp_path,
                                                            capsys):
    model, sim, _ = recording
    bag = write_joint_state_bag(tmp_path / "e.mcap", model.joint_names, sim.t[:50],
                                sim.q[:50], sim.qd[:50], sim.tau[:50], with_effort=False)
    assert main(_args(urdf_paths["panda"], bag, tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: data ") and "effort" in err and len(err.splitlines()) == 1
    assert main(_args(urdf_paths["panda"], tmp_path / "nothing.mcap", tmp_path / "o")) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["identify", "--urdf", urdf_paths["panda"], "--data", str(bag), "--lock",
                 "no_such_joint"]) == 2
    assert "no_such_joint" in capsys.readouterr().err


def test_the_module_entry_point_runs_identify_help():
    result = subprocess.run([sys.executable, "-m", "robot_tv_dynamics.cli", "identify", "--help"],
                            capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0
    assert "--friction {none,viscous,coulomb,full}" in result.stdout
