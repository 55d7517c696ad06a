"""The curved rest-to-rest paths and the loads of the retiming tests.

test/retiming/test_retime.py retimes them; ``scripts/docs_numbers.py retime_cases`` measures
the same cases for docs/retiming.md.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.interpolate

from robot_tv_dynamics.evaluation import Payload, Trajectory
from robot_tv_dynamics.loading import loading_process_from_dict

UR5_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
              "wrist_2_joint", "wrist_3_joint")
PANDA_ARM = tuple(f"panda_joint{i}" for i in range(1, 8))
FINGERS = ("panda_finger_joint1", "panda_finger_joint2")

UR5_START = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
UR5_GOAL = np.array([1.5708, -0.35, 0.35, -1.5708, -1.5708, 0.5])
UR5_BULGE = np.array([0.0, 0.25, -0.3, 0.4, 0.5, 0.0])
PANDA_START = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
PANDA_GOAL = np.array([0.9, 0.45, 0.2, -1.4, 0.3, 1.95, 1.3])
PANDA_BULGE = np.array([0.3, 0.0, -0.3, 0.2, 0.4, 0.0, -0.2])


def curve(start, goal, bulge, p):
    """The geometric path c(p) = start + p (goal − start) + sin(πp) bulge, p ∈ [0, 1]."""
    p = np.asarray(p, dtype=float)[:, None]
    return start + p * (goal - start) + np.sin(np.pi * p) * bulge


def curved_move(names, start, goal, bulge, duration, n):
    """Rest-to-rest along the curved path with a quintic time law: exact q, q̇, q̈."""
    t = np.linspace(0.0, duration, n)
    x = t / duration
    p = 10 * x**3 - 15 * x**4 + 6 * x**5
    dp = (30 * x**2 - 60 * x**3 + 30 * x**4) / duration
    ddp = (60 * x - 180 * x**2 + 120 * x**3) / duration**2
    tangent = (goal - start) + np.pi * np.cos(np.pi * p)[:, None] * bulge
    q = curve(start, goal, bulge, p)
    qd = tangent * dp[:, None]
    qdd = tangent * ddp[:, None] - (np.pi**2 * np.sin(np.pi * p) * dp**2)[:, None] * bulge
    return Trajectory(tuple(names), t, q, qd, qdd)


def hermite_resample(trajectory, rate):
    """What a joint_trajectory_controller plays: quintic Hermite through (q, q̇, q̈) points."""
    t = trajectory.time_from_start
    columns = np.stack([trajectory.positions, trajectory.velocities,
                        trajectory.accelerations], axis=1)  # (K, 3, n)
    spline = scipy.interpolate.BPoly.from_derivatives(t, columns)
    dense = np.linspace(t[0], t[-1], int(rate * (t[-1] - t[0])) + 1)
    return Trajectory(trajectory.joint_names, dense, spline(dense), spline(dense, 1),
                      spline(dense, 2))


def ur5_heavy():
    """8 kg on the UR5's tool0."""
    return Payload("tool0", 8.0, np.array([0.0, 0.02, 0.08]), np.diag([0.02, 0.02, 0.01]))


def panda_heavy():
    """3 kg on the Panda's link8."""
    return Payload("panda_link8", 3.0, np.array([0.0, 0.0, 0.12]), np.diag([0.006, 0.006, 0.003]))


def fill_process(link="panda_hand", mass_flow=1.5, start=0.1):
    """1.5 kg of water poured in 1 s into a cup on the hand, starting at process time 0.1 s."""
    return loading_process_from_dict({
        "process": "fill", "link": link, "start": start, "fill_time": 1.0,
        "mass_flow": mass_flow, "inlet_height": 0.3, "inlet_speed": 0.5,
        "container": {"radius": 0.06, "height": 0.25, "mass": 0.2,
                      "origin": {"xyz": [0.0, 0.0, 0.22], "rpy": [math.pi, 0.0, 0.0]}}})


def ur5_nine_kg():
    """9 kg on the UR5's tool0 (the playback case)."""
    return Payload("tool0", 9.0, np.array([0.0, 0.02, 0.08]), np.diag([0.02, 0.02, 0.01]))
