r"""``timeline``: user rows (t, Φ) from YAML or CSV, linearly interpolated.

Each row must be the Φ of a non-negative density (f(Φ) ⪰ 0); linear interpolation keeps
that (f is linear, so f(Φ(t)) is a convex combination of PSD matrices). Θ̇ is the slope of
the interpolant (right derivative at the rows); the particles do not move, so ψ = 0.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    check_finite,
)
from robot_tv_dynamics.loading.state import (
    LoadState,
    check_density,
    fixed_state,
)


# ---------------------------------------------------------------------------- timeline
class TimelineProcess:
    """Linear interpolation of user-given link inertias (see the module docstring)."""

    def __init__(self, link: str, times: npt.ArrayLike, phis: npt.ArrayLike) -> None:
        """Build the process.

        Args:
            link: URDF link the rows are expressed in.
            times: row times (K,), strictly increasing, K ≥ 1 [s].
            phis: Φ of the load at each row, (K, 10), eq. (7) order about the link origin.

        Raises:
            InvalidInputError: bad shapes or times.
            PhysicalConsistencyError: a row that is not the Φ of a non-negative density.
        """
        self.link = link
        self.times = readonly(check_finite(times, "timeline.t", (None,)).copy())
        if self.times.size == 0:
            raise InvalidInputError("timeline", "has no rows")
        self.phis = readonly(check_finite(phis, "timeline.phi", (self.times.size, 10)).copy())
        if np.any(np.diff(self.times) <= 0.0):
            raise InvalidInputError("timeline.t", "times must be strictly increasing")
        for k, phi in enumerate(self.phis):
            check_density(phi, f"timeline row {k} (t = {self.times[k]:g} s)")
        self.slopes = readonly(
            np.diff(self.phis, axis=0) / np.diff(self.times)[:, None]
            if self.times.size > 1 else np.zeros((0, 10)))
        self.duration = float(self.times[-1])

    def state(self, t: float) -> LoadState:
        """Interpolated Φ, its slope, ψ = 0."""
        t = float(t)
        times = self.times
        if t < times[0] or t >= times[-1]:
            return fixed_state(self.phis[0] if t < times[0] else self.phis[-1])
        k = int(np.searchsorted(times, t, side="right")) - 1
        slope = self.slopes[k]
        return LoadState(self.phis[k] + (t - times[k]) * slope, slope.copy(), np.zeros(12),
                         np.zeros(12), 0.0)

    def describe(self) -> str:
        """One line for logs and reports."""
        return (f"timeline of {self.times.size} rows on {self.link} "
                f"({self.times[0]:g} s to {self.times[-1]:g} s)")
