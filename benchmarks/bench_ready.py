"""Node ready times: from spawn to subscribed and to the first /diagnostics message.

Each node (``dynamics_node``, ``monitor_node``, ``estimator_node``, ``sim_node``, and
``monitor_group`` with the demo's four monitors) is spawned alone, ``--repeat`` times,
as ``python -m robot_tv_dynamics.ros.<node>`` with the Panda's URDF on a private
``ROS_DOMAIN_ID``, its ``/diagnostics`` remapped into its own namespace. Each repeat
first spawns ``plain_rclpy`` (``benchmarks/plain_node.py``: a bare rclpy node that
subscribes and reports the same way, none of the package imported): the floor of the
interpreter, rclpy and DDS discovery on this machine and in this minute, which every
node's ready time of the repeat is divided by. A probe node in this process (started
before the spawn) records, on the monotonic clock from the spawn:

- ``subscribed_s``: when the node's input topic (below) first shows a subscriber in the
  ROS graph;
- ``diagnostics_s``: when its first DiagnosticArray arrives (the "ready" of the issue:
  subscribed and reporting);
- ``log_ready_s``: when its log holds its ``ready:`` line (monitor_group: ``ready: all``,
  logged once all four members are);
- ``ready_s``: subscribed and first diagnostics, the later of the two (sim_node, which
  reports on ``/diagnostics`` only when it rejects a command: subscribed and its
  ``ready:`` line), and ``ratio``: ``ready_s`` over plain_rclpy's in the same repeat.

Discovery: by default the probe and every spawned node read the package's Fast DDS
profile (``config/fastdds_discovery.xml``, what the bring-up and the demo give their
processes: announcements every second instead of every 3 s), unless a profile is set in
the environment; ``--dds-defaults`` runs both with Fast DDS's own timing. The profile
matters in the participant that is already running: a new node whose first exchange with
it was missed is found at that participant's next announcement.

The dynamics node's Jacobian extremes come from the cache on a second start with the
same URDF; the first repeat uses an empty cache directory (``cold``: the node is ready
first and computes them in the background), later ones the filled one (``warm``). The
goal is 2 s (the machine's load matters: report it; the ratio says how much of it is
the node's own).

    source scripts/ros_env.sh
    python benchmarks/bench_ready.py [--repeat 3] [--nodes dynamics_node,...] [--dds-defaults]
                                     [--json out.json]

``--domain`` defaults to ``$ROS_DOMAIN_ID`` when that is set (else 78).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The bare rclpy node every repeat starts with (the baseline of the ratios).
PLAIN = "plain_rclpy"
#: Node → the input topic whose subscriber marks it subscribed.
INPUTS = {PLAIN: "joint_states", "dynamics_node": "joint_states",
          "monitor_node": "inertial_parameters", "estimator_node": "joint_states",
          "sim_node": "effort_commands",
          "monitor_group": "inertial_parameters"}
#: monitor_group's members: the demo's four monitors.
GROUP = ("--monitor", "monitor_truth", *(
    arg for name in ("classical", "projected", "geometric")
    for arg in ("--monitor", f"monitor_{name}=estimates/{name}")))
#: What a process logs when it is ready (the group: once all its members are).
READY = {"monitor_group": "ready: all"}
#: Nodes without a periodic /diagnostics: ready when subscribed and logged ready.
NO_DIAGNOSTICS = {"sim_node"}
GOAL_S = 2.0
TIMEOUT_S = 60.0


def measure(rclpy, probe, node: str, ns: str, urdf: str, cache: Path, domain: int,
            log: Path) -> dict:
    """Spawn ``node`` in namespace ``ns`` and time its start-up."""
    from diagnostic_msgs.msg import DiagnosticArray

    from robot_tv_dynamics.ros.qos import RELIABLE_QOS

    first: list[float] = []
    sub = probe.create_subscription(DiagnosticArray, f"{ns}/diagnostics",
                                    lambda _msg: first.append(time.monotonic()), RELIABLE_QOS)
    program = ([str(Path(__file__).with_name("plain_node.py"))] if node == PLAIN
               else ["-m", f"robot_tv_dynamics.ros.{node}"])
    command = [sys.executable, *program,
               *(GROUP if node == "monitor_group" else ()), "--ros-args",
               "-r", f"__ns:={ns}", "-r", f"/diagnostics:={ns}/diagnostics",
               "-p", f"urdf_path:={urdf}"]
    if node == "dynamics_node":
        command += ["-p", f"cache_dir:={cache}"]
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain)}
    with log.open("w") as out:
        start = time.monotonic()
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    subscribed = log_ready = None
    topic = f"{ns}/{INPUTS[node]}"
    try:
        while time.monotonic() - start < TIMEOUT_S and process.poll() is None:
            rclpy.spin_once(probe, timeout_sec=0.01)
            now = time.monotonic()
            if subscribed is None and probe.get_subscriptions_info_by_topic(topic):
                subscribed = now - start
            if log_ready is None and READY.get(node, "ready:") in log.read_text(
                    errors="replace"):
                log_ready = now - start
            if ((first or node in NO_DIAGNOSTICS) and subscribed is not None
                    and log_ready is not None):
                break
    finally:
        process.send_signal(2)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        probe.destroy_subscription(sub)
    diagnostics = first[0] - start if first else None
    last = (log_ready if node in NO_DIAGNOSTICS else diagnostics)
    ready = None if subscribed is None or last is None else max(subscribed, last)
    return {"node": node, "subscribed_s": subscribed, "log_ready_s": log_ready,
            "diagnostics_s": diagnostics, "ready_s": ready,
            "exit_code": process.returncode, "log": str(log)}


def main(argv: list[str] | None = None) -> int:
    """Measure every node; print a table (and JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", default=",".join(INPUTS))
    parser.add_argument("--domain", type=int,
                        default=int(os.environ.get("ROS_DOMAIN_ID", "").strip() or 78),
                        help="ROS_DOMAIN_ID, private to this run (default $ROS_DOMAIN_ID, "
                             "else 78)")
    parser.add_argument("--dds-defaults", action="store_true",
                        help="run the probe and the nodes with Fast DDS's own discovery "
                             "timing, not the package's discovery profile")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    os.environ["ROS_DOMAIN_ID"] = str(args.domain)
    from robot_tv_dynamics.ros.bringup import PROFILE_ENV, use_discovery_profile

    if args.dds_defaults:
        for name in PROFILE_ENV:
            os.environ.pop(name, None)
        print("discovery: Fast DDS's defaults (announcements every 3 s)")
    else:  # as the bring-up and the demo run them: the probe is the running system
        profile = use_discovery_profile()
        given = ", ".join(os.environ[n] for n in PROFILE_ENV if os.environ.get(n))
        print(f"discovery: the package's profile {profile}" if profile
              else f"discovery: the profile set in the environment ({given})")
    import rclpy

    from robot_tv_dynamics.paths import example_robot_urdf

    urdf = str(example_robot_urdf())
    work = Path(tempfile.mkdtemp(prefix="bench_ready_"))
    rclpy.init()
    probe = rclpy.create_node("bench_ready_probe")
    results = []
    try:
        for repeat in range(args.repeat):
            plain = None
            for node in [PLAIN, *(n for n in args.nodes.split(",") if n != PLAIN)]:
                result = measure(rclpy, probe, node, f"/ready{repeat}_{node}", urdf,
                                 work / "cache", args.domain, work / f"{node}_{repeat}.log")
                result["cache"] = "cold" if repeat == 0 else "warm"
                if node == PLAIN:
                    plain = result["ready_s"]
                result["ratio"] = (None if not plain or result["ready_s"] is None
                                   else result["ready_s"] / plain)
                results.append(result)
                ratio = "" if result["ratio"] is None else f" ({result['ratio']:.2f}x plain)"
                print(f"{node:14s} #{repeat} ({result['cache']}): subscribed "
                      f"{fmt(result['subscribed_s'])}, log ready {fmt(result['log_ready_s'])}, "
                      f"first diagnostics {fmt(result['diagnostics_s'])}; ready "
                      f"{fmt(result['ready_s'])}{ratio}", flush=True)
    finally:
        probe.destroy_node()
        rclpy.try_shutdown()
    ready: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    for result in results:
        value, ratio = result["ready_s"], result["ratio"]
        ready.setdefault(result["node"], []).append(math.inf if value is None else value)
        ratios.setdefault(result["node"], []).append(math.inf if ratio is None else ratio)
    worst = {node: max(values) for node, values in ready.items()}
    median_ratio = {node: statistics.median(values) for node, values in ratios.items()}
    print("worst ready [s]: " + ", ".join(
        f"{node} {value:.2f}" + ("" if node == PLAIN else f" (median {median_ratio[node]:.2f}x"
                                 " plain)") for node, value in worst.items())
        + f"; goal {GOAL_S:g} s; within it: "
        + (", ".join(k for k, v in worst.items() if v <= GOAL_S and k != PLAIN) or "none")
        + f"; load average {os.getloadavg()[0]:.1f} (a machine shared with other jobs)")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "results": results, "worst_s": worst, "median_ratio": median_ratio,
            "goal_s": GOAL_S}, indent=2))
    return 0


def fmt(value: float | None) -> str:
    """Seconds as the table prints them ("—" for never)."""
    return "  —  " if value is None else f"{value:5.2f} s"


if __name__ == "__main__":
    raise SystemExit(main())
