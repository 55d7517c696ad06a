"""``excite --payload-only``: a short wrist motion that determines the load's 10 parameters.

Checked on the output grid, independently of the design's own bookkeeping: only the last
three joints move, the motion starts and ends at rest, positions stay in the scaled
range, velocities and accelerations (by central differences of the written positions)
within their bounds; the stacked load regressor (Pinocchio's torque regressor, the 10
columns of the hand's body, in the hand frame) has full rank 10 and a small condition
number, which a single-joint motion of the same length does not reach.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.cli import main
from robot_tv_dynamics.estimation.payload_excitation import load_condition_number

LOCK = ["--lock", "panda_finger_joint1", "--lock", "panda_finger_joint2"]


@pytest.fixture(scope="module")
def written(tmp_path_factory, urdf_paths):
    out = tmp_path_factory.mktemp("payload") / "wrist.yaml"
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["excite", "--urdf", urdf_paths["panda"], *LOCK, "--payload-only",
                     "--link", "panda_hand", "--harmonics", "3", "--candidates", "6",
                     "--iterations", "6", "--out", str(out), "--json"])
    assert code == 0
    model = RobotModel.from_urdf(urdf_paths["panda"],
                                 ["panda_finger_joint1", "panda_finger_joint2"])
    return model, json.loads(buffer.getvalue()), yaml.safe_load(out.read_text())


def test_a_few_seconds_of_wrist_motion_from_rest_to_rest_within_limits(written):
    model, summary, data = written
    t = np.array([p["time_from_start"] for p in data["points"]])
    q = np.array([p["positions"] for p in data["points"]])
    qd = np.array([p["velocities"] for p in data["points"]])
    assert 2.0 <= t[-1] <= 6.0
    assert np.ptp(q[:, :4], axis=0).max() == 0.0 and np.all(np.ptp(q[:, 4:], axis=0) > 0.1)
    assert np.abs(qd[0]).max() < 1e-9 and np.abs(qd[-1]).max() < 1e-6
    limits = model.joint_limits
    assert np.all(q >= limits.lower) and np.all(q <= limits.upper)
    assert np.all(np.abs(qd) <= 0.8 * limits.velocity + 1e-9)
    dt = t[1] - t[0]
    qdd_fd = (q[2:] - 2 * q[1:-1] + q[:-2]) / dt ** 2
    assert np.abs(qdd_fd).max() <= 5.0 * 1.01
    assert summary["peak_ratios"]["acceleration"] <= 1.0


def test_the_load_regressor_is_full_rank_and_well_conditioned(written, urdf_paths):
    import pinocchio as pin

    model, summary, data = written
    q = np.array([p["positions"] for p in data["points"]])
    qd = np.array([p["velocities"] for p in data["points"]])
    qdd = np.array([p["accelerations"] for p in data["points"]])
    pm = model.pinocchio_model
    pdata = pm.createData()
    joint = pm.frames[pm.getFrameId("panda_hand")].parentJoint
    placement = pm.frames[pm.getFrameId("panda_hand")].placement
    rows = []
    for k in range(0, q.shape[0], 2):
        y = pin.computeJointTorqueRegressor(pm, pdata, q[k], qd[k], qdd[k])
        y_body = y[:, 10 * (joint - 1):10 * joint]
        rows.append(y_body)
    # a load given about the hand frame: the map of Pinocchio's dynamic parameters under
    # the frame placement (pin.Inertia.se3Action, linear) from 10 random bodies
    bodies = [pin.Inertia.Random() for _ in range(10)]
    before = np.array([b.toDynamicParameters() for b in bodies]).T
    after = np.array([placement.act(b).toDynamicParameters() for b in bodies]).T
    move = after @ np.linalg.inv(before)
    for k in range(len(rows)):
        rows[k] = rows[k] @ move
    stacked = np.concatenate(rows)
    stacked /= np.linalg.norm(stacked, axis=0)
    s = np.linalg.svd(stacked, compute_uv=False)
    print("independent condition number", s[0] / s[-1], "design's", summary["condition_number"])
    assert s[-1] > 0 and s[0] / s[-1] < 30
    assert summary["condition_number"] == pytest.approx(s[0] / s[-1], rel=0.2)
    # one joint only (the last) cannot separate the 10 parameters
    single = q.copy()
    single[:, 4:6] = q[0, 4:6]
    still = qd.copy()
    still[:, 4:6] = 0
    acc = qdd.copy()
    acc[:, 4:6] = 0
    assert load_condition_number(model, "panda_hand", single, still, acc) > 100 * s[0] / s[-1]
