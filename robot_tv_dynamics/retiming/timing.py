r"""The time law s(t) of a TOPP-RA solution: constant s̈ between gridpoints.

TOPP-RA returns the squared path speed x_j = ṡ_j² at the gridpoints s_j; its
discretization assumes a constant path acceleration on each interval,
u_j = (x_{j+1} − x_j) / (2 (s_{j+1} − s_j)), which is what its constraints were
enforced for (at both ends of the interval, interpolation scheme). Between gridpoints

.. math::
    \dot s(s)^2 = x_j + 2 u_j (s - s_j), \qquad
    t(s) = t_j + \frac{2 (s - s_j)}{\dot s_j + \dot s(s)}

(the second form is exact for constant s̈ and stable when u_j → 0), the same law as
``toppra.parametrizer.ParametrizeConstAccel``. Here it is kept in s(t), ṡ, s̈ form so
that the output can be sampled at path positions (the waypoints) or at times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.evaluation import Trajectory
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.retiming.path import JointPath


class TimeLaw(Protocol):
    """A monotone time law s(t) along the path (what the output is sampled from)."""

    @property
    def duration(self) -> float:
        """Total time [s]."""
        ...

    @property
    def length(self) -> float:
        """Path length [rad or m]."""
        ...

    def at_path(self, s: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """(t, ṡ, s̈) at path positions s."""
        ...

    def at_time(self, t: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """(s, ṡ, s̈) at times t."""
        ...

    def sample_times(self) -> Array:
        """Times that resolve the law (its breakpoints and the midpoints between them)."""
        ...


@dataclass(frozen=True)
class PathTiming:
    """A time law along the path.

    Attributes:
        gridpoints: s_j, (G,) [rad or m].
        speed: ṡ_j ≥ 0, (G,) [per s].
        acceleration: u_j = s̈ on [s_j, s_{j+1}), (G − 1,) [per s²].
        times: t_j, (G,) [s], t_0 = 0.
    """

    gridpoints: Array
    speed: Array
    acceleration: Array
    times: Array

    @classmethod
    def from_speeds(cls, gridpoints: npt.ArrayLike, speed: npt.ArrayLike) -> PathTiming:
        """The constant-s̈ law through path speeds ṡ_j at gridpoints s_j."""
        s = np.asarray(gridpoints, dtype=np.float64)
        sd = np.maximum(np.asarray(speed, dtype=np.float64), 0.0)
        ds = np.diff(s)
        u = (sd[1:] ** 2 - sd[:-1] ** 2) / (2.0 * ds)
        with np.errstate(divide="ignore"):
            dt = 2.0 * ds / (sd[:-1] + sd[1:])
        if not np.all(np.isfinite(dt)):
            raise ValueError("two consecutive gridpoints at rest: the time law is undefined")
        return cls(s, sd, u, np.concatenate([[0.0], np.cumsum(dt)]))

    @property
    def duration(self) -> float:
        """Total time [s]."""
        return float(self.times[-1])

    @property
    def length(self) -> float:
        """Path length [rad or m]."""
        return float(self.gridpoints[-1])

    def sample_times(self) -> Array:
        """Every gridpoint time and interval midpoint."""
        return _with_midpoints(self.times)

    def at_path(self, s: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """(t, ṡ, s̈) at path positions s (s̈ of the interval that starts at or before s)."""
        s = np.clip(np.asarray(s, dtype=np.float64), self.gridpoints[0], self.gridpoints[-1])
        j = np.clip(np.searchsorted(self.gridpoints, s, side="right") - 1, 0,
                    self.acceleration.size - 1)
        delta = s - self.gridpoints[j]
        u = self.acceleration[j]
        sd = np.sqrt(np.maximum(self.speed[j] ** 2 + 2.0 * u * delta, 0.0))
        total = self.speed[j] + sd
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(delta > 0.0, 2.0 * delta / total, 0.0)
        return self.times[j] + step, sd, u

    def at_time(self, t: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """(s, ṡ, s̈) at times t [s] (clipped into [0, duration])."""
        t = np.clip(np.asarray(t, dtype=np.float64), 0.0, self.duration)
        j = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0,
                    self.acceleration.size - 1)
        tau = t - self.times[j]
        u = self.acceleration[j]
        s = self.gridpoints[j] + self.speed[j] * tau + 0.5 * u * tau**2
        sd = np.maximum(self.speed[j] + u * tau, 0.0)
        return np.minimum(s, self.gridpoints[j + 1]), sd, u


def _with_midpoints(times: Array) -> Array:
    times = np.unique(times)
    return np.sort(np.concatenate([times, 0.5 * (times[:-1] + times[1:])]))


#: A jump of s̈ larger than this fraction of the law's s̈ range makes its time an output knot.
SWITCH_FRACTION = 0.05


def switch_positions(timing: TimeLaw) -> Array:
    """Path positions where a constant-s̈ law switches its acceleration (jumps in s̈).

    Only a :class:`PathTiming` has jumps (a smoothed law is continuous in s̈); a jump
    counts when it exceeds ``SWITCH_FRACTION`` of the law's range of s̈.
    """
    if not isinstance(timing, PathTiming) or timing.acceleration.size < 2:
        return np.empty(0)
    u = timing.acceleration
    scale = float(np.ptp(u))
    if not scale > 0.0:
        return np.empty(0)
    jump = np.abs(np.diff(u)) > SWITCH_FRACTION * scale
    return timing.gridpoints[1:-1][jump]


def knot_acceleration(timing: TimeLaw, t: Array) -> Array:
    """s̈ written at knots t: the mean of its one-sided values (continuous: s̈ itself).

    At a switch of a constant-s̈ law the path acceleration jumps from u⁻ to u⁺; the knot
    gets (u⁻ + u⁺)/2, which lies between the mean accelerations of the segments on
    both sides. Eq. (39) is affine in s̈ at a fixed (s, ṡ) and TOPP-RA's interpolation
    scheme keeps both u⁻ and u⁺ feasible there, so the written point is feasible too.
    """
    eta = 1e-9 * max(1.0, timing.duration)
    before = timing.at_time(np.clip(t - eta, 0.0, None))[2]
    after = timing.at_time(np.minimum(t + eta, timing.duration))[2]
    return 0.5 * (np.asarray(before, dtype=np.float64) + np.asarray(after, dtype=np.float64))


def sample_output(path: JointPath, timing: TimeLaw, rate: float | None) -> Trajectory:
    """The output knots: the waypoints (or every 1/rate s, + the end) and every switch.

    The knots at the switches of s̈ make every segment between knots one of smooth
    motion, which a controller's quintic through (q, q̇, q̈) follows; the acceleration
    written at a knot is :func:`knot_acceleration`.
    """
    switches = switch_positions(timing)
    if rate is None:
        s = np.union1d(path.waypoint_s, switches)
        t, sd, _ = timing.at_path(s)
    else:
        t = np.arange(0.0, timing.duration, 1.0 / rate)
        if timing.duration - t[-1] > 1e-6 / rate:
            t = np.append(t, timing.duration)
        else:
            t[-1] = timing.duration
        if switches.size:
            at_switch = np.asarray(timing.at_path(switches)[0])
            near = np.min(np.abs(t[:, None] - at_switch[None, :]), axis=1) < 1e-6
            near[[0, -1]] = False
            t = np.union1d(t[~near], at_switch)
        s, sd, _ = timing.at_time(t)
    return _trajectory(path, s, t, sd, knot_acceleration(timing, np.asarray(t)))


def sample_dense(path: JointPath, timing: TimeLaw) -> Trajectory:
    """The law at its :meth:`~TimeLaw.sample_times`: what the verification evaluates."""
    t = timing.sample_times()
    s, sd, sdd = timing.at_time(t)
    return _trajectory(path, s, t, sd, sdd)


def _trajectory(path: JointPath, s: Array, t: Array, sd: Array, sdd: Array) -> Trajectory:
    """Positions q = p(s), q̇ = p' ṡ, q̈ = p' s̈ + p'' ṡ² in the trajectory's columns."""
    q = np.asarray(path.spline(s))
    dq, ddq = np.asarray(path.spline(s, 1)), np.asarray(path.spline(s, 2))
    return Trajectory(path.joint_names, t, q, dq * sd[:, None],
                      dq * sdd[:, None] + ddq * (sd**2)[:, None])
