"""The demo's cost: each process's CPU share, the real-time factor, the sim's step budget.

Runs ``python -m robot_tv_dynamics.cli demo --no-progress`` (``--urdf`` and
``--duration`` passed on) ``--runs`` times on a private ``ROS_DOMAIN_ID``, and samples
``/proc/<pid>/stat`` of the demo process and of every process it started every
``--period`` s. The measuring window is the stepping: from the first sample in which
``sim_node`` has logged ``stepping`` (after its subscribers matched) to the first in
which it has logged ``finished``, so the nodes' start-up and the demo's analysis are not
in it; within it, per process:

- ``cpu_share``: CPU seconds (user + system) / window seconds — 1.0 is one full core;
- ``total_cores``: the sum over all processes (what the demo got of the machine);
- ``cores_at_real_time``: CPU seconds of all processes per simulated second — the cores
  the demo would need to run at a real-time factor of 1 (on a loaded machine it gets
  less, and the real-time factor drops).

From the demo's ``summary.json``: ``real_time_factor`` (simulated / wall seconds of the
run). The sim's step budget: at 1 kHz a simulated step must take ≤ 1 ms of wall time to
keep real time; ``sim_cpu_ms_per_step`` = sim_node's CPU seconds / simulated steps (its
own cost per step, ≤ 1 ms needed even with a free core), ``wall_ms_per_step`` = window /
steps (what it got: > 1 ms = slower than real time).

Numbers depend on the machine and on everything else running on it: report ``nproc``
and the load average printed with them.

    source scripts/ros_env.sh
    python benchmarks/bench_demo.py [--runs 3] [--urdf PATH] [--duration 8] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from robot_tv_dynamics.ros.sim_node import FINISHED, STEPPING

#: Clock ticks per second of /proc/<pid>/stat's utime and stime.
TICKS = os.sysconf("SC_CLK_TCK")
#: The simulator's step [s] (sim_node integrates at 1 kHz).
STEP_S = 1e-3


def proc_stat(pid: int) -> tuple[int, str, float] | None:
    """(parent pid, command name, CPU seconds) of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), name, (int(fields[11]) + int(fields[12])) / TICKS


def process_label(pid: int) -> tuple[str, bool] | None:
    """(a node's name, True) from its ``__node:=`` remap or its module, else (the command, False).

    None when the command line cannot be read: the process is gone, or a zombie (an
    exited node not yet reaped has an empty ``/proc/<pid>/cmdline``).
    """
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return None
    for item in argv:
        if item.startswith("__node:="):
            return item.split(":=", 1)[1], True
    if "-m" in argv[:-1] and argv[argv.index("-m") + 1].startswith("robot_tv_dynamics.ros."):
        return argv[argv.index("-m") + 1].rsplit(".", 1)[1], True  # e.g. monitor_group
    return (Path(argv[0]).name, False) if argv and argv[0] else None


def descendants(root: int) -> set[int]:
    """``root`` and every living process below it."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(int(entry))
            if stat is not None:
                parents[int(entry)] = stat[0]
    found = {root}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in found and pid not in found:
                found.add(pid)
                changed = True
    return found


def run_once(args: argparse.Namespace, index: int, work: Path) -> dict:
    """One demo run, sampled; the shares, the real-time factor and the step budget."""
    out = work / f"run{index}"
    command = [sys.executable, "-m", "robot_tv_dynamics.cli", "demo", "--no-progress",
               "--out", str(out), "--duration", str(args.duration)]
    if args.urdf:
        command += ["--urdf", args.urdf]
    env = {**os.environ, "ROS_DOMAIN_ID": str(args.domain)}
    log = work / f"run{index}.log"
    samples: list[tuple[float, dict[int, float], bool]] = []
    labels: dict[int, str] = {}
    named: set[int] = set()
    with log.open("wb") as sink:
        demo = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        while demo.poll() is None:
            now = time.monotonic()
            cpu: dict[int, float] = {}
            for pid in descendants(demo.pid):
                stat = proc_stat(pid)
                if stat is None:
                    continue
                cpu[pid] = stat[2]
                if pid == demo.pid:
                    labels[pid] = "demo (recorder)"
                elif pid not in named:  # a child may first be seen between fork and exec
                    label = process_label(pid)
                    if label is not None:
                        labels[pid] = label[0]
                        if label[1]:
                            named.add(pid)  # a node's name stays (a zombie has no argv)
            sim_log = out / "logs" / "sim_node.log"
            text = sim_log.read_text(errors="replace") if sim_log.is_file() else ""
            sim_running = (f"]: {STEPPING}:" in text and f"]: {FINISHED}:" not in text
                           and any(labels.get(pid) == "sim_node" for pid in cpu))
            samples.append((now, cpu, sim_running))
            time.sleep(args.period)
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGINT)
            demo.wait(30)
    window = [s for s in samples if s[2]]
    if demo.returncode != 0 or len(window) < 2:
        raise SystemExit(f"demo run {index} failed (exit {demo.returncode}); see {log}")
    (t0, cpu0, _), (t1, cpu1, _) = window[0], window[-1]
    seconds = t1 - t0
    shares: dict[str, float] = {}
    for pid, end in cpu1.items():
        label = labels.get(pid, str(pid))
        shares[label] = shares.get(label, 0.0) + (end - cpu0.get(pid, end)) / seconds
    summary = json.loads((out / "summary.json").read_text())
    rtf = summary.get("real_time_factor")
    steps = args.duration / STEP_S
    sim_cpu = shares.get("sim_node", 0.0) * seconds
    return {"shares": dict(sorted(shares.items(), key=lambda kv: -kv[1])),
            "total_cores": sum(shares.values()), "window_s": seconds,
            "cores_at_real_time": sum(shares.values()) * seconds / args.duration,
            "real_time_factor": rtf, "sim_cpu_ms_per_step": 1e3 * sim_cpu / steps,
            "wall_ms_per_step": 1e3 * seconds / steps, "log": str(log)}


def main(argv: list[str] | None = None) -> int:
    """Run the demo ``--runs`` times; print each run and the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--urdf", default="", help="the arm (default: the demo's Panda)")
    parser.add_argument("--duration", type=float, default=8.0, help="simulated seconds")
    parser.add_argument("--period", type=float, default=0.25, help="sampling period [s]")
    parser.add_argument("--domain", type=int, default=79, help="ROS_DOMAIN_ID (private)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench_demo_"))
    print(f"machine: {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} before the runs", flush=True)
    runs = []
    for index in range(args.runs):
        result = run_once(args, index, work)
        runs.append(result)
        print(f"run {index + 1}: real-time factor {result['real_time_factor']}, total "
              f"{result['total_cores']:.2f} cores over {result['window_s']:.1f} s; sim "
              f"{result['sim_cpu_ms_per_step']:.3f} ms CPU and {result['wall_ms_per_step']:.3f} "
              f"ms wall per 1 ms step; {result['cores_at_real_time']:.2f} CPU s per simulated "
              "s (the cores it would need at real time)", flush=True)
        print("   " + ", ".join(f"{name} {100 * share:.0f} %"
                                for name, share in result["shares"].items()), flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"logs in {work}")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "cores": os.cpu_count()},
                                              indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
