"""The identification-accuracy case: a known Θ_true and friction, simulated, identified.

test/identification/test_identification_accuracy.py states the data and the tolerances
and asserts them; ``scripts/docs_numbers.py identification`` quotes :func:`measure` of
both arms in docs/identification.md.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.identification.data import check_samples, prepare
from robot_tv_dynamics.identification.excitation import design_excitation
from robot_tv_dynamics.identification.pipeline import IdentifyOptions, identify
from robot_tv_dynamics.inertia import pseudo_inertia
from support.identification_helpers import PANDA_LOCK, perturbed_theta, random_friction, simulate

RATE, DURATION, BASE_FREQUENCY = 250.0, 8.0, 0.25


def make_case(arm: str, urdf: str):
    """The simulated record of ``arm`` and what ``identify`` makes of it."""
    lock = PANDA_LOCK if arm == "panda" else None
    model = RobotModel.from_urdf(urdf, lock)
    rng = np.random.default_rng(7)
    theta_true = perturbed_theta(model, rng)
    friction = random_friction(model.nv, rng)
    sigma = np.linspace(0.05, 0.3, model.nv)
    design = design_excitation(model, duration=DURATION, harmonics=4,
                               base_frequency=BASE_FREQUENCY,
                               seed=1)
    sim = simulate(model, theta_true, design.trajectory, RATE, DURATION, sigma, friction, rng)
    samples = check_samples("sim", model.joint_names, sim.t, sim.q, sim.qd, sim.tau)
    result = identify(model, prepare(samples), IdentifyOptions(friction="full"))
    return model, theta_true, friction, sim, result


def _held_out_rows(sim, result):
    """Indices of the raw samples at the held-out grid times (grid = raw stamps here)."""
    t_hold = result.t[result.n_fit:]
    return np.searchsorted(sim.t, t_hold - 1e-9)


def _torques(model, theta, q, qd, qdd):
    return np.array([model.inverse_dynamics(q[k], qd[k], qdd[k], theta).tau
                     for k in range(q.shape[0])])


def measure(case) -> dict:
    """What the tests below assert and docs/identification.md quotes, of one case.

    Every value is against Θ_true and the friction and noise actually simulated, never
    against the identification's own numbers.
    """
    model, theta_true, friction, sim, result = case
    theta_hat = result.models["identified"].theta
    rows = _held_out_rows(sim, result)
    assert np.allclose(sim.t[rows], result.t[result.n_fit:], atol=1e-9)
    noise_rms = np.sqrt(np.mean(sim.noise[rows] ** 2, axis=0))
    # the torque of eq. (39) along the held-out states and at 200 random states
    q, qd, qdd = sim.q[rows], sim.qd[rows], sim.qdd[rows]
    true = _torques(model, theta_true, q, qd, qdd)
    error = np.linalg.norm(_torques(model, theta_hat, q, qd, qdd) - true) / np.linalg.norm(true)
    rng = np.random.default_rng(11)
    lower, upper = model.joint_limits.lower, model.joint_limits.upper
    lower, upper = np.maximum(lower, -np.pi), np.minimum(upper, np.pi)
    qr = lower + (upper - lower) * rng.random((200, model.nv))
    qdr, qddr = rng.standard_normal((2, 200, model.nv))
    true_r = _torques(model, theta_true, qr, qdr, qddr)
    error_r = (np.linalg.norm(_torques(model, theta_hat, qr, qdr, qddr) - true_r)
               / np.linalg.norm(true_r))
    prior_r = (np.linalg.norm(_torques(model, model.theta_nominal, qr, qdr, qddr) - true_r)
               / np.linalg.norm(true_r))
    # the projection on the row space of the package's eq. (44) regressor (not Pinocchio's)
    rng = np.random.default_rng(12)
    stacked = []
    for _ in range(150):
        qs = lower + (upper - lower) * rng.random(model.nv)
        qds, qdds = rng.standard_normal((2, model.nv))
        stacked.append(model.regressor(qs, qds, qds, qdds))
    _, s, vt = np.linalg.svd(np.vstack(stacked), full_matrices=False)
    rank = int(np.sum(s > 1e-9 * s[0]))
    basis = vt[:rank]  # orthonormal basis of the identifiable combinations
    norm = np.linalg.norm(basis @ theta_true.ravel())
    projection = np.linalg.norm(basis @ (theta_hat.ravel() - theta_true.ravel())) / norm
    prior_projection = np.linalg.norm(
        basis @ (model.theta_nominal.ravel() - theta_true.ravel())) / norm
    found = result.models["identified"].friction
    friction_errors = {key: np.abs(getattr(found, key) - getattr(friction, key))
                       for key in ("viscous", "coulomb", "offset")}
    return {
        "held_out_ratio": (result.models["identified"].rms_holdout / noise_rms).tolist(),
        "urdf_held_out_ratio": (result.models["urdf"].rms_holdout / noise_rms).tolist(),
        "torque_error_held_out": float(error), "torque_error_random": float(error_r),
        "prior_torque_error_random": float(prior_r), "rank": rank,
        "projection_error": float(projection), "prior_projection_error": float(prior_projection),
        "friction_error": {key: float(value.max()) for key, value in friction_errors.items()},
        "margins": np.linalg.eigvalsh(pseudo_inertia(theta_hat))[:, 0].tolist(),
        "epsilon": float(result.margin), "solver": result.solver}
