"""What a trajectory controller plays between the points of a JointTrajectory.

ros2_control's ``joint_trajectory_controller`` (and MoveIt's execution) interpolates
points that carry positions, velocities and accelerations with a quintic Hermite
spline per segment. A time-optimal timing has jumps in s̈ (bang-bang), so the
accelerations of two neighbouring points may straddle a jump; the quintic through
them then overshoots it, and so does τ. :func:`quintic_playback` reproduces that
interpolation so that the retiming can verify (and tighten for) what is played, not
only what is sampled.
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
