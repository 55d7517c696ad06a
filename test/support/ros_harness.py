"""Helpers of the node tests: node subprocesses, a private DDS domain, a spinning tester.

The nodes run as separate processes (``python -m robot_tv_dynamics.ros.<node>``) on a
private ROS_DOMAIN_ID, each in its own namespace with ``/diagnostics`` remapped into
it, so concurrent test runs on one machine cannot see each other's data. Waits are
bounded polling loops, never fixed sleeps.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

REPO = Path(__file__).resolve().parents[2]
#: One DDS domain per test process (1..100 keeps Fast DDS ports below the ephemeral range);
#: ``RTD_TEST_DOMAIN_ID`` pins it (a user who shares the host with others keeps to theirs).
DOMAIN_ID = int(os.environ.get("RTD_TEST_DOMAIN_ID") or (os.getpid() + 41) % 100 + 1)
_counter = itertools.count()

LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                      reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                         reliability=ReliabilityPolicy.BEST_EFFORT)


#: The tests' discovery: this host only, whatever the user's environment says.
LOCAL_DISCOVERY = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}
#: Settings that would reach other hosts (removed for the tests' processes).
DISCOVERY_REACH = ("ROS_STATIC_PEERS", "ROS_LOCALHOST_ONLY")


def local_discovery() -> None:
    """This process's participants (the tester nodes) discover on this host only."""
    os.environ.update(LOCAL_DISCOVERY)
    for name in DISCOVERY_REACH:
        os.environ.pop(name, None)


def short_name(status_name: str) -> str:
    """A status name without the node's namespace: ``"/t1_dyn0/dynamics_node: input"`` →
    ``"dynamics_node: input"`` (every node names its statuses after its full name)."""
    node, _, task = status_name.partition(": ")
    return f"{node.rsplit('/', 1)[-1]}: {task}"


def task_name(status_name: str) -> str:
    """A status name without the node's full name: ``"/t1/monitor_node: panda_link7"`` →
    ``"panda_link7"``."""
    return status_name.partition(": ")[2]


def unique_namespace(tag: str) -> str:
    return f"/t{os.getpid()}_{tag}{next(_counter)}"


def node_env() -> dict[str, str]:
    env = dict(os.environ)
    env["ROS_DOMAIN_ID"] = str(DOMAIN_ID)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.update(LOCAL_DISCOVERY)
    for name in DISCOVERY_REACH:
        env.pop(name, None)
    env["PYTHONUNBUFFERED"] = "1"
    env["RCUTILS_LOGGING_BUFFERED_STREAM"] = "0"
    return env


def param(name: str, value: Any) -> list[str]:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = "'" + value.replace("'", "''") + "'"
    elif isinstance(value, float):
        text = repr(value)
    else:
        text = str(value)
    return ["-p", f"{name}:={text}"]


class NodeProcess:
    """One node executable as a subprocess, output captured in a log file."""

    def __init__(self, executable: str, namespace: str, log_dir: Path,
                 parameters: dict[str, Any] | None = None, extra: list[str] | None = None):
        self.namespace = namespace
        self.name = executable
        command = [sys.executable, "-m", f"robot_tv_dynamics.ros.{executable}", "--ros-args",
                   "-r", f"__ns:={namespace}", "-r", f"/diagnostics:={namespace}/diagnostics"]
        for key, value in (parameters or {}).items():
            command += param(key, value)
        command += extra or []
        self.log_path = log_dir / f"{executable}{namespace.replace('/', '_')}.log"
        self._log = open(self.log_path, "w")  # closed in stop()
        self.process = subprocess.Popen(command, env=node_env(), stdout=self._log,
                                        stderr=subprocess.STDOUT)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text()

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout)

    def stop(self, timeout: float = 10.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode


class RosClient:
    """A node in the test process, on the private domain, with its own executor."""

    def __init__(self) -> None:
        local_discovery()
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN_ID)
        self.node = rclpy.create_node(f"tester_{os.getpid()}", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def collect(self, msg_type: Any, topic: str, qos: QoSProfile = RELIABLE) -> list[Any]:
        """Subscribe and return the list the messages are appended to."""
        received: list[Any] = []
        self.node.create_subscription(msg_type, topic, received.append, qos)
        return received

    def publisher(self, msg_type: Any, topic: str, qos: QoSProfile = RELIABLE) -> Any:
        return self.node.create_publisher(msg_type, topic, qos)

    def spin_until(self, predicate: Callable[[], Any], timeout: float,
                   what: str = "condition", process: NodeProcess | None = None) -> Any:
        """Spin until ``predicate()`` is truthy; fail with ``what`` after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            result = predicate()
            if result:
                return result
            if process is not None and not process.alive:
                raise AssertionError(f"{process.name} died while waiting for {what}:\n"
                                     f"{process.output()[-3000:]}")
            if time.monotonic() > deadline:
                extra = f"\n{process.output()[-3000:]}" if process is not None else ""
                raise AssertionError(f"timed out after {timeout} s waiting for {what}{extra}")
            self.executor.spin_once(timeout_sec=0.02)

    def publish_until(self, publish: Callable[[], None], predicate: Callable[[], Any],
                      timeout: float, what: str = "condition",
                      process: NodeProcess | None = None, period: float = 0.25) -> Any:
        """Call ``publish()`` every ``period`` s until ``predicate()`` is truthy.

        For best-effort topics: a writer can see the reader matched before the reader
        has matched the writer, and the samples sent in between are dropped, so a
        publish-once-then-wait test depends on discovery timing.
        """
        due = [0.0]

        def check() -> Any:
            result = predicate()
            if not result and time.monotonic() >= due[0]:
                publish()
                due[0] = time.monotonic() + period
            return result
        return self.spin_until(check, timeout, what, process)

    def call_idempotent(self, client: Any, request: Any, timeout: float,
                        process: NodeProcess | None = None, resend: float = 3.0) -> Any:
        """The answer to ``request``, sent again every ``resend`` s until one comes.

        For requests that may be repeated (a list, a get): Fast DDS drops a service
        response sent before the server has matched the client's response reader
        (rmw_send_response times out after 100 ms: "client will not receive response"),
        and a client that sent once would wait for it forever.
        """
        pending = [client.call_async(request)]
        due = [time.monotonic() + resend]

        def check() -> bool:
            if pending[0].done():
                return True
            if time.monotonic() >= due[0]:
                client.remove_pending_request(pending[0])
                pending[0] = client.call_async(request)
                due[0] = time.monotonic() + resend
            return False
        self.spin_until(check, timeout, f"{client.srv_name} answer", process)
        return pending[0].result()

    def wait_readers_matched(self, topics: list[str], timeout: float,
                             process: NodeProcess | None = None) -> None:
        """Spin until every subscription of this client on each of ``topics`` has matched
        a publisher: a message a node publishes before then never reaches it."""
        readers = [s for s in self.node.subscriptions if s.topic_name in topics]
        missing = set(topics) - {s.topic_name for s in readers}
        if missing:
            raise ValueError(f"this client does not subscribe {sorted(missing)}")
        self.spin_until(lambda: all(s.get_publisher_count() > 0 for s in readers), timeout,
                        f"a publisher on each of {topics}", process)

    def spin_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.01)

    def wait_matched(self, publishers: list[Any], timeout: float,
                     process: NodeProcess | None = None) -> None:
        self.spin_until(lambda: all(p.get_subscription_count() > 0 for p in publishers),
                        timeout, "the node's subscriptions to match", process)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
