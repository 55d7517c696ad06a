"""Replay a bag's topics live, with ``/clock``: the nodes on a recorded arm.

:func:`play` publishes every topic of a rosbag2 recording (read by
:mod:`robot_tv_dynamics.bags`, the package's one bag reader; no rosbag2 needed) at its
log time, scaled by ``rate``, the serialized messages as they were recorded, and
``/clock`` (rosgraph_msgs/Clock) at the log time of each message. Nodes started with
``use_sim_time:=true`` then run on the bag's time: their timers, their diagnostics'
stamps, and the samples' own stamps agree. Topics can be renamed (``remaps``, as
``ros2 bag play --remap``). A topic recorded from a transient-local publisher
(``robot_description``, ``payload``) is published latched; every other one reliable,
depth 1000 (a reader that keeps up receives every message).

DDS delivers a message only to the readers matched at the moment it is written, on
both sides: the player waits until the wait topic has its readers (``wait_for``), then
``delay`` more for those readers to match its writers in turn (a writer can see a reader
before the reader sees it; a best-effort reader, as the nodes' joint_states readers,
drops what comes before). At the end it waits for the reliable readers' acknowledgments
and keeps its writers ``linger`` more before destroying them: a best-effort reader
acknowledges nothing, and a writer destroyed at once races its own removal at the
reader, which then discards the last messages still being received.

The command line is ``robot-tv-dynamics play BAG [--rate R] [--remap A:=B]``
(:mod:`robot_tv_dynamics.cli.play`); with a ROS install, ``ros2 bag play --clock BAG``
does the same.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rclpy
from builtin_interfaces.msg import Time
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.ros import qos

#: Depth of the replayed (volatile) topics: a burst is queued, not dropped.
REPLAY_DEPTH = 1000
#: Longest wait for the reliable readers' acknowledgments of the last messages [s].
ACK_TIMEOUT = 10.0
REPLAY_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=REPLAY_DEPTH,
                        reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE)


@dataclass(frozen=True)
class PlayOptions:
    """How a bag is replayed.

    Attributes:
        rate: bag seconds per wall-clock second (2 = twice as fast).
        remaps: bag topic → published topic.
        delay: wall-clock seconds between the readers' wait and the first message (for
            the readers to match the player's writers in turn) [s].
        wait_for: publish nothing until ``wait_topic`` has this many subscribers (0: do
            not wait), e.g. the nodes' joint_states readers.
        wait_topic: the published topic (after the remaps) whose subscribers count.
        wait_timeout: longest wait for them [s].
        linger: wall-clock seconds the writers stay after the last message (for the
            best-effort readers to take it in) [s].
    """

    rate: float = 1.0
    remaps: Mapping[str, str] = field(default_factory=dict)
    delay: float = 1.0
    wait_for: int = 0
    wait_topic: str = ""
    wait_timeout: float = 30.0
    linger: float = 1.0

    def __post_init__(self) -> None:
        """Check the values.

        Raises:
            InvalidInputError: a rate that is not finite and > 0; a negative delay,
                linger, wait count or wait timeout.
        """
        if not (0.0 < self.rate < float("inf")):
            raise InvalidInputError("--rate", f"must be > 0, got {self.rate}")
        for name, value in (("--delay", self.delay), ("--linger", self.linger),
                            ("--wait-for", self.wait_for),
                            ("wait_timeout", self.wait_timeout)):
            if not value >= 0.0:
                raise InvalidInputError(name, f"must be >= 0, got {value}")


def parse_remap(text: str) -> tuple[str, str]:
    """``"A:=B"`` → ``(A, B)`` (``--remap``).

    Raises:
        InvalidInputError: not ``FROM:=TO`` with both names given.
    """
    old, sep, new = text.partition(":=")
    if not sep or not old.strip() or not new.strip():
        raise InvalidInputError("--remap", f'"{text}" is not FROM:=TO')
    return old.strip(), new.strip()


def message_class(msgtype: str) -> Any:
    """The rclpy message class of ``pkg/msg/Name`` (None when this install lacks it)."""
    package, _, name = msgtype.replace("/msg/", "/").partition("/")
    try:
        return getattr(importlib.import_module(f"{package}.msg"), name)
    except (ImportError, AttributeError):
        return None


def stamp(ns: int) -> Time:
    """Integer nanoseconds as builtin_interfaces/Time."""
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def play(path: str | Path, options: PlayOptions,
         say: Callable[[str], None] = print) -> dict[str, int]:
    """Publish the bag's topics and ``/clock`` at the bag's pace; the counts per topic.

    Raises:
        RecordingError: the bag cannot be read.
        InvalidInputError: ``wait_topic`` is not a published topic, or it has fewer than
            ``wait_for`` subscribers after ``wait_timeout``.
    """
    context = rclpy.Context()
    rclpy.init(args=[], context=context)  # not sys.argv: its --remap is ours, not rcl's
    node = rclpy.create_node("robot_tv_dynamics_play", context=context)
    try:
        with open_bag(path) as bag:
            publishers, names = _publishers(node, bag, options, say)
            clock = node.create_publisher(Clock, "/clock", 10)
            # the bag's first time before anything: a node on /clock then judges the first
            # samples' stamps against it, not against time 0
            clock.publish(Clock(clock=stamp(bag.start_ns)))
            _wait(node, publishers, options, say)
            clock.publish(Clock(clock=stamp(bag.start_ns)))
            counts = _replay(bag, publishers, clock, options.rate)
            _settle([*publishers.values(), clock], options.linger, say)
        for topic, count in counts.items():
            say(f"play: {count} messages on {names[topic]}")
        return {names[topic]: count for topic, count in counts.items()}
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def _publishers(node: Any, bag: Any, options: PlayOptions, say: Callable[[str], None]
                ) -> tuple[dict[str, Any], dict[str, str]]:
    """A publisher per bag topic whose type this install has (the others are named)."""
    publishers, names = {}, {}
    remaps = {bag.resolve(old) or old: new for old, new in options.remaps.items()}
    for topic, msgtype in sorted(bag.topics.items()):
        kind = message_class(msgtype)
        if kind is None:
            say(f"play: {topic} ({msgtype}) is not replayed: this install has no {msgtype}")
            continue
        names[topic] = remaps.get(topic, topic)
        profile = qos.LATCHED_QOS if bag.latched(topic) else REPLAY_QOS
        publishers[topic] = node.create_publisher(kind, names[topic], profile)
    return publishers, names


def _wait(node: Any, publishers: dict[str, Any], options: PlayOptions,
          say: Callable[[str], None]) -> None:
    """The start delay, and the wait for ``wait_for`` subscribers of ``wait_topic``."""
    if options.wait_for > 0:
        chosen = [p for p in publishers.values() if p.topic_name == options.wait_topic]
        if not chosen:
            raise InvalidInputError("--wait-topic", f'"{options.wait_topic}" is not a '
                                    "published topic")
        deadline = time.monotonic() + options.wait_timeout
        while (chosen[0].get_subscription_count() < options.wait_for
               and time.monotonic() < deadline):
            time.sleep(0.02)
        count = chosen[0].get_subscription_count()
        if count < options.wait_for:
            raise InvalidInputError("--wait-for", (
                f"{options.wait_topic} has {count} subscriber(s) after "
                f"{options.wait_timeout:g} s, not {options.wait_for}: nothing played"))
        say(f"play: {count} subscriber(s) on {options.wait_topic}")
    time.sleep(options.delay)


def _settle(publishers: list[Any], linger: float, say: Callable[[str], None]) -> None:
    """The reliable readers' acknowledgments of everything sent, then ``linger`` [s].

    A best-effort reader acknowledges nothing (``wait_for_all_acked`` returns at once for
    it): the writers stay alive ``linger`` more, so that the reader takes in the last
    messages before it learns that their writer is gone.
    """
    deadline = time.monotonic() + ACK_TIMEOUT
    for publisher in publishers:
        left = max(0.0, deadline - time.monotonic())
        if not publisher.wait_for_all_acked(Duration(nanoseconds=int(left * 1e9))):
            say(f"play: a reliable reader of {publisher.topic_name} has not acknowledged "
                f"every message after {ACK_TIMEOUT:g} s (it may have lost some)")
    time.sleep(linger)


def _replay(bag: Any, publishers: dict[str, Any], clock: Any, rate: float
            ) -> dict[str, int]:
    """Publish each message at its log time (scaled by ``rate``), ``/clock`` before it."""
    counts = dict.fromkeys(publishers, 0)
    first: int | None = None
    start = time.monotonic()
    for topic, log_time, raw in bag.raw_messages(list(publishers)):
        if first is None:
            first = log_time
        ahead = start + (log_time - first) * 1e-9 / rate - time.monotonic()
        if ahead > 0.0:
            time.sleep(ahead)
        clock.publish(Clock(clock=stamp(log_time)))
        publishers[topic].publish(raw)  # the recorded CDR bytes, as they were
        counts[topic] += 1
    return counts
