"""The (N, width) body array of a std_msgs/Float64MultiArray: Θ, Θ̇, Ψ, Ψ̇ (legacy topics).

The one reader of the layout, for the nodes (``robot_tv_dynamics.ros.conversions``
re-exports it) and for the offline replay of a bag (``observer/replay.py``): it reads
any object shaped like the message (``layout.dim[i].label/size/stride``,
``layout.data_offset``, ``data``), an rclpy message or a rosbags-deserialized one, so the
core never imports a message type.

**Layout.** One ``MultiArrayDimension`` per axis, row-major (``dim[0].stride`` = total
size, ``dim[1].stride`` = row length; strides of 0 are read as "not filled in"), labels
``"<axis>:<name>,<name>,..."`` whose names are optional: the axes must be ``body`` then
``phi`` (10 entries) or ``psi`` (12); ``body`` names, when given, may be in any order
(rows are permuted into model order). A flat array without layout (``dim`` empty) of
exactly N·width values in model row order is also accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from robot_tv_dynamics import limits
from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError


def dim_label(axis: str, names: Sequence[str] | None = None) -> str:
    """``"axis"`` or ``"axis:name,name,..."`` (see the module docstring)."""
    return axis if not names else axis + ":" + ",".join(names)


def parse_dim_label(label: str) -> tuple[str, list[str] | None]:
    """Inverse of :func:`dim_label`: (axis, names or None)."""
    axis, sep, rest = label.partition(":")
    if not sep:
        return axis.strip(), None
    return axis.strip(), [name.strip() for name in rest.split(",")]


def _float_data(data: Any) -> np.ndarray:
    """The message's ``data`` as float64, without a copy when it is a float64 buffer."""
    try:
        return np.frombuffer(data, dtype=np.float64)
    except (TypeError, ValueError):  # a list, or a buffer of another type
        return np.asarray(data, dtype=np.float64).ravel()


class BodyArrayReader:
    """Reads an (N, width) body array (Θ, Θ̇, Ψ, Ψ̇) from a Float64MultiArray-shaped message."""

    def __init__(self, topic: str, body_names: Sequence[str], axis: str, width: int,
                 bound: float | None = None) -> None:
        """Build the reader.

        Args:
            topic: topic name, used in error messages.
            body_names: model body names, in Θ row order.
            axis: label of the second axis (``"phi"`` or ``"psi"``).
            width: its size (10 or 12).
            bound: largest |entry| accepted (a constant of
                :mod:`robot_tv_dynamics.limits`); None: :data:`~.limits.THETA`
                for ``phi``, :data:`~.limits.PSI` for ``psi``.
        """
        self.topic = topic
        self.bound = bound if bound is not None else (
            limits.THETA if axis == "phi" else limits.PSI)
        self.body_names = list(body_names)
        self.axis = axis
        self.width = width
        self._label: str | None = None
        self._rows: np.ndarray | None = None

    def _row_order(self, label: str) -> np.ndarray | None:
        if label == self._label:
            return self._rows
        axis, names = parse_dim_label(label)
        rows = None
        if names is not None:
            if len(names) != len(self.body_names) or len(set(names)) != len(names):
                raise InvalidInputError(
                    f"{self.topic}.layout.dim[0].label",
                    f"names {len(names)} bodies (duplicates?), the model has "
                    f"{len(self.body_names)}: {self.body_names}")
            index = {name: i for i, name in enumerate(self.body_names)}
            for name in names:
                if name not in index:
                    raise UnknownNameError("body", name, self.body_names)
            order = np.array([names.index(b) for b in self.body_names], dtype=np.intp)
            rows = None if np.array_equal(order, np.arange(len(names))) else order
        self._label, self._rows = label, rows
        return rows

    def _check_layout(self, dims: Sequence[Any]) -> np.ndarray | None:
        """Row order of a labelled layout (None: model order).

        Raises:
            InvalidInputError: wrong axes, sizes or strides.
        """
        n, w, topic = len(self.body_names), self.width, self.topic
        if len(dims) != 2:
            raise InvalidInputError(
                f"{topic}.layout", f"expected 2 dimensions (body, {self.axis}), got {len(dims)}")
        axis0 = parse_dim_label(dims[0].label)[0]
        axis1 = parse_dim_label(dims[1].label)[0]
        if axis0 != "body" or axis1 != self.axis:
            raise InvalidInputError(
                f"{topic}.layout", f'dimension labels must be "body" x "{self.axis}", got '
                f'"{axis0}" x "{axis1}"')
        if dims[0].size != n or dims[1].size != w:
            raise InvalidInputError(
                f"{topic}.layout",
                f"expected sizes {n} x {w}, got {dims[0].size} x {dims[1].size}")
        if dims[0].stride not in (0, n * w) or dims[1].stride not in (0, w):
            raise InvalidInputError(
                f"{topic}.layout", f"strides must be {n * w}, {w} (row-major), got "
                f"{dims[0].stride}, {dims[1].stride}")
        return self._row_order(dims[0].label)

    def read(self, msg: Any) -> np.ndarray:
        """The array, (N, width) in model row order (a new array).

        Raises:
            InvalidInputError: wrong layout (axes, sizes, strides, offset), wrong data
                length, NaN/Inf, an entry beyond :attr:`bound`.
            UnknownNameError: a body name in the label that the model does not have.
        """
        n, w, topic = len(self.body_names), self.width, self.topic
        dims = list(msg.layout.dim)
        offset = int(msg.layout.data_offset)
        rows = None
        if not dims:
            if offset != 0:
                raise InvalidInputError(f"{topic}.layout", "data_offset without dimensions")
        else:
            rows = self._check_layout(dims)
        data = _float_data(msg.data)
        if data.size != offset + n * w:
            raise InvalidInputError(
                f"{topic}.data", f"has {data.size} values, expected {offset + n * w} "
                f"({n} bodies x {w}" + (f" after offset {offset})" if offset else ")"))
        values = data[offset:].reshape(n, w)
        if not np.isfinite(values).all():
            l, k = np.argwhere(~np.isfinite(values))[0]
            body = self.body_names[int(rows[l]) if rows is not None else int(l)]
            raise InvalidInputError(f"{topic}.data", f'non-finite value at body "{body}", '
                                    f"entry {int(k)}")
        out = values[rows] if rows is not None else values.copy()
        limits.check_bounded(out, self.bound, f"{topic}.data", self.body_names)
        return out
