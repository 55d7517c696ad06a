"""Running the demo as a user does (``python -m robot_tv_dynamics.demo``) from a test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_demo(out: Path, *extra: str, duration: str = "3") -> subprocess.CompletedProcess:
    """The demo into ``out`` for ``duration`` simulated seconds, on a per-process domain."""
    env = os.environ.copy()
    env.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))
    return subprocess.run(
        [sys.executable, "-m", "robot_tv_dynamics.demo", "--duration", duration, "--out",
         str(out), "--no-progress", *extra],
        env=env, capture_output=True, text=True, timeout=240)
