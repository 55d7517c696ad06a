"""Raw inputs → model state: q̈ sources, freshness, payloads (shared by every node).

Filtered differentiation itself is :mod:`robot_tv_dynamics.filters`.

- :mod:`~robot_tv_dynamics.filters`: :class:`DerivativeFilter`, filtered
  differentiation on irregular stamps;
- :mod:`~robot_tv_dynamics.inputs.reference`: :class:`ReferenceAccelerations`, q̈ of a
  tracked reference trajectory at a stamp;
- :mod:`~robot_tv_dynamics.inputs.state`: :class:`ModelInputs`, the rules that turn the
  latest inputs into the :class:`ModelState` eq. (39) is evaluated at.
"""

from robot_tv_dynamics.inputs.reference import ReferenceAccelerations
from robot_tv_dynamics.inputs.state import InputRules, ModelInputs, ModelState

__all__ = ["InputRules", "ModelInputs", "ModelState", "ReferenceAccelerations"]
