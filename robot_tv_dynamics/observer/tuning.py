r"""The residual's noise floor: what K_O and the contact threshold must sit above.

For an arm at (near) rest with white joint-velocity noise n_j (σ_q̇,j per sample) and
white joint-torque noise (σ_τ,i), the discrete observer of
:mod:`~robot_tv_dynamics.observer.observer` (a = e^{−K_O h}) gives, per joint i,

.. math::
    σ_{r,i}^2 = \Big(\frac{1-a}{h}\Big)^2 \frac{2}{1+a} \sum_j M_{ij}(q,Θ)^2 σ_{\dot q,j}^2
              + c\,σ_{τ,i}^2,\qquad
    c = \begin{cases}(1-a)/2 & \text{trapezoidal}\\ (1-a)/(1+a) & \text{hold}\end{cases}

(the velocity noise enters p = Mq̇ + … with the mass matrix and is differenced, then
low-passed; the torque noise is only low-passed). For K_O h ≪ 1:
σ_r,i ≈ K_O ‖M_i σ_q̇‖ ⊕ σ_τ √(K_O h / 2). The velocity part grows linearly with K_O
and with the inertia the joint sees — a payload raises M and with it the noise floor.
The velocity-dependent terms of β (Cᵀq̇ + Dᵀq̇, quadratic in q̇) add to this in motion.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array


def residual_noise_std(
    mass_matrix: npt.ArrayLike, gain: float | npt.ArrayLike, dt: float,
    velocity_noise_std: float | npt.ArrayLike, torque_noise_std: float | npt.ArrayLike = 0.0,
    torque_rule: str = "trapezoidal",
) -> Array:
    """σ of the residual per joint from white velocity and torque noise (module docstring).

    Args:
        mass_matrix: M(q, Θ) (nv, nv) at the configuration and load of interest.
        gain: K_O, one value or (nv,) [1/s].
        dt: sample interval h [s].
        velocity_noise_std: σ_q̇ per joint, one value or (nv,) [rad/s, m/s].
        torque_noise_std: σ_τ per joint, one value or (nv,) [N·m, N].
        torque_rule: the observer's ``torque_rule``.

    Returns:
        σ_r (nv,) [N·m, N].

    Raises:
        InvalidInputError: a non-positive dt, an unknown rule, a non-square M.
    """
    m = np.asarray(mass_matrix, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise InvalidInputError("mass_matrix", f"expected (nv, nv), got {m.shape}")
    if not (math.isfinite(dt) and dt > 0):
        raise InvalidInputError("dt", f"must be > 0, got {dt}")
    if torque_rule not in ("trapezoidal", "hold"):
        raise InvalidInputError("torque_rule", f'must be "trapezoidal" or "hold", got '
                                f'"{torque_rule}"')
    nv = m.shape[0]
    a = np.exp(-np.broadcast_to(np.asarray(gain, dtype=np.float64), (nv,)) * dt)
    sigma_v = np.broadcast_to(np.asarray(velocity_noise_std, dtype=np.float64), (nv,))
    sigma_t = np.broadcast_to(np.asarray(torque_noise_std, dtype=np.float64), (nv,))
    velocity = ((1 - a) / dt) ** 2 * 2 / (1 + a) * ((m * sigma_v) ** 2).sum(axis=1)
    c = (1 - a) / 2 if torque_rule == "trapezoidal" else (1 - a) / (1 + a)
    return np.asarray(np.sqrt(velocity + c * sigma_t**2))
