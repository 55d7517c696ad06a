r"""Optional smoothing of a time-optimal law: a moving average of s(t) over a window w.

TOPP-RA's law is bang-bang in s̈: the acceleration jumps at every switch, the jerk is
unbounded, and a controller's interpolation overshoots the jumps. Averaging the motion
over a window w (a box FIR filter, as in FIR-based jerk limiting) gives

.. math::
    s_w(t) = \frac1w \int_{t-w}^{t} s(τ)\,dτ, \quad
    \dot s_w(t) = \frac{s(t) - s(t-w)}{w}, \quad
    \ddot s_w(t) = \frac{\dot s(t) - \dot s(t-w)}{w},

with s = 0 before the start and s = L after the end (a rest-to-rest law). s̈_w is
continuous, the jerk is bounded by (max s̈ − min s̈)/w, the path is unchanged and the
motion lasts w longer. ṡ_w and s̈_w are averages of the original's, so the limits hold
up to the variation of the path over the window; the verification in
:func:`~robot_tv_dynamics.retiming.solve.retime` measures the smoothed motion and
tightens the limits given to TOPP-RA where it overshoots.

Everything is closed form: within an interval of the constant-s̈ law, s is quadratic in
t and its integral cubic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.retiming.timing import PathTiming

#: Newton steps refining t(s) after the tabulated first guess.
_NEWTON_STEPS = 4


@dataclass(frozen=True)
class SmoothedTiming:
    """The moving average of a rest-to-rest :class:`PathTiming` over ``window`` seconds.

    Attributes:
        base: the time-optimal law.
        window: w > 0 [s].
    """

    base: PathTiming
    window: float
    _integral: Array = field(init=False, repr=False)
    _table_t: Array = field(init=False, repr=False)
    _table_s: Array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        """Precompute ∫s dt at the base law's gridpoint times; check rest-to-rest."""
        base = self.base
        if base.speed[0] > 0.0 or base.speed[-1] > 0.0:
            raise ValueError("smoothing needs a law that starts and ends at rest")
        if not self.window > 0.0:
            raise ValueError("the smoothing window must be > 0")
        dt = np.diff(base.times)
        s0, sd0, u = base.gridpoints[:-1], base.speed[:-1], base.acceleration
        steps = s0 * dt + sd0 * dt**2 / 2.0 + u * dt**3 / 6.0
        object.__setattr__(self, "_integral", np.concatenate([[0.0], np.cumsum(steps)]))
        table = np.unique(np.concatenate([np.linspace(0.0, self.duration, 4001), base.times,
                                          base.times + self.window]))
        object.__setattr__(self, "_table_t", table)
        object.__setattr__(self, "_table_s", self.at_time(table)[0])

    @property
    def duration(self) -> float:
        """Total time: the base duration + w [s]."""
        return self.base.duration + self.window

    @property
    def length(self) -> float:
        """Path length [rad or m]."""
        return self.base.length

    def _base(self, t: Array) -> tuple[Array, Array, Array, Array]:
        """∫₀ᵗ s, s, ṡ, s̈ of the base law, extended at rest before 0 and after its end."""
        base, end = self.base, self.base.duration
        inside = np.clip(t, 0.0, end)
        s, sd, sdd = base.at_time(inside)
        j = np.clip(np.searchsorted(base.times, inside, side="right") - 1, 0,
                    base.acceleration.size - 1)
        tau = inside - base.times[j]
        integral = (self._integral[j] + base.gridpoints[j] * tau
                    + base.speed[j] * tau**2 / 2.0 + base.acceleration[j] * tau**3 / 6.0)
        before, after = t < 0.0, t > end
        integral = np.where(before, 0.0, integral + np.where(after, self.length * (t - end),
                                                             0.0))
        s = np.where(before, 0.0, np.where(after, self.length, s))
        sd = np.where(before | after, 0.0, sd)
        sdd = np.where(before | after, 0.0, sdd)
        return integral, s, sd, sdd

    def at_time(self, t: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """(s, ṡ, s̈) of the smoothed law at times t (clipped into [0, duration])."""
        t = np.clip(np.asarray(t, dtype=np.float64), 0.0, self.duration)
        w = self.window
        now, earlier = self._base(t), self._base(t - w)
        s = np.clip((now[0] - earlier[0]) / w, 0.0, self.length)
        return s, (now[1] - earlier[1]) / w, (now[2] - earlier[2]) / w

    def at_path(self, s: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """(t, ṡ, s̈) at path positions s: s_w(t) inverted (table, then Newton)."""
        s = np.clip(np.asarray(s, dtype=np.float64), 0.0, self.length)
        table_t, table_s = self._table_t, self._table_s
        t = np.interp(s, table_s, table_t)
        for _ in range(_NEWTON_STEPS):
            value, speed, _ = self.at_time(t)
            step = np.where(speed > 1e-9, (value - s) / np.maximum(speed, 1e-9), 0.0)
            t = np.clip(t - step, 0.0, self.duration)
        t = np.where(s <= 0.0, 0.0, np.where(s >= self.length, self.duration, t))
        _, sd, sdd = self.at_time(t)
        return t, sd, sdd

    def sample_times(self) -> Array:
        """The base breakpoints, the same shifted by w, and the midpoints between them."""
        times = np.unique(np.concatenate([self.base.times, self.base.times + self.window]))
        return np.sort(np.concatenate([times, 0.5 * (times[:-1] + times[1:])]))
