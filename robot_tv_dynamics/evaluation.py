r"""Payload-aware evaluation of a planned joint trajectory (the MoveIt pipeline).

A planner (MoveIt, a teach pendant, a script) hands over a joint trajectory in the
``trajectory_msgs/JointTrajectory`` shape: joint names, and points with positions,
velocities, accelerations and ``time_from_start``. Given the payload the arm will carry
— a constant one as franka ``set_load`` and UR ``set_payload`` take it (mass, centre of
mass, inertia about the centre of mass, in a link frame), or a time-dependent loading
process — :func:`evaluate` computes at every point the torque of the generalized
robotics equation (39) with each addend separately,

.. math::
    τ = M(q,Θ)\ddot q + \big(C(q,\dot q,Θ) + M(q,\dotΘ) + H(q,Ψ)\big)\dot q + G(q,Θ)
        + J(q)^\top Q_0 \dotΨ ,

the effort ratios |τ_i| / τ_i,max against the URDF limits, the bounds λ_min, λ_max of
M(q, Θ) and the consistency margin λ_min(f(Φ)) of the loaded body, and lists the
violations.

:func:`max_payload` answers "how heavy may the payload be for this trajectory": the
largest mass of a given shape (centre of mass, inertia per kg) for which the whole
trajectory stays within the effort limits. τ is affine in that mass (eq. (39) is
linear in Θ, Θ̇ and Ψ), τ(m) = τ₀ + m·τ₁, so every joint and point bounds m by an
interval; the answer is the end of their intersection, exact and verified by one
more evaluation of eq. (39). Next to it stands the number MoveIt's
``DynamicsSolver::getMaxPayload`` gives: a point mass at the link origin, static
(q̇ = q̈ = 0, gravity only), minimised over the points.

The module is pure: no rclpy, no message types. :func:`trajectory_from_message`
reads any object with the ``JointTrajectory`` fields (an rclpy message, a message
deserialized by ``rosbags``); :func:`load_trajectory` and :func:`load_payload` read
the YAML and rosbag2 files of the ``evaluate`` command.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import scipy.interpolate

from robot_tv_dynamics import dynamics
from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    RobotTvDynamicsError,
    UnknownNameError,
)
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    consistency_margin,
    phi_from_mass_com_inertia,
    require_realizable,
    spatial_inertia,
)
from robot_tv_dynamics.kinematics import Kinematics
from robot_tv_dynamics.loading import LoadingProcess, load_loading_process
from robot_tv_dynamics.model import RobotModel

#: Diagnostic levels of :func:`effort_verdict` (diagnostic_msgs/DiagnosticStatus values).
OK, WARN, ERROR = 0, 1, 2

#: Labels of the addends of eq. (39) in :attr:`TrajectoryEvaluation.terms`, as
#: :meth:`~robot_tv_dynamics.dynamics.GeneralizedTerms.breakdown` names them.
TERM_NAMES = ("inertia", "coriolis", "mass_rate", "gyroscopic", "gravity", "psi_dot")

#: Margin on the ratio 1 before a point counts as a violation (rounding at the limit).
RATIO_TOLERANCE = 1e-9

#: JointTrajectory message type name, for rosbag2 topics.
JOINT_TRAJECTORY_TYPE = "trajectory_msgs/msg/JointTrajectory"




# ====================================================================== inputs
@dataclass(frozen=True)
class Trajectory:
    """A joint trajectory in the ``trajectory_msgs/JointTrajectory`` shape.

    Build it from points with :meth:`from_points`, from a message with
    :func:`trajectory_from_message` or from YAML data with :func:`trajectory_from_dict`.

    Attributes:
        joint_names: the joints the columns belong to; a subset of the model's joints,
            in any order.
        time_from_start: t_k, (K,), strictly increasing [s].
        positions: q, (K, n) [rad or m].
        velocities: q̇, (K, n) [rad/s or m/s], or None when the planner gave none.
        accelerations: q̈, (K, n) [rad/s² or m/s²], or None when the planner gave none.
    """

    joint_names: tuple[str, ...]
    time_from_start: Array
    positions: Array
    velocities: Array | None = None
    accelerations: Array | None = None

    def __post_init__(self) -> None:
        """Validate shapes, finiteness and the time order; freeze the arrays.

        Raises:
            InvalidInputError: empty trajectory, duplicate joint names, wrong shapes,
                non-finite values, or times that do not strictly increase (the message
                names the index of the first offending point).
        """
        names = tuple(str(name) for name in self.joint_names)
        if not names:
            raise InvalidInputError("trajectory.joint_names", "is empty")
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise InvalidInputError("trajectory.joint_names", f"duplicate joints {duplicates}")
        t = check_finite(self.time_from_start, "trajectory.time_from_start", (None,)).copy()
        if t.size == 0:
            raise InvalidInputError("trajectory.points", "the trajectory has no points")
        steps = np.diff(t)
        if np.any(steps <= 0.0):
            k = int(np.argmax(steps <= 0.0)) + 1
            raise InvalidInputError(
                "trajectory.time_from_start",
                f"times must increase strictly; point {k} is at {t[k]:.9g} s, "
                f"point {k - 1} at {t[k - 1]:.9g} s")
        shape = (t.size, len(names))
        object.__setattr__(self, "joint_names", names)
        object.__setattr__(self, "time_from_start", readonly(t))
        for attribute in ("positions", "velocities", "accelerations"):
            value = getattr(self, attribute)
            if value is None:
                if attribute == "positions":
                    raise InvalidInputError("trajectory.positions", "are required")
                continue
            array = check_finite(value, f"trajectory.{attribute}", shape).copy()
            object.__setattr__(self, attribute, readonly(array))

    @property
    def n_points(self) -> int:
        """Number of points K."""
        return int(self.time_from_start.size)

    @classmethod
    def from_points(
        cls, joint_names: Sequence[str], points: Sequence[Mapping[str, Any]]
    ) -> Trajectory:
        """Build a trajectory from JointTrajectoryPoint-shaped mappings.

        Args:
            joint_names: the joints, one per column.
            points: each with ``positions`` (required), ``velocities`` and
                ``accelerations`` (each either for every point or for none; an empty
                list counts as absent, as in the message), and ``time_from_start``
                (seconds as a number, or ``{sec, nanosec}``).

        Raises:
            InvalidInputError: a point without positions or time, a vector of the
                wrong length, velocities or accelerations given for only some points.
        """
        n = len(joint_names)
        if not points:
            raise InvalidInputError("trajectory.points", "the trajectory has no points")
        times = [_seconds(point.get("time_from_start"), f"trajectory.points[{k}]."
                          "time_from_start") for k, point in enumerate(points)]
        columns: dict[str, Array | None] = {}
        for attribute in ("positions", "velocities", "accelerations"):
            rows = [_vector(point.get(attribute), f"trajectory.points[{k}].{attribute}", n)
                    for k, point in enumerate(points)]
            given = [row is not None for row in rows]
            if attribute == "positions" and not all(given):
                k = given.index(False)
                raise InvalidInputError(
                    f"trajectory.points[{k}].positions",
                    f"missing; every point needs {n} positions (one per joint)")
            if any(given) and not all(given):
                k = given.index(False)
                raise InvalidInputError(
                    f"trajectory.points[{k}].{attribute}",
                    f"missing while other points have {attribute}; give them for every "
                    "point or for none (then they are derived)")
            columns[attribute] = np.array(rows, dtype=np.float64) if all(given) else None
        return cls(tuple(joint_names), np.array(times), np.array(columns["positions"]),
                   columns["velocities"], columns["accelerations"])


def _seconds(value: Any, argument: str) -> float:
    """Seconds from a number, a ``{sec, nanosec}`` mapping or a Duration-like object."""
    if value is None:
        raise InvalidInputError(argument, "missing")
    if isinstance(value, Mapping):
        unknown = set(value) - {"sec", "nanosec"}
        if unknown or "sec" not in value:
            raise InvalidInputError(
                argument, f"expected seconds or {{sec, nanosec}}, got keys {sorted(value)}")
        sec, nanosec = value["sec"], value.get("nanosec", 0)
    elif hasattr(value, "sec") and hasattr(value, "nanosec"):
        sec, nanosec = value.sec, value.nanosec
    elif isinstance(value, bool):
        raise InvalidInputError(argument, f"expected seconds, got {value!r}")
    else:
        return float(check_finite(value, argument, ()))
    sec = float(check_finite(sec, f"{argument}.sec", ()))
    nanosec = float(check_finite(nanosec, f"{argument}.nanosec", ()))
    if not 0.0 <= nanosec < 1e9:
        raise InvalidInputError(argument, f"nanosec must be in [0, 1e9), got {nanosec:.17g}")
    return round(sec + 1e-9 * nanosec, 9)  # the nanosecond grid (1.7, not 1.7000000000000002)


def _vector(value: Any, argument: str, n: int) -> Array | None:
    """A length-n vector, or None for an absent or empty field."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise InvalidInputError(argument, f"expected a list of numbers, got {value!r}")
    vector = check_finite(value, argument, (None,))
    if vector.size == 0:
        return None
    if vector.size != n:
        raise InvalidInputError(argument, f"expected {n} values (one per joint), got {vector.size}")
    return vector


def trajectory_from_dict(data: Mapping[str, Any]) -> Trajectory:
    """A trajectory from YAML/JSON data in the JointTrajectory shape.

    Args:
        data: ``{joint_names: [...], points: [{positions, velocities, accelerations,
            time_from_start}, ...]}``; ``time_from_start`` is seconds or ``{sec, nanosec}``.
            A top-level ``header`` is ignored.

    Raises:
        InvalidInputError: missing keys or malformed points.
    """
    if not isinstance(data, Mapping):
        raise InvalidInputError("trajectory", f"expected a mapping, got {type(data).__name__}")
    for key in ("joint_names", "points"):
        if key not in data:
            raise InvalidInputError("trajectory", f'missing key "{key}"')
    names, points = data["joint_names"], data["points"]
    if not isinstance(names, Sequence) or isinstance(names, str):
        raise InvalidInputError("trajectory.joint_names", "expected a list of joint names")
    if not isinstance(points, Sequence) or not all(isinstance(p, Mapping) for p in points):
        raise InvalidInputError("trajectory.points", "expected a list of mappings")
    return Trajectory.from_points([str(name) for name in names], points)


def trajectory_from_message(message: Any) -> Trajectory:
    """A trajectory from a ``trajectory_msgs/JointTrajectory`` message.

    Duck-typed: works for rclpy messages and for messages deserialized by ``rosbags``
    (same field names); no message package is imported.
    """
    try:
        names = [str(name) for name in message.joint_names]
        points = [{
            "positions": list(point.positions),
            "velocities": list(point.velocities),
            "accelerations": list(point.accelerations),
            "time_from_start": point.time_from_start,
        } for point in message.points]
    except AttributeError as error:
        raise InvalidInputError(
            "trajectory", f"not a JointTrajectory message ({error})") from None
    return Trajectory.from_points(names, points)


@dataclass(frozen=True)
class Payload:
    """A rigid payload fixed to a URDF link, as franka ``set_load`` and UR ``set_payload``.

    The payload is *added* to the link: the URDF describes the arm without it.

    Attributes:
        link: URDF link whose frame the payload is given in (e.g. ``tool0``,
            ``panda_link8``).
        mass: m [kg], ≥ 0.
        com: centre of mass in the link frame, (3,) [m].
        inertia: inertia about the centre of mass, axes parallel to the link frame,
            (3, 3) symmetric [kg·m²].
    """

    link: str
    mass: float
    com: Array = field(default_factory=lambda: np.zeros(3))
    inertia: Array = field(default_factory=lambda: np.zeros((3, 3)))

    def __post_init__(self) -> None:
        """Validate and freeze.

        Raises:
            InvalidInputError: wrong shapes or non-finite values.
            PhysicalConsistencyError: a negative mass, or an inertia about the COM
                that no mass distribution has (not positive semidefinite, or violating
                the triangle inequality).
        """
        what = f'payload on "{self.link}"'
        phi = phi_from_mass_com_inertia(self.mass, self.com, self.inertia, what=what)
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "com", readonly(check_finite(self.com, f"{what}.com", (3,))
                                                  .copy()))
        inertia = check_finite(self.inertia, f"{what}.inertia", (3, 3))
        object.__setattr__(self, "inertia", readonly(0.5 * (inertia + inertia.T)))
        require_realizable(phi, what)

    def phi(self) -> Array:
        """Φ of the payload about the link frame, (10,), eq. (7) order."""
        return phi_from_mass_com_inertia(self.mass, self.com, self.inertia)

    def phi_per_kg(self) -> Array:
        """Φ of the same shape with 1 kg (inertia scaled by 1/m), (10,).

        A massless payload has no shape of its own: a 1 kg point mass at ``com`` is used.
        """
        if self.mass > 0.0:
            return self.phi() / self.mass
        return phi_from_mass_com_inertia(1.0, self.com, np.zeros((3, 3)))

    def with_mass(self, mass: float) -> Payload:
        """The same shape (centre of mass, inertia per kg) with another mass [kg]."""
        if self.mass > 0.0:
            inertia = self.inertia * (mass / self.mass)
        else:
            inertia = np.zeros((3, 3))
        return Payload(self.link, mass, self.com, inertia)


def payload_from_dict(data: Mapping[str, Any]) -> Payload:
    """A payload from ``{link, mass, com: [x, y, z], inertia: {ixx, iyy, izz, ixy, ixz, iyz}}``.

    ``com`` defaults to the link origin and ``inertia`` to zero (a point mass); the
    inertia may also be given as a 3×3 list.

    Raises:
        InvalidInputError: missing ``link`` or ``mass``, unknown keys, malformed values.
        PhysicalConsistencyError: see :class:`Payload`.
    """
    if not isinstance(data, Mapping):
        raise InvalidInputError("payload", f"expected a mapping, got {type(data).__name__}")
    unknown = set(data) - {"link", "mass", "com", "inertia"}
    if unknown:
        raise InvalidInputError("payload", f"unknown keys {sorted(unknown)}; expected link, "
                                "mass, com, inertia (or a loading process with `process:`)")
    for key in ("link", "mass"):
        if key not in data:
            raise InvalidInputError("payload", f'missing key "{key}"')
    inertia = data.get("inertia", None)
    if isinstance(inertia, Mapping):
        keys = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
        bad = set(inertia) - set(keys)
        if bad:
            raise InvalidInputError("payload.inertia", f"unknown keys {sorted(bad)}; "
                                    f"expected {list(keys)}")
        i = {key: inertia.get(key, 0.0) for key in keys}
        inertia = [[i["ixx"], i["ixy"], i["ixz"]],
                   [i["ixy"], i["iyy"], i["iyz"]],
                   [i["ixz"], i["iyz"], i["izz"]]]
    com = data.get("com", None)
    if isinstance(com, Mapping):
        com = [com.get("x", 0.0), com.get("y", 0.0), com.get("z", 0.0)]
    return Payload(
        link=str(data["link"]),
        mass=float(check_finite(data["mass"], "payload.mass", ())),
        com=np.zeros(3) if com is None else check_finite(com, "payload.com", (3,)),
        inertia=np.zeros((3, 3)) if inertia is None else check_finite(
            inertia, "payload.inertia", (3, 3)),
    )


#: What :func:`evaluate` accepts as the load: a constant payload or a loading process.
Load: TypeAlias = "Payload | LoadingProcess"


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
        ratio = self.effort_ratio
        out = np.full(ratio.shape[1], np.nan)
        limited = ~np.all(np.isnan(ratio), axis=0)
        out[limited] = np.nanmax(ratio[:, limited], axis=0)
        return out

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
                name: {"ratio": _number(peak[i]),
                       "t": None if math.isnan(peak[i]) else float(self.t[peak_index[i]])}
                for i, name in enumerate(names)},
            "points": points,
            "violations": [{"joint": v.joint, "t": v.t, "ratio": v.ratio, "index": v.index,
                            "effort": v.effort, "limit": v.limit} for v in self.violations],
            "loaded_bodies": list(self.loaded_bodies),
        }
        for prefix, result in (("", self.max_payload),
                               ("moveit_static_", self.moveit_static_max_payload)):
            out[f"{prefix}max_payload_mass"] = None if result is None else _number(result.mass)
            out[f"{prefix}max_payload_joint"] = None if result is None else result.joint
            out[f"{prefix}max_payload_t"] = None if result is None else result.t
        if self.max_payload is not None:
            out["max_payload_scale"] = _number(self.max_payload.scale)
            out["max_payload_min_mass"] = _number(self.max_payload.min_mass)
            out["max_payload_verified_ratio"] = _number(self.max_payload.verified_ratio)
        out["notes"] = list(self.notes)
        out["warnings"] = list(self.warnings)
        return out


def _number(value: float | None) -> float | None:
    """A float for JSON: None for None, NaN and ±∞."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _json(values: Array) -> list[float | None]:
    return [_number(float(x)) for x in values]


# ====================================================================== derivatives
def derive_velocities_accelerations(
    trajectory: Trajectory,
) -> tuple[Array, Array, tuple[str, ...]]:
    """q̇ and q̈ of a trajectory, derived where the planner left them out.

    - velocities missing: q̇ = s'(t) of a not-a-knot cubic spline s through the
      positions over ``time_from_start`` (exact for cubic motion; two points: the
      constant slope);
    - accelerations missing, velocities given: q̈ by second-order finite differences of
      the given velocities over ``time_from_start`` (``numpy.gradient``, non-uniform
      spacing, one-sided at the ends);
    - both missing: q̈ = s''(t) of the same spline;
    - a single point: zero velocity and acceleration (a static check).

    Args:
        trajectory: the trajectory.

    Returns:
        (q̇ (K, n), q̈ (K, n), notes saying what was derived and how).
    """
    t, q = trajectory.time_from_start, trajectory.positions
    qd, qdd = trajectory.velocities, trajectory.accelerations
    notes: list[str] = []
    if qd is not None and qdd is not None:
        return qd, qdd, ()
    if t.size == 1:
        zero = np.zeros_like(q)
        notes.append("a single point: missing velocities/accelerations taken as 0 (static)")
        return (zero if qd is None else qd), (zero if qdd is None else qdd), tuple(notes)
    spline: scipy.interpolate.CubicSpline | None = None
    if qd is None:
        if t.size == 2:
            qd = np.repeat((q[1:] - q[:1]) / (t[1] - t[0]), 2, axis=0)
            notes.append("velocities were not given: derived as the constant slope between "
                         "the two points")
        else:
            spline = scipy.interpolate.CubicSpline(t, q, axis=0, bc_type="not-a-knot")
            qd = np.asarray(spline(t, 1))
            notes.append("velocities were not given: derived from a not-a-knot cubic spline "
                         "through the positions over time_from_start (q̇ = s'(t))")
    if qdd is None:
        if spline is not None:
            qdd = np.asarray(spline(t, 2))
            notes.append("accelerations were not given: derived from the same cubic spline "
                         "(q̈ = s''(t))")
        else:
            qdd = np.asarray(np.gradient(qd, t, axis=0, edge_order=2 if t.size > 2 else 1))
            notes.append("accelerations were not given: derived by second-order finite "
                         "differences of the velocities over time_from_start (numpy.gradient, "
                         "one-sided at the ends)")
    return qd, qdd, tuple(notes)


# ====================================================================== evaluation
@dataclass(frozen=True)
class _LoadSamples:
    """The load along the trajectory in body coordinates, and one unit of its scale.

    τ is linear in the load, so τ = τ(arm) + scale · τ(unit) with ``scale`` the
    current scale; for a constant payload the unit is 1 kg of its shape (scale = mass),
    for a loading process it is the process as given (scale 1).
    """

    link: str
    body: int
    unit_phi: Array  # (K, 10) Φ of one unit in the body frame
    unit_phi_dot: Array  # (K, 10)
    unit_gamma: Array  # (K, 6) γ = Q₀ψ
    unit_gamma_dot: Array  # (K, 6)
    scale: float  # the evaluated load = scale × unit
    mass_per_scale: float  # kg per unit of scale (1 for a payload, peak mass for a process)

    @property
    def mass(self) -> Array:
        """Mass of the evaluated load per point, (K,) [kg]."""
        return np.asarray(self.scale * self.unit_phi[:, 0])

    def rows(self, k: int, scale: float) -> tuple[Array, Array, Array, Array]:
        """Φ, Φ̇, γ, γ̇ of the load's body at point k for a given scale."""
        return (scale * self.unit_phi[k], scale * self.unit_phi_dot[k],
                scale * self.unit_gamma[k], scale * self.unit_gamma_dot[k])


def _sample_load(
    model: RobotModel, load: Load, t: Array, time_offset: float, notes: list[str]
) -> _LoadSamples:
    """Move the load into its body at every trajectory time."""
    k = t.size
    if isinstance(load, Payload):
        body, phi_unit, *_ = model.link_load_in_body(load.link, load.phi_per_kg())
        return _LoadSamples(
            link=load.link, body=body, unit_phi=np.tile(phi_unit, (k, 1)),
            unit_phi_dot=np.zeros((k, 10)), unit_gamma=np.zeros((k, 6)),
            unit_gamma_dot=np.zeros((k, 6)), scale=load.mass, mass_per_scale=1.0)
    link = str(load.link)
    model.link_attachment(link)  # a clear error for an unknown link before sampling
    process_t = t + time_offset
    duration = float(load.duration)
    notes.append(f'loading process on link "{link}" evaluated at process time '
                 f"time_from_start + {time_offset:g} s ({process_t[0]:g} … {process_t[-1]:g} s "
                 f"of a {duration:g} s process); max payload scales the whole process")
    phi, phi_dot = np.empty((k, 10)), np.empty((k, 10))
    gamma, gamma_dot = np.empty((k, 6)), np.empty((k, 6))
    body = -1
    for i, ti in enumerate(process_t):
        state = load.state(float(ti))
        body, phi[i], phi_dot[i], psi, psi_dot = model.link_load_in_body(
            link, state.phi, state.phi_dot, state.psi, state.psi_dot)
        gamma[i] = dynamics.psi_momentum(psi)
        gamma_dot[i] = dynamics.psi_momentum(psi_dot)
    peak = float(np.max(np.abs(phi[:, 0])))
    return _LoadSamples(link=link, body=body, unit_phi=phi, unit_phi_dot=phi_dot,
                        unit_gamma=gamma, unit_gamma_dot=gamma_dot, scale=1.0,
                        mass_per_scale=peak if peak > 0.0 else 1.0)


def _full_state(
    model: RobotModel,
    trajectory: Trajectory,
    default_positions: npt.ArrayLike | Mapping[str, float] | None,
    notes: list[str],
) -> tuple[list[int], Array, Array, Array]:
    """Model-order q, q̇, q̈ (K, nv) from the trajectory and the held joints."""
    columns = []
    for name in trajectory.joint_names:
        if name not in model.joint_names:
            raise UnknownNameError("joint", name, model.joint_names)
        columns.append(model.joint_names.index(name))
    held: Array
    if default_positions is None:
        held = np.zeros(model.nv)
    elif isinstance(default_positions, Mapping):
        held = np.zeros(model.nv)
        for name, value in default_positions.items():
            if name not in model.joint_names:
                raise UnknownNameError("joint", str(name), model.joint_names)
            held[model.joint_names.index(name)] = float(
                check_finite(value, f"default_positions[{name}]", ()))
    else:
        held = check_finite(default_positions, "default_positions", (model.nv,))
    qd_given, qdd_given, derived = derive_velocities_accelerations(trajectory)
    notes.extend(derived)
    k = trajectory.n_points
    q, qd, qdd = np.tile(held, (k, 1)), np.zeros((k, model.nv)), np.zeros((k, model.nv))
    q[:, columns] = trajectory.positions
    qd[:, columns] = qd_given
    qdd[:, columns] = qdd_given
    missing = [i for i in range(model.nv) if i not in columns]
    if missing:
        held_text = ", ".join(f"{model.joint_names[i]} = {held[i]:g}" for i in missing)
        notes.append("joints not in the trajectory are held at fixed positions with zero "
                     f"velocity and acceleration: {held_text}")
    return columns, q, qd, qdd


def _static_torque(kin: Kinematics, theta: Array) -> Array:
    """G(q, Θ) = Σ_l J_lᵀ Z(Φ_l) g_l of eq. (42): the torque at rest (q̇ = q̈ = 0)."""
    forces = np.einsum("lab,lb->la", spatial_inertia(theta), kin.gravity_local)
    return np.asarray(np.einsum("lak,la->k", kin.jacobians, forces))


def _mass_bounds(
    base: Array, unit: Array, limit: Array
) -> tuple[Array, Array]:
    """Per point and joint, the interval of masses m with |base + m·unit| ≤ limit.

    Args:
        base: τ without the payload, (K, nv).
        unit: τ per unit of payload, (K, nv).
        limit: τ_max, (nv,); NaN entries (no limit) bound nothing.

    Returns:
        (lower, upper), each (K, nv); an empty interval has lower > upper.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (-limit - base) / unit
        b = (limit - base) / unit
    lower, upper = np.minimum(a, b), np.maximum(a, b)
    flat = unit == 0.0
    inside = np.abs(base) <= limit
    lower = np.where(flat, np.where(inside, -np.inf, np.inf), lower)
    upper = np.where(flat, np.where(inside, np.inf, -np.inf), upper)
    unlimited = np.isnan(limit)[None, :] & np.ones_like(base, dtype=bool)
    lower = np.where(unlimited, -np.inf, lower)
    upper = np.where(unlimited, np.inf, upper)
    return lower, upper


def evaluate(
    model: RobotModel,
    trajectory: Trajectory,
    payload: Load | None = None,
    *,
    theta: npt.ArrayLike | None = None,
    default_positions: npt.ArrayLike | Mapping[str, float] | None = None,
    time_offset: float = 0.0,
    compute_max_payload: bool = True,
    ratio_tolerance: float = RATIO_TOLERANCE,
) -> TrajectoryEvaluation:
    """Eq. (39) along a planned trajectory under a payload; effort limits and max payload.

    Args:
        model: the arm.
        trajectory: the planned motion; its joints may be any subset of the model's, in
            any order.
        payload: a :class:`Payload` (constant, added to its link) or a loading process
            (``robot_tv_dynamics.loading``; its Φ, Φ̇, ψ, ψ̇ in the link frame are added
            to the link's body at process time ``time_from_start + time_offset``); None
            evaluates the arm alone.
        theta: Θ of the arm without the payload, (N, 10), eq. (7) order about each body
            origin [kg, kg·m, kg·m²]; None = ``model.theta_nominal``.
        default_positions: positions of the joints the trajectory does not list,
            (nv,) in model order or a mapping name → position [rad or m]; None = 0.
            They are held there with zero velocity and acceleration.
        time_offset: process time at ``time_from_start = 0`` [s] (loading process only).
        compute_max_payload: also compute :func:`max_payload` and MoveIt's static number.
        ratio_tolerance: a ratio counts as a violation above ``1 + ratio_tolerance``.

    Returns:
        A :class:`TrajectoryEvaluation`.

    Raises:
        UnknownNameError: a trajectory joint or the payload link is not in the model.
        InvalidInputError: malformed arrays, a payload link fixed to the world.
    """
    notes: list[str] = []
    warnings: list[str] = []
    columns, q, qd, qdd = _full_state(model, trajectory, default_positions, notes)
    t = trajectory.time_from_start
    k_points, nv = q.shape
    theta_base = model.theta_nominal.copy() if theta is None else model.check_theta(theta).copy()
    time_offset = float(check_finite(time_offset, "time_offset", ()))
    load = None if payload is None else _sample_load(model, payload, t, time_offset, notes)

    limit = np.asarray(model.joint_limits.effort, dtype=np.float64).copy()
    limit[~(limit > 0.0)] = np.nan
    for i in np.flatnonzero(np.isnan(limit)):
        warnings.append(f'joint "{model.joint_names[i]}" has no effort limit in the URDF '
                        "(effort 0): its ratio is NaN and it is not checked")
    _limit_warnings(model, q, qd, t, warnings)

    n_bodies = model.n_bodies
    effort = np.empty((k_points, nv))
    terms = {name: np.empty((k_points, nv)) for name in TERM_NAMES}
    lam_min, lam_max = np.empty(k_points), np.empty(k_points)
    margins = np.empty((k_points, 0 if load is None else 1))
    unit_tau = np.zeros((k_points, nv))
    static_base, static_unit = np.zeros((k_points, nv)), np.zeros((k_points, nv))
    point_mass = np.zeros((n_bodies, 10))
    if load is not None:
        # MoveIt's payload: 1 kg at the link origin, moved into body coordinates
        _, point_mass[load.body], *_ = model.link_load_in_body(
            load.link, phi_from_mass_com_inertia(1.0, np.zeros(3), np.zeros((3, 3))))
    for k in range(k_points):
        kin = model.kinematics(q[k])
        theta_k, theta_dot_k, gamma_k, gamma_dot_k = _with_load(
            theta_base, load, k, 1.0 if load is None else load.scale)
        if load is not None:
            margins[k, 0] = float(consistency_margin(theta_k[load.body]))
        generalized = dynamics.generalized_terms(
            kin, qd[k], qdd[k], theta_k, theta_dot_k, gamma_k, gamma_dot_k)
        effort[k] = generalized.tau
        for name, value in generalized.breakdown().items():
            terms[name][k] = value
        eigenvalues = np.linalg.eigvalsh(generalized.mass_matrix)
        lam_min[k], lam_max[k] = eigenvalues[0], eigenvalues[-1]
        if load is not None and compute_max_payload:
            unit = _with_load(np.zeros((n_bodies, 10)), load, k, 1.0)
            unit_tau[k] = dynamics.generalized_terms(kin, qd[k], qdd[k], *unit).tau
            static_base[k] = _static_torque(kin, theta_base)
            static_unit[k] = _static_torque(kin, point_mass)
    for array in (effort, lam_min, lam_max, margins, *terms.values()):
        readonly(array)
    frozen_terms = MappingProxyType(terms)

    with np.errstate(invalid="ignore"):
        ratio = np.abs(effort) / limit
    over = np.nan_to_num(ratio, nan=0.0) > 1.0 + ratio_tolerance
    violations = tuple(
        EffortViolation(joint=model.joint_names[i], t=float(t[k]), ratio=float(ratio[k, i]),
                        index=int(k), effort=float(effort[k, i]), limit=float(limit[i]))
        for k, i in zip(*np.nonzero(over), strict=True))

    exact = moveit = None
    if load is not None:
        if np.any(load.mass < 0.0):
            warnings.append("the load has a negative mass at some points")
        if compute_max_payload:
            base_tau = effort - load.scale * unit_tau  # τ of the arm alone (τ is linear)
            exact = _max_payload_from_bounds(
                "exact", model, t, base_tau, unit_tau, limit, load.mass_per_scale)
            exact = _verify(model, exact, q, qd, qdd, theta_base, load, limit)
            moveit = _moveit_static(model, t, static_base, static_unit, limit)

    return TrajectoryEvaluation(
        joint_names=tuple(model.joint_names),
        trajectory_joint_names=trajectory.joint_names,
        trajectory_columns=tuple(columns),
        t=t,
        positions=readonly(q), velocities=readonly(qd), accelerations=readonly(qdd),
        effort=effort,
        terms=frozen_terms,
        effort_limit=readonly(limit),
        effort_ratio=readonly(ratio),
        mass_matrix_min_eigenvalue=lam_min,
        mass_matrix_max_eigenvalue=lam_max,
        loaded_bodies=() if load is None else (model.body_names[load.body],),
        consistency_margin=margins,
        violations=violations,
        payload_mass=readonly(np.zeros(k_points) if load is None else load.mass),
        max_payload=exact,
        moveit_static_max_payload=moveit,
        notes=tuple(notes),
        warnings=tuple(warnings),
    )


def _with_load(
    theta: Array, load: _LoadSamples | None, k: int, scale: float
) -> tuple[Array, Array, Array, Array]:
    """Θ, Θ̇, γ, γ̇ (N rows) of the arm ``theta`` plus ``scale`` units of the load at point k."""
    n_bodies = theta.shape[0]
    theta = theta.copy()
    theta_dot = np.zeros((n_bodies, 10))
    gamma, gamma_dot = np.zeros((n_bodies, 6)), np.zeros((n_bodies, 6))
    if load is not None:
        phi, phi_dot, gamma_l, gamma_dot_l = load.rows(k, scale)
        theta[load.body] += phi
        theta_dot[load.body] = phi_dot
        gamma[load.body] = gamma_l
        gamma_dot[load.body] = gamma_dot_l
    return theta, theta_dot, gamma, gamma_dot


def _limit_warnings(model: RobotModel, q: Array, qd: Array, t: Array, out: list[str]) -> None:
    """Warn (once per joint) about positions or velocities outside the URDF limits."""
    limits = model.joint_limits
    for i, name in enumerate(model.joint_names):
        if not limits.continuous[i] and limits.upper[i] > limits.lower[i]:
            outside = (q[:, i] < limits.lower[i] - 1e-9) | (q[:, i] > limits.upper[i] + 1e-9)
            if outside.any():
                k = int(np.argmax(outside))
                out.append(f'joint "{name}" position {q[k, i]:.6g} at t = {t[k]:.6g} s is '
                           f"outside its URDF limits [{limits.lower[i]:g}, {limits.upper[i]:g}]")
        if limits.velocity[i] > 0:
            over = np.abs(qd[:, i]) > limits.velocity[i] * (1 + 1e-9)
            if over.any():
                k = int(np.argmax(over))
                out.append(f'joint "{name}" velocity {qd[k, i]:.6g} at t = {t[k]:.6g} s exceeds '
                           f"its URDF limit {limits.velocity[i]:g}")


def _max_payload_from_bounds(
    method: str, model: RobotModel, t: Array, base: Array, unit: Array, limit: Array,
    mass_per_scale: float,
) -> MaxPayload:
    """The end of the admissible interval of scales, and where it is attained."""
    lower, upper = _mass_bounds(base, unit, limit)
    per_point_upper = upper.min(axis=1)
    per_point_lower = np.maximum(lower.max(axis=1), 0.0)
    low = float(per_point_lower.max())
    high = float(per_point_upper.min())
    per_point = np.where(per_point_lower <= per_point_upper, per_point_upper, np.nan)
    per_point = readonly(np.maximum(per_point, 0.0) * mass_per_scale)
    if high < low or high < 0.0:
        return MaxPayload(method, None, None, None, None, None, per_point,
                          min_mass=low * mass_per_scale)
    if math.isinf(high):
        return MaxPayload(method, math.inf, math.inf, None, None, None, per_point,
                          min_mass=low * mass_per_scale)
    k, i = np.unravel_index(int(np.argmin(upper)), upper.shape)
    return MaxPayload(method, high * mass_per_scale, high, model.joint_names[int(i)], float(t[k]),
                      int(k), per_point, min_mass=low * mass_per_scale)


def _verify(
    model: RobotModel, result: MaxPayload, q: Array, qd: Array, qdd: Array,
    theta_base: Array, load: _LoadSamples, limit: Array,
) -> MaxPayload:
    """Recompute the saturating joint's ratio by eq. (39) at the maximum payload."""
    if result.index is None or result.scale is None or result.joint is None:
        return result
    k, i = result.index, model.joint_names.index(result.joint)
    theta, theta_dot, gamma, gamma_dot = _with_load(theta_base, load, k, result.scale)
    tau = model.inverse_dynamics(q[k], qd[k], qdd[k], theta, theta_dot, gamma, gamma_dot).tau
    return dataclasses.replace(result, verified_ratio=float(abs(tau[i]) / limit[i]))


def _moveit_static(
    model: RobotModel, t: Array, base: Array, unit: Array, limit: Array
) -> MaxPayload:
    """MoveIt's ``DynamicsSolver::getMaxPayload`` at every point, minimised over them.

    At each q: G(q) of the arm alone and of a 1 kg point mass at the link origin
    (q̇ = q̈ = 0). A point where some joint's static torque already reaches its limit
    allows 0 kg (as MoveIt returns); otherwise each joint allows the mass that brings
    |G_i| to its limit. The weight acts along ``model.gravity`` (MoveIt applies a +z
    force of 1 N at the tip and flags the sign of gravity as unsure; here the
    point mass is physical). Joints without a limit are skipped (MoveIt would count
    their 0 limit as saturated).
    """
    over = np.abs(base) >= limit  # False where there is no limit (NaN)
    saturated = np.any(over, axis=1)
    _, upper = _mass_bounds(base, unit, limit)
    # a saturated point allows 0 kg, attributed to the joints already at their limit
    upper = np.where(saturated[:, None], np.where(over, 0.0, np.inf), upper)
    per_point = upper.min(axis=1)
    high = float(per_point.min())
    per_point = readonly(np.maximum(per_point, 0.0))
    if math.isinf(high):
        return MaxPayload("moveit_static", math.inf, math.inf, None, None, None, per_point)
    k, i = np.unravel_index(int(np.argmin(upper)), upper.shape)
    mass = max(high, 0.0)
    return MaxPayload("moveit_static", mass, mass, model.joint_names[int(i)], float(t[k]),
                      int(k), per_point)


def max_payload(
    model: RobotModel,
    trajectory: Trajectory,
    payload: Load,
    **kwargs: Any,
) -> MaxPayload:
    """The largest payload of ``payload``'s shape that keeps ``trajectory`` within limits.

    Shape = link, centre of mass and inertia per kg of a :class:`Payload` (its mass is
    ignored), or a whole loading process scaled by one factor. Exact: τ(m) = τ₀ + m·τ₁
    along the trajectory, so each joint and point admits an interval of m; the result
    is the upper end of their intersection with m ≥ 0, and the saturating joint and
    point are where that end is attained. Keyword arguments go to :func:`evaluate`.
    """
    result = evaluate(model, trajectory, payload, compute_max_payload=True, **kwargs)
    if result.max_payload is None:
        raise InvalidInputError("payload", "a payload or loading process is required")
    return result.max_payload


# ====================================================================== verdict
@dataclass(frozen=True)
class EffortVerdict:
    """A diagnostics-shaped summary of a trajectory evaluation.

    Attributes:
        level: :data:`OK`, :data:`WARN` or :data:`ERROR` (DiagnosticStatus levels).
        message: one line naming every joint over its limit, or the closest one.
        values: (key, value) strings for DiagnosticStatus.values.
    """

    level: int
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


# ====================================================================== files
def load_payload(path: str | Path) -> Load:
    """Read a payload YAML: a constant payload, or a loading process (has ``process:``).

    Raises:
        InvalidInputError: unreadable file, malformed YAML or content.
    """
    data = _read_yaml(path, "payload")
    if isinstance(data, Mapping) and "process" in data:
        return load_loading_process(path)
    return payload_from_dict(data)


def load_trajectory(path: str | Path, topic: str | None = None) -> Trajectory:
    """Read a trajectory from YAML or from the first JointTrajectory of a rosbag2.

    Args:
        path: a YAML file (JointTrajectory shape), or a rosbag2 directory, ``.mcap`` or
            ``.db3`` file.
        topic: bag topic to read; None = the first topic of type
            ``trajectory_msgs/msg/JointTrajectory``.

    Raises:
        InvalidInputError: missing or unreadable file, no JointTrajectory in the bag,
            malformed content.
    """
    path = Path(path)
    if path.is_dir() or path.suffix in (".mcap", ".db3"):
        return trajectory_from_message(read_bag_joint_trajectory(path, topic))
    if topic is not None:
        raise InvalidInputError("topic", "only applies to rosbag2 input")
    return trajectory_from_dict(_read_yaml(path, "trajectory"))


def read_bag_joint_trajectory(path: str | Path, topic: str | None = None) -> Any:
    """The first JointTrajectory message of a rosbag2 (read with ``rosbags``).

    Args:
        path: bag directory (with ``metadata.yaml``) or a single ``.mcap``/``.db3`` file.
        topic: topic to read; None = the first JointTrajectory topic.

    Returns:
        The deserialized message (fields as in ``trajectory_msgs/msg/JointTrajectory``).
    """
    try:
        from rosbags.rosbag2 import Reader
        from rosbags.typesys import Stores, get_typestore
    except ImportError as error:  # pragma: no cover - rosbags is a runtime requirement
        raise InvalidInputError("trajectory", f"reading rosbag2 needs rosbags ({error})") from None
    path = Path(path)
    if not path.exists():
        raise InvalidInputError("trajectory", f"{path}: no such file or directory")
    typestore = get_typestore(Stores.LATEST)
    try:
        with Reader(path) as reader:
            connections = [c for c in reader.connections if c.msgtype == JOINT_TRAJECTORY_TYPE]
            if topic is not None:
                topics = sorted({c.topic for c in reader.connections})
                if topic not in topics:
                    raise InvalidInputError("topic", f'"{topic}" is not in the bag {path}; '
                                            f"topics: {topics}")
                connections = [c for c in reader.connections if c.topic == topic]
                if connections[0].msgtype != JOINT_TRAJECTORY_TYPE:
                    raise InvalidInputError("topic", f'"{topic}" has type '
                                            f"{connections[0].msgtype}, not "
                                            f"{JOINT_TRAJECTORY_TYPE}")
            if not connections:
                found = sorted({f"{c.topic} ({c.msgtype})" for c in reader.connections})
                raise InvalidInputError("trajectory", f"the bag {path} has no "
                                        f"{JOINT_TRAJECTORY_TYPE} topic; topics: {found}")
            for connection, _, raw in reader.messages(connections=connections):
                return typestore.deserialize_cdr(raw, connection.msgtype)
    except RobotTvDynamicsError:
        raise
    except Exception as error:  # rosbags raises its own ReaderError, KeyError, OSError…
        raise InvalidInputError("trajectory", f"cannot read the bag {path}: {error}") from None
    raise InvalidInputError("trajectory", f"the bag {path} has no message on "
                            f"{sorted({c.topic for c in connections})}")


def _read_yaml(path: str | Path, what: str) -> Any:
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidInputError(what, f"cannot read {path}: {error.strerror or error}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise InvalidInputError(what, f"{path} is not valid YAML: {error}") from None
