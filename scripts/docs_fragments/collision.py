"""The ``collision`` fragment of ``scripts/docs_numbers.py``.

The momentum observers in three demos (fill_collision on both arms, fill on the Panda;
docs/demo.md). Over DDS only: test/demo/ asserts what the text claims.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from .common import UR5, Fragment, example_urdf, people, stamp
from .demo import DEMO_DURATION

COLLISION_RUNS = (("panda_fill_collision", "", "fill_collision"),
                  ("ur5_fill_collision", UR5, "fill_collision"), ("panda_fill", "", "fill"))


def run_collision() -> dict[str, Any]:
    """The momentum observers' numbers of three 8 s demos (summary.json → observers)."""
    runs = {}
    for name, urdf, scenario in COLLISION_RUNS:
        out = Path(tempfile.mkdtemp(prefix=f"docs_numbers_{name}_"))
        env = {**os.environ, "ROS_DOMAIN_ID": os.environ.get("ROS_DOMAIN_ID", "77")}
        subprocess.run([sys.executable, "-m", "robot_tv_dynamics.demo", "--out", str(out),
                        "--duration", f"{DEMO_DURATION:g}", "--scenario", scenario,
                        "--publish-rate", "50", "--overwrite", "--no-progress",
                        *(["--urdf", example_urdf(urdf)] if urdf else [])],
                       env=env, check=True, capture_output=True, text=True, timeout=900)
        summary = json.loads((out / "summary.json").read_text())
        runs[name] = {"observers": summary["observers"],
                      "collision_window_s": summary["collision_window_s"],
                      "loading_window_s": summary["loading_window_s"]}
        shutil.rmtree(out, ignore_errors=True)
    return {"runs": runs}


def _joint(name: str) -> str:
    digits = re.findall(r"\d+$", name)
    return f"joint {digits[0]}" if name.startswith("panda_joint") and digits else name


def _contacts(contacts: list[dict[str, Any]]) -> str:
    if not contacts:
        return "no contact"
    spans = [f"{_joint(c['joint'])} {c['t_start']:.2f}–"
             + ("end" if c["t_end"] is None else f"{c['t_end']:.2f} s") for c in contacts]
    return ", ".join(spans)


def render_collision(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The observers' table of the three runs, and its stamp."""
    runs = data["runs"]
    names = [name for name, _, _ in COLLISION_RUNS]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> str:
        return f"| {label} | " + " | ".join(cell(runs[name]) for name in names) + " |"

    def loading(kind: str) -> Callable[[dict[str, Any]], str]:
        def cell(run: dict[str, Any]) -> str:
            obs = run["observers"][kind]
            peak = obs["peak_during_loading"]
            false = [c for c in obs["contacts"] if c["phase"] != "collision"]
            head = ("—" if peak is None else
                    f"{people(peak['value'])} N·m ({_joint(peak['joint'])})")
            return f"{head}; {'false contacts: ' if false else ''}{_contacts(false)}"
        return cell

    def push(run: dict[str, Any]) -> str:
        peaks = [run["observers"][kind]["peak_during_collision"]
                 for kind in ("generalized", "classical")]
        if any(p is None for p in peaks):
            return "—"
        hits = sorted({_joint(c["joint"]) for c in run["observers"]["generalized"]["contacts"]
                       if c["phase"] == "collision"})
        return (f"{people(peaks[0]['value'], 3)} / {people(peaks[1]['value'], 3)} N·m "
                f"(generalized contacts: {', '.join(hits) or 'none'})")

    def delay(run: dict[str, Any]) -> str:
        values = [run["observers"][kind]["detection_delay_s"]
                  for kind in ("generalized", "classical")]
        if all(v is None for v in values):
            return "—"
        return " / ".join("—" if v is None else f"{1e3 * v:.0f} ms" for v in values)

    lines = [
        "| 8 s, `--publish-rate 50` | Panda, fill_collision | UR5, fill_collision | Panda, fill |",
        "|---|---|---|---|",
        row("generalized: peak ‖r‖∞ during loading; contacts outside the push",
            loading("generalized")),
        row("classical: peak ‖r‖∞ during loading; contacts outside the push",
            loading("classical")),
        row("push: peak ‖r‖∞ (generalized / classical)", push),
        row("detection delay after the push starts (generalized / classical)", delay),
        "",
        stamp(info, "python scripts/docs_numbers.py collision") + " Each column is one "
        "run's `summary.json`. The residuals come from dynamics_node over DDS, so no test "
        "re-runs them here; `test/demo/test_demo_collision.py` asserts what the text says of "
        "them (no generalized contact outside the push, classical false contacts during the "
        "fill, the delay, `observe` reproducing the node).",
    ]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("collision", run_collision, render_collision),)
