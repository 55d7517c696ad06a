r"""An extended Kalman filter on log-Cholesky parameters: consistent by construction.

The estimated body's pseudo-inertia is written as

.. math::
    f(Φ) = ε I_4 + U(θ) U(θ)^\top,\qquad
    U(θ) = e^{α}\begin{bmatrix} e^{d_1} & s_{12} & s_{13} & t_1\\
                                0 & e^{d_2} & s_{23} & t_2\\
                                0 & 0 & e^{d_3} & t_3\\ 0 & 0 & 0 & 1\end{bmatrix},

θ = (α, d₁, d₂, d₃, s₁₂, s₂₃, s₁₃, t₁, t₂, t₃) ∈ ℝ¹⁰ (Pinocchio's
``LogCholeskyParameters``, Rucker & Wensing 2022). Every θ ∈ ℝ¹⁰ gives U U^⊤ ≻ 0, hence
λ_min(f(Φ(θ))) > ε: the estimate is in the uniform band of Definition 3 for every state
the filter can reach, with no projection. Φ(θ) = Φ(ε I₄) + Φ_LC(θ) (f is linear in Φ), so
∂Φ/∂θ is Pinocchio's ``calculateJacobian`` (reordered to eq. (7)).

State x = (θ, θ̇) ∈ ℝ²⁰ with a constant-rate model over an update period Δt,

.. math::
    θ_{k+1} = θ_k + Δt\,\dot θ_k + w_θ,\quad \dot θ_{k+1} = \dot θ_k + w_{\dot θ},\quad
    w_θ \sim N(0, q_θ Δt\,I),\ w_{\dot θ} \sim N(0, q_{\dot θ} Δt\,I),

and the measurement y = R Φ(θ) + v, v ~ N(0, S) (S from the row weights). The update is
the EKF's, linearized at the predicted θ: H = [R ∂Φ/∂θ, 0]. The rate estimate is
Φ̂̇ = (∂Φ/∂θ) θ̂̇ (Θ̇̂ on ``inertial_parameter_rates``); with q_θ̇ = 0 and a zero rate
prior the model is a plain random walk and Φ̂̇ = 0.

The upper bound β of the band is not imposed (only reported): nothing in the data pushes
f(Φ̂) towards ∞, and a hard β would break the unconstrained parameterization.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics.estimation.interface import BandMargin, noise_covariance
from robot_tv_dynamics.estimation.kalman import correct
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    PhysicalConsistencyError,
    check_ranges,
)
from robot_tv_dynamics.inertia import (
    PINOCCHIO_TO_PHI,
    Array,
    check_finite,
    phi_from_pseudo_inertia,
    pseudo_inertia,
)


@dataclass(frozen=True)
class GeometricConfig:
    """Settings of the log-Cholesky EKF.

    Attributes:
        epsilon: ε > 0 of the band: f(Φ̂) − ε I is what is parameterized [kg·m² or kg].
        prior_std: prior standard deviations of (m, h, I) [kg, kg·m, kg·m²], mapped to θ
            through ∂Φ/∂θ at the start.
        noise_std: σ of a row when no weights are given [N·m or N].
        theta_walk: q_θ, random-walk density of θ [1/s] (θ is dimensionless).
        rate_walk: q_θ̇, random-walk density of θ̇ [1/s³]; 0 = no rate model.
        rate_prior_std: prior standard deviation of θ̇ [1/s].
        period: Δt between updates when ``update`` is not told [s].
        max_step: largest change of θ per update (Euclidean norm; a longer correction is
            scaled down, a trust region for the linearization) [1].
    """

    epsilon: float = 1e-4
    prior_std: tuple[float, float, float] = (1.0, 0.1, 0.02)
    noise_std: float = 0.05
    theta_walk: float = 0.05
    rate_walk: float = 0.5
    rate_prior_std: float = 0.1
    period: float = 0.005
    max_step: float = 0.5

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise InvalidInputError("epsilon", f"must be > 0, got {self.epsilon}")
        if len(self.prior_std) != 3 or not all(
                math.isfinite(s) and s > 0 for s in self.prior_std):
            raise InvalidInputError("prior_std", f"need three values > 0, got {self.prior_std}")
        check_ranges(self, positive=("noise_std", "period", "max_step"),
                     nonnegative=("theta_walk", "rate_walk", "rate_prior_std"))


def log_cholesky_from_pseudo_inertia(f: npt.ArrayLike) -> Array:
    """θ with U(θ) U(θ)ᵀ = f for a positive definite 4×4 f (the inverse of Pinocchio's map).

    U is the upper-triangular factor: with the reversal P, P f P = L Lᵀ and U = P L P.

    Raises:
        PhysicalConsistencyError: f is not positive definite.
    """
    matrix = np.asarray(f, dtype=np.float64)
    flip = matrix[::-1, ::-1]
    try:
        lower = np.linalg.cholesky(0.5 * (flip + flip.T))
    except np.linalg.LinAlgError:
        raise PhysicalConsistencyError(
            "f", "is not positive definite; it has no log-Cholesky parameters") from None
    u = lower[::-1, ::-1]
    scale = u[3, 3]
    return np.array([
        math.log(scale), math.log(u[0, 0] / scale), math.log(u[1, 1] / scale),
        math.log(u[2, 2] / scale), u[0, 1] / scale, u[1, 2] / scale, u[0, 2] / scale,
        u[0, 3] / scale, u[1, 3] / scale, u[2, 3] / scale])


def theta_with_mass(theta: Array, mass: float) -> Array:
    """θ of the body with mass ``mass`` > 0 [kg], its COM and inertia shape unchanged.

    m = e^{2α} and the rest of θ is scale-free (d, s: the inertia about the COM over
    the mass; t: the COM), so only α moves; Φ scales by mass / m.
    """
    moved = np.array(theta, dtype=np.float64)
    moved[0] = 0.5 * math.log(mass)
    return moved


def phi_and_jacobian(theta: Array) -> tuple[Array, Array]:
    """Φ_LC(θ) (f(Φ_LC) = U Uᵀ) and ∂Φ/∂θ (10, 10), eq. (7) order."""
    parameters = pin.LogCholeskyParameters(theta)
    phi = np.asarray(parameters.toDynamicParameters(), dtype=np.float64)[PINOCCHIO_TO_PHI]
    jacobian = np.asarray(parameters.calculateJacobian(), dtype=np.float64)[PINOCCHIO_TO_PHI]
    return phi, jacobian


class GeometricEKF(BandMargin):
    """EKF on (θ, θ̇) with f(Φ) = ε I + U(θ)U(θ)ᵀ (module docstring)."""

    def __init__(self, phi0: npt.ArrayLike, config: GeometricConfig) -> None:
        """Start from ``phi0`` (10,); below the band it is first lifted to λ_min(f) = 2ε.

        Raises:
            InvalidInputError: ``phi0`` not finite or of the wrong shape.
        """
        self.config = config
        phi0 = check_finite(phi0, "phi0", (10,))
        f0 = pseudo_inertia(phi0)
        eps = config.epsilon
        low = float(np.linalg.eigvalsh(f0)[0])
        if low < 2.0 * eps:
            f0 = f0 + (2.0 * eps - low) * np.eye(4)
        self._phi_eps = phi_from_pseudo_inertia(eps * np.eye(4))
        self.theta = log_cholesky_from_pseudo_inertia(f0 - eps * np.eye(4))
        self.theta_rate = np.zeros(10)
        lc, jac = phi_and_jacobian(self.theta)
        self.phi = self._phi_eps + lc
        self._jacobian = jac
        m, h, i = config.prior_std
        prior_phi = np.diag([m * m] + [h * h] * 3 + [i * i] * 6)
        jinv = np.linalg.inv(jac)
        p = np.zeros((20, 20))
        p[:10, :10] = jinv @ prior_phi @ jinv.T
        p[10:, 10:] = config.rate_prior_std**2 * np.eye(10)
        self.covariance = 0.5 * (p + p.T)
        self.phi_rate: Array | None = jac @ self.theta_rate
        self.updates = 0
        #: Updates refused because the state overflowed (the state is kept).
        self.rejected = 0

    @property
    def method(self) -> str:
        """``"geometric"``."""
        return "geometric"

    @property
    def epsilon(self) -> float:
        """ε of the band [kg·m² or kg]."""
        return self.config.epsilon

    @property
    def phi_covariance(self) -> Array:
        """Covariance of Φ̂ to first order (10, 10): (∂Φ/∂θ) P_θθ (∂Φ/∂θ)ᵀ."""
        jac = self._jacobian
        return np.asarray(jac @ self.covariance[:10, :10] @ jac.T)

    def update(self, regressor: npt.ArrayLike, y: npt.ArrayLike,
               weights: npt.ArrayLike | None = None, dt: float | None = None) -> Array:
        """Predict over ``dt`` (default ``config.period``), then correct; returns Φ̂ (a copy).

        Args:
            regressor: R_b (k, 10).
            y: the body's torque share (k,) [N·m or N].
            weights: 1/σ² per row (k,); None = 1/noise_std².
            dt: time since the previous update [s].

        Raises:
            InvalidInputError: wrong shapes, non-finite values, dt ≤ 0.
        """
        r = check_finite(regressor, "regressor", (None, 10))
        y = check_finite(y, "y", (r.shape[0],))
        cfg = self.config
        step = cfg.period if dt is None else float(dt)
        if not (math.isfinite(step) and step > 0):
            raise InvalidInputError("dt", f"must be > 0, got {dt}")
        noise = noise_covariance(weights, cfg.noise_std, r.shape[0])
        # predict: x = F x, P = F P Fᵀ + Q with F = [[I, Δt I], [0, I]]
        theta = self.theta + step * self.theta_rate
        p = self.covariance
        p11, p12, p22 = p[:10, :10], p[:10, 10:], p[10:, 10:]
        n11 = p11 + step * (p12 + p12.T) + step * step * p22
        n12 = p12 + step * p22
        p = np.block([[n11, n12], [n12.T, p22]])
        p[np.diag_indices(10)] += cfg.theta_walk * step
        idx = np.arange(10, 20)
        p[idx, idx] += cfg.rate_walk * step
        # correct, linearized at the predicted θ (H zero on θ̇), in a trust region
        lc, jac = phi_and_jacobian(theta)
        h = np.hstack([r @ jac, np.zeros((r.shape[0], 10))])
        kalman = correct(p, h, y - r @ (self._phi_eps + lc), noise, trust=(10, cfg.max_step))
        correction, p = kalman.delta, kalman.covariance
        x = np.concatenate([theta, self.theta_rate]) + correction
        lc, jac = phi_and_jacobian(x[:10])
        phi = self._phi_eps + lc
        if not (np.all(np.isfinite(phi)) and np.all(np.isfinite(p))):
            self.rejected += 1  # an overflow: keep the last state (never NaN)
            return self.phi.copy()
        self.covariance = p
        self.theta, self.theta_rate = x[:10], x[10:]
        self.phi = phi
        self._jacobian = jac
        self.phi_rate = jac @ self.theta_rate
        self.updates += 1
        return self.phi.copy()
