"""The log-Cholesky EKF: its parameterization, consistency by construction, and its rate."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from robot_tv_dynamics.estimation import GeometricConfig, GeometricEKF
from robot_tv_dynamics.estimation.geometric import (
    log_cholesky_from_pseudo_inertia,
    phi_and_jacobian,
    theta_with_mass,
)
from robot_tv_dynamics.inertia import (
    phi_from_mass_com_inertia,
    phi_from_point_masses,
    pseudo_inertia,
)


@given(st.lists(st.floats(-2.0, 2.0), min_size=10, max_size=10))
def test_log_cholesky_inverse_round_trips_pinocchio(values):
    theta = np.array(values)
    phi, _ = phi_and_jacobian(theta)
    np.testing.assert_allclose(
        log_cholesky_from_pseudo_inertia(pseudo_inertia(phi)), theta, atol=1e-7)


def test_jacobian_matches_finite_differences():
    rng = np.random.default_rng(7)
    theta = rng.normal(0, 0.5, 10)
    _, jac = phi_and_jacobian(theta)
    h = 1e-6
    fd = np.array([(phi_and_jacobian(theta + h * e)[0] - phi_and_jacobian(theta - h * e)[0])
                   / (2 * h) for e in np.eye(10)]).T
    np.testing.assert_allclose(jac, fd, atol=1e-6)


def test_garbage_measurements_never_leave_the_band():
    epsilon = 1e-3
    ekf = GeometricEKF(phi_from_point_masses([1.0, 1.0], [[0.1, 0, 0], [0, 0.1, 0.05]]),
                       GeometricConfig(epsilon=epsilon, theta_walk=1.0))
    rng = np.random.default_rng(4)
    for _ in range(300):
        ekf.update(rng.normal(size=(6, 10)), rng.normal(0, 50, 6))
        assert np.linalg.eigvalsh(pseudo_inertia(ekf.phi))[0] > epsilon * (1 - 1e-9)


def test_a_linear_mass_ramp_gives_its_rate():
    # y = m(t) g on a mass-only regressor row plus unit rows on the rest: Φ̇ ≈ (ṁ, 0, …)
    rng = np.random.default_rng(3)
    phi0 = phi_from_point_masses([0.5, 0.5], [[0.05, 0, 0], [-0.05, 0, 0.02]])
    ekf = GeometricEKF(phi0, GeometricConfig(epsilon=1e-5, noise_std=1e-3, period=0.01,
                                             theta_walk=1e-6, rate_walk=0.1))
    rate = 0.2  # kg/s
    for k in range(1, 1001):
        truth = phi0.copy()
        truth[0] += rate * 0.01 * k
        truth[1:4] = phi0[1:4] * truth[0] / phi0[0]
        truth[4:] = phi0[4:] * truth[0] / phi0[0]
        r = rng.normal(size=(10, 10))
        ekf.update(r, r @ truth + rng.normal(0, 1e-3, 10))
    assert ekf.phi_rate is not None
    assert abs(ekf.phi[0] - truth[0]) < 1e-3
    # within 15 %: a constant θ̇ is a constant relative rate of f, not a linear ramp of m
    assert abs(ekf.phi_rate[0] - rate) < 0.03, ekf.phi_rate


def test_a_clipped_step_keeps_the_covariance_of_the_step_it_took():
    # a far-off measurement with a tiny trust region: the state moves by max_step only,
    # so (almost) none of the measurement's information may enter the covariance
    phi0 = phi_from_point_masses([1.0, 1.0], [[0.1, 0, 0], [0, 0.1, 0.05]])
    tiny = GeometricEKF(phi0, GeometricConfig(epsilon=1e-3, noise_std=1e-3, theta_walk=0.0,
                                              rate_walk=0.0, rate_prior_std=0.0,
                                              max_step=1e-9))
    free = GeometricEKF(phi0, GeometricConfig(epsilon=1e-3, noise_std=1e-3, theta_walk=0.0,
                                              rate_walk=0.0, rate_prior_std=0.0))
    prior = tiny.covariance[:10, :10].copy()
    rng = np.random.default_rng(2)
    r = rng.normal(size=(6, 10))
    y = r @ (3.0 * phi0)
    tiny.update(r, y)
    free.update(r, y)
    assert np.linalg.norm(tiny.theta - free.theta) > 0.1  # the step was clipped
    # the clipped filter is barely more certain than its prior (gain scaled ~1e-9) ...
    np.testing.assert_allclose(tiny.covariance[:10, :10], prior, rtol=1e-6, atol=1e-12)
    # ... while the full-gain update takes the measurement's information in
    taken = np.linalg.norm(free.covariance[:10, :10] - prior)
    assert taken > 1e3 * np.linalg.norm(tiny.covariance[:10, :10] - prior), taken


def test_theta_with_mass_scales_the_body_keeping_its_com_and_inertia_shape():
    com, inertia = np.array([0.01, -0.02, 0.06]), np.array(
        [[3e-3, 1e-4, 0.0], [1e-4, 2.5e-3, -2e-4], [0.0, -2e-4, 1.5e-3]])
    theta = log_cholesky_from_pseudo_inertia(
        pseudo_inertia(phi_from_mass_com_inertia(1.5, com, inertia)))
    for mass in (0.3, 1e-3, 4.0):
        phi, _ = phi_and_jacobian(theta_with_mass(theta, mass))
        # the same body made lighter or heavier: its inertia about the COM by the ratio
        assert np.allclose(phi, phi_from_mass_com_inertia(mass, com, inertia * mass / 1.5),
                           rtol=1e-10, atol=1e-14)
