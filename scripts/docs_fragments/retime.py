"""The ``retime`` fragment of ``scripts/docs_numbers.py``.

The ``retime`` example of docs/retiming.md (its text output). Deterministic but for the
runtime: the test re-runs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .common import UR5, Fragment, example_urdf, stamp

RETIME_COMMANDS = (
    ["retime", "--urdf", "ur5_robot.urdf", "--trajectory", "ur5_fast_trajectory.yaml",
     "--payload", "ur5_payload_6kg.yaml", "--out", "retimed.yaml"],
    ["evaluate", "--urdf", "ur5_robot.urdf", "--trajectory", "retimed.yaml", "--payload",
     "ur5_payload_6kg.yaml"],
)
#: What the agreement test allows: printed numbers (4 decimals) and the runtime (wall time).
RETIME_TOLERANCE = 2e-3


def retime_outputs() -> list[str]:
    """The stdout of the retiming example's two commands, run in a fresh folder."""
    from robot_tv_dynamics.paths import package_config_dir

    work = Path(tempfile.mkdtemp(prefix="docs_numbers_retime_"))
    for name in ("ur5_fast_trajectory.yaml", "ur5_payload_6kg.yaml"):
        shutil.copy(package_config_dir() / "examples" / name, work / name)
    shutil.copy(example_urdf(UR5), work / "ur5_robot.urdf")
    outputs = []
    for argv in RETIME_COMMANDS:
        result = subprocess.run([sys.executable, "-m", "robot_tv_dynamics.cli", *argv],
                                cwd=work, capture_output=True, text=True, timeout=600)
        if result.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(argv)}: exit {result.returncode}\n{result.stderr}")
        outputs.append(result.stdout.replace(str(work) + os.sep, ""))
    shutil.rmtree(work, ignore_errors=True)
    return outputs


def run_retime() -> dict[str, Any]:
    """The retiming example's commands and their outputs."""
    return {"commands": [" ".join(argv) for argv in RETIME_COMMANDS],
            "outputs": retime_outputs(), "tolerance": RETIME_TOLERANCE}


def render_retime(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The example as a terminal session, and its stamp."""
    retime_out, evaluate_out = data["outputs"]
    verdict = [line for line in evaluate_out.splitlines() if line.startswith("violations")]
    first, second = data["commands"]
    lines = ["```", f"$ robot-tv-dynamics {_wrap(first)}", retime_out.rstrip("\n"),
             f"$ robot-tv-dynamics {second}", "...", *verdict, "```", "",
             stamp(info, "python scripts/docs_numbers.py retime") + " "
             "`test/test_docs_numbers.py` re-runs the command and requires every printed "
             f"number within {data['tolerance']:g} of these, except the runtime (wall time)."]
    return "\n".join(lines) + "\n"


def _wrap(command: str) -> str:
    head, sep, tail = command.partition(" --payload")
    return f"{head} \\\n      --payload{tail}" if sep else command


#: What the registry lists of this module.
FRAGMENTS = (Fragment("retime", run_retime, render_retime),)
