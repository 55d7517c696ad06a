r"""A simulated recording that looks like a real arm's: the data identify and estimate read.

A real user's input is a bag of ``joint_states`` with efforts from an arm whose inertias
differ from the URDF's CAD values, with friction that no model captures fully and sensor
noise that is neither white nor equal across joints. :func:`simulate_recording` makes
such data from a planned trajectory, so that the package's own pipelines can be tried
(and tested) against data they were not built from:

- the arm's true Θ is the URDF's perturbed (:func:`perturbed_theta`: each body's mass,
  COM and principal second moments changed, the body kept physically consistent);
- the motion is the trajectory played back exactly (the arm tracks perfectly), sampled at
  ``rate`` by the interpolation a ros2_control joint_trajectory_controller uses (quintic
  through positions, velocities and accelerations; cubic with velocities only);
- the effort is eq. (39) of the true Θ(t) (a loading process or a constant payload may
  be added on a link), plus :class:`StribeckFriction` (viscous, Coulomb, offset **and a
  Stribeck bump** that the package's friction model does not have), plus AR(1) coloured
  noise per joint (:func:`coloured_noise`), plus white noise on the measured velocity.

.. math::

    \tau_{meas}(t_k) = \tau_{(39)}(q, \dot q, \ddot q, \Theta_{true}(t_k)) +
    \tau_f(\dot q) + n_k, \quad n_k = a n_{k-1} + \sqrt{1 - a^2}\,\sigma e_k,
    \quad a = e^{-\Delta t / T_c}

:func:`write_joint_states_bag` writes the samples as a rosbag2 (MCAP) that ``identify``,
``estimate`` and ``observe`` read. ``robot-tv-dynamics record`` is the command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import Array, check_finite
from robot_tv_dynamics.bags import write_joint_state_bag
from robot_tv_dynamics.evaluation.efforts import evaluate
from robot_tv_dynamics.evaluation.payload import Load
from robot_tv_dynamics.evaluation.trajectory import Trajectory
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    consistency_margin,
    mass_com_inertia_from_phi,
    phi_from_mass_com_inertia,
)
from robot_tv_dynamics.inputs.efforts import EffortMap
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer.wrench import ExternalWrench
from robot_tv_dynamics.retiming.playback import played_at

#: Sensor-noise levels a real arm's joint torques show after identification [N·m].
DEFAULT_NOISE_STD = 0.5
#: Correlation time of the torque noise [s] (a few samples at 1 kHz: coloured, not white).
DEFAULT_NOISE_CORRELATION = 0.005


@dataclass(frozen=True)
class StribeckFriction:
    r"""Joint friction with a Stribeck bump: more than the package's model can fit.

    .. math::

        \tau_f = b_v \dot q + (b_c + b_s e^{-(\dot q / v_s)^2}) \tanh(\dot q / v_c) + b_o

    Attributes:
        viscous: b_v (nv,) [N·m·s/rad].
        coulomb: b_c (nv,) [N·m].
        stribeck: b_s (nv,) [N·m]: the extra breakaway friction at low speed.
        offset: b_o (nv,) [N·m].
        coulomb_velocity: v_c [rad/s].
        stribeck_velocity: v_s [rad/s].
    """

    viscous: Array
    coulomb: Array
    stribeck: Array
    offset: Array
    coulomb_velocity: float = 0.02
    stribeck_velocity: float = 0.1

    @classmethod
    def random(cls, nv: int, rng: np.random.Generator) -> StribeckFriction:
        """Coefficients in the ranges of small and medium arms' joints."""
        return cls(rng.uniform(0.1, 0.6, nv), rng.uniform(0.2, 1.0, nv),
                   rng.uniform(0.1, 0.4, nv), rng.uniform(-0.3, 0.3, nv))

    def torque(self, qd: npt.ArrayLike) -> Array:
        """τ_f for velocities (K, nv) or (nv,) [rad/s] → [N·m]."""
        qd = np.asarray(qd, dtype=float)
        breakaway = self.coulomb + self.stribeck * np.exp(-(qd / self.stribeck_velocity) ** 2)
        return (self.viscous * qd + breakaway * np.tanh(qd / self.coulomb_velocity)
                + self.offset)

    def as_dict(self, joint_names: Sequence[str]) -> dict[str, dict[str, float]]:
        """Joint → coefficients (the truth file's ``friction``)."""
        return {name: {"viscous": float(self.viscous[i]), "coulomb": float(self.coulomb[i]),
                       "stribeck": float(self.stribeck[i]), "offset": float(self.offset[i]),
                       "coulomb_velocity": self.coulomb_velocity,
                       "stribeck_velocity": self.stribeck_velocity}
                for i, name in enumerate(joint_names)}


def perturbed_theta(model: RobotModel, rng: np.random.Generator, *, mass: float = 0.1,
                    inertia: float = 0.2, com: float = 0.01,
                    theta: npt.ArrayLike | None = None) -> Array:
    """Θ of a real arm near its URDF: every body changed, every body still consistent.

    Args:
        model: the arm.
        rng: random source.
        mass: relative mass change, each body's mass × (1 ± U(0, mass)).
        inertia: relative change of each principal second moment about the COM
            (Σ_c = ½ tr(I_c) I − I_c, whose eigenvalues are the point-cloud variances:
            scaling them by a positive factor keeps the body consistent).
        com: COM shift, U(−com, com) per axis [m].
        theta: Θ to perturb, (N, 10) eq. (7) order; None = ``model.theta_nominal``.

    Returns:
        Θ_true (N, 10) [kg, kg·m, kg·m²], about each body origin.

    Raises:
        InvalidInputError: a relative change ≥ 1 (a factor could be ≤ 0) or negative.
    """
    for name, value in (("mass", mass), ("inertia", inertia)):
        if not 0.0 <= value < 1.0:
            raise InvalidInputError(name, f"relative change must be in [0, 1), got {value:g}")
    if com < 0.0:
        raise InvalidInputError("com", f"COM shift must be ≥ 0 [m], got {com:g}")
    out = np.array(model.theta_nominal if theta is None else model.check_theta(theta))
    for body in range(out.shape[0]):
        m, c, inertia_c = mass_com_inertia_from_phi(out[body])
        if m <= 0.0:
            continue
        sigma = 0.5 * np.trace(inertia_c) * np.eye(3) - inertia_c
        values, vectors = np.linalg.eigh(sigma)
        values = np.maximum(values, 0.0) * (1.0 + rng.uniform(-inertia, inertia, 3))
        sigma = (vectors * values) @ vectors.T
        out[body] = phi_from_mass_com_inertia(
            m * (1.0 + rng.uniform(-mass, mass)), c + rng.uniform(-com, com, 3),
            np.trace(sigma) * np.eye(3) - sigma)
    return out


def coloured_noise(rng: np.random.Generator, samples: int, std: npt.ArrayLike,
                   correlation_time: float, rate: float) -> Array:
    """AR(1) noise per column with stationary standard deviation ``std``.

    Args:
        rng: random source.
        samples: K rows.
        std: σ per column (n,) or a scalar.
        correlation_time: T_c [s]; 0 gives white noise.
        rate: sample rate [Hz].

    Returns:
        (K, n) noise; each column has autocorrelation e^{−|Δt|/T_c}.
    """
    std = np.atleast_1d(np.asarray(std, dtype=float))
    a = float(np.exp(-1.0 / (rate * correlation_time))) if correlation_time > 0 else 0.0
    white = rng.standard_normal((samples, std.size))
    noise = np.empty_like(white)
    noise[0] = white[0]
    gain = np.sqrt(1.0 - a * a)
    for k in range(1, samples):
        noise[k] = a * noise[k - 1] + gain * white[k]
    return noise * std


def resample(trajectory: Trajectory, rate: float) -> Trajectory:
    """The trajectory at ``rate`` as ros2_control's joint_trajectory_controller plays it.

    Between two points: the quintic through (q, q̇, q̈) at both ends when accelerations
    are given, the cubic through (q, q̇) when only velocities are, linear otherwise.

    Raises:
        InvalidInputError: a non-positive rate.
    """
    if rate <= 0.0:
        raise InvalidInputError("rate", f"must be > 0 [Hz], got {rate:g}")
    t_knots = trajectory.time_from_start
    t = np.arange(t_knots[0], t_knots[-1] + 0.5 / rate, 1.0 / rate)
    played = played_at(trajectory, t[t <= t_knots[-1] + 1e-12])
    if trajectory.velocities is None:
        return Trajectory(trajectory.joint_names, played.time_from_start, played.positions)
    return played


@dataclass(frozen=True)
class SimulatedRecording:
    """Samples of a simulated arm, measured as a real one is, and the truth behind them.

    Attributes:
        joint_names: the model's joints (nv,), the columns.
        t: sample times from the start [s] (K,).
        q: joint positions (K, nv) [rad or m].
        qd: measured joint velocities (true + white noise) (K, nv).
        qdd: true joint accelerations (K, nv) (not recorded: a real arm has none).
        effort: measured effort (K, nv) [N·m]: eq. (39) + friction + coloured noise.
        effort_rigid: eq. (39) of the true Θ(t) alone (K, nv).
        friction_torque: τ_f along the motion (K, nv).
        noise: the torque noise added (K, nv).
        theta_true: the arm's Θ without the load (N, 10), eq. (7) order.
        payload_mass: the load's mass per sample (K,) [kg] (zeros without a load).
        external_torque: J_cᵀF of the external wrenches (a push) per sample (K, nv);
            the motors did not make it, so ``effort`` lacks it (zeros without one).
    """

    joint_names: tuple[str, ...]
    t: Array
    q: Array
    qd: Array
    qdd: Array
    effort: Array
    effort_rigid: Array
    friction_torque: Array
    noise: Array
    theta_true: Array
    payload_mass: Array
    external_torque: Array | None = None


def simulate_recording(
    model: RobotModel,
    trajectory: Trajectory,
    *,
    theta_true: npt.ArrayLike | None = None,
    load: Load | None = None,
    friction: StribeckFriction | None = None,
    noise_std: npt.ArrayLike = DEFAULT_NOISE_STD,
    noise_correlation: float = DEFAULT_NOISE_CORRELATION,
    velocity_noise_std: float = 1e-3,
    rate: float = 1000.0,
    time_offset: float = 0.0,
    rng: np.random.Generator | None = None,
    wrenches: Sequence[ExternalWrench] = (),
) -> SimulatedRecording:
    """Play ``trajectory`` on a simulated arm and measure it as a real arm's sensors would.

    Args:
        model: the arm (the URDF the user has).
        trajectory: the motion, any subset of joints (others held at 0).
        theta_true: the arm's real Θ (N, 10); None = the URDF's (use
            :func:`perturbed_theta` for an arm whose inertias are CAD guesses).
        load: a constant :class:`~robot_tv_dynamics.evaluation.payload.Payload` or a
            loading process on a link (Θ̇, Ψ, Ψ̇ enter eq. (39)); None: no load.
        friction: joint friction; None: none.
        noise_std: torque noise σ per joint (nv,) or one for all [N·m].
        noise_correlation: the noise's correlation time [s] (0: white).
        velocity_noise_std: white noise σ on the measured q̇ [rad/s].
        rate: sample rate [Hz].
        time_offset: loading-process time at the trajectory's start [s].
        rng: random source (default: seed 0).
        wrenches: external wrenches on links over time windows (a push; their times
            on the loading process's clock, as ``time_offset``): the arm follows the
            same motion, so the motors make eq. (39)'s torque less J_cᵀF.

    Returns:
        A :class:`SimulatedRecording`.

    Raises:
        InvalidInputError: malformed noise levels or rate; see also
            :func:`~robot_tv_dynamics.evaluation.efforts.evaluate`.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    nv = model.nv
    sigma = np.broadcast_to(np.asarray(noise_std, dtype=float), (nv,)).copy()
    check_finite(sigma, "noise_std", (nv,))
    if np.any(sigma < 0) or noise_correlation < 0 or velocity_noise_std < 0:
        raise InvalidInputError("noise", "noise levels and correlation time must be ≥ 0")
    theta = (model.theta_nominal if theta_true is None
             else model.check_theta(theta_true)).copy()
    if not np.all(consistency_margin(theta) > 0):
        raise InvalidInputError("theta_true", "every body of the true arm must be consistent")
    played = resample(trajectory, rate)
    result = evaluate(model, played, load, theta=theta, time_offset=time_offset,
                      compute_max_payload=False)
    qd = np.asarray(result.velocities)
    tau_f = (np.zeros_like(qd) if friction is None else friction.torque(qd))
    noise = coloured_noise(rng, qd.shape[0], sigma, noise_correlation, rate)
    rigid = np.asarray(result.effort)
    q = np.asarray(result.positions)
    external = np.zeros_like(rigid)
    for wrench in wrenches:
        for k, t in enumerate(np.asarray(result.t)):
            external[k] += wrench.joint_torque(model, q[k], float(t) + time_offset)
    return SimulatedRecording(
        joint_names=tuple(model.joint_names), t=np.asarray(result.t),
        q=q, qd=qd + velocity_noise_std * rng.standard_normal(qd.shape),
        qdd=np.asarray(result.accelerations), effort=rigid - external + tau_f + noise,
        effort_rigid=rigid, friction_torque=tau_f, noise=noise, theta_true=theta,
        payload_mass=np.asarray(result.payload_mass), external_torque=external)


@dataclass(frozen=True)
class JointStateDialect:
    """How a real driver's joint_states differ from the model's: units, order, extra joints.

    Attributes:
        efforts: the driver's effort semantics; the bag holds ``efforts.raw(τ)`` (e.g.
            motor currents [A] for :data:`~robot_tv_dynamics.inputs.efforts.PRESETS`
            ``ur_e_series_current``).
        order: the joints in the order the messages name them (a permutation of the
            model's); empty: model order.
        extra_joints: joints the model does not have (a gripper), each (name, position),
            appended to every message with zero velocity and effort.
    """

    efforts: EffortMap = field(default_factory=EffortMap)
    order: tuple[str, ...] = ()
    extra_joints: tuple[tuple[str, float], ...] = ()

    def columns(self, joint_names: Sequence[str]) -> npt.NDArray[np.intp]:
        """Index into the model's columns of each joint of a message, in message order.

        Raises:
            InvalidInputError: ``order`` is not a permutation of ``joint_names``, or an
                extra joint is a model joint.
        """
        names = list(joint_names)
        order = list(self.order) or names
        if sorted(order) != sorted(names):
            raise InvalidInputError("order", f"{order} is not an order of the joints {names}")
        clash = [name for name, _ in self.extra_joints if name in names]
        if clash:
            raise InvalidInputError("extra_joints", f"{clash} are joints of the model")
        self.efforts.check_joints(names)
        return np.array([names.index(name) for name in order], dtype=np.intp)


def write_joint_states_bag(path: str | Path, recording: SimulatedRecording, *,
                           topic: str = "/joint_states", start: float = 100.0,
                           dialect: JointStateDialect | None = None) -> Path:
    """Write the samples as ``sensor_msgs/JointState`` (position, velocity, effort).

    Args:
        path: the output: a ``.mcap`` file, or a folder (a rosbag2 directory, MCAP storage).
        recording: the samples.
        topic: the topic name.
        start: stamp of the first sample [s] (stamps and log times are equal).
        dialect: how the messages differ from the model (effort unit, joint order, extra
            joints); None: joint torques in model order.

    Returns:
        The path written.

    Raises:
        InvalidInputError: ``path`` exists, or a dialect that does not fit the joints.
    """
    dialect = JointStateDialect() if dialect is None else dialect
    take = dialect.columns(recording.joint_names)
    names = [recording.joint_names[i] for i in take] + [n for n, _ in dialect.extra_joints]
    extra = np.array([p for _, p in dialect.extra_joints], dtype=np.float64)
    zeros = np.zeros(extra.size)
    effort = dialect.efforts.raw(recording.effort)
    with write_joint_state_bag(path, [topic]) as write:
        for k, t in enumerate(recording.t):
            write(topic, int(round((float(t) + start) * 1e9)), names,
                  np.concatenate((recording.q[k, take], extra)),
                  np.concatenate((recording.qd[k, take], zeros)),
                  np.concatenate((effort[k, take], zeros)))
    return Path(path)
