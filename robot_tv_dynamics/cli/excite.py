"""``robot-tv-dynamics excite``: an exciting Fourier trajectory within the URDF limits.

Writes a YAML in the JointTrajectory shape that ``evaluate`` reads (``joint_names``,
``points: [{positions, velocities, accelerations, time_from_start}]``) plus an
``excitation`` record (coefficients, condition number, peak limit ratios), and prints
the condition number. Relative paths resolve against the current directory.

``--play ACTION --record BAG`` then plays it on the arm through its
FollowJointTrajectory controller (a slow approach to its start first) and records
``joint_states`` to BAG: the input of ``identify``. That part is
:mod:`robot_tv_dynamics.ros.execute`, imported only when ``--play`` is given (it needs
the ``[ros]`` extra and control_msgs).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

from robot_tv_dynamics.cli.common import (
    add_urdf_argument,
    checked_number,
    load_model,
    lock_option,
    positive_float,
    require_ros_modules,
)
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    RobotTvDynamicsError,
)
from robot_tv_dynamics.friction import FRICTION_TERMS
from robot_tv_dynamics.identification.excitation import (
    LimitScales,
    design_excitation,
    trajectory_dict,
)
from robot_tv_dynamics.identification.progress import Progress

#: The arm side of ``--play``, imported by :func:`play_on_arm` only (test/test_layering.py).
RUNNER = "robot_tv_dynamics.ros.execute"
#: What ``--play`` imports besides the core (the ``[ros]`` extra and control_msgs).
ROS_MODULES = ("rclpy", "control_msgs")

DESCRIPTION = (
    "Finite Fourier series per joint, starting and ending at rest, scaled into the URDF "
    "limits (position about the middle of the range, velocity, effort by eq. (39) with the "
    "URDF's Θ), each used up to --scale (or the per-limit overrides); the coefficients are "
    "chosen by random search and refinement for the smallest condition number of the "
    "column-normalized regressor (inertial + friction columns). Self-collisions are not "
    "checked.")


def _count(text: str) -> int:
    return checked_number(text, int, lambda v: v >= 0, "a non-negative integer")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``excite``."""
    parser.description = DESCRIPTION
    add_urdf_argument(parser)
    parser.add_argument("--duration", type=positive_float, default=None, metavar="S",
                        help="duration [s] (default 10, 4 with --payload-only; rounded up to "
                             "whole periods: ends at rest)")
    parser.add_argument("--harmonics", type=_count, default=5, metavar="K",
                        help="harmonics per joint, ≥ 2 (default 5)")
    parser.add_argument("--base-frequency", type=positive_float, default=0.1, metavar="HZ",
                        help="fundamental frequency [Hz] (default 0.1)")
    parser.add_argument("--scale", type=positive_float, default=0.8, metavar="F",
                        help="fraction of every URDF limit the trajectory may use (default 0.8)")
    parser.add_argument("--position-scale", type=positive_float, default=None, metavar="F",
                        help="override --scale for the position range")
    parser.add_argument("--velocity-scale", type=positive_float, default=None, metavar="F",
                        help="override --scale for the velocity limits")
    parser.add_argument("--effort-scale", type=positive_float, default=None, metavar="F",
                        help="override --scale for the effort limits")
    parser.add_argument("--max-excursion", type=positive_float, default=math.pi / 2, metavar="RAD",
                        help="largest excursion from the middle of a joint's range "
                             "(default π/2)")
    parser.add_argument("--rate", type=positive_float, default=100.0, metavar="HZ",
                        help="point rate of the output (default 100 Hz)")
    parser.add_argument("--candidates", type=_count, default=24, metavar="N",
                        help="random candidates (default 24)")
    parser.add_argument("--iterations", type=_count, default=60, metavar="N",
                        help="refinement steps (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--friction", choices=list(FRICTION_TERMS), default="full",
                        help="friction columns included in the condition number")
    parser.add_argument("--out", required=True, metavar="traj.yaml", help="output YAML")
    parser.add_argument("--json", action="store_true",
                        help="print a JSON summary on stdout instead of a line")
    group = parser.add_argument_group(
        "payload-only motion", "--payload-only: a short motion of the last joints (one "
        "period of --duration) for the load's 10 parameters, scored by the load regressor")
    group.add_argument("--payload-only", action="store_true",
                       help="a short wrist motion for `estimate --batch` instead")
    group.add_argument("--link", metavar="LINK",
                       help="the link carrying the load (with --payload-only)")
    group.add_argument("--wrist-joints", type=int, default=3, metavar="N",
                       help="moving joints, the last N (default 3)")
    group.add_argument("--max-acceleration", type=positive_float, default=5.0,
                       metavar="RAD/S²", help="|q̈| bound of every joint (default 5)")
    arm = parser.add_argument_group(
        "play on the arm (after writing --out): approach, play, record joint_states")
    arm.add_argument("--play", metavar="ACTION",
                     help="the arm's FollowJointTrajectory action (e.g. /joint_trajectory_"
                          "controller/follow_joint_trajectory; sim_node: /sim_node/follow_"
                          "joint_trajectory)")
    arm.add_argument("--record", metavar="BAG",
                     help="with --play: the joint_states bag to write (.mcap or a folder; "
                          "must not exist)")
    arm.add_argument("--joint-states", default="/joint_states", metavar="TOPIC",
                     help="the arm's joint_states topic (default /joint_states)")
    arm.add_argument("--approach-speed", type=positive_float, default=0.1, metavar="F",
                     help="the approach to the start pose peaks at F × each joint's URDF "
                          "velocity limit (default 0.1)")
    arm.add_argument("--server-timeout", type=positive_float, default=30.0, metavar="S",
                     help="seconds to wait for the controller and the first joint_states")


def play_options(args: argparse.Namespace) -> Any:
    """``--play``'s settings, checked before the design starts; None without ``--play``.

    Raises:
        InvalidInputError: ``--record`` without ``--play`` or the other way round, an
            existing bag, bad values.
        RosExtraMissingError: rclpy or control_msgs is not installed.
    """
    if args.play is None:
        if args.record is not None:
            raise InvalidInputError("--record", "records what --play plays: give --play too")
        return None
    if args.record is None:
        raise InvalidInputError("--play", "give --record BAG for the joint_states it records")
    require_ros_modules("robot-tv-dynamics excite --play", ROS_MODULES)
    runner = importlib.import_module(RUNNER)
    return runner.ExecuteOptions(action=args.play, record=Path(args.record),
                                 joint_states=args.joint_states,
                                 approach_speed=args.approach_speed,
                                 timeout=args.server_timeout)


def play_on_arm(args: argparse.Namespace, model: Any, options: Any) -> int:
    """Play the written trajectory on the arm; 0, or 2 with the controller's reason."""
    from robot_tv_dynamics.evaluation import load_trajectory

    runner = importlib.import_module(RUNNER)
    try:
        runner.play_on_arm(model, load_trajectory(args.out), options,
                           say=lambda text: print(text, file=sys.stderr))
    except RobotTvDynamicsError as error:
        print(f"excite: error: {error}", file=sys.stderr)
        return 2
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``excite``; returns the exit code (0)."""
    options = play_options(args)
    if args.payload_only:
        return run_payload(args, options)
    if args.duration is None:
        args.duration = 10.0
    model = load_model(args.urdf, lock_option(args.lock))
    if args.candidates + args.iterations < 1:
        raise InvalidInputError("--candidates", "need at least one candidate")
    scales = LimitScales(
        position=args.position_scale or args.scale, velocity=args.velocity_scale or args.scale,
        effort=args.effort_scale or args.scale, max_excursion=args.max_excursion)
    bar = Progress("searching coefficients", sys.stderr.isatty())
    try:
        design = design_excitation(
            model, duration=args.duration, harmonics=args.harmonics,
            base_frequency=args.base_frequency, scales=scales, candidates=args.candidates,
            iterations=args.iterations, rate=args.rate, seed=args.seed,
            friction=args.friction, progress=bar)
    finally:
        bar.close()
    import yaml

    out = Path(args.out)
    if out.parent and not out.parent.exists():
        out.parent.mkdir(parents=True)
    data = trajectory_dict(model, design, args.rate)
    out.write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=None),
                   encoding="utf-8")
    peaks = {kind: float(design.peak_ratios[k].max())
             for k, kind in enumerate(("position", "velocity", "effort"))}
    if args.json:
        json.dump({"out": str(out), "condition_number": design.condition_number,
                   "rank": design.rank, "points": len(data["points"]),
                   "duration_s": design.duration, "peak_ratios": peaks,
                   "evaluations": design.evaluations}, sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(
            f"condition number {design.condition_number:.4g} ({design.rank} identifiable "
            f"combinations incl. friction); peak/allowed: position {peaks['position']:.3f}, "
            f"velocity {peaks['velocity']:.3f}, effort {peaks['effort']:.3f}; "
            f"{len(data['points'])} points over {design.duration:g} s → {out}\n")
    return 0 if options is None else play_on_arm(args, model, options)


def run_payload(args: argparse.Namespace, options: Any = None) -> int:
    """``excite --payload-only`` (:mod:`robot_tv_dynamics.estimation.payload_excitation`)."""
    import yaml

    from robot_tv_dynamics.estimation.payload_excitation import design_payload_excitation

    if not args.link:
        raise InvalidInputError("--link", "--payload-only needs the link carrying the load")
    model = load_model(args.urdf, lock_option(args.lock))
    scales = LimitScales(
        position=args.position_scale or args.scale, velocity=args.velocity_scale or args.scale,
        effort=args.effort_scale or args.scale, max_excursion=args.max_excursion)
    result = design_payload_excitation(
        model, args.link, duration=args.duration or 4.0, wrist=args.wrist_joints,
        harmonics=args.harmonics, scales=scales, max_acceleration=args.max_acceleration,
        candidates=args.candidates, iterations=args.iterations, rate=args.rate,
        seed=args.seed)
    design = result.design
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = trajectory_dict(model, design, args.rate)
    data["excitation"]["payload_link"] = args.link
    data["excitation"]["moving_joints"] = [model.joint_names[i] for i in result.joints]
    data["excitation"]["acceleration_ratio"] = result.acceleration_ratio.tolist()
    out.write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=None),
                   encoding="utf-8")
    peaks = {kind: float(design.peak_ratios[k].max())
             for k, kind in enumerate(("position", "velocity", "effort"))}
    peaks["acceleration"] = float(result.acceleration_ratio.max())
    if args.json:
        json.dump({"out": str(out), "condition_number": design.condition_number,
                   "rank": design.rank, "points": len(data["points"]),
                   "duration_s": design.duration, "peak_ratios": peaks,
                   "moving_joints": data["excitation"]["moving_joints"]}, sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(
            f"load regressor condition number {design.condition_number:.4g} (10 parameters "
            f"of the load on {args.link}); peak/allowed: " + ", ".join(
                f"{key} {value:.3f}" for key, value in peaks.items())
            + f"; {len(data['points'])} points over {design.duration:g} s → {out}\n")
    return 0 if options is None else play_on_arm(args, model, options)
