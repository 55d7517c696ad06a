r"""The plant: eq. (39) integrated forward by RK4 under a payload-loading process.

Each step holds the joint torque τ constant (zero-order hold, as a torque-controlled
arm's 1 kHz loop does) and advances (q, q̇) by one classical Runge–Kutta 4 step of

.. math::
    \ddot q = M(q,Θ(t))^{-1}\big(τ - (C(q,\dot q,Θ) + M(q,\dotΘ) + H(q,Ψ))\dot q
              - G(q,Θ) - J^\top Q_0 \dotΨ\big)

by the recursive backend (:class:`~robot_tv_dynamics.dynamics.RecursiveDynamics`: ABA with
the Θ̇, Ψ, Ψ̇ terms as external wrenches, loads held between stages).

Loads once per step
-------------------
The loading process (:mod:`robot_tv_dynamics.loading`) is evaluated **once per step**,
at the step's end t + h (which is the next step's start, so the sample at t is exact),
as the load body's rows in one vector
(:class:`~robot_tv_dynamics.loading.LoadBodyRows`; for a linear process such as the
fill, its features and one product with its state map composed with the body map), and
the evaluator's loads change **once per step**, by that one row
(:meth:`~robot_tv_dynamics.dynamics.RecursiveDynamics.set_body_loads`: only the load
body's row of Θ, Θ̇, Ψ, Ψ̇ varies); a :class:`Loads` record (the whole-arm arrays) is
made only when :meth:`ArmSimulator.loads` asks for one. Stages 1 and 2 (times t and
t + h/2) take the loads at t, stages 3 and 4 (t + h/2 and t + h) those at t + h.
Written as q̈ = f(t, q, q̇) with the time dependence through the loads, this is RK4
whose loads see the stage times c̃ = (0, 0, 1, 1) instead of c = (0, ½, ½, 1). The
conditions in which c̃ enters hold to order 2 (Σbᵢc̃ᵢ = ½) and, at order 3, those mixing
it with the state (Σbᵢcᵢc̃ᵢ = ⅓, Σbᵢaᵢⱼc̃ⱼ = ⅙); the one of c̃ alone does not
(Σbᵢc̃ᵢ² = ½ instead of ⅓): the O(h) load offsets of stages 2 and 3 cancel at first
order, the local error is O(h³) (the trapezoidal rule's h³/12 · ∂²f/∂t², plus higher
terms in which those offsets meet ∂f/∂(q, q̇), large on the Panda's 15 g fingers) and
the global error O(h²).

The error accepted, measured against RK4 with the loads at the exact stage times
(``test/simulation``; Panda from the ready pose, τ holding it, 0.2 s): during the fill
(t = 2.3 s) 2.2e-9 rad at 1 kHz, falling 4× when h halves; during the drain 6.1e-11
rad. The previous scheme (midpoint loads as the mean of the two ends, two load changes
per step) gave 1.5e-10 and 4.6e-11 rad: one load change per step instead of two costs
up to 15× of a very small error. Across a kink of the
process (the valve opening at 2.0 s) both give 1.3e-6 rad: exact stage times would not
help there either, RK4 is then first order over that one step.

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
from functools import cached_property

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics import dynamics
from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.dynamics import Kinematics
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    PhysicalConsistencyError,
    SimulationDivergedError,
)
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.loading import BodyLoadMap, LoadBodyRows, LoadingProcess
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer.wrench import ExternalWrench

_concatenate = np.concatenate
_vdot = np.vdot


class Loads:
    """Θ, Θ̇, Ψ (as γ = Q₀ψ too), Ψ̇ and ν of the whole arm at one time.

    Made from the load body's rows (one vector of
    :class:`~robot_tv_dynamics.loading.LoadBodyRows`); the whole-arm arrays are built on
    first access and are read-only.

    Attributes:
        theta: Θ (N, 10) [kg, kg·m, kg·m²].
        theta_dot: Θ̇ (N, 10).
        psi: Ψ (N, 12), eq. (27) layout, body coordinates.
        psi_dot: Ψ̇ (N, 12).
        gamma: Q₀Ψ (N, 6).
        gamma_dot: Q₀Ψ̇ (N, 6).
        nu: ν(t) of eq. (33) [kg·m²/s²].
        body: the load body's row (None without a loading process).
        rows: that body's (Φ, Φ̇, ψ, ψ̇) in body coordinates (Φ the total: the arm's
            own plus the load's), (10,), (10,), (12,), (12,); None without a process.
    """

    def __init__(self, theta_base: Array, body: int | None, vector: Array | None) -> None:
        """``theta_base`` with row ``body`` replaced by the load body's rows.

        Args:
            theta_base: Θ without the load, (N, 10).
            body: the load body's row; None without a loading process.
            vector: [Φ_body, Φ̇, ψ, ψ̇, ν] (45,) of that body (``LoadBodyRows``, read-only),
                body coordinates, Φ_body the total; None without a loading process.
        """
        self._theta_base, self.body, self._vector = theta_base, body, vector
        self.rows: tuple[Array, Array, Array, Array] | None = None
        self.nu = 0.0
        if vector is not None and body is not None:
            self.rows = (vector[0:10], vector[10:20], vector[20:32], vector[32:44])
            self.nu = float(vector[44])

    @cached_property
    def _arrays(self) -> tuple[Array, Array, Array, Array]:
        n = self._theta_base.shape[0]
        out = (self._theta_base.copy(), np.zeros((n, 10)), np.zeros((n, 12)), np.zeros((n, 12)))
        if self.rows is not None:
            for array, row in zip(out, self.rows, strict=True):
                array[self.body] = row
        for array in out:
            readonly(array)
        return out

    @property
    def theta(self) -> Array:
        """Θ (N, 10) [kg, kg·m, kg·m²]."""
        return self._arrays[0]

    @property
    def theta_dot(self) -> Array:
        """Θ̇ (N, 10) [per s]."""
        return self._arrays[1]

    @property
    def psi(self) -> Array:
        """Ψ (N, 12), eq. (27) layout, body coordinates [kg·m/s, kg·m²/s]."""
        return self._arrays[2]

    @property
    def psi_dot(self) -> Array:
        """Ψ̇ (N, 12) [per s]."""
        return self._arrays[3]

    @cached_property
    def gamma(self) -> Array:
        """Q₀Ψ (N, 6) [kg·m/s, kg·m²/s]."""
        return readonly(dynamics.psi_momentum(self.psi))

    @cached_property
    def gamma_dot(self) -> Array:
        """Q₀Ψ̇ (N, 6) [per s]."""
        return readonly(dynamics.psi_momentum(self.psi_dot))


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
        classical: bool = False,
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
            classical: the classical plant: Θ(t) as the process gives it, but the terms
                in Θ̇, Ψ and Ψ̇ of eq. (39) left out (M(q,Θ(t))q̈ + C q̇ + G = τ), as a
                model that ignores the time dependence would simulate the arm.

        Raises:
            InvalidInputError: bad shapes or rate.
            UnknownNameError: the process's link is not in the URDF.
        """
        if not (math.isfinite(rate) and rate >= 1.0):
            raise InvalidInputError("rate", f"must be >= 1 Hz, got {rate}")
        self.model = model
        self.process = process
        self.classical = bool(classical)
        self.dt = 1.0 / rate
        self.theta_base = (model.theta_nominal.copy() if theta_base is None
                           else model.check_theta(theta_base).copy())
        self._map = None if process is None else BodyLoadMap(model, process.link)
        self.load_body = None if self._map is None else self._map.body
        # t ↦ the load body's rows [Φ, Φ̇, ψ, ψ̇, ν] (45,): one vector per evaluation
        self._rows = (None if self._map is None or process is None
                      else LoadBodyRows(self._map, process, self.theta_base[self._map.body]))
        # the recursive backend of eq. (39), loads held: one row changes once per step
        self._rd = model.dynamics()
        self._rd.set_loads(self.theta_base)
        self._held_t: float | None = None  # the time whose loads the evaluator holds
        self._held_rows: Array | None = None  # and their row vector
        # classical RK4 on (q, q̇) written for q̈ = f: with X = [q; q̇; k1; k2; k3; k4]
        # (6, nv), k_i the q̈ of stage i, each stage state (q_i; q̇_i) and the step are
        # W @ X[:j], (2, nv): one product (q_3 = q + h/2 q̇_2 = q + h/2 q̇ + h²/4 k1, …)
        nv, h = model.nv, self.dt
        self._x = np.empty((6, nv))
        self._x_rows = (self._x[:3], self._x[:4], self._x[:5], self._x)
        self._y0 = self._x.reshape(-1)[:2 * nv]  # the rows q, q̇ as one vector (a view)
        self._weights = (
            np.array([[1.0, h / 2, 0.0], [0.0, 1.0, h / 2]]),  # q + h/2 q̇, q̇ + h/2 k1
            np.array([[1.0, h / 2, h * h / 4, 0.0], [0.0, 1.0, 0.0, h / 2]]),
            np.array([[1.0, h, 0.0, h * h / 2, 0.0], [0.0, 1.0, 0.0, 0.0, h]]),
            np.array([[1.0, h, h * h / 6, h * h / 6, h * h / 6, 0.0],
                      [0.0, 1.0, h / 6, h / 3, h / 3, h / 6]]),
        )
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
        """Θ, Θ̇, Ψ, Ψ̇, ν at time ``t`` (memoised for the last few times asked for).

        At the time whose loads the evaluator holds (the current step's start) the record
        is made from the rows it holds: no second evaluation of the process.
        """
        cached = self._cache.get(t)
        if cached is not None:
            return cached
        if self._rows is None:
            loads = Loads(self.theta_base, None, None)
        else:
            rows = self._held_rows if t == self._held_t else self._rows(t)
            loads = Loads(self.theta_base, self.load_body, rows)
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

    def _hold(self, t: float) -> None:
        """Hold the loads at time ``t`` in the evaluator (a no-op when it holds them already).

        Without a process the evaluator holds ``theta_base`` from the start.
        """
        if self._rows is None or t == self._held_t:
            return
        cached = self._cache.get(t)
        rows = self._rows(t) if cached is None or cached._vector is None else cached._vector
        if self.classical:
            rows = np.concatenate((rows[0:10], np.zeros(34), rows[44:]))
        self._rd.set_body_loads(self.load_body, rows[0:10], rows[10:20],  # type: ignore[arg-type]
                                rows[20:32], rows[32:44])
        self._held_t, self._held_rows = t, rows

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
        self._hold(self.t)
        return self._acceleration(self.q, self.qd, tau, self.t)

    def step(self, tau: npt.ArrayLike) -> Array:
        """Advance one step h with τ held; returns q̈ at the start of the step.

        The returned q̈ is the one eq. (39) gives for (q, q̇, τ) and the loads at the
        step's start time, i.e. the sample (t, q, q̇, q̈, τ) satisfies eq. (39) exactly.
        The loading process is evaluated once per step, at its end (which is the next
        step's start), and the loads change once per step, between stages 2 and 3
        (module docstring: the error this accepts).

        Raises:
            InvalidInputError: τ has the wrong shape or non-finite entries.
            SimulationDivergedError: the state became non-finite or M lost definiteness.
        """
        tau = self.model.check_joint_vector(tau, "tau")
        if self.wrenches:
            tau = tau + self.external_torque()
        t, x = self.t, self._x
        x3, x4, x5, x6 = self._x_rows
        w2, w3, w4, w_step = self._weights
        if t != self._held_t:  # usually held: the previous step ended at t
            self._hold(t)
        fd = self._rd.forward_dynamics_unchecked  # a non-finite stage shows in y below
        q, qd = self.q, self.qd
        try:
            _concatenate((q, qd), 0, self._y0)
            x[2] = k1 = fd(q, qd, tau)
            y = w2 @ x3  # (q_i; q̇_i): rows by index (unpacking the array costs 3× more)
            x[3] = fd(y[0], y[1], tau)
            self._hold(self._t_origin + (self.steps + 1) * self.dt)  # bitwise the next t
            y = w3 @ x4
            x[4] = fd(y[0], y[1], tau)
            y = w4 @ x5
            x[5] = fd(y[0], y[1], tau)
        except PhysicalConsistencyError:
            raise SimulationDivergedError(t, "M(q, Θ) is not positive definite") from None
        y = w_step @ x6
        if not math.isfinite(_vdot(y, y)):  # every stage enters y: a non-finite one shows here
            raise SimulationDivergedError(t, "non-finite joint state")
        k1.setflags(write=False)
        self.q, self.qd = y[0], y[1]
        self.steps += 1
        self.t = self._t_origin + self.steps * self.dt  # no accumulated rounding
        self._kin = None
        return k1

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
