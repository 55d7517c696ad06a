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
