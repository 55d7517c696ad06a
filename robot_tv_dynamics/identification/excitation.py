r"""Exciting trajectories: a finite Fourier series per joint (Swevers et al. 1997).

.. math::
    q_i(t) = q_{c,i} + \sum_{k=1}^{K} a_{ik} \sin(k ω t) + b_{ik} \cos(k ω t),
    \qquad ω = 2π f_0

periodic with period 1/f_0. The coefficients are constrained so that the arm starts and
ends at rest: q̇_i(0) = ω Σ_k k a_ik = 0 and q̈_i(0) = −ω² Σ_k k² b_ik = 0 (a projection
of each coefficient vector). The designed duration is a whole number of periods (the
requested one rounded up), so the trajectory ends at rest too, at the start pose.

Limits (the URDF's), each used only up to a fraction (``scale``):

* position: |q_i − q_c,i| ≤ scale · min(half range, ``max_excursion``), q_c the middle
  of the range;
* velocity: |q̇_i| ≤ scale · velocity limit;
* effort: |τ_i| ≤ scale · effort limit, τ of eq. (39) for the URDF's Θ.

Candidate coefficients (random, amplitudes ∝ 1/k) are scaled per joint to the position
and velocity limits, then uniformly until the effort limit holds (bisection), and scored
by the condition number of the column-normalized stacked regressor (inertial and
friction columns, the structural rank of :func:`~.regressor.structural_rank`). The best
of ``candidates`` random draws is refined by ``iterations`` random perturbations
(accepted when the condition number drops). The search computes τ with Pinocchio's RNEA;
the final trajectory is checked on its output grid with ``RobotModel.inverse_dynamics``.
Self-collisions and the workspace are NOT checked.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.identification import regressor as regressors
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel


@dataclass(frozen=True)
class FourierTrajectory:
    """q(t) of the module docstring.

    Attributes:
        base_frequency: f_0 [Hz].
        center: q_c (n,) [rad or m].
        a: sine amplitudes (n, K) [rad or m].
        b: cosine amplitudes (n, K) [rad or m].
    """

    base_frequency: float
    center: Array
    a: Array
    b: Array

    def evaluate(self, t: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """q, q̇, q̈ at times t (M,) → three (M, n) arrays."""
        t = np.asarray(t, dtype=np.float64).reshape(-1)
        w = 2.0 * math.pi * self.base_frequency
        k = np.arange(1, self.a.shape[1] + 1)
        phase = w * np.outer(t, k)  # (M, K)
        s, c = np.sin(phase), np.cos(phase)
        q = self.center + s @ self.a.T + c @ self.b.T
        qd = (c * (w * k)) @ self.a.T - (s * (w * k)) @ self.b.T
        qdd = -(s * (w * k) ** 2) @ self.a.T - (c * (w * k) ** 2) @ self.b.T
        return q, qd, qdd

    def scaled(self, factor: npt.ArrayLike) -> FourierTrajectory:
        """The same shape with amplitudes multiplied by ``factor`` (scalar or (n,))."""
        f = np.asarray(factor, dtype=np.float64).reshape(-1, 1) * np.ones((self.a.shape[0], 1))
        return FourierTrajectory(self.base_frequency, self.center, self.a * f, self.b * f)


@dataclass(frozen=True)
class LimitScales:
    """Fractions of the URDF limits a trajectory may use.

    Attributes:
        position: of the half range about the middle (and of ``max_excursion``).
        velocity: of the velocity limit.
        effort: of the effort limit.
        max_excursion: largest excursion from the middle [rad or m].
    """

    position: float = 0.8
    velocity: float = 0.8
    effort: float = 0.8
    max_excursion: float = math.pi / 2

    def __post_init__(self) -> None:
        """Validate the fractions.

        Raises:
            InvalidInputError: a fraction outside (0, 1] or a non-positive excursion.
        """
        for name in ("position", "velocity", "effort"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0.0 < value <= 1.0):
                raise InvalidInputError(f"{name} scale", f"must be in (0, 1], got {value}")
        if not self.max_excursion > 0:
            raise InvalidInputError("max_excursion", f"must be > 0, got {self.max_excursion}")


@dataclass(frozen=True)
class ExcitationDesign:
    """The chosen trajectory and its figures.

    Attributes:
        trajectory: the Fourier series.
        duration: length of the sampled trajectory [s].
        condition_number: of the column-normalized stacked regressor on the output grid.
        rank: structural rank used (base parameters incl. friction).
        peak_ratios: max over the output grid of |q − q_c|/allowed excursion, |q̇|/limit,
            |τ|/limit per joint, as a (3, n) array (rows position, velocity, effort);
            all ≤ 1 (τ from ``RobotModel.inverse_dynamics``).
        evaluations: candidate trajectories scored.
    """

    trajectory: FourierTrajectory
    duration: float
    condition_number: float
    rank: int
    peak_ratios: Array
    evaluations: int


def project_to_rest(a: Array, b: Array) -> tuple[Array, Array]:
    """Project each joint's coefficients onto Σ k a_k = 0 and Σ k² b_k = 0 (rest at t = 0).

    Args:
        a: sine amplitudes (n, K) [rad or m].
        b: cosine amplitudes (n, K) [rad or m].

    Returns:
        (a, b) projected: q̇(0) = 0 and q̈(0) = 0 (module docstring).

    Raises:
        InvalidInputError: fewer than 2 harmonics.
    """
    k = np.arange(1, a.shape[1] + 1, dtype=np.float64)
    if a.shape[1] < 2:
        raise InvalidInputError("harmonics", "starting at rest needs at least 2 harmonics")
    a = a - np.outer(a @ k, k) / (k @ k)
    k2 = k ** 2
    b = b - np.outer(b @ k2, k2) / (k2 @ k2)
    return a, b


class TrajectoryLimits:
    """Peak ratios of a trajectory against the scaled limits (RNEA on a fixed grid).

    Shared by :func:`design_excitation` and the payload-only design of
    :mod:`robot_tv_dynamics.estimation.payload_excitation`.
    """

    def __init__(self, model: RobotModel, scales: LimitScales, times: Array) -> None:
        """Scaled limits of ``model`` checked on the grid ``times`` (M,) [s]."""
        limits = model.joint_limits
        self.model = model
        half = 0.5 * (limits.upper - limits.lower)
        self.center = 0.5 * (limits.upper + limits.lower)
        self.excursion = scales.position * np.minimum(half, scales.max_excursion)
        self.velocity = scales.velocity * np.where(limits.velocity > 0, limits.velocity, np.inf)
        self.effort = scales.effort * np.where(limits.effort > 0, limits.effort, np.inf)
        self.times = times
        self.continuous = bool(np.any(limits.continuous))
        self._data = model.pinocchio_model.createData()
        self._scales = scales

    def require_rest_within_effort(self) -> None:
        """Refuse limits that cannot even hold the arm still at the middle of the motion.

        Every trajectory moves about ``center`` and is scaled down until it meets the
        effort limit; when the gravity torque at rest there already exceeds the scaled
        limit, no scale is left (every candidate would shrink to nothing).

        Raises:
            InvalidInputError: naming the joint, its torque at rest, what is allowed and
                the smallest effort scale that holds it.
        """
        q = self.center
        q_pin = self.model.pinocchio_configuration(q) if self.continuous else q
        zero = np.zeros(self.model.nv)
        rest = np.abs(pin.rnea(self.model.pinocchio_model, self._data, q_pin, zero, zero))
        ratio = rest / self.effort
        worst = int(np.argmax(ratio))
        if ratio[worst] > 1.0:
            limit = self.effort[worst] / self._scales.effort
            unit = "N" if self.model.joint_limits.prismatic[worst] else "N·m"
            needed = math.ceil(100 * rest[worst] / limit) / 100
            remedy = (f"use an effort scale of at least {needed:.2f} (--effort-scale)"
                      if needed <= 1.0 else
                      "no effort scale can: the URDF's inertias or effort limits are wrong, "
                      "or the middle of the range is a pose the arm cannot hold")
            raise InvalidInputError("effort scale", (
                f"holding the arm at rest at the middle of the motion takes "
                f"{rest[worst]:.1f} {unit} at {self.model.joint_names[worst]}, above the "
                f"{self.effort[worst]:.1f} {unit} allowed ({self._scales.effort:g} of its "
                f"{limit:g} {unit} limit); {remedy}"))

    def kinematic(self, traj: FourierTrajectory) -> tuple[Array, Array]:
        """Peak |q − q_c| / excursion and |q̇| / velocity limit per joint, (n,) each."""
        q, qd, _ = traj.evaluate(self.times)
        return (np.abs(q - self.center).max(axis=0) / self.excursion,
                np.abs(qd).max(axis=0) / self.velocity)

    def torques(self, traj: FourierTrajectory) -> Array:
        """τ (M, n) on the grid for the URDF's Θ (Pinocchio's RNEA) [N·m, N]."""
        q, qd, qdd = traj.evaluate(self.times)
        pm, data, model = self.model.pinocchio_model, self._data, self.model
        out = np.empty_like(q)
        for k in range(q.shape[0]):
            q_pin = model.pinocchio_configuration(q[k]) if self.continuous else q[k]
            out[k] = pin.rnea(pm, data, q_pin, qd[k], qdd[k])
        return out

    def effort_ratio(self, traj: FourierTrajectory) -> float:
        """Peak |τ| / effort limit over the joints and the grid."""
        return float((np.abs(self.torques(traj)).max(axis=0) / self.effort).max())

    def fit(self, traj: FourierTrajectory) -> FourierTrajectory:
        """Scale per joint to the position/velocity limits, then uniformly to effort."""
        position, velocity = self.kinematic(traj)
        per_joint = 1.0 / np.maximum(np.maximum(position, velocity), 1e-12)
        return self.within_effort(traj.scaled(per_joint))

    def within_effort(self, traj: FourierTrajectory) -> FourierTrajectory:
        """``traj``, or it scaled uniformly by the largest factor found under the effort limit.

        The factor is bisected in [0, 1] (12 halvings); the lower end is kept.
        """
        if self.effort_ratio(traj) <= 1.0:
            return traj
        low, high = 0.0, 1.0
        for _ in range(12):
            mid = 0.5 * (low + high)
            if self.effort_ratio(traj.scaled(mid)) <= 1.0:
                low = mid
            else:
                high = mid
        return traj.scaled(low)


def _check_design(duration: float, harmonics: int, base_frequency: float, rate: float
                  ) -> None:
    """Refuse a non-positive duration, frequency or rate, or fewer than 2 harmonics."""
    for name, value in (("duration", duration), ("base_frequency", base_frequency),
                        ("rate", rate)):
        if not (math.isfinite(value) and value > 0):
            raise InvalidInputError(name, f"must be > 0, got {value}")
    if harmonics < 2:
        raise InvalidInputError("harmonics", f"must be >= 2, got {harmonics}")


def _within_limits(model: RobotModel, trajectory: FourierTrajectory, limits: TrajectoryLimits,
                   times: Array) -> tuple[FourierTrajectory, Array]:
    """The dense check with eq. (39) at ``times``: shrink (up to 20 times) until it passes.

    Returns:
        The trajectory and the peak ratios of the last check (a failure is rare).
    """
    for _ in range(20):
        ratios = peak_ratios(model, trajectory, times, limits)
        if ratios.max() <= 1.0:
            break
        trajectory = trajectory.scaled(0.98 / float(ratios.max()))
    return trajectory, ratios


def design_excitation(
    model: RobotModel,
    duration: float = 10.0,
    harmonics: int = 5,
    base_frequency: float = 0.1,
    scales: LimitScales | None = None,
    candidates: int = 24,
    iterations: int = 60,
    rate: float = 100.0,
    seed: int = 0,
    friction: str = "full",
    progress: Callable[[float], None] | None = None,
) -> ExcitationDesign:
    """Choose Fourier coefficients for a well-conditioned regressor within the limits.

    Args:
        model: the arm (URDF limits, URDF Θ for the effort check).
        duration: the shortest length of the output trajectory [s]; it is rounded up to a
            whole number of periods 1/f_0 (``ExcitationDesign.duration``), so that it
            ends at rest.
        harmonics: K ≥ 2.
        base_frequency: f_0 [Hz].
        scales: fractions of the limits; default 0.8 of each.
        candidates: random draws.
        iterations: refinement steps.
        rate: sampling rate of the output grid (and of the final limit check) [Hz].
        seed: random seed (reproducible designs).
        friction: friction terms included in the condition number.
        progress: called with the fraction of evaluations done.

    Returns:
        The :class:`ExcitationDesign`.

    Raises:
        InvalidInputError: non-positive duration, frequency or rate, K < 2.
    """
    scales = scales or LimitScales()
    _check_design(duration, harmonics, base_frequency, rate)
    rng = np.random.default_rng(seed)
    n = model.nv
    search_times = np.linspace(0.0, min(duration, 1.0 / base_frequency), 160, endpoint=False)
    limits = TrajectoryLimits(model, scales, search_times)
    limits.require_rest_within_effort()
    rank = regressors.structural_rank(model, friction)
    k = np.arange(1, harmonics + 1)
    total = candidates + iterations

    def score(traj: FourierTrajectory) -> float:
        q, qd, qdd = traj.evaluate(search_times)
        return regressors.excitation(model, q, qd, qdd, friction, rank).condition_number

    def draw(spread: float = 1.0, around: FourierTrajectory | None = None) -> FourierTrajectory:
        a = rng.standard_normal((n, harmonics)) / k
        b = rng.standard_normal((n, harmonics)) / k
        if around is not None:
            size = np.abs(around.a).max(axis=1, keepdims=True) + 1e-9
            a, b = around.a + spread * size * a, around.b + spread * size * b
        a, b = project_to_rest(a, b)
        return limits.fit(FourierTrajectory(base_frequency, limits.center, a, b))

    best: FourierTrajectory | None = None
    best_score = math.inf
    for i in range(total):
        candidate = draw() if i < candidates or best is None else draw(0.3, best)
        value = score(candidate)
        if value < best_score:
            best, best_score = candidate, value
        if progress is not None:
            progress((i + 1) / total)
    if best is None:  # every candidate scored inf (total >= 1 draws were made)
        raise InvalidInputError("candidates", "no candidate trajectory could be scored")
    periods = max(1, math.ceil(duration * base_frequency * (1.0 - 1e-12)))
    duration = periods / base_frequency
    times = output_times(duration, rate)
    trajectory, ratios = _within_limits(model, best, TrajectoryLimits(model, scales, times),
                                        times)
    q, qd, qdd = trajectory.evaluate(times)
    cond = regressors.excitation(model, q, qd, qdd, friction, rank).condition_number
    return ExcitationDesign(trajectory, duration, cond, rank, ratios, total)


def output_times(duration: float, rate: float) -> Array:
    """The output grid [s]: from 0 to ``duration`` inclusive, step ≈ 1/``rate``.

    The step is duration / round(duration · rate), so the last sample is at ``duration``
    exactly (the end of the last period, at rest).
    """
    steps = max(1, round(duration * rate))
    return np.linspace(0.0, duration, steps + 1)


def peak_ratios(model: RobotModel, trajectory: FourierTrajectory, times: Array,
                limits: TrajectoryLimits) -> Array:
    """(3, n) peak ratios on ``times``, τ from ``RobotModel.inverse_dynamics`` (eq. 39)."""
    q, qd, qdd = trajectory.evaluate(times)
    theta = model.theta_nominal
    tau = np.array([model.inverse_dynamics(q[k], qd[k], qdd[k], theta).tau
                    for k in range(times.size)])
    position, velocity = limits.kinematic(trajectory)
    return np.vstack([position, velocity, np.abs(tau).max(axis=0) / limits.effort])


def trajectory_dict(model: RobotModel, design: ExcitationDesign, rate: float) -> dict[str, Any]:
    """The JointTrajectory-shaped mapping ``evaluate`` reads, plus an ``excitation`` record."""
    times = output_times(design.duration, rate)
    q, qd, qdd = design.trajectory.evaluate(times)
    traj = design.trajectory
    return {
        "joint_names": list(model.joint_names),
        "points": [{"positions": q[k].tolist(), "velocities": qd[k].tolist(),
                    "accelerations": qdd[k].tolist(),
                    "time_from_start": round(float(times[k]), 9)} for k in range(times.size)],
        "excitation": {
            "kind": "fourier",
            "base_frequency": traj.base_frequency,
            "harmonics": int(traj.a.shape[1]),
            "center": traj.center.tolist(),
            "a": traj.a.tolist(),
            "b": traj.b.tolist(),
            "condition_number": design.condition_number,
            "rank": design.rank,
            "peak_ratios": {"position": design.peak_ratios[0].tolist(),
                            "velocity": design.peak_ratios[1].tolist(),
                            "effort": design.peak_ratios[2].tolist()},
        },
    }
