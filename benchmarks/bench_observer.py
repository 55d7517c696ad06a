"""Cost per sample of the momentum observer against ``pin.rnea`` in the same process.

Run (after ``source scripts/ros_env.sh``):
``.venv/bin/python benchmarks/bench_observer.py [--repeat N]``.
Prints µs per sample and the ratio to ``pin.rnea`` for the Panda and the UR5: the
momentum terms alone by the reference contraction (one ``model.kinematics`` call +
contractions) and by the recursive path the observer uses (two RNEA passes, loads
held), the full generalized and classical observer updates (with input checks; the
generalized one with the same Θ every sample and with a new Θ every sample, as in a
replay of a filling cup), and the contact detector. No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from collections.abc import Callable

import numpy as np
import pinocchio as pin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.observer import (  # noqa: E402
    ContactDetector,
    MomentumEvaluator,
    MomentumObserver,
    ObserverConfig,
    momentum_terms,
)
from robot_tv_dynamics.observer.momentum import as_gamma  # noqa: E402


class _Loads:
    def __init__(self, theta: np.ndarray, psi: np.ndarray) -> None:
        self.theta, self.psi = theta, psi


def _time(function: Callable[[], object], repeat: int) -> float:
    """Best-of-5 mean time per call [µs]."""
    timer = timeit.Timer(function)
    return min(timer.repeat(5, repeat)) / repeat * 1e6


def bench(name: str, repeat: int) -> list[tuple[str, float]]:
    robot = RobotModel.from_urdf(find_example_robot_urdf(name))
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    rng = np.random.default_rng(0)
    nv, n = robot.nv, robot.n_bodies
    q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
    qd, tau = rng.normal(size=nv), rng.normal(size=nv)
    theta = np.array(robot.theta_nominal)
    psi = 0.01 * rng.normal(size=(n, 12))
    gamma = as_gamma(robot, psi)
    loads = _Loads(theta, psi)
    observers = {kind: MomentumObserver(robot, ObserverConfig(kind=kind))
                 for kind in ("generalized", "classical")}
    detector = ContactDetector(robot.joint_names, 1.0)
    clock = {"t": 0.0}

    def step(observer: MomentumObserver, new_loads: bool = False) -> Callable[[], object]:
        changing = [_Loads(theta * (1.0 + 1e-6 * k), psi) for k in range(2)]

        def update() -> object:
            clock["t"] += 1e-3
            sample = changing[int(clock["t"] * 1e3) % 2] if new_loads else loads
            return observer.update(clock["t"], q, qd, tau, sample)
        return update

    evaluator = MomentumEvaluator(robot)

    residual = np.zeros(nv)
    rows = [
        ("pin.rnea", lambda: pin.rnea(model, data, q, qd, qd)),
        ("kinematics (J, ∂J/∂q, poses)", lambda: robot.kinematics(q)),
        ("momentum_terms (p, β), contraction", lambda: momentum_terms(robot, q, qd, theta, gamma)),
        ("MomentumEvaluator (p, β), held", lambda: evaluator.terms(q, qd, theta, gamma)),
        ("observer update, generalized", step(observers["generalized"])),
        ("  the same, new Θ every sample", step(observers["generalized"], True)),
        ("observer update, classical", step(observers["classical"])),
        ("contact detector update", lambda: detector.update(0.0, residual)),
    ]
    return [(label, _time(function, repeat)) for label, function in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    for name in ("panda", "ur5"):
        rows = bench(name, args.repeat)
        rnea = rows[0][1]
        print(f"{name}:")
        for label, micros in rows:
            print(f"  {label:<38} {micros:8.1f} µs/sample   {micros / rnea:6.1f} × rnea")
    return 0


if __name__ == "__main__":
    sys.exit(main())
