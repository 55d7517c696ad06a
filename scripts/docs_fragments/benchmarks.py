"""The speed benchmarks' fragments, quoted whole.

``bench_dynamics``, ``bench_observer``, ``bench_sim``, ``bench_estimator``: what
``benchmarks/bench_dynamics.py``, ``bench_observer.py``, ``bench_sim.py`` and
``bench_estimator.py --samples 2000`` print (docs/cli.md, docs/observer.md,
docs/simulation.md, docs/estimation.md). Speed figures: dated and stamped, never
checked by a test.

``bench_estimator_node``, ``bench_ready``: ``bench_estimator.py --node`` for each method
(docs/estimation.md) and ``bench_ready.py --repeat 3``, with the package's discovery
profile and with ``--dds-defaults`` (docs/cli.md). Speed figures.

``bench_bringup``: ``bench_bringup.py --cycles 20``, 20 bring-up start/stop cycles by
group SIGINT (docs/ros_interface.md). Exit codes and stop times of a shared machine.

``bench_bounds``, ``bench_bounds_workers``: ``bench_bounds.py`` on the UR5, the Panda
and the locked-finger Panda (≈ 10 min: certified searches read at 1 and 3 min) and
``bench_bounds.py --workers`` (1 vs 2 Dask workers; docs/concepts.md). Gaps reached in
a wall-time budget on a shared machine: dated and stamped, never checked by a test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial
from typing import Any, Callable

from .common import REPO, Fragment, stamp

#: Speed benchmarks quoted whole: NAME → (script in benchmarks/, arguments), or a list of
#: such pairs run one after the other (their outputs quoted in turn).
BENCHMARKS: dict[str, Any] = {
    "bench_dynamics": ("bench_dynamics.py", ()),
    "bench_observer": ("bench_observer.py", ()),
    "bench_sim": ("bench_sim.py", ()),
    "bench_estimator": ("bench_estimator.py", ("--samples", "2000")),
    "bench_estimator_node": [("bench_estimator.py", ("--node", "--method", method))
                             for method in ("geometric", "classical", "projected")],
    "bench_ready": [("bench_ready.py", ("--repeat", "3")),
                    ("bench_ready.py", ("--repeat", "3", "--dds-defaults"))],
    "bench_bringup": ("bench_bringup.py", ("--cycles", "20")),
    "bench_bounds": ("bench_bounds.py", ("--checkpoints", "60", "180", "--robots", "ur5",
                                         "panda", "panda-locked")),
    "bench_bounds_workers": ("bench_bounds.py", ("--workers", "--robots", "panda-locked",
                                                 "panda")),
}


def run_benchmark(name: str) -> dict[str, Any]:
    """What ``benchmarks/<script>`` prints, and the load average when it started."""
    spec = BENCHMARKS[name]
    before = round(os.getloadavg()[0], 1)
    runs = []
    for script, argv in (spec if isinstance(spec, list) else [spec]):
        result = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *argv],
                                capture_output=True, text=True, check=True, timeout=7200)
        runs.append({"command": " ".join(["python", f"benchmarks/{script}", *argv]),
                     "output": result.stdout.rstrip("\n").splitlines()})
    if not isinstance(spec, list):
        return {**runs[0], "load_average_before": before}
    return {"runs": runs, "load_average_before": before}


def render_benchmark(name: str) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    """The benchmark's printed lines and the stamp: a speed, never checked by a test."""
    def render(data: dict[str, Any], info: dict[str, Any]) -> str:
        runs = data.get("runs", [data])
        session = [line for run in runs for line in (f"$ {run['command']}", *run["output"])]
        commands = "`, `".join(run["command"] for run in runs)
        lines = ["```", *session, "```", "",
                 stamp(info, f"python scripts/docs_numbers.py {name}") + " Load average "
                 f"{data['load_average_before']:g} when the run started, the one above "
                 "when it ended. Speed figures of a machine shared with other jobs: dated "
                 "and stamped here, not checked by any test (a test cannot assert a speed); "
                 f"`{commands}` prints them for yours."]
        return "\n".join(lines) + "\n"
    return render


#: What the registry lists of this module.
FRAGMENTS = tuple(Fragment(name, partial(run_benchmark, name), render_benchmark(name))
                  for name in BENCHMARKS)
