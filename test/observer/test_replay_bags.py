"""The observer's replay reads its bag through the package's one reader (bags.py).

A .db3 (sqlite3) copy of a bag replays to the same samples as its MCAP original; a
missing bag, a ``joint_states`` of another type and an empty bag are errors that name
the bag and the problem.
"""

from __future__ import annotations

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from support.observer_bag import simulate, write_bag

from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.exceptions import RecordingError
from robot_tv_dynamics.observer.replay import read_observer_bag

STORE = get_typestore(Stores.ROS2_JAZZY)


@pytest.fixture(scope="module")
def mcap_bag(tmp_path_factory, panda):
    return write_bag(tmp_path_factory.mktemp("mcap") / "run", panda,
                     simulate(panda, duration=0.2, every=2))


def _copy(source, folder, plugin=StoragePlugin.SQLITE3, keep=lambda topic: True):
    """The messages of ``source`` written again, byte for byte, with another storage."""
    with open_bag(source) as bag, Writer(folder, version=9, storage_plugin=plugin) as writer:
        connections = {topic: writer.add_connection(topic, kind, typestore=STORE)
                       for topic, kind in bag.topics.items() if keep(topic)}
        for topic, log_time, raw in bag.raw_messages(list(connections)):
            writer.write(connections[topic], log_time, raw)
    return folder


def test_a_sqlite3_copy_replays_to_the_same_samples_as_the_mcap(tmp_path, panda, mcap_bag):
    folder = _copy(mcap_bag, tmp_path / "sqlite")
    (db3,) = folder.glob("*.db3")
    original = read_observer_bag(mcap_bag, panda)
    assert original.t.size == 100 and original.theta is not None
    for path in (folder, db3):
        copy = read_observer_bag(path, panda, joint_topic="joint_states")
        for name in ("t", "q", "qd", "effort", "theta", "theta_dot", "psi", "psi_dot"):
            np.testing.assert_array_equal(getattr(copy, name), getattr(original, name),
                                          err_msg=name)


def test_a_missing_bag_is_named(tmp_path, panda):
    with pytest.raises(RecordingError, match="gone: no such file or directory"):
        read_observer_bag(tmp_path / "gone", panda)


def test_joint_states_of_another_type_is_named_with_the_bags_topics(tmp_path, panda):
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/joint_states", "std_msgs/msg/String",
                                           typestore=STORE)
        writer.write(connection, 1, STORE.serialize_cdr(
            STORE.types["std_msgs/msg/String"](data="q"), "std_msgs/msg/String"))
    with pytest.raises(RecordingError, match=r'no sensor_msgs/msg/JointState topic '
                                             r'"/joint_states"; topics: '
                                             r"\['/joint_states \(std_msgs/msg/String\)'\]"):
        read_observer_bag(tmp_path / "bag", panda)


def test_an_empty_bag_says_joint_states_has_no_message(tmp_path, panda, mcap_bag):
    folder = _copy(mcap_bag, tmp_path / "empty", keep=lambda topic: False)
    with pytest.raises(RecordingError, match="no sensor_msgs/msg/JointState topic"):
        read_observer_bag(folder, panda)
    with Writer(tmp_path / "no_messages", version=9,
                storage_plugin=StoragePlugin.SQLITE3) as writer:
        writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=STORE)
    with pytest.raises(RecordingError, match='no_messages: has no message on "/joint_states"'):
        read_observer_bag(tmp_path / "no_messages", panda)
