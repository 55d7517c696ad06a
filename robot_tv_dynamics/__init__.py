"""robot_tv_dynamics: arm dynamics with time-dependent inertial parameters.

The generalized robotics equation (39), mass-matrix bounds (Theorems 2–4) and
uniform physical consistency (Definition 3) of "On robotic manipulators with
time-dependent inertial parameters", for URDF arms via Pinocchio.
"""

# first: in an executable of the package, a stop signal while importing exits 0
from robot_tv_dynamics import early_stop as _early_stop  # noqa: F401
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
