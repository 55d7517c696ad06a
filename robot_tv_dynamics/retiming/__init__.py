"""Effort-feasible time-optimal retiming along a planned path.

:func:`retime` takes a :class:`~robot_tv_dynamics.evaluation.Trajectory`, a payload
or loading process and its settings
(:class:`~robot_tv_dynamics.retiming.options.RetimeOptions`, or the same as keywords)
and returns a :class:`~robot_tv_dynamics.retiming.result.RetimeResult` (the retimed
trajectory and its independent verification). No rclpy.

``retime`` (defined in :mod:`robot_tv_dynamics.retiming.solve`) is imported on first
use, so that building the command line (which imports
:mod:`robot_tv_dynamics.cli.retime`) does not load TOPP-RA.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from robot_tv_dynamics.retiming.options import RetimeOptions
    from robot_tv_dynamics.retiming.result import RetimeResult
    from robot_tv_dynamics.retiming.solve import retime

__all__ = ["RetimeOptions", "RetimeResult", "retime"]


def __getattr__(name: str) -> Any:
    """Import ``retime`` and ``RetimeResult`` on first access (PEP 562)."""
    if name == "retime":
        from robot_tv_dynamics.retiming.solve import retime

        return retime
    if name == "RetimeOptions":
        from robot_tv_dynamics.retiming.options import RetimeOptions

        return RetimeOptions
    if name == "RetimeResult":
        from robot_tv_dynamics.retiming.result import RetimeResult

        return RetimeResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
