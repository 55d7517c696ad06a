"""The demo's four monitors: four monitor_node processes vs one monitor_group process.

Both layouts watch what the demo's monitors watch — the true Θ (``inertial_parameters``
and ``inertial_parameter_rates``) and three estimates
(``estimates/<name>/inertial_parameters``) — with the demo's parameters
(``MONITOR_PARAMETERS``: /diagnostics at 10 Hz), the Panda, on a private DDS domain:

- ``separate``: four ``monitor_node`` processes (the demo before ``monitor_group``);
- ``group``: one ``python -m robot_tv_dynamics.ros.monitor_group`` with four members.

This script publishes the Θ streams at ``--rate`` Hz (default 50, the demo's publish
rate) for ``--duration`` s and reads ``/proc/<pid>/stat`` of every monitor process before
and after: the CPU share (user + system seconds per wall second; 1.0 = one core) of the
layout, summed over its processes, and the idle share over ``--duration`` s with no input
(timers, DDS). The layouts alternate ``--runs`` times, so that both see the same load on
a shared machine; the ratio group / separate is the number to compare.

    source scripts/ros_env.sh
    python benchmarks/bench_monitors.py [--runs 3] [--rate 50] [--duration 10] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

import numpy as np  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402
from support.ros_harness import BEST_EFFORT, RosClient, node_env, unique_namespace  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.demo import ESTIMATORS, MONITOR_PARAMETERS  # noqa: E402
from robot_tv_dynamics.ros import bringup  # noqa: E402
from robot_tv_dynamics.ros import conversions as cv  # noqa: E402
from robot_tv_dynamics.ros.demo import monitor_members  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def commands(layout: str, urdf: str, ns: str) -> dict[str, list[str]]:
    """Process name → command of one layout, in namespace ``ns`` (private /diagnostics)."""
    ros_args = ["-r", f"__ns:={ns}", "-r", f"/diagnostics:={ns}/diagnostics"]
    members = monitor_members()
    if layout == "group":
        return {"monitor_group": bringup.monitor_group_command(
            members, urdf=urdf, parameters=MONITOR_PARAMETERS, ros_args=ros_args)}
    out = {}
    for member in members:  # the demo's wiring before monitor_group
        remaps = {topic: f"{member.watch}/{topic}" for topic in (
            "inertial_parameters", "inertial_parameter_rates", "consistency")
            } if member.watch else None
        parameters = {**MONITOR_PARAMETERS, **({"status_prefix": member.watch}
                                               if member.watch else {})}
        out[member.name] = bringup.node_command(
            "monitor_node", urdf=urdf, name=member.name, parameters=parameters,
            remaps=remaps, ros_args=ros_args)
    return out


def measure(layout: str, client: RosClient, model: RobotModel, urdf: str,
            args: argparse.Namespace, logs: Path) -> dict:
    """Start one layout, wait until it subscribes, then its idle and fed CPU shares."""
    ns = unique_namespace(layout)
    running = bringup.BringUp(logs=logs)
    for name, command in commands(layout, urdf, ns).items():
        running.start(f"{layout}_{name}", command, env=node_env())
    try:
        theta_pub = client.publisher(Float64MultiArray, f"{ns}/inertial_parameters",
                                     BEST_EFFORT)
        rates_pub = client.publisher(Float64MultiArray, f"{ns}/inertial_parameter_rates",
                                     BEST_EFFORT)
        hat_pubs = [client.publisher(Float64MultiArray,
                                     f"{ns}/estimates/{e}/inertial_parameters", BEST_EFFORT)
                    for e in ESTIMATORS]
        client.spin_until(lambda: all(p.get_subscription_count() > 0
                                      for p in (theta_pub, rates_pub, *hat_pubs))
                          or running.poll() is not None, 120.0, f"the {layout} monitors")
        if running.poll() is not None:
            raise SystemExit(f"{layout}: {running.poll()} exited; see {logs}")
        client.spin_for(1.0)  # the first statuses, the rest of discovery
        pids = [p.pid for p in running.processes.values()]

        def total() -> float:
            return sum(cpu_seconds(pid) for pid in pids)

        cpu0, wall0 = total(), time.monotonic()
        client.spin_for(args.duration)
        idle = (total() - cpu0) / (time.monotonic() - wall0)
        theta = np.array(model.theta_nominal)
        rng = np.random.default_rng(0)
        cpu0, wall0 = total(), time.monotonic()
        k = 0
        while (now := time.monotonic() - wall0) < args.duration:
            if now >= k / args.rate:
                scale = 1.0 + 0.1 * np.sin(0.1 * k + np.arange(model.n_bodies))[:, None]
                theta_pub.publish(cv.body_array(theta * scale, model.body_names))
                rates_pub.publish(cv.body_array(0.01 * theta, model.body_names))
                for pub in hat_pubs:
                    noise = 1.0 + 0.01 * rng.standard_normal((model.n_bodies, 1))
                    pub.publish(cv.body_array(theta * scale * noise, model.body_names))
                k += 1
            client.executor.spin_once(timeout_sec=0.002)
        wall = time.monotonic() - wall0
        fed = (total() - cpu0) / wall
    finally:
        codes = running.stop(10.0)
    return {"layout": layout, "processes": len(pids), "idle_share": idle, "fed_share": fed,
            "samples_per_stream": k, "exit_codes": codes}


def main(argv: list[str] | None = None) -> int:
    """Alternate the layouts ``--runs`` times; print each run and the median ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=50.0, help="Θ samples per s per stream")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    urdf = find_example_robot_urdf("panda")
    model = RobotModel.from_urdf(urdf)
    logs = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_monitors_{os.getpid()}"
    logs.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    client = RosClient()
    results = []
    try:
        for run in range(args.runs):
            for layout in ("separate", "group"):
                result = measure(layout, client, model, urdf, args, logs)
                results.append(result)
                print(f"run {run + 1} {layout:8s} ({result['processes']} processes): idle "
                      f"{100 * result['idle_share']:5.1f} %, fed {args.rate:g} Hz x 4 "
                      f"streams {100 * result['fed_share']:5.1f} % of a core", flush=True)
    finally:
        client.close()
    ratios = {key: statistics.median(
        g[key] / s[key] for s, g in zip(results[0::2], results[1::2], strict=True))
        for key in ("idle_share", "fed_share")}
    print(f"median group / separate: idle {ratios['idle_share']:.2f}, fed "
          f"{ratios['fed_share']:.2f}; load average after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; logs in {logs}")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": results, "ratios": ratios}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
