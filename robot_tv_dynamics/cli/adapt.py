"""``robot-tv-dynamics adapt``: an adaptive controller on the simulated arm (docs/adaptive.md)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from robot_tv_dynamics.cli.common import load_model, positive_float, positive_int
from robot_tv_dynamics.control.report import run_figure, suite_figure
from robot_tv_dynamics.control.setups import CONSTANT, CONTROLLERS, EXCITATIONS, WRONG_ESTIMATE
from robot_tv_dynamics.control.suite import (
    COLUMNS,
    SUITE_SCENARIOS,
    natural_definiteness,
    run_scenario,
    run_suite,
    suite_cases,
    write_suite_table,
)
from robot_tv_dynamics.demo import SCENARIOS
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.paths import example_robot_urdf

DESCRIPTION = ("Runs one controller on the simulated arm whose Θ is unknown to it (the URDF's "
               "Θ perturbed), under a loading process or none, on the generalized or classical "
               "plant; writes report.png and summary.json (--bag: the run as an MCAP). --suite "
               "runs controllers × scenarios × plants on the Panda and the UR5 and writes "
               "suite.md, suite.csv, suite.png.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``adapt`` options."""
    parser.add_argument("--controller", choices=CONTROLLERS, default="natural")
    parser.add_argument("--scenario", default=CONSTANT,
                        help=f"{CONSTANT} (no load), {WRONG_ESTIMATE} (no load, the controller "
                             f"starting from a badly wrong estimate), one of "
                             f"{', '.join(SCENARIOS)} or a loading-process YAML file")
    parser.add_argument("--urdf", default="", help="URDF (default: the Panda)")
    parser.add_argument("--plant", choices=("generalized", "classical"), default="generalized")
    parser.add_argument("--excitation", choices=EXCITATIONS, default="persistent")
    parser.add_argument("--duration", type=positive_float, default=5.0, metavar="S")
    parser.add_argument("--out", default="adapt_output", help="output directory")
    parser.add_argument("--bag", default="", metavar="PATH",
                        help="also write the run as an MCAP (a .mcap file or a folder): "
                             "joint_states (effort = τ), reference_joint_states, the true "
                             "inertial_parameters_stamped and the controller's Θ̂ on "
                             "estimates/controller/inertial_parameters_stamped")
    parser.add_argument("--suite", action="store_true",
                        help="controllers × scenarios × plants on the Panda and the UR5")
    parser.add_argument("--arms", default="panda,ur5", help="suite: arms (panda,ur5)")
    parser.add_argument("--scenarios", default=",".join(SUITE_SCENARIOS),
                        help="suite: scenarios, comma separated")
    parser.add_argument("--controllers", default=",".join(CONTROLLERS),
                        help="suite: controllers, comma separated")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="suite: runs in parallel on this many processes")


def run(args: argparse.Namespace) -> int:
    """Run ``adapt`` (one run, or the suite)."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.bag and not args.suite and Path(args.bag).exists():  # before minutes of running
        raise InvalidInputError("--bag", f"{args.bag} exists; remove it or choose another name")
    if not args.suite:
        urdf = args.urdf or str(example_robot_urdf())
        model = load_model(urdf)
        summary, result = run_scenario(urdf, args.controller, args.scenario, args.plant,
                                       args.excitation, args.duration, out, model=model)
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        run_figure(result, f"{args.controller} on the {args.plant} plant, scenario "
                   f"{args.scenario}, {Path(urdf).name}", out / "report.png")
        if args.bag:
            from robot_tv_dynamics.control.bag import write_run_bag

            write_run_bag(args.bag, result, model)
        print(json.dumps({k: summary[k] for k in COLUMNS[4:] if k in summary}))
        return 0
    if args.bag:
        print("adapt: --bag writes one run; it is ignored with --suite")
    cases = suite_cases(args.arms.split(","), args.scenarios.split(","),
                        args.controllers.split(","))
    with tempfile.TemporaryDirectory() as work:
        rows = run_suite(cases, args.excitation, args.duration, Path(work), args.workers,
                         progress=lambda c: print(c.arm, c.scenario, c.plant, c.controller,
                                                  "done", flush=True))
    definite, line = natural_definiteness(rows)
    write_suite_table(rows, out, note=f"{len(rows)} runs of {args.duration:g} s, "
                      f"{args.excitation} excitation. {line}.")
    suite_figure(rows, out / "suite.png")
    print((out / "suite.md").read_text())
    return 0 if definite else 1
