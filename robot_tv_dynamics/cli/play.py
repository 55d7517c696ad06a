"""``robot-tv-dynamics play``: a recorded bag's topics published live, with ``/clock``.

Runs the nodes on a recorded arm: start them with ``use_sim_time:=true`` (the bring-up's
``--use-sim-time``), then play the bag; every message goes out at its log time (scaled by
``--rate``) with ``/clock``, topics renamed by ``--remap FROM:=TO``. The replay itself is
:mod:`robot_tv_dynamics.ros.play` (imported only when ``play`` runs: it needs the
``[ros]`` extra). With a ROS install, ``ros2 bag play --clock BAG`` does the same.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

from robot_tv_dynamics.cli.common import require_ros_modules
from robot_tv_dynamics.exceptions import RobotTvDynamicsError

#: The replay's DDS side, imported by :func:`run` only (test/test_layering.py checks it).
RUNNER = "robot_tv_dynamics.ros.play"
#: What the replay imports besides the core (the ``[ros]`` extra).
ROS_MODULES = ("rclpy", "rosgraph_msgs")

DESCRIPTION = (
    "Publish a rosbag2 recording's topics at their log times with /clock, so that nodes "
    "started with use_sim_time:=true run on the recorded arm.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``play``'s options to ``parser``."""
    parser.add_argument("bag", help="rosbag2 recording (a folder, .mcap or .db3)")
    parser.add_argument("--rate", type=float, default=1.0,
                        help="bag seconds per wall-clock second (default: 1)")
    parser.add_argument("--remap", action="append", default=[], metavar="FROM:=TO",
                        help="publish the bag's topic FROM as TO; repeat for more")
    parser.add_argument("--delay", type=float, default=1.0,
                        help="seconds between the wait for the readers and the first "
                             "message, for them to match the publishers (default: 1)")
    parser.add_argument("--wait-for", type=int, default=0, metavar="N",
                        help="before playing, wait until --wait-topic has N subscribers")
    parser.add_argument("--wait-topic", default="/joint_states",
                        help="the published topic --wait-for counts (default: /joint_states)")
    parser.add_argument("--linger", type=float, default=1.0,
                        help="seconds the publishers stay after the last message, for "
                             "best-effort readers to take it in (default: 1)")


def run(args: argparse.Namespace) -> int:
    """Replay the bag; exit code 0, 2 for bad input or a bag that cannot be read.

    Raises:
        RosExtraMissingError: rclpy is not installed (the message names the ``[ros]``
            extra).
    """
    require_ros_modules("robot-tv-dynamics play", ROS_MODULES)
    runner = importlib.import_module(RUNNER)
    try:
        remaps = dict(runner.parse_remap(text) for text in args.remap)
        options = runner.PlayOptions(rate=args.rate, remaps=remaps, delay=args.delay,
                                     wait_for=args.wait_for, wait_topic=args.wait_topic,
                                     linger=args.linger)
        runner.play(args.bag, options, say=lambda text: print(text, file=sys.stderr))
    except RobotTvDynamicsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
