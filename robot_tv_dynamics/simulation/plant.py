r"""The plant: eq. (39) integrated forward by RK4 under a payload-loading process.

Each step holds the joint torque τ constant (zero-order hold, as a torque-controlled
arm's 1 kHz loop does) and advances (q, q̇) by one classical Runge–Kutta 4 step of

.. math::
    \ddot q = M(q,Θ(t))^{-1}\big(τ - (C(q,\dot q,Θ) + M(q,\dotΘ) + H(q,Ψ))\dot q
              - G(q,Θ) - J^\top Q_0 \dotΨ\big)

by the recursive backend (:class:`~robot_tv_dynamics.dynamics.RecursiveDynamics`: ABA with
the Θ̇, Ψ, Ψ̇ terms as external wrenches, loads held between stages). The loading process
(:mod:`robot_tv_dynamics.loading`) is evaluated **once per step**, at the step's end t + h
(which is the next step's start, so the sample at t is exact); stages 2 and 3 take the
loads at t + h/2 as the mean of the two ends. For loads that are C² over the step this
changes them by at most h²/8 · sup|Θ̈| (likewise Θ̇, Ψ, Ψ̇): at 1 kHz, 1.25e-7 s² times the
second derivative, e.g. 1.3e-7 kg for a mass whose flow changes by 1 kg/s². At a kink of
the process (a valve opening, the stream reaching the bottom) exact stage times would not
help either: RK4 is then first order over that one step.

Why RK4: the Panda's prismatic finger joints carry
15 g, so M(q) has an eigenvalue ~100× smaller than the arm's and the passive arm flings
the fingers at tens of m/s; semi-implicit (symplectic) Euler at 1 kHz then gains energy
without bound (measured: +33 J in 3 s of free fall, and it diverges at 2 kHz), while RK4
at 1 kHz keeps |ΔE| ≈ 2e-5 J over the same 3 s of chaotic free fall
(benchmarks/bench_sim.py and the simulation tests measure both).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics import dynamics
from robot_tv_dynamics.dynamics import Kinematics
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    PhysicalConsistencyError,
    SimulationDivergedError,
)
from robot_tv_dynamics.inertia import (
    SPATIAL_BASIS,
    Array,
)
from robot_tv_dynamics.loading import BodyLoadMap, LoadingProcess
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer.wrench import ExternalWrench

_SPATIAL_FLAT = SPATIAL_BASIS.reshape(10, 36)


@dataclass(frozen=True)
class Loads:
    """Θ, Θ̇, Ψ (as γ = Q₀ψ too), Ψ̇ and ν of the whole arm at one time.

    Attributes:
        theta: Θ (N, 10) [kg, kg·m, kg·m²].
        theta_dot: Θ̇ (N, 10).
        psi: Ψ (N, 12), eq. (27) layout, body coordinates.
        psi_dot: Ψ̇ (N, 12).
        gamma: Q₀Ψ (N, 6).
        gamma_dot: Q₀Ψ̇ (N, 6).
        nu: ν(t) of eq. (33) [kg·m²/s²].
    """

    theta: Array
    theta_dot: Array
    psi: Array
    psi_dot: Array
    gamma: Array
    gamma_dot: Array
    nu: float


class ArmSimulator:
    """RK4 integration of eq. (39) at a fixed step (see the module docstring)."""

    def __init__(
        self,
        model: RobotModel,
        process: LoadingProcess | None = None,
        *,
        theta_base: npt.ArrayLike | None = None,
        q0: npt.ArrayLike | None = None,
        qd0: npt.ArrayLike | None = None,
        t0: float = 0.0,
        rate: float = 1000.0,
        wrenches: Sequence[ExternalWrench] = (),
    ) -> None:
        """Build the plant.

        Args:
            model: the arm.
            process: the loading process; None = constant ``theta_base``.
            theta_base: Θ without the load (N, 10); default ``model.theta_nominal``.
            q0: initial joint positions (nv,); default the middle of the joint limits.
            qd0: initial joint velocities (nv,); default zero.
            t0: initial time [s].
            rate: integration rate 1/h [Hz], ≥ 1 (a fixed step).
            wrenches: external wrenches on links over time windows (a collision, a push):
                their joint torque J_cᵀF, evaluated at the step's start and held over the
                step like τ, acts on the arm besides τ (τ_ext of eq. (39)'s w).

        Raises:
            InvalidInputError: bad shapes or rate.
            UnknownNameError: the process's link is not in the URDF.
        """
        if not (math.isfinite(rate) and rate >= 1.0):
            raise InvalidInputError("rate", f"must be >= 1 Hz, got {rate}")
        self.model = model
        self.process = process
        self.dt = 1.0 / rate
        self.theta_base = (model.theta_nominal.copy() if theta_base is None
                           else model.check_theta(theta_base).copy())
        self._map = None if process is None else BodyLoadMap(model, process.link)
        self.load_body = None if self._map is None else self._map.body
        # the recursive backend of eq. (39), loads held: set once per load change
        self._rd = model.dynamics()
        self._rd.set_loads(self.theta_base)
        self._held: object = None  # the Loads record the evaluator holds
        self.wrenches = tuple(wrenches)
        for wrench in self.wrenches:
            model.link_attachment(wrench.link)  # a clear error for an unknown link now
        limits = model.joint_limits
        default_q = np.where(np.isfinite(limits.lower + limits.upper),
                             0.5 * (limits.lower + limits.upper), 0.0)
        self.q = default_q if q0 is None else model.check_joint_vector(q0, "q0").copy()
        self.qd = np.zeros(model.nv) if qd0 is None else model.check_joint_vector(qd0, "qd0").copy()
        self.t = float(t0)
        self._t_origin = float(t0)
        self.steps = 0
        self._cache: dict[float, Loads] = {}
        self._kin: Kinematics | None = None

    # ------------------------------------------------------------------ loads
    def loads(self, t: float) -> Loads:
        """Θ, Θ̇, Ψ, Ψ̇, ν at time ``t`` (memoised for the last few stage times)."""
        cached = self._cache.get(t)
        if cached is not None:
            return cached
        n = self.model.n_bodies
        if self.process is None or self._map is None:
            zero10, zero12, zero6 = np.zeros((n, 10)), np.zeros((n, 12)), np.zeros((n, 6))
            loads = Loads(self.theta_base, zero10, zero12, zero12, zero6, zero6, 0.0)
        else:
            state = self.process.state(t)
            theta, theta_dot, psi, psi_dot = self._map(state, self.theta_base)
            loads = Loads(theta, theta_dot, psi, psi_dot, dynamics.psi_momentum(psi),
                          dynamics.psi_momentum(psi_dot), state.nu)
        if len(self._cache) > 4:
            self._cache.clear()
        self._cache[t] = loads
        return loads

    # ------------------------------------------------------------------ dynamics
    def kinematics(self) -> Kinematics:
        """Kinematics at the current q (computed once per step, shared with controllers)."""
        if self._kin is None:
            self._kin = self.model.kinematics(self.q)
        return self._kin

    def _hold(self, loads: Loads) -> None:
        """Hold ``loads`` in the evaluator (a no-op when it holds them already)."""
        if self._held is not loads:
            self._rd.set_loads(loads.theta, loads.theta_dot, loads.psi, loads.psi_dot)
            self._held = loads

    def _acceleration(self, q: Array, qd: Array, tau: Array, t: float) -> Array:
        """q̈ of eq. (39) for the held loads (the recursive backend: ABA with f^ext)."""
        try:
            qdd = self._rd.forward_dynamics(q, qd, tau)
        except PhysicalConsistencyError:
            raise SimulationDivergedError(t, "M(q, Θ) is not positive definite") from None
        except InvalidInputError as error:
            raise SimulationDivergedError(t, f"non-finite state ({error})") from None
        if not math.isfinite(qdd @ qdd):
            raise SimulationDivergedError(t, "non-finite acceleration (M(q, Θ) singular?)")
        return qdd

    def _midpoint(self, start: Loads, end: Loads) -> Loads:
        """Θ, Θ̇, Ψ, Ψ̇ at t + h/2 interpolated from the step's ends (module docstring)."""
        if start is end:
            return start
        return Loads(0.5 * (start.theta + end.theta), 0.5 * (start.theta_dot + end.theta_dot),
                     0.5 * (start.psi + end.psi), 0.5 * (start.psi_dot + end.psi_dot),
                     0.5 * (start.gamma + end.gamma), 0.5 * (start.gamma_dot + end.gamma_dot),
                     0.5 * (start.nu + end.nu))

    def reference_acceleration(self, tau: npt.ArrayLike) -> Array:
        """q̈ at the current state by the package's own eq. (39) (no Pinocchio ABA).

        Raises:
            SimulationDivergedError: M(q, Θ) is not positive definite.
        """
        tau = self.model.check_joint_vector(tau, "tau")
        loads = self.loads(self.t)
        try:
            return dynamics.forward_dynamics(self.kinematics(), self.qd, tau, loads.theta,
                                             loads.theta_dot, loads.gamma, loads.gamma_dot)
        except PhysicalConsistencyError:
            raise SimulationDivergedError(self.t, "M(q, Θ) is not positive definite") from None

    def external_torque(self) -> Array:
        """Σ J_cᵀF of the external wrenches active at the current state (nv,) [N·m, N]."""
        total = np.zeros(self.model.nv)
        for wrench in self.wrenches:
            if wrench.t_start <= self.t < wrench.t_end:
                total += wrench.joint_torque(self.model, self.q, self.t)
        return total

    def acceleration(self, tau: npt.ArrayLike) -> Array:
        """q̈ at the current state for torque τ (eq. 39 with w = 0, the loads at ``t``)."""
        tau = self.model.check_joint_vector(tau, "tau")
        self._hold(self.loads(self.t))
        return self._acceleration(self.q, self.qd, tau, self.t)

    def step(self, tau: npt.ArrayLike) -> Array:
        """Advance one step h with τ held; returns q̈ at the start of the step.

        The returned q̈ is the one eq. (39) gives for (q, q̇, τ) and the loads at the
        step's start time, i.e. the sample (t, q, q̇, q̈, τ) satisfies eq. (39) exactly.
        The loading process is evaluated once per step, at its end (which is the next
        step's start); the two midpoint stages take the loads halfway between (module
        docstring: the error this accepts).

        Raises:
            InvalidInputError: τ has the wrong shape or non-finite entries.
            SimulationDivergedError: the state became non-finite or M lost definiteness.
        """
        tau = self.model.check_joint_vector(tau, "tau")
        h, t, q, qd = self.dt, self.t, self.q, self.qd
        tau = tau + self.external_torque()
        t_end = self._t_origin + (self.steps + 1) * h  # bitwise the next step's t
        start, end = self.loads(t), self.loads(t_end)
        self._hold(start)
        k1v = self._acceleration(q, qd, tau, t)
        k1q = qd
        self._hold(self._midpoint(start, end))
        q2, v2 = q + 0.5 * h * k1q, qd + 0.5 * h * k1v
        k2v = self._acceleration(q2, v2, tau, t)
        q3, v3 = q + 0.5 * h * v2, qd + 0.5 * h * k2v
        k3v = self._acceleration(q3, v3, tau, t)
        self._hold(end)
        q4, v4 = q + h * v3, qd + h * k3v
        k4v = self._acceleration(q4, v4, tau, t)
        q_next = q + h / 6.0 * (k1q + 2.0 * v2 + 2.0 * v3 + v4)
        qd_next = qd + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
        if not (math.isfinite(q_next @ q_next) and math.isfinite(qd_next @ qd_next)):
            raise SimulationDivergedError(t, "non-finite joint state")
        self.q, self.qd = q_next, qd_next
        self.steps += 1
        self.t = self._t_origin + self.steps * h  # no accumulated rounding
        self._kin = None
        return k1v

    def reset(self, q: npt.ArrayLike, qd: npt.ArrayLike | None = None, t: float = 0.0) -> None:
        """Restart from (q, q̇) at time t."""
        self.q = self.model.check_joint_vector(q, "q").copy()
        self.qd = (np.zeros(self.model.nv) if qd is None
                   else self.model.check_joint_vector(qd, "qd").copy())
        self.t = float(t)
        self._t_origin = float(t)
        self.steps = 0
        self._kin = None

    def energy(self) -> tuple[float, float]:
        """(kinetic energy of eq. (30) incl. ½ν and q̇ᵀJᵀQ₀Ψ, potential energy of eq. (36)) [J]."""
        loads = self.loads(self.t)
        kinetic = self.model.kinetic_energy(self.q, self.qd, loads.theta, loads.gamma, loads.nu)
        return kinetic, self.model.potential_energy(self.q, loads.theta)
