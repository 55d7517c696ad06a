"""Verification of one TOPP-RA solution, independent of the constraint it was built from.

:func:`verify` samples the solution's time law densely, at the output points and, if
asked, as a quintic-interpolating trajectory controller plays the output points
(:func:`~robot_tv_dynamics.retiming.playback.controller_playback`), and measures each with
:func:`robot_tv_dynamics.evaluation.evaluate` (eq. (39) point by point, the load as
the output meets it in time). Given a :class:`~robot_tv_dynamics.dynamics.RecursiveDynamics`
that holds a constant load, it measures the same samples by τ of eq. (39) alone
(:class:`~robot_tv_dynamics.retiming.torques.TorqueCheck`: RNEA, equal to evaluate's τ
to ~1e-14 relative, without its term breakdown and reports): what the trajectory gate
decides on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_tv_dynamics.dynamics import RecursiveDynamics
from robot_tv_dynamics.evaluation import Load, Trajectory, TrajectoryEvaluation, evaluate
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.path import JointPath
from robot_tv_dynamics.retiming.playback import controller_playback
from robot_tv_dynamics.retiming.timing import TimeLaw, sample_dense, sample_output
from robot_tv_dynamics.retiming.torques import TorqueCheck


@dataclass(frozen=True)
class Candidate:
    """One verified TOPP-RA solution."""

    timing: TimeLaw
    output: Trajectory
    verification: TrajectoryEvaluation | None  # dense samples; None: checked by τ alone
    evaluation: TrajectoryEvaluation | None  # output points; None: checked by τ alone
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
           factor: Array, mass: Array, process_time: Array, converged: bool,
           dynamics: RecursiveDynamics | None = None) -> Candidate:
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
        dynamics: an evaluator holding Θ with the (constant) payload: measure the same
            samples by τ alone (:class:`~robot_tv_dynamics.retiming.torques.TorqueCheck`)
            and leave the candidate's evaluations None; None = by evaluate.
    """
    output = sample_output(path, timing, sample_rate)
    dense = sample_dense(path, timing)
    played = None
    if playback and output.n_points > 1:
        played = controller_playback(output, int(np.clip(2000 // output.n_points, 2, 8)))
    checks: list[TrajectoryEvaluation | TorqueCheck]
    if dynamics is None:
        checks = [evaluate(model, trajectory, payload, compute_max_payload=False, **kwargs)
                  for trajectory in (dense, output, played) if trajectory is not None]
    else:
        limit = np.asarray(model.joint_limits.effort, dtype=np.float64)
        limit = np.where(limit > 0.0, limit, np.nan)
        checks = [TorqueCheck.of(model, dynamics, trajectory, kwargs.get("default_positions"),
                                 limit)
                  for trajectory in (dense, output, played) if trajectory is not None]
    verification, evaluation = checks[0], checks[1]
    velocity = np.fmax(np.max(np.abs(verification.velocities), axis=0),
                       np.max(np.abs(evaluation.velocities), axis=0))
    acceleration = np.fmax(np.max(np.abs(verification.accelerations), axis=0),
                           np.max(np.abs(evaluation.accelerations), axis=0))
    peak_played = np.full(model.nv, np.nan)
    if played is not None:
        playing = checks[2]
        peak_played = playing.peak_ratio
        # what the controller plays is held to the velocity limits too
        velocity = np.fmax(velocity, np.max(np.abs(playing.velocities), axis=0))
    return Candidate(
        timing, output,
        verification if isinstance(verification, TrajectoryEvaluation) else None,
        evaluation if isinstance(evaluation, TrajectoryEvaluation) else None,
        velocity, acceleration, np.fmax(verification.peak_ratio, evaluation.peak_ratio),
        peak_played, factor.copy(), mass.copy(), process_time.copy(), converged, payload)
