"""Test support: simulated samples and a rosbag2 MCAP of them in the demo's topics and layouts.

joint_states (sensor_msgs/JointState, header stamp = epoch + t, effort = the motor torque
τ), inertial_parameters / inertial_parameter_rates (``body`` × ``phi``), psi / psi_rates
(``body`` × ``psi``) as Float64MultiArray with the labels of ros/conversions.py, each
array message logged 50 µs after its joint_states message (one simulator tick).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from robot_tv_dynamics.inertia import phi_to_pinocchio
from robot_tv_dynamics.inputs.body_vectors import body_vector_names
from robot_tv_dynamics.loading import loading_process_from_dict
from robot_tv_dynamics.observer import ExternalWrench
from robot_tv_dynamics.ros.conversions import PHI_LABELS, PSI_LABELS, dim_label
from robot_tv_dynamics.simulation import ArmSimulator

FILL = Path(__file__).resolve().parents[2] / "config" / "loading" / "fill.yaml"
EPOCH = 1_700_000_000  # [s] of the first sample's stamp


@dataclass
class Samples:
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    theta: np.ndarray
    theta_dot: np.ndarray
    psi: np.ndarray
    psi_dot: np.ndarray


def simulate(model, duration=1.0, every=2, wrench=None) -> Samples:
    """PD + gravity hold under a 0.5 kg/s fill from 0.1 s; samples every ``every`` ms."""
    config = yaml.safe_load(FILL.read_text())
    config.update(start=0.1, fill_time=0.8, mass_flow=0.5)
    sim = ArmSimulator(model, loading_process_from_dict(config), rate=1000.0,
                       q0=None)
    limits = model.joint_limits
    q0 = 0.5 * (limits.lower + limits.upper)
    q0[3] = -1.5
    sim.reset(q0)
    theta0 = sim.loads(0.0).theta
    pm = model.pinocchio_model.copy()
    for l in range(model.n_bodies):
        pm.inertias[l + 1] = phi_to_pinocchio(theta0[l])
    data = pm.createData()
    wrench = wrench or ExternalWrench("panda_link5", (15.0, 0.0, -20.0), 0.5, 0.7)
    rows = {k: [] for k in Samples.__dataclass_fields__}
    for k in range(int(round(duration * 1000))):
        t, q, qd = sim.t, sim.q.copy(), sim.qd.copy()
        tau = np.array(pin.rnea(pm, data, q, qd, 100.0 * (q0 - q) - 20.0 * qd))
        if k % every == 0:
            loads = sim.loads(t)
            for key, value in (("t", t), ("q", q), ("qd", qd), ("tau", tau),
                               ("theta", loads.theta), ("theta_dot", loads.theta_dot),
                               ("psi", loads.psi), ("psi_dot", loads.psi_dot)):
                rows[key].append(value)
        sim.step(tau + wrench.joint_torque(model, q, t))
    return Samples(**{k: np.array(v) for k, v in rows.items()})


def write_bag(path: Path, model, s: Samples, *, names=None, effort=True,
              arrays=("inertial_parameters", "inertial_parameter_rates", "psi", "psi_rates"),
              corrupt=None, bodies=None, stamped=False, delay=None, every=1) -> Path:
    """Write ``s`` as a rosbag2 MCAP directory at ``path``; returns the .mcap file.

    ``corrupt(k, position, velocity, effort, names) -> (position, velocity, effort, names)``
    may alter sample k; ``bodies`` labels only the first that many body names.
    ``stamped``: the body topics as JointState-shaped stamped vectors (``<body>/<param>``,
    position = value; a rates topic carries velocity only), stamped with the sample's
    stamp. ``delay(k)``: the log time of sample k's body messages after its joint_states
    [ns] (default 50 µs); ``every``: body messages only for every k-th sample.
    """
    store = get_typestore(Stores.ROS2_JAZZY)
    T = store.types
    joint_state = T["sensor_msgs/msg/JointState"]
    header, stamp = T["std_msgs/msg/Header"], T["builtin_interfaces/msg/Time"]
    multi, layout, dim = (T["std_msgs/msg/Float64MultiArray"], T["std_msgs/msg/MultiArrayLayout"],
                          T["std_msgs/msg/MultiArrayDimension"])
    names = list(model.joint_names if names is None else names)
    series = {"inertial_parameters": (s.theta, "phi", PHI_LABELS),
              "inertial_parameter_rates": (s.theta_dot, "phi", PHI_LABELS),
              "psi": (s.psi, "psi", PSI_LABELS), "psi_rates": (s.psi_dot, "psi", PSI_LABELS)}
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        js = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=store)
        kind = "sensor_msgs/msg/JointState" if stamped else "std_msgs/msg/Float64MultiArray"
        conns = {topic: writer.add_connection(f"/{topic}", kind, typestore=store)
                 for topic in arrays}
        for k in range(s.t.size):
            total = int(round(s.t[k] * 1e9))
            sec, nanosec = EPOCH + total // 1_000_000_000, total % 1_000_000_000
            position, velocity = s.q[k].copy(), s.qd[k].copy()
            eff = s.tau[k].copy() if effort else np.zeros(0)
            sample_names = list(names)
            if corrupt is not None:
                position, velocity, eff, sample_names = corrupt(k, position, velocity, eff,
                                                                sample_names)
            msg = joint_state(header=header(stamp=stamp(sec=sec, nanosec=nanosec),
                                            frame_id=""),
                              name=sample_names, position=np.asarray(position, np.float64),
                              velocity=np.asarray(velocity, np.float64),
                              effort=np.asarray(eff, np.float64))
            log = sec * 1_000_000_000 + nanosec
            writer.write(js, log, store.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
            if k % every:
                continue
            for topic, connection in conns.items():
                values, axis, labels = series[topic]
                body_log = log + (50_000 if delay is None else int(delay(k)))
                if stamped:
                    flat = np.asarray(values[k], np.float64).ravel()
                    rate = topic.endswith("rates")
                    vector = joint_state(
                        header=header(stamp=stamp(sec=sec, nanosec=nanosec), frame_id=""),
                        name=body_vector_names(model.body_names, axis),
                        position=np.zeros(0) if rate else flat,
                        velocity=flat if rate else np.zeros(0), effort=np.zeros(0))
                    writer.write(connection, body_log,
                                 store.serialize_cdr(vector, "sensor_msgs/msg/JointState"))
                    continue
                n, w = values.shape[1:]
                body_label = dim_label("body", model.body_names[:bodies])
                message = multi(
                    layout=layout(dim=[dim(label=body_label, size=n, stride=n * w),
                                       dim(label=dim_label(axis, labels), size=w, stride=w)],
                                  data_offset=0),
                    data=np.asarray(values[k], np.float64).ravel())
                writer.write(connection, body_log,
                             store.serialize_cdr(message, "std_msgs/msg/Float64MultiArray"))
    return next(Path(path).glob("*.mcap"))
