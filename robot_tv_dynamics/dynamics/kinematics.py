r"""Per-configuration kinematics: stacked LOCAL body Jacobians and their q-derivatives.

For body l (Pinocchio joint l+1) the LOCAL Jacobian :math:`J_l(q) \in ℝ^{6×n}` maps
q̇ to the body twist (v_l, ω_l), linear part first, in body-l coordinates; eq. (17)
stacks them as J(q) ∈ ℝ^{6N×n}. Everything in eq. (39) is built from J, its
derivative and the body orientations, so it is computed once per q here.

The derivatives come from Pinocchio's kinematic Hessians, whose (6, nv, nv) binding
returns a column-major buffer read as row-major; :func:`hessian_to_derivative`
reorders it (checked against finite differences in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.arrays import Array


@dataclass(frozen=True)
class Kinematics:
    """Kinematic quantities of all N bodies at one configuration q.

    Attributes:
        q: the joint positions (nv,) [rad or m].
        jacobians: J_l, (N, 6, nv), LOCAL, linear rows first [m/rad, 1].
        jacobian_derivatives: T with ``T[l, :, i, k] = ∂J_l[:, i]/∂q_k``, (N, 6, nv, nv).
        rotations: R_l, orientation of body frame l in the base frame, (N, 3, 3).
        positions: z_l, origin of body frame l in the base frame, (N, 3) [m].
        gravity_local: (−R_lᵀ g, 0) per body, (N, 6) [m/s²]: the base acceleration that
            stands in for gravity, seen in body-l coordinates; G = Σ J_lᵀ Z_l (this).
    """

    q: Array
    jacobians: Array
    jacobian_derivatives: Array
    rotations: Array
    positions: Array
    gravity_local: Array

    @property
    def stacked_jacobian(self) -> Array:
        """J(q) of eq. (17)–(18), (6N, nv)."""
        return self.jacobians.reshape(-1, self.jacobians.shape[-1])


def hessian_to_derivative(hessian: Array, nv: int) -> Array:
    """Reorder Pinocchio's ``getJointKinematicHessian`` output to T[:, i, k] = ∂J[:, i]/∂q_k."""
    return np.asarray(hessian).ravel().reshape(nv, nv, 6).transpose(2, 1, 0)
