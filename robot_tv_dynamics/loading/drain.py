r"""``drain``: the container emptied through a bottom orifice (Torricelli, or constant flow).

A ḣ = −C_d a_o s(t) √(2 g h), so √h falls as d√h/dt = −c s(t) with c = C_d (a_o/A) √(g/2);
``law: constant`` (a metering valve, ḣ = −(Q/A) s(t)) is offered too. The column descends
as a plug (every particle at ḣ); particles leave through the orifice plane z = 0.

The valve opens smoothly over ``opening_time`` T: the open fraction s(t) = 3x² − 2x³
(x = (t − start)/T, s = 1 after T) has ṡ = 0 at both ends, so ḣ and ḧ are continuous and
the axial momentum Ψ (∝ m ḣ) is C¹. An instant opening would make Ψ jump from 0 to m₀ḣ₀
without the impulse in Ψ̇ that the plant would need to apply the reaction JᵀQ₀Δψ.
"""

from __future__ import annotations

import math

import numpy as np

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.loading.geometry import (
    Container,
    ContainerFrame,
)
from robot_tv_dynamics.loading.state import (
    STANDARD_GRAVITY,
    LoadState,
    finite_scalar,
    positive_scalar,
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
        opening_time: float = 0.05,
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
            start: time the valve starts to open [s].
            opening_time: T, how long the valve takes to open fully [s], > 0 (module
                docstring: Ψ is C¹ only for T > 0).

        Raises:
            InvalidInputError: a parameter out of range or missing for the law.
        """
        self.link = link
        self.container = container
        self.h0 = positive_scalar(initial_level, "drain.initial_level")
        if self.h0 > container.height:
            raise InvalidInputError(
                "drain.initial_level",
                f"{self.h0:.4g} m is above the wall height {container.height:.4g} m")
        self.density = positive_scalar(fluid_density, "drain.fluid_density")
        self.start = finite_scalar(start, "drain.start")
        self.opening_time = positive_scalar(opening_time, "drain.opening_time")
        self.law = law
        if law == "torricelli":
            diameter = positive_scalar(orifice_diameter, "drain.orifice_diameter")
            cd = positive_scalar(discharge_coefficient, "drain.discharge_coefficient")
            if cd > 1.0:
                raise InvalidInputError("drain.discharge_coefficient", f"{cd} is above 1")
            ratio = math.pi * diameter**2 / 4.0 / container.area
            if ratio >= 0.25:
                raise InvalidInputError(
                    "drain.orifice_diameter", f"orifice area is {ratio:.2f} of the cross-section;"
                    " Torricelli's law needs a small orifice (< 0.25)")
            self.c = cd * ratio * math.sqrt(positive_scalar(gravity, "drain.gravity") / 2.0)
            self.drain_time = self._time_to_open(math.sqrt(self.h0) / self.c)
        elif law == "constant":
            self.rate = positive_scalar(volume_flow, "drain.volume_flow") / container.area  # [m/s]
            self.drain_time = self._time_to_open(self.h0 / self.rate)
        else:
            raise InvalidInputError("drain.law", f'"{law}" is not one of torricelli, constant')
        self.duration = self.start + self.drain_time
        self._frame = ContainerFrame(container)

    def opening(self, tau: float) -> tuple[float, float, float]:
        """(S, s, ṡ) of the valve ``tau`` [s] after it starts to open: S = ∫₀^τ s [s]."""
        big_t = self.opening_time
        if tau <= 0.0:
            return 0.0, 0.0, 0.0
        if tau >= big_t:
            return tau - big_t / 2.0, 1.0, 0.0
        x = tau / big_t
        return big_t * x**3 * (1.0 - x / 2.0), x * x * (3.0 - 2.0 * x), 6.0 * x * (1.0 - x) / big_t

    def _time_to_open(self, full_open_time: float) -> float:
        """τ with S(τ) = ``full_open_time`` (the time an open valve would take) [s]."""
        if full_open_time >= self.opening_time / 2.0:
            return full_open_time + self.opening_time / 2.0
        import scipy.optimize  # here: ~0.3 s of the start-up of every node that loads Θ(t)

        return float(scipy.optimize.brentq(lambda tau: self.opening(tau)[0] - full_open_time,
                                           0.0, self.opening_time, xtol=1e-15))

    def level(self, t: float) -> tuple[float, float, float]:
        """(h, ḣ, ḧ) of the liquid surface at time ``t`` [m, m/s, m/s²]."""
        tau = min(max(float(t) - self.start, 0.0), self.drain_time)
        moving = 0.0 < float(t) - self.start < self.drain_time
        passed, s, s_dot = self.opening(tau)
        if not moving:
            s = s_dot = 0.0
        if self.law == "torricelli":  # d√h/dt = −c s
            root = max(math.sqrt(self.h0) - self.c * passed, 0.0)
            return (root * root, -2.0 * self.c * s * root,
                    -2.0 * self.c * (s_dot * root - self.c * s * s))
        return max(self.h0 - self.rate * passed, 0.0), -self.rate * s, -self.rate * s_dot

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
