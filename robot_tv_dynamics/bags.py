"""The one way the package reads rosbag2 recordings (a folder, one ``.mcap`` or ``.db3``).

:func:`open_bag` opens a recording with rosbags (no ROS install needed; message types of
the ROS 2 distribution the demo records, Jazzy) and :class:`Bag` hands out its topics by
type and its messages deserialized, with one error type, :class:`~robot_tv_dynamics.
exceptions.RecordingError`, that names the file and the problem (rosbags' own errors,
a missing file, an unknown topic, a topic of the wrong type). ``identify``,
``estimate``, ``evaluate``, ``observe`` and the demo's analysis (reading ``run.mcap``
back and rewriting it with the ``/analysis/*`` topics) read their bags through it.

Topic names are matched as ROS resolves relative names against the root namespace:
``joint_states`` and ``/joint_states`` name the same topic. An empty bag, or a topic
without messages, opens fine (its ``counts`` say 0); each reader says what it needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robot_tv_dynamics.exceptions import RecordingError, RobotTvDynamicsError


@dataclass
class Bag:
    """An open recording: its topics and types, and its messages in log-time order.

    Attributes:
        path: the recording.
        topics: topic → message type (``sensor_msgs/msg/JointState``).
        counts: topic → number of messages (0 when the bag does not say).
    """

    path: Path
    topics: dict[str, str]
    counts: dict[str, int]
    _reader: Any

    def resolve(self, topic: str) -> str | None:
        """The bag's name of ``topic`` (``joint_states`` finds ``/joint_states``), or None."""
        if topic in self.topics:
            return topic
        for name in (f"/{topic}", topic.lstrip("/")):
            if name in self.topics:
                return name
        return None

    @property
    def start_ns(self) -> int:
        """Log time of the first message [ns] (0 for an empty bag)."""
        return int(getattr(self._reader, "start_time", 0) or 0)

    def latched(self, topic: str) -> bool:
        """Whether ``topic`` was recorded from a transient-local (latched) publisher."""
        for connection in self._reader.connections:
            if connection.topic != topic:
                continue
            for qos in getattr(connection.ext, "offered_qos_profiles", None) or ():
                if getattr(getattr(qos, "durability", None), "name", "") == "TRANSIENT_LOCAL":
                    return True
        return False

    def topics_of_type(self, msgtype: str) -> list[str]:
        """The topics carrying ``msgtype``, sorted."""
        return sorted(topic for topic, kind in self.topics.items() if kind == msgtype)

    def choose_topic(self, msgtype: str, topic: str | None = None,
                     default: str | None = None) -> str:
        """The topic to read: ``topic`` if given, else the only one of ``msgtype``.

        Args:
            msgtype: the message type wanted.
            topic: a topic the user named; it must exist and carry ``msgtype``.
            default: the topic taken when several carry ``msgtype`` (``/joint_states``).

        Raises:
            RecordingError: the named topic is absent or of another type; no topic of
                ``msgtype``; several and none of them ``default`` (choose with --topic).
        """
        if topic is not None:
            named = self.resolve(topic)
            if named is None:
                raise RecordingError(str(self.path), f'topic "{topic}" is not in the bag; '
                                     f"topics: {sorted(self.topics)}")
            topic = named
            if self.topics[topic] != msgtype:
                raise RecordingError(str(self.path), f'topic "{topic}" has type '
                                     f"{self.topics[topic]}, not {msgtype}")
            return topic
        found = self.topics_of_type(msgtype)
        if len(found) == 1:
            return found[0]
        if default is not None and default in found:
            return default
        if not found:
            raise RecordingError(str(self.path), f"the bag has no {msgtype} topic; topics: "
                                 f"{sorted(f'{k} ({v})' for k, v in self.topics.items())}")
        raise RecordingError(str(self.path), f"the bag has several {msgtype} topics {found}"
                             + (f" and no {default}" if default else "")
                             + "; choose one with --topic")

    def messages(self, topics: Sequence[str]) -> Iterator[tuple[str, int, Any]]:
        """(topic, log time [ns], deserialized message) of ``topics``, in log-time order.

        Raises:
            RecordingError: a topic that is not in the bag; a message that cannot be read
                (rosbags' error named).
        """
        for topic, log_time, raw, msgtype in self._read(topics):
            try:
                message = self._reader.deserialize(raw, msgtype)
            except Exception as error:  # rosbags' own errors on a malformed message
                raise RecordingError(str(self.path), f"cannot read a message on {topic} "
                                     f"({error})") from None
            yield topic, log_time, message

    def raw_messages(self, topics: Sequence[str]) -> Iterator[tuple[str, int, bytes]]:
        """(topic, log time [ns], serialized CDR bytes) of ``topics``, in log-time order.

        For copying a bag (the demo's annotation) without deserializing it.

        Raises:
            RecordingError: as :meth:`messages`.
        """
        for topic, log_time, raw, _ in self._read(topics):
            yield topic, log_time, raw

    def _read(self, topics: Sequence[str]) -> Iterator[tuple[str, int, bytes, str]]:
        unknown = [topic for topic in topics if topic not in self.topics]
        if unknown:
            raise RecordingError(str(self.path), f"topics {unknown} are not in the bag; "
                                 f"topics: {sorted(self.topics)}")
        reader = self._reader
        wanted = set(topics)
        connections = [c for c in reader.connections if c.topic in wanted]
        if not connections:  # rosbags reads every topic when given none
            return
        try:
            for connection, log_time, raw in reader.messages(connections=connections):
                yield connection.topic, int(log_time), raw, connection.msgtype
        except RobotTvDynamicsError:
            raise
        except Exception as error:  # rosbags' own errors, KeyError, OSError, …
            raise RecordingError(str(self.path), f"cannot read a message ({error})") from None


@contextmanager
def open_bag(path: str | Path) -> Iterator[Bag]:
    """Open a rosbag2 recording for reading (a folder, or one ``.mcap``/``.db3`` file).

    Raises:
        RecordingError: no such file, or rosbags cannot open it (its reason named).
    """
    path = Path(path)
    if not path.exists():
        raise RecordingError(str(path), "no such file or directory")
    try:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore
    except ImportError as error:  # pragma: no cover - rosbags is a runtime requirement
        raise RecordingError(str(path), f"reading rosbag2 needs rosbags ({error})") from None
    try:
        reader = AnyReader([path], default_typestore=get_typestore(Stores.ROS2_JAZZY))
        reader.open()
    except Exception as error:  # rosbags raises its own errors, KeyError, OSError, …
        raise RecordingError(str(path), f"cannot open the bag ({error})") from None
    try:
        topics = {c.topic: c.msgtype for c in reader.connections}
        counts: dict[str, int] = {}
        for c in reader.connections:
            counts[c.topic] = counts.get(c.topic, 0) + int(getattr(c, "msgcount", 0) or 0)
        yield Bag(path, topics, counts, reader)
    finally:
        reader.close()


#: A function that writes one sensor_msgs/JointState: (topic, stamp in ns, names,
#: position, velocity, effort); the log time is the stamp.
JointStateWrite = Callable[..., None]


class McapWriter:
    """The one way the package writes a rosbag2 recording (MCAP storage, Jazzy types).

    ``path`` is a ``.mcap`` file, written in a work folder beside it and moved into place
    by :meth:`close` (an existing file is then replaced: the demo's annotation rewrites
    the bag it reads), or a folder, the rosbag2 directory itself. rosbags is imported
    when a writer is made. Used as a context manager it closes on success and
    :meth:`discard` s the partial recording on an error.

    Attributes:
        path: the recording.
        typestore: the message types (rosbags, ROS 2 Jazzy), to build and serialize
            messages with.
    """

    def __init__(self, path: str | Path) -> None:
        """Open the recording (nothing exists at ``path`` until :meth:`close`).

        Raises:
            RecordingError: rosbags cannot create the recording.
        """
        import tempfile

        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        self.path = Path(path)
        self.typestore = get_typestore(Stores.ROS2_JAZZY)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._single_file = self.path.suffix == ".mcap"
        self._work = (Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", dir=self.path.parent))
                      if self._single_file else None)
        folder = self._work / "bag" if self._work is not None else self.path
        self._writer = Writer(folder, version=9, storage_plugin=StoragePlugin.MCAP)
        try:
            self._writer.open()
        except Exception as error:  # rosbags' own errors: one error type of the package
            self._remove_work()
            raise RecordingError(str(self.path), f"cannot be written: {error}") from error
        self._connections: dict[str, Any] = {}

    def add_topic(self, topic: str, msgtype: str) -> None:
        """Declare ``topic`` with ``msgtype`` (e.g. ``sensor_msgs/msg/JointState``)."""
        if topic not in self._connections:
            self._connections[topic] = self._writer.add_connection(
                topic, msgtype, typestore=self.typestore)

    def write(self, topic: str, log_time: int, data: bytes) -> None:
        """Write one serialized (CDR) message of a declared topic at ``log_time`` [ns]."""
        self._writer.write(self._connections[topic], int(log_time), data)

    def write_message(self, topic: str, log_time: int, msg: Any, msgtype: str) -> None:
        """Serialize ``msg`` (a :attr:`typestore` message) and write it; declares the topic."""
        self.add_topic(topic, msgtype)
        self.write(topic, log_time, bytes(self.typestore.serialize_cdr(msg, msgtype)))

    def close(self) -> Path:
        """Finish the recording and put it at :attr:`path`.

        Returns:
            :attr:`path`.

        Raises:
            RecordingError: rosbags produced no MCAP file.
        """
        import shutil

        self._writer.close()
        if self._work is None:
            return self.path
        mcap = next((self._work / "bag").glob("*.mcap"), None)
        if mcap is None:
            self._remove_work()
            raise RecordingError(str(self.path), f"no MCAP file was written in {self._work}")
        shutil.move(str(mcap), self.path)
        self._remove_work()
        return self.path

    def discard(self) -> None:
        """Close and delete the partial recording (a ``.mcap`` path is left as it was)."""
        import shutil

        try:
            self._writer.close()
        finally:
            if self._work is not None:
                self._remove_work()
            else:
                shutil.rmtree(self.path, ignore_errors=True)

    def _remove_work(self) -> None:
        import shutil

        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)

    def __enter__(self) -> McapWriter:
        """The writer itself."""
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        """:meth:`close` on success, :meth:`discard` on an error."""
        if kind is None:
            self.close()
        else:
            self.discard()


@contextmanager
def write_joint_state_bag(path: str | Path, topics: Sequence[str], *,
                          argument: str = "out") -> Iterator[JointStateWrite]:
    """Write a rosbag2 recording of sensor_msgs/JointState topics (MCAP storage).

    Yields ``write(topic, ns, names, position, velocity=(), effort=())``, which writes
    one message stamped ``ns`` (integer nanoseconds, also its log time) on one of
    ``topics``. ``path`` is a ``.mcap`` file or a folder (a rosbag2 directory).

    Raises:
        InvalidInputError: ``path`` exists (named as ``argument``).
    """
    import numpy as np

    from robot_tv_dynamics.exceptions import InvalidInputError

    path = Path(path)
    if path.exists():
        raise InvalidInputError(argument, f"{path} exists; remove it or choose another name")
    kind = "sensor_msgs/msg/JointState"
    with McapWriter(path) as bag:
        store = bag.typestore
        joint_state = store.types[kind]
        header = store.types["std_msgs/msg/Header"]
        stamp = store.types["builtin_interfaces/msg/Time"]
        for topic in topics:
            bag.add_topic(topic, kind)

        def write(topic: str, ns: int, names: Sequence[str], position: Any,
                  velocity: Any = (), effort: Any = ()) -> None:
            msg: Any = joint_state(
                header=header(stamp=stamp(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000),
                              frame_id=""), name=list(names),
                position=np.ascontiguousarray(position, dtype=np.float64).ravel(),
                velocity=np.ascontiguousarray(velocity, dtype=np.float64).ravel(),
                effort=np.ascontiguousarray(effort, dtype=np.float64).ravel())
            bag.write(topic, ns, bytes(store.serialize_cdr(msg, kind)))

        yield write
