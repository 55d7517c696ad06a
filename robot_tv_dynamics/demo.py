"""``robot-tv-dynamics demo``: the simulated arm, estimators, dynamics and monitors over DDS.

The run (:mod:`robot_tv_dynamics.ros.demo`) brings up, as separate processes talking
over real DDS (no launch_ros needed):

- ``sim_node``: the Panda (or ``--urdf``) integrating eq. (39) under a loading process,
  with a computed-torque controller on the *projected* payload estimate and the
  *classical* estimator running open loop on the same noisy torque measurements;
- ``dynamics_node``: τ of eq. (39) term by term and the mass-matrix bounds for the true
  Θ(t) (q̈ from the simulator's ``joint_accelerations``);
- three ``monitor_node`` instances, all on ``/diagnostics``: on the true Θ(t) (statuses
  named by body) and on each estimate (``status_prefix`` ``estimates/<name>``: statuses
  named ``estimates/<name>: <body>``).

It records every topic into ``DIR/run.mcap`` (rosbag2 MCAP, readable by rosbags and
Foxglove) while showing a progress bar. This module is the part without ROS: the
options, the scenario file, and reading the bag back with rosbags to write
``DIR/report.png`` and ``DIR/summary.json``. Alarms in the summary are the ERROR
transitions of :class:`~robot_tv_dynamics.monitor.ConsistencyMonitor` replayed on the
recorded estimates with the monitor nodes' settings (deterministic, in simulated time);
the alarms the live monitor nodes raised are listed beside them (``live_alarms``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bounds import theorem_bounds
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inertia import Array, pseudo_inertia
from robot_tv_dynamics.loading import KINDS, load_loading_process
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.monitor import ConsistencyMonitor, Level, MonitorConfig
from robot_tv_dynamics.paths import package_config_dir
from robot_tv_dynamics.simulation import DEMO_MARGIN_FRACTION

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
    "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",  # every node, every monitor
    "/simulation_info": "std_msgs/msg/String",
    "/robot_description": "std_msgs/msg/String",
}
#: Monitor settings shared by the monitor nodes and the replay (see docs/demo.md).
MONITOR_PARAMETERS = {"margin_fraction": DEMO_MARGIN_FRACTION, "publish_rate": 10.0}
#: Source of the unprefixed statuses on /diagnostics (the monitor of the true Θ, the
#: dynamics node's own).
TRUTH = "truth"


def status_prefix(estimator: str) -> str:
    """``status_prefix`` of the monitor node of an estimate: ``estimates/<name>``."""
    return f"estimates/{estimator}"


def status_source(name: str) -> tuple[str, str]:
    """(source, name without prefix) of a DiagnosticStatus name on the demo's /diagnostics.

    ``"estimates/classical: panda_link7"`` → ``("classical", "panda_link7")``; a name
    without an estimator's prefix (``"panda_link7"``, ``"dynamics_node: input"``) →
    ``(TRUTH, name)``.
    """
    for estimator in ESTIMATORS:
        prefix = f"{status_prefix(estimator)}: "
        if name.startswith(prefix):
            return estimator, name[len(prefix):]
    return TRUTH, name


class DemoError(RobotTvDynamicsError):
    """The demo could not run (a node failed, nothing was recorded, ...)."""


#: ``robot-tv-dynamics --help`` line and ``demo --help`` description of the subcommand.
HELP = ("simulated arm under payload loading, estimators, dynamics and monitor nodes over "
        "DDS; writes run.mcap, report.png, summary.json (default)")
DESCRIPTION = __doc__.split("\n\n")[0] if __doc__ else ""


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


# ------------------------------------------------------------------------ scenario
def scenario_file(scenario: str, link: str, out: Path) -> Path:
    """The loading-process file of ``--scenario`` (with ``--link``: a copy in ``out``).

    Args:
        scenario: one of :data:`SCENARIOS` (config/loading/) or a YAML file.
        link: attach the load to this URDF link instead ("": the file's link).
        out: output directory, where the copy with ``link`` is written.

    Returns:
        The file to hand to ``sim_node`` (absolute).

    Raises:
        InvalidInputError: neither a scenario name nor a file.
        RobotTvDynamicsError: the file is not a valid loading process.
    """
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
    diagnostics: dict[str, list[tuple[float, str, int, str]]] = {
        source: [] for source in (TRUTH, *ESTIMATORS)}
    for lt, m in rows.get("/diagnostics", []):
        for s in m.status:
            source, name = status_source(s.name)
            level = int(s.level[0] if isinstance(s.level, (bytes, bytearray)) else s.level)
            diagnostics[source].append((sim_time(lt), name, level, s.message))
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
    values = np.asarray(np.linalg.eigvalsh(pseudo_inertia(theta)), dtype=np.float64)
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
        # Theorem 2 gives a bound only for a uniformly consistent estimate (inf μ > 0)
        lower = (math.nan if gamma is None
                 else theorem_bounds(float(np.min(inf_mu)), 0.0, gamma, 0.0)[0])
        alpha1 = float(lower) if math.isfinite(lower) else None
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


def write_results(out: Path, model: RobotModel, scenario: str, counts: dict[str, int],
                  wall: float) -> dict[str, Any]:
    """Read ``out/run.mcap`` back; write ``out/summary.json`` and ``out/report.png``.

    Args:
        out: output directory holding run.mcap.
        model: the arm that was simulated.
        scenario: ``--scenario`` as given (named in the summary and the report).
        counts: messages recorded per topic.
        wall: wall-clock duration of the run [s] (used if the bag has no span).

    Returns:
        The summary (as written to summary.json).
    """
    rec = read_recording(out / "run.mcap")
    gamma, method = _gamma(rec)
    result = analyse(rec, model, gamma)
    data = summary(rec, result, model, scenario, method, counts, wall)
    (out / "summary.json").write_text(json.dumps(data, indent=2) + "\n")
    report(out / "report.png", rec, result, model, data)
    return data


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
            gamma = summary_data["gamma_inf_lambda_min_JtJ"]
            ax.axhline(est["alpha1"], color=colors[name], ls="--", lw=1,
                       label=f"α₁ ({name}) = {est['alpha1']:.2g} (γ ≥ {gamma:.3g}: "
                             f"lower end of the {method} bracket)")
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
def main(argv: list[str] | None = None) -> int:
    """``python -m robot_tv_dynamics.demo``: the same as ``robot-tv-dynamics demo``."""
    from robot_tv_dynamics.cli import main as cli_main

    return cli_main(["demo", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
