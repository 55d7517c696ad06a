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
import scipy.interpolate

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
    t = trajectory.time_from_start
    columns = np.stack([trajectory.positions, trajectory.velocities,
                        trajectory.accelerations], axis=1)  # (K, 3, n)
    spline = scipy.interpolate.BPoly.from_derivatives(t, columns)
    fractions = np.arange(per_segment) / per_segment
    times = np.append((t[:-1, None] + np.diff(t)[:, None] * fractions).ravel(), t[-1])
    return Trajectory(trajectory.joint_names, times, spline(times), spline(times, 1),
                      spline(times, 2))


def controller_playback(trajectory: Trajectory, per_segment: int = 8) -> Trajectory:
    """What joint_trajectory_controller plays: quintic, cubic or linear by the fields given.

    Args:
        trajectory: the points as written (accelerations and velocities optional).
        per_segment: samples per segment (the points themselves included), ≥ 1.

    Returns:
        The played motion at ``per_segment`` evenly spaced times per segment and the
        last point: quintic Hermite through (q, q̇, q̈) when accelerations are given,
        cubic Hermite through (q, q̇) when only velocities are, piecewise linear in q
        (q̇ constant per segment, q̈ = 0) otherwise.
    """
    if trajectory.velocities is not None and trajectory.accelerations is not None:
        return quintic_playback(trajectory, per_segment)
    t = trajectory.time_from_start
    fractions = np.arange(per_segment) / per_segment
    times = np.append((t[:-1, None] + np.diff(t)[:, None] * fractions).ravel(), t[-1])
    if trajectory.velocities is not None:
        columns = np.stack([trajectory.positions, trajectory.velocities], axis=1)
        spline = scipy.interpolate.BPoly.from_derivatives(t, columns)
        return Trajectory(trajectory.joint_names, times, spline(times), spline(times, 1),
                          spline(times, 2))
    segment = np.clip(np.searchsorted(t, times, side="right") - 1, 0, t.size - 2)
    slope = np.diff(trajectory.positions, axis=0) / np.diff(t)[:, None]
    q = trajectory.positions[segment] + slope[segment] * (times - t[segment])[:, None]
    return Trajectory(trajectory.joint_names, times, q, slope[segment], np.zeros_like(q))
