"""A motion library × payloads through one ``evaluate`` / ``retime`` sweep, 1 vs 2 workers.

Run: ``python benchmarks/bench_sweep.py [--kind evaluate|retime] [--per-robot 25]
[--out DIR]``.

Writes ``per-robot`` curved rest-to-rest trajectories for the Panda (fingers locked)
and the UR5 (random offsets of a start/goal pair, random bulge and duration 0.4–2 s,
quintic time law), four payloads per robot (0.5–9 kg on the flange), and one
deliberately broken trajectory (UR5 joints, a position that is not a number), then
runs the same one-command sweep (``robot-tv-dynamics KIND --urdf PANDA --urdf UR5
--trajectory DIR --payload … --table OUT.csv``) with ``--workers 1`` and
``--workers 2`` and prints the wall times of the sweeps (as the command reports them:
from the first submitted item to the last row), their ratio, and a Pinocchio RNEA call
measured in the same run for scale. The machine is shared: the numbers are only
comparable within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402
from support.retime_paths import curved_move  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402

ROBOTS = {
    "ur5": {"joints": ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint",
                       "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"],
            "start": [0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0],
            "goal": [1.5708, -0.35, 0.35, -1.5708, -1.5708, 0.5], "link": "tool0",
            "masses": [0.5, 3.0, 6.0, 9.0]},
    "panda": {"joints": [f"panda_joint{i}" for i in range(1, 8)],
              "start": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
              "goal": [0.9, 0.45, 0.2, -1.4, 0.3, 1.95, 1.3], "link": "panda_link8",
              "masses": [0.5, 1.5, 2.5, 3.0]},
}


def motion(joints, start, goal, bulge, duration, n=31):
    """Rest-to-rest along start + p (goal − start) + sin(πp) bulge, quintic p(t), as JSON."""
    move = curved_move(joints, start, goal, bulge, duration, n)
    return {"joint_names": list(joints), "points": [
        {"positions": move.positions[k].tolist(), "velocities": move.velocities[k].tolist(),
         "accelerations": move.accelerations[k].tolist(),
         "time_from_start": float(move.time_from_start[k])}
        for k in range(n)]}


def write_library(out: Path, per_robot: int, seed: int = 1) -> tuple[Path, list[Path]]:
    """The trajectories (one directory) and the payload files."""
    rng = np.random.default_rng(seed)
    library = out / "library"
    library.mkdir(parents=True, exist_ok=True)
    payloads = []
    for name, robot in ROBOTS.items():
        start, goal = np.array(robot["start"]), np.array(robot["goal"])
        for k in range(per_robot):
            a = start + rng.uniform(-0.15, 0.15, start.size)
            b = goal + rng.uniform(-0.15, 0.15, goal.size)
            bulge = rng.uniform(-0.3, 0.3, start.size)
            data = motion(robot["joints"], a, b, bulge, float(rng.uniform(0.4, 2.0)))
            (library / f"{name}_{k:03d}.yaml").write_text(yaml.safe_dump(data))
        for mass in robot["masses"]:
            path = out / f"{name}_payload_{mass:g}kg.yaml"
            path.write_text(yaml.safe_dump({
                "link": robot["link"], "mass": mass, "com": [0.0, 0.0, 0.05],
                "inertia": {"ixx": 0.002 * mass, "iyy": 0.002 * mass, "izz": 0.001 * mass,
                            "ixy": 0.0, "ixz": 0.0, "iyz": 0.0}}))
            payloads.append(path)
    broken = motion(ROBOTS["ur5"]["joints"], np.array(ROBOTS["ur5"]["start"]),
                    np.array(ROBOTS["ur5"]["goal"]), np.zeros(6), 1.0)
    broken["points"][5]["positions"][1] = ".nan"  # not a number: the file cannot be read
    (library / "ur5_broken.yaml").write_text(yaml.safe_dump(broken))
    return library, payloads


def rnea_call_s() -> float:
    """One Pinocchio RNEA call on the UR5 [s] (median of 2000), for scale."""
    import pinocchio as pin

    model = RobotModel.from_urdf(find_example_robot_urdf("ur5")).pinocchio_model
    data = model.createData()
    q = np.zeros(model.nq)
    times = []
    for _ in range(2000):
        start = time.perf_counter()
        pin.rnea(model, data, q, q, q)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("evaluate", "retime"), default="evaluate")
    parser.add_argument("--per-robot", type=int, default=25)
    parser.add_argument("--out", default="sweep_bench")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--gridpoints", type=int, default=60, help="retime only")
    args = parser.parse_args()
    out = Path(args.out)
    library, payloads = write_library(out, args.per_robot)
    urdfs = [find_example_robot_urdf("panda"), find_example_robot_urdf("ur5")]
    walls = {}
    for workers in args.workers:
        table = out / f"{args.kind}_{workers}w.csv"
        command = ["robot-tv-dynamics", args.kind, "--urdf", urdfs[0], "--urdf", urdfs[1],
                   "--lock", "panda_finger_joint1", "--lock", "panda_finger_joint2",
                   "--trajectory", str(library), "--table", str(table),
                   "--workers", str(workers), "--json"]
        for payload in payloads:
            command += ["--payload", str(payload)]
        if args.kind == "retime":
            command += ["--gridpoints", str(args.gridpoints)]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        total = time.perf_counter() - started
        if done.returncode not in (0, 1):
            print(done.stderr, file=sys.stderr)
            return done.returncode
        report = json.loads(done.stdout)
        walls[workers] = report["wall_time"]
        broken = [row for row in report["rows"] if "broken" in row["trajectory"]]
        print(f"{args.kind}, {workers} worker(s): {report['items']} items, "
              f"{report['feasible']} within limits, {report['errors']} error rows; sweep "
              f"{report['wall_time']:.1f} s (command {total:.1f} s incl. cluster start-up); "
              f"table {table}")
        for row in broken[:1]:
            print(f"  broken input row: {row['robot']} {Path(row['trajectory']).name} "
                  f"{Path(row['payload']).name}: {row['error']}")
    rnea = rnea_call_s()
    if 1 in walls and 2 in walls:
        print(f"wall time 1 worker / 2 workers: {walls[1] / walls[2]:.2f}")
    for workers, wall in walls.items():
        print(f"  {workers} worker(s): {wall:.1f} s = {wall / rnea:.3g} RNEA calls "
              f"({rnea * 1e6:.2f} µs each, same run)")
    print(f"machine load at the end: {os.getloadavg()} on {os.cpu_count()} CPUs (shared)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
