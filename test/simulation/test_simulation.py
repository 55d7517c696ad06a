"""The simulated arm: eq. (39) forward, energy, agreement with the inverse dynamics."""

from __future__ import annotations

import numpy as np
import pytest
from examples import LOADING_CONFIG as CONFIG

from robot_tv_dynamics.loading import load_loading_process
from robot_tv_dynamics.simulation import ArmSimulator, ClosedLoop, demo_loop


def test_pinocchio_aba_path_equals_the_package_forward_dynamics(panda):
    rng = np.random.default_rng(5)
    for kind in ("fill", "drain", "grasp", "timeline"):
        sim = ArmSimulator(panda, load_loading_process(CONFIG / f"{kind}.yaml"))
        for t in (0.5, 2.1, 2.6, 3.3):
            arm = np.r_[np.ones(7), 0.0, 0.0]
            sim.reset(sim.q + 0.3 * rng.normal(size=9) * arm, rng.normal(size=9), t)
            tau = rng.normal(0, 5, 9)
            fast, ref = sim.acceleration(tau), sim.reference_acceleration(tau)
            np.testing.assert_allclose(fast, ref, atol=1e-9 * (1 + np.abs(ref).max()))


def test_step_sample_satisfies_eq39(panda):
    sim = ArmSimulator(panda, load_loading_process(CONFIG / "fill.yaml"))
    sim.reset(sim.q, np.full(9, 0.2), 2.3)
    tau = np.linspace(-3, 3, 9)
    q, qd, t = sim.q.copy(), sim.qd.copy(), sim.t
    loads = sim.loads(t)
    qdd = sim.step(tau)
    terms = panda.inverse_dynamics(q, qd, qdd, loads.theta, loads.theta_dot, loads.psi,
                                   loads.psi_dot)
    np.testing.assert_allclose(terms.tau, tau, atol=1e-9)
    assert sim.t == pytest.approx(t + 1e-3)


def _energy_drift(panda, seconds: float, rate: float = 1000.0) -> float:
    sim = ArmSimulator(panda, rate=rate)
    sim.reset([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02])
    e0 = sum(sim.energy())
    drift = 0.0
    for k in range(int(seconds * rate)):
        sim.step(np.zeros(panda.nv))
        if k % 50 == 0:
            drift = max(drift, abs(sum(sim.energy()) - e0))
    return drift


@pytest.mark.slow
def test_energy_is_conserved_without_load_and_torque(panda):
    # 2 s of passive, chaotic free fall of the 9-dof Panda (fingers fly free): the total
    # energy T + U stays within 1e-4 J (measured ~2e-5 J over 3 s at 1 kHz with RK4)
    drift = _energy_drift(panda, 2.0)
    assert drift < 1e-4, drift


def test_closed_loop_under_a_grasp_stays_finite(panda):
    loop = demo_loop(panda, load_loading_process(CONFIG / "grasp.yaml"))
    for _ in range(300):
        sample = loop.step()
    assert np.all(np.isfinite(sample.q)) and np.all(np.isfinite(sample.phi_classical))


def test_closed_loop_is_deterministic_and_tracks(panda):
    process = load_loading_process(CONFIG / "fill.yaml")
    a, b = demo_loop(panda, process), demo_loop(panda, process)
    for _ in range(500):
        sa, sb = a.step(), b.step()
    np.testing.assert_array_equal(sa.q, sb.q)
    np.testing.assert_array_equal(sa.phi_classical, sb.phi_classical)
    error = np.abs(sa.reference[0] - sa.q)[:7]
    assert error.max() < 0.02  # before the loading starts the loop tracks within ~1°
    assert isinstance(a, ClosedLoop)
