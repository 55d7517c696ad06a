r"""Effort-feasible time-optimal retiming of a planned trajectory under a payload.

:func:`retime` keeps the path of a ``JointTrajectory`` (its positions,
:mod:`~robot_tv_dynamics.retiming.path`) and computes the fastest timing along it
that keeps every joint within

- |τ_i| ≤ margin × τ_max,i for the *full* eq. (39), including M(q, Θ̇)q̇, H(q, Ψ)q̇ and
  JᵀQ₀Ψ̇ of a loading process (:mod:`~robot_tv_dynamics.retiming.constraints`),
- |q̇_i| ≤ velocity_scale × q̇_max,i of the URDF,
- |q̈_i| ≤ an optional acceleration limit,

with TOPP-RA (``toppra.algorithm.TOPPRA``, seidel solver, interpolation scheme). The
result is then *verified* by :func:`robot_tv_dynamics.evaluation.evaluate` on a dense
sampling of the new time law: where the discretization let a peak slip over the
margin, that joint's limit given to TOPP-RA is tightened by the overshoot and the
problem solved again.

The load along the path
-----------------------
A constant payload (or none) gives Θ(s) = Θ, Θ̇ = Ψ = 0: τ = a s̈ + b ṡ² + c exactly.

A loading process (fill, drain, grasp, timeline) is indexed by **time**: a valve opens
at ``start`` and the mass flows at its own rate whatever the arm does, and the
particles' velocities in the body frame (the falling stream, ψ) do not scale with the
arm's speed. So the retimed motion meets the process at process time
``t_new + time_offset``, as :func:`~robot_tv_dynamics.evaluation.evaluate` assumes. That
makes Θ a function of the unknown timing, which :func:`retime` resolves by a
fixed-point iteration:

1. start from the input's timing t₀(s) (the waypoint times, interpolated monotonically);
2. evaluate the process at t_k(s_j) + time_offset on every gridpoint: Θ(s_j),
   Θ̇(s_j), Ψ(s_j), Ψ̇(s_j) (body coordinates);
3. solve TOPP-RA with them. Θ(s) enters a, b, c; the rate terms enter as d(s) ṡ
   (linear in ṡ) and JᵀQ₀Ψ̇ in c(s); d ṡ is bounded by its tangent at σ = ṡ_k(s)
   (see :mod:`~robot_tv_dynamics.retiming.constraints`), exact when ṡ = ṡ_k;
4. repeat with the new t_{k+1}(s) until max_j |t_{k+1}(s_j) − t_k(s_j)| ≤
   ``timing_tolerance``.

At the fixed point the load used on the path is the process evaluated at the final
timing, which is what the verification (evaluate on the output) measures.

``loading_index="path"`` ties the process to the path instead (the load at each path
position is the one the input had there; its rates scale with the path speed), which
makes every rate term quadratic in ṡ and needs no iteration
(:mod:`~robot_tv_dynamics.retiming.indexing`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import toppra
import toppra.algorithm
import toppra.constraint
from toppra.algorithm import ParameterizationReturnCode

from robot_tv_dynamics.evaluation import Load, Payload, Trajectory, evaluate
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    RetimingError,
    StaticHoldingError,
    UnknownNameError,
)
from robot_tv_dynamics.inertia import Array, check_finite
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.constraints import (
    EffortCoefficients,
    EffortConstraint,
    effort_coefficients,
    grid_load,
    sigma_from_speed,
)
from robot_tv_dynamics.retiming.indexing import PathIndexedProcess, path_grid_load
from robot_tv_dynamics.retiming.path import JointPath
from robot_tv_dynamics.retiming.result import (
    LoadSchedule,
    RetimeResult,
    active_fractions,
    uniform_scaling,
)
from robot_tv_dynamics.retiming.smoothing import SmoothedTiming
from robot_tv_dynamics.retiming.timing import PathTiming, TimeLaw
from robot_tv_dynamics.retiming.verify import Candidate, verify

#: Stand-in for "no velocity or acceleration limit" given to TOPP-RA.
NO_LIMIT = 1e9
#: Relative slack inside the velocity and acceleration limits given to TOPP-RA.
LIMIT_SLACK = 1e-6


def retime(
    model: RobotModel,
    trajectory: Trajectory,
    payload: Load | None = None,
    *,
    effort_margin: float = 1.0,
    velocity_scale: float = 1.0,
    acceleration_limits: float | Mapping[str, float] | None = None,
    gridpoints: int = 200,
    sample_rate: float | None = None,
    theta: npt.ArrayLike | None = None,
    default_positions: npt.ArrayLike | Mapping[str, float] | None = None,
    time_offset: float = 0.0,
    max_iterations: int = 12,
    timing_tolerance: float = 1e-3,
    ratio_tolerance: float = 1e-3,
    compare_uniform: bool = True,
    verify_playback: bool = True,
    smoothing: float = 0.0,
    loading_index: str = "time",
    split_at_stops: bool = True,
    moveit_scaling: tuple[float, float] = (1.0, 1.0),
) -> RetimeResult:
    """The fastest timing of ``trajectory``'s path within effort, velocity, acceleration limits.

    Args:
        model: the arm (URDF limits: position, velocity, effort).
        trajectory: the planned motion; its positions define the path, its times are
            replaced. Joints it does not list are held (``default_positions``).
        payload: a :class:`~robot_tv_dynamics.evaluation.Payload` or a loading process
            (time-indexed, see the module docstring); None = the arm alone.
        effort_margin: allowed fraction of τ_max, in (0, 1] typically.
        velocity_scale: fraction of the URDF velocity limits, > 0.
        acceleration_limits: |q̈| limit [rad/s² or m/s²] for every trajectory joint (a
            number) or per joint name; None = none (the URDF has none).
        gridpoints: number of TOPP-RA grid intervals along the path, ≥ 10.
        sample_rate: output rate [Hz]; None = one point per input waypoint (at their
            path positions, with new times).
        theta: Θ of the arm without the payload, (N, 10); None = ``model.theta_nominal``.
        default_positions: positions of joints the trajectory does not list (nv,) or a
            mapping; None = 0.
        time_offset: process time at the output's time_from_start = 0 [s].
        max_iterations: TOPP-RA solves at most (schedule iterations + verification passes).
        timing_tolerance: fixed point of the load schedule reached when t(s) changes by
            no more than this [s].
        ratio_tolerance: accepted overshoot of the verified peak ratio over the margin.
        compare_uniform: also find the uniform slowdown meeting the same limits.
        verify_playback: also verify the quintic Hermite interpolation a trajectory
            controller plays between the output points
            (:func:`~robot_tv_dynamics.retiming.playback.quintic_playback`), and tighten
            for its overshoot at the s̈ jumps.
        smoothing: window w [s] of a moving average of the time-optimal law
            (:mod:`~robot_tv_dynamics.retiming.smoothing`): continuous accelerations,
            bounded jerk, w longer; 0 = the time-optimal law as is. Rest-to-rest only.
        loading_index: how a loading process meets the retimed motion: ``"time"`` (its
            own clock, process time = t_new + time_offset; the default, see above) or
            ``"path"`` (tied to the path: the load at each path position is the one the
            input had there, :mod:`~robot_tv_dynamics.retiming.indexing`).
        split_at_stops: retime a trajectory that comes to rest at interior waypoints
            segment by segment, keeping the stops
            (:mod:`~robot_tv_dynamics.retiming.segments`).
        moveit_scaling: (v₀, a₀), the max_velocity_scaling_factor and
            max_acceleration_scaling_factor MoveIt parameterized the input with; the
            reported factors (``result.uniform``) are (v₀/k, a₀/k²) for the uniform
            time scaling k found
            (:func:`~robot_tv_dynamics.retiming.result.uniform_scaling`).

    Returns:
        A :class:`~robot_tv_dynamics.retiming.result.RetimeResult`.

    Raises:
        UnknownNameError: a trajectory, held or acceleration-limit joint, or the payload
            link, is not in the model.
        InvalidInputError: bad options, waypoints outside the position limits, a path of
            zero length.
        StaticHoldingError: some point of the path cannot be held at rest within an
            effort limit (names the joint and by how much): no timing can help.
        RetimingError: TOPP-RA finds no feasible timing, or the verification still
            fails after ``max_iterations`` solves.
    """
    started = time.perf_counter()
    margin = _positive(effort_margin, "effort_margin")
    scale = _positive(velocity_scale, "velocity_scale")
    time_offset = float(check_finite(time_offset, "time_offset", ()))
    if int(gridpoints) < 10:
        raise InvalidInputError("gridpoints", f"must be >= 10, got {gridpoints}")
    if sample_rate is not None:
        sample_rate = _positive(sample_rate, "sample_rate")
    if loading_index not in ("time", "path"):
        raise InvalidInputError("loading_index", f'must be "time" or "path", got '
                                f"{loading_index!r}")
    smoothing = float(check_finite(smoothing, "smoothing", ()))
    if smoothing < 0.0:
        raise InvalidInputError("smoothing", f"must be >= 0, got {smoothing:g}")
    scaling = _moveit_scaling(moveit_scaling)
    path = JointPath(model, trajectory, default_positions)
    if split_at_stops:
        from robot_tv_dynamics.retiming.segments import retime_segments, stop_ranges

        ranges = stop_ranges(trajectory)
        if len(ranges) > 1:
            options: dict[str, Any] = {
                "effort_margin": margin, "velocity_scale": scale,
                "acceleration_limits": acceleration_limits, "gridpoints": gridpoints,
                "sample_rate": sample_rate, "theta": theta,
                "default_positions": default_positions, "time_offset": time_offset,
                "max_iterations": max_iterations, "timing_tolerance": timing_tolerance,
                "ratio_tolerance": ratio_tolerance, "compare_uniform": compare_uniform,
                "verify_playback": verify_playback, "smoothing": smoothing,
                "loading_index": loading_index, "moveit_scaling": scaling}
            return retime_segments(retime, model, trajectory, payload, ranges, options)
    theta_base = model.theta_nominal.copy() if theta is None else model.check_theta(theta).copy()
    kwargs: dict[str, Any] = {"theta": theta_base, "default_positions": path.held,
                              "time_offset": time_offset}
    before = evaluate(model, trajectory, payload, compute_max_payload=False, **kwargs)
    notes = list(path.notes)
    warnings: list[str] = []

    effort_limit = np.asarray(model.joint_limits.effort, dtype=np.float64).copy()
    effort_limit[~(effort_limit > 0.0)] = np.nan
    for i in np.flatnonzero(np.isnan(effort_limit)):
        warnings.append(f'joint "{model.joint_names[i]}" has no effort limit in the URDF: '
                        "not constrained")
    velocity_limit = np.asarray(model.joint_limits.velocity, dtype=np.float64) * scale
    velocity_limit = np.where(velocity_limit > 0.0, velocity_limit, np.inf)
    acceleration_limit = _acceleration_limits(model, path, acceleration_limits)
    columns = list(path.columns)

    grid = _grid(path, int(gridpoints))
    samples = path.samples(grid)
    sd_start, sd_end = _boundary_speeds(path, trajectory, notes)
    if smoothing > 0.0 and (sd_start > 0.0 or sd_end > 0.0):
        raise InvalidInputError("smoothing", "needs a trajectory that starts and ends at rest")
    _warn_interior_stops(path, trajectory, warnings)
    constant = not _is_process(payload)
    by_path = not constant and loading_index == "path"
    iterate = not constant and not by_path  # a time-indexed process: schedule iteration
    # first schedule: the input's timing, shifted to start at 0 as the output does
    process_time = path.original_time(grid) - float(trajectory.time_from_start[0])
    sigma = sigma_from_speed(path.original_speed(grid))
    if by_path:
        load = path_grid_load(model, payload, theta_base, path, grid,  # type: ignore[arg-type]
                              time_offset)
        process_time = path.original_time(grid)
        notes.append(
            f'loading process on "{payload.link}" indexed by path position: the load at '  # type: ignore[union-attr]
            "each point of the path is the one the input had there (process time = the "
            f"input's time_from_start there + {time_offset:g} s), its rates scaled by the "
            "new path speed")
    else:
        load = grid_load(model, payload, theta_base, process_time + time_offset, grid.size)
    if iterate:
        notes.append(
            f'loading process on "{payload.link}" indexed by time: met at process time '  # type: ignore[union-attr]
            f"t_new + {time_offset:g} s; the schedule Θ(s) = process(t(s) + offset) is "
            "iterated to a fixed point of the timing")

    factor = np.full(model.nv, margin)
    # the kinematic limits given to TOPP-RA, as fractions of the (scaled) limits: a hair
    # inside, so that rounding never puts a sample over them; tightened where the
    # smoothing lets a sample slip over
    kinematic = np.full((2, model.nv), 1.0 - LIMIT_SLACK)

    change, converged, iterations = math.inf, not iterate, 0
    best: Candidate | None = None
    stale = 0  # verified solutions in a row that were no better than the best
    max_iterations = max(1, int(max_iterations))
    while iterations < max_iterations:
        iterations += 1
        coefficients = effort_coefficients(model, samples, load)
        _check_static(model, path, grid, coefficients, effort_limit * margin)
        optimal = _solve(path, grid, coefficients, effort_limit * factor, sigma,
                         _kinematic_constraints(velocity_limit, acceleration_limit, kinematic,
                                                columns), sd_start, sd_end)
        timing: TimeLaw = optimal if smoothing == 0.0 else SmoothedTiming(optimal, smoothing)
        if iterate:
            grid_time, grid_speed, _ = timing.at_path(grid)
            change = float(np.max(np.abs(grid_time - process_time)))
            converged = change <= timing_tolerance
            if not converged and iterations < max_iterations:
                process_time = grid_time
                sigma = sigma_from_speed(grid_speed)
                load = grid_load(model, payload, theta_base, process_time + time_offset,
                                  grid.size)
                continue
        seen: Load | None = (PathIndexedProcess(payload, path, timing, time_offset)  # type: ignore[arg-type]
                             if by_path else payload)
        candidate = verify(model, path, timing, seen, sample_rate, verify_playback,
                            {**kwargs, "time_offset": 0.0} if by_path else kwargs, factor,
                            load.mass, process_time, converged)
        sampled_over = np.nan_to_num(candidate.peak_sampled) > margin + ratio_tolerance
        kinematic_over = bool(np.any(candidate.velocity_peak > velocity_limit * (1 + 1e-6))
                              or np.any(candidate.acceleration_peak
                                        > acceleration_limit * (1 + 1e-6)))
        played_over = np.nan_to_num(candidate.peak_played) > margin + ratio_tolerance
        valid = not sampled_over.any() and not kinematic_over
        if valid and (best is None or candidate.better_than(best, margin)):
            best, stale = candidate, 0
        elif valid:
            stale += 1
        if valid and (not played_over.any() or stale >= 2):
            break  # done, or tightening stopped helping the playback
        # the discretization (sampled) or the controller's interpolation (played) let these
        # joints slip over: tighten their limit by the overshoot and solve again
        over = sampled_over | played_over
        peak = np.fmax(candidate.peak_sampled, np.nan_to_num(candidate.peak_played))
        factor[over] *= margin / peak[over] * (1.0 - 0.25 * ratio_tolerance)
        for row, limit, values in ((0, velocity_limit, candidate.velocity_peak),
                                   (1, acceleration_limit, candidate.acceleration_peak)):
            ratio = values / limit
            slipped = ratio > 1.0 + 1e-6
            kinematic[row, slipped] *= (1.0 - 1e-4) / ratio[slipped]
    if best is None:
        if iterate and not converged:
            raise RetimingError(f"the load schedule did not settle within {max_iterations} "
                                f"TOPP-RA solves (last change of t(s): {change:.3g} s)")
        raise RetimingError(
            f"after {iterations} TOPP-RA solves the verified effort ratios still exceed the "
            f"margin {margin:g}; try more gridpoints")
    timing, output = best.timing, best.output
    verification, evaluation, factor = best.verification, best.evaluation, best.factor
    peak_played = best.peak_played
    peak_after = best.peak_sampled
    if np.any(np.nan_to_num(peak_played) > margin + ratio_tolerance):
        worst = int(np.nanargmax(peak_played))
        warnings.append(
            f'the quintic interpolation a controller plays between the output points takes '
            f'joint "{model.joint_names[worst]}" to {peak_played[worst]:.4g}× its effort limit '
            "(the s̈ jumps of the time-optimal law fall between points); sample the output "
            "more densely (sample_rate / --rate)")
    if iterate and not best.converged:
        warnings.append(f"the load schedule had not settled (last change of t(s): "
                        f"{change:.3g} s > {timing_tolerance:g} s); the output is verified "
                        "against the process at its own times all the same")

    velocity_ratio = np.max(np.abs(verification.velocities), axis=0) / np.where(
        model.joint_limits.velocity > 0, model.joint_limits.velocity, np.nan)
    uniform = None
    if compare_uniform and by_path:
        notes.append("no uniform-slowdown comparison for a path-indexed load")
    elif compare_uniform:
        uniform = uniform_scaling(model, trajectory, payload, margin, velocity_limit,
                                  acceleration_limit, kwargs, scaling)
    # s of every input point (a merged duplicate shares its predecessor's s)
    s_before = path.waypoint_s[np.searchsorted(path.waypoint_index,
                                               np.arange(trajectory.n_points), side="right") - 1]
    schedule = LoadSchedule(
        s=grid, process_time=np.full(grid.size, np.nan) if constant
        else best.process_time + time_offset, time=timing.at_path(grid)[0], mass=best.mass)
    seen_load: Load | None = best.load
    return RetimeResult(
        trajectory=output, timing=timing,
        duration_before=float(trajectory.time_from_start[-1] - trajectory.time_from_start[0]),
        duration_after=timing.duration,
        joint_names=tuple(model.joint_names), effort_limit=effort_limit,
        effort_margin=margin, peak_ratio_before=before.peak_ratio, peak_ratio_after=peak_after,
        peak_velocity_ratio_after=velocity_ratio,
        peak_ratio_playback=peak_played,
        active=active_fractions(model, verification, factor, velocity_limit, acceleration_limit),
        uniform=uniform, iterations=iterations, load_converged=best.converged,
        timing_change=change if iterate else 0.0, load=seen_load, effort_factor=factor,
        schedule=schedule,
        before=before, before_path_position=s_before,
        before_path_speed=np.array([path.path_speed(s, v) for s, v in zip(
            s_before, before.velocities[:, columns], strict=True)]),
        evaluation=evaluation, verification=verification,
        runtime=time.perf_counter() - started, notes=tuple(notes), warnings=tuple(warnings),
        velocity_limit=np.asarray(model.joint_limits.velocity, dtype=np.float64).copy(),
        velocity_scale=scale, acceleration_limit=acceleration_limit.copy())


# ---------------------------------------------------------------------------- steps
def _kinematic_constraints(velocity_limit: Array, acceleration_limit: Array,
                           fraction: Array, columns: list[int]) -> list[Any]:
    """TOPP-RA's joint velocity (and acceleration) constraints on the trajectory's joints."""
    v_lim = np.minimum(velocity_limit[columns] * fraction[0, columns], NO_LIMIT)
    out = [toppra.constraint.JointVelocityConstraint(np.column_stack([-v_lim, v_lim]))]
    if np.any(np.isfinite(acceleration_limit[columns])):
        a_lim = np.minimum(acceleration_limit[columns] * fraction[1, columns], NO_LIMIT)
        out.append(toppra.constraint.JointAccelerationConstraint(
            np.column_stack([-a_lim, a_lim]),
            discretization_scheme=toppra.constraint.DiscretizationType.Interpolation))
    return out


def _solve(path: JointPath, grid: Array, coefficients: EffortCoefficients, limit: Array,
           sigma: Array, fixed: list[Any], sd_start: float, sd_end: float) -> PathTiming:
    """One TOPP-RA solve; the time law of its path speeds."""
    effort = EffortConstraint(grid, coefficients, limit, sigma)
    algorithm = toppra.algorithm.TOPPRA([*fixed, effort], path.spline, gridpoints=grid,
                                        solver_wrapper="seidel")
    _, sd, _ = algorithm.compute_parameterization(sd_start, sd_end)[:3]
    code = algorithm.problem_data.return_code
    if code != ParameterizationReturnCode.Ok or sd is None:
        raise RetimingError(
            f"TOPP-RA found no timing within the limits ({code.value}); the start or end "
            f"speed (ṡ = {sd_start:.3g}, {sd_end:.3g}) may be too fast for the payload")
    return PathTiming.from_speeds(grid, sd)


def _grid(path: JointPath, intervals: int) -> Array:
    """``intervals`` even steps along the path, with every waypoint made a gridpoint.

    An even point closer than a fifth of a step to a waypoint gives way to it, so that the
    output sampled at the waypoints is sampled where the constraints are enforced.
    """
    even = np.linspace(0.0, path.length, intervals + 1)
    step = path.length / intervals
    distance = np.min(np.abs(even[:, None] - path.waypoint_s[None, :]), axis=1)
    return np.union1d(even[distance > 0.2 * step], path.waypoint_s)


def _check_static(model: RobotModel, path: JointPath, grid: Array,
                  coefficients: EffortCoefficients, limit: Array) -> None:
    """|τ at rest| ≤ limit at every gridpoint, else StaticHoldingError naming the worst."""
    with np.errstate(invalid="ignore"):
        ratio = np.abs(coefficients.c) / limit
    ratio = np.nan_to_num(ratio, nan=0.0)
    if np.all(ratio <= 1.0):
        return
    j, i = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    k = int(np.argmin(np.abs(path.waypoint_s - grid[j])))
    where = (f"at s = {grid[j]:.4g} of {path.length:.4g} along the path (nearest waypoint "
             f"{int(path.waypoint_index[k])}, input t = {path.waypoint_times[k]:.4g} s)")
    raise StaticHoldingError(model.joint_names[int(i)], float(ratio[j, i]), float(limit[i]),
                             where)


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
            out[model.joint_names.index(name)] = _positive(value, f"acceleration_limits[{name}]")
        return out
    out[list(path.columns)] = _positive(limits, "acceleration_limits")
    return out


def _moveit_scaling(value: Any) -> tuple[float, float]:
    """(v₀, a₀) in (0, 1] each, as MoveIt takes its scaling factors."""
    try:
        v0, a0 = value
    except (TypeError, ValueError):
        raise InvalidInputError("moveit_scaling", f"expected (velocity, acceleration) "
                                f"scaling factors, got {value!r}") from None
    out = (_positive(v0, "moveit_scaling[0]"), _positive(a0, "moveit_scaling[1]"))
    if max(out) > 1.0:
        raise InvalidInputError("moveit_scaling", f"MoveIt's scaling factors are at most 1, "
                                f"got {out}")
    return out


def _positive(value: Any, name: str) -> float:
    number = float(check_finite(value, name, ()))
    if not number > 0.0:
        raise InvalidInputError(name, f"must be > 0, got {number:g}")
    return number
