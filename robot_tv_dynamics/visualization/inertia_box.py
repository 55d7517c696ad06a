r"""What one body's Φ looks like: a lead ball at the COM and the equivalent uniform box.

The convention of RViz's RobotModel "Mass properties" and of Gazebo (ros2/rviz PR #714):

* the **lead ball**: a sphere of lead (:data:`LEAD_DENSITY` = 11340 kg/m³) of the body's
  mass, centred at the centre of mass c = h/m, radius r = (3m / (4πρ))^{1/3};
* the **equivalent box**: the box of uniform density and mass m, centred at c, whose
  inertia about c equals the body's. With Σ_c = ∫ρ (x−c)(x−c)ᵀ dx = ½ tr(I_c) 1 − I_c
  (the second moment about the COM; I_c the inertia about the COM) and its eigenvalues
  σ_k, eigenvectors e_k, the box has its edges along e_k and side lengths

  .. math::
      a_k = \sqrt{12\,\sigma_k / m},

  since a uniform box of sides a_k has σ_k = m a_k² / 12, and then
  I_c = Σ_k m (a_{k+1}² + a_{k+2}²)/12 e_k e_kᵀ exactly.

Σ_c is the Schur complement of m in f(Φ) of eq. (9): f(Φ) ≻ 0 ⇔ m > 0 and Σ_c ≻ 0. So
**the box exists exactly when Φ is physically consistent** (Theorem 1; on the boundary
a side is 0: a plate, a rod, a point mass); an inconsistent Φ (σ_k < 0: the triangle
inequality of the principal moments fails) has none. A body of zero mass has neither
ball nor box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import Array, check_finite, readonly, skew
from robot_tv_dynamics.inertia import H1, H3, M, inertia_matrix

#: Density of lead [kg/m³] (the RViz / Gazebo "mass properties" ball).
LEAD_DENSITY = 11340.0
#: Below this mass [kg] a body has no centre of mass to draw (no ball, no box).
MIN_MASS = 1e-12
#: Relative rounding admitted on the boundary: σ_k ≥ −RELATIVE_TOLERANCE·max|σ| is 0.
RELATIVE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class EquivalentBox:
    """The uniform box with the body's mass and inertia about its COM.

    Attributes:
        rotation: its orientation in the body frame, (3, 3), a proper rotation whose
            columns are the box edges' directions (principal axes of the inertia).
        dimensions: side lengths along those columns, (3,) [m].
    """

    rotation: Array
    dimensions: Array

    def inertia_about_com(self, mass: float) -> Array:
        """The inertia of this box of ``mass`` [kg] about its centre, body axes [kg·m²]."""
        a2 = np.asarray(self.dimensions) ** 2
        principal = mass / 12.0 * np.array([a2[1] + a2[2], a2[0] + a2[2], a2[0] + a2[1]])
        return np.asarray(self.rotation @ np.diag(principal) @ self.rotation.T)


@dataclass(frozen=True)
class InertiaGeometry:
    """The lead ball and the equivalent box of one Φ, in the body frame.

    Attributes:
        mass: m [kg] (may be negative: an inconsistent estimate).
        com: c = h/m in the body frame, (3,) [m].
        lead_radius: radius of a lead ball of mass |m| [m].
        box: the equivalent uniform box, or None when Φ is not physically consistent.
        second_moments: σ_k, the eigenvalues of Σ_c in ascending order, (3,) [kg·m²]
            (negative ones are why there is no box).
    """

    mass: float
    com: Array
    lead_radius: float
    box: EquivalentBox | None
    second_moments: Array

    @property
    def consistent(self) -> bool:
        """Whether the equivalent box exists (m > 0 and Σ_c ⪰ 0: Theorem 1, boundary in)."""
        return self.box is not None


def lead_radius(mass: float, density: float = LEAD_DENSITY) -> float:
    """Radius of a ball of ``|mass|`` [kg] at ``density`` [kg/m³]: (3|m| / (4πρ))^{1/3} [m]."""
    return float(np.cbrt(3.0 * abs(mass) / (4.0 * math.pi * density)))


def proper_rotation(vectors: npt.ArrayLike) -> Array:
    """The orthonormal columns ``vectors`` with the last one flipped if needed (det = +1)."""
    rotation = np.array(vectors, dtype=np.float64)
    if np.linalg.det(rotation) < 0.0:
        rotation[:, 2] *= -1.0
    return rotation


def inertia_geometry(phi: npt.ArrayLike, density: float = LEAD_DENSITY) -> InertiaGeometry | None:
    """The lead ball and the equivalent box of Φ (see the module docstring).

    Args:
        phi: Φ of one body, (10,), eq. (7) order, about the body-frame origin
            [kg, kg·m, kg·m²].
        density: density of the ball [kg/m³] (lead by default).

    Returns:
        The geometry in the body frame, or None when |m| ≤ :data:`MIN_MASS` (no centre
        of mass: nothing to draw).
    """
    phi = check_finite(phi, "phi", (10,))
    mass = float(phi[M])
    if abs(mass) <= MIN_MASS:
        return None
    com = phi[H1:H3 + 1] / mass
    s = skew(com)
    inertia_com = inertia_matrix(phi) - mass * s.T @ s  # parallel-axis theorem
    inertia_com = 0.5 * (inertia_com + inertia_com.T)
    sigma_c = 0.5 * np.trace(inertia_com) * np.eye(3) - inertia_com
    values, vectors = np.linalg.eigh(sigma_c)
    scale = max(float(np.abs(values).max()), abs(mass) * float(com @ com), 1e-300)
    box = None
    if mass > 0.0 and values[0] >= -RELATIVE_TOLERANCE * scale:
        dimensions = np.sqrt(12.0 * np.maximum(values, 0.0) / mass)
        box = EquivalentBox(rotation=readonly(proper_rotation(vectors)),
                            dimensions=readonly(dimensions))
    return InertiaGeometry(mass=mass, com=readonly(com), lead_radius=lead_radius(mass, density),
                           box=box, second_moments=readonly(values))
