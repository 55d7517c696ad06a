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
        max_velocity_scaling_factor: v₀/k' with k' = max(k, v₀, √a₀) (None with
            ``factor``): what to give MoveIt's MotionPlanRequest for the input's path.
        max_acceleration_scaling_factor: a₀/k'² likewise.
        moveit_scaling: (v₀, a₀), the factors the input was parameterized with.
    """

    factor: float | None
    duration: float | None
    max_velocity_scaling_factor: float | None = None
    max_acceleration_scaling_factor: float | None = None
    moveit_scaling: tuple[float, float] = (1.0, 1.0)

    @classmethod
    def of(cls, factor: float | None, duration: float,
           moveit_scaling: tuple[float, float] = (1.0, 1.0)) -> UniformScaling:
        """The record of the smallest feasible k (None: none) for an input of ``duration`` [s].

        MoveIt takes scaling factors in (0, 1]: k' = max(k, v₀, √a₀) keeps both ≤ 1 (an
        input slower than needed gets (1, 1) at most, not a speed-up beyond MoveIt's
        limits).
        """
        v0, a0 = moveit_scaling
        if factor is None:
            return cls(None, None, None, None, (v0, a0))
        capped = max(factor, v0, math.sqrt(a0))
        return cls(factor, factor * duration, v0 / capped, a0 / capped**2, (v0, a0))


@dataclass(frozen=True)
class BindingConstraint:
    """The limit the retimed motion uses most, with its ratio before and after.

    Attributes:
        kind: ``"effort"``, ``"velocity"`` or ``"acceleration"``; ``"none"`` when no limit
            is ≥ 98 % used anywhere (then ``joint`` is ``""`` and the ratios are NaN).
        joint: the joint it acts on.
        fraction: share of the dense samples of the output where it is ≥ 98 % used.
        ratio_before: its peak on the input, at the input's points: |τ|/τ_max (effort,
            the URDF limit), |q̇|/q̇_max (velocity, the URDF limit, unscaled) or
            |q̈|/q̈_max (acceleration, the limit given).
        ratio_after: the same peak on the output: effort on the dense sampling of the
            time law and the output points (:attr:`RetimeResult.peak_ratio_after`),
            velocity and acceleration on the dense sampling.
        bound: what the retiming kept it to, as a ratio of the same limit: the effort
            margin, the velocity scale, or 1 for an acceleration limit.
    """

    kind: str
    joint: str
    fraction: float
    ratio_before: float
    ratio_after: float
    bound: float

    def describe(self) -> str:
        """One line, e.g. ``velocity shoulder_pan_joint: |qd|/qd_max 0.81 -> 1.00``."""
        if self.kind == "none":
            return "none (no limit is reached)"
        symbol = {"effort": "|tau|/tau_max", "velocity": "|qd|/qd_max",
                  "acceleration": "|qdd|/qdd_max"}[self.kind]
        return (f"{self.kind} {self.joint}: {symbol} {self.ratio_before:.4f} before -> "
                f"{self.ratio_after:.4f} after (kept to {self.bound:g}; at the limit on "
                f"{100 * self.fraction:.0f} % of the motion)")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (None for NaN)."""
        def number(value: float) -> float | None:
            return float(value) if math.isfinite(value) else None
        return {"kind": self.kind, "joint": self.joint or None, "fraction": self.fraction,
                "ratio_before": number(self.ratio_before),
                "ratio_after": number(self.ratio_after), "bound": self.bound}


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
        velocity_limit: q̇_max of the URDF per joint, (nv,) (None: not known).
        velocity_scale: the fraction of it the retiming kept to.
        acceleration_limit: the |q̈| limit per joint, (nv,) (inf: none; None: not known).
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
    velocity_limit: Array | None = None
    velocity_scale: float = 1.0
    acceleration_limit: Array | None = None

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

    @property
    def binding_constraint(self) -> BindingConstraint:
        """:attr:`binding` with its peak ratio on the input and on the output."""
        kind, _, joint = self.binding.partition(" ")
        if kind not in ("effort", "velocity", "acceleration"):
            return BindingConstraint("none", "", 0.0, math.nan, math.nan, math.nan)
        i = self.joint_names.index(joint)
        fraction = float(self.active[kind][joint])
        if kind == "effort":
            return BindingConstraint(kind, joint, fraction, float(self.peak_ratio_before[i]),
                                     float(self.peak_ratio_after[i]), self.effort_margin)
        limits = self.velocity_limit if kind == "velocity" else self.acceleration_limit
        limit = math.nan if limits is None else float(limits[i])
        if not limit > 0.0:
            limit = math.nan
        before = self.before.velocities if kind == "velocity" else self.before.accelerations
        after = (self.verification.velocities if kind == "velocity"
                 else self.verification.accelerations)
        return BindingConstraint(
            kind, joint, fraction, float(np.max(np.abs(before[:, i]))) / limit,
            float(np.max(np.abs(after[:, i]))) / limit,
            self.velocity_scale if kind == "velocity" else 1.0)

    @property
    def max_effort_ratio(self) -> float:
        """Largest |τ|/τ_max of the output: dense samples, points and what is played."""
        values = np.concatenate([self.peak_ratio_after, self.peak_ratio_playback])
        values = values[np.isfinite(values)]
        return float(np.max(values)) if values.size else 0.0

    def saturating(self) -> list[dict[str, Any]]:
        """Where a limit is reached: one entry per joint and stretch of ≥ 98 % use.

        Each entry: ``joint``, ``t`` (time of the stretch's peak [s]), ``kind``
        (``"effort"`` against margin × τ_max, or ``"velocity"`` against the scaled
        limit), ``ratio`` (the peak of |τ|/τ_max or |q̇|/q̇_max there), sorted by t.
        """
        check = self.verification
        t = check.t
        limit = (np.full(len(self.joint_names), np.nan) if self.velocity_limit is None
                 else np.asarray(self.velocity_limit, dtype=np.float64))
        limit_v = np.where(limit > 0, limit, np.nan)
        out: list[dict[str, Any]] = []
        series = (("effort", np.nan_to_num(check.effort_ratio), self.effort_margin),
                  ("velocity", np.nan_to_num(np.abs(check.velocities) / limit_v),
                   self.velocity_scale))
        for kind, ratio, bound in series:
            for i, joint in enumerate(self.joint_names):
                used = ratio[:, i] >= ACTIVE_FRACTION * bound
                edges = np.flatnonzero(np.diff(np.concatenate([[0], used.astype(int), [0]])))
                for start, stop in zip(edges[::2], edges[1::2], strict=True):
                    k = start + int(np.argmax(ratio[start:stop, i]))
                    out.append({"joint": joint, "t": float(t[k]), "kind": kind,
                                "ratio": float(ratio[k, i])})
        return sorted(out, key=lambda entry: entry["t"])

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (None for NaN)."""
        names = list(self.joint_names)
        uniform = self.uniform
        return {
            "duration_in": self.duration_before,
            "duration_out": self.duration_after,
            "duration_uniform_scaling": None if uniform is None else uniform.duration,
            "max_effort_ratio": self.max_effort_ratio,
            "scaling": {
                "max_velocity_scaling_factor":
                    None if uniform is None else uniform.max_velocity_scaling_factor,
                "max_acceleration_scaling_factor":
                    None if uniform is None else uniform.max_acceleration_scaling_factor,
                "input_scaling": None if uniform is None else list(uniform.moveit_scaling),
            },
            "saturating": self.saturating(),
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
            "binding": self.binding_constraint.as_dict(),
            "uniform_scaling_factor": None if uniform is None else uniform.factor,
            "uniform_scaling_duration": None if uniform is None else uniform.duration,
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
    moveit_scaling: tuple[float, float] = (1.0, 1.0),
) -> UniformScaling:
    """The smallest k with the input scaled in time by k within the same limits.

    t → k t, q̇ → q̇/k, q̈ → q̈/k². Feasibility is checked by evaluate (exact eq. (39),
    the loading process at the scaled times) at the input's points **and between them**
    — on what joint_trajectory_controller plays between the points (quintic with
    accelerations, cubic with velocities only,
    :func:`~robot_tv_dynamics.retiming.playback.controller_playback`; its time scaling
    is the scaled playback) — and by the velocity and acceleration limits there. For a
    constant load the feasible k form an interval [k*, ∞) (τ = G + (τ₁ − G)/k² per
    point), so bisection finds k*. A MoveIt time parameterization (TOTG, Ruckig without
    a jerk limit) scaled by (v₀/k, a₀/k²) instead of (v₀, a₀) is this time scaling by k,
    which is why the factors are reported from it.
    """
    from robot_tv_dynamics.retiming.playback import controller_playback

    between = trajectory
    if trajectory.velocities is not None and trajectory.n_points > 1:
        between = controller_playback(trajectory, 6)

    def scaled(base: Trajectory, k: float) -> Trajectory:
        return Trajectory(
            base.joint_names, base.time_from_start * k, base.positions,
            None if base.velocities is None else base.velocities / k,
            None if base.accelerations is None else base.accelerations / k**2)

    def feasible(k: float) -> bool:
        for base in ((trajectory, between) if between is not trajectory else (trajectory,)):
            result = evaluate(model, scaled(base, k), load, compute_max_payload=False,
                              **evaluate_kwargs)
            if np.any(np.nan_to_num(result.effort_ratio) > margin + 1e-9):
                return False
            qd, qdd = result.velocities, result.accelerations
            if not (np.all(np.abs(qd) <= velocity_limit * (1 + 1e-9))
                    and np.all(np.abs(qdd) <= acceleration_limit * (1 + 1e-9))):
                return False
        return True

    duration = float(trajectory.time_from_start[-1] - trajectory.time_from_start[0])
    low, high = 0.01, 1.0
    while not feasible(high):
        low, high = high, high * 2.0
        if high > 100.0:
            return UniformScaling.of(None, duration, moveit_scaling)
    if feasible(low):
        return UniformScaling.of(low, duration, moveit_scaling)
    while high / low > 1.0 + 1e-4:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if feasible(middle) else (middle, high)
    return UniformScaling.of(high, duration, moveit_scaling)
