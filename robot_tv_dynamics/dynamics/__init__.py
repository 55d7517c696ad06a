r"""The generalized robotics equation (39), the one place everything that needs τ calls.

.. math::
    M(q,Θ)\ddot q + \big(C(q,\dot q,Θ) + M(q,\dotΘ) + H(q,Ψ)\big)\dot q + G(q,Θ)
    = τ + w - J(q)^\top Q_0 \dot Ψ

- :mod:`~robot_tv_dynamics.dynamics.kinematics`: per-q LOCAL body Jacobians and their
  derivatives (:class:`Kinematics`);
- :mod:`~robot_tv_dynamics.dynamics.coupling`: Q₀ and γ = Q₀ψ (the Ψ coupling);
- :mod:`~robot_tv_dynamics.dynamics.terms`: :class:`GeneralizedTerms` and
  :data:`TERM_NAMES`;
- :mod:`~robot_tv_dynamics.dynamics.recursive`: :class:`RecursiveDynamics`, the production
  backend: τ, q̈ and M by Pinocchio's RNEA/ABA/CRBA with the Θ̇, Ψ, Ψ̇ terms as external
  wrenches (a generalized recursive Newton–Euler algorithm), loads held between calls
  (:mod:`~robot_tv_dynamics.dynamics.pinocchio_storage` exchanges them with Pinocchio);
- :mod:`~robot_tv_dynamics.dynamics.contraction`: every term by contraction with Z(Φ_l),
  exact for any Θ: the term-by-term breakdown, the regressor of eq. (44), energies, and
  the reference the recursive backend is tested against.

This package never imports :mod:`robot_tv_dynamics.model` at run time;
:class:`~robot_tv_dynamics.model.RobotModel` calls it.
"""

from robot_tv_dynamics.dynamics.arm import ArmRecord
from robot_tv_dynamics.dynamics.contraction import (
    bias_force,
    forward_dynamics,
    generalized_terms,
    kinetic_energy,
    mass_matrix,
    potential_energy,
    regressor,
    spatial_inertias,
)
from robot_tv_dynamics.dynamics.coupling import Q0, S_72, T_72, psi_momentum
from robot_tv_dynamics.dynamics.kinematics import Kinematics, hessian_to_derivative
from robot_tv_dynamics.dynamics.recursive import RecursiveDynamics
from robot_tv_dynamics.dynamics.terms import TERM_NAMES, GeneralizedTerms

__all__ = [
    "Q0",
    "ArmRecord",
    "S_72",
    "TERM_NAMES",
    "T_72",
    "GeneralizedTerms",
    "Kinematics",
    "RecursiveDynamics",
    "bias_force",
    "forward_dynamics",
    "generalized_terms",
    "hessian_to_derivative",
    "kinetic_energy",
    "mass_matrix",
    "potential_energy",
    "psi_momentum",
    "regressor",
    "spatial_inertias",
]
