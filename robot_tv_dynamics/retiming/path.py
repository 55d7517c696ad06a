r"""The geometric path of a planned trajectory: q = p(s) through its waypoints.

The positions of a ``JointTrajectory`` define the path; its timing is what
:func:`~robot_tv_dynamics.retiming.solve.retime` replaces. The path parameter s is
the cumulative chord length of the waypoints in joint space (over the trajectory's
joints, [rad or m]), and p(s) is the not-a-knot cubic spline through the waypoints at
those s (``toppra.SplineInterpolator``): p passes exactly through every waypoint and
‖p'(s)‖ ≈ 1, so p' does not vanish at a rest-to-rest start or end (with s = the
original time it would, and TOPP-RA's discretization degenerates there).

Between waypoints the spline through the positions is the path; a planner's dense
output (MoveIt samples its trajectories every ~0.1 s or finer) makes it agree with
the planner's own interpolation to O(h⁴).

Joints of the model that the trajectory does not list are held at fixed positions
(as :func:`~robot_tv_dynamics.evaluation.evaluate` holds them): p' = p'' = 0 there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.interpolate
import toppra

from robot_tv_dynamics.evaluation import Trajectory, held_positions, model_columns
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel

#: Waypoints closer than this (chord length [rad or m]) are merged into one.
DUPLICATE_TOLERANCE = 1e-12
#: Slack on the URDF position limits at the waypoints [rad or m].
POSITION_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PathSamples:
    """The path and its s-derivatives at some path positions, all model joints.

    Attributes:
        s: path positions, (G,) [rad or m of chord length].
        q: p(s), (G, nv) [rad or m].
        dq: p'(s), (G, nv) [1].
        ddq: p''(s), (G, nv) [1/(rad or m)].
    """

    s: Array
    q: Array
    dq: Array
    ddq: Array


class JointPath:
    """The geometric path of a trajectory, in the model's joint space.

    Attributes:
        columns: model index of each trajectory joint, in the trajectory's column order.
        joint_names: the trajectory's joint names.
        waypoint_s: s of each (deduplicated) waypoint, (K,) [rad or m].
        waypoint_times: the input's time_from_start of those waypoints, (K,) [s].
        waypoint_index: index in the input of each kept waypoint, (K,).
        spline: the ``toppra.SplineInterpolator`` over the trajectory's joints.
        held: positions of every model joint, the held ones as used (nv,).
        notes: what was done to the input (merged duplicates, held joints).
    """

    def __init__(
        self,
        model: RobotModel,
        trajectory: Trajectory,
        default_positions: npt.ArrayLike | Mapping[str, float] | None = None,
    ) -> None:
        """Build the path and check it against the model.

        Args:
            model: the arm.
            trajectory: the planned motion (its positions define the path).
            default_positions: positions of the joints the trajectory does not list,
                (nv,) in model order or a mapping name → position; None = 0.

        Raises:
            UnknownNameError: a trajectory or held joint that is not in the model.
            InvalidInputError: a waypoint outside the URDF position limits, a path of
                zero length (all waypoints equal).
        """
        self.model = model
        self.joint_names = trajectory.joint_names
        self.columns = tuple(model_columns(model, trajectory.joint_names))
        self.held = held_positions(model, default_positions)
        self.notes: list[str] = []
        q = np.asarray(trajectory.positions, dtype=np.float64)
        _check_position_limits(model, self.columns, q)
        steps = np.linalg.norm(np.diff(q, axis=0), axis=1)
        keep = np.concatenate([[True], steps > DUPLICATE_TOLERANCE])
        if not keep.all():
            self.notes.append(f"{int((~keep).sum())} waypoint(s) repeating the previous "
                              "position were merged into it")
        if keep.sum() < 2:
            raise InvalidInputError(
                "trajectory.positions", "the path has no length: every waypoint is at the "
                "same position (nothing to retime)")
        self.waypoint_index = np.flatnonzero(keep)
        positions = q[keep]
        s = np.concatenate([[0.0], np.cumsum(steps[keep[1:]])])
        self.waypoint_s = s
        self.waypoint_positions = positions
        self.waypoint_times = np.asarray(trajectory.time_from_start)[keep]
        self.length = float(s[-1])
        self.spline = toppra.SplineInterpolator(s, positions, bc_type="not-a-knot")
        # the input's time as a function of s (monotone), for the first load schedule
        self._original_time = scipy.interpolate.PchipInterpolator(s, self.waypoint_times)
        missing = [i for i in range(model.nv) if i not in self.columns]
        if missing:
            text = ", ".join(f"{model.joint_names[i]} = {self.held[i]:g}" for i in missing)
            self.notes.append("joints not in the trajectory are held at fixed positions: "
                              f"{text}")

    @property
    def dof(self) -> int:
        """Number of trajectory joints n."""
        return len(self.columns)

    def samples(self, s: npt.ArrayLike) -> PathSamples:
        """p, p', p'' at path positions ``s``, in all model joints (held ones constant)."""
        s = np.clip(np.asarray(s, dtype=np.float64), 0.0, self.length)
        nv, k = self.model.nv, s.size
        q = np.tile(self.held, (k, 1))
        dq, ddq = np.zeros((k, nv)), np.zeros((k, nv))
        columns = list(self.columns)
        q[:, columns] = self.spline(s)
        dq[:, columns] = self.spline(s, 1)
        ddq[:, columns] = self.spline(s, 2)
        return PathSamples(s, q, dq, ddq)

    def original_time(self, s: npt.ArrayLike) -> Array:
        """The input's time_from_start at path positions ``s`` (monotone interpolant) [s]."""
        return np.asarray(self._original_time(np.asarray(s, dtype=np.float64)))

    def original_time_derivatives(self, s: npt.ArrayLike) -> tuple[Array, Array, Array]:
        """The input's time t(s) and its derivatives dt/ds, d²t/ds² at path positions s."""
        s = np.clip(np.asarray(s, dtype=np.float64), 0.0, self.length)
        spline = self._original_time
        return (np.asarray(spline(s)), np.asarray(spline(s, 1)), np.asarray(spline(s, 2)))

    def original_speed(self, s: npt.ArrayLike) -> Array:
        """ṡ = 1/(dt/ds) of the input's timing at path positions ``s`` (0 where it rests)."""
        slope = np.asarray(self._original_time.derivative()(np.asarray(s, dtype=np.float64)))
        return np.where(slope > 0.0, 1.0 / np.maximum(slope, 1e-12), 0.0)

    def path_speed(self, s: float, qd: Array) -> float:
        """ṡ ≥ 0 that best explains the trajectory-joint velocity ``qd`` at s (least squares).

        Args:
            s: path position.
            qd: velocities of the trajectory's joints, (n,) [rad/s or m/s].
        """
        tangent = np.asarray(self.spline(np.array([s]), 1))[0]
        return max(0.0, float(qd @ tangent) / float(tangent @ tangent))


def _check_position_limits(model: RobotModel, columns: tuple[int, ...], q: Array) -> None:
    """Every waypoint within the URDF position limits (continuous joints: any angle)."""
    limits = model.joint_limits
    for j, i in enumerate(columns):
        if limits.continuous[i] or not limits.upper[i] > limits.lower[i]:
            continue
        lower, upper = limits.lower[i] - POSITION_TOLERANCE, limits.upper[i] + POSITION_TOLERANCE
        outside = (q[:, j] < lower) | (q[:, j] > upper)
        if outside.any():
            k = int(np.argmax(outside))
            raise InvalidInputError(
                f"trajectory.points[{k}].positions",
                f'joint "{model.joint_names[i]}" at {q[k, j]:.6g} is outside its URDF limits '
                f"[{limits.lower[i]:.6g}, {limits.upper[i]:.6g}]")
