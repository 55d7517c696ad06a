"""The ``adaptive_60s`` fragment of ``scripts/docs_numbers.py``.

The 60 s ``adapt --suite`` of docs/adaptive.md at the matched gains (T_a = 1 s): every
scenario and law, both arms and both excitations, the generalized plant (112 runs, ≈ 1.5 h
of wall time on a loaded 2-core machine; the kept data are the rows of its suite.csv).
``--add-adaptive-60s FOLDER`` keeps the rows of a suite already run into FOLDER with that
command. Not re-run by a test; test/test_docs_numbers.py checks the page's claims against
the kept rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .common import DATA, Fragment, machine, stamp
from .suites import suite_rows, suite_table

#: The 60 s suite of docs/adaptive.md: every law's γ from T_a = 1 s.
ADAPTIVE_COMMAND = ("adapt", "--suite", "--arms", "ur5,panda", "--excitation",
                    "persistent,poor", "--duration", "60", "--workers", "2", "--plants",
                    "generalized", "--adaptation-time", "1")
#: The table's columns: (suite.csv column or derived key, header).
ADAPTIVE_TABLE = (
    ("arm", "arm"), ("scenario", "scenario"), ("excitation", "excitation"),
    ("controller", "law"), ("gamma", "γ"), ("initial_margin", "μ(Θ̂₀)"),
    ("inf_margin_every_step", "inf_t μ(Θ̂(t)), every step"),
    ("margin_ratio", "inf μ / μ(Θ̂₀)"),
    ("inf_lambda_min_M_hat", "inf λ_min(M(q,Θ̂)), 50 Hz"),
    ("consistency_violations", "50 Hz samples with μ ≤ 0 (of 3001)"),
    ("first_violation_s", "first step with μ ≤ 0 [s]"),
    ("tracking_rms_rad", "tracking RMS [rad]"),
    ("final_load_mass_relative_error", "(m̂ − m)/m at 60 s"),
    ("time_to_tolerance_load_mass_s", "within 10 % from [s]"),
    ("final_visible_error_W", "‖Θ̂ − Θ‖_R at 60 s [√W]"),
    ("band_budget", "band budget"), ("diverged_at_s", "diverged at [s]"))


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


def read_suite(folder: Path) -> dict[str, Any]:
    """The rows of the suite's suite.csv with each run's μ(Θ̂₀), and its suite.md line."""
    rows = suite_rows(folder)
    margins: dict[tuple[str, str], float] = {}
    for row in rows:
        key = (row["arm"], row["scenario"])
        if key not in margins:
            margins[key] = initial_margin(*key, 60.0)
        row["initial_margin"] = f"{margins[key]:.6g}"
    note = (folder / "suite.md").read_text(encoding="utf-8").strip().splitlines()[-1]
    return {"command": " ".join(ADAPTIVE_COMMAND), "rows": rows, "note": note}


def run_adaptive_60s() -> dict[str, Any]:
    """Run the 60 s suite (≈ 1.5 h of wall time on a shared 2-core machine) and read it."""
    folder = Path(tempfile.mkdtemp(prefix="docs_numbers_adaptive_"))
    subprocess.run(["nice", "-n", "19", sys.executable, "-m", "robot_tv_dynamics.cli",
                    *ADAPTIVE_COMMAND, "--out", str(folder)], check=False, timeout=6 * 3600)
    return read_suite(folder)


def add_adaptive_60s(folders: list[Path]) -> None:
    """Keep the rows of the 60 s suite already run into the one folder of ``folders``."""
    if len(folders) != 1:
        raise SystemExit(f"--add-adaptive-60s takes the one --out folder of "
                         f"`robot-tv-dynamics {' '.join(ADAPTIVE_COMMAND)}`, got {len(folders)}")
    record = {"machine": machine(), "data": read_suite(folders[0])}
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "adaptive_60s.json").write_text(json.dumps(record, indent=1, ensure_ascii=False)
                                            + "\n", encoding="utf-8")


def render_adaptive_60s(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One table of every 60 s run (the suite's suite.csv rows), its line, the stamp."""
    order = {"natural": 0, "projected": 1, "slotine-li": 2, "computed-torque": 3}
    rows = sorted(data["rows"], key=lambda r: (r["arm"], r["scenario"], r["excitation"],
                                               order.get(r["controller"], 9)))
    lines = suite_table(rows, ADAPTIVE_TABLE)
    lines += ["", f"`robot-tv-dynamics {data['command']}`: {data['note']}", "",
              stamp(info, "python scripts/docs_numbers.py adaptive_60s") + " Each row is one "
              "60 s run (60 000 control steps at 1 kHz), generalized plant; γ is each law's "
              "gain from T_a = 1 s (computed torque: —); μ(Θ̂₀) is the smallest margin of "
              "the controllers' start Θ̂₀ over the adapted bodies."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("adaptive_60s", run_adaptive_60s, render_adaptive_60s),)
