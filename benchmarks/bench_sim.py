"""Benchmark of the simulated arm: real-time factor at 1 kHz, energy drift of the integrator.

Run: ``source scripts/ros_env.sh && .venv/bin/python benchmarks/bench_sim.py``. Prints, for
the Panda (9 dof, example-robot-data):

- the plant alone (RK4 at 1 kHz, fill process, 1 s of filling from t = 2.2 s) and the
  whole closed loop of the demo (plant + computed-torque controller + three estimators
  at 200 Hz): µs per step (best of 7 rounds of 1000 steps: on a shared machine other
  processes rarely load every round) and the real-time factor 1 ms / (time per step);
- the energy drift |ΔE| of 3 s of passive free fall (τ = 0, no load) for RK4 and for
  semi-implicit Euler at 1 kHz, the reason RK4 is the integrator.

Measured on a shared 2-core machine (two runs): plant 39.6–40.4 µs per step, real-time
factor 24.7–25.2 (the goal: ≥ 20); closed loop 132–134 µs (7.4–7.6); |ΔE| 2.1e-5 J
for RK4 (9.9e-6 J over 2 s, the test's span) and 33.6 J for semi-implicit Euler.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.loading import load_loading_process
from robot_tv_dynamics.simulation import ArmSimulator, demo_loop, example_robot_urdf

READY = [0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02]


def per_step(step, steps: int, reset=None, rounds: int = 7) -> float:
    """Best over ``rounds`` of the mean time per step of ``steps`` steps [s] (each round
    starts from ``reset()``, so every round times the same stretch of the process)."""
    best = float("inf")
    for _ in range(rounds):
        if reset is not None:
            reset()
        for _ in range(20):
            step()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def energy_drift(model: RobotModel, integrator: str, seconds: float = 3.0) -> float:
    sim = ArmSimulator(model)
    sim.reset(READY)
    e0 = sum(sim.energy())
    drift = 0.0
    h = sim.dt
    for k in range(int(seconds / h)):
        if integrator == "rk4":
            sim.step(np.zeros(model.nv))
        else:  # semi-implicit Euler: v += h a(q, v); q += h v
            qdd = sim.acceleration(np.zeros(model.nv))
            qd = sim.qd + h * qdd
            sim.reset(sim.q + h * qd, qd, sim.t + h)
        if k % 50 == 0:
            energy = sum(sim.energy())
            if not np.isfinite(energy):
                return float("inf")
            drift = max(drift, abs(energy - e0))
    return drift


def main() -> None:
    model = RobotModel.from_urdf(example_robot_urdf())
    process = load_loading_process(
        Path(__file__).resolve().parents[1] / "config" / "loading" / "fill.yaml")
    plant = ArmSimulator(model, process)
    tau = np.zeros(model.nv)
    dt = per_step(lambda: plant.step(tau), 1000, lambda: plant.reset(READY, t=2.2))
    print(f"plant (RK4, fill, Panda): {dt * 1e6:7.1f} µs/step -> real-time factor "
          f"{1e-3 / dt:5.2f} at 1 kHz")
    loop = demo_loop(model, process)
    dt = per_step(loop.step, 1000)
    print(f"closed loop (plant + controller + 3 estimators): {dt * 1e6:7.1f} µs/step -> "
          f"real-time factor {1e-3 / dt:5.2f} at 1 kHz")
    for integrator in ("rk4", "semi-implicit Euler"):
        drift = energy_drift(model, integrator)
        print(f"energy drift, 3 s passive free fall, {integrator:19s} at 1 kHz: "
              f"max |ΔE| = {drift:.3g} J")


if __name__ == "__main__":
    main()
