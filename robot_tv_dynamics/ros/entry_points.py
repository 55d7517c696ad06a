"""Console-script entry points of the nodes: a one-line error when ROS 2 is missing.

setup.py points the node executables (``dynamics_node``, ``monitor_node``, ``sim_node``,
``markers_node``, ``estimator_node``, ``trajectory_gate``, and ``monitor_group``: several
monitors in one process) here rather than at the node modules, which import rclpy at
their top: from a plain ``pip install robot_tv_dynamics`` (without the ``[ros]`` extra)
the executable then says what to install instead of printing a traceback. Each entry
point first makes a stop signal exit 0 until the node's run loop owns the signals
(:func:`robot_tv_dynamics.ros.early_stop.install`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence

from robot_tv_dynamics.exceptions import RosExtraMissingError
from robot_tv_dynamics.paths import source_root
from robot_tv_dynamics.ros import early_stop

#: What a node needs besides the core (the ``[ros]`` extra provides all of it).
ROS_MODULES = ("rclpy", "std_msgs", "sensor_msgs", "geometry_msgs", "diagnostic_msgs",
               "trajectory_msgs", "visualization_msgs")


def require_ros(command: str, modules: Sequence[str] = ROS_MODULES) -> None:
    """Check that rclpy and the message packages can be imported.

    Raises:
        RosExtraMissingError: one of them is missing (named in the message).
    """
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            root = source_root()
            raise RosExtraMissingError(command, module, None if root is None else str(root))


def _node_main(name: str, modules: Sequence[str] = ROS_MODULES
               ) -> Callable[[], int | None]:
    def main() -> int | None:
        early_stop.install(name)
        try:
            require_ros(name, modules)
        except RosExtraMissingError as error:
            print(f"{name}: error: {error}", file=sys.stderr)
            return 1
        module = importlib.import_module(f"robot_tv_dynamics.ros.{name}")
        result: int | None = module.main()
        return result

    main.__name__ = name
    main.__doc__ = f"Run ``{name}`` (robot_tv_dynamics.ros.{name}.main)."
    return main


dynamics_node = _node_main("dynamics_node")
monitor_node = _node_main("monitor_node")
monitor_group = _node_main("monitor_group")
sim_node = _node_main("sim_node")
markers_node = _node_main("markers_node")
estimator_node = _node_main("estimator_node")
#: control_msgs: a ROS install's, or the one scripts/bootstrap.sh builds into the venv
trajectory_gate = _node_main("trajectory_gate", (*ROS_MODULES, "control_msgs"))
