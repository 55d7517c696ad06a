"""The stamped Θ topics beside the legacy unstamped ones: what monitor, markers and estimator share.

Θ(t) travels stamped (sensor_msgs/JointState-shaped, :mod:`~robot_tv_dynamics.inputs.
body_vectors`) on ``inertial_parameters_stamped``; the Float64MultiArray topics of the
previous release (``inertial_parameters``, ``consistency``, ...) are still read and
written while the node's ``legacy_theta_topics`` parameter is true (the default of this
release, deprecated). This module holds what the nodes share about that transition:

- :func:`legacy_parameter`: the ``legacy_theta_topics`` parameter, worded for the node;
- :class:`DeprecationNotice`: one log line per legacy topic, the first time it is used;
- :class:`StampAxis`: message stamps → seconds since the node's first stamp (integer
  nanoseconds subtracted before the one rounding, as the stamped series wants);
- :func:`consistency_joint_state`: the monitor's table as a stamped JointState
  (``consistency_stamped``: ``<body>/<field>``, position = value);
- :func:`read_stamped_levels`: the ``level`` column back from such a message;
- :class:`BodyVectorOutput`, :class:`ConsistencyOutput`: publishers of those two
  shapes that serialize the hundred-odd names once, not per message
  (:class:`~robot_tv_dynamics.ros.joint_state_cdr.JointStateOutput`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from sensor_msgs.msg import JointState

from robot_tv_dynamics import limits
from robot_tv_dynamics.consistency.monitor import TABLE_FIELDS
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inputs.body_vectors import body_vector_names
from robot_tv_dynamics.inputs.timeline import seconds_since
from robot_tv_dynamics.ros.conversions import to_float_array
from robot_tv_dynamics.ros.joint_state_cdr import JointStateOutput
from robot_tv_dynamics.ros.parameters import START_UP, TOPICS_NOTE, ParameterSpec

#: The parameter's name, the same in every node (sim_node declares its own, publisher side).
LEGACY_PARAMETER = "legacy_theta_topics"


def legacy_parameter(topics: str) -> ParameterSpec:
    """The ``legacy_theta_topics`` parameter of a node; ``topics`` says what it switches."""
    return ParameterSpec(
        LEGACY_PARAMETER, True,
        f"also {topics}. Deprecated: the legacy unstamped topics and this parameter will be "
        "removed in the next release", runtime=START_UP, note=TOPICS_NOTE)


def consistency_names(body_names: Sequence[str]) -> list[str]:
    """``"<body>/<field>"`` for every body (model order) × field of the monitor's table."""
    return [f"{body}/{field}" for body in body_names for field in TABLE_FIELDS]


def consistency_joint_state(stamp: Time, body_names: Sequence[str],
                            table: np.ndarray) -> JointState:
    """The monitor's table (N, 8) at the stamp of the Θ it judged (``consistency_stamped``).

    ``name`` = ``<body>/<field>`` (fields ``mu, nu, epsilon, level, inf_mu, sup_nu, rate,
    time_to_crossing``), ``position`` = the values (``inf`` where the table has it: no
    predicted crossing), ``velocity`` and ``effort`` empty.

    Args:
        stamp: the judged Θ's ``header.stamp``, copied as it came.
        body_names: body names, in the table's row order.
        table: (N, 8), :data:`~robot_tv_dynamics.consistency.monitor.TABLE_FIELDS` order.
    """
    msg = JointState(name=consistency_names(body_names))
    msg.header.stamp = Time(sec=int(stamp.sec), nanosec=int(stamp.nanosec))
    msg.position = to_float_array(np.asarray(table, dtype=np.float64).ravel())
    return msg


class BodyVectorOutput:
    """A publisher of Θ / Θ̇ (``axis="phi"``) or Ψ / Ψ̇ (``"psi"``) in the stamped schema.

    The message :func:`~robot_tv_dynamics.ros.conversions.body_joint_state` builds
    (``name`` = ``<body>/<parameter>``, ``position`` = value, ``velocity`` = rate), sent
    as bytes whose names were laid out once.
    """

    def __init__(self, publisher: Any, body_names: Sequence[str], axis: str = "phi",
                 rates: bool = True) -> None:
        """``rates``: every message carries the rate in ``velocity`` (False: left empty)."""
        filled = ("position", "velocity") if rates else ("position",)
        self._output = JointStateOutput(publisher, body_vector_names(body_names, axis),
                                        filled=filled)

    def publish(self, stamp: Any, values: np.ndarray, rates: np.ndarray | None = None) -> None:
        """One message: ``values`` (N, width) and, for an output with rates, ``rates``."""
        self._output.publish(stamp, "", np.asarray(values, dtype=np.float64).ravel(),
                             None if rates is None else np.asarray(rates, np.float64).ravel())


class ConsistencyOutput:
    """A publisher of the monitor's table on ``consistency_stamped``.

    The message of :func:`consistency_joint_state`, sent as bytes whose names were laid
    out once.
    """

    def __init__(self, publisher: Any, body_names: Sequence[str]) -> None:
        """Messages for the bodies ``body_names``, in the table's row order."""
        self._output = JointStateOutput(publisher, consistency_names(body_names),
                                        filled=("position",))

    def publish(self, stamp: Any, table: np.ndarray) -> None:
        """The table (N, 8) at the judged Θ's stamp (copied as it came)."""
        self._output.publish(stamp, "", np.asarray(table, dtype=np.float64).ravel())


def read_stamped_levels(msg: Any, body_names: Sequence[str], topic: str) -> np.ndarray:
    """The ``level`` entries (model body order) of a ``consistency_stamped`` message.

    Only ``<body>/level`` is read, in any order among the names (the other fields may
    hold inf).

    Raises:
        InvalidInputError: a body's level missing or twice, ``position`` not as long as
            ``name``, a level that is not 0…3.
    """
    names = list(msg.name)
    if len(msg.position) != len(names):
        raise InvalidInputError(f"{topic}.position",
                                f"has {len(msg.position)} entries for {len(names)} names")
    index: dict[str, int] = {}
    for k, name in enumerate(names):
        if name.endswith("/level"):
            if name in index:
                raise InvalidInputError(f"{topic}.name", f'"{name}" appears twice')
            index[name] = k
    missing = [body for body in body_names if f"{body}/level" not in index]
    if missing:
        raise InvalidInputError(f"{topic}.name", f"has no level of the bodies {missing}")
    levels = np.array([float(msg.position[index[f"{body}/level"]]) for body in body_names])
    if not np.all(np.isin(levels, (0.0, 1.0, 2.0, 3.0))):
        raise InvalidInputError(f"{topic}.position",
                                f"levels must be 0..3, got {levels.tolist()}")
    return levels


class StampAxis:
    """Message stamps as seconds since the first stamp the node read (integer ns first)."""

    def __init__(self) -> None:
        """No epoch yet: the first stamp read becomes it."""
        self.epoch_ns: int | None = None

    def seconds(self, stamp: Any, argument: str) -> float:
        """``stamp`` (``sec``, ``nanosec``) in seconds since the epoch [s].

        Raises:
            InvalidInputError: a malformed stamp (:func:`~.limits.check_stamp`) or zero.
        """
        limits.check_stamp(int(stamp.sec), int(stamp.nanosec), argument)
        ns = int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)
        if ns == 0:
            raise InvalidInputError(argument, "is zero: a stamped topic needs the time the "
                                    "value refers to")
        if self.epoch_ns is None:
            self.epoch_ns = ns
        return seconds_since(ns, self.epoch_ns)


class DeprecationNotice:
    """Logs once per legacy topic that it is deprecated and what replaces it."""

    def __init__(self, logger: Any) -> None:
        """``logger``: the node's (``get_logger()``)."""
        self._logger = logger
        self._said: set[str] = set()

    def __call__(self, topic: str, replacement: str, direction: str = "read") -> None:
        """Say it the first time ``topic`` is used (later calls do nothing)."""
        if topic in self._said:
            return
        self._said.add(topic)
        self._logger.warning(
            f"{direction} {topic} (std_msgs/Float64MultiArray, no stamp): deprecated, use "
            f"{replacement} (sensor_msgs/JointState, stamped: docs/ros_interface.md, "
            f'"Stamped inertial parameters"); {LEGACY_PARAMETER} and the legacy topics '
            "will be removed in the next release")
