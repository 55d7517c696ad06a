"""The ``adaptive_disturbance`` fragment of ``scripts/docs_numbers.py``.

The 10 s ``adapt --suite`` of docs/adaptive.md under a constant disturbance w (eq. (39))
on every joint, at the matched gains (T_a = 1 s): both arms, ``constant`` and ``grasp``,
every law (16 runs, a few minutes of CPU; the kept data are the rows of its suite.csv).
Not re-run by a test; test/test_docs_numbers.py checks the page's claims against the kept
rows.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .common import Fragment, stamp
from .suites import suite_rows, suite_table

#: The suite under w = 2 N·m (N on a prismatic joint) on every joint.
ADAPTIVE_DISTURBANCE_COMMAND = (
    "adapt", "--suite", "--arms", "ur5,panda", "--scenarios", "constant,grasp", "--plants",
    "generalized", "--duration", "10", "--adaptation-time", "1", "--disturbance", "2")
#: The table's columns (suite.csv keys) and headings.
ADAPTIVE_DISTURBANCE_TABLE = (
    ("arm", "arm"), ("scenario", "scenario"), ("controller", "law"), ("gamma", "γ"),
    ("inf_margin_every_step", "inf μ(Θ̂), every step"),
    ("inf_lambda_min_M_hat", "inf λ_min(M(q,Θ̂)), 50 Hz"),
    ("consistency_violations", "50 Hz samples with μ ≤ 0"),
    ("tracking_rms_rad", "tracking RMS [rad]"),
    ("final_load_mass_relative_error", "(m̂ − m)/m at the end"),
    ("final_theta_error_max_body", "largest ‖Θ̂_i − Θ_i‖ at the end"),
    ("diverged_at_s", "diverged at [s]"))


def run_adaptive_disturbance() -> dict[str, Any]:
    """Run the suite under w (a few minutes of CPU) and keep its rows and its line."""
    folder = Path(tempfile.mkdtemp(prefix="docs_numbers_disturbance_"))
    subprocess.run(["nice", "-n", "19", sys.executable, "-m", "robot_tv_dynamics.cli",
                    *ADAPTIVE_DISTURBANCE_COMMAND, "--out", str(folder)], check=False,
                   timeout=3600, capture_output=True)
    return {"command": " ".join(ADAPTIVE_DISTURBANCE_COMMAND), "rows": suite_rows(folder),
            "note": (folder / "suite.md").read_text(encoding="utf-8").strip()
            .splitlines()[-1]}


def render_adaptive_disturbance(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The suite's table (its suite.csv rows), its line, the stamp."""
    lines = suite_table(data["rows"], ADAPTIVE_DISTURBANCE_TABLE)
    lines += ["", f"`robot-tv-dynamics {data['command']}`: {data['note']}", "",
              stamp(info, "python scripts/docs_numbers.py adaptive_disturbance") + " Each "
              "row is one 10 s run, persistent excitation, generalized plant, w = 2 N·m on "
              "every joint (2 N on the Panda's finger slides); γ from T_a = 1 s."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("adaptive_disturbance", run_adaptive_disturbance,
                      render_adaptive_disturbance),)
