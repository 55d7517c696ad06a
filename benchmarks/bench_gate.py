"""trajectory_gate's added latency per goal: a goal through the gate vs. straight to the arm.

Two processes on one host, real DDS on a private ROS_DOMAIN_ID:

- the gate: ``python -m robot_tv_dynamics.ros.trajectory_gate`` (UR5, 9 kg on tool0,
  ``retiming`` as given by ``--retiming``, ``verify_playback`` off with ``--fast``);
- this script: a FollowJointTrajectory server standing for the arm's controller (it
  records when each goal arrives and succeeds at once) and the client.

Each goal is a 6-dof, 50-point UR5 trajectory (rest-to-rest quintic, positions,
velocities and accelerations, as MoveIt sends them): ``--goals`` feasible ones (done in
4 s: forwarded) and as many infeasible ones (done in 1 s: over the shoulder-lift effort
limit with 9 kg, retimed: slowed down uniformly, or by TOPP-RA with
``--retiming time-optimal``). Latency = send → the controller's server has the goal; the
gate's added latency is that through the gate minus that straight to the server (the
same client and server, no gate, measured in the same run). Reported: median and p95 of
each, and the gate's own decision time from its log line. Goal: added latency ≤ 100 ms
per goal (``goal_met``, for each case).

    source scripts/ros_env.sh
    python benchmarks/bench_gate.py [--goals 20] [--retiming uniform|time-optimal] [--fast]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "test"))

#: The goal: the gate adds at most this per goal [s].
GOAL_S = 0.100


def percentiles(values: list[float]) -> dict[str, float]:
    data = np.asarray(values)
    return {"median_ms": float(np.median(data) * 1e3),
            "p95_ms": float(np.percentile(data, 95) * 1e3)}


def run(args: argparse.Namespace) -> dict:
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient, ActionServer
    from rclpy.executors import SingleThreadedExecutor
    from support.gate_cases import COM, quintic
    from support.particle_lagrangian import find_example_robot_urdf

    from robot_tv_dynamics.ros.trajectory_conversions import trajectory_to_msg

    domain = os.getpid() % 100 + 1
    namespace = f"/bench_gate_{os.getpid()}"
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain)}
    log = Path(tempfile.mkdtemp()) / "gate.log"
    gate = subprocess.Popen(
        [sys.executable, "-m", "robot_tv_dynamics.ros.trajectory_gate", "--ros-args",
         "-r", f"__ns:={namespace}", "-p", f"urdf_path:={find_example_robot_urdf('ur5')}",
         "-p", "payload_mass:=9.0", "-p", f"payload_com_z:={float(COM[2])}",
         "-p", f"controller_action:={namespace}/arm/follow_joint_trajectory",
         "-p", f"verify_playback:={'false' if args.fast else 'true'}",
         "-p", f"retiming:={args.retiming}"],
        env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node("bench_gate", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    arrived: list[float] = []

    def execute(handle):
        handle.succeed()
        return FollowJointTrajectory.Result()

    def on_goal(_request):
        arrived.append(time.perf_counter())
        from rclpy.action import GoalResponse
        return GoalResponse.ACCEPT

    ActionServer(node, FollowJointTrajectory, f"{namespace}/arm/follow_joint_trajectory",
                 execute, goal_callback=on_goal)
    through = ActionClient(node, FollowJointTrajectory,
                           f"{namespace}/trajectory_gate/follow_joint_trajectory")
    direct = ActionClient(node, FollowJointTrajectory, f"{namespace}/arm/follow_joint_trajectory")

    def spin_until(predicate, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline or gate.poll() is not None:
                raise RuntimeError(f"timed out; gate log:\n{log.read_text()[-2000:]}")
            executor.spin_once(timeout_sec=0.005)

    def latency(client, duration: float) -> float:
        goal = FollowJointTrajectory.Goal(trajectory=trajectory_to_msg(quintic(duration)))
        count = len(arrived)
        sent = time.perf_counter()
        future = client.send_goal_async(goal)
        spin_until(lambda: len(arrived) > count, 60.0)
        delay = arrived[count] - sent
        spin_until(lambda: future.done(), 30.0)
        result = future.result().get_result_async()
        spin_until(lambda: result.done(), 60.0)
        return delay

    out: dict = {"goals": args.goals, "retiming": args.retiming,
                 "verify_playback": not args.fast}
    try:
        spin_until(lambda: through.server_is_ready() and direct.server_is_ready(), 120.0)
        for _ in range(3):  # discovery of every endpoint, first-call costs
            latency(direct, 4.0)
            latency(through, 4.0)
        for case, duration in (("forwarded", 4.0), ("retimed", 1.0)):
            straight = [latency(direct, duration) for _ in range(args.goals)]
            gated = [latency(through, duration) for _ in range(args.goals)]
            added = [g - float(np.median(straight)) for g in gated]
            out[case] = {"direct": percentiles(straight), "through_gate": percentiles(gated),
                         "added": percentiles(added)}
            out[case]["goal_met"] = out[case]["added"]["p95_ms"] <= GOAL_S * 1e3
        decided = [float(x) for x in re.findall(r"decided in (\d+) ms", log.read_text())]
        out["decision_ms_logged"] = {"forward_median": float(np.median(decided[3:3 + args.goals]))
                                     if len(decided) > 3 else None,
                                     "retime_median": float(np.median(decided[-args.goals:]))
                                     if decided else None}
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)
        gate.terminate()
        gate.wait(10)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--goals", type=int, default=20, help="goals per case")
    parser.add_argument("--fast", action="store_true",
                        help="the gate without the playback verification (verify_playback false)")
    parser.add_argument("--retiming", choices=["uniform", "time-optimal"], default="uniform",
                        help="the gate's retiming parameter")
    parser.add_argument("--json", help="also write the result to this file")
    args = parser.parse_args(argv)
    result = run(args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
