"""Settings of the load filter (:class:`~robot_tv_dynamics.estimation.load.LoadFilter`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from robot_tv_dynamics.estimation.change import ChangeDetectorConfig
from robot_tv_dynamics.exceptions import InvalidInputError, check_ranges
from robot_tv_dynamics.inertia import Array

#: A time constant for the torque offsets' forgetting [s]: the load's memory (an offset
#: then follows no faster than the load does, so the rows can separate the two). Not
#: the default (0, no offsets): in a slow motion with little noise the offsets took a
#: grasp (docs/estimation.md, "Torque offsets").
OFFSET_MEMORY = 10.0
#: Prior standard deviation of each row's torque offset, and the cap of its variance
#: [N·m or N]: the order of what a torque sensor's offset drifts from the one identify
#: fitted.
OFFSET_PRIOR_STD = 0.1


@dataclass(frozen=True)
class LoadFilterConfig:
    """Settings of :class:`LoadFilter`.

    Attributes:
        memory: τ of the forgetting, λ = exp(−Δt/τ) per update [s].
        prior_std: prior standard deviations of the load's (m, h, I) [kg, kg·m, kg·m²]
            (RLS); the scale of what a detected change opens.
        huber: k of the Huber weights on normalized innovations; 0 = plain least squares.
        change: settings of the change detector (its ``false_alarm_rate`` 0 = none).
        change_hold: after a declared change the memory stays open this long (as much
            covariance again as the change opened, spread over it) [s].
        theta_walk: random-walk density of the log-Cholesky parameters (geometric) [1/s].
        max_step: largest change of θ per update (geometric; the covariance takes the
            scaled gain) [1].
        mass_floor: the geometric filter's smallest mass (its log-Cholesky scale is
            kept above ½ log of it) [kg].
        projection_period: ``projected`` replaces its state by the projection at most
            this often (time since the last one, in update time; 0 = after every
            update); the reported load is always the projection of the current state [s].
        offset_memory: τ_b of each row's torque offset: a random walk whose density is
            its forgetting, λ_b = exp(−Δt/τ_b) per update (module docstring); 0 = no
            offset state [s].
    """

    memory: float = 10.0
    prior_std: tuple[float, float, float] = (1.0, 0.1, 0.01)
    huber: float = 2.5
    change: ChangeDetectorConfig = field(default_factory=ChangeDetectorConfig)
    change_hold: float = 0.3
    theta_walk: float = 0.0
    max_step: float = 0.5
    mass_floor: float = 1e-3
    projection_period: float = 0.0
    offset_memory: float = 0.0

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        check_ranges(self, positive=("memory", "max_step", "mass_floor"),
                     nonnegative=("huber", "change_hold", "theta_walk", "projection_period",
                                  "offset_memory"))
        if len(self.prior_std) != 3 or not all(
                math.isfinite(s) and s > 0 for s in self.prior_std):
            raise InvalidInputError("prior_std", f"need three values > 0, got {self.prior_std}")

    def prior_covariance(self) -> Array:
        """diag(σ_m², σ_h²·1₃, σ_I²·1₆) (10, 10)."""
        m, h, i = self.prior_std
        return np.diag([m * m] + [h * h] * 3 + [i * i] * 6).astype(np.float64)


#: Prior standard deviations of the geometric method's log-Cholesky parameters
#: (α, d₁₋₃, s, t = COM [m]).
THETA_PRIOR_STD = np.array([2.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1])
#: The geometric method's start: a small sphere-like body at the link origin.
START_RADIUS = 0.05  # [m]
