"""``robot-tv-dynamics evaluate``: a planned trajectory against effort limits under a payload.

Reads a URDF, a trajectory (YAML in the trajectory_msgs/JointTrajectory shape, or the
first JointTrajectory of a rosbag2) and a payload (a constant payload YAML or a
loading-process YAML), and reports per joint the peak effort ratio |τ|/τ_max of the
generalized robotics equation (39), the violations, the largest admissible payload of
the same shape and MoveIt's static number for comparison
(:mod:`robot_tv_dynamics.evaluation`).

Exit status: 0 within the limits, 1 when the trajectory exceeds a limit, 2 on bad
input (one ``error: ...`` line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import TextIO

import numpy as np

from robot_tv_dynamics.cli.common import (
    add_load_timing_arguments,
    add_report_arguments,
    add_trajectory_arguments,
    describe,
    describe_load,
    error_message,
    held_positions,
    label_panel,
    load_model,
    lock_option,
    plot_title,
    save_figure,
)
from robot_tv_dynamics.cli.sweep import add_sweep_arguments, run_sweep, single, wants_sweep
from robot_tv_dynamics.evaluation import (
    TERM_NAMES,
    Load,
    Payload,
    TrajectoryEvaluation,
    evaluate,
    load_payload,
    load_trajectory,
)
from robot_tv_dynamics.exceptions import RobotTvDynamicsError
from robot_tv_dynamics.model import RobotModel

#: Exit status when the trajectory exceeds an effort limit.
EXIT_VIOLATION = 1
#: Exit status on bad input.
EXIT_ERROR = 2

DESCRIPTION = (
    "Evaluate a planned joint trajectory (YAML or rosbag2) under a payload: the torques\n"
    "of eq. (39) per point with each term, effort ratios against the URDF limits,\n"
    "violations, the largest admissible payload of the same shape, and MoveIt's\n"
    "static max payload for comparison.")

EPILOG = """\
exit status: 0 within limits, 1 if the trajectory exceeds an effort limit, 2 on bad input.

trajectory YAML (trajectory_msgs/JointTrajectory shape):
  joint_names: [...]
  points: [{positions, velocities, accelerations,
            time_from_start: {sec, nanosec} or seconds}, ...]
  Missing velocities/accelerations are derived; the output notes how.

payload YAML (COM and inertia about the COM in the link frame, added to the URDF,
as franka set_load / UR set_payload take them):
  {link, mass, com: [x, y, z], inertia: {ixx, iyy, izz, ixy, ixz, iyz}}
or a loading-process YAML with a `process:` key (config/loading/*.yaml).
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``evaluate`` options to a (sub)parser.

    Args:
        parser: the parser of the ``evaluate`` subcommand.
    """
    describe(parser, DESCRIPTION, EPILOG)
    add_trajectory_arguments(parser)
    parser.add_argument(
        "--payload", metavar="FILE", action="append", default=[],
        help="payload YAML (link, mass, com, inertia) or loading-process YAML (process: ...); "
             "omitted: the arm alone; repeatable (a sweep: every trajectory x payload)")
    add_load_timing_arguments(parser)
    parser.add_argument(
        "--csv", metavar="OUT", help="write per point and joint: t, joint, effort, ratio, ...")
    add_report_arguments(
        parser, "points with t and effort per joint, violations, max_payload_mass, "
        "moveit_static_max_payload_mass, ...", "the effort ratios over time")
    add_sweep_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run ``evaluate`` with parsed arguments.

    Args:
        args: the namespace built by a parser set up with :func:`add_arguments`.

    Returns:
        The exit status: 0 within limits, 1 with violations, 2 on bad input.
    """
    if wants_sweep(args, args.payload):
        return run_sweep(args, "evaluate", args.payload,
                         {"time_offset": args.time_offset,
                          "default_positions": held_positions(args.hold)},
                         {"--csv": args.csv})
    try:
        model = load_model(single(args.urdf, "--urdf"), lock_option(args.lock))
        trajectory = load_trajectory(single(args.trajectory, "--trajectory"), args.topic)
        payload = None if not args.payload else load_payload(single(args.payload, "--payload"))
        result = evaluate(model, trajectory, payload, time_offset=args.time_offset,
                          default_positions=held_positions(args.hold))
        if args.csv:
            write_csv(result, args.csv)
        if args.plot:
            write_plot(result, args.plot,
                       title=plot_title(model, "effort ratio |τ|/τ_max", payload))
    except (RobotTvDynamicsError, OSError) as error:
        print(f"error: {error_message(error)}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        report = {"urdf": str(args.urdf[0]), "locked_joints": dict(model.locked_joints),
                  "trajectory": str(args.trajectory[0]),
                  "payload": describe_load(payload), **result.as_dict()}
        json.dump(report, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_table(result, model, payload, sys.stdout)
    return EXIT_VIOLATION if result.violations else 0


# ---------------------------------------------------------------------------- outputs
def write_csv(result: TrajectoryEvaluation, path: str | Path) -> None:
    """Per point and joint: t, joint, effort, ratio, limit, q, q̇, q̈ and each term of (39).

    Args:
        result: the evaluation.
        path: output file (overwritten).
    """
    header = ["t", "joint", "effort", "ratio", "limit", "position", "velocity",
              "acceleration", *(f"term_{name}" for name in TERM_NAMES)]
    with Path(path).open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        for k, t in enumerate(result.t):
            for i, joint in enumerate(result.joint_names):
                writer.writerow([
                    repr(float(t)), joint, repr(float(result.effort[k, i])),
                    _csv_number(result.effort_ratio[k, i]), _csv_number(result.effort_limit[i]),
                    repr(float(result.positions[k, i])), repr(float(result.velocities[k, i])),
                    repr(float(result.accelerations[k, i])),
                    *(repr(float(result.terms[name][k, i])) for name in TERM_NAMES)])


def _csv_number(value: float) -> str:
    return "" if math.isnan(value) else repr(float(value))


def write_plot(result: TrajectoryEvaluation, path: str | Path, title: str = "") -> None:
    """A PNG of |τ_i|/τ_max,i over time per joint, with the limit line at 1.

    Args:
        result: the evaluation.
        path: output PNG (overwritten).
        title: figure title.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8.0, 4.5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    for i, joint in enumerate(result.joint_names):
        if not np.all(np.isnan(result.effort_ratio[:, i])):
            axes.plot(result.t, result.effort_ratio[:, i], label=joint, marker=".")
    axes.axhline(1.0, color="red", linestyle="--", linewidth=1.2, label="limit")
    for violation in result.violations:
        axes.plot([violation.t], [violation.ratio], "x", color="red")
    axes.set_ylim(bottom=0.0)
    label_panel(axes, "time from start [s]", "|τ| / τ_max")
    save_figure(figure, axes, title, path)


def write_table(
    result: TrajectoryEvaluation, model: RobotModel, load: Load | None, stream: TextIO
) -> None:
    """The human-readable report: per-joint peaks, violations, max payload.

    Args:
        result: the evaluation.
        model: the arm (for its name).
        load: the load evaluated.
        stream: where to write.
    """
    t = result.t
    out = stream.write
    robot = str(model.pinocchio_model.name) or Path(model.source).stem
    out(f"robot: {robot} ({len(result.joint_names)} joints), trajectory: {t.size} points, "
        f"t = {t[0]:.3f} … {t[-1]:.3f} s\n")
    if load is None:
        out("payload: none (the arm alone)\n")
    elif isinstance(load, Payload):
        out(f"payload: {load.mass:g} kg on {load.link}, COM {np.round(load.com, 6).tolist()} m\n")
    else:
        described = describe_load(load) or {}
        out(f"payload: {described.get('description') or described.get('process')} "
            f"(loading process on {load.link})\n")
    peak, peak_index = result.peak_ratio, result.peak_index
    width = max(len(name) for name in result.joint_names)
    out(f"\n{'joint':<{width}}  {'limit':>9}  {'peak |τ|':>9}  {'peak ratio':>10}  "
        f"{'at t [s]':>8}\n")
    for i, name in enumerate(result.joint_names):
        limit = result.effort_limit[i]
        peak_effort = float(np.max(np.abs(result.effort[:, i])))
        if math.isnan(peak[i]):
            out(f"{name:<{width}}  {'none':>9}  {peak_effort:>9.3f}  {'-':>10}  {'-':>8}\n")
        else:
            flag = "  EXCEEDS" if peak[i] > 1.0 + 1e-9 else ""
            out(f"{name:<{width}}  {limit:>9.3f}  {peak_effort:>9.3f}  {peak[i]:>10.4f}  "
                f"{t[peak_index[i]]:>8.3f}{flag}\n")
    out("(limit and |τ| in N·m for revolute joints, N for prismatic)\n\n")
    if result.violations:
        out(f"violations: {len(result.violations)} (joint, point) pairs over the limit\n")
        for name in result.violating_joints:
            mine = [v for v in result.violations if v.joint == name]
            worst = max(mine, key=lambda v: v.ratio)
            out(f"  {name}: {len(mine)} points, t = {mine[0].t:.3f} … {mine[-1].t:.3f} s, "
                f"peak {worst.ratio:.4f} at t = {worst.t:.3f} s\n")
    else:
        out("violations: none\n")
    exact, static = result.max_payload, result.moveit_static_max_payload
    if load is None:
        out("max payload: not computed (give --payload for its link and shape)\n")
    if exact is not None:
        unit = "kg" if isinstance(load, Payload) else "kg (peak load mass, process scaled)"
        out(f"max payload (eq. 39 along the trajectory, same shape): "
            f"{_mass_text(exact.mass, exact.joint, exact.t, unit)}\n")
        if exact.min_mass > 0:
            out(f"  note: without at least {exact.min_mass:.4g} kg the trajectory exceeds a "
                "limit\n")
    if static is not None:
        out(f"MoveIt static max payload (point mass at the link origin, q̇ = q̈ = 0): "
            f"{_mass_text(static.mass, static.joint, static.t, 'kg')}\n")
    out(f"mass matrix: λ_min {np.min(result.mass_matrix_min_eigenvalue):.4g}, "
        f"λ_max {np.max(result.mass_matrix_max_eigenvalue):.4g} (extremes over the points)\n")
    for j, body in enumerate(result.loaded_bodies):
        out(f"consistency margin λ_min(f(Φ)) of {body}: min "
            f"{np.min(result.consistency_margin[:, j]):.4g} over the points\n")
    for note in result.notes:
        out(f"note: {note}\n")
    for warning in result.warnings:
        out(f"warning: {warning}\n")


def _mass_text(mass: float | None, joint: str | None, t: float | None, unit: str) -> str:
    if mass is None:
        return "none (no payload mass keeps the trajectory within the limits)"
    if math.isinf(mass):
        return "unbounded (no limited joint feels the payload)"
    where = "" if joint is None else f" — {joint} saturates at t = {t:.3f} s"
    return f"{mass:.4f} {unit}{where}"
