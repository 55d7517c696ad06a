r"""Eq. (39) by Pinocchio's recursive algorithms: RNEA, ABA and CRBA with external wrenches.

Each body's wrench balance with a changing mass distribution is the rate of its total
momentum (LOCAL twist V_l, LOCAL acceleration a_l with gravity as base acceleration,
γ_l = Q₀ψ_l, ×* the spatial force cross product):

.. math::
    f_l = Z(Φ_l) a_l + V_l ×^* \big(Z(Φ_l) V_l + γ_l\big) + Z(\dot Φ_l) V_l + \dot γ_l

Projected through the chain (τ = Σ J_lᵀ f_l) this is eq. (39): the classical part is
Pinocchio's RNEA on a model holding Θ, and the rest enters as external wrenches in the
LOCAL joint frames,

.. math::
    f^{ext}_l = -\big(Z(\dot Φ_l) V_l + V_l ×^* γ_l + \dot γ_l\big),

so that H(q, Ψ) q̇ = Σ J_lᵀ (V_l ×* γ_l) and M(q, Θ̇) q̇ = Σ J_lᵀ Z(Φ̇_l) V_l need no
∂J/∂q. ABA with the same f^ext gives q̈, CRBA gives M(q, Θ). Θ̇, Ψ and Ψ̇ never enter a
Pinocchio ``Inertia``: f^ext is a linear map of (V_l, 1) built from them, exact for any
value (a rate Θ̇ with ṁ = 0 and ḣ ≠ 0 included).

The loads are held by :class:`~robot_tv_dynamics.dynamics.held_loads.HeldLoads` (which rows
the Pinocchio model holds directly or shifted, the shared buffers, one body's row); this
module adds the evaluations, and :mod:`~robot_tv_dynamics.dynamics.momentum` the
generalized momentum.

Forward dynamics uses ABA iff every row is held directly and every Z(Φ_l) ≻ 0 (m_l > 0
and I about the COM ≻ 0, checked once per load change; then M(q, Θ) ≻ 0 for every q).
Otherwise it solves M(q, Θ) q̈ = τ − bias by Cholesky and raises
:class:`PhysicalConsistencyError` when M is not positive definite.

Continuous joints take the angle in q (Pinocchio's (cos, sin) is formed here); locked
joints are whatever ``RobotModel.pinocchio_model`` (the reduced model) says.

Loads new every call
--------------------
:meth:`RecursiveDynamics.set_loads_and_inverse_dynamics` (behind ``RobotModel.torque``) is
:meth:`~RecursiveDynamics.set_loads` then :meth:`~RecursiveDynamics.inverse_dynamics`, and
:meth:`~RecursiveDynamics.set_loads_and_forward_dynamics` (behind
``RobotModel.forward_dynamics``) :meth:`~RecursiveDynamics.set_loads` then
:meth:`~RecursiveDynamics.forward_dynamics`; both share one common case
(``_take_loads_and_state``), equal to the two calls to the last bit, with fewer NumPy
calls: Θ | Θ̇ | ψ | ψ̇ and q, q̇ and q̈ (or τ) go into one column-major loads buffer (two
concatenations) and one dot product
x·x over both checks them for finiteness (a NaN or ±Inf makes it non-finite without a
floating-point warning; an overflowing huge entry merely takes the argument-by-argument
path). One product of the inputs with a constant map then gives the rule (as one
contiguous vector: its argmin costs a quarter of a min-reduction), B_l and b_l.
Folding the finiteness check into that product would save a call, but ``np.dot`` warns
("invalid value") where an Inf meets a zero coefficient, so the check stays apart. Lists,
the γ layout, a model with nv ≠ N or ``shared_buffers=False`` take the two calls.

What a call costs, in units of one ``pin.rnea`` call, is measured by
``benchmarks/bench_dynamics.py``; docs/cli.md ("Eq. (39) as ratios to pin.rnea") quotes
the figures and says where the time of a call goes.
"""


from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics.arrays import Array, check_finite
from robot_tv_dynamics.dynamics.arm import ArmRecord, HasArmRecord, arm_record_of
from robot_tv_dynamics.dynamics.buffers import PSI, all_definite
from robot_tv_dynamics.dynamics.coupling import Q0
from robot_tv_dynamics.dynamics.held_loads import COM_RANGE_FACTOR, HeldLoads
from robot_tv_dynamics.dynamics.momentum import JointAxes
from robot_tv_dynamics.dynamics.wrench_maps import PSI_FROM_GAMMA
from robot_tv_dynamics.exceptions import PhysicalConsistencyError

_rnea = pin.rnea
_aba = pin.aba
_crba = pin.crba
_forward_kinematics = pin.forwardKinematics
#: ψ (N, 12) @ this = γ = Q₀ψ (N, 6).
_GAMMA_FROM_PSI = np.ascontiguousarray(Q0.T)
_concatenate = np.concatenate
_dot = np.dot
_isfinite = math.isfinite
_add = np.add


class RecursiveDynamics(HeldLoads):
    """Eq. (39) for one arm by RNEA/ABA/CRBA, with the loads Θ, Θ̇, Ψ, Ψ̇ held between calls.

    Set the loads with :meth:`set_loads` (or one of :meth:`set_theta`,
    :meth:`set_theta_dot`, :meth:`set_psi`, :meth:`set_psi_dot`, or one body's row with
    :meth:`set_body_loads`); they stay until the next ``set_*``. Shapes are checked once
    per load change; each evaluation call makes one finiteness check over its joint
    vectors (copied into one contiguous buffer) and returns a new read-only array. With
    new loads for every τ, :meth:`set_loads_and_inverse_dynamics` does both in one call.
    Not thread-safe: use one evaluator per thread.

    Example:
        >>> rd = RecursiveDynamics(model)
        >>> rd.set_loads(theta, theta_dot, psi, psi_dot)
        >>> tau = rd.inverse_dynamics(q, qd, qdd)   # τ of eq. (39), w = 0
    """

    def __init__(self, model: ArmRecord | HasArmRecord, *, shared_buffers: bool = True) -> None:
        """Build the evaluator; the loads start as Θ = the arm's ``theta_nominal``, the rest 0.

        ``model`` (an :class:`~robot_tv_dynamics.dynamics.arm.ArmRecord` or a ``RobotModel``)
        and ``shared_buffers`` as in :class:`~robot_tv_dynamics.dynamics.held_loads.HeldLoads`.
        """
        arm = arm_record_of(model)
        nv, pin_model = arm.nv, arm.pinocchio_model
        self._nv = nv
        # one contiguous buffer per evaluation signature, with views of its parts
        self._state3, self._state2, self._state1 = np.empty(3 * nv), np.empty(2 * nv), np.empty(nv)
        self._q3, self._v3, self._a3 = (self._state3[:nv], self._state3[nv:2 * nv],
                                        self._state3[2 * nv:])
        self._q2, self._v2 = self._state2[:nv], self._state2[nv:]
        self._qdd_zero = np.zeros(nv)
        cont = np.asarray(arm.continuous, dtype=bool)
        self._continuous = bool(cont.any())
        self._q_pin = np.empty(pin_model.nq)
        idx_q = np.array([pin_model.joints[j].idx_q for j in range(1, pin_model.njoints)])
        self._plain_dofs, self._plain_q = np.flatnonzero(~cont), idx_q[~cont]
        self._cont_dofs, self._cos_q = np.flatnonzero(cont), idx_q[cont]
        self._momentum_axes: JointAxes | None = None  # built by the first momentum()
        super().__init__(arm, shared_buffers=shared_buffers)
        # the joint state fits the loads buffer's three state columns
        self._state_columns = nv == self._n and self._main.shared

    # ------------------------------------------------------------------ loads and τ
    def set_loads_and_inverse_dynamics(
        self,
        q: npt.ArrayLike,
        qd: npt.ArrayLike,
        qdd: npt.ArrayLike,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None = None,
        psi: npt.ArrayLike | None = None,
        psi_dot: npt.ArrayLike | None = None,
    ) -> Array:
        """:meth:`set_loads` then :meth:`inverse_dynamics`, in one call (new loads every call).

        The same results and errors as the two calls (the loads are held afterwards, also
        when a joint vector is refused), with the loads and the joint vectors copied into
        one buffer and checked for finiteness together (module docstring, "Loads new
        every call").

        Args:
            q: joint positions (nv,) [rad, m].
            qd: joint velocities (nv,) [rad/s, m/s].
            qdd: joint accelerations (nv,) [rad/s², m/s²].
            theta: Θ, (N, 10), as :meth:`set_loads`.
            theta_dot: Θ̇, (N, 10), or None = 0.
            psi: Ψ, (N, 12), or γ (N, 6), or None = 0.
            psi_dot: Ψ̇ in either layout, or None = 0.

        Returns:
            τ, (nv,) [N·m, N], read-only.

        Raises:
            InvalidInputError: a wrong shape or a non-finite entry, naming the argument.
        """
        if not self._take_loads_and_state(q, qd, qdd, theta, theta_dot, psi, psi_dot):
            self.set_loads(theta, theta_dot, psi, psi_dot)
            return self.inverse_dynamics(q, qd, qdd)
        held = self._buffer
        return self._torque(held.q, held.v, held.a)

    def set_loads_and_forward_dynamics(
        self,
        q: npt.ArrayLike,
        qd: npt.ArrayLike,
        tau: npt.ArrayLike,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None = None,
        psi: npt.ArrayLike | None = None,
        psi_dot: npt.ArrayLike | None = None,
    ) -> Array:
        """:meth:`set_loads` then :meth:`forward_dynamics`, in one call (new loads every call).

        As :meth:`set_loads_and_inverse_dynamics` with τ in place of q̈: the same results
        and errors as the two calls, the loads held afterwards.

        Returns:
            q̈, (nv,) [rad/s², m/s²], read-only.

        Raises:
            InvalidInputError: a wrong shape or a non-finite entry, naming the argument.
            PhysicalConsistencyError: M(q, Θ) is not positive definite.
        """
        if not self._take_loads_and_state(q, qd, tau, theta, theta_dot, psi, psi_dot):
            self.set_loads(theta, theta_dot, psi, psi_dot)
            return self.forward_dynamics(q, qd, tau)
        held = self._buffer
        qdd = self.forward_dynamics_unchecked(held.q, held.v, held.a)
        qdd.setflags(False)  # type: ignore[call-arg]  # (positional: numpy takes it)
        return qdd

    def _take_loads_and_state(
        self,
        q: npt.ArrayLike,
        qd: npt.ArrayLike,
        third: npt.ArrayLike,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None,
        psi: npt.ArrayLike | None,
        psi_dot: npt.ArrayLike | None,
    ) -> bool:
        """The common case of the one-call paths: hold the loads, state in the state columns.

        Copies Θ | Θ̇ | ψ | ψ̇ and (q, q̇, ``third``) into the spare loads buffer, checks
        all of it for finiteness with one dot product and, when finite, holds it (the
        state is then the held buffer's ``q``, ``v``, ``a``). False, with nothing held,
        for lists, γ layouts, a model with nv ≠ N, public-API buffers or bad input: the
        caller then makes the two calls, which name the argument.
        """
        spare = self._spare
        finite = False
        if self._state_columns and self._copy_loads(spare, theta, theta_dot, psi, psi_dot):
            try:  # as set_loads, with the joint state as three more columns
                if len(q) == self._nv and len(qd) == self._nv:  # type: ignore[arg-type]
                    _concatenate((q, qd, third), 0, spare.state)  # (third's length: the total)
                    flat = spare.inputs_state_flat
                    finite = _isfinite(flat.dot(flat))
            except (ValueError, TypeError):
                finite = False
        if not finite:
            return False
        self._buffer, self._spare = spare, self._buffer
        self._update(theta_dot is None and psi is None and psi_dot is None, psi_dot is None)
        return True

    # ------------------------------------------------------------------ evaluation
    def _fill_state(
        self, state: Array, values: tuple[npt.ArrayLike, ...], names: tuple[str, ...]
    ) -> None:
        """Raise for the first bad joint vector; otherwise (the quick check overflowed) fill."""
        nv = self._nv
        for k, (value, name) in enumerate(zip(values, names, strict=True)):
            state[k * nv:(k + 1) * nv] = check_finite(value, name, (nv,))

    def _load_state3(
        self, q: npt.ArrayLike, qd: npt.ArrayLike, third: npt.ArrayLike, name: str
    ) -> None:
        """Copy (q, q̇, ``third``) into the contiguous state buffer with one finiteness check.

        Raises:
            InvalidInputError: a wrong shape or non-finite entry, naming the argument.
        """
        nv, state = self._nv, self._state3
        try:
            if len(q) != nv or len(qd) != nv or len(third) != nv:  # type: ignore[arg-type]
                raise ValueError
            np.concatenate((q, qd, third), out=state)
            finite = _isfinite(state.dot(state))
        except (ValueError, TypeError):
            finite = False
        if not finite:
            self._fill_state(state, (q, qd, third), ("q", "qd", name))

    def _pinocchio_q(self, q: Array) -> Array:
        """Pinocchio's q (nq,) from the joint angles: continuous joints as (cos, sin)."""
        if not self._continuous:
            return q
        out = self._q_pin
        out[self._plain_q] = q[self._plain_dofs]
        angles = q[self._cont_dofs]
        out[self._cos_q] = np.cos(angles)
        out[self._cos_q + 1] = np.sin(angles)
        return out

    def _external_forces(self, q: Array, qd: Array) -> pin.StdVec_Force:
        """f^ext of eq. (39) at (q, q̇), LOCAL joint frames: B_l V_l + b_l for each body."""
        hot = self._hot
        if self._rates_zero:
            return hot.fext
        _forward_kinematics(hot.model, hot.data, q, qd)
        storage = hot.storage  # None: V_l and f^ext_l are views of Pinocchio's memory
        if storage is not None:
            storage.pull_velocities()
        forces = hot.forces
        _dot(hot.wrench_map, hot.velocities, forces)
        if not self._offset_zero:
            _add(forces, hot.wrench_offset, forces)
        if storage is not None:
            storage.push_forces()
        return hot.fext

    def inverse_dynamics(self, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike) -> Array:
        """τ of eq. (39) with w = 0 for the held loads.

        Args:
            q: joint positions (nv,) [rad, m].
            qd: joint velocities (nv,) [rad/s, m/s].
            qdd: joint accelerations (nv,) [rad/s², m/s²].

        Returns:
            τ, (nv,) [N·m, N], read-only.

        Raises:
            InvalidInputError: a wrong shape or non-finite entry, naming the argument.
        """
        self._load_state3(q, qd, qdd, "qdd")
        return self._torque(self._q3, self._v3, self._a3)

    def _torque(self, q: Array, v: Array, a: Array) -> Array:
        """τ of eq. (39) for the held loads at a checked state (views of a state buffer)."""
        qp = self._pinocchio_q(q) if self._continuous else q
        hot = self._hot
        tau = _rnea(hot.model, hot.data, qp, v, a, self._external_forces(qp, v))
        if self._shifted:
            tau -= _rnea(self._shift.model, self._shift.data, qp, v, a)
        tau.setflags(False)  # positional: 0.1 µs less than write=False
        return tau

    def _load_state2(self, q: npt.ArrayLike, qd: npt.ArrayLike) -> Array:
        """Copy (q, q̇) into the contiguous state buffer (one check); Pinocchio's q.

        Raises:
            InvalidInputError: a wrong shape or non-finite entry, naming the argument.
        """
        state = self._state2
        try:
            np.concatenate((q, qd), out=state)
            finite = len(q) == len(qd) and _isfinite(state.dot(state))  # type: ignore[arg-type]
        except (ValueError, TypeError):
            finite = False
        if not finite:
            self._fill_state(state, (q, qd), ("q", "qd"))
        return self._pinocchio_q(self._q2)

    def bias(self, q: npt.ArrayLike, qd: npt.ArrayLike) -> Array:
        """τ at q̈ = 0: (C + M(Θ̇) + H) q̇ + G + JᵀQ₀Ψ̇ of eq. (39), (nv,) [N·m, N], read-only."""
        qp = self._load_state2(q, qd)
        return self._bias(qp, self._v2)

    def _bias(self, qp: Array, v: Array) -> Array:
        main, zero = self._main, self._qdd_zero
        tau = _rnea(main.model, main.data, qp, v, zero, self._external_forces(qp, v))
        if self._shifted:
            tau -= _rnea(self._shift.model, self._shift.data, qp, v, zero)
        tau.setflags(False)
        return tau

    def mass_matrix(self, q: npt.ArrayLike) -> Array:
        """M(q, Θ) of eq. (31) for the held Θ, (nv, nv) [kg·m², kg], read-only (CRBA)."""
        state = self._state1
        try:
            np.copyto(state, q, casting="same_kind")  # no broadcasting: shapes must match
            finite = np.shape(q) == state.shape and _isfinite(state.dot(state))
        except (ValueError, TypeError):
            finite = False
        if not finite:
            self._fill_state(state, (q,), ("q",))
        return self._mass(self._pinocchio_q(state))

    def _mass(self, qp: Array) -> Array:
        m = np.array(_crba(self._main.model, self._main.data, qp))
        if self._shifted:
            m -= _crba(self._shift.model, self._shift.data, qp)
        m.setflags(write=False)
        return m

    def _aba_exact(self) -> bool:
        """Every row held directly with Z(Φ_l) ≻ 0 (I about the COM ≻ 0): then M ≻ 0."""
        if self._aba_ok is None:
            self._aba_ok = not self._shifted and all_definite(
                self._main.inertias[:, 4:10].tolist())
        return self._aba_ok

    def _solve(self, qp: Array, v: Array, effort: Array) -> Array:
        """q̈ from M(q, Θ) q̈ = τ − bias by Cholesky (rows that ABA cannot take)."""
        import scipy.linalg  # here: the rare path, and 0.3 s of every importer's start-up

        bias = self._bias(qp, v)
        try:
            factor = scipy.linalg.cho_factor(self._mass(qp), check_finite=False)
        except np.linalg.LinAlgError:
            raise PhysicalConsistencyError(
                "theta", "M(q, Θ) is not positive definite; Θ is not physically "
                "consistent") from None
        return np.asarray(scipy.linalg.cho_solve(factor, effort - bias, check_finite=False))

    def forward_dynamics_unchecked(self, q: Array, qd: Array, tau: Array) -> Array:
        """:meth:`forward_dynamics` without its input checks, for an integrator's stages.

        ``q``, ``qd``, ``tau`` must be float64 arrays (nv,) (contiguous views are fine);
        nothing is copied or checked, so a non-finite entry gives a non-finite q̈ (the
        caller checks the result: the plant checks its state once per step) and a wrong
        length raises Pinocchio's own error. Saves about a fifth of the call.

        Returns:
            q̈, (nv,) [rad/s², m/s²], a new writeable array.

        Raises:
            PhysicalConsistencyError: M(q, Θ) is not positive definite.
        """
        qp = self._pinocchio_q(q) if self._continuous else q
        if self._aba_ok or self._aba_exact():
            hot = self._hot
            return _aba(hot.model, hot.data, qp, qd, tau, self._external_forces(qp, qd))
        return self._solve(qp, qd, tau)

    def forward_dynamics(self, q: npt.ArrayLike, qd: npt.ArrayLike, tau: npt.ArrayLike) -> Array:
        """q̈ solving eq. (39) for τ (w = 0) and the held loads.

        ABA when the fast-path rule allows it (module docstring), else a Cholesky solve
        of M(q, Θ) q̈ = τ − bias.

        Args:
            q: joint positions (nv,) [rad, m].
            qd: joint velocities (nv,) [rad/s, m/s].
            tau: joint efforts (nv,) [N·m, N].

        Returns:
            q̈, (nv,) [rad/s², m/s²], read-only.

        Raises:
            InvalidInputError: a wrong shape or non-finite entry, naming the argument.
            PhysicalConsistencyError: M(q, Θ) is not positive definite.
        """
        self._load_state3(q, qd, tau, "tau")
        qdd = self.forward_dynamics_unchecked(self._q3, self._v3, self._a3)
        qdd.setflags(False)  # type: ignore[call-arg]  # (as above)
        return qdd

    # ------------------------------------------------------------------ momentum
    def momentum(self, q: npt.ArrayLike, qd: npt.ArrayLike) -> tuple[Array, Array]:
        r"""(p, β) of the generalized-momentum balance ṗ = τ + τ_ext + β for the held Θ, Ψ.

        p = ∂L/∂q̇ = Σ_l J_lᵀ h_l and β = ∂L/∂q = Σ_l (∂V_l/∂q)ᵀ h_l − G with the body
        momenta h_l = Z(Φ_l) V_l + γ_l, γ_l = Q₀ψ_l
        (:mod:`robot_tv_dynamics.observer.momentum` derives them). Θ̇ and Ψ̇ do not enter.

        Two RNEA calls and no ∂J/∂q (:mod:`~robot_tv_dynamics.dynamics.momentum`);
        shifted rows (:mod:`~robot_tv_dynamics.dynamics.held_loads`) are handled by
        linearity in Θ as for τ. Only for joints with one degree of freedom.

        Args:
            q: joint positions (nv,) [rad, m].
            qd: joint velocities (nv,) [rad/s, m/s].

        Returns:
            (p, β), each (nv,) [N·m·s, N·s] and [N·m, N], read-only.

        Raises:
            InvalidInputError: a wrong shape or non-finite entry, naming the argument.
            NotImplementedError: a joint with more than one degree of freedom.
        """
        axes = self._momentum_axes or self._momentum_setup()
        qp = self._load_state2(q, qd)
        main = self._main
        np.matmul(self._buffer.loads[:, PSI], _GAMMA_FROM_PSI, out=main.momentum_forces)
        np.negative(main.momentum_forces, out=main.momentum_forces)
        main.push_momentum_forces()
        p, beta = axes.momentum(main, qp, self._v2, main.momentum_fext)
        if self._shifted:
            p_k, beta_k = axes.momentum(self._shift, qp, self._v2, None)
            p -= p_k
            beta -= beta_k
        p.setflags(write=False)
        beta.setflags(write=False)
        return p, beta

    def _momentum_setup(self) -> JointAxes:
        """The joint axes of the momentum map; Pinocchio's extra buffers for it."""
        axes = JointAxes(self._main.model, self._n)  # raises for a multi-dof joint
        self._main.enable_momentum()
        self._shift.enable_momentum()
        self._momentum_axes = axes
        return axes


__all__ = ["COM_RANGE_FACTOR", "PSI_FROM_GAMMA", "RecursiveDynamics"]
