"""``robot-tv-dynamics demo`` (the default): the simulated arm, estimators and nodes over DDS.

The options are here; the run is :mod:`robot_tv_dynamics.ros.demo` (imported only when
the demo runs, so ``bounds`` and ``evaluate`` never load rclpy), the analysis of the
recorded bag :mod:`robot_tv_dynamics.demo`.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.util
import sys
from pathlib import Path

from robot_tv_dynamics.cli.common import require_ros_modules
from robot_tv_dynamics.control.setups import CONTROLLERS
from robot_tv_dynamics.demo import SCENARIOS
from robot_tv_dynamics.exceptions import DemoError

#: The default output folder, in the working directory.
DEFAULT_OUT = "demo_output"
#: The files a run writes; a folder holding any of them holds an earlier run.
OUTPUTS = ("run.mcap", "report.png", "summary.json")
#: ``--controller``: sim_node's built-in adaptive controller (the default), or a law.
DEMO_CONTROLLERS = ("adaptive", *CONTROLLERS)
#: The demo's DDS side, imported by :func:`run` only (test/test_layering.py checks it).
RUNNER = "robot_tv_dynamics.ros.demo"
#: What the demo's DDS side imports besides the core (the ``[ros]`` extra).
ROS_MODULES = ("rclpy", "std_msgs", "sensor_msgs", "diagnostic_msgs", "visualization_msgs")

DESCRIPTION = (
    "The simulated arm, estimators, dynamics and monitors over DDS: sim_node under a "
    "loading process, dynamics_node, a monitor_node per estimate; records run.mcap and "
    "writes report.png and summary.json.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the demo's options to ``parser``."""
    parser.add_argument(
        "--scenario", default="fill",
        help=f"loading process: one of {', '.join(SCENARIOS)} (config/loading/*.yaml) or a "
             "YAML file in that format (default: fill)")
    parser.add_argument("--duration", type=float, default=8.0,
                        help="simulated time [s] (default: 8)")
    parser.add_argument("--out", default=None,
                        help="output directory for run.mcap, report.png, summary.json; one "
                             "that holds an earlier run is refused unless --overwrite "
                             f"(default: ./{DEFAULT_OUT}, or ./{DEFAULT_OUT}_<date-time> "
                             "when that holds an earlier run: the demo says which)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the outputs of an earlier run in --out")
    parser.add_argument("--urdf", default="",
                        help="URDF of the arm (default: the Panda of example-robot-data)")
    parser.add_argument("--link", default="",
                        help="attach the load to this URDF link instead of the scenario's")
    parser.add_argument("--seed", type=int, default=0, help="seed of the torque-sensor noise")
    parser.add_argument("--publish-rate", type=float, default=50.0,
                        help="rate of the simulator's topics [Hz] (default: 50; the "
                             "simulation itself runs at 1 kHz)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--controller", default="adaptive", type=controller_name, metavar="NAME",
        help="sim_node's controller parameter: adaptive (computed torque on the projected "
             "payload estimate, with the classical, projected and geometric estimators; the "
             f"default) or a law of robot-tv-dynamics adapt: {', '.join(CONTROLLERS)} (its "
             "Θ̂ on estimates/controller/inertial_parameters_stamped, recorded in run.mcap)")


def controller_name(text: str) -> str:
    """``--controller`` checked against :data:`DEMO_CONTROLLERS`.

    Raises:
        argparse.ArgumentTypeError: another name (argparse prints it with the usage).
    """
    if text not in DEMO_CONTROLLERS:
        raise argparse.ArgumentTypeError(
            f"unknown controller {text!r}; choose one of {', '.join(DEMO_CONTROLLERS)}")
    return text


def run(args: argparse.Namespace) -> int:
    """Run ``demo``: import its ROS side (rclpy, the nodes' bring-up) now, and run it.

    Raises:
        RosExtraMissingError: rclpy or a message package is not installed (the message
            names the ``[ros]`` extra).
    """
    require_ros_modules("robot-tv-dynamics demo", ROS_MODULES)
    args.out = str(output_folder(args.out, args.overwrite))
    runner = importlib.import_module(RUNNER)
    return int(runner.run(args))


def _holds_a_run(folder: Path) -> bool:
    return any((folder / name).exists() for name in OUTPUTS)


def output_folder(out: str | None, overwrite: bool = False,
                  now: datetime.datetime | None = None) -> Path:
    """Where the demo writes: ``out``, or the default folder, never an earlier run unasked.

    Args:
        out: ``--out`` as given, None for the default.
        overwrite: ``--overwrite``: an earlier run in ``out`` may be replaced.
        now: the time that names a fresh default folder (tests; default: now).

    Returns:
        ``out``; without ``out``, ``./demo_output`` unless it holds an earlier run, else
        ``./demo_output_<YYYYmmdd-HHMMSS>`` (said on stderr).

    Raises:
        DemoError: ``out`` holds an earlier run and ``overwrite`` is not set.
    """
    if out is not None:
        folder = Path(out)
        earlier = [name for name in OUTPUTS if (folder / name).exists()]
        if earlier and not overwrite:
            raise DemoError(f"{folder} holds an earlier run ({', '.join(earlier)}); give "
                            "another --out, or --overwrite to replace it")
        return folder
    folder = Path(DEFAULT_OUT)
    if _holds_a_run(folder) and not overwrite:
        stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
        fresh = Path(f"{DEFAULT_OUT}_{stamp}")
        print(f"demo: ./{DEFAULT_OUT} holds an earlier run; writing to ./{fresh}",
              file=sys.stderr)
        return fresh
    return folder
