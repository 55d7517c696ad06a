r"""Regressor rows of one body's load from measured joint efforts.

For constant Θ (the classical robotics equation; the estimators' model, see
:mod:`~robot_tv_dynamics.estimation.rls`), the measured effort τ_m minus friction is
linear in the inertial parameters. Split the body b carrying the load into its base share
Φ_b⁰ (the URDF's, or an identified URDF's) and the load Φ_L (about the load link's
frame, moved into body b by the fixed link transform T, Φ linear under rigid
transforms):

.. math::
    τ_m - τ_f(\dot q) - τ_0(q, \dot q, \ddot q)
      = R_b(q, \dot q, \dot q, \ddot q)\, T\, Φ_L,\qquad
    y := τ_m - τ_f - τ_0 + R_b Φ_b^0 = R_b\,Φ_b,\quad Φ_b = Φ_b^0 + T Φ_L,

with τ_0 the base model's τ (recursive backend, loads held) and R_b the body's columns
of the regressor (44) (Pinocchio's ``computeJointTorqueRegressor``, reordered). The
estimators take (R_b, y) and estimate the whole body Φ_b, so the uniform band
{ε I ⪯ f(Φ_b)} applies to the body the monitor watches; the load is T⁻¹(Φ̂_b − Φ_b⁰).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics import dynamics
from robot_tv_dynamics.dynamics.kinematics import Kinematics
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inertia import PINOCCHIO_TO_PHI, Array, transform_phi
from robot_tv_dynamics.model import RobotModel


@dataclass(frozen=True)
class PayloadMeasurement:
    """One sample of the classical model restricted to the payload body.

    Attributes:
        regressor: R_b(q, q̇, q̇, q̈), (nv, 10).
        y: τ − Σ_{l≠b} R_l Φ_l, (nv,) [N·m or N].
    """

    regressor: Array
    y: Array


def payload_measurement(
    kin: Kinematics, qd: Array, qdd: Array, tau: Array, theta_known: Array, body: int
) -> PayloadMeasurement:
    """The classical-model measurement of body ``body`` (the simulator's, exact contraction).

    Args:
        kin: kinematics at the measured q.
        qd: measured q̇ (nv,).
        qdd: measured q̈ (nv,).
        tau: measured joint torques (nv,) [N·m or N].
        theta_known: Θ with the other bodies' Φ known (N, 10); row ``body`` is ignored.
        body: index of the estimated body.

    Returns:
        The measurement (R_b, y).
    """
    full = dynamics.regressor(kin, qd, qd, qdd)
    columns = slice(10 * body, 10 * body + 10)
    others = np.array(theta_known, dtype=np.float64)
    others[body] = 0.0
    return PayloadMeasurement(full[:, columns].copy(), tau - full @ others.ravel())


def link_transform_matrix(model: RobotModel, link: str) -> tuple[int, Array]:
    """(body, T): the owning body of ``link`` and the 10×10 map Φ_link ↦ Φ in that body.

    Raises:
        UnknownNameError: the link is not in the URDF.
        InvalidInputError: the link is fixed to the world.
    """
    attachment = model.link_attachment(link)
    columns = [transform_phi(e, attachment.rotation, attachment.translation)
               for e in np.eye(10)]
    return attachment.body, np.array(columns).T


class LoadMeasurement:
    """Builds (R_b, y) for the load on one link from measured efforts (module docstring)."""

    def __init__(self, model: RobotModel, link: str, friction: FrictionParameters | None = None,
                 theta_base: npt.ArrayLike | None = None) -> None:
        """Hold the base model.

        Args:
            model: the arm (the identified URDF, or the URDF).
            link: URDF link the load is attached to; the load is in its frame.
            friction: friction of the model's joints (subtracted), None = none.
            theta_base: Θ without the load (N, 10); default the model's.

        Raises:
            UnknownNameError: ``link`` is not in the URDF.
            InvalidInputError: the link is fixed to the world, or the friction is for
                other joints.
        """
        self.model = model
        self.link = link
        self.body, self.transform = link_transform_matrix(model, link)
        self._transform_inv = np.linalg.inv(self.transform)
        if friction is not None and list(friction.joint_names) != list(model.joint_names):
            raise InvalidInputError(
                "friction", f"is for joints {list(friction.joint_names)}, the model has "
                f"{list(model.joint_names)}")
        self.friction = friction
        base = model.theta_nominal if theta_base is None else theta_base
        self.theta_base: Array = model.check_theta(base).copy()
        self.phi_base: Array = self.theta_base[self.body].copy()
        self._dynamics = model.dynamics()
        self._dynamics.set_loads(self.theta_base)
        self._pin = model.pinocchio_model
        self._data = self._pin.createData()
        self._columns = 10 * self.body + PINOCCHIO_TO_PHI
        self._continuous = bool(np.any(model.joint_limits.continuous))

    def regressor(self, q: Array, qd: Array, qdd: Array) -> Array:
        """R_b(q, q̇, q̇, q̈), (nv, 10), eq. (7) columns."""
        q_pin = self.model.pinocchio_configuration(q) if self._continuous else q
        full = pin.computeJointTorqueRegressor(self._pin, self._data, q_pin, qd, qdd)
        return np.asarray(full[:, self._columns])

    def measure(self, q: Array, qd: Array, qdd: Array, tau: Array,
                theta_dot: Array | None = None, psi: Array | None = None,
                psi_dot: Array | None = None) -> PayloadMeasurement:
        """(R_b, y = τ_m − τ_f − τ_0 − τ_g + R_b Φ_b⁰) at one sample (arrays (nv,), finite).

        τ_g = M(q, Θ̇)q̇ + H(q, Ψ)q̇ + JᵀQ₀Ψ̇, the terms of eq. (39) the classical model
        lacks, when Θ̇ (N, 10) or Ψ, Ψ̇ (N, 12) are given (the *generalized* measurement);
        τ_g = 0 when none is (the classical one).
        """
        r = self.regressor(q, qd, qdd)
        y = tau - self._dynamics.inverse_dynamics(q, qd, qdd) + r @ self.phi_base
        if theta_dot is not None or psi is not None or psi_dot is not None:
            y = y - (self.model.torque(q, qd, qdd, self.theta_base, theta_dot, psi, psi_dot)
                     - self.model.torque(q, qd, qdd, self.theta_base))
        if self.friction is not None:
            y = y - self.friction.torque(qd)
        return PayloadMeasurement(r, y)

    def load_from_body(self, phi_body: npt.ArrayLike) -> Array:
        """Φ_L about the link frame from the body's Φ̂_b: T⁻¹(Φ̂_b − Φ_b⁰)."""
        return np.asarray(self._transform_inv @ (np.asarray(phi_body) - self.phi_base))

    def load_rate_from_body(self, phi_rate: npt.ArrayLike) -> Array:
        """Φ̇_L about the link frame from Φ̂̇_b."""
        return np.asarray(self._transform_inv @ np.asarray(phi_rate))

    def body_from_load(self, phi_load: npt.ArrayLike) -> Array:
        """Φ_b = Φ_b⁰ + T Φ_L."""
        return np.asarray(self.phi_base + self.transform @ np.asarray(phi_load))

    def theta_hat(self, phi_body: npt.ArrayLike) -> Array:
        """Θ̂: the base Θ with the load body's row replaced by Φ̂_b."""
        theta = self.theta_base.copy()
        theta[self.body] = phi_body
        return theta
