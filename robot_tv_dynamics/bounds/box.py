r"""The joint box the Jacobian extremes run over, reduced to the joints J depends on.

∂J_l[:, i]/∂q_k is the Lie bracket ad(J_l[:, i]) J_l[:, k] for i < k and zero otherwise
(checked against Pinocchio's kinematic Hessians in the tests), so J does not depend on
the first joint of each chain, nor on a prismatic joint preceded only by prismatic
joints. A revolute joint with no child body (the UR5's wrist 3) changes J only by an
orthogonal factor blockdiag(Rᵀ, Rᵀ) on its own body's rows, so the singular values of J
do not depend on it; a weighted Gram matrix Σ J_lᵀL_lJ_l does not depend on it only when
L_l is symmetric about the joint axis (commutes with that rotation), so a weighted search
passes its weights and keeps the joint otherwise. Revolute ranges wider than 2π are cut
to one period (J is 2π-periodic in them). UR5: 4 searched joints for JᵀJ (shoulder lift,
elbow, wrist 1, wrist 2), 5 for the exact M. Panda: 8 (joints 2–7 and the two finger
joints, whose ranges are 0.04 m).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics.arrays import frozen_copy
from robot_tv_dynamics.bounds.interval import ad_matrix
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel

#: A prismatic limit beyond this many metres counts as "no finite limit" (URDFs write
#: "unlimited" as ±1e30 or ±1.79e308, since urdfdom rejects a missing <limit> and reads a
#: <limit> without lower/upper as [0, 0]; no arm has a kilometre-long slide).
MAX_PRISMATIC_RANGE = 1.0e3
#: Relative size of ad(S)ᵀL + L ad(S) below which a body's weight counts as symmetric
#: about its joint axis (rounding of URDF inertias written about an axis of symmetry).
_SYMMETRY_TOLERANCE = 1.0e-12


# ---------------------------------------------------------------------------- structure
@dataclass(frozen=True)
class JointSearchBox:
    """The joint-limit box the extremes run over, reduced by the structure of J.

    Attributes:
        joint_names: dof names, in ``model.joint_names`` order.
        lower: (nv,) lower ends of the searched box [rad, m].
        upper: (nv,) upper ends [rad, m]; revolute ranges ≥ 2π are cut to one period
            [mid − π, mid + π] (J is 2π-periodic in a revolute angle).
        active: (nv,) whether σ(J(q)) depends on the joint (only these are searched).
        fixed: (nv,) the value an inactive joint is held at (inside its range).
        notes: why each inactive joint was dropped, and other remarks.
        unbounded: joints without finite limits (prismatic beyond ``MAX_PRISMATIC_RANGE``)
            on which J may depend.
        zero_axis: joints whose motion axis is zero: their column of J vanishes for
            every q (they move no body).
    """

    joint_names: tuple[str, ...]
    lower: Array
    upper: Array
    active: npt.NDArray[np.bool_]
    fixed: Array
    notes: tuple[str, ...]
    unbounded: tuple[str, ...]
    zero_axis: tuple[str, ...]

    @property
    def active_joints(self) -> tuple[str, ...]:
        """Names of the searched joints."""
        return tuple(n for n, a in zip(self.joint_names, self.active, strict=True) if a)

    @property
    def bounded(self) -> bool:
        """Whether the box is bounded in every joint that J may depend on."""
        return not self.unbounded


@dataclass(frozen=True)
class KinematicChain:
    """Tree structure and joint motion subspaces S_k (own frame) of a model."""

    parent: npt.NDArray[np.int_]  # parent dof, −1 for the base
    ancestors: npt.NDArray[np.bool_]  # [l, i]: dof i is body l's joint or before it
    omega: Array  # ‖S_k angular‖
    linear: Array  # ‖S_k linear‖
    offset: Array  # ‖joint placement translation‖ [m]
    leaf: npt.NDArray[np.bool_]
    motion: Array  # S_k in frame k, (nv, 6), [v; ω]


def kinematic_chain(model: RobotModel) -> KinematicChain:
    """The tree structure, joint axes and joint offsets of ``model`` (at q = 0 clipped)."""
    pm = model.pinocchio_model
    nv = model.nv
    parent = np.array([pm.parents[j] - 1 for j in range(1, pm.njoints)], dtype=int)
    ancestors = np.zeros((nv, nv), dtype=bool)
    for l in range(nv):
        j = l
        while j >= 0:
            ancestors[l, j] = True
            j = parent[j]
    jac = local_jacobians(model, np.clip(np.zeros(nv), *_finite_limits(model)))
    own = jac[np.arange(nv), :, np.arange(nv)]  # S_l in frame l, (nv, 6)
    leaf = np.ones(nv, dtype=bool)
    leaf[parent[parent >= 0]] = False
    offset = np.array([np.linalg.norm(pm.jointPlacements[j].translation)
                       for j in range(1, pm.njoints)])
    return KinematicChain(parent=parent, ancestors=ancestors,
                  omega=np.linalg.norm(own[:, 3:], axis=1),
                  linear=np.linalg.norm(own[:, :3], axis=1), offset=offset, leaf=leaf,
                  motion=own)


def local_jacobians(model: RobotModel, q: Array) -> Array:
    """LOCAL Jacobians (N, 6, nv) straight from Pinocchio (any nv, including 1)."""
    pm = model.pinocchio_model
    data = pm.createData()
    pin.computeJointJacobians(pm, data, model.pinocchio_configuration(q))
    return np.array([np.reshape(pin.getJointJacobian(pm, data, l + 1, pin.LOCAL), (6, model.nv))
                     for l in range(model.n_bodies)])


def _finite_limits(model: RobotModel) -> tuple[Array, Array]:
    limits = model.joint_limits
    lower = np.where(np.isfinite(limits.lower), limits.lower, -np.inf)
    upper = np.where(np.isfinite(limits.upper), limits.upper, np.inf)
    return np.maximum(lower, -MAX_PRISMATIC_RANGE), np.minimum(upper, MAX_PRISMATIC_RANGE)


def _symmetric_about_axis(motion: Array, weight: Array | None) -> bool:
    """Whether J_lᵀL_lJ_l stays the same when body l turns about its own joint S_l.

    Turning by θ maps body l's rows by X(θ) = exp(−θ ad(S_l)); XᵀL_lX = L_l for every θ
    exactly when ad(S_l)ᵀL_l + L_l ad(S_l) = 0 (L_l = I₆ for JᵀJ: a pure rotation about
    an axis through the frame origin). Checked to rounding, relative to ‖ad(S_l)‖‖L_l‖.
    """
    ad = ad_matrix(motion)
    weight = np.eye(6) if weight is None else np.asarray(weight, dtype=np.float64)
    commutator = ad.T @ weight + weight @ ad
    scale = np.linalg.norm(ad) * np.linalg.norm(weight)
    return bool(np.linalg.norm(commutator) <= _SYMMETRY_TOLERANCE * scale)


def _held_positions(lower: Array, upper: Array, huge: npt.NDArray[np.bool_]) -> Array:
    """Where a dropped joint is held: mid-range, 0 for a joint without finite limits.

    Both within the limits cut to ±``MAX_PRISMATIC_RANGE``.
    """
    clipped_lower = np.maximum(lower, -MAX_PRISMATIC_RANGE)
    clipped_upper = np.minimum(upper, MAX_PRISMATIC_RANGE)
    fixed = np.clip(0.5 * (clipped_lower + clipped_upper), clipped_lower, clipped_upper)
    return np.where(huge, np.clip(0.0, clipped_lower, clipped_upper), fixed)


def joint_search_box(model: RobotModel, gram_weights: Array | None = None) -> JointSearchBox:
    """The box of joint positions the Jacobian extremes run over, and which joints matter.

    A joint is dropped (held at a value inside its range) when the singular values of
    the stacked LOCAL Jacobian J(q) (or, with ``gram_weights``, the eigenvalues of
    Σ_l J_lᵀL_lJ_l) provably do not depend on it:

    - its range is a single point;
    - its motion axis is zero (J's column is zero; J does not depend on it either);
    - no joint with a non-zero axis precedes it (the first joint of a chain:
      ∂J/∂q_k = Σ ad(J_i) J_k over i < k is empty);
    - it is prismatic and every joint before it is prismatic (brackets of two
      translations vanish);
    - it is revolute without child bodies and its body's weight is symmetric about
      its axis: it multiplies its own body's rows by blockdiag(Rᵀ, Rᵀ) (the axis passes
      through the body-frame origin), which leaves I₆ and any L_l commuting with the
      rotation unchanged. A body whose L_l is not symmetric (the exact weight of the
      UR5's wrist 3, whose moments about the two axes perpendicular to it differ) keeps
      the joint searched.

    Args:
        model: the arm.
        gram_weights: the weights L_l of a weighted Gram matrix, (N, 6, 6), in each
            body's joint frame; None = JᵀJ (L_l = I₆).

    Returns:
        The reduced box.
    """
    chain = kinematic_chain(model)
    limits = model.joint_limits
    names = tuple(model.joint_names)
    nv = model.nv
    lower = np.array(limits.lower, dtype=np.float64)
    upper = np.array(limits.upper, dtype=np.float64)
    revolute = chain.omega > 0.0
    prismatic = (chain.omega == 0.0) & (chain.linear > 0.0)
    zero = (chain.omega == 0.0) & (chain.linear == 0.0)
    notes: list[str] = []
    unbounded: list[str] = []
    huge = ~np.isfinite(lower) | ~np.isfinite(upper) | (np.abs(lower) > MAX_PRISMATIC_RANGE) \
        | (np.abs(upper) > MAX_PRISMATIC_RANGE)
    for k in range(nv):
        if revolute[k] and upper[k] - lower[k] >= 2.0 * np.pi:
            mid = 0.5 * (lower[k] + upper[k]) if np.isfinite(lower[k] + upper[k]) else 0.0
            lower[k], upper[k] = mid - np.pi, mid + np.pi
    active = np.zeros(nv, dtype=bool)
    for k in range(nv):
        before = [i for i in range(nv) if chain.ancestors[k, i] and i != k and not zero[i]]
        if zero[k]:
            notes.append(f"{names[k]}: zero motion axis (its column of J is zero)")
        elif not before:
            notes.append(f"{names[k]}: first moving joint of its chain (J does not depend on it)")
        elif prismatic[k] and all(prismatic[i] for i in before):
            notes.append(f"{names[k]}: prismatic after prismatic joints only "
                         "(J does not depend on it)")
        elif revolute[k] and chain.leaf[k] and _symmetric_about_axis(
                chain.motion[k], None if gram_weights is None else gram_weights[k]):
            notes.append(f"{names[k]}: revolute without child bodies "
                         "(changes J by an orthogonal factor only"
                         + (")" if gram_weights is None
                            else ", its body's weight symmetric about the axis)"))
        elif prismatic[k] and huge[k]:
            notes.append(f"{names[k]}: prismatic without finite limits "
                         f"[{lower[k]:g}, {upper[k]:g}] m")
            unbounded.append(names[k])
            active[k] = True
        elif upper[k] <= lower[k]:
            hint = " (a <limit> without lower/upper?)" if lower[k] == upper[k] == 0 else ""
            notes.append(f"{names[k]}: zero-width range [{lower[k]:g}, {upper[k]:g}]{hint}")
        else:
            active[k] = True
    active.setflags(write=False)
    return JointSearchBox(
        joint_names=names, lower=frozen_copy(lower), upper=frozen_copy(upper), active=active,
        fixed=frozen_copy(_held_positions(lower, upper, huge)), notes=tuple(notes),
        unbounded=tuple(unbounded),
        zero_axis=tuple(names[k] for k in np.flatnonzero(zero)),
    )
