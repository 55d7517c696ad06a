"""Simulated recordings: the interpolation, the noise, the perturbed arm, the bag round trip."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from robot_tv_dynamics.cli import main
from robot_tv_dynamics.evaluation.payload import Payload
from robot_tv_dynamics.evaluation.trajectory import Trajectory
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.identification.data import load_samples
from robot_tv_dynamics.inertia import consistency_margin, mass_com_inertia_from_phi
from robot_tv_dynamics.simulation.recording import (
    StribeckFriction,
    coloured_noise,
    perturbed_theta,
    resample,
    simulate_recording,
)

LOCK = {"panda_finger_joint1": None, "panda_finger_joint2": None}



def _polynomial(t, coefficients):
    """q, q̇, q̈ of Σ c_i t^i per column (coefficients (6, n))."""
    powers = np.array([t ** i for i in range(6)])
    d1 = np.array([i * t ** (i - 1) if i else 0 * t for i in range(6)])
    d2 = np.array([i * (i - 1) * t ** (i - 2) if i > 1 else 0 * t for i in range(6)])
    return powers.T @ coefficients, d1.T @ coefficients, d2.T @ coefficients


def test_resampling_reproduces_a_quintic_through_positions_velocities_accelerations():
    rng = np.random.default_rng(1)
    c = rng.normal(size=(6, 3)) * 0.1
    knots = np.array([0.0, 0.4, 1.1, 1.5])
    # One quintic per segment is what the controller plays: within one segment (two knots)
    # the interpolation of a quintic is the quintic itself.
    for a, b in zip(knots[:-1], knots[1:], strict=True):
        q, qd, qdd = _polynomial(np.array([a, b]), c)
        played = resample(Trajectory(("a", "b", "c"), np.array([a, b]), q, qd, qdd), 200.0)
        q_ref, qd_ref, qdd_ref = _polynomial(played.time_from_start, c)
        np.testing.assert_allclose(played.positions, q_ref, atol=1e-12)
        np.testing.assert_allclose(played.velocities, qd_ref, atol=1e-10)
        np.testing.assert_allclose(played.accelerations, qdd_ref, atol=1e-8)


def test_resampling_with_velocities_only_is_the_cubic_through_them():
    c = np.zeros((6, 1))
    c[:4, 0] = [0.3, -0.2, 0.5, -0.7]
    q, qd, _ = _polynomial(np.array([0.0, 0.8]), c)
    played = resample(Trajectory(("a",), np.array([0.0, 0.8]), q, qd), 100.0)
    np.testing.assert_allclose(played.positions, _polynomial(played.time_from_start, c)[0],
                               atol=1e-12)
    np.testing.assert_allclose(played.accelerations, _polynomial(played.time_from_start, c)[2],
                               atol=1e-9)


def test_coloured_noise_has_the_stated_deviation_and_correlation():
    rate, tc = 1000.0, 0.005
    noise = coloured_noise(np.random.default_rng(2), 200_000, [0.3, 0.8], tc, rate)
    np.testing.assert_allclose(noise.std(axis=0), [0.3, 0.8], rtol=0.03)
    lag1 = [np.corrcoef(noise[1:, j], noise[:-1, j])[0, 1] for j in range(2)]
    np.testing.assert_allclose(lag1, np.exp(-1.0 / (rate * tc)), atol=0.01)
    white = coloured_noise(np.random.default_rng(2), 50_000, 1.0, 0.0, rate)
    assert abs(np.corrcoef(white[1:, 0], white[:-1, 0])[0, 1]) < 0.02


def test_a_perturbed_arm_stays_consistent_within_the_stated_changes(panda_locked):
    model = panda_locked
    theta = perturbed_theta(model, np.random.default_rng(3), mass=0.1, inertia=0.2, com=0.01)
    assert np.all(consistency_margin(theta) > 0)
    for phi0, phi in zip(model.theta_nominal, theta, strict=True):
        m0, c0, _ = mass_com_inertia_from_phi(phi0)
        m, c, _ = mass_com_inertia_from_phi(phi)
        assert abs(m / m0 - 1) <= 0.1 + 1e-12
        assert np.all(np.abs(c - c0) <= 0.01 + 1e-12)
    assert not np.allclose(theta, model.theta_nominal)
    with pytest.raises(InvalidInputError, match="relative change"):
        perturbed_theta(model, np.random.default_rng(3), inertia=1.0)


def test_stribeck_friction_is_the_formula_written_out():
    f = StribeckFriction(np.array([0.5]), np.array([0.4]), np.array([0.2]), np.array([0.1]),
                         coulomb_velocity=0.02, stribeck_velocity=0.1)
    for v in (-0.5, -0.01, 0.0, 0.05, 1.0):
        expected = 0.5 * v + (0.4 + 0.2 * np.exp(-(v / 0.1) ** 2)) * np.tanh(v / 0.02) + 0.1
        assert f.torque(np.array([v]))[0] == pytest.approx(expected, abs=1e-14)


def test_the_recorded_effort_is_eq39_of_the_true_arm_plus_friction_plus_noise(panda_locked):
    model = panda_locked
    rng = np.random.default_rng(4)
    c = rng.normal(size=(6, model.nv)) * 0.05
    knots = np.array([0.0, 0.5])
    trajectory = Trajectory(tuple(model.joint_names), knots, *_polynomial(knots, c))
    theta = perturbed_theta(model, rng)
    payload = Payload("panda_hand", 0.8, np.array([0.0, 0.0, 0.1]), np.eye(3) * 1e-3)
    friction = StribeckFriction.random(model.nv, rng)
    rec = simulate_recording(model, trajectory, theta_true=theta, load=payload,
                             friction=friction, noise_std=0.4, velocity_noise_std=0.0,
                             rate=100.0, rng=rng)
    body, phi_body = model.link_phi_in_body("panda_hand", payload.phi())  # added to the hand
    theta_loaded = theta.copy()
    theta_loaded[body] += phi_body
    for k in (0, 17, len(rec.t) - 1):
        q, qd, qdd = (x[0] for x in _polynomial(rec.t[k:k + 1], c))
        tau = model.inverse_dynamics(q, qd, qdd, theta_loaded).tau
        np.testing.assert_allclose(rec.effort_rigid[k], tau, atol=1e-9)
        np.testing.assert_allclose(rec.effort[k], tau + friction.torque(qd) + rec.noise[k],
                                   atol=1e-9)
    np.testing.assert_allclose(rec.payload_mass, 0.8)


def test_record_writes_a_bag_identify_reads_and_a_truth_file(tmp_path, panda_urdf):
    trajectory = {"joint_names": ["panda_joint1", "panda_joint4"],
                  "points": [{"positions": [0.0, -1.5], "velocities": [0, 0],
                              "accelerations": [0, 0], "time_from_start": 0.0},
                             {"positions": [0.4, -1.2], "velocities": [0, 0],
                              "accelerations": [0, 0], "time_from_start": 1.0}]}
    (tmp_path / "traj.yaml").write_text(yaml.safe_dump(trajectory))
    args = ["record", "--urdf", str(panda_urdf), "--lock", "panda_finger_joint1",
            "--lock", "panda_finger_joint2", "--trajectory", str(tmp_path / "traj.yaml"),
            "--rate", "200", "--out", str(tmp_path / "run.mcap")]
    assert main(args) == 0
    truth = yaml.safe_load((tmp_path / "run.truth.yaml").read_text())
    assert truth["samples"] == 201 and set(truth["friction"]) >= {"panda_joint1"}
    from robot_tv_dynamics import RobotModel
    model = RobotModel.from_urdf(panda_urdf, locked_joints=LOCK)
    samples = load_samples(str(tmp_path / "run.mcap"), model)
    assert samples.q.shape == (201, model.nv)
    np.testing.assert_allclose(samples.q[-1, 0], 0.4, atol=1e-12)
    assert main(args) == 2  # the bag exists: refused, not overwritten


def test_the_arm_seed_records_the_same_arm_again_with_other_noise(tmp_path, panda_urdf):
    trajectory = {"joint_names": ["panda_joint2"],
                  "points": [{"positions": [0.0], "time_from_start": 0.0},
                             {"positions": [0.2], "time_from_start": 0.5}]}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(trajectory))
    base = ["record", "--urdf", str(panda_urdf), "--trajectory", str(tmp_path / "t.yaml"),
            "--rate", "100"]
    assert main([*base, "--out", str(tmp_path / "a.mcap")]) == 0
    assert main([*base, "--seed", "5", "--out", str(tmp_path / "b.mcap")]) == 0
    assert main([*base, "--arm-seed", "5", "--out", str(tmp_path / "c.mcap")]) == 0
    a, b, c = (yaml.safe_load((tmp_path / f"{n}.truth.yaml").read_text()) for n in "abc")
    assert a["theta"] == b["theta"] and a["friction"] == b["friction"]
    assert a["theta"] != c["theta"]


def test_record_plays_a_scenario_collision_as_a_push_missing_from_the_efforts(
        tmp_path, panda_urdf):
    """fill_collision.yaml: the efforts lack J_cᵀF over the push (Pinocchio's own frame
    Jacobian here), and equal the push-free recording's everywhere else."""
    import pinocchio as pin
    from support.examples import LOADING_CONFIG

    trajectory = {"joint_names": ["panda_joint1", "panda_joint4"],
                  "points": [{"positions": [0.0, -1.5], "time_from_start": 0.0},
                             {"positions": [0.3, -1.3], "time_from_start": 6.0}]}
    (tmp_path / "traj.yaml").write_text(yaml.safe_dump(trajectory))
    fill = yaml.safe_load((LOADING_CONFIG / "fill_collision.yaml").read_text())
    del fill["collision"]
    (tmp_path / "fill.yaml").write_text(yaml.safe_dump(fill))
    base = ["record", "--urdf", str(panda_urdf), "--lock", "panda_finger_joint1",
            "--lock", "panda_finger_joint2", "--trajectory", str(tmp_path / "traj.yaml"),
            "--rate", "100", "--friction", "none", "--noise", "0"]
    assert main([*base, "--payload", str(LOADING_CONFIG / "fill_collision.yaml"),
                 "--out", str(tmp_path / "push.mcap")]) == 0
    assert main([*base, "--payload", str(tmp_path / "fill.yaml"),
                 "--out", str(tmp_path / "fill.mcap")]) == 0
    truth = yaml.safe_load((tmp_path / "push.truth.yaml").read_text())
    assert truth["collision"]["link"] == "panda_link5"
    assert yaml.safe_load((tmp_path / "fill.truth.yaml").read_text())["collision"] is None
    from robot_tv_dynamics import RobotModel
    model = RobotModel.from_urdf(panda_urdf, locked_joints=LOCK)
    pushed, free = (load_samples(str(tmp_path / f"{n}.mcap"), model) for n in ("push", "fill"))
    t = pushed.t - pushed.t[0]
    window = (t >= 5.0 - 1e-9) & (t < 5.25 - 1e-9)
    np.testing.assert_allclose(pushed.tau[~window], free.tau[~window], atol=1e-9)
    # J_cᵀF by Pinocchio on the locked model: the world-aligned Jacobian of panda_link5
    reduced = pin.buildReducedModel(
        pin.buildModelFromUrdf(str(panda_urdf)),
        [pin.buildModelFromUrdf(str(panda_urdf)).getJointId(j) for j in LOCK],
        pin.neutral(pin.buildModelFromUrdf(str(panda_urdf))))
    data = reduced.createData()
    frame = reduced.getFrameId("panda_link5")
    force = np.array([0.0, 30.0, 0.0, 0.0, 0.0, 0.0])
    for k in np.flatnonzero(window)[::5]:
        jac = pin.computeFrameJacobian(reduced, data, pushed.q[k], frame,
                                       pin.LOCAL_WORLD_ALIGNED)
        np.testing.assert_allclose(free.tau[k] - pushed.tau[k], jac.T @ force, atol=1e-6)
