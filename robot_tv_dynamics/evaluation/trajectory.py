r"""A planned joint trajectory in the ``trajectory_msgs/JointTrajectory`` shape.

Positions, velocities, accelerations and ``time_from_start`` per point; missing
velocities and accelerations are derived (:func:`derive_velocities_accelerations`).
:func:`trajectory_from_message` reads any object with the ``JointTrajectory`` fields (an
rclpy message, a message deserialized by ``rosbags``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    UnknownNameError,
)
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
)

if TYPE_CHECKING:
    import numpy.typing as npt
    import scipy.interpolate

    from robot_tv_dynamics.model import RobotModel

#: JointTrajectory message type name, for rosbag2 topics.
JOINT_TRAJECTORY_TYPE = "trajectory_msgs/msg/JointTrajectory"


#: Keys of one point: the ``trajectory_msgs/JointTrajectoryPoint`` fields (``effort`` is
#: read from a file but not used). Any other key is an error, as in a payload file.
POINT_KEYS = frozenset({"positions", "velocities", "accelerations", "effort",
                        "time_from_start"})
#: Top-level keys of a trajectory file (``header`` is ignored).
#: ``excitation`` is the record ``robot-tv-dynamics excite`` writes beside the points.
TRAJECTORY_KEYS = frozenset({"joint_names", "points", "header", "excitation"})


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
                wrong length, velocities or accelerations given for only some points,
                an unknown key (a misspelled ``acclerations`` is not silently ignored).
        """
        n = len(joint_names)
        if not points:
            raise InvalidInputError("trajectory.points", "the trajectory has no points")
        for k, point in enumerate(points):
            unknown = sorted(str(key) for key in point if key not in POINT_KEYS)
            if unknown:
                raise InvalidInputError(
                    f"trajectory.points[{k}]",
                    f"unknown key(s) {unknown}; known: {sorted(POINT_KEYS)}")
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


def model_columns(model: RobotModel, joint_names: Sequence[str]) -> list[int]:
    """The model-order index of each of a trajectory's joints.

    Raises:
        UnknownNameError: a joint that is not in the model.
    """
    columns = []
    for name in joint_names:
        if name not in model.joint_names:
            raise UnknownNameError("joint", name, model.joint_names)
        columns.append(model.joint_names.index(name))
    return columns


#: A joint without a URDF velocity limit approaches at most this fast [rad/s or m/s].
APPROACH_FALLBACK_SPEED = 0.5


def approach(model: RobotModel, start: npt.ArrayLike, motion: Trajectory, speed: float,
             rate: float = 50.0) -> Trajectory:
    """A rest-to-rest quintic from ``start`` to ``motion``'s first point, slow and within limits.

    Every joint of ``motion`` peaks at no more than ``speed`` × its URDF velocity limit
    (the quintic's peak is 15/8 of its mean speed); the move lasts at least 1 s.

    Args:
        model: the arm (its velocity limits).
        start: where ``motion``'s joints are now, in its joint order (n,).
        motion: the trajectory to approach.
        speed: fraction of each velocity limit, in (0, 1].
        rate: points per second.

    Raises:
        InvalidInputError: a speed out of (0, 1], a start of the wrong size or not finite.
        UnknownNameError: a joint of ``motion`` that the model does not have.
    """
    if not 0.0 < speed <= 1.0:
        raise InvalidInputError("approach speed", f"must be in (0, 1], got {speed}")
    q0 = check_finite(start, "start", (len(motion.joint_names),))
    q1 = motion.positions[0]
    limits = model.joint_limits.velocity[model_columns(model, motion.joint_names)]
    top = np.where(limits > 0, limits, APPROACH_FALLBACK_SPEED) * speed
    duration = max(1.0, float(np.max(15.0 / 8.0 * np.abs(q1 - q0) / top)))
    t = np.linspace(0.0, duration, max(2, int(np.ceil(duration * rate)) + 1))
    x = t / duration
    shape = 10 * x**3 - 15 * x**4 + 6 * x**5
    rate_1 = (30 * x**2 - 60 * x**3 + 30 * x**4) / duration
    rate_2 = (60 * x - 180 * x**2 + 120 * x**3) / duration**2
    d = q1 - q0
    return Trajectory(motion.joint_names, t, q0 + np.outer(shape, d), np.outer(rate_1, d),
                      np.outer(rate_2, d))


def held_positions(model: RobotModel,
                   default_positions: npt.ArrayLike | Mapping[str, float] | None) -> Array:
    """Positions (nv,) of the joints a trajectory does not list (a new writable array).

    Args:
        model: the arm.
        default_positions: (nv,) in model order, a mapping name → position (the others
            0), or None (all 0) [rad, m].

    Raises:
        UnknownNameError: a mapped joint that is not in the model.
        InvalidInputError: a position that is not finite, or a vector of the wrong size.
    """
    if default_positions is None:
        return np.zeros(model.nv)
    if isinstance(default_positions, Mapping):
        held = np.zeros(model.nv)
        for name, value in default_positions.items():
            if name not in model.joint_names:
                raise UnknownNameError("joint", str(name), model.joint_names)
            held[model.joint_names.index(name)] = float(
                check_finite(value, f"default_positions[{name}]", ()))
        return held
    return np.array(check_finite(default_positions, "default_positions", (model.nv,)))


def trajectory_from_dict(data: Mapping[str, Any]) -> Trajectory:
    """A trajectory from YAML/JSON data in the JointTrajectory shape.

    Args:
        data: ``{joint_names: [...], points: [{positions, velocities, accelerations,
            time_from_start}, ...]}``; ``time_from_start`` is seconds or ``{sec, nanosec}``.
            A top-level ``header``, and the ``excitation`` record of ``excite``, are
            ignored.

    Raises:
        InvalidInputError: missing or unknown keys, or malformed points.
    """
    if not isinstance(data, Mapping):
        raise InvalidInputError("trajectory", f"expected a mapping, got {type(data).__name__}")
    for key in ("joint_names", "points"):
        if key not in data:
            raise InvalidInputError("trajectory", f'missing key "{key}"')
    unknown = sorted(str(key) for key in data if key not in TRAJECTORY_KEYS)
    if unknown:
        raise InvalidInputError(
            "trajectory", f"unknown key(s) {unknown}; known: {sorted(TRAJECTORY_KEYS)}")
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
        else:  # scipy.interpolate here: 0.4 s of every node's start-up otherwise
            import scipy.interpolate

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
