r"""The size bound of a body that carries up to a rated payload (the cell's own limit).

A monitor that bounds a body's size ν_l = λ_max(f(Φ_l)) by a factor of the URDF's value
alarms at a payload far below what the arm is rated for (the UR5's wrist body is 0.19 kg: a
1 kg tool is 5× its ν). A rated payload gives the bound the cell needs: every load of mass
m ≤ m_r whose mass lies within a ball of radius r about a point c (the flange origin, in the
body frame) has

.. math::

    f(\Phi_L) = \int \rho \, \tilde x \tilde x^\top \succeq 0,\quad \tilde x = (x, 1),
    \qquad \lambda_{\max}(f(\Phi_L)) \le \operatorname{tr} f(\Phi_L)
    = \int \rho\,(1 + \lVert x\rVert^2) \le m_r\,(1 + (\lVert c\rVert + r)^2),

and, f being linear, λ_max(f(Φ_b + Φ_L)) ≤ λ_max(f(Φ_b)) + λ_max(f(Φ_L)) (Weyl). So

.. math::

    S = \lambda_{\max}(f(\Phi_b)) + m_r\,(1 + (\lVert c\rVert + r)^2)

bounds the size of the body with any load within the rating; a monitor whose WARN
threshold is S never warns for such a load.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import check_finite
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import pseudo_inertia


def rated_size_bound(phi_body: npt.ArrayLike, rated_mass: float, centre: npt.ArrayLike,
                     radius: float) -> float:
    """S: the largest λ_max(f(Φ_b + Φ_L)) of a load within the rating (module docstring).

    Args:
        phi_body: the body's nominal Φ_b, about the body frame, eq. (7) order (10,).
        rated_mass: m_r, the rated payload [kg], ≥ 0.
        centre: c, the point the load's mass is around (the flange origin), body frame (3,)
            [m].
        radius: r, the distance from c within which the load's mass lies [m], ≥ 0.

    Returns:
        S [kg·m² or kg: the mixed units of f].

    Raises:
        InvalidInputError: a negative or non-finite mass or radius.
    """
    for name, value in (("rated_payload", rated_mass), ("rated_payload_distance", radius)):
        if not (math.isfinite(value) and value >= 0.0):
            raise InvalidInputError(name, f"must be finite and >= 0, got {value}")
    c = check_finite(centre, "centre", (3,))
    nominal = float(np.linalg.eigvalsh(pseudo_inertia(phi_body))[-1])
    return max(nominal, 0.0) + rated_mass * (1.0 + (float(np.linalg.norm(c)) + radius) ** 2)
