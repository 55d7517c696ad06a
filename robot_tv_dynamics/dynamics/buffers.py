"""The loads buffers of the recursive backend: their column layout and views.

A loads buffer (N, 59) is column-major, so that c = h/m, h⊗c, the inputs Θ | Θ̇ | ψ | ψ̇
and the joint state q, q̇, q̈ are contiguous blocks: one dot product checks the inputs
(and the state) for finiteness, and the inertia update runs along contiguous columns.
:class:`HotPath` names what the update and τ read on their hot path, in one attribute
lookup. Pinocchio's own memory is mapped by
:mod:`~robot_tv_dynamics.dynamics.pinocchio_storage`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robot_tv_dynamics.arrays import Array
from robot_tv_dynamics.dynamics.pinocchio_storage import PinocchioStorage
from robot_tv_dynamics.dynamics.wrench_maps import INERTIA_MAP

# Columns of a loads buffer (N, 59), column-major: c = h/m, h⊗c (work space) | Θ | Θ̇ | ψ | ψ̇
# | q, q̇, q̈. set_loads copies the inputs Θ | Θ̇ | ψ | ψ̇ in with one concatenation,
# set_loads_and_inverse_dynamics the inputs and the joint state (three columns: nv = N); the
# products read the inputs, the inertias are computed from the work space and Θ.
COM, HC, THETA, THETA_DOT, PSI, PSI_DOT = (
    slice(0, 3), slice(3, 12), slice(12, 22), slice(22, 32), slice(32, 44), slice(44, 56))
WIDTH, LOADS_WIDTH = 59, 56  # with and without the state columns
WORK, INPUTS, RATES = slice(0, 22), slice(12, 56), slice(22, 56)
# Rows of the products _big_map @ inputsᵀ (49, N): rule | B_l (6, 6) row-major | b_l (rows,
# so that the rule is one contiguous vector: its argmin costs a quarter of a min-reduction).
RULE, BLOCKS, OFFSET = slice(0, 7), slice(7, 43), slice(43, 49)


def _inertia_work_map() -> Array:
    """(22, 10): a work row [c, h⊗c (row-major), Φ] ↦ Pinocchio's Inertia (m, c, I_c)."""
    out = np.zeros((WORK.stop, 10))
    out[COM, 1:4] = np.eye(3)  # c = h/m, written by the divide
    out[HC] = INERTIA_MAP[10:19]
    out[THETA] = INERTIA_MAP[:10]
    out.setflags(write=False)
    return out


_INERTIA_WORK_MAP = _inertia_work_map()


def hold_views(work: Array) -> tuple[Array, ...]:
    """The views the inertia update needs into a column-major buffer starting c | h⊗c | Θ.

    Transposed (body index last), so that the divide and the multiply run along
    contiguous columns: a fifth cheaper than on the (N, ...) views.

    Returns:
        (hᵀ, mᵀ, hᵀ as (3, 1, N), cᵀ, cᵀ as (1, 3, N), (h⊗c) as (3, 3, N), the work
        columns, their map to Pinocchio's Inertia storage).
    """
    n = work.shape[0]
    columns = work.T  # (width, N), C-contiguous rows
    hc, com, theta = columns[HC].reshape(3, 3, n), columns[COM], columns[THETA]
    if not (np.shares_memory(hc, work) and columns.flags.c_contiguous):
        raise RuntimeError("h⊗c cannot be viewed in place")  # pragma: no cover
    return (theta[1:4], theta[0:1], theta[1:4, None, :], com, com[None], hc, work[:, WORK],
            _INERTIA_WORK_MAP)


class LoadsBuffer:
    """One loads buffer (N, 59), column-major (columns above), with views of its parts.

    Column-major so that c, h⊗c, the inputs and the state columns are contiguous blocks:
    one dot product checks the inputs (``inputs_flat``), or the inputs and the state
    (``inputs_state_flat``), for finiteness; q, q̇, q̈ are contiguous vectors.
    """

    __slots__ = ("loads", "inputs", "inputs_flat", "inputs_state_flat", "state", "q", "v", "a",
                 "hold")

    def __init__(self, n: int) -> None:
        """Zeroed buffers for N bodies (nv = N for the state columns)."""
        store = np.zeros(WIDTH * n)
        self.loads = store.reshape(WIDTH, n).T
        self.inputs = self.loads[:, INPUTS]
        self.inputs_flat = store[INPUTS.start * n:INPUTS.stop * n]
        self.inputs_state_flat = store[INPUTS.start * n:]
        self.state = store[LOADS_WIDTH * n:]  # q | q̇ | q̈, the last three columns
        self.q, self.v, self.a = (self.loads[:, k] for k in range(LOADS_WIDTH, WIDTH))
        self.hold = hold_views(self.loads)
        if not (self.loads.flags.f_contiguous and self.q.flags.c_contiguous
                and np.shares_memory(self.q, self.state)):
            raise RuntimeError("the loads buffer is not column-major")  # pragma: no cover


def all_definite(rows: Iterable[Sequence[float]]) -> bool:
    """Every row's I about the COM ≻ 0, by Sylvester's criterion (leading minors > 0).

    ``rows``: (I_xx, I_xy, I_yy, I_xz, I_yz, I_zz) each, Pinocchio's storage order, as
    Python floats (a list from ``tolist()``, or one tuple for one row): for N ≤ ~20 rows
    a loop over floats is cheaper than a dozen NumPy calls on columns, and this one loop
    (no call per row) costs about 0.6 of the generator of per-row calls it replaced.
    """
    for xx, xy, yy, xz, yz, zz in rows:
        if not (xx > 0.0 and xx * yy - xy * xy > 0.0
                and xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz)
                + xz * (xy * yz - yy * xz) > 0.0):
            return False
    return True


def block_diagonal_view(matrix: Array, n: int, size: int) -> Array:
    """The n diagonal (size, size) blocks of a C-contiguous (n·size, n·size) matrix, as a view."""
    row, column = matrix.strides
    return np.lib.stride_tricks.as_strided(
        matrix, shape=(n, size, size), strides=(size * (row + column), row, column))


@dataclass(frozen=True, slots=True)
class HotPath:
    """What the update of the loads and τ read, by name, in one attribute lookup.

    Attributes:
        big_map: (49, 44) map of the inputs to [rule | B_l row-major | b_l].
        products: (49, N) those products.
        rule: the rule's rows, flat (7·N,): every entry > 0 iff every row is held directly.
        wrench_blocks: the diagonal (6, 6) blocks of ``wrench_map``, (N, 6, 6) view.
        blocks: the B_l of ``products``, (N, 6, 6) view.
        offset_target: ``wrench_offset`` as (N, 6).
        offset_source: the b_l of ``products``, (N, 6) view.
        inertia_product: np.dot (C-contiguous inertias) or np.matmul, writing ``out``.
        inertias: Pinocchio's inertias (N, 10) in storage order (a view when shared).
        model: the Pinocchio model holding Θ (or Θ + K).
        data: its data.
        fext: its f^ext vector.
        wrench_map: (6N, 6N) block diagonal of B_l: f^ext = map · V + offset.
        velocities: the twists V_l stacked (6N,) (a view of ``data.v`` when shared).
        forces: f^ext stacked (6N,) (a view of ``fext`` when shared).
        wrench_offset: the offsets b_l = −Q₀ψ̇_l stacked (6N,).
        storage: None when the buffers are shared, else the storage to pull and push.
    """

    big_map: Array
    products: Array
    rule: Array
    wrench_blocks: Array
    blocks: Array
    offset_target: Array
    offset_source: Array
    inertia_product: Callable[..., Array]
    inertias: Array
    model: pin.Model
    data: pin.Data
    fext: pin.StdVec_Force
    wrench_map: Array
    velocities: Array
    forces: Array
    wrench_offset: Array
    storage: PinocchioStorage | None
