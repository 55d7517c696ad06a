"""Identification on data from the package's simulated arm (ArmSimulator, RK4 at 1 kHz).

The plant carries Θ_true and joint friction; a computed-torque controller built on the
URDF's Θ (the wrong model) tracks an ``excite`` trajectory; the recorded effort is the
commanded motor torque plus noise (the plant receives it minus friction), q and q̇ are
the integrated state. Unlike the direct samples of the accuracy test, the motion is the
plant's response to zero-order-held torques, tracking errors included, and the
friction acts inside the loop (accelerations step at velocity reversals).
"""

from __future__ import annotations

import numpy as np
import pytest
from support.identification_helpers import perturbed_theta, random_friction

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.identification.data import check_samples, prepare
from robot_tv_dynamics.identification.excitation import design_excitation
from robot_tv_dynamics.identification.pipeline import identify
from robot_tv_dynamics.inertia import pseudo_inertia
from robot_tv_dynamics.simulation import ArmSimulator

RATE, DURATION = 1000.0, 6.0


@pytest.fixture(scope="module")
def closed_loop(urdf_paths):
    model = RobotModel.from_urdf(urdf_paths["ur5"])
    rng = np.random.default_rng(21)
    theta_true = perturbed_theta(model, rng)
    friction = random_friction(model.nv, rng)
    sigma = np.linspace(0.05, 0.2, model.nv)
    design = design_excitation(model, duration=DURATION, harmonics=4, base_frequency=1 / 3,
                               seed=2)
    steps = int(DURATION * RATE)
    t = np.arange(steps) / RATE
    q_ref, qd_ref, qdd_ref = design.trajectory.evaluate(t)
    plant = ArmSimulator(model, theta_base=theta_true, q0=q_ref[0], rate=RATE)
    wn = 20.0
    q = np.empty((steps, model.nv))
    qd = np.empty_like(q)
    tau = np.empty_like(q)
    for k in range(steps):
        q[k], qd[k] = plant.q, plant.qd
        command = qdd_ref[k] + wn * wn * (q_ref[k] - q[k]) + 2 * wn * (qd_ref[k] - qd[k])
        tau[k] = model.inverse_dynamics(q[k], qd[k], command, model.theta_nominal).tau
        plant.step(tau[k] - friction.torque(qd[k]))
    noise = rng.standard_normal(tau.shape) * sigma
    samples = check_samples("ArmSimulator", model.joint_names, t, q, qd, tau + noise)
    # cut-off 20 Hz, not the default 5 Hz: friction acts inside the loop, so q̈ steps at
    # every velocity reversal and a 5 Hz filter smears those steps (held-out RMS 1.17-1.29×
    # the noise at 5 Hz, 1.01-1.07× at 20 Hz, measured)
    return (model, theta_true, friction, noise, t, q, qd_ref,
            identify(model, prepare(samples, cutoff=20.0)))


def test_closed_loop_data_are_predicted_to_the_noise_and_the_arm_tracked(closed_loop):
    _, _, _, noise, t, _, _, result = closed_loop
    rows = np.rint((result.t[result.n_fit:] - t[0]) * RATE).astype(int)
    noise_rms = np.sqrt(np.mean(noise[rows] ** 2, axis=0))
    ratio = result.models["identified"].rms_holdout / noise_rms
    print("closed loop: held-out RMS / noise RMS", np.round(ratio, 3))
    assert np.all(ratio <= 1.2)
    assert np.all(result.models["urdf"].rms_holdout > 2 * noise_rms)


def test_closed_loop_identification_recovers_theta_true_and_friction(closed_loop):
    model, theta_true, friction, _, _, _, _, result = closed_loop
    rng = np.random.default_rng(1)
    q = rng.uniform(-np.pi, np.pi, (100, model.nv))
    qd, qdd = rng.standard_normal((2, 100, model.nv))
    theta_hat = result.models["identified"].theta
    true = np.array([model.inverse_dynamics(q[k], qd[k], qdd[k], theta_true).tau
                     for k in range(100)])
    hat = np.array([model.inverse_dynamics(q[k], qd[k], qdd[k], theta_hat).tau
                    for k in range(100)])
    error = np.linalg.norm(hat - true) / np.linalg.norm(true)
    found = result.models["identified"].friction
    worst = max(np.abs(found.viscous - friction.viscous).max(),
                np.abs(found.coulomb - friction.coulomb).max(),
                np.abs(found.offset - friction.offset).max())
    print(f"closed loop: random-state torque error {error:.4f}, worst friction error {worst:.3f}")
    assert error <= 0.05
    assert worst <= 0.1
    margins = np.linalg.eigvalsh(pseudo_inertia(theta_hat))[:, 0]
    assert np.all(margins >= result.margin * (1 - 1e-9))
