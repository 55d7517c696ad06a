"""The settings of one retiming: :class:`RetimeOptions`, checked when made."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import check_finite

#: How a loading process meets the retimed motion (:attr:`RetimeOptions.loading_index`).
LOADING_INDICES = ("time", "path")


@dataclass(frozen=True, eq=False)
class RetimeOptions:
    """Settings of :func:`~robot_tv_dynamics.retiming.solve.retime`.

    Made once and passed whole (``dataclasses.replace`` changes one); every value is
    checked, and numbers normalised to floats, when the record is made.

    Attributes:
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
        max_iterations: TOPP-RA solves at most (schedule iterations + verification
            passes); at least 1.
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
            own clock, process time = t_new + time_offset; the default) or ``"path"``
            (tied to the path: the load at each path position is the one the input had
            there, :mod:`~robot_tv_dynamics.retiming.indexing`).
        split_at_stops: retime a trajectory that comes to rest at interior waypoints
            segment by segment, keeping the stops
            (:mod:`~robot_tv_dynamics.retiming.segments`).
        moveit_scaling: (v₀, a₀), the max_velocity_scaling_factor and
            max_acceleration_scaling_factor MoveIt parameterized the input with, each in
            (0, 1]; the reported factors (``result.uniform``) are (v₀/k, a₀/k²) for the
            uniform time scaling k found
            (:func:`~robot_tv_dynamics.retiming.result.uniform_scaling`).

    Raises:
        InvalidInputError: a value out of its range (named).
    """

    effort_margin: float = 1.0
    velocity_scale: float = 1.0
    acceleration_limits: float | Mapping[str, float] | None = None
    gridpoints: int = 200
    sample_rate: float | None = None
    theta: npt.ArrayLike | None = None
    default_positions: npt.ArrayLike | Mapping[str, float] | None = None
    time_offset: float = 0.0
    max_iterations: int = 12
    timing_tolerance: float = 1e-3
    ratio_tolerance: float = 1e-3
    compare_uniform: bool = True
    verify_playback: bool = True
    smoothing: float = 0.0
    loading_index: str = "time"
    split_at_stops: bool = True
    moveit_scaling: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        """Check the ranges and normalise the numbers.

        Raises:
            InvalidInputError: a value out of its range.
        """
        put = object.__setattr__
        put(self, "effort_margin", positive_number(self.effort_margin, "effort_margin"))
        put(self, "velocity_scale", positive_number(self.velocity_scale, "velocity_scale"))
        put(self, "time_offset", float(check_finite(self.time_offset, "time_offset", ())))
        if int(self.gridpoints) < 10:
            raise InvalidInputError("gridpoints", f"must be >= 10, got {self.gridpoints}")
        if self.sample_rate is not None:
            put(self, "sample_rate", positive_number(self.sample_rate, "sample_rate"))
        if self.loading_index not in LOADING_INDICES:
            raise InvalidInputError("loading_index", f'must be "time" or "path", got '
                                    f"{self.loading_index!r}")
        smoothing = float(check_finite(self.smoothing, "smoothing", ()))
        if smoothing < 0.0:
            raise InvalidInputError("smoothing", f"must be >= 0, got {smoothing:g}")
        put(self, "smoothing", smoothing)
        put(self, "moveit_scaling", _moveit_scaling(self.moveit_scaling))
        put(self, "gridpoints", int(self.gridpoints))
        put(self, "max_iterations", max(1, int(self.max_iterations)))


def positive_number(value: Any, name: str) -> float:
    """``value`` as a finite float > 0.

    Raises:
        InvalidInputError: not finite or not > 0 (named ``name``).
    """
    number = float(check_finite(value, name, ()))
    if not number > 0.0:
        raise InvalidInputError(name, f"must be > 0, got {number:g}")
    return number


def _moveit_scaling(value: Any) -> tuple[float, float]:
    """(v₀, a₀) in (0, 1] each, as MoveIt takes its scaling factors."""
    try:
        v0, a0 = value
    except (TypeError, ValueError):
        raise InvalidInputError("moveit_scaling", f"expected (velocity, acceleration) "
                                f"scaling factors, got {value!r}") from None
    out = (positive_number(v0, "moveit_scaling[0]"), positive_number(a0, "moveit_scaling[1]"))
    if max(out) > 1.0:
        raise InvalidInputError("moveit_scaling", f"MoveIt's scaling factors are at most 1, "
                                f"got {out}")
    return out
