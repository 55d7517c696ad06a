"""One sweep item on a worker: evaluate or retime, always returning one row.

A row is a plain dict (the columns of :data:`~robot_tv_dynamics.sweep.table.COLUMNS`);
whatever goes wrong — unreadable file, bad input, an infeasible path, a bug — becomes
its ``error`` (exception type and message) with ``feasible`` False, never a lost item.
Models are cached per worker process (one URDF is parsed once per worker).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.evaluation import evaluate, load_payload, load_trajectory
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.sweep.plan import SweepItem

_MODELS: dict[tuple[str, tuple[tuple[str, float | None], ...]], RobotModel] = {}


def _model(item: SweepItem) -> RobotModel:
    key = (item.urdf, tuple(sorted((item.locked or {}).items())))
    if key not in _MODELS:
        _MODELS[key] = RobotModel.from_urdf(item.urdf, dict(item.locked) if item.locked
                                            else None)
    return _MODELS[key]


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _worst(names: tuple[str, ...] | list[str], ratios: np.ndarray) -> tuple[float | None,
                                                                            str | None]:
    values = np.nan_to_num(np.asarray(ratios, dtype=np.float64), nan=-np.inf)
    if not values.size or not np.isfinite(values.max()):
        return None, None
    i = int(np.argmax(values))
    return float(values[i]), str(names[i])


def base_row(item: SweepItem) -> dict[str, Any]:
    """The identifying columns of an item's row (the rest empty)."""
    return {"kind": item.kind, "robot": Path(item.urdf).stem if item.urdf else "",
            "urdf": item.urdf, "trajectory": item.trajectory, "payload": item.payload or "",
            "feasible": False, "max_effort_ratio": None, "worst_joint": None, "error": ""}


def run_item(item: SweepItem) -> dict[str, Any]:
    """Run one item; its row (module docstring). Never raises for the item's own faults."""
    started = time.perf_counter()
    row = base_row(item)
    try:
        if item.problem is not None:
            row["error"] = item.problem
            row["runtime"] = time.perf_counter() - started
            return row
        model = _model(item)
        trajectory = load_trajectory(item.trajectory, item.topic)
        load = None if item.payload is None else load_payload(item.payload)
        options = dict(item.options)
        if item.kind == "evaluate":
            result = evaluate(model, trajectory, load, compute_max_payload=False, **options)
            ratio, joint = _worst(result.joint_names, result.peak_ratio)
            row.update(feasible=not result.violations, max_effort_ratio=ratio,
                       worst_joint=joint, duration=float(trajectory.time_from_start[-1]
                                                         - trajectory.time_from_start[0]),
                       violations=len(result.violations))
        else:
            from robot_tv_dynamics.retiming.solve import retime

            retimed = retime(model, trajectory, load, **options)
            peaks = np.fmax(retimed.peak_ratio_after,
                            np.nan_to_num(retimed.peak_ratio_playback, nan=-np.inf))
            _, joint = _worst(retimed.joint_names, peaks)
            uniform = retimed.uniform
            row.update(
                feasible=retimed.within_limits, max_effort_ratio=retimed.max_effort_ratio,
                worst_joint=joint, duration_in=retimed.duration_before,
                duration_out=retimed.duration_after,
                duration_uniform_scaling=None if uniform is None else _finite(uniform.duration),
                max_velocity_scaling_factor=None if uniform is None
                else _finite(uniform.max_velocity_scaling_factor),
                max_acceleration_scaling_factor=None if uniform is None
                else _finite(uniform.max_acceleration_scaling_factor),
                iterations=retimed.iterations)
    except Exception as error:  # noqa: BLE001 - every fault of an item is its row's error
        row["feasible"] = False
        row["error"] = f"{type(error).__name__}: {error}"
    row["runtime"] = time.perf_counter() - started
    return row
