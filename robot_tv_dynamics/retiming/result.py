"""The record :func:`~robot_tv_dynamics.retiming.solve.retime` returns, and its checks.

Everything reported about the retimed motion is measured by
:func:`robot_tv_dynamics.evaluation.evaluate` on the output (eq. (39) point by point,
the loading process sampled at the output's own times), independently of the
coefficients the TOPP-RA constraint was built from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from robot_tv_dynamics.evaluation import Load, Trajectory, TrajectoryEvaluation, evaluate
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel

if TYPE_CHECKING:  # pragma: no cover - timing imports TOPP-RA (through path)
    from robot_tv_dynamics.retiming.timing import TimeLaw

#: A constraint counts as active where its ratio reaches this fraction of its limit.
ACTIVE_FRACTION = 0.98


@dataclass(frozen=True)
class LoadSchedule:
    """The load the last TOPP-RA solve used, per gridpoint (the documented mapping).

    Attributes:
        s: gridpoints (G,) [rad or m].
        process_time: process time at which the load was evaluated, (G,) [s]
            (time-indexed: the previous timing's t(s) + time_offset; path-indexed: the
            input's time_from_start at s + time_offset); NaN for a constant load.
        time: the final timing's t(s_j), (G,) [s].
        mass: load mass used at s_j, (G,) [kg].
    """

    s: Array
    process_time: Array
    time: Array
    mass: Array


@dataclass(frozen=True)
class UniformScaling:
    """The slowest-joint uniform time scaling t → k t of the input that meets the limits.

    Attributes:
        factor: the smallest k found (bisection to 1e-4 relative); None if none ≤ 100.
        duration: k × the input's duration [s] (None with ``factor``).
    """

    factor: float | None
    duration: float | None


@dataclass(frozen=True)
class RetimeResult:
    """A retimed trajectory and what was checked about it.

    Attributes:
        trajectory: the retimed motion, same joints and path as the input.
        timing: the time law s(t) along the path (TOPP-RA's, or its smoothed version).
        duration_before: the input's duration [s].
        duration_after: the output's duration [s].
        joint_names: the model's joints (order of every per-joint array).
        effort_limit: τ_max of the URDF, (nv,); NaN where none.
        effort_margin: the requested margin (|τ| ≤ margin × τ_max).
        peak_ratio_before: peak |τ|/τ_max of the input per joint (evaluate), (nv,).
        peak_ratio_after: peak |τ|/τ_max of the output per joint, from evaluate on a
            dense sampling of the time law (its breakpoints and the midpoints between
            them) and on the output points, (nv,).
        peak_ratio_playback: peak |τ|/τ_max of the quintic Hermite playback of the output
            (what a trajectory controller plays between its points), (nv,); NaN when not
            verified. A value over the margin comes with a warning.
        peak_velocity_ratio_after: peak |q̇|/q̇_max per joint (URDF limit, unscaled), (nv,).
        active: kind ("effort", "velocity", "acceleration") → joint → fraction of the
            dense samples where the limit TOPP-RA was given (effort: ``effort_factor`` ×
            τ_max; velocity: as scaled) is ≥ 98 % used.
        uniform: the uniform slowdown that meets the same limits (None if not computed).
        iterations: TOPP-RA solves (load-schedule iterations plus verification passes).
        load_converged: whether the time-indexed load schedule reached a fixed point
            (True for a constant load).
        timing_change: max |Δt(s)| between the last two schedules [s] (0 if constant).
        effort_factor: the fraction of τ_max TOPP-RA was finally given per joint, (nv,)
            (the margin, tightened where the verification found a discretization overshoot).
        schedule: the load per gridpoint of the last solve.
        load: the load as the output meets it over time (what the verification gave
            evaluate): the payload or process itself, or its path-indexed view.
        before: evaluate on the input trajectory.
        before_path_position: s of each input point, (K_in,) [rad or m].
        before_path_speed: the input's ṡ at each point, (K_in,) [per s].
        evaluation: evaluate on the output trajectory.
        verification: evaluate on the dense sampling.
        runtime: wall time of the whole retime [s].
        notes: how the input was read and what was assumed.
        warnings: what looks wrong.
    """

    trajectory: Trajectory
    timing: TimeLaw
    duration_before: float
    duration_after: float
    joint_names: tuple[str, ...]
    effort_limit: Array
    effort_margin: float
    peak_ratio_before: Array
    peak_ratio_after: Array
    peak_ratio_playback: Array
    peak_velocity_ratio_after: Array
    active: Mapping[str, Mapping[str, float]]
    uniform: UniformScaling | None
    iterations: int
    load_converged: bool
    timing_change: float
    effort_factor: Array
    schedule: LoadSchedule
    load: Load | None
    before: TrajectoryEvaluation
    before_path_position: Array
    before_path_speed: Array
    evaluation: TrajectoryEvaluation
    verification: TrajectoryEvaluation
    runtime: float
    notes: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def within_limits(self) -> bool:
        """Whether the verified peak ratios are within the margin (+ 1e-3)."""
        return bool(np.all(np.nan_to_num(self.peak_ratio_after) <= self.effort_margin + 1e-3))

    @property
    def binding(self) -> str:
        """The constraint used most along the path, e.g. ``"effort panda_joint2"``."""
        best, text = -1.0, "none"
        for kind, joints in self.active.items():
            for joint, fraction in joints.items():
                if fraction > best:
                    best, text = fraction, f"{kind} {joint}"
        return text

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (None for NaN)."""
        names = list(self.joint_names)
        return {
            "duration_before": self.duration_before,
            "duration_after": self.duration_after,
            "speedup": self.duration_before / self.duration_after,
            "points": self.trajectory.n_points,
            "effort_margin": self.effort_margin,
            "within_limits": self.within_limits,
            "effort_limits": _per_joint(names, self.effort_limit),
            "peak_ratio_before": _per_joint(names, self.peak_ratio_before),
            "peak_ratio_after": _per_joint(names, self.peak_ratio_after),
            "peak_ratio_playback": _per_joint(names, self.peak_ratio_playback),
            "peak_velocity_ratio_after": _per_joint(names, self.peak_velocity_ratio_after),
            "active_constraints": {kind: dict(joints) for kind, joints in self.active.items()},
            "binding_constraint": self.binding,
            "uniform_scaling_factor": None if self.uniform is None else self.uniform.factor,
            "uniform_scaling_duration": None if self.uniform is None else self.uniform.duration,
            "iterations": self.iterations,
            "load_converged": self.load_converged,
            "timing_change": self.timing_change,
            "effort_factor": _per_joint(names, self.effort_factor),
            "runtime": self.runtime,
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }


def _per_joint(names: list[str], values: Array) -> dict[str, float | None]:
    return {name: (None if not math.isfinite(float(v)) else float(v))
            for name, v in zip(names, values, strict=True)}


def active_fractions(
    model: RobotModel, verification: TrajectoryEvaluation, effort_factor: Array,
    velocity_limit: Array, acceleration_limit: Array,
) -> dict[str, dict[str, float]]:
    """Where each limit TOPP-RA was given is ≥ 98 % used on the dense sampling.

    Args:
        model: the arm.
        verification: evaluate on the dense sampling.
        effort_factor: the effort limit given to TOPP-RA as a fraction of τ_max, (nv,)
            (the margin, tightened for playback or discretization overshoot).
        velocity_limit: the velocity limit used per model joint, (nv,) (inf = none).
        acceleration_limit: the acceleration limit used per model joint (inf = none).
    """
    out: dict[str, dict[str, float]] = {"effort": {}, "velocity": {}, "acceleration": {}}
    ratios = {
        "effort": np.nan_to_num(verification.effort_ratio, nan=0.0) / effort_factor,
        "velocity": np.abs(verification.velocities) / velocity_limit,
        "acceleration": np.abs(verification.accelerations) / acceleration_limit,
    }
    for kind, ratio in ratios.items():
        used = np.mean(ratio >= ACTIVE_FRACTION, axis=0)
        for i, name in enumerate(model.joint_names):
            if used[i] > 0.0:
                out[kind][name] = float(used[i])
    return out


def uniform_scaling(
    model: RobotModel, trajectory: Trajectory, load: Load | None, margin: float,
    velocity_limit: Array, acceleration_limit: Array, evaluate_kwargs: Mapping[str, Any],
) -> UniformScaling:
    """The smallest k with the input scaled in time by k within the same limits.

    t → k t, q̇ → q̇/k, q̈ → q̈/k²; feasibility is checked by evaluate (effort, with the
    loading process at the scaled times) and by the velocity and acceleration limits.
    For a constant load the feasible k form an interval [k*, ∞) (τ = G + (τ₁ − G)/k²
    per point), so bisection finds k*.
    """
    def feasible(k: float) -> bool:
        scaled = Trajectory(
            trajectory.joint_names, trajectory.time_from_start * k, trajectory.positions,
            None if trajectory.velocities is None else trajectory.velocities / k,
            None if trajectory.accelerations is None else trajectory.accelerations / k**2)
        result = evaluate(model, scaled, load, compute_max_payload=False, **evaluate_kwargs)
        if np.any(np.nan_to_num(result.effort_ratio) > margin + 1e-9):
            return False
        qd, qdd = result.velocities, result.accelerations
        return bool(np.all(np.abs(qd) <= velocity_limit * (1 + 1e-9))
                    and np.all(np.abs(qdd) <= acceleration_limit * (1 + 1e-9)))

    low, high = 0.01, 1.0
    while not feasible(high):
        low, high = high, high * 2.0
        if high > 100.0:
            return UniformScaling(None, None)
    if feasible(low):
        return UniformScaling(low, low * float(trajectory.time_from_start[-1]
                                               - trajectory.time_from_start[0]))
    while high / low > 1.0 + 1e-4:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if feasible(middle) else (middle, high)
    duration = float(trajectory.time_from_start[-1] - trajectory.time_from_start[0])
    return UniformScaling(high, high * duration)
