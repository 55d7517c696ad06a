"""One retiming's problem: the limits, the TOPP-RA grid and the first load schedule.

:func:`retime_problem` builds, once per :func:`~robot_tv_dynamics.retiming.solve.retime`,
what every TOPP-RA solve shares (the effort, velocity and acceleration limits, the grid
along the path and the path at it, the speeds at the ends) and the load schedule the
solves start from: the input's own timing. The solve-and-verify loop updates the
schedule of a time-indexed loading process in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_tv_dynamics.evaluation import (
    Load,
    Payload,
    Trajectory,
    TrajectoryEvaluation,
    evaluate,
)
from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.constraints import GridLoad, grid_load, sigma_from_speed
from robot_tv_dynamics.retiming.indexing import path_grid_load
from robot_tv_dynamics.retiming.options import RetimeOptions, positive_number
from robot_tv_dynamics.retiming.path import JointPath, PathSamples


@dataclass
class RetimeProblem:
    """What every TOPP-RA solve of one retiming shares, and the load schedule it updates.

    The schedule (``process_time``, ``sigma``, ``load``) changes in place while a
    time-indexed process is iterated; the rest is fixed once built.

    Attributes:
        theta: Θ of the arm without the payload (N, 10).
        kwargs: :func:`~robot_tv_dynamics.evaluation.evaluate`'s keyword arguments.
        before: the input, evaluated (None: not asked for).
        notes, warnings: for the result.
        effort_limit: τ_max per joint (NaN: none).
        velocity_limit, acceleration_limit: the (scaled) kinematic limits (inf: none).
        grid: TOPP-RA's gridpoints s_j; samples: the path at them.
        sd_start, sd_end: path speeds at the ends.
        constant, by_path, iterate: a constant load; a path-indexed process; a
            time-indexed one (the schedule is iterated).
        process_time: the schedule's process time per gridpoint [s].
        sigma: the path speed the rate terms are linearised at, per gridpoint.
        load: the load on the grid.
    """

    theta: Array
    kwargs: dict[str, Any]
    before: TrajectoryEvaluation | None
    notes: list[str]
    warnings: list[str]
    effort_limit: Array
    velocity_limit: Array
    acceleration_limit: Array
    grid: Array
    samples: PathSamples
    sd_start: float
    sd_end: float
    constant: bool
    by_path: bool
    iterate: bool
    process_time: Array
    sigma: Array
    load: GridLoad


def retime_problem(model: RobotModel, trajectory: Trajectory, payload: Load | None,
                   path: JointPath, options: RetimeOptions,
                   evaluate_input: bool = True) -> RetimeProblem:
    """The limits, the grid and the first load schedule (the input's timing).

    ``evaluate_input``: also evaluate the input (``before``, for the report).

    Raises:
        InvalidInputError: smoothing asked for a motion that does not start and end at
            rest; a bad acceleration limit.
        UnknownNameError: an acceleration limit for a joint the model does not have.
    """
    theta = (model.theta_nominal.copy() if options.theta is None
             else model.check_theta(options.theta).copy())
    kwargs: dict[str, Any] = {"theta": theta, "default_positions": path.held,
                              "time_offset": options.time_offset}
    before = (evaluate(model, trajectory, payload, compute_max_payload=False, **kwargs)
              if evaluate_input else None)
    notes, warnings = list(path.notes), []
    effort_limit = np.asarray(model.joint_limits.effort, dtype=np.float64).copy()
    effort_limit[~(effort_limit > 0.0)] = np.nan
    for i in np.flatnonzero(np.isnan(effort_limit)):
        warnings.append(f'joint "{model.joint_names[i]}" has no effort limit in the URDF: '
                        "not constrained")
    velocity_limit = (np.asarray(model.joint_limits.velocity, dtype=np.float64)
                      * options.velocity_scale)
    grid = _grid(path, options.gridpoints)
    sd_start, sd_end = _boundary_speeds(path, trajectory, notes)
    if options.smoothing > 0.0 and (sd_start > 0.0 or sd_end > 0.0):
        raise InvalidInputError("smoothing", "needs a trajectory that starts and ends at rest")
    _warn_interior_stops(path, trajectory, warnings)
    constant = not _is_process(payload)
    by_path = not constant and options.loading_index == "path"
    # first schedule: the input's timing, shifted to start at 0 as the output does
    process_time = path.original_time(grid) - float(trajectory.time_from_start[0])
    offset = options.time_offset
    if by_path:
        load = path_grid_load(model, payload, theta, path, grid, offset)  # type: ignore[arg-type]
        process_time = path.original_time(grid)
        notes.append(
            f'loading process on "{payload.link}" indexed by path position: the load at '  # type: ignore[union-attr]
            "each point of the path is the one the input had there (process time = the "
            f"input's time_from_start there + {offset:g} s), its rates scaled by the "
            "new path speed")
    else:
        load = grid_load(model, payload, theta, process_time + offset, grid.size)
    if not constant and not by_path:
        notes.append(
            f'loading process on "{payload.link}" indexed by time: met at process time '  # type: ignore[union-attr]
            f"t_new + {offset:g} s; the schedule Θ(s) = process(t(s) + offset) is "
            "iterated to a fixed point of the timing")
    return RetimeProblem(
        theta, kwargs, before, notes, warnings, effort_limit,
        np.where(velocity_limit > 0.0, velocity_limit, np.inf),
        _acceleration_limits(model, path, options.acceleration_limits), grid,
        path.samples(grid), sd_start, sd_end, constant, by_path,
        not constant and not by_path, process_time,
        sigma_from_speed(path.original_speed(grid)), load)


def _grid(path: JointPath, intervals: int) -> Array:
    """``intervals`` even steps along the path, with every waypoint made a gridpoint.

    An even point closer than a fifth of a step to a waypoint gives way to it, so that the
    output sampled at the waypoints is sampled where the constraints are enforced.
    """
    even = np.linspace(0.0, path.length, intervals + 1)
    step = path.length / intervals
    distance = np.min(np.abs(even[:, None] - path.waypoint_s[None, :]), axis=1)
    return np.union1d(even[distance > 0.2 * step], path.waypoint_s)


def _is_process(payload: Load | None) -> bool:
    return payload is not None and not isinstance(payload, Payload)


def _boundary_speeds(path: JointPath, trajectory: Trajectory, notes: list[str]
                     ) -> tuple[float, float]:
    """Path speeds at the ends: the input's (rest-to-rest when it starts/ends at rest)."""
    qd = trajectory.velocities
    if qd is None:
        notes.append("the input gives no velocities: the retimed motion starts and ends at rest")
        return 0.0, 0.0
    first, last = int(path.waypoint_index[0]), int(path.waypoint_index[-1])
    start = path.path_speed(0.0, qd[first]) if np.any(np.abs(qd[first]) > 1e-9) else 0.0
    end = path.path_speed(path.length, qd[last]) if np.any(np.abs(qd[last]) > 1e-9) else 0.0
    if start or end:
        notes.append(f"the input does not start/end at rest: its path speeds ṡ = {start:.4g}, "
                     f"{end:.4g} at the ends are kept")
    return start, end


def _warn_interior_stops(path: JointPath, trajectory: Trajectory, warnings: list[str]) -> None:
    """A planned stop inside the path (all velocities 0) may be a corner the spline rounds."""
    qd = trajectory.velocities
    if qd is None:
        return
    inner = path.waypoint_index[1:-1]
    stops = [int(k) for k in inner if not np.any(np.abs(qd[k]) > 1e-9)]
    if stops:
        warnings.append(
            f"the input stops at waypoint(s) {stops} inside the path; the retimed motion "
            "passes through without stopping along the spline through the waypoints (a "
            "corner there is rounded): split the trajectory at its stops to keep them")


def _acceleration_limits(model: RobotModel, path: JointPath,
                         limits: float | Mapping[str, float] | None) -> Array:
    """|q̈| limit per model joint (inf = none)."""
    out = np.full(model.nv, np.inf)
    if limits is None:
        return out
    if isinstance(limits, Mapping):
        for name, value in limits.items():
            if name not in model.joint_names:
                raise UnknownNameError("joint", str(name), model.joint_names)
            out[model.joint_names.index(name)] = positive_number(
                value, f"acceleration_limits[{name}]")
        return out
    out[list(path.columns)] = positive_number(limits, "acceleration_limits")
    return out
