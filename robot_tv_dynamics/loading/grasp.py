r"""``grasp``: a part whose weight the gripper takes over along a C² ramp while pulling it in.

The load is the density w(t) ρ_part translated by c(t), all of it moving with ċ;
w(τ) = 10τ³ − 15τ⁴ + 6τ⁵ over ``ramp_time``, c(t) from com + approach to com.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.inertia import (
    check_finite,
    phi_from_mass_com_inertia,
    phi_from_parts,
    skew,
)
from robot_tv_dynamics.loading.state import (
    LoadState,
    check_density,
    finite_scalar,
    positive_scalar,
    smoothstep,
)


# ---------------------------------------------------------------------------- grasp
class GraspProcess:
    """A part taken over by the gripper along a C² ramp while being pulled in."""

    def __init__(
        self,
        link: str,
        mass: float,
        com: npt.ArrayLike,
        inertia: npt.ArrayLike,
        *,
        ramp_time: float,
        approach: npt.ArrayLike = (0.0, 0.0, 0.0),
        start: float = 0.0,
    ) -> None:
        """Build the process.

        Args:
            link: URDF link of the gripper (e.g. the hand).
            mass: part mass [kg], > 0.
            com: final COM of the part in the link frame, (3,) [m].
            inertia: part inertia about its COM in link axes, (3, 3) [kg·m²].
            ramp_time: duration of the take-over [s], > 0.
            approach: COM offset at the start of the ramp, (3,) [m] (the part starts at
                com + approach and is pulled to com).
            start: start of the ramp [s].

        Raises:
            InvalidInputError, PhysicalConsistencyError: bad values, or a part whose Φ is
                not that of a non-negative density.
        """
        self.link = link
        self.mass = positive_scalar(mass, "grasp.mass")
        self.com = check_finite(com, "grasp.com", (3,))
        self.inertia = check_finite(inertia, "grasp.inertia", (3, 3))
        phi_c = phi_from_mass_com_inertia(self.mass, np.zeros(3), self.inertia, what="grasp")
        check_density(phi_c, "grasp part")
        self.ramp_time = positive_scalar(ramp_time, "grasp.ramp_time")
        self.approach = check_finite(approach, "grasp.approach", (3,))
        self.start = finite_scalar(start, "grasp.start")
        self.duration = self.start + self.ramp_time
        self._inertia_com = 0.5 * (self.inertia + self.inertia.T)

    def state(self, t: float) -> LoadState:
        """w(t)·(part at c(t)), all particles moving with ċ."""
        w, wd, wdd = smoothstep((float(t) - self.start) / self.ramp_time)
        scale = 1.0 / self.ramp_time
        wd, wdd = wd * scale, wdd * scale * scale
        c = self.com + self.approach * (1.0 - w)
        cd, cdd = -self.approach * wd, -self.approach * wdd
        m = self.mass
        s = skew(c)
        sts = s.T @ s  # |c|² I − c cᵀ
        sts_dot = 2.0 * (c @ cd) * np.eye(3) - np.outer(cd, c) - np.outer(c, cd)
        phi_unit = phi_from_parts(m, m * c, self._inertia_com + m * sts)
        phi_unit_dot = phi_from_parts(0.0, m * cd, m * sts_dot)
        phi = w * phi_unit
        phi_dot = wd * phi_unit + w * phi_unit_dot
        # ψ = ∫ wρ [ċ; ċ_i x] = w m [ċ; ċ_i c]
        psi = w * m * np.concatenate([cd, np.outer(cd, c).ravel()])
        psi_dot = m * np.concatenate([
            wd * cd + w * cdd,
            (wd * np.outer(cd, c) + w * (np.outer(cdd, c) + np.outer(cd, cd))).ravel()])
        return LoadState(phi, phi_dot, psi, psi_dot, float(w * m * (cd @ cd)))

    def describe(self) -> str:
        """One line for logs and reports."""
        return f"grasp a {self.mass:g} kg part with {self.link} over {self.ramp_time:g} s"
