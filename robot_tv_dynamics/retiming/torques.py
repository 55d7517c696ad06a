r"""τ of eq. (39) at many samples of a trajectory under a constant load, by RNEA.

What the trajectory gate decides on: the torques alone, by the recursive backend
(:class:`~robot_tv_dynamics.dynamics.RecursiveDynamics` holding Θ with the payload;
equal to :func:`robot_tv_dynamics.evaluation.evaluate`'s τ to ~1e-14 relative, at a
few µs per sample instead of the tens of µs of evaluate's per-point kinematics, term
breakdown and mass-matrix eigenvalues).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.dynamics import RecursiveDynamics
from robot_tv_dynamics.evaluation import Trajectory, held_positions, model_columns
from robot_tv_dynamics.evaluation.result import peak_ratios
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel


def joint_states(model: RobotModel, trajectory: Trajectory,
                 default_positions: npt.ArrayLike | Mapping[str, float] | None = None
                 ) -> tuple[Array, Array, Array]:
    """(q, q̇, q̈) of every model joint at each point, (K, nv) each.

    Joints the trajectory does not list are held at ``default_positions`` (None = 0)
    with zero velocity and acceleration; missing velocities or accelerations are 0.
    """
    columns = model_columns(model, trajectory.joint_names)
    q = np.tile(held_positions(model, default_positions), (trajectory.n_points, 1))
    qd, qdd = np.zeros_like(q), np.zeros_like(q)
    q[:, columns] = trajectory.positions
    if trajectory.velocities is not None:
        qd[:, columns] = trajectory.velocities
    if trajectory.accelerations is not None:
        qdd[:, columns] = trajectory.accelerations
    return q, qd, qdd


def torques(dynamics: RecursiveDynamics, q: Array, qd: Array, qdd: Array) -> Array:
    """τ of eq. (39) for the loads ``dynamics`` holds at K states, (K, nv) [N·m or N]."""
    out = np.empty(q.shape)
    for j in range(q.shape[0]):
        out[j] = dynamics.inverse_dynamics(q[j], qd[j], qdd[j])
    return out


@dataclass(frozen=True)
class TorqueCheck:
    """τ of eq. (39) at the samples of a trajectory against the effort limits.

    The fields :func:`~robot_tv_dynamics.retiming.verify.verify` reads of a
    :class:`~robot_tv_dynamics.evaluation.TrajectoryEvaluation`, model joint order.

    Attributes:
        velocities: q̇, (K, nv) [rad/s or m/s].
        accelerations: q̈, (K, nv) [rad/s² or m/s²].
        effort_ratio: |τ|/τ_max, (K, nv); NaN for a joint without a limit.
    """

    velocities: Array
    accelerations: Array
    effort_ratio: Array

    @classmethod
    def of(cls, model: RobotModel, dynamics: RecursiveDynamics, trajectory: Trajectory,
           default_positions: npt.ArrayLike | Mapping[str, float] | None,
           effort_limit: Array) -> TorqueCheck:
        """τ at every point of ``trajectory``; ``effort_limit`` (nv,), NaN = none."""
        q, qd, qdd = joint_states(model, trajectory, default_positions)
        with np.errstate(invalid="ignore"):
            ratio = np.abs(torques(dynamics, q, qd, qdd)) / effort_limit
        return cls(qd, qdd, ratio)

    @property
    def peak_ratio(self) -> Array:
        """Largest |τ|/τ_max of each joint, (nv,); NaN without a limit."""
        return peak_ratios(self.effort_ratio)
