"""scripts/run_main.sh runs where the user is: relative paths and outputs are the caller's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from robot_tv_dynamics.paths import example_robot_urdf

REPO = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.slow]


def test_run_main_evaluate_from_another_folder_reads_and_writes_there(tmp_path):
    work = tmp_path / "my project"
    work.mkdir()
    for name in ("ur5_trajectory.yaml", "ur5_payload.yaml"):
        shutil.copy(REPO / "config" / "examples" / name, work / name)
    before = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                            text=True).stdout
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    result = subprocess.run(
        ["bash", str(REPO / "scripts" / "run_main.sh"), "evaluate",
         "--urdf", str(example_robot_urdf("ur_description/urdf/ur5_robot.urdf")),
         "--trajectory", "ur5_trajectory.yaml", "--payload", "ur5_payload.yaml",
         "--plot", "mine.png", "--csv", "efforts.csv", "--json"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode in (0, 1), result.stderr[-3000:]
    assert json.loads(result.stdout)["max_payload_mass"] > 0
    assert (work / "mine.png").is_file() and (work / "efforts.csv").is_file()
    assert not (REPO / "mine.png").exists() and not (REPO / "efforts.csv").exists()
    after = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                           text=True).stdout
    assert after == before, f"run_main.sh changed the repo:\n{after}"


def test_run_main_does_not_change_into_the_repo_for_the_command():
    text = (REPO / "scripts" / "run_main.sh").read_text()
    code = [line.strip() for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert not any(line.startswith("cd ") for line in code), "run_main.sh must not cd"
