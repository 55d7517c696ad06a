"""Physical consistency of Θ(t) over time: statistics (Definition 3) and the live monitor.

- :mod:`~robot_tv_dynamics.consistency.statistics`: margins μ_l, sizes ν_l and their
  running extremes (:class:`ConsistencyTracker`);
- :mod:`~robot_tv_dynamics.consistency.monitor`: :class:`ConsistencyMonitor`, the
  OK / WARN / ERROR statuses per body that monitor_node publishes;
- :mod:`~robot_tv_dynamics.consistency.rated`: the size bound of a body carrying up to a
  rated payload (monitor_node's ``rated_payload``).
"""

from robot_tv_dynamics.consistency.monitor import (
    BodyStatus,
    ConsistencyMonitor,
    Level,
    MonitorConfig,
    Transition,
)
from robot_tv_dynamics.consistency.statistics import (
    ConsistencySnapshot,
    ConsistencyTracker,
    spectral_statistics,
)

__all__ = [
    "BodyStatus",
    "ConsistencyMonitor",
    "ConsistencySnapshot",
    "ConsistencyTracker",
    "Level",
    "MonitorConfig",
    "Transition",
    "spectral_statistics",
]
