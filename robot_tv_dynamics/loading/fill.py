r"""``fill``: a cylindrical container filled by a falling stream (closed form).

Mass enters at the inlet with speed ``inlet_speed`` downwards at ``mass_flow`` kg/s from
``start`` for ``fill_time`` seconds, falls freely, and comes to rest in a uniform liquid
column of rising height h(t). A stream particle of age s is at z(s) = z_in − u₀s − a s²/2
with speed u₀ + a s; the airborne stream is the particles of age in [a_lo(t), a_hi(t)],
and the age a_hi = T of the particle reaching the surface solves the quadratic
z(T) = h = q (t − t₀ − T)/(ρA). Every integral over the stream is a polynomial in the
ages, so Φ, ψ, ν and (by Leibniz' rule) their rates are exact.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial import Polynomial

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.loading.geometry import (
    AGE_POWERS,
    Container,
    ContainerFrame,
)
from robot_tv_dynamics.loading.state import (
    STANDARD_GRAVITY,
    LoadState,
    finite_scalar,
    nonnegative_scalar,
    positive_scalar,
)

_array = np.array


def _state(values: Array, nu: float) -> LoadState:
    """A LoadState of views into one vector [Φ, Φ̇, ψ, ψ̇, ...] (read-only)."""
    values.setflags(write=False)
    return LoadState(values[:10], values[10:20], values[20:32], values[32:44], float(nu))


# ---------------------------------------------------------------------------- fill
class FillProcess:
    """A container on a link filled by a stream from an inlet on the same link.

    See the module docstring (``fill``) for the model; all quantities are closed form.
    The state is linear in 23 features of t: ``state(t)`` is :attr:`state_map` ``@``
    :meth:`features` ``(t)``.

    Attributes:
        state_map: x ↦ [Φ, Φ̇, ψ, ψ̇, ν], (45, 23), link frame, read-only.
    """

    def __init__(
        self,
        link: str,
        container: Container,
        *,
        mass_flow: float,
        fill_time: float,
        inlet_height: float,
        inlet_speed: float = 0.0,
        fluid_density: float = 1000.0,
        stream_acceleration: float = STANDARD_GRAVITY,
        start: float = 0.0,
    ) -> None:
        """Build the process and check that it is physical.

        Args:
            link: URDF link the container is mounted on.
            container: geometry, shell mass and placement.
            mass_flow: q, inflow at the inlet while the valve is open [kg/s], > 0.
            fill_time: how long the valve is open [s], > 0.
            inlet_height: z_in, height of the inlet above the inner bottom [m].
            inlet_speed: u₀ ≥ 0, stream speed at the inlet, along −axis [m/s].
            fluid_density: ρ [kg/m³], > 0.
            stream_acceleration: a ≥ 0, acceleration of the falling stream along −axis
                [m/s²] (g for a container kept upright).
            start: time the valve opens [s].

        Raises:
            InvalidInputError: a parameter out of range, a stream that never reaches the
                bottom, an overflowing container, an inlet below the final level, or a
                surface that would rise faster than the stream falls.
        """
        self.link = link
        self.container = container
        self.q = positive_scalar(mass_flow, "fill.mass_flow")
        self.fill_time = positive_scalar(fill_time, "fill.fill_time")
        self.z_in = positive_scalar(inlet_height, "fill.inlet_height")
        self.u0 = nonnegative_scalar(inlet_speed, "fill.inlet_speed")
        self.density = positive_scalar(fluid_density, "fill.fluid_density")
        self.a = nonnegative_scalar(stream_acceleration, "fill.stream_acceleration")
        self.start = finite_scalar(start, "fill.start")
        if self.u0 == 0.0 and self.a == 0.0:
            raise InvalidInputError(
                "fill", "inlet_speed and stream_acceleration are both 0: the stream never falls")
        self.k = self.q / (self.density * container.area)  # surface speed if all landed [m/s]
        final_mass = self.q * self.fill_time
        self.final_level = final_mass / (self.density * container.area)
        if self.final_level > container.height:
            raise InvalidInputError(
                "fill", f"the liquid ({final_mass:.4g} kg, level {self.final_level:.4g} m) "
                f"overflows the container (height {container.height:.4g} m)")
        if self.z_in <= self.final_level:
            raise InvalidInputError(
                "fill.inlet_height", f"{self.z_in:.4g} m is not above the final level "
                f"{self.final_level:.4g} m: the inlet would be submerged")
        final_speed = math.sqrt(self.u0**2 + 2.0 * self.a * (self.z_in - self.final_level))
        if final_speed <= self.k:
            raise InvalidInputError(
                "fill", f"the surface would rise ({self.k:.4g} m/s) faster than the stream "
                f"arrives ({final_speed:.4g} m/s): lower mass_flow or widen the container")
        z = Polynomial([self.z_in, -self.u0, -self.a / 2.0])  # z(s), s = age [s]
        w = Polynomial([-self.u0, -self.a])  # 𝓋₃(s) [m/s]
        # integrands (z, z², w, z w, w²) and their antiderivatives, as coefficient tables in
        # increasing powers of the age: ∫_lo^hi g = G·(s^k)|_lo^hi
        integrands = [z, z * z, w, z * w, w * w]
        self._g = np.zeros((5, AGE_POWERS))
        self._prim = np.zeros((5, AGE_POWERS))
        for row, poly in enumerate(integrands):
            self._g[row, :poly.coef.size] = poly.coef
            prim = poly.integ().coef
            self._prim[row, :prim.size] = prim
        self.fall_time = self._fall_time(0.0)  # T₀: inlet to the empty bottom
        self.landing_end = self.fill_time + self._fall_time(self.final_level)
        self.duration = self.start + self.landing_end
        self.state_map = readonly(self._state_map(ContainerFrame(container)))
        self._first = readonly(np.eye(1, 23).ravel())  # x before the start: the constant 1
        self._empty = _state(self.state_map[:, 0].copy(), 0.0)
        self._rho_a, self._r2 = self.density * container.area, container.radius**2
        self._rho_a2 = self._rho_a**2

    def _state_map(self, frame: ContainerFrame) -> Array:
        """The linear map of :meth:`state`, x ↦ [Φ, Φ̇, ψ, ψ̇, ν] (45,), link frame.

        x = [1, m_stream, ṁ_stream, pool moments (m, hz, sxx, szz), their rates,
        D (6, 2) row-major], with D = [s^k|_lo^hi, (s^k ṡ)|_lo^hi] over the powers k of the
        age: the stream integrals q·G·D (G = _prim, _g) and ContainerFrame.state in one.
        """
        q, phi, psi = self.q, frame.phi, frame.psi  # phi: moments ↦ Φ (10, 4); psi (12, 2)
        value, rate = np.zeros((5, 12)), np.zeros((5, 12))
        value[:, 0::2], rate[:, 1::2] = q * self._prim, q * self._g  # the integrals from D
        out = np.zeros((45, 23))
        out[:10, 0] = frame.shell
        out[:10, 1], out[:10, 3:7] = phi[:, 0], phi  # m_stream; the pool
        out[:10, 11:] = np.outer(phi[:, 1], value[0]) + np.outer(phi[:, 3], value[1])
        out[10:20, 2], out[10:20, 7:11] = phi[:, 0], phi
        out[10:20, 11:] = np.outer(phi[:, 1], rate[0]) + np.outer(phi[:, 3], rate[1])
        out[20:32, 11:], out[32:44, 11:] = psi @ value[2:4], psi @ rate[2:4]
        out[44, 11:] = value[4]  # ν = q ∫ w²
        return out

    def _fall_time(self, level: float) -> float:
        """Age at which a stream particle reaches height ``level`` [s]."""
        drop = self.z_in - level
        if self.a == 0.0:
            return drop / self.u0
        return (-self.u0 + math.sqrt(self.u0**2 + 2.0 * self.a * drop)) / self.a

    def _surface_age(self, tau: float) -> tuple[float, float]:
        """(T, dT/dt): age of the particle reaching the surface, once the stream landed.

        Solves (a/2) T² + (u₀ − k) T + (k τ − z_in) = 0, i.e. z(T) = q (τ − T)/(ρA).
        """
        b, c = self.u0 - self.k, self.k * tau - self.z_in
        if self.a == 0.0:
            age = -c / b
        else:
            age = (-b + math.sqrt(b * b - 2.0 * self.a * c)) / self.a
        return age, -self.k / (self.a * age + b)

    def features(self, t: float) -> Array:
        """The 23 features x(t) of :attr:`state_map`: the state at t is ``state_map @ x``.

        x = [1, m_stream, ṁ_stream, pool moments (m, hz, sxx, szz) and their rates
        (:meth:`~.geometry.Container.column_moments`), D (6, 2) row-major] with
        D = [s^k|_lo^hi, (s^k ṡ)|_lo^hi], k = 0…5, over the airborne ages [lo, hi]: the
        stream integrals q ∫_lo^hi g(s) ds are polynomial in the ages, and their rates
        q (g(hi) ḣi − g(lo) l̇o) (Leibniz' rule) are linear in D too. Python floats, one
        array at the end: a dozen NumPy calls on 2- to 6-vectors cost more than the sums.
        """
        tau = float(t) - self.start
        if tau <= 0.0:
            return self._first.copy()
        q = self.q
        if tau < self.fill_time:  # the valve is open
            entered, entered_rate, lo, lo_rate = q * tau, q, 0.0, 0.0
        else:
            entered, entered_rate, lo, lo_rate = q * self.fill_time, 0.0, tau - self.fill_time, 1.0
        if tau >= self.landing_end:
            hi, hi_rate = lo, 0.0  # the last particle has landed
        elif tau < self.fall_time:
            hi, hi_rate = tau, 1.0  # the front is still falling
        else:
            hi, hi_rate = self._surface_age(tau)
        if hi <= lo:  # the last particle has landed
            lo = hi = lo_rate = hi_rate = 0.0
        m_stream, m_stream_rate = q * (hi - lo), q * (hi_rate - lo_rate)
        m = max(entered - m_stream, 0.0)  # the pool (column_moments, inlined)
        md = entered_rate - m_stream_rate
        rho_a, r2, rho_a2 = self._rho_a, self._r2, self._rho_a2
        h2, l2 = hi * hi, lo * lo
        h3, l3, h4, l4 = h2 * hi, l2 * lo, h2 * h2, l2 * l2
        h5, l5 = h4 * hi, l4 * lo
        return _array((
            1.0, m_stream, m_stream_rate,
            m, m * m / (2.0 * rho_a), m * r2 / 4.0, m**3 / (3.0 * rho_a2),
            md, md * m / rho_a, md * r2 / 4.0, md * m * m / rho_a2,
            0.0, hi_rate - lo_rate, hi - lo, hi * hi_rate - lo * lo_rate,
            h2 - l2, h2 * hi_rate - l2 * lo_rate, h3 - l3, h3 * hi_rate - l3 * lo_rate,
            h4 - l4, h4 * hi_rate - l4 * lo_rate, h5 - l5, h5 * hi_rate - l5 * lo_rate))

    def state(self, t: float) -> LoadState:
        """Φ, Φ̇, ψ, ψ̇, ν of shell + liquid column + airborne stream at time ``t``."""
        if float(t) - self.start <= 0.0:
            return self._empty  # the shell alone (read-only, shared)
        values = self.state_map @ self.features(t)
        return _state(values, values[44])

    def describe(self) -> str:
        """One line for logs and reports."""
        return (f"fill {self.q:g} kg/s for {self.fill_time:g} s into a {self.container.mass:g} kg "
                f"container on {self.link} (final liquid {self.q * self.fill_time:g} kg)")
