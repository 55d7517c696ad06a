"""p = ∂L/∂q̇ and β = ∂L/∂q of the momentum balance against the independent particle Lagrangian.

The truth (test/particle_lagrangian.py) is built from point masses in body frames —
fixed, moving, mass-changing — from world positions and velocities only: ∂L/∂q̇ by an
exact central difference (L is quadratic in q̇), ∂L/∂q by a 6th-order stencil, and the
Euler–Lagrange torque by finite differences along a path. The robot's own links are
checked against Pinocchio (crba, computeCoriolisMatrix, computeGeneralizedGravity).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from support.particle_lagrangian import (
    _dl_dq,
    _dl_dqd,
    lagrangian,
    loads,
    particles_for,
    random_path,
    truth_torque,
)

from robot_tv_dynamics.observer import MomentumEvaluator, generalized_momentum, momentum_balance
from robot_tv_dynamics.observer.momentum import as_gamma

_C6 = np.array([-1.0 / 60, 3.0 / 20, -3.0 / 4, 0.0, 3.0 / 4, -3.0 / 20, 1.0 / 60])


def _recursive(robot, q, qd, theta, psi=None):
    evaluator = MomentumEvaluator(robot)
    assert evaluator.recursive
    return evaluator.terms(q, qd, np.asarray(theta, dtype=float), as_gamma(robot, psi))


#: (p, β) of each implementation: the contraction (reference) and two RNEA passes.
IMPLEMENTATIONS = {
    "contraction": (generalized_momentum, momentum_balance),
    "recursive": (lambda *a: _recursive(*a).p, lambda *a: _recursive(*a).beta),
}


@pytest.fixture(params=list(IMPLEMENTATIONS))
def momentum(request):
    return IMPLEMENTATIONS[request.param]


def particle_lagrangian_fn(model: pin.Model, particles: list):
    data = model.createData()

    def lag(q, qd, t):
        return lagrangian(model, particles, q, qd, t, data)
    return lag


@pytest.fixture(params=["panda", "ur5"])
def setup(request, panda, ur5):
    robot = panda if request.param == "panda" else ur5
    pm = robot.pinocchio_model
    particles = particles_for(robot.n_bodies)
    path = random_path(pm, np.random.default_rng(7), amp=0.5, omega_range=(0.8, 2.5))
    return robot, pm, particles, path


@pytest.mark.parametrize("t", [0.3, 1.1])
def test_momentum_equals_dL_dqd_of_the_particle_lagrangian(setup, momentum, t):
    robot, pm, particles, path = setup
    q, qd, _ = path(t)
    theta, _, psi, _ = loads(robot, particles, t)
    truth = pin.crba(pm, pm.createData(), q) @ qd + _dl_dqd(
        particle_lagrangian_fn(pm, particles), q, qd, t)
    p = momentum[0](robot, q, qd, theta, psi)
    assert np.max(np.abs(p - truth)) <= 1e-10 * (1.0 + np.max(np.abs(truth)))
    # the Ψ coupling matters: M(q, Θ) q̇ alone misses it by far more than the tolerance
    without_psi = momentum[0](robot, q, qd, theta)
    assert np.max(np.abs(without_psi - truth)) > 1e4 * 1e-10 * (1.0 + np.max(np.abs(truth)))


@pytest.mark.parametrize("t", [0.3, 1.1])
def test_balance_term_equals_dL_dq_of_the_particle_lagrangian(setup, momentum, t):
    robot, pm, particles, path = setup
    q, qd, _ = path(t)
    theta, _, psi, _ = loads(robot, particles, t)
    data = pm.createData()
    coriolis = pin.computeCoriolisMatrix(pm, data, q, qd)
    gravity = pin.computeGeneralizedGravity(pm, data, q)
    truth = coriolis.T @ qd - gravity + _dl_dq(
        pm, particle_lagrangian_fn(pm, particles), q, qd, t, 1e-2)
    beta = momentum[1](robot, q, qd, theta, psi)
    assert np.max(np.abs(beta - truth)) <= 1e-9 * (1.0 + np.max(np.abs(truth)))


@pytest.mark.parametrize("t", [0.4, 1.3])
def test_momentum_rate_minus_beta_is_the_euler_lagrange_torque_without_theta_or_psi_rates(
        setup, momentum, t):
    """ṗ = τ + β with Θ(t), Ψ(t) changing fast: the Θ̇, Ψ̇ terms of (39) live in ṗ."""
    robot, pm, particles, path = setup
    h = 5e-3

    def p_at(s):
        q, qd, _ = path(s)
        theta, _, psi, _ = loads(robot, particles, s)
        return momentum[0](robot, q, qd, theta, psi)

    p_dot = sum(c * p_at(t + o * h) for c, o in zip(_C6, range(-3, 4), strict=True)) / h
    q, qd, _ = path(t)
    theta, theta_dot, psi, psi_dot = loads(robot, particles, t)
    tau = truth_torque(pm, particles, path, t)
    residual = p_dot - momentum[1](robot, q, qd, theta, psi) - tau
    scale = 1.0 + np.max(np.abs(tau))
    assert np.max(np.abs(residual)) <= 1e-9 * scale  # measured ~1e-12 N·m
    # a β that also carried the rate terms of (39) would fail the same check by far
    rate_terms = robot.inverse_dynamics(q, qd, np.zeros(robot.nv), np.zeros_like(theta),
                                        theta_dot=theta_dot, psi_dot=psi_dot).tau
    assert np.max(np.abs(rate_terms)) > 1e3 * 1e-9 * scale
