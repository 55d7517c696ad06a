r"""Mass-matrix bounds of section 4 of the paper: Theorems 2–4, Lemmas 1–3, Definitions 2–3.

The uniform bounds :math:`α_1 I ⪯ M(q, Θ(t)) ⪯ α_2 I` factor into a kinematic part and
an inertial part:

.. math::
    α_1 = \min_l \inf_t μ_l(t) \cdot γ, \qquad
    α_2 = 2 \max_l \sup_t ν_l(t) \cdot δ                             \quad (45), (46)

with the per-body margin :math:`μ_l = λ_{\min}(f(Φ_l))`, size
:math:`ν_l = λ_{\max}(f(Φ_l))` (eq. 9, Definition 3) and the Jacobian extremes

.. math::
    γ = \inf_q λ_{\min}(J(q)^\top J(q)), \qquad δ = \sup_q σ_{\max}(J(q))^2

where J is the stacked LOCAL body Jacobian of eq. (17) and q runs over the URDF
joint-limit box (continuous joints: one period).

**What lives where.** This module is the public entry point of the bounds and holds the
inertial part and what combines the two: the consistency statistics of Θ(t)
(Definition 3) kept by the pure-numpy :class:`ConsistencyTracker`, which the ROS nodes
reuse; Theorems 2–4 and Lemma 3 (:func:`uniform_mass_matrix_bounds`,
:func:`instantaneous_bounds`, :func:`mass_rate_bound`); the per-URDF
:class:`BoundsReport`; :func:`jacobian_extremes`, which runs the sampled or certified
search by name, and its on-disk cache. The kinematic part lives in two modules whose
public names are re-exported here:

- :mod:`robot_tv_dynamics.extremes`: the :class:`JacobianExtremes` record, the method
  labels ``"sampled"``/``"certified"``/``"structural"`` and :class:`Verdict`;
- :mod:`robot_tv_dynamics.jacobian_search`: how γ and δ are computed (sampled
  estimates, certified branch and bound with its enclosure argument, the reduced joint
  box, the structural bounds).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import frozen_copy
from robot_tv_dynamics.dynamics import Q0
from robot_tv_dynamics.exceptions import BoundsCacheError, InvalidInputError
from robot_tv_dynamics.extremes import (
    CERTIFIED,
    METHODS,
    SAMPLED,
    STRUCTURAL,
    JacobianExtremes,
    Verdict,
    _finite_or_none,
)
from robot_tv_dynamics.inertia import Array, check_finite, pseudo_inertia, spatial_inertia
from robot_tv_dynamics.jacobian_search import (
    MAX_PRISMATIC_RANGE,
    JointSearchBox,
    ProgressCallback,
    SearchProgress,
    certified_jacobian_extremes,
    jacobian_extremes_at,
    joint_search_box,
    sampled_jacobian_extremes,
    structural_gamma_lower_bound,
)
from robot_tv_dynamics.jacobian_search import _Evaluator as _Evaluator  # for the tests
from robot_tv_dynamics.jacobian_search import _search_bounds as _search_bounds  # for the tests
from robot_tv_dynamics.model import RobotModel

__all__ = [
    "theorem_bounds",
    "CERTIFIED",
    "LEMMA3_BOUND",
    "MAX_PRISMATIC_RANGE",
    "METHODS",
    "SAMPLED",
    "STRUCTURAL",
    "BoundsCacheError",
    "BoundsReport",
    "ConsistencySnapshot",
    "ConsistencyTracker",
    "InstantaneousBounds",
    "JacobianExtremes",
    "JointSearchBox",
    "ProgressCallback",
    "SearchProgress",
    "UniformMassMatrixBounds",
    "Verdict",
    "bounds_report",
    "cached_jacobian_extremes",
    "certified_jacobian_extremes",
    "extremes_cache_key",
    "instantaneous_bounds",
    "jacobian_extremes",
    "jacobian_extremes_at",
    "joint_search_box",
    "lemma3_sigma_max_q0",
    "load_cached_extremes",
    "mass_rate_bound",
    "rate_spatial_inertia_norm",
    "rate_spatial_inertia_norm_entrywise",
    "sampled_jacobian_extremes",
    "spectral_statistics",
    "store_cached_extremes",
    "structural_gamma_lower_bound",
    "uniform_mass_matrix_bounds",
]

#: Lemma 3 with Q₀ (DESIGN.md §2): σ_max(Q₀) = √2.
LEMMA3_BOUND = math.sqrt(2.0)


# ---------------------------------------------------------------------------- extremes
def jacobian_extremes(
    model: RobotModel,
    method: str = SAMPLED,
    *,
    samples: int = 4096,
    seed: int = 0,
    time_limit: float = 60.0,
    target_gap: float = 1e-3,
    max_boxes: int | None = None,
    progress: ProgressCallback | None = None,
) -> JacobianExtremes:
    """γ and δ over the joint-limit box, by ``method`` ``"sampled"`` or ``"certified"``.

    See :func:`sampled_jacobian_extremes` and :func:`certified_jacobian_extremes`.

    Raises:
        InvalidInputError: unknown method or bad settings.
    """
    if method == SAMPLED:
        return sampled_jacobian_extremes(model, samples=samples, seed=seed,
                                         time_limit=time_limit)
    if method == CERTIFIED:
        return certified_jacobian_extremes(
            model, time_limit=time_limit, target_gap=target_gap, samples=min(samples, 2048),
            seed=seed, max_boxes=max_boxes, progress=progress)
    raise InvalidInputError("method", f'"{method}" is not one of {METHODS}')


# ---------------------------------------------------------------------------- consistency
@dataclass(frozen=True)
class ConsistencySnapshot:
    """Per-body consistency statistics after one Θ(t) sample (Definition 3).

    Attributes:
        margin: μ_l(t) = λ_min(f(Φ_l(t))), (N,) [kg·m² or kg]; > 0 iff consistent.
        size: ν_l(t) = λ_max(f(Φ_l(t))), (N,).
        rate: σ_max(f(Φ̇_l(t))), (N,) [per s]; NaN when no Θ̇ was given.
        inf_margin: running inf_t μ_l over the samples seen, (N,).
        sup_size: running sup_t ν_l, (N,).
        sup_rate: running sup_t σ_max(f(Φ̇_l)), (N,); NaN until a Θ̇ was given.
        samples: number of Θ samples seen since the last reset.
    """

    margin: Array
    size: Array
    rate: Array
    inf_margin: Array
    sup_size: Array
    sup_rate: Array
    samples: int

    def __post_init__(self) -> None:
        """Freeze the arrays handed out."""
        for name in ("margin", "size", "rate", "inf_margin", "sup_size", "sup_rate"):
            object.__setattr__(self, name, frozen_copy(getattr(self, name)))

    @property
    def consistent(self) -> npt.NDArray[np.bool_]:
        """Per body: f(Φ_l(t)) ≻ 0 now (Theorem 1)."""
        return np.asarray(self.margin > 0.0)

    @property
    def min_margin(self) -> float:
        """min_l inf_t μ_l over the samples seen: the factor of γ in α₁ (eq. 45)."""
        return float(np.min(self.inf_margin))

    @property
    def max_size(self) -> float:
        """max_l sup_t ν_l over the samples seen: half the factor of δ in α₂ (eq. 46)."""
        return float(np.max(self.sup_size))


def spectral_statistics(phi: npt.ArrayLike) -> tuple[Array, Array, Array]:
    """λ_min, λ_max and σ_max of f(Φ) for a stack of Φ (..., 10), eq. (9)."""
    eig = np.asarray(np.linalg.eigvalsh(pseudo_inertia(phi)), dtype=np.float64)
    return eig[..., 0], eig[..., -1], np.asarray(np.max(np.abs(eig), axis=-1), dtype=np.float64)


class ConsistencyTracker:
    """Running Definition-3 statistics of a Θ(t) history; pure numpy, reused by the nodes.

    ``update`` takes one sample Θ(t) (and optionally Θ̇(t)) and returns a
    :class:`ConsistencySnapshot`. The running inf of μ_l and sup of ν_l are what the
    history *shows*: a finite history cannot prove uniform consistency (inf over all
    t ≥ 0), it can only exhibit its loss.
    """

    def __init__(self, n_bodies: int) -> None:
        """Start an empty history for ``n_bodies`` bodies.

        Raises:
            InvalidInputError: n_bodies < 1.
        """
        if not isinstance(n_bodies, (int, np.integer)) or n_bodies < 1:
            raise InvalidInputError("n_bodies", f"must be a positive integer, got {n_bodies!r}")
        self.n_bodies = int(n_bodies)
        self.reset()

    def reset(self) -> None:
        """Forget the history."""
        self._inf_margin = np.full(self.n_bodies, np.inf)
        self._sup_size = np.full(self.n_bodies, -np.inf)
        self._sup_rate = np.full(self.n_bodies, np.nan)
        self._samples = 0
        self._last: ConsistencySnapshot | None = None

    @property
    def samples(self) -> int:
        """Number of samples since the last reset."""
        return self._samples

    @property
    def last(self) -> ConsistencySnapshot | None:
        """The snapshot of the last update (None after a reset)."""
        return self._last

    def update(
        self, theta: npt.ArrayLike, theta_dot: npt.ArrayLike | None = None
    ) -> ConsistencySnapshot:
        """Add one sample.

        Args:
            theta: Θ(t), (N, 10), eq. (7) order about each body frame origin
                [kg, kg·m, kg·m²].
            theta_dot: Θ̇(t), (N, 10) [per s], or None.

        Returns:
            The snapshot after this sample.

        Raises:
            InvalidInputError: wrong shape or non-finite values (the history is unchanged).
        """
        theta = check_finite(theta, "theta", (self.n_bodies, 10))
        rate: Array = np.full(self.n_bodies, np.nan)
        if theta_dot is not None:
            theta_dot = check_finite(theta_dot, "theta_dot", (self.n_bodies, 10))
            rate = spectral_statistics(theta_dot)[2]
        margin, size, _ = spectral_statistics(theta)
        self._inf_margin = np.minimum(self._inf_margin, margin)
        self._sup_size = np.maximum(self._sup_size, size)
        if theta_dot is not None:
            self._sup_rate = np.fmax(self._sup_rate, rate)
        self._samples += 1
        self._last = ConsistencySnapshot(
            margin=margin, size=size, rate=rate, inf_margin=self._inf_margin.copy(),
            sup_size=self._sup_size.copy(), sup_rate=self._sup_rate.copy(),
            samples=self._samples)
        return self._last


# ---------------------------------------------------------------------------- theorems
@dataclass(frozen=True)
class UniformMassMatrixBounds:
    """α₁ ⪯ M(q, Θ(t)) ⪯ α₂ of Theorems 2 and 3 (Corollary 1), labelled by method.

    α₁ and α₂ are always computed from the safe ends of the γ and δ brackets (the
    certified or structural lower end of γ, the upper end of δ), so they are bounds
    whatever the method; the method says how tight they are. The sampled estimates
    give ``alpha1_estimate``/``alpha2_estimate`` (possibly too optimistic).

    Theorems 2 and 3 need physically consistent Θ: when some μ_l ≤ 0 the inequality
    λ_min(Z) ≥ λ_min(f) fails and neither α is a bound, so both are NaN.

    Attributes:
        method: how γ, δ were obtained (``"certified"`` or ``"sampled"``).
        alpha1: min_l inf_t μ_l · γ_lower, eq. (45); NaN when some μ ≤ 0.
        alpha2: 2 max_l sup_t ν_l · δ_upper, eq. (46); ∞ when δ is; NaN when some μ ≤ 0.
        gamma: the γ used (the lower end of its bracket).
        delta: the δ used (the upper end of its bracket).
        min_margin: min_l inf_t μ_l.
        max_size: max_l sup_t ν_l.
        alpha1_estimate: min μ · γ̂ with the point estimate of γ (sampled: not a bound).
        alpha2_estimate: 2 max ν · δ̂ with the point estimate of δ (sampled: not a bound).
    """

    method: str
    alpha1: float
    alpha2: float
    gamma: float
    delta: float
    min_margin: float
    max_size: float
    alpha1_estimate: float = math.nan
    alpha2_estimate: float = math.nan

    @property
    def positive_lower_bound(self) -> bool:
        """Whether α₁ > 0 (Theorem 2's conclusion, given its premises)."""
        return self.alpha1 > 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (∞ → None)."""
        return {"method": self.method, "alpha1": _finite_or_none(self.alpha1),
                "alpha2": _finite_or_none(self.alpha2), "gamma": _finite_or_none(self.gamma),
                "delta": _finite_or_none(self.delta), "min_margin": self.min_margin,
                "max_size": self.max_size,
                "alpha1_estimate": _finite_or_none(self.alpha1_estimate),
                "alpha2_estimate": _finite_or_none(self.alpha2_estimate)}


def theorem_bounds(
    min_margin: float, max_size: float, lambda_min_jtj: float, sigma_max_j_sq: float,
) -> tuple[float, float]:
    """Lower and upper bound of the eigenvalues of M from Theorems 2 and 3.

    ``min_margin · λ_min(JᵀJ)`` and ``2 · max_size · σ_max(J)²`` — with the extremes over
    q they are α₁, α₂ (eq. 45, 46), with J at one q the bounds at that q. Both theorems
    need physically consistent Θ (the step λ_min(Z) ≥ λ_min(f) fails otherwise), so both
    are NaN when ``min_margin ≤ 0``; the upper bound is ∞ when σ_max(J)² is.

    Args:
        min_margin: min_l μ_l = λ_min(f(Φ_l)) (an inf over time for α₁).
        max_size: max_l ν_l = λ_max(f(Φ_l)).
        lambda_min_jtj: λ_min(JᵀJ), or a lower bound of it.
        sigma_max_j_sq: σ_max(J)², or an upper bound of it.

    Returns:
        (lower, upper) [kg·m² or kg].
    """
    if not min_margin > 0.0:
        return math.nan, math.nan
    upper = math.inf if not math.isfinite(sigma_max_j_sq) else 2.0 * max_size * sigma_max_j_sq
    return min_margin * lambda_min_jtj, upper


def uniform_mass_matrix_bounds(
    extremes: JacobianExtremes, inf_margin: npt.ArrayLike, sup_size: npt.ArrayLike
) -> UniformMassMatrixBounds:
    """α₁ (Theorem 2, eq. 45) and α₂ (Theorem 3, eq. 46) from γ, δ and the Θ statistics.

    Args:
        extremes: γ and δ (α₁ uses the lower end of γ's bracket, α₂ the upper end of
            δ's: certified, or the structural bounds when sampled).
        inf_margin: inf_t μ_l per body (N,) or its minimum.
        sup_size: sup_t ν_l per body (N,) or its maximum.

    Returns:
        The bounds, carrying ``extremes.method``.
    """
    margin = float(np.min(check_finite(np.atleast_1d(inf_margin), "inf_margin", (None,))))
    size = float(np.max(check_finite(np.atleast_1d(sup_size), "sup_size", (None,))))
    gamma = extremes.inf_lambda_min_JtJ_bracket[0]
    delta = extremes.sup_sigma_max_J_sq_bracket[1]

    alpha1, alpha2 = theorem_bounds(margin, size, gamma, delta)
    estimate1, estimate2 = theorem_bounds(
        margin, size, extremes.inf_lambda_min_JtJ, extremes.sup_sigma_max_J_sq)
    return UniformMassMatrixBounds(
        method=extremes.method, alpha1=alpha1, alpha2=alpha2, gamma=gamma,
        delta=delta, min_margin=margin, max_size=size, alpha1_estimate=estimate1,
        alpha2_estimate=estimate2)


def rate_spatial_inertia_norm(theta_dot: npt.ArrayLike) -> float:
    """σ_max(Z(Θ̇)) = max_l σ_max(Z(Φ̇_l)) (block-diagonal, eq. 32) [per s]."""
    theta_dot = check_finite(theta_dot, "theta_dot", (None, 10))
    return float(np.max(np.linalg.norm(spatial_inertia(theta_dot), ord=2, axis=(-2, -1))))


def rate_spatial_inertia_norm_entrywise(theta_dot: npt.ArrayLike) -> float:
    """The proof of Theorem 4's bound on σ_max(Z(Θ̇)) from μ = max_l σ_max(f(Φ̇_l)).

    Entries of Z(Φ̇_l) are bounded by μ (ṁ, ḣ, off-diagonal İ) and 4μ (diagonal İ), so
    ‖Z(Φ̇_l)‖₂ ≤ ‖Z(Φ̇_l)‖_F ≤ √(3 + 12 + 6 + 3·16) μ = √69 μ.
    """
    theta_dot = check_finite(theta_dot, "theta_dot", (None, 10))
    return float(math.sqrt(69.0) * np.max(spectral_statistics(theta_dot)[2]))


def mass_rate_bound(theta_dot: npt.ArrayLike, sigma_max_J_sq: float) -> float:
    """Theorem 4: σ_max(M(q, Θ̇)) ≤ σ_max(Z(Θ̇)) σ_max(J(q))².

    Args:
        theta_dot: Θ̇, (N, 10) [per s].
        sigma_max_J_sq: σ_max(J(q))² at one q, or δ for a bound uniform in q.

    Returns:
        The bound on σ_max(M(q, Θ̇)).
    """
    return rate_spatial_inertia_norm(theta_dot) * float(sigma_max_J_sq)


def lemma3_sigma_max_q0() -> float:
    """σ_max(Q₀), which Lemma 3 bounds by √2 (equal to √2 for Q₀, DESIGN.md §2)."""
    return float(np.linalg.norm(Q0, ord=2))


@dataclass(frozen=True)
class InstantaneousBounds:
    """Theorem 2/3/4 bounds at the current q beside the exact eigenvalues of M(q, Θ).

    Attributes:
        lambda_min_M: exact λ_min(M(q, Θ)).
        lambda_max_M: exact λ_max(M(q, Θ)).
        lower_bound: min_l μ_l · λ_min(J(q)ᵀJ(q)); NaN when some μ_l ≤ 0 (the premise
            f(Φ_l) ≻ 0 of Theorem 2 fails).
        upper_bound: 2 max_l ν_l · σ_max(J(q))²; NaN when some μ_l ≤ 0.
        lambda_min_JtJ: λ_min(J(q)ᵀJ(q)).
        sigma_max_J_sq: σ_max(J(q))².
        min_margin: min_l μ_l.
        max_size: max_l ν_l.
        mass_rate_sigma_max: exact σ_max(M(q, Θ̇)) (0 without Θ̇).
        mass_rate_bound: Theorem 4, σ_max(Z(Θ̇)) σ_max(J(q))².
        mass_rate_bound_entrywise: Theorem 4 via the proof's entrywise route, √69 μ̇ σ_max(J)².
    """

    lambda_min_M: float
    lambda_max_M: float
    lower_bound: float
    upper_bound: float
    lambda_min_JtJ: float
    sigma_max_J_sq: float
    min_margin: float
    max_size: float
    mass_rate_sigma_max: float
    mass_rate_bound: float
    mass_rate_bound_entrywise: float


def instantaneous_bounds(
    model: RobotModel, q: npt.ArrayLike, theta: npt.ArrayLike,
    theta_dot: npt.ArrayLike | None = None,
) -> InstantaneousBounds:
    """Bounds of Theorems 2–4 at one configuration, with the exact values they bound.

    Args:
        model: the arm.
        q: joint positions (nv,) [rad, m].
        theta: Θ, (N, 10) [kg, kg·m, kg·m²].
        theta_dot: Θ̇, (N, 10) [per s], or None.

    Returns:
        An :class:`InstantaneousBounds` record.
    """
    kin = model.kinematics(q)
    theta = model.check_theta(theta)
    jac = kin.stacked_jacobian
    eig_j = np.linalg.eigvalsh(jac.T @ jac)
    eig_m = np.linalg.eigvalsh(model.mass_matrix(q, theta))
    margin, size, _ = spectral_statistics(theta)
    lower, upper = theorem_bounds(
        float(np.min(margin)), float(np.max(size)), float(eig_j[0]), float(eig_j[-1]))
    rate_exact = rate_bound = rate_entry = 0.0
    if theta_dot is not None:
        theta_dot = model.check_theta(theta_dot, "theta_dot")
        m_rate = model.mass_matrix(q, theta_dot)
        rate_exact = float(np.linalg.norm(m_rate, ord=2))
        rate_bound = mass_rate_bound(theta_dot, eig_j[-1])
        rate_entry = rate_spatial_inertia_norm_entrywise(theta_dot) * float(eig_j[-1])
    return InstantaneousBounds(
        lambda_min_M=float(eig_m[0]), lambda_max_M=float(eig_m[-1]),
        lower_bound=lower, upper_bound=upper,
        lambda_min_JtJ=float(eig_j[0]), sigma_max_J_sq=float(eig_j[-1]),
        min_margin=float(np.min(margin)), max_size=float(np.max(size)),
        mass_rate_sigma_max=rate_exact, mass_rate_bound=rate_bound,
        mass_rate_bound_entrywise=rate_entry)


# ---------------------------------------------------------------------------- URDF report
@dataclass(frozen=True)
class BoundsReport:
    """Everything ``robot-tv-dynamics bounds`` prints for one URDF and one Θ.

    Attributes:
        source: where the URDF came from.
        urdf_sha256: hash of its text.
        body_names: N body names, Θ row order.
        margins: μ_l of the Θ used, (N,).
        sizes: ν_l of the Θ used, (N,).
        extremes: γ and δ.
        bounds: α₁, α₂ for the constant Θ (inf/sup over t of a constant are the values).
        normality: Definition 2 on the box.
        assumption2: Assumption 2 / Lemma 2 on the box.
        lemma3_sigma_max_q0: σ_max(Q₀) (Lemma 3: ≤ √2).
    """

    source: str
    urdf_sha256: str
    body_names: tuple[str, ...]
    margins: Array
    sizes: Array
    extremes: JacobianExtremes
    bounds: UniformMassMatrixBounds
    normality: Verdict
    assumption2: Verdict
    lemma3_sigma_max_q0: float

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready object (the CLI's ``--json`` output)."""
        return {
            "urdf": self.source,
            "urdf_sha256": self.urdf_sha256,
            "method": self.extremes.method,
            "alpha1": _finite_or_none(self.bounds.alpha1),
            "alpha2": _finite_or_none(self.bounds.alpha2),
            "alpha_method": self.bounds.method,
            "bodies": [
                {"name": name, "margin": float(mu), "size": float(nu), "consistent": bool(mu > 0)}
                for name, mu, nu in zip(self.body_names, self.margins, self.sizes, strict=True)
            ],
            "jacobian": self.extremes.to_dict(),
            "mass_matrix_bounds": self.bounds.to_dict(),
            "normality": self.normality.to_dict(),
            "assumption2": self.assumption2.to_dict(),
            "lemma3": {"sigma_max_Q0": self.lemma3_sigma_max_q0, "bound": LEMMA3_BOUND},
        }


def bounds_report(
    model: RobotModel, extremes: JacobianExtremes, theta: npt.ArrayLike | None = None
) -> BoundsReport:
    """Assemble the per-URDF report: margins, γ/δ, α₁/α₂, verdicts, Lemma 3.

    Args:
        model: the arm.
        extremes: from :func:`jacobian_extremes`.
        theta: Θ, (N, 10); None = ``model.theta_nominal``.

    Returns:
        The report.
    """
    theta = model.theta_nominal if theta is None else model.check_theta(theta)
    margins, sizes, _ = spectral_statistics(theta)
    bounds = uniform_mass_matrix_bounds(extremes, margins, sizes)
    normality = Verdict(extremes.normal, extremes.normal_method, extremes.normal_reason)
    assumption2 = Verdict(extremes.bounded, extremes.bounded_method, extremes.bounded_reason)
    return BoundsReport(
        source=model.source, urdf_sha256=model.urdf_sha256,
        body_names=tuple(model.body_names), margins=frozen_copy(margins), sizes=frozen_copy(sizes),
        extremes=extremes, bounds=bounds, normality=normality, assumption2=assumption2,
        lemma3_sigma_max_q0=lemma3_sigma_max_q0())


# ---------------------------------------------------------------------------- cache
_CACHE_VERSION = 1


def extremes_cache_key(model: RobotModel, method: str, settings: Mapping[str, Any]) -> str:
    """Cache key of Jacobian extremes: URDF hash + method + settings (hex sha256)."""
    from robot_tv_dynamics import __version__

    payload = json.dumps({"version": _CACHE_VERSION, "package": __version__,
                          "urdf_sha256": model.urdf_sha256,
                          "method": method, "settings": dict(settings)}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _cache_path(directory: str | Path, key: str) -> Path:
    return Path(directory) / f"jacobian_extremes_{key[:32]}.json"


def load_cached_extremes(directory: str | Path, key: str) -> JacobianExtremes | None:
    """The cached extremes for ``key``, or None (missing, unreadable or stale file)."""
    path = _cache_path(directory, key)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return JacobianExtremes.from_dict(data["extremes"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, InvalidInputError):
        return None


def store_cached_extremes(directory: str | Path, key: str, extremes: JacobianExtremes) -> Path:
    """Write ``extremes`` under ``key`` in ``directory`` (atomically) and return the path.

    Raises:
        BoundsCacheError: the directory cannot be created or written.
    """
    path = _cache_path(directory, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".extremes-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            json.dump({"key": key, "extremes": extremes.to_dict()}, stream, indent=1)
        os.replace(tmp, path)
    except OSError as error:
        raise BoundsCacheError(str(path), str(error)) from None
    return path


def cached_jacobian_extremes(
    model: RobotModel, directory: str | Path, method: str = SAMPLED, **settings: Any
) -> JacobianExtremes:
    """:func:`jacobian_extremes` through an on-disk cache keyed by URDF hash and settings.

    Args:
        model: the arm.
        directory: cache directory (created on demand).
        method: ``"sampled"`` or ``"certified"``.
        **settings: keyword arguments of :func:`jacobian_extremes` (``progress`` is not
            part of the key).

    Returns:
        The cached or freshly computed extremes.
    """
    progress = settings.pop("progress", None)
    key = extremes_cache_key(model, method, settings)
    cached = load_cached_extremes(directory, key)
    if cached is not None:
        return cached
    extremes = jacobian_extremes(model, method, progress=progress, **settings)
    store_cached_extremes(directory, key, extremes)
    return extremes
