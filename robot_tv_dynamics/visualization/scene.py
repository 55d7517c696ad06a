"""One Θ(t) at one configuration q as drawable pieces: per body a ball, a box, a look.

:func:`inertia_scene` places each body's :class:`~.inertia_box.InertiaGeometry` with the
body pose of the package's forward kinematics (``RobotModel.kinematics(q)``): the COM
z_l + R_l c_l and the box orientation R_l R_box in the base frame, so the scene needs no
TF. Without kinematics (or with ``base_frame=False``) the poses stay in each body's own
frame (the link frame of ``model.body_names[l]``, for a viewer that has TF). Bodies of
zero mass are left out.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import Array, readonly
from robot_tv_dynamics.dynamics.kinematics import Kinematics
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.status import Level
from robot_tv_dynamics.visualization.inertia_box import (
    LEAD_DENSITY,
    InertiaGeometry,
    inertia_geometry,
)
from robot_tv_dynamics.visualization.look import Look, look
from robot_tv_dynamics.visualization.skeleton import Skeleton, skeleton


@dataclass(frozen=True)
class BodyVisual:
    """One body, ready to draw.

    Attributes:
        index: body index (row of Θ).
        name: body name (its link).
        geometry: ball and box in the body frame.
        look: colours for the monitor's level.
        com: the COM in the scene frame (base, or the body's own), (3,) [m].
        rotation: orientation of the box in the scene frame, (3, 3) (identity when
            there is no box).
    """

    index: int
    name: str
    geometry: InertiaGeometry
    look: Look
    com: Array
    rotation: Array


@dataclass(frozen=True)
class InertiaScene:
    """Every drawable body of one Θ, and the skeleton when the poses are known.

    Attributes:
        bodies: one :class:`BodyVisual` per body with a mass, in Θ row order.
        skeleton: joint origins in the base frame (None without kinematics).
        in_base_frame: whether ``com``/``rotation`` are in the base frame.
    """

    bodies: tuple[BodyVisual, ...]
    skeleton: Skeleton | None
    in_base_frame: bool


@functools.lru_cache(maxsize=1024)
def _geometry(phi: bytes, density: float) -> InertiaGeometry | None:
    """:func:`inertia_geometry` of a Φ given as its float64 bytes, kept for the next scene.

    A scene drawn ten times a second mostly repeats its Φ rows (the bodies whose Θ does
    not change); the geometry is immutable, so a repeated row costs a look-up.
    """
    return inertia_geometry(np.frombuffer(phi, dtype=np.float64), density)


def inertia_scene(
    model: RobotModel,
    theta: npt.ArrayLike,
    levels: Sequence[Level | None] | None = None,
    kinematics: Kinematics | None = None,
    density: float = LEAD_DENSITY,
    base_frame: bool = True,
) -> InertiaScene:
    """The scene of ``theta`` (see the module docstring).

    Args:
        model: the arm.
        theta: Θ, (N, 10), eq. (7) order about each body-frame origin.
        levels: the monitor's level per body (None entries, or None: no status).
        kinematics: ``model.kinematics(q)`` for base-frame poses; None: body frames.
        density: density of the balls [kg/m³].
        base_frame: with ``kinematics``, pose the bodies in the base frame; False keeps
            them in their body frames (the skeleton is in the base frame either way).

    Returns:
        The :class:`InertiaScene`.

    Raises:
        InvalidInputError: Θ of the wrong shape or not finite, ``levels`` of the wrong
            length.
    """
    theta = model.check_theta(theta)
    if levels is not None and len(levels) != model.n_bodies:
        raise InvalidInputError(
            "levels", f"has {len(levels)} entries for {model.n_bodies} bodies")
    bodies = []
    for l, name in enumerate(model.body_names):
        geometry = _geometry(theta[l].tobytes(), float(density))
        if geometry is None:
            continue
        box_rotation = geometry.box.rotation if geometry.box is not None else np.eye(3)
        if kinematics is not None and base_frame:
            rotation = kinematics.rotations[l]
            com = kinematics.positions[l] + rotation @ geometry.com
            box_rotation = rotation @ box_rotation
        else:
            com = np.array(geometry.com)
        bodies.append(BodyVisual(
            index=l, name=name, geometry=geometry,
            look=look(None if levels is None else levels[l], geometry.consistent, name),
            com=readonly(np.asarray(com, dtype=np.float64)),
            rotation=readonly(np.array(box_rotation, dtype=np.float64))))
    return InertiaScene(
        bodies=tuple(bodies),
        skeleton=None if kinematics is None else skeleton(model, kinematics),
        in_base_frame=kinematics is not None and base_frame)


def base_frame_name(model: RobotModel) -> str:
    """The URDF's root link (the frame of Pinocchio's universe, the base frame of FK)."""
    for frame in model.pinocchio_model.frames:
        if frame.parentJoint == 0 and str(frame.type).endswith("BODY"):
            return str(frame.name)
    return "world"
