"""The floor under a node's ready time: a bare rclpy node, none of the package imported.

It subscribes ``joint_states``, creates a ``/diagnostics`` publisher, publishes a
DiagnosticArray when a reader matches it (as the package's nodes do) and every second,
logs ``ready:`` and spins. ``bench_ready.py`` spawns it like a node of the package: its
time from spawn to subscribed and to the first diagnostics is what the interpreter,
rclpy and DDS discovery cost on this machine, the baseline of the nodes' ratios.

Alone: ``python benchmarks/plain_node.py --ros-args -r __ns:=/x`` (other ``-p``
arguments are accepted and ignored).
"""

from __future__ import annotations

import sys


def main() -> int:
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.event_handler import PublisherEventCallbacks
    from rclpy.executors import ExternalShutdownException
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    rclpy.init(args=sys.argv)
    node = Node("plain_node", automatically_declare_parameters_from_overrides=True)
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)

    def publish(*_info: object) -> None:
        array = DiagnosticArray()
        array.header.stamp = node.get_clock().now().to_msg()
        array.status = [DiagnosticStatus(name="plain_node", message="up")]
        publisher.publish(array)

    publisher = node.create_publisher(
        DiagnosticArray, "/diagnostics", reliable,
        event_callbacks=PublisherEventCallbacks(matched=publish))
    node.create_subscription(JointState, "joint_states", lambda _m: None,
                             QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
    node.create_timer(1.0, publish)
    node.get_logger().info("ready: plain rclpy node")
    publish()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
