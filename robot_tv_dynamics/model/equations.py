"""Eq. (39) on the arm at a state: input checks, kinematics, the dynamics and energies.

:class:`EquationsOfMotion` holds the :class:`~robot_tv_dynamics.model.RobotModel` methods
that evaluate the arm at (q, q̇, q̈, Θ, Θ̇, Ψ, Ψ̇): LOCAL body Jacobians and their
derivatives by Pinocchio, the breakdown of eq. (39) by the contraction backend, τ and q̈
by the recursive backend, the regressor and the energies. The arm's structure (bodies,
links, limits, locked joints) is :mod:`robot_tv_dynamics.model.robot`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics import dynamics
from robot_tv_dynamics.dynamics import ArmRecord, RecursiveDynamics
from robot_tv_dynamics.dynamics.kinematics import Kinematics
from robot_tv_dynamics.inertia import Array, check_finite


class EquationsOfMotion:
    """The evaluations of a :class:`~robot_tv_dynamics.model.RobotModel` at a state.

    A base of ``RobotModel``, which builds the attributes below from the URDF; its
    methods share one Pinocchio data and one evaluator (one model per thread).

    Attributes:
        pinocchio_model: the Pinocchio model of the arm (locked joints removed).
        nv: number of dofs.
        n_bodies: N, the rows of Θ.
        gravity: gravity in the world frame, (3,) [m/s²].
        arm_record: what the dynamics backend needs of this arm.
    """

    pinocchio_model: pin.Model
    nv: int
    n_bodies: int
    gravity: Array
    arm_record: ArmRecord
    _data: pin.Data
    _idx_q: npt.NDArray[np.int_]
    _continuous: npt.NDArray[np.bool_]
    _has_continuous: bool
    _recursive: RecursiveDynamics | None

    # ------------------------------------------------------------------ input checks
    def check_theta(self, theta: npt.ArrayLike, argument: str = "theta") -> Array:
        """Θ as an (N, 10) float array, or InvalidInputError naming ``argument``."""
        return check_finite(theta, argument, (self.n_bodies, 10))

    def check_joint_vector(self, value: npt.ArrayLike, argument: str) -> Array:
        """A joint-space vector (nv,), or InvalidInputError naming ``argument``."""
        return check_finite(value, argument, (self.nv,))

    def pinocchio_configuration(self, q: npt.ArrayLike) -> Array:
        """Pinocchio's q (nq,) from joint angles (nv,): continuous joints become (cos, sin)."""
        return self._to_pinocchio(self.check_joint_vector(q, "q"))

    def _to_pinocchio(self, q: Array) -> Array:
        if not self._has_continuous:
            return q
        out = np.empty(self.pinocchio_model.nq)
        out[self._idx_q] = np.where(self._continuous, np.cos(q), q)
        out[self._idx_q[self._continuous] + 1] = np.sin(q[self._continuous])
        return out

    # ------------------------------------------------------------------ kinematics
    def kinematics(self, q: npt.ArrayLike) -> Kinematics:
        """LOCAL body Jacobians, their derivatives and body poses at q (see Kinematics)."""
        q = self.check_joint_vector(q, "q")
        model, data = self.pinocchio_model, self._data
        q_pin = self._to_pinocchio(q)
        pin.computeJointJacobians(model, data, q_pin)
        pin.computeJointKinematicHessians(model, data, q_pin)
        n, nv = self.n_bodies, self.nv
        jacobians = np.empty((n, 6, nv))
        derivatives = np.empty((n, nv, nv, 6))
        placements = np.empty((n, 4, 4))
        get_jacobian, get_hessian = pin.getJointJacobian, pin.getJointKinematicHessian
        local = pin.LOCAL
        oMi = data.oMi
        columns = jacobians if nv > 1 else jacobians[:, :, 0]  # a 1-dof Jacobian comes as (6,)
        for l in range(n):
            columns[l] = get_jacobian(model, data, l + 1, local)
            # the binding's buffer is column-major read as row-major: see hessian_to_derivative
            derivatives[l] = np.asarray(get_hessian(model, data, l + 1, local)).reshape(nv, nv, 6)
            placements[l] = oMi[l + 1].homogeneous
        derivatives = derivatives.transpose(0, 3, 2, 1)
        rotations = placements[:, :3, :3]
        positions = placements[:, :3, 3]
        gravity_local = np.zeros((n, 6))
        gravity_local[:, :3] = -(self.gravity @ rotations)
        return Kinematics(
            q=q,
            jacobians=jacobians,
            jacobian_derivatives=derivatives,
            rotations=rotations,
            positions=positions,
            gravity_local=gravity_local,
        )

    def body_jacobians_local(self, q: npt.ArrayLike) -> Array:
        """Stacked LOCAL body Jacobians J(q) of eq. (17), (6N, nv)."""
        return self.kinematics(q).stacked_jacobian

    def body_jacobian_derivatives_local(self, q: npt.ArrayLike) -> Array:
        """``T[l, :, i, k] = ∂J_l[:, i]/∂q_k``, (N, 6, nv, nv)."""
        return self.kinematics(q).jacobian_derivatives

    # ------------------------------------------------------------------ dynamics
    def inverse_dynamics(
        self,
        q: npt.ArrayLike,
        qd: npt.ArrayLike,
        qdd: npt.ArrayLike,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None = None,
        psi: npt.ArrayLike | None = None,
        psi_dot: npt.ArrayLike | None = None,
    ) -> dynamics.GeneralizedTerms:
        """Every term of the generalized robotics equation (39) and τ (w = 0): the breakdown.

        The matrices M, C, M(q, Θ̇), H and the vectors G, JᵀQ₀Ψ̇ come from the contraction
        backend (:mod:`robot_tv_dynamics.dynamics.contraction`, exact for any Θ); this costs
        tens of ``pin.rnea`` calls. For τ alone use :meth:`torque` (or :meth:`dynamics`
        with loads held), several times faster.

        Args:
            q: joint positions (nv,) [rad, m].
            qd: joint velocities (nv,).
            qdd: joint accelerations (nv,).
            theta: Θ, (N, 10), eq. (7) order about each body frame origin
                [kg, kg·m, kg·m²].
            theta_dot: Θ̇, (N, 10) [per s]; None = 0.
            psi: Ψ, (N, 12) in eq. (27) layout, body coordinates [kg·m/s, kg·m²/s], or
                its momentum image γ = Q₀ψ, (N, 6); None = 0.
            psi_dot: Ψ̇ in the same layout as ``psi`` [per s]; None = 0.

        Returns:
            A :class:`~robot_tv_dynamics.dynamics.GeneralizedTerms` record.
        """
        kin = self.kinematics(q)
        return dynamics.generalized_terms(
            kin,
            self.check_joint_vector(qd, "qd"),
            self.check_joint_vector(qdd, "qdd"),
            self.check_theta(theta),
            self._optional_theta(theta_dot, "theta_dot"),
            self._optional_psi(psi, "psi"),
            self._optional_psi(psi_dot, "psi_dot"),
        )

    def forward_dynamics(
        self,
        q: npt.ArrayLike,
        qd: npt.ArrayLike,
        tau: npt.ArrayLike,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None = None,
        psi: npt.ArrayLike | None = None,
        psi_dot: npt.ArrayLike | None = None,
    ) -> Array:
        """q̈ solving eq. (39) for given τ (w = 0); arguments as :meth:`inverse_dynamics`.

        By the recursive backend (ABA with external wrenches, or a Cholesky solve when a
        row of Θ is not a rigid body; see :class:`~robot_tv_dynamics.RecursiveDynamics`),
        all loads given now (``set_loads_and_forward_dynamics``). To hold loads across
        many calls, use :meth:`dynamics`.

        Returns:
            q̈, (nv,) [rad/s², m/s²], read-only.

        Raises:
            InvalidInputError: a wrong shape or a non-finite entry, naming the argument.
            PhysicalConsistencyError: M(q, Θ) is not positive definite.
        """
        evaluator = self._recursive or self._evaluator()
        return evaluator.set_loads_and_forward_dynamics(q, qd, tau, theta, theta_dot, psi,
                                                        psi_dot)

    def torque(
        self,
        q: npt.ArrayLike,
        qd: npt.ArrayLike,
        qdd: npt.ArrayLike,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None = None,
        psi: npt.ArrayLike | None = None,
        psi_dot: npt.ArrayLike | None = None,
    ) -> Array:
        """τ of eq. (39) (w = 0) alone, fast: the recursive backend, all loads given now.

        Equal to ``inverse_dynamics(...).tau`` (to ~1e-14 relative) at a fraction of the
        cost; arguments as :meth:`inverse_dynamics`. To hold loads across many calls, use
        :meth:`dynamics`.

        Returns:
            τ, (nv,) [N·m, N], read-only.
        """
        evaluator = self._recursive or self._evaluator()
        return evaluator.set_loads_and_inverse_dynamics(q, qd, qdd, theta, theta_dot, psi,
                                                        psi_dot)

    def dynamics(self) -> RecursiveDynamics:
        """A new evaluator of eq. (39) for this arm that holds its loads between calls.

        ``rd = model.dynamics(); rd.set_loads(theta, theta_dot, psi, psi_dot);
        rd.inverse_dynamics(q, qd, qdd)``: what a node or a simulator uses on its hot path
        (one per thread). Starts with Θ = ``theta_nominal`` and zero rates.
        """
        return RecursiveDynamics(self.arm_record)

    def _evaluator(self) -> RecursiveDynamics:
        """The model's own evaluator for the one-call methods (every call sets all loads)."""
        if self._recursive is None:
            self._recursive = RecursiveDynamics(self.arm_record)
        return self._recursive

    def regressor(
        self, q: npt.ArrayLike, qd: npt.ArrayLike, v: npt.ArrayLike, a: npt.ArrayLike
    ) -> Array:
        """Slotine–Li regressor R(q, q̇, v, a) of eq. (44), (69)–(71), (nv, 10N).

        ``R @ theta.ravel() = M(q,Θ) a + C(q,q̇,Θ) v + G(q,Θ)`` for every Θ ∈ ℝ^{10N}
        (consistent or not); columns 10l…10l+9 belong to body l in eq. (7) order.
        """
        return dynamics.regressor(
            self.kinematics(q),
            self.check_joint_vector(qd, "qd"),
            self.check_joint_vector(v, "v"),
            self.check_joint_vector(a, "a"),
        )

    def mass_matrix(self, q: npt.ArrayLike, theta: npt.ArrayLike) -> Array:
        """M(q, Θ) = J(q)ᵀ Z(Θ) J(q) of eq. (31), exact for any Θ (also Θ̇).

        By contraction with this model's Jacobians (the definition; for a hot loop,
        :meth:`dynamics` gives CRBA, equal for every URDF of rigid joints — not for a
        degenerate joint with a zero axis, where Pinocchio's joint transform is no
        rotation).
        """
        return dynamics.mass_matrix(self.kinematics(q), self.check_theta(theta))

    def kinetic_energy(
        self,
        q: npt.ArrayLike,
        qd: npt.ArrayLike,
        theta: npt.ArrayLike,
        psi: npt.ArrayLike | None = None,
        nu: float = 0.0,
    ) -> float:
        """Kinetic energy of eq. (30): ½q̇ᵀMq̇ + ½ν + q̇ᵀ Σ J_lᵀ Q₀ ψ_l [J].

        Args:
            q: joint positions (nv,).
            qd: joint velocities (nv,).
            theta: Θ (N, 10).
            psi: Ψ (N, 12) or γ (N, 6); None = 0.
            nu: ν(t) = Σ ∫σρ‖𝓋‖² of eq. (25), (33) [kg·m²/s²]; it cannot be derived
                from Ψ, so it is given.
        """
        nu = float(check_finite(nu, "nu", ()))
        return dynamics.kinetic_energy(
            self.kinematics(q), self.check_joint_vector(qd, "qd"), self.check_theta(theta),
            self._optional_psi(psi, "psi"), nu)

    def potential_energy(self, q: npt.ArrayLike, theta: npt.ArrayLike) -> float:
        """Potential energy of eq. (36) in ``model.gravity`` [J]."""
        return dynamics.potential_energy(self.kinematics(q), self.check_theta(theta), self.gravity)

    def _optional_theta(self, value: npt.ArrayLike | None, argument: str) -> Array:
        if value is None:
            return np.zeros((self.n_bodies, 10))
        return self.check_theta(value, argument)

    def _optional_psi(self, value: npt.ArrayLike | None, argument: str) -> Array:
        """Ψ (N, 12) or γ (N, 6) → γ = Q₀ψ (N, 6)."""
        if value is None:
            return np.zeros((self.n_bodies, 6))
        array = np.asarray(value, dtype=np.float64)
        if array.shape == (self.n_bodies, 6):
            return check_finite(array, argument, (self.n_bodies, 6))
        return dynamics.psi_momentum(check_finite(array, argument, (self.n_bodies, 12)))
