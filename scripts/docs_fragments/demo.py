"""The ``demo`` fragment of ``scripts/docs_numbers.py``.

``robot-tv-dynamics demo`` (8 s, fill) on the Panda and on the UR5 over DDS, read from
each run's ``summary.json`` (README and docs/demo.md). Deterministic in simulated time:
the test re-runs the simulator's closed loop without ROS.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from .common import UR5, Fragment, example_urdf, people, stamp

#: What the agreement test allows between the stated values and a fresh closed loop.
DEMO_TOLERANCES = {"time_s": 0.021, "relative": 0.02}
#: The demo's default run [simulated s].
DEMO_DURATION = 8.0


def run_demo() -> dict[str, Any]:
    """Both arms' 8 s fill demo over DDS; what the tables quote from summary.json."""
    arms = {}
    for arm, urdf in (("panda", example_urdf()), ("ur5", example_urdf(UR5))):
        out = Path(tempfile.mkdtemp(prefix=f"docs_numbers_{arm}_"))
        env = {**os.environ, "ROS_DOMAIN_ID": os.environ.get("ROS_DOMAIN_ID", "77")}
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "robot_tv_dynamics.demo", "--out", str(out),
                        "--duration", f"{DEMO_DURATION:g}", "--overwrite", "--no-progress",
                        *(["--urdf", urdf] if arm == "ur5" else [])],
                       env=env, check=True, capture_output=True, text=True, timeout=900)
        wall = time.monotonic() - start
        arms[arm] = demo_numbers(json.loads((out / "summary.json").read_text()), wall)
        shutil.rmtree(out, ignore_errors=True)
    return {"duration_s": DEMO_DURATION, "arms": arms, "tolerances": DEMO_TOLERANCES}


def demo_numbers(summary: dict[str, Any], wall: float | None = None) -> dict[str, Any]:
    """The quoted subset of one demo's summary.json."""
    classical = summary["estimators"]["classical"]
    projected = summary["estimators"]["projected"]
    load = summary["load"]
    first = classical["alarms"][0] if classical["alarms"] else None
    return {
        "duration_s": summary["duration_s"], "payload_body": summary["payload_body"],
        "link": load.get("link"), "link_source": load.get("link_source"),
        "tilt_file_deg": load.get("file_container_tilt_deg"),
        "classical_alarm_t": None if first is None else first["t"],
        "classical_alarm_phase": None if first is None else first.get("phase"),
        "classical_inf_mu": classical["inf_mu_payload"],
        "classical_min_lambda": classical["min_lambda_min_M_hat"],
        "classical_crossing_t": classical["first_nonpositive_lambda_min_M_hat_t"],
        "classical_lead_s": classical["lead_time_s"],
        "projected_alarms": len(projected["alarms"]),
        "projected_min_lambda": projected["min_lambda_min_M_hat"],
        "projected_alpha1": projected["alpha1"],
        "gamma": summary["gamma_inf_lambda_min_JtJ"], "gamma_method": summary["gamma_method"],
        "tracking_rms_rad": summary["tracking_rms_rad"],
        "real_time_factor": summary["real_time_factor"],
        "wall_s": None if wall is None else round(wall, 1)}


def _alarm(arm: dict[str, Any]) -> str:
    if arm["classical_alarm_t"] is None:
        return "none"
    phase = arm["classical_alarm_phase"] or ""
    return f"{arm['classical_alarm_t']:.2f} s" + (", during loading" if phase.startswith(
        "during") else f", {phase}" if phase else "")


def _load(arm: dict[str, Any]) -> str:
    source = {"scenario": "the file's link", "tool flange": "the tool flange"}.get(
        arm["link_source"], arm["link_source"])
    tilt = arm["tilt_file_deg"]
    turned = "" if tilt is None else f"; cup tilted {tilt:.1f}° at the start pose, turned upright"
    return f"`{arm['link']}` ({source}{turned})"


def render_demo(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The table of both arms, its stamp and what the agreement test allows."""
    panda, ur5 = data["arms"]["panda"], data["arms"]["ur5"]
    tol = data["tolerances"]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> str:
        return f"| {label} | {cell(panda)} | {cell(ur5)} |"

    def crossing(a: dict[str, Any]) -> str:
        t = a["classical_crossing_t"]
        return (f"{people(a['classical_inf_mu'])}, **{people(a['classical_min_lambda'])} "
                f"kg·m²**" + ("" if t is None else f" (≤ 0 from {t:.2f} s)"))

    def projected(a: dict[str, Any]) -> str:
        alarms = "none" if a["projected_alarms"] == 0 else f"{a['projected_alarms']} alarms"
        return (f"{alarms}, {people(a['projected_min_lambda'])} kg·m², "
                f"{people(a['projected_alpha1'])} kg·m²")

    lines = [
        "| 8 s, scenario fill (0.5 kg from t = 2 s) | Panda (default) | UR5 (`--urdf $UR5`, "
        "nothing else) |",
        "|---|---|---|",
        row("load on", _load),
        row("classical alarms (μ̂ < ε)", _alarm),
        row("classical: inf μ̂ of the load body, min λ_min(M(q, Θ̂))", crossing),
        row("lead time alarm → λ_min(M̂) ≤ 0",
            lambda a: "—" if a["classical_lead_s"] is None else f"{a['classical_lead_s']:.2f} s"),
        row("projected: alarms, min λ_min(M(q, Θ̂)), α₁", projected),
        row("γ in α₁ = min_l inf_t μ̂_l · γ", lambda a: f"{a['gamma']:.3f} ({a['gamma_method']}"
            ": the safe end of its bracket)"),
        row("tracking RMS (projected loop)", lambda a: f"{people(a['tracking_rms_rad'])} rad"),
        row("wall time of the run, real-time factor",
            lambda a: f"{a['wall_s']:.0f} s, {a['real_time_factor']:.2f}"),
        "",
        stamp(info, "python scripts/docs_numbers.py demo") + " Each column is one run's "
        "`summary.json`. The simulation is deterministic in simulated time (fixed 1 ms steps, "
        "seeded noise), so `test/test_docs_numbers.py` re-runs both arms' closed loop without "
        "ROS and requires these values within "
        f"{tol['time_s'] * 1e3:.0f} ms (times) and {100 * tol['relative']:g} % (the rest); "
        "only the wall time and the real-time factor depend on the machine and its load.",
    ]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("demo", run_demo, render_demo),)
