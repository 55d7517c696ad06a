"""The ``bench_demo`` fragment of ``scripts/docs_numbers.py``.

``benchmarks/bench_demo.py --runs 3`` on both arms (docs/demo.md). Speed figures of a
shared machine: dated and stamped, never checked by a test.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from .common import REPO, UR5, Fragment, example_urdf, stamp


def run_bench_demo() -> dict[str, Any]:
    """``benchmarks/bench_demo.py --runs 3`` on the Panda and the UR5: its printed lines."""
    outputs = {}
    for arm, extra in (("panda", []), ("ur5", ["--urdf", example_urdf(UR5)])):
        result = subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "bench_demo.py"), "--runs", "3",
             *extra], capture_output=True, text=True, check=True, timeout=3600)
        outputs[arm] = [line for line in result.stdout.splitlines()
                        if not line.startswith("load average after")]
    return {"outputs": outputs}


def render_bench_demo(data: dict[str, Any], info: dict[str, Any]) -> str:
    """bench_demo's printed lines, and the stamp."""
    lines = ["```", "$ python benchmarks/bench_demo.py --runs 3", *data["outputs"]["panda"],
             "$ python benchmarks/bench_demo.py --runs 3 --urdf $UR5",
             *data["outputs"]["ur5"], "```", "",
             stamp(info, "python scripts/docs_numbers.py bench_demo") + " Speed figures of "
             "a machine shared with other jobs: dated and stamped here, not checked by any "
             "test (a test cannot assert a speed)."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("bench_demo", run_bench_demo, render_bench_demo),)
