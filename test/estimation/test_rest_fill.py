"""A cup filled while the arm stands still: gravity alone determines the mass (and the COM
across gravity), so the live estimate follows the fill at rest (estimation/online.py,
``update_determined``)."""

from __future__ import annotations

import numpy as np
import pytest

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.estimation import LoadEstimatorSettings, OnlineLoadEstimator
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
from robot_tv_dynamics.paths import example_robot_urdf

LOCK = ["panda_finger_joint1", "panda_finger_joint2"]
LINK = "panda_hand"
Q_REST = np.array([0.3, -0.4, 0.2, -2.2, 0.1, 1.9, 0.7])
RATE = 500.0                 # [Hz]
CUP = 0.15                   # [kg] the empty cup, on the hand from the start
FILL = (4.0, 6.0)            # [s] the fill: 0.25 kg/s
FILL_RATE = 0.25             # [kg/s]
COM = np.array([0.0, 0.01, 0.12])  # [m] in panda_hand
SIGMA = 0.05                 # [N·m] white noise on every joint


def load_mass(t: float) -> float:
    """The cup's mass at t [kg]."""
    return CUP + FILL_RATE * float(np.clip(t - FILL[0], 0.0, FILL[1] - FILL[0]))


def run(method: str, update_determined: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The arm at rest, the cup filled; (t, estimated mass)."""
    model = RobotModel.from_urdf(example_robot_urdf(), LOCK)
    est = OnlineLoadEstimator(model, LINK, LoadEstimatorSettings(
        method=method, noise_std=(SIGMA,), update_determined=update_determined))
    rng = np.random.default_rng(7)
    zero = np.zeros(model.nv)
    t_all = np.arange(1.0, 9.0, 1.0 / RATE)
    masses = []
    for t in t_all:
        m = load_mass(t)
        phi = phi_from_mass_com_inertia(m, COM, m * 4e-4 * np.eye(3))
        theta = model.theta_with_link_inertia(model.theta_nominal, LINK,
                                              model.urdf_link_phi(LINK) + phi)
        tau = model.inverse_dynamics(Q_REST, zero, zero, theta).tau
        est.add_sample(t, Q_REST, zero, tau + SIGMA * rng.standard_normal(model.nv))
        masses.append(est.load.mass)
    return t_all, np.array(masses)


@pytest.mark.parametrize("method", ["classical", "projected", "geometric"])
def test_a_fill_at_rest_is_tracked_in_mass(method):
    t, mass = run(method)
    after = np.argmin(np.abs(t - (FILL[1] + 1.0)))  # one second after the fill ends
    assert abs(mass[after] - load_mass(t[after])) <= 0.05, (method, mass[after])
    before = np.argmin(np.abs(t - FILL[0]))  # the empty cup, found at rest
    assert abs(mass[before] - CUP) <= 0.05, (method, mass[before])
