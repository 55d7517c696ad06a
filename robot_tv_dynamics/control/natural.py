r"""The natural (log-det Bregman) adaptation law on pseudo-inertias, and its projection.

Per body, with the pseudo-inertia J = f(Φ) of eq. (9) and the log-det divergence
d(J‖Ĵ) = log det Ĵ − log det J + tr(Ĵ⁻¹J) − 4, the law

.. math::
    \dot{\hat J}_i = -γ_i\, \hat J_i S_i \hat J_i,\qquad
    \mathrm{tr}(S_i\, δJ) = (Y_i^\top s)^\top δφ \ \ \forall δφ

(S_i the gradient Y_iᵀs written as a symmetric 4×4 matrix) makes
V = ½ sᵀMs + Σ_i d(J_i‖Ĵ_i)/γ_i decrease as V̇ = −sᵀK_D s on the classical plant
(derivation: docs/adaptive.md). It is discretised as

.. math::
    \hat J^+ = \hat J^{½} \exp(-γ Δt\, \hat J^{½} S \hat J^{½})\, \hat J^{½}

which is positive definite for every step size (a congruence of a matrix exponential)
and agrees with the exact solution (Ĵ⁻¹ + γΔt S)⁻¹ of the ODE for constant S to
O(Δt²) per step.

The *uniformly projected* law follows each natural step by the projection onto the
band {ε_i I ⪯ f(Φ̂_i) ⪯ β_i I} (eigenvalues clipped, as :func:`~robot_tv_dynamics.inertia.
project_uniformly_consistent` does), so inf_t μ(Θ̂(t)) ≥ ε_i and sup_t ν ≤ β_i by
construction and Theorems 2–3 apply to M(q, Θ̂(t)) at every step.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.control.slotine_li import SlotineLiCore
from robot_tv_dynamics.exceptions import InvalidInputError, PhysicalConsistencyError
from robot_tv_dynamics.inertia import (
    PSEUDO_BASIS,
    Array,
    consistency_margin,
    consistency_size,
    phi_from_pseudo_inertia,
    pseudo_inertia,
)
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation.interface import positive_gains

#: Gram matrix tr(B_h B_k) of the pseudo-inertia basis and its inverse: S = Σ c_k B_k
#: with c = G⁻¹ g solves tr(S B_h) = g_h.
_GRAM = np.einsum("hij,kji->hk", PSEUDO_BASIS, PSEUDO_BASIS)
_GRAM_INV = np.linalg.inv(_GRAM)


def gradient_matrix(gradient: npt.ArrayLike) -> Array:
    """S with tr(S f(δφ)) = gᵀδφ for every δφ: the gradient g (…, 10) as symmetric 4×4."""
    g = np.asarray(gradient, dtype=np.float64)
    return np.asarray(np.einsum("...h,hij->...ij", g @ _GRAM_INV.T, PSEUDO_BASIS))


def _sqrtm_pd(matrix: Array) -> Array:
    values, vectors = np.linalg.eigh(matrix)
    if np.any(values[..., 0] <= 0.0):
        raise PhysicalConsistencyError("j_hat", f"pseudo-inertia not positive definite "
                                       f"(λ_min = {np.min(values[..., 0]):.3g})")
    return np.asarray((vectors * np.sqrt(values)[..., None, :]) @ np.swapaxes(vectors, -1, -2))


def _expm_sym(matrix: Array) -> Array:
    values, vectors = np.linalg.eigh(0.5 * (matrix + np.swapaxes(matrix, -1, -2)))
    return np.asarray((vectors * np.exp(values)[..., None, :]) @ np.swapaxes(vectors, -1, -2))


def natural_step(j_hat: npt.ArrayLike, s_matrix: npt.ArrayLike,
                 gain_dt: float | npt.ArrayLike) -> Array:
    """Ĵ⁺ = Ĵ^½ expm(−γΔt Ĵ^½ S Ĵ^½) Ĵ^½ per body (4×4, Ĵ ≻ 0 in and out).

    Args:
        j_hat: Ĵ (…, 4, 4), positive definite (one body, or a stack of bodies).
        s_matrix: S (…, 4, 4), symmetric, the same stack.
        gain_dt: γΔt ≥ 0, one number or one per body of the stack (…,).

    Raises:
        PhysicalConsistencyError: some Ĵ is not positive definite.
    """
    root = _sqrtm_pd(np.asarray(j_hat, dtype=np.float64))
    scale = np.asarray(gain_dt, dtype=np.float64)[..., None, None]
    out = root @ _expm_sym(-scale * (root @ np.asarray(s_matrix) @ root)) @ root
    return np.asarray(0.5 * (out + np.swapaxes(out, -1, -2)))


def log_det_divergence(j: npt.ArrayLike, j_hat: npt.ArrayLike) -> float:
    """d(J‖Ĵ) = log det Ĵ − log det J + tr(Ĵ⁻¹J) − 4 ≥ 0 (both ≻ 0)."""
    j, j_hat = np.asarray(j), np.asarray(j_hat)
    _, logdet_hat = np.linalg.slogdet(j_hat)
    _, logdet = np.linalg.slogdet(j)
    return float(logdet_hat - logdet + np.trace(np.linalg.solve(j_hat, j)) - 4.0)


class SlotineLiNatural(SlotineLiCore):
    """Slotine–Li with the natural log-det law per adapted body (module docstring).

    ``gradient_integral`` (N,) accumulates ∫‖S_i‖₂ dt: along Ĵ̇ = −γĴSĴ,
    d(1/λ_min(Ĵ_i))/dt = γ vᵀS_i v ≤ γ‖S_i‖₂ (v the unit eigenvector), so
    λ_min(Ĵ_i(t)) ≥ λ_min(Ĵ_i(0)) / (1 + γ λ_min(Ĵ_i(0)) ∫‖S_i‖₂ dt) (to first order in
    γΔt per step for the discrete step): the margin can have fallen to a fraction f of
    its start only once γ λ_min(Ĵ_i(0)) ∫‖S_i‖₂ dt ≥ 1/f − 1 (:func:`band_budget`).
    """

    name = "natural"

    def __init__(self, model: RobotModel, theta_hat: npt.ArrayLike, *,
                 gamma: float | npt.ArrayLike = 1.0, lam: npt.ArrayLike = 5.0,
                 kd: npt.ArrayLike = 10.0) -> None:
        """Build the controller.

        Args:
            model: the arm.
            theta_hat: the initial estimate Θ̂₀ (N, 10).
            gamma: γ_i > 0: one for every body, or one per body (N,)
                (:mod:`~robot_tv_dynamics.control.gains`).
            lam: Λ [1/s].
            kd: K_D (as the core).

        Raises:
            InvalidInputError: a gain ≤ 0 or not finite, or of another shape.
        """
        self.gamma = positive_gains(gamma, model.n_bodies, "gamma")
        super().__init__(model, theta_hat, lam=lam, kd=kd)

    def _reset_law(self) -> None:
        self.j_hat = pseudo_inertia(self.theta_hat)
        self.gradient_integral = np.zeros(self.model.n_bodies)

    def _update(self, gradient: Array, dt: float) -> None:
        adapted = self.adapted
        s_matrix = gradient_matrix(gradient[adapted])
        self.gradient_integral[adapted] += dt * np.max(np.abs(np.linalg.eigvalsh(s_matrix)),
                                                       axis=-1)
        self.j_hat[adapted] = natural_step(self.j_hat[adapted], s_matrix,
                                           self.gamma[adapted] * dt)
        self._after_step()
        self.theta_hat[self.adapted] = phi_from_pseudo_inertia(self.j_hat[self.adapted])

    def _after_step(self) -> None:
        """Hook after the natural step (the projected law projects here)."""

    def parameter_distance(self, theta: npt.ArrayLike) -> float:
        """Σ_i d(J_i‖Ĵ_i)/γ over the adapted bodies (J_i = f(Φ_i) must be ≻ 0)."""
        bodies = np.flatnonzero(self.adapted)
        j_true = pseudo_inertia(np.asarray(theta)[bodies])
        j_hat = self.j_hat[bodies]
        _, logdet_hat = np.linalg.slogdet(j_hat)
        _, logdet = np.linalg.slogdet(j_true)
        trace = np.trace(np.linalg.solve(j_hat, j_true), axis1=-2, axis2=-1)
        return float(np.sum((logdet_hat - logdet + trace - 4.0) / self.gamma[bodies]))


def band_budget(gamma: npt.ArrayLike, margin0: npt.ArrayLike, gradient_integral: npt.ArrayLike,
                fraction: float = 0.25) -> Array:
    """γ μ_i(Θ̂₀) ∫‖S_i‖₂ dt / (1/f − 1) per body: below 1, λ_min(Ĵ_i) stayed ≥ f μ_i(Θ̂₀).

    Args:
        gamma: the natural law's γ (scalar or (N,)).
        margin0: μ_i(Θ̂₀) per body (N,) [kg·m²].
        gradient_integral: ∫‖S_i‖₂ dt per body (N,) (``SlotineLiNatural.gradient_integral``).
        fraction: f, the band's ε_i / μ_i(Θ̂₀) (the projected law's ¼ by default).
    """
    return np.asarray(np.asarray(gamma) * np.asarray(margin0) * np.asarray(gradient_integral)
                      / (1.0 / fraction - 1.0))


class SlotineLiProjected(SlotineLiNatural):
    """The natural law kept in the band ε_i I ⪯ f(Φ̂_i) ⪯ β_i I (module docstring).

    The band defaults to ε_i = ``margin_fraction`` · μ(Φ̂₀_i) and β_i =
    ``size_factor`` · ν(Φ̂₀_i) of the initial estimate; Θ̂₀ is projected into it.
    """

    name = "projected"

    def __init__(self, model: RobotModel, theta_hat: npt.ArrayLike, *,
                 gamma: float | npt.ArrayLike = 1.0, lam: npt.ArrayLike = 5.0,
                 kd: npt.ArrayLike = 10.0, margin_fraction: float = 0.25,
                 size_factor: float = 10.0) -> None:
        """Build the controller.

        Raises:
            InvalidInputError: a gain ≤ 0, ``margin_fraction`` not in (0, 1] or
                ``size_factor`` < 1.
        """
        if not 0.0 < margin_fraction <= 1.0:
            raise InvalidInputError("margin_fraction", f"must be in (0, 1], got {margin_fraction}")
        if not size_factor >= 1.0:
            raise InvalidInputError("size_factor", f"must be >= 1, got {size_factor}")
        self.margin_fraction, self.size_factor = float(margin_fraction), float(size_factor)
        super().__init__(model, theta_hat, gamma=gamma, lam=lam, kd=kd)

    def _reset_law(self) -> None:
        margins = np.atleast_1d(consistency_margin(self.theta_hat))
        sizes = np.atleast_1d(consistency_size(self.theta_hat))
        self.epsilon = np.where(self.adapted, self.margin_fraction * margins, 0.0)
        self.beta = np.where(self.adapted, self.size_factor * sizes, 0.0)
        super()._reset_law()
        self._after_step()
        self.theta_hat[self.adapted] = phi_from_pseudo_inertia(self.j_hat[self.adapted])

    def _after_step(self) -> None:
        """Clip the eigenvalues of every adapted Ĵ_i outside [ε_i, β_i] (one batched eigh).

        A Ĵ_i inside its band is left as it is, bit for bit: the projection of a point of
        a convex set is the point, so a run that never reaches the band is the natural
        law's number for number.
        """
        bodies = np.flatnonzero(self.adapted)
        values, vectors = np.linalg.eigh(self.j_hat[bodies])
        low, high = self.epsilon[bodies, None], self.beta[bodies, None]
        outside = np.any((values < low) | (values > high), axis=1)
        if not np.any(outside):
            return
        clipped = np.clip(values[outside], low[outside], high[outside])
        v = vectors[outside]
        f = np.einsum("...ij,...j,...kj->...ik", v, clipped, v)
        self.j_hat[bodies[outside]] = 0.5 * (f + np.swapaxes(f, -1, -2))
