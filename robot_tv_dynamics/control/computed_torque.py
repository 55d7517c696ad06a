r"""Computed torque on a fixed estimate Θ̂: the non-adaptive baseline of this family.

τ = M(q,Θ̂)(q̈_d − K_d(q̇ − q̇_d) − K_p(q − q_d)) + C(q,q̇,Θ̂)q̇ + G(q,Θ̂), written with
the Slotine–Li regressor as Y(q, q̇, q̇, a)θ̂ (Y θ = M a + C v + G with v = q̇). Θ̂
never changes; the loop is a decoupled PD only when Θ̂ = Θ.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.control.interface import ControlOutput, ControlState, positive_gains
from robot_tv_dynamics.model import RobotModel


class ComputedTorqueOnEstimate:
    """The baseline (module docstring): K_p = ω², K_d = 2ω on every joint."""

    name = "computed-torque"

    def __init__(self, model: RobotModel, theta_hat: npt.ArrayLike, *,
                 omega: npt.ArrayLike = 10.0) -> None:
        """Build the controller (``omega``: bandwidth per joint [rad/s], > 0).

        Raises:
            InvalidInputError: ω ≤ 0 or not finite, Θ̂ of the wrong shape.
        """
        self.model = model
        omega = positive_gains(omega, model.nv, "omega")
        self.kp, self.kd = omega**2, 2.0 * omega
        self.reset(theta_hat)

    def reset(self, theta_hat: npt.ArrayLike) -> None:
        """Use the estimate Θ̂ (N, 10) from now on."""
        self.theta_hat = np.array(self.model.check_theta(theta_hat, "theta_hat"))

    def step(self, state: ControlState, dt: float) -> ControlOutput:
        """τ of the computed-torque law on Θ̂ (``dt`` unused: nothing adapts)."""
        a = state.qdd_d - self.kd * (state.qd - state.qd_d) - self.kp * (state.q - state.q_d)
        y = self.model.regressor(state.q, state.qd, state.qd, a)
        return ControlOutput(y @ self.theta_hat.ravel(), self.theta_hat.copy())
