"""Effort-feasible time-optimal retiming along a planned path (issue #15).

:func:`retime` takes a :class:`~robot_tv_dynamics.evaluation.Trajectory` and a payload
or loading process and returns a :class:`~robot_tv_dynamics.retiming.result.RetimeResult`
(the retimed trajectory and its independent verification). No rclpy.
"""

from robot_tv_dynamics.retiming.result import RetimeResult
from robot_tv_dynamics.retiming.retime import retime

__all__ = ["RetimeResult", "retime"]
