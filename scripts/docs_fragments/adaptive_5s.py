"""The ``adaptive_5s`` fragment of ``scripts/docs_numbers.py``.

The four 5 s ``adapt --suite`` runs of docs/adaptive.md (≈ 30 min of CPU; the kept data
are the rows of their suite.csv). Not re-run by a test; test/test_docs_numbers.py checks
the page's claims against the kept rows. The figure docs/adaptive_suite.png is drawn from
the same rows (``--figures`` redraws it).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .common import REPO, Fragment, stamp
from .suites import suite_rows, suite_table

#: The 5 s suites of docs/adaptive.md ("What was run first"): persistent excitation,
#: every scenario, both plants; the projected law in suites of its own.
ADAPTIVE_5S_COMMANDS = tuple(
    ["adapt", "--suite", "--arms", arm, "--controllers", controllers, "--duration", "5"]
    for controllers in ("slotine-li,natural,computed-torque", "projected")
    for arm in ("ur5", "panda"))
#: The table's columns (suite.csv), in its order.
ADAPTIVE_5S_TABLE = ("arm", "scenario", "plant", "controller", "tracking_rms_rad",
                     "tracking_max_rad", "tau_rms", "inf_margin_every_step",
                     "inf_lambda_min_M_hat", "time_to_tolerance_load_mass_s",
                     "consistency_violations", "first_violation_s", "min_eig_J_hat",
                     "diverged_at_s")


def run_adaptive_5s() -> dict[str, Any]:
    """Run the four 5 s suites (tens of minutes of CPU) and keep their rows and notes."""
    work = Path(tempfile.mkdtemp(prefix="docs_numbers_adaptive5_"))
    rows, notes = [], []
    for k, argv in enumerate(ADAPTIVE_5S_COMMANDS):
        folder = work / f"suite{k}"
        subprocess.run(["nice", "-n", "19", sys.executable, "-m", "robot_tv_dynamics.cli",
                        *argv, "--out", str(folder)], check=False, timeout=4 * 3600,
                       capture_output=True)
        rows += suite_rows(folder)
        notes.append((folder / "suite.md").read_text(encoding="utf-8").strip()
                     .splitlines()[-1])
    return {"commands": [" ".join(argv) for argv in ADAPTIVE_5S_COMMANDS], "rows": rows,
            "notes": notes}


def render_adaptive_5s(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One table of every 5 s run (the suites' suite.csv rows), the suites' lines, the stamp."""
    order = {"slotine-li": 0, "natural": 1, "projected": 2, "computed-torque": 3}
    arms = {"ur5": 0, "panda": 1}
    scenarios = {"constant": 0, "fill": 1, "drain": 2, "grasp": 3, "timeline": 4,
                 "wrong_estimate": 5, "release": 6}
    rows = sorted(data["rows"], key=lambda r: (
        arms.get(r["arm"], 9), scenarios.get(r["scenario"], 9), r["plant"] != "generalized",
        order.get(r["controller"], 9)))
    lines = suite_table(rows, [(k, k) for k in ADAPTIVE_5S_TABLE])
    lines += ["", "The suites (each ends with the line of its suite.md):", ""]
    for command, note in zip(data["commands"], data["notes"], strict=False):
        lines += [f"* `robot-tv-dynamics {command}`: {note}"]
    lines += ["", stamp(info, "python scripts/docs_numbers.py adaptive_5s") + " Each row "
              "is one 5 s run (5000 control steps at 1 kHz), persistent excitation. Not "
              "re-run by a test (tens of minutes of CPU); `test/test_docs_numbers.py` checks "
              "the claims the text below makes of these rows."]
    return "\n".join(lines) + "\n"


def figure_adaptive_5s(data: dict[str, Any], path: Path) -> None:
    """docs/adaptive_suite.png: every 5 s run of the kept rows, as ``adapt --suite`` draws it."""
    sys.path.insert(0, str(REPO))
    from robot_tv_dynamics.control.report import suite_figure

    suite_figure(data["rows"], path)


#: What the registry lists of this module.
FRAGMENTS = (Fragment("adaptive_5s", run_adaptive_5s, render_adaptive_5s,
                       REPO / "docs" / "adaptive_suite.png", figure_adaptive_5s),)
