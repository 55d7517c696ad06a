r"""Slotine–Li adaptive control with the Euclidean gradient law, and its shared core.

With q̃ = q − q_d, the reference velocity q̇_r = q̇_d − Λq̃, q̈_r = q̈_d − Λ(q̇ − q̇_d)
and the sliding variable s = q̇ − q̇_r,

.. math::
    τ = Y(q, \dot q, \dot q_r, \ddot q_r)\,\hatθ - K_D s,\qquad
    \dot{\hatθ} = -Γ Y^\top s

where Y is the Slotine–Li regressor of eq. (44) (``RobotModel.regressor``:
Y θ = M(q,Θ) q̈_r + C(q,q̇,Θ) q̇_r + G(q,Θ)). On the classical plant with constant Θ,
V = ½ sᵀM(q,Θ)s + ½ θ̃ᵀΓ⁻¹θ̃ (θ̃ = θ̂ − θ) has V̇ = −sᵀK_D s (docs/adaptive.md).

The law is integrated by explicit Euler at the control step (τ from θ̂ at the step's
start, then θ̂ updated). Only the *adapted* bodies change: those whose initial estimate
is physically consistent (f(Φ̂₀) ≻ 0; massless frames stay as they are), the same set
for every law of this family so that they compare on one footing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.inertia import Array, consistency_margin
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation.interface import ControlOutput, ControlState, positive_gains


class SlotineLiCore:
    """What Slotine–Li's laws share: s, q̇_r, q̈_r, the regressor, τ = Yθ̂ − K_D s.

    Subclasses implement :meth:`_update` (θ̂ from the gradient Yᵀs) and
    :meth:`parameter_distance` (the parameter part of V).
    """

    name = "slotine-li-core"

    def __init__(self, model: RobotModel, theta_hat: npt.ArrayLike, *, lam: npt.ArrayLike = 5.0,
                 kd: npt.ArrayLike = 10.0) -> None:
        """Build the controller.

        Args:
            model: the arm (its regressor and body count).
            theta_hat: the initial estimate Θ̂₀ (N, 10).
            lam: Λ, diagonal (scalar or (nv,)) [1/s].
            kd: K_D, diagonal (scalar or (nv,)) [N·m·s/rad, N·s/m].

        Raises:
            InvalidInputError: a gain ≤ 0 or not finite, Θ̂₀ of the wrong shape.
        """
        self.model = model
        self.lam = positive_gains(lam, model.nv, "lam")
        self.kd = positive_gains(kd, model.nv, "kd")
        self.reset(theta_hat)

    def reset(self, theta_hat: npt.ArrayLike) -> None:
        """Restart from Θ̂₀ (N, 10); the adapted bodies are those with f(Φ̂₀) ≻ 0."""
        self.theta_hat = np.array(self.model.check_theta(theta_hat, "theta_hat"))
        self.adapted = np.asarray(consistency_margin(self.theta_hat) > 0.0)
        self._reset_law()
        self.last_s = np.zeros(self.model.nv)

    def _reset_law(self) -> None:
        """Law-specific state after a reset (none by default)."""

    def sliding(self, state: ControlState) -> tuple[Array, Array, Array]:
        """(s, q̇_r, q̈_r) of the state."""
        q_err = state.q - state.q_d
        qd_r = state.qd_d - self.lam * q_err
        qdd_r = state.qdd_d - self.lam * (state.qd - state.qd_d)
        return state.qd - qd_r, qd_r, qdd_r

    def step(self, state: ControlState, dt: float) -> ControlOutput:
        """τ = Y θ̂ − K_D s at the state; then θ̂ advanced over ``dt`` by the law."""
        s, qd_r, qdd_r = self.sliding(state)
        y = self.model.regressor(state.q, state.qd, qd_r, qdd_r)
        tau = y @ self.theta_hat.ravel() - self.kd * s
        gradient = (y.T @ s).reshape(self.theta_hat.shape)  # Yᵀs per body (N, 10)
        self._update(gradient, dt)
        self.last_s = s
        return ControlOutput(tau, self.theta_hat.copy())

    def _update(self, gradient: Array, dt: float) -> None:
        raise NotImplementedError

    def parameter_distance(self, theta: npt.ArrayLike) -> float:
        """The parameter part of V for the true Θ (N, 10) [J]."""
        raise NotImplementedError

    def lyapunov(self, q: Array, theta: npt.ArrayLike) -> float:
        """V = ½ sᵀM(q, Θ)s + the parameter part, with s of the last step [J]."""
        m = self.model.mass_matrix(q, theta)
        return float(0.5 * self.last_s @ m @ self.last_s) + self.parameter_distance(theta)


class SlotineLiGradient(SlotineLiCore):
    """Slotine–Li with θ̂̇ = −Γ Yᵀs, Γ diagonal: ``gamma`` scalar, (10,) or (N, 10)."""

    name = "slotine-li"

    def __init__(self, model: RobotModel, theta_hat: npt.ArrayLike, *,
                 gamma: npt.ArrayLike = 1.0, lam: npt.ArrayLike = 5.0,
                 kd: npt.ArrayLike = 10.0) -> None:
        """Build the controller.

        Args:
            model: the arm.
            theta_hat: the initial estimate Θ̂₀ (N, 10).
            gamma: Γ's diagonal, > 0: one number, one per eq. (7) entry (10,), or one per
                body and entry (N, 10) (:mod:`~robot_tv_dynamics.control.gains`).
            lam: Λ [1/s].
            kd: K_D (as :class:`SlotineLiCore`).

        Raises:
            InvalidInputError: a gain ≤ 0 or not finite, or of another shape.
        """
        shape = np.shape(gamma)
        if shape == (model.n_bodies, 10):
            self.gamma = positive_gains(np.ravel(gamma), 10 * model.n_bodies,
                                        "gamma").reshape(shape)
        else:
            self.gamma = np.broadcast_to(positive_gains(gamma, 10, "gamma"),
                                         (model.n_bodies, 10)).copy()
        super().__init__(model, theta_hat, lam=lam, kd=kd)

    def _update(self, gradient: Array, dt: float) -> None:
        adapted = self.adapted
        self.theta_hat[adapted] -= dt * self.gamma[adapted] * gradient[adapted]

    def parameter_distance(self, theta: npt.ArrayLike) -> float:
        """½ θ̃ᵀΓ⁻¹θ̃ over the adapted bodies."""
        error = (self.theta_hat - np.asarray(theta))[self.adapted]
        return float(0.5 * np.sum(error * error / self.gamma[self.adapted]))
