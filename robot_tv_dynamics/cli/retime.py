"""``robot-tv-dynamics retime``: the fastest timing of a planned path within effort limits.

Reads a URDF, a trajectory (YAML in the trajectory_msgs/JointTrajectory shape, or the
first JointTrajectory of a rosbag2) and optionally a payload or loading process, and
writes the same path retimed so that eq. (39) stays within margin × the URDF effort
limits (and the velocity limits), verified by ``evaluate`` on the output
(:mod:`robot_tv_dynamics.retiming`).

Exit status: 0 retimed within the limits, 1 when no timing of this path can meet them
(e.g. the payload is too heavy to hold somewhere on it), 2 on bad input (one
``error: ...`` line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from robot_tv_dynamics.cli.common import (
    add_load_timing_arguments,
    add_report_arguments,
    add_trajectory_arguments,
    checked_number,
    describe,
    describe_load,
    error_message,
    held_positions,
    label_panel,
    load_label,
    load_model,
    lock_option,
    plot_title,
    save_figure,
)
from robot_tv_dynamics.cli.sweep import add_sweep_arguments, run_sweep, single, wants_sweep
from robot_tv_dynamics.evaluation import (
    Load,
    Trajectory,
    load_trajectory,
    payload_from_dict,
)
from robot_tv_dynamics.exceptions import InvalidInputError, RetimingError, RobotTvDynamicsError
from robot_tv_dynamics.loading import loading_process_from_dict
from robot_tv_dynamics.retiming.result import RetimeResult

#: Exit status when no timing of the path meets the limits.
EXIT_INFEASIBLE = 1
#: Exit status on bad input.
EXIT_ERROR = 2

DESCRIPTION = (
    "Retime a planned joint trajectory (YAML or rosbag2) along the same path: the fastest\n"
    "timing (TOPP-RA) that keeps the torques of eq. (39) under the payload within\n"
    "margin x the URDF effort limits and the velocity limits, verified by `evaluate` on\n"
    "the output.")

EPILOG = """\
exit status: 0 retimed within limits, 1 if no timing of this path meets the limits
(the message names the joint and by how much), 2 on bad input.

The output YAML has the input's shape (joint_names, points with positions,
velocities, accelerations, effort, time_from_start {sec, nanosec}); its positions are
on the input's path (at the input's waypoints unless --rate is given).

A loading process is indexed by time by default (process time = time_from_start +
--time-offset of the retimed motion; the timing and the load schedule are iterated to
a fixed point), or by path position with --loading-index path. See docs/retiming.md.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``retime`` options to a (sub)parser.

    Args:
        parser: the parser of the ``retime`` subcommand.
    """
    describe(parser, DESCRIPTION, EPILOG)
    add_trajectory_arguments(parser)
    loads = parser.add_mutually_exclusive_group()
    loads.add_argument(
        "--payload", metavar="FILE", action="append", default=[],
        help="payload YAML (link, mass, com, inertia), or a loading-process YAML as "
             "`evaluate --payload` takes it; omitted: the arm alone; repeatable (a sweep)")
    loads.add_argument("--loading", metavar="FILE", action="append", default=[],
                       help="loading-process YAML (process: fill | drain | grasp | timeline)")
    parser.add_argument("--link", metavar="LINK",
                        help="attach the payload or loading process to this URDF link instead "
                             "of the file's `link`")
    add_load_timing_arguments(parser)
    parser.add_argument(
        "--loading-index", choices=("time", "path"), default="time",
        help="how a loading process meets the retimed motion: on its own clock (time, "
             "default: process time = time_from_start + offset) or tied to the path (path: "
             "the load at each point of the path is the one the input had there)")
    parser.add_argument("--effort-margin", type=float, default=1.0, metavar="F",
                        help="keep |tau| <= F x the URDF effort limit (default 1)")
    parser.add_argument("--velocity-scale", type=float, default=1.0, metavar="F",
                        help="keep |qd| <= F x the URDF velocity limit (default 1)")
    parser.add_argument(
        "--acceleration-limit", action="append", default=[], metavar="[JOINT=]VALUE",
        help="|qdd| limit [rad/s^2]: a number for every trajectory joint, or JOINT=VALUE "
             "(repeatable); default none (a URDF has none)")
    parser.add_argument("--gridpoints", type=int, default=200, metavar="N",
                        help="TOPP-RA grid intervals along the path (default 200)")
    parser.add_argument("--smoothing", type=float, default=0.0, metavar="SECONDS",
                        help="moving-average window of the time-optimal law: continuous "
                             "accelerations, bounded jerk, that much longer (default 0: none)")
    parser.add_argument("--rate", type=float, metavar="HZ",
                        help="sample the output every 1/HZ s (default: at the input's waypoints)")
    parser.add_argument("--no-split", action="store_true",
                        help="do not split the input at interior stops (one spline through "
                             "all waypoints: it passes the stops and rounds corners)")
    parser.add_argument("--no-uniform", action="store_true",
                        help="skip the comparison with a uniform slowdown of the input (and "
                             "with it the MoveIt scaling factors)")
    parser.add_argument(
        "--planned-scaling", nargs=2, type=float, default=[1.0, 1.0],
        metavar=("VELOCITY", "ACCELERATION"),
        help="the max_velocity_scaling_factor and max_acceleration_scaling_factor MoveIt "
             "planned the input with (default 1 1): the reported factors are relative to "
             "the URDF / joint_limits.yaml limits like these")
    parser.add_argument("--out", metavar="OUT.yaml", help="write the retimed trajectory YAML")
    add_report_arguments(
        parser, "durations, peak ratios before/after, active constraints, ...",
        "effort ratios and path speed, before and after")
    add_sweep_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run ``retime`` with parsed arguments.

    Args:
        args: the namespace built by a parser set up with :func:`add_arguments`.

    Returns:
        The exit status: 0 retimed within limits, 1 infeasible, 2 on bad input.
    """
    from robot_tv_dynamics.retiming.solve import retime  # TOPP-RA only when run

    options = {
        "effort_margin": args.effort_margin, "velocity_scale": args.velocity_scale,
        "gridpoints": args.gridpoints, "sample_rate": args.rate,
        "time_offset": args.time_offset, "compare_uniform": not args.no_uniform,
        "smoothing": args.smoothing, "loading_index": args.loading_index,
        "split_at_stops": not args.no_split,
        "moveit_scaling": tuple(args.planned_scaling)}
    payloads = args.payload or args.loading
    try:
        options["acceleration_limits"] = _acceleration_option(args.acceleration_limit)
        options["default_positions"] = held_positions(args.hold)
    except RobotTvDynamicsError as error:
        print(f"error: {error_message(error)}", file=sys.stderr)
        return EXIT_ERROR
    if wants_sweep(args, payloads):
        return run_sweep(args, "retime", payloads, options, {"--out": args.out,
                                                         "--link": args.link})
    try:
        model = load_model(single(args.urdf, "--urdf"), lock_option(args.lock))
        trajectory = load_trajectory(single(args.trajectory, "--trajectory"), args.topic)
        load = _read_load(single(args.payload, "--payload") if args.payload else None,
                          single(args.loading, "--loading") if args.loading else None,
                          args.link)
        result = retime(model, trajectory, load, **options)
        if args.out:
            write_trajectory(result, args.out)
        if args.plot:
            write_plot(result, args.plot, title=plot_title(model, "retimed", load))
    except RetimingError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_INFEASIBLE
    except (RobotTvDynamicsError, OSError) as error:
        print(f"error: {error_message(error)}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        report = {"urdf": str(args.urdf[0]), "locked_joints": dict(model.locked_joints),
                  "trajectory": str(args.trajectory[0]), "out": args.out,
                  "payload": describe_load(load), **result.as_dict()}
        json.dump(report, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_table(result, load, sys.stdout)
    return 0


# ---------------------------------------------------------------------------- inputs
def _read_load(payload: str | None, loading: str | None, link: str | None) -> Load | None:
    """A payload or loading process from its YAML, optionally moved to ``link``."""
    path = payload if payload is not None else loading
    if path is None:
        if link is not None:
            raise InvalidInputError("--link", "needs --payload or --loading")
        return None
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise InvalidInputError("payload", f"cannot read {path}: "
                                f"{error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise InvalidInputError("payload", f"{path} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise InvalidInputError("payload", f"{path}: expected a mapping")
    if link is not None:
        data["link"] = link
    if "process" in data:
        try:
            return loading_process_from_dict(data, Path(path).parent)
        except InvalidInputError as error:
            raise InvalidInputError(f"{path}: {error.argument}", error.problem) from None
    if loading is not None:
        raise InvalidInputError("--loading", f"{path} has no `process:` key (a payload file? "
                                "use --payload)")
    return payload_from_dict(data)


def _acceleration_option(items: list[str]) -> float | dict[str, float] | None:
    """``--acceleration-limit`` values: one number for all joints, or JOINT=VALUE entries."""
    if not items:
        return None
    named: dict[str, float] = {}
    common: float | None = None
    for item in items:
        name, sep, value = item.rpartition("=")
        try:
            number = checked_number(value, float, math.isfinite, "a finite number")
        except argparse.ArgumentTypeError:
            raise InvalidInputError("--acceleration-limit",
                                    f'expected a finite number, got "{item}"') from None
        if sep:
            named[name.strip()] = number
        else:
            common = number
    if common is not None and named:
        raise InvalidInputError("--acceleration-limit", "give one number or JOINT=VALUE "
                                "entries, not both")
    return common if common is not None else named


# ---------------------------------------------------------------------------- outputs
def trajectory_to_dict(trajectory: Trajectory, effort: np.ndarray | None = None
                       ) -> dict[str, Any]:
    """The JointTrajectory-shaped mapping of a trajectory (``time_from_start`` as sec/nanosec).

    Args:
        trajectory: the trajectory.
        effort: τ per point in the trajectory's column order, (K, n), or None.
    """
    points = []
    for k in range(trajectory.n_points):
        ns = int(round(float(trajectory.time_from_start[k]) * 1e9))
        point: dict[str, Any] = {"positions": [float(x) for x in trajectory.positions[k]]}
        for name in ("velocities", "accelerations"):
            values = getattr(trajectory, name)
            if values is not None:
                point[name] = [float(x) for x in values[k]]
        if effort is not None:
            point["effort"] = [float(x) for x in effort[k]]
        point["time_from_start"] = {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}
        points.append(point)
    return {"joint_names": list(trajectory.joint_names), "points": points}


def write_trajectory(result: RetimeResult, path: str | Path) -> None:
    """Write the retimed trajectory YAML (with each point's τ of eq. (39) as ``effort``)."""
    import yaml

    data = trajectory_to_dict(result.trajectory,
                              result.evaluation.efforts_in_trajectory_order())
    header = (f"# retimed by robot-tv-dynamics retime: {result.duration_before:.6g} s -> "
              f"{result.duration_after:.6g} s, peak |tau|/tau_max "
              f"{float(np.nanmax(result.peak_ratio_after)):.4f} (margin "
              f"{result.effort_margin:g})\n")
    text = yaml.safe_dump(data, sort_keys=False, width=100, default_flow_style=None)
    Path(path).write_text(header + text, encoding="utf-8")


def write_table(result: RetimeResult, load: Load | None, stream: TextIO) -> None:
    """The human-readable summary: durations, per-joint peak ratios, active constraints."""
    out = stream.write
    out(f"duration: {result.duration_before:.4f} s -> {result.duration_after:.4f} s "
        f"({result.trajectory.n_points} points)\n")
    if result.uniform is not None and result.uniform.duration is not None:
        out(f"uniform slowdown meeting the same limits: x{result.uniform.factor:.4f} = "
            f"{result.uniform.duration:.4f} s\n")
    out(f"payload: {load_label(load, 'none (the arm alone)')}\n")
    width = max(len(name) for name in result.joint_names)
    out(f"\n{'joint':<{width}}  {'limit':>8}  {'ratio before':>12}  {'ratio after':>11}  "
        f"{'played':>7}  {'|qd|/max after':>14}\n")
    for i, name in enumerate(result.joint_names):
        limit = result.effort_limit[i]
        out(f"{name:<{width}}  {_cell(limit, 8, 3)}  {_cell(result.peak_ratio_before[i], 12)}"
            f"  {_cell(result.peak_ratio_after[i], 11)}  "
            f"{_cell(result.peak_ratio_playback[i], 7)}  "
            f"{_cell(result.peak_velocity_ratio_after[i], 14)}\n")
    out(f"(effort margin {result.effort_margin:g}; ratios after: evaluate on "
        f"{result.verification.t.size} samples of the time law and the "
        f"{result.trajectory.n_points} output points; played: the quintic interpolation "
        "between the output points)\n")
    out(f"binding constraint: {result.binding_constraint.describe()}\n")
    for kind, joints in result.active.items():
        if joints:
            text = ", ".join(f"{joint} {100 * fraction:.0f} %" for joint, fraction in
                             joints.items())
            out(f"  {kind} active on: {text}\n")
    out(f"TOPP-RA solves: {result.iterations}, runtime {result.runtime:.3f} s\n")
    for note in result.notes:
        out(f"note: {note}\n")
    for warning in result.warnings:
        out(f"warning: {warning}\n")


def _cell(value: float, width: int, digits: int = 4) -> str:
    if not math.isfinite(float(value)):
        return f"{'-':>{width}}"
    return f"{float(value):>{width}.{digits}f}"


def write_plot(result: RetimeResult, path: str | Path, title: str = "") -> None:
    """PNG: effort ratios and path speed over the path position, before and after."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    varying = bool(np.ptp(result.verification.payload_mass) > 0.0
                   or np.ptp(result.before.payload_mass) > 0.0)
    rows = 3 if varying else 2
    figure = Figure(figsize=(10.5, 6.5 if rows == 2 else 8.5), dpi=100)
    FigureCanvasAgg(figure)
    top, bottom = figure.add_subplot(rows, 1, 1), figure.add_subplot(rows, 1, 2)
    timing = result.timing
    length = timing.length
    before = result.before
    s_before = result.before_path_position / length
    s_after, sd_after, _ = timing.at_time(result.verification.t)
    colors = [f"C{i % 10}" for i in range(len(result.joint_names))]
    for i, joint in enumerate(result.joint_names):
        if not math.isfinite(float(result.effort_limit[i])):
            continue
        top.plot(s_before, before.effort_ratio[:, i], "--", color=colors[i], linewidth=1.0,
                 alpha=0.6)
        top.plot(s_after / length, result.verification.effort_ratio[:, i], "-",
                 color=colors[i], linewidth=1.4, label=joint)
    top.axhline(result.effort_margin, color="red", linestyle=":", linewidth=1.2,
                label="margin × limit")
    top.set_ylabel("|τ| / τ_max  (dashed: input)")
    top.set_ylim(bottom=0.0)
    top.grid(True, alpha=0.3)
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small")
    bottom.plot(s_before, result.before_path_speed, "--", color="gray",
                label=f"input ({result.duration_before:.3f} s)")
    bottom.plot(s_after / length, sd_after, "-", color="black",
                label=f"retimed ({result.duration_after:.3f} s)")
    bottom.set_ylim(bottom=0.0)
    label_panel(bottom, "path position s / L", "path speed ṡ [rad/s of chord]")
    if varying:  # a loading process meets the path at other places once retimed
        mass = figure.add_subplot(rows, 1, 3)
        mass.plot(s_before, result.before.payload_mass, "--", color="gray", label="input")
        mass.plot(s_after / length, result.verification.payload_mass, "-", color="black",
                  label="retimed")
        label_panel(mass, "path position s / L", "load mass [kg]")
    save_figure(figure, top, title, path)
