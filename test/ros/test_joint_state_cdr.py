"""JointState as CDR bytes (ros/joint_state_cdr.py) against rclpy's own serializer.

The reference is ``rclpy.serialization`` (the middleware's type support): every decoded
sample must equal what ``deserialize_message`` reads from the same bytes, and every
encoded message must deserialize to the message meant.
"""

from __future__ import annotations

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from robot_tv_dynamics.ros.joint_state_cdr import (
    JointStateDecoder,
    JointStateEncoder,
    JointStateOutput,
    header_stamp,
)

ALPHABET = "abcxyz_0123456789ÄéΘ"


def random_message(rng: np.random.Generator) -> JointState:
    """A JointState of random layout: name and frame lengths, which arrays are filled."""
    n = int(rng.integers(0, 12))
    msg = JointState()
    msg.header.stamp.sec = int(rng.integers(0, 2**31 - 1))
    msg.header.stamp.nanosec = int(rng.integers(0, 10**9))
    msg.header.frame_id = "".join(rng.choice(list(ALPHABET), int(rng.integers(0, 9))))
    msg.name = ["".join(rng.choice(list(ALPHABET), int(rng.integers(1, 20))))
                for _ in range(n)]
    for field in ("position", "velocity", "effort"):
        length = int(rng.choice([0, n, max(n - 1, 0), n + 2]))
        setattr(msg, field, rng.normal(size=length).tolist())
    return msg


def assert_same(sample: object, msg: JointState) -> None:
    assert sample.header.stamp.sec == msg.header.stamp.sec
    assert sample.header.stamp.nanosec == msg.header.stamp.nanosec
    assert sample.header.frame_id == msg.header.frame_id
    assert list(sample.name) == list(msg.name)
    for field in ("position", "velocity", "effort"):
        np.testing.assert_array_equal(np.asarray(getattr(sample, field)),
                                      np.asarray(getattr(msg, field)), err_msg=field)


def test_decoder_reads_what_rclpy_reads_on_random_layouts() -> None:
    rng = np.random.default_rng(7)
    decoder = JointStateDecoder()
    for _ in range(300):
        data = serialize_message(random_message(rng))
        sample = decoder.decode(data)
        assert sample is not None
        assert_same(sample, deserialize_message(data, JointState))


def test_decoder_fast_path_follows_stamp_and_values_and_relearns_on_a_new_layout() -> None:
    rng = np.random.default_rng(8)
    decoder = JointStateDecoder()
    base = random_message(rng)
    base.name = ["j1", "j2", "j3"]
    base.position, base.velocity, base.effort = [1.0, 2.0, 3.0], [4.0, 5.0, 6.0], []
    for k in range(20):  # same layout: stamps and values change
        base.header.stamp.nanosec = k
        base.position = rng.normal(size=3).tolist()
        data = serialize_message(base)
        assert_same(decoder.decode(data), deserialize_message(data, JointState))
    # same total length, other counts: velocity and effort swap sizes
    base.velocity, base.effort = [], [7.0, 8.0, 9.0]
    data = serialize_message(base)
    assert_same(decoder.decode(data), deserialize_message(data, JointState))
    # another name of the same length, another frame
    base.name, base.header.frame_id = ["j1", "jX", "j3"], "tool"
    data = serialize_message(base)
    assert_same(decoder.decode(data), deserialize_message(data, JointState))


def test_decoder_returns_none_for_malformed_bytes() -> None:
    msg = JointState()
    msg.header.frame_id = "world"
    msg.name = ["a", "bb", "ccc"]
    msg.position, msg.velocity = [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]
    data = serialize_message(msg)
    decoder = JointStateDecoder()
    assert decoder.decode(data) is not None
    for cut in range(len(data) - 8):  # every truncation that removes more than padding
        assert decoder.decode(data[:cut]) is None, cut
    longer = data + bytes(16)  # bytes after the message are ignored, as rclpy does
    assert_same(decoder.decode(longer), deserialize_message(longer, JointState))
    # with the layout learnt: another encapsulation is rclpy's job (big endian, XCDR2)
    assert decoder.decode(data) is not None
    for head in (b"\x00\x00", b"\x00\x07", b"\x01\x01"):
        assert decoder.decode(head + data[2:]) is None, head
    huge = bytearray(data)
    assert int.from_bytes(huge[24:28], "little") == 3  # the name count
    huge[24:28] = (2**31).to_bytes(4, "little")  # a name count far beyond the bytes
    assert decoder.decode(bytes(huge)) is None
    inner = serialize_message(JointState(name=["aQb"], position=[1.0], velocity=[2.0]))
    inner = inner.replace(b"aQb", b"a\x00b")  # a NUL inside a name: rclpy reads "a"
    assert deserialize_message(inner, JointState).name == ["a"]
    assert decoder.decode(inner) is None  # so it is rclpy's reading, not ours
    assert decoder.decode(b"") is None


def test_encoder_bytes_deserialize_to_the_message_meant() -> None:
    rng = np.random.default_rng(9)
    for n in (0, 1, 6, 9):
        names = ["".join(rng.choice(list(ALPHABET), int(rng.integers(1, 15))))
                 for _ in range(n)]
        encoder = JointStateEncoder(names)
        for frame_id in ("", "w", "base_link", "Θ_frame", "w"):
            values = rng.normal(size=(3, n))
            msg = deserialize_message(
                encoder.encode(17, 999_999_999, frame_id, *values), JointState)
            assert msg.header.stamp.sec == 17 and msg.header.stamp.nanosec == 999_999_999
            assert msg.header.frame_id == frame_id and list(msg.name) == names
            for field, expected in zip(("position", "velocity", "effort"), values, strict=True):
                np.testing.assert_array_equal(np.asarray(getattr(msg, field)), expected)


def test_encoder_leaves_the_arrays_not_filled_empty() -> None:
    rng = np.random.default_rng(12)
    names = ["body/m", "body/h1", "Θ/I11"]
    for filled in (("position",), ("position", "velocity"), ("velocity",), ("effort",), ()):
        encoder = JointStateEncoder(names, filled)
        for frame_id in ("", "base_link"):
            values = rng.normal(size=(3, len(names)))
            sent = [v if field in filled else None
                    for v, field in zip(values, ("position", "velocity", "effort"), strict=True)]
            data = encoder.encode(3, 4, frame_id, *sent)
            msg = deserialize_message(data, JointState)
            assert list(msg.name) == names and msg.header.frame_id == frame_id
            for field, expected in zip(("position", "velocity", "effort"), values, strict=True):
                got = np.asarray(getattr(msg, field))
                if field in filled:
                    np.testing.assert_array_equal(got, expected)
                else:
                    assert got.size == 0, field
            decoded = JointStateDecoder().decode(data)
            assert decoded is not None
            assert_same(decoded, msg)


def test_encoder_refuses_an_unknown_array_name() -> None:
    import pytest

    from robot_tv_dynamics.exceptions import InvalidInputError

    with pytest.raises(InvalidInputError, match="rate"):
        JointStateEncoder(["a"], ("position", "rate"))


class _Recorder:
    def __init__(self) -> None:
        self.sent: list[object] = []

    def publish(self, msg: object) -> None:
        self.sent.append(msg)


def test_output_checks_the_encoder_and_publishes_the_same_message_both_ways() -> None:
    names = ["j1", "j2"]
    stamp = JointState().header.stamp
    stamp.sec, stamp.nanosec = 5, 6
    values = np.array([[0.5, -1.0], [2.0, 3.0], [4.5, -6.0]])
    raw, plain = _Recorder(), _Recorder()
    serialized = JointStateOutput(raw, names)
    messages = JointStateOutput(plain, names, use_bytes=False)
    assert serialized.serialized and not messages.serialized
    serialized.publish(stamp, "f", *values)
    messages.publish(stamp, "f", *values)
    assert isinstance(raw.sent[0], bytes) and isinstance(plain.sent[0], JointState)
    assert_same(deserialize_message(raw.sent[0], JointState), plain.sent[0])
    # a position-only output (the stamped topics' shape): both ways the same message
    raw, plain = _Recorder(), _Recorder()
    JointStateOutput(raw, names, filled=("position",)).publish(stamp, "", values[0])
    JointStateOutput(plain, names, use_bytes=False, filled=("position",)).publish(
        stamp, "", values[0])
    assert isinstance(raw.sent[0], bytes)
    assert_same(deserialize_message(raw.sent[0], JointState), plain.sent[0])
    assert list(plain.sent[0].velocity) == [] and list(plain.sent[0].effort) == []


def test_header_stamp_is_the_stamp_rclpy_serializes_for_stamped_types() -> None:
    from geometry_msgs.msg import InertiaStamped

    rng = np.random.default_rng(11)
    for _ in range(50):
        msg = random_message(rng)
        assert header_stamp(serialize_message(msg)) == (msg.header.stamp.sec,
                                                        msg.header.stamp.nanosec)
    other = InertiaStamped()
    other.header.stamp.sec, other.header.stamp.nanosec = -5, 999_999_999
    other.header.frame_id = "panda_hand"
    assert header_stamp(serialize_message(other)) == (-5, 999_999_999)
    data = serialize_message(random_message(rng))
    assert header_stamp(data[:11]) is None  # too short for the stamp
    assert header_stamp(b"\x00\x00" + data[2:]) is None  # big-endian CDR: not read here
