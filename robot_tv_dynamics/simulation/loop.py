r"""The simulated arm under any :class:`~robot_tv_dynamics.simulation.interface.Controller`.

The package's one closed loop: the plant (:class:`~robot_tv_dynamics.simulation.plant.
ArmSimulator`, RK4, generalized eq. (39) under the loading process), the controller called
once per plant step with τ held over it, clipped to the URDF's effort limits as a drive
would (zero limits: none; ``clip=False``: never), plus an extra torque (``effort_commands``,
or ``adapt``'s disturbance w). ``sim_node`` runs it with ``controller:=slotine-li`` (or
``natural``, ``projected``, ``computed-torque``); the demo's loop
(:class:`~robot_tv_dynamics.simulation.closed_loop.ClosedLoop`) runs it with computed torque
on the payload estimate; :func:`~robot_tv_dynamics.control.run_adaptive` runs it with the
recording of the ``adapt`` command, between :meth:`ControlLoop.control` and
:meth:`ControlLoop.advance`. No ROS code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.inertia import Array, check_finite
from robot_tv_dynamics.loading import LoadingProcess
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation.control import SineReference
from robot_tv_dynamics.simulation.interface import Controller, ControlOutput, ControlState
from robot_tv_dynamics.simulation.plant import ArmSimulator, Loads


@dataclass(frozen=True)
class ControlSample:
    """One step of the loop (arrays are copies).

    Attributes:
        t: time of the sample (start of the step) [s].
        q: joint positions (nv,) [rad, m].
        qd: joint velocities (nv,) [rad/s, m/s].
        qdd: joint accelerations of eq. (39) for the applied τ (nv,).
        tau: applied joint torque (nv,) [N·m, N]: the controller's, clipped, plus the extra.
        reference: (q_d, q̇_d, q̈_d) the controller tracked at ``t``.
        loads: the plant's true Θ, Θ̇, Ψ, Ψ̇ at ``t``.
        theta_hat: the controller's estimate Θ̂ (N, 10) after this step, eq. (7) order.
        saturated: whether the controller's torque was clipped.
    """

    t: float
    q: Array
    qd: Array
    qdd: Array
    tau: Array
    reference: tuple[Array, Array, Array]
    loads: Loads
    theta_hat: Array
    saturated: bool


class ControlLoop:
    """The plant under ``controller`` tracking ``reference`` (module docstring)."""

    def __init__(self, model: RobotModel, controller: Controller, reference: SineReference,
                 process: LoadingProcess | None = None, *, rate: float = 1000.0,
                 theta_base: npt.ArrayLike | None = None, classical: bool = False,
                 clip: bool = True) -> None:
        """Build the loop; the arm starts at rest on the reference's start point.

        Args:
            model: the arm (also the controller's).
            controller: any controller of the Protocol.
            reference: the desired motion t ↦ (q_d, q̇_d, q̈_d).
            process: the loading process (None: Θ constant).
            rate: plant and control rate [Hz].
            theta_base: the plant's Θ without the load (N, 10); default the URDF's.
            classical: the classical plant (Θ̇, Ψ, Ψ̇ terms off).
            clip: clip the controller's τ to the URDF's effort limits.
        """
        self.model = model
        self.controller = controller
        self.reference = reference
        q0 = reference(0.0)[0]
        self.plant = ArmSimulator(model, process, theta_base=theta_base, q0=q0, rate=rate,
                                  classical=classical)
        effort = np.asarray(model.joint_limits.effort, dtype=np.float64)
        self.effort_limit = np.where((effort > 0.0) & clip, effort, np.inf)
        self.extra_torque: Array = np.zeros(model.nv)

    def set_extra_torque(self, tau: npt.ArrayLike) -> None:
        """A torque added to the controller's (e.g. from ``effort_commands``) [N·m, N]."""
        self.extra_torque = check_finite(tau, "extra torque", (self.model.nv,)).copy()

    def control(self) -> tuple[ControlState, ControlOutput]:
        """The controller's answer at the plant's state (copies of q, q̇); nothing steps."""
        plant = self.plant
        state = ControlState(plant.t, plant.q.copy(), plant.qd.copy(), *self.reference(plant.t))
        return state, self.controller.step(state, plant.dt)

    def advance(self, output: ControlOutput) -> tuple[Array, bool, Array]:
        """One plant step under ``output``'s τ clipped, plus the extra torque.

        Returns:
            (the applied τ, whether it was clipped, q̈ of eq. (39) at the step's start).
        """
        tau = np.clip(output.tau, -self.effort_limit, self.effort_limit)
        saturated = bool(np.any(tau != output.tau))
        tau = tau + self.extra_torque
        return tau, saturated, self.plant.step(tau)

    def step(self) -> ControlSample:
        """One control period: the controller's τ (clipped) plus the extra, one plant step."""
        state, output = self.control()
        loads = self.plant.loads(state.t)
        tau, saturated, qdd = self.advance(output)
        return ControlSample(t=state.t, q=state.q, qd=state.qd, qdd=qdd, tau=tau,
                             reference=(state.q_d, state.qd_d, state.qdd_d), loads=loads,
                             theta_hat=np.array(output.theta_hat), saturated=saturated)
