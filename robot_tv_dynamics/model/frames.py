"""Payload frames: the vendor's flange frame of a URDF, and a load moved between link frames.

UR ``set_payload`` / ``set_target_payload`` and franka ``setLoad`` take a load as mass, centre
of mass and inertia about the centre of mass, all in the tool flange frame (UR ``tool0``,
franka ``panda_link8`` / ``fr3_link8`` and the flange of other URDFs). A load estimated or
given in another link of the same body (``wrist_3_link``, ``panda_hand``) is the same mass
distribution seen from another frame: :func:`load_in_frame` converts it exactly (Φ maps
linearly under a rigid transform, :func:`~robot_tv_dynamics.inertia.transform_phi`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import Array, check_finite
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import transform_phi
from robot_tv_dynamics.model.robot import RobotModel

#: Flange frames of the vendors' URDFs, in the order they are looked for.
FLANGE_FRAMES = ("tool0", "flange", "panda_link8", "fr3_link8")


def flange_frame(model: RobotModel) -> str | None:
    """The URDF's tool flange frame (first of :data:`FLANGE_FRAMES` on a moving body), or None."""
    for name in FLANGE_FRAMES:
        if name in model.link_names:
            try:
                model.link_attachment(name)
            except InvalidInputError:  # fixed to the base: not a flange
                continue
            return name
    return None


def input_frame(model: RobotModel, requested: str) -> str | None:
    """The link a payload without a frame is given in: ``requested``, else the flange (or None).

    Raises:
        UnknownNameError: ``requested`` is not a URDF link.
        InvalidInputError: it is fixed to the base.
    """
    name = requested.strip()
    if not name:
        return flange_frame(model)
    model.link_attachment(name)
    return name


def payload_frame_for(model: RobotModel, link: str, requested: str = "") -> str:
    """The frame a load on ``link`` is reported in.

    Args:
        model: the arm.
        link: the link carrying the load.
        requested: the user's ``payload_frame`` (empty: the flange frame when the URDF has
            one on the same body as ``link``, else ``link`` itself).

    Raises:
        UnknownNameError: a frame or link not in the URDF.
        InvalidInputError: a frame on another body than ``link`` (no constant conversion).
    """
    name = requested.strip()
    if not name:
        flange = flange_frame(model)
        same = (flange is not None and model.link_attachment(flange).body
                == model.link_attachment(link).body)
        return flange if same and flange is not None else link
    check_same_body(model, link, name)
    return name


def check_same_body(model: RobotModel, link: str, frame: str) -> None:
    """Raise unless ``frame`` and ``link`` are fixed to one body.

    Raises:
        UnknownNameError: either is not in the URDF.
        InvalidInputError: they sit on different bodies (or one is fixed to the base).
    """
    a, b = model.link_attachment(link), model.link_attachment(frame)
    if a.body != b.body:
        raise InvalidInputError(
            "payload_frame", f'"{frame}" is on body {model.body_names[b.body]}, the load\'s '
            f'link "{link}" on {model.body_names[a.body]}: a payload frame must be fixed to '
            "the load's body")


def load_in_frame(model: RobotModel, phi: npt.ArrayLike, from_link: str, to_link: str) -> Array:
    """Φ of a load about ``from_link``'s frame → about ``to_link``'s frame (same body), exact.

    Args:
        model: the arm.
        phi: the load's Φ about the origin of ``from_link``, eq. (7) order (10,).
        from_link: the frame ``phi`` is expressed in.
        to_link: the frame wanted.

    Returns:
        Φ about the origin of ``to_link``, in its axes (10,).

    Raises:
        UnknownNameError, InvalidInputError: see :func:`check_same_body`.
    """
    phi = check_finite(phi, "phi", (10,))
    if from_link == to_link:
        return phi.copy()
    check_same_body(model, from_link, to_link)
    a, b = model.link_attachment(from_link), model.link_attachment(to_link)
    in_body = transform_phi(phi, a.rotation, a.translation)
    rotation = np.asarray(b.rotation).T
    return transform_phi(in_body, rotation, -rotation @ np.asarray(b.translation))


def frame_change_matrix(model: RobotModel, from_link: str, to_link: str) -> Array:
    """The 10×10 matrix T with Φ_to = T Φ_from (:func:`load_in_frame` is linear in Φ).

    For covariances: Σ_to = T Σ_from Tᵀ.

    Raises:
        UnknownNameError, InvalidInputError: see :func:`check_same_body`.
    """
    return np.column_stack([load_in_frame(model, unit, from_link, to_link)
                            for unit in np.eye(10)])
