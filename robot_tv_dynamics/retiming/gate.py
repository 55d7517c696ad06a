r"""The trajectory gate's decision: forward a trajectory, retime it, or refuse it.

A trajectory about to be executed (a FollowJointTrajectory goal) is checked against the
payload the arm carries now:

1. its efforts of eq. (39) at its points, under Θ with the payload
   (:func:`robot_tv_dynamics.evaluation.evaluate`), within ``effort_margin`` × τ_max,
   and its velocities (and accelerations, when a limit is given) within the limits:
   **forward** it unchanged;
2. otherwise retime it along the same path: **retime**. ``method="uniform"`` (the
   default) slows it down uniformly by the exact smallest factor k
   (:mod:`~robot_tv_dynamics.retiming.uniform`: closed form, the samples of what a
   trajectory controller plays between the points when ``verify_playback``), so the
   motion keeps its shape and is never faster than planned; ``"time-optimal"`` runs
   TOPP-RA (:func:`robot_tv_dynamics.retiming.solve.retime_checked`: ``retime`` with
   a short budget, few grid intervals and solves, no report) verified by τ of eq. (39)
   (RNEA) on the time law sampled densely, at the output points and
   (``verify_playback``) as played. A uniform slowdown is verified by evaluate on the
   scaled points;
3. when no timing keeps the limits (the payload cannot even be held at rest somewhere
   on the path, or TOPP-RA finds no timing): **refuse**, with the reason.

No rclpy: :mod:`robot_tv_dynamics.ros.trajectory_gate` is the node around it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.evaluation import Trajectory, TrajectoryEvaluation, evaluate
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    RetimingError,
    RobotTvDynamicsError,
    StaticHoldingError,
    check_ranges,
)
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.playback import controller_playback
from robot_tv_dynamics.retiming.uniform import UniformLimits, scaled, uniform_factor

#: The three outcomes of :func:`gate_trajectory`.
FORWARD, RETIME, REFUSE = "forward", "retime", "refuse"
#: Samples per segment of the controller's playback a uniform slowdown is held to.
PLAYBACK_SAMPLES = 4
#: How a trajectory over the limits is retimed.
METHODS = ("uniform", "time-optimal")


@dataclass(frozen=True)
class GateOptions:
    """The limits a gated trajectory is held to, and the retiming budget.

    Attributes:
        effort_margin: |τ_i| ≤ effort_margin × τ_max,i (URDF), in (0, 1] typically.
        velocity_scale: |q̇_i| ≤ velocity_scale × q̇_max,i (URDF), > 0; set it to the
            max_velocity_scaling_factor MoveIt planned with to keep the retimed motion
            no faster than MoveIt would move.
        acceleration_limit: |q̈_i| limit for every trajectory joint [rad/s² or m/s²];
            None = none (URDFs give none).
        gridpoints: TOPP-RA grid intervals along the path (fewer: faster, coarser).
        max_iterations: TOPP-RA solves at most (each followed by its verification).
        ratio_tolerance: a ratio counts as over its limit above limit + this.
        verify_playback: hold what a trajectory controller plays between the points to
            the limits, not only the points (a time-optimal law's s̈ jumps make the played
            quintic overshoot by up to ~10 %); False is faster.
        method: ``"uniform"`` (the exact uniform slowdown) or ``"time-optimal"`` (TOPP-RA).
    """

    effort_margin: float = 1.0
    velocity_scale: float = 1.0
    acceleration_limit: float | None = None
    gridpoints: int = 60
    max_iterations: int = 4
    ratio_tolerance: float = 1e-3
    verify_playback: bool = True
    method: str = "uniform"

    def __post_init__(self) -> None:
        """Validate.

        Raises:
            InvalidInputError: a margin, scale or limit that is not positive and finite,
                fewer than 10 grid intervals, no iteration.
        """
        check_ranges(self, positive=("effort_margin", "velocity_scale"))
        limit = self.acceleration_limit
        if limit is not None and not (math.isfinite(limit) and limit > 0.0):
            raise InvalidInputError("acceleration_limit", f"must be > 0 (or none), got {limit!r}")
        if int(self.gridpoints) < 10:
            raise InvalidInputError("gridpoints", f"must be >= 10, got {self.gridpoints}")
        if self.method not in METHODS:
            raise InvalidInputError("method", f"{self.method!r} is not one of {list(METHODS)}")
        if int(self.max_iterations) < 1:
            raise InvalidInputError("max_iterations",
                                    f"must be >= 1, got {self.max_iterations}")


@dataclass(frozen=True)
class GateDecision:
    """What the gate does with one trajectory, and why.

    Attributes:
        action: :data:`FORWARD`, :data:`RETIME` or :data:`REFUSE`.
        reason: one line (the binding joint and ratio, or why no timing exists).
        trajectory: the retimed trajectory (``RETIME``); None otherwise (``FORWARD``
            sends the input as it came).
        peak_ratio_before: largest |τ|/τ_max of the input at its points.
        peak_ratio_after: the same of what is executed (NaN when refused).
        duration_before: the input's duration [s].
        duration_after: the executed duration [s] (NaN when refused).
        elapsed: time the decision took [s].
    """

    action: str
    reason: str
    trajectory: Trajectory | None
    peak_ratio_before: float
    peak_ratio_after: float
    duration_before: float
    duration_after: float
    elapsed: float

    def describe(self) -> str:
        """One log line, e.g. ``retime: ... 1.000 s -> 1.412 s, peak |tau|/tau_max ...``."""
        timing = (f"{self.duration_before:.3f} s" if self.action != RETIME else
                  f"{self.duration_before:.3f} s -> {self.duration_after:.3f} s")
        return (f"{self.action}: {self.reason} ({timing}, decided in "
                f"{1e3 * self.elapsed:.0f} ms)")


def gate_trajectory(
    model: RobotModel,
    trajectory: Trajectory,
    theta: npt.ArrayLike,
    options: GateOptions = GateOptions(),
    default_positions: npt.ArrayLike | Mapping[str, float] | None = None,
) -> GateDecision:
    """Forward, retime or refuse ``trajectory`` under the inertial parameters ``theta``.

    Args:
        model: the arm (URDF effort, velocity and position limits).
        trajectory: the trajectory to execute; its joints may be a subset of the model's.
        theta: Θ of the arm with the payload it carries now, (N, 10), eq. (7) order
            about each body origin [kg, kg·m, kg·m²]; constant along the motion.
        options: the limits and the retiming budget.
        default_positions: positions of the joints the trajectory does not list, (nv,)
            or a mapping [rad or m]; None = 0.

    Returns:
        A :class:`GateDecision`.

    Raises:
        UnknownNameError: a trajectory joint the model does not have.
        InvalidInputError: malformed arrays.
    """
    started = time.perf_counter()
    theta = model.check_theta(theta)
    before = evaluate(model, trajectory, None, theta=theta, default_positions=default_positions,
                      compute_max_payload=False, ratio_tolerance=options.ratio_tolerance)
    duration = float(trajectory.time_from_start[-1] - trajectory.time_from_start[0])
    peak = _peak(before.effort_ratio)
    over = _over_limits(model, before.effort_ratio, before.velocities, before.accelerations,
                        options)
    if over is None:
        return GateDecision(FORWARD, f"within the limits (peak |tau|/tau_max {peak:.3f})", None,
                            peak, peak, duration, duration, time.perf_counter() - started)
    if options.method == "uniform":
        return _uniform(model, trajectory, before, theta, options, default_positions,
                        over, started)
    from robot_tv_dynamics.retiming.options import RetimeOptions
    from robot_tv_dynamics.retiming.solve import retime_checked

    try:
        result = retime_checked(model, trajectory, theta, RetimeOptions(
            default_positions=default_positions, effort_margin=options.effort_margin,
            velocity_scale=options.velocity_scale,
            acceleration_limits=options.acceleration_limit, gridpoints=int(options.gridpoints),
            max_iterations=int(options.max_iterations),
            ratio_tolerance=options.ratio_tolerance, compare_uniform=False,
            verify_playback=options.verify_playback))
    except (StaticHoldingError, RetimingError, InvalidInputError) as error:
        return GateDecision(REFUSE, f"{over}; no timing keeps the limits: {error}", None, peak,
                            math.nan, duration, math.nan, time.perf_counter() - started)
    except RobotTvDynamicsError as error:  # anything else the retiming refuses
        return GateDecision(REFUSE, f"{over}; the retiming failed: {error}", None, peak,
                            math.nan, duration, math.nan, time.perf_counter() - started)
    after = float(np.nanmax(result.peak_ratio, initial=0.0))
    played = float(np.nanmax(result.peak_ratio_playback, initial=0.0))
    if options.verify_playback and played > 1.0 + options.ratio_tolerance:
        # TOPP-RA's tightening stopped short of the playback: the uniform slowdown, which
        # holds the playback by construction, is executed instead (and says why)
        return _uniform(model, trajectory, before, theta, options, default_positions,
                        f"{over}; the time-optimal timing plays at peak |tau|/tau_max "
                        f"{played:.3f} between its points", started)
    return GateDecision(RETIME, f"{over}; retimed to peak |tau|/tau_max {after:.3f}",
                        result.trajectory, peak, after, duration, result.duration,
                        time.perf_counter() - started)


def _uniform(model: RobotModel, trajectory: Trajectory, before: TrajectoryEvaluation,
             theta: Array, options: GateOptions,
             default_positions: npt.ArrayLike | Mapping[str, float] | None, over: str,
             started: float) -> GateDecision:
    """The decision of the uniform slowdown (``over``: why the input needs one)."""
    duration = float(trajectory.time_from_start[-1] - trajectory.time_from_start[0])
    peak = _peak(before.effort_ratio)
    try:
        out, k, after = _slow_down(model, trajectory, before, theta, options,
                                   default_positions)
    except (StaticHoldingError, RetimingError) as error:
        return GateDecision(REFUSE, f"{over}; no timing keeps the limits: {error}", None,
                            peak, math.nan, duration, math.nan, time.perf_counter() - started)
    return GateDecision(RETIME, f"{over}; slowed down uniformly by {k:.3f} (peak "
                        f"|tau|/tau_max {after:.3f})", out, peak, after, duration,
                        duration * k, time.perf_counter() - started)


def _slow_down(model: RobotModel, trajectory: Trajectory, before: TrajectoryEvaluation,
               theta: Array, options: GateOptions,
               default_positions: npt.ArrayLike | Mapping[str, float] | None
               ) -> tuple[Trajectory, float, float]:
    """The input slowed down by the smallest k within the limits, k, and its verified peak.

    Raises:
        StaticHoldingError: some sample cannot be held at rest.
        RetimingError: the scaled points fail the verification by evaluate.
    """
    effort = np.asarray(model.joint_limits.effort, dtype=np.float64) * options.effort_margin
    velocity = np.asarray(model.joint_limits.velocity, dtype=np.float64) * options.velocity_scale
    limits = UniformLimits(
        np.where(effort > 0.0, effort, np.nan), np.where(velocity > 0.0, velocity, np.inf),
        np.full(model.nv, np.inf if options.acceleration_limit is None
                else options.acceleration_limit))
    samples = Trajectory(tuple(model.joint_names), before.t, before.positions,
                         before.velocities, before.accelerations)
    if options.verify_playback and trajectory.velocities is not None and samples.n_points > 1:
        samples = controller_playback(samples, PLAYBACK_SAMPLES)
    held = before.positions[0]
    k = uniform_factor(model, samples, theta, limits, held) * (1.0 + 1e-9)
    out = scaled(trajectory, k)
    check = evaluate(model, out, None, theta=theta, default_positions=default_positions,
                     compute_max_payload=False)
    after = _peak(check.effort_ratio)
    if after > options.effort_margin + options.ratio_tolerance:
        raise RetimingError(f"the uniform slowdown by {k:.4g} still reaches {after:.4g} x an "
                            "effort limit at its points")
    return out, k, after


def _peak(ratio: Array) -> float:
    return float(np.max(np.nan_to_num(ratio, nan=0.0), initial=0.0))


def _over_limits(model: RobotModel, effort_ratio: Array, qd: Array, qdd: Array,
                 options: GateOptions) -> str | None:
    """What the trajectory exceeds (the worst joint), or None when it keeps every limit."""
    names = model.joint_names
    ratio = np.nan_to_num(effort_ratio, nan=0.0)
    if np.any(ratio > options.effort_margin + options.ratio_tolerance):
        k, i = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        return (f'joint "{names[int(i)]}" needs {ratio[k, i]:.3f} x its effort limit at point '
                f"{int(k)} (allowed {options.effort_margin:g})")
    limit = np.asarray(model.joint_limits.velocity, dtype=np.float64) * options.velocity_scale
    with np.errstate(divide="ignore", invalid="ignore"):
        v_ratio = np.where(limit > 0.0, np.abs(qd) / limit, 0.0)
    if np.any(v_ratio > 1.0 + options.ratio_tolerance):
        k, i = np.unravel_index(int(np.argmax(v_ratio)), v_ratio.shape)
        return (f'joint "{names[int(i)]}" moves at {v_ratio[k, i]:.3f} x its velocity limit '
                f"(scaled by {options.velocity_scale:g}) at point {int(k)}")
    if options.acceleration_limit is not None:
        a_ratio = np.abs(qdd) / options.acceleration_limit
        if np.any(a_ratio > 1.0 + options.ratio_tolerance):
            k, i = np.unravel_index(int(np.argmax(a_ratio)), a_ratio.shape)
            return (f'joint "{names[int(i)]}" accelerates at {a_ratio[k, i]:.3f} x the '
                    f"acceleration limit at point {int(k)}")
    return None
