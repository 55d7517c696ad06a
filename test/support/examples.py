"""Shared test data: the repo's example files, trajectories, payloads and a bag writer."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robot_tv_dynamics.evaluation import Payload, Trajectory

REPO = Path(__file__).resolve().parents[2]
LOADING_CONFIG = REPO / "config" / "loading"
EXAMPLES = REPO / "config" / "examples"
LOADING = REPO / "config" / "loading"

UR5_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
              "wrist_2_joint", "wrist_3_joint"]
PANDA_ARM = [f"panda_joint{i}" for i in range(1, 8)]


def quintic(q0, q1, duration, n):
    """Rest-to-rest quintic move: exact q, q̇, q̈ at n times."""
    t = np.linspace(0.0, duration, n)
    s = t / duration
    d = np.asarray(q1, dtype=float) - np.asarray(q0, dtype=float)
    p = 10 * s**3 - 15 * s**4 + 6 * s**5
    dp = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
    ddp = (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    return t, np.asarray(q0) + np.outer(p, d), np.outer(dp, d), np.outer(ddp, d)


def ur5_move(duration=1.5, n=31, **drop):
    t, q, qd, qdd = quintic([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0],
                            [1.5708, -0.35, 0.35, -1.5708, -1.5708, 0.5], duration, n)
    return Trajectory(tuple(UR5_JOINTS), t, q, None if drop.get("velocities") else qd,
                      None if drop.get("accelerations") else qdd)


def panda_move(duration=2.0, n=21):
    """Arm joints only, listed in reverse order (the fingers are held)."""
    t, q, qd, qdd = quintic([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
                            [0.9, 0.45, 0.2, -1.4, 0.3, 1.95, 1.3], duration, n)
    return Trajectory(tuple(reversed(PANDA_ARM)), t, q[:, ::-1], qd[:, ::-1], qdd[:, ::-1])


def ur5_payload(mass=3.0):
    return Payload("tool0", mass, np.array([0.01, -0.02, 0.08]),
                   np.array([[0.0089, 0.0004, 0.0], [0.0004, 0.0085, 0.0], [0.0, 0.0, 0.005]])
                   * (mass / 3.0))


def write_bag(path, trajectory, storage, extra_topic=True, topic="/planned_trajectory"):
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types = store.types
    jt = "trajectory_msgs/msg/JointTrajectory"
    points = []
    for k, t in enumerate(trajectory.time_from_start):
        ns = int(round(t * 1e9))
        points.append(types["trajectory_msgs/msg/JointTrajectoryPoint"](
            positions=trajectory.positions[k].copy(),
            velocities=trajectory.velocities[k].copy(),
            accelerations=trajectory.accelerations[k].copy(),
            effort=np.zeros(0),
            time_from_start=types["builtin_interfaces/msg/Duration"](
                sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)))
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id="")
    message = types[jt](header=header, joint_names=list(trajectory.joint_names), points=points)
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        if extra_topic:
            other = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store)
            writer.write(other, 1, store.serialize_cdr(types["std_msgs/msg/String"](data="hi"),
                                                       "std_msgs/msg/String"))
        connection = writer.add_connection(topic, jt, typestore=store)
        writer.write(connection, 2, store.serialize_cdr(message, jt))
