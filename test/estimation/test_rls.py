"""Payload estimators: RLS with forgetting, classical and projected (Definition 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.examples import LOADING_CONFIG as CONFIG

from robot_tv_dynamics import InvalidInputError
from robot_tv_dynamics.estimation import (
    EstimatorConfig,
    RecursiveLeastSquares,
    payload_measurement,
)
from robot_tv_dynamics.inertia import phi_from_point_masses, pseudo_inertia
from robot_tv_dynamics.loading import load_loading_process
from robot_tv_dynamics.simulation import demo_loop


def test_rls_recovers_a_constant_phi_from_exact_torques(panda):
    rng = np.random.default_rng(2)
    body = 6
    truth = panda.theta_nominal.copy()
    truth[body] += phi_from_point_masses([0.4, 0.3], [[0.0, 0.05, 0.15], [0.02, -0.03, 0.1]])
    config = EstimatorConfig(memory=math.inf, prior_std=(1.0, 0.1, 0.05), noise_std=1e-3)
    rls = RecursiveLeastSquares(panda.theta_nominal[body], config, projected=False)
    for _ in range(300):
        q = rng.uniform(-1.5, 1.5, 9) * np.r_[np.ones(7), 0, 0] + np.r_[np.zeros(7), .02, .02]
        qd, qdd = rng.normal(0, 1.5, 9), rng.normal(0, 4, 9)
        tau = panda.inverse_dynamics(q, qd, qdd, truth).tau
        sample = payload_measurement(panda.kinematics(q), qd, qdd, tau, truth, body)
        rls.update(sample.regressor, sample.y)
    np.testing.assert_allclose(rls.phi, truth[body], atol=2e-4)


def test_measurement_is_the_classical_model_of_the_body(panda):
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.normal(size=9), rng.normal(size=9), rng.normal(size=9)
    theta = panda.theta_nominal
    tau = panda.inverse_dynamics(q, qd, qdd, theta).tau
    sample = payload_measurement(panda.kinematics(q), qd, qdd, tau, theta, 6)
    np.testing.assert_allclose(sample.regressor @ theta[6], sample.y, atol=1e-9)


def test_projected_estimate_stays_in_the_uniformly_consistent_set():
    config = EstimatorConfig(epsilon=1e-3, beta=10.0)
    rng = np.random.default_rng(4)
    phi0 = phi_from_point_masses([1.0, 1.0, 1.0, 1.0],
                                 [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1], [-.1, -.1, -.1]])
    rls = RecursiveLeastSquares(phi0, config, projected=True)
    for _ in range(200):
        r = rng.normal(size=(6, 10))
        y = rng.normal(0, 50, 6)  # garbage measurements
        phi = rls.update(r, y)
        values = np.linalg.eigvalsh(pseudo_inertia(phi))
        assert values[0] >= 1e-3 * (1 - 1e-9) and values[-1] <= 10.0 * (1 + 1e-9)


def test_bad_config_is_rejected():
    with pytest.raises(InvalidInputError):
        EstimatorConfig(memory=0.0)
    with pytest.raises(InvalidInputError):
        EstimatorConfig(epsilon=1.0, beta=0.5)


@pytest.mark.slow
def test_loading_breaks_the_classical_estimate_but_not_the_projected_one(panda):
    """The demo's claim, offline: no alarm without loading, loss of consistency with it."""
    results = {}
    for name, path in (("fill", CONFIG / "fill.yaml"), ("none", None)):
        process = load_loading_process(CONFIG / "fill.yaml")
        if path is None:
            process.start = 1e6  # the same container, never filled
            process.duration = 1e6
        loop = demo_loop(panda, process)
        epsilon = loop.config.estimator.epsilon / 2.5  # the monitor's ε
        mu_c, lam_c, lam_p = [], [], []
        for k in range(3000):
            s = loop.step()
            if k % 20 == 0:
                mu_c.append(np.linalg.eigvalsh(pseudo_inertia(s.phi_classical))[0])
                lam_c.append(np.linalg.eigvalsh(
                    panda.mass_matrix(s.q, loop.theta_hat(s.phi_classical)))[0])
                lam_p.append(np.linalg.eigvalsh(
                    panda.mass_matrix(s.q, loop.theta_hat(s.phi_projected)))[0])
        results[name] = (np.array(mu_c), np.array(lam_c), np.array(lam_p), epsilon)
    mu, lam, lam_p, eps = results["none"]
    assert mu.min() > eps and lam.min() > 0 and lam_p.min() > 0
    mu, lam, lam_p, eps = results["fill"]
    first_alarm = np.flatnonzero(mu < eps)[0]
    first_loss = np.flatnonzero(lam <= 0)[0]
    assert first_alarm < first_loss  # the margin warns before M(q, Θ̂) loses definiteness
    assert lam_p.min() > 0
