r"""Payload-loading processes: Φ(t), Φ̇(t), ψ(t), ψ̇(t) of a load on one URDF link.

A loading process describes the mass-carrying particles of a load attached to a link
(a container on the flange being filled or drained, a part being grasped, a
user-given timeline) and returns, at any time t, everything eq. (39) needs from it,
in the LINK frame (eq. 7 order, about the link origin):

- Φ(t) of eq. (8)/(11)–(13): always the Φ of a real non-negative density, so
  f(Φ(t)) ⪰ 0 by construction (≻ 0 once the load has volume);
- Φ̇(t) = dΦ/dt, analytic (not a finite difference);
- ψ(t) of eq. (27), ψ = ∫σρ [𝓋; A₃,₁(x)𝓋] dx, of the modelled particle motion, and
  ψ̇(t), both analytic; entries ``psi[3 + 3 i + j] = ∫σρ 𝓋_i x_j``;
- ν(t) = ∫σρ‖𝓋‖² of eq. (25), for energy checks.

:func:`body_loads` adds the load to a base Θ through
:meth:`RobotModel.link_load_in_body <robot_tv_dynamics.model.RobotModel.link_load_in_body>`.

The particle motion is prescribed in the body frame, independent of the arm's pose,
as the paper's model requires for an ODE (Section 3, "Discussion of restrictions"):
the fluid processes assume the container axis stays upright, so that the stream falls
with a constant acceleration ``stream_acceleration`` (default g) along −axis and the
surface stays perpendicular to the axis (no sloshing).

Kinds (the ``process:`` key of a YAML file, see ``config/loading/*.yaml``):

``fill``
    A cylindrical container (thin shell: wall and bottom of uniform areal density)
    filled by a stream from an inlet nozzle mounted on the same link (a dosing head fed
    through a hose): mass enters at the inlet with speed ``inlet_speed`` downwards at
    ``mass_flow`` kg/s from ``start`` for ``fill_time`` seconds, falls freely, and comes
    to rest in a uniform liquid column of rising height h(t). Closed form: a stream
    particle of age s is at z(s) = z_in − u₀s − a s²/2 with speed u₀ + a s; the
    airborne stream is the particles of age in [a_lo(t), a_hi(t)], and the age
    a_hi = T of the particle reaching the surface solves the quadratic
    z(T) = h = q (t − t₀ − T)/(ρA). Every integral over the stream is a polynomial in
    the ages, so Φ, ψ, ν and (by Leibniz' rule) their rates are exact.
``drain``
    The same container, initially filled to ``initial_level``, drained through a
    bottom orifice from ``start``. Default law Torricelli with discharge coefficient:
    A ḣ = −C_d a_o √(2 g h), so √h falls linearly and h(t) = (√h₀ − c t)² with
    c = C_d (a_o/A) √(g/2). It is the quasi-steady Bernoulli outflow of a small orifice
    (a_o ≪ A) and, unlike a constant rate, its ḣ → 0 smoothly as the container empties
    (Θ̇ continuous at the end). ``law: constant`` (a metering valve) is offered too.
    The column descends as a plug (every particle at ḣ, exact continuity for a_o ≪ A);
    particles leave the body through the orifice plane z = 0.
``grasp``
    A part (mass, COM and inertia about the COM in the link frame) whose weight is
    taken over by the gripper along a C² ramp w(τ) = 10τ³ − 15τ⁴ + 6τ⁵ over
    ``ramp_time`` while the fingers pull it in by ``approach`` (its COM moves from
    com + approach to com along the same ramp). The load is the density w(t) ρ_part
    translated by c(t), all of it moving with ċ.
``timeline``
    User rows (t, Φ) from YAML or CSV, linearly interpolated. Each row must be the Φ
    of a non-negative density (f(Φ) ⪰ 0). Linear interpolation keeps that: f is
    linear, so f(Φ(t)) = (1 − s) f(Φ_k) + s f(Φ_{k+1}) is a convex combination of
    positive semidefinite matrices, i.e. the Φ of the non-negative density
    (1 − s) ρ_k + s ρ_{k+1}. Θ̇ is the slope of the interpolant (right derivative at
    the rows). The particles of that density do not move (ρ̇ ≠ 0, 𝓋 = 0), so ψ = 0
    exactly.

Every process is constant before its start and after its ``duration``.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt
from numpy.polynomial import Polynomial

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import InvalidInputError, PhysicalConsistencyError
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    phi_from_mass_com_inertia,
    pseudo_inertia,
    rpy_to_rotation,
    skew,
    transform_phi,
    transform_psi,
)

if TYPE_CHECKING:  # pragma: no cover
    from robot_tv_dynamics.model import RobotModel

#: Standard gravity [m/s²], the default stream acceleration and Torricelli's g.
STANDARD_GRAVITY = 9.81
#: Index of ∫σρ 𝓋₃ x₃ in ψ (eq. 27 layout ``psi[3 + 3 i + j] = ∫σρ 𝓋_i x_j``).
_PSI_ZZ = 3 + 3 * 2 + 2
#: Powers of the age kept by the stream integrals (z² integrated is of degree 5).
_POWERS = 6
_EXPONENTS = np.arange(_POWERS, dtype=np.float64)




@dataclass(frozen=True)
class LoadState:
    """A load at one instant, everything in the LINK frame of the process's ``link``.

    Attributes:
        phi: Φ(t) of the load, (10,), eq. (7) order about the link origin
            [kg, kg·m, kg·m²].
        phi_dot: dΦ/dt, (10,) [per s].
        psi: ψ(t) of eq. (27), (12,), of the load's moving particles [kg·m/s, kg·m²/s].
        psi_dot: dψ/dt, (12,) [per s].
        nu: ν(t) = ∫σρ‖𝓋‖² of eq. (25) [kg·m²/s²].
    """

    phi: Array
    phi_dot: Array
    psi: Array
    psi_dot: Array
    nu: float

    def __post_init__(self) -> None:
        """Freeze the arrays handed out."""
        for name in ("phi", "phi_dot", "psi", "psi_dot"):
            readonly(getattr(self, name))


class LoadingProcess(Protocol):
    """A time-dependent load on one URDF link (see the module docstring)."""

    #: URDF link the load is attached to; :class:`LoadState` is in its frame.
    link: str
    #: Natural duration [s]: the process is constant after it.
    duration: float

    def state(self, t: float) -> LoadState:
        """The load at time ``t`` [s] (link frame)."""
        ...


# ---------------------------------------------------------------------------- helpers
#: Φ = _AXISYMMETRIC @ (m, hz, sxx, szz): I = tr(Σ) I₃ − Σ with Σ = diag(sxx, sxx, szz).
_AXISYMMETRIC = np.zeros((10, 4))
_AXISYMMETRIC[0, 0] = 1.0  # m
_AXISYMMETRIC[3, 1] = 1.0  # h3
_AXISYMMETRIC[4, :] = _AXISYMMETRIC[5, :] = [0.0, 0.0, 1.0, 1.0]  # I11 = I22 = sxx + szz
_AXISYMMETRIC[6, 2] = 2.0  # I33 = 2 sxx
#: ψ = _AXIAL @ (p, l): only ∫σρ𝓋₃ and ∫σρ𝓋₃x₃ are non-zero.
_AXIAL = np.zeros((12, 2))
_AXIAL[2, 0] = 1.0
_AXIAL[_PSI_ZZ, 1] = 1.0


def _axisymmetric(m: float, hz: float, sxx: float, szz: float) -> Array:
    """Φ of an axisymmetric distribution about z from its moments.

    ``f = [[diag(sxx, sxx, szz), (0, 0, hz)], [(0, 0, hz), m]]`` with sxx = ∫ρx₁²,
    szz = ∫ρx₃², hz = ∫ρx₃, m = ∫ρ (eq. 9). Linear, so it serves for rates too.
    """
    return np.asarray(_AXISYMMETRIC @ np.array([m, hz, sxx, szz]))


def smoothstep(tau: float) -> tuple[float, float, float]:
    """C² ramp w(τ) = 10τ³ − 15τ⁴ + 6τ⁵ on [0, 1] (clamped), with w' and w''."""
    if tau <= 0.0:
        return 0.0, 0.0, 0.0
    if tau >= 1.0:
        return 1.0, 0.0, 0.0
    t2 = tau * tau
    return (
        t2 * tau * (10.0 + tau * (-15.0 + 6.0 * tau)),
        30.0 * t2 * (1.0 - tau) ** 2,
        60.0 * tau * (1.0 - tau) * (1.0 - 2.0 * tau),
    )


@dataclass(frozen=True)
class Placement:
    """Pose of a process frame in the link frame: ``x_link = R x + p``.

    Attributes:
        rotation: R, (3, 3).
        translation: p, (3,) [m].
    """

    rotation: Array
    translation: Array

    @classmethod
    def identity(cls) -> Placement:
        """The link frame itself."""
        return cls(np.eye(3), np.zeros(3))

    def phi_matrix(self) -> Array:
        """The linear map Φ ↦ Φ' of :func:`~robot_tv_dynamics.inertia.transform_phi`, (10, 10)."""
        return np.ascontiguousarray(transform_phi(np.eye(10), self.rotation, self.translation).T)

    def psi_matrix(self) -> Array:
        """The linear map ψ ↦ ψ' of :func:`~robot_tv_dynamics.inertia.transform_psi`, (12, 12)."""
        return np.ascontiguousarray(transform_psi(np.eye(12), self.rotation, self.translation).T)

    def phi(self, phi: Array) -> Array:
        """Φ (or Φ̇) from the process frame into the link frame."""
        return transform_phi(phi, self.rotation, self.translation)

    def psi(self, psi: Array) -> Array:
        """ψ (or ψ̇) from the process frame into the link frame."""
        return transform_psi(psi, self.rotation, self.translation)


@dataclass(frozen=True)
class Container:
    """A cylindrical container: thin shell (wall + bottom), uniform areal density.

    Container frame: origin at the centre of the inner bottom, z along the axis
    towards the opening.

    Attributes:
        radius: inner radius r [m].
        height: wall height H [m].
        mass: shell mass [kg].
        placement: container frame in the link frame.
    """

    radius: float
    height: float
    mass: float
    placement: Placement

    @property
    def area(self) -> float:
        """Inner cross-section A = πr² [m²]."""
        return math.pi * self.radius**2

    def shell_phi(self) -> Array:
        """Φ of the shell in the container frame (wall at radius r, bottom disc)."""
        r, height = self.radius, self.height
        wall = self.mass * 2.0 * height / (2.0 * height + r)  # areas 2πrH : πr²
        bottom = self.mass - wall
        return _axisymmetric(
            self.mass, wall * height / 2.0,
            wall * r**2 / 2.0 + bottom * r**2 / 4.0, wall * height**2 / 3.0)

    def column_moments(self, m: float, md: float, density: float) -> tuple[Array, Array]:
        """Moments (m, hz, sxx, szz) of a uniform liquid column of mass m at rest, and rates.

        Height H = m/(ρA): hz = m²/(2ρA), sxx = m r²/4, szz = m³/(3ρ²A²) (container frame;
        Φ = ``_AXISYMMETRIC @ moments``).
        """
        rho_a = density * self.area
        r2 = self.radius**2
        return (np.array([m, m * m / (2.0 * rho_a), m * r2 / 4.0, m**3 / (3.0 * rho_a**2)]),
                np.array([md, md * m / rho_a, md * r2 / 4.0, md * m * m / rho_a**2]))


class _ContainerFrame:
    """Precomputed maps from container-frame moments to link-frame Φ and ψ."""

    def __init__(self, container: Container) -> None:
        placement = container.placement
        self.phi = placement.phi_matrix() @ _AXISYMMETRIC  # (10, 4)
        self.psi = placement.psi_matrix() @ _AXIAL  # (12, 2)
        self.shell = placement.phi(container.shell_phi())

    def state(self, moments: Array, moments_dot: Array, axial: Array, axial_dot: Array,
              nu: float) -> LoadState:
        return LoadState(self.shell + self.phi @ moments, self.phi @ moments_dot,
                         self.psi @ axial, self.psi @ axial_dot, float(nu))


def _fixed_state(phi: Array) -> LoadState:
    return LoadState(phi.copy(), np.zeros(10), np.zeros(12), np.zeros(12), 0.0)


# ---------------------------------------------------------------------------- fill
class FillProcess:
    """A container on a link filled by a stream from an inlet on the same link.

    See the module docstring (``fill``) for the model; all quantities are closed form.
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
        self.q = _positive(mass_flow, "fill.mass_flow")
        self.fill_time = _positive(fill_time, "fill.fill_time")
        self.z_in = _positive(inlet_height, "fill.inlet_height")
        self.u0 = _nonnegative(inlet_speed, "fill.inlet_speed")
        self.density = _positive(fluid_density, "fill.fluid_density")
        self.a = _nonnegative(stream_acceleration, "fill.stream_acceleration")
        self.start = _finite(start, "fill.start")
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
        self._g = np.zeros((5, _POWERS))
        self._prim = np.zeros((5, _POWERS))
        for row, poly in enumerate(integrands):
            self._g[row, :poly.coef.size] = poly.coef
            prim = poly.integ().coef
            self._prim[row, :prim.size] = prim
        self.fall_time = self._fall_time(0.0)  # T₀: inlet to the empty bottom
        self.landing_end = self.fill_time + self._fall_time(self.final_level)
        self.duration = self.start + self.landing_end
        self._frame = _ContainerFrame(container)

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

    def state(self, t: float) -> LoadState:
        """Φ, Φ̇, ψ, ψ̇, ν of shell + liquid column + airborne stream at time ``t``."""
        tau = float(t) - self.start
        zero4, zero2 = np.zeros(4), np.zeros(2)
        if tau <= 0.0:
            return self._frame.state(zero4, zero4, zero2, zero2, 0.0)
        q = self.q
        open_valve = tau < self.fill_time
        entered, entered_rate = (q * tau, q) if open_valve else (q * self.fill_time, 0.0)
        lo, lo_rate = (0.0, 0.0) if open_valve else (tau - self.fill_time, 1.0)
        if tau >= self.landing_end:
            hi, hi_rate = lo, 0.0  # the last particle has landed
        elif tau < self.fall_time:
            hi, hi_rate = tau, 1.0  # the front is still falling
        else:
            hi, hi_rate = self._surface_age(tau)
        if hi <= lo:  # the last particle has landed
            lo = hi = lo_rate = hi_rate = 0.0
        # airborne stream: q ∫_lo^hi g(s) ds (g = z, z², w, z w, w²) and, by Leibniz' rule,
        # its rate q (g(hi) ḣi − g(lo) l̇o)
        p_hi, p_lo = hi ** _EXPONENTS, lo ** _EXPONENTS
        value = q * (self._prim @ (p_hi - p_lo))
        rate = q * (self._g @ (p_hi * hi_rate - p_lo * lo_rate))
        m_stream, m_stream_rate = q * (hi - lo), q * (hi_rate - lo_rate)
        pool, pool_dot = self.container.column_moments(
            max(entered - m_stream, 0.0), entered_rate - m_stream_rate, self.density)
        stream = np.array([m_stream, value[0], 0.0, value[1]])
        stream_dot = np.array([m_stream_rate, rate[0], 0.0, rate[1]])
        return self._frame.state(pool + stream, pool_dot + stream_dot, value[2:4], rate[2:4],
                                 value[4])

    def describe(self) -> str:
        """One line for logs and reports."""
        return (f"fill {self.q:g} kg/s for {self.fill_time:g} s into a {self.container.mass:g} kg "
                f"container on {self.link} (final liquid {self.q * self.fill_time:g} kg)")


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
        self.mass = _positive(mass, "grasp.mass")
        self.com = check_finite(com, "grasp.com", (3,))
        self.inertia = check_finite(inertia, "grasp.inertia", (3, 3))
        phi_c = phi_from_mass_com_inertia(self.mass, np.zeros(3), self.inertia, what="grasp")
        _check_density(phi_c, "grasp part")
        self.ramp_time = _positive(ramp_time, "grasp.ramp_time")
        self.approach = check_finite(approach, "grasp.approach", (3,))
        self.start = _finite(start, "grasp.start")
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
        phi_unit = _phi(m, m * c, self._inertia_com + m * sts)
        phi_unit_dot = _phi(0.0, m * cd, m * sts_dot)
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


def _phi(m: float, h: Array, inertia: Array) -> Array:
    return np.array([m, h[0], h[1], h[2], inertia[0, 0], inertia[1, 1], inertia[2, 2],
                     inertia[0, 1], inertia[1, 2], inertia[0, 2]])


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
            _check_density(phi, f"timeline row {k} (t = {self.times[k]:g} s)")
        self.slopes = readonly(
            np.diff(self.phis, axis=0) / np.diff(self.times)[:, None]
            if self.times.size > 1 else np.zeros((0, 10)))
        self.duration = float(self.times[-1])

    def state(self, t: float) -> LoadState:
        """Interpolated Φ, its slope, ψ = 0."""
        t = float(t)
        times = self.times
        if t < times[0] or t >= times[-1]:
            return _fixed_state(self.phis[0] if t < times[0] else self.phis[-1])
        k = int(np.searchsorted(times, t, side="right")) - 1
        slope = self.slopes[k]
        return LoadState(self.phis[k] + (t - times[k]) * slope, slope.copy(), np.zeros(12),
                         np.zeros(12), 0.0)

    def describe(self) -> str:
        """One line for logs and reports."""
        return (f"timeline of {self.times.size} rows on {self.link} "
                f"({self.times[0]:g} s to {self.times[-1]:g} s)")


# ---------------------------------------------------------------------------- loading
def _finite(value: Any, name: str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(name, f"expected a number, got {value!r}") from None
    if not math.isfinite(out):
        raise InvalidInputError(name, f"must be finite, got {out}")
    return out


def _positive(value: Any, name: str) -> float:
    out = _finite(value, name)
    if out <= 0.0:
        raise InvalidInputError(name, f"must be > 0, got {out}")
    return out


def _nonnegative(value: Any, name: str) -> float:
    out = _finite(value, name)
    if out < 0.0:
        raise InvalidInputError(name, f"must be >= 0, got {out}")
    return out


def _check_density(phi: Array, what: str) -> None:
    """f(Φ) ⪰ 0 up to rounding: Φ is that of a non-negative density (possibly empty)."""
    values = np.linalg.eigvalsh(pseudo_inertia(phi))
    if values[0] < -1e-9 * max(1.0, abs(values[-1])):
        raise PhysicalConsistencyError(
            what, f"f(Phi) has eigenvalue {values[0]:.4g} < 0: not the inertia of a "
            "non-negative mass distribution (Theorem 1)")


class _Section:
    """A mapping of config values with typed getters and an unknown-key check."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise InvalidInputError(where, f"expected a mapping, got {type(data).__name__}")
        self.data = dict(data)
        self.where = where
        self.used: set[str] = set()

    def name(self, key: str) -> str:
        return f"{self.where}.{key}"

    def get(self, key: str, default: Any = None, *, required: bool = False) -> Any:
        self.used.add(key)
        if key not in self.data:
            if required:
                raise InvalidInputError(self.where, f'missing key "{key}"')
            return default
        return self.data[key]

    def number(self, key: str, default: float | None = None) -> float:
        value = self.get(key, default, required=default is None)
        return _finite(value, self.name(key))

    def vector(self, key: str, size: int, default: Sequence[float] | None = None) -> Array:
        value = self.get(key, default, required=default is None)
        return check_finite(value, self.name(key), (size,))

    def section(self, key: str) -> _Section:
        return _Section(self.get(key, required=True), self.name(key))

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise InvalidInputError(
                self.where, f"unknown key(s) {unknown}; known: {sorted(self.used)}")


def _placement(section: _Section | None) -> Placement:
    if section is None:
        return Placement.identity()
    placement = Placement(rpy_to_rotation(section.vector("rpy", 3, (0.0, 0.0, 0.0)).tolist()),
                          section.vector("xyz", 3, (0.0, 0.0, 0.0)))
    section.done()
    return placement


def _container(config: _Section) -> Container:
    section = config.section("container")
    origin = section.get("origin")
    container = Container(
        radius=_positive(section.number("radius"), section.name("radius")),
        height=_positive(section.number("height"), section.name("height")),
        mass=_positive(section.number("mass"), section.name("mass")),
        placement=_placement(None if origin is None else _Section(origin, section.name("origin"))),
    )
    section.done()
    return container


def _inertia_matrix(value: Any, name: str) -> Array:
    """3×3, or the 6 entries (ixx, ixy, ixz, iyy, iyz, izz) of geometry_msgs/Inertia."""
    array = np.asarray(value, dtype=np.float64) if value is not None else np.zeros(0)
    if array.shape == (6,):
        ixx, ixy, ixz, iyy, iyz, izz = array
        array = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return check_finite(array, name, (3, 3))


_PHI_COLUMNS = ("m", "h1", "h2", "h3", "I11", "I22", "I33", "I12", "I23", "I13")
_MCI_COLUMNS = ("mass", "com_x", "com_y", "com_z", "ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _row_phi(row: Mapping[str, Any], where: str) -> Array:
    """Φ of one timeline row: ``phi`` (10), or ``mass``/``com``/``inertia`` (about the COM)."""
    if "phi" in row:
        return check_finite(row["phi"], f"{where}.phi", (10,))
    if "mass" in row:
        return phi_from_mass_com_inertia(
            _nonnegative(row["mass"], f"{where}.mass"),
            check_finite(row.get("com", (0.0, 0.0, 0.0)), f"{where}.com", (3,)),
            _inertia_matrix(row.get("inertia", np.zeros(6)), f"{where}.inertia"), what=where)
    raise InvalidInputError(where, 'a row needs "phi" (10 numbers) or "mass" (+ "com", "inertia")')


def _read_timeline_csv(path: Path) -> tuple[list[float], list[Array]]:
    """Rows of a CSV with header t + Φ columns or t + mass/COM/inertia columns."""
    try:
        with path.open(newline="") as stream:
            reader = csv.DictReader(line for line in stream if not line.lstrip().startswith("#"))
            rows = list(reader)
            header = [name.strip() for name in (reader.fieldnames or [])]
    except OSError as error:
        raise InvalidInputError("timeline.file", f"cannot read {path}: {error}") from None
    times, phis = [], []
    for k, raw in enumerate(rows):
        row = {key.strip(): value for key, value in raw.items() if key is not None}
        where = f"{path.name} row {k + 1}"
        if "t" not in header:
            raise InvalidInputError(str(path), f'CSV header needs "t"; got {header}')
        times.append(_finite(row["t"], f"{where}.t"))
        if all(c in header for c in _PHI_COLUMNS):
            phis.append(np.array([_finite(row[c], f"{where}.{c}") for c in _PHI_COLUMNS]))
        elif all(c in header for c in _MCI_COLUMNS):
            values = [_finite(row[c], f"{where}.{c}") for c in _MCI_COLUMNS]
            phis.append(_row_phi({"mass": values[0], "com": values[1:4],
                                  "inertia": values[4:]}, where))
        else:
            raise InvalidInputError(
                str(path), f"CSV header must be t + {list(_PHI_COLUMNS)} or t + "
                f"{list(_MCI_COLUMNS)}; got {header}")
    return times, phis


def _timeline(config: _Section, base_dir: Path | None) -> TimelineProcess:
    link = str(config.get("link", required=True))
    rows, file = config.get("rows"), config.get("file")
    if (rows is None) == (file is None):
        raise InvalidInputError("timeline", 'give exactly one of "rows" (a list) or "file" (CSV)')
    if file is not None:
        path = Path(str(file))
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        times, phis = _read_timeline_csv(path)
    else:
        if not isinstance(rows, Sequence) or isinstance(rows, str):
            raise InvalidInputError("timeline.rows", "expected a list of rows")
        times, phis = [], []
        for k, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise InvalidInputError(f"timeline.rows[{k}]", "expected a mapping")
            times.append(_finite(row.get("t"), f"timeline.rows[{k}].t"))
            phis.append(_row_phi(row, f"timeline.rows[{k}]"))
    config.done()
    return TimelineProcess(link, times, np.array(phis).reshape(-1, 10))


def _build(kind: str, config: _Section, base_dir: Path | None) -> LoadingProcess:
    if kind == "fill":
        fill = FillProcess(
            str(config.get("link", required=True)), _container(config),
            mass_flow=config.number("mass_flow"), fill_time=config.number("fill_time"),
            inlet_height=config.number("inlet_height"),
            inlet_speed=config.number("inlet_speed", 0.0),
            fluid_density=config.number("fluid_density", 1000.0),
            stream_acceleration=config.number("stream_acceleration", STANDARD_GRAVITY),
            start=config.number("start", 0.0))
        config.done()
        return fill
    if kind == "drain":
        drain = DrainProcess(
            str(config.get("link", required=True)), _container(config),
            initial_level=config.number("initial_level"),
            orifice_diameter=config.number("orifice_diameter", 0.0),
            discharge_coefficient=config.number("discharge_coefficient", 0.62),
            law=str(config.get("law", "torricelli")),
            volume_flow=config.number("volume_flow", 0.0),
            fluid_density=config.number("fluid_density", 1000.0),
            gravity=config.number("gravity", STANDARD_GRAVITY),
            start=config.number("start", 0.0))
        config.done()
        return drain
    if kind == "grasp":
        grasp = GraspProcess(
            str(config.get("link", required=True)), config.number("mass"),
            config.vector("com", 3), _inertia_matrix(config.get("inertia", required=True),
                                                     config.name("inertia")),
            ramp_time=config.number("ramp_time"),
            approach=config.vector("approach", 3, (0.0, 0.0, 0.0)),
            start=config.number("start", 0.0))
        config.done()
        return grasp
    if kind == "timeline":
        return _timeline(config, base_dir)
    raise InvalidInputError("process", f'"{kind}" is not one of {list(KINDS)}')


#: The kinds of loading process a config can name.
KINDS = ("fill", "drain", "grasp", "timeline")


def loading_process_from_dict(
    config: Mapping[str, Any], base_dir: str | Path | None = None
) -> LoadingProcess:
    """Build a loading process from the contents of a YAML file.

    Args:
        config: mapping with ``process`` (one of :data:`KINDS`), ``link`` and the kind's
            parameters (see ``config/loading/*.yaml``); an optional ``description`` is
            ignored.
        base_dir: directory that a relative timeline ``file`` is resolved against.

    Returns:
        The process.

    Raises:
        InvalidInputError: unknown kind or key, missing or out-of-range value.
        PhysicalConsistencyError: a given inertia that no non-negative density has.
    """
    section = _Section(config, "loading")
    kind = section.get("process", required=True)
    section.get("description")
    section.where = str(kind)
    if not isinstance(kind, str):
        raise InvalidInputError("process", f"expected one of {list(KINDS)}, got {kind!r}")
    return _build(kind, section, None if base_dir is None else Path(base_dir))


def load_loading_process(path: str | Path) -> LoadingProcess:
    """Read a loading process from a YAML file (see :func:`loading_process_from_dict`).

    Raises:
        InvalidInputError: unreadable file, malformed YAML, or a bad configuration
            (the message names the file).
    """
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as error:
        raise InvalidInputError("loading file", f"cannot read {path}: {error}") from None
    except yaml.YAMLError as error:
        raise InvalidInputError("loading file", f"{path} is not valid YAML: {error}") from None
    try:
        return loading_process_from_dict(data, path.parent)
    except InvalidInputError as error:
        raise InvalidInputError(f"{path}: {error.argument}", error.problem) from None


def body_loads(
    model: RobotModel, process: LoadingProcess, t: float, theta_base: npt.ArrayLike
) -> tuple[Array, Array, Array, Array]:
    """Θ, Θ̇, Ψ, Ψ̇ of the whole arm at time t: ``theta_base`` plus the load.

    Args:
        model: the arm.
        process: the loading process (its link must be in the URDF).
        t: time [s].
        theta_base: Θ without the load, (N, 10) [kg, kg·m, kg·m²].

    Returns:
        (Θ (N, 10), Θ̇ (N, 10), Ψ (N, 12), Ψ̇ (N, 12)), body coordinates; only the row of
        the body owning ``process.link`` differs from ``theta_base`` / zero.
    """
    state = process.state(t)
    return loads_from_state(model, process.link, state, theta_base)


class BodyLoadMap:
    """Adds a link-frame :class:`LoadState` to Θ, Θ̇, Ψ, Ψ̇ of the arm (precomputed, fast).

    The maps Φ_link ↦ Φ_body and ψ_link ↦ ψ_body are linear (a fixed rigid transform,
    as :meth:`RobotModel.link_load_in_body
    <robot_tv_dynamics.model.RobotModel.link_load_in_body>` applies them); they are
    evaluated once here, so a simulator can call this at every integrator stage.
    """

    def __init__(self, model: RobotModel, link: str) -> None:
        """Build the map for ``link``.

        Raises:
            UnknownNameError: the link is not in the URDF.
            InvalidInputError: the link is fixed to the world.
        """
        attachment = model.link_attachment(link)
        placement = Placement(np.asarray(attachment.rotation), np.asarray(attachment.translation))
        self.link = link
        self.body = attachment.body
        self.n_bodies = model.n_bodies
        self.phi_matrix = placement.phi_matrix()
        self.psi_matrix = placement.psi_matrix()

    def __call__(
        self, state: LoadState, theta_base: Array
    ) -> tuple[Array, Array, Array, Array]:
        """(Θ, Θ̇, Ψ, Ψ̇) of the arm: ``theta_base`` (N, 10) plus the load, body coordinates."""
        n, body = self.n_bodies, self.body
        theta = np.array(theta_base, dtype=np.float64)
        theta_dot, psi, psi_dot = np.zeros((n, 10)), np.zeros((n, 12)), np.zeros((n, 12))
        theta[body] += self.phi_matrix @ state.phi
        theta_dot[body] = self.phi_matrix @ state.phi_dot
        psi[body] = self.psi_matrix @ state.psi
        psi_dot[body] = self.psi_matrix @ state.psi_dot
        return theta, theta_dot, psi, psi_dot


def loads_from_state(
    model: RobotModel, link: str, state: LoadState, theta_base: npt.ArrayLike
) -> tuple[Array, Array, Array, Array]:
    """As :func:`body_loads`, from a :class:`LoadState` already evaluated."""
    theta = model.check_theta(theta_base).copy()
    n = model.n_bodies
    theta_dot, psi, psi_dot = np.zeros((n, 10)), np.zeros((n, 12)), np.zeros((n, 12))
    body, phi, phi_dot, psi_l, psi_dot_l = model.link_load_in_body(
        link, state.phi, state.phi_dot, state.psi, state.psi_dot)
    theta[body] += phi
    theta_dot[body] = phi_dot
    psi[body] = psi_l
    psi_dot[body] = psi_dot_l
    return theta, theta_dot, psi, psi_dot


#: Signature of a function giving (Θ, Θ̇, Ψ, Ψ̇) at time t (what the simulator consumes).
LoadFunction = Callable[[float], tuple[Array, Array, Array, Array]]
