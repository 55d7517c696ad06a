"""ROS 2 messages ↔ NumPy arrays for the robot_tv_dynamics nodes.

Pure conversions and validation: no node, no publishing. Every check raises an error
of the package (:class:`~robot_tv_dynamics.exceptions.InvalidInputError`,
:class:`~robot_tv_dynamics.exceptions.UnknownNameError`) whose message names the
topic, the field and what is wrong, so a node can reject the message with that text.

**Label convention of std_msgs/Float64MultiArray.** Every array the nodes publish has
one ``MultiArrayDimension`` per axis, row-major (``dim[0].stride`` = total size,
``dim[1].stride`` = row length), ``data_offset`` 0, and labels of the form
``"<axis>:<name>,<name>,..."`` that name the entries along that axis, e.g.
``"body:panda_link1,...,panda_rightfinger"`` × ``"phi:m,h1,h2,h3,I11,I22,I33,I12,I23,I13"``.
On input the axis part (before ``:``) must be the expected one (``body`` then ``phi``
or ``psi``); the names are optional, and when the ``body`` names are given they may be
in any order (rows are permuted into model order). A flat array without layout
(``dim`` empty) of exactly N·10 (N·12) values in model row order is also accepted.
Strides of 0 are read as "not filled in". The reader of that layout, ``BodyArrayReader``,
and the label helpers live in :mod:`robot_tv_dynamics.inputs.body_arrays` (the replay of
a bag reads the same layout) and are re-exported here.
"""

from __future__ import annotations

import array
import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import InertiaStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory

from robot_tv_dynamics import limits
from robot_tv_dynamics.dynamics import TERM_NAMES
from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia, require_realizable
from robot_tv_dynamics.inputs.body_arrays import BodyArrayReader as BodyArrayReader
from robot_tv_dynamics.inputs.body_arrays import dim_label
from robot_tv_dynamics.inputs.body_arrays import parse_dim_label as parse_dim_label
from robot_tv_dynamics.inputs.body_vectors import (
    PHI_LABELS,
    PSI_LABELS,
    body_vector_names,
)
from robot_tv_dynamics.inputs.reference import ReferenceAccelerations

#: Rows of ``generalized_terms``: the addends of eq. (39) in τ, then τ (their sum).
TERM_LABELS = (*TERM_NAMES, "tau")


# ---------------------------------------------------------------------------- basics
def stamp_to_seconds(stamp: Time) -> float:
    """builtin_interfaces/Time → seconds [s]."""
    return stamp.sec + 1e-9 * stamp.nanosec


def read_stamp(stamp: Time, argument: str, now: float = 0.0) -> float:
    """A message stamp in seconds [s], checked by :func:`.limits.check_stamp`.

    Args:
        stamp: the header stamp.
        argument: the field, for the error message.
        now: the receiving node's clock [s] (0: not checked against it).

    Raises:
        InvalidInputError: nanosec ≥ 10⁹, sec at the int32 maximum, or far in the future.
    """
    return limits.check_stamp(stamp.sec, stamp.nanosec, argument, now)


def seconds_to_stamp(seconds: float) -> Time:
    """Seconds [s] → builtin_interfaces/Time (nearest nanosecond)."""
    sec = math.floor(seconds)
    nanosec = int(round((seconds - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return Time(sec=int(sec), nanosec=nanosec)


def to_float_array(values: np.ndarray) -> array.array:
    """A float64 ndarray → ``array.array('d')``, the fast path of rclpy sequence setters."""
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return out


# ---------------------------------------------------------------------------- joint states
class JointStateReader:
    """Reads q, q̇ in model joint order from sensor_msgs/JointState, matched by name.

    The mapping from the message's name list to model order is computed once per
    distinct name list (a publisher sends the same list every time), so the per-sample
    cost is a list comparison and two fancy-indexed copies. Joints the model does not
    have (a gripper in MoveIt's robot_description) are skipped, and ``on_unknown`` is
    told once per name list, unless ``strict``: then they reject the message.
    """

    def __init__(
        self, joint_names: Sequence[str], strict: bool = False,
        ignored: Iterable[str] = (), on_unknown: Callable[[list[str]], None] | None = None,
    ) -> None:
        """Build the reader.

        Args:
            joint_names: model joint names, in model order.
            strict: joints the model does not have reject the message (by default they
                are skipped).
            ignored: joints always accepted and ignored (the model's locked joints,
                which a driver still publishes).
            on_unknown: called with the skipped joints of each new name list (a log line).
        """
        self.joint_names = list(joint_names)
        self.ignored = frozenset(ignored)
        self.on_unknown = on_unknown
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self.strict = strict

    @property
    def strict(self) -> bool:
        """Whether joints the model does not have reject a message."""
        return self._strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self._strict = bool(value)
        self._names: list[str] | None = None  # the cached mapping follows the new rule
        self._take: np.ndarray | None = None

    def indices(self, names: Sequence[str]) -> np.ndarray:
        """Positions in ``names`` of each model joint (cached per name list).

        Raises:
            UnknownNameError: a name the model does not have (``strict`` only).
            InvalidInputError: duplicate names, or model joints missing (naming the
                unknown joints too, which a renamed joint would be).
        """
        if self._take is not None and names == self._names:
            return self._take
        take = np.full(len(self.joint_names), -1, dtype=np.intp)
        unknown: list[str] = []
        for position, name in enumerate(names):
            i = self._index.get(name)
            if i is None:
                if name in self.ignored:
                    continue
                if self._strict:
                    raise UnknownNameError("joint", name, self.joint_names)
                unknown.append(name)
                continue
            if take[i] >= 0:
                raise InvalidInputError("joint_states.name", f'joint "{name}" appears twice')
            take[i] = position
        if np.any(take < 0):
            missing = [self.joint_names[i] for i in np.flatnonzero(take < 0)]
            extra = f' (joint "{unknown[0]}" is not in the URDF)' if unknown else ""
            raise InvalidInputError("joint_states.name",
                                    f"lacks the model joints {missing}{extra}")
        if unknown and self.on_unknown is not None:
            self.on_unknown(unknown)
        self._names, self._take = list(names), take
        return take

    def read(self, msg: JointState) -> tuple[np.ndarray, np.ndarray]:
        """(q, q̇), each (nv,) in model order [rad, m; rad/s, m/s].

        Raises:
            UnknownNameError: a joint the model does not have.
            InvalidInputError: sizes that do not match ``name``, missing joints, no
                velocities, NaN/Inf.
        """
        names = msg.name
        n = len(names)
        if len(msg.position) != n:
            raise InvalidInputError(
                "joint_states.position", f"has {len(msg.position)} entries for {n} names")
        if len(msg.velocity) != n:
            raise InvalidInputError(
                "joint_states.velocity",
                f"has {len(msg.velocity)} entries for {n} names (q̇ is required)")
        take = self.indices(names)
        q = np.frombuffer(msg.position, dtype=np.float64)[take] if n else np.zeros(0)
        qd = np.frombuffer(msg.velocity, dtype=np.float64)[take] if n else np.zeros(0)
        # fast path: the largest magnitudes within the bounds (a NaN makes the maximum NaN
        # and fails the comparison: the full checks below name the joint)
        if n and np.abs(q).max() <= limits.POSITION and np.abs(qd).max() <= limits.VELOCITY:
            return q, qd
        if not np.isfinite(q).all():
            bad = self.joint_names[int(np.flatnonzero(~np.isfinite(q))[0])]
            raise InvalidInputError("joint_states.position", f'non-finite value for "{bad}"')
        if not np.isfinite(qd).all():
            bad = self.joint_names[int(np.flatnonzero(~np.isfinite(qd))[0])]
            raise InvalidInputError("joint_states.velocity", f'non-finite value for "{bad}"')
        limits.check_bounded(q, limits.POSITION, "joint_states.position", self.joint_names)
        limits.check_bounded(qd, limits.VELOCITY, "joint_states.velocity", self.joint_names)
        return q, qd


    def read_effort(self, msg: JointState) -> np.ndarray | None:
        """Measured efforts in model order (nv,) [N·m, N], or None when the sample has none.

        Call after :meth:`read` accepted the same message (the name mapping is cached).

        Raises:
            InvalidInputError: efforts of the wrong size or non-finite.
        """
        n = len(msg.name)
        if len(msg.effort) == 0:
            return None
        if len(msg.effort) != n:
            raise InvalidInputError(
                "joint_states.effort", f"has {len(msg.effort)} entries for {n} names")
        effort = np.frombuffer(msg.effort, dtype=np.float64)[self.indices(msg.name)]
        if not np.isfinite(effort).all():
            bad = self.joint_names[int(np.flatnonzero(~np.isfinite(effort))[0])]
            raise InvalidInputError("joint_states.effort", f'non-finite value for "{bad}"')
        limits.check_bounded(effort, limits.EFFORT, "joint_states.effort", self.joint_names)
        return effort


# ---------------------------------------------------------------------------- body arrays
def labelled_array(
    values: np.ndarray, axes: Sequence[tuple[str, Sequence[str] | None]],
    msg: Float64MultiArray | None = None,
) -> Float64MultiArray:
    """A row-major labelled Float64MultiArray (see the module docstring).

    Args:
        values: the array, one axis per entry of ``axes``.
        axes: (axis label, entry names or None) per axis.
        msg: a message to fill (its layout is rebuilt only if empty), or None.
    """
    values = np.asarray(values, dtype=np.float64)
    if msg is None:
        msg = Float64MultiArray()
    if not msg.layout.dim:
        stride = int(values.size)
        dims = []
        for (axis, names), size in zip(axes, values.shape, strict=True):
            dims.append(MultiArrayDimension(
                label=dim_label(axis, names), size=int(size), stride=stride))
            stride = stride // max(int(size), 1)
        msg.layout.dim = dims
        msg.layout.data_offset = 0
    msg.data = to_float_array(values.ravel())
    return msg


def body_array(
    values: np.ndarray, body_names: Sequence[str], axis: str = "phi",
) -> Float64MultiArray:
    """Θ / Θ̇ (``axis="phi"``) or Ψ / Ψ̇ (``axis="psi"``) as a labelled message."""
    labels = PHI_LABELS if axis == "phi" else PSI_LABELS if axis == "psi" else None
    return labelled_array(values, [("body", body_names), (axis, labels)])


def body_joint_state(
    stamp: float | Time, body_names: Sequence[str], axis: str = "phi",
    values: np.ndarray | None = None, rates: np.ndarray | None = None,
) -> JointState:
    """Θ / Θ̇ (``axis="phi"``) or Ψ / Ψ̇ (``"psi"``) as a stamped JointState-shaped vector.

    The schema of :mod:`robot_tv_dynamics.inputs.body_vectors`: ``name`` =
    ``<body>/<parameter>``, ``position`` = the value, ``velocity`` = the rate (either
    may be None: that field is left empty).

    Args:
        stamp: the time the value refers to [s], or a builtin_interfaces/Time.
        body_names: body names, in the rows' order.
        axis: ``"phi"`` or ``"psi"``.
        values: (N, 10) or (N, 12), or None.
        rates: same shape, or None.
    """
    msg = JointState(name=body_vector_names(body_names, axis))
    msg.header.stamp = stamp if isinstance(stamp, Time) else seconds_to_stamp(stamp)
    if values is not None:
        msg.position = to_float_array(np.asarray(values).ravel())
    if rates is not None:
        msg.velocity = to_float_array(np.asarray(rates).ravel())
    return msg


# ---------------------------------------------------------------------------- payload
def inertia_stamped_to_phi(msg: InertiaStamped, default_link: str | None = None
                           ) -> tuple[str, np.ndarray]:
    """(link, Φ_link) from geometry_msgs/InertiaStamped.

    ``header.frame_id`` names the URDF link (empty: ``default_link``, the node's
    ``payload_frame``); ``inertia`` gives the mass [kg], the
    centre of mass in link coordinates [m] and the inertia about the centre of mass in
    link axes [kg·m²] (as franka ``set_load`` and UR ``set_payload`` take it). Φ_link
    is about the link-frame origin, eq. (7) order.

    Raises:
        InvalidInputError: empty frame_id, NaN/Inf, a negative mass, values beyond
            :mod:`robot_tv_dynamics.limits` (mass, centre of mass, inertia) or an
            inertia no body has (Theorem 1).
    """
    link = msg.header.frame_id.strip() or (default_link or "")
    if not link:
        raise InvalidInputError("payload.header.frame_id", "is empty and the URDF has no "
                                "flange frame (payload_frame): it must name a URDF link")
    i = msg.inertia
    inertia = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])
    com = np.array([i.com.x, i.com.y, i.com.z])
    if np.isfinite(i.m) and np.isfinite(com).all() and np.isfinite(inertia).all():
        # NaN/Inf keep the core's own messages; finite-but-absurd values stop here
        limits.check_bounded(i.m, limits.PAYLOAD_MASS, "payload.inertia.m")
        limits.check_bounded(com, limits.PAYLOAD_COM, "payload.inertia.com")
        limits.check_bounded(inertia, limits.PAYLOAD_INERTIA, "payload.inertia")
    try:
        what = f'payload link "{link}"'
        phi = require_realizable(phi_from_mass_com_inertia(i.m, com, inertia, what=what), what)
    except ValueError as error:  # InvalidInputError, PhysicalConsistencyError
        raise InvalidInputError("payload", str(error)) from None
    return link, phi


# ---------------------------------------------------------------------------- reference
def payload_stamp(msg: InertiaStamped) -> float | None:
    """The time a ``payload`` applies from [s] (the samples' axis), None when unstamped.

    Raises:
        InvalidInputError: a malformed stamp (nanosec ≥ 10⁹, sec at the int32 maximum).
    """
    stamp = msg.header.stamp
    if int(stamp.sec) == 0 and int(stamp.nanosec) == 0:
        return None
    return read_stamp(stamp, "payload.header.stamp")


def duration_to_seconds(duration: object) -> float:
    """builtin_interfaces/Duration → seconds [s]."""
    return duration.sec + 1e-9 * duration.nanosec  # type: ignore[attr-defined]


def joint_trajectory_to_reference(
    msg: JointTrajectory, model_joints: Sequence[str], now: float, tolerance: float = 0.0,
) -> ReferenceAccelerations | None:
    """The accelerations of a trajectory_msgs/JointTrajectory, or None for "clear".

    Points are due at ``header.stamp + time_from_start`` (a zero stamp means ``now``,
    as for JointTrajectoryController). A message without points clears the reference.

    Args:
        msg: the trajectory.
        model_joints: model joint names, in model order.
        now: the receiving node's clock [s], used for a zero stamp.
        tolerance: end tolerance of the match [s].

    Raises:
        InvalidInputError: a point without accelerations (or of the wrong size), times
            not increasing, NaN/Inf.
        UnknownNameError: a joint the model does not have.
    """
    if len(msg.points) == 0:
        return None
    if len(msg.points) > limits.TRAJECTORY_POINTS:
        raise InvalidInputError(
            "reference.points", f"has {len(msg.points)} points (at most "
            f"{limits.TRAJECTORY_POINTS})")
    k = len(msg.joint_names)
    offsets = np.empty(len(msg.points))
    acc = np.empty((len(msg.points), k))
    for p, point in enumerate(msg.points):
        if len(point.accelerations) != k:
            raise InvalidInputError(
                f"reference.points[{p}].accelerations",
                f"has {len(point.accelerations)} entries for {k} joints "
                "(accelerations are required)")
        offsets[p] = duration_to_seconds(point.time_from_start)
        acc[p] = point.accelerations
    if np.isfinite(acc).all():
        limits.check_bounded(acc, limits.ACCELERATION, "reference.points.accelerations")
    limits.check_bounded(offsets, limits.TIME_FROM_START, "reference.points.time_from_start")
    stamp = read_stamp(msg.header.stamp, "reference.header.stamp")
    start = now if stamp == 0.0 else stamp
    try:
        return ReferenceAccelerations(
            model_joints, list(msg.joint_names), start, offsets, acc, tolerance)
    except InvalidInputError as error:
        raise InvalidInputError(f"reference.{error.argument}", error.problem) from None


# ---------------------------------------------------------------------------- diagnostics
def format_value(value: object) -> str:
    """A KeyValue string: floats with 6 significant digits, others with str()."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return str(value)


def make_status(
    name: str,
    level: int,
    message: str,
    hardware_id: str,
    values: Sequence[tuple[str, object]] = (),
) -> DiagnosticStatus:
    """A diagnostic_msgs/DiagnosticStatus.

    Args:
        name: status name (a body name, or ``"<node>: input"``).
        level: 0 OK, 1 WARN, 2 ERROR, 3 STALE.
        message: one line.
        hardware_id: the robot name.
        values: (key, value) pairs; floats are written with 6 significant digits.
    """
    if level not in (0, 1, 2, 3):
        raise InvalidInputError("level", f"must be 0..3, got {level}")
    return DiagnosticStatus(
        level=bytes([level]), name=name, message=message, hardware_id=hardware_id,
        values=[KeyValue(key=key, value=format_value(value)) for key, value in values],
    )


def status_level(status: DiagnosticStatus) -> int:
    """The level of a DiagnosticStatus as an int (rclpy holds it as one byte)."""
    level = status.level
    return level[0] if isinstance(level, (bytes, bytearray)) else int(level)
