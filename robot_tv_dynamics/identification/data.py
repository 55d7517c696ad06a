r"""Measured joint data for identification: reading (rosbag2, CSV) and offline filtering.

Input is a sequence of (t, q, q̇, τ) samples, one column per model joint:

* a **rosbag2** (a single ``.mcap`` file, or an MCAP or sqlite3 bag folder) with
  ``sensor_msgs/msg/JointState`` messages carrying ``position``, ``effort`` and
  (optionally) ``velocity``; matched by joint name, extra names of locked joints are
  ignored. Times are the header stamps (the bag's receive time when a stamp is zero).
* a **CSV** file with a header row: ``time`` [s], and per joint ``<joint>.position``,
  ``<joint>.effort`` and optionally ``<joint>.velocity`` (SI units, radians).

Samples need not be uniform in time, but the time axis must not go backwards.
Samples with NaN/Inf in any used field are dropped and counted; repeated stamps keep
the first sample.

:func:`prepare` then makes the signals the regressor needs, offline and zero-phase:

1. resample onto a uniform grid (step = the median sample interval) by linear
   interpolation;
2. low-pass q and q̇ with a 4th-order Butterworth filter run forwards and backwards
   (``scipy.signal.sosfiltfilt``: zero phase, so no lag between q̈ and τ; effective
   order 8, −6 dB at the cut-off, default 5 Hz: 10× the highest harmonic of the default
   ``excite`` trajectory); without measured velocities q̇ is
   the central difference of the filtered q;
3. q̈ = central difference of the filtered q̇ (``numpy.gradient``, second order);
4. trim one cut-off period 1/f_c from both ends (the signal is extended by odd
   reflection over 3/f_c before filtering, so the start-up transient is gone by then).

The effort is interpolated onto the grid but **not** filtered for the fit: its noise is
white and enters the least squares unbiased, whereas low-passing τ would smear the
Coulomb steps at velocity reversals that the regressor (tanh of the filtered q̇) keeps
sharp (measured: held-out RMS 1.7× the noise on the Panda's joint 1 with a filtered τ,
1.03× without). The filtered effort is kept for plots only; prediction errors (RMS)
are always measured against the unfiltered effort.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.exceptions import IdentificationDataError, RecordingError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.inputs.efforts import EffortMap
from robot_tv_dynamics.model import RobotModel

#: JointState message type name in rosbag2 topics.
JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
#: Topic used when a bag has several JointState topics and none is named.
DEFAULT_TOPIC = "/joint_states"
#: Default cut-off of the zero-phase Butterworth filter [Hz].
DEFAULT_CUTOFF_HZ = 5.0
#: Order of the Butterworth filter (run twice by sosfiltfilt).
FILTER_ORDER = 4


@dataclass(frozen=True)
class JointSamples:
    """Raw measured samples, columns in the model's ``joint_names`` order.

    Attributes:
        source: where they came from (path), for messages.
        joint_names: the model's joints.
        t: sample times (K,), non-decreasing [s].
        q: positions (K, n) [rad or m].
        qd: velocities (K, n) [rad/s or m/s], or None when the data have none.
        tau: measured efforts (K, n) [N·m or N].
        dropped_nonfinite: samples dropped for NaN/Inf entries.
        dropped_duplicate: samples dropped for a repeated stamp.
        skipped_joints: joints of the data the model does not have (a gripper), skipped.
    """

    source: str
    joint_names: tuple[str, ...]
    t: Array
    q: Array
    qd: Array | None
    tau: Array
    dropped_nonfinite: int = 0
    dropped_duplicate: int = 0
    skipped_joints: tuple[str, ...] = ()

    @property
    def n_samples(self) -> int:
        """Number of samples K."""
        return int(self.t.size)


@dataclass(frozen=True)
class PreparedData:
    """Filtered signals on a uniform grid (see the module docstring).

    Attributes:
        t: grid times (K,) [s].
        q: filtered positions (K, n).
        qd: filtered velocities (K, n).
        qdd: accelerations from the filtered velocities (K, n).
        tau: filtered efforts (K, n), for plots.
        tau_measured: unfiltered efforts interpolated on the grid (K, n): the fit and
            the errors use these.
        rate: grid rate [Hz].
        cutoff: filter cut-off [Hz].
        notes: what was dropped or assumed, for the summary.
    """

    t: Array
    q: Array
    qd: Array
    qdd: Array
    tau: Array
    tau_measured: Array
    rate: float
    cutoff: float
    notes: tuple[str, ...] = field(default_factory=tuple)


def check_samples(
    source: str, joint_names: Sequence[str], t: npt.ArrayLike, q: npt.ArrayLike,
    qd: npt.ArrayLike | None, tau: npt.ArrayLike,
) -> JointSamples:
    """Validate raw arrays: shapes, time order; drop non-finite and repeated samples.

    Raises:
        IdentificationDataError: wrong shapes, a time axis going backwards (naming the
            sample), or no finite sample left.
    """
    names = tuple(joint_names)
    n = len(names)
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    arrays = {"position": np.asarray(q, dtype=np.float64),
              "effort": np.asarray(tau, dtype=np.float64)}
    if qd is not None:
        arrays["velocity"] = np.asarray(qd, dtype=np.float64)
    for key, array in arrays.items():
        if array.shape != (t.size, n):
            raise IdentificationDataError(
                source, f"{key} has shape {array.shape}, expected ({t.size}, {n}) "
                f"(samples × joints {list(names)})")
    if t.size == 0:
        raise IdentificationDataError(source, "has no samples")
    finite = np.isfinite(t)
    for array in arrays.values():
        finite &= np.all(np.isfinite(array), axis=1)
    dropped = int(t.size - finite.sum())
    if not finite.any():
        raise IdentificationDataError(source, f"all {t.size} samples contain NaN or Inf")
    keep = np.flatnonzero(finite)
    t = t[keep]
    steps = np.diff(t)
    if np.any(steps < 0.0):
        k = int(np.argmax(steps < 0.0)) + 1
        raise IdentificationDataError(
            source, f"the time axis goes backwards at sample {int(keep[k])}: "
            f"{t[k]:.9f} s after {t[k - 1]:.9f} s")
    unique = np.concatenate(([True], steps > 0.0))
    duplicate = int(t.size - unique.sum())
    rows = keep[unique]
    return JointSamples(
        source, names, t[unique], arrays["position"][rows],
        arrays["velocity"][rows] if "velocity" in arrays else None, arrays["effort"][rows],
        dropped, duplicate)


def unknown_joints(model: RobotModel, names: Sequence[str]) -> tuple[str, ...]:
    """The data's joints that are neither model joints nor locked ones (a gripper)."""
    known = set(model.joint_names) | set(model.locked_joints)
    return tuple(name for name in names if name not in known)


def _model_columns(
    source: str, model: RobotModel, names: Sequence[str]
) -> npt.NDArray[np.intp]:
    """Index of each model joint in the data's joint list (joints the model lacks skipped).

    Raises:
        IdentificationDataError: model joints missing (naming the data's joints the model
            does not have, which a renamed joint would be).
    """
    missing = [name for name in model.joint_names if name not in names]
    if missing:
        unknown = unknown_joints(model, names)
        raise IdentificationDataError(
            source, f"joints {missing} of the model are missing (the data have {list(names)}"
            + (f"; not in the URDF: {unknown}" if unknown else "") + ")")
    return np.array([list(names).index(name) for name in model.joint_names], dtype=np.intp)


# ---------------------------------------------------------------------- rosbag2
def read_bag(
    path: str | Path, model: RobotModel, topic: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> JointSamples:
    """Read JointState samples from a rosbag2 (``.mcap`` file, MCAP or sqlite3 folder).

    Args:
        path: the bag.
        model: the arm (joint names; locked joints may appear in the messages).
        topic: the JointState topic; None = the only one, else ``/joint_states``.
        progress: called with the fraction of messages read.

    Raises:
        IdentificationDataError: unreadable bag, no JointState topic, messages without
            effort or position, joints missing or unknown, time going backwards.
    """
    source = str(path)
    rows_t: list[float] = []
    rows_q: list[Sequence[float]] = []
    rows_qd: list[Sequence[float]] = []
    rows_tau: list[Sequence[float]] = []
    names: list[str] | None = None
    with_velocity = True
    try:
        with open_bag(path) as bag:
            chosen = bag.choose_topic(JOINT_STATE_TYPE, topic, default=DEFAULT_TOPIC)
            total = max(1, bag.counts.get(chosen, 0))
            for k, (_, log_time, msg) in enumerate(bag.messages([chosen])):
                these = [str(name) for name in msg.name]
                if names is None:
                    names = these
                elif these != names:
                    raise IdentificationDataError(
                        source, f"message {k} on {chosen} names joints {these}, the first "
                        f"named {names} (reordered or changing joint sets are not supported)")
                size = len(names)
                if len(msg.effort) != size:
                    raise IdentificationDataError(
                        source, f"message {k} on {chosen} has {len(msg.effort)} effort values "
                        f"for {size} joints: identification needs measured efforts"
                        + (" (the bag has no effort)" if len(msg.effort) == 0 else ""))
                if len(msg.position) != size:
                    raise IdentificationDataError(
                        source, f"message {k} on {chosen} has {len(msg.position)} positions "
                        f"for {size} joints")
                stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
                rows_t.append(float(stamp) if stamp > 0 else 1e-9 * log_time)
                rows_q.append(msg.position)
                rows_tau.append(msg.effort)
                if with_velocity and len(msg.velocity) == size:
                    rows_qd.append(msg.velocity)
                else:
                    with_velocity = False
                if progress is not None and k % 500 == 0:
                    progress(k / total)
    except RecordingError as error:
        raise IdentificationDataError(source, error.problem) from None
    if progress is not None:
        progress(1.0)
    if names is None:
        raise IdentificationDataError(source, "the JointState topic has no message")
    columns = _model_columns(source, model, names)
    q = np.asarray(rows_q, dtype=np.float64)[:, columns]
    tau = np.asarray(rows_tau, dtype=np.float64)[:, columns]
    qd = np.asarray(rows_qd, dtype=np.float64)[:, columns] if with_velocity else None
    samples = check_samples(source, model.joint_names, np.asarray(rows_t), q, qd, tau)
    return replace(samples, skipped_joints=unknown_joints(model, names))


# ---------------------------------------------------------------------- CSV
def read_csv(path: str | Path, model: RobotModel) -> JointSamples:
    """Read a CSV: ``time``, ``<joint>.position``, ``<joint>.effort``[, ``<joint>.velocity``].

    Empty fields and ``nan`` count as non-finite (the sample is dropped). Columns of
    locked joints are ignored; velocities are used only if given for every joint.

    Raises:
        IdentificationDataError: unreadable file, no ``time`` column, joints missing or
            unknown, non-numeric fields, time going backwards.
    """
    source = str(path)
    try:
        with open(path, encoding="utf-8") as stream:
            header = [name.strip() for name in stream.readline().strip().split(",")]
            values = np.genfromtxt(stream, delimiter=",", dtype=np.float64, ndmin=2)
    except OSError as error:
        raise IdentificationDataError(source, f"cannot be read ({error.strerror or error})") \
            from None
    except ValueError as error:
        raise IdentificationDataError(source, f"is not a numeric CSV ({error})") from None
    if "time" not in header:
        raise IdentificationDataError(source, f'has no "time" column; header: {header}')
    if values.size and values.shape[1] != len(header):
        raise IdentificationDataError(
            source, f"rows have {values.shape[1]} fields, the header {len(header)}")
    kinds = ("position", "velocity", "effort")
    joints: dict[str, dict[str, int]] = {}
    for column, name in enumerate(header):
        if name == "time":
            continue
        joint, _, kind = name.rpartition(".")
        if kind not in kinds or not joint:
            raise IdentificationDataError(
                source, f'column "{name}" is not time or <joint>.position/velocity/effort')
        joints.setdefault(joint, {})[kind] = column
    names = list(joints)
    columns = _model_columns(source, model, names)
    model_joints = [names[i] for i in columns]
    for joint in model_joints:
        for kind in ("position", "effort"):
            if kind not in joints[joint]:
                raise IdentificationDataError(source, f'no column "{joint}.{kind}"')
    values = values.reshape(-1, len(header))

    def block(kind: str) -> Array:
        return values[:, [joints[joint][kind] for joint in model_joints]]

    with_velocity = all("velocity" in joints[joint] for joint in model_joints)
    samples = check_samples(source, model.joint_names, values[:, header.index("time")],
                            block("position"), block("velocity") if with_velocity else None,
                            block("effort"))
    return replace(samples, skipped_joints=unknown_joints(model, names))


def load_samples(
    path: str | Path, model: RobotModel, topic: str | None = None,
    progress: Callable[[float], None] | None = None, efforts: EffortMap | None = None,
) -> JointSamples:
    """Read a rosbag2 (folder, ``.mcap``, ``.db3``) or a ``.csv`` file (module docstring).

    Args:
        path: the data.
        model: the arm.
        topic: the JointState topic of a bag (None: the only one, else ``/joint_states``).
        progress: called with the fraction of messages read.
        efforts: what the data's effort means (per joint in model order); None: joint
            torques.

    Raises:
        IdentificationDataError: unreadable or unusable data.
        InvalidInputError: an effort map with a list of the wrong length.
    """
    path = Path(path)
    if path.suffix.lower() == ".csv":
        if topic is not None:
            raise IdentificationDataError(str(path), "--topic only applies to rosbag2 input")
        samples = read_csv(path, model)
    else:
        samples = read_bag(path, model, topic, progress)
    if efforts is None:
        return samples
    tau = efforts.check_joints(model.joint_names).torque(samples.tau)
    return replace(samples, tau=tau)


# ---------------------------------------------------------------------- filtering
def prepare(samples: JointSamples, cutoff: float = DEFAULT_CUTOFF_HZ) -> PreparedData:
    """Uniform grid, zero-phase Butterworth low-pass, q̈ by central differences.

    Args:
        samples: the raw samples.
        cutoff: filter cut-off f_c [Hz], below the Nyquist frequency of the grid.

    Returns:
        The filtered signals, trimmed by 1/f_c at both ends.

    Raises:
        IdentificationDataError: fewer than two samples, a cut-off at or above Nyquist,
            too short a record for the filter.
    """
    import scipy.signal

    source = samples.source
    notes: list[str] = []
    if samples.dropped_nonfinite:
        notes.append(f"dropped {samples.dropped_nonfinite} samples with NaN/Inf")
    if samples.dropped_duplicate:
        notes.append(f"dropped {samples.dropped_duplicate} samples with a repeated stamp")
    if samples.skipped_joints:
        notes.append(f"skipped joints the model does not have: {list(samples.skipped_joints)}")
    if samples.n_samples < 2:
        raise IdentificationDataError(source, f"has {samples.n_samples} usable sample(s)")
    steps = np.diff(samples.t)
    dt = float(np.median(steps))
    rate = 1.0 / dt
    if not (math.isfinite(cutoff) and 0.0 < cutoff < 0.5 * rate):
        raise IdentificationDataError(
            source, f"filter cut-off {cutoff:g} Hz must be in (0, {0.5 * rate:g}) Hz (the "
            f"Nyquist frequency of the {rate:g} Hz samples)")
    gap = float(steps.max())
    if gap > 10.0 * dt:
        notes.append(f"largest gap {gap:.3g} s is {gap / dt:.0f}× the median step "
                     "(interpolated linearly)")
    count = int(math.floor((samples.t[-1] - samples.t[0]) / dt + 1e-9)) + 1
    t = samples.t[0] + dt * np.arange(count)

    def grid(values: Array) -> Array:
        return np.column_stack([np.interp(t, samples.t, values[:, i])
                                for i in range(values.shape[1])])

    q, tau = grid(samples.q), grid(samples.tau)
    sos = scipy.signal.butter(FILTER_ORDER, cutoff, btype="low", fs=rate, output="sos")
    trim = int(math.ceil(rate / cutoff))
    if count < 2 * trim + 3 * (2 * FILTER_ORDER + 1):
        raise IdentificationDataError(
            source, f"{count} samples at {rate:g} Hz are too few for a {cutoff:g} Hz "
            f"filter (need more than {2 * trim + 3 * (2 * FILTER_ORDER + 1)})")

    # odd extension over three filter time scales: the default (15 samples) leaves a
    # start-up transient much longer than the trim at high sample rates
    padlen = min(count - 1, 3 * trim)

    def smooth(values: Array) -> Array:
        return np.asarray(scipy.signal.sosfiltfilt(sos, values, axis=0, padlen=padlen))

    q_f = smooth(q)
    if samples.qd is not None:
        qd_f = smooth(grid(samples.qd))
    else:
        qd_f = np.gradient(q_f, dt, axis=0)
        notes.append("no measured velocities: q̇ from the filtered positions")
    qdd = np.gradient(qd_f, dt, axis=0)
    window = slice(trim, count - trim)
    return PreparedData(
        t=t[window], q=q_f[window], qd=qd_f[window], qdd=qdd[window],
        tau=smooth(tau)[window], tau_measured=tau[window], rate=rate, cutoff=float(cutoff),
        notes=tuple(notes))
