r"""Eq. (39) by contraction of per-q kinematics with Z(Φ_l): exact for any parameter vector.

Everything is linear in Θ, Θ̇ and Ψ and is computed by contracting the per-q
kinematics (:class:`~robot_tv_dynamics.dynamics.kinematics.Kinematics`: LOCAL body
Jacobians and their q-derivatives) with the spatial inertias Z(Φ_l) of eq. (24), so it
is exact for any parameter vector, including rates Θ̇ and regressor basis vectors that
no rigid body (and no Pinocchio ``Inertia``) can represent. Every matrix of eq. (39)
comes out separately (the term-by-term breakdown).
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.arrays import Array
from robot_tv_dynamics.dynamics.kinematics import Kinematics
from robot_tv_dynamics.dynamics.terms import GeneralizedTerms
from robot_tv_dynamics.exceptions import PhysicalConsistencyError
from robot_tv_dynamics.inertia import SPATIAL_BASIS

_BASIS_FLAT = SPATIAL_BASIS.reshape(10, 36)


def spatial_inertias(theta: Array) -> Array:
    """Z(Φ_l) for each row of a validated Θ (N, 10) → (N, 6, 6), eq. (24)."""
    return np.asarray(theta @ _BASIS_FLAT).reshape(-1, 6, 6)


def mass_matrix(kin: Kinematics, theta: Array) -> Array:
    """M(q, Θ) = Σ_l J_lᵀ Z(Φ_l) J_l, eq. (31); exact for any Θ."""
    jac = kin.stacked_jacobian
    zj = (spatial_inertias(theta) @ kin.jacobians).reshape(jac.shape)
    return np.asarray(jac.T @ zj)


def _coriolis(kin: Kinematics, zj_flat: Array, qd: Array) -> Array:
    """C(q, q̇, Θ) of eq. (40)–(41) from ZJ = Z(Θ) J stacked (6N, nv).

    With P[k, i, j] = (∂J[:, k]/∂q_i)ᵀ Z J[:, j], ∂M_kj/∂q_i = P[k,i,j] + P[j,i,k], and
    C = ½ (A + Aᵀ + B − Bᵀ + Eᵀ − E) with A = P·q̇ over i, B over j, E over k.
    """
    nv = qd.shape[0]
    t_flat = kin.jacobian_derivatives.reshape(-1, nv * nv)
    p = (t_flat.T @ zj_flat).reshape(nv, nv, nv)  # [k, i, j]
    a = qd @ p  # Σ_i P[k, i, j] q̇_i
    b = p @ qd  # Σ_j P[k, i, j] q̇_j
    e = (qd @ p.reshape(nv, nv * nv)).reshape(nv, nv)  # Σ_k q̇_k P[k, i, j]
    return 0.5 * (a + a.T + b - b.T + e.T - e)


def _gyroscopic(kin: Kinematics, gamma: Array) -> Array:
    """H(q, Ψ) = D − Dᵀ, D[k, i] = Σ_l (∂J_l[:, k]/∂q_i) · γ_l, eq. (43)."""
    nv = kin.jacobians.shape[2]
    d = (gamma.ravel() @ kin.jacobian_derivatives.reshape(-1, nv * nv)).reshape(nv, nv)
    return np.asarray(d - d.T)


def generalized_terms(
    kin: Kinematics,
    qd: Array,
    qdd: Array,
    theta: Array,
    theta_dot: Array,
    gamma: Array,
    gamma_dot: Array,
) -> GeneralizedTerms:
    """All terms of eq. (39) (inputs already validated; γ = Q₀ψ per body, (N, 6))."""
    jac = kin.stacked_jacobian
    zj = (spatial_inertias(theta) @ kin.jacobians).reshape(jac.shape)
    m = jac.T @ zj
    c = _coriolis(kin, zj, qd)
    g = zj.T @ kin.gravity_local.ravel()
    m_rate = jac.T @ (spatial_inertias(theta_dot) @ kin.jacobians).reshape(jac.shape)
    h = _gyroscopic(kin, gamma)
    psi_dot_force = jac.T @ gamma_dot.ravel()
    tau = m @ qdd + (c + m_rate + h) @ qd + g + psi_dot_force
    return GeneralizedTerms(
        tau=tau, mass_matrix=m, coriolis_matrix=c, gravity=g, mass_rate_matrix=m_rate,
        gyroscopic_matrix=h, psi_dot_force=psi_dot_force, qd=qd.copy(), qdd=qdd.copy(),
    )


def _apply(z: Array, x: Array) -> Array:
    """Z_l x_l for each body: (N, 6, 6) and (N, 6) → (N, 6)."""
    return np.asarray((z @ x[:, :, None])[:, :, 0])


def bias_force(
    kin: Kinematics, qd: Array, theta: Array, theta_dot: Array, gamma: Array, gamma_dot: Array,
) -> tuple[Array, Array]:
    r"""M(q, Θ) and the q̈-free part of eq. (39): (C + M(Θ̇) + H) q̇ + G + JᵀQ₀Ψ̇.

    Matrix-free, for the simulator's inner loop. With the body twists V_l = J_l q̇,
    Tq̇[:, k] = Σ_i T[:, k, i] q̇_i, Wq̇[:, k] = Σ_i q̇_i T[:, i, k] and
    s_l = Σ_ij q̇_i q̇_j T_l[:, i, j]:

    .. math::
        b = Σ_l (Tq̇ − Wq̇)_l^\top (Z_l V_l + γ_l)
            + J_l^\top (Z_l (s_l + g_l) + Z(\dotΦ_l) V_l + \dotγ_l)
    """
    jacobians, t = kin.jacobians, kin.jacobian_derivatives
    jac = kin.stacked_jacobian
    z = spatial_inertias(theta)
    m = jac.T @ (z @ jacobians).reshape(jac.shape)
    twist = jacobians @ qd
    t_qd = t @ qd
    w_qd = qd @ t
    s = w_qd @ qd
    outer = _apply(z, twist) + gamma
    inner = (_apply(z, s + kin.gravity_local) + _apply(spatial_inertias(theta_dot), twist)
             + gamma_dot)
    bias = (t_qd - w_qd).reshape(jac.shape).T @ outer.ravel() + jac.T @ inner.ravel()
    return m, bias


def forward_dynamics(
    kin: Kinematics,
    qd: Array,
    tau: Array,
    theta: Array,
    theta_dot: Array,
    gamma: Array,
    gamma_dot: Array,
) -> Array:
    """q̈ = M⁻¹ (τ − bias) for eq. (39) with w = 0 (inputs validated; γ form of Ψ)."""
    import scipy.linalg  # here: the reference path, and 0.3 s of every importer's start-up

    m, bias = bias_force(kin, qd, theta, theta_dot, gamma, gamma_dot)
    try:
        factor = scipy.linalg.cho_factor(m, check_finite=False)
    except np.linalg.LinAlgError:
        raise PhysicalConsistencyError(
            "theta", "M(q, Θ) is not positive definite; Θ is not physically consistent") from None
    return np.asarray(scipy.linalg.cho_solve(factor, tau - bias, check_finite=False))


def _basis_action(x: Array) -> Array:
    """[Z(e_h) x_l]_h for each body: (N, 6) → (N, 10, 6), the Φ-Jacobian of Z(Φ) x."""
    return np.asarray(np.einsum("hab,lb->lha", SPATIAL_BASIS, x))


def regressor(kin: Kinematics, qd: Array, v: Array, a: Array) -> Array:
    """R(q, q̇, v, a) of eq. (44), (nv, 10N), with R Θ = M a + C(q, q̇) v + G for any Θ.

    (C v)_k = ½ [(Tq̇ − Wq̇)_kᵀ Z J v + (Tv − Wv)_kᵀ Z J q̇ + J_kᵀ Z (s₁ + s₂)], with
    s₁ = Σ_ij q̇_i v_j T[:, j, i] and s₂ = Σ_ij q̇_i v_j T[:, i, j]; every addend is
    Xᵀ Z(Φ) y, whose Φ-derivative is Xᵀ [Z(e_h) y]_h.
    """
    jacobians, t = kin.jacobians, kin.jacobian_derivatives
    n, nv = jacobians.shape[0], jacobians.shape[2]
    twist = jacobians @ qd
    twist_v = jacobians @ v
    x_qd = 0.5 * (t @ qd - qd @ t)
    x_v = 0.5 * (t @ v - v @ t)
    s1 = (v @ t) @ qd  # Σ_ij q̇_i v_j T[:, j, i]
    s2 = (qd @ t) @ v  # Σ_ij q̇_i v_j T[:, i, j]
    y = jacobians @ a + kin.gravity_local + 0.5 * (s1 + s2)
    r = np.einsum("lak,lha->klh", jacobians, _basis_action(y))
    r += np.einsum("lak,lha->klh", x_qd, _basis_action(twist_v))
    r += np.einsum("lak,lha->klh", x_v, _basis_action(twist))
    return np.asarray(r.reshape(nv, 10 * n))


def kinetic_energy(kin: Kinematics, qd: Array, theta: Array, gamma: Array, nu: float) -> float:
    """Eq. (30): ½ q̇ᵀ M q̇ + ½ ν + q̇ᵀ Σ_l J_lᵀ γ_l [J]."""
    twist = kin.jacobians @ qd
    quadratic = np.sum(twist * _apply(spatial_inertias(theta), twist))
    return float(0.5 * quadratic + 0.5 * nu + np.sum(twist * gamma))


def potential_energy(kin: Kinematics, theta: Array, gravity: Array) -> float:
    """Eq. (36) with the base-frame gravity vector g: U = −gᵀ Σ_l (m_l z_l + R_l h_l) [J]."""
    moments = theta[:, 0:1] * kin.positions + np.einsum("lij,lj->li", kin.rotations, theta[:, 1:4])
    return float(-gravity @ moments.sum(axis=0))
