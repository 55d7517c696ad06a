r"""What :func:`~robot_tv_dynamics.evaluation.efforts.evaluate` returns: efforts, violations."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.inertia import (
    Array,
)
from robot_tv_dynamics.numbers import finite_or_none

#: Margin on the ratio 1 before a point counts as a violation (rounding at the limit).
RATIO_TOLERANCE = 1e-9


# ====================================================================== results
@dataclass(frozen=True)
class EffortViolation:
    """One joint over its effort limit at one trajectory point.

    Attributes:
        joint: joint name.
        t: time_from_start of the point [s].
        ratio: |τ| / τ_max (> 1).
        index: index of the point.
        effort: τ at the point [N·m or N].
        limit: τ_max from the URDF [N·m or N].
    """

    joint: str
    t: float
    ratio: float
    index: int
    effort: float
    limit: float


@dataclass(frozen=True)
class MaxPayload:
    """The largest payload of a fixed shape that keeps a trajectory within effort limits.

    Attributes:
        method: ``"exact"`` (eq. (39) along the trajectory) or ``"moveit_static"``
            (point mass at the link origin, q̇ = q̈ = 0, as MoveIt's getMaxPayload).
        mass: the largest payload mass [kg]; ``inf`` when no limited joint feels the
            payload; None when no mass keeps the trajectory within the limits.
        scale: the same as a multiple of the evaluated load (a constant payload's shape
            is per kg, so scale = mass; a loading process is scaled as a whole).
        joint: the joint that saturates at that mass (None if ``mass`` is inf or None).
        t: time_from_start where it saturates [s].
        index: index of that point.
        per_point: the largest mass each point alone allows, (K,) [kg].
        min_mass: the smallest admissible mass [kg]: 0 unless the trajectory without
            the payload already exceeds a limit that the payload relieves.
        verified_ratio: |τ|/τ_max of the saturating joint recomputed by eq. (39) with the
            payload at ``mass`` (1 up to rounding); NaN for ``moveit_static`` or no mass.
    """

    method: str
    mass: float | None
    scale: float | None
    joint: str | None
    t: float | None
    index: int | None
    per_point: Array
    min_mass: float = 0.0
    verified_ratio: float = math.nan


@dataclass(frozen=True)
class TrajectoryEvaluation:
    """Eq. (39) along a trajectory under a payload: efforts, ratios, bounds, violations.

    Every per-joint array is in the *model's* joint order (``joint_names``); use
    :meth:`efforts_in_trajectory_order` for the trajectory's columns.

    Attributes:
        joint_names: the model's joints, (nv,).
        trajectory_joint_names: the trajectory's joints, in its column order.
        trajectory_columns: model index of each trajectory column.
        t: time_from_start, (K,) [s].
        positions: q used, all model joints, (K, nv) [rad or m].
        velocities: q̇ used (given or derived), (K, nv).
        accelerations: q̈ used (given or derived), (K, nv).
        effort: τ of eq. (39) with w = 0, (K, nv) [N·m or N].
        terms: each addend of eq. (39) (see :data:`TERM_NAMES`), (K, nv); they sum
            to ``effort``.
        effort_limit: τ_max from the URDF, (nv,); NaN where the URDF gives none (0).
        effort_ratio: |τ| / τ_max, (K, nv); NaN for joints without a limit.
        mass_matrix_min_eigenvalue: λ_min(M(q, Θ)) per point, (K,) [kg·m² or kg].
        mass_matrix_max_eigenvalue: λ_max(M(q, Θ)) per point, (K,).
        loaded_bodies: bodies the load enters (rows of Θ), by name.
        consistency_margin: λ_min(f(Φ_l)) of each loaded body per point, (K, len(
            loaded_bodies)) [kg·m² or kg]; > 0 iff physically consistent (Theorem 1).
        violations: every (joint, point) with ratio > 1.
        payload_mass: mass of the load per point, (K,) [kg].
        max_payload: the exact largest payload (None if not computed).
        moveit_static_max_payload: MoveIt's static number for comparison (None if not
            computed).
        notes: how inputs were completed (derived velocities, held joints, …).
        warnings: what could not be checked or looks wrong (joints without limits, …).
    """

    joint_names: tuple[str, ...]
    trajectory_joint_names: tuple[str, ...]
    trajectory_columns: tuple[int, ...]
    t: Array
    positions: Array
    velocities: Array
    accelerations: Array
    effort: Array
    terms: Mapping[str, Array]
    effort_limit: Array
    effort_ratio: Array
    mass_matrix_min_eigenvalue: Array
    mass_matrix_max_eigenvalue: Array
    loaded_bodies: tuple[str, ...]
    consistency_margin: Array
    violations: tuple[EffortViolation, ...]
    payload_mass: Array
    max_payload: MaxPayload | None
    moveit_static_max_payload: MaxPayload | None
    notes: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def peak_ratio(self) -> Array:
        """Largest |τ|/τ_max of each joint over the trajectory, (nv,); NaN without limit."""
        return peak_ratios(self.effort_ratio)

    @property
    def peak_index(self) -> npt.NDArray[np.int_]:
        """Index of the point where each joint's ratio peaks, (nv,) (0 without limit)."""
        return np.asarray(np.argmax(np.nan_to_num(self.effort_ratio, nan=-1.0), axis=0))

    @property
    def violating_joints(self) -> tuple[str, ...]:
        """Joints over their limit somewhere, in model order."""
        names = {v.joint for v in self.violations}
        return tuple(name for name in self.joint_names if name in names)

    def efforts_in_trajectory_order(self) -> Array:
        """τ for the trajectory's joints in its column order, (K, n) — the message's effort."""
        return np.asarray(self.effort[:, list(self.trajectory_columns)])

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary: plain lists and numbers, None for NaN and ∞."""
        names = list(self.joint_names)
        peak, peak_index = self.peak_ratio, self.peak_index
        points = []
        for k in range(self.t.size):
            points.append({
                "t": float(self.t[k]),
                "positions": _json(self.positions[k]),
                "velocities": _json(self.velocities[k]),
                "accelerations": _json(self.accelerations[k]),
                "effort": _json(self.effort[k]),
                "effort_ratio": _json(self.effort_ratio[k]),
                "terms": {name: _json(value[k]) for name, value in self.terms.items()},
                "mass_matrix_eigenvalues": {
                    "min": float(self.mass_matrix_min_eigenvalue[k]),
                    "max": float(self.mass_matrix_max_eigenvalue[k]),
                },
                "consistency_margin": {
                    body: float(self.consistency_margin[k, j])
                    for j, body in enumerate(self.loaded_bodies)},
                "payload_mass": float(self.payload_mass[k]),
            })
        out: dict[str, Any] = {
            "joint_names": names,
            "trajectory_joint_names": list(self.trajectory_joint_names),
            "effort_limits": _json(self.effort_limit),
            "peak_ratio": {
                name: {"ratio": finite_or_none(peak[i]),
                       "t": None if math.isnan(peak[i]) else float(self.t[peak_index[i]])}
                for i, name in enumerate(names)},
            "points": points,
            "violations": [{"joint": v.joint, "t": v.t, "ratio": v.ratio, "index": v.index,
                            "effort": v.effort, "limit": v.limit} for v in self.violations],
            "loaded_bodies": list(self.loaded_bodies),
        }
        for prefix, result in (("", self.max_payload),
                               ("moveit_static_", self.moveit_static_max_payload)):
            out[f"{prefix}max_payload_mass"] = (None if result is None
                                                else finite_or_none(result.mass))
            out[f"{prefix}max_payload_joint"] = None if result is None else result.joint
            out[f"{prefix}max_payload_t"] = None if result is None else result.t
        if self.max_payload is not None:
            out["max_payload_scale"] = finite_or_none(self.max_payload.scale)
            out["max_payload_min_mass"] = finite_or_none(self.max_payload.min_mass)
            out["max_payload_verified_ratio"] = finite_or_none(self.max_payload.verified_ratio)
        out["notes"] = list(self.notes)
        out["warnings"] = list(self.warnings)
        return out


def peak_ratios(ratio: Array) -> Array:
    """Largest |τ|/τ_max of each joint over the points of ``ratio`` (K, nv), (nv,).

    NaN for a joint without a limit (its column all NaN).
    """
    out = np.full(ratio.shape[1], np.nan)
    limited = ~np.all(np.isnan(ratio), axis=0)
    out[limited] = np.nanmax(ratio[:, limited], axis=0)
    return out


def _json(values: Array) -> list[float | None]:
    return [finite_or_none(float(x)) for x in values]
