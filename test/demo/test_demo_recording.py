"""The demo's ``run.mcap`` read back through the package's one bag reader (bags.py).

No DDS here: small bags written by rosbags, in the demo's topics, MCAP and sqlite3.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from robot_tv_dynamics.demo import read_recording
from robot_tv_dynamics.exceptions import DemoError, RecordingError

STORE = get_typestore(Stores.ROS2_JAZZY)
EPOCH = 1_700_000_000


def _write(folder, plugin, *, info=True, samples=4):
    """/simulation_info (epoch) and ``samples`` joint_states 10 ms apart from the epoch."""
    t = STORE.types
    with Writer(folder, version=9, storage_plugin=plugin) as writer:
        if info:
            connection = writer.add_connection("/simulation_info", "std_msgs/msg/String",
                                               typestore=STORE)
            writer.write(connection, 1, STORE.serialize_cdr(t["std_msgs/msg/String"](
                data=json.dumps({"epoch": EPOCH})), "std_msgs/msg/String"))
        connection = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState",
                                           typestore=STORE)
        for k in range(samples):
            msg = t["sensor_msgs/msg/JointState"](
                header=t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](
                    sec=EPOCH, nanosec=10_000_000 * k), frame_id=""),
                name=["a", "b"], position=np.array([k, -k], np.float64),
                velocity=np.array([1.0, -1.0]), effort=np.array([0.5 * k, 0.0]))
            writer.write(connection, 1000 + k, STORE.serialize_cdr(
                msg, "sensor_msgs/msg/JointState"))
    return folder


@pytest.mark.parametrize("plugin", [StoragePlugin.MCAP, StoragePlugin.SQLITE3])
def test_a_recording_is_read_on_simulated_time_from_mcap_and_db3(tmp_path, plugin):
    rec = read_recording(_write(tmp_path / "run", plugin))
    # stamps as float seconds (sec + 1e-9·nanosec) near 1.7e9 s: ulp 2.4e-7 s
    np.testing.assert_allclose(rec.t, [0.0, 0.01, 0.02, 0.03], atol=1e-6)
    np.testing.assert_array_equal(rec.q[:, 1], [0, -1, -2, -3])
    np.testing.assert_array_equal(rec.tau[:, 0], [0, 0.5, 1.0, 1.5])
    assert rec.info == {"epoch": EPOCH}
    assert list(rec.log_times["/joint_states"]) == [1000, 1001, 1002, 1003]


def test_a_missing_bag_is_a_recording_error_naming_it(tmp_path):
    with pytest.raises(RecordingError, match="run.mcap: no such file or directory"):
        read_recording(tmp_path / "run.mcap")


@pytest.mark.parametrize("info, samples", [(False, 4), (True, 0)])
def test_a_bag_without_simulation_info_or_joint_states_is_a_demo_error(tmp_path, info, samples):
    with pytest.raises(DemoError, match="has no simulation_info or joint_states"):
        read_recording(_write(tmp_path / "run", StoragePlugin.MCAP, info=info,
                              samples=samples))
