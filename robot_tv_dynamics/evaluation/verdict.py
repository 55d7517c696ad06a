r"""One diagnostics-style verdict (OK / WARN / ERROR) from an evaluation's effort ratios."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.evaluation.result import (
    TrajectoryEvaluation,
)
from robot_tv_dynamics.status import Level

#: The levels :func:`effort_verdict` gives (the package's one :class:`Level`).
OK, WARN, ERROR = Level.OK, Level.WARN, Level.ERROR


@dataclass(frozen=True)
class EffortVerdict:
    """A diagnostics-shaped summary of a trajectory evaluation.

    Attributes:
        level: ``Level.OK``, ``Level.WARN`` or ``Level.ERROR``.
        message: one line naming every joint over its limit, or the closest one.
        values: (key, value) strings for DiagnosticStatus.values.
    """

    level: Level
    message: str
    values: tuple[tuple[str, str], ...]


def effort_verdict(result: TrajectoryEvaluation, warn_ratio: float = 0.9) -> EffortVerdict:
    """Diagnostics verdict: ERROR naming each joint the trajectory would overload.

    Args:
        result: an evaluation.
        warn_ratio: WARN when the largest ratio reaches this (or a joint has no limit).

    Returns:
        An :class:`EffortVerdict`.
    """
    peak, peak_index = result.peak_ratio, result.peak_index
    values: list[tuple[str, str]] = [
        ("points", str(result.t.size)),
        ("duration [s]", f"{result.t[-1] - result.t[0]:.6g}"),
    ]
    for i, name in enumerate(result.joint_names):
        if math.isnan(peak[i]):
            values.append((f"{name} peak effort ratio", "no limit"))
        else:
            values.append((f"{name} peak effort ratio",
                           f"{peak[i]:.4f} at t = {result.t[peak_index[i]]:.4g} s"))
    for label, mp in (("max payload [kg]", result.max_payload),
                      ("MoveIt static max payload [kg]", result.moveit_static_max_payload)):
        if mp is not None:
            values.append((label, "none" if mp.mass is None else f"{mp.mass:.6g}"))
    if result.violations:
        parts = []
        for name in result.violating_joints:
            i = result.joint_names.index(name)
            first = next(v for v in result.violations if v.joint == name)
            parts.append(f"{name} (peak {peak[i]:.3f}× limit at t = "
                         f"{result.t[peak_index[i]]:.3f} s, from t = {first.t:.3f} s)")
        message = "trajectory exceeds effort limits: " + ", ".join(parts)
        return EffortVerdict(ERROR, message, tuple(values))
    if np.all(np.isnan(peak)):
        return EffortVerdict(WARN, "no joint has an effort limit: nothing checked",
                             tuple(values))
    i = int(np.nanargmax(peak))
    message = (f"trajectory within effort limits; closest: {result.joint_names[i]} at "
               f"{peak[i]:.3f}× limit (t = {result.t[peak_index[i]]:.3f} s)")
    level = WARN if peak[i] >= warn_ratio or np.any(np.isnan(peak)) else OK
    if np.any(np.isnan(peak)):
        message += "; unchecked (no limit): " + ", ".join(
            name for name, p in zip(result.joint_names, peak, strict=True) if math.isnan(p))
    return EffortVerdict(level, message, tuple(values))
