r"""Θ, Θ̇, Ψ, Ψ̇ as stamped named vectors: the sensor_msgs/JointState-shaped schema.

One message carries one quantity of every body at one stamp (the time the value refers
to): ``name[i]`` = ``"<body>/<parameter>"``, ``position`` = the value, ``velocity`` =
its rate (Θ and Θ̇ travel together), ``effort`` empty. The parameters are
:data:`PHI_LABELS` (eq. (7) order: ``m``, ``h1``…, ``I13``) for Θ and :data:`PSI_LABELS`
(``psi1``…``psi12``, eq. (27) layout) for Ψ; e.g. ``panda_link7/m``. Either field may
be empty (a rates-only message has ``position`` empty), not both. On input the names
may come in any order; every body × parameter must be there exactly once.

:class:`BodyVectorReader` reads any object with ``header.stamp`` (``sec``,
``nanosec``), ``name``, ``position`` and ``velocity`` (an rclpy message or a rosbags
one): the same reader for the nodes and for bags. Pure NumPy; no ROS.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from robot_tv_dynamics import limits
from robot_tv_dynamics.arrays import Array
from robot_tv_dynamics.exceptions import InvalidInputError

#: Entry names along the ``phi`` axis (eq. (7) order).
PHI_LABELS = ("m", "h1", "h2", "h3", "I11", "I22", "I33", "I12", "I23", "I13")
#: Entry names along the ``psi`` axis (eq. (27) layout).
PSI_LABELS = tuple(f"psi{i}" for i in range(1, 13))


def parameter_labels(axis: str) -> tuple[str, ...]:
    """The parameter names of ``axis`` (``"phi"``: Θ, ``"psi"``: Ψ).

    Raises:
        InvalidInputError: another axis.
    """
    if axis == "phi":
        return PHI_LABELS
    if axis == "psi":
        return PSI_LABELS
    raise InvalidInputError("axis", f'must be "phi" or "psi", got "{axis}"')


def body_vector_names(body_names: Sequence[str], axis: str) -> list[str]:
    """``"<body>/<parameter>"`` for every body (model order) × parameter (row-major)."""
    labels = parameter_labels(axis)
    return [f"{body}/{label}" for body in body_names for label in labels]


class BodyVectorReader:
    """Reads (stamp, value, rate) of one stamped body vector topic (module docstring)."""

    def __init__(self, topic: str, body_names: Sequence[str], axis: str) -> None:
        """Build the reader.

        Args:
            topic: the topic, for error messages.
            body_names: model body names, in Θ row order.
            axis: ``"phi"`` (Θ: bounds :data:`~.limits.THETA`, rates
                :data:`~.limits.THETA_RATE`) or ``"psi"`` (Ψ: :data:`~.limits.PSI`).
        """
        self.topic = topic
        self.body_names = list(body_names)
        self.width = len(parameter_labels(axis))
        self.names = body_vector_names(body_names, axis)
        self._index = {name: i for i, name in enumerate(self.names)}
        self.bounds = ((limits.THETA, limits.THETA_RATE) if axis == "phi"
                       else (limits.PSI, limits.PSI))
        self._cached: list[str] | None = None
        self._take: np.ndarray | None = None

    def _order(self, names: Sequence[str]) -> np.ndarray:
        names = list(names)
        if self._take is not None and names == self._cached:
            return self._take
        take = np.full(len(self.names), -1, dtype=np.intp)
        for position, name in enumerate(names):
            i = self._index.get(name)
            if i is None:
                raise InvalidInputError(
                    f"{self.topic}.name", f'"{name}" is not <body>/<parameter> of this model '
                    f"(bodies {self.body_names})")
            if take[i] >= 0:
                raise InvalidInputError(f"{self.topic}.name", f'"{name}" appears twice')
            take[i] = position
        if np.any(take < 0):
            missing = [self.names[i] for i in np.flatnonzero(take < 0)[:5]]
            raise InvalidInputError(
                f"{self.topic}.name", f"lacks {int(np.sum(take < 0))} entries, e.g. {missing}")
        self._cached, self._take = names, take
        return take

    def read(self, msg: Any) -> tuple[int, Array | None, Array | None]:
        """(stamp [ns], value (N, width) or None, rate (N, width) or None).

        The stamp is integer nanoseconds: a float of Unix seconds resolves only
        ~0.2 µs, which interpolation would turn into a value error; subtract an epoch
        (:func:`~robot_tv_dynamics.inputs.timeline.seconds_since`) before looking up.

        Raises:
            InvalidInputError: a zero or malformed stamp, unknown / duplicate / missing
                names, sizes that do not match ``name``, both fields empty, NaN/Inf or
                values beyond the bounds.
        """
        stamp = msg.header.stamp
        t = limits.check_stamp(int(stamp.sec), int(stamp.nanosec),
                               f"{self.topic}.header.stamp")
        if t == 0.0:
            raise InvalidInputError(f"{self.topic}.header.stamp",
                                    "is zero: the stamp says which joint sample Θ belongs to")
        take = self._order(msg.name)
        n = len(self.names)
        out: list[Array | None] = []
        for field, bound in zip(("position", "velocity"), self.bounds, strict=True):
            data = getattr(msg, field)
            if len(data) == 0:
                out.append(None)
                continue
            if len(data) != n:
                raise InvalidInputError(
                    f"{self.topic}.{field}", f"has {len(data)} entries for {n} names")
            values = np.asarray(data, dtype=np.float64)[take]
            if not np.isfinite(values).all():
                bad = self.names[int(np.flatnonzero(~np.isfinite(values))[0])]
                raise InvalidInputError(f"{self.topic}.{field}", f'non-finite value at "{bad}"')
            limits.check_bounded(values, bound, f"{self.topic}.{field}", self.names)
            out.append(values.reshape(len(self.body_names), self.width))
        if out[0] is None and out[1] is None:
            raise InvalidInputError(self.topic, "has neither position (value) nor velocity "
                                    "(rate)")
        return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec), out[0], out[1]
