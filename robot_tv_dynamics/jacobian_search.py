r"""The search for the Jacobian extremes γ and δ: sampling, branch and bound, enclosures.

Computes the :class:`~robot_tv_dynamics.extremes.JacobianExtremes` that the uniform
mass-matrix bounds of :mod:`robot_tv_dynamics.bounds` (Theorems 2–3) need:

.. math::
    γ = \inf_q λ_{\min}(J(q)^\top J(q)), \qquad δ = \sup_q σ_{\max}(J(q))^2

where J is the stacked LOCAL body Jacobian of eq. (17) and q runs over the URDF
joint-limit box (continuous joints: one period). Everything here is re-exported by
:mod:`robot_tv_dynamics.bounds`.

**Sampled vs certified.** γ and δ are computed two ways, and every record, table
and JSON object says which:

- ``"sampled"`` (:func:`sampled_jacobian_extremes`): quasi-random sampling plus local
  refinement. Every value is *attained* at a configuration, so a sampled inf is only an
  **upper** bound on γ and a sampled sup only a **lower** bound on δ. An estimate, not a
  bound; the other ends of its brackets are the cheap structural bounds below.
- ``"certified"`` (:func:`certified_jacobian_extremes`): branch and bound over boxes
  with a rigorous enclosure (see :func:`certified_jacobian_extremes` for the argument).
  It returns brackets [lower, upper] valid whenever it stops (time limit or not); α₁
  uses the lower end of γ, α₂ the upper end of δ.

**Dimension reduction** (:func:`joint_search_box`). ∂J_l[:, i]/∂q_k is the Lie bracket
ad(J_l[:, i]) J_l[:, k] for i < k and zero otherwise (checked against Pinocchio's
kinematic Hessians in the tests), so J does not depend on the first joint of each
chain, nor on a prismatic joint preceded only by prismatic joints. A revolute joint
with no child body (the UR5's wrist 3) changes J only by an orthogonal factor
blockdiag(Rᵀ, Rᵀ) on its own body's rows, so the singular values of J do not depend
on it. Revolute ranges wider than 2π are cut to one period (J is 2π-periodic in them).
UR5: 4 searched joints (shoulder lift, elbow, wrist 1, wrist 2). Panda: 8 (joints 2–7
and the two finger joints, whose ranges are 0.04 m).

**Normality for free.** The twist recursion V_l = Ad_{l←p}(q) V_p + S_l q̇_l has a
constant left inverse (:func:`structural_gamma_lower_bound`), so γ ≥ 1/σ_max(K)² > 0 for
every q ∈ ℝⁿ whenever no joint axis is zero: Definition 2 holds for every tree of
non-degenerate 1-dof joints (UR5: γ ≥ 0.2929, Panda: γ ≥ 0.327). The paper's non-normal
example needs a joint that moves nothing (a zero axis), which URDF allows.

Contents, in order: the reduced joint box (:class:`JointSearchBox`,
:func:`joint_search_box`); batched kinematics and the certified enclosures
(interval/Lie-bracket arithmetic, :func:`_eigenvalue_enclosure`, :class:`_TrigModel`,
:class:`_Evaluator`); sampling and refinement; the verdicts and structural bounds; the
two searches and :func:`jacobian_extremes_at`. The dispatch by method name,
:func:`~robot_tv_dynamics.bounds.jacobian_extremes`, is in :mod:`robot_tv_dynamics.bounds`.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pinocchio as pin
import scipy.optimize
import scipy.stats

from robot_tv_dynamics.arrays import frozen_copy, skew
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.extremes import (
    CERTIFIED,
    SAMPLED,
    STRUCTURAL,
    JacobianExtremes,
    Verdict,
)
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel

#: A prismatic limit beyond this many metres counts as "no finite limit" (URDFs write
#: "unlimited" as ±1e30 or ±1.79e308, since urdfdom rejects a missing <limit> and reads a
#: <limit> without lower/upper as [0, 0]; no arm has a kilometre-long slide).
MAX_PRISMATIC_RANGE = 1.0e3

#: Relative padding added to every certified enclosure to cover floating-point rounding
#: of the centre evaluations (eigenvalues of a small symmetric matrix are accurate to a
#: few ulps of its norm; this is five orders of magnitude more).
_ROUNDING = 1.0e-10

ProgressCallback = Callable[["SearchProgress"], None]


@dataclass(frozen=True)
class SearchProgress:
    """State of a running Jacobian-extremes search, handed to a progress callback.

    Attributes:
        elapsed_s: time since the start [s].
        time_limit_s: the time limit [s].
        gap: current relative gap of the brackets (1 = nothing known yet).
        target_gap: the gap at which the search stops.
        boxes: boxes evaluated so far.
        fraction: a progress fraction in [0, 1] for a bar (time or gap, whichever is
            further).
    """

    elapsed_s: float
    time_limit_s: float
    gap: float
    target_gap: float
    boxes: int
    fraction: float


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
class _Chain:
    """Tree structure and joint motion subspaces S_k (own frame) of a model."""

    parent: npt.NDArray[np.int_]  # parent dof, −1 for the base
    ancestors: npt.NDArray[np.bool_]  # [l, i]: dof i is body l's joint or before it
    omega: Array  # ‖S_k angular‖
    linear: Array  # ‖S_k linear‖
    offset: Array  # ‖joint placement translation‖ [m]
    leaf: npt.NDArray[np.bool_]


def _chain(model: RobotModel) -> _Chain:
    pm = model.pinocchio_model
    nv = model.nv
    parent = np.array([pm.parents[j] - 1 for j in range(1, pm.njoints)], dtype=int)
    ancestors = np.zeros((nv, nv), dtype=bool)
    for l in range(nv):
        j = l
        while j >= 0:
            ancestors[l, j] = True
            j = parent[j]
    jac = _local_jacobians(model, np.clip(np.zeros(nv), *_finite_limits(model)))
    own = jac[np.arange(nv), :, np.arange(nv)]  # S_l in frame l, (nv, 6)
    leaf = np.ones(nv, dtype=bool)
    leaf[parent[parent >= 0]] = False
    offset = np.array([np.linalg.norm(pm.jointPlacements[j].translation)
                       for j in range(1, pm.njoints)])
    return _Chain(parent=parent, ancestors=ancestors,
                  omega=np.linalg.norm(own[:, 3:], axis=1),
                  linear=np.linalg.norm(own[:, :3], axis=1), offset=offset, leaf=leaf)


def _local_jacobians(model: RobotModel, q: Array) -> Array:
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


def joint_search_box(model: RobotModel) -> JointSearchBox:
    """The box of joint positions the Jacobian extremes run over, and which joints matter.

    A joint is dropped (held at a value inside its range) when the singular values of
    the stacked LOCAL Jacobian J(q) provably do not depend on it:

    - its range is a single point;
    - its motion axis is zero (J's column is zero; J does not depend on it either);
    - no joint with a non-zero axis precedes it (the first joint of a chain:
      ∂J/∂q_k = Σ ad(J_i) J_k over i < k is empty);
    - it is prismatic and every joint before it is prismatic (brackets of two
      translations vanish);
    - it is revolute without child bodies: it multiplies its own body's rows by the
      orthogonal blockdiag(Rᵀ, Rᵀ) (the axis passes through the body-frame origin).

    Args:
        model: the arm.

    Returns:
        The reduced box.
    """
    chain = _chain(model)
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
        elif revolute[k] and chain.leaf[k]:
            notes.append(f"{names[k]}: revolute without child bodies "
                         "(changes J by an orthogonal factor only)")
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
    clipped_lower = np.maximum(lower, -MAX_PRISMATIC_RANGE)
    clipped_upper = np.minimum(upper, MAX_PRISMATIC_RANGE)
    fixed = np.clip(0.5 * (clipped_lower + clipped_upper), clipped_lower, clipped_upper)
    fixed = np.where(huge, np.clip(0.0, clipped_lower, clipped_upper), fixed)
    active.setflags(write=False)
    return JointSearchBox(
        joint_names=names, lower=frozen_copy(lower), upper=frozen_copy(upper), active=active,
        fixed=frozen_copy(fixed), notes=tuple(notes), unbounded=tuple(unbounded),
        zero_axis=tuple(names[k] for k in np.flatnonzero(zero)),
    )


# ---------------------------------------------------------------------------- evaluation


def _imatmul(am: Array, ar: Array, bm: Array, br: Array) -> tuple[Array, Array]:
    """Midpoint-radius product of interval matrices: A·B ⊆ AmBm ± (|Am|Br + Ar|Bm| + ArBr)."""
    return am @ bm, np.abs(am) @ br + ar @ (np.abs(bm) + br)


def _ad(twist: Array, absolute: bool = False) -> Array:
    """ad(t) = [[S(ω), S(v)], [0, S(ω)]] of twists (..., 6), (v, ω) linear first.

    With ``absolute`` the entries are replaced by their absolute values: the radius
    matrix of ad over an interval twist with radius ``twist`` (entries are ± components).
    """
    v, w = twist[..., :3], twist[..., 3:]
    sv, sw = skew(v), skew(w)
    if absolute:
        sv, sw = np.abs(sv), np.abs(sw)
    out = np.zeros(twist.shape[:-1] + (6, 6))
    out[..., :3, :3] = sw
    out[..., :3, 3:] = sv
    out[..., 3:, 3:] = sw
    return out


def _ibracket(am: Array, ar: Array, bm: Array, br: Array) -> tuple[Array, Array]:
    """Interval Lie brackets ad(a_p) b_q, all pairs, in midpoint-radius form.

    Args:
        am: midpoints of P twists, (..., P, 6); ``ar`` their radii.
        ar: radii, same shape as ``am``.
        bm: midpoints of Q twists as columns, (..., 6, Q).
        br: radii, same shape as ``bm``.

    Returns:
        (mid, rad), each (..., P, 6, Q).
    """
    p, q = am.shape[-2], bm.shape[-1]
    lead = am.shape[:-2]
    adm = _ad(am).reshape(lead + (p * 6, 6))
    adr = _ad(ar, absolute=True).reshape(lead + (p * 6, 6))
    mid, rad = _imatmul(adm, adr, bm, br)
    return mid.reshape(lead + (p, 6, q)), rad.reshape(lead + (p, 6, q))


def _bracket(a: Array, b: Array) -> Array:
    """Lie bracket ad(a) b of twists on axis 2 of (B, N, 6, ...) arrays (broadcasting)."""
    v0, v1, v2, w0, w1, w2 = (a[:, :, c] for c in range(6))
    x0, x1, x2, y0, y1, y2 = (b[:, :, c] for c in range(6))
    return np.stack([
        w1 * x2 - w2 * x1 + v1 * y2 - v2 * y1,
        w2 * x0 - w0 * x2 + v2 * y0 - v0 * y2,
        w0 * x1 - w1 * x0 + v0 * y1 - v1 * y0,
        w1 * y2 - w2 * y1,
        w2 * y0 - w0 * y2,
        w0 * y1 - w1 * y0,
    ], axis=2)


def _adjoint(rotation: Array, translation: Array) -> Array:
    """Ad(g) of g = (R, p) on twists (v, ω), linear first: [[R, S(p)R], [0, R]]."""
    out = np.zeros(rotation.shape[:-2] + (6, 6))
    out[..., :3, :3] = rotation
    out[..., 3:, 3:] = rotation
    out[..., :3, 3:] = skew(translation) @ rotation
    return out


def _eigenvalue_enclosure(
    lam: Array, vec: Array, grad: Array, hess_mid: Array, hess_rad: Array | None, r: Array,
    remainder: Array | None = None,
) -> tuple[Array, Array, Array, Array]:
    r"""Bounds of λ_min and λ_max of A(q) = J(q)ᵀJ(q) over boxes |q − c| ≤ r (active dims).

    In the eigenbasis U of A(c) (eigenvalues λ_i), Ã(q) = Uᵀ A(q) U = Λ + Ẽ with
    Ẽ = Σ_k Δ_k Uᵀ∂_kA(c)U + Uᵀ R U and R = ∫₀¹ (1 − t) Σ_jk Δ_jΔ_k ∂²_jk A(c + tΔ) dt,
    where ∂²A(c + tΔ) lies in the interval matrix (``hess_mid`` ± ``hess_rad``) for
    every t. Entrywise bounds follow: off the diagonal
    |Ẽ_im| ≤ Ē_im = Σ_k r_k |g̃_k,im| + ½ Σ_jk r_j r_k (|u_iᵀ P_jk u_m| + |u_i|ᵀ rad_jk |u_m|);
    on the diagonal, with V = u_iᵀ P u_i (d × d) and W = |u_i|ᵀ rad |u_i|,
    Ẽ_ii ≥ −Σ_k r_k |g̃_k,ii| + ½ (min(λ_min(V), 0) Σ r_k² − Σ_jk r_j r_k W_jk)
    (and the mirror image above). For a unit x,
    xᵀÃx ≥ Σ_i (λ_i + e_i) x_i² − Σ_{i≠m} Ē_im |x_i||x_m| = |x|ᵀ M |x| ≥ λ_min(M), with the
    comparison matrix M = diag(λ + e) − offdiag(Ē); likewise λ_max(Ã) ≤ λ_max(M⁺).

    Args:
        lam: eigenvalues of A(c), (B, n), ascending.
        vec: eigenvectors (columns), (B, n, n).
        grad: ∂_kA(c), (B, d, n, n).
        hess_mid: midpoint of the enclosure of ∂²_jk A over the box, (B, n, n, d, d)
            (equal to ∂²_jk A(c)).
        hess_rad: its radius, same shape; None for a second-order Taylor model whose
            remainder is given by ``remainder`` instead (then ``hess_mid`` is ∂²A(c)).
        r: half-widths of the boxes, (B, d).
        remainder: entrywise bound (B, n, n) on A(q) − (its second-order Taylor
            polynomial at c) over the box, or None.

    Returns:
        (lower bound of λ_min, upper bound of λ_max, split dimension for the lower bound,
        split dimension for the upper bound): the split dimension is the one contributing
        most to the edge eigenvector's row of Ē.
    """
    b, n = lam.shape
    gt = np.swapaxes(vec, 1, 2)[:, None] @ grad @ vec[:, None]  # (B, d, n, n)
    linear = np.einsum("bk,bkim->bim", r, np.abs(gt))
    vt = np.swapaxes(vec, 1, 2)
    d = r.shape[1]
    hm = hess_mid.reshape(b, n, n, d * d)
    proj = np.einsum("bai,bimk,bmc->back", vt, hm, vec).reshape(b, n, n, d, d)
    if hess_rad is None:
        proj_rad = np.zeros_like(proj)
    else:
        hr = hess_rad.reshape(b, n, n, d * d)
        proj_rad = np.einsum("bai,bimk,bmc->back", np.abs(vt), hr, np.abs(vec)).reshape(
            b, n, n, d, d)
    quad = 0.5 * np.einsum("bj,bimjk,bk->bim", r, np.abs(proj) + proj_rad, r)
    off = linear + quad
    idx = np.arange(n)
    diag_v = proj[:, idx, idx]  # (B, n, d, d)
    diag_w = np.einsum("bj,bijk,bk->bi", r, proj_rad[:, idx, idx], r)
    eig_v = np.linalg.eigvalsh(0.5 * (diag_v + np.swapaxes(diag_v, -1, -2)))
    r2 = np.sum(r ** 2, axis=1)[:, None]
    lin_diag = linear[:, idx, idx]
    e_lo = -lin_diag + 0.5 * (np.minimum(eig_v[..., 0], 0.0) * r2 - diag_w)
    e_hi = lin_diag + 0.5 * (np.maximum(eig_v[..., -1], 0.0) * r2 + diag_w)
    if remainder is not None:
        rem = np.abs(vt) @ remainder @ np.abs(vec)
        off = off + rem
        e_lo = e_lo - rem[:, idx, idx]
        e_hi = e_hi + rem[:, idx, idx]
    off[:, idx, idx] = 0.0
    m_lo = -off
    m_lo[:, idx, idx] = lam + e_lo
    m_hi = off.copy()
    m_hi[:, idx, idx] = lam + e_hi
    row = np.moveaxis(np.abs(gt), 1, 3) + 0.5 * np.einsum(
        "bimjk,bk->bimj", np.abs(proj) + proj_rad, r)  # [b, i, m, k]
    score_lo = r * np.sum(row[:, 0], axis=1)
    score_hi = r * np.sum(row[:, -1], axis=1)
    if remainder is not None:
        share = r / np.maximum(np.sum(r, axis=1, keepdims=True), 1e-300)
        score_lo = score_lo + share * np.sum(rem[:, 0], axis=1, keepdims=True)
        score_hi = score_hi + share * np.sum(rem[:, -1], axis=1, keepdims=True)
    split_lo = np.argmax(score_lo, axis=1)
    split_hi = np.argmax(score_hi, axis=1)
    return (np.linalg.eigvalsh(m_lo)[:, 0], np.linalg.eigvalsh(m_hi)[:, -1], split_lo,
            split_hi)


#: Largest grid (5 points per searched revolute joint, 3 per prismatic) for fitting the
#: trigonometric model of JᵀJ; beyond it the interval enclosure is used.
_MAX_TRIG_GRID = 400_000
#: Coefficients below this fraction of the largest are lumped into one bounded term.
_COEFF_DROP = 1e-9


@dataclass(frozen=True)
class _TrigModel:
    r"""JᵀJ as an exact finite sum, for the third-order Taylor remainder.

    Each column of J_l is Ad(g_{l←i}) S_i, a product of one factor per joint on the
    path: affine in (cos q_k, sin q_k) for a revolute joint (unit axis), affine in q_k
    for a prismatic one. Hence A(q) = J(q)ᵀJ(q) is a trigonometric polynomial of degree
    ≤ 2 in every revolute angle and a polynomial of degree ≤ 2 in every prismatic
    coordinate:

    .. math::
        A(q) = \sum_t C_t \prod_{k\,\mathrm{rev}} e^{i f_{tk} q_k}
               \prod_{p\,\mathrm{pri}} (q_p - o_p)^{α_{tp}}, \quad
        f_{tk} ∈ \{-2..2\},\ α_{tp} ∈ \{0, 1, 2\}

    recovered exactly (up to rounding) from 5 (resp. 3) grid points per coordinate by
    an FFT (resp. a Vandermonde solve), and checked at random configurations.

    Attributes:
        freq: |f_t| per searched coordinate, (T, d) (0 on prismatic coordinates).
        power: α_t per searched coordinate, (T, d) (0 on revolute coordinates).
        offset: o, (d,) (prismatic expansion points).
        prismatic: (d,) mask.
        abs_coeff: |C_t| entrywise, (T, n·n).
        dropped: Σ |C_t| over the lumped small terms, (n·n,).
    """

    freq: Array
    power: Array
    offset: Array
    prismatic: npt.NDArray[np.bool_]
    abs_coeff: Array
    dropped: Array

    def remainder(self, centre: Array, r: Array) -> Array:
        r"""Entrywise bound (B, n·n) on A(q) − T₂(q) over boxes (centre ± r, (B, d)).

        T₂ is the second-order Taylor polynomial at the centre. For one term φ_t,
        |R₃| ≤ (1/3!) Σ_ijk r_i r_j r_k sup|∂_ijk φ_t| = [s³] Π_k G_k(s) with
        G_k(s) = e^{|f_k| r_k s} for a revolute factor (|∂ᵃ e^{ifq}| = |f|ᵃ) and
        G_p(s) = D₀ + D₁ r_p s + D₂ r_p² s²/2 with D_a = sup|∂ᵃ (q − o)^α| on the box for
        a prismatic one. The lumped terms use the largest f and every α at once.
        """
        rev = ~self.prismatic
        s_t = r[:, rev] @ self.freq[:, rev].T  # (B, T)
        trig_series = (s_t, 0.5 * s_t ** 2, s_t ** 3 / 6.0)  # s_t^i / i!, i = 1..3
        s_drop = 2.0 * np.sum(r[:, rev], axis=1)
        drop = [np.ones_like(s_drop), s_drop, 0.5 * s_drop ** 2, s_drop ** 3 / 6.0]
        out = np.zeros((r.shape[0], self.abs_coeff.shape[1]))
        prismatic = np.flatnonzero(self.prismatic)
        for powers in np.unique(self.power[:, prismatic], axis=0):
            members = np.flatnonzero(np.all(self.power[:, prismatic] == powers, axis=1))
            poly = [np.ones(r.shape[0]), np.zeros(r.shape[0]), np.zeros(r.shape[0]),
                    np.zeros(r.shape[0])]
            for k, alpha in zip(prismatic, powers, strict=True):
                reach = np.abs(centre[:, k] - self.offset[k]) + r[:, k]
                g = [reach ** alpha, alpha * reach ** max(alpha - 1.0, 0.0) * r[:, k],
                     0.5 * alpha * (alpha - 1.0) * r[:, k] ** 2]
                poly = [sum(poly[i] * g[c - i] for i in range(c + 1) if c - i < 3)
                        for c in range(4)]
            coeff = self.abs_coeff[members]
            out += poly[3][:, None] * np.sum(coeff, axis=0)[None, :]
            for i in range(1, 4):
                if np.any(poly[3 - i] != 0.0):
                    out += poly[3 - i][:, None] * (trig_series[i - 1][:, members] @ coeff)
        for k in prismatic:
            reach1 = np.abs(centre[:, k] - self.offset[k]) + r[:, k]
            gd = [np.maximum(1.0, np.maximum(reach1, reach1 ** 2)),
                  np.maximum(1.0, 2.0 * reach1) * r[:, k], r[:, k] ** 2]
            drop = [sum(drop[i] * gd[c - i] for i in range(c + 1) if c - i < 3)
                    for c in range(4)]
        return np.asarray(out + drop[3][:, None] * self.dropped)


def _fit_trig_model(evaluator: _Evaluator) -> _TrigModel | None:
    """Fit :class:`_TrigModel` to J(q)ᵀJ(q); None when it does not apply or does not fit."""
    act = evaluator.active
    d, n = evaluator.d, evaluator.nv
    if d == 0:
        return None
    prismatic = ~evaluator.revolute[act]
    if np.any(np.abs(evaluator.omega[act][~prismatic] - 1.0) > 1e-12):
        return None  # a revolute axis of non-unit norm: non-integer frequencies
    sizes = np.where(prismatic, 3, 5)
    if int(np.prod(sizes)) > _MAX_TRIG_GRID:
        return None
    offset = np.where(prismatic, 0.5 * (evaluator.lower + evaluator.upper), 0.0)
    half = 0.5 * (evaluator.upper - evaluator.lower)
    axes = [offset[k] + half[k] * np.array([-1.0, 0.0, 1.0]) if prismatic[k]
            else 2.0 * np.pi * np.arange(5) / 5.0 for k in range(d)]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
    gram = evaluator.gram(evaluator.full(mesh)).reshape(tuple(sizes) + (n, n))
    coeff = np.fft.fftn(gram, axes=tuple(np.flatnonzero(~prismatic))) / 5.0 ** (~prismatic).sum()
    vandermonde_inv = np.linalg.inv(np.vander(np.array([-1.0, 0.0, 1.0]), 3, increasing=True))
    for k in np.flatnonzero(prismatic):
        scale = np.diag(1.0 / half[k] ** np.arange(3))  # coefficients of (q − o)^α
        coeff = np.moveaxis(np.tensordot(scale @ vandermonde_inv, np.moveaxis(coeff, k, 0),
                                         axes=(1, 0)), 0, k)
    per_axis = [np.arange(3) if prismatic[k] else np.fft.fftfreq(5, 1.0 / 5.0)
                for k in range(d)]
    index = np.stack(np.meshgrid(*per_axis, indexing="ij"), axis=-1).reshape(-1, d)
    flat = coeff.reshape(-1, n * n)
    freq = np.where(prismatic, 0.0, index)
    power = np.where(prismatic, index, 0.0)
    # check the representation at random configurations of the box
    rng = np.random.default_rng(12345)
    x = evaluator.lower + rng.random((16, d)) * (evaluator.upper - evaluator.lower)
    basis = np.exp(1j * x @ freq.T) * np.prod(
        np.where(prismatic, x - offset, 1.0)[:, None, :] ** power[None], axis=2)
    rebuilt = np.real(basis @ flat)
    direct = evaluator.gram(evaluator.full(x)).reshape(16, -1)
    if np.max(np.abs(rebuilt - direct)) > 1e-9 * max(1.0, float(np.max(np.abs(direct)))):
        return None
    magnitude = np.abs(flat)
    keep = np.max(magnitude, axis=1) > _COEFF_DROP * float(np.max(magnitude))
    return _TrigModel(freq=np.abs(freq[keep]), power=power[keep], offset=offset,
                      prismatic=prismatic, abs_coeff=magnitude[keep],
                      dropped=np.sum(magnitude[~keep], axis=0))


#: Fitted trigonometric models per model and search box (fitting the Panda takes seconds).
_TRIG_CACHE: weakref.WeakKeyDictionary[RobotModel, dict[tuple[bytes, ...], _TrigModel | None]] = (
    weakref.WeakKeyDictionary())


class _Evaluator:
    r"""Batched J(q) and interval enclosures of J, ∂J, ∂²J over boxes, in numpy.

    Kinematics of a tree of 1-dof joints (Pinocchio's convention oMᵢ = oM_parent ·
    placementᵢ · exp(Sᵢ qᵢ)): the LOCAL Jacobian of body l is built recursively,
    J_l = Ad(exp(S_l q_l)⁻¹) Ad(placement_l⁻¹) [J_parent | 0] with column l set to S_l.
    Over a box, each factor is an interval matrix (midpoint at the box centre, radius
    from |sin δ| ≤ sin r, 1 − cos δ ≤ 1 − cos r for a rotation, r|Ŝ_v| for a
    translation), and midpoint-radius arithmetic encloses J over the whole box; the
    midpoint is J at the centre. Derivatives are brackets of columns (see the module
    docstring), enclosed by interval cross products.
    """

    def __init__(self, model: RobotModel, box: JointSearchBox, search: tuple[Array, Array]):
        chain = _chain(model)
        pm = model.pinocchio_model
        self.n = model.n_bodies
        self.nv = model.nv
        self.base = np.array(box.fixed)
        self.active = np.flatnonzero(box.active)
        self.d = self.active.size
        self.lower, self.upper = search
        self.parent = chain.parent
        jac = _local_jacobians(model, self.base)
        self.motion = np.array(jac[np.arange(self.nv), :, np.arange(self.nv)])  # S_l (nv, 6)
        self.revolute = chain.omega > 0.0
        self.placement_inv = np.array([
            _adjoint(np.asarray(pm.jointPlacements[j].rotation).T,
                     -np.asarray(pm.jointPlacements[j].rotation).T
                     @ np.asarray(pm.jointPlacements[j].translation))
            for j in range(1, pm.njoints)])
        self.placement_abs = np.abs(self.placement_inv)
        self.omega = chain.omega
        unit = np.where(self.revolute[:, None], self.motion[:, 3:], self.motion[:, :3])
        self.axis_hat = skew(unit / np.maximum(np.linalg.norm(unit, axis=1), 1e-300)[:, None])
        self.axis_hat_sq = self.axis_hat @ self.axis_hat
        self.linear_hat = skew(self.motion[:, :3])
        # [i, kk]: i < active[kk]: ∂J[:, i]/∂q_k = ad(J[:, i]) J[:, k], else 0.
        self._mask = (np.arange(self.nv)[:, None] < self.active[None, :]).astype(np.float64)
        self._model = model
        self._trig_key = (self.base.tobytes(), self.active.tobytes(), self.lower.tobytes(),
                          self.upper.tobytes())

    @property
    def trig(self) -> _TrigModel | None:
        """The trigonometric model of JᵀJ, or None when it does not apply.

        Fitted on first use and cached per model and search box.
        """
        cache = _TRIG_CACHE.setdefault(self._model, {})
        if self._trig_key not in cache:
            cache[self._trig_key] = _fit_trig_model(self)
        return cache[self._trig_key]

    def full(self, x: Array) -> Array:
        """Full configurations (B, nv) from active coordinates (B, d)."""
        q = np.repeat(self.base[None, :], x.shape[0], axis=0)
        q[:, self.active] = x
        return q

    def _motion_inverse(self, l: int, q: Array, r: Array | None) -> tuple[Array, Array]:
        """Ad(exp(S_l q)⁻¹) over q ∈ [q − r, q + r] as (mid, rad), each (B, 6, 6)."""
        b = q.shape[0]
        mid = np.zeros((b, 6, 6))
        rad = np.zeros((b, 6, 6))
        if self.revolute[l]:
            theta = -self.omega[l] * q  # exp(S q)⁻¹ = rotation by −|ω| q about the unit axis
            hat, hat_sq = self.axis_hat[l], self.axis_hat_sq[l]
            rot = (np.eye(3) + np.sin(theta)[:, None, None] * hat
                   + (1.0 - np.cos(theta))[:, None, None] * hat_sq)
            mid[:, :3, :3] = rot
            mid[:, 3:, 3:] = rot
            if r is not None:
                w = self.omega[l] * r
                sin_r = np.where(w < 0.5 * np.pi, np.sin(np.minimum(w, 0.5 * np.pi)), 1.0)
                cos_r = np.where(w < np.pi, 1.0 - np.cos(np.minimum(w, np.pi)), 2.0)
                spread = (sin_r[:, None, None] * np.abs(hat)
                          + cos_r[:, None, None] * np.abs(hat_sq))
                rot_rad = np.abs(rot) @ spread
                rad[:, :3, :3] = rot_rad
                rad[:, 3:, 3:] = rot_rad
        else:
            mid[:, :3, :3] = np.eye(3)
            mid[:, 3:, 3:] = np.eye(3)
            mid[:, :3, 3:] = -q[:, None, None] * self.linear_hat[l]
            if r is not None:
                rad[:, :3, 3:] = r[:, None, None] * np.abs(self.linear_hat[l])
        return mid, rad

    def intervals(self, q: Array, r: Array | None) -> tuple[Array, Array]:
        """J over the boxes [q − r, q + r] (B, nv each) as (mid, rad), each (B, N, 6, nv).

        With ``r=None`` the radius is zero and the midpoint is J(q).
        """
        b = q.shape[0]
        mid = np.zeros((b, self.n, 6, self.nv))
        rad = np.zeros((b, self.n, 6, self.nv))
        for l in range(self.n):
            p = self.parent[l]
            if p >= 0:
                ym = self.placement_inv[l] @ mid[:, p]
                yr = self.placement_abs[l] @ rad[:, p]
                am, ar = self._motion_inverse(l, q[:, l], None if r is None else r[:, l])
                mid[:, l], rad[:, l] = _imatmul(am, ar, ym, yr)
            mid[:, l, :, l] = self.motion[l]
            rad[:, l, :, l] = 0.0
        return mid, rad

    def jacobians(self, q: Array) -> Array:
        """Stacked LOCAL Jacobians (B, N, 6, nv) at configurations q (B, nv)."""
        return self.intervals(q, None)[0]

    def derivatives(self, jac: Array) -> Array:
        """∂J_l[:, i]/∂q_k for the active k: (B, N, 6, nv, d) from the bracket formula."""
        return _bracket(jac[..., :, None], jac[..., None, self.active]) * self._mask

    def gram(self, q: Array) -> Array:
        """A(q) = J(q)ᵀJ(q), (B, nv, nv), at configurations q (B, nv)."""
        out = np.empty((q.shape[0], self.nv, self.nv))
        for start in range(0, q.shape[0], 2048):
            chunk = slice(start, start + 2048)
            jac = self.jacobians(q[chunk]).reshape(-1, 6 * self.n, self.nv)
            out[chunk] = np.swapaxes(jac, 1, 2) @ jac
        return out

    def values(self, q: Array) -> tuple[Array, Array]:
        """λ_min(JᵀJ) and λ_max(JᵀJ) = σ_max(J)² at configurations q (B, nv)."""
        out_min = np.empty(q.shape[0])
        out_max = np.empty(q.shape[0])
        for start in range(0, q.shape[0], 1024):
            chunk = slice(start, start + 1024)
            jac = self.jacobians(q[chunk]).reshape(-1, 6 * self.n, self.nv)
            eig = np.linalg.eigvalsh(np.swapaxes(jac, 1, 2) @ jac)
            out_min[chunk], out_max[chunk] = eig[:, 0], eig[:, -1]
        return out_min, out_max

    def gradient(self, q: Array) -> tuple[float, Array, float, Array]:
        """λ_min, its active-coordinate gradient, λ_max, its gradient, at one q (nv,)."""
        jac = self.jacobians(q[None, :])
        djac = self.derivatives(jac).reshape(-1, self.nv, self.d)
        jf = jac.reshape(-1, self.nv)
        lam, vec = np.linalg.eigh(jf.T @ jf)
        grads = []
        for u in (vec[:, 0], vec[:, -1]):
            # ∂(uᵀ JᵀJ u)/∂q_k = 2 (J u)ᵀ (∂J/∂q_k u)
            grads.append(2.0 * np.einsum("r,rik,i->k", jf @ u, djac, u))
        return float(lam[0]), grads[0], float(lam[-1]), grads[1]

    def boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        """Centre values and certified enclosures of B boxes [lo, hi] (B, d) each.

        Uses the third-order Taylor model with the exact trigonometric remainder when
        :func:`_fit_trig_model` applies, else the interval enclosure of ∂²(JᵀJ).

        Returns:
            ``q`` centres (B, nv); ``lam_min``/``lam_max`` at the centres; ``gamma_lo``
            a lower bound of λ_min(JᵀJ) over each box; ``delta_hi`` an upper bound of
            σ_max(J)² over each box; ``split_min``/``split_max`` the dimension to bisect
            for each extreme.
        """
        if self.trig is not None:
            return self._taylor_boxes(lo, hi, self.trig)
        return self._interval_boxes(lo, hi)

    def _taylor_boxes(self, lo: Array, hi: Array, trig: _TrigModel) -> dict[str, Array]:
        """Second-order Taylor model at the centre + exact third-order remainder bound."""
        b, n, d, act = lo.shape[0], self.nv, self.d, self.active
        centre = 0.5 * (lo + hi)
        r = 0.5 * (hi - lo)
        q = self.full(centre)
        jac = self.jacobians(q)
        d1 = self.derivatives(jac)  # (B, N, 6, nv, d)
        t1 = _bracket(d1[..., :, :, None], jac[:, :, :, None, None, act])
        t2 = _bracket(jac[..., :, None, None], np.swapaxes(d1[:, :, :, act, :], -1, -2)[
            :, :, :, None, :, :])
        d2 = (t1 + t2) * self._mask[:, None, :]  # ∂_j∂_k J_i, (B, N, 6, nv, d_j, d_k)
        rows = 6 * self.n
        jf = jac.reshape(b, rows, n)
        d1f = d1.reshape(b, rows, n * d)
        q1 = (np.swapaxes(d2.reshape(b, rows, n * d * d), 1, 2) @ jf).reshape(
            b, n, d, d, n).transpose(0, 1, 4, 2, 3)
        q2 = (np.swapaxes(d1f, 1, 2) @ d1f).reshape(b, n, d, n, d).transpose(0, 1, 3, 2, 4)
        hess = q1 + np.swapaxes(q1, 1, 2) + q2 + np.swapaxes(q2, 3, 4)  # [i, m, j, k]
        x = np.swapaxes(d1.reshape(b, rows, n, d), 1, 3) @ jf[:, None]
        grad = x + np.swapaxes(x, -1, -2)  # ∂A/∂q_k at the centre, (B, d, n, n)
        a = np.swapaxes(jf, 1, 2) @ jf
        lam, vec = np.linalg.eigh(a)
        rem = trig.remainder(centre, r).reshape(b, n, n)
        gamma_lo, delta_hi, split_lo, split_hi = _eigenvalue_enclosure(
            lam, vec, grad, hess, None, r, remainder=rem)
        pad = _ROUNDING * (np.maximum(lam[:, -1], 0.0) + 1.0)
        return {"q": q, "lam_min": lam[:, 0], "lam_max": lam[:, -1],
                "gamma_lo": np.maximum(gamma_lo - pad, 0.0), "delta_hi": delta_hi + pad,
                "split_min": split_lo, "split_max": split_hi}

    def _interval_boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        """Interval enclosure of ∂²(JᵀJ) over the box (second-order remainder)."""
        b, n, d, act = lo.shape[0], self.nv, self.d, self.active
        centre = 0.5 * (lo + hi)
        r = 0.5 * (hi - lo)
        q = self.full(centre)
        r_full = np.zeros_like(q)
        r_full[:, act] = r
        xm, xr = self.intervals(q, r_full)  # J over the box, mid = J(c)
        # ∂_k J over the box, (B, N, 6, nv, d): [X_i, X_k] for i < k
        cm, cr = np.swapaxes(xm, 2, 3), np.swapaxes(xr, 2, 3)  # columns as twists (.., nv, 6)
        km, kr = xm[..., act], xr[..., act]  # (B, N, 6, d)
        d1m, d1r = _ibracket(cm, cr, km, kr)  # (B, N, nv, 6, d)
        d1m = np.swapaxes(d1m, 2, 3) * self._mask
        d1r = np.swapaxes(d1r, 2, 3) * self._mask
        # ∂_j ∂_k J_i = [∂_j J_i, J_k] + [J_i, ∂_j J_k] (i < k), (B, N, 6, nv, d_j, d_k)
        nb = self.n
        t1m, t1r = _ibracket(d1m.transpose(0, 1, 3, 4, 2).reshape(b, nb, n * d, 6),
                             d1r.transpose(0, 1, 3, 4, 2).reshape(b, nb, n * d, 6), km, kr)
        t1m = t1m.reshape(b, nb, n, d, 6, d).transpose(0, 1, 4, 2, 3, 5)
        t1r = t1r.reshape(b, nb, n, d, 6, d).transpose(0, 1, 4, 2, 3, 5)
        dkm = d1m[:, :, :, act, :].reshape(b, nb, 6, d * d)  # [.., k, j]
        dkr = d1r[:, :, :, act, :].reshape(b, nb, 6, d * d)
        t2m, t2r = _ibracket(cm, cr, dkm, dkr)  # (B, N, nv, 6, d_k * d_j)
        t2m = t2m.reshape(b, nb, n, 6, d, d).transpose(0, 1, 3, 2, 5, 4)
        t2r = t2r.reshape(b, nb, n, 6, d, d).transpose(0, 1, 3, 2, 5, 4)
        mask_k = self._mask[:, None, :]
        d2m = (t1m + t2m) * mask_k
        d2r = (t1r + t2r) * mask_k
        # ∂²_jk A = Q1[i,m,j,k] + Q1[m,i,j,k] + Q2[i,m,j,k] + Q2[i,m,k,j]
        rows = 6 * self.n
        xfm, xfr = xm.reshape(b, rows, n), xr.reshape(b, rows, n)
        d1fm, d1fr = d1m.reshape(b, rows, n * d), d1r.reshape(b, rows, n * d)
        d2fm, d2fr = d2m.reshape(b, rows, n * d * d), d2r.reshape(b, rows, n * d * d)
        q1m, q1r = _imatmul(np.swapaxes(d2fm, 1, 2), np.swapaxes(d2fr, 1, 2), xfm, xfr)
        q1m = q1m.reshape(b, n, d, d, n).transpose(0, 1, 4, 2, 3)  # [i, m, j, k]
        q1r = q1r.reshape(b, n, d, d, n).transpose(0, 1, 4, 2, 3)
        q2m, q2r = _imatmul(np.swapaxes(d1fm, 1, 2), np.swapaxes(d1fr, 1, 2), d1fm, d1fr)
        q2m = q2m.reshape(b, n, d, n, d).transpose(0, 1, 3, 2, 4)  # [i, m, j, k]
        q2r = q2r.reshape(b, n, d, n, d).transpose(0, 1, 3, 2, 4)
        pm_ = q1m + np.swapaxes(q1m, 1, 2) + q2m + np.swapaxes(q2m, 3, 4)
        pr_ = q1r + np.swapaxes(q1r, 1, 2) + q2r + np.swapaxes(q2r, 3, 4)
        hess_j = np.sqrt(np.sum((np.abs(d2m) + d2r) ** 2, axis=(1, 2, 3)))  # ≥ sup ‖∂²_jk J‖
        eps_j = np.einsum("bk,bk->b", r, np.sqrt(np.sum(d1m ** 2, axis=(1, 2, 3)))) \
            + 0.5 * np.einsum("bj,bjk,bk->b", r, hess_j, r)  # ‖J(q) − J(c)‖ ≤ eps_j
        # centre values and first derivatives (exact at c)
        x = np.swapaxes(d1fm.reshape(b, rows, n, d), 1, 3) @ xfm[:, None]  # [b, k, i, j]
        a = np.swapaxes(xfm, 1, 2) @ xfm
        lam, vec = np.linalg.eigh(a)
        g = x + np.swapaxes(x, -1, -2)  # ∂A/∂q_k at the centre, (B, d, n, n)
        scale = np.maximum(lam[:, -1], 0.0) + 1.0
        pad = _ROUNDING * scale
        s_min = np.sqrt(np.maximum(lam[:, 0], 0.0))
        s_max = np.sqrt(np.maximum(lam[:, -1], 0.0))
        gamma_lo = np.maximum(s_min - eps_j, 0.0) ** 2
        delta_hi = (s_max + eps_j) ** 2
        schur_lo, schur_hi, split_lo, split_hi = _eigenvalue_enclosure(lam, vec, g, pm_, pr_, r)
        gamma_lo = np.maximum(np.maximum(gamma_lo, schur_lo) - pad, 0.0)
        delta_hi = np.minimum(delta_hi, schur_hi) + pad
        return {"q": q, "lam_min": lam[:, 0], "lam_max": lam[:, -1], "gamma_lo": gamma_lo,
                "delta_hi": delta_hi, "split_min": split_lo, "split_max": split_hi}



def _relative_gap(lo: float, hi: float) -> float:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return math.inf
    if hi <= 0.0:
        return 0.0 if hi - lo <= 0.0 else math.inf
    return max(0.0, (hi - lo) / hi)


# ---------------------------------------------------------------------------- sampling
@dataclass
class _Incumbent:
    """Best attained values so far (upper end of γ, lower end of δ)."""

    gamma: float = math.inf
    gamma_q: Array = field(default_factory=lambda: np.zeros(0))
    delta: float = -math.inf
    delta_q: Array = field(default_factory=lambda: np.zeros(0))

    def update(self, q: Array, lam_min: Array, lam_max: Array) -> None:
        i = int(np.argmin(lam_min))
        if lam_min[i] < self.gamma:
            self.gamma, self.gamma_q = float(lam_min[i]), np.array(q[i])
        i = int(np.argmax(lam_max))
        if lam_max[i] > self.delta:
            self.delta, self.delta_q = float(lam_max[i]), np.array(q[i])


def _search_bounds(box: JointSearchBox) -> tuple[Array, Array]:
    """Active-coordinate box (finite: unbounded prismatic joints cut to ±1 m around 0)."""
    active = np.flatnonzero(box.active)
    lower = np.array(box.lower[active])
    upper = np.array(box.upper[active])
    for kk, k in enumerate(active):
        if box.joint_names[k] in box.unbounded:
            lower[kk] = max(lower[kk], -1.0) if np.isfinite(lower[kk]) else -1.0
            upper[kk] = min(upper[kk], 1.0) if np.isfinite(upper[kk]) else 1.0
            upper[kk] = max(upper[kk], lower[kk])
    return lower, upper


def _sample(
    evaluator: _Evaluator, incumbent: _Incumbent, samples: int, seed: int,
    refine: int, deadline: float,
) -> int:
    """Sobol sampling of the active box, then L-BFGS-B from the best points. Returns #evals."""
    lower, upper = evaluator.lower, evaluator.upper
    d = evaluator.d
    count = 0
    if d == 0:
        q = evaluator.full(np.zeros((1, 0)))
        incumbent.update(q, *evaluator.values(q))
        return 1
    m = max(1, int(math.ceil(math.log2(max(samples, 1)))))
    points = scipy.stats.qmc.Sobol(d, scramble=True, seed=seed).random_base2(m)[:samples]
    x = lower + points * (upper - lower)
    lam_min = np.empty(x.shape[0])
    lam_max = np.empty(x.shape[0])
    for start in range(0, x.shape[0], 512):
        chunk = slice(start, start + 512)
        lam_min[chunk], lam_max[chunk] = evaluator.values(evaluator.full(x[chunk]))
        count += x[chunk].shape[0]
        if time.monotonic() > deadline:
            x, lam_min, lam_max = x[:start + 512], lam_min[:start + 512], lam_max[:start + 512]
            break
    incumbent.update(evaluator.full(x), lam_min, lam_max)
    bounds = list(zip(lower, upper, strict=True))
    for sign, order in ((1.0, np.argsort(lam_min)), (-1.0, np.argsort(-lam_max))):
        for start in order[:refine]:
            if time.monotonic() > deadline:
                break

            def objective(y: Array, sign: float = sign) -> tuple[float, Array]:
                lo, g_lo, hi, g_hi = evaluator.gradient(evaluator.full(y[None, :])[0])
                return (lo, g_lo) if sign > 0 else (-hi, -g_hi)

            result = scipy.optimize.minimize(
                objective, x[start], jac=True, method="L-BFGS-B", bounds=bounds,
                options={"maxiter": 60})
            y = np.clip(result.x, lower, upper)
            q = evaluator.full(y[None, :])
            incumbent.update(q, *evaluator.values(q))
            count += int(result.nfev) + 1
    return count


# ---------------------------------------------------------------------------- public search
def _validate_search_args(samples: int, time_limit: float, target_gap: float) -> None:
    if not isinstance(samples, (int, np.integer)) or samples < 1:
        raise InvalidInputError("samples", f"must be a positive integer, got {samples!r}")
    if not (math.isfinite(time_limit) and time_limit > 0):
        raise InvalidInputError("time_limit", f"must be a positive number of seconds, "
                                f"got {time_limit!r}")
    if not (math.isfinite(target_gap) and target_gap >= 0):
        raise InvalidInputError("target_gap", f"must be ≥ 0, got {target_gap!r}")


def _unbounded_dependence(evaluator: _Evaluator, box: JointSearchBox) -> list[str]:
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


def _verdicts(
    method: str, box: JointSearchBox, gamma: tuple[float, float],
    delta: tuple[float, float], growing: list[str], structural: float,
) -> tuple[Verdict, Verdict]:
    """Normality (Definition 2) and Assumption 2 (Lemma 2) on the box, with reasons."""
    if box.zero_axis:
        normality = Verdict(False, STRUCTURAL, (
            f"not normal: joint(s) {', '.join(box.zero_axis)} have a zero motion axis, so J "
            "has a zero column for every q and γ = 0"))
    elif structural > 0.0:
        normality = Verdict(True, STRUCTURAL, (
            f"normal for every q ∈ ℝⁿ (a constant left inverse K of J gives "
            f"γ ≥ 1/σ_max(K)² = {structural:.6g} > 0)"))
    elif gamma[1] <= 1e-12 * max(delta[0], 1.0):
        normality = Verdict(False, method, (
            f"not normal: λ_min(JᵀJ) ≈ {gamma[1]:.3g} at a sampled configuration"))
    elif method == CERTIFIED and gamma[0] > 0.0:
        normality = Verdict(True, CERTIFIED, f"normal (certified: γ ≥ {gamma[0]:.6g} > 0)")
    elif method == CERTIFIED or box.unbounded:
        normality = Verdict(None, method, (
            "normality undetermined: the certified lower end of γ is still 0"))
    else:
        normality = Verdict(True, SAMPLED, (
            f"appears normal (sampled estimate γ ≈ {gamma[1]:.6g}; not a proof)"))
    if growing:
        assumption2 = Verdict(False, CERTIFIED, (
            f"Assumption 2 fails: J grows without bound along the unbounded joint(s) "
            f"{', '.join(growing)} (J is affine in a prismatic coordinate with a non-zero "
            "slope, so δ = ∞)"))
    elif box.unbounded:
        assumption2 = Verdict(None, SAMPLED, (
            f"Assumption 2 undetermined: the box is unbounded in {', '.join(box.unbounded)} "
            "and J did not vary with it where sampled"))
    else:
        assumption2 = Verdict(True, CERTIFIED, (
            f"Assumption 2 holds on the joint box (bounded box, δ ≤ {delta[1]:.6g})"))
    return normality, assumption2


def structural_gamma_lower_bound(model: RobotModel) -> float:
    r"""A lower bound on λ_min(J(q)ᵀJ(q)) valid for **every** q ∈ ℝⁿ (0 with a zero axis).

    The body twists obey V_l = Ad_{l←p}(q) V_p + S_l q̇_l, with
    Ad_{l←p}(q) = Ad(exp(S_l q_l)⁻¹) Ad(placement_l⁻¹). For a revolute S_l = (0, a) or a
    prismatic S_l = (a, 0), S_lᵀ Ad(exp(S_l q_l)⁻¹) = S_lᵀ, so
    q̇_l = S_lᵀ (V_l − Ad(placement_l⁻¹) V_p) / ‖S_l‖² defines a **constant** matrix K with
    K J(q) = I for all q. Hence σ_min(J(q)) ≥ 1/σ_max(K) and γ ≥ 1/σ_max(K)²: every tree
    of non-degenerate 1-dof joints has a normal stacked Jacobian (Definition 2), even
    with unbounded prismatic ranges.

    Args:
        model: the arm.

    Returns:
        1/σ_max(K)², or 0 when some joint has a zero motion axis.
    """
    pm = model.pinocchio_model
    jac = _local_jacobians(model, np.zeros(model.nv))
    rows = np.zeros((model.nv, 6 * model.n_bodies))
    for l in range(model.nv):
        motion = jac[l, :, l]
        norm2 = float(motion @ motion)
        if norm2 == 0.0:
            return 0.0
        rows[l, 6 * l:6 * l + 6] = motion / norm2
        parent = pm.parents[l + 1] - 1
        if parent >= 0:
            placement = pm.jointPlacements[l + 1]
            rotation = np.asarray(placement.rotation)
            inverse = _adjoint(rotation.T, -rotation.T @ np.asarray(placement.translation))
            rows[l, 6 * parent:6 * parent + 6] = -(motion @ inverse) / norm2
    return float(1.0 / np.linalg.norm(rows, ord=2) ** 2) * (1.0 - _ROUNDING)


def sampled_jacobian_extremes(
    model: RobotModel,
    *,
    samples: int = 4096,
    seed: int = 0,
    refine: int = 6,
    time_limit: float = 30.0,
) -> JacobianExtremes:
    """Estimate γ and δ by quasi-random sampling plus local refinement (an estimate).

    Scrambled Sobol points fill the reduced joint box (:func:`joint_search_box`); the
    ``refine`` best points for each extreme start L-BFGS-B with the analytic gradient
    ∂λ/∂q_k = 2 (J u)ᵀ (∂J/∂q_k) u. Every value returned is attained at a configuration,
    so the estimate of γ is an **upper** bound on γ and the estimate of δ a **lower**
    bound on δ; neither bounds the mass matrix. The brackets are [0, γ̂] and
    [δ̂, structural bound].

    Args:
        model: the arm.
        samples: number of Sobol points (rounded up to a power of two internally).
        seed: scrambling seed (fixed seed → identical result).
        refine: local refinements per extreme.
        time_limit: stop sampling/refining after this many seconds [s].

    Returns:
        A :class:`JacobianExtremes` with ``method="sampled"``.
    """
    _validate_search_args(samples, time_limit, 0.0)
    start = time.monotonic()
    box = joint_search_box(model)
    evaluator = _Evaluator(model, box, _search_bounds(box))
    incumbent = _Incumbent()
    count = _sample(evaluator, incumbent, samples, seed, refine, start + time_limit)
    structural = _structural_delta(model, box, evaluator)
    floor = structural_gamma_lower_bound(model)
    growing = _unbounded_dependence(evaluator, box) if box.unbounded else []
    gamma = (0.0, 0.0) if box.zero_axis else (min(floor, incumbent.gamma), incumbent.gamma)
    delta_hi = math.inf if growing or box.unbounded else max(structural, incumbent.delta)
    delta = (incumbent.delta, delta_hi)
    return _extremes_record(
        SAMPLED, box, (gamma[1], math.inf if growing else incumbent.delta), gamma, delta,
        max(_relative_gap(*gamma), _relative_gap(*delta)), incumbent,
        _verdicts(SAMPLED, box, gamma, delta, growing, floor), count, start, False,
        {"samples": int(samples), "seed": int(seed), "refine": int(refine),
         "time_limit": float(time_limit)})


def _extremes_record(
    method: str, box: JointSearchBox, point: tuple[float, float],
    gamma: tuple[float, float], delta: tuple[float, float], gap: float, incumbent: _Incumbent,
    verdicts: tuple[Verdict, Verdict], evaluations: int, start: float, converged: bool,
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


def _structural_delta(model: RobotModel, box: JointSearchBox, evaluator: _Evaluator) -> float:
    """A valid but loose bound on σ_max(J)² over the box from the chain geometry alone.

    σ_max(J)² ≤ ‖J‖_F² = Σ_l Σ_i ‖J_l[:, i]‖², and column i of body l is Ad(g_{l←i}) S_i:
    its angular part has norm ‖S_i,ω‖ and its linear part at most
    ‖S_i,v‖ + ‖S_i,ω‖ ‖o_l − o_i‖, with ‖o_l − o_i‖ ≤ Σ over the joints j on the path of
    (‖placement_j‖ + max|q_j| ‖S_j,v‖).
    """
    chain = _chain(model)
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


class _BoxHeap:
    """Best-first queue of boxes for one extreme (min of λ_min or max of λ_max)."""

    def __init__(self, sign: float) -> None:
        self.sign = sign  # +1: minimise (key = lower bound); −1: maximise (key = −upper)
        self.heap: list[tuple[float, int, Array, Array, int]] = []
        self.counter = itertools.count()

    def push(self, bound: float, lo: Array, hi: Array, split: int) -> None:
        heapq.heappush(self.heap, (self.sign * bound, next(self.counter), lo, hi, split))

    def best(self) -> float:
        """The current global bound over the boxes still queued (±∞ when empty)."""
        return self.sign * self.heap[0][0] if self.heap else self.sign * math.inf


def certified_jacobian_extremes(
    model: RobotModel,
    *,
    time_limit: float = 60.0,
    target_gap: float = 1e-3,
    samples: int = 2048,
    seed: int = 0,
    max_boxes: int | None = None,
    batch: int = 128,
    progress: ProgressCallback | None = None,
) -> JacobianExtremes:
    r"""Rigorous brackets for γ and δ by branch and bound over the reduced joint box.

    **Enclosure.** On a box with centre c and half-widths r (searched joints only) write
    A(q) = J(q)ᵀJ(q) and expand it to second order at c, exactly: A(c), ∂_kA(c) and
    ∂²_jk A(c) come from J(c) and Lie brackets of its columns (∂_k J_i = [J_i, J_k] for
    i < k). The remainder is bounded over the *whole* box, not at c: A is a
    trigonometric polynomial of degree ≤ 2 per revolute angle and a quadratic in each
    prismatic coordinate (:class:`_TrigModel`, fitted exactly from a grid and checked), so
    each of its terms C_t φ_t(q) has |∂ᵃ φ_t| ≤ |f_t|ᵃ on every box and
    |R₃| ≤ Σ_t |C_t| (Σ_k |f_tk| r_k)³/6 entrywise (prismatic factors use their exact
    derivative bounds). When the model does not apply (too many joints to fit), an
    interval enclosure of ∂²A over the box (midpoint-radius arithmetic on the recursive
    kinematics) bounds a second-order remainder instead. In the eigenbasis U of A(c),
    these give entrywise bounds Ē on the off-diagonal part of UᵀA(q)U − Λ and signed
    bounds e on its diagonal (using the smallest/largest eigenvalue of the projected
    Hessian uᵀ∂²A u), and for a unit x, xᵀUᵀA(q)Ux ≥ |x|ᵀ(diag(λ + e) − Ē)|x|: λ_min(A(q))
    is at least the smallest eigenvalue of that comparison matrix (symmetrically for
    λ_max) — see :func:`_eigenvalue_enclosure`. Bounds are padded by 1e-10·(‖A‖ + 1)
    against rounding. Independently, γ ≥ :func:`structural_gamma_lower_bound` holds for
    every q. The search is best-first; a box whose enclosure cannot beat the best
    attained value is dropped, so [max(structural bound, min over queued lower bounds),
    best attained value] brackets γ at any stopping time (symmetrically for δ, whose
    upper end is also capped by the geometric bound of :func:`_structural_delta`).

    Args:
        model: the arm.
        time_limit: wall-time budget including the initial sampling [s].
        target_gap: stop when both relative gaps (upper − lower)/upper are at most this.
        samples: Sobol points of the initial sampling (incumbents for pruning).
        seed: sampling seed.
        max_boxes: optional cap on evaluated boxes; with it (and a generous time limit)
            the result is bit-for-bit reproducible on any machine.
        batch: boxes bisected per step (evaluated together, vectorised).
        progress: called with a :class:`SearchProgress` about 5 times per second.

    Returns:
        A :class:`JacobianExtremes` with ``method="certified"``.
    """
    _validate_search_args(samples, time_limit, target_gap)
    if max_boxes is not None and max_boxes < 1:
        raise InvalidInputError("max_boxes", f"must be ≥ 1 or None, got {max_boxes!r}")
    start = time.monotonic()
    deadline = start + time_limit
    box = joint_search_box(model)
    evaluator = _Evaluator(model, box, _search_bounds(box))
    incumbent = _Incumbent()
    count = _sample(evaluator, incumbent, samples, seed, 4,
                    start + min(0.25 * time_limit, 5.0))
    growing = _unbounded_dependence(evaluator, box) if box.unbounded else []
    floor = structural_gamma_lower_bound(model)
    ceiling = math.inf if box.unbounded else _structural_delta(model, box, evaluator)
    settings = {"time_limit": float(time_limit), "target_gap": float(target_gap),
                "samples": int(samples), "seed": int(seed),
                "max_boxes": None if max_boxes is None else int(max_boxes), "batch": int(batch)}
    if box.unbounded:
        # No finite box to cover: report the sampled ends and the verdict, not a bracket.
        gamma = (0.0, 0.0) if box.zero_axis else (min(floor, incumbent.gamma), incumbent.gamma)
        delta = (incumbent.delta, math.inf)
        normality, assumption2 = _verdicts(CERTIFIED, box, gamma, delta, growing, floor)
        return JacobianExtremes(
            method=CERTIFIED, inf_lambda_min_JtJ=gamma[0], sup_sigma_max_J_sq=math.inf,
            inf_lambda_min_JtJ_bracket=gamma, sup_sigma_max_J_sq_bracket=delta,
            gap=math.inf, argmin_q=incumbent.gamma_q, argmax_q=incumbent.delta_q,
            normal=normality.holds, bounded=assumption2.holds,
            normal_reason=normality.reason, bounded_reason=assumption2.reason,
            normal_method=normality.method, bounded_method=assumption2.method,
            active_joints=box.active_joints,
            notes=box.notes, evaluations=count, elapsed_s=time.monotonic() - start,
            converged=False, settings=settings)

    heaps = {"min": _BoxHeap(1.0), "max": _BoxHeap(-1.0)}
    if evaluator.d > 0:
        root = evaluator.boxes(evaluator.lower[None, :], evaluator.upper[None, :])
        incumbent.update(root["q"], root["lam_min"], root["lam_max"])
        heaps["min"].push(float(root["gamma_lo"][0]), evaluator.lower, evaluator.upper,
                          int(root["split_min"][0]))
        heaps["max"].push(float(root["delta_hi"][0]), evaluator.lower, evaluator.upper,
                          int(root["split_max"][0]))
    exact_min = box.zero_axis != () or evaluator.d == 0
    boxes = 1

    def brackets() -> tuple[tuple[float, float], tuple[float, float]]:
        if box.zero_axis:
            gamma = (0.0, 0.0)
        else:
            lower = max(floor, min(heaps["min"].best(), incumbent.gamma))
            gamma = (min(lower, incumbent.gamma), incumbent.gamma)
        upper = min(ceiling, max(heaps["max"].best(), incumbent.delta))
        delta = (incumbent.delta, max(upper, incumbent.delta))
        return gamma, delta

    last_report = 0.0
    turn = 0
    while True:
        gamma, delta = brackets()
        gaps = {"min": 0.0 if exact_min else _relative_gap(*gamma),
                "max": _relative_gap(*delta)}
        gap = max(gaps.values())
        now = time.monotonic()
        if progress is not None and (now - last_report > 0.2 or gap <= target_gap):
            last_report = now
            elapsed = now - start
            fraction = min(1.0, max(elapsed / time_limit,
                                    target_gap / gap if gap > 0 else 1.0))
            progress(SearchProgress(elapsed, time_limit, gap, target_gap, boxes, fraction))
        if gap <= target_gap or now >= deadline or (max_boxes is not None and
                                                    boxes >= max_boxes):
            break
        open_sides = [s for s in ("min", "max") if gaps[s] > target_gap and heaps[s].heap]
        if not open_sides:
            break
        turn += 1
        side = open_sides[turn % len(open_sides)]
        heap = heaps[side]
        parents = [heapq.heappop(heap.heap) for _ in range(min(batch, len(heap.heap)))]
        lo = np.empty((2 * len(parents), evaluator.d))
        hi = np.empty_like(lo)
        for p, (_, _, plo, phi, split) in enumerate(parents):
            mid = 0.5 * (plo[split] + phi[split])
            lo[2 * p], hi[2 * p] = plo, phi
            lo[2 * p + 1], hi[2 * p + 1] = plo, phi
            hi[2 * p, split] = mid
            lo[2 * p + 1, split] = mid
        result = evaluator.boxes(lo, hi)
        boxes += lo.shape[0]
        incumbent.update(result["q"], result["lam_min"], result["lam_max"])
        for c in range(lo.shape[0]):
            if side == "min":
                bound = float(result["gamma_lo"][c])
                if bound < incumbent.gamma:
                    heap.push(bound, lo[c], hi[c], int(result["split_min"][c]))
            else:
                bound = float(result["delta_hi"][c])
                if bound > incumbent.delta:
                    heap.push(bound, lo[c], hi[c], int(result["split_max"][c]))
    gamma, delta = brackets()
    gap = max(0.0 if exact_min else _relative_gap(*gamma), _relative_gap(*delta))
    return _extremes_record(
        CERTIFIED, box, (gamma[0], delta[1]), gamma, delta, gap, incumbent,
        _verdicts(CERTIFIED, box, gamma, delta, growing, floor), count + boxes, start,
        gap <= target_gap, settings)


def jacobian_extremes_at(model: RobotModel, q: npt.ArrayLike) -> tuple[float, float]:
    """λ_min(J(q)ᵀJ(q)) and σ_max(J(q))² at one configuration q (nv,)."""
    jac = model.body_jacobians_local(q)
    eig = np.linalg.eigvalsh(jac.T @ jac)
    return float(eig[0]), float(eig[-1])

