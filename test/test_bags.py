"""The one bag reader: topics by type, messages in order, one clear error type."""

from __future__ import annotations

import numpy as np
import pytest

from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.exceptions import RecordingError
from robot_tv_dynamics.simulation.recording import SimulatedRecording, write_joint_states_bag

JOINT_STATE = "sensor_msgs/msg/JointState"


def _recording(k: int = 5) -> SimulatedRecording:
    t = np.arange(k) * 0.01
    q = np.outer(t, [1.0, 2.0])
    zeros = np.zeros_like(q)
    return SimulatedRecording(("a", "b"), t, q, zeros, zeros, q * 3, zeros, zeros, zeros,
                              np.zeros((1, 10)), np.zeros(k))


@pytest.mark.parametrize("name", ["run.mcap", "folder_bag"])
def test_a_bag_gives_its_topics_and_messages_in_order(tmp_path, name):
    path = write_joint_states_bag(tmp_path / name, _recording())
    with open_bag(path) as bag:
        assert bag.topics == {"/joint_states": JOINT_STATE}
        assert bag.choose_topic(JOINT_STATE) == "/joint_states"
        rows = list(bag.messages(["/joint_states"]))
    assert [topic for topic, _, _ in rows] == ["/joint_states"] * 5
    assert [log for _, log, _ in rows] == sorted(log for _, log, _ in rows)
    np.testing.assert_allclose([m.effort[1] for _, _, m in rows], np.arange(5) * 0.06)
    assert list(rows[0][2].name) == ["a", "b"]


def test_bad_bags_and_topics_are_named_in_one_error(tmp_path):
    with pytest.raises(RecordingError, match="no such file"), open_bag(tmp_path / "none.mcap"):
        pass
    (tmp_path / "junk.mcap").write_bytes(b"not a bag")
    with pytest.raises(RecordingError, match="junk.mcap: cannot open the bag"), \
            open_bag(tmp_path / "junk.mcap"):
        pass
    path = write_joint_states_bag(tmp_path / "run.mcap", _recording())
    with open_bag(path) as bag:
        with pytest.raises(RecordingError, match='"/nope" is not in the bag'):
            bag.choose_topic(JOINT_STATE, "/nope")
        with pytest.raises(RecordingError, match="has type sensor_msgs/msg/JointState, not"):
            bag.choose_topic("std_msgs/msg/String", "/joint_states")
        with pytest.raises(RecordingError, match="no std_msgs/msg/String topic"):
            bag.choose_topic("std_msgs/msg/String")


def _write(folder, plugin, topics, k=3):
    """A rosbag2 folder written by rosbags: ``topics`` (name → type), ``k`` messages each.

    JointState messages carry joints a, b; String messages the text "m<i>"; ``k=0``
    leaves every topic without a message (an empty bag).
    """
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    js, header, time = (store.types[name] for name in (
        JOINT_STATE, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    string = store.types["std_msgs/msg/String"]
    writer = Writer(folder, version=9, storage_plugin=plugin)
    writer.open()
    for topic, msgtype in topics.items():
        connection = writer.add_connection(topic, msgtype, typestore=store)
        for i in range(k):
            msg = (js(header=header(stamp=time(sec=1, nanosec=i), frame_id=""),
                      name=["a", "b"], position=np.array([i, 2.0 * i]),
                      velocity=np.zeros(2), effort=np.zeros(2))
                   if msgtype == JOINT_STATE else string(data=f"m{i}"))
            writer.write(connection, 1000 + 10 * i, store.serialize_cdr(msg, msgtype))
    writer.close()
    return folder


def test_a_sqlite3_bag_reads_as_its_folder_and_as_its_db3_file(tmp_path):
    from rosbags.rosbag2 import StoragePlugin

    folder = _write(tmp_path / "sqlite_bag", StoragePlugin.SQLITE3, {"/joint_states": JOINT_STATE})
    (db3,) = folder.glob("*.db3")
    for path in (folder, db3):
        with open_bag(path) as bag:
            assert bag.topics == {"/joint_states": JOINT_STATE}
            assert bag.counts == {"/joint_states": 3}
            rows = list(bag.messages(["/joint_states"]))
        assert [log for _, log, _ in rows] == [1000, 1010, 1020]
        assert [list(m.position) for _, _, m in rows] == [[0, 0], [1, 2], [2, 4]]


def test_a_missing_folder_and_a_folder_without_metadata_are_named(tmp_path):
    with pytest.raises(RecordingError, match="no_bag: no such file or directory"), \
            open_bag(tmp_path / "no_bag"):
        pass
    (tmp_path / "plain").mkdir()
    with pytest.raises(RecordingError, match="plain: cannot open the bag .*metadata"), \
            open_bag(tmp_path / "plain"):
        pass


def test_a_topic_of_the_wrong_type_is_named_with_both_types(tmp_path):
    from rosbags.rosbag2 import StoragePlugin

    folder = _write(tmp_path / "bag", StoragePlugin.MCAP, {"/joint_states": "std_msgs/msg/String"})
    with open_bag(folder) as bag:
        with pytest.raises(RecordingError,
                           match='"/joint_states" has type std_msgs/msg/String, not '
                                 "sensor_msgs/msg/JointState"):
            bag.choose_topic(JOINT_STATE, "joint_states")
        with pytest.raises(RecordingError, match=r"no sensor_msgs/msg/JointState topic; topics: "
                                                 r"\['/joint_states \(std_msgs/msg/String\)'\]"):
            bag.choose_topic(JOINT_STATE)


@pytest.mark.parametrize("topics", [{}, {"/joint_states": JOINT_STATE}])
def test_an_empty_bag_opens_and_reads_no_message(tmp_path, topics):
    from rosbags.rosbag2 import StoragePlugin

    folder = _write(tmp_path / "empty", StoragePlugin.MCAP, topics, k=0)
    with open_bag(folder) as bag:
        assert bag.topics == topics
        assert all(count == 0 for count in bag.counts.values())
        assert list(bag.messages(list(topics))) == []
        if not topics:
            with pytest.raises(RecordingError, match="no sensor_msgs/msg/JointState topic"):
                bag.choose_topic(JOINT_STATE)


def test_relative_names_find_the_topic_and_unknown_topics_are_not_read_silently(tmp_path):
    from rosbags.rosbag2 import StoragePlugin

    folder = _write(tmp_path / "bag", StoragePlugin.MCAP,
                    {"/joint_states": JOINT_STATE, "notes": "std_msgs/msg/String"})
    with open_bag(folder) as bag:
        assert bag.resolve("joint_states") == "/joint_states"
        assert bag.resolve("/notes") == "notes"
        assert bag.resolve("/nope") is None
        assert bag.choose_topic("std_msgs/msg/String", "/notes") == "notes"
        with pytest.raises(RecordingError, match=r"topics \['/nope'\] are not in the bag"):
            list(bag.messages(["/joint_states", "/nope"]))
        raw = list(bag.raw_messages(["notes", "/joint_states"]))
        decoded = list(bag.messages(["notes", "/joint_states"]))
    assert [(t, log) for t, log, _ in raw] == [(t, log) for t, log, _ in decoded]
    assert sorted({t for t, _, _ in raw}) == ["/joint_states", "notes"]
    assert all(isinstance(data, (bytes, bytearray, memoryview)) or hasattr(data, "tobytes")
               for _, _, data in raw)
    assert [m.data for t, _, m in decoded if t == "notes"] == ["m0", "m1", "m2"]


def test_no_topics_asked_reads_no_message(tmp_path):
    path = write_joint_states_bag(tmp_path / "run.mcap", _recording())
    with open_bag(path) as bag:
        assert list(bag.messages([])) == [] and list(bag.raw_messages([])) == []


def _string(writer, text: str):
    return writer.typestore.types["std_msgs/msg/String"](data=text)


def test_the_mcap_writer_replaces_the_file_it_rewrites_and_leaves_no_work_folder(tmp_path):
    from robot_tv_dynamics.bags import McapWriter

    path = tmp_path / "run.mcap"
    with McapWriter(path) as writer:
        writer.write_message("/note", 5, _string(writer, "first"), "std_msgs/msg/String")
    with McapWriter(path) as writer:  # read the old file while writing its replacement
        with open_bag(path) as bag:
            old = [(log, m.data) for _, log, m in bag.messages(["/note"])]
        writer.add_topic("/note", "std_msgs/msg/String")
        for log, text in old:
            writer.write_message("/note", log, _string(writer, text), "std_msgs/msg/String")
        writer.write_message("/note", 9, _string(writer, "second"), "std_msgs/msg/String")
    with open_bag(path) as bag:
        assert [(log, m.data) for _, log, m in bag.messages(["/note"])] == [
            (5, "first"), (9, "second")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.mcap"]


@pytest.mark.parametrize("name", ["run.mcap", "folder_bag"])
def test_a_recording_that_fails_leaves_nothing_behind(tmp_path, name):
    from robot_tv_dynamics.bags import McapWriter

    with pytest.raises(KeyError), McapWriter(tmp_path / name) as writer:
        writer.write_message("/note", 1, _string(writer, "x"), "std_msgs/msg/String")
        writer.write("/never_declared", 2, b"")
    assert list(tmp_path.iterdir()) == []
