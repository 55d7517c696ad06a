r"""The loads Θ, Θ̇, Ψ, Ψ̇ of the recursive backend, held in Pinocchio between calls.

:class:`HeldLoads` keeps the loads, writes Θ into a private Pinocchio model as (m, c, I_c)
and builds the f^ext map of eq. (39) from Θ̇, Ψ, Ψ̇ (module
:mod:`~robot_tv_dynamics.dynamics.recursive`); the evaluator
:class:`~robot_tv_dynamics.dynamics.RecursiveDynamics` adds the calls on top.

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
"""


from __future__ import annotations

import math
import operator

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics.arrays import Array, check_finite
from robot_tv_dynamics.dynamics.arm import ArmRecord, HasArmRecord, arm_record_of
from robot_tv_dynamics.dynamics.buffers import (
    BLOCKS,
    INPUTS,
    LOADS_WIDTH,
    OFFSET,
    PSI,
    PSI_DOT,
    RATES,
    RULE,
    THETA,
    THETA_DOT,
    WORK,
    HotPath,
    LoadsBuffer,
    all_definite,
    block_diagonal_view,
    hold_views,
)
from robot_tv_dynamics.dynamics.pinocchio_storage import PinocchioStorage
from robot_tv_dynamics.dynamics.wrench_maps import PSI_FROM_GAMMA, RATE_MAP
from robot_tv_dynamics.exceptions import InvalidInputError

#: c_max / reach: a row whose COM is farther than this many arm reaches from its body
#: origin (or whose mass is ≤ 0) is held shifted (see the module docstring).
COM_RANGE_FACTOR = 100.0

_concatenate = np.concatenate
#: np.dot: a third of np.matmul's call cost on these small 2-D operands (out C-contiguous)
_dot = np.dot
_isfinite = math.isfinite
_divide, _multiply = np.divide, np.multiply


class HeldLoads:
    """The loads of one arm, held in Pinocchio between calls (base of the evaluator).

    Set them with :meth:`set_loads` (or one of :meth:`set_theta`, :meth:`set_theta_dot`,
    :meth:`set_psi`, :meth:`set_psi_dot`, or one body's row with :meth:`set_body_loads`);
    they stay until the next ``set_*``. Shapes are checked once per load change.
    """

    def __init__(self, model: ArmRecord | HasArmRecord, *, shared_buffers: bool = True) -> None:
        """Hold the loads Θ = the arm's ``theta_nominal``, the rest 0.

        Args:
            model: the arm, as an :class:`~robot_tv_dynamics.dynamics.arm.ArmRecord` or
                anything with an ``arm_record`` (a ``RobotModel``); locked and continuous
                joints as in the record.
            shared_buffers: exchange arrays with Pinocchio through views of its memory
                (verified at construction, see the module docstring); False uses only
                Pinocchio's public API.
        """
        arm = arm_record_of(model)  # no reference to the model is kept
        n = arm.n_bodies
        self._n = n
        pin_model: pin.Model = arm.pinocchio_model.copy()
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
        masses = np.asarray(arm.theta_nominal)[:, 0]
        self._shift_floor = float(masses.mean()) if masses.mean() > 0 else 1.0
        big = np.zeros((INPUTS.stop - INPUTS.start, 49))  # rows: the input columns
        big[0, RULE] = [1.0] + [self.com_range] * 6  # [m, c m − h_i, c m + h_i] > 0
        for i in range(3):
            big[1 + i, 1 + 2 * i], big[1 + i, 2 + 2 * i] = -1.0, 1.0
        big[RATES.start - INPUTS.start:, BLOCKS.start:] = RATE_MAP
        big_map = np.ascontiguousarray(big.T)  # (49, 44)
        big_map.setflags(write=False)
        # two loads buffers: set_loads fills the spare one and swaps only when it is valid
        self._buffer, self._spare = LoadsBuffer(n), LoadsBuffer(n)
        products = np.zeros((49, n))
        blocks = products[BLOCKS].reshape(6, 6, n).transpose(2, 0, 1)
        rule_flat = products[RULE].reshape(-1)
        if not (np.shares_memory(blocks, products) and np.shares_memory(rule_flat, products)):
            raise RuntimeError("B_l cannot be viewed in place")  # pragma: no cover
        self._rule = products[RULE]
        self._shifted_work = np.zeros((n, WORK.stop), order="F")  # [c | h⊗c | Θ + K]
        self._shifted_hold = hold_views(self._shifted_work)
        wrench_map = np.zeros((6 * n, 6 * n))  # block diagonal of B_l[:, :6]
        wrench_offset = np.zeros(6 * n)  # −Q₀ψ̇_l stacked
        main = self._main
        velocities, forces = main.velocities.reshape(-1), main.forces.reshape(-1)
        if main.shared and not (np.shares_memory(velocities, main.velocities)
                                and np.shares_memory(forces, main.forces)):
            raise RuntimeError("Pinocchio vectors are not contiguous")  # pragma: no cover
        #: what the update and τ read, by name (one lookup)
        self._hot = HotPath(
            big_map=big_map, products=products, rule=rule_flat,
            wrench_blocks=block_diagonal_view(wrench_map, n, 6), blocks=blocks,
            offset_target=wrench_offset.reshape(n, 6), offset_source=products[OFFSET].T,
            # np.dot writes only into a C-contiguous out (Pinocchio's inertias are, 80 bytes)
            inertia_product=_dot if main.inertias.flags.c_contiguous else np.matmul,
            inertias=main.inertias, model=main.model, data=main.data, fext=main.fext,
            wrench_map=wrench_map, velocities=velocities, forces=forces,
            wrench_offset=wrench_offset, storage=None if main.shared else main)
        self._zero10, self._zero12 = np.zeros((n, 10)), np.zeros((n, 12))
        self._shape10, self._shape12 = (n, 10), (n, 12)
        self._held = np.ones(n, dtype=bool)
        self._shifted = False
        self._rates_zero = True
        self._offset_zero = True
        self._aba_ok: bool | None = None
        self._init_rows()
        self.set_loads(arm.theta_nominal)

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
        return self._column(THETA)

    @property
    def theta_dot(self) -> Array:
        """Θ̇ held, (N, 10) [per s]."""
        return self._column(THETA_DOT)

    @property
    def psi(self) -> Array:
        """Ψ held, (N, 12), eq. (27) layout [kg·m/s, kg·m²/s] (a γ given is stored as ψ)."""
        return self._column(PSI)

    @property
    def psi_dot(self) -> Array:
        """Ψ̇ held, (N, 12) [per s]."""
        return self._column(PSI_DOT)

    # ------------------------------------------------------------------ loads
    def _copy_loads(self, spare: LoadsBuffer, theta: npt.ArrayLike,
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

    def set_theta(self, theta: npt.ArrayLike) -> None:
        """Hold a new Θ, (N, 10) (see :meth:`set_loads`); the other loads are kept."""
        self._buffer.loads[:, THETA] = check_finite(theta, "theta", (self._n, 10))
        self._update(self._rates_zero, self._offset_zero)

    def set_theta_dot(self, theta_dot: npt.ArrayLike | None) -> None:
        """Hold a new Θ̇, (N, 10) or None = 0; the other loads are kept."""
        self._buffer.loads[:, THETA_DOT] = (self._zero10 if theta_dot is None
                                      else check_finite(theta_dot, "theta_dot", (self._n, 10)))
        self._update(None, self._offset_zero)

    def set_psi(self, psi: npt.ArrayLike | None) -> None:
        """Hold a new Ψ, (N, 12) or γ (N, 6), or None = 0; the other loads are kept."""
        self._buffer.loads[:, PSI] = self._zero12 if psi is None else self._checked_psi(psi, "psi")
        self._update(None, self._offset_zero)

    def set_psi_dot(self, psi_dot: npt.ArrayLike | None) -> None:
        """Hold a new Ψ̇, (N, 12) or γ̇ (N, 6), or None = 0; the other loads are kept."""
        self._buffer.loads[:, PSI_DOT] = (self._zero12 if psi_dot is None
                                    else self._checked_psi(psi_dot, "psi_dot"))
        self._update(None, None)

    # ------------------------------------------------------------------ one body's loads
    def _init_rows(self) -> None:
        """The buffers of :meth:`set_body_loads`: one row of the loads and its maps."""
        self._row = np.zeros(LOADS_WIDTH)  # its work space stays zero
        self._row_inputs = self._row[INPUTS]
        self._row_rates, self._row_psi_dot = self._row[RATES], self._row[PSI_DOT]
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
        m, h1, h2, h3 = row[THETA][:4].tolist()
        reach = self.com_range * m
        rates = self._row_rates @ self._row_rates > 0.0 or self._row_rates.any()  # (underflow)
        if (self._shifted or not (m > 0.0 and reach - h1 > 0.0 and reach + h1 > 0.0
                                  and reach - h2 > 0.0 and reach + h2 > 0.0
                                  and reach - h3 > 0.0 and reach + h3 > 0.0)
                or (self._rates_zero and rates)
                or (self._offset_zero and self._row_psi_dot.any())):
            loads[body, :LOADS_WIDTH] = row
            self._update(None, None)
            return
        if not self._rates_zero:
            _dot(self._row_rates, self._rate_map, self._row_products)
            self._hot.wrench_blocks[body] = self._row_block
            if not self._offset_zero:
                self._hot.offset_target[body] = self._row_offset
        loads[body, :LOADS_WIDTH] = row
        if not (rates or self._rates_zero or loads[:, RATES].any()):
            self._rates_zero = self._offset_zero = True  # the last non-zero rates are gone
            self._main.forces[:] = 0.0
            self._main.push_forces()
        self._hold_row(body)

    def _hold_row(self, body: int) -> None:
        """Hold the row buffer's Φ_l (m > 0) as ``body``'s (m, c, I_c); check its Z(Φ_l) ≻ 0."""
        m, h1, h2, h3, ixx, iyy, izz, ixy, iyz, ixz = self._row[THETA].tolist()
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
        positive = all_definite(((xx, xy, yy, xz, yz, zz),))  # Z(Φ_l) ≻ 0: m > 0 here
        if self._aba_ok or not positive:
            self._aba_ok = positive
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
        (loads[..., THETA], loads[..., THETA_DOT], loads[..., PSI],
         loads[..., PSI_DOT]) = values

    def _update(self, rates_zero: bool | None, offset_zero: bool | None) -> None:
        """Recompute the f^ext map and the held inertias from the (checked) loads buffer.

        Args:
            rates_zero: whether Θ̇, Ψ, Ψ̇ are all zero (None: find out).
            offset_zero: whether Ψ̇ is zero (None: find out).
        """
        hot = self._hot
        _dot(hot.big_map, self._buffer.inputs.T, hot.products)
        rule = hot.rule
        if rule[rule.argmin()] > 0.0:  # (the first NaN, if any: not > 0)
            self._hold_direct(rates_zero, offset_zero)
        else:
            self._hold_shifted(rates_zero, offset_zero)

    def _hold_wrenches(self, rates_zero: bool | None, offset_zero: bool | None) -> None:
        """The f^ext map from the products (B_l into the block diagonal, b_l), and the flags."""
        loads, main, hot = self._buffer.loads, self._main, self._hot
        if rates_zero is None:
            rates_zero = not loads[:, RATES].any()
        if offset_zero is None:
            offset_zero = not loads[:, PSI_DOT].any()
        self._rates_zero, self._offset_zero, self._aba_ok = rates_zero, offset_zero, None
        if rates_zero:
            main.forces[:] = 0.0
            main.push_forces()
        else:
            hot.wrench_blocks[...] = hot.blocks
            if not offset_zero:
                hot.offset_target[...] = hot.offset_source

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
        shifted = self._buffer.loads[:, THETA].copy()
        shift = np.abs(shifted[:, 0]) + np.abs(shifted[:, 1:4]).max(axis=1) / self._reach
        shift = np.where(held, 0.0, shift + self._shift_floor)
        shifted[:, 0] += shift
        self._shifted_work[:, THETA] = shifted
        self._hold(self._shifted_hold)
        self._shift.inertias[:] = 0.0
        self._shift.inertias[:, 0] = shift
        self._shift.push_inertias()
        self._held[:] = held
        self._shifted = True

    def _hold(self, views: tuple[Array, ...]) -> None:
        """Write Θ (m > 0 in every row) into the model as (m, c, I_c), per :func:`hold_views`."""
        h, m, h_column, com, com_row, hc, work, inertia_map = views
        _divide(h, m, com)
        _multiply(h_column, com_row, hc)
        hot = self._hot
        hot.inertia_product(work, inertia_map, hot.inertias)
        if hot.storage is not None:
            hot.storage.push_inertias()


__all__ = ["COM_RANGE_FACTOR", "HeldLoads"]
