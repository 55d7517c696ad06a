r"""The joint torque J_cᵀF of an external wrench on a link (a collision to simulate).

A wrench F = (f, n) acts at a point c of a URDF link. In the coordinates of the body
b owning the link (LOCAL, the package's convention) with R_b the body's orientation,
(R_a, t_a) the link's placement in the body and c_b = R_a c + t_a, the force and moment
are f_b = R_bᵀ f (``frame="world"``) or R_a f (``frame="link"``), likewise n_b, and the
joint torque is the virtual work of the body wrench about the body origin:

.. math::
    τ_{ext} = J_c^\top F = J_b(q)^\top \begin{pmatrix} f_b \\ n_b + c_b × f_b \end{pmatrix}.

:class:`ExternalWrench` switches it on over a time window [t_start, t_end) with an
optional smooth rise and fall; the simulator adds ``joint_torque(model, q, t)`` to τ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, check_finite
from robot_tv_dynamics.model import RobotModel

FRAMES: tuple[str, ...] = ("world", "link")


def wrench_joint_torque(
    model: RobotModel, q: npt.ArrayLike, link: str, force: npt.ArrayLike,
    moment: npt.ArrayLike | None = None, point: npt.ArrayLike | None = None,
    frame: str = "world",
) -> Array:
    """J_cᵀF of a wrench on ``link`` at configuration q, (nv,) [N·m, N].

    Args:
        model: the arm.
        q: joint positions (nv,).
        link: URDF link the wrench acts on.
        force: f (3,) [N], in the base (``frame="world"``) or link frame.
        moment: n (3,) [N·m] in the same frame; None = 0.
        point: c, where f acts, in link coordinates (3,) [m]; None = the link origin.
        frame: ``"world"`` (base frame) or ``"link"``.

    Raises:
        UnknownNameError: the link is not in the URDF.
        InvalidInputError: bad shapes, non-finite values, an unknown frame, a link
            fixed to the world.
    """
    if frame not in FRAMES:
        raise InvalidInputError("frame", f'must be one of {FRAMES}, got "{frame}"')
    f = check_finite(force, "force", (3,))
    n = np.zeros(3) if moment is None else check_finite(moment, "moment", (3,))
    c = np.zeros(3) if point is None else check_finite(point, "point", (3,))
    attachment = model.link_attachment(link)
    kin = model.kinematics(q)
    b = attachment.body
    rotation = kin.rotations[b].T if frame == "world" else attachment.rotation
    f_b, n_b = rotation @ f, rotation @ n
    c_b = attachment.rotation @ c + attachment.translation
    wrench = np.concatenate([f_b, n_b + np.cross(c_b, f_b)])
    return np.asarray(kin.jacobians[b].T @ wrench)


def _smooth(x: float) -> float:
    """0 → 1 smoothstep 3x² − 2x³ on [0, 1]."""
    x = min(max(x, 0.0), 1.0)
    return x * x * (3.0 - 2.0 * x)


@dataclass(frozen=True)
class ExternalWrench:
    """A wrench on a link over [t_start, t_end), optionally ramped (a simulated collision).

    Attributes:
        link: URDF link it acts on.
        force: f (3,) [N] in ``frame``.
        t_start: switched on at [s].
        t_end: switched off at [s] (> t_start).
        moment: n (3,) [N·m] in ``frame``.
        point: where f acts, link coordinates (3,) [m].
        frame: ``"world"`` or ``"link"``.
        rise: smooth rise after t_start and fall before t_end [s]; 0 = a rectangular
            pulse.
    """

    link: str
    force: tuple[float, float, float]
    t_start: float
    t_end: float
    moment: tuple[float, float, float] = (0.0, 0.0, 0.0)
    point: tuple[float, float, float] = (0.0, 0.0, 0.0)
    frame: str = "world"
    rise: float = 0.0

    def __post_init__(self) -> None:
        """Check the window.

        Raises:
            InvalidInputError: a window that is empty or not finite, a negative rise.
        """
        if not (math.isfinite(self.t_start) and math.isfinite(self.t_end)
                and self.t_end > self.t_start):
            raise InvalidInputError(
                "t_end", f"the window must be finite with t_end > t_start, got "
                f"[{self.t_start}, {self.t_end})")
        if not (math.isfinite(self.rise) and 0.0 <= 2.0 * self.rise <= self.t_end - self.t_start):
            raise InvalidInputError(
                "rise", f"must be >= 0 and at most half the window, got {self.rise}")
        if self.frame not in FRAMES:
            raise InvalidInputError("frame", f'must be one of {FRAMES}, got "{self.frame}"')

    def scale(self, t: float) -> float:
        """The wrench's factor at time t: 0 outside the window, 1 inside (ramped)."""
        if not self.t_start <= t < self.t_end:
            return 0.0
        if self.rise == 0.0:
            return 1.0
        return _smooth((t - self.t_start) / self.rise) * _smooth((self.t_end - t) / self.rise)

    def joint_torque(self, model: RobotModel, q: npt.ArrayLike, t: float) -> Array:
        """τ_ext = J_cᵀF at (q, t), (nv,) [N·m, N]; zeros outside the window."""
        s = self.scale(t)
        if s == 0.0:
            return np.zeros(model.nv)
        return s * wrench_joint_torque(model, q, self.link, self.force, self.moment,
                                       self.point, self.frame)
