"""The ``adaptive_60s`` fragment of ``scripts/docs_numbers.py``.

The 60 s ``adapt --suite`` runs of docs/adaptive.md (hours of CPU; the kept data are the
rows of their suite.csv, read by :func:`read_suites`). Not re-run by a test; test/control/
checks the claims they rest on.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .common import DATA, Fragment, load, machine, machine_text, stamp
from .suites import suite_cell, suite_rows

#: The 60 s suites of docs/adaptive.md, in the order they were run (each a suite.csv).
ADAPTIVE_COMMON = ["adapt", "--suite", "--arms", "ur5,panda", "--excitation",
                   "persistent,poor", "--duration", "60", "--workers", "2", "--plants",
                   "generalized"]
ADAPTIVE_COMMANDS = (
    [*ADAPTIVE_COMMON, "--scenarios", "constant,wrong_estimate", "--controllers",
     "natural,slotine-li"],
    [*ADAPTIVE_COMMON, "--scenarios", "constant", "--controllers", "projected"],
    [*ADAPTIVE_COMMON, "--scenarios", "release,fill,drain,grasp,timeline", "--controllers",
     "natural,slotine-li"],
    # the last suite stopped at a gradient-law run whose Θ̂ blew up (fixed since): its
    # four remaining runs
    [*ADAPTIVE_COMMON, "--scenarios", "timeline", "--controllers", "slotine-li"],
    # run later (``--add-adaptive-60s``): the projected law on every other scenario
    [*ADAPTIVE_COMMON, "--scenarios", "release,fill,drain,grasp,timeline,wrong_estimate",
     "--controllers", "projected"],
)
#: The first suite predates the first_violation_s column: its gradient-law rows take it
#: from these 1 s runs (deterministic and the same as the 60 s runs' first second).
ADAPTIVE_FIRST_VIOLATION = [
    "adapt", "--suite", "--arms", "ur5,panda", "--scenarios", "constant,wrong_estimate",
    "--controllers", "slotine-li", "--excitation", "persistent,poor", "--plants",
    "generalized", "--duration", "1"]
#: The table's columns: (suite.csv column or derived key, header).
ADAPTIVE_TABLE = (
    ("arm", "arm"), ("scenario", "scenario"), ("excitation", "excitation"),
    ("controller", "law"), ("initial_margin", "μ(Θ̂₀)"),
    ("inf_margin_every_step", "inf_t μ(Θ̂(t)), every step"),
    ("margin_ratio", "inf μ / μ(Θ̂₀)"),
    ("inf_lambda_min_M_hat", "inf λ_min(M(q,Θ̂)), 50 Hz"),
    ("consistency_violations", "50 Hz samples with μ ≤ 0 (of 3001)"),
    ("first_violation_s", "first step with μ ≤ 0 [s]"),
    ("min_eig_J_hat", "min eig Ĵ, every step"),
    ("tracking_rms_rad", "tracking RMS [rad]"), ("diverged_at_s", "diverged at [s]"))


def initial_margin(arm: str, scenario: str, duration: float) -> float:
    """The smallest μ(Θ̂₀) over the adapted bodies (the controllers' start, as the suite sets it)."""
    import numpy as np

    from robot_tv_dynamics.control.setups import WRONG_ESTIMATE, initial_estimate
    from robot_tv_dynamics.control.suite import arm_urdf, scenario_process
    from robot_tv_dynamics.inertia import consistency_margin
    from robot_tv_dynamics.model import RobotModel

    urdf = arm_urdf(arm)
    model = RobotModel.from_urdf(urdf)
    with tempfile.TemporaryDirectory() as work:
        process = scenario_process(scenario, model, urdf, duration, Path(work))
        theta0 = initial_estimate(model, process, wrong=scenario == WRONG_ESTIMATE)
    mu = np.atleast_1d(consistency_margin(theta0))
    return float(mu[mu > 0.0].min())


def read_suites(folders: list[Path], first: Path | None = None) -> dict[str, Any]:
    """The rows of each folder's suite.csv (and the line under its suite.md table).

    ``first``: the :data:`ADAPTIVE_FIRST_VIOLATION` suite, for rows without
    ``first_violation_s`` ("not recorded" when it has no such row).
    """
    rows, notes = [], []
    for folder in folders:
        rows += suite_rows(folder)
        notes.append((folder / "suite.md").read_text(encoding="utf-8").strip().splitlines()[-1])
    keys = ("arm", "scenario", "plant", "excitation", "controller")
    early = {tuple(r[k] for k in keys): r for r in (suite_rows(first) if first else [])}
    for row in rows:
        if "first_violation_s" not in row:
            match = early.get(tuple(row[k] for k in keys))
            row["first_violation_s"] = (
                match["first_violation_s"] if match and match["first_violation_s"]
                else "" if int(row["consistency_violations"]) == 0
                and float(row["inf_margin_every_step"]) > 0 else "not recorded")
    margins: dict[tuple[str, str], float] = {}
    for row in rows:
        key = (row["arm"], row["scenario"])
        if key not in margins:
            margins[key] = initial_margin(*key, 60.0)
        row["initial_margin"] = f"{margins[key]:.6g}"
    return {"commands": [" ".join(argv) for argv in ADAPTIVE_COMMANDS], "rows": rows,
            "notes": notes}


def run_adaptive_60s() -> dict[str, Any]:
    """Run the 60 s suites (hours of CPU on a shared 2-core machine) and read them."""
    work = Path(tempfile.mkdtemp(prefix="docs_numbers_adaptive_"))
    folders = []
    for k, argv in enumerate([*ADAPTIVE_COMMANDS, ADAPTIVE_FIRST_VIOLATION]):
        folders.append(work / f"suite{k}")
        subprocess.run(["nice", "-n", "19", sys.executable, "-m", "robot_tv_dynamics.cli",
                        *argv, "--out", str(folders[-1])], check=False, timeout=6 * 3600)
    return read_suites(folders[:-1], folders[-1])


def add_adaptive_60s(folders: list[Path]) -> None:
    """Add the suites in ``folders`` to the kept adaptive_60s record without re-running it.

    The folders are the ``--out`` of the :data:`ADAPTIVE_COMMANDS` after those the record
    holds, in order (each suite takes hours of CPU: the record grows suite by suite). Each
    added suite keeps the machine it ran on (its line in the fragment says so).
    """
    record = load("adaptive_60s")
    data = record["data"]
    start = len(data["commands"])
    commands = [" ".join(argv) for argv in ADAPTIVE_COMMANDS[start:start + len(folders)]]
    if len(commands) != len(folders):
        raise SystemExit(f"the record holds {start} of {len(ADAPTIVE_COMMANDS)} suites: "
                         f"{len(folders)} folder(s) given, {len(ADAPTIVE_COMMANDS) - start} "
                         "to add")
    added = read_suites(folders)
    info = machine()
    data["rows"] += added["rows"]
    data["notes"] += added["notes"]
    data["commands"] += commands
    data.setdefault("added", []).extend({"command": c, "machine": info} for c in commands)
    (DATA / "adaptive_60s.json").write_text(json.dumps(record, indent=1, ensure_ascii=False)
                                            + "\n", encoding="utf-8")


def render_adaptive_60s(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One table of every 60 s run (from the suites' suite.csv), the commands, the stamp."""
    lines = ["| " + " | ".join(h for _, h in ADAPTIVE_TABLE) + " |",
             "|" + "---|" * len(ADAPTIVE_TABLE)]
    order = {"natural": 0, "projected": 1, "slotine-li": 2, "computed-torque": 3}
    rows = sorted(data["rows"], key=lambda r: (r["arm"], r["scenario"], r["excitation"],
                                               order.get(r["controller"], 9)))
    for row in rows:
        lines.append("| " + " | ".join(suite_cell(row, k) for k, _ in ADAPTIVE_TABLE)
                     + " |")
    lines += ["", "The suites, in the order they ran (each ends with the line of its "
              "suite.md):", ""]
    for command, note in zip(data["commands"], data["notes"], strict=False):
        lines += [f"* `robot-tv-dynamics {command}`: {note}"]
    lines += ["", stamp(info, "python scripts/docs_numbers.py adaptive_60s") + " Each row "
              "is one 60 s run (60 000 control steps at 1 kHz); μ(Θ̂₀) is the smallest "
              "margin of the controllers' start Θ̂₀ over the adapted bodies."]
    for added in data.get("added", []):
        lines += ["", f"Added later by `python scripts/docs_numbers.py --add-adaptive-60s "
                  f"FOLDER` (the `--out` of `robot-tv-dynamics {added['command']}`), run on "
                  + machine_text(added["machine"])]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("adaptive_60s", run_adaptive_60s, render_adaptive_60s),)
