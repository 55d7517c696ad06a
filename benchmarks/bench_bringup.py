"""Bring-up start/stop cycles by group SIGINT: every one should exit 0 with no node killed.

Each cycle starts ``python -m robot_tv_dynamics.ros.bringup --urdf <Panda> --use-sim
--estimate`` (five nodes) in its own process group on a private ``ROS_DOMAIN_ID``, waits
``--after`` seconds (default: cycling through 0.1, 0.3, 1.5, 4 and 8 s, so that the stop lands
in the nodes' imports, their model build and their steady run), sends SIGINT to the
whole group (what a terminal's Ctrl-C does) and waits for the bring-up to exit.

A SIGINT in the bring-up's own first ~0.1 s (its interpreter importing ``site``, before
any code of the package runs) ends it as it ends any Python program (CPython's exit
code 1 or 130); such cycles are marked "before the bring-up started a node".

Reported per cycle: the bring-up's exit code, the nodes it had to kill (its stderr names
them) and how long the stop took; at the end the count of clean cycles (exit 0, nothing
killed) and ``all_clean``.

    source scripts/ros_env.sh
    python benchmarks/bench_bringup.py [--cycles 20] [--after S] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from robot_tv_dynamics.paths import example_robot_urdf

#: Delays before the stop, cycled through [s] (start-up phases and the steady run).
DEFAULT_AFTER = (0.1, 0.3, 1.5, 4.0, 8.0)
#: Longest a bring-up may take to stop: its nodes' grace period (10 s) and some.
STOP_LIMIT = 30.0
KILLED = re.compile(r"bringup: (\S+) \(pid \d+\) did not stop")


def run_cycle(after: float, domain: int, log_dir: Path, index: int) -> dict:
    """One start, wait ``after`` s, group SIGINT, wait for the exit."""
    env = {**os.environ, "ROS_DOMAIN_ID": str(domain)}
    command = [sys.executable, "-m", "robot_tv_dynamics.ros.bringup", "--urdf",
               str(example_robot_urdf()), "--use-sim", "--estimate"]
    log = log_dir / f"cycle_{index:02d}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        time.sleep(after)
    except BaseException:  # the benchmark itself stopped (Ctrl-C, SIGTERM): stop this one too
        os.killpg(process.pid, signal.SIGINT)
        process.wait(STOP_LIMIT)
        raise
    signalled = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    try:
        code = process.wait(STOP_LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        code = process.wait()
    text = log.read_text(errors="replace")
    return {"after_s": after, "exit_code": code, "killed": KILLED.findall(text),
            "started_nodes": "bringup: started" in text,
            "stop_s": round(time.monotonic() - signalled, 2), "log": str(log)}


def main(argv: list[str] | None = None) -> int:
    """Run the cycles; print one line each and a summary (or JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--after", type=float, default=None,
                        help="seconds from start to SIGINT (default: cycle 0.1, 0.3, 1.5, 4, 8)")
    parser.add_argument("--domain", type=int, default=77, help="ROS_DOMAIN_ID (private)")
    parser.add_argument("--json", metavar="FILE", help="also write the results here")
    args = parser.parse_args(argv)
    # a SIGTERM (kill, timeout) ends the run as Ctrl-C does: the running bring-up is stopped,
    # not left running in its own session
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    log_dir = Path(tempfile.mkdtemp(prefix="bench_bringup_"))
    cycles = []
    for index in range(args.cycles):
        after = args.after if args.after is not None else DEFAULT_AFTER[index % len(DEFAULT_AFTER)]
        result = run_cycle(after, args.domain, log_dir, index)
        cycles.append(result)
        print(f"cycle {index + 1:2d}: SIGINT after {after:4.1f} s -> exit {result['exit_code']}, "
              f"stopped in {result['stop_s']:.2f} s, killed {result['killed'] or 'none'}"
              + ("" if result["started_nodes"] else " (before the bring-up started a node)"),
              flush=True)
    clean = sum(1 for c in cycles if c["exit_code"] == 0 and not c["killed"])
    early = sum(1 for c in cycles if not c["started_nodes"])
    summary = {"cycles": cycles, "clean": clean, "total": len(cycles),
               "before_any_node": early,
               "all_clean": clean == len(cycles),
               "max_stop_s": max((c["stop_s"] for c in cycles), default=0.0),
               "note": "machine shared with other jobs: stop times are contaminated"}
    print(f"{clean}/{len(cycles)} cycles exit 0 with no node killed ({early} stopped before "
          f"the bring-up had started a node); longest stop {summary['max_stop_s']:.2f} s; "
          f"logs in {log_dir}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))
    return 0 if summary["all_clean"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
