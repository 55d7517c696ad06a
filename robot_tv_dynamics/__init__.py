"""robot_tv_dynamics: arm dynamics with time-dependent inertial parameters.

The generalized robotics equation (39), mass-matrix bounds (Theorems 2–4) and
uniform physical consistency (Definition 3) of "On robotic manipulators with
time-dependent inertial parameters", for URDF arms via Pinocchio.

The names below are imported on first use (``from robot_tv_dynamics import RobotModel``
works as usual): importing the package itself loads neither NumPy nor Pinocchio, so
that ``robot-tv-dynamics --help`` and a node's first lines run at once. Importing it has
no other effect: the executables' stop-signal handling lives in the ROS layer
(:mod:`robot_tv_dynamics.ros.early_stop`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from robot_tv_dynamics.dynamics import GeneralizedTerms
    from robot_tv_dynamics.exceptions import (
        InvalidInputError,
        PhysicalConsistencyError,
        RobotTvDynamicsError,
        UnknownNameError,
        UnsupportedJointError,
        URDFError,
    )
    from robot_tv_dynamics.inertia import (
        PSEUDO_BASIS,
        consistency_margin,
        consistency_size,
        is_physically_consistent,
        phi_from_mass_com_inertia,
        phi_from_point_masses,
        phi_from_urdf_inertial,
        project_uniformly_consistent,
        pseudo_inertia,
        spatial_inertia,
        transform_phi,
    )
    from robot_tv_dynamics.model import RobotModel

#: Where each public name is defined (imported by :func:`__getattr__` on first use).
_EXPORTS = {
    "GeneralizedTerms": "dynamics",
    "InvalidInputError": "exceptions",
    "PhysicalConsistencyError": "exceptions",
    "RobotModel": "model",
    "RobotTvDynamicsError": "exceptions",
    "URDFError": "exceptions",
    "UnknownNameError": "exceptions",
    "UnsupportedJointError": "exceptions",
    "PSEUDO_BASIS": "inertia",
    "consistency_margin": "inertia",
    "consistency_size": "inertia",
    "is_physically_consistent": "inertia",
    "phi_from_mass_com_inertia": "inertia",
    "phi_from_point_masses": "inertia",
    "phi_from_urdf_inertial": "inertia",
    "project_uniformly_consistent": "inertia",
    "pseudo_inertia": "inertia",
    "spatial_inertia": "inertia",
    "transform_phi": "inertia",
}

__all__ = [
    "PSEUDO_BASIS",
    "GeneralizedTerms",
    "InvalidInputError",
    "PhysicalConsistencyError",
    "RobotModel",
    "RobotTvDynamicsError",
    "URDFError",
    "UnknownNameError",
    "UnsupportedJointError",
    "consistency_margin",
    "consistency_size",
    "is_physically_consistent",
    "phi_from_mass_com_inertia",
    "phi_from_point_masses",
    "phi_from_urdf_inertial",
    "project_uniformly_consistent",
    "pseudo_inertia",
    "spatial_inertia",
    "transform_phi",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Import a public name (or a subpackage, e.g. ``robot_tv_dynamics.inertia``) on first use.

    Raises:
        AttributeError: neither a public name nor a submodule of the core (the ROS layer,
            ``robot_tv_dynamics.ros``, is imported only by name, never from here).
    """
    home = _EXPORTS.get(name)
    if home is not None:
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    elif name == "ros":
        raise AttributeError(f"module {__name__!r} has no attribute 'ros' (import "
                             f"{__name__}.ros explicitly)")
    else:
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's own names and the lazily imported public ones."""
    return sorted(set(globals()) | set(__all__))
