"""The UR5 moves and payloads the trajectory gate's tests share.

A rest-to-rest quintic from ``Q0`` to ``Q1`` (50 points with positions, velocities and
accelerations, as MoveIt's time parameterization writes them); with 9 kg on tool0 it is
over the shoulder-lift effort limit when done in 1 s and within the limits in 4 s.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.evaluation import Trajectory
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia

UR5_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
              "wrist_2_joint", "wrist_3_joint")
Q0 = np.array([0.0, -1.2, 1.0, -1.0, -1.5, 0.0])
Q1 = np.array([1.5, -0.3, 0.2, -2.0, -0.5, 1.0])
#: The payload's centre of mass in tool0 [m].
COM = np.array([0.0, 0.0, 0.05])


def quintic(duration: float, start: np.ndarray = Q0, goal: np.ndarray = Q1,
            points: int = 50) -> Trajectory:
    """Rest-to-rest quintic from ``start`` to ``goal`` in ``duration`` s, ``points`` points."""
    s = np.linspace(0.0, 1.0, points)
    blend = 10 * s**3 - 15 * s**4 + 6 * s**5
    rate = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
    accel = (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    delta = goal - start
    return Trajectory(UR5_JOINTS, s * duration, start + np.outer(blend, delta),
                      np.outer(rate, delta), np.outer(accel, delta))


def theta_with_payload(model: RobotModel, mass: float) -> np.ndarray:
    """Θ of the UR5 with a point mass ``mass`` [kg] at :data:`COM` on tool0."""
    phi = phi_from_mass_com_inertia(mass, COM, np.zeros((3, 3)))
    return model.theta_with_link_inertia(model.theta_nominal, "tool0", phi)
