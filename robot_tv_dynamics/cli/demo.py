"""``robot-tv-dynamics demo`` (the default): the simulated arm, estimators and nodes over DDS.

The options are here; the run is :mod:`robot_tv_dynamics.ros.demo` (imported only when
the demo runs, so ``bounds`` and ``evaluate`` never load rclpy), the analysis of the
recorded bag :mod:`robot_tv_dynamics.demo`.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util

from robot_tv_dynamics.demo import SCENARIOS
from robot_tv_dynamics.exceptions import RosExtraMissingError

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
    parser.add_argument("--out", default="demo_output",
                        help="output directory for run.mcap, report.png, summary.json "
                             "(default: ./demo_output)")
    parser.add_argument("--urdf", default="",
                        help="URDF of the arm (default: the Panda of example-robot-data)")
    parser.add_argument("--link", default="",
                        help="attach the load to this URDF link instead of the scenario's")
    parser.add_argument("--seed", type=int, default=0, help="seed of the torque-sensor noise")
    parser.add_argument("--publish-rate", type=float, default=50.0,
                        help="rate of the simulator's topics [Hz] (default: 50; the "
                             "simulation itself runs at 1 kHz)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Run ``demo``: import its ROS side (rclpy, the nodes' bring-up) now, and run it.

    Raises:
        RosExtraMissingError: rclpy or a message package is not installed (the message
            names the ``[ros]`` extra).
    """
    for module in ROS_MODULES:
        if importlib.util.find_spec(module) is None:
            raise RosExtraMissingError("robot-tv-dynamics demo", module)
    runner = importlib.import_module(RUNNER)
    return int(runner.run(args))
