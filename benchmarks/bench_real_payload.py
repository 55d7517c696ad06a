"""The live payload estimators on a real Panda's recording, with no load: do they see one?

Usage: ``python benchmarks/bench_real_payload.py PATH [--methods M,...] [--decimation K]
[--keep DIR]``

PATH is a NumPy ``.npz`` of one recording of a 7-joint Panda with arrays ``t`` [s], ``q``
[rad], ``dq`` [rad/s] and ``tau`` [N·m] (the arm's measured joint torques, nothing on the
flange), e.g. the exciting trajectory of Gaz et al. (RA-L 2019). As a user would: the
recording is split at half its duration and written as two rosbag2 (MCAP) files of
``sensor_msgs/JointState`` (fingers padded at 0, as a Panda publishes them); ``robot-
tv-dynamics identify`` runs on the first half (the example-robot-data Panda, fingers
locked), ``robot-tv-dynamics estimate --model ident/ --link panda_hand`` on the second
half, as recorded, once per method. Nothing is carried, so every detected load change is
a false one and every estimated mass an error.

Prints one Markdown row per method: the load changes detected (and when), the worst
|m̂| from 2 s into the second half on, and the final mass. ``--keep DIR`` keeps the
bags, identify's folder and each method's JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.bags import write_joint_state_bag
from robot_tv_dynamics.cli import main as cli
from robot_tv_dynamics.paths import example_robot_urdf

#: The estimated load's link, and the Panda's finger joints (locked, published at 0).
LINK = "panda_hand"
FINGERS = ("panda_finger_joint1", "panda_finger_joint2")
JOINTS = tuple(f"panda_joint{k}" for k in range(1, 8))
METHODS = ("classical", "projected", "geometric")
#: |m̂| counts from this long into the second half on [s].
SETTLED = 2.0
#: Stamps start here: a stamp of 0 is refused as "no stamp" [s].
ORIGIN = 100.0


def read_recording(path: str | Path) -> dict[str, np.ndarray]:
    """t, q, dq, tau of the recording; raises ValueError naming what is missing or wrong."""
    with np.load(path) as data:
        missing = [key for key in ("t", "q", "dq", "tau") if key not in data]
        if missing:
            raise ValueError(f"{path}: no array {', '.join(missing)} (need t, q, dq, tau)")
        out = {key: np.asarray(data[key], dtype=np.float64) for key in ("t", "q", "dq", "tau")}
    n = out["t"].size
    for key in ("q", "dq", "tau"):
        if out[key].shape != (n, len(JOINTS)):
            raise ValueError(f"{path}: {key} has shape {out[key].shape}, need ({n}, 7)")
    if not np.all(np.diff(out["t"]) > 0):
        raise ValueError(f"{path}: t is not strictly increasing")
    return out


def write_halves(data: dict[str, np.ndarray], folder: Path) -> tuple[Path, Path, float]:
    """The two halves as MCAP bags (each stamped from ORIGIN); (first, second, split [s])."""
    t = data["t"] - data["t"][0]
    split = 0.5 * float(t[-1])
    names = [*JOINTS, *FINGERS]
    paths = []
    for name, mask in (("first", t < split), ("second", t >= split)):
        stamps = t[mask] - t[mask][0] + ORIGIN
        pad = np.zeros(2)
        path = folder / f"{name}.mcap"
        with write_joint_state_bag(path, ["/joint_states"]) as write:
            for k, index in enumerate(np.flatnonzero(mask)):
                write("/joint_states", int(round(stamps[k] * 1e9)), names,
                      np.r_[data["q"][index], pad], np.r_[data["dq"][index], pad],
                      np.r_[data["tau"][index], pad])
        paths.append(path)
    return paths[0], paths[1], split


def _cli_json(argv: list[str]) -> dict[str, Any]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = cli(argv)
    if code != 0:
        raise RuntimeError(f"robot-tv-dynamics {' '.join(argv)} exited with {code}")
    return dict(json.loads(buffer.getvalue()))


def metrics(out: dict[str, Any]) -> dict[str, Any]:
    """The table's quantities of one ``estimate --json`` output (no load carried)."""
    t, mass = np.asarray(out["t"]), np.asarray(out["mass"])
    settled = t >= SETTLED
    return {
        "changes": int(out["changes"]),
        "change_times": [round(float(c), 3) for c in out["change_times"]],
        "worst_mass": float(np.abs(mass[settled]).max()),
        "final_mass": float(out["final"]["mass"]),
        "final_com_mm": [round(1e3 * float(c), 1) for c in out["final"]["com"]],
        "updates": int(out["updates"]),
        "held": int(out["held"]),
        "skipped": dict(out["skipped"]),
    }


def run(path: str | Path, methods: tuple[str, ...] = METHODS, decimation: int = 1,
        keep: Path | None = None, offset_memory: float = 0.0) -> dict[str, Any]:
    """identify on the first half, each method on the second; the rows and the set-up."""
    data = read_recording(path)
    urdf = str(example_robot_urdf())
    lock = [item for joint in FINGERS for item in ("--lock", joint)]
    with tempfile.TemporaryDirectory() as name:
        folder = keep or Path(name)
        folder.mkdir(parents=True, exist_ok=True)
        first, second, split = write_halves(data, folder)
        start = time.perf_counter()
        ident = _cli_json(["identify", "--urdf", urdf, *lock, "--data", str(first), "--out",
                           str(folder / "ident"), "--json", "--no-progress"])
        identify_s = time.perf_counter() - start
        rows = {}
        for method in methods:
            out = _cli_json(["estimate", "--model", str(folder / "ident"), "--data",
                             str(second), "--link", LINK, "--method", method,
                             "--decimation", str(decimation),
                             "--offset-memory", str(offset_memory), "--json"])
            if keep is not None:
                (folder / f"{method}.json").write_text(json.dumps(out), encoding="utf-8")
            rows[method] = metrics(out)
    fit = ident["rms"]["identified"]
    return {"split_s": round(split, 3), "duration_s": round(float(data["t"][-1]
                                                                   - data["t"][0]), 3),
            "samples": int(data["t"].size), "decimation": decimation,
            "identify_s": round(identify_s, 1),
            "fit_rms": {k: round(float(v), 3) for k, v in fit["fit"].items()},
            "holdout_rms": {k: round(float(v), 3) for k, v in fit["holdout"].items()},
            "rows": rows}


def table(result: dict[str, Any]) -> str:
    """The Markdown table of :func:`run`."""
    lines = ["| method | load changes detected (true: 0) | at [s] | worst \\|m̂\\| "
             f"after {SETTLED:g} s | final m̂ |", "|---|---|---|---|---|"]
    for method, row in result["rows"].items():
        times = ", ".join(f"{c:.2f}" for c in row["change_times"]) or "—"
        lines.append(f"| {method} | {row['changes']} | {times} | {row['worst_mass']:.3f} kg "
                     f"| {row['final_mass']:.3f} kg |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="the recording (.npz with t, q, dq, tau)")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help="comma-separated (default: %(default)s)")
    parser.add_argument("--decimation", type=int, default=1,
                        help="estimate --decimation (default: %(default)s)")
    parser.add_argument("--keep", type=Path, help="keep bags, identify folder, JSON here")
    parser.add_argument("--offset-memory", type=float, default=0.0,
                        help="estimate --offset-memory (default: %(default)s, no offsets)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    methods = tuple(m for m in args.methods.split(",") if m)
    result = run(args.path, methods, args.decimation, args.keep, args.offset_memory)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"real Panda recording {Path(args.path).name}: {result['samples']} samples over "
          f"{result['duration_s']:g} s; identify on the first {result['split_s']:g} s "
          f"({result['identify_s']:g} s), estimate on the rest (no load), "
          f"every {args.decimation}. sample updating")
    print("identify fit RMS [N·m]: " + ", ".join(f"{v:g}" for v in result["fit_rms"].values()))
    print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
