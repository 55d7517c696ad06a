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
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import toppra
import toppra.algorithm
import toppra.constraint
from toppra.algorithm import ParameterizationReturnCode

from robot_tv_dynamics.dynamics import RecursiveDynamics
from robot_tv_dynamics.evaluation import Load, Trajectory
from robot_tv_dynamics.exceptions import (
    RetimingError,
    StaticHoldingError,
)
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.constraints import (
    EffortCoefficients,
    EffortConstraint,
    effort_coefficients,
    grid_load,
    sigma_from_speed,
)
from robot_tv_dynamics.retiming.indexing import PathIndexedProcess
from robot_tv_dynamics.retiming.options import RetimeOptions
from robot_tv_dynamics.retiming.path import JointPath
from robot_tv_dynamics.retiming.problem import RetimeProblem, retime_problem
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
    options: RetimeOptions | None = None,
    **settings: Any,
) -> RetimeResult:
    """The fastest timing of ``trajectory``'s path within effort, velocity, acceleration limits.

    Args:
        model: the arm (URDF limits: position, velocity, effort).
        trajectory: the planned motion; its positions define the path, its times are
            replaced. Joints it does not list are held (``default_positions``).
        payload: a :class:`~robot_tv_dynamics.evaluation.Payload` or a loading process
            (time-indexed, see the module docstring); None = the arm alone.
        options: the settings (:class:`~robot_tv_dynamics.retiming.options.RetimeOptions`);
            None = its defaults.
        **settings: fields of :class:`~robot_tv_dynamics.retiming.options.RetimeOptions`
            that replace those of ``options`` (``retime(model, trajectory, payload,
            effort_margin=0.9)``).

    Returns:
        A :class:`~robot_tv_dynamics.retiming.result.RetimeResult`.

    Raises:
        TypeError: a setting that ``RetimeOptions`` does not have.
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
    if options is None:
        options = RetimeOptions(**settings)
    elif settings:
        options = replace(options, **settings)
    path = JointPath(model, trajectory, options.default_positions)
    if options.split_at_stops:
        from robot_tv_dynamics.retiming.segments import retime_segments, stop_ranges

        ranges = stop_ranges(trajectory)
        if len(ranges) > 1:
            return retime_segments(retime, model, trajectory, payload, ranges, options)
    problem = retime_problem(model, trajectory, payload, path, options)
    search = _search(model, path, payload, problem, options)
    return _result(model, trajectory, payload, path, problem, search, options,
                   time.perf_counter() - started)


@dataclass(frozen=True)
class CheckedTiming:
    """A time-optimal timing verified by τ of eq. (39) alone (:func:`retime_checked`).

    Attributes:
        trajectory: the retimed motion, same joints and path as the input.
        duration: its duration [s].
        peak_ratio: peak |τ|/τ_max per joint over the dense samples of the time law and
            the output points, (nv,) (NaN: no limit).
        peak_ratio_playback: the same of what a controller plays between the output
            points, (nv,); NaN when not verified.
        iterations: TOPP-RA solves.
    """

    trajectory: Trajectory
    duration: float
    peak_ratio: Array
    peak_ratio_playback: Array
    iterations: int


def retime_checked(model: RobotModel, trajectory: Trajectory, theta: npt.ArrayLike,
                   options: RetimeOptions) -> CheckedTiming:
    """:func:`retime` of a constant load, verified by τ alone and without the report.

    The same grid, TOPP-RA solves, verification samples (dense, output points and, with
    ``verify_playback``, the controller's playback), limits and tightening as
    :func:`retime`, with every τ by RNEA (:mod:`~robot_tv_dynamics.retiming.torques`,
    equal to evaluate's to ~1e-14) instead of evaluate, and neither the input's
    evaluation nor the uniform comparison: the trajectory gate's retiming. A trajectory
    that stops inside its path (``split_at_stops``) goes through :func:`retime`.

    Args:
        model: the arm.
        trajectory: the planned motion.
        theta: Θ of the arm with its payload, (N, 10), constant along the motion
            [kg, kg·m, kg·m²]; ``options.theta`` is ignored.
        options: the settings (no loading process: the load is ``theta``).

    Raises:
        As :func:`retime`.
    """
    theta = model.check_theta(theta)
    options = replace(options, theta=theta, compare_uniform=False)
    path = JointPath(model, trajectory, options.default_positions)
    if options.split_at_stops:
        from robot_tv_dynamics.retiming.segments import stop_ranges

        if len(stop_ranges(trajectory)) > 1:
            result = retime(model, trajectory, None, options)
            return CheckedTiming(result.trajectory, result.duration_after,
                                 result.peak_ratio_after, result.peak_ratio_playback,
                                 result.iterations)
    problem = retime_problem(model, trajectory, None, path, options, evaluate_input=False)
    dynamics = model.dynamics()
    dynamics.set_loads(theta)
    search = _search(model, path, None, problem, options, dynamics)
    best = search.best
    return CheckedTiming(best.output, best.timing.duration, best.peak_sampled,
                         best.peak_played, search.iterations)


def _search(model: RobotModel, path: JointPath, payload: Load | None,
            problem: RetimeProblem, options: RetimeOptions,
            dynamics: RecursiveDynamics | None = None) -> _Search:
    """Solve, verify, tighten where a peak slipped over, until a verified timing holds.

    ``dynamics`` (an evaluator holding the constant load): verify by τ alone
    (:func:`~robot_tv_dynamics.retiming.verify.verify`); None = by evaluate.

    Raises:
        StaticHoldingError: the load cannot be held at rest at some gridpoint.
        RetimingError: no verified timing within ``max_iterations`` solves.
    """
    margin, tolerance = options.effort_margin, options.ratio_tolerance
    factor = np.full(model.nv, margin)
    # the kinematic limits given to TOPP-RA, as fractions of the (scaled) limits: a hair
    # inside, so that rounding never puts a sample over them; tightened where the
    # smoothing lets a sample slip over
    kinematic = np.full((2, model.nv), 1.0 - LIMIT_SLACK)
    change, converged, iterations = math.inf, not problem.iterate, 0
    best: Candidate | None = None
    stale = 0  # verified solutions in a row that were no better than the best
    coefficients: EffortCoefficients | None = None
    while iterations < options.max_iterations:
        iterations += 1
        if coefficients is None or problem.iterate:  # the load on the grid changed
            coefficients = _coefficients(model, path, problem, options)
        timing = _timing(path, problem, coefficients, factor, kinematic, options)
        if problem.iterate:
            change, converged = _next_schedule(model, payload, problem, timing, options)
            if not converged and iterations < options.max_iterations:
                continue
        seen: Load | None = (PathIndexedProcess(payload, path, timing, options.time_offset)  # type: ignore[arg-type]
                             if problem.by_path else payload)
        kwargs = {**problem.kwargs, "time_offset": 0.0} if problem.by_path else problem.kwargs
        candidate = verify(model, path, timing, seen, options.sample_rate,
                           options.verify_playback, kwargs, factor, problem.load.mass,
                           problem.process_time, converged, dynamics)
        sampled_over = np.nan_to_num(candidate.peak_sampled) > margin + tolerance
        played_over = np.nan_to_num(candidate.peak_played) > margin + tolerance
        valid = not sampled_over.any() and not _kinematic_over(candidate, problem)
        if valid and (best is None or candidate.better_than(best, margin)):
            best, stale = candidate, 0
        elif valid:
            stale += 1
        if valid and (not played_over.any() or stale >= 2):
            break  # done, or tightening stopped helping the playback
        _tighten(candidate, sampled_over | played_over, factor, kinematic, problem, options)
    if best is None:
        if problem.iterate and not converged:
            raise RetimingError(f"the load schedule did not settle within "
                                f"{options.max_iterations} TOPP-RA solves (last change of "
                                f"t(s): {change:.3g} s)")
        raise RetimingError(
            f"after {iterations} TOPP-RA solves the verified effort ratios still exceed the "
            f"margin {margin:g}; try more gridpoints")
    return _Search(best, iterations, change)


def _coefficients(model: RobotModel, path: JointPath, problem: RetimeProblem,
                  options: RetimeOptions) -> EffortCoefficients:
    """a, b, c, d on the grid for the current load schedule, checked for holding at rest.

    Raises:
        StaticHoldingError: |τ at rest| > margin × τ_max at some gridpoint.
    """
    coefficients = effort_coefficients(model, problem.samples, problem.load)
    _check_static(model, path, problem.grid, coefficients,
                  problem.effort_limit * options.effort_margin)
    return coefficients


def _timing(path: JointPath, problem: RetimeProblem, coefficients: EffortCoefficients,
            factor: Array, kinematic: Array, options: RetimeOptions) -> TimeLaw:
    """One TOPP-RA solve on the current schedule (smoothed when asked)."""
    optimal = _solve(path, problem.grid, coefficients, problem.effort_limit * factor,
                     problem.sigma,
                     _kinematic_constraints(problem.velocity_limit, problem.acceleration_limit,
                                            kinematic, list(path.columns)),
                     problem.sd_start, problem.sd_end)
    return optimal if options.smoothing == 0.0 else SmoothedTiming(optimal, options.smoothing)


def _next_schedule(model: RobotModel, payload: Load | None, problem: RetimeProblem,
                   timing: TimeLaw, options: RetimeOptions) -> tuple[float, bool]:
    """(change of t(s), settled); an unsettled schedule moves to ``timing``'s times."""
    grid_time, grid_speed, _ = timing.at_path(problem.grid)
    change = float(np.max(np.abs(grid_time - problem.process_time)))
    converged = change <= options.timing_tolerance
    if not converged:
        problem.process_time = grid_time
        problem.sigma = sigma_from_speed(grid_speed)
        problem.load = grid_load(model, payload, problem.theta,
                                 grid_time + options.time_offset, problem.grid.size)
    return change, converged


def _kinematic_over(candidate: Candidate, problem: RetimeProblem) -> bool:
    """Whether the verified motion exceeds a velocity or acceleration limit."""
    return bool(np.any(candidate.velocity_peak > problem.velocity_limit * (1 + 1e-6))
                or np.any(candidate.acceleration_peak
                          > problem.acceleration_limit * (1 + 1e-6)))


def _tighten(candidate: Candidate, over: npt.NDArray[np.bool_], factor: Array,
             kinematic: Array, problem: RetimeProblem, options: RetimeOptions) -> None:
    """Tighten, in place, the limits of the joints the verification found over them.

    The discretization (sampled) or the controller's interpolation (played) let these
    joints slip over: their effort limit shrinks by the overshoot, and a kinematic limit
    that slipped shrinks by its ratio.
    """
    peak = np.fmax(candidate.peak_sampled, np.nan_to_num(candidate.peak_played))
    factor[over] *= (options.effort_margin / peak[over]
                     * (1.0 - 0.25 * options.ratio_tolerance))
    for row, limit, values in ((0, problem.velocity_limit, candidate.velocity_peak),
                               (1, problem.acceleration_limit, candidate.acceleration_peak)):
        ratio = values / limit
        slipped = ratio > 1.0 + 1e-6
        kinematic[row, slipped] *= (1.0 - 1e-4) / ratio[slipped]


@dataclass(frozen=True)
class _Search:
    """The outcome of the solve-and-verify loop: the best verified candidate and how it went."""

    best: Candidate
    iterations: int
    change: float


def _result(model: RobotModel, trajectory: Trajectory, payload: Load | None,
            path: JointPath, problem: RetimeProblem, search: _Search,
            options: RetimeOptions, runtime: float) -> RetimeResult:
    """The result record of the best verified candidate, with its warnings and notes."""
    best, margin = search.best, options.effort_margin
    verification, evaluation = best.verification, best.evaluation
    assert verification is not None and evaluation is not None  # retime verifies by evaluate
    peak_played = best.peak_played
    if np.any(np.nan_to_num(peak_played) > margin + options.ratio_tolerance):
        worst = int(np.nanargmax(peak_played))
        problem.warnings.append(
            f'the quintic interpolation a controller plays between the output points takes '
            f'joint "{model.joint_names[worst]}" to {peak_played[worst]:.4g}× its effort limit '
            "(the s̈ jumps of the time-optimal law fall between points); sample the output "
            "more densely (sample_rate / --rate)")
    if problem.iterate and not best.converged:
        problem.warnings.append(
            f"the load schedule had not settled (last change of t(s): {search.change:.3g} s "
            f"> {options.timing_tolerance:g} s); the output is verified against the process "
            "at its own times all the same")
    velocity_limit, acceleration_limit = problem.velocity_limit, problem.acceleration_limit
    velocity_ratio = np.max(np.abs(verification.velocities), axis=0) / np.where(
        model.joint_limits.velocity > 0, model.joint_limits.velocity, np.nan)
    uniform = None
    if options.compare_uniform and problem.by_path:
        problem.notes.append("no uniform-slowdown comparison for a path-indexed load")
    elif options.compare_uniform:
        uniform = uniform_scaling(model, trajectory, payload, margin, velocity_limit,
                                  acceleration_limit, problem.kwargs, options.moveit_scaling)
    # s of every input point (a merged duplicate shares its predecessor's s)
    s_before = path.waypoint_s[np.searchsorted(path.waypoint_index,
                                               np.arange(trajectory.n_points), side="right") - 1]
    grid, timing = problem.grid, best.timing
    schedule = LoadSchedule(
        s=grid, process_time=np.full(grid.size, np.nan) if problem.constant
        else best.process_time + options.time_offset, time=timing.at_path(grid)[0],
        mass=best.mass)
    before = problem.before
    assert before is not None  # retime evaluates its input
    return RetimeResult(
        trajectory=best.output, timing=timing,
        duration_before=float(trajectory.time_from_start[-1] - trajectory.time_from_start[0]),
        duration_after=timing.duration,
        joint_names=tuple(model.joint_names), effort_limit=problem.effort_limit,
        effort_margin=margin, peak_ratio_before=before.peak_ratio,
        peak_ratio_after=best.peak_sampled, peak_velocity_ratio_after=velocity_ratio,
        peak_ratio_playback=peak_played,
        active=active_fractions(model, verification, best.factor, velocity_limit,
                                acceleration_limit),
        uniform=uniform, iterations=search.iterations, load_converged=best.converged,
        timing_change=search.change if problem.iterate else 0.0, load=best.load,
        effort_factor=best.factor, schedule=schedule,
        before=before, before_path_position=s_before,
        before_path_speed=np.array([path.path_speed(s, v) for s, v in zip(
            s_before, before.velocities[:, list(path.columns)], strict=True)]),
        evaluation=evaluation, verification=verification,
        runtime=runtime, notes=tuple(problem.notes), warnings=tuple(problem.warnings),
        velocity_limit=np.asarray(model.joint_limits.velocity, dtype=np.float64).copy(),
        velocity_scale=options.velocity_scale, acceleration_limit=acceleration_limit.copy())


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
