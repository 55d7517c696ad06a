r"""``drain``: the container emptied through a bottom orifice (Torricelli, or constant flow).

A ḣ = −C_d a_o √(2 g h), so √h falls linearly and h(t) = (√h₀ − c t)² with
c = C_d (a_o/A) √(g/2); ``law: constant`` (a metering valve) is offered too. The column
descends as a plug (every particle at ḣ); particles leave through the orifice plane z = 0.
"""

from __future__ import annotations

import math

import numpy as np

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.loading.geometry import (
    Container,
    _ContainerFrame,
)
from robot_tv_dynamics.loading.state import (
    STANDARD_GRAVITY,
    LoadState,
    _finite,
    _positive,
)


# ---------------------------------------------------------------------------- drain
class DrainProcess:
    """A filled container on a link drained through a bottom orifice."""

    def __init__(
        self,
        link: str,
        container: Container,
        *,
        initial_level: float,
        orifice_diameter: float = 0.0,
        discharge_coefficient: float = 0.62,
        law: str = "torricelli",
        volume_flow: float = 0.0,
        fluid_density: float = 1000.0,
        gravity: float = STANDARD_GRAVITY,
        start: float = 0.0,
    ) -> None:
        """Build the process.

        Args:
            link: URDF link the container is mounted on.
            container: geometry, shell mass and placement.
            initial_level: h₀, liquid height when the valve opens [m], ≤ wall height.
            orifice_diameter: orifice diameter [m] (law ``torricelli``).
            discharge_coefficient: C_d ∈ (0, 1] (0.62 for a sharp-edged orifice).
            law: ``torricelli`` (A ḣ = −C_d a_o √(2gh)) or ``constant`` (a metering valve).
            volume_flow: outflow [m³/s] (law ``constant``).
            fluid_density: ρ [kg/m³].
            gravity: g for Torricelli's law [m/s²] (container kept upright).
            start: time the valve opens [s].

        Raises:
            InvalidInputError: a parameter out of range or missing for the law.
        """
        self.link = link
        self.container = container
        self.h0 = _positive(initial_level, "drain.initial_level")
        if self.h0 > container.height:
            raise InvalidInputError(
                "drain.initial_level",
                f"{self.h0:.4g} m is above the wall height {container.height:.4g} m")
        self.density = _positive(fluid_density, "drain.fluid_density")
        self.start = _finite(start, "drain.start")
        self.law = law
        if law == "torricelli":
            diameter = _positive(orifice_diameter, "drain.orifice_diameter")
            cd = _positive(discharge_coefficient, "drain.discharge_coefficient")
            if cd > 1.0:
                raise InvalidInputError("drain.discharge_coefficient", f"{cd} is above 1")
            ratio = math.pi * diameter**2 / 4.0 / container.area
            if ratio >= 0.25:
                raise InvalidInputError(
                    "drain.orifice_diameter", f"orifice area is {ratio:.2f} of the cross-section;"
                    " Torricelli's law needs a small orifice (< 0.25)")
            self.c = cd * ratio * math.sqrt(_positive(gravity, "drain.gravity") / 2.0)
            self.drain_time = math.sqrt(self.h0) / self.c
        elif law == "constant":
            self.rate = _positive(volume_flow, "drain.volume_flow") / container.area  # [m/s]
            self.drain_time = self.h0 / self.rate
        else:
            raise InvalidInputError("drain.law", f'"{law}" is not one of torricelli, constant')
        self.duration = self.start + self.drain_time
        self._frame = _ContainerFrame(container)

    def level(self, t: float) -> tuple[float, float, float]:
        """(h, ḣ, ḧ) of the liquid surface at time ``t`` [m, m/s, m/s²]."""
        tau = min(max(float(t) - self.start, 0.0), self.drain_time)
        moving = 0.0 < float(t) - self.start < self.drain_time
        if self.law == "torricelli":
            root = math.sqrt(self.h0) - self.c * tau
            if not moving:
                return root * root, 0.0, 0.0
            return root * root, -2.0 * self.c * root, 2.0 * self.c * self.c
        if not moving:
            return self.h0 - self.rate * tau, 0.0, 0.0
        return self.h0 - self.rate * tau, -self.rate, 0.0

    def state(self, t: float) -> LoadState:
        """Shell + a plug-flow column of height h(t) descending at ḣ."""
        h, hd, hdd = self.level(t)
        rho_a = self.density * self.container.area
        m, md = rho_a * h, rho_a * hd
        pool, pool_dot = self.container.column_moments(m, md, self.density)
        # plug flow: every particle at 𝓋 = (0, 0, ḣ); ∫ρ𝓋₃ = m ḣ, ∫ρ𝓋₃x₃ = ḣ·m h/2
        axial = np.array([m * hd, rho_a * h * h * hd / 2.0])
        axial_dot = np.array([md * hd + m * hdd, rho_a * (h * hd * hd + h * h * hdd / 2.0)])
        return self._frame.state(pool, pool_dot, axial, axial_dot, m * hd * hd)

    def describe(self) -> str:
        """One line for logs and reports."""
        return (f"drain ({self.law}) {self.density * self.container.area * self.h0:g} kg "
                f"from a container on {self.link} in {self.drain_time:.3g} s")
