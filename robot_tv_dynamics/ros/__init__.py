"""ROS 2 adapters of robot_tv_dynamics: message conversions and the nodes (need rclpy).

A node started as ``python -m robot_tv_dynamics.ros.<node>`` imports this package before
its own module: a stop signal from here until its run loop owns the signals exits 0
(:mod:`robot_tv_dynamics.ros.early_stop`). In any other process this installs nothing.
"""

from robot_tv_dynamics.ros import early_stop as _early_stop

_early_stop.install_if_executable()
