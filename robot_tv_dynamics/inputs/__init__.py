"""Raw inputs → model state: q̈ sources, freshness, payloads (shared by every node).

Filtered differentiation itself is :mod:`robot_tv_dynamics.filters`.

- :mod:`~robot_tv_dynamics.filters`: :class:`DerivativeFilter`, filtered
  differentiation on irregular stamps;
- :mod:`~robot_tv_dynamics.inputs.reference`: :class:`ReferenceAccelerations`, q̈ of a
  tracked reference trajectory at a stamp;
- :mod:`~robot_tv_dynamics.inputs.state`: :class:`ModelInputs`, the rules that turn the
  latest inputs into the :class:`ModelState` eq. (39) is evaluated at;
- :mod:`~robot_tv_dynamics.inputs.timeline`: :class:`StampedSeries`, Θ/Ψ and their rates
  keyed by the time they refer to, looked up at a joint sample's stamp;
- :mod:`~robot_tv_dynamics.inputs.efforts`: :class:`~robot_tv_dynamics.inputs.efforts.EffortMap`,
  what a driver's effort means: τ = sign·gain·(effort − offset), and the arms' presets.
"""

from robot_tv_dynamics.inputs.reference import ReferenceAccelerations
from robot_tv_dynamics.inputs.state import InputRules, ModelInputs, ModelState
from robot_tv_dynamics.inputs.timeline import (
    Lookup,
    PendingSamples,
    StampedSeries,
    TimelineRules,
    seconds_since,
)

__all__ = ["InputRules", "Lookup", "ModelInputs", "ModelState", "PendingSamples",
           "ReferenceAccelerations", "StampedSeries", "TimelineRules", "seconds_since"]
