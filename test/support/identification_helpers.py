"""Shared helpers of the identification tests: a perturbed Θ_true, simulated data, bags.

Data are made by the package's own eq. (39) (``RobotModel.inverse_dynamics``, the
Jacobian-based implementation) along an analytic trajectory: τ = τ_(39)(q, q̇, q̈, Θ_true)
+ friction + noise. Identification uses Pinocchio's torque regressor and q̈ estimated by
filtering the recorded q̇, so the test data and the code under test share no formula.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.inertia import (
    consistency_margin,
    mass_com_inertia_from_phi,
    phi_from_mass_com_inertia,
)

PANDA_LOCK = ["panda_finger_joint1", "panda_finger_joint2"]


def perturbed_theta(model: RobotModel, rng: np.random.Generator) -> np.ndarray:
    """Θ_true: mass, COM and the principal second moments each changed by 20–50 %.

    The second moments Σ_c = ½ tr(I_c) I − I_c about the COM are scaled per principal
    axis (stays ≻ 0, so the body stays consistent), the mass by a factor 1 ± U(0.2, 0.5),
    each COM coordinate likewise (plus a 2 cm shift where the COM is near the origin).
    """
    theta = np.array(model.theta_nominal)
    for l in range(model.n_bodies):
        mass, com, inertia = mass_com_inertia_from_phi(theta[l])

        def factor(size: int | None = None) -> np.ndarray:
            return 1.0 + rng.choice([-1.0, 1.0], size) * rng.uniform(0.2, 0.5, size)

        sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia
        values, vectors = np.linalg.eigh(sigma)
        sigma = (vectors * (values * factor(3))) @ vectors.T
        inertia = np.trace(sigma) * np.eye(3) - sigma
        com = com * factor(3) + np.where(np.abs(com) < 0.01, 0.02 * factor(3), 0.0)
        theta[l] = phi_from_mass_com_inertia(mass * factor(), com, inertia)
    if not np.all(consistency_margin(theta) > 0):
        raise AssertionError("perturbed Θ is not consistent")
    return theta


@dataclass
class Friction:
    viscous: np.ndarray
    coulomb: np.ndarray
    offset: np.ndarray
    coulomb_velocity: float = 0.01

    def torque(self, qd: np.ndarray) -> np.ndarray:
        return (self.viscous * qd + self.coulomb * np.tanh(qd / self.coulomb_velocity)
                + self.offset)


def random_friction(n: int, rng: np.random.Generator) -> Friction:
    return Friction(rng.uniform(0.1, 0.6, n), rng.uniform(0.2, 1.0, n), rng.uniform(-0.3, 0.3, n))


@dataclass
class SimData:
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray           # measured: true + friction + noise
    tau_clean: np.ndarray     # true + friction
    noise: np.ndarray


def simulate(model: RobotModel, theta: np.ndarray, trajectory, rate: float, duration: float,
             sigma: np.ndarray, friction: Friction | None, rng: np.random.Generator,
             velocity_noise: float = 1e-3) -> SimData:
    """Samples of a trajectory (anything with ``evaluate(t) -> q, qd, qdd``)."""
    t = np.arange(0.0, duration, 1.0 / rate)
    q, qd, qdd = trajectory.evaluate(t)
    tau = np.array([model.inverse_dynamics(q[k], qd[k], qdd[k], theta).tau
                    for k in range(t.size)])
    if friction is not None:
        tau = tau + friction.torque(qd)
    noise = rng.standard_normal(tau.shape) * sigma
    qd_measured = qd + velocity_noise * rng.standard_normal(qd.shape)
    return SimData(t, q, qd_measured, qdd, tau + noise, tau, noise)


@dataclass
class Sine:
    """A slow single-joint sine (poorly exciting): joint ``joint`` moves, others rest."""

    center: np.ndarray
    joint: int
    amplitude: float
    frequency: float

    def evaluate(self, t):
        t = np.asarray(t, dtype=float)
        w = 2 * np.pi * self.frequency
        q = np.tile(self.center, (t.size, 1))
        qd = np.zeros_like(q)
        qdd = np.zeros_like(q)
        q[:, self.joint] += self.amplitude * np.sin(w * t)
        qd[:, self.joint] = self.amplitude * w * np.cos(w * t)
        qdd[:, self.joint] = -self.amplitude * w * w * np.sin(w * t)
        return q, qd, qdd


def write_joint_state_bag(path: Path, names, t, q, qd, tau, *, with_effort: bool = True,
                          topic: str = "/joint_states") -> Path:
    """An MCAP file as ros/demo.py records it: rosbags Writer into a folder, .mcap moved out."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    folder = path.parent / (path.stem + "_bag")
    if folder.exists():
        shutil.rmtree(folder)
    writer = Writer(folder, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connection = writer.add_connection(topic, "sensor_msgs/msg/JointState", typestore=store)
    for k in range(len(t)):
        sec = int(np.floor(t[k]))
        stamp = Time(sec=sec + 100, nanosec=int(round((t[k] - sec) * 1e9)) % 1_000_000_000)
        msg = JointState(
            header=Header(stamp=stamp, frame_id=""), name=list(names),
            position=np.ascontiguousarray(q[k], dtype=np.float64),
            velocity=np.ascontiguousarray(qd[k], dtype=np.float64),
            effort=np.ascontiguousarray(tau[k], dtype=np.float64) if with_effort
            else np.zeros(0, dtype=np.float64))
        writer.write(connection, int((t[k] + 100) * 1e9),
                     store.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
    writer.close()
    mcap = next(folder.glob("*.mcap"))
    shutil.move(str(mcap), path)
    shutil.rmtree(folder)
    return path


def write_csv(path: Path, names, t, q, qd, tau) -> Path:
    header = ["time"] + [f"{n}.{kind}" for kind in ("position", "velocity", "effort")
                         for n in names]
    rows = np.column_stack([t, q, qd, tau])
    np.savetxt(path, rows, delimiter=",", header=",".join(header), comments="")
    return path
