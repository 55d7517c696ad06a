r"""A loading process indexed by path position (``loading_index="path"``).

The default (:mod:`~robot_tv_dynamics.retiming.solve`) meets a loading process at
process time t_new + offset: the process runs on its own clock. The alternative here
ties it to the arm's progress: the load at path position s is the load the *input*
had there, Θ(s) = Θ_process(t_in(s) + offset), with t_in(s) the input's own
time_from_start at s, and the process runs at the arm's pace. Everything in it that
moves is then slaved to ṡ:

.. math::
    r = \frac{dt_{in}}{dt} = t_{in}'(s)\,\dot s, \quad
    \dot r = t_{in}''(s)\,\dot s^2 + t_{in}'(s)\,\ddot s,

    \dotΦ = \dotΦ_p\, r, \quad ψ = ψ_p\, r, \quad
    \dotψ = \dotψ_p\, r^2 + ψ_p\, \dot r, \quad ν = ν_p\, r^2

(subscript p: the process at t_in(s) + offset), i.e. Θ̇ = Θ_s ṡ, Ψ = Ψ_s ṡ and
Ψ̇ = Ψ_s' ṡ² + Ψ_s s̈ with Θ_s = Θ̇_p t_in', Ψ_s = ψ_p t_in' and
Ψ_s' = ψ̇_p t_in'² + ψ_p t_in''. Every rate term of eq. (39) is then quadratic in the
path speed, and TOPP-RA's constraint holds it exactly in one solve
(:class:`~robot_tv_dynamics.retiming.constraints.PathRates`).

This is right for a load whose particles are driven by the arm's motion (a dispenser
geared to the path), and a useful "same load at the same place" model; it is not right
for a stream that falls under gravity (its velocities do not scale with ṡ), and a load
change that happened while the input was at rest happens at zero path length here.

:class:`PathIndexedProcess` is the same model seen in time along the retimed motion (a
:class:`~robot_tv_dynamics.loading.LoadingProcess`), so that
:func:`~robot_tv_dynamics.evaluation.evaluate` can verify the output independently.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.dynamics import psi_momentum
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.loading import BodyLoadMap, LoadingProcess, LoadState
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.constraints import GridLoad, PathRates
from robot_tv_dynamics.retiming.path import JointPath
from robot_tv_dynamics.retiming.timing import TimeLaw


def path_grid_load(model: RobotModel, process: LoadingProcess, theta_base: Array,
                   path: JointPath, grid: Array, time_offset: float) -> GridLoad:
    """Θ(s_j) and the per-path-speed rates Θ_s, γ_s, γ_s' on the grid (body coordinates).

    Args:
        model: the arm.
        process: the loading process (time-indexed as defined).
        theta_base: Θ of the arm without the load, (N, 10).
        path: the path (its input timing t_in(s) maps s to process time).
        grid: gridpoints s_j, (G,).
        time_offset: process time at the input's time_from_start = 0 [s].
    """
    mapping = BodyLoadMap(model, str(process.link))
    t_in, t1, t2 = path.original_time_derivatives(grid)
    for end, t_end in (("start", t_in[0]), ("end", t_in[-1])):
        state = process.state(float(t_end + time_offset))
        if np.any(state.phi_dot) or np.any(state.psi) or np.any(state.psi_dot):
            raise InvalidInputError(
                "loading_index", f"the loading process is changing at process time "
                f"{t_end + time_offset:.4g} s, where the input is at its {end} (at rest): a "
                "load indexed by path position cannot change at zero path length; use "
                'loading_index="time" or another time_offset')
    size, n = grid.size, model.n_bodies
    theta, theta_s = np.empty((size, n, 10)), np.empty((size, n, 10))
    gamma_s, gamma_s_prime = np.empty((size, n, 6)), np.empty((size, n, 6))
    mass = np.empty(size)
    for j in range(size):
        state = process.state(float(t_in[j] + time_offset))
        theta[j], phi_dot, psi, psi_dot = mapping(state, theta_base)
        gamma, gamma_dot = psi_momentum(psi), psi_momentum(psi_dot)
        theta_s[j] = phi_dot * t1[j]
        gamma_s[j] = gamma * t1[j]
        gamma_s_prime[j] = gamma_dot * t1[j] ** 2 + gamma * t2[j]
        mass[j] = state.phi[0]
    zeros_theta, zeros_gamma = np.zeros((size, n, 10)), np.zeros((size, n, 6))
    return GridLoad(theta, zeros_theta, zeros_gamma, zeros_gamma.copy(), mass,
                    PathRates(theta_s, gamma_s, gamma_s_prime))


class PathIndexedProcess:
    """A loading process tied to the path, seen in time along a retimed motion.

    ``state(t)`` is the process at the input's time of the path position s(t) the
    retimed motion reaches at t, with its rates scaled by r = dt_in/dt (module
    docstring). Evaluate it with ``time_offset = 0`` (the offset is inside).
    """

    def __init__(self, process: LoadingProcess, path: JointPath, timing: TimeLaw,
                 time_offset: float) -> None:
        """Build the view.

        Args:
            process: the time-indexed loading process.
            path: the path, with the input's timing t_in(s).
            timing: the retimed law s(t).
            time_offset: process time at the input's time_from_start = 0 [s].
        """
        self.process = process
        self.link = process.link
        self.path = path
        self.timing = timing
        self.time_offset = float(time_offset)
        self.duration = float(timing.duration)

    def state(self, t: float) -> LoadState:
        """The load at time t of the retimed motion (link frame)."""
        s, sd, sdd = self.timing.at_time(np.array([t]))
        t_in, t1, t2 = self.path.original_time_derivatives(s)
        rate = float(t1[0] * sd[0])
        rate_dot = float(t2[0] * sd[0] ** 2 + t1[0] * sdd[0])
        state = self.process.state(float(t_in[0]) + self.time_offset)
        return LoadState(state.phi.copy(), state.phi_dot * rate, state.psi * rate,
                         state.psi_dot * rate**2 + state.psi * rate_dot,
                         state.nu * rate**2)

    def describe(self) -> str:
        """One line for logs and reports."""
        describe = getattr(self.process, "describe", None)
        inner = describe() if callable(describe) else type(self.process).__name__
        return f"{inner}, indexed by path position"
