r"""A recorded rosbag2 (MCAP or SQLite) → the momentum observer, sample by sample.

:func:`read_observer_bag` reads ``joint_states`` (sensor_msgs/JointState with
``effort``: the measured joint torque) and, when present, the demo's body arrays
``inertial_parameters`` (Θ), ``inertial_parameter_rates`` (Θ̇), ``psi`` (Ψ),
``psi_rates`` (Ψ̇) (std_msgs/Float64MultiArray, ``body`` × ``phi``/``psi`` layout of
:mod:`robot_tv_dynamics.ros.conversions`; body names in the label may come in any
order) through :func:`robot_tv_dynamics.bags.open_bag`, as the demo's analysis does.

**Time and matching rule.** A joint_states sample's time is its header stamp (the
receive/log time when the stamps are all zero), t = 0 at the first joint_states message.
A body topic recorded as stamped JointState-shaped vectors
(:mod:`robot_tv_dynamics.inputs.body_vectors`; under its own name or as
``inertial_parameters_stamped`` / ``psi_stamped``, which the nodes publish and which win
over the legacy arrays in the same bag) is paired **by stamp** through
:class:`~robot_tv_dynamics.inputs.timeline.StampedSeries` (interpolated between the
bracketing samples, held after the newest; rates from ``velocity`` or from the stamps),
whatever its log order. The legacy Float64MultiArray has no header: each array message
is assigned to the joint_states message nearest to it in log (receive) time (the
simulator publishes both in one tick); each sample then uses the last array message
assigned at or before it (zero-order hold). Samples before the first message of a topic
that the bag has are dropped (counted). A topic the bag lacks falls back to the nominal
value (Θ: the URDF's; Ψ: zero), and the result says so.

**Bad data never crashes the replay.** Joints the model does not have (a gripper) are
skipped, and a note names them. A joint_states sample without velocity or effort, with
NaN/Inf, with missing or repeated joint names, or a time not after the
previous sample is dropped and counted by reason; a malformed array message is
skipped (the previous one is held) and counted. Only when nothing usable is left (no
joint_states topic, no sample with effort, no sample naming the model's joints) is an
:class:`~robot_tv_dynamics.exceptions.RecordingError` raised, naming the reason.

:func:`observe` runs a :class:`~.observer.MomentumObserver` and a
:class:`~.contact.ContactDetector` over the samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.exceptions import InvalidInputError, RecordingError, UnknownNameError
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.inputs.body_arrays import BodyArrayReader
from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader
from robot_tv_dynamics.inputs.efforts import EffortMap
from robot_tv_dynamics.inputs.timeline import (
    AHEAD,
    StampedSeries,
    TimelineRules,
    seconds_since,
)
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer.contact import ContactDetector, ContactEvent
from robot_tv_dynamics.observer.observer import MomentumObserver, ObserverConfig, ObserverLoads

JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
ARRAY_TYPE = "std_msgs/msg/Float64MultiArray"
#: Body-array topics: name → (field of :class:`ObserverRecording`, axis label, width).
BODY_TOPICS: dict[str, tuple[str, str, int]] = {
    "inertial_parameters": ("theta", "phi", 10),
    "inertial_parameter_rates": ("theta_dot", "phi", 10),
    "psi": ("psi", "psi", 12),
    "psi_rates": ("psi_dot", "psi", 12),
}
#: The stamped topics the nodes publish (JointState-shaped) → the body topic they carry;
#: where a bag has both, the stamped one is used (as dynamics_node does).
STAMPED_TOPICS = {"inertial_parameters_stamped": "inertial_parameters",
                  "psi_stamped": "psi"}


@dataclass(frozen=True)
class ObserverRecording:
    """The usable samples of a bag, model joint order.

    Attributes:
        path: the bag.
        joint_names: model joint names (columns of q, qd, effort).
        t: sample times, seconds from the first joint_states message (K,) [s].
        q: (K, nv) [rad, m].
        qd: (K, nv) [rad/s, m/s].
        effort: measured joint torque (K, nv) [N·m, N].
        theta, theta_dot: Θ, Θ̇ per sample (K, N, 10), None when the bag lacks the topic.
        psi, psi_dot: Ψ, Ψ̇ per sample (K, N, 12), None when the bag lacks the topic.
        dropped: joint_states samples dropped, by reason.
        skipped: array messages skipped, by topic and reason.
        notes: what fell back to nominal values, and similar remarks.
        stamps: the samples' header stamps as the nodes read them, Unix seconds as a
            float (``sec + 1e-9·nanosec``) (K,) [s]; None when the stamps are zero. The
            observer integrates on these, as dynamics_node does: their float rounding
            (≈0.2 µs) changes the residual by ~1e-8 N·m, and taking the node's clock
            makes the replay reproduce the node's residual to rounding.
    """

    path: str
    joint_names: list[str]
    t: Array
    q: Array
    qd: Array
    effort: Array
    theta: Array | None
    theta_dot: Array | None
    psi: Array | None
    psi_dot: Array | None
    dropped: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stamps: Array | None = None


def _count(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _read_messages(path: Path, joint_topic: str
                   ) -> tuple[list[tuple[int, Any]], dict[str, list[tuple[int, Any]]]]:
    """(joint_states (log time, msg) list, body topic → list) in log-time order."""
    joint: list[tuple[int, Any]] = []
    arrays: dict[str, list[tuple[int, Any]]] = {}
    with open_bag(path) as bag:
        joint_name = bag.resolve(joint_topic)
        if joint_name is None or bag.topics[joint_name] != JOINT_STATE_TYPE:
            found = sorted(f"{topic} ({kind})" for topic, kind in bag.topics.items())
            raise RecordingError(str(path), f"has no {JOINT_STATE_TYPE} topic "
                                 f'"{joint_topic}"; topics: {found}')
        # bag topic → the body topic it carries (a stamped one under the legacy name);
        # a topic of another type is not ours (a user's own topic of that name)
        carries = {**{topic: topic for topic in BODY_TOPICS}, **STAMPED_TOPICS}
        body = {name: key for topic, key in carries.items()
                if (name := bag.resolve(topic)) is not None and name != joint_name
                and bag.topics[name] in (ARRAY_TYPE, JOINT_STATE_TYPE)}
        for name, log_time, msg in bag.messages([joint_name, *body]):
            if name == joint_name:
                joint.append((log_time, msg))
            else:
                arrays.setdefault(body[name], []).append((log_time, msg))
    joint.sort(key=lambda item: item[0])
    for items in arrays.values():
        items.sort(key=lambda item: item[0])
    return joint, arrays


def read_observer_bag(path: str | Path, model: RobotModel, joint_topic: str = "/joint_states",
                      efforts: EffortMap | None = None) -> ObserverRecording:
    """Read the observer's inputs from a rosbag2 (see the module docstring).

    Args:
        path: a bag directory (with metadata.yaml) or a single ``.mcap``/``.db3`` file.
        model: the arm (joint and body names; locked joints in joint_states are ignored).
        joint_topic: the JointState topic.
        efforts: what the bag's ``effort`` field means (per joint in model order);
            None: joint torques.

    Raises:
        RecordingError: unreadable bag, no joint_states topic, no usable sample.
    """
    path = Path(path)
    joint, arrays = _read_messages(path, joint_topic)
    if not joint:
        raise RecordingError(str(path), f'has no message on "{joint_topic}"')
    dropped: dict[str, int] = {}
    skipped: dict[str, int] = {}
    notes: list[str] = []
    t_all, zero_stamps = _sample_times(joint, notes)
    stamped = _stamped_series(model, arrays, joint, skipped)
    assigned = _assigned_arrays(model, arrays, joint, stamped, skipped)
    for topic in ("inertial_parameters", "psi"):
        if topic not in assigned and topic not in stamped:
            fallback = "the URDF's nominal Θ" if topic == "inertial_parameters" else "zero"
            why = "has no valid message" if arrays.get(topic) else "not in the bag"
            notes.append(f"{topic} {why}: {fallback} is used")
    samples = _joint_samples(model, joint, t_all, dropped)
    if samples.skipped_joints:
        notes.append(f"joint_states name joints the model does not have, skipped: "
                     f"{sorted(samples.skipped_joints)}")
    if not samples.any_effort and dropped.get("no effort", 0) > 0:
        raise RecordingError(str(path), f'"{joint_topic}" carries no effort (the measured '
                             "joint torque the observer needs)")
    if not samples.keep:
        reasons = ", ".join(f"{v} × {r}" for r, v in dropped.items())
        raise RecordingError(str(path), f'no usable "{joint_topic}" sample ({reasons}); model '
                             f"joints: {model.joint_names}")
    held, first = _held_arrays(assigned, len(joint))
    for topic, (values, first_k) in stamped.items():
        held[topic], first[topic] = values, first_k
    start = max(first.values(), default=0)
    usable = [j for j, k in enumerate(samples.keep) if k >= start]
    if len(usable) < len(samples.keep):
        dropped["before the first body-array message"] = len(samples.keep) - len(usable)
    if not usable:
        raise RecordingError(str(path), "no joint_states sample after the first "
                             "inertial_parameters/psi message")
    rows_k = np.array(samples.keep)[usable]
    fields: dict[str, Array | None] = {}
    for topic, (name, _, _) in BODY_TOPICS.items():
        series = held.get(topic)
        fields[name] = None if series is None else series[rows_k]
    return ObserverRecording(
        path=str(path), joint_names=list(model.joint_names), t=t_all[rows_k],
        q=np.array(samples.q)[usable], qd=np.array(samples.qd)[usable],
        effort=_torques(efforts, model, np.array(samples.effort)[usable]),
        theta=fields["theta"],
        theta_dot=fields["theta_dot"], psi=fields["psi"], psi_dot=fields["psi_dot"],
        dropped=dropped, skipped=skipped, notes=notes,
        stamps=None if zero_stamps else np.array(
            [int(joint[k][1].header.stamp.sec) + 1e-9 * int(joint[k][1].header.stamp.nanosec)
             for k in rows_k]))


def _sample_times(joint: list[tuple[int, Any]], notes: list[str]) -> tuple[Array, bool]:
    """Each joint_states sample's time [s] from the first, and whether the stamps are all 0.

    The header stamp, as integer nanoseconds relative to the first sample (no float
    rounding of the epoch); the log (receive) time when every stamp is zero (noted).
    """
    stamps = [int(m.header.stamp.sec) * 1_000_000_000 + int(m.header.stamp.nanosec)
              for _, m in joint]
    zero_stamps = not any(stamps)
    if zero_stamps:
        stamps = [lt for lt, _ in joint]
        notes.append("joint_states stamps are all zero: the receive (log) time is used")
    return np.array([stamp - stamps[0] for stamp in stamps], dtype=np.float64) * 1e-9, zero_stamps


def _assigned_arrays(model: RobotModel, arrays: dict[str, list[tuple[int, Any]]],
                     joint: list[tuple[int, Any]], stamped: dict[str, tuple[Array, int]],
                     skipped: dict[str, int]) -> dict[str, list[tuple[int, Array]]]:
    """Legacy body arrays (no stamp in stamped form): topic → (joint_states index, value).

    Each message goes to the joint_states message nearest in log time; a malformed one
    is skipped and counted in ``skipped``.
    """
    log = np.array([lt for lt, _ in joint], dtype=np.float64)
    assigned: dict[str, list[tuple[int, Array]]] = {}
    for topic, (_, axis, width) in BODY_TOPICS.items():
        items = arrays.get(topic)
        if not items or topic in stamped:
            continue
        rows: list[tuple[int, Array]] = []
        reader = BodyArrayReader(topic, model.body_names, axis, width)
        for lt, msg in items:
            try:
                value = reader.read(msg)
            except InvalidInputError as error:
                _count(skipped, f"{topic}: {error.argument} ({error.problem})"[:120])
                continue
            except UnknownNameError as error:
                _count(skipped, f"{topic}: {error}"[:120])
                continue
            k = int(np.clip(np.searchsorted(log, lt), 1, len(log) - 1)) if len(log) > 1 else 0
            if len(log) > 1 and abs(log[k - 1] - lt) <= abs(log[k] - lt):
                k -= 1
            rows.append((k, value))
        if rows:
            assigned[topic] = rows
    return assigned


@dataclass
class _JointSamples:
    """The usable joint_states samples: their indices and joint vectors in model order."""

    keep: list[int] = field(default_factory=list)
    q: list[Array] = field(default_factory=list)
    qd: list[Array] = field(default_factory=list)
    effort: list[Array] = field(default_factory=list)
    any_effort: bool = False
    skipped_joints: set[str] = field(default_factory=set)


def _joint_samples(model: RobotModel, joint: list[tuple[int, Any]], t_all: Array,
                   dropped: dict[str, int]) -> _JointSamples:
    """The joint_states samples that name the model's joints with finite q, q̇, effort.

    A sample with wrong joint names, no position/velocity/effort, NaN/Inf or a time not
    after the previous kept one is dropped and counted by reason in ``dropped``.
    """
    index = {name: i for i, name in enumerate(model.joint_names)}
    ignored = set(model.locked_joints)
    out = _JointSamples()
    last_t = -np.inf
    for k, (_, msg) in enumerate(joint):
        n = len(msg.name)
        take = np.full(model.nv, -1, dtype=np.intp)
        wrong = False
        for position, name in enumerate(msg.name):
            i = index.get(name)
            if i is None:
                if name not in ignored:
                    out.skipped_joints.add(name)  # a gripper: read the model's joints
            elif take[i] >= 0:
                wrong = True
            else:
                take[i] = position
        if wrong or np.any(take < 0):
            _count(dropped, "wrong joint names")
            continue
        if len(msg.position) != n or len(msg.velocity) != n:
            _count(dropped, "no position or velocity")
            continue
        if len(msg.effort) != n:
            _count(dropped, "no effort")
            continue
        out.any_effort = True
        q = np.asarray(msg.position, dtype=np.float64)[take]
        qd = np.asarray(msg.velocity, dtype=np.float64)[take]
        effort = np.asarray(msg.effort, dtype=np.float64)[take]
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))
                and np.all(np.isfinite(effort))):
            _count(dropped, "NaN/Inf")
            continue
        if not t_all[k] > last_t:
            _count(dropped, "time not after the previous sample")
            continue
        last_t = t_all[k]
        out.keep.append(k)
        out.q.append(q)
        out.qd.append(qd)
        out.effort.append(effort)
    return out


def _held_arrays(assigned: dict[str, list[tuple[int, Array]]], total: int
                 ) -> tuple[dict[str, Array], dict[str, int]]:
    """Each assigned topic held at every one of ``total`` samples, and its first sample.

    The last of several messages assigned to one sample wins; a sample without one holds
    the previous (zero-order hold).
    """
    held: dict[str, Array] = {}
    first: dict[str, int] = {}
    for topic, rows in assigned.items():
        out = np.full((total, *rows[0][1].shape), np.nan)
        for k, value in rows:
            out[k] = value
        filled = ~np.isnan(out[:, 0, 0])
        first[topic] = int(np.flatnonzero(filled)[0])
        idx = np.where(filled, np.arange(total), 0)
        np.maximum.accumulate(idx, out=idx)
        held[topic] = out[idx]
    return held, first


def _torques(efforts: EffortMap | None, model: RobotModel, effort: Array) -> Array:
    """The bag's efforts as joint torques (the map checked against the model's joints)."""
    if efforts is None:
        return effort
    return efforts.check_joints(model.joint_names).torque(effort)


def _stamped_series(model: RobotModel, arrays: dict[str, list[tuple[int, Any]]],
                    joint: list[tuple[int, Any]], skipped: dict[str, int],
                    ) -> dict[str, tuple[Array, int]]:
    """Stamped body-vector topics at every joint_states stamp, by the node's rule.

    Each JointState-shaped topic of :data:`BODY_TOPICS` goes into a
    :class:`~robot_tv_dynamics.inputs.timeline.StampedSeries` (arrival order does not
    matter) and is looked up at each joint_states stamp (seconds from integer
    nanoseconds since the first joint_states stamp,
    :func:`~robot_tv_dynamics.inputs.timeline.seconds_since`): interpolated between
    the bracketing samples, held after the newest. A topic carrying rates in
    ``velocity`` also fills its rates topic when the bag lacks that one; without rates
    anywhere, the rate comes from the stamps.

    Returns:
        topic → (values at every joint_states message (K_all, N, width), index of the
        first message not before the topic's first sample).
    """
    out: dict[str, tuple[Array, int]] = {}
    rates_of = {"inertial_parameters": "inertial_parameter_rates", "psi": "psi_rates"}
    ns = [int(m.header.stamp.sec) * 1_000_000_000 + int(m.header.stamp.nanosec)
          for _, m in joint]
    epoch = ns[0] if ns else 0
    stamps = [seconds_since(stamp, epoch) for stamp in ns]
    history = max(stamps[-1] - stamps[0], 0.0) + 1.0 if stamps else 1.0
    rules = TimelineRules(max_age=history, window=0.0, history=history)
    for topic, (_, axis, width) in BODY_TOPICS.items():
        items = [msg for _, msg in arrays.get(topic, ()) if hasattr(msg, "header")]
        if not items:
            continue
        reader = BodyVectorReader(topic, model.body_names, axis)
        series = StampedSeries((model.n_bodies, width), rules, topic)
        value_topic = topic in rates_of  # Θ or Ψ (else a rates-only topic)
        for msg in items:
            try:
                t, value, rate = reader.read(msg)
                if value_topic:
                    if value is None:
                        raise InvalidInputError(f"{topic}.position", "is empty (no value)")
                    series.add(seconds_since(t, epoch), value, rate)
                else:
                    if rate is None:
                        raise InvalidInputError(f"{topic}.velocity", "is empty (no rate)")
                    series.add(seconds_since(t, epoch), rate)
            except InvalidInputError as error:
                _count(skipped, f"{topic}: {error.argument} ({error.problem})"[:120])
        if not len(series):
            continue
        lookups = [series.at(t) for t in stamps]
        ahead = [lookup.status == AHEAD for lookup in lookups]
        first_k = ahead.index(False) if False in ahead else len(lookups)
        out[topic] = (np.array([lookup.value for lookup in lookups]), first_k)
        rates_topic = rates_of.get(topic, "")
        if value_topic and not any(hasattr(m, "header") for _, m in arrays.get(rates_topic, ())):
            # the rates of the stamped value topic (published or from its stamps) win over a
            # legacy rates topic, as in dynamics_node
            out[rates_of[topic]] = (np.array([lookup.rate for lookup in lookups]), first_k)
    return out


@dataclass(frozen=True)
class Observation:
    """The observer run over a recording.

    Attributes:
        kind: ``"generalized"`` or ``"classical"``.
        t: sample times (K,) [s].
        external_torque: r = τ̂_ext per sample (K, nv), model joint order [N·m, N].
        contacts: the detected contacts.
        theta_nominal: the Θ the classical observer (or a sample without Θ) used (N, 10).
    """

    kind: str
    t: Array
    external_torque: Array
    contacts: list[ContactEvent]
    theta_nominal: Array


def classical_theta(model: RobotModel, recording: ObserverRecording) -> Array:
    """Θ of the classical observer: Θ at the first sample if the bag has it, else the URDF's.

    The load known when the motion starts (what franka's ``set_load`` is given), frozen.
    """
    if recording.theta is not None:
        return np.array(recording.theta[0])
    return np.array(model.theta_nominal)


def observe(
    model: RobotModel, recording: ObserverRecording, config: ObserverConfig,
    detector: ContactDetector, friction: FrictionParameters | None = None,
    theta_nominal: npt.ArrayLike | None = None,
) -> Observation:
    """Run the observer and the detector over every sample of ``recording``.

    Args:
        model: the arm.
        recording: from :func:`read_observer_bag` (or built by hand).
        config: the observer settings (kind, gain, torque rule).
        detector: the contact detector (reset first).
        friction: subtracted from the measured effort; None = none.
        theta_nominal: Θ of the classical observer; default :func:`classical_theta`.
    """
    nominal = (classical_theta(model, recording) if theta_nominal is None
               else model.check_theta(theta_nominal))
    observer = MomentumObserver(model, config, theta_nominal=nominal)
    detector.reset()
    tau = recording.effort if friction is None else recording.effort - friction.torque(
        recording.qd)
    zero_psi = np.zeros((model.n_bodies, 12))
    residual = np.empty_like(recording.q)
    # the observer integrates on the node's clock (the stamps as float seconds) when known
    clock = recording.t if recording.stamps is None else recording.stamps
    for k in range(recording.t.size):
        theta = nominal if recording.theta is None else recording.theta[k]
        psi = zero_psi if recording.psi is None else recording.psi[k]
        r = observer.update(clock[k], recording.q[k], recording.qd[k], tau[k],
                            ObserverLoads(theta, psi))
        detector.update(recording.t[k], r)
        residual[k] = r
    return Observation(kind=config.kind, t=recording.t.copy(), external_torque=residual,
                       contacts=detector.events, theta_nominal=nominal)
