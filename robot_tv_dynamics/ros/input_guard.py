"""Rejecting bad input: a throttled log line per topic and a ``"<node>: input"`` status.

:class:`InputGuard` counts accepted and rejected messages per topic and publishes them
on ``/diagnostics``; :func:`guarded` keeps an unexpected error in a callback from
killing the node.

Every status a node publishes goes out through its guard, which names it after the
node's full name (:func:`full_status_name`): ``"/ur/dynamics_node: input"``,
``"/ur/monitor_node: wrist_3_link"``. Two arms under two namespaces (or two nodes of one
kind under two names) share ``/diagnostics`` without colliding.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node

from robot_tv_dynamics.ros.conversions import make_status


# ---------------------------------------------------------------------------- names
def full_status_name(node_name: str, executable: str, full_name: str, name: str) -> str:
    """``name`` on ``/diagnostics``: ``"<full node name>: <task>"``.

    A leading ``"<node name>: "`` or ``"<executable>: "`` (the names the package's
    statuses are built with, e.g. ``"dynamics_node: contact"``) is replaced by the full
    name; any other name (a body, ``"<status_prefix>: <body>"``) is prefixed with it.

    Args:
        node_name: the node's name (``get_name()``, after a ``__node`` remap).
        executable: the executable's default node name (``dynamics_node``).
        full_name: ``get_fully_qualified_name()``, e.g. ``"/ur/dynamics_node"``.
        name: the status name as the node built it.
    """
    for own in (f"{node_name}: ", f"{executable}: "):
        if name.startswith(own):
            return f"{full_name}: {name[len(own):]}"
    return f"{full_name}: {name}"


# ---------------------------------------------------------------------------- input guard
class InputGuard:
    """Rejects bad input: one throttled log line per topic, and a diagnostics entry.

    The DiagnosticStatus ``"<node name>: input"`` is WARN while a message was rejected
    during the last ``period`` seconds (message: the latest topic and reason; values:
    accepted/rejected counts and the last reason per topic) and OK otherwise. It is
    published by :meth:`publish` (the node's timer) and right away at a rejection
    (at most every 0.1 s unless the reason is new). Thread-safe (the dynamics node
    reports planned trajectories from a background thread).
    """

    def __init__(
        self, node: Node, publisher: Any, hardware_id: str, throttle: float, period: float,
        executable: str = "",
    ) -> None:
        """Build the guard.

        Args:
            node: the node (its logger and name).
            publisher: the ``/diagnostics`` publisher.
            hardware_id: the robot name for the DiagnosticStatus.
            throttle: log throttle per topic [s].
            period: how long a rejection keeps the status at WARN [s].
            executable: the executable's default node name (status names built with it
                are renamed after the node's full name); "" = the node's name.
        """
        self._node = node
        self._publisher = publisher
        self.hardware_id = hardware_id
        #: log throttle per topic [s] (the node's log_throttle, also when set at runtime)
        self.throttle = throttle
        #: how long a rejection keeps the status at WARN [s]
        self.period = period
        self.name = f"{node.get_name()}: input"
        self._names = (node.get_name(), executable or node.get_name(),
                       node.get_fully_qualified_name())
        self.accepted: dict[str, int] = {}
        self.rejected: dict[str, int] = {}
        self.reasons: dict[str, str] = {}
        self._loggers: dict[str, Any] = {}
        self._logged: dict[str, float] = {}  # topic → monotonic time of its last log line
        self._last_topic = ""
        self._last_time = -math.inf
        self._last_publish = -math.inf
        self._last_published_reason = ""
        self._lock = threading.RLock()

    def accept(self, topic: str) -> None:
        """Count an accepted message."""
        with self._lock:
            self.accepted[topic] = self.accepted.get(topic, 0) + 1

    def reject(self, topic: str, error: BaseException | str) -> None:
        """Reject a message: count it, log (throttled per topic), publish diagnostics."""
        with self._lock:
            self._reject(topic, str(error))

    def _reject(self, topic: str, reason: str) -> None:
        self.rejected[topic] = self.rejected.get(topic, 0) + 1
        self.reasons[topic] = reason
        self._last_topic = topic
        now = time.monotonic()
        self._last_time = now
        logger = self._loggers.get(topic)
        if logger is None:
            logger = self._loggers[topic] = self._node.get_logger().get_child(
                topic.strip("/").replace("/", "."))
        # throttled here, per topic: rclpy's throttle_duration_sec cannot change between
        # calls of one call site, and log_throttle can be set at runtime
        if now - self._logged.get(topic, -math.inf) >= self.throttle:
            self._logged[topic] = now
            logger.warning(
                f"rejected a message on {topic}: {reason} (last good state kept; "
                f"{self.rejected[topic]} rejected so far)")
        text = f"{topic}: {reason}"
        if text != self._last_published_reason or now - self._last_publish >= 0.1:
            self.publish()

    def status(self) -> Any:
        """The DiagnosticStatus of the inputs now."""
        with self._lock:
            return self._status()

    def _status(self) -> Any:
        now = time.monotonic()
        values: list[tuple[str, object]] = []
        for topic in sorted(set(self.accepted) | set(self.rejected)):
            values.append((f"{topic} accepted", self.accepted.get(topic, 0)))
            values.append((f"{topic} rejected", self.rejected.get(topic, 0)))
            if topic in self.reasons:
                values.append((f"{topic} last rejection", self.reasons[topic]))
        if now - self._last_time <= self.period:
            level = 1
            message = f"rejected {self._last_topic}: {self.reasons[self._last_topic]}"
        else:
            level = 0
            message = "inputs accepted" if not self.rejected else (
                f"inputs accepted (last rejection {now - self._last_time:.1f} s ago on "
                f"{self._last_topic}: {self.reasons[self._last_topic]})")
        return make_status(self.name, level, message, self.hardware_id, values)

    def publish(self, extra: Sequence[Any] = ()) -> None:
        """Publish a DiagnosticArray with the input status (and ``extra`` statuses)."""
        with self._lock:
            self._publish(extra)

    def _publish(self, extra: Sequence[Any]) -> None:
        status = self._status()
        array = DiagnosticArray()
        array.header.stamp = self._node.get_clock().now().to_msg()
        array.status = [*extra, status]
        for entry in array.status:
            entry.name = full_status_name(*self._names, entry.name)
        self._publisher.publish(array)
        self._last_publish = time.monotonic()
        if self._last_topic:
            self._last_published_reason = f"{self._last_topic}: {self.reasons[self._last_topic]}"


def guarded(topic: str) -> Callable[[Callable[[Any, Any], None]], Callable[[Any, Any], None]]:
    """Decorate a subscription callback so that no exception can stop the node.

    The callbacks reject bad input themselves (the package's errors); anything else
    escaping a callback (a bug, an rclpy error) is rejected the same way, with the
    exception type in the reason, instead of unwinding ``spin``. The node must have an
    :class:`InputGuard` as ``self._guard``.
    """

    def decorate(method: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
        @functools.wraps(method)
        def callback(self: Any, msg: Any) -> None:
            try:
                method(self, msg)
            except Exception as error:
                if not rclpy.ok():  # a callback racing with shutdown: nothing to report
                    return
                self._guard.reject(topic, f"internal error ({type(error).__name__}: {error})")

        return callback

    return decorate
