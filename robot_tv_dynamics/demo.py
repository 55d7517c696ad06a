"""``robot-tv-dynamics demo``: the simulated arm, estimators, dynamics and monitors over DDS.

Brings up, as separate processes talking over real DDS (no launch_ros needed):

- ``sim_node``: the Panda (or ``--urdf``) integrating eq. (39) under a loading process,
  with a computed-torque controller on the *projected* payload estimate and the
  *classical* estimator running open loop on the same noisy torque measurements;
- ``dynamics_node``: τ of eq. (39) term by term and the mass-matrix bounds for the true
  Θ(t) (q̈ from the simulator's ``joint_accelerations``);
- three ``monitor_node`` instances: on the true Θ(t) (``/diagnostics``) and on each
  estimate (``estimates/<name>/diagnostics``: /diagnostics remapped, because the
  per-body statuses are named by body only).

It records every topic into ``DIR/run.mcap`` (rosbag2 MCAP, readable by rosbags and
Foxglove) while showing a progress bar, then reads the bag back with rosbags and writes
``DIR/report.png`` and ``DIR/summary.json``. Alarms in the summary are the ERROR
transitions of :class:`~robot_tv_dynamics.monitor.ConsistencyMonitor` replayed on the
recorded estimates with the monitor nodes' settings (deterministic, in simulated time);
the alarms the live monitor nodes raised are listed beside them (``live_alarms``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inertia import Array, pseudo_inertia
from robot_tv_dynamics.loading import KINDS, load_loading_process
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.monitor import ConsistencyMonitor, Level, MonitorConfig
from robot_tv_dynamics.simulation import DEMO_MARGIN_FRACTION, example_robot_urdf

#: Scenarios with a file in config/loading/.
SCENARIOS = ("fill", "drain", "grasp")
#: The estimators, as named in topics and the summary.
ESTIMATORS = ("classical", "projected")
#: Topics recorded into run.mcap (relative names resolve to the root namespace).
RECORDED = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/reference_joint_states": "sensor_msgs/msg/JointState",
    "/joint_accelerations": "trajectory_msgs/msg/JointTrajectory",
    "/inertial_parameters": "std_msgs/msg/Float64MultiArray",
    "/inertial_parameter_rates": "std_msgs/msg/Float64MultiArray",
    "/psi": "std_msgs/msg/Float64MultiArray",
    "/psi_rates": "std_msgs/msg/Float64MultiArray",
    "/estimates/classical/inertial_parameters": "std_msgs/msg/Float64MultiArray",
    "/estimates/projected/inertial_parameters": "std_msgs/msg/Float64MultiArray",
    "/generalized_torques": "sensor_msgs/msg/JointState",
    "/generalized_terms": "std_msgs/msg/Float64MultiArray",
    "/mass_matrix_bounds": "std_msgs/msg/Float64MultiArray",
    "/consistency": "std_msgs/msg/Float64MultiArray",
    "/estimates/classical/consistency": "std_msgs/msg/Float64MultiArray",
    "/estimates/projected/consistency": "std_msgs/msg/Float64MultiArray",
    "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",
    "/estimates/classical/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",
    "/estimates/projected/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",
    "/simulation_info": "std_msgs/msg/String",
    "/robot_description": "std_msgs/msg/String",
}
#: Monitor settings shared by the monitor nodes and the replay (see docs/demo.md).
MONITOR_PARAMETERS = {"margin_fraction": DEMO_MARGIN_FRACTION, "publish_rate": 10.0}


class DemoError(RobotTvDynamicsError):
    """The demo could not run (a node failed, nothing was recorded, ...)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the demo's options to ``parser``."""
    parser.add_argument(
        "--scenario", default="fill",
        help=f"loading process: one of {', '.join(SCENARIOS)} (config/loading/*.yaml) or a "
             "YAML file in that format (default: fill)")
    parser.add_argument("--duration", type=float, default=8.0,
                        help="simulated time [s] (default: 8)")
    parser.add_argument("--out", default="demo_output",
                        help="output directory for run.mcap, report.png, summary.json "
                             "(default: ./demo_output)")
    parser.add_argument("--urdf", default="",
                        help="URDF of the arm (default: the Panda of example-robot-data)")
    parser.add_argument("--link", default="",
                        help="attach the load to this URDF link instead of the scenario's")
    parser.add_argument("--seed", type=int, default=0, help="seed of the torque-sensor noise")
    parser.add_argument("--publish-rate", type=float, default=50.0,
                        help="rate of the simulator's topics [Hz] (default: 50; the "
                             "simulation itself runs at 1 kHz)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_parser(subparsers: Any) -> None:
    """Register ``demo`` on an ``argparse`` subparsers action (cli.py's registry)."""
    parser = subparsers.add_parser(
        "demo", help="simulated arm under payload loading, estimators, dynamics and monitor "
                     "nodes over DDS; writes run.mcap, report.png, summary.json (default)",
        description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.set_defaults(handler=run)


# ------------------------------------------------------------------------ bring-up
def _scenario_file(scenario: str, link: str, out: Path) -> Path:
    from robot_tv_dynamics.ros.sim_node import package_config_dir

    path = (package_config_dir() / "loading" / f"{scenario}.yaml" if scenario in KINDS
            else Path(scenario).expanduser())
    if not path.is_file():
        raise InvalidInputError(
            "--scenario", f'"{scenario}" is neither one of {list(SCENARIOS)} nor a file')
    if not link:
        load_loading_process(path)  # fail early with the file's own message
        return path.resolve()
    import yaml

    data = yaml.safe_load(path.read_text())
    data["link"] = link
    if data.get("process") == "timeline" and "file" in data:
        data["file"] = str((path.parent / data["file"]).resolve())
    target = out / "scenario.yaml"
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    load_loading_process(target)
    return target


def _node_command(module: str, params: dict[str, Any], remaps: dict[str, str]) -> list[str]:
    command = [sys.executable, "-m", f"robot_tv_dynamics.ros.{module}", "--ros-args"]
    for name, value in params.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        command += ["-p", f"{name}:={text}"]
    for old, new in remaps.items():
        command += ["-r", f"{old}:={new}"]
    return command


@dataclass
class _Processes:
    """The node processes of a run, with their log files."""

    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str, command: list[str]) -> None:
        log = (self.logs / f"{name}.log").open("wb")
        self.procs[name] = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy(),
            start_new_session=True)

    def failed(self) -> list[str]:
        return [name for name, p in self.procs.items()
                if p.poll() not in (None, 0) and name != "sim_node"]

    def stop(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 5.0
        for p in self.procs.values():
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _bring_up(urdf: Path, scenario: Path, args: argparse.Namespace, logs: Path) -> _Processes:
    procs = _Processes(logs)
    common = {"urdf_path": str(urdf)}
    procs.start("dynamics_node", _node_command(
        "dynamics_node",
        {**common, "bounds_time_limit": 5.0, "jacobian_samples": 512, "publish_bounds": True},
        {"reference": "joint_accelerations"}))
    procs.start("monitor_truth", _node_command(
        "monitor_node", {**common, **MONITOR_PARAMETERS}, {"__node": "monitor_truth"}))
    for name in ESTIMATORS:
        ns = f"estimates/{name}"
        procs.start(f"monitor_{name}", _node_command(
            "monitor_node", {**common, **MONITOR_PARAMETERS}, {
                "__node": f"monitor_{name}",
                "inertial_parameters": f"{ns}/inertial_parameters",
                "inertial_parameter_rates": f"{ns}/inertial_parameter_rates",
                "consistency": f"{ns}/consistency",
                "/diagnostics": f"/{ns}/diagnostics"}))
    # the dynamics node computes the Jacobian extremes γ, δ before it takes samples: start
    # the arm once it (and the monitors) say "ready"
    deadline = time.monotonic() + 120.0
    for name in ("dynamics_node", "monitor_truth", *(f"monitor_{e}" for e in ESTIMATORS)):
        log = logs / f"{name}.log"
        while "ready" not in log.read_text(errors="replace"):
            if procs.procs[name].poll() is not None or time.monotonic() > deadline:
                procs.stop()
                raise DemoError(f"{name} did not start; see {log}")
            time.sleep(0.1)
    # subscribers of joint_states the simulator waits for: the recorder, the dynamics node
    procs.start("sim_node", _node_command("sim_node", {
        **common, "loading": str(scenario), "duration": float(args.duration),
        "publish_rate": float(args.publish_rate),
        "seed": int(args.seed), "wait_for_subscribers": 2, "wait_timeout": 60.0}, {}))
    return procs


# ------------------------------------------------------------------------ recording
class _Recorder:
    """Subscribes (raw CDR) to every recorded topic and writes it to an MCAP bag."""

    def __init__(self, node: Any, bag_dir: Path) -> None:
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        from robot_tv_dynamics.ros import conversions  # noqa: F401 - message packages load

        self.typestore = get_typestore(Stores.ROS2_JAZZY)
        self.writer = Writer(bag_dir, version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        self.counts: dict[str, int] = {}
        self.sim_time = 0.0
        self.epoch: float | None = None
        self._subs = []
        for topic, msgtype in RECORDED.items():
            connection = self.writer.add_connection(topic, msgtype, typestore=self.typestore)
            module, _, name = msgtype.replace("/msg/", "/").partition("/")
            cls = getattr(__import__(f"{module}.msg", fromlist=[name]), name)
            latched = topic in ("/simulation_info", "/robot_description")
            qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                             else DurabilityPolicy.VOLATILE)
            self._subs.append(node.create_subscription(
                cls, topic, self._callback(topic, connection), qos, raw=True))

    def _callback(self, topic: str, connection: Any) -> Any:
        def record(data: bytes) -> None:
            self.writer.write(connection, time.time_ns(), data)
            self.counts[topic] = self.counts.get(topic, 0) + 1
            if topic == "/joint_states" and self.epoch is not None:
                msg: Any = self.typestore.deserialize_cdr(data, "sensor_msgs/msg/JointState")
                self.sim_time = _stamp(msg) - self.epoch
            elif topic == "/simulation_info":
                info: Any = self.typestore.deserialize_cdr(data, "std_msgs/msg/String")
                text = info.data
                self.epoch = float(json.loads(text)["epoch"])
        return record

    def close(self) -> None:
        self.writer.close()


def _progress(fraction: float, sim_time: float, duration: float, rtf: float) -> None:
    width = 30
    filled = int(round(width * min(max(fraction, 0.0), 1.0)))
    sys.stderr.write(f"\r[demo] [{'#' * filled}{'.' * (width - filled)}] "
                     f"{sim_time:5.2f}/{duration:.2f} s simulated, real-time factor {rtf:4.2f}")
    sys.stderr.flush()


def _record(procs: _Processes, bag_dir: Path, args: argparse.Namespace) -> tuple[dict, float]:
    """Spin the recorder until the simulator exits; returns (counts, wall seconds)."""
    import rclpy

    rclpy.init()
    node = rclpy.create_node("demo_recorder")
    recorder = _Recorder(node, bag_dir)
    sim = procs.procs["sim_node"]
    start = None
    last_draw = 0.0
    tty = sys.stderr.isatty() and not args.no_progress
    next_line = 0.0
    try:
        deadline = time.monotonic() + 120.0 + 10.0 * args.duration
        while sim.poll() is None:
            rclpy.spin_once(node, timeout_sec=0.02)
            now = time.monotonic()
            if recorder.epoch is not None and start is None:
                start = now
            if now > deadline:
                raise DemoError("the simulator did not finish in time (see logs/sim_node.log)")
            failed = procs.failed()
            if failed:
                raise DemoError(f"{', '.join(failed)} exited early (see {procs.logs})")
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
            rclpy.spin_once(node, timeout_sec=0.02)
        if tty:
            _progress(1.0, recorder.sim_time, args.duration,
                      recorder.sim_time / max(wall, 1e-6))
            sys.stderr.write("\n")
    finally:
        recorder.close()
        node.destroy_node()
        rclpy.try_shutdown()
    if sim.returncode != 0:
        raise DemoError(f"sim_node failed (exit {sim.returncode}); see {procs.logs}/sim_node.log")
    return dict(recorder.counts), wall


# ------------------------------------------------------------------------ analysis
@dataclass
class Recording:
    """The recorded run, as arrays in simulated time (read back from run.mcap)."""

    info: dict[str, Any]
    t: Array                      # joint_states sample times [s]
    q: Array
    qd: Array
    tau: Array
    t_ref: Array
    q_ref: Array
    theta: tuple[Array, Array]    # (times, (K, N, 10)) of the true Θ
    estimates: dict[str, tuple[Array, Array]]
    terms: tuple[Array, Array]    # (times, (K, 7, nv)) generalized_terms
    bounds: tuple[Array, Array, list[str]]
    diagnostics: dict[str, list[tuple[float, str, int, str]]]
    wall_span: float


def _stamp(msg: Any) -> float:
    return float(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)


def read_recording(path: Path) -> Recording:
    """Read run.mcap with rosbags and align every topic to simulated time.

    Messages with a header use their stamp; Float64MultiArray messages (no header) take
    the simulated time of the joint_states sample whose receive time is closest (the
    simulator publishes both in the same tick, 10 ms apart from the next).
    """
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    rows: dict[str, list[tuple[int, Any]]] = {}
    with AnyReader([path], default_typestore=store) as reader:
        for connection, log_time, raw in reader.messages():
            rows.setdefault(connection.topic, []).append(
                (log_time, reader.deserialize(raw, connection.msgtype)))
    if not rows.get("/simulation_info") or not rows.get("/joint_states"):
        raise DemoError(f"{path} has no simulation_info or joint_states")
    info = json.loads(rows["/simulation_info"][-1][1].data)
    epoch = float(info["epoch"])
    joint = rows["/joint_states"]
    t = np.array([_stamp(m) - epoch for _, m in joint])
    log = np.array([lt for lt, _ in joint], dtype=np.float64)

    def sim_time(log_time: int) -> float:
        k = int(np.clip(np.searchsorted(log, log_time), 1, len(log) - 1))
        k = k - 1 if abs(log[k - 1] - log_time) <= abs(log[k] - log_time) else k
        return float(t[k])

    def arrays(topic: str) -> tuple[Array, Array]:
        items = rows.get(topic, [])
        times = np.array([sim_time(lt) for lt, _ in items])
        values = [np.asarray(m.data) for _, m in items]
        shape = [d.size for d in items[0][1].layout.dim] if items else [0]
        return times, np.array(values).reshape([len(values), *shape])

    ref = rows.get("/reference_joint_states", [])
    diagnostics: dict[str, list[tuple[float, str, int, str]]] = {}
    for source, topic in (("truth", "/diagnostics"),
                          ("classical", "/estimates/classical/diagnostics"),
                          ("projected", "/estimates/projected/diagnostics")):
        diagnostics[source] = [
            (sim_time(lt), s.name, int(s.level[0] if isinstance(s.level, (bytes, bytearray))
                                       else s.level), s.message)
            for lt, m in rows.get(topic, []) for s in m.status]
    bounds_rows = rows.get("/mass_matrix_bounds", [])
    labels = ([lab for d in bounds_rows[0][1].layout.dim for lab in d.label.split(":", 1)[-1]
               .split(",")] if bounds_rows else [])
    return Recording(
        info=info, t=t, q=np.array([m.position for _, m in joint]),
        qd=np.array([m.velocity for _, m in joint]),
        tau=np.array([m.effort for _, m in joint]),
        t_ref=np.array([_stamp(m) - epoch for _, m in ref]),
        q_ref=np.array([m.position for _, m in ref]).reshape(len(ref), -1),
        theta=arrays("/inertial_parameters"),
        estimates={name: arrays(f"/estimates/{name}/inertial_parameters")
                   for name in ESTIMATORS},
        terms=arrays("/generalized_terms"),
        bounds=(*arrays("/mass_matrix_bounds"), labels),
        diagnostics=diagnostics,
        wall_span=(log[-1] - log[0]) * 1e-9 if len(log) > 1 else 0.0,
    )


def margins_and_sizes(theta: Array) -> tuple[Array, Array]:
    """μ_l = λ_min(f(Φ_l)) and ν_l = λ_max(f(Φ_l)) for every row of Θ (N, 10)."""
    values = np.linalg.eigvalsh(pseudo_inertia(theta))
    return values[:, 0].copy(), values[:, -1].copy()


def _first(times: Array, mask: npt.NDArray[np.bool_]) -> float | None:
    index = np.flatnonzero(mask)
    return float(times[index[0]]) if index.size else None


def analyse(rec: Recording, model: RobotModel, gamma: float | None) -> dict[str, Any]:
    """Everything the summary and the report need (see the module docstring)."""
    q_at = {float(round(t, 6)): k for k, t in enumerate(rec.t)}

    def q_for(t: float) -> Array:
        k = q_at.get(float(round(t, 6)))
        if k is None:
            k = int(np.argmin(np.abs(rec.t - t)))
        return np.asarray(rec.q[k])

    body = int(rec.info.get("payload_body") or 0)
    t_theta, theta = rec.theta
    mu_true = np.array([margins_and_sizes(th)[0] for th in theta])
    nu_true = np.array([margins_and_sizes(th)[1] for th in theta])
    lam_true = np.array([np.linalg.eigvalsh(model.mass_matrix(q_for(t), th))[0]
                         for t, th in zip(t_theta, theta, strict=True)])
    out: dict[str, Any] = {
        "body": body, "t_theta": t_theta, "mu_true": mu_true, "nu_true": nu_true,
        "lam_true": lam_true, "estimators": {}}
    config = MonitorConfig(margin_fraction=DEMO_MARGIN_FRACTION)
    for name, (t_hat, theta_hat) in rec.estimates.items():
        monitor = ConsistencyMonitor(model.body_names, model.theta_nominal, config)
        alarms: list[dict[str, Any]] = []
        warnings: list[dict[str, Any]] = []
        mus, lams = [], []
        for t, th in zip(t_hat, theta_hat, strict=True):
            for transition in monitor.update(float(t), th):
                entry = {"t": round(float(t), 4), "body": transition.name,
                         "kind": "; ".join(transition.reasons) or transition.level.name}
                if transition.level == Level.ERROR:
                    alarms.append(entry)
                elif transition.level == Level.WARN:
                    warnings.append(entry)
            mus.append(monitor.mu.copy())
            lams.append(np.linalg.eigvalsh(model.mass_matrix(q_for(t), th))[0])
        mu_hat, lam_hat = np.array(mus), np.array(lams)
        inf_mu = mu_hat.min(axis=0) if len(mu_hat) else np.full(model.n_bodies, np.nan)
        alpha1 = None if gamma is None else float(np.min(inf_mu) * gamma)
        first_alarm = alarms[0]["t"] if alarms else None
        crossing = _first(t_hat, lam_hat <= 0.0)
        lead = (None if first_alarm is None or crossing is None
                else round(crossing - float(first_alarm), 4))
        out["estimators"][name] = {
            "t": t_hat, "mu": mu_hat, "lam": lam_hat, "epsilon": monitor.epsilon.copy(),
            "alarms": alarms, "warnings": warnings, "alpha1": alpha1,
            "first_nonpositive_lambda_min_M_hat_t": crossing, "lead_time_s": lead,
            "min_lambda_min_M_hat": float(lam_hat.min()) if lam_hat.size else None,
            "inf_mu": inf_mu,
        }
    # tracking error of the arm joints (revolute)
    arm = ~np.asarray(model.joint_limits.prismatic)
    if rec.t_ref.size:
        q_ref = np.array([np.interp(rec.t, rec.t_ref, rec.q_ref[:, j]) for j in
                          range(model.nv)]).T
        error = (q_ref - rec.q)[:, arm]
        out["tracking_error"] = np.linalg.norm(error, axis=1)
        out["tracking_rms_per_joint"] = np.sqrt(np.mean(error**2, axis=0))
        out["tracking_rms"] = float(np.sqrt(np.mean(error**2)))
    else:
        out["tracking_error"] = np.zeros_like(rec.t)
        out["tracking_rms_per_joint"] = np.zeros(int(arm.sum()))
        out["tracking_rms"] = None
    return out


def _gamma(rec: Recording) -> tuple[float | None, str]:
    """γ = inf_q λ_min(JᵀJ) as the dynamics node computed it, and how (sampled/certified)."""
    times, values, labels = rec.bounds
    if not len(values) or "gamma" not in labels:
        return None, "unavailable"
    last = np.asarray(values[-1]).ravel()
    gamma = float(last[labels.index("gamma")])
    certified = "certified" in labels and last[labels.index("certified")] > 0.5
    return gamma, "certified" if certified else "sampled"


def summary(rec: Recording, result: dict[str, Any], model: RobotModel, scenario: str,
            gamma_method: str, counts: dict[str, int], wall: float) -> dict[str, Any]:
    """The summary.json contents."""
    duration = float(rec.t[-1] - rec.t[0]) if rec.t.size > 1 else 0.0
    wall = rec.wall_span if rec.wall_span > 0 else wall  # first to last joint_states
    out: dict[str, Any] = {
        "scenario": scenario,
        "duration_s": round(duration, 4),
        "real_time_factor": round(duration / wall, 3) if wall > 0 else None,
        "process": rec.info.get("process"),
        "payload_body": model.body_names[result["body"]],
        "gamma_inf_lambda_min_JtJ": None if (g := _gamma(rec)[0]) is None else g,
        "gamma_method": gamma_method,
        "bodies": [
            {"name": name, "inf_mu": float(result["mu_true"][:, l].min()),
             "sup_nu": float(result["nu_true"][:, l].max())}
            for l, name in enumerate(model.body_names)],
        "min_lambda_min_M_true": float(result["lam_true"].min()),
        "estimators": {},
        "tracking_rms_rad": result["tracking_rms"],
        "tracking_rms_per_joint_rad": [float(v) for v in result["tracking_rms_per_joint"]],
        "messages": counts,
        "settings": {key: rec.info.get(key) for key in (
            "rate", "publish_rate", "estimator_rate", "forgetting", "torque_noise_std",
            "epsilon_projection", "beta_projection")} | {
            "monitor_margin_fraction": DEMO_MARGIN_FRACTION},
    }
    for name, est in result["estimators"].items():
        live = sorted({(round(t, 3), body, message) for t, body, level, message
                       in rec.diagnostics.get(name, []) if level == int(Level.ERROR)})
        first_live: dict[str, tuple[float, str]] = {}
        for t, body, message in live:
            first_live.setdefault(body, (t, message))
        out["estimators"][name] = {
            "alarms": est["alarms"],
            "warnings": est["warnings"],
            "live_alarms": [{"t": t, "body": body, "kind": message}
                            for body, (t, message) in sorted(first_live.items(),
                                                             key=lambda kv: kv[1][0])],
            "min_lambda_min_M_hat": est["min_lambda_min_M_hat"],
            "alpha1": est["alpha1"],
            "alpha1_method": gamma_method,
            "first_nonpositive_lambda_min_M_hat_t": est["first_nonpositive_lambda_min_M_hat_t"],
            "lead_time_s": est["lead_time_s"],
            "inf_mu_payload": float(est["inf_mu"][result["body"]]),
            "epsilon_payload": float(est["epsilon"][result["body"]]),
            "tracking_rms_rad": result["tracking_rms"] if name == "projected" else None,
        }
    return out


# ------------------------------------------------------------------------ report
def report(path: Path, rec: Recording, result: dict[str, Any], model: RobotModel,
           summary_data: dict[str, Any]) -> None:
    """Write report.png (matplotlib Agg): four panels sharing the time axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    body = result["body"]
    body_name = model.body_names[body]
    process = rec.info.get("process") or {}
    colors = {"classical": "tab:red", "projected": "tab:blue", "truth": "black"}
    fig, axes = plt.subplots(4, 1, figsize=(12, 15), sharex=True)
    title = (f"robot_tv_dynamics demo — {summary_data['scenario']}: "
             f"{process.get('description', '')}\n"
             f"payload body {body_name}; RLS with forgetting on its 10 parameters, classical "
             "(unconstrained) vs projected onto {εI ⪯ f(Φ) ⪯ βI}")
    fig.suptitle(title, fontsize=11)
    t_end = float(rec.t[-1]) if rec.t.size else 1.0
    # loading phase shading
    t_theta, theta = rec.theta
    mass = theta[:, body, 0] if len(theta) else np.zeros(0)
    changing = (np.flatnonzero(np.abs(np.diff(mass)) > 1e-9) if mass.size > 1
                else np.zeros(0, dtype=np.intp))
    span = (float(t_theta[changing[0]]), float(t_theta[changing[-1] + 1])) if len(changing) \
        else None
    for ax in axes:
        if span is not None:
            ax.axvspan(*span, color="gold", alpha=0.15, lw=0)
        ax.grid(True, alpha=0.3)

    # (1) consistency margin of the payload body
    ax = axes[0]
    ax.plot(result["t_theta"], result["mu_true"][:, body], color=colors["truth"],
            label="true Θ(t)")
    for name in ESTIMATORS:
        est = result["estimators"][name]
        ax.plot(est["t"], est["mu"][:, body], color=colors[name], label=f"{name} Θ̂(t)")
    eps = result["estimators"]["classical"]["epsilon"][body]
    ax.axhline(eps, color="tab:orange", ls="--", label=f"ε = {eps:.2g} (monitor)")
    ax.axhline(0.0, color="gray", lw=0.8)
    for name in ESTIMATORS:
        alarms = result["estimators"][name]["alarms"]
        for alarm in alarms:
            ax.axvline(alarm["t"], color=colors[name], ls=":", lw=1.2)
        if alarms:
            ax.annotate(f"first ALARM ({name} estimate, {alarms[0]['body']}) at "
                        f"{alarms[0]['t']:.2f} s", (alarms[0]["t"], eps), xytext=(-250, 25),
                        textcoords="offset points", color=colors[name], fontsize=9,
                        arrowprops={"arrowstyle": "->", "color": colors[name]})
    ax.set_yscale("symlog", linthresh=max(abs(eps) / 2, 1e-9))
    ax.set_ylabel("μ = λ_min(f(Φ)) [kg·m²]\n(symlog)")
    ax.set_title(f"Physical consistency margin of {body_name} (Theorem 1: consistent ⇔ μ > 0; "
                 "Definition 3: uniform ⇔ inf μ > 0). Shaded: loading.", fontsize=10)
    ax.legend(loc="lower left", fontsize=8, ncol=2)

    # (2) terms of eq. (39)
    ax = axes[1]
    t_terms, terms = rec.terms
    labels = ("inertia", "coriolis", "mass_rate", "gyroscopic", "gravity", "psi_dot")
    names = {"inertia": "M(q,Θ) q̈", "coriolis": "C(q,q̇,Θ) q̇", "mass_rate": "M(q,Θ̇) q̇",
             "gyroscopic": "H(q,Ψ) q̇", "gravity": "G(q,Θ)", "psi_dot": "Jᵀ Q₀ Ψ̇"}
    if len(terms):
        for k, label in enumerate(labels):
            ax.plot(t_terms, np.linalg.norm(terms[:, k, :], axis=1), label=names[label], lw=1.2)
        ax.set_yscale("log")
        ax.set_ylim(bottom=1e-4)
    ax.set_ylabel("‖term‖ over joints\n[N·m]")
    ax.set_title("Generalized robotics equation (39), term by term (dynamics_node, true Θ(t)); "
                 "the last three are absent from the classical model", fontsize=10)
    ax.legend(loc="lower left", fontsize=8, ncol=3)

    # (3) λ_min(M(q, Θ̂)) vs α₁
    ax = axes[2]
    ax.plot(result["t_theta"], result["lam_true"], color=colors["truth"], label="true Θ(t)")
    lin = 1e-4
    for name in ESTIMATORS:
        est = result["estimators"][name]
        ax.plot(est["t"], est["lam"], color=colors[name], label=f"{name} Θ̂(t)")
        if est["alpha1"] is not None and est["alpha1"] > 0:
            method = summary_data["gamma_method"]
            ax.axhline(est["alpha1"], color=colors[name], ls="--", lw=1,
                       label=f"α₁ ({name}) = {est['alpha1']:.2g} ({method} γ)")
            lin = min(lin, est["alpha1"])
        crossing = est["first_nonpositive_lambda_min_M_hat_t"]
        if est["alarms"]:
            ax.axvline(est["alarms"][0]["t"], color=colors[name], ls=":", lw=1.2)
        if crossing is not None:
            ax.axvline(crossing, color=colors[name], lw=1.5)
            lead = est["lead_time_s"]
            ax.annotate(f"λ_min(M̂) ≤ 0 at {crossing:.2f} s"
                        + (f"\nlead time of the alarm: {lead:.2f} s" if lead is not None else ""),
                        (crossing, 0.0), xytext=(6, -30), textcoords="offset points",
                        color=colors[name], fontsize=8)
    ax.axhline(0.0, color="gray", lw=0.8)
    ax.set_yscale("symlog", linthresh=lin)
    ax.set_ylabel("λ_min(M(q, Θ̂))\n[kg·m²] (symlog)")
    ax.set_title("Smallest eigenvalue of the estimated mass matrix along the trajectory; "
                 "Theorem 2: λ_min ≥ α₁ = min_l inf_t μ_l · inf_q λ_min(JᵀJ)", fontsize=10)
    ax.legend(loc="lower left", fontsize=8, ncol=2)

    # (4) tracking error
    ax = axes[3]
    ax.plot(rec.t, np.degrees(result["tracking_error"]), color=colors["projected"])
    ax.set_ylabel("‖q_r − q‖ (arm joints)\n[deg]")
    ax.set_xlabel("simulated time [s]")
    rms = result["tracking_rms"]
    ax.set_title("Tracking error of the computed-torque controller on the projected estimate"
                 + (f" (RMS {np.degrees(rms):.2f}°)" if rms is not None else ""), fontsize=10)
    ax.set_xlim(0.0, t_end)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


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
        scenario = _scenario_file(args.scenario, args.link, out)
        process = load_loading_process(scenario)
        model.link_attachment(process.link)
    except RobotTvDynamicsError as error:
        print(f"[demo] error: {error}", file=sys.stderr)
        return 2
    bag_tmp = out / ".bag"
    for stale in (bag_tmp, out / "run.mcap"):
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    print(f"[demo] {Path(urdf).name}, scenario {args.scenario} ({scenario}), "
          f"{args.duration:g} s; ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}; "
          f"node logs in {logs}", file=sys.stderr)
    try:
        procs = _bring_up(urdf, scenario, args, logs)
    except DemoError as error:
        print(f"[demo] error: {error}", file=sys.stderr)
        return 1
    try:
        counts, wall = _record(procs, bag_tmp, args)
    except (DemoError, RobotTvDynamicsError) as error:
        print(f"\n[demo] error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\n[demo] interrupted", file=sys.stderr)
        return 130
    finally:
        procs.stop()
    mcap = next(bag_tmp.glob("*.mcap"), None)
    if mcap is None:
        print(f"[demo] error: no MCAP file in {bag_tmp}", file=sys.stderr)
        return 1
    shutil.move(str(mcap), out / "run.mcap")
    shutil.rmtree(bag_tmp, ignore_errors=True)
    try:
        rec = read_recording(out / "run.mcap")
        gamma, method = _gamma(rec)
        result = analyse(rec, model, gamma)
        data = summary(rec, result, model, args.scenario, method, counts, wall)
        (out / "summary.json").write_text(json.dumps(data, indent=2) + "\n")
        report(out / "report.png", rec, result, model, data)
    except (DemoError, RobotTvDynamicsError, KeyError, ValueError, IndexError) as error:
        print(f"[demo] error while analysing {out / 'run.mcap'}: {error}", file=sys.stderr)
        return 1
    for name in ESTIMATORS:
        est = data["estimators"][name]
        print(f"[demo] {name:9s}: {len(est['alarms'])} alarm(s), min λ_min(M(q,Θ̂)) = "
              f"{est['min_lambda_min_M_hat']:.3g}, α₁ = {est['alpha1']}, "
              f"lead time = {est['lead_time_s']}", file=sys.stderr)
    print(f"[demo] real-time factor {data['real_time_factor']}; wrote {out / 'run.mcap'}, "
          f"{out / 'report.png'}, {out / 'summary.json'}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m robot_tv_dynamics.demo``."""
    parser = argparse.ArgumentParser(prog="robot-tv-dynamics demo", description=__doc__.split(
        "\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
