"""The observer on the simulated Panda (ArmSimulator, RK4 at 1 kHz) under the fill process.

- An external wrench J_cᵀF during the fill: the generalized residual follows the
  first-order lag of J_cᵀF (time constant 1/K_O); the detector fires within the lag's
  delay; the classical observer raises a false contact before the wrench.
- The demo's closed loop (``simulation.demo_loop`` with config/loading/fill.yaml, and
  grasp.yaml, drain.yaml; noisy measured torques): no contact from the generalized
  observer, a false collision from the classical one at the same threshold.
- The noise floor of tuning.residual_noise_std against a Monte Carlo run.

Expected values come from the simulator's own torques (τ, J_cᵀF) passed through the
exact solution of ẏ = K_O(τ_ext − y) for a piecewise-constant input, never from the
observer.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from robot_tv_dynamics.inertia import phi_to_pinocchio
from robot_tv_dynamics.loading import load_loading_process, loading_process_from_dict
from robot_tv_dynamics.observer import (
    ContactDetector,
    ExternalWrench,
    MomentumObserver,
    ObserverConfig,
)
from robot_tv_dynamics.observer.tuning import residual_noise_std
from robot_tv_dynamics.simulation import ArmSimulator, demo_loop

FILL = Path(__file__).resolve().parents[2] / "config" / "loading" / "fill.yaml"
GAIN = 50.0  # K_O [1/s]: time constant 20 ms
THRESHOLD = 1.0  # N·m per joint
WRENCH = ExternalWrench("panda_link5", (15.0, 0.0, -20.0), 0.6, 1.0, point=(0.0, 0.05, -0.1))


def lag(u, gain, h):
    """Exact solution of ẏ = K(u − y), y(0) = 0, for u held over each sample."""
    a = math.exp(-gain * h)
    y = np.zeros_like(u)
    for k in range(1, len(u)):
        y[k] = a * y[k - 1] + (1 - a) * u[k - 1]
    return y


@pytest.fixture(scope="module")
def wrench_run(panda):
    """1.5 s, PD + gravity hold on the empty-cup model, 0.5 kg/s fill from 0.2 s, wrench 0.6–1 s."""
    config = yaml.safe_load(FILL.read_text())
    config.update(start=0.2, fill_time=1.0, mass_flow=0.5)
    process = loading_process_from_dict(config)
    limits = panda.joint_limits
    q0 = 0.5 * (limits.lower + limits.upper)
    q0[3] = -1.5
    sim = ArmSimulator(panda, process, q0=q0, rate=1000.0)
    theta0 = sim.loads(0.0).theta
    pm = panda.pinocchio_model.copy()
    for l in range(panda.n_bodies):
        pm.inertias[l + 1] = phi_to_pinocchio(theta0[l])
    data = pm.createData()
    observers = {kind: MomentumObserver(panda, ObserverConfig(gain=GAIN, kind=kind,
                                                              torque_rule="hold"),
                                        theta_nominal=theta0)
                 for kind in ("generalized", "classical")}
    out = {"t": [], "ext": [], "generalized": [], "classical": []}
    for _ in range(1500):
        t, q, qd = sim.t, sim.q.copy(), sim.qd.copy()
        tau = np.array(pin.rnea(pm, data, q, qd, 100.0 * (q0 - q) - 20.0 * qd))
        ext = WRENCH.joint_torque(panda, q, t)
        loads = sim.loads(t)
        for kind, observer in observers.items():
            out[kind].append(observer.update(t, q, qd, tau, loads))
        out["t"].append(t)
        out["ext"].append(ext)
        sim.step(tau + ext)  # the motor torque τ and J_cᵀF, both held over the step
    run = {key: np.array(value) for key, value in out.items()}
    run["expected"] = lag(run["ext"], GAIN, sim.dt)
    run["h"] = sim.dt
    return run


def test_generalized_residual_follows_the_lagged_external_torque(wrench_run):
    t, r, y = wrench_run["t"], wrench_run["generalized"], wrench_run["expected"]
    assert np.abs(wrench_run["ext"]).max() > 10.0  # N·m: a real push
    during = (t >= WRENCH.t_start) & (t < WRENCH.t_end + 0.1)
    # during the contact: quadrature level (measured 8e-6 N·m of 13.5 N·m)
    assert np.abs(r - y)[during].max() <= 1e-4
    # the whole run, fill included: the plant's RK4 error where the stream hits the
    # cup's bottom (a jump of Ψ̇) shows, measured 6e-3 N·m
    assert np.abs(r - y).max() <= 1e-2


def test_residual_rises_with_time_constant_one_over_gain(wrench_run):
    t, r, ext = wrench_run["t"], wrench_run["generalized"], wrench_run["ext"]
    joint = int(np.argmax(np.abs(ext).max(axis=0)))
    k0 = int(np.searchsorted(t, WRENCH.t_start))
    k_tau = k0 + round(1.0 / GAIN / wrench_run["h"]) + 1  # the sample after one time constant
    fraction = r[k_tau, joint] / ext[k0, joint]
    assert abs(fraction - (1 - math.exp(-1))) < 0.02


def test_detector_fires_within_the_lag_delay_and_classical_fires_falsely(panda, wrench_run):
    t, ext, h = wrench_run["t"], wrench_run["ext"], wrench_run["h"]
    a_step = np.abs(ext[np.searchsorted(t, WRENCH.t_start)])
    with np.errstate(divide="ignore", invalid="ignore"):
        delay = np.where(a_step > THRESHOLD, -np.log(1 - THRESHOLD / a_step) / GAIN, np.inf)
    detector = ContactDetector(panda.joint_names, THRESHOLD, release=0.5)
    for tk, rk in zip(t, wrench_run["generalized"], strict=True):
        detector.update(tk, rk)
    events = detector.events
    assert events, "no contact detected"
    first = min(events, key=lambda e: e.t_start)
    assert first.t_start >= WRENCH.t_start
    assert first.t_start - WRENCH.t_start <= delay.min() + 2 * h
    assert first.joint == panda.joint_names[int(np.argmin(delay))]
    assert all(e.t_end is not None and e.t_end - WRENCH.t_end < 0.1 for e in events)
    classical = ContactDetector(panda.joint_names, THRESHOLD, release=0.5)
    for tk, rk in zip(t, wrench_run["classical"], strict=True):
        classical.update(tk, rk)
    assert min(e.t_start for e in classical.events) < WRENCH.t_start  # the fill, flagged


#: Scenario → (duration [s], loading start [s], bound on the generalized peak [N·m]).
SCENARIOS = {
    # measured generalized / classical peaks: fill 0.013 / 2.84, grasp 0.013 / 4.05,
    # drain 0.013 / 1.32 N·m (0.013: the torque noise σ = 0.02 N·m, low-passed)
    "fill": (5.0, 2.0, 0.05),
    "grasp": (2.5, 1.0, 0.05),
    # drain: the valve opens smoothly, so Ψ is C¹ and the plant misses no impulse
    "drain": (5.0, 1.0, 0.05),
}


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def demo_run(request, panda):
    """The demo's closed loop (noisy measured torques, σ = 0.02 N·m) under a loading file."""
    scenario = request.param
    duration = SCENARIOS[scenario][0]
    path = FILL.with_name(f"{scenario}.yaml")
    loop = demo_loop(panda, load_loading_process(path))
    theta0 = loop.plant.loads(0.0).theta
    observers = {kind: MomentumObserver(panda, ObserverConfig(gain=GAIN, kind=kind,
                                                              torque_rule="hold"),
                                        theta_nominal=theta0)
                 for kind in ("generalized", "classical")}
    out = {"t": [], "generalized": [], "classical": []}
    for _ in range(int(round(duration * loop.config.rate))):
        s = loop.step()
        out["t"].append(s.t)
        for kind, observer in observers.items():
            out[kind].append(observer.update(s.t, s.q, s.qd, s.tau_measured, s.loads))
    return scenario, {key: np.array(value) for key, value in out.items()}


def test_loading_raises_no_contact_in_the_generalized_observer_and_a_false_one_in_the_classical(
        panda, demo_run):
    scenario, run = demo_run
    _, start, bound = SCENARIOS[scenario]
    threshold = 0.5  # N·m: > 100× the generalized residual's noise σ (3e-3 N·m)
    peaks, events = {}, {}
    for kind in ("generalized", "classical"):
        detector = ContactDetector(panda.joint_names, threshold)
        for tk, rk in zip(run["t"], run[kind], strict=True):
            detector.update(tk, rk)
        peaks[kind], events[kind] = np.abs(run[kind]).max(), detector.events
    assert events["generalized"] == []
    assert peaks["generalized"] < bound
    assert events["classical"] and min(e.t_start for e in events["classical"]) >= start
    assert peaks["classical"] > 1.0
    print(f"\n[observer/{scenario}] peak |r|: generalized {peaks['generalized']:.3f} N·m, "
          f"classical {peaks['classical']:.3f} N·m")


def test_noise_floor_formula_matches_monte_carlo(panda):
    rng = np.random.default_rng(3)
    q = 0.5 * (panda.joint_limits.lower + panda.joint_limits.upper)
    theta = panda.theta_nominal
    h, sigma_v, sigma_t = 1e-3, 2e-3, 0.05
    mass = panda.mass_matrix(q, theta)
    tau_g = panda.inverse_dynamics(q, np.zeros(panda.nv), np.zeros(panda.nv), theta).tau
    for rule in ("trapezoidal", "hold"):
        observer = MomentumObserver(panda, ObserverConfig(gain=GAIN, torque_rule=rule))
        r = np.array([observer.update(k * h, q, rng.normal(0, sigma_v, panda.nv),
                                      tau_g + rng.normal(0, sigma_t, panda.nv))
                      for k in range(8000)])[500:]
        predicted = residual_noise_std(mass, GAIN, h, sigma_v, sigma_t, rule)
        np.testing.assert_allclose(r.std(axis=0), predicted, rtol=0.1)
    # the velocity part grows with the gain and with the inertia the joint sees
    low = residual_noise_std(mass, 10.0, h, sigma_v)
    assert np.all(residual_noise_std(mass, 50.0, h, sigma_v) > 4.5 * low)
