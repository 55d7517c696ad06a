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
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.ros import qos

#: Depth of the replayed (volatile) topics: a burst is queued, not dropped.
REPLAY_DEPTH = 1000
REPLAY_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=REPLAY_DEPTH,
                        reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE)


@dataclass(frozen=True)
class PlayOptions:
    """How a bag is replayed.

    Attributes:
        rate: bag seconds per wall-clock second (2 = twice as fast).
        remaps: bag topic → published topic.
        delay: wall-clock seconds between creating the publishers and the first message
            (for the readers to be discovered) [s].
        wait_for: publish nothing until ``wait_topic`` has this many subscribers (0: do
            not wait), e.g. the nodes' joint_states readers.
        wait_topic: the published topic (after the remaps) whose subscribers count.
        wait_timeout: longest wait for them [s].
    """

    rate: float = 1.0
    remaps: Mapping[str, str] = field(default_factory=dict)
    delay: float = 1.0
    wait_for: int = 0
    wait_topic: str = ""
    wait_timeout: float = 30.0

    def __post_init__(self) -> None:
        """Check the values.

        Raises:
            InvalidInputError: a rate that is not finite and > 0, a negative delay.
        """
        if not (0.0 < self.rate < float("inf")):
            raise InvalidInputError("--rate", f"must be > 0, got {self.rate}")
        if self.delay < 0.0 or self.wait_timeout < 0.0:
            raise InvalidInputError("--delay", "must be >= 0")


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
        say(f"play: {chosen[0].get_subscription_count()} subscriber(s) on "
            f"{options.wait_topic}")
    time.sleep(options.delay)


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
