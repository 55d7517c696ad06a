r"""The generalized momentum p = ∂L/∂q̇ of eq. (30)/(39) and its balance.

With the kinetic energy of eq. (30) (Q₀ form, docs/concepts.md) and the body twists
V_l = J_l(q) q̇ (LOCAL, linear part first),

.. math::
    \mathcal T = \tfrac12 \dot q^\top M(q,Θ)\dot q + \tfrac12 ν
                 + \dot q^\top \textstyle\sum_l J_l^\top γ_l,\qquad γ_l = Q_0ψ_l,

the generalized momentum (eq. (48)) is

.. math::
    p = \frac{∂L}{∂\dot q} = M(q,Θ)\dot q + \sum_l J_l(q)^\top γ_l
      = \sum_l J_l^\top \big(Z(Φ_l) V_l + γ_l\big),

the body momenta h_l = Z(Φ_l)V_l + γ_l (rigid part plus the relative momentum of the
moving particles) mapped to the joints. The Euler–Lagrange equation (38) with an
external joint torque τ_ext (the paper's w) is ṗ = τ + τ_ext + ∂L/∂q, and ∂L/∂q is

.. math::
    β(q,\dot q,Θ,Ψ) = \frac{∂L}{∂q} = C(q,\dot q,Θ)^\top\dot q + D(q,Ψ)^\top\dot q - G(q,Θ)
      = \sum_l \Big(\frac{∂V_l}{∂q}\Big)^\top h_l - G(q,Θ),

with C the Christoffel matrix of eq. (40)–(41) (½ q̇ᵀ(∂M/∂q_k)q̇ = (Cᵀq̇)_k),
D[k, i] = (∂J_l[:, k]/∂q_i)ᵀ γ_l of eq. (43) (H = D − Dᵀ), and
∂V_l/∂q_k = Σ_i q̇_i ∂J_l[:, i]/∂q_k. Hence

.. math::
    \dot p = τ + τ_{ext} + β(q,\dot q,Θ,Ψ).

**Θ̇ and Ψ̇ do not appear in β.** L depends on Θ(t) and Ψ(t) but not on their rates, so
∂L/∂q has none; the rate terms of eq. (39), M(q,Θ̇)q̇ and JᵀQ₀Ψ̇, are part of ṗ, and a
momentum observer that differences p(t) (built from Θ(t), Ψ(t) at each sample)
accounts for them without being given Θ̇, Ψ̇. Check against (39): ṗ = Ṁq̇ + M(Θ̇)q̇ +
Mq̈ + Dq̇ + JᵀQ₀Ψ̇; inserting Mq̈ from (39) and Ṁ = C + Cᵀ leaves
τ + w + Cᵀq̇ + (D − H)q̇ − G = τ + w + Cᵀq̇ + Dᵀq̇ − G. (Had one kept the classical
p' = M(q,Θ)q̇ instead, its balance would be ṗ' = τ + w + Cᵀq̇ − Hq̇ − JᵀQ₀Ψ̇ − G: Ψ̇
enters, Θ̇ still cancels.) test/observer/test_momentum.py checks p against ∂L/∂q̇ and β
against ∂L/∂q of the independent particle Lagrangian, and ṗ − β against the
particles' Euler–Lagrange torque along a path.

Two implementations give the same p and β (to rounding, tested):
:func:`momentum_terms` contracts the per-q kinematics (one ``model.kinematics(q)``
call with ∂J/∂q, O(N·nv²); the reference), and :class:`MomentumEvaluator`, what the
observer uses, calls :meth:`RecursiveDynamics.momentum
<robot_tv_dynamics.dynamics.RecursiveDynamics.momentum>` — two RNEA passes with the
loads held between samples, about 10 µs against 45–55 µs (Panda, UR5;
``benchmarks/bench_observer.py``) — and falls back to the contraction for joints with
more than one degree of freedom.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.dynamics import RecursiveDynamics, psi_momentum
from robot_tv_dynamics.inertia import SPATIAL_BASIS, Array, check_finite
from robot_tv_dynamics.model import RobotModel

_SPATIAL_FLAT = SPATIAL_BASIS.reshape(10, 36)


@dataclass(frozen=True)
class MomentumTerms:
    """p and β at one state.

    Attributes:
        p: generalized momentum ∂L/∂q̇ = M(q,Θ)q̇ + Σ J_lᵀ Q₀ψ_l, (nv,) [N·m·s, N·s].
        beta: ∂L/∂q = Cᵀq̇ + Dᵀq̇ − G, (nv,) [N·m, N]; ṗ = τ + τ_ext + β.
    """

    p: Array
    beta: Array


def as_gamma(model: RobotModel, psi: npt.ArrayLike | None) -> Array:
    """Ψ (N, 12), eq. (27) layout, or γ = Q₀ψ (N, 6), or None (zero) → γ (N, 6).

    Raises:
        InvalidInputError: wrong shape or non-finite entries.
    """
    n = model.n_bodies
    if psi is None:
        return np.zeros((n, 6))
    array = np.asarray(psi, dtype=np.float64)
    if array.shape == (n, 6):
        return check_finite(array, "psi", (n, 6))
    return psi_momentum(check_finite(array, "psi", (n, 12)))


def momentum_terms(
    model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, theta: npt.ArrayLike,
    gamma: npt.ArrayLike | None = None,
) -> MomentumTerms:
    r"""Momentum p = Σ J_lᵀ h_l and β = Σ (∂V_l/∂q)ᵀ h_l − G with h_l = Z(Φ_l)V_l + γ_l.

    The contraction (reference) implementation; :class:`MomentumEvaluator` is the fast
    one (see the module docstring).

    Args:
        model: the arm.
        q: joint positions (nv,) [rad, m].
        qd: joint velocities (nv,) [rad/s, m/s].
        theta: Θ, (N, 10), eq. (7) order about each body-frame origin [kg, kg·m, kg·m²].
        gamma: γ_l = Q₀ψ_l per body, (N, 6), body coordinates [kg·m/s, kg·m²/s]
            (:func:`as_gamma` converts Ψ); None = 0.

    Returns:
        The :class:`MomentumTerms`.

    Raises:
        InvalidInputError: wrong shapes or non-finite entries.
    """
    kin = model.kinematics(q)
    qd = model.check_joint_vector(qd, "qd")
    theta = model.check_theta(theta)
    jac = kin.stacked_jacobian  # (6N, nv)
    z = (theta @ _SPATIAL_FLAT).reshape(-1, 6, 6)
    # Z_l [V_l, (−R_lᵀg, 0)]: the rigid body momentum and the gravity wrench, per body
    columns = np.stack([(jac @ qd).reshape(-1, 6), kin.gravity_local], axis=2)  # (N, 6, 2)
    zx = z @ columns
    h = zx[:, :, 0]
    if gamma is not None:
        h = h + np.asarray(gamma, dtype=np.float64)
    # ∂V_l/∂q_k = Σ_i q̇_i ∂J_l[:, i]/∂q_k (kin.jacobian_derivatives[l, :, i, k])
    dtwist_dq = (qd @ kin.jacobian_derivatives).reshape(jac.shape)
    h_flat = h.ravel()
    p = jac.T @ h_flat
    beta = dtwist_dq.T @ h_flat - jac.T @ zx[:, :, 1].ravel()
    return MomentumTerms(p=p, beta=beta)


class MomentumEvaluator:
    """p and β for one arm by the recursive backend, holding Θ and γ between samples.

    :meth:`terms` sets the loads only when Θ or γ differ from the last call's (a
    classical observer, or a node between two ``inertial_parameters`` messages, sets
    them once). Not thread-safe.
    """

    def __init__(self, model: RobotModel) -> None:
        """Build the evaluator for ``model`` (the recursive path when its joints allow)."""
        self.model = model
        self._dynamics: RecursiveDynamics | None = model.dynamics()
        try:
            zeros = np.zeros(model.nv)
            self._dynamics.momentum(zeros, zeros)
        except NotImplementedError:
            self._dynamics = None  # a joint with several degrees of freedom
        self._theta: Array | None = None
        self._gamma: Array | None = None

    @property
    def recursive(self) -> bool:
        """Whether the recursive backend is used (else the contraction)."""
        return self._dynamics is not None

    def terms(
        self, q: npt.ArrayLike, qd: npt.ArrayLike, theta: Array, gamma: Array
    ) -> MomentumTerms:
        """As :func:`momentum_terms`; ``theta`` (N, 10) and ``gamma`` (N, 6) already checked.

        Raises:
            InvalidInputError: wrong shapes or non-finite ``q``, ``qd`` (naming them).
        """
        rd = self._dynamics
        if rd is None:
            return momentum_terms(self.model, q, qd, theta, gamma)
        if not (theta is self._theta or (self._theta is not None
                                         and np.array_equal(theta, self._theta))) or not (
                gamma is self._gamma or (self._gamma is not None
                                         and np.array_equal(gamma, self._gamma))):
            rd.set_loads(theta, None, gamma)
            self._theta, self._gamma = theta.copy(), gamma.copy()
        p, beta = rd.momentum(q, qd)
        return MomentumTerms(p=p, beta=beta)


def generalized_momentum(
    model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, theta: npt.ArrayLike,
    psi: npt.ArrayLike | None = None,
) -> Array:
    """Generalized momentum p = ∂L/∂q̇ = M(q,Θ)q̇ + Σ J_lᵀQ₀ψ_l, eq. (30), (48), (nv,) [N·m·s, N·s].

    Args:
        model: the arm.
        q: joint positions (nv,).
        qd: joint velocities (nv,).
        theta: Θ (N, 10), eq. (7) order.
        psi: Ψ (N, 12), eq. (27) layout, body coordinates, or γ = Q₀Ψ (N, 6); None = 0.
    """
    return momentum_terms(model, q, qd, theta, as_gamma(model, psi)).p


def momentum_balance(
    model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, theta: npt.ArrayLike,
    psi: npt.ArrayLike | None = None,
) -> Array:
    """β = ∂L/∂q = Cᵀq̇ + Dᵀq̇ − G, so that ṗ = τ + τ_ext + β, (nv,) [N·m, N].

    Arguments as :func:`generalized_momentum` (no Θ̇, Ψ̇: they cancel, see the module
    docstring).
    """
    return momentum_terms(model, q, qd, theta, as_gamma(model, psi)).beta
