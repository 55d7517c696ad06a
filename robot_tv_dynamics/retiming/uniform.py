r"""The exact uniform slowdown t → k t of a trajectory that meets the limits, in closed form.

Scaling time by k ≥ 1 keeps the path and every point's position, divides q̇ by k and q̈
by k². For a constant load (Θ̇ = Ψ = Ψ̇ = 0) the torque of eq. (39) at each point is then

.. math::
    τ(k) = G(q) + \frac{τ(1) - G(q)}{k^2}

(M q̈ and C(q, q̇) q̇ are both quadratic in 1/k), so with u = 1/k² ∈ (0, 1] each joint
i and sample j asks for |G + D u| ≤ L with D = τ(1) − G: a half-line of u. Their
intersection gives the largest u, hence the smallest k, exactly, from two evaluations of
eq. (39) per sample (τ and G); the velocity and acceleration limits add
k ≥ max|q̇|/q̇_max and k ≥ √(max|q̈|/q̈_max). A trajectory controller's interpolation of
the scaled points is the scaled interpolation of the input (quintic and cubic Hermite
commute with the time scaling), so taking the samples of what the controller plays
between the input's points makes k hold for the played motion too.

This is MoveIt's own remedy (a smaller max_velocity/acceleration_scaling_factor) done
exactly: the motion keeps its shape and is never faster than planned. It exists when the
load can be held at rest at every sample (|G| < L); otherwise no timing of the path can
help and :class:`~robot_tv_dynamics.exceptions.StaticHoldingError` says where.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.evaluation import Trajectory
from robot_tv_dynamics.exceptions import StaticHoldingError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.torques import joint_states, torques


@dataclass(frozen=True)
class UniformLimits:
    """The limits a uniformly slowed trajectory is held to (model joint order).

    Attributes:
        effort: allowed |τ_i| (margin × URDF limit), (nv,) [N·m or N]; NaN = unchecked.
        velocity: allowed |q̇_i|, (nv,) [rad/s or m/s]; inf = none.
        acceleration: allowed |q̈_i|, (nv,) [rad/s² or m/s²]; inf = none.
    """

    effort: Array
    velocity: Array
    acceleration: Array


def uniform_factor(model: RobotModel, trajectory: Trajectory, theta: Array,
                   limits: UniformLimits, default_positions: Array | None = None) -> float:
    """The smallest k ≥ 1 with ``trajectory`` scaled in time by k within ``limits``.

    Args:
        model: the arm.
        trajectory: the samples to hold to the limits, with velocities and accelerations
            (e.g. a controller's playback of the trajectory).
        theta: Θ with the payload, (N, 10), constant along the motion.
        limits: the limits.
        default_positions: positions of the joints the trajectory does not list, (nv,)
            [rad or m]; None = 0.

    Raises:
        StaticHoldingError: some sample cannot be held at rest within an effort limit.
    """
    q, qd, qdd = joint_states(model, trajectory, default_positions)
    dynamics = model.dynamics()
    dynamics.set_loads(theta)
    zero = np.zeros_like(q)
    G = torques(dynamics, q, zero, zero)
    D = torques(dynamics, q, qd, qdd) - G
    limit = np.broadcast_to(limits.effort, G.shape)
    checked = np.isfinite(limit)
    static = np.where(checked, np.abs(G) / np.where(checked, limit, 1.0), 0.0)
    if np.any(static >= 1.0):
        j, i = np.unravel_index(int(np.argmax(static)), static.shape)
        raise StaticHoldingError(model.joint_names[int(i)], float(static[j, i]),
                                 float(limit[j, i]), f"at sample {int(j)} (t = "
                                 f"{trajectory.time_from_start[j]:.4g} s)")
    moving = checked & (D != 0.0)
    bound = np.where(moving, (np.sign(D) * limit - G) / np.where(moving, D, 1.0), np.inf)
    u = min(1.0, float(bound.min(initial=np.inf)))
    k = 1.0 / math.sqrt(u)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = max(k, float(np.max(np.abs(qd) / limits.velocity, initial=0.0)),
                math.sqrt(float(np.max(np.abs(qdd) / limits.acceleration, initial=0.0))))
    return max(1.0, k)


def scaled(trajectory: Trajectory, k: float) -> Trajectory:
    """``trajectory`` with time scaled by k: t → k t, q̇ → q̇/k, q̈ → q̈/k²."""
    return Trajectory(
        trajectory.joint_names, trajectory.time_from_start * k, trajectory.positions,
        None if trajectory.velocities is None else trajectory.velocities / k,
        None if trajectory.accelerations is None else trajectory.accelerations / k**2)
