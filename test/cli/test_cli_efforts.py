"""Efforts in a driver's dialect (amperes, offsets, signs, another joint order) on the CLI.

``record`` writes the same simulated arm twice: once as joint torques in model order, once
as a UR driver in current mode would publish it (e = offset + τ/(sign·gain), gains of the
``ur_e_series_current`` preset, per-joint offsets and a flipped sign, the joints in another
order, a gripper joint the URDF does not have). Every command that reads efforts, given
the same ``--effort-*`` options, must see the same torques and so give the same answer as
on the clean recording.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from robot_tv_dynamics.cli import main
from robot_tv_dynamics.identification.data import load_samples
from robot_tv_dynamics.inputs.efforts import PRESETS
from robot_tv_dynamics.paths import package_config_dir

ORDER = "wrist_3_joint,elbow_joint,shoulder_pan_joint,wrist_1_joint,shoulder_lift_joint," \
        "wrist_2_joint"
GRIPPER = "robotiq_85_left_knuckle_joint"
DIALECT = ["--effort-preset", "ur_e_series_current",
           "--effort-offset", "0.05,-0.1,0.2,0.0,0.03,-0.02", "--effort-sign", "1,-1,1,1,1,-1"]


@pytest.fixture(scope="module")
def bags(tmp_path_factory, urdf_paths):
    folder = tmp_path_factory.mktemp("dialect")
    examples = package_config_dir() / "examples"
    base = ["record", "--urdf", urdf_paths["ur5"], "--trajectory",
            str(examples / "ur5_trajectory.yaml"), "--payload",
            str(examples / "ur5_payload.yaml"), "--rate", "250"]
    assert main([*base, "--out", str(folder / "clean.mcap")]) == 0
    assert main([*base, "--out", str(folder / "ur.mcap"), "--joint-order", ORDER,
                 "--extra-joint", f"{GRIPPER}=0.3", *DIALECT]) == 0
    return folder / "clean.mcap", folder / "ur.mcap"


def test_the_dialect_bag_holds_amperes_in_the_drivers_order(bags, ur5):
    from robot_tv_dynamics.bags import open_bag
    with open_bag(bags[1]) as bag:
        _, _, msg = next(iter(bag.messages(["/joint_states"])))
    assert ",".join(msg.name) == f"{ORDER},{GRIPPER}" and msg.position[-1] == 0.3
    clean = load_samples(bags[0], ur5)
    gain = np.asarray(PRESETS["ur_e_series_current"].gain)
    column = ORDER.split(",").index("shoulder_lift_joint")
    # shoulder_lift: sign −1, offset −0.1 A: e = −0.1 + τ/(−gain)
    assert msg.effort[column] == pytest.approx(-0.1 - clean.tau[0, 1] / gain[1], rel=1e-12)
    assert abs(msg.effort[column]) < 10.0  # amperes, not the ~60 N·m the shoulder holds


def test_identify_reads_the_same_torques_from_amperes(bags, ur5):
    from robot_tv_dynamics.inputs.efforts import effort_map
    clean = load_samples(bags[0], ur5)
    ur = load_samples(bags[1], ur5, efforts=effort_map(
        "ur_e_series_current", offset=(0.05, -0.1, 0.2, 0.0, 0.03, -0.02),
        sign=(1, -1, 1, 1, 1, -1)))
    np.testing.assert_allclose(ur.tau, clean.tau, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ur.q, clean.q)
    assert ur.skipped_joints == (GRIPPER,)


def _json(capsys, arguments):
    code = main(arguments)
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_estimate_gives_the_same_load_from_amperes_as_from_torques(bags, urdf_paths, capsys):
    base = ["estimate", "--urdf", urdf_paths["ur5"], "--link", "tool0", "--method",
            "classical", "--json"]
    clean = _json(capsys, [*base, "--data", str(bags[0])])
    ur = _json(capsys, [*base, "--data", str(bags[1]), *DIALECT])
    assert clean["updates"] > 0 and ur["updates"] == clean["updates"]
    assert any(GRIPPER in note for note in ur["notes"])
    assert ur["final"]["mass"] == pytest.approx(clean["final"]["mass"], rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(ur["final"]["com"], clean["final"]["com"], atol=1e-9)
    without = _json(capsys, [*base, "--data", str(bags[1])])  # amperes read as N·m
    assert abs(without["final"]["mass"] - clean["final"]["mass"]) > 0.1


def test_observe_gives_the_same_residual_from_amperes(bags, urdf_paths, capsys):
    base = ["observe", "--urdf", urdf_paths["ur5"], "--json"]
    clean = _json(capsys, [*base, "--data", str(bags[0])])
    ur = _json(capsys, [*base, "--data", str(bags[1]), *DIALECT])
    assert ur["samples"] == clean["samples"] > 400
    np.testing.assert_allclose(ur["peak"], clean["peak"], atol=1e-9)


def test_a_gain_list_of_the_wrong_length_exits_2_naming_the_joints(bags, urdf_paths, capsys):
    code = main(["observe", "--urdf", urdf_paths["ur5"], "--data", str(bags[1]),
                 "--effort-gain", "1,2"])
    err = capsys.readouterr().err
    assert code == 2 and "effort_gain" in err and "shoulder_pan_joint" in err
