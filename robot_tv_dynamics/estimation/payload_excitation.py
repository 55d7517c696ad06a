r"""A short wrist motion that excites a load's 10 inertial parameters.

The payload routines of the UR and KUKA controllers move only the last joints for a few
seconds about a pose; so does this one. The wrist joints (the last ``wrist`` moving
joints) follow the finite Fourier series of
:mod:`~robot_tv_dynamics.identification.excitation` (starting and ending at rest, one
period = the duration), the other joints hold the middle of their range (or ``center``).
Each joint is scaled to its position range, velocity limit and an acceleration limit
(URDF files carry none: ``max_acceleration``), then uniformly until the effort limit
holds (eq. (39) with the URDF's Θ plus the expected load). The coefficients are chosen by
random search and refinement for the smallest condition number of the column-
normalized stacked load regressor R_b T (:class:`~.measurement.LoadMeasurement`, 10
columns): a finite number means the motion determines all 10 parameters of the load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.estimation.measurement import LoadMeasurement
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.identification.excitation import (
    ExcitationDesign,
    FourierTrajectory,
    LimitScales,
    TrajectoryLimits,
    peak_ratios,
    project_to_rest,
)
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel

#: default acceleration limit of every joint [rad/s²] (URDFs carry none).
DEFAULT_MAX_ACCELERATION = 5.0


@dataclass(frozen=True)
class PayloadExcitation:
    """The designed wrist motion.

    Attributes:
        design: the trajectory and its figures (``condition_number`` of the load
            regressor, ``rank`` 10, ``peak_ratios`` rows position, velocity, effort).
        joints: indices of the moving joints.
        acceleration_ratio: max |q̈|/``max_acceleration`` per joint (nv,).
    """

    design: ExcitationDesign
    joints: tuple[int, ...]
    acceleration_ratio: Array


def load_condition_number(model: RobotModel, link: str, q: Array, qd: Array, qdd: Array
                          ) -> float:
    """Condition number of the column-normalized stacked R_b T over the samples (K, nv)."""
    measurement = LoadMeasurement(model, link)
    rows = np.concatenate([measurement.regressor(q[k], qd[k], qdd[k]) @ measurement.transform
                           for k in range(q.shape[0])])
    norms = np.linalg.norm(rows, axis=0)
    if np.any(norms == 0):
        return math.inf
    s = np.linalg.svd(rows / norms, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else math.inf


def design_payload_excitation(
    model: RobotModel,
    link: str,
    *,
    duration: float = 4.0,
    wrist: int = 3,
    harmonics: int = 3,
    scales: LimitScales | None = None,
    max_acceleration: float = DEFAULT_MAX_ACCELERATION,
    center: npt.ArrayLike | None = None,
    candidates: int = 16,
    iterations: int = 30,
    rate: float = 100.0,
    seed: int = 0,
) -> PayloadExcitation:
    """Choose the wrist motion (module docstring).

    Args:
        model: the arm (URDF limits and Θ).
        link: the link carrying the load.
        duration: one period [s].
        wrist: number of moving joints, the last ones (1 … nv).
        harmonics: K ≥ 2 per joint.
        scales: fractions of the URDF limits; default 0.8.
        max_acceleration: |q̈| bound of every joint [rad/s² or m/s²], > 0.
        center: the pose held and moved about (nv,); default the middle of the ranges.
        candidates: random draws.
        iterations: refinement steps.
        rate: output sampling rate [Hz].
        seed: random seed.

    Returns:
        The :class:`PayloadExcitation`.

    Raises:
        InvalidInputError: a bad duration, joint count, limit, center; unknown link.
    """
    scales = scales or LimitScales()
    n = model.nv
    _check_design(model, link, duration=duration, max_acceleration=max_acceleration,
                  rate=rate, wrist=wrist, harmonics=harmonics, draws=candidates + iterations)
    search = np.linspace(0.0, duration, 80, endpoint=False)
    limits = TrajectoryLimits(model, scales, search)
    if center is not None:
        _center_limits(model, limits, scales, center)
    limits.require_rest_within_effort()
    moving = tuple(range(n - wrist, n))
    best = _WristSearch(model, link, limits, max_acceleration, moving, harmonics, duration,
                        seed).best(candidates, iterations)
    times = np.arange(0.0, duration + 0.5 / rate, 1.0 / rate)
    final = TrajectoryLimits(model, scales, times)
    final.center, final.excursion = limits.center, limits.excursion
    trajectory, ratios, acc = _within_limits(model, best, times, final, max_acceleration)
    q, qd, qdd = trajectory.evaluate(times)
    cond = load_condition_number(model, link, q, qd, qdd)
    design = ExcitationDesign(trajectory, float(times[-1]), cond, 10, ratios,
                              candidates + iterations)
    return PayloadExcitation(design, moving, acc)


class _WristSearch:
    """The random search of :func:`design_payload_excitation` (module docstring).

    A candidate's coefficients of harmonic k are drawn ~ N(0, 1/k²) for the moving joints
    (zero for the others), projected to start and end at rest and fitted to the limits
    (:meth:`fit`); its score is the load regressor's condition number on the grid
    ``limits.times``, lower is better.
    """

    def __init__(self, model: RobotModel, link: str, limits: TrajectoryLimits,
                 max_acceleration: float, moving: tuple[int, ...], harmonics: int,
                 duration: float, seed: int) -> None:
        """The search for the load on ``link``, the joints ``moving`` moving, one period [s]."""
        self.model, self.link, self.limits = model, link, limits
        self.max_acceleration = max_acceleration
        self.mask = np.zeros((model.nv, 1))
        self.mask[list(moving)] = 1.0
        self.harmonics = harmonics
        self.k = np.arange(1, harmonics + 1)
        self.base_frequency = 1.0 / duration
        self.rng = np.random.default_rng(seed)

    def fit(self, traj: FourierTrajectory) -> FourierTrajectory:
        """Scale per joint to the position range, velocity and acceleration limits, then to effort.

        The last step is uniform (:meth:`TrajectoryLimits.within_effort`).
        """
        limits = self.limits
        q, qd, qdd = traj.evaluate(limits.times)
        ratio = np.maximum.reduce([
            np.abs(q - limits.center).max(axis=0) / limits.excursion,
            np.abs(qd).max(axis=0) / limits.velocity,
            np.abs(qdd).max(axis=0) / self.max_acceleration])
        traj = traj.scaled(np.where(ratio > 0, 1.0 / np.maximum(ratio, 1e-12), 0.0))
        return limits.within_effort(traj)

    def draw(self, around: FourierTrajectory | None = None) -> FourierTrajectory:
        """A random candidate, or one about ``around`` (steps of 0.3 × its joint's largest a)."""
        n, harmonics, k = self.model.nv, self.harmonics, self.k
        a = self.rng.standard_normal((n, harmonics)) / k
        b = self.rng.standard_normal((n, harmonics)) / k
        if around is not None:
            size = np.abs(around.a).max(axis=1, keepdims=True) + 1e-9
            a, b = around.a + 0.3 * size * a, around.b + 0.3 * size * b
        a, b = project_to_rest(a * self.mask, b * self.mask)
        return self.fit(FourierTrajectory(self.base_frequency, self.limits.center, a, b))

    def score(self, traj: FourierTrajectory) -> float:
        """The condition number of the load regressor along ``traj``."""
        return load_condition_number(self.model, self.link, *traj.evaluate(self.limits.times))

    def best(self, candidates: int, iterations: int) -> FourierTrajectory:
        """The best of ``candidates`` random draws, then of ``iterations`` about the best."""
        best = self.draw()
        best_score = self.score(best)
        for i in range(1, candidates + iterations):
            candidate = self.draw(best if i >= candidates else None)
            value = self.score(candidate)
            if value < best_score:
                best, best_score = candidate, value
        return best


def _check_design(model: RobotModel, link: str, *, duration: float, max_acceleration: float,
                  rate: float, wrist: int, harmonics: int, draws: int) -> None:
    """Check the settings of :func:`design_payload_excitation` and the link.

    Raises:
        InvalidInputError: a setting out of range; the link's own error (unknown, fixed to
            the world).
    """
    for name, value in (("duration", duration), ("max_acceleration", max_acceleration),
                        ("rate", rate)):
        if not (math.isfinite(value) and value > 0):
            raise InvalidInputError(name, f"must be > 0, got {value}")
    if not 1 <= wrist <= model.nv:
        raise InvalidInputError("wrist", f"must be in 1 … {model.nv}, got {wrist}")
    if harmonics < 2:
        raise InvalidInputError("harmonics", f"must be >= 2, got {harmonics}")
    if draws < 1:
        raise InvalidInputError("candidates", "need at least one candidate")
    LoadMeasurement(model, link)


def _center_limits(model: RobotModel, limits: TrajectoryLimits, scales: LimitScales,
                   center: npt.ArrayLike) -> None:
    """Move ``limits`` about the user's ``center`` pose (its excursion to the nearer limit).

    Raises:
        InvalidInputError: not nv finite values strictly inside the joint limits.
    """
    n = model.nv
    c = np.asarray(center, dtype=np.float64).reshape(-1)
    lo, hi = model.joint_limits.lower, model.joint_limits.upper
    if c.shape != (n,) or not np.all(np.isfinite(c)) or np.any(c <= lo) or np.any(c >= hi):
        raise InvalidInputError("center", f"needs {n} finite values strictly inside "
                                "the joint limits")
    limits.center = c
    limits.excursion = scales.position * np.minimum(
        np.minimum(c - lo, hi - c), scales.max_excursion)


def _within_limits(model: RobotModel, trajectory: FourierTrajectory, times: Array,
                   limits: TrajectoryLimits, max_acceleration: float
                   ) -> tuple[FourierTrajectory, Array, Array]:
    """The trajectory scaled until the dense check holds, with its last ratios.

    The check: positions, velocities, efforts by eq. (39) (the peak ratios) and q̈ (the
    acceleration ratios), at ``times``.
    """
    for _ in range(20):
        ratios = peak_ratios(model, trajectory, times, limits)
        qdd = trajectory.evaluate(times)[2]
        acc = np.abs(qdd).max(axis=0) / max_acceleration
        worst = max(float(ratios.max()), float(acc.max()))
        if worst <= 1.0:
            break
        trajectory = trajectory.scaled(0.98 / worst)
    return trajectory, ratios, acc
