"""``robot-tv-dynamics estimate`` over a rosbag2 of a simulated, constant, well-excited payload."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.excited import LINK, exciting_trajectory, simulate, write_joint_states_bag

from robot_tv_dynamics.cli import main


@pytest.fixture(scope="module")
def bag(tmp_path_factory, panda):
    path = tmp_path_factory.mktemp("bag") / "excited"
    write_joint_states_bag(path, panda.joint_names,
                           simulate(panda, exciting_trajectory(panda.nv), 8.0))
    return path


def _run(capsys, *arguments):
    code = main(["estimate", *arguments])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_gives_the_load_in_the_link_frame(capsys, bag, urdf_paths):
    code, out, err = _run(capsys, "--urdf", urdf_paths["panda"], "--data", str(bag),
                          "--link", LINK, "--payload-frame", LINK, "--method", "classical",
                          "--noise-std", "0.02",
                          "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] == "classical" and data["link"] == LINK
    t = np.asarray(data["t"])
    assert t[0] == 0.0 and np.all(np.diff(t) > 0) and abs(t[-1] - 7.995) < 1e-6
    assert len(data["mass"]) == len(data["com"]) == len(data["margin"]) == t.size
    final = data["final"]
    # the simulated payload: 0.6 kg at (0.01, 0, 0.08) m in panda_hand (excited.py)
    assert abs(final["mass"] - 0.6) < 0.03
    np.testing.assert_allclose(final["com"], [0.01, 0.0, 0.08], atol=0.015)
    assert set(final["inertia"]) == {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"}
    assert data["margin"][-1] > 0  # the classical estimate may dip below 0 on the way


def test_summary_and_plot(capsys, bag, urdf_paths, tmp_path):
    png = tmp_path / "estimate.png"
    code, out, err = _run(capsys, "--urdf", urdf_paths["panda"], "--data", str(bag),
                          "--link", LINK, "--plot", str(png))
    assert code == 0, err
    assert "geometric estimate of the load on panda_hand" in out and "mass" in out
    assert png.stat().st_size > 10_000


def test_unknown_link_and_foreign_friction_exit_2_with_one_line(
        capsys, bag, urdf_paths, tmp_path):
    code, _, err = _run(capsys, "--urdf", urdf_paths["panda"], "--data", str(bag),
                        "--link", "no_such_link")
    assert code == 2 and "no_such_link" in err and err.count("\n") == 1
    friction = tmp_path / "f.yaml"
    friction.write_text("shoulder_pan_joint: {viscous: 0.1}\n")
    code, _, err = _run(capsys, "--urdf", urdf_paths["panda"], "--data", str(bag),
                        "--link", LINK, "--friction", str(friction))
    assert code == 2 and "shoulder_pan_joint" in err


def test_set_load_files_are_in_the_flange_frame_by_default(capsys, bag, urdf_paths, tmp_path):
    """panda_hand is panda_link8 turned −45° about z (the URDF's panda_hand_joint)."""
    import math

    import yaml
    answers = {}
    for frame in ("default", LINK):
        extra = [] if frame == "default" else ["--payload-frame", frame]
        code, out, err = _run(capsys, "--batch", "--urdf", urdf_paths["panda"], "--data",
                              str(bag), "--link", LINK, "--set-load-out",
                              str(tmp_path / frame), "--json", *extra)
        assert code == 0, err
        answers[frame] = json.loads(out)
        answers[frame]["ur"] = yaml.safe_load((tmp_path / frame / "ur_set_load.yaml").read_text())
        answers[frame]["franka"] = yaml.safe_load(
            (tmp_path / frame / "franka_set_load.yaml").read_text())
    flange, hand = answers["default"], answers[LINK]
    assert flange["frame"] == flange["ur"]["frame"] == flange["franka"]["frame"] == "panda_link8"
    assert hand["frame"] == hand["franka"]["frame"] == LINK
    c, s = math.cos(-math.pi / 4), math.sin(-math.pi / 4)
    rotation = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    np.testing.assert_allclose(flange["franka"]["F_x_Cload"],
                               rotation @ np.array(hand["franka"]["F_x_Cload"]), atol=1e-9)
    inertia_hand = np.array(hand["franka"]["load_inertia"]).reshape(3, 3, order="F")
    np.testing.assert_allclose(np.array(flange["franka"]["load_inertia"]).reshape(3, 3, order="F"),
                               rotation @ inertia_hand @ rotation.T, atol=1e-9)
    assert flange["mass"] == pytest.approx(hand["mass"], rel=1e-12)
    # the mass interval does not depend on the frame; the COM's turns with it (its width
    # along z, the axis of the turn, stays)
    np.testing.assert_allclose(flange["interval"]["mass"], hand["interval"]["mass"], rtol=1e-9)
    np.testing.assert_allclose(flange["interval"]["com"][2], hand["interval"]["com"][2],
                               atol=1e-9)
