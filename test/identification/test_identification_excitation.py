"""Exciting Fourier trajectories stay inside the URDF limits and condition the regressor."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from support.identification_helpers import PANDA_LOCK, Sine

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.cli import main
from robot_tv_dynamics.evaluation import load_trajectory
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.identification.excitation import (
    LimitScales,
    design_excitation,
    trajectory_dict,
)
from robot_tv_dynamics.identification.regressor import excitation


@pytest.fixture(scope="module", params=["panda", "ur5"])
def designed(request, urdf_paths):
    lock = PANDA_LOCK if request.param == "panda" else None
    model = RobotModel.from_urdf(urdf_paths[request.param], lock)
    scales = LimitScales(position=0.7, velocity=0.6, effort=0.5)
    design = design_excitation(model, duration=8.0, harmonics=4, base_frequency=0.25,
                               scales=scales, candidates=8, iterations=12, rate=50.0)
    return model, scales, design


def test_trajectory_stays_inside_the_scaled_limits_with_eq39_efforts(designed):
    model, scales, design = designed
    limits = model.joint_limits
    times = np.linspace(0.0, design.duration, 1601)  # denser than the design's own grid
    q, qd, qdd = design.trajectory.evaluate(times)
    middle = 0.5 * (limits.lower + limits.upper)
    allowed = scales.position * np.minimum(0.5 * (limits.upper - limits.lower),
                                           scales.max_excursion)
    assert np.all(np.abs(q - middle) <= allowed * (1 + 1e-3))
    assert np.all(q >= limits.lower) and np.all(q <= limits.upper)
    assert np.all(np.abs(qd) <= scales.velocity * limits.velocity * (1 + 1e-3))
    tau = np.array([model.inverse_dynamics(q[k], qd[k], qdd[k], model.theta_nominal).tau
                    for k in range(times.size)])
    assert np.all(np.abs(tau) <= scales.effort * limits.effort * (1 + 1e-2))
    # it uses the room it has: some limit is nearly reached
    assert design.peak_ratios.max() > 0.9


def test_trajectory_starts_and_ends_at_rest(designed):
    _, _, design = designed
    for t in (0.0, design.duration):  # two whole periods
        _, qd, qdd = design.trajectory.evaluate([t])
        assert np.abs(qd).max() < 1e-9 and np.abs(qdd).max() < 1e-9


def test_a_duration_that_is_not_whole_periods_still_ends_at_rest(urdf_paths):
    """7 s at 0.25 Hz is 1.75 periods: the design rounds up to 8 s and ends at rest there."""
    model = RobotModel.from_urdf(urdf_paths["ur5"])
    design = design_excitation(model, duration=7.0, harmonics=3, base_frequency=0.25,
                               candidates=2, iterations=0, rate=20.0)
    assert design.duration == pytest.approx(8.0)
    data = trajectory_dict(model, design, 20.0)
    last = data["points"][-1]
    assert last["time_from_start"] == pytest.approx(8.0)
    assert np.abs(last["velocities"]).max() < 1e-9
    assert np.abs(last["accelerations"]).max() < 1e-9
    np.testing.assert_allclose(last["positions"], data["points"][0]["positions"], atol=1e-9)
    steps = np.diff([p["time_from_start"] for p in data["points"]])
    np.testing.assert_allclose(steps, 0.05, atol=1e-9)


def test_designed_trajectory_conditions_better_than_a_single_joint_sine(designed):
    model, _, design = designed
    limits = model.joint_limits
    sine = Sine(0.5 * (limits.lower + limits.upper), 1, 0.5, 0.25)
    times = np.linspace(0.0, 8.0, 400)
    poor = excitation(model, *sine.evaluate(times), "full", design.rank)
    assert design.condition_number < 1000
    assert poor.condition_number > 100 * design.condition_number


def test_cli_writes_a_trajectory_that_evaluate_reads(tmp_path, urdf_paths, capsys):
    out = tmp_path / "traj.yaml"
    code = main(["excite", "--urdf", urdf_paths["panda"], "--lock", "panda_finger_joint1",
                 "--lock", "panda_finger_joint2", "--duration", "4", "--base-frequency",
                 "0.25", "--harmonics", "3", "--candidates", "4", "--iterations", "4",
                 "--rate", "20", "--json", "--out", str(out)])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["condition_number"] > 1 and np.isfinite(printed["condition_number"])
    trajectory = load_trajectory(out)
    assert trajectory.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    assert trajectory.n_points == 81
    assert trajectory.accelerations is not None
    data = yaml.safe_load(out.read_text())
    assert data["excitation"]["condition_number"] == pytest.approx(printed["condition_number"])
    # ``evaluate`` reads it and finds no effort-limit violation (exit code 0, not 1)
    assert main(["evaluate", "--urdf", urdf_paths["panda"], "--lock", "panda_finger_joint1",
                 "--lock", "panda_finger_joint2", "--trajectory", str(out), "--json"]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert not evaluated["violations"]


def test_cli_refuses_a_single_harmonic(tmp_path, urdf_paths, capsys):
    code = main(["excite", "--urdf", urdf_paths["ur5"], "--harmonics", "1",
                 "--out", str(tmp_path / "t.yaml")])
    assert code == 2
    assert "harmonics" in capsys.readouterr().err


def test_an_effort_scale_that_cannot_hold_the_arm_still_is_refused_with_the_scale_that_can(
        urdf_paths, capsys):
    """The UR5 horizontal at the middle of its range: its shoulder needs ~59 N·m of 150."""
    import pinocchio as pin

    model = RobotModel.from_urdf(urdf_paths["ur5"])
    # the gravity torque at rest at the middle of the range (Pinocchio's own g(q))
    middle = 0.5 * (model.joint_limits.upper + model.joint_limits.lower)
    pm = model.pinocchio_model
    gravity = np.abs(pin.computeGeneralizedGravity(
        pm, pm.createData(), model.pinocchio_configuration(middle)))
    needed = gravity / model.joint_limits.effort
    worst = int(np.argmax(needed))
    assert model.joint_names[worst] == "shoulder_lift_joint" and 0.3 < needed[worst] < 0.5
    with pytest.raises(InvalidInputError, match="shoulder_lift_joint") as caught:
        design_excitation(model, scales=LimitScales(effort=0.3), candidates=2, iterations=0)
    suggested = float(str(caught.value).rsplit("at least ", 1)[1].split()[0])
    assert needed[worst] <= suggested < needed[worst] + 0.01
    # the CLI says it in one line (before: every candidate shrank to nothing, "no
    # candidate trajectory could be scored"); the suggested scale designs a trajectory
    out = ["--duration", "4", "--base-frequency", "0.25", "--candidates", "2",
           "--iterations", "0", "--rate", "50", "--out"]
    assert main(["excite", "--urdf", urdf_paths["ur5"], "--scale", "0.3", *out,
                 "/dev/null"]) == 2
    assert "--effort-scale" in capsys.readouterr().err
    assert main(["excite", "--urdf", urdf_paths["ur5"], "--scale", "0.3", "--effort-scale",
                 str(suggested), *out, "/dev/null"]) == 0


def test_a_shoulder_too_weak_at_its_full_limit_is_refused_without_a_scale_to_try(urdf_paths):
    text = open(urdf_paths["ur5"], encoding="utf-8").read()
    joint = text.index('name="shoulder_lift_joint"')
    limit = text.index('<limit effort="150.0"', joint)
    weak = text[:limit] + '<limit effort="40.0"' + text[limit + len('<limit effort="150.0"'):]
    model = RobotModel.from_urdf_string(weak)
    with pytest.raises(InvalidInputError, match="no effort scale can") as caught:
        design_excitation(model, scales=LimitScales(effort=1.0), candidates=2, iterations=0)
    assert "shoulder_lift_joint" in str(caught.value) and "at least" not in str(caught.value)
