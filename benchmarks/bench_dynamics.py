"""Timing of eq. (39) against Pinocchio's own calls in the same process.

Run: ``bash scripts/run_main.sh`` sets up the venv; then
``.venv/bin/python benchmarks/bench_dynamics.py [--repeat N] [--clock cpu]``
(or ``source scripts/ros_env.sh && python benchmarks/bench_dynamics.py``).
Prints µs per call and the ratio to ``pin.rnea`` for the Panda and the UR5: first the
term-by-term reference (``RobotModel``), then the recursive path
(``robot_tv_dynamics.dynamics.recursive``) against its goals, ≤ 5 × rnea with the
loads held and ≤ 10 × with Θ, Θ̇, Ψ, Ψ̇ new every call (``RobotModel.torque``, that is
``set_loads_and_inverse_dynamics``; nothing is skipped for unchanged values: every call
redoes the whole update), forward dynamics (ABA) with the loads held and with them new
every call (≤ 12 ×: ``RobotModel.forward_dynamics``, that is
``set_loads_and_forward_dynamics``), the one-row update ``set_body_loads``
and the unchecked forward dynamics that the simulator's RK4 stages use. The recursive rows
are the best of 9 rounds that time every row in turn (N calls each); on a shared machine,
run it twice. ``--clock cpu`` times by this thread's CPU clock instead of the wall clock:
time the process spends waiting for a core then does not count, so the ratios stay
meaningful when other processes load the machine (wall-clock rnea varied 2–38 µs between
runs under a load of 20 on 2 cores, the CPU clock 1.9–2.4 µs); it still counts cache
misses and frequency changes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit
from collections.abc import Callable

import numpy as np
import pinocchio as pin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.dynamics import RecursiveDynamics  # noqa: E402

#: The clock the timings read: ``--clock`` sets it (wall: perf_counter, cpu: thread_time).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.thread_time}
_clock = CLOCKS["wall"]


def _time(function: Callable[[], object], repeat: int) -> float:
    """Best-of-5 mean time per call [µs]."""
    timer = timeit.Timer(function, timer=_clock)
    return min(timer.repeat(5, repeat)) / repeat * 1e6


def _state(robot: RobotModel) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    n, nv = robot.n_bodies, robot.nv
    q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
    qd, qdd = rng.normal(size=nv), rng.normal(size=nv)
    theta = np.array(robot.theta_nominal)
    theta_dot = 0.1 * rng.normal(size=(n, 10))
    psi, psi_dot = rng.normal(size=(n, 12)), rng.normal(size=(n, 12))
    return q, qd, qdd, theta, theta_dot, psi, psi_dot


def bench_recursive(name: str, repeat: int) -> list[tuple[str, float, str]]:
    """The recursive path (label, µs per call, goal) with all of Θ̇, Ψ, Ψ̇ non-zero."""
    robot = RobotModel.from_urdf(find_example_robot_urdf(name))
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    q, qd, qdd, theta, theta_dot, psi, psi_dot = _state(robot)
    loads = (theta, theta_dot, psi, psi_dot)
    rd = RecursiveDynamics(robot)
    rd.set_loads(*loads)
    tau = rd.inverse_dynamics(q, qd, qdd)
    public = RecursiveDynamics(robot, shared_buffers=False)
    public.set_loads(*loads)
    shifted = RecursiveDynamics(robot)
    theta_m0 = theta.copy()
    theta_m0[-1, 0] = 0.0  # m = 0 with h ≠ 0: held shifted, one more RNEA
    shifted.set_loads(theta_m0, theta_dot, psi, psi_dot)
    assert not shifted.held_directly.all() and rd.held_directly.all()
    by_row, body = RecursiveDynamics(robot), robot.n_bodies - 1
    by_row.set_loads(*loads)
    row = tuple(value[body].copy() for value in loads)

    def new_loads() -> object:
        return robot.torque(q, qd, qdd, theta, theta_dot, psi, psi_dot)

    rows = [
        ("pin.rnea", lambda: pin.rnea(model, data, q, qd, qdd), ""),
        ("τ, loads held", lambda: rd.inverse_dynamics(q, qd, qdd), "≤ 5"),
        ("τ, Θ, Θ̇, Ψ, Ψ̇ new every call", new_loads, "≤ 10"),
        ("  set_loads alone (the update part)", lambda: rd.set_loads(*loads), ""),
        ("set_body_loads (one row, all four new)",
         lambda: by_row.set_body_loads(body, *row), ""),
        ("forward dynamics (ABA), loads held", lambda: rd.forward_dynamics(q, qd, tau), ""),
        ("  the same, unchecked (plant stages)",
         lambda: rd.forward_dynamics_unchecked(q, qd, tau), ""),
        ("q̈, Θ, Θ̇, Ψ, Ψ̇ new every call",
         lambda: robot.forward_dynamics(q, qd, tau, *loads), "≤ 12"),
        ("M(q, Θ) (CRBA), loads held", lambda: rd.mass_matrix(q), ""),
        ("bias τ(q̈ = 0), loads held", lambda: rd.bias(q, qd), ""),
        ("τ, loads held, a row shifted (m = 0)", lambda: shifted.inverse_dynamics(q, qd, qdd), ""),
        ("τ, loads held, public API only", lambda: public.inverse_dynamics(q, qd, qdd), ""),
        ("full term breakdown (RobotModel)",
         lambda: robot.inverse_dynamics(q, qd, qdd, *loads), ""),
    ]
    return [(label, us, goal) for (label, _, goal), us in
            zip(rows, _time_interleaved([f for _, f, _ in rows], repeat), strict=True)]


def _time_interleaved(functions: list[Callable[[], object]], repeat: int,
                      rounds: int = 9) -> list[float]:
    """Best per-call time [µs] of each function over ``rounds`` rounds that time them all in
    turn: load from other processes then rarely hits one row in every round."""
    timers = [timeit.Timer(function, timer=_clock) for function in functions]
    best = [float("inf")] * len(functions)
    for _ in range(rounds):
        for k, timer in enumerate(timers):
            best[k] = min(best[k], timer.timeit(repeat) / repeat * 1e6)
    return best


def bench(name: str, repeat: int) -> list[tuple[str, float]]:
    robot = RobotModel.from_urdf(find_example_robot_urdf(name))
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    rng = np.random.default_rng(0)
    n, nv = robot.n_bodies, robot.nv
    q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
    qd, qdd = rng.normal(size=nv), rng.normal(size=nv)
    theta = np.array(robot.theta_nominal)
    theta_dot = 0.1 * rng.normal(size=(n, 10))
    psi, psi_dot = rng.normal(size=(n, 12)), rng.normal(size=(n, 12))
    tau = robot.inverse_dynamics(q, qd, qdd, theta, theta_dot, psi, psi_dot).tau
    rows = [
        ("pin.rnea", lambda: pin.rnea(model, data, q, qd, qdd)),
        ("pin.crba", lambda: pin.crba(model, data, q)),
        ("pin.aba", lambda: pin.aba(model, data, q, qd, tau)),
        ("pin.computeCoriolisMatrix", lambda: pin.computeCoriolisMatrix(model, data, q, qd)),
        ("pin.computeJointTorqueRegressor",
         lambda: pin.computeJointTorqueRegressor(model, data, q, qd, qdd)),
        ("kinematics (J, ∂J/∂q, poses)", lambda: robot.kinematics(q)),
        ("inverse_dynamics, full eq. (39)",
         lambda: robot.inverse_dynamics(q, qd, qdd, theta, theta_dot, psi, psi_dot)),
        ("inverse_dynamics, classical", lambda: robot.inverse_dynamics(q, qd, qdd, theta)),
        ("forward_dynamics, full eq. (39)",
         lambda: robot.forward_dynamics(q, qd, tau, theta, theta_dot, psi, psi_dot)),
        ("regressor R(q, q̇, v, a)", lambda: robot.regressor(q, qd, qd, qdd)),
    ]
    return [(label, _time(function, repeat)) for label, function in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2000, help="calls per timing run")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall clock, or this thread's CPU time (for a loaded machine)")
    args = parser.parse_args()
    global _clock
    _clock = CLOCKS[args.clock]
    print(f"pin {pin.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}, "
          f"{args.clock} clock")
    for name in ("panda", "ur5"):
        rows = bench(name, args.repeat)
        rnea = rows[0][1]
        print(f"\n{name}")
        print(f"  {'call':36s} {'µs/call':>9s} {'× rnea':>8s}")
        for label, us in rows:
            print(f"  {label:36s} {us:9.1f} {us / rnea:8.1f}")
        recursive = bench_recursive(name, args.repeat)
        rnea = recursive[0][1]
        print(f"\n{name}, recursive path (robot_tv_dynamics.dynamics.recursive)")
        print(f"  {'call':40s} {'µs/call':>9s} {'× rnea':>8s} {'goal':>6s}")
        for label, us, goal in recursive:
            print(f"  {label:40s} {us:9.2f} {us / rnea:8.1f} {goal:>6s}")


if __name__ == "__main__":
    main()
