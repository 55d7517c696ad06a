"""The node start-up and run loop every executable shares.

:class:`ModelNode`: parameters → config, URDF, ``/diagnostics``, input guard, URDF swaps;
:func:`run_node`: the ``main(args=None)`` pattern of ros2/demos (KeyboardInterrupt,
ExternalShutdownException, ``finally: destroy_node(); try_shutdown()``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros.input_guard import InputGuard
from robot_tv_dynamics.ros.parameters import (
    EXECUTORS,
    ParameterSpec,
    config_from_parameters,
    declare_parameters,
)
from robot_tv_dynamics.ros.qos import RELIABLE_QOS
from robot_tv_dynamics.ros.robot_description import (
    RobotDescription,
    robot_name,
)


# ---------------------------------------------------------------------------- node
class ModelNode(Node):
    """The start-up dynamics_node and monitor_node share; each adds what is its own.

    In order: declare ``parameters`` and build ``self.config`` (a ``config_type``, a
    :class:`CommonConfig`), check the executor, acquire the URDF
    (``self._description``, a :class:`RobotDescription`), create the ``/diagnostics``
    publisher and the :class:`InputGuard` ``self._guard`` (WARN for
    :meth:`_input_status_period` after a rejection), hand URDF swaps to
    :meth:`_on_urdf_swap`, then :meth:`_start` with the model. Any failure destroys the
    node and re-raises.
    """

    def __init__(
        self, node_name: str, parameters: Sequence[ParameterSpec], config_type: type,
    ) -> None:
        """Run the shared start-up, then :meth:`_start`.

        Raises:
            URDFError: no usable URDF (the node cannot start).
            InvalidInputError: an unknown executor.
            rclpy.exceptions.ParameterException: a parameter of the wrong type or range.
        """
        super().__init__(node_name)
        try:
            values = declare_parameters(self, parameters)
            self.config = cfg = config_from_parameters(config_type, values)
            check_executor(cfg.executor)
            self._description = RobotDescription(
                self, cfg.robot_description, cfg.urdf_path, cfg.robot_description_timeout,
                cfg.locked_joints)
            model = self._description.acquire()
            self._diagnostics_pub = self.create_publisher(
                DiagnosticArray, "/diagnostics", RELIABLE_QOS)
            self._guard = InputGuard(
                self, self._diagnostics_pub, robot_name(model), cfg.log_throttle,
                self._input_status_period())
            self._description.guard = self._guard
            self._description.on_swap = self._on_urdf_swap
            self._start(model)
        except BaseException:
            self.destroy_node()
            raise

    def _input_status_period(self) -> float:
        """How long a rejection keeps the input status at WARN [s] (``self.config`` is set)."""
        raise NotImplementedError

    def _start(self, model: RobotModel) -> None:
        """The node's own start-up: its state, topics and timers for ``model``."""
        raise NotImplementedError

    def _on_urdf_swap(self, model: RobotModel) -> None:
        """Take over an accepted URDF swap (same joints) to ``model``."""
        raise NotImplementedError


# ---------------------------------------------------------------------------- main
def check_executor(kind: str) -> None:
    """Raise InvalidInputError unless ``kind`` is one of :data:`EXECUTORS`."""
    if kind not in EXECUTORS:
        raise InvalidInputError("executor", f'"{kind}" is not one of {list(EXECUTORS)}')


def make_executor(config: Any) -> Any:
    """The executor named by ``config.executor`` (falls back to SingleThreadedExecutor)."""
    kind = getattr(config, "executor", "single_threaded")
    if kind == "events":
        try:
            from rclpy.experimental import EventsExecutor  # Jazzy 7.1.5+ / Kilted
        except ImportError:  # Humble, older Jazzy: no EventsExecutor
            pass
        else:
            return EventsExecutor()
    return SingleThreadedExecutor()


def spin(node: Node, executor: Any) -> None:
    """Run ``executor`` on ``node`` until the context shuts down (Ctrl-C, SIGTERM).

    A node with a ``finished`` event (sim_node with a ``duration``) also ends the loop
    when it is set. The EventsExecutor is driven by ``spin_once`` with a timeout: its
    ``spin()`` in rclpy 7.1 (Jazzy wheels) neither runs timers nor returns on SIGINT,
    while ``spin_once`` does both.
    """
    executor.add_node(node)
    finished = getattr(node, "finished", None)
    if finished is None and isinstance(executor, SingleThreadedExecutor):
        executor.spin()
        return
    timeout = 0.5 if finished is None else 0.05
    while rclpy.ok() and not (finished is not None and finished.is_set()):
        executor.spin_once(timeout_sec=timeout)


def run_node(factory: Callable[[], Node], name: str, args: Sequence[str] | None = None) -> int:
    """``main(args=None)`` of ros2/demos: init, spin, clean shutdown; the exit code.

    The one run loop of every executable. A start-up error of the package (a missing or
    broken URDF) or a parameter of the wrong type/range is logged as one line and gives
    exit code 1, no traceback; so does a node whose ``error`` is set when it ends. Ctrl-C
    and SIGTERM (``ExternalShutdownException``) end with 0, as does an rclpy error raised
    by a callback in flight while the context shuts down.

    Args:
        factory: builds the node (its constructor).
        name: logger name for start-up errors (the default node name).
        args: command-line arguments for ``rclpy.init``.

    Returns:
        The process exit code.
    """
    rclpy.init(args=None if args is None else list(args))
    node = None
    code = 0
    try:
        node = factory()
        spin(node, make_executor(getattr(node, "config", None)))
        if getattr(node, "error", None) is not None:  # a node that failed while running
            code = 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (RobotTvDynamicsError, rclpy.exceptions.ParameterException) as error:
        rclpy.logging.get_logger(name).fatal(f"cannot start: {error}")
        code = 1
    except Exception:
        if rclpy.ok():
            raise
        # a callback raced with shutdown (see scripts/ROS_WHEELS.md): not an error
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code
