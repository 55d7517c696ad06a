"""A constant payload on the Panda's hand under an exciting motion, simulated by ArmSimulator.

The arm tracks a 3-harmonic Fourier trajectory (the family ``identification.excitation``
optimizes) with a computed-torque loop on the true Θ; the measured efforts are the
applied torques plus N(0, σ²) noise, sampled at 200 Hz like a joint_states stream.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.identification.excitation import FourierTrajectory
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation import ArmSimulator
from robot_tv_dynamics.simulation.control import PANDA_READY, ComputedTorqueOnEstimate

LINK = "panda_hand"
#: The payload: 0.6 kg, COM 8 cm out along the hand's z and 1 cm off-axis [kg, m, kg·m²].
MASS, COM = 0.6, np.array([0.01, 0.0, 0.08])
INERTIA = np.diag([6e-4, 5e-4, 3e-4])
NOISE = 0.02


def payload_phi() -> np.ndarray:
    """Φ of the payload about the panda_hand frame."""
    return phi_from_mass_com_inertia(MASS, COM, INERTIA)


def exciting_trajectory(nv: int, amplitude: float = 0.25, seed: int = 5) -> FourierTrajectory:
    """Seven arm joints, three harmonics of 0.2 Hz; the fingers held."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (nv, 3)) * amplitude / np.arange(1, 4)
    b = rng.uniform(-1, 1, (nv, 3)) * amplitude / np.arange(1, 4)
    a[7:], b[7:] = 0.0, 0.0
    return FourierTrajectory(0.2, np.array(PANDA_READY) - b.sum(axis=1), a, b)


def simulate(model: RobotModel, trajectory: FourierTrajectory, duration: float,
             seed: int = 0, rate: float = 1000.0, every: int = 5):
    """(t, q, q̇, τ_measured) at rate/every along the tracked trajectory, constant payload."""
    truth = model.theta_with_link_inertia(
        model.theta_nominal, LINK, model.urdf_link_phi(LINK) + payload_phi())
    q0, qd0, _ = trajectory.evaluate(0.0)
    sim = ArmSimulator(model, None, theta_base=truth, q0=q0[0], qd0=qd0[0], rate=rate)
    ctl = ComputedTorqueOnEstimate(model, truth, omega=20.0)
    rd = model.dynamics()
    rd.set_loads(truth)
    rng = np.random.default_rng(seed)
    out = []
    for k in range(int(duration * rate)):
        t = sim.t
        q, qd = sim.q.copy(), sim.qd.copy()
        reference = tuple(x[0] for x in trajectory.evaluate(t))
        tau = rd.inverse_dynamics(q, qd, ctl.command(q, qd, reference))
        sim.step(tau)
        if k % every == 0:
            out.append((t, q, qd, tau + rng.normal(0.0, NOISE, model.nv)))
    return out


EPOCH = 1_700_000_000  # [s]: the bag's first stamp


def write_joint_states_bag(path, joint_names, samples) -> None:
    """A rosbag2 MCAP directory with /joint_states (stamp EPOCH + t, effort = τ_measured)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    types = store.types
    joint_state, header, stamp = (types["sensor_msgs/msg/JointState"],
                                  types["std_msgs/msg/Header"],
                                  types["builtin_interfaces/msg/Time"])
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState",
                                           typestore=store)
        for t, q, qd, tau in samples:
            total = int(round(t * 1e9))
            sec, nanosec = EPOCH + total // 1_000_000_000, total % 1_000_000_000
            msg = joint_state(header=header(stamp=stamp(sec=sec, nanosec=nanosec), frame_id=""),
                              name=list(joint_names), position=np.asarray(q, np.float64),
                              velocity=np.asarray(qd, np.float64),
                              effort=np.asarray(tau, np.float64))
            writer.write(connection, sec * 1_000_000_000 + nanosec,
                         store.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
