r"""The Ψ coupling of eq. (23)–(27) with the Q₀ correction: γ_l = Q₀ ψ_l.

Q₀ (a correction to the paper, docs/concepts.md "The model"): with body-frame
velocities the coupling term of eq. (23) is (v_l, ω_l)ᵀ γ_l with γ_l = Q₀ψ_l, where Q₀ is
eq. (26) evaluated with R = I: Q₀ = diag(I₃, −S·T) with S, T of eq. (72). γ_l is the
relative linear and angular momentum (∫σρ𝓋, ∫σρ x×𝓋) of the moving particles.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.arrays import Array

#: S of eq. (72), (3, 9).
S_72 = np.array([
    [0, 0, 0, 0, 0, -1, 0, 1, 0],
    [0, 0, 1, 0, 0, 0, -1, 0, 0],
    [0, -1, 0, 1, 0, 0, 0, 0, 0],
], dtype=np.float64)
#: T of eq. (72), the (9, 9) permutation.
T_72 = np.zeros((9, 9))
T_72[[0, 1, 2, 3, 4, 5, 6, 7, 8], [0, 3, 6, 1, 4, 7, 2, 5, 8]] = 1.0
#: Q₀ = diag(I₃, −S·T), (6, 12): γ_l = Q₀ ψ_l.
Q0 = np.zeros((6, 12))
Q0[:3, :3] = np.eye(3)
Q0[3:, 3:] = -S_72 @ T_72
for _constant in (S_72, T_72, Q0):
    _constant.setflags(write=False)


def psi_momentum(psi: Array) -> Array:
    """γ_l = Q₀ ψ_l for each body: Ψ (N, 12) → (N, 6) [kg·m/s, kg·m²/s]."""
    return np.asarray(psi @ Q0.T)
