r"""A joint trajectory controller for the simulated arm, as ros2_control's plays trajectories.

:class:`TrajectoryFollower` holds the active trajectory and, every control period, gives
the torque that tracks it:

- the reference q_r(t), q̇_r(t), q̈_r(t) is joint_trajectory_controller's interpolation
  of the points: quintic Hermite through (q, q̇, q̈) when accelerations are given, cubic
  through (q, q̇) when only velocities are, linear in q otherwise; a first point later
  than ``time_from_start = 0`` is reached from the state the arm was in when the
  trajectory started (at rest there), as the controller does; after the last point the
  last position is held;
- the torque is computed torque on the plant's own loads (the payload the arm carries,
  Θ̇, Ψ, Ψ̇ of eq. (39)): τ = τ₃₉(q, q̇, q̈_r + K_d(q̇_r − q̇) + K_p(q_r − q)), a perfectly
  identified arm under a high-bandwidth controller; it is not clipped to the effort
  limits, so a trajectory that needs more than the drives give shows it in τ;
- :meth:`hold` stops the arm where it is (a cancel, or a new goal's preemption before
  the new trajectory starts).

Joints the trajectory does not list keep their reference (held where they were).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import scipy.interpolate

from robot_tv_dynamics.evaluation import Trajectory, model_columns
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel, parse_locked_joints
from robot_tv_dynamics.simulation.control import ComputedTorqueOnEstimate
from robot_tv_dynamics.simulation.plant import Loads


class TrajectoryFollower:
    """Interpolation of the active trajectory and computed-torque tracking (module docstring).

    Attributes:
        start_time: time the active trajectory's ``time_from_start = 0`` is at [s].
        end_time: time of its last point [s] (``start_time`` while holding).
    """

    def __init__(self, model: RobotModel, q: npt.ArrayLike, bandwidth: float = 30.0) -> None:
        """Hold ``q`` until the first trajectory.

        Args:
            model: the arm.
            q: the positions to hold, (nv,) [rad or m].
            bandwidth: ω of the tracking error dynamics (K_p = ω², K_d = 2ω) [rad/s].
        """
        self.model = model
        self._rd = model.dynamics()
        # the law's commanded acceleration; τ on the plant's own loads below
        self._gains = ComputedTorqueOnEstimate(model, model.theta_nominal, omega=bandwidth)
        self._held = model.check_joint_vector(q, "q").copy()
        self._pending: Trajectory | None = None
        self._hold_pending = False
        self._spline: scipy.interpolate.BPoly | None = None
        self._columns: list[int] = []
        self.start_time = self.end_time = 0.0

    def start(self, trajectory: Trajectory, t: float | None = None,
              q: npt.ArrayLike | None = None) -> None:
        """Follow ``trajectory`` from time ``t``, the arm being at ``q`` then.

        Args:
            trajectory: the trajectory.
            t: when its ``time_from_start = 0`` is [s]; None: at the next :meth:`torque`
                call, from the state that call is given (what a controller thread does
                with a trajectory handed over by another thread).
            q: the arm's positions at ``t`` (with ``t``), (nv,) [rad or m].

        Raises:
            UnknownNameError: a joint the model does not have.
        """
        columns = model_columns(self.model, trajectory.joint_names)
        if t is None or q is None:
            self._pending = trajectory
            return
        self._pending, self._hold_pending = None, False
        self._held = self.model.check_joint_vector(q, "q").copy()
        times = np.asarray(trajectory.time_from_start, dtype=np.float64)
        derivatives = [trajectory.positions]
        if trajectory.velocities is not None:
            derivatives.append(trajectory.velocities)
            if trajectory.accelerations is not None:
                derivatives.append(trajectory.accelerations)
        columns_data = np.stack(derivatives, axis=1)  # (K, order, n)
        if times[0] > 0.0:  # reach the first point from where the arm is, at rest
            first = np.zeros((1, *columns_data.shape[1:]))
            first[0, 0] = self._held[columns]
            columns_data = np.concatenate([first, columns_data])
            times = np.concatenate([[0.0], times])
        if times.size == 1:  # one point at time 0: go there at once
            columns_data = np.concatenate([columns_data, columns_data])
            times = np.array([0.0, 1e-9])
        if len(derivatives) == 1:
            self._spline = scipy.interpolate.BPoly.from_derivatives(
                times, columns_data, orders=1)
        else:
            self._spline = scipy.interpolate.BPoly.from_derivatives(times, columns_data)
        self._columns = list(columns)
        self.start_time, self.end_time = float(t), float(t) + float(times[-1])

    def hold(self, q: npt.ArrayLike | None = None, t: float | None = None) -> None:
        """Stop following: hold ``q`` from time ``t`` on.

        With None: hold where the next :meth:`torque` call finds the arm.
        """
        self._spline = self._pending = None
        if q is None or t is None:
            self._hold_pending = True
            return
        self._hold_pending = False
        self._held = self.model.check_joint_vector(q, "q").copy()
        self.start_time = self.end_time = float(t)

    @property
    def active(self) -> bool:
        """Whether a trajectory is being followed (False while holding)."""
        return self._spline is not None

    @property
    def starting(self) -> bool:
        """Whether a trajectory waits for the next :meth:`torque` call to start."""
        return self._pending is not None

    def done(self, t: float) -> bool:
        """Whether the active trajectory's last point is reached in time (or none is active)."""
        if self._pending is not None:
            return False
        return self._spline is None or t >= self.end_time

    def reference(self, t: float) -> tuple[Array, Array, Array]:
        """q_r, q̇_r, q̈_r at time ``t``, all model joints [rad, rad/s, rad/s²]."""
        q_r = self._held.copy()
        qd_r, qdd_r = np.zeros_like(q_r), np.zeros_like(q_r)
        spline = self._spline
        if spline is None:
            return q_r, qd_r, qdd_r
        local = min(max(t - self.start_time, 0.0), self.end_time - self.start_time)
        q_r[self._columns] = spline(local)
        if t < self.end_time:
            qd_r[self._columns] = spline(local, 1)
            qdd_r[self._columns] = spline(local, 2)
        return q_r, qd_r, qdd_r

    def torque(self, t: float, q: Array, qd: Array, loads: Loads) -> Array:
        """τ of eq. (39) for the tracking acceleration, on the plant's loads at ``t``.

        A trajectory handed to :meth:`start` without a time starts here, at ``t`` from ``q``.
        """
        if self._pending is not None:
            self.start(self._pending, t, q)
        elif self._hold_pending:
            self.hold(q, t)
        command = self._gains.command(q, qd, self.reference(t))
        self._rd.set_loads(loads.theta, loads.theta_dot, loads.psi, loads.psi_dot)
        return np.asarray(self._rd.inverse_dynamics(q, qd, command))


def start_pose(model: RobotModel, entries: Sequence[str]) -> Array | None:
    """A start pose from ``"joint=position"`` entries over the middle of the joint limits.

    Args:
        model: the arm.
        entries: one per joint set [rad or m]; empty: None (the plant's default).

    Raises:
        InvalidInputError: an unknown joint, an entry without a position, a bad number.
    """
    if not entries:
        return None
    limits = model.joint_limits
    q0 = np.where(np.isfinite(limits.lower + limits.upper),
                  0.5 * (limits.lower + limits.upper), 0.0)
    for name, value in parse_locked_joints(entries, "initial_positions").items():
        if name not in model.joint_names:
            raise InvalidInputError("initial_positions", f'"{name}" is not a joint of the URDF; '
                                    f"joints: {model.joint_names}")
        if value is None:
            raise InvalidInputError("initial_positions", f'"{name}" needs "=position"')
        q0[model.joint_names.index(name)] = value
    return np.asarray(q0, dtype=np.float64)
