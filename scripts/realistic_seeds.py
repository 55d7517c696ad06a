"""The seed study of docs/estimation.md (live payload estimators on realistic data).

Usage: python scripts/realistic_seeds.py FIRST LAST [--decimation K]

For every seed FIRST…LAST: the recording of ``test/support/realistic.py`` (perturbed
Panda, friction the model does not fully have, AR(1) 0.3–0.8 N·m noise with spikes,
1 kHz; ``identify`` on the unloaded first 12 s, a 1 kg load grasped over 0.2 s at 3 s into
the second 12 s), then the test's command (``estimate --model ident/ --method M`` for
the three methods, every K-th sample updating, default the test's 4). Prints one
Markdown row per seed and method (the goal quantities, the detected changes, the goals
missed) and the count of seeds meeting all goals per method. ≈ 30 s of CPU per seed;
run it under ``nice``.
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
from robot_tv_dynamics.paths import example_robot_urdf  # noqa: E402

METHODS = ("classical", "projected", "geometric")


def run_seed(seed: int, decimation: int) -> dict[str, dict]:
    """One seed: identify on the first half, each method on the second; method -> metrics."""
    urdf = str(example_robot_urdf())
    lock = [item for joint in R.PANDA_LOCK for item in ("--lock", joint)]
    rows = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        first, second = R.write_halves(R.generate(urdf, seed), folder)
        with contextlib.redirect_stdout(io.StringIO()):
            if cli(["identify", "--urdf", urdf, *lock, "--data", str(first), "--out",
                    str(folder / "ident"), "--json", "--no-progress"]) != 0:
                raise RuntimeError(f"seed {seed}: identify failed")
        for method in METHODS:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
                if cli(["estimate", "--model", str(folder / "ident"), "--data", str(second),
                        "--link", R.LINK, "--payload-frame", R.LINK,  # the truth's frame
                        "--method", method, "--decimation",
                        str(decimation), "--json"]) != 0:
                    raise RuntimeError(f"seed {seed}: estimate --method {method} failed")
            rows[method] = R.live_metrics(json.loads(buffer.getvalue()))
    return rows


def main() -> None:
    """Run the seeds, print the table and the summary."""
    argv = sys.argv[1:]
    decimation = 4
    if "--decimation" in argv:
        at = argv.index("--decimation")
        decimation = int(argv[at + 1])
        del argv[at:at + 2]
    first, last = int(argv[0]), int(argv[1])
    print(f"decimation {decimation}")
    print("| seed | method | pre-grasp max \\|m\\| [kg] | 3 s after [kg] | final [kg] | "
          "COM error [mm] | follows from [s] | changes at [s] | goals missed |")
    print("|---|---|---|---|---|---|---|---|---|")
    met = dict.fromkeys(METHODS, 0)
    for seed in range(first, last + 1):
        for method, m in run_seed(seed, decimation).items():
            missed = R.failed_goals(m)
            met[method] += not missed
            print(f"| {seed} | {method} | {m['pre']:.3f} | {m['at3']:.3f} | {m['final']:.3f} | "
                  f"{1e3 * m['com_error']:.1f} | {m['follow']:.2f} | "
                  f"{', '.join(f'{c:.2f}' for c in m['change_times']) or 'none'} | "
                  f"{', '.join(missed) or '—'} |", flush=True)
    seeds = last - first + 1
    print("\nall goals met: " + ", ".join(f"{method} {n}/{seeds}" for method, n in met.items()))


if __name__ == "__main__":
    main()
