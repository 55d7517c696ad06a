"""What a trajectory controller plays between the points of a JointTrajectory.

ros2_control's ``joint_trajectory_controller`` (and MoveIt's execution) interpolates
points that carry positions, velocities and accelerations with a quintic Hermite
spline per segment, points with positions and velocities with a cubic one, positions
alone linearly (:func:`controller_playback`). A time-optimal timing has jumps in s̈
(bang-bang); the retiming writes a knot at each jump, but the quintic through
accelerations that change fast still overshoots the motion between knots, and so does
τ. :func:`controller_playback` reproduces that interpolation so that the retiming can
verify (and tighten for) what is played, not only what is sampled.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.evaluation import Trajectory


def quintic_playback(trajectory: Trajectory, per_segment: int = 8) -> Trajectory:
    """The quintic Hermite interpolation of a trajectory, sampled inside every segment.

    Args:
        trajectory: points with positions, velocities and accelerations.
        per_segment: samples per segment (the points themselves included), ≥ 1.

    Returns:
        The played motion at ``per_segment`` evenly spaced times per segment and the
        last point, with its exact q̇, q̈.
    """
    if trajectory.velocities is None or trajectory.accelerations is None:
        raise ValueError("quintic playback needs velocities and accelerations")
    return controller_playback(trajectory, per_segment)


def controller_playback(trajectory: Trajectory, per_segment: int = 8) -> Trajectory:
    """What joint_trajectory_controller plays: quintic, cubic or linear by the fields given.

    Args:
        trajectory: the points as written (accelerations and velocities optional).
        per_segment: samples per segment (the points themselves included), ≥ 1.

    Returns:
        The played motion at ``per_segment`` evenly spaced times per segment and the
        last point (:func:`played_at`).
    """
    t = trajectory.time_from_start
    fractions = np.arange(per_segment) / per_segment
    times = np.append((t[:-1, None] + np.diff(t)[:, None] * fractions).ravel(), t[-1])
    return played_at(trajectory, times)


def played_at(trajectory: Trajectory, times: npt.ArrayLike) -> Trajectory:
    """What joint_trajectory_controller plays at ``times`` [s], with its exact q̇, q̈.

    Between two points: the quintic Hermite through (q, q̇, q̈) at both ends when
    accelerations are given, the cubic Hermite through (q, q̇) when only velocities are
    (q̈ as the cubic's), piecewise linear in q otherwise (q̇ constant per segment,
    q̈ = 0). Each segment's polynomial in x = (t − t_k)/h_k in closed form; a time
    outside the points takes the first or last segment's polynomial.
    """
    t_knots = trajectory.time_from_start
    t = np.asarray(times, dtype=np.float64)
    seg = np.clip(np.searchsorted(t_knots, t, side="right") - 1, 0, t_knots.size - 2)
    h = (t_knots[seg + 1] - t_knots[seg])[:, None]
    x = (t - t_knots[seg])[:, None] / h
    p0, p1 = trajectory.positions[seg], trajectory.positions[seg + 1]
    v, a = trajectory.velocities, trajectory.accelerations
    if v is None:
        slope = (p1 - p0) / h
        return Trajectory(trajectory.joint_names, t, p0 + x * (p1 - p0), slope,
                          np.zeros_like(slope))
    zeros = np.zeros_like(p0)
    v0, v1 = v[seg] * h, v[seg + 1] * h
    if a is None:  # cubic Hermite
        c = np.stack([p0, v0, 3 * (p1 - p0) - 2 * v0 - v1, 2 * (p0 - p1) + v0 + v1, zeros,
                      zeros])
    else:  # quintic Hermite
        a0, a1 = a[seg] * h * h, a[seg + 1] * h * h
        c = np.stack([p0, v0, 0.5 * a0,
                      10 * (p1 - p0) - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1,
                      -15 * (p1 - p0) + 8 * v0 + 7 * v1 + 1.5 * a0 - a1,
                      6 * (p1 - p0) - 3 * (v0 + v1) - 0.5 * (a0 - a1)])
    powers = np.stack([x ** i for i in range(6)])
    q = np.einsum("ikn,ikn->kn", c, powers)
    qd = np.einsum("ikn,ikn->kn", c[1:] * np.arange(1, 6)[:, None, None], powers[:5]) / h
    qdd = np.einsum("ikn,ikn->kn", c[2:] * np.array([2, 6, 12, 20])[:, None, None],
                    powers[:4]) / (h * h)
    return Trajectory(trajectory.joint_names, t, q, qd, qdd)
