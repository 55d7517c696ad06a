r"""Recursive least squares on one body's Φ, classical and projected (Definition 3).

Today's adaptive schemes assume constant Θ: they fit the CLASSICAL robotics equation

.. math::
    τ - \sum_{l \ne b} R_l(q, \dot q, \dot q, \ddot q)\,Φ_l
      = R_b(q, \dot q, \dot q, \ddot q)\,Φ_b

(the regressor of eq. (44) with v = q̇, a = q̈; R Θ = M q̈ + C q̇ + G), with the other
bodies' Φ_l known, by recursive least squares with exponential forgetting. While a
load changes the body's mass distribution, the terms M(q, Θ̇) q̇, H(q, Ψ) q̇ and
J^⊤Q₀Ψ̇ of eq. (39) are missing from this model, and the forgetting that lets the
estimate follow Θ(t) also lets the covariance grow in directions the motion does not
excite.

Two variants run on the same data:

- :class:`RecursiveLeastSquares` with ``projected=False`` (*classical*): nothing keeps
  Φ̂ physical;
- ``projected=True``: after every update that leaves the uniformly consistent set
  {ε I ⪯ f(Φ) ⪯ β I} (Definition 3), Φ̂ is replaced by its nearest point of the set in
  the estimator's own metric P⁻¹
  (:func:`~robot_tv_dynamics.estimation.projection.project_in_metric`), so
  λ_min(f(Φ̂)) ≥ ε at all times and, by Theorem 2, λ_min(M(q, Θ̂)) ≥ α₁ > 0 when the
  other bodies are consistent and the Jacobian is normal. The projection moves Φ̂
  along the directions the data know least; clipping the eigenvalues of f(Φ̂) instead
  (``EstimatorConfig(projection="euclidean")``, the nearest point in the Frobenius norm
  of f) moves well-determined directions too, which the recursion then fights: on a
  constant, well-excited payload its COM and inertia wander (docs/estimation.md).

The covariance P is left as the recursion made it after an active projection (a
documented choice): the band is a constraint, not a measurement, so it adds no
information; Φ̄ is the exact minimizer over the band of the quadratic the recursion
carries, (Φ − Φ̂)ᵀP⁻¹(Φ − Φ̂), and the next update continues from Φ̄ with the same P.
Forgetting still inflates P in directions the motion does not excite (which makes the
projection cheap to move there); the excitation check of
:mod:`~robot_tv_dynamics.estimation.online` holds the update (and the inflation) when a
block is poorly excited.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.estimation.interface import BandMargin, noise_covariance
from robot_tv_dynamics.estimation.kalman import correct, forgetting_factor
from robot_tv_dynamics.estimation.projection import MetricProjection, project_in_metric
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    project_uniformly_consistent,
)

#: How ``projected`` RLS maps Φ̂ back into the band (:class:`EstimatorConfig`).
PROJECTIONS = ("metric", "euclidean")


@dataclass(frozen=True)
class EstimatorConfig:
    """Settings of the recursive least-squares estimator of one body's Φ.

    Attributes:
        memory: τ of the forgetting, λ = exp(−Δt/τ) per update (``math.inf``: none) [s].
        period: Δt between updates when ``update`` is not told [s].
        prior_std: prior standard deviations of (m, h, I) [kg, kg·m, kg·m²]: the
            initial covariance is diag(σ_m², σ_h²·1₃, σ_I²·1₆).
        noise_std: standard deviation of the torque residual the update assumes
            [N·m or N] (weights the rows; the same for every joint).
        epsilon: ε > 0 of the projection {ε I ⪯ f(Φ) ⪯ β I} [kg·m² or kg].
        beta: β ≥ ε of the projection [kg·m² or kg].
        projection: ``"metric"`` (the nearest point of the band in the metric P⁻¹,
            :func:`~robot_tv_dynamics.estimation.projection.project_in_metric`) or
            ``"euclidean"`` (f(Φ̂)'s eigenvalues clipped into [ε, β], the nearest point
            in the Frobenius norm of f; kept for comparison: it fights the recursion).
    """

    memory: float = 1.0
    period: float = 0.005
    prior_std: tuple[float, float, float] = (1.0, 0.1, 0.02)
    noise_std: float = 0.05
    epsilon: float = 1e-4
    beta: float = 100.0
    projection: str = "metric"

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        if not self.memory > 0:
            raise InvalidInputError("memory", f"must be > 0 s, got {self.memory}")
        if not (math.isfinite(self.period) and self.period > 0):
            raise InvalidInputError("period", f"must be > 0 s, got {self.period}")
        if len(self.prior_std) != 3 or not all(
                math.isfinite(s) and s > 0 for s in self.prior_std):
            raise InvalidInputError("prior_std", f"need three values > 0, got {self.prior_std}")
        if not (math.isfinite(self.noise_std) and self.noise_std > 0):
            raise InvalidInputError("noise_std", f"must be > 0, got {self.noise_std}")
        if not (math.isfinite(self.epsilon) and math.isfinite(self.beta)
                and 0.0 < self.epsilon <= self.beta):
            raise InvalidInputError(
                "epsilon, beta", f"need 0 < epsilon <= beta, got {self.epsilon}, {self.beta}")
        if self.projection not in PROJECTIONS:
            raise InvalidInputError(
                "projection", f'"{self.projection}" is not one of {list(PROJECTIONS)}')

    def initial_covariance(self) -> Array:
        """P₀ = diag(σ_m², σ_h², σ_h², σ_h², σ_I², …), (10, 10)."""
        m, h, i = self.prior_std
        return np.diag([m * m] + [h * h] * 3 + [i * i] * 6).astype(np.float64)


class RecursiveLeastSquares(BandMargin):
    r"""RLS with exponential forgetting on Φ ∈ ℝ¹⁰, optionally projected (Definition 3).

    Update with rows R (k, 10) and measurement y (k,), noise covariance S = σ² I, and
    λ = exp(−Δt/τ) (the memory τ, the time Δt since the previous update):

    .. math::
        K = P R^\top (λ S + R P R^\top)^{-1},\quad
        \hatΦ \leftarrow \hatΦ + K (y - R \hatΦ),\quad
        P \leftarrow (P - K R P)/λ

    (the shared Kalman step of :mod:`~robot_tv_dynamics.estimation.kalman` on P/λ)
    and, when ``projected``, :math:`\hatΦ \leftarrow \arg\min_{εI ⪯ f(Φ) ⪯ βI}
    (Φ - \hatΦ)^\top P^{-1} (Φ - \hatΦ)` (the identity inside the band). With per-row
    ``weights`` w (1/σ²), S = diag(1/w) replaces σ² I. It gives no Φ̇̂
    (``phi_rate`` is None).
    """

    phi_rate: Array | None = None

    def __init__(self, phi0: npt.ArrayLike, config: EstimatorConfig, *,
                 projected: bool) -> None:
        """Start from the estimate ``phi0`` (10,) with the prior covariance of ``config``."""
        self.config = config
        self.projected = projected
        self.phi = check_finite(phi0, "phi0", (10,)).copy()
        self.covariance = config.initial_covariance()
        self.updates = 0
        #: updates whose Φ̂ left the band and was projected back (``projected`` only)
        self.projections = 0
        #: the last active metric projection (None before the first, or ``euclidean``)
        self.last_projection: MetricProjection | None = None
        if projected:
            self.phi = self._project(None)

    @property
    def method(self) -> str:
        """``"projected"`` or ``"classical"``."""
        return "projected" if self.projected else "classical"

    @property
    def epsilon(self) -> float:
        """ε of the uniform band {ε I ⪯ f(Φ)} [kg·m² or kg]."""
        return self.config.epsilon

    @property
    def phi_covariance(self) -> Array:
        """Covariance of Φ̂ (10, 10): P itself."""
        return self.covariance

    def update(self, regressor: npt.ArrayLike, y: npt.ArrayLike,
               weights: npt.ArrayLike | None = None, dt: float | None = None) -> Array:
        """One RLS step; returns the new Φ̂ (a copy).

        Args:
            regressor: R_b, (k, 10), rows of the body's classical regressor.
            y: the torque share attributed to the body, (k,) [N·m or N].
            weights: 1/σ² of each row (k,); None = 1/noise_std² for every row.
            dt: time since the previous update [s]; None = ``config.period``.

        Raises:
            InvalidInputError: wrong shapes, non-finite values, dt < 0.
        """
        r = check_finite(regressor, "regressor", (None, 10))
        y = check_finite(y, "y", (r.shape[0],))
        cfg = self.config
        lam = forgetting_factor(cfg.period if dt is None else float(dt), cfg.memory)
        previous = self.phi
        step = correct(self.covariance / lam, r, y - r @ self.phi,
                       noise_covariance(weights, cfg.noise_std, r.shape[0]))
        self.phi = self.phi + step.delta
        self.covariance = step.covariance
        if self.projected:
            self.phi = self._project(previous)
        self.updates += 1
        return self.phi.copy()

    def _project(self, previous: Array | None) -> Array:
        """Φ̂ mapped into the band (itself when inside), warm-started from ``previous``."""
        cfg = self.config
        if cfg.projection == "euclidean":
            projected = project_uniformly_consistent(self.phi, cfg.epsilon, cfg.beta)
            self.projections += bool(np.any(projected != self.phi))
            return projected
        result = project_in_metric(self.phi, self.covariance, cfg.epsilon, cfg.beta, previous)
        if result.active:
            self.projections += 1
            self.last_projection = result
        return result.phi
