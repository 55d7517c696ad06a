"""``evaluate`` and ``retime`` over a library of trajectories × payloads, in parallel on Dask.

:func:`~robot_tv_dynamics.sweep.run.sweep` expands trajectory directories and globs
(:mod:`~robot_tv_dynamics.sweep.plan`), pairs every trajectory and payload with the
URDF whose joints and links they name, runs each item on a Dask cluster
(:mod:`~robot_tv_dynamics.sweep.work`: one row per item, a failure is a row with its
error) and returns the rows, which :mod:`~robot_tv_dynamics.sweep.table` writes as CSV
or Parquet with a summary plot. No rclpy; Dask is imported only when a sweep runs.
"""

from robot_tv_dynamics.sweep.plan import SweepItem, expand_trajectories, plan_items
from robot_tv_dynamics.sweep.run import SweepResult, sweep
from robot_tv_dynamics.sweep.table import COLUMNS, write_summary_plot, write_table
from robot_tv_dynamics.sweep.work import run_item

__all__ = ["COLUMNS", "SweepItem", "SweepResult", "expand_trajectories", "plan_items",
           "run_item", "sweep", "write_summary_plot", "write_table"]
