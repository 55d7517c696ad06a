"""Verification of one TOPP-RA solution, independent of the constraint it was built from.

:func:`verify` samples the solution's time law densely, at the output points and, if
asked, as a quintic-interpolating trajectory controller plays the output points
(:func:`~robot_tv_dynamics.retiming.playback.controller_playback`), and measures each with
:func:`robot_tv_dynamics.evaluation.evaluate` (eq. (39) point by point, the load as
the output meets it in time).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_tv_dynamics.evaluation import Load, Trajectory, TrajectoryEvaluation, evaluate
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.path import JointPath
from robot_tv_dynamics.retiming.playback import controller_playback
from robot_tv_dynamics.retiming.timing import TimeLaw, sample_dense, sample_output


@dataclass(frozen=True)
class Candidate:
    """One verified TOPP-RA solution."""

    timing: TimeLaw
    output: Trajectory
    verification: TrajectoryEvaluation
    evaluation: TrajectoryEvaluation
    velocity_peak: Array  # max |q̇| over the dense samples and output points, (nv,)
    acceleration_peak: Array  # max |q̈| likewise, (nv,)
    peak_sampled: Array  # dense samples and output points, (nv,)
    peak_played: Array  # quintic playback, (nv,); NaN when not verified
    factor: Array
    mass: Array
    process_time: Array
    converged: bool
    load: Load | None

    def better_than(self, other: Candidate, margin: float) -> bool:
        """Smaller playback overshoot first, then shorter."""
        mine = float(np.max(np.nan_to_num(self.peak_played) - margin, initial=0.0))
        theirs = float(np.max(np.nan_to_num(other.peak_played) - margin, initial=0.0))
        if not math.isclose(mine, theirs, abs_tol=1e-4):
            return mine < theirs
        return self.timing.duration < other.timing.duration


def verify(model: RobotModel, path: JointPath, timing: TimeLaw, payload: Load | None,
           sample_rate: float | None, playback: bool, kwargs: Mapping[str, Any],
           factor: Array, mass: Array, process_time: Array, converged: bool) -> Candidate:
    """Evaluate a solution densely, at its output points and (optionally) as played.

    Args:
        model: the arm.
        path: the path.
        timing: the solution's time law.
        payload: the load as the output meets it in time (payload, process or its
            path-indexed view).
        sample_rate: output rate [Hz]; None = at the waypoints.
        playback: also evaluate what a controller plays between the output points
            (efforts and velocities).
        kwargs: further arguments of evaluate (theta, default_positions, time_offset).
        factor: the effort factors the solution was computed with, (nv,).
        mass: load mass per gridpoint used by the solve, (G,) [kg].
        process_time: process time per gridpoint used by the solve, (G,) [s].
        converged: whether the load schedule had reached its fixed point.
    """
    output = sample_output(path, timing, sample_rate)
    verification = evaluate(model, sample_dense(path, timing), payload,
                            compute_max_payload=False, **kwargs)
    evaluation = evaluate(model, output, payload, compute_max_payload=False, **kwargs)
    played = np.full(model.nv, np.nan)
    velocity = np.fmax(np.max(np.abs(verification.velocities), axis=0),
                       np.max(np.abs(evaluation.velocities), axis=0))
    acceleration = np.fmax(np.max(np.abs(verification.accelerations), axis=0),
                           np.max(np.abs(evaluation.accelerations), axis=0))
    if playback and output.n_points > 1:
        per_segment = int(np.clip(2000 // output.n_points, 2, 8))
        playing = evaluate(model, controller_playback(output, per_segment), payload,
                           compute_max_payload=False, **kwargs)
        played = playing.peak_ratio
        # what the controller plays is held to the velocity limits too
        velocity = np.fmax(velocity, np.max(np.abs(playing.velocities), axis=0))
    return Candidate(timing, output, verification, evaluation, velocity, acceleration,
                     np.fmax(verification.peak_ratio, evaluation.peak_ratio), played,
                     factor.copy(), mass.copy(), process_time.copy(), converged, payload)
