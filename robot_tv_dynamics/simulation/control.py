r"""Reference motion and a computed-torque controller on estimated parameters.

The controller is the classical computed-torque (inverse-dynamics) law on the
estimated parameters Θ̂ — it uses M(q, Θ̂), C(q, q̇, Θ̂), G(q, Θ̂), i.e. the classical
model of eq. (1) with Θ̂, as adaptive schemes do:

.. math::
    τ = M(q, \hatΘ) \big(\ddot q_r + K_d (\dot q_r - \dot q) + K_p (q_r - q)\big)
        + C(q, \dot q, \hatΘ) \dot q + G(q, \hatΘ)

clipped to the URDF effort limits by the loop that runs it (τ of eq. (39) without rates
on Θ̂, by the recursive backend). The one computed-torque law of the package: the demo's
loop, ``adapt``'s baseline (``computed-torque``) and the simulated trajectory controller
use it. With M(q, Θ̂) ≻ 0 the loop behaves like a
decoupled PD on every joint; the Panda's two prismatic finger joints (15 g each, so
M has a 0.015 kg eigenvalue) are simply held at their reference by the same law.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.loading import smoothstep
from robot_tv_dynamics.simulation.interface import ControlOutput, ControlState, positive_gains

if TYPE_CHECKING:
    from robot_tv_dynamics.model import RobotModel


@dataclass(frozen=True)
class SineReference:
    """q_r(t) = q₀ + w(t) A ⊙ sin(2π f ⊙ t + φ), faded in over ``ramp`` seconds.

    Attributes:
        q0: centre configuration (nv,) [rad, m].
        amplitude: A (nv,) [rad, m].
        frequency: f (nv,) [Hz].
        phase: φ (nv,) [rad].
        ramp: fade-in duration [s] (C² ramp w, so q̈_r stays continuous).
    """

    q0: Array
    amplitude: Array
    frequency: Array
    phase: Array
    ramp: float = 1.0

    def __call__(self, t: float) -> tuple[Array, Array, Array]:
        """(q_r, q̇_r, q̈_r) at time ``t`` [s]."""
        omega = 2.0 * np.pi * self.frequency
        arg = omega * t + self.phase
        s, c = np.sin(arg), np.cos(arg)
        w, wd, wdd = smoothstep(t / self.ramp) if self.ramp > 0 else (1.0, 0.0, 0.0)
        wd, wdd = (wd / self.ramp, wdd / self.ramp**2) if self.ramp > 0 else (0.0, 0.0)
        a = self.amplitude
        q = self.q0 + w * a * s
        qd = wd * a * s + w * a * omega * c
        qdd = wdd * a * s + 2.0 * wd * a * omega * c - w * a * omega**2 * s
        return q, qd, qdd


class ComputedTorqueOnEstimate:
    """The computed-torque law on an estimate Θ̂ (module docstring), a ``Controller``.

    K_p = ω², K_d = 2ζω per joint. τ is eq. (39) without rates on Θ̂ for the commanded
    acceleration (the recursive backend); Θ̂ changes only by :meth:`reset` (the demo's loop
    resets it to each new payload estimate; ``adapt``'s baseline never does). The loop that
    runs it clips τ to the effort limits
    (:class:`~robot_tv_dynamics.simulation.loop.ControlLoop`).
    """

    name = "computed-torque"

    def __init__(self, model: RobotModel, theta_hat: npt.ArrayLike, *,
                 omega: npt.ArrayLike = 10.0, damping: float = 1.0) -> None:
        """Build the law.

        Args:
            model: the arm.
            theta_hat: the estimate Θ̂ (N, 10), eq. (7) order.
            omega: bandwidth ω per joint (or one for all) [rad/s], > 0.
            damping: ζ of K_d = 2ζω, > 0.

        Raises:
            InvalidInputError: ω or ζ ≤ 0 or not finite, Θ̂ of the wrong shape.
        """
        self.model = model
        omega = positive_gains(omega, model.nv, "omega")
        self.kp = omega**2
        self.kd = 2.0 * positive_gains(damping, model.nv, "damping") * omega
        self._dynamics = model.dynamics()
        self.reset(theta_hat)

    def reset(self, theta_hat: npt.ArrayLike) -> None:
        """Use the estimate Θ̂ (N, 10) from now on."""
        self.theta_hat = np.array(self.model.check_theta(theta_hat, "theta_hat"))
        self._dynamics.set_theta(self.theta_hat)

    def command(self, q: Array, qd: Array, reference: tuple[Array, Array, Array]) -> Array:
        """The commanded acceleration q̈_r + K_d (q̇_r − q̇) + K_p (q_r − q) [rad/s², m/s²]."""
        q_r, qd_r, qdd_r = reference
        return np.asarray(qdd_r + self.kd * (qd_r - qd) + self.kp * (q_r - q))

    def step(self, state: ControlState, dt: float) -> ControlOutput:
        """τ of the law on Θ̂ (``dt`` unused: nothing adapts)."""
        a = self.command(state.q, state.qd, (state.q_d, state.qd_d, state.qdd_d))
        tau = np.asarray(self._dynamics.inverse_dynamics(state.q, state.qd, a))
        return ControlOutput(tau, self.theta_hat.copy())


#: The Panda's "ready" pose (franka_ros), fingers 2 cm open [rad, m].
PANDA_READY = (0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02)
#: The joints of the Panda with its hand (example-robot-data), in model order.
PANDA_JOINTS = (*(f"panda_joint{i}" for i in range(1, 8)), "panda_finger_joint1",
                "panda_finger_joint2")


def start_configuration(joint_names: Sequence[str], lower: npt.ArrayLike,
                        upper: npt.ArrayLike) -> Array:
    """Where a simulated run starts: the Panda's ready pose, else the middle of the limits.

    The Panda is recognised by its joints (:data:`PANDA_JOINTS`, exactly); any other arm
    starts at the middle of each joint's limits, 0 where a limit is infinite.

    Args:
        joint_names: model joint names.
        lower: lower joint limits (nv,) [rad, m].
        upper: upper joint limits (nv,) [rad, m].

    Returns:
        q (nv,) [rad, m], a new array.
    """
    if tuple(joint_names) == PANDA_JOINTS:
        return np.array(PANDA_READY)
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    finite = np.isfinite(lower) & np.isfinite(upper)
    return np.where(finite, 0.5 * (lower + upper), 0.0)


def start_pose(model: RobotModel) -> Array:
    """:func:`start_configuration` of a model: the demo's and ``adapt``'s q₀ [rad, m]."""
    limits = model.joint_limits
    return start_configuration(model.joint_names, limits.lower, limits.upper)


def default_reference(
    joint_names: list[str], lower: Array, upper: Array, prismatic: npt.NDArray[np.bool_],
    amplitude: float = 0.2, duration_ramp: float = 1.0,
) -> SineReference:
    """The demo's slow, poorly exciting motion: four joints swing 0.2 rad at 0.25–0.4 Hz.

    Centre: :func:`start_configuration` (the Panda's ready pose on the Panda, else the
    middle of the joint limits). Joints 1, 2, 4, 6 (the first, second, fourth and sixth)
    move; the others, and every prismatic joint, are held. Amplitudes are capped at a
    quarter of the range.

    Args:
        joint_names: model joint names.
        lower: lower joint limits (nv,) [rad, m].
        upper: upper joint limits (nv,).
        prismatic: which joints are prismatic (nv,).
        amplitude: swing amplitude [rad].
        duration_ramp: fade-in time [s].
    """
    nv = len(joint_names)
    finite = np.isfinite(lower) & np.isfinite(upper)
    centre = start_configuration(joint_names, lower, upper)
    amp = np.zeros(nv)
    freq = np.zeros(nv)
    for index, f in zip((0, 1, 3, 5), (0.3, 0.4, 0.25, 0.35), strict=True):
        if index < nv and not prismatic[index]:
            span = np.where(finite[index], upper[index] - lower[index], 2 * np.pi)
            amp[index] = min(amplitude, 0.25 * float(span))
            freq[index] = f
    return SineReference(centre, amp, freq, np.zeros(nv), duration_ramp)
