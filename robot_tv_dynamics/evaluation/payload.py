r"""A constant payload as franka ``set_load`` and UR ``set_payload`` take it.

Mass, centre of mass and inertia about the centre of mass, in the frame of one URDF link.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
)
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    phi_from_mass_com_inertia,
    require_realizable,
)
from robot_tv_dynamics.loading import LoadingProcess


@dataclass(frozen=True)
class Payload:
    """A rigid payload fixed to a URDF link, as franka ``set_load`` and UR ``set_payload``.

    The payload is *added* to the link: the URDF describes the arm without it.

    Attributes:
        link: URDF link whose frame the payload is given in (e.g. ``tool0``,
            ``panda_link8``).
        mass: m [kg], ≥ 0.
        com: centre of mass in the link frame, (3,) [m].
        inertia: inertia about the centre of mass, axes parallel to the link frame,
            (3, 3) symmetric [kg·m²].
    """

    link: str
    mass: float
    com: Array = field(default_factory=lambda: np.zeros(3))
    inertia: Array = field(default_factory=lambda: np.zeros((3, 3)))

    def __post_init__(self) -> None:
        """Validate and freeze.

        Raises:
            InvalidInputError: wrong shapes or non-finite values.
            PhysicalConsistencyError: a negative mass, or an inertia about the COM
                that no mass distribution has (not positive semidefinite, or violating
                the triangle inequality).
        """
        what = f'payload on "{self.link}"'
        phi = phi_from_mass_com_inertia(self.mass, self.com, self.inertia, what=what)
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "com", readonly(check_finite(self.com, f"{what}.com", (3,))
                                                  .copy()))
        inertia = check_finite(self.inertia, f"{what}.inertia", (3, 3))
        object.__setattr__(self, "inertia", readonly(0.5 * (inertia + inertia.T)))
        require_realizable(phi, what)

    def phi(self) -> Array:
        """Φ of the payload about the link frame, (10,), eq. (7) order."""
        return phi_from_mass_com_inertia(self.mass, self.com, self.inertia)

    def phi_per_kg(self) -> Array:
        """Φ of the same shape with 1 kg (inertia scaled by 1/m), (10,).

        A massless payload has no shape of its own: a 1 kg point mass at ``com`` is used.
        """
        if self.mass > 0.0:
            return self.phi() / self.mass
        return phi_from_mass_com_inertia(1.0, self.com, np.zeros((3, 3)))

    def with_mass(self, mass: float) -> Payload:
        """The same shape (centre of mass, inertia per kg) with another mass [kg]."""
        if self.mass > 0.0:
            inertia = self.inertia * (mass / self.mass)
        else:
            inertia = np.zeros((3, 3))
        return Payload(self.link, mass, self.com, inertia)


def payload_from_dict(data: Mapping[str, Any]) -> Payload:
    """A payload from ``{link, mass, com: [x, y, z], inertia: {ixx, iyy, izz, ixy, ixz, iyz}}``.

    ``com`` defaults to the link origin and ``inertia`` to zero (a point mass); the
    inertia may also be given as a 3×3 list.

    Raises:
        InvalidInputError: missing ``link`` or ``mass``, unknown keys, malformed values.
        PhysicalConsistencyError: see :class:`Payload`.
    """
    if not isinstance(data, Mapping):
        raise InvalidInputError("payload", f"expected a mapping, got {type(data).__name__}")
    unknown = set(data) - {"link", "mass", "com", "inertia"}
    if unknown:
        raise InvalidInputError("payload", f"unknown keys {sorted(unknown)}; expected link, "
                                "mass, com, inertia (or a loading process with `process:`)")
    for key in ("link", "mass"):
        if key not in data:
            raise InvalidInputError("payload", f'missing key "{key}"')
    inertia = data.get("inertia", None)
    if isinstance(inertia, Mapping):
        keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
        bad = set(inertia) - set(keys)
        if bad:
            raise InvalidInputError("payload.inertia", f"unknown keys {sorted(bad)}; "
                                    f"expected {list(keys)}")
        i = {key: inertia.get(key, 0.0) for key in keys}
        inertia = [[i["ixx"], i["ixy"], i["ixz"]],
                   [i["ixy"], i["iyy"], i["iyz"]],
                   [i["ixz"], i["iyz"], i["izz"]]]
    com = data.get("com", None)
    if isinstance(com, Mapping):
        com = [com.get("x", 0.0), com.get("y", 0.0), com.get("z", 0.0)]
    return Payload(
        link=str(data["link"]),
        mass=float(check_finite(data["mass"], "payload.mass", ())),
        com=np.zeros(3) if com is None else check_finite(com, "payload.com", (3,)),
        inertia=np.zeros((3, 3)) if inertia is None else check_finite(
            inertia, "payload.inertia", (3, 3)),
    )


#: What :func:`evaluate` accepts as the load: a constant payload or a loading process.
Load: TypeAlias = "Payload | LoadingProcess"
