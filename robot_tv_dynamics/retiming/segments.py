"""Trajectories that stop inside: retimed segment by segment, the stops kept.

A planned trajectory may come to rest at interior waypoints (a sequence of moves, a
corner of the path). One spline through all waypoints would pass such a stop without
stopping and round a corner there, i.e. leave the path. :func:`stop_ranges` finds the
stops (every velocity zero at an interior waypoint, positions apart from both ends),
and :func:`retime_segments` retimes each rest-to-rest segment on its own — a loading
process indexed by time continuing across them (segment k starts at the process time
where segment k − 1 ended) — and joins the results. Everything reported about the whole
is measured again by :func:`~robot_tv_dynamics.evaluation.evaluate` on the joined output.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.evaluation import Load, Payload, Trajectory, evaluate
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.loading import LoadState
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.options import RetimeOptions
from robot_tv_dynamics.retiming.playback import controller_playback
from robot_tv_dynamics.retiming.result import (
    LoadSchedule,
    RetimeResult,
    UniformScaling,
    uniform_scaling,
)
from robot_tv_dynamics.retiming.timing import TimeLaw

#: A velocity below this counts as zero when looking for stops [rad/s or m/s].
STOP_SPEED = 1e-9


def stop_ranges(trajectory: Trajectory) -> list[tuple[int, int]]:
    """Index ranges [first, last] of the rest-to-rest segments between interior stops.

    A stop is an interior waypoint where every given velocity is zero. Without
    velocities or stops — or when a segment would have no length (a dwell: the same
    position held over several points) — the whole trajectory is one range.
    """
    k = trajectory.n_points
    qd = trajectory.velocities
    whole = [(0, k - 1)]
    if qd is None or k < 3:
        return whole
    stops = [i for i in range(1, k - 1) if not np.any(np.abs(qd[i]) > STOP_SPEED)]
    bounds = [0, *stops, k - 1]
    ranges = list(zip(bounds[:-1], bounds[1:], strict=True))
    q = trajectory.positions
    for first, last in ranges:
        if np.max(np.linalg.norm(q[first:last + 1] - q[first], axis=1)) <= 1e-12:
            return whole
    return ranges


def _slice(trajectory: Trajectory, first: int, last: int) -> Trajectory:
    part = slice(first, last + 1)
    return Trajectory(
        trajectory.joint_names, trajectory.time_from_start[part], trajectory.positions[part],
        None if trajectory.velocities is None else trajectory.velocities[part],
        None if trajectory.accelerations is None else trajectory.accelerations[part])


def _join(parts: Sequence[Trajectory], starts: Sequence[float]) -> Trajectory:
    """One trajectory from parts shifted to ``starts``; each junction point once.

    At a junction the arm is at rest; the point kept is the later part's first (its
    acceleration is the one the arm starts the next segment with).
    """
    t: list[float] = []
    q: list[Array] = []
    qd: list[Array] = []
    qdd: list[Array] = []
    for k, (part, start) in enumerate(zip(parts, starts, strict=True)):
        if part.velocities is None or part.accelerations is None:
            raise ValueError("segment outputs carry velocities and accelerations")
        if k > 0:  # the previous part's end gives way to this part's start
            t.pop(), q.pop(), qd.pop(), qdd.pop()
        t.extend(part.time_from_start + start)
        q.extend(part.positions)
        qd.extend(part.velocities)
        qdd.extend(part.accelerations)
    return Trajectory(parts[0].joint_names, np.array(t), np.array(q), np.array(qd),
                      np.array(qdd))


@dataclass(frozen=True)
class ChainedTiming:
    """The time laws of consecutive segments as one (s and t offset per segment)."""

    laws: tuple[TimeLaw, ...]
    s_start: Array
    t_start: Array

    @property
    def duration(self) -> float:
        """Total time [s]."""
        return float(self.t_start[-1] + self.laws[-1].duration)

    @property
    def length(self) -> float:
        """Total path length [rad or m]."""
        return float(self.s_start[-1] + self.laws[-1].length)

    def _dispatch(self, starts: Array, x: Array,
                  call: Callable[[TimeLaw, Array], tuple[Array, Array, Array]],
                  offset_out: Array) -> tuple[Array, Array, Array]:
        index = np.clip(np.searchsorted(starts, x, side="right") - 1, 0, len(self.laws) - 1)
        out = [np.empty(x.shape) for _ in range(3)]
        for k, law in enumerate(self.laws):
            mine = index == k
            if np.any(mine):
                values = call(law, x[mine] - starts[k])
                out[0][mine] = values[0] + offset_out[k]
                out[1][mine], out[2][mine] = values[1], values[2]
        return out[0], out[1], out[2]

    def at_time(self, t: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """(s, ṡ, s̈) at times t."""
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        return self._dispatch(self.t_start, t, lambda law, x: law.at_time(x), self.s_start)

    def at_path(self, s: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """(t, ṡ, s̈) at path positions s."""
        s = np.atleast_1d(np.asarray(s, dtype=np.float64))
        return self._dispatch(self.s_start, s, lambda law, x: law.at_path(x), self.t_start)

    def sample_times(self) -> Array:
        """Every segment's sample times, shifted; each junction once."""
        return np.unique(np.concatenate([law.sample_times() + start for law, start in
                                         zip(self.laws, self.t_start, strict=True)]))


class ChainedLoad:
    """Per-segment views of a load (path-indexed processes) as one, by time."""

    def __init__(self, loads: Sequence[Any], t_start: Array, duration: float) -> None:
        """Build it from the segments' loads and their start times [s]."""
        self.loads = list(loads)
        self.t_start = np.asarray(t_start)
        self.link = self.loads[0].link
        self.duration = duration

    def state(self, t: float) -> LoadState:
        """The load at time t of the joined motion."""
        k = int(np.clip(np.searchsorted(self.t_start, t, side="right") - 1, 0,
                        len(self.loads) - 1))
        return LoadState(*_fields(self.loads[k].state(t - float(self.t_start[k]))))

    def describe(self) -> str:
        """One line for logs and reports."""
        return f"{len(self.loads)} segments of a path-indexed load"


def _fields(state: LoadState) -> tuple[Array, Array, Array, Array, float]:
    return (state.phi.copy(), state.phi_dot.copy(), state.psi.copy(), state.psi_dot.copy(),
            state.nu)


def retime_segments(
    retime: Callable[..., RetimeResult], model: RobotModel, trajectory: Trajectory,
    payload: Load | None, ranges: list[tuple[int, int]], options: RetimeOptions,
) -> RetimeResult:
    """Retime every rest-to-rest segment and join them (module docstring).

    Args:
        retime: the single-segment retime (:func:`~robot_tv_dynamics.retiming.solve.retime`).
        model: the arm.
        trajectory: the whole input.
        payload: the load.
        ranges: :func:`stop_ranges` of the input (more than one).
        options: the settings of the whole retiming.
    """
    started = time.perf_counter()
    by_time = options.loading_index == "time"
    offset = options.time_offset
    results, t_start = _retime_each(retime, model, trajectory, payload, ranges, options)
    starts = np.array(t_start)
    lengths = np.array([r.timing.length for r in results])
    s_start = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
    timing = ChainedTiming(tuple(r.timing for r in results), s_start, starts)
    output = _join([r.trajectory for r in results], t_start)
    dense = _join([_trajectory_of(r.verification) for r in results], t_start)
    load: Any = payload
    if not by_time and payload is not None and not isinstance(payload, Payload):
        load = ChainedLoad([r.load for r in results], starts, timing.duration)
    head = results[0]
    kwargs: dict[str, Any] = {"theta": options.theta,
              "default_positions": options.default_positions,
              "time_offset": 0.0 if isinstance(load, ChainedLoad) else offset}
    evaluation = evaluate(model, output, load, compute_max_payload=False, **kwargs)
    verification = evaluate(model, dense, load, compute_max_payload=False, **kwargs)
    played = np.full(model.nv, np.nan)
    if options.verify_playback:
        per_segment = int(np.clip(2000 // output.n_points, 2, 8))
        played = evaluate(model, controller_playback(output, per_segment), load,
                          compute_max_payload=False, **kwargs).peak_ratio
    before = evaluate(model, trajectory, payload, compute_max_payload=False,
                      theta=options.theta,
                      default_positions=options.default_positions, time_offset=offset)
    factor = np.min([r.effort_factor for r in results], axis=0)
    uniform, notes = _uniform_comparison(model, trajectory, payload, ranges, options,
                                         head.effort_margin, kwargs)
    notes = _unique([*notes, *(n for r in results for n in r.notes)])
    warnings = _unique([w for r in results for w in r.warnings])
    schedule, s_before, speed_before = _joined_path(results, s_start, starts)
    return replace(
        head, trajectory=output, timing=timing, duration_after=timing.duration,
        duration_before=float(trajectory.time_from_start[-1] - trajectory.time_from_start[0]),
        peak_ratio_before=before.peak_ratio,
        peak_ratio_after=np.fmax.reduce([evaluation.peak_ratio, verification.peak_ratio,
                                         *(r.peak_ratio_after for r in results)]),
        peak_ratio_playback=played,
        peak_velocity_ratio_after=np.max(np.abs(verification.velocities), axis=0)
        / np.where(model.joint_limits.velocity > 0, model.joint_limits.velocity, np.nan),
        active=_merge_active(results),
        uniform=uniform, iterations=sum(r.iterations for r in results),
        load_converged=all(r.load_converged for r in results),
        timing_change=max(r.timing_change for r in results), effort_factor=factor,
        schedule=schedule, load=load, before=before, before_path_position=s_before,
        before_path_speed=speed_before, evaluation=evaluation, verification=verification,
        runtime=time.perf_counter() - started, notes=tuple(notes), warnings=tuple(warnings))


def _retime_each(
    retime: Callable[..., RetimeResult], model: RobotModel, trajectory: Trajectory,
    payload: Load | None, ranges: list[tuple[int, int]], options: RetimeOptions,
) -> tuple[list[RetimeResult], list[float]]:
    """Each segment of ``ranges`` retimed on its own, and its start in the joined output [s].

    With a loading process indexed by time, segment k's process starts where segment
    k − 1's ended (``options.time_offset`` plus the durations before it).
    """
    by_time = options.loading_index == "time"
    offset = options.time_offset
    results: list[RetimeResult] = []
    t_start, elapsed = [], 0.0
    for first, last in ranges:
        local = replace(options, compare_uniform=False, split_at_stops=False,
                        time_offset=offset + elapsed if by_time else offset)
        results.append(retime(model, _slice(trajectory, first, last), payload, local))
        t_start.append(elapsed)
        elapsed += results[-1].duration_after
    return results, t_start


def _uniform_comparison(
    model: RobotModel, trajectory: Trajectory, payload: Load | None,
    ranges: list[tuple[int, int]], options: RetimeOptions, effort_margin: float,
    kwargs: dict[str, Any],
) -> tuple[UniformScaling | None, list[str]]:
    """The uniform slowdown of the whole input to compare with, and the notes on the split.

    The comparison is made only for a loading process indexed by time and without
    acceleration limits; otherwise it is ``None`` and a note says so. ``kwargs`` are
    the evaluation's settings (theta, default positions, time offset).
    """
    velocity_limit = np.where(model.joint_limits.velocity > 0, model.joint_limits.velocity
                              * options.velocity_scale, np.inf)
    stops = [last for _, last in ranges[:-1]]
    notes = [f"the input stops at waypoint(s) {stops}: retimed as {len(ranges)} rest-to-rest "
             "segments, the stops kept"]
    uniform: UniformScaling | None = None
    if options.compare_uniform:
        if options.loading_index == "time" and options.acceleration_limits is None:
            uniform = uniform_scaling(model, trajectory, payload, effort_margin,
                                      velocity_limit, np.full(model.nv, np.inf), kwargs,
                                      options.moveit_scaling)
        else:
            notes.append("no uniform-slowdown comparison for this segmented input")
    return uniform, notes


def _unique(items: Sequence[str]) -> list[str]:
    """``items`` without repeats, in first-seen order."""
    return list(dict.fromkeys(items))


def _joined_path(results: Sequence[RetimeResult], s_start: Array, starts: Array
                 ) -> tuple[LoadSchedule, Array, Array]:
    """The segments' load schedules, and the input's path position and speed, end to end.

    ``s_start``: each segment's path-position offset; ``starts``: its start time [s]. A
    segment after the first drops its first sample (the previous one's last).
    """
    s_before = np.concatenate([r.before_path_position[(0 if k == 0 else 1):] + s_start[k]
                               for k, r in enumerate(results)])
    speed_before = np.concatenate([r.before_path_speed[(0 if k == 0 else 1):]
                                   for k, r in enumerate(results)])
    schedule = LoadSchedule(
        s=np.concatenate([r.schedule.s + s_start[k] for k, r in enumerate(results)]),
        process_time=np.concatenate([r.schedule.process_time for r in results]),
        time=np.concatenate([r.schedule.time + starts[k] for k, r in enumerate(results)]),
        mass=np.concatenate([r.schedule.mass for r in results]))
    return schedule, s_before, speed_before


def _merge_active(results: Sequence[RetimeResult]) -> dict[str, dict[str, float]]:
    """The segments' active fractions, weighted by their numbers of dense samples."""
    weights = np.array([r.verification.t.size for r in results], dtype=float)
    weights /= weights.sum()
    out: dict[str, dict[str, float]] = {}
    for r, weight in zip(results, weights, strict=True):
        for kind, joints in r.active.items():
            merged = out.setdefault(kind, {})
            for joint, fraction in joints.items():
                merged[joint] = merged.get(joint, 0.0) + weight * fraction
    return out


def _trajectory_of(result: Any) -> Trajectory:
    """The sampled trajectory an evaluation was made on (trajectory joints only)."""
    columns = list(result.trajectory_columns)
    return Trajectory(result.trajectory_joint_names, result.t, result.positions[:, columns],
                      result.velocities[:, columns], result.accelerations[:, columns])
