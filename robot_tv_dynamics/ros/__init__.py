"""ROS 2 adapters of robot_tv_dynamics: message conversions and the nodes (need rclpy)."""
