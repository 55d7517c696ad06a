r"""Shapes the fluid processes share: the placement of a process frame and the container.

Both are axisymmetric about the container's z axis, so Φ and ψ reduce to a few moments
(:func:`_axisymmetric`, :data:`_AXIAL`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.inertia import (
    Array,
    transform_phi,
    transform_psi,
)
from robot_tv_dynamics.loading.state import (
    LoadState,
)

#: Index of ∫σρ 𝓋₃ x₃ in ψ (eq. 27 layout ``psi[3 + 3 i + j] = ∫σρ 𝓋_i x_j``).
_PSI_ZZ = 3 + 3 * 2 + 2
#: Powers of the age kept by the stream integrals (z² integrated is of degree 5).
AGE_POWERS = 6
_EXPONENTS = np.arange(AGE_POWERS, dtype=np.float64)


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


class ContainerFrame:
    """Precomputed maps from container-frame moments to link-frame Φ and ψ."""

    def __init__(self, container: Container) -> None:
        """The maps of ``container``: its placement in the link and its shell's Φ."""
        placement = container.placement
        self.phi = placement.phi_matrix() @ _AXISYMMETRIC  # (10, 4)
        self.psi = placement.psi_matrix() @ _AXIAL  # (12, 2)
        self.shell = placement.phi(container.shell_phi())

    def state(self, moments: Array, moments_dot: Array, axial: Array, axial_dot: Array,
              nu: float) -> LoadState:
        """The link-frame load of the contents' moments and axial flows (and the shell)."""
        return LoadState(self.shell + self.phi @ moments, self.phi @ moments_dot,
                         self.psi @ axial, self.psi @ axial_dot, float(nu))
