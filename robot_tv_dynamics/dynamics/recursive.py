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

Which rows of Θ the Pinocchio model holds (the fast-path rule)
---------------------------------------------------------------
Pinocchio stores a body as (m, c = h/m, I about the COM). Row l is held **directly** iff

    m_l > 0  and  |h_{l,i}| < c_max · m_l  for i = 1, 2, 3,

i.e. the centre of mass c = h/m lies in the cube of half-width
``c_max = COM_RANGE_FACTOR · reach`` around the body origin (reach = the sum of the joint
offsets of the arm: c_max ≈ 154 m for the Panda, ≈ 125 m for the UR5). Then the round
trip Φ → (m, c, I_c) → Φ costs at most ≈ ε·m·|c|² ≤ 3ε·m·c_max² [kg·m²] in I, far below
the torque scale. Every physically consistent row with m > 0 passes. A row that fails
(m ≤ 0, including all-zero rows; a tiny mass with a lever arm; an estimate far from
physical) is held **shifted** by a point mass at the body origin, Θ_l + k_l e_m with
k_l = |m_l| + ‖h_l‖_∞ / reach + m̄ (m̄ the mean nominal body mass, so the held row passes
the rule), and since τ is linear in Θ, τ(Θ) = τ(Θ + K) − τ(K): one more RNEA (or CRBA)
on a second model holding only K, with a rounding error ≈ ε·|τ(K)|.
:attr:`RecursiveDynamics.held_directly` reports the rule per row. Measured against the
term-by-term reference (``RobotModel.inverse_dynamics``): ≤ 3e-14 relative for τ and M on
random, inconsistent, m = 0, far-COM and negative-mass Θ.

Forward dynamics uses ABA iff every row is held directly and every Z(Φ_l) ≻ 0 (m_l > 0
and I about the COM ≻ 0, checked once per load change; then M(q, Θ) ≻ 0 for every q).
Otherwise it solves M(q, Θ) q̈ = τ − bias by Cholesky and raises
:class:`PhysicalConsistencyError` when M is not positive definite.

Continuous joints take the angle in q (Pinocchio's (cos, sin) is formed here); locked
joints are whatever ``RobotModel.pinocchio_model`` (the reduced model) says.

Shared buffers
--------------
A Python call per body costs about as much as a whole Pinocchio algorithm, so by default
the loads are written into ``model.inertias``, the twists read from ``data.v`` and the
wrenches written into the f^ext vector through NumPy views of Pinocchio's own
``std::vector`` storage. The layout (one element every ``stride`` bytes, Inertia stored
as (m, c, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)) is verified element by element at
construction by writing through the view and reading back through Pinocchio's public
API; if any check fails, or with ``shared_buffers=False``, the same arithmetic runs
through the public API (one call per body, several times slower).
The Pinocchio model is a private copy: ``RobotModel.pinocchio_model`` is never modified.

One body's row
--------------
:meth:`RecursiveDynamics.set_body_loads` changes one row of Θ, Θ̇, Ψ, Ψ̇ (a simulator's
load body, whose row alone varies): that body's Pinocchio inertia (m, c, I_c, in Python
floats), its f^ext block B_l and offset b_l (one product with the rate map) and its
Z(Φ_l) ≻ 0 check, instead of the whole update. Whenever that is not exact — the row must
be shifted, shifted rows are held, or the rates or Ψ̇ turn non-zero where all were zero —
it runs the whole update of :meth:`~RecursiveDynamics.set_loads`.

Loads new every call
--------------------
:meth:`RecursiveDynamics.set_loads_and_inverse_dynamics` (behind ``RobotModel.torque``) is
:meth:`~RecursiveDynamics.set_loads` then :meth:`~RecursiveDynamics.inverse_dynamics`,
equal to the two calls to the last bit, with fewer NumPy calls: Θ | Θ̇ | ψ | ψ̇ and
q, q̇, q̈ go into one column-major loads buffer (two concatenations) and one dot product
x·x over both checks them for finiteness (a NaN or ±Inf makes it non-finite without a
floating-point warning; an overflowing huge entry merely takes the argument-by-argument
path). One product of the inputs with a constant map then gives the rule (as one
contiguous vector: its argmin costs a quarter of a min-reduction), B_l and b_l.
Folding the finiteness check into that product would save a call, but ``np.dot`` warns
("invalid value") where an Inf meets a zero coefficient, so the check stays apart. Lists,
the γ layout, a model with nv ≠ N or ``shared_buffers=False`` take the two calls.

Costs measured by ``benchmarks/bench_dynamics.py`` (pin 4.1, numpy 2.4, in units of one
``pin.rnea`` call in the same process, Panda / UR5, on a shared 2-core machine): τ with
the loads held 3.5 / 3.8–4.0; τ with Θ, Θ̇, Ψ, Ψ̇ new every call 9.0–9.3 / 10.8–11.4
(10.7–11.1 / 9.8–10.1 µs;
the goal of 10× is met on the Panda, not on the UR5: the call makes 16 NumPy and
Pinocchio calls — two concatenations, the finiteness dot, the products, the rule's
argmin and its entry, two copies into the f^ext map, c = h/m, h⊗c, the inertia product,
forward kinematics, the f^ext product, its offset, RNEA, the read-only flag — of
0.15–1 µs each in sequence, and the UR5's RNEA takes 0.85 µs); ``set_loads`` alone
5.3 / 6.6; ``set_body_loads`` 4.6 / 6.0; ABA 4.7 / 5.0 (3.5 / 3.4 unchecked, as the
simulator's RK4 stages call it); CRBA 1.9 / 2.2; the public API only 16 / 15.
"""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pinocchio as pin
import scipy.linalg

from robot_tv_dynamics.arrays import Array, check_finite, skew
from robot_tv_dynamics.dynamics.coupling import Q0
from robot_tv_dynamics.dynamics.pinocchio_storage import PinocchioStorage
from robot_tv_dynamics.dynamics.wrench_maps import INERTIA_MAP, PSI_FROM_GAMMA, RATE_MAP
from robot_tv_dynamics.exceptions import InvalidInputError, PhysicalConsistencyError

#: c_max / reach: a row whose COM is farther than this many arm reaches from its body
#: origin (or whose mass is ≤ 0) is held shifted (see the module docstring).
if TYPE_CHECKING:  # pragma: no cover - the model imports this package, not vice versa
    from robot_tv_dynamics.model import RobotModel

COM_RANGE_FACTOR = 100.0

_rnea = pin.rnea
_aba = pin.aba
_crba = pin.crba
_forward_kinematics = pin.forwardKinematics
#: ψ (N, 12) @ this = γ = Q₀ψ (N, 6).
_GAMMA_FROM_PSI = np.ascontiguousarray(Q0.T)
_concatenate = np.concatenate
_matmul = np.matmul
#: np.dot: a third of np.matmul's call cost on these small 2-D operands (out C-contiguous)
_dot = np.dot
_isfinite = math.isfinite
_add, _divide, _multiply = np.add, np.divide, np.multiply


# Columns of a loads buffer (N, 59), column-major: c = h/m, h⊗c (work space) | Θ | Θ̇ | ψ | ψ̇
# | q, q̇, q̈. set_loads copies the inputs Θ | Θ̇ | ψ | ψ̇ in with one concatenation,
# set_loads_and_inverse_dynamics the inputs and the joint state (three columns: nv = N); the
# products read the inputs, the inertias are computed from the work space and Θ.
_COM, _HC, _THETA, _THETA_DOT, _PSI, _PSI_DOT = (
    slice(0, 3), slice(3, 12), slice(12, 22), slice(22, 32), slice(32, 44), slice(44, 56))
_WIDTH, _LOADS_WIDTH = 59, 56  # with and without the state columns
_WORK, _INPUTS, _RATES = slice(0, 22), slice(12, 56), slice(22, 56)
# Rows of the products _big_map @ inputsᵀ (49, N): rule | B_l (6, 6) row-major | b_l (rows,
# so that the rule is one contiguous vector: its argmin costs a quarter of a min-reduction).
_RULE, _BLOCKS, _OFFSET = slice(0, 7), slice(7, 43), slice(43, 49)


def _inertia_work_map() -> Array:
    """(22, 10): a work row [c, h⊗c (row-major), Φ] ↦ Pinocchio's Inertia (m, c, I_c)."""
    out = np.zeros((_WORK.stop, 10))
    out[_COM, 1:4] = np.eye(3)  # c = h/m, written by the divide
    out[_HC] = INERTIA_MAP[10:19]
    out[_THETA] = INERTIA_MAP[:10]
    out.setflags(write=False)
    return out


_INERTIA_WORK_MAP = _inertia_work_map()


def _hold_views(work: Array) -> tuple[Array, ...]:
    """The views the inertia update needs into a column-major buffer starting c | h⊗c | Θ.

    Transposed (body index last), so that the divide and the multiply run along
    contiguous columns: a fifth cheaper than on the (N, ...) views.

    Returns:
        (hᵀ, mᵀ, hᵀ as (3, 1, N), cᵀ, cᵀ as (1, 3, N), (h⊗c) as (3, 3, N), the work
        columns, their map to Pinocchio's Inertia storage).
    """
    n = work.shape[0]
    columns = work.T  # (width, N), C-contiguous rows
    hc, com, theta = columns[_HC].reshape(3, 3, n), columns[_COM], columns[_THETA]
    if not (np.shares_memory(hc, work) and columns.flags.c_contiguous):
        raise RuntimeError("h⊗c cannot be viewed in place")  # pragma: no cover
    return (theta[1:4], theta[0:1], theta[1:4, None, :], com, com[None], hc, work[:, _WORK],
            _INERTIA_WORK_MAP)


class _LoadsBuffer:
    """One loads buffer (N, 59), column-major (columns above), with views of its parts.

    Column-major so that c, h⊗c, the inputs and the state columns are contiguous blocks:
    one dot product checks the inputs (``inputs_flat``), or the inputs and the state
    (``inputs_state_flat``), for finiteness; q, q̇, q̈ are contiguous vectors.
    """

    __slots__ = ("loads", "inputs", "inputs_flat", "inputs_state_flat", "state", "q", "v", "a",
                 "hold")

    def __init__(self, n: int) -> None:
        store = np.zeros(_WIDTH * n)
        self.loads = store.reshape(_WIDTH, n).T
        self.inputs = self.loads[:, _INPUTS]
        self.inputs_flat = store[_INPUTS.start * n:_INPUTS.stop * n]
        self.inputs_state_flat = store[_INPUTS.start * n:]
        self.state = store[_LOADS_WIDTH * n:]  # q | q̇ | q̈, the last three columns
        self.q, self.v, self.a = (self.loads[:, k] for k in range(_LOADS_WIDTH, _WIDTH))
        self.hold = _hold_views(self.loads)
        if not (self.loads.flags.f_contiguous and self.q.flags.c_contiguous
                and np.shares_memory(self.q, self.state)):
            raise RuntimeError("the loads buffer is not column-major")  # pragma: no cover


def _definite(xx: float, xy: float, yy: float, xz: float, yz: float, zz: float) -> bool:
    """I about the COM ≻ 0, by Sylvester's criterion (leading minors > 0), storage order."""
    return (xx > 0.0 and xx * yy - xy * xy > 0.0
            and xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz) + xz * (xy * yz - yy * xz)
            > 0.0)


def _block_diagonal_view(matrix: Array, n: int, size: int) -> Array:
    """The n diagonal (size, size) blocks of a C-contiguous (n·size, n·size) matrix, as a view."""
    row, column = matrix.strides
    return np.lib.stride_tricks.as_strided(
        matrix, shape=(n, size, size), strides=(size * (row + column), row, column))


class RecursiveDynamics:
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

    def __init__(self, model: RobotModel, *, shared_buffers: bool = True) -> None:
        """Build the evaluator; the loads start as Θ = ``model.theta_nominal``, the rest 0.

        Args:
            model: the arm (locked joints and continuous joints as in the model).
            shared_buffers: exchange arrays with Pinocchio through views of its memory
                (verified at construction, see the module docstring); False uses only
                Pinocchio's public API.
        """
        n, nv = model.n_bodies, model.nv  # no reference to ``model`` is kept
        self._n, self._nv = n, nv
        pin_model: pin.Model = model.pinocchio_model.copy()
        self._main = PinocchioStorage(pin_model, n, shared_buffers)
        shift_model = pin_model.copy()
        for j in range(1, shift_model.njoints):
            shift_model.inertias[j] = pin.Inertia.Zero()
        self._shift = PinocchioStorage(shift_model, n, shared_buffers)
        reach = sum(float(np.linalg.norm(pin_model.jointPlacements[j].translation))
                    for j in range(1, pin_model.njoints))
        self._reach = max(reach, 1e-3)
        #: c_max [m] of the fast-path rule (module docstring).
        self.com_range = COM_RANGE_FACTOR * self._reach
        masses = np.asarray(model.theta_nominal)[:, 0]
        self._shift_floor = float(masses.mean()) if masses.mean() > 0 else 1.0
        big = np.zeros((_INPUTS.stop - _INPUTS.start, 49))  # rows: the input columns
        big[0, _RULE] = [1.0] + [self.com_range] * 6  # [m, c m − h_i, c m + h_i] > 0
        for i in range(3):
            big[1 + i, 1 + 2 * i], big[1 + i, 2 + 2 * i] = -1.0, 1.0
        big[_RATES.start - _INPUTS.start:, _BLOCKS.start:] = RATE_MAP
        self._big_map = np.ascontiguousarray(big.T)  # (49, 44)
        self._big_map.setflags(write=False)
        # two loads buffers: set_loads fills the spare one and swaps only when it is valid
        self._buffer, self._spare = _LoadsBuffer(n), _LoadsBuffer(n)
        self._products = np.zeros((49, n))
        self._blocks = self._products[_BLOCKS].reshape(6, 6, n).transpose(2, 0, 1)
        self._rule_flat = self._products[_RULE].reshape(-1)
        if not (np.shares_memory(self._blocks, self._products)
                and np.shares_memory(self._rule_flat, self._products)):
            raise RuntimeError("B_l cannot be viewed in place")  # pragma: no cover
        self._rule, self._offset_source = self._products[_RULE], self._products[_OFFSET].T
        self._shifted_work = np.zeros((n, _WORK.stop), order="F")  # [c | h⊗c | Θ + K]
        self._shifted_hold = _hold_views(self._shifted_work)
        self._wrench_map = np.zeros((6 * n, 6 * n))  # block diagonal of B_l[:, :6]
        self._wrench_blocks = _block_diagonal_view(self._wrench_map, n, 6)
        self._wrench_offset = np.zeros(6 * n)  # −Q₀ψ̇_l stacked
        self._offset_target = self._wrench_offset.reshape(n, 6)
        main = self._main
        #: what the hot path reads: model, data, f^ext, and the storage if not shared
        self._hot = (main.model, main.data, main.fext, None if main.shared else main)
        # np.dot writes only into a C-contiguous out (Pinocchio's inertias are, at 80 bytes)
        self._inertia_product = _dot if main.inertias.flags.c_contiguous else _matmul
        self._velocities = self._main.velocities.reshape(-1)
        self._forces = self._main.forces.reshape(-1)
        if self._main.shared and not (np.shares_memory(self._velocities, self._main.velocities)
                                      and np.shares_memory(self._forces, self._main.forces)):
            raise RuntimeError("Pinocchio vectors are not contiguous")  # pragma: no cover
        self._zero10, self._zero12 = np.zeros((n, 10)), np.zeros((n, 12))
        #: what the common case of set_loads_and_inverse_dynamics reads, in one lookup
        self._one_call = (self._big_map, self._products, self._rule_flat, self._wrench_blocks,
                          self._blocks, self._offset_target, self._offset_source,
                          self._inertia_product, main.inertias, main.model, main.data,
                          main.fext, self._wrench_map, self._velocities, self._forces,
                          self._wrench_offset)
        self._shape10, self._shape12 = (n, 10), (n, 12)
        # the joint state fits the loads buffer's three state columns
        self._state_columns = nv == n and main.shared
        # one contiguous buffer per evaluation signature, with views of its parts
        self._state3, self._state2, self._state1 = np.empty(3 * nv), np.empty(2 * nv), np.empty(nv)
        self._q3, self._v3, self._a3 = self._state3[:nv], self._state3[nv:2 * nv], self._state3[
            2 * nv:]
        self._q2, self._v2 = self._state2[:nv], self._state2[nv:]
        self._qdd_zero = np.zeros(nv)
        cont = np.asarray(model.joint_limits.continuous, dtype=bool)
        self._continuous = bool(cont.any())
        self._q_pin = np.empty(pin_model.nq)
        idx_q = np.array([pin_model.joints[j].idx_q for j in range(1, pin_model.njoints)])
        self._plain_dofs, self._plain_q = np.flatnonzero(~cont), idx_q[~cont]
        self._cont_dofs, self._cos_q = np.flatnonzero(cont), idx_q[cont]
        self._held = np.ones(n, dtype=bool)
        self._shifted = False
        self._rates_zero = True
        self._offset_zero = True
        self._aba_ok: bool | None = None
        self._momentum_axes: Array | None = None  # built by the first momentum()
        self._init_rows()
        self.set_loads(model.theta_nominal)

    # ------------------------------------------------------------------ properties
    @property
    def shared_buffers(self) -> bool:
        """Whether arrays are exchanged through views of Pinocchio's memory."""
        return self._main.shared

    @property
    def held_directly(self) -> Array:
        """Per body, whether its row of Θ is held as is (True) or shifted (False), (N,)."""
        out = self._held.copy()
        out.setflags(write=False)
        return out

    def _column(self, columns: slice) -> Array:
        out = self._buffer.loads[:, columns].copy()
        out.setflags(write=False)
        return out

    @property
    def theta(self) -> Array:
        """Θ held, (N, 10), eq. (7) order [kg, kg·m, kg·m²]."""
        return self._column(_THETA)

    @property
    def theta_dot(self) -> Array:
        """Θ̇ held, (N, 10) [per s]."""
        return self._column(_THETA_DOT)

    @property
    def psi(self) -> Array:
        """Ψ held, (N, 12), eq. (27) layout [kg·m/s, kg·m²/s] (a γ given is stored as ψ)."""
        return self._column(_PSI)

    @property
    def psi_dot(self) -> Array:
        """Ψ̇ held, (N, 12) [per s]."""
        return self._column(_PSI_DOT)

    # ------------------------------------------------------------------ loads
    def _copy_loads(self, spare: _LoadsBuffer, theta: npt.ArrayLike,
                    theta_dot: npt.ArrayLike | None, psi: npt.ArrayLike | None,
                    psi_dot: npt.ArrayLike | None) -> bool:
        """Copy four arrays of the right shapes into ``spare``'s inputs; False otherwise.

        The common case of :meth:`set_loads` (None = 0); the caller checks finiteness.
        False for lists, γ layouts and wrong shapes: the caller goes argument by argument.
        """
        zero10, zero12 = self._zero10, self._zero12
        theta_dot_a = zero10 if theta_dot is None else theta_dot
        psi_a = zero12 if psi is None else psi
        try:  # (ψ̇'s shape follows: the concatenation needs N rows and 44 columns in all)
            if not (theta.shape == theta_dot_a.shape == self._shape10  # type: ignore[union-attr]
                    and psi_a.shape == self._shape12):  # type: ignore[union-attr]
                return False
            _concatenate((theta, theta_dot_a, psi_a, zero12 if psi_dot is None else psi_dot),
                         1, spare.inputs)
        except (AttributeError, ValueError, TypeError):
            return False
        return True

    def set_loads(
        self,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None = None,
        psi: npt.ArrayLike | None = None,
        psi_dot: npt.ArrayLike | None = None,
    ) -> None:
        """Hold new loads; the Pinocchio model's inertias are updated here.

        Args:
            theta: Θ, (N, 10), eq. (7) order about each body frame origin
                [kg, kg·m, kg·m²]; any values (also m = 0 or inconsistent rows).
            theta_dot: Θ̇, (N, 10) [per s]; None = 0.
            psi: Ψ, (N, 12) in eq. (27) layout, body coordinates [kg·m/s, kg·m²/s], or
                its momentum image γ = Q₀ψ, (N, 6); None = 0.
            psi_dot: Ψ̇ in either layout [per s]; None = 0.

        Raises:
            InvalidInputError: a wrong shape or a non-finite entry, naming the argument.
        """
        spare = self._spare
        if self._copy_loads(spare, theta, theta_dot, psi, psi_dot):
            flat = spare.inputs_flat
            finite = _isfinite(flat.dot(flat))
        else:
            finite = False
        if not finite:  # lists, γ layouts, or bad input: argument by argument
            self._fill_loads(spare.loads, theta, theta_dot, psi, psi_dot)
        self._buffer, self._spare = spare, self._buffer
        self._update(theta_dot is None and psi is None and psi_dot is None, psi_dot is None)

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
        spare = self._spare
        finite = False
        if self._state_columns and self._copy_loads(spare, theta, theta_dot, psi, psi_dot):
            try:  # as set_loads, with q, q̇, q̈ as three more columns: one check for all
                if len(q) == self._nv and len(qd) == self._nv:  # type: ignore[arg-type]
                    _concatenate((q, qd, qdd), 0, spare.state)  # (q̈'s length: the total)
                    flat = spare.inputs_state_flat
                    finite = _isfinite(flat.dot(flat))
            except (ValueError, TypeError):
                finite = False
        if not finite:  # lists, γ layouts, or bad input: the two calls name the argument
            self.set_loads(theta, theta_dot, psi, psi_dot)
            return self.inverse_dynamics(q, qd, qdd)
        self._buffer, self._spare = spare, self._buffer
        self._update(theta_dot is None and psi is None and psi_dot is None, psi_dot is None)
        if self._rates_zero or self._shifted:
            return self._torque(spare.q, spare.v, spare.a)
        # _torque, inlined for the common case (a Python call or a dozen attribute lookups
        # cost about 1 % of this method): rates given, every row held directly
        model, data, fext, wrench_map, velocities, forces, offset = self._one_call[9:]
        v = spare.v
        qp = self._pinocchio_q(spare.q) if self._continuous else spare.q
        _forward_kinematics(model, data, qp, v)
        _dot(wrench_map, velocities, forces)
        if not self._offset_zero:
            _add(forces, offset, forces)
        tau = _rnea(model, data, qp, v, spare.a, fext)
        tau.setflags(False)
        return tau

    def set_theta(self, theta: npt.ArrayLike) -> None:
        """Hold a new Θ, (N, 10) (see :meth:`set_loads`); the other loads are kept."""
        self._buffer.loads[:, _THETA] = check_finite(theta, "theta", (self._n, 10))
        self._update(self._rates_zero, self._offset_zero)

    def set_theta_dot(self, theta_dot: npt.ArrayLike | None) -> None:
        """Hold a new Θ̇, (N, 10) or None = 0; the other loads are kept."""
        self._buffer.loads[:, _THETA_DOT] = (self._zero10 if theta_dot is None
                                      else check_finite(theta_dot, "theta_dot", (self._n, 10)))
        self._update(None, self._offset_zero)

    def set_psi(self, psi: npt.ArrayLike | None) -> None:
        """Hold a new Ψ, (N, 12) or γ (N, 6), or None = 0; the other loads are kept."""
        self._buffer.loads[:, _PSI] = self._zero12 if psi is None else self._checked_psi(psi, "psi")
        self._update(None, self._offset_zero)

    def set_psi_dot(self, psi_dot: npt.ArrayLike | None) -> None:
        """Hold a new Ψ̇, (N, 12) or γ̇ (N, 6), or None = 0; the other loads are kept."""
        self._buffer.loads[:, _PSI_DOT] = (self._zero12 if psi_dot is None
                                    else self._checked_psi(psi_dot, "psi_dot"))
        self._update(None, None)

    # ------------------------------------------------------------------ one body's loads
    def _init_rows(self) -> None:
        """The buffers of :meth:`set_body_loads`: one row of the loads and its maps."""
        self._row = np.zeros(_LOADS_WIDTH)  # its work space stays zero
        self._row_inputs = self._row[_INPUTS]
        self._row_rates, self._row_psi_dot = self._row[_RATES], self._row[_PSI_DOT]
        self._row_zero10, self._row_zero12 = np.zeros(10), np.zeros(12)
        # [B_l (6, 6) row-major, b_l] of one row, as the columns 7: of _products
        self._row_products = np.zeros(42)
        self._row_block, self._row_offset = (self._row_products[:36].reshape(6, 6),
                                             self._row_products[36:])
        self._rate_map = np.ascontiguousarray(RATE_MAP)

    def set_body_loads(
        self,
        body: int,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None = None,
        psi: npt.ArrayLike | None = None,
        psi_dot: npt.ArrayLike | None = None,
    ) -> None:
        """Hold new loads of one body (one row of Θ, Θ̇, Ψ, Ψ̇); every other row is kept.

        Equal to :meth:`set_loads` with that row changed (to rounding: the row's inertia
        and f^ext map are computed apart), at a fraction of the cost when the row is held
        directly and the evaluator holds no shifted row: then only that body's Pinocchio
        inertia, its f^ext block and its Z(Φ_l) ≻ 0 check are updated. Otherwise (a row
        that has to be shifted, or shifted rows held, or the rates or Ψ̇ turning non-zero
        where all were zero) the whole update of :meth:`set_loads` runs.

        Args:
            body: the row, 0 ≤ body < N.
            theta: Φ_body, (10,), eq. (7) order [kg, kg·m, kg·m²]; any values.
            theta_dot: Φ̇_body, (10,) [per s]; None = 0.
            psi: ψ_body, (12,), eq. (27) layout, or γ = Q₀ψ, (6,); None = 0.
            psi_dot: ψ̇_body in either layout [per s]; None = 0.

        Raises:
            InvalidInputError: a bad body index, a wrong shape or a non-finite entry,
                naming the argument; nothing is changed then.
        """
        row = self._row
        zero10, zero12 = self._row_zero10, self._row_zero12
        theta_dot_a = zero10 if theta_dot is None else theta_dot
        psi_a = zero12 if psi is None else psi
        psi_dot_a = zero12 if psi_dot is None else psi_dot
        try:
            if not (theta.shape == theta_dot_a.shape == zero10.shape  # type: ignore[union-attr]
                    and psi_a.shape == psi_dot_a.shape == zero12.shape):  # type: ignore[union-attr]
                raise ValueError
            _concatenate((theta, theta_dot_a, psi_a, psi_dot_a), 0, self._row_inputs)
            finite = _isfinite(self._row_inputs.dot(self._row_inputs))
        except (AttributeError, ValueError, TypeError):
            finite = False
        if not finite:
            self._fill_loads(row, theta, theta_dot, psi, psi_dot)
        if body.__class__ is not int or not 0 <= body < self._n:
            body = self._checked_body(body)
        loads = self._buffer.loads
        m, h1, h2, h3, ixx, iyy, izz, ixy, iyz, ixz = row[_THETA].tolist()
        reach = self.com_range * m
        rates = self._row_rates @ self._row_rates > 0.0 or self._row_rates.any()  # (underflow)
        if (self._shifted or not (m > 0.0 and reach - h1 > 0.0 and reach + h1 > 0.0
                                  and reach - h2 > 0.0 and reach + h2 > 0.0
                                  and reach - h3 > 0.0 and reach + h3 > 0.0)
                or (self._rates_zero and rates)
                or (self._offset_zero and self._row_psi_dot.any())):
            loads[body, :_LOADS_WIDTH] = row
            self._update(None, None)
            return
        if not self._rates_zero:
            _dot(self._row_rates, self._rate_map, self._row_products)
            self._wrench_blocks[body] = self._row_block
            if not self._offset_zero:
                self._offset_target[body] = self._row_offset
        loads[body, :_LOADS_WIDTH] = row
        if not (rates or self._rates_zero or loads[:, _RATES].any()):
            self._rates_zero = self._offset_zero = True  # the last non-zero rates are gone
            self._main.forces[:] = 0.0
            self._main.push_forces()
        # (m, c, I_c) as _hold computes it, in Pinocchio's storage order
        c1, c2, c3 = h1 / m, h2 / m, h3 / m
        xx, yy, zz = ixx - h2 * c2 - h3 * c3, iyy - h1 * c1 - h3 * c3, izz - h1 * c1 - h2 * c2
        xy = ixy + 0.5 * h1 * c2 + 0.5 * h2 * c1
        yz = iyz + 0.5 * h2 * c3 + 0.5 * h3 * c2
        xz = ixz + 0.5 * h1 * c3 + 0.5 * h3 * c1
        main = self._main
        main.inertias[body] = (m, c1, c2, c3, xx, xy, yy, xz, yz, zz)
        if not main.shared:
            main.push_inertias()
        definite = _definite(xx, xy, yy, xz, yz, zz)  # Z(Φ_l) ≻ 0, as m > 0 here
        if self._aba_ok or not definite:
            self._aba_ok = definite
        else:  # it was False: this row may have been the reason, or another one
            self._aba_ok = None

    def _checked_body(self, body: object) -> int:
        """``body`` as a row index, or an error naming it."""
        try:
            if isinstance(body, bool):
                raise TypeError
            index = operator.index(body)  # type: ignore[arg-type]
        except TypeError:
            raise InvalidInputError("body", f"expected an integer row index, got {body!r}"
                                    ) from None
        if not 0 <= index < self._n:
            raise InvalidInputError("body", f"must be in [0, {self._n}), got {index}")
        return int(index)

    def _checked_psi(self, value: npt.ArrayLike, argument: str,
                     lead: tuple[int, ...] | None = None) -> Array:
        """ψ checked, ``lead`` + (12,) (default (N, 12)); a γ, ``lead`` + (6,), is mapped to ψ."""
        lead = (self._n,) if lead is None else lead
        if np.shape(value) == lead + (6,):
            gamma = check_finite(value, argument, lead + (6,))
            return np.asarray(gamma @ PSI_FROM_GAMMA.T)
        return check_finite(value, argument, lead + (12,))

    def _fill_loads(
        self,
        loads: Array,
        theta: npt.ArrayLike,
        theta_dot: npt.ArrayLike | None,
        psi: npt.ArrayLike | None,
        psi_dot: npt.ArrayLike | None,
    ) -> None:
        """Raise for the first bad argument; otherwise (lists, γ, an overflow) fill ``loads``.

        ``loads`` is a loads buffer (N, 56) or the one row (56,) of :meth:`set_body_loads`.
        """
        lead = loads.shape[:-1]
        values = (
            check_finite(theta, "theta", lead + (10,)),
            0.0 if theta_dot is None else check_finite(theta_dot, "theta_dot", lead + (10,)),
            0.0 if psi is None else self._checked_psi(psi, "psi", lead),
            0.0 if psi_dot is None else self._checked_psi(psi_dot, "psi_dot", lead),
        )
        (loads[..., _THETA], loads[..., _THETA_DOT], loads[..., _PSI],
         loads[..., _PSI_DOT]) = values

    def _update(self, rates_zero: bool | None, offset_zero: bool | None) -> None:
        """Recompute the f^ext map and the held inertias from the (checked) loads buffer.

        Args:
            rates_zero: whether Θ̇, Ψ, Ψ̇ are all zero (None: find out).
            offset_zero: whether Ψ̇ is zero (None: find out).
        """
        (big_map, products, rule, wrench_blocks, blocks, offset_target, offset_source,
         inertia_product, inertias) = self._one_call[:9]
        buffer = self._buffer
        _dot(big_map, buffer.inputs.T, products)
        if not rule[rule.argmin()] > 0.0:  # (the first NaN, if any: not > 0)
            self._hold_shifted(rates_zero, offset_zero)
            return
        if (rates_zero is not False or offset_zero is None or self._shifted
                or self._hot[3] is not None):
            self._hold_direct(rates_zero, offset_zero)
            return
        # _hold_direct, inlined for the common case (rates given, no rows shifted before,
        # shared buffers): a Python call costs about 2 % of set_loads
        self._rates_zero, self._offset_zero, self._aba_ok = False, offset_zero, None
        wrench_blocks[...] = blocks
        if not offset_zero:
            offset_target[...] = offset_source
        h, m, h_column, com, com_row, hc, work, inertia_map = buffer.hold
        _divide(h, m, com)
        _multiply(h_column, com_row, hc)
        inertia_product(work, inertia_map, inertias)

    def _hold_wrenches(self, rates_zero: bool | None, offset_zero: bool | None) -> None:
        """The f^ext map from the products (B_l into the block diagonal, b_l), and the flags."""
        loads, main = self._buffer.loads, self._main
        if rates_zero is None:
            rates_zero = not loads[:, _RATES].any()
        if offset_zero is None:
            offset_zero = not loads[:, _PSI_DOT].any()
        self._rates_zero, self._offset_zero, self._aba_ok = rates_zero, offset_zero, None
        if rates_zero:
            main.forces[:] = 0.0
            main.push_forces()
        else:
            self._wrench_blocks[...] = self._blocks
            if not offset_zero:
                self._offset_target[...] = self._offset_source

    def _hold_direct(self, rates_zero: bool | None, offset_zero: bool | None) -> None:
        """Hold the loads buffer's Θ as is (every row passes the rule), given its products."""
        self._hold_wrenches(rates_zero, offset_zero)
        self._hold(self._buffer.hold)
        if self._shifted:
            self._shift.inertias[:] = 0.0
            self._shift.push_inertias()
            self._held[:] = True
            self._shifted = False

    def _hold_shifted(self, rates_zero: bool | None, offset_zero: bool | None) -> None:
        """Hold Θ + K and K (module docstring), given the loads buffer's products."""
        self._hold_wrenches(rates_zero, offset_zero)
        held = (self._rule > 0.0).all(axis=0)
        shifted = self._buffer.loads[:, _THETA].copy()
        shift = np.abs(shifted[:, 0]) + np.abs(shifted[:, 1:4]).max(axis=1) / self._reach
        shift = np.where(held, 0.0, shift + self._shift_floor)
        shifted[:, 0] += shift
        self._shifted_work[:, _THETA] = shifted
        self._hold(self._shifted_hold)
        self._shift.inertias[:] = 0.0
        self._shift.inertias[:, 0] = shift
        self._shift.push_inertias()
        self._held[:] = held
        self._shifted = True

    def _hold(self, views: tuple[Array, ...]) -> None:
        """Write Θ (m > 0 in every row) into the model as (m, c, I_c), per :func:`_hold_views`."""
        h, m, h_column, com, com_row, hc, work, inertia_map = views
        np.divide(h, m, com)
        np.multiply(h_column, com_row, hc)
        self._inertia_product(work, inertia_map, self._main.inertias)
        self._main.push_inertias()

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
        model, data, fext, main = self._hot
        if self._rates_zero:
            return fext
        _forward_kinematics(model, data, q, qd)
        forces = self._forces
        if main is None:  # shared buffers: V_l and f^ext_l are views of Pinocchio's memory
            _dot(self._wrench_map, self._velocities, forces)
            if not self._offset_zero:
                _add(forces, self._wrench_offset, forces)
            return fext
        main.pull_velocities()
        _dot(self._wrench_map, self._velocities, forces)
        if not self._offset_zero:
            _add(forces, self._wrench_offset, forces)
        main.push_forces()
        return fext

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
        model, data, fext, storage = self._hot
        if not self._rates_zero:  # _external_forces, inlined for the shared-buffer case
            if storage is None:
                _forward_kinematics(model, data, qp, v)
                forces = self._forces
                _dot(self._wrench_map, self._velocities, forces)
                if not self._offset_zero:
                    _add(forces, self._wrench_offset, forces)
            else:
                self._external_forces(qp, v)
        tau = _rnea(model, data, qp, v, a, fext)
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
            # Python floats: for N ≤ ~20 rows cheaper than a dozen NumPy calls on columns
            self._aba_ok = not self._shifted and all(
                _definite(*row) for row in self._main.inertias[:, 4:10].tolist())
        return self._aba_ok

    def _solve(self, qp: Array, v: Array, effort: Array) -> Array:
        """q̈ from M(q, Θ) q̈ = τ − bias by Cholesky (rows that ABA cannot take)."""
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
            model, data, _, _ = self._hot
            return _aba(model, data, qp, qd, tau, self._external_forces(qp, qd))
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
        qp = self._pinocchio_q(self._q3) if self._continuous else self._q3
        v, effort, main = self._v3, self._a3, self._main
        if self._aba_exact():
            qdd = _aba(main.model, main.data, qp, v, effort, self._external_forces(qp, v))
        else:
            qdd = self._solve(qp, v, effort)
        qdd.setflags(False)
        return qdd

    # ------------------------------------------------------------------ momentum
    def momentum(self, q: npt.ArrayLike, qd: npt.ArrayLike) -> tuple[Array, Array]:
        r"""(p, β) of the generalized-momentum balance ṗ = τ + τ_ext + β for the held Θ, Ψ.

        p = ∂L/∂q̇ = Σ_l J_lᵀ h_l and β = ∂L/∂q = Σ_l (∂V_l/∂q)ᵀ h_l − G with the body
        momenta h_l = Z(Φ_l) V_l + γ_l, γ_l = Q₀ψ_l
        (:mod:`robot_tv_dynamics.observer.momentum` derives them). Θ̇ and Ψ̇ do not enter.

        Two RNEA calls and no ∂J/∂q: with ∂V_l/∂q_k = X_{l←k}(V_k × S_k) for every
        ancestor joint k of body l (LOCAL twist V_k and joint axis S_k of link k),

        .. math::
            p_k = S_k^\top H_k,\qquad β_k = -S_k^\top (V_k ×^* H_k) - G_k,

        where H_k = Σ_{l ⪰ k} X*_{k←l} h_l is the momentum of the subtree at joint k in
        its frame. RNEA at (q, v = 0, a = q̇) with f^ext_l = −γ_l and gravity makes
        exactly these: its accelerations are the twists V_k and its joint wrenches H_k,
        each plus what an RNEA at (q, 0, 0) gives (−g in each frame, the gravity
        wrenches), which also gives G. Shifted rows
        (module docstring) are handled by linearity in Θ as for τ.

        Only for joints with one degree of freedom and a constant axis in their frame
        (revolute, prismatic, continuous: every example-robot-data arm).

        Args:
            q: joint positions (nv,) [rad, m].
            qd: joint velocities (nv,) [rad/s, m/s].

        Returns:
            (p, β), each (nv,) [N·m·s, N·s] and [N·m, N], read-only.

        Raises:
            InvalidInputError: a wrong shape or non-finite entry, naming the argument.
            NotImplementedError: a joint with more than one degree of freedom.
        """
        if self._momentum_axes is None:
            self._momentum_setup()
        qp = self._load_state2(q, qd)
        main = self._main
        np.matmul(self._buffer.loads[:, _PSI], _GAMMA_FROM_PSI, out=main.momentum_forces)
        np.negative(main.momentum_forces, out=main.momentum_forces)
        main.push_momentum_forces()
        p, beta = self._momentum_of(main, qp, self._v2, main.momentum_fext)
        if self._shifted:
            p_k, beta_k = self._momentum_of(self._shift, qp, self._v2, None)
            p -= p_k
            beta -= beta_k
        p.setflags(write=False)
        beta.setflags(write=False)
        return p, beta

    def _momentum_setup(self) -> None:
        """The joint axes S_k (LOCAL) as the block-diagonal map of S_kᵀ(V_k ×* H_k)."""
        model = self._main.model
        n = self._n
        joints = [model.joints[j] for j in range(1, model.njoints)]
        if len(joints) != n or any(joint.nv != 1 for joint in joints) or model.nv != n:
            raise NotImplementedError(
                "momentum() needs one degree of freedom per joint; "
                f"joints: {[joint.shortname() for joint in joints]}")
        data = model.createData()
        pin.computeJointJacobians(model, data, pin.neutral(model))
        cross_map = np.zeros((6 * n, 6 * n))
        for j, joint in enumerate(joints, start=1):
            s = pin.getJointJacobian(model, data, j, pin.LOCAL)[:, joint.idx_v]
            lin, ang = skew(s[:3]), skew(s[3:])
            block = np.zeros((6, 6))
            # S·(V ×* H) = Vᵀ A H with V = (v, ω), H = (f, n), V ×* H = (ω×f, ω×n + v×f)
            block[0:3, 0:3] = -ang  # v·(f × S_ang)
            block[3:6, 0:3] = -lin  # ω·(f × S_lin)
            block[3:6, 3:6] = -ang  # ω·(n × S_ang)
            k = 6 * (j - 1)
            cross_map[k:k + 6, k:k + 6] = block
        self._dof_order = np.array([joint.idx_v for joint in joints])
        self._dof_identity = bool(np.array_equal(self._dof_order, np.arange(n)))
        self._main.enable_momentum()
        self._shift.enable_momentum()
        self._momentum_axes = cross_map

    def _momentum_of(
        self, storage: PinocchioStorage, qp: Array, qd: Array, fext: pin.StdVec_Force | None
    ) -> tuple[Array, Array]:
        """(p, β) of the inertias ``storage`` holds, with f^ext = −γ (or none)."""
        model, data, zero = storage.model, storage.data, self._qdd_zero
        gravity = _rnea(model, data, qp, zero, zero)
        storage.pull_momentum()
        # the subtrees' gravity wrenches, and −g in each frame (RNEA's base acceleration)
        weights, down = storage.body_forces.copy(), storage.accelerations.copy()
        if fext is None:
            p = _rnea(model, data, qp, zero, qd)
        else:
            p = _rnea(model, data, qp, zero, qd, fext)
        storage.pull_momentum()
        p -= gravity
        twists = (storage.accelerations - down).reshape(-1)
        subtree = (storage.body_forces - weights).reshape(-1)
        per_body = (twists * (self._momentum_axes @ subtree)).reshape(self._n, 6).sum(axis=1)
        if not self._dof_identity:
            per_body = per_body[np.argsort(self._dof_order)]
        beta = -per_body - gravity
        return p, beta


__all__ = ["COM_RANGE_FACTOR", "PSI_FROM_GAMMA", "RecursiveDynamics"]
