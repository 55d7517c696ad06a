"""The observer along a particle path with τ_ext = 0: generalized at quadrature level.

The joint torque τ(t) of each sample is the independent particle truth (robot links by
``pin.rnea``, particles by finite differences of their Lagrangian), sampled at 250 Hz
while a particle gains 0.4 kg/s on the Panda's 7th link, another sloshes, a third
moves and changes mass. No model of the package produces τ.

Bound stated for the discrete observer (observer.py docstring): with τ_ext = 0 each
sample's external-torque estimate is the trapezoid error of u = τ + β = ṗ,
|e_k| ≤ h²/12 · max|ü|, and the lag (unit DC gain, positive impulse response) keeps
|r| ≤ max|e_k|. max|ü| is taken from second differences of the truth u = τ + ∂L/∂q.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from support.particle_lagrangian import (
    _dl_dq,
    lagrangian,
    loads,
    particles_for,
    random_path,
    truth_torque,
)

from robot_tv_dynamics.observer import MomentumObserver, ObserverConfig

H = 4e-3
DURATION = 0.8


class _Loads:
    def __init__(self, theta, psi):
        self.theta, self.psi = theta, psi


@pytest.fixture(scope="module")
def run(panda):
    robot, pm = panda, panda.pinocchio_model
    particles = particles_for(robot.n_bodies)
    path = random_path(pm, np.random.default_rng(7), amp=0.5, omega_range=(0.8, 2.5))
    data = pm.createData()

    def lag(q, qd, t):
        return lagrangian(pm, particles, q, qd, t, data)

    gain = 50.0
    theta0 = loads(robot, particles, 0.0)[0]
    generalized = MomentumObserver(robot, ObserverConfig(gain=gain))
    classical = MomentumObserver(robot, ObserverConfig(gain=gain, kind="classical"),
                                 theta_nominal=theta0)
    rows = {"generalized": [], "classical": [], "u": []}
    for t in np.arange(0.0, DURATION + 1e-9, H):
        q, qd, _ = path(t)
        tau = truth_torque(pm, particles, path, t)
        dl_dq = (pin.computeCoriolisMatrix(pm, data, q, qd).T @ qd
                 - pin.computeGeneralizedGravity(pm, data, q) + _dl_dq(pm, lag, q, qd, t, 1e-2))
        rows["u"].append(tau + dl_dq)
        theta, _, psi, _ = loads(robot, particles, t)
        rows["generalized"].append(generalized.update(t, q, qd, tau, _Loads(theta, psi)))
        rows["classical"].append(classical.update(t, q, qd, tau, _Loads(theta, psi)))
    return {key: np.array(value) for key, value in rows.items()}


def quadrature_bound(u):
    u_ddot = np.abs(u[2:] - 2 * u[1:-1] + u[:-2]) / H**2
    return H**2 / 12 * u_ddot.max(axis=0)


def test_generalized_residual_stays_at_the_trapezoid_error_bound(run):
    bound = quadrature_bound(run["u"])  # per joint
    peak = np.abs(run["generalized"]).max(axis=0)
    # 1.5: the second difference underestimates max|ü| between samples; 1e-9: FD truth noise
    assert np.all(peak <= 1.5 * bound + 1e-9), (peak, bound)
    assert peak.max() < 1e-3  # N·m (measured 4e-5 at 250 Hz)


def test_classical_residual_shows_the_loading_as_an_external_torque(run):
    bound = quadrature_bound(run["u"])
    peak = np.abs(run["classical"]).max(axis=0)
    assert peak.max() > 0.5  # N·m: the 0.32 kg gained on link 7 and the sloshing mass
    assert peak.max() > 1e3 * (1.5 * bound.max() + 1e-9)

