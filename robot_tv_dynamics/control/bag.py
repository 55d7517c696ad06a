r"""``adapt --bag``: one run as a rosbag2 MCAP in the package's topics and stamped schema.

Topics (every message sensor_msgs/JointState, stamped ``start`` + t, log time = stamp,
at the run's recording rate):

- ``/joint_states``: q, q̇ and effort = the controller's τ (model joint order);
- ``/reference_joint_states``: the desired q_d, q̇_d;
- ``/inertial_parameters_stamped``: the plant's true Θ (position) and Θ̇ (velocity);
- ``/estimates/controller/inertial_parameters_stamped``: the controller's Θ̂ (position),

the last two in the stamped body-vector schema (:mod:`robot_tv_dynamics.inputs.
body_vectors`: names ``<body>/<parameter>``, eq. (7) order), as ``sim_node`` publishes
them with ``controller:=<law>``. Read back with :func:`robot_tv_dynamics.bags.open_bag`.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.control.run import AdaptiveRun
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inputs.body_vectors import body_vector_names
from robot_tv_dynamics.model import RobotModel

#: The topic of the controller's Θ̂ (as sim_node publishes it).
ESTIMATE_TOPIC = "/estimates/controller/inertial_parameters_stamped"
#: The topics written, in the order of the module docstring.
TOPICS = ("/joint_states", "/reference_joint_states", "/inertial_parameters_stamped",
          ESTIMATE_TOPIC)


def write_run_bag(path: str | Path, run: AdaptiveRun, model: RobotModel, *,
                  start: float = 100.0) -> Path:
    """Write ``run`` as an MCAP (module docstring).

    Args:
        path: a ``.mcap`` file, or a folder (a rosbag2 directory, MCAP storage).
        run: the recorded run.
        model: its arm (joint and body names).
        start: stamp of t = 0 [s].

    Returns:
        The path written.

    Raises:
        InvalidInputError: ``path`` exists.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    path = Path(path)
    if path.exists():
        raise InvalidInputError("--bag", f"{path} exists; remove it or choose another name")
    path.parent.mkdir(parents=True, exist_ok=True)
    store = get_typestore(Stores.ROS2_JAZZY)
    kind = "sensor_msgs/msg/JointState"
    joint_state = store.types[kind]
    header = store.types["std_msgs/msg/Header"]
    time = store.types["builtin_interfaces/msg/Time"]
    empty = np.zeros(0)
    joints = list(model.joint_names)
    bodies = body_vector_names(model.body_names, "phi")

    def message(ns: int, names: list[str], position: Any, velocity: Any = empty,
                effort: Any = empty) -> bytes:
        msg: Any = joint_state(
            header=header(stamp=time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000),
                          frame_id=""), name=names,
            position=np.ascontiguousarray(position, dtype=np.float64).ravel(),
            velocity=np.ascontiguousarray(velocity, dtype=np.float64).ravel(),
            effort=np.ascontiguousarray(effort, dtype=np.float64).ravel())
        return bytes(store.serialize_cdr(msg, kind))

    single_file = path.suffix == ".mcap"
    folder = Path(tempfile.mkdtemp(dir=path.parent)) / "bag" if single_file else path
    writer = Writer(folder, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    try:
        connections = {topic: writer.add_connection(topic, kind, typestore=store)
                       for topic in TOPICS}
        for k, t in enumerate(run.t):
            ns = int(round((float(t) + start) * 1e9))
            for topic, data in (
                    ("/joint_states", message(ns, joints, run.q[k], run.qd[k], run.tau[k])),
                    ("/reference_joint_states", message(ns, joints, run.q_d[k], run.qd_d[k])),
                    ("/inertial_parameters_stamped",
                     message(ns, bodies, run.theta[k], run.theta_dot[k])),
                    (ESTIMATE_TOPIC, message(ns, bodies, run.theta_hat[k]))):
                writer.write(connections[topic], ns, data)
    finally:
        writer.close()
    if single_file:
        shutil.move(str(next(folder.glob("*.mcap"))), path)
        shutil.rmtree(folder.parent)
    return path
