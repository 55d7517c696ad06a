r"""Bounds from the chain's structure alone, the verdicts, and the extremes record builder.

**Normality for free.** The twist recursion V_l = Ad_{l←p}(q) V_p + S_l q̇_l has a
constant left inverse (:func:`structural_gamma_lower_bound`), so γ ≥ 1/σ_max(K)² > 0 for
every q ∈ ℝⁿ whenever no joint axis is zero: Definition 2 holds for every tree of
non-degenerate 1-dof joints (UR5: γ ≥ 0.2929, Panda: γ ≥ 0.327). The paper's non-normal
example needs a joint that moves nothing (a zero axis), which URDF allows.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robot_tv_dynamics.arrays import Array
from robot_tv_dynamics.bounds.box import (
    JointSearchBox,
    kinematic_chain,
    local_jacobians,
)
from robot_tv_dynamics.bounds.evaluator import (
    BoxEvaluator,
)
from robot_tv_dynamics.bounds.extremes import (
    CERTIFIED,
    SAMPLED,
    STRUCTURAL,
    Assessment,
    JacobianExtremes,
)
from robot_tv_dynamics.bounds.interval import (
    ROUNDING,
    adjoint_matrix,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.model import RobotModel


# ---------------------------------------------------------------------------- public search
@dataclass
class Incumbent:
    """Best attained values so far (upper end of γ, lower end of δ)."""

    gamma: float = math.inf
    gamma_q: Array = field(default_factory=lambda: np.zeros(0))
    delta: float = -math.inf
    delta_q: Array = field(default_factory=lambda: np.zeros(0))

    def update(self, q: Array, lam_min: Array, lam_max: Array) -> None:
        """Keep the lowest λ_min and the highest λ_max of a batch of configurations ``q``."""
        i = int(np.argmin(lam_min))
        if lam_min[i] < self.gamma:
            self.gamma, self.gamma_q = float(lam_min[i]), np.array(q[i])
        i = int(np.argmax(lam_max))
        if lam_max[i] > self.delta:
            self.delta, self.delta_q = float(lam_max[i]), np.array(q[i])




def validate_search_args(samples: int, time_limit: float, target_gap: float) -> None:
    """Refuse a bad sample count, time limit or target gap with an error naming it."""
    if not isinstance(samples, (int, np.integer)) or samples < 1:
        raise InvalidInputError("samples", f"must be a positive integer, got {samples!r}")
    if not (math.isfinite(time_limit) and time_limit > 0):
        raise InvalidInputError("time_limit", f"must be a positive number of seconds, "
                                f"got {time_limit!r}")
    if not (math.isfinite(target_gap) and target_gap >= 0):
        raise InvalidInputError("target_gap", f"must be ≥ 0, got {target_gap!r}")


def unbounded_dependence(evaluator: BoxEvaluator, box: JointSearchBox) -> list[str]:
    """Unbounded joints on which J provably depends (∂J/∂q_k ≠ 0 at a sampled q).

    J is affine in a prismatic q_k (one factor Ad(exp(−S_k q_k)) = [[I, −q_k Ŝ_v], [0, I]]),
    so a non-zero ∂J/∂q_k at one configuration makes ‖J‖ grow without bound along q_k.
    """
    rng = np.random.default_rng(0)
    x = evaluator.lower + rng.random((4, evaluator.d)) * (evaluator.upper - evaluator.lower)
    dj = evaluator.derivatives(evaluator.jacobians(evaluator.full(x)))
    names = []
    for kk, k in enumerate(evaluator.active):
        name = box.joint_names[k]
        if name in box.unbounded and np.max(np.abs(dj[..., kk])) > 1e-12:
            names.append(name)
    return names


def bound_verdicts(
    method: str, box: JointSearchBox, gamma: tuple[float, float],
    delta: tuple[float, float], growing: list[str], structural: float,
) -> tuple[Assessment, Assessment]:
    """Normality (Definition 2) and Assumption 2 (Lemma 2) on the box, with reasons."""
    if box.zero_axis:
        normality = Assessment(False, STRUCTURAL, (
            f"not normal: joint(s) {', '.join(box.zero_axis)} have a zero motion axis, so J "
            "has a zero column for every q and γ = 0"))
    elif structural > 0.0:
        normality = Assessment(True, STRUCTURAL, (
            f"normal for every q ∈ ℝⁿ (a constant left inverse K of J gives "
            f"γ ≥ 1/σ_max(K)² = {structural:.6g} > 0)"))
    elif gamma[1] <= 1e-12 * max(delta[0], 1.0):
        normality = Assessment(False, method, (
            f"not normal: λ_min(JᵀJ) ≈ {gamma[1]:.3g} at a sampled configuration"))
    elif method == CERTIFIED and gamma[0] > 0.0:
        normality = Assessment(True, CERTIFIED, f"normal (certified: γ ≥ {gamma[0]:.6g} > 0)")
    elif method == CERTIFIED or box.unbounded:
        normality = Assessment(None, method, (
            "normality undetermined: the certified lower end of γ is still 0"))
    else:
        normality = Assessment(True, SAMPLED, (
            f"appears normal (sampled estimate γ ≈ {gamma[1]:.6g}; not a proof)"))
    if growing:
        assumption2 = Assessment(False, CERTIFIED, (
            f"Assumption 2 fails: J grows without bound along the unbounded joint(s) "
            f"{', '.join(growing)} (J is affine in a prismatic coordinate with a non-zero "
            "slope, so δ = ∞)"))
    elif box.unbounded:
        assumption2 = Assessment(None, SAMPLED, (
            f"Assumption 2 undetermined: the box is unbounded in {', '.join(box.unbounded)} "
            "and J did not vary with it where sampled"))
    else:
        assumption2 = Assessment(True, CERTIFIED, (
            f"Assumption 2 holds on the joint box (bounded box, δ ≤ {delta[1]:.6g})"))
    return normality, assumption2


def structural_left_inverse(model: RobotModel) -> Array | None:
    r"""The constant K (nv, 6N) with K J(q) = I for every q ∈ ℝⁿ; None with a zero axis.

    The body twists obey V_l = Ad_{l←p}(q) V_p + S_l q̇_l, with
    Ad_{l←p}(q) = Ad(exp(S_l q_l)⁻¹) Ad(placement_l⁻¹). For a revolute S_l = (0, a) or a
    prismatic S_l = (a, 0), S_lᵀ Ad(exp(S_l q_l)⁻¹) = S_lᵀ, so
    q̇_l = S_lᵀ (V_l − Ad(placement_l⁻¹) V_p) / ‖S_l‖² defines a **constant** matrix K
    (row l reads body l's and its parent's twist) with K J(q) = I for all q.
    """
    pm = model.pinocchio_model
    jac = local_jacobians(model, np.zeros(model.nv))
    rows = np.zeros((model.nv, 6 * model.n_bodies))
    for l in range(model.nv):
        motion = jac[l, :, l]
        norm2 = float(motion @ motion)
        if norm2 == 0.0:
            return None
        rows[l, 6 * l:6 * l + 6] = motion / norm2
        parent = pm.parents[l + 1] - 1
        if parent >= 0:
            placement = pm.jointPlacements[l + 1]
            rotation = np.asarray(placement.rotation)
            inverse = adjoint_matrix(rotation.T, -rotation.T @ np.asarray(placement.translation))
            rows[l, 6 * parent:6 * parent + 6] = -(motion @ inverse) / norm2
    return rows


def structural_gamma_lower_bound(model: RobotModel) -> float:
    r"""A lower bound on λ_min(J(q)ᵀJ(q)) valid for **every** q ∈ ℝⁿ (0 with a zero axis).

    With the constant left inverse K of :func:`structural_left_inverse` (K J(q) = I),
    σ_min(J(q)) ≥ 1/σ_max(K) and γ ≥ 1/σ_max(K)²: every tree of non-degenerate 1-dof
    joints has a normal stacked Jacobian (Definition 2), even with unbounded prismatic
    ranges.

    Args:
        model: the arm.

    Returns:
        1/σ_max(K)², or 0 when some joint has a zero motion axis.
    """
    rows = structural_left_inverse(model)
    if rows is None:
        return 0.0
    return float(1.0 / np.linalg.norm(rows, ord=2) ** 2) * (1.0 - ROUNDING)


def structural_weighted_lower_bound(left_inverse: Array | None, weights: Array) -> float:
    r"""A lower bound of λ_min(Σ_l J_l(q)ᵀ L_l J_l(q)) for **every** q, from K alone.

    For L_l ≻ 0 (6×6 per body, or scalars z_l > 0 meaning z_l I₆) and 𝓛 = blockdiag(L_l):
    q̇ = K J q̇ = K 𝓛^{-1/2} 𝓛^{1/2} J q̇, so ‖q̇‖² ≤ λ_max(K 𝓛⁻¹ Kᵀ) q̇ᵀ Jᵀ𝓛J q̇ and

    .. math::
        λ_{\min}\Big(\sum_l J_l^\top L_l J_l\Big) \ge 1 / λ_{\max}(K 𝓛^{-1} K^\top).

    With L_l = Z(Φ_l) it bounds λ_min(M(q, Θ)) itself; with z_l = λ_min(Z(Φ_l)) the
    weighted α₁ʷ. One nv×nv eigenvalue: cheap enough for every sample.

    Args:
        left_inverse: K (nv, 6N), or None (a zero axis: no bound).
        weights: (N,) scalars or (N, 6, 6) symmetric matrices.

    Returns:
        The bound (0 when some weight is not positive definite or K is None).
    """
    if left_inverse is None:
        return 0.0
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 1:
        if not np.all(w > 0.0) or not np.all(np.isfinite(w)):
            return 0.0
        scaled = left_inverse / np.sqrt(np.repeat(w, 6))[None, :]
    else:
        eig, vec = np.linalg.eigh(w)
        if not np.all(eig[:, 0] > 1e-12 * np.maximum(eig[:, -1], 1e-300)):
            return 0.0
        inv_sqrt = (vec / np.sqrt(eig)[:, None, :]) @ np.swapaxes(vec, 1, 2)
        blocks = left_inverse.reshape(left_inverse.shape[0], -1, 6)
        scaled = np.einsum("rlj,ljk->rlk", blocks, inv_sqrt).reshape(left_inverse.shape)
    top = float(np.linalg.eigvalsh(scaled @ scaled.T)[-1])
    if not top > 0.0 or not math.isfinite(top):
        return 0.0
    return (1.0 / top) * (1.0 - 1e3 * ROUNDING)


def extremes_record(
    method: str, box: JointSearchBox, point: tuple[float, float],
    gamma: tuple[float, float], delta: tuple[float, float], gap: float, incumbent: Incumbent,
    verdicts: tuple[Assessment, Assessment], evaluations: int, start: float, converged: bool,
    settings: dict[str, Any],
) -> JacobianExtremes:
    """Assemble a :class:`JacobianExtremes` (shared by the sampled and certified search).

    ``point`` is the (γ, δ) reported as the value; ``gamma``, ``delta`` the brackets.
    """
    normality, assumption2 = verdicts
    return JacobianExtremes(
        method=method,
        inf_lambda_min_JtJ=point[0],
        sup_sigma_max_J_sq=point[1],
        inf_lambda_min_JtJ_bracket=gamma,
        sup_sigma_max_J_sq_bracket=delta,
        gap=gap,
        argmin_q=incumbent.gamma_q,
        argmax_q=incumbent.delta_q,
        normal=normality.holds,
        bounded=assumption2.holds,
        normal_reason=normality.reason,
        bounded_reason=assumption2.reason,
        normal_method=normality.method,
        bounded_method=assumption2.method,
        active_joints=box.active_joints,
        notes=box.notes,
        evaluations=evaluations,
        elapsed_s=time.monotonic() - start,
        converged=converged,
        settings=settings,
    )


def structural_delta(model: RobotModel, box: JointSearchBox, evaluator: BoxEvaluator) -> float:
    """A valid but loose bound on σ_max(J)² over the box from the chain geometry alone.

    σ_max(J)² ≤ ‖J‖_F² = Σ_l Σ_i ‖J_l[:, i]‖², and column i of body l is Ad(g_{l←i}) S_i:
    its angular part has norm ‖S_i,ω‖ and its linear part at most
    ‖S_i,v‖ + ‖S_i,ω‖ ‖o_l − o_i‖, with ‖o_l − o_i‖ ≤ Σ over the joints j on the path of
    (‖placement_j‖ + max|q_j| ‖S_j,v‖).
    """
    chain = kinematic_chain(model)
    reach = np.abs(np.array(box.fixed))
    reach[evaluator.active] = np.maximum(np.abs(evaluator.lower), np.abs(evaluator.upper))
    step = chain.offset + np.where(chain.omega == 0.0, reach * chain.linear, 0.0)
    total = 0.0
    for l in range(model.nv):
        for i in np.flatnonzero(chain.ancestors[l]):
            path = [j for j in np.flatnonzero(chain.ancestors[l])
                    if chain.ancestors[j, i] and j != i]
            linear = chain.linear[i] + chain.omega[i] * float(np.sum(step[path]))
            total += chain.omega[i] ** 2 + linear ** 2
    return float(total)
