"""How long the command line takes to answer ``--help`` and to reject a bad option.

Runs each command ``--repeat`` times in a fresh interpreter (``subprocess``, the console
script of the active environment) and prints the median and minimum wall times, and the
ratios of ``--bad-option`` to ``--help`` and of both to ``python -c "import numpy"`` in the
same run (the floor a command that loads NumPy cannot beat). The goal: an argument error is
answered within 2x of ``--help``, which loads neither NumPy nor Pinocchio
(``test/cli/test_cli_parser.py`` checks that no heavy module is imported). A subcommand's
own options are parsed only once its module is imported, so ``estimate --bad-option``
costs that module's imports; it is measured too, for the record.

Usage: ``python benchmarks/bench_cli_start.py [--repeat 10]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "--help": ["--help"],
    "--bad-option": ["--bad-option"],
    "estimate --help": ["estimate", "--help"],
    "estimate --bad-option": ["estimate", "--bad-option"],
}


def timed(argv: list[str], repeat: int) -> tuple[float, float]:
    """(median, minimum) wall time of ``argv`` over ``repeat`` runs [s]."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    script = shutil.which("robot-tv-dynamics")
    base = [script] if script else [sys.executable, "-m", "robot_tv_dynamics.cli"]
    numpy = timed([sys.executable, "-c", "import numpy"], args.repeat)
    results = {name: timed(base + argv, args.repeat) for name, argv in COMMANDS.items()}
    print(f"{'command':<24} {'median s':>9} {'min s':>7} {'/ import numpy':>15}")
    print(f"{'python -c import numpy':<24} {numpy[0]:9.3f} {numpy[1]:7.3f} {1.0:15.2f}")
    for name, (median, low) in results.items():
        print(f"{name:<24} {median:9.3f} {low:7.3f} {median / numpy[0]:15.2f}")
    ratio = results["--bad-option"][0] / results["--help"][0]
    print(f"--bad-option / --help: {ratio:.2f} (goal ≤ 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
