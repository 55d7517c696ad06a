"""sensor_msgs/JointState as CDR bytes: the 1 kHz path without message conversion.

At 1 kHz, turning every joint_states sample into a Python ``JointState`` (rclpy's C
conversion, then attribute reads) and every answer back into one costs more than
eq. (39) itself. The dynamics node therefore subscribes ``joint_states`` raw (the
serialized bytes, ``create_subscription(..., raw=True)``) and publishes its
``generalized_torques`` and residuals as serialized bytes (``Publisher.publish`` takes
``bytes``); the JointState-shaped stamped topics (Θ, Ψ, the monitors' tables: a hundred
names per message) go the same way in sim_node, monitor_node and markers_node. The
topic types and contents are unchanged: any subscriber sees ordinary
JointState messages.

The layout is plain CDR (XCDR1, little endian) as every ROS 2 middleware writes it for
this type: a 4-byte encapsulation header (``00 01``, two option bytes), then — aligned to
the field size counted from the end of that header —

    stamp.sec int32 | stamp.nanosec uint32 | frame_id string | name string[] |
    position float64[] | velocity float64[] | effort float64[]

(a string: uint32 length including the terminating NUL, the UTF-8 bytes, NUL; a
sequence: uint32 count, then the elements). Only the stamp and the three arrays change
from one sample to the next, so:

- :class:`JointStateDecoder` parses the first message of each layout completely (frame id
  and names, every bound checked) and afterwards reads only the stamp and the arrays at
  the offsets it learnt, as long as the encapsulation, the bytes from the frame id to
  the end of the names and the three counts are the same. Bytes after the effort array
  are ignored, as rclpy ignores them (serializers may leave padding there). Anything
  else (big endian, another encapsulation, a truncated or inconsistent message, a string
  with a NUL inside) makes it return None, and the caller deserializes with rclpy,
  which reports what is wrong.
- :class:`JointStateEncoder` lays out the constant part once per frame id and writes the
  stamp and the arrays into it (each array as long as the names, or left empty: the
  stamped Θ/Ψ and consistency topics carry ``position`` and maybe ``velocity`` only).
- :func:`subscribe_joint_states` makes the raw subscription and hands the callback a
  decoded sample, or rclpy's message where the decoder declines.
- :class:`JointStateOutput` publishes through the encoder only after checking, at
  construction, that rclpy's own ``deserialize_message`` reads its bytes back as the
  message meant (names, frame id, stamp, arrays exactly); otherwise it publishes
  ``JointState`` messages. Tests compare both classes with rclpy's serializer on
  random layouts (``test/ros/test_joint_state_cdr.py``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.ros.conversions import to_float_array

#: Encapsulation kind of little-endian plain CDR (the option bytes that follow vary).
CDR_LE = b"\x00\x01"
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")
_HEAD = 4  # CDR alignment counts from the end of the encapsulation header


class SampleStamp:
    """``header.stamp`` of a decoded sample (the two fields of builtin_interfaces/Time)."""

    __slots__ = ("sec", "nanosec")


class SampleHeader:
    """``header`` of a decoded sample."""

    __slots__ = ("stamp", "frame_id")


class JointStateSample:
    """The fields of a JointState that a node reads, from :meth:`JointStateDecoder.decode`.

    ``position``, ``velocity`` and ``effort`` are read-only float64 views of the received
    bytes; ``name`` is the decoder's list (shared by every sample of one layout: do not
    modify it).
    """

    __slots__ = ("header", "name", "position", "velocity", "effort")


def header_stamp(data: bytes) -> tuple[int, int] | None:
    """(sec, nanosec) of ``header.stamp`` in a serialized message that starts with a Header.

    Any type whose first field is a std_msgs/Header (JointState, the ``*Stamped`` types)
    starts with the stamp right after the encapsulation header. None when ``data`` is not
    little-endian plain CDR or too short (the caller deserializes then).
    """
    if len(data) < _HEAD + _STAMP.size or data[:2] != CDR_LE:
        return None
    sec, nanosec = _STAMP.unpack_from(data, _HEAD)
    return sec, nanosec


def _align(offset: int, size: int) -> int:
    return offset + (-(offset - _HEAD) % size)


class JointStateDecoder:
    """Read serialized JointState messages; the constant part is parsed once per layout."""

    def __init__(self) -> None:
        """Start without a learnt layout."""
        self._key: bytes | None = None
        self._end = self._size = 0
        self._frame_id = ""
        self._names: list[str] = []
        self._counts: tuple[int, bytes, int, bytes, int, bytes] = (0, b"", 0, b"", 0, b"")
        self._arrays: tuple[tuple[int, int], ...] = ()

    def decode(self, data: bytes) -> JointStateSample | None:
        """The sample in ``data``, or None when it is not a well-formed little-endian message.

        Args:
            data: one serialized ``sensor_msgs/JointState`` (encapsulation header included).
        """
        key = self._key
        if (key is not None and len(data) == self._size and data[:2] == CDR_LE
                and data[_HEAD + 8:self._end] == key):
            a, count_a, b, count_b, c, count_c = self._counts
            if (data[a:a + 4] == count_a and data[b:b + 4] == count_b
                    and data[c:c + 4] == count_c):
                return self._sample(data)
        return self._learn(data)

    def _learn(self, data: bytes) -> JointStateSample | None:
        """Parse ``data`` completely; remember its layout if it is well formed."""
        size = len(data)
        try:
            if data[:2] != CDR_LE or size < 16:
                return None
            frame_id, offset = self._string(data, _HEAD + 8)
            offset = _align(offset, 4)
            (count,) = _U32.unpack_from(data, offset)
            offset += 4
            if count > (size - offset) // 5:  # each name takes at least 5 bytes
                return None
            names = []
            for _ in range(count):
                name, offset = self._string(data, _align(offset, 4))
                names.append(name)
            end = offset
            counts: list[Any] = []
            arrays = []
            for _ in range(3):
                offset = _align(offset, 4)
                (length,) = _U32.unpack_from(data, offset)
                counts += (offset, data[offset:offset + 4])
                offset += 4
                if length:
                    offset = _align(offset, 8)
                arrays.append((offset, length))
                offset += 8 * length
                if offset > size:
                    return None
        except (struct.error, UnicodeDecodeError, ValueError):
            return None
        self._key, self._end, self._size = data[_HEAD + 8:end], end, size
        self._frame_id, self._names = frame_id, names
        self._counts = tuple(counts)  # type: ignore[assignment]
        self._arrays = tuple(arrays)
        return self._sample(data)

    @staticmethod
    def _string(data: bytes, offset: int) -> tuple[str, int]:
        """The string at ``offset`` (length, bytes, NUL) and the offset after it."""
        (length,) = _U32.unpack_from(data, offset)
        start, stop = offset + 4, offset + 4 + length
        text = data[start:stop - 1]
        if length == 0 or stop > len(data) or data[stop - 1] != 0 or b"\x00" in text:
            raise ValueError("not a CDR string")  # (rclpy cuts a string at its first NUL)
        return text.decode("utf-8"), stop

    def _sample(self, data: bytes) -> JointStateSample:
        sample = JointStateSample()
        header = sample.header = SampleHeader()
        stamp = header.stamp = SampleStamp()
        stamp.sec, stamp.nanosec = _STAMP.unpack_from(data, _HEAD)
        header.frame_id = self._frame_id
        sample.name = self._names
        (p, n_p), (v, n_v), (e, n_e) = self._arrays
        sample.position = np.frombuffer(data, np.float64, n_p, p)
        sample.velocity = np.frombuffer(data, np.float64, n_v, v)
        sample.effort = np.frombuffer(data, np.float64, n_e, e)
        return sample


#: The three arrays of a JointState, in wire order.
FIELDS = ("position", "velocity", "effort")


class JointStateEncoder:
    """Serialize JointState messages with fixed names; each array as long as them, or empty."""

    def __init__(self, names: Sequence[str], filled: Sequence[str] = FIELDS) -> None:
        """Lay out messages carrying ``names``; the arrays in ``filled`` as long, the others empty.

        Raises:
            InvalidInputError: ``filled`` names something that is not a JointState array.
        """
        unknown = [field for field in filled if field not in FIELDS]
        if unknown:
            raise InvalidInputError("filled", f"{unknown} are not JointState arrays {FIELDS}")
        self.names = list(names)
        self.filled = tuple(field in filled for field in FIELDS)
        self._frame_id: str | None = None
        self._buffer = bytearray()
        self._views: tuple[np.ndarray, ...] = ()

    def _layout(self, frame_id: str) -> None:
        out = bytearray(b"\x00\x01\x00\x00")
        out += bytes(8)  # the stamp, written per message

        def string(text: str) -> None:
            data = text.encode("utf-8") + b"\x00"
            out.extend(bytes(_align(len(out), 4) - len(out)))
            out.extend(_U32.pack(len(data)) + data)

        string(frame_id)
        out.extend(bytes(_align(len(out), 4) - len(out)))
        out.extend(_U32.pack(len(self.names)))
        for name in self.names:
            string(name)
        spans = []
        for filled in self.filled:
            n = len(self.names) if filled else 0
            out.extend(bytes(_align(len(out), 4) - len(out)))
            out.extend(_U32.pack(n))
            if n:
                out.extend(bytes(_align(len(out), 8) - len(out)))
            spans.append((len(out), n))
            out.extend(bytes(8 * n))
        raw = np.frombuffer(out, dtype=np.uint8)
        self._views = tuple(raw[at:at + 8 * n].view(np.float64) for at, n in spans)
        self._buffer, self._frame_id = out, frame_id

    def encode(self, sec: int, nanosec: int, frame_id: str, position: np.ndarray | None,
               velocity: np.ndarray | None, effort: np.ndarray | None) -> bytes:
        """One serialized message.

        A filled array is float64 with as many entries as ``names``; an empty one's
        argument is not read and may be None.
        """
        if frame_id != self._frame_id:
            self._layout(frame_id)
        _STAMP.pack_into(self._buffer, _HEAD, sec, nanosec)
        for view, filled, values in zip(self._views, self.filled, (position, velocity, effort),
                                        strict=True):
            if filled:
                view[:] = values
        return bytes(self._buffer)


class JointStateOutput:
    """A JointState publisher with fixed names: serialized bytes when they check out.

    Attributes:
        serialized: whether messages go out as bytes from :class:`JointStateEncoder`
            (True when rclpy read a test message back exactly at construction).
    """

    def __init__(self, publisher: Any, names: Sequence[str], use_bytes: bool = True,
                 filled: Sequence[str] = FIELDS) -> None:
        """Wrap ``publisher`` (of ``sensor_msgs/JointState``) for messages naming ``names``.

        Args:
            publisher: an rclpy publisher of JointState.
            names: the names of every message, in order.
            use_bytes: try the serialized path (False: always JointState messages).
            filled: the arrays each message fills (as long as ``names``); the others
                stay empty.
        """
        self.publisher = publisher
        self._encoder = JointStateEncoder(names, filled)
        self._message = JointState(name=list(names))
        self.serialized = use_bytes and self._encoder_checks_out()

    def _encoder_checks_out(self) -> bool:
        """Whether rclpy deserializes the encoder's bytes as the message meant."""
        try:
            n = len(self._encoder.names)
            values = np.arange(3.0 * n).reshape(3, n) + 0.25
            sent = [v if filled else np.zeros(0) for v, filled in zip(
                values, self._encoder.filled, strict=True)]
            for frame_id in ("", "world", "tool0_frame"):
                data = self._encoder.encode(12345, 678, frame_id, *values)
                msg = deserialize_message(data, JointState)
                if not (msg.header.stamp.sec == 12345 and msg.header.stamp.nanosec == 678
                        and msg.header.frame_id == frame_id
                        and list(msg.name) == self._encoder.names
                        and all(np.array_equal(np.asarray(a, dtype=float), b) for a, b in zip(
                            (msg.position, msg.velocity, msg.effort), sent, strict=True))):
                    return False
        except Exception:  # an rclpy without serialization, another layout: messages
            return False
        return True

    def publish(self, stamp: Any, frame_id: str, position: np.ndarray | None,
                velocity: np.ndarray | None = None, effort: np.ndarray | None = None) -> None:
        """Publish one message (``stamp`` with ``sec`` and ``nanosec``).

        The arrays not filled are not read.
        """
        if self.serialized:
            self.publisher.publish(self._encoder.encode(
                stamp.sec, stamp.nanosec, frame_id, position, velocity, effort))
            return
        out = self._message
        out.header.stamp.sec, out.header.stamp.nanosec = stamp.sec, stamp.nanosec
        out.header.frame_id = frame_id
        for field, filled, values in zip(FIELDS, self._encoder.filled,
                                         (position, velocity, effort), strict=True):
            setattr(out, field, to_float_array(values) if filled else [])
        self.publisher.publish(out)


def subscribe_joint_states(
    node: Any, topic: str, callback: Callable[[Any], None], qos: Any,
    reject: Callable[[str], None],
) -> Any:
    """Subscribe ``topic`` as bytes; ``callback`` gets a :class:`JointStateSample` or a JointState.

    Each message is decoded by a :class:`JointStateDecoder`, else deserialized by rclpy;
    bytes that rclpy cannot read either go to ``reject`` with the reason.

    Returns:
        The rclpy subscription.
    """
    decoder = JointStateDecoder()

    def on_bytes(data: bytes) -> None:
        sample: Any = decoder.decode(data)
        if sample is None:
            try:
                sample = deserialize_message(data, JointState)
            except Exception as error:  # what rclpy says about the bytes is the reason
                reject(f"cannot be deserialized ({type(error).__name__}: {error})")
                return
        callback(sample)

    return node.create_subscription(JointState, topic, on_bytes, qos, raw=True)
