"""RobotModel: a fixed-base URDF arm as N bodies with inertial parameters Θ.

Bodies are the Pinocchio joints 1…njoints−1 of the model built from the URDF; the
body frame is the joint frame, and links fixed to a body (flange, hand, payload)
are merged into it. Θ has shape (N, 10), row l = Φ of body l in eq. (7) order
about the body-frame origin.

Locked joints (``locked_joints``, e.g. a gripper's fingers treated as part of the hand):
:mod:`robot_tv_dynamics.model.locking`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics import dynamics
from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.dynamics import ArmRecord, RecursiveDynamics
from robot_tv_dynamics.dynamics.kinematics import Kinematics
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    UnknownNameError,
    UnsupportedJointError,
    URDFError,
)
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    phi_from_pinocchio,
    transform_phi,
    transform_psi,
)
from robot_tv_dynamics.model.locking import (
    LockedJoints,
    lock_positions,
    model_sha256,
    reduced_model,
)
from robot_tv_dynamics.urdf import build_pinocchio_model, parse_link_inertials, read_urdf_file


@dataclass(frozen=True)
class JointLimits:
    """Joint limits from the URDF, one entry per dof in ``joint_names`` order.

    Attributes:
        lower: lower position limits [rad or m]; −π for continuous joints.
        upper: upper position limits [rad or m]; +π for continuous joints.
        velocity: velocity limits [rad/s or m/s] (0 where the URDF gives none).
        effort: effort limits [N·m or N] (0 where the URDF gives none).
        continuous: whether the joint is continuous (one period is the whole range).
        prismatic: whether the joint is prismatic.
    """

    lower: Array
    upper: Array
    velocity: Array
    effort: Array
    continuous: npt.NDArray[np.bool_]
    prismatic: npt.NDArray[np.bool_]


@dataclass(frozen=True)
class LinkAttachment:
    """Where a URDF link sits: the body it is merged into and its placement there.

    Attributes:
        body: index of the owning body (row of Θ).
        rotation: orientation of the link frame in the body frame, (3, 3).
        translation: origin of the link frame in the body frame, (3,) [m].
    """

    body: int
    rotation: Array
    translation: Array


class RobotModel:
    """A fixed-base arm with time-dependent inertial parameters (eq. 39).

    Build it with :meth:`from_urdf` or :meth:`from_urdf_string`. Its methods share one
    Pinocchio data and one evaluator: use one model per thread (or
    :meth:`dynamics` per thread for the hot path).
    """

    def __init__(
        self, xml: str, source: str = "<string>", locked_joints: LockedJoints | None = None,
    ) -> None:
        """Build the model from URDF text (prefer :meth:`from_urdf_string`).

        Args:
            xml: the URDF.
            source: where it came from, used in error messages.
            locked_joints: joints made fixed (e.g. gripper fingers): a mapping joint name →
                position [rad or m] (None: the default position), or a sequence of names,
                each locked at 0 clipped into its limits. Their child links merge into
                the parent body; they leave ``joint_names``, the limits and the dofs.

        Raises:
            URDFError: unreadable or malformed URDF, no movable joint (also when every
                movable joint is locked).
            UnsupportedJointError: a joint that is not 1-dof (e.g. floating, planar).
            UnknownNameError: a locked joint that is not a movable joint of the URDF.
            InvalidInputError: a locked position outside the joint's limits.
        """
        self.source = source
        self._link_inertials = parse_link_inertials(xml, source)
        full_model = build_pinocchio_model(xml, source)
        locked = lock_positions(full_model, locked_joints, source)
        #: The locked joints and their positions [rad or m] (empty: none locked).
        self.locked_joints: Mapping[str, float] = MappingProxyType(locked)
        #: Cache key (Jacobian extremes): the URDF text and the locked joints.
        self.urdf_sha256 = model_sha256(xml, locked)
        #: SHA-256 of the URDF text alone (recognizes a republished URDF).
        self.xml_sha256 = hashlib.sha256(xml.encode("utf-8")).hexdigest()
        if locked and len(locked) == full_model.njoints - 1:
            raise URDFError(source, "has no movable joint (every joint is fixed or locked)")
        self.pinocchio_model: pin.Model = (
            reduced_model(full_model, locked) if locked else full_model)
        model = self.pinocchio_model
        if model.njoints < 2:
            raise URDFError(source, "has no movable joint (every joint is fixed)")
        for j in range(1, model.njoints):
            joint = model.joints[j]
            if joint.nv != 1 or joint.nq not in (1, 2):
                raise UnsupportedJointError(source, model.names[j], joint.shortname())
        self._data = model.createData()
        self.nv: int = model.nv
        self.n_bodies: int = model.njoints - 1
        self.joint_names: list[str] = [model.names[j] for j in range(1, model.njoints)]
        self._idx_v = np.array([model.joints[j].idx_v for j in range(1, model.njoints)])
        self._idx_q = np.array([model.joints[j].idx_q for j in range(1, model.njoints)])
        if not np.array_equal(self._idx_v, np.arange(self.nv)):
            raise URDFError(source, "joints are not in depth-first dof order")
        self._continuous = np.array(
            [model.joints[j].nq == 2 for j in range(1, model.njoints)], dtype=bool
        )
        self._has_continuous = bool(self._continuous.any())
        self._attachments = self._link_attachments()
        self.body_names: list[str] = [self._body_link(l) for l in range(self.n_bodies)]
        self.link_names: list[str] = list(self._link_inertials)
        self.gravity: Array = readonly(np.array(model.gravity.linear, dtype=np.float64))
        self.theta_nominal: Array = readonly(
            np.array([phi_from_pinocchio(model.inertias[j]) for j in range(1, model.njoints)])
        )
        self.joint_limits = self._joint_limits()
        #: What the dynamics backend needs of this arm (it never imports the model).
        self.arm_record = ArmRecord(model, self.theta_nominal, self.joint_limits.continuous)
        self._recursive: RecursiveDynamics | None = None

    @classmethod
    def from_urdf(
        cls, path: str | Path, locked_joints: LockedJoints | None = None
    ) -> RobotModel:
        """Load a URDF file, optionally with locked joints (see :class:`RobotModel`).

        Raises:
            URDFError: missing, unreadable or malformed file.
            UnknownNameError: a locked joint that is not a movable joint of the URDF.
            InvalidInputError: a locked position outside the joint's limits.
        """
        return cls(read_urdf_file(path), str(path), locked_joints)

    @classmethod
    def from_urdf_string(
        cls, xml: str, source: str = "<string>", locked_joints: LockedJoints | None = None,
    ) -> RobotModel:
        """Load a URDF given as text (e.g. the ``robot_description`` parameter).

        ``locked_joints`` as in :class:`RobotModel`.
        """
        if not isinstance(xml, str) or not xml.strip():
            raise URDFError(source, "is empty")
        return cls(xml, source, locked_joints)

    # ------------------------------------------------------------------ structure
    def _link_attachments(self) -> dict[str, LinkAttachment]:
        model = self.pinocchio_model
        attachments: dict[str, LinkAttachment] = {}
        for frame in model.frames:
            if frame.type != pin.FrameType.BODY or frame.parentJoint == 0:
                continue
            placement = frame.placement
            attachments[frame.name] = LinkAttachment(
                body=frame.parentJoint - 1,
                rotation=readonly(np.array(placement.rotation)),
                translation=readonly(np.array(placement.translation)),
            )
        return attachments

    def _body_link(self, body: int) -> str:
        """Name of the child link of the joint of ``body`` (its placement is identity)."""
        candidates = [
            name for name, a in self._attachments.items()
            if a.body == body and np.allclose(a.rotation, np.eye(3))
            and np.allclose(a.translation, 0.0)
        ]
        joint_frame = self.pinocchio_model.getFrameId(self.joint_names[body])
        for frame in self.pinocchio_model.frames:
            parent = frame.parentFrame if hasattr(frame, "parentFrame") else frame.previousFrame
            if parent == joint_frame and frame.name in candidates:
                return str(frame.name)
        return candidates[0] if candidates else self.joint_names[body]

    def _joint_limits(self) -> JointLimits:
        model = self.pinocchio_model
        lower = np.array(model.lowerPositionLimit)[self._idx_q].astype(np.float64)
        upper = np.array(model.upperPositionLimit)[self._idx_q].astype(np.float64)
        lower[self._continuous] = -np.pi
        upper[self._continuous] = np.pi
        prismatic = np.array(
            ["P" in model.joints[j].shortname().replace("JointModel", "")[:2]
             for j in range(1, model.njoints)], dtype=bool)
        return JointLimits(
            lower=readonly(lower), upper=readonly(upper),
            velocity=readonly(np.array(model.velocityLimit, dtype=np.float64)),
            effort=readonly(np.array(model.effortLimit, dtype=np.float64)),
            continuous=readonly(self._continuous.copy()),
            prismatic=readonly(prismatic),
        )

    def body_index(self, name: str) -> int:
        """Row of Θ for a body, by body (child link) name or joint name."""
        if name in self.body_names:
            return self.body_names.index(name)
        if name in self.joint_names:
            return self.joint_names.index(name)
        raise UnknownNameError("body", name, self.body_names)

    def link_attachment(self, link: str) -> LinkAttachment:
        """Owning body and placement of a URDF link.

        Raises:
            UnknownNameError: the link is not in the URDF.
            InvalidInputError: the link is fixed to the world (it carries no dynamics).
        """
        if link not in self._link_inertials:
            raise UnknownNameError("link", link, self.link_names)
        if link not in self._attachments:
            raise InvalidInputError(
                "link", f'"{link}" is fixed to the base; its inertia does not enter the dynamics')
        return self._attachments[link]

    def link_phi_in_body(self, link: str, phi_link: npt.ArrayLike) -> tuple[int, Array]:
        """Express a link's Φ (about the link frame) in its owning body's frame."""
        attachment = self.link_attachment(link)
        phi_link = check_finite(phi_link, f'link "{link}" phi', (10,))
        return attachment.body, transform_phi(phi_link, attachment.rotation, attachment.translation)

    def urdf_link_phi(self, link: str) -> Array:
        """The Φ the URDF gives for ``link`` (about the link frame; zeros if none)."""
        if link not in self._link_inertials:
            raise UnknownNameError("link", link, self.link_names)
        return self._link_inertials[link].copy()

    def theta_with_link_inertia(
        self, theta: npt.ArrayLike, link: str, phi_link: npt.ArrayLike
    ) -> Array:
        """Θ with one URDF link's inertia replaced (e.g. a payload link fixed to the flange).

        The link's URDF share of its body's Φ is removed and ``phi_link`` (about the
        link frame) added, both moved into the body frame by the fixed transform; Φ is
        linear in the mass distribution, so this is exact.

        Args:
            theta: current Θ, (N, 10).
            link: URDF link name.
            phi_link: the link's new Φ about its own frame, (10,).

        Returns:
            The new Θ, (N, 10).
        """
        theta = self.check_theta(theta)
        body, new = self.link_phi_in_body(link, phi_link)
        _, old = self.link_phi_in_body(link, self._link_inertials[link])
        out = theta.copy()
        out[body] += new - old
        return out

    def link_load_in_body(
        self,
        link: str,
        phi: npt.ArrayLike,
        phi_dot: npt.ArrayLike | None = None,
        psi: npt.ArrayLike | None = None,
        psi_dot: npt.ArrayLike | None = None,
    ) -> tuple[int, Array, Array, Array, Array]:
        """Move a load given in a link frame (Φ, Φ̇, ψ, ψ̇) into its owning body's frame.

        Args:
            link: URDF link the load is expressed in (e.g. a payload or flange link).
            phi: Φ of the load about the link frame, (10,).
            phi_dot: Φ̇, (10,); None = 0.
            psi: ψ of eq. (27) in link coordinates, (12,); None = 0.
            psi_dot: ψ̇, (12,); None = 0.

        Returns:
            (body index, Φ, Φ̇, ψ, ψ̇), all in body coordinates.
        """
        attachment = self.link_attachment(link)
        rotation, translation = attachment.rotation, attachment.translation

        def vector(value: npt.ArrayLike | None, name: str, size: int) -> Array:
            if value is None:
                return np.zeros(size)
            return check_finite(value, f'link "{link}" {name}', (size,))

        return (
            attachment.body,
            transform_phi(vector(phi, "phi", 10), rotation, translation),
            transform_phi(vector(phi_dot, "phi_dot", 10), rotation, translation),
            transform_psi(vector(psi, "psi", 12), rotation, translation),
            transform_psi(vector(psi_dot, "psi_dot", 12), rotation, translation),
        )

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
