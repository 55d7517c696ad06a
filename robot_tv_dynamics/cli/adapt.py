"""``robot-tv-dynamics adapt``: an adaptive controller on the simulated arm (docs/adaptive.md)."""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
from pathlib import Path
from typing import Any

from robot_tv_dynamics.cli.common import load_model, positive_float
from robot_tv_dynamics.control import run_adaptive
from robot_tv_dynamics.control.report import run_figure, suite_figure
from robot_tv_dynamics.control.setups import (
    CONTROLLERS,
    EXCITATIONS,
    make_controller,
    reference_for,
    unknown_truth,
)
from robot_tv_dynamics.demo import SCENARIOS
from robot_tv_dynamics.demo.scenario import scenario_file
from robot_tv_dynamics.loading import load_loading_process
from robot_tv_dynamics.paths import example_robot_urdf

DESCRIPTION = ("Runs one controller on the simulated arm whose Θ is unknown to it (the URDF's "
               "Θ perturbed), under a loading process or none, on the generalized or classical "
               "plant; writes report.png and summary.json. --suite runs controllers × "
               "scenarios × plants on the Panda and the UR5 and writes suite.md, suite.csv, "
               "suite.png.")
#: ``--scenario constant``: no loading process, Θ constant (the case Slotine–Li is for).
CONSTANT = "constant"
#: Suite columns (Markdown and CSV).
COLUMNS = ("arm", "scenario", "plant", "controller", "tracking_rms_rad", "tracking_max_rad",
           "tau_rms", "inf_margin", "inf_lambda_min_M_hat", "time_to_tolerance_load_mass_s",
           "consistency_violations")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``adapt`` options."""
    parser.add_argument("--controller", choices=CONTROLLERS, default="natural")
    parser.add_argument("--scenario", default=CONSTANT,
                        help=f"{CONSTANT} (no load), one of {', '.join(SCENARIOS)} or a "
                             "loading-process YAML file")
    parser.add_argument("--urdf", default="", help="URDF (default: the Panda)")
    parser.add_argument("--plant", choices=("generalized", "classical"), default="generalized")
    parser.add_argument("--excitation", choices=EXCITATIONS, default="persistent")
    parser.add_argument("--duration", type=positive_float, default=5.0, metavar="S")
    parser.add_argument("--out", default="adapt_output", help="output directory")
    parser.add_argument("--suite", action="store_true",
                        help="controllers × scenarios × plants on the Panda and the UR5")
    parser.add_argument("--arms", default="panda,ur5", help="suite: arms (panda,ur5)")
    parser.add_argument("--scenarios", default="constant,fill,drain,grasp,timeline",
                        help="suite: scenarios, comma separated")
    parser.add_argument("--controllers", default=",".join(CONTROLLERS),
                        help="suite: controllers, comma separated")


def _one(urdf: str, controller: str, scenario: str, plant: str, excitation: str,
         duration: float, work: Path) -> tuple[dict[str, Any], Any]:
    model = load_model(urdf)
    process = None
    if scenario != CONSTANT:
        setup = scenario_file(scenario, "", work, model, Path(urdf).read_text(), duration)
        process = load_loading_process(setup.path)
    ctrl = make_controller(controller, model, model.theta_nominal)
    run = run_adaptive(model, ctrl, reference_for(model, excitation), unknown_truth(model),
                       process=process, classical=plant == "classical", duration=duration)
    summary = {"controller": controller, "plant": plant, "scenario": scenario,
               "excitation": excitation, "duration_s": duration, "urdf": urdf,
               **run.summary()}
    return summary, run


def _arm_urdf(arm: str) -> str:
    return str(example_robot_urdf() if arm == "panda"
               else example_robot_urdf(f"ur_description/urdf/{arm}_robot.urdf"))


def run(args: argparse.Namespace) -> int:
    """Run ``adapt`` (one run, or the suite)."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.suite:
        urdf = args.urdf or str(example_robot_urdf())
        summary, result = _one(urdf, args.controller, args.scenario, args.plant,
                               args.excitation, args.duration, out)
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        run_figure(result, f"{args.controller} on the {args.plant} plant, scenario "
                   f"{args.scenario}, {Path(urdf).name}", out / "report.png")
        print(json.dumps({k: summary[k] for k in COLUMNS[2:] if k in summary}))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for arm in args.arms.split(","):
            for scenario in args.scenarios.split(","):
                for plant in ("generalized", "classical"):
                    if scenario == CONSTANT and plant == "classical":
                        continue  # Θ̇ = 0: both plants are the same
                    for controller in args.controllers.split(","):
                        summary, _ = _one(_arm_urdf(arm), controller, scenario, plant,
                                          args.excitation, args.duration, Path(work))
                        rows.append({"arm": arm, **summary})
                        print(arm, scenario, plant, controller, "done", flush=True)
    with (out / "suite.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(k)) for k in COLUMNS) + " |")
    (out / "suite.md").write_text("\n".join(lines) + "\n")
    suite_figure(rows, out / "suite.png")
    print((out / "suite.md").read_text())
    return 0


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return "—" if value is None else str(value)
