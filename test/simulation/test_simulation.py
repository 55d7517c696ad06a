"""The simulated arm: eq. (39) forward, energy, agreement with the inverse dynamics."""

from __future__ import annotations

import numpy as np
import pytest
from support.examples import LOADING_CONFIG as CONFIG

from robot_tv_dynamics import InvalidInputError
from robot_tv_dynamics.dynamics import psi_momentum
from robot_tv_dynamics.loading import body_loads, load_loading_process
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


READY = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02])


def _textbook_rk4(model, process, q, tau, t0: float, seconds: float, rate: float,
                  load_times=(0.0, 0.5, 0.5, 1.0)):
    """RK4 on (q, q̇) written out, the loads of stage i taken at t + load_times[i]·h
    (default: each stage's own time; (0, 0, 1, 1) is the plant's loads-once-per-step)."""
    h, qd, rd = 1.0 / rate, np.zeros(model.nv), model.dynamics()
    q = np.array(q, dtype=float)

    def f(t, q, qd):
        rd.set_loads(*body_loads(model, process, t, model.theta_nominal))
        return np.array(rd.forward_dynamics(q, qd, tau))

    c1, c2, c3, c4 = load_times
    for k in range(int(round(seconds * rate))):
        t = t0 + k * h
        a1 = f(t + c1 * h, q, qd)
        q2, v2 = q + h / 2 * qd, qd + h / 2 * a1
        a2 = f(t + c2 * h, q2, v2)
        q3, v3 = q + h / 2 * v2, qd + h / 2 * a2
        a3 = f(t + c3 * h, q3, v3)
        q4, v4 = q + h * v3, qd + h * a3
        a4 = f(t + c4 * h, q4, v4)
        q, qd = q + h / 6 * (qd + 2 * v2 + 2 * v3 + v4), qd + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
    return q, qd


@pytest.mark.parametrize("t0", [1.95, 2.3, 4.1])
def test_the_step_is_textbook_rk4_with_the_loads_once_per_step(panda, t0):
    """The plant's RK4 (stage states as weight matrices against [q; q̇; k1…k4], the load
    row as one vector) equals RK4 written out with whole-arm loads set at t for stages 1–2
    and at t + h for 3–4: 0.1 s across the valve opening, during the fill, and across
    the stream's end; within 1e-12 rad and rad/s (measured ≤ 4e-15 and 8e-15)."""
    process = load_loading_process(CONFIG / "fill.yaml")
    tau = np.array(panda.dynamics().inverse_dynamics(READY, np.zeros(9), np.zeros(9)))
    sim = ArmSimulator(panda, process)
    sim.reset(READY, None, t0)
    for _ in range(100):
        sim.step(tau)
    q, qd = _textbook_rk4(panda, process, READY, tau, t0, 0.1, 1000.0, (0.0, 0.0, 1.0, 1.0))
    assert np.abs(qd).max() > 1e-3  # the load moves the arm: the comparison means something
    np.testing.assert_allclose(sim.q, q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.qd, qd, rtol=0, atol=1e-12)


def test_loads_once_per_step_stay_close_to_exact_stage_times_and_converge_as_h2(panda):
    """The plant changes the loads once per step (stages 1–2 at t, 3–4 at t + h): while the
    cup fills, its joint angles after 0.2 s stay within 1e-8 rad of RK4 with the loads at
    the exact stage times (measured 2.2e-9), and the gap falls 4× when h halves."""
    process = load_loading_process(CONFIG / "fill.yaml")
    tau = np.array(panda.dynamics().inverse_dynamics(READY, np.zeros(9), np.zeros(9)))
    gaps = []
    for rate in (1000.0, 2000.0):
        sim = ArmSimulator(panda, process, rate=rate)
        sim.reset(READY, None, 2.3)
        for _ in range(int(round(0.2 * rate))):
            sim.step(tau)
        exact, _ = _textbook_rk4(panda, process, READY, tau, 2.3, 0.2, rate)
        gaps.append(float(np.abs(sim.q - exact).max()))
    assert 1e-12 < gaps[0] < 1e-8, gaps
    assert 3.0 < gaps[0] / gaps[1] < 5.0, gaps


def test_loads_record_matches_the_process_and_is_read_only(panda):
    process = load_loading_process(CONFIG / "fill.yaml")
    sim = ArmSimulator(panda, process)
    loads = sim.loads(2.4)
    expected = body_loads(panda, process, 2.4, panda.theta_nominal)
    for value, reference in zip((loads.theta, loads.theta_dot, loads.psi, loads.psi_dot),
                                expected, strict=True):
        np.testing.assert_allclose(value, reference, rtol=0, atol=1e-15)
        assert not value.flags.writeable
    np.testing.assert_allclose(loads.gamma, psi_momentum(loads.psi), atol=1e-15)
    np.testing.assert_array_equal(loads.rows[0], loads.theta[sim.load_body])
    assert sim.loads(2.4) is loads  # memoised
    free = ArmSimulator(panda).loads(0.0)
    np.testing.assert_array_equal(free.theta, panda.theta_nominal)
    assert free.rows is None and not free.theta_dot.any() and not free.gamma_dot.any()


def test_a_bad_torque_is_refused_before_anything_moves(panda):
    sim = ArmSimulator(panda, load_loading_process(CONFIG / "fill.yaml"))
    q = sim.q.copy()
    for bad in (np.full(9, np.nan), np.zeros(8), [0.0] * 8, np.zeros((9, 1))):
        with pytest.raises(InvalidInputError, match="^tau: "):
            sim.step(bad)
    np.testing.assert_array_equal(sim.q, q)
    assert sim.steps == 0
    sim.step([0] * 9)  # integers in a list are a torque
    assert sim.steps == 1


def test_the_start_pose_is_the_panda_ready_pose_on_the_panda_only(panda, ur5):
    """One start pose for the demo and ``adapt``: the Panda recognised by its joints."""
    from robot_tv_dynamics import demo
    from robot_tv_dynamics.control import setups
    from robot_tv_dynamics.simulation import PANDA_READY, default_reference, start_pose

    np.testing.assert_array_equal(start_pose(panda), PANDA_READY)
    limits = ur5.joint_limits
    middle = 0.5 * (np.asarray(limits.lower) + np.asarray(limits.upper))
    np.testing.assert_allclose(start_pose(ur5), np.where(np.isfinite(middle), middle, 0.0))
    assert not np.allclose(start_pose(ur5)[:6], PANDA_READY[:6])
    # the demo's reference starts there, and both callers use this one function
    for model in (panda, ur5):
        reference = default_reference(list(model.joint_names), model.joint_limits.lower,
                                      model.joint_limits.upper, model.joint_limits.prismatic)
        np.testing.assert_array_equal(reference(0.0)[0], start_pose(model))
    assert demo.start_pose is start_pose and setups.start_pose is start_pose
