"""SampleTorques (evaluation/sample.py): τ of eq. (39) per joint sample, against references.

Constant Θ: Pinocchio's rnea, crba, computeCoriolisMatrix, computeGeneralizedGravity.
Θ(t), Ψ(t) of moving and mass-changing particles: the particle Lagrangian (DESIGN §4).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from support.particle_lagrangian import (
    make_particle,
    particle_state,
    ramp_mass_particle,
    random_path,
    total_theta,
    truth_torque,
)

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.dynamics import psi_momentum
from robot_tv_dynamics.evaluation import TERM_ROWS, SampleTorques
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inputs import ModelState


def state_of(robot: RobotModel, q, qd, qdd, theta, theta_dot=None, psi=None, psi_dot=None):
    n = robot.n_bodies
    zeros = np.zeros((n, 12))
    return ModelState(
        t=0.0, q=np.asarray(q), qd=np.asarray(qd), qdd=np.asarray(qdd),
        theta=np.asarray(theta),
        theta_dot=np.zeros((n, 10)) if theta_dot is None else np.asarray(theta_dot),
        gamma=psi_momentum(zeros if psi is None else psi),
        gamma_dot=psi_momentum(zeros if psi_dot is None else psi_dot))


def random_sample(robot: RobotModel, rng: np.random.Generator):
    q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
    return q, rng.uniform(-2, 2, robot.nv), rng.uniform(-5, 5, robot.nv)


def test_constant_theta_gives_pinocchios_rnea_on_both_paths(robot: RobotModel) -> None:
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    torques = SampleTorques(robot)
    rng = np.random.default_rng(7)
    theta = np.array(robot.theta_nominal)
    for _ in range(5):
        q, qd, qdd = random_sample(robot, rng)
        state = state_of(robot, q, qd, qdd, theta)
        expected = pin.rnea(model, data, q, qd, qdd)
        np.testing.assert_allclose(torques.torque(state), expected, atol=1e-9)
        kin, terms, tau = torques.terms(state)
        np.testing.assert_allclose(tau, expected, atol=1e-9)
        np.testing.assert_allclose(kin.stacked_jacobian.shape, (6 * robot.n_bodies, robot.nv))


def test_term_rows_are_the_addends_pinocchio_computes(robot: RobotModel) -> None:
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    torques = SampleTorques(robot)
    q, qd, qdd = random_sample(robot, np.random.default_rng(8))
    _, terms, _ = torques.terms(state_of(robot, q, qd, qdd, robot.theta_nominal))
    rows = torques.term_rows(terms)
    assert rows.shape == (len(TERM_ROWS), robot.nv) and TERM_ROWS[-1] == "tau"
    by_name = dict(zip(TERM_ROWS, rows, strict=True))
    np.testing.assert_allclose(by_name["inertia"], pin.crba(model, data, q) @ qdd, atol=1e-9)
    np.testing.assert_allclose(
        by_name["coriolis"], pin.computeCoriolisMatrix(model, data, q, qd) @ qd, atol=1e-9)
    np.testing.assert_allclose(
        by_name["gravity"], pin.computeGeneralizedGravity(model, data, q), atol=1e-9)
    for name in ("mass_rate", "gyroscopic", "psi_dot"):
        assert not by_name[name].any(), name
    np.testing.assert_allclose(by_name["tau"], pin.rnea(model, data, q, qd, qdd), atol=1e-9)


def test_a_new_theta_array_reaches_the_held_backend(ur5: RobotModel) -> None:
    """τ is linear in Θ: with 1.5 Θ the held backend must give 1.5 rnea(Θ)."""
    model, data = ur5.pinocchio_model, ur5.pinocchio_model.createData()
    torques = SampleTorques(ur5)
    q, qd, qdd = random_sample(ur5, np.random.default_rng(9))
    nominal = pin.rnea(model, data, q, qd, qdd)
    np.testing.assert_allclose(
        torques.torque(state_of(ur5, q, qd, qdd, ur5.theta_nominal)), nominal, atol=1e-9)
    heavier = 1.5 * np.array(ur5.theta_nominal)
    np.testing.assert_allclose(
        torques.torque(state_of(ur5, q, qd, qdd, heavier)), 1.5 * nominal, atol=1e-9)


@pytest.mark.parametrize("seed", range(2))
def test_moving_and_mass_changing_particles_match_the_particle_lagrangian(
        panda: RobotModel, seed: int) -> None:
    particles = [
        make_particle(6, [0.05, 0.02, 0.1], 1.5, amp=0.05, omega=3.0, mass_b=0.5,
                      mass_omega=2.0),
        make_particle(3, [0.1, -0.05, 0.0], 0.8, amp=0.04, omega=2.0),
        ramp_mass_particle(5, [0.0, 0.1, 0.05], 0.5, 0.6),
    ]
    path = random_path(panda.pinocchio_model, np.random.default_rng(40 + seed))
    torques = SampleTorques(panda)
    for t in (0.4, 1.3):  # two samples: the held loads change between them
        q, qd, qdd = path(t)
        _, theta_dot, psi, psi_dot, _ = particle_state(particles, t, panda.n_bodies)
        theta = total_theta(panda.pinocchio_model, particles, t)
        state = state_of(panda, q, qd, qdd, theta, theta_dot, psi, psi_dot)
        truth = truth_torque(panda.pinocchio_model, particles, path, t)
        tolerance = 1e-6 * np.abs(truth).max()
        np.testing.assert_allclose(torques.torque(state), truth, atol=tolerance)
        _, terms, tau = torques.terms(state)
        np.testing.assert_allclose(tau, truth, atol=tolerance)
        rows = torques.term_rows(terms)
        np.testing.assert_allclose(rows[:-1].sum(axis=0), truth, atol=tolerance)  # eq. (39)
        assert np.abs(rows[TERM_ROWS.index("mass_rate")]).max() > 1e3 * tolerance


def test_friction_is_added_to_tau_but_not_to_the_tau_row(ur5: RobotModel) -> None:
    model, data = ur5.pinocchio_model, ur5.pinocchio_model.createData()
    n = ur5.nv
    viscous, coulomb = np.linspace(0.1, 0.6, n), np.linspace(1.0, 2.0, n)
    offset, v_c = np.linspace(-0.3, 0.3, n), np.full(n, 0.05)
    friction = FrictionParameters(tuple(ur5.joint_names), viscous, coulomb, offset, v_c)
    torques = SampleTorques(ur5, friction)
    q, qd, qdd = random_sample(ur5, np.random.default_rng(10))
    state = state_of(ur5, q, qd, qdd, ur5.theta_nominal)
    rigid = pin.rnea(model, data, q, qd, qdd)
    expected = rigid + viscous * qd + coulomb * np.tanh(qd / v_c) + offset
    np.testing.assert_allclose(torques.torque(state), expected, atol=1e-9)
    _, terms, tau = torques.terms(state)
    np.testing.assert_allclose(tau, expected, atol=1e-9)
    np.testing.assert_allclose(torques.term_rows(terms)[-1], rigid, atol=1e-9)
