"""The seed study of docs/estimation.md (live payload estimators on realistic data).

Usage: python scripts/realistic_seeds.py FIRST LAST [--decimation K] [--keep DIR]

For every seed FIRST…LAST: the recording of ``realistic.generate_real`` (perturbed
Panda; AR(1) 0.3–0.8 N·m noise with spikes, a residual growing with the inertial
torque, LuGre friction with Stribeck and hysteresis, a drifting offset, joint
elasticity, a hard stop at the end; 1 kHz; ``identify`` on the unloaded first 12 s; in the
second 12 s a random 0.5–2 kg load, COM up to 7 cm off the flange axis, grasped and later
released over 0.2 s each), then ``estimate --model ident/ --method M --offset-memory 10``
(the torque offsets, not the CLI's default) for the three methods, every K-th sample
updating (default the test's 4). Prints one Markdown row per seed and method (the goal
quantities of ``realistic.live_metrics``, the goals missed), then per method the false
changes over all seeds and the seeds meeting all goals.
``--keep DIR`` writes each run's ``estimate --json`` output there. ≈ 30 s of CPU per
seed; run it under ``nice``.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))

from support import realistic as R  # noqa: E402

from robot_tv_dynamics.cli import main as cli  # noqa: E402
from robot_tv_dynamics.estimation.load import OFFSET_MEMORY  # noqa: E402
from robot_tv_dynamics.paths import example_robot_urdf  # noqa: E402

METHODS = ("classical", "projected", "geometric")


def run_seed(seed: int, decimation: int, keep: Path | None = None,
             without: tuple[str, ...] = (), methods: tuple[str, ...] = METHODS,
             offset_memory: float = OFFSET_MEMORY) -> dict[str, dict]:
    """One seed: identify on the first half, each method on the second; method -> metrics.

    ``offset_memory``: the estimators' torque offsets (``estimate --offset-memory``; the
    study's default is the load's memory, the CLI's 0).
    """
    urdf = str(example_robot_urdf())
    lock = [item for joint in R.PANDA_LOCK for item in ("--lock", joint)]
    rows = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        data = R.generate_real(urdf, seed, without)
        first, second = R.write_halves(data, folder)
        with contextlib.redirect_stdout(io.StringIO()):
            if cli(["identify", "--urdf", urdf, *lock, "--data", str(first), "--out",
                    str(folder / "ident"), "--json", "--no-progress"]) != 0:
                raise RuntimeError(f"seed {seed}: identify failed")
        for method in methods:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
                if cli(["estimate", "--model", str(folder / "ident"), "--data", str(second),
                        "--link", R.LINK, "--payload-frame", R.LINK,  # the truth's frame
                        "--method", method, "--decimation", str(decimation),
                        "--offset-memory", str(offset_memory), "--json"]) != 0:
                    raise RuntimeError(f"seed {seed}: estimate --method {method} failed")
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"{seed}_{method}.json").write_text(buffer.getvalue())
            rows[method] = R.live_metrics(json.loads(buffer.getvalue()), data.load)
    return rows


def row(seed: int, method: str, m: dict, missed: list[str]) -> str:
    """One Markdown row of the table."""
    truth = m["truth"]
    off_axis = 100 * (truth["com"][0] ** 2 + truth["com"][1] ** 2) ** 0.5
    delays = ", ".join("missed" if d is None else f"{d:.2f}" for d in m["delays"])
    return (f"| {seed} | {method} | {truth['mass']:.2f} kg, {off_axis:.1f} cm off | "
            f"{delays} | {', '.join(f'{c:.2f}' for c in m['false']) or '—'} | "
            f"{', '.join(f'{e:.3f}' for e in m['mass_errors'])} | "
            f"{1e3 * m['com_error']:.1f} | {m['pre']:.3f} | {', '.join(missed) or '—'} |")


def main() -> None:
    """Run the seeds, print the table and the summary."""
    argv = sys.argv[1:]
    decimation, keep = 4, None
    if "--decimation" in argv:
        at = argv.index("--decimation")
        decimation = int(argv[at + 1])
        del argv[at:at + 2]
    if "--keep" in argv:
        at = argv.index("--keep")
        keep = Path(argv[at + 1])
        del argv[at:at + 2]
    first, last = int(argv[0]), int(argv[1])
    print(f"decimation {decimation}")
    print("| seed | method | load | delays (grasp, release) [s] | false changes at [s] | "
          "max \\|m̂ − m\\| from 1.5 s (loaded, released) [kg] | COM error [mm] | "
          "pre-grasp max \\|m̂\\| [kg] | goals missed |")
    print("|---|---|---|---|---|---|---|---|---|")
    met = dict.fromkeys(METHODS, 0)
    false = dict.fromkeys(METHODS, 0)
    for seed in range(first, last + 1):
        for method, m in run_seed(seed, decimation, keep).items():
            missed = R.failed_goals(m)
            met[method] += not missed
            false[method] += len(m["false"])
            print(row(seed, method, m, missed), flush=True)
    seeds = last - first + 1
    print("\nall goals met: " + ", ".join(f"{method} {n}/{seeds}" for method, n in met.items()))
    print("false changes: " + ", ".join(f"{method} {n}" for method, n in false.items()))


if __name__ == "__main__":
    main()
