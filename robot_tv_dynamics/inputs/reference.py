"""A reference trajectory's accelerations, looked up at a sample's time stamp.

When a controller publishes the trajectory it tracks (trajectory_msgs/JointTrajectory
with accelerations), q̈ need not be estimated from measured velocities: the
dynamics node takes it from the reference. A sample at time t is matched to the
reference by absolute time: point k is due at ``start + time_from_start[k]``, and
q̈(t) is interpolated linearly between the two points that bracket t. Outside
[first point, last point] (with a tolerance ``tolerance`` at both ends, where the end
point's value is held) the reference does not cover the sample, and the caller falls
back to filtered differentiation.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError
from robot_tv_dynamics.inertia import Array, check_finite


class ReferenceAccelerations:
    """Joint accelerations of a reference trajectory, in model joint order.

    Attributes:
        start: absolute time of ``time_from_start = 0`` [s].
        times: absolute times of the points, (K,), strictly increasing [s].
        accelerations: (K, nv) in model joint order [rad/s², m/s²]; columns of joints
            the reference does not name are zero and masked out by ``covered``.
        covered: (nv,) bool, the joints the reference names.
        tolerance: how far before the first / after the last point a sample is
            still matched (holding the end value) [s].
    """

    def __init__(
        self,
        model_joints: Sequence[str],
        joint_names: Sequence[str],
        start: float,
        time_from_start: npt.ArrayLike,
        accelerations: npt.ArrayLike,
        tolerance: float = 0.0,
    ) -> None:
        """Build the reference, mapping its joints into model order.

        Args:
            model_joints: the model's joint names, in model order.
            joint_names: the joints the trajectory names (its column order).
            start: absolute time of ``time_from_start = 0`` [s] (the header stamp).
            time_from_start: (K,) [s], strictly increasing, K ≥ 1.
            accelerations: (K, len(joint_names)) [rad/s², m/s²].
            tolerance: end tolerance [s], ≥ 0.

        Raises:
            UnknownNameError: a joint that is not in the model.
            InvalidInputError: duplicate joints, no points, wrong sizes, non-finite
                values, times not strictly increasing.
        """
        names = list(joint_names)
        if not names:
            raise InvalidInputError("joint_names", "is empty")
        if len(set(names)) != len(names):
            raise InvalidInputError("joint_names", f"has duplicates: {names}")
        index = {name: i for i, name in enumerate(model_joints)}
        columns = []
        for name in names:
            if name not in index:
                raise UnknownNameError("joint", name, list(model_joints))
            columns.append(index[name])
        offsets = check_finite(time_from_start, "time_from_start", (None,))
        if offsets.shape[0] == 0:
            raise InvalidInputError("points", "the trajectory has no point")
        if np.any(np.diff(offsets) <= 0.0):
            raise InvalidInputError("time_from_start", "must be strictly increasing")
        acc = check_finite(accelerations, "accelerations", (offsets.shape[0], len(names)))
        if not (np.isfinite(start) and np.isfinite(tolerance) and tolerance >= 0.0):
            raise InvalidInputError("start, tolerance", f"got {start}, {tolerance}")
        nv = len(model_joints)
        self.start = float(start)
        self.times = self.start + offsets
        self.accelerations = np.zeros((offsets.shape[0], nv))
        self.accelerations[:, columns] = acc
        self.covered = np.zeros(nv, dtype=bool)
        self.covered[columns] = True
        self.tolerance = float(tolerance)
        self._all = bool(self.covered.all())

    @property
    def covers_all_joints(self) -> bool:
        """Whether every model joint has a reference acceleration."""
        return self._all

    @property
    def end(self) -> float:
        """Absolute time of the last point [s]."""
        return float(self.times[-1])

    def at(self, t: float) -> Array | None:
        """q̈ of the reference at absolute time ``t``, or None if not covered.

        Args:
            t: sample time [s].

        Returns:
            (nv,) in model order (zeros at joints not ``covered``), linearly
            interpolated between the bracketing points; None when ``t`` lies outside
            [first − tolerance, last + tolerance].
        """
        times = self.times
        if t < times[0] - self.tolerance or t > times[-1] + self.tolerance:
            return None
        k = int(np.searchsorted(times, t, side="right"))
        if k == 0:
            return self.accelerations[0].copy()
        if k >= times.shape[0]:
            return self.accelerations[-1].copy()
        t0, t1 = times[k - 1], times[k]
        w = (t - t0) / (t1 - t0)
        return np.asarray((1.0 - w) * self.accelerations[k - 1] + w * self.accelerations[k])


#: How many received references a sample may take q̈ from (one-point references at the
#: simulator's 50 Hz: the last 10 s of them; a node lagging by more than a second at
#: start-up on a loaded machine had lost its samples' references at 50).
REFERENCE_HISTORY = 500


class ReferenceHistory:
    """The references received, newest last (the last :data:`REFERENCE_HISTORY`).

    A sample answered after a newer one arrived (a controller's one-point reference per
    tick, a late node) still finds the one that covers its stamp.
    """

    def __init__(self) -> None:
        """No reference yet."""
        self._references: collections.deque[ReferenceAccelerations] = collections.deque(
            maxlen=REFERENCE_HISTORY)

    def set(self, reference: ReferenceAccelerations | None) -> None:
        """Add ``reference`` as the newest; None forgets them all."""
        if reference is None:
            self._references.clear()
        else:
            self._references.append(reference)

    def awaited(self, t: float, window: float) -> bool:
        """Whether a sample stamped ``t`` should wait for the reference covering it.

        True while references stream (the newest one ends at most ``window`` before
        ``t``) but none covers ``t`` yet: a controller's one-point reference of the same
        tick may still be on its way (DDS orders nothing across topics). A reference that
        ended longer ago (a finished trajectory) is waited for by no sample.
        """
        references = self._references
        if not references:
            return False
        end = references[-1].end + references[-1].tolerance
        return end < t <= end + window

    def acceleration(self, t: float, estimate: Array) -> Array:
        """q̈ at stamp t: the newest covering reference's, joint by joint.

        ``estimate`` (the filtered derivative) where no reference covers t or a joint.
        """
        references = self._references
        # A sample after the newest reference's end is not covered (and costs one check).
        if not references or t > references[-1].end + references[-1].tolerance:
            return estimate
        for reference in reversed(references):
            qdd = reference.at(t)
            if qdd is not None:
                if reference.covers_all_joints:
                    return qdd
                return np.asarray(np.where(reference.covered, qdd, estimate))
        return estimate
