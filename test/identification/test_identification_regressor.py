"""The stacked Pinocchio regressor is eq. (44)'s R (RobotModel.regressor) in eq. (7) order."""

from __future__ import annotations

import numpy as np
import pytest
from support.identification_helpers import PANDA_LOCK, perturbed_theta

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.identification.regressor import (
    excitation,
    stacked_regressor,
    structural_rank,
)


@pytest.fixture(scope="module", params=["panda_locked", "ur5", "panda"])
def model(request, urdf_paths):
    if request.param == "panda_locked":
        return RobotModel.from_urdf(urdf_paths["panda"], PANDA_LOCK)
    return RobotModel.from_urdf(urdf_paths[request.param])


def _states(model, count, seed):
    rng = np.random.default_rng(seed)
    lower = np.maximum(model.joint_limits.lower, -np.pi)
    upper = np.minimum(model.joint_limits.upper, np.pi)
    q = lower + (upper - lower) * rng.random((count, model.nv))
    return q, rng.standard_normal((count, model.nv)), rng.standard_normal((count, model.nv))


def test_pinocchio_regressor_reordered_equals_the_eq44_regressor(model):
    q, qd, qdd = _states(model, 12, 0)
    stacked = stacked_regressor(model, q, qd, qdd)
    for k in range(q.shape[0]):
        reference = model.regressor(q[k], qd[k], qd[k], qdd[k])
        assert np.allclose(stacked[k], reference, atol=1e-9 * max(1.0, np.abs(reference).max()))


def test_regressor_times_theta_is_the_eq39_torque_of_a_perturbed_theta(model):
    theta = perturbed_theta(model, np.random.default_rng(2))
    q, qd, qdd = _states(model, 8, 1)
    stacked = stacked_regressor(model, q, qd, qdd)
    for k in range(q.shape[0]):
        tau = model.inverse_dynamics(q[k], qd[k], qdd[k], theta).tau
        assert np.allclose(stacked[k] @ theta.ravel(), tau, atol=1e-9 * max(1.0, np.abs(tau).max()))


def test_base_parameter_counts_match_the_literature(urdf_paths):
    # Gaz et al., RA-L 2019: 43 base parameters of the 7-dof Panda; a 6R UR arm has 36
    panda = RobotModel.from_urdf(urdf_paths["panda"], PANDA_LOCK)
    ur5 = RobotModel.from_urdf(urdf_paths["ur5"])
    assert structural_rank(panda, "none") == 43
    assert structural_rank(ur5, "none") == 36
    # three friction coefficients per joint are independent of them
    assert structural_rank(panda, "full") == 43 + 3 * 7
    assert structural_rank(ur5, "viscous") == 36 + 6


def test_a_single_joint_motion_is_badly_conditioned(urdf_paths):
    panda = RobotModel.from_urdf(urdf_paths["panda"], PANDA_LOCK)
    rank = structural_rank(panda, "full")
    q, qd, qdd = _states(panda, 200, 3)
    rich = excitation(panda, q, qd, qdd, "full", rank)
    still = q.copy()
    still[:, 1:] = still[0, 1:]
    single = np.zeros_like(qd)
    single[:, 0] = qd[:, 0]
    poor = excitation(panda, still, single, np.zeros_like(qdd), "full", rank)
    assert rich.condition_number < 1e4
    assert poor.condition_number > 1e3 * rich.condition_number
