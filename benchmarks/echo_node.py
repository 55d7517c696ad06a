"""The floor under dynamics_node's CPU: an rclpy node that only echoes joint_states.

It subscribes ``joint_states`` and ``inertial_parameters`` with dynamics_node's QoS,
executor (rclpy's EventsExecutor where this rclpy has it) and run loop, and answers
every joint_states with a ``generalized_torques`` JointState carrying the same stamp,
q and q̇ and zero effort: message handling and DDS, no dynamics, no input checks. ``bench_nodes.py
--baseline`` runs it in the node's place; the difference between the two runs is what
the package's own Python costs per sample.

Run by ``bench_nodes.py``; alone: ``python benchmarks/echo_node.py --ros-args -r
__ns:=/x`` (other ``-p`` arguments are accepted and ignored).
"""

from __future__ import annotations

import sys


def main() -> int:
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])
    from robot_tv_dynamics.ros import qos
    from robot_tv_dynamics.ros.node_base import make_executor, spin

    rclpy.init(args=sys.argv)
    node = Node("dynamics_node", automatically_declare_parameters_from_overrides=True)
    publisher = node.create_publisher(JointState, "generalized_torques", qos.RELIABLE_QOS)
    out = JointState()

    def on_joint_states(msg: JointState) -> None:
        out.header = msg.header
        out.name = msg.name
        out.position, out.velocity = msg.position, msg.velocity
        out.effort = [0.0] * len(msg.name)
        publisher.publish(out)

    node.create_subscription(JointState, "joint_states", on_joint_states,
                             qos.stream_qos(100))
    node.create_subscription(Float64MultiArray, "inertial_parameters", lambda _m: None,
                             qos.stream_qos(10))
    executor = make_executor(type("Config", (), {"executor": "events"})())
    node.get_logger().info("ready")
    try:
        spin(node, executor)  # the nodes' own run loop
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
