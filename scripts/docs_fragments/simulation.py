"""The ``simulation`` fragment of ``scripts/docs_numbers.py``.

What the controller-in-the-loop example of docs/simulation.md prints. Deterministic
(seeded noise): the test re-runs it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from typing import Any

from .common import REPO, Fragment, stamp

#: What the agreement test allows on the example's printed numbers (relative).
SIMULATION_TOLERANCE = 1e-3


def simulation_example() -> str:
    """The first python block of docs/simulation.md (the controller-in-the-loop example)."""
    text = (REPO / "docs" / "simulation.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(.*?)```", text, flags=re.S)
    if found is None:
        raise RuntimeError("docs/simulation.md has no python block")
    return found.group(1)


def simulation_output() -> tuple[str, float]:
    """(stdout, wall time [s]) of the example, run in an empty folder."""
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", simulation_example()], capture_output=True,
                            text=True, check=True, timeout=600, cwd=tempfile.mkdtemp())
    return result.stdout, time.monotonic() - start


def run_simulation() -> dict[str, Any]:
    """The example's printed line and its wall time."""
    output, wall = simulation_output()
    return {"output": output, "wall_s": round(wall, 1), "tolerance": SIMULATION_TOLERANCE}


def render_simulation(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The printed line as an indented block, and its stamp."""
    lines = [f"Printed ({data['wall_s']:g} s of wall time, Python start-up included, for 4 s "
             "of simulated time):", "",
             *(f"    {line}" for line in data["output"].rstrip("\n").splitlines()), "",
             stamp(info, "python scripts/docs_numbers.py simulation") + " "
             "`test/test_docs_numbers.py` re-runs the block and requires every printed "
             f"number within {data['tolerance']:g} (relative) of these; the wall time "
             "depends on the machine."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("simulation", run_simulation, render_simulation),)
