"""Cost per update of the payload estimators against ``pin.rnea`` in the same process.

Run (after ``source scripts/ros_env.sh``):
``.venv/bin/python benchmarks/bench_estimator.py [--samples N]``.

For the Panda (load on panda_hand) and the UR5 (load on wrist_3_link), a 1 kHz stream of
well-excited samples (a simulated Fourier motion under a constant payload) goes through
:class:`~robot_tv_dynamics.estimation.OnlineLoadEstimator`, one method at a time; printed:
µs per sample of the whole pipeline (q̈ filter, delay line, regressor rows, base-model τ,
excitation check, update), of its parts, and the ratio to one ``pin.rnea`` call; for the
projected method also how often the load projection was active and which solver
answered (classical: its reported load, projected every 10th sample as the node's
publish_period does); "filter update alone" is LoadFilter.update on stored rows, with
``pin.rnea`` timed again just after. Times are this process's CPU time
(``time.process_time``), not wall time: on a machine loaded by other work they are what
the estimator costs, not how long it waited; the ratios to ``pin.rnea`` are still the
numbers to compare.
A 1 kHz
joint_states stream leaves 1000 µs per sample; the node adds message conversion and
publishing (``publish_period``) on top. No timing is asserted anywhere.

``--node [--rate 1000] [--duration 5] [--method geometric] [--decimation K]``:
estimator_node as its own
process on a private ROS_DOMAIN_ID (``publish_period`` from ``--publish-period``,
default the node's 0.01 s), a publisher process sending joint_states with efforts at
``--rate`` (paced like benchmarks/bench_nodes.py) and this process reading the node's
``samples`` count on /diagnostics (the fraction of joint_states the node took) and the
latency from stamp to ``payload_estimate`` receipt, and the node's CPU (% of one core).
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402

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
    """Best of 5 repeats, µs of this process's CPU time per call."""
    return min(timeit.repeat(function, number=number, repeat=5,
                             timer=time.process_time)) / number * 1e6


def filter_update_cost(model: RobotModel, link: str, method: str, online: OnlineLoadEstimator,
                       t, q, qd, tau) -> float:
    """µs per LoadFilter.update (and, for classical, its report every 10th) on stored rows."""
    rows = []
    for k in range(t.size):
        state = online.inputs.sample(t[k] + t[-1] + 1.0, q[k], qd[k], t[k] + t[-1] + 1.0)
        rows.append(online.measurement.measure(q[k], qd[k], state.qdd, tau[k]))
    fresh = OnlineLoadEstimator(model, link, LoadEstimatorSettings(method=method)).estimator
    start = time.process_time()
    for k, row in enumerate(rows):
        fresh.update(row.regressor, row.y, online.weights, 1e-3)
        if method == "classical" and k % 10 == 0:
            _ = fresh.load_phi
    return (time.process_time() - start) / len(rows) * 1e6


def run_publisher(args: argparse.Namespace) -> None:
    """Publish joint_states with efforts at args.rate for args.duration (+1 s warm-up)."""
    import json

    from bench_nodes import make_node, pace, wait_matched
    from sensor_msgs.msg import JointState

    from robot_tv_dynamics.ros.conversions import to_float_array

    model = RobotModel.from_urdf(find_example_robot_urdf("panda"))
    total = int(args.rate * (args.duration + 1.0))
    t, q, qd, tau = samples(model, total, args.rate)
    rclpy, node = make_node("bench_estimator_publisher")
    pub = node.create_publisher(JointState, f"{args.namespace}/joint_states", 10)
    wait_matched(rclpy, node, [pub], 60.0)
    msg = JointState()
    msg.name = list(model.joint_names)
    period = 1.0 / args.rate
    start = time.monotonic() + 0.05
    late = 0
    for k in range(total):
        late += pace(start + k * period, period)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        msg.position, msg.velocity = to_float_array(q[k]), to_float_array(qd[k])
        msg.effort = to_float_array(tau[k])
        pub.publish(msg)
    print(json.dumps({"sent": total, "late_by_a_period": late}), flush=True)
    node.destroy_node()
    rclpy.try_shutdown()


def run_node_benchmark(args: argparse.Namespace) -> None:
    """estimator_node at args.rate: answered fraction, latency, CPU."""
    import json
    import subprocess
    import tempfile
    from pathlib import Path

    from bench_nodes import cpu_seconds, make_executor, make_node
    from geometry_msgs.msg import InertiaStamped

    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    env.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))
    os.environ["ROS_DOMAIN_ID"] = env["ROS_DOMAIN_ID"]
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo), env.get("PYTHONPATH", "")) if p)
    namespace = f"/bench_est{os.getpid()}"
    log = open(Path(tempfile.mkdtemp(prefix="bench_estimator_")) / "node.log", "w")
    node_process = subprocess.Popen(
        [sys.executable, "-m", "robot_tv_dynamics.ros.estimator_node", "--ros-args",
         "-r", f"__ns:={namespace}", "-p", f"urdf_path:={find_example_robot_urdf('panda')}",
         "-p", f"method:={args.method}", "-p", "link:=panda_hand",
         "-p", f"publish_period:={args.publish_period!r}", "-p", "diagnostics_period:=0.5",
         "-p", f"decimation:={args.decimation}",
         "-p", "joint_states_depth:=1000"], env=env, stdout=log, stderr=subprocess.STDOUT)
    rclpy, node = make_node("bench_estimator_receiver")
    arrivals: list[tuple[int, int]] = []
    node.create_subscription(InertiaStamped, f"{namespace}/payload_estimate", lambda m: (
        arrivals.append((m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec,
                         time.time_ns()))), 1000)
    from diagnostic_msgs.msg import DiagnosticArray

    taken: list[int] = []

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith("estimator_node: panda_hand"):  # after the full name
                taken.append(int({kv.key: kv.value for kv in status.values}["samples"]))

    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 100)
    executor = make_executor(rclpy)
    executor.add_node(node)
    try:
        publisher = subprocess.Popen(
            [sys.executable, __file__, "--role", "publisher", "--namespace", namespace,
             "--rate", str(args.rate), "--duration", str(args.duration)],
            env=env, stdout=subprocess.PIPE, text=True)
        cpu0, wall0 = None, None
        while publisher.poll() is None:
            executor.spin_once(timeout_sec=0.01)
            if cpu0 is None and arrivals:
                cpu0, wall0 = cpu_seconds(node_process.pid), time.monotonic()
        cpu = cpu_seconds(node_process.pid) - (cpu0 or 0.0)
        wall = time.monotonic() - (wall0 or time.monotonic())
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.01)
        sent = json.loads(publisher.stdout.read().strip().splitlines()[-1])
    finally:
        node_process.send_signal(2)
        node_process.wait(10)
        node.destroy_node()
        rclpy.try_shutdown()
    import numpy as np

    latency = np.array([(r - s) * 1e-6 for s, r in arrivals])
    took = max(taken, default=0)
    print(f"estimator_node ({args.method}) at {args.rate:g} Hz for {args.duration:g} s + 1 s: "
          f"took {took} of {sent['sent']} samples ({100 * took / sent['sent']:.2f} %), "
          f"{len(arrivals)} estimates published; latency p50 {np.percentile(latency, 50):.2f} "
          f"ms, p99 "
          f"{np.percentile(latency, 99):.2f} ms, max {latency.max():.2f} ms; node CPU "
          f"{100 * cpu / max(wall, 1e-9):.0f} % of a core; publisher late "
          f"{sent['late_by_a_period']}")


def main() -> None:
    """Print the table (or run the node benchmark / its publisher)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3000, help="samples per method")
    parser.add_argument("--node", action="store_true", help="benchmark estimator_node")
    parser.add_argument("--role", default="bench", help=argparse.SUPPRESS)
    parser.add_argument("--namespace", default="", help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=float, default=1000.0, help="joint_states rate [Hz]")
    parser.add_argument("--duration", type=float, default=5.0, help="measured time [s]")
    parser.add_argument("--method", choices=METHODS, default="geometric")
    parser.add_argument("--publish-period", type=float, default=0.01,
                        help="the node's publish_period [s]")
    parser.add_argument("--decimation", type=int, default=1,
                        help="the node's decimation (update on every k-th sample)")
    args = parser.parse_args()
    if args.role == "publisher":
        run_publisher(args)
        return
    if args.node:
        run_node_benchmark(args)
        return
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
        for method in METHODS:  # the load filters (estimation/load.py)
            est = OnlineLoadEstimator(model, link, LoadEstimatorSettings(method=method))
            start = time.process_time()
            for k in range(t.size):
                est.add_sample(t[k], q[k], qd[k], tau[k])
                if method == "classical" and k % 10 == 0:
                    _ = est.estimator.load_phi  # the node's report at publish_period 0.01 s
            total = (time.process_time() - start) / t.size * 1e6
            core = filter_update_cost(model, link, method, est, t, q, qd, tau)
            meas, check, w = est.measurement, est.excitation, est.weights
            x = (q[5], qd[5], qd[5], tau[5])
            rows = meas.measure(*x)
            parts = {
                "regressor + base τ": per_call(lambda meas=meas, x=x: meas.measure(*x), 500),
                "excitation check": per_call(
                    lambda check=check, r=rows.regressor, w=w: check.add(r, w), 500),
            }
            rnea_again = per_call(lambda pm=pm, data=data, q_pin=q_pin, v=v: pin.rnea(
                pm, data, q_pin, v, v), 2000)
            print(f"  {method:19s}: {total:7.1f} µs per sample ({total / rnea:5.1f}× rnea; "
                  f"{est.estimator.updates} updates, {est.held} held); " + ", ".join(
                      f"{name} {value:.1f} µs" for name, value in parts.items()))
            print(f"    filter update alone {core:.1f} µs = {core / rnea_again:.1f}× rnea "
                  f"(rnea {rnea_again:.2f} µs just after)")
            solvers = dict(est.estimator.projection.solvers)
            if method == "projected":
                print(f"    load projection active in {est.estimator.projections} of "
                      f"{est.estimator.updates} updates; by solver {solvers}")
            elif method == "classical":
                print(f"    reported load projected by solver {solvers}")


if __name__ == "__main__":
    main()
