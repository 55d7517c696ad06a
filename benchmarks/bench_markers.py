"""Benchmark of the inertia markers: cost of one MarkerArray, and markers_node over DDS.

Run: ``source scripts/ros_env.sh && .venv/bin/python benchmarks/bench_markers.py``. Prints,
for the Panda (9 bodies, example-robot-data) with three sources (the true Θ and two
estimates, as in the demo):

- in this process: ms to build and serialize one MarkerArray (FK once, three scenes, the
  messages), with new messages and refilled from a ``MarkerStore`` as markers_node does
  (after the first array: only the markers drawn), and its serialized size;
- ``markers_node`` as a process on a private DDS domain, fed joint_states and three Θ
  streams at 50 Hz for 20 s, ``inertia_markers`` subscribed: arrays received per second and
  the node's CPU (user + system time from /proc) as a share of one core.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from builtin_interfaces.msg import Time  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402
from support.ros_harness import BEST_EFFORT, NodeProcess, RosClient, unique_namespace  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.ros import conversions as cv  # noqa: E402
from robot_tv_dynamics.ros.markers import MarkerStore, marker_array, scene_markers  # noqa: E402
from robot_tv_dynamics.visualization import inertia_scene  # noqa: E402

SOURCES = ("truth", "estimates/classical", "estimates/projected")
SECONDS = 20.0
RATE = 50.0


def build(model: RobotModel, q: np.ndarray, store: MarkerStore | None) -> MarkerArray:
    kinematics = model.kinematics(q)
    markers = []
    for k, source in enumerate(SOURCES):
        scene = inertia_scene(model, model.theta_nominal, None, kinematics)
        markers += scene_markers(scene, source, model.n_bodies, "panda_link0", Time(),
                                 offset=(0.0, float(k), 0.0), store=store)
    return marker_array(markers) if store is None else store.array(markers)


def in_process(model: RobotModel) -> None:
    q = np.zeros(model.nv)
    runs = 200
    for how, store in (("new messages", None), ("refilled, as markers_node", MarkerStore())):
        build(model, q, store)
        start = time.perf_counter()
        for _ in range(runs):
            array = build(model, q, store)
            size = len(serialize_message(array))
        cost = (time.perf_counter() - start) / runs
        print(f"one MarkerArray, {how} ({len(array.markers)} markers, {len(SOURCES)} "
              f"sources): {cost * 1e3:.2f} ms to build and serialize, {size / 1e3:.1f} kB")


def over_dds(model: RobotModel, urdf: str, logs: Path) -> None:
    ns = unique_namespace("bench_markers")
    node = NodeProcess("markers_node", ns, logs, {"urdf_path": urdf},
                       extra=["-p", "estimates:=[classical, projected]"])
    client = RosClient()
    try:
        received = client.collect(MarkerArray, f"{ns}/inertia_markers")
        joints = client.publisher(JointState, f"{ns}/joint_states", BEST_EFFORT)
        thetas = [client.publisher(Float64MultiArray, f"{ns}/{prefix}inertial_parameters")
                  for prefix in ("", "estimates/classical/", "estimates/projected/")]
        client.wait_matched([joints, *thetas], 60.0, node)

        def first_array() -> bool:
            joints.publish(JointState(name=model.joint_names, position=[0.0] * model.nv))
            client.spin_for(0.05)
            return bool(received)

        client.spin_until(first_array, 30.0, "the first MarkerArray", node)

        def cpu() -> float:
            fields = Path(f"/proc/{node.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        theta = cv.body_array(np.array(model.theta_nominal), model.body_names, "phi")
        cpu0, wall0, count0 = cpu(), time.monotonic(), len(received)
        k = 0
        while time.monotonic() - wall0 < SECONDS:
            msg = JointState()
            msg.header.stamp = cv.seconds_to_stamp(1000.0 + k / RATE)
            msg.name = list(model.joint_names)
            msg.position = [float(v) for v in 0.3 * np.sin(0.01 * k + np.arange(model.nv))]
            joints.publish(msg)
            for publisher in thetas:
                publisher.publish(theta)
            k += 1
            client.spin_for(1.0 / RATE)
        wall = time.monotonic() - wall0
        print(f"markers_node, inputs at {RATE:g} Hz for {wall:.0f} s: "
              f"{(len(received) - count0) / wall:.1f} arrays/s received, node CPU "
              f"{100 * (cpu() - cpu0) / wall:.1f} % of a core")
    finally:
        client.close()
        node.stop()


def main() -> None:
    urdf = find_example_robot_urdf("panda")
    model = RobotModel.from_urdf(urdf)
    in_process(model)
    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    over_dds(model, urdf, logs)


if __name__ == "__main__":
    main()
