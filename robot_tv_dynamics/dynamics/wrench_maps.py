r"""The constant linear maps of the recursive backend: wrench rates and Pinocchio's inertia layout.

- :data:`RATE_MAP` turns one body's (Φ̇, ψ, ψ̇) into the affine map f^ext_l = B_l V_l + b_l
  of its external wrench (the momentum-rate terms of eq. (39) that RNEA does not hold);
- :data:`INERTIA_MAP` turns (Φ, h⊗c) into Pinocchio's Inertia storage (m, c, I_c);
- :data:`PSI_FROM_GAMMA` maps a momentum image γ = Q₀ψ back to a ψ with that image.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.arrays import Array, skew
from robot_tv_dynamics.dynamics.coupling import Q0
from robot_tv_dynamics.inertia import SPATIAL_BASIS


def _force_cross_basis() -> Array:
    """G(e_k), (6, 6, 6), with V ×* γ = G(γ) V = Σ_k γ_k G(e_k) V for γ = (f, n).

    V ×* γ = (ω × f, v × f + ω × n), so G(γ) = [[0, −S(f)], [−S(f), −S(n)]].
    """
    out = np.zeros((6, 6, 6))
    for k in range(6):
        gamma = np.zeros(6)
        gamma[k] = 1.0
        s_f, s_n = skew(gamma[:3]), skew(gamma[3:])
        out[k, :3, 3:] = -s_f
        out[k, 3:, :3] = -s_f
        out[k, 3:, 3:] = -s_n
    return out


def rate_map() -> Array:
    """W, (34, 42): row [θ̇_l, ψ_l, ψ̇_l] ↦ [B_l (6, 6) row-major, b_l (6)], f^ext_l = B_l V_l + b_l.

    B_l = −(Z(Φ̇_l) + G(Q₀ψ_l)) and b_l = −Q₀ψ̇_l: the negated momentum-rate terms of (39).
    """
    w = np.zeros((34, 42))
    w[:10, :36] = -SPATIAL_BASIS.reshape(10, 36)
    w[10:22, :36] = -np.einsum("kj,kab->jab", Q0, _force_cross_basis()).reshape(12, 36)
    w[22:34, 36:] = -Q0.T
    return w


def inertia_map() -> Array:
    """P, (19, 10): [Φ (eq. 7), h⊗c (row-major)] ↦ Pinocchio's Inertia storage (m, c, I_c).

    I_c = I − m S(c)ᵀS(c) = I − ((h·c) I₃ − h cᵀ), packed as (xx, xy, yy, xz, yz, zz).
    The c columns of the result are zero: c = h/m is not linear and is written apart.
    """
    p = np.zeros((19, 10))
    p[0, 0] = 1.0
    for phi_index, packed in ((4, 0), (7, 1), (5, 2), (9, 3), (8, 4), (6, 5)):
        p[phi_index, 4 + packed] = 1.0
    hc = 10  # row of (h⊗c)[i, j] is hc + 3 i + j
    for packed, others in ((0, (1, 2)), (2, (0, 2)), (5, (0, 1))):  # xx, yy, zz
        for k in others:
            p[hc + 4 * k, 4 + packed] = -1.0
    for packed, (i, j) in ((1, (0, 1)), (4, (1, 2)), (3, (0, 2))):  # xy, yz, xz
        p[hc + 3 * i + j, 4 + packed] = p[hc + 3 * j + i, 4 + packed] = 0.5
    return p


#: Exact right inverse of Q₀ = diag(I₃, −S·T): (−S·T)(−S·T)ᵀ = S·Sᵀ = 2 I₃, so
#: Q₀ · PSI_FROM_GAMMA = I₆ with entries 0, ±½, 1. Maps γ (6,) to a ψ (12,) with Q₀ψ = γ.
PSI_FROM_GAMMA = np.zeros((12, 6))
PSI_FROM_GAMMA[:3, :3] = np.eye(3)
PSI_FROM_GAMMA[3:, 3:] = 0.5 * Q0[3:, 3:].T
RATE_MAP = rate_map()
INERTIA_MAP = inertia_map()
for _constant in (PSI_FROM_GAMMA, RATE_MAP, INERTIA_MAP):
    _constant.setflags(write=False)
