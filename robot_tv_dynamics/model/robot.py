"""RobotModel: a fixed-base URDF arm as N bodies with inertial parameters Θ.

Bodies are the Pinocchio joints 1…njoints−1 of the model built from the URDF; the
body frame is the joint frame, and links fixed to a body (flange, hand, payload)
are merged into it. Θ has shape (N, 10), row l = Φ of body l in eq. (7) order
about the body-frame origin.

Locked joints (``locked_joints``, e.g. a gripper's fingers treated as part of the hand):
:mod:`robot_tv_dynamics.model.locking`. What the model evaluates at a state (kinematics,
eq. (39), the regressor, the energies): :mod:`robot_tv_dynamics.model.equations`.
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

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.dynamics import ArmRecord, RecursiveDynamics
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
from robot_tv_dynamics.model.equations import EquationsOfMotion
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


class RobotModel(EquationsOfMotion):
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
