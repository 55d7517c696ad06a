"""The DDS side of ``robot-tv-dynamics demo``: bring-up, recording, progress, the run.

:func:`run` starts the nodes through :mod:`robot_tv_dynamics.ros.bringup` (one log file
per process in ``DIR/logs``): ``dynamics_node``, ``markers_node`` and the four monitors
(the true Θ and each estimate) in one ``monitor_group`` process (``logs/monitors.log``),
and, once they log "ready" and the recorder has matched each of their recorded topics,
``sim_node``. It records every topic of :data:`~robot_tv_dynamics.demo.RECORDED` into
``DIR/run.mcap`` with an rclpy subscription per topic, made before any node starts (the
raw CDR bytes as received, written by :class:`robot_tv_dynamics.bags.McapWriter`; only
the stamp of joint_states is read, for the progress) while drawing a progress bar, then
hands the bag to the core (:func:`robot_tv_dynamics.demo.write_results`) for
``summary.json`` and ``report.png``. What the demo shows: :mod:`robot_tv_dynamics.demo`
and docs/demo.md.

The CLI imports this module only when the demo runs, so that the other subcommands
never load rclpy.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future

from robot_tv_dynamics.bags import McapWriter
from robot_tv_dynamics.demo import (
    ESTIMATORS,
    MARKERS_PARAMETERS,
    MONITOR_PARAMETERS,
    OBSERVER_PARAMETERS,
    RECORDED,
    STAMPED_ONLY,
    layout_file,
    scenario_file,
    status_prefix,
    write_results,
)
from robot_tv_dynamics.demo.report import console_summary
from robot_tv_dynamics.exceptions import BringUpError, DemoError, RobotTvDynamicsError
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.paths import example_robot_urdf
from robot_tv_dynamics.ros.bringup import (
    BringUp,
    MonitorMember,
    monitor_group_command,
    node_command,
    use_discovery_profile,
    use_local_discovery,
)
from robot_tv_dynamics.ros.joint_state_cdr import header_stamp
from robot_tv_dynamics.ros.node_base import StopRequest, StopRequested, make_executor

#: Seconds the nodes get to exit after SIGINT before they are killed.
STOP_TIMEOUT = 5.0
#: Subscribers of joint_states in the demo: the recorder, dynamics_node, markers_node.
JOINT_STATES_SUBSCRIBERS = 3
#: Seconds the dynamics and monitor nodes get to log "ready" (γ, δ are computed first).
READY_TIMEOUT = 120.0
#: Topics published once and latched (TRANSIENT_LOCAL).
LATCHED = ("/simulation_info", "/robot_description")
#: The recorder's executor (``executor`` as the nodes' parameter takes it).
RECORDER_EXECUTOR = SimpleNamespace(executor="events")
#: Recorded topics of the nodes that start before the simulator (dynamics_node, the
#: monitors, markers_node): the simulator starts once the recorder has a publisher of each,
#: so that none of them misses the run's first samples to DDS discovery.
FROM_READY_NODES = (
    "/generalized_torques", "/generalized_terms", "/mass_matrix_bounds",
    "/external_torques", "/external_torques_classical",
    "/consistency_stamped", *(f"/estimates/{name}/consistency_stamped" for name in ESTIMATORS),
    "/inertia_markers", "/diagnostics")
#: Longest wait for those publishers [s]; then the demo goes on and names the missing ones.
MATCH_TIMEOUT = 15.0
#: The process (and log file) of the four monitors (a monitor_group).
MONITORS = "monitors"
#: What the monitor_group logs once every monitor is ready.
MONITORS_READY = "ready: all"


def monitor_members() -> list[MonitorMember]:
    """The demo's monitors: ``monitor_truth`` on Θ, ``monitor_<name>`` on each estimate.

    ``monitor_<name>`` watches the namespace ``estimates/<name>``, which is also its
    status prefix (:func:`robot_tv_dynamics.demo.status_prefix`).
    """
    return [MonitorMember("monitor_truth")] + [
        MonitorMember(f"monitor_{estimator}", status_prefix(estimator))
        for estimator in ESTIMATORS]


# ------------------------------------------------------------------------ bring-up
def bring_up(urdf: Path, scenario: Path, args: argparse.Namespace, logs: Path,
             before_sim: Callable[[], None] | None = None) -> BringUp:
    """Start the nodes of the demo; ``sim_node`` last, once the others are ready.

    ``before_sim`` runs once they are, just before ``sim_node`` starts (the recorder's
    wait for their publishers).

    Raises:
        BringUpError: a node exited or did not log "ready" in time (all are stopped).
    """
    running = BringUp(logs=logs)
    urdf_path = str(urdf)

    def start(name: str, command: list[str]) -> None:
        running.start(name, command, start_new_session=True)  # Ctrl-C reaches only us

    try:
        start("dynamics_node", node_command(
            "dynamics_node", urdf=urdf_path,
            parameters={"bounds_time_limit": 5.0, "jacobian_samples": 512,
                        "publish_bounds": True, **OBSERVER_PARAMETERS},
            remaps={"reference": "joint_accelerations"}))
        # the four monitors in one process (one interpreter, one DDS participant); each
        # estimate's statuses on the shared /diagnostics named "estimates/<name>: <body>"
        start(MONITORS, monitor_group_command(monitor_members(), urdf=urdf_path,
                                              parameters=MONITOR_PARAMETERS | STAMPED_ONLY))
        start("markers_node", node_command(
            "markers_node", urdf=urdf_path, parameters=MARKERS_PARAMETERS | STAMPED_ONLY,
            ros_args=["-p", f"estimates:=[{', '.join(ESTIMATORS)}]"]))
        # start the arm once the nodes (and the monitors) say "ready" (the dynamics node
        # computes γ, δ in the background when they are not cached)
        running.wait_for_output(("dynamics_node", "markers_node"), "ready",
                                timeout=READY_TIMEOUT)
        running.wait_for_output((MONITORS,), MONITORS_READY, timeout=READY_TIMEOUT)
        if before_sim is not None:
            before_sim()
        # subscribers of joint_states the simulator waits for: the recorder, the dynamics
        # node and the markers node (with fewer, DDS discovery may let it start without one)
        start("sim_node", node_command("sim_node", urdf=urdf_path, parameters={
            "loading": str(scenario), "duration": float(args.duration),
            "publish_rate": float(args.publish_rate),
            "seed": int(args.seed), "wait_for_subscribers": JOINT_STATES_SUBSCRIBERS,
            "wait_timeout": 60.0, "controller": sim_controller(args), **STAMPED_ONLY}))
    except BaseException:
        running.stop(STOP_TIMEOUT)
        raise
    return running


def sim_controller(args: argparse.Namespace) -> str:
    """sim_node's ``controller`` parameter for the demo's ``--controller`` (default adaptive)."""
    return str(getattr(args, "controller", None) or "adaptive")


def _failed(running: BringUp) -> list[str]:
    """Nodes other than sim_node that exited with an error."""
    return [name for name, p in running.processes.items()
            if p.poll() not in (None, 0) and name != "sim_node"]


# ------------------------------------------------------------------------ recording
class Recorder:
    """Subscribes (raw CDR) to every recorded topic and writes it to an MCAP bag.

    Attributes:
        counts: messages recorded per topic.
        sim_time: simulated time of the last joint_states [s].
        epoch: wall-clock stamp of simulated time 0 (from simulation_info) [s].
    """

    def __init__(self, node: Node, bag: Path) -> None:
        """Open the bag ``bag`` (a ``.mcap`` file) and subscribe ``node`` to every topic."""
        self.writer = McapWriter(bag)
        self.typestore = self.writer.typestore
        self.counts: dict[str, int] = {}
        self.sim_time = 0.0
        self.epoch: float | None = None
        self._subs = []
        for topic, msgtype in RECORDED.items():
            self.writer.add_topic(topic, msgtype)
            package, _, name = msgtype.replace("/msg/", "/").partition("/")
            cls = getattr(importlib.import_module(f"{package}.msg"), name)
            qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if topic in LATCHED
                             else DurabilityPolicy.VOLATILE)
            self._subs.append(node.create_subscription(
                cls, topic, self._callback(topic), qos, raw=True))

    def _callback(self, topic: str) -> Any:
        def record(data: bytes) -> None:
            self.writer.write(topic, time.time_ns(), data)
            self.counts[topic] = self.counts.get(topic, 0) + 1
            if topic == "/joint_states" and self.epoch is not None:
                stamp = header_stamp(data)  # the progress: no deserialization per sample
                if stamp is None:
                    msg: Any = self.typestore.deserialize_cdr(data, "sensor_msgs/msg/JointState")
                    stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)
                self.sim_time = stamp[0] + 1e-9 * stamp[1] - self.epoch
            elif topic == "/simulation_info":
                info: Any = self.typestore.deserialize_cdr(data, "std_msgs/msg/String")
                self.epoch = float(json.loads(info.data)["epoch"])
        return record

    def unmatched(self, topics: tuple[str, ...]) -> list[str]:
        """The ``topics`` (recorded ones) of which this recorder has no publisher yet."""
        counts = {sub.topic_name: sub.get_publisher_count() for sub in self._subs}
        return [topic for topic in topics if counts.get(topic, 0) == 0]

    def close(self, keep: bool = True) -> None:
        """Close the bag: put it in place, or (``keep`` False) delete what was recorded."""
        if keep:
            self.writer.close()
        else:
            self.writer.discard()


class RecorderSession:
    """The recorder's rclpy context, node, :class:`Recorder` and executor.

    Made before the nodes start, so that its subscriptions are discovered while they come
    up; :meth:`close` closes the bag.
    """

    def __init__(self, bag: Path) -> None:
        """Initialise rclpy and open the bag ``bag`` (a ``.mcap`` file)."""
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        try:
            self.node = rclpy.create_node("demo_recorder")
            self.recorder = Recorder(self.node, bag)
            # one executor for the whole recording (rclpy.spin_once adds and removes the
            # node, rebuilding the wait set of its ~30 subscriptions, on every call); the
            # EventsExecutor where rclpy has it, each call running every callback due
            # within 20 ms
            self.executor = make_executor(RECORDER_EXECUTOR)
            self.executor.add_node(self.node)
        except BaseException:
            rclpy.try_shutdown()
            raise

    def spin(self, seconds: float = 0.02) -> None:
        """Run every callback due within ``seconds``."""
        self.executor.spin_until_future_complete(Future(), timeout_sec=seconds)

    def wait_for_publishers(self, topics: tuple[str, ...] = FROM_READY_NODES,
                            timeout: float = MATCH_TIMEOUT) -> list[str]:
        """Spin until the recorder has a publisher of each of ``topics``.

        Returns those it still lacks after ``timeout`` seconds (and names them on stderr).
        """
        deadline = time.monotonic() + timeout
        missing = self.recorder.unmatched(topics)
        while missing and time.monotonic() < deadline:
            self.spin(0.05)
            missing = self.recorder.unmatched(topics)
        if missing:
            print(f"[demo] warning: after {timeout:g} s the recorder has no publisher of "
                  f"{', '.join(missing)}; the run starts anyway and the bag may lack their "
                  "first samples or all of them", file=sys.stderr)
        return missing

    def close(self, keep: bool = True) -> None:
        """Close the bag (``keep``: put it in place, else delete it), the node and the context.

        Raises:
            RecordingError: the bag was kept but no MCAP file was written.
        """
        try:
            self.recorder.close(keep)
        finally:
            self.executor.shutdown(timeout_sec=0.0)
            self.node.destroy_node()
            rclpy.try_shutdown()


def _progress(fraction: float, sim_time: float, duration: float, rtf: float) -> None:
    width = 30
    filled = int(round(width * min(max(fraction, 0.0), 1.0)))
    sys.stderr.write(f"\r[demo] [{'#' * filled}{'.' * (width - filled)}] "
                     f"{sim_time:5.2f}/{duration:.2f} s simulated, real-time factor {rtf:4.2f}")
    sys.stderr.flush()


def record(running: BringUp, session: RecorderSession, args: argparse.Namespace,
           stop: StopRequest | None = None) -> tuple[dict[str, int], float]:
    """Spin the recorder until the simulator exits; returns (counts, wall seconds).

    The caller closes ``session`` (the bag) afterwards.

    A signal recorded in ``stop`` (SIGINT, SIGTERM) ends the recording between two
    ``spin_once`` calls; the caller then stops the nodes.

    Raises:
        DemoError: a node failed, or the simulator did not finish in time.
    """
    stop = stop if stop is not None else StopRequest()
    stop.starting = False
    recorder = session.recorder
    sim = running.processes["sim_node"]
    start = None
    last_draw = 0.0
    tty = sys.stderr.isatty() and not args.no_progress
    next_line = 0.0
    deadline = time.monotonic() + 120.0 + 10.0 * args.duration
    while sim.poll() is None and not stop.requested:
        session.spin()
        now = time.monotonic()
        if recorder.epoch is not None and start is None:
            start = now
        if now > deadline:
            raise DemoError("the simulator did not finish in time (see logs/sim_node.log)")
        failed = _failed(running)
        if failed:
            raise DemoError(f"{', '.join(failed)} exited early (see {running.logs})")
        if start is not None and not args.no_progress:
            elapsed = max(now - start, 1e-6)
            fraction = recorder.sim_time / args.duration
            if tty and now - last_draw > 0.1:
                last_draw = now
                _progress(fraction, recorder.sim_time, args.duration,
                          recorder.sim_time / elapsed)
            elif not tty and fraction >= next_line:
                next_line += 0.25
                _progress(fraction, recorder.sim_time, args.duration,
                          recorder.sim_time / elapsed)
                sys.stderr.write("\n")
    wall = time.monotonic() - (start if start is not None else time.monotonic())
    end = time.monotonic() + 0.5  # the last messages in flight
    while time.monotonic() < end:
        session.spin()
    if tty:
        _progress(1.0, recorder.sim_time, args.duration,
                  recorder.sim_time / max(wall, 1e-6))
        sys.stderr.write("\n")
    if stop.requested:
        return dict(recorder.counts), 0.0
    if sim.returncode != 0:
        raise DemoError(
            f"sim_node failed (exit {sim.returncode}); see {running.log('sim_node')}")
    return dict(recorder.counts), wall


# ------------------------------------------------------------------------ main

def run(args: argparse.Namespace) -> int:
    """Run the demo; returns the process exit code (0 on success)."""
    out = Path(args.out).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    if not (math.isfinite(args.duration) and args.duration > 0):
        print(f"[demo] error: --duration must be > 0, got {args.duration}", file=sys.stderr)
        return 2
    try:
        urdf = Path(args.urdf).expanduser() if args.urdf else example_robot_urdf()
        model = RobotModel.from_urdf(urdf)
        setup = scenario_file(args.scenario, args.link, out, model, urdf.read_text(),
                              float(args.duration))
        scenario = setup.path
    except RobotTvDynamicsError as error:
        print(f"[demo] error: {error}", file=sys.stderr)
        return 2
    for stale in (out / ".bag", out / "run.mcap"):
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    print(f"[demo] {Path(urdf).name}, scenario {args.scenario} ({scenario}), "
          f"{args.duration:g} s; ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}; "
          f"node logs in {logs}", file=sys.stderr)
    print(f"[demo] {setup.describe()}", file=sys.stderr)
    use_local_discovery()  # the demo is whole on this host: its own range, not the user's
    profile = use_discovery_profile()  # before this process's first participant
    if profile is not None:
        print(f"[demo] Fast DDS discovery profile {profile} (none was set)", file=sys.stderr)
    # the recorder subscribes first: its readers are discovered while the nodes come up
    session = RecorderSession(out / "run.mcap")
    stop = StopRequest()  # SIGINT/SIGTERM/SIGHUP: raised during start-up, then recorded
    stop.install()
    recorded, lost = False, None
    try:
        try:
            running = bring_up(urdf, scenario, args, logs,
                               before_sim=session.wait_for_publishers)
        except BringUpError as error:
            print(f"[demo] error: {error}", file=sys.stderr)
            return 1
        except StopRequested:
            print(f"\n[demo] interrupted ({stop.reason}) during start-up", file=sys.stderr)
            return 0
        try:
            counts, wall = record(running, session, args, stop)
        except RobotTvDynamicsError as error:  # DemoError: a node failed, a time-out
            print(f"\n[demo] error: {error}", file=sys.stderr)
            return 1
        finally:
            stop.starting = False
            running.stop(STOP_TIMEOUT)
        recorded = not stop.requested
    finally:
        try:  # run.mcap only for a whole recording
            session.close(keep=recorded)
        except RobotTvDynamicsError as error:  # RecordingError: no MCAP file was written
            lost = error
    if stop.requested:
        print(f"\n[demo] interrupted ({stop.reason}): the nodes are stopped, no report",
              file=sys.stderr)
        return 0
    if lost is not None:
        print(f"[demo] error: {lost}", file=sys.stderr)
        return 1
    try:
        data = write_results(out, model, args.scenario, counts, wall, setup.as_dict())
    except (RobotTvDynamicsError, KeyError, ValueError, IndexError) as error:
        print(f"[demo] error while analysing {out / 'run.mcap'}: {error}", file=sys.stderr)
        return 1
    for line in console_summary(data):
        print(f"[demo] {line}", file=sys.stderr)
    print(f"[demo] wrote {out / 'run.mcap'}, {out / 'report.png'}, {out / 'summary.json'}; "
          f"Foxglove: open run.mcap and import the layout {layout_file()}", file=sys.stderr)
    return 0
