"""The ``adaptive_matched`` fragment of ``scripts/docs_numbers.py``.

The 10 s ``adapt --suite`` of docs/adaptive.md at the matched gains (T_a = 1 s), both
plants (≈ 15 min of wall time on a loaded 2-core machine; the kept data are the rows of
its suite.csv).
``--add-adaptive-matched FOLDER`` keeps the rows of a suite already run into FOLDER with
that command. Not re-run by a test; test/test_docs_numbers.py checks the page's claims
against the kept rows. docs/adaptive_matched.png is drawn from them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .common import DATA, REPO, Fragment, machine, stamp
from .suites import suite_rows, suite_table

#: The suite at matched adaptation speed (docs/adaptive.md): every scenario, both arms,
#: both plants, persistent excitation, 10 s, every law's γ from T_a = 1 s.
ADAPTIVE_MATCHED_COMMAND = ("adapt", "--suite", "--arms", "ur5,panda", "--plants",
                            "generalized,classical", "--duration", "10", "--adaptation-time",
                            "1")
#: The table's columns (suite.csv keys) and headings.
ADAPTIVE_MATCHED_TABLE = (
    ("arm", "arm"), ("scenario", "scenario"), ("plant", "plant"), ("controller", "law"),
    ("gamma", "γ"),
    ("tracking_rms_rad", "tracking RMS [rad]"),
    ("inf_margin_every_step", "inf μ(Θ̂), every step"),
    ("final_load_mass_error_kg", "m̂ − m at 10 s [kg]"),
    ("final_load_mass_relative_error", "(m̂ − m)/m at 10 s"),
    ("time_to_tolerance_load_mass_s", "within 10 % from [s]"),
    ("load_mass_unobservable_fraction", "load mass unobservable"),
    ("final_theta_error", "‖Θ̂ − Θ‖ at 10 s"),
    ("final_visible_error_W", "‖Θ̂ − Θ‖_R at 10 s [√W]"),
    ("visible_error_final_over_peak", "‖Θ̂ − Θ‖_R: end / peak"),
    ("band_budget", "band budget"), ("diverged_at_s", "diverged at [s]"))


def _read_matched(folder: Path) -> dict[str, Any]:
    return {"command": " ".join(ADAPTIVE_MATCHED_COMMAND), "rows": suite_rows(folder),
            "note": (folder / "suite.md").read_text(encoding="utf-8").strip()
            .splitlines()[-1]}


def run_adaptive_matched() -> dict[str, Any]:
    """Run the matched-speed suite (≈ 10 min of CPU) and keep its rows and its line."""
    folder = Path(tempfile.mkdtemp(prefix="docs_numbers_matched_"))
    subprocess.run(["nice", "-n", "19", sys.executable, "-m", "robot_tv_dynamics.cli",
                    *ADAPTIVE_MATCHED_COMMAND, "--out", str(folder)], check=False,
                   timeout=4 * 3600, capture_output=True)
    return _read_matched(folder)


def add_adaptive_matched(folder: Path) -> None:
    """Keep the rows of the matched-speed suite already run into ``folder``."""
    record = {"machine": machine(), "data": _read_matched(folder)}
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "adaptive_matched.json").write_text(json.dumps(record, indent=1,
                                                           ensure_ascii=False) + "\n",
                                                encoding="utf-8")


def render_adaptive_matched(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The matched-speed suite's table (its suite.csv rows), its line, the stamp."""
    plants = {"generalized": 0, "classical": 1}
    lines = suite_table(sorted(data["rows"], key=lambda r: plants.get(r["plant"], 9)),
                        ADAPTIVE_MATCHED_TABLE)
    lines += ["", f"`robot-tv-dynamics {data['command']}`: {data['note']}", "",
              stamp(info, "python scripts/docs_numbers.py adaptive_matched") + " Each row is "
              "one 10 s run (10 000 control steps at 1 kHz), persistent excitation; γ is each "
              "law's gain from T_a = 1 s (computed torque: —)."]
    return "\n".join(lines) + "\n"


def figure_adaptive_matched(data: dict[str, Any], path: Path) -> None:
    """docs/adaptive_matched.png: the generalized plant's rows, as ``adapt --suite`` draws."""
    sys.path.insert(0, str(REPO))
    from robot_tv_dynamics.control.report import suite_figure

    suite_figure([r for r in data["rows"] if r["plant"] == "generalized"], path)


#: What the registry lists of this module.
FRAGMENTS = (Fragment("adaptive_matched", run_adaptive_matched, render_adaptive_matched,
                       REPO / "docs" / "adaptive_matched.png", figure_adaptive_matched),)
