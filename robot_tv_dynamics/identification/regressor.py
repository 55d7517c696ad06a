r"""Stacked regressors: τ = Y(q, q̇, q̈) Θ + Y_f(q̇) b along a data set.

For constant Θ the torque of eq. (39) is M(q,Θ) q̈ + C(q,q̇,Θ) q̇ + G(q,Θ) = R(q, q̇, q̇, q̈) Θ
with the Slotine–Li regressor R of eq. (44). Pinocchio's
``computeJointTorqueRegressor`` (on ``RobotModel.pinocchio_model``, which is the
reduced model when joints are locked) computes the same matrix ~30× faster; its
columns are per joint in ``toDynamicParameters()`` order, so reordering by
:data:`~robot_tv_dynamics.inertia.PINOCCHIO_TO_PHI` gives eq. (7) order.
``test_identification_regressor.py`` checks equality with ``RobotModel.regressor``.

Identifiability: only the base parameters (combinations of Θ the torques depend on)
can be identified. :func:`structural_rank` finds their number from random states;
:func:`condition_number` measures how well a data set excites them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import friction_regressor
from robot_tv_dynamics.inertia import PINOCCHIO_TO_PHI, Array
from robot_tv_dynamics.model import RobotModel

#: Relative singular-value threshold that separates identifiable directions from the
#: structurally unidentifiable ones (column-normalized regressor of random states).
RANK_TOLERANCE = 1e-9


def _columns(n_bodies: int) -> npt.NDArray[np.intp]:
    """Column permutation: Pinocchio's per-joint dynamic-parameter order → eq. (7)."""
    return (10 * np.arange(n_bodies)[:, None] + PINOCCHIO_TO_PHI[None, :]).ravel()


def stacked_regressor(
    model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike,
    progress: Callable[[float], None] | None = None,
) -> Array:
    """R(q_k, q̇_k, q̇_k, q̈_k) for every sample, eq. (7) column order.

    Args:
        model: the arm (its reduced Pinocchio model when joints are locked).
        q: positions (K, nv) [rad or m].
        qd: velocities (K, nv).
        qdd: accelerations (K, nv).
        progress: called with the fraction of samples done.

    Returns:
        Y, (K, nv, 10N): ``Y[k] @ theta.ravel()`` = τ of eq. (39) at sample k (constant Θ).
    """
    q = np.asarray(q, dtype=np.float64)
    qd = np.asarray(qd, dtype=np.float64)
    qdd = np.asarray(qdd, dtype=np.float64)
    k_count, nv = q.shape
    if qd.shape != q.shape or qdd.shape != q.shape or nv != model.nv:
        raise InvalidInputError("q, qd, qdd", f"expected three arrays (K, {model.nv}), got "
                                f"{q.shape}, {qd.shape}, {qdd.shape}")
    pm = model.pinocchio_model
    data = pm.createData()
    columns = _columns(model.n_bodies)
    out = np.empty((k_count, nv, 10 * model.n_bodies))
    continuous = bool(np.any(model.joint_limits.continuous))
    regressor = pin.computeJointTorqueRegressor
    step = max(1, k_count // 100)
    for k in range(k_count):
        q_pin = model.pinocchio_configuration(q[k]) if continuous else q[k]
        out[k] = regressor(pm, data, q_pin, qd[k], qdd[k])[:, columns]
        if progress is not None and k % step == 0:
            progress(k / k_count)
    if progress is not None:
        progress(1.0)
    return out


@dataclass(frozen=True)
class Excitation:
    """How well a data set excites the identifiable parameter combinations.

    Attributes:
        condition_number: σ_1/σ_r of the column-normalized stacked regressor (inertial
            and friction columns), r = the structural rank (∞ if a direction is missing).
        rank: the structural rank r (number of base parameters incl. friction).
        singular_values: all singular values, descending.
    """

    condition_number: float
    rank: int
    singular_values: Array


def structural_rank(model: RobotModel, friction: str, samples: int = 120, seed: int = 0) -> int:
    """Number of identifiable combinations of (Θ, friction) for this arm.

    Random states (q uniform in the limits, q̇ and q̈ standard normal) excite every
    identifiable direction; the rank of the column-normalized regressor at relative
    tolerance :data:`RANK_TOLERANCE` is the base-parameter count.
    """
    rng = np.random.default_rng(seed)
    limits = model.joint_limits
    lower = np.maximum(limits.lower, -np.pi)
    upper = np.minimum(limits.upper, np.pi)
    q = lower + (upper - lower) * rng.random((samples, model.nv))
    qd = rng.standard_normal((samples, model.nv))
    qdd = rng.standard_normal((samples, model.nv))
    return excitation(model, q, qd, qdd, friction, rank=None).rank


def excitation(
    model: RobotModel, q: npt.ArrayLike, qd: npt.ArrayLike, qdd: npt.ArrayLike,
    friction: str = "full", rank: int | None = None,
    coulomb_velocity: float = 0.01, weights: npt.ArrayLike | None = None,
) -> Excitation:
    """Condition number of the stacked, column-normalized regressor of a data set.

    Args:
        model: the arm.
        q: positions (K, nv).
        qd: velocities (K, nv).
        qdd: accelerations (K, nv).
        friction: friction terms included (a key of ``FRICTION_TERMS``).
        rank: the structural rank (from :func:`structural_rank`); None = the numerical
            rank of this data set at :data:`RANK_TOLERANCE`.
        coulomb_velocity: v_c of the Coulomb columns [rad/s].
        weights: per-joint row weights (nv,), e.g. 1/noise; None = 1.

    Returns:
        The :class:`Excitation` record.
    """
    y = stacked_regressor(model, q, qd, qdd)
    y_f = friction_regressor(np.asarray(qd, dtype=np.float64), friction, coulomb_velocity)
    return excitation_of(np.concatenate([y, y_f], axis=2), rank, weights)


def excitation_of(
    y: npt.ArrayLike, rank: int | None = None, weights: npt.ArrayLike | None = None
) -> Excitation:
    """:func:`excitation` for an already stacked regressor (K, nv, P)."""
    y = np.asarray(y, dtype=np.float64)
    if weights is not None:
        y = y * np.asarray(weights, dtype=np.float64)[None, :, None]
    a = y.reshape(-1, y.shape[2])
    norms = np.linalg.norm(a, axis=0)
    scale = norms.max() if norms.size else 0.0
    used = norms > 1e-12 * max(scale, 1e-300)
    a = a[:, used] / norms[used]
    if rank is None:  # numerical rank: SVD resolves singular values down to 1e-16 σ_1
        s = np.linalg.svd(a, compute_uv=False)
        r = int(np.sum(s > RANK_TOLERANCE * s[0])) if s.size else 0
    else:  # known rank: the Gram matrix is ~10× cheaper and resolves cond up to ~1e7
        values = np.linalg.eigvalsh(a.T @ a)[::-1]
        s = np.sqrt(np.maximum(values, 0.0))
        r = int(rank)
    if r == 0:
        return Excitation(float("inf"), 0, s)
    cond = float(s[0] / s[r - 1]) if r <= s.size and s[r - 1] > 0 else float("inf")
    return Excitation(cond, r, s)
