"""Cost per update of the payload estimators against ``pin.rnea`` in the same process.

Run (after ``source scripts/ros_env.sh``):
``.venv/bin/python benchmarks/bench_estimator.py [--samples N]``.

For the Panda (load on panda_hand) and the UR5 (load on wrist_3_link), a 1 kHz stream of
well-excited samples (a simulated Fourier motion under a constant payload) goes through
:class:`~robot_tv_dynamics.estimation.OnlineLoadEstimator`, one method at a time; printed:
µs per sample of the whole pipeline (q̈ filter, delay line, regressor rows, base-model τ,
excitation check, update), of its parts, and the ratio to one ``pin.rnea`` call. A 1 kHz
joint_states stream leaves 1000 µs per sample; the node adds message conversion and
publishing (``publish_period``) on top. No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit

import numpy as np
import pinocchio as pin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from particle_lagrangian import find_example_robot_urdf  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.estimation import (  # noqa: E402
    METHODS,
    LoadEstimatorSettings,
    OnlineLoadEstimator,
)
from robot_tv_dynamics.identification.excitation import FourierTrajectory  # noqa: E402

ROBOTS = {"panda": "panda_hand", "ur5": "wrist_3_link"}


def samples(model: RobotModel, count: int, rate: float = 1000.0):
    """(t, q, q̇, τ) at ``rate``: a 3-harmonic motion, τ by RNEA with 0.5 kg on the load."""
    rng = np.random.default_rng(0)
    nv = model.nv
    a = rng.uniform(-0.3, 0.3, (nv, 3))
    b = rng.uniform(-0.3, 0.3, (nv, 3))
    limits = model.joint_limits
    centre = np.where(np.isfinite(limits.lower + limits.upper),
                      0.5 * (limits.lower + limits.upper), 0.0)
    trajectory = FourierTrajectory(0.2, centre, a, b)
    t = np.arange(count) / rate
    q, qd, qdd = trajectory.evaluate(t)
    rd = model.dynamics()
    rd.set_loads(model.theta_nominal)
    tau = np.array([rd.inverse_dynamics(q[k], qd[k], qdd[k]) for k in range(count)])
    return t + 1.0, q, qd, tau


def per_call(function, number: int) -> float:
    """Best of 5 repeats, µs per call."""
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3000, help="samples per method")
    args = parser.parse_args()
    for robot, link in ROBOTS.items():
        model = RobotModel.from_urdf(find_example_robot_urdf(robot))
        t, q, qd, tau = samples(model, args.samples)
        pm = model.pinocchio_model
        data = pm.createData()
        q_pin = model.pinocchio_configuration(q[0])
        v = qd[0]
        rnea = per_call(lambda pm=pm, data=data, q_pin=q_pin, v=v: pin.rnea(
            pm, data, q_pin, v, v), 2000)
        print(f"{robot} ({model.nv} dof, load on {link}): pin.rnea {rnea:.2f} µs")
        for method in METHODS:
            est = OnlineLoadEstimator(model, link, LoadEstimatorSettings(method=method))
            start = time.perf_counter()
            for k in range(t.size):
                est.add_sample(t[k], q[k], qd[k], tau[k])
            total = (time.perf_counter() - start) / t.size * 1e6
            meas, check, w = est.measurement, est.excitation, est.weights
            x = (q[5], qd[5], qd[5], tau[5])
            rows = meas.measure(*x)
            parts = {
                "regressor + base τ": per_call(lambda meas=meas, x=x: meas.measure(*x), 500),
                "excitation check": per_call(
                    lambda check=check, r=rows.regressor, w=w: check.add(r, w), 500),
            }
            print(f"  {method:9s}: {total:7.1f} µs per sample ({total / rnea:5.1f}× rnea; "
                  f"{est.estimator.updates} updates, {est.held} held); " + ", ".join(
                      f"{name} {value:.1f} µs" for name, value in parts.items()))


if __name__ == "__main__":
    main()
