"""The node start-up and run loop every executable shares.

:class:`ModelNode`: parameters → config, URDF, ``/diagnostics``, input guard, URDF swaps;
:func:`run_node`: the ``main(args=None)`` pattern of ros2/demos (init, spin,
``finally: destroy_node(); try_shutdown()``), with a shutdown that is clean by
construction (:class:`StopRequest`).

**Why the node owns its signals.** rclpy's own SIGINT/SIGTERM handling shuts the
context down from its signal-handler thread while the main loop may be inside
``spin_once`` or a callback; the result is a race (``RuntimeError: Unable to convert
call argument '0' to Python object``, ``publisher's context is invalid``, a
KeyboardInterrupt landing in a callback and logged as FATAL, or an abort in pybind11).
:func:`run_node` therefore calls ``rclpy.init`` with ``SignalHandlerOptions.NO`` and
installs Python handlers for SIGINT, SIGTERM and SIGHUP that only *record* the request;
the loop checks it between ``spin_until_future_complete`` calls of at most 0.1 s each,
then destroys the node and shuts the context down itself. No exception is ever raised
into a callback. During start-up (URDF, Jacobian extremes) the first signal raises
:class:`StopRequested` out of the constructor instead, so Ctrl-C during a long start-up
also ends at once, with exit code 0.

**Parents.** A node started by :mod:`robot_tv_dynamics.ros.bringup` gets
``ROBOT_TV_DYNAMICS_PARENT_PID`` in its environment: it then asks Linux to send it
SIGTERM when the parent dies (``prctl(PR_SET_PDEATHSIG)``) and, everywhere, watches
``os.getppid()`` in the loop, so it never outlives its bring-up.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import signal
import sys
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.event_handler import PublisherEventCallbacks, QoSPublisherMatchedInfo
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future

from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros.bringup import PARENT_ENV
from robot_tv_dynamics.ros.input_guard import InputGuard
from robot_tv_dynamics.ros.parameters import (
    EXECUTORS,
    ParameterSpec,
    RuntimeParameters,
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
    :meth:`_on_urdf_swap`, then :meth:`_start` with the model, then register the
    set-parameters callback (:class:`RuntimeParameters`: the node's LIVE parameters go to
    :meth:`_apply_parameters`, the others are refused). Any failure destroys the
    node and re-raises. A node with a ``_publish_diagnostics`` method publishes its
    status whenever a new ``/diagnostics`` reader matches (and before it spins,
    :func:`spin`), so no reader waits a diagnostics period for its first message.
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
                DiagnosticArray, "/diagnostics", RELIABLE_QOS,
                event_callbacks=PublisherEventCallbacks(matched=self._on_diagnostics_matched))
            self._guard = InputGuard(
                self, self._diagnostics_pub, robot_name(model), cfg.log_throttle,
                self._input_status_period(), executable=node_name)
            self._description.guard = self._guard
            self._description.on_swap = self._on_urdf_swap
            self._start(model)
            #: the set-parameters callback: LIVE parameters applied, the rest refused
            self.runtime_parameters = RuntimeParameters(self, parameters, self._apply_parameters)
        except BaseException:
            self.destroy_node()
            raise

    def _on_diagnostics_matched(self, info: QoSPublisherMatchedInfo) -> None:
        """A new ``/diagnostics`` reader: the node's status now, not one period later.

        A reader that joins late (a monitor GUI, a bring-up's check, the DDS discovery of
        a reader started with the node) would otherwise wait up to a whole diagnostics
        period for the first message; the matched event of the publisher (rclpy's
        ``PublisherEventCallbacks(matched=...)``) runs in the executor like any callback.
        """
        publish = getattr(self, "_publish_diagnostics", None)
        if info.current_count_change > 0 and callable(publish):
            publish()

    def _input_status_period(self) -> float:
        """How long a rejection keeps the input status at WARN [s] (``self.config`` is set)."""
        raise NotImplementedError

    def _start(self, model: RobotModel) -> None:
        """The node's own start-up: its state, topics and timers for ``model``."""
        raise NotImplementedError

    def _on_urdf_swap(self, model: RobotModel) -> None:
        """Take over an accepted URDF swap (same joints) to ``model``."""
        raise NotImplementedError

    def _apply_parameters(self, config: Any, names: frozenset[str]) -> str:
        """Take over LIVE parameters set at runtime (:class:`RuntimeParameters`).

        The node's own :meth:`_apply` first (it may refuse: nothing changes), then what
        every node shares (``log_throttle``). ``self.config`` is still the old config.

        Returns:
            What changed besides the values, for the log line ("" if nothing).
        """
        note = self._apply(config, names)
        if "log_throttle" in names:
            self._guard.throttle = config.log_throttle
        return note

    def _apply(self, config: Any, names: frozenset[str]) -> str:
        """The node's part of :meth:`_apply_parameters` (validate before mutate).

        Raises:
            RobotTvDynamicsError: the new values are refused (nothing changed).
        """
        raise NotImplementedError

    def _replace_timer(self, timer: Any, period: float, callback: Callable[[], None]) -> Any:
        """A timer of ``period`` [s] calling ``callback``, in place of ``timer`` (destroyed)."""
        new = self.create_timer(period, callback)
        self.destroy_timer(timer)
        return new


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


#: The signals that request a stop.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Longest a node may take to exit after a stop request [s]: then it prints every
#: thread's stack (where it hangs) and exits with code 1 — before a bring-up's grace
#: period (5 s in the demo, 10 s in the bring-up) runs out and it would be SIGKILLed.
STOP_WATCHDOG_S = 4.0
_PR_SET_PDEATHSIG = 1


class StopRequested(BaseException):  # noqa: N818 - a request, not an error
    """Raised out of start-up by the first stop signal (not an error: exit code 0)."""


class StopRequest:
    """The stop requests of one process: signals (recorded, never raised in the loop).

    Attributes:
        reason: why the process stops ("SIGINT", "parent exited", ...); None while it runs.
        starting: while True, the first signal raises :class:`StopRequested` (start-up
            cannot check a flag); the run loop sets it False before spinning.
        watchdog: seconds from the first request to a forced exit with every thread's
            stack on stderr (None: none; the node executables use :data:`STOP_WATCHDOG_S`).
    """

    def __init__(self, watchdog: float | None = None) -> None:
        """Nothing requested yet; start-up phase.

        Args:
            watchdog: seconds after the first request after which the process prints
                every thread's stack and exits with code 1 (None: never).
        """
        self.watchdog = watchdog
        self.reason: str | None = None
        self.starting = True
        self._parent: int | None = None
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        """Whether a stop was requested."""
        return self.reason is not None

    def request(self, reason: str) -> None:
        """Record a stop request (the first reason is kept) and arm the stop watchdog.

        The watchdog (:attr:`watchdog`, :func:`faulthandler.dump_traceback_later`; only
        the node executables' :func:`run_node` sets it) turns a stop that hangs (in a
        DDS call, a thread that never ends) into every thread's stack on stderr and exit
        code 1, instead of a SIGKILL that says nothing.
        """
        if self.reason is None:
            self.reason = reason
            if self.watchdog is not None:
                faulthandler.dump_traceback_later(self.watchdog, exit=True)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first = self.reason is None
        self.request(signal.Signals(signum).name)
        if first and self.starting:
            raise StopRequested(self.reason)

    def install(self) -> None:
        """Install the handlers of :data:`STOP_SIGNALS` (main thread only) and the parent watch."""
        for signum in STOP_SIGNALS:
            if signum == signal.SIGHUP and signal.getsignal(signum) == signal.SIG_IGN:
                continue  # started under nohup: a hang-up is meant to be ignored
            self._previous[signum] = signal.signal(signum, self._handle)
        parent = os.environ.get(PARENT_ENV, "").strip()
        if parent.isdigit():
            self._parent = int(parent)
            if sys.platform.startswith("linux"):
                try:  # SIGTERM when the parent dies, even if it is SIGKILLed
                    libc = ctypes.CDLL(None, use_errno=True)
                    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
                except (OSError, AttributeError):  # no prctl: the polling below remains
                    pass
            self.check_parent()

    def uninstall(self) -> None:
        """Restore the previous handlers."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def check_parent(self) -> None:
        """Request a stop if the parent named by :data:`PARENT_ENV` is gone (re-parented)."""
        if self._parent is not None and os.getppid() != self._parent:
            self.request("parent exited")
            if self.starting:
                raise StopRequested(self.reason)


def spin(nodes: Node | Sequence[Node], executor: Any, stop: StopRequest | None = None) -> None:
    """Run ``executor`` on ``nodes`` until a stop is requested or the context shuts down.

    ``nodes`` is one node or several sharing the executor (one process, one DDS
    participant: :mod:`robot_tv_dynamics.ros.monitor_group`).
    ``spin_until_future_complete`` on a future that is never done (a new one per call),
    with a timeout of at most 0.1 s: each call runs every callback that comes due for that
    long and returns, so a recorded signal ends the loop within that time, between
    callbacks, never inside one. A node with a ``finished`` event (sim_node with a
    ``duration``) also ends the loop when it is set (checked every 0.05 s). With the
    EventsExecutor that is one Python-level call per 0.1 s instead of one ``spin_once``
    per callback: at 1 kHz the loop's own ``context.ok()`` and parent check cost ≈ 2 % of
    a core (rclpy's Python executors loop over ``spin_once`` inside the call anyway).
    The EventsExecutor's ``spin()`` in rclpy 7.1 neither runs timers nor returns on
    SIGINT; ``spin_until_future_complete`` with a timeout does both.

    A node with a ``_publish_diagnostics`` method (the model nodes) publishes its first
    status before the loop: a subscriber to ``/diagnostics`` sees the node as soon as it
    spins, not one diagnostics period later (its publisher was created at the start of
    the constructor, so DDS has usually matched it by then).
    """
    nodes = [nodes] if isinstance(nodes, Node) else list(nodes)
    stop = stop if stop is not None else StopRequest()
    stop.starting = False
    for node in nodes:
        executor.add_node(node)
    for node in nodes:
        first_status = getattr(node, "_publish_diagnostics", None)
        if callable(first_status):  # the node's first status now, not one period after start
            first_status()
    events = [event for event in (getattr(node, "finished", None) for node in nodes)
              if event is not None]
    timeout = 0.1 if not events else 0.05
    context = nodes[0].context
    while not stop.requested and context.ok() and not any(e.is_set() for e in events):
        # each call runs callbacks for ``timeout``, then returns; a fresh future each time,
        # since rclpy's executors add a done-callback to it per call (the
        # SingleThreadedExecutor one per callback) that a never-done future would keep
        executor.spin_until_future_complete(Future(), timeout_sec=timeout)
        stop.check_parent()


def run_node(factory: Callable[[], Node], name: str, args: Sequence[str] | None = None) -> int:
    """``main(args=None)`` of ros2/demos: init, spin, clean shutdown; the exit code.

    The one run loop of every executable (:func:`run_nodes` with one factory). SIGINT,
    SIGTERM and SIGHUP, at any time (start-up, idle, under traffic), and the parent's
    exit (bring-up) end it with exit code 0 and no traceback (see the module docstring).
    A start-up error of the package (a missing or broken URDF) or a parameter of the
    wrong type/range is logged as one line and gives exit code 1, no traceback; so does a
    node whose ``error`` is set when it ends. Any other exception is a bug: traceback,
    exit code 1.

    Args:
        factory: builds the node (its constructor).
        name: logger name for start-up errors and the stop line (the default node name).
        args: command-line arguments for ``rclpy.init``.

    Returns:
        The process exit code.
    """
    return run_nodes([factory], name, args)


def run_nodes(
    factories: Sequence[Callable[[], Node]], name: str, args: Sequence[str] | None = None,
    on_ready: Callable[[list[Node]], None] | None = None,
) -> int:
    """:func:`run_node` for several nodes in this process, on one executor.

    The nodes are built in order (a start-up error of any destroys those already built
    and gives exit code 1, as for one node), then spin together until a stop; each is
    destroyed at the end. The executor is the one the first node's ``config.executor``
    names.

    Args:
        factories: build the nodes (their constructors), in order.
        name: logger name for start-up errors and the stop line.
        args: command-line arguments for ``rclpy.init`` (shared by every node).
        on_ready: called with the nodes once all are built, before they spin.

    Returns:
        The process exit code.
    """
    stop = StopRequest(watchdog=STOP_WATCHDOG_S)
    nodes: list[Node] = []
    code = 0
    try:
        stop.install()
        rclpy.init(args=None if args is None else list(args),
                   signal_handler_options=SignalHandlerOptions.NO)
        for factory in factories:
            nodes.append(factory())
        if on_ready is not None:
            on_ready(nodes)
        spin(nodes, make_executor(getattr(nodes[0], "config", None)), stop)
        if any(getattr(node, "error", None) is not None for node in nodes):
            code = 1  # a node that failed while running
    except (StopRequested, KeyboardInterrupt, ExternalShutdownException):
        pass
    except (RobotTvDynamicsError, rclpy.exceptions.ParameterException) as error:
        rclpy.logging.get_logger(name).fatal(f"cannot start: {error}")
        code = 1
    except Exception:
        if rclpy.ok() and not stop.requested:
            raise
        # a callback raced with a shutdown from outside (see scripts/ROS_WHEELS.md)
    finally:
        stop.starting = False  # from here on a signal is only recorded
        if stop.requested:
            rclpy.logging.get_logger(name).info(f"stopping ({stop.reason})")
        for node in reversed(nodes):
            node.destroy_node()
        rclpy.try_shutdown()
        if stop.requested:  # stopping anyway: a repeat (the bring-up's, a second Ctrl-C)
            ignore_stop_signals()  # must not kill the exit, see ignore_stop_signals
    return code


def ignore_stop_signals() -> None:
    """Ignore :data:`STOP_SIGNALS` from now on (main thread only; elsewhere nothing).

    Python's finalization puts the default action back for a signal with a Python
    handler, so a repeated SIGINT while the interpreter exits would end it by the signal
    (exit code -2) instead of 0; an ignored signal stays ignored.
    """
    try:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass
