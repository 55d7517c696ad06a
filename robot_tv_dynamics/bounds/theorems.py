r"""Theorems 2–4 and Lemma 3: uniform and instantaneous mass-matrix bounds, the URDF report.

.. math::
    α_1 = \min_l \inf_t μ_l(t) \cdot γ, \qquad
    α_2 = 2 \max_l \sup_t ν_l(t) \cdot δ                             \quad (45), (46)

with μ_l = λ_min(f(Φ_l)), ν_l = λ_max(f(Φ_l)) (eq. 9, Definition 3) and the Jacobian
extremes γ, δ of :mod:`robot_tv_dynamics.bounds.search`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import frozen_copy
from robot_tv_dynamics.bounds.extremes import (
    Assessment,
    JacobianExtremes,
    finite_or_none,
)
from robot_tv_dynamics.consistency.statistics import spectral_statistics
from robot_tv_dynamics.dynamics import Q0
from robot_tv_dynamics.inertia import Array, check_finite, spatial_inertia
from robot_tv_dynamics.model import RobotModel

#: Lemma 3 with Q₀ (docs/concepts.md, "A correction to the paper"): σ_max(Q₀) = √2.
LEMMA3_BOUND = math.sqrt(2.0)


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
        return {"method": self.method, "alpha1": finite_or_none(self.alpha1),
                "alpha2": finite_or_none(self.alpha2), "gamma": finite_or_none(self.gamma),
                "delta": finite_or_none(self.delta), "min_margin": self.min_margin,
                "max_size": self.max_size,
                "alpha1_estimate": finite_or_none(self.alpha1_estimate),
                "alpha2_estimate": finite_or_none(self.alpha2_estimate)}


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
    """σ_max(Z(Θ̇)) = max_l σ_max(Z(Φ̇_l)) (block-diagonal, eq. 32) [per s].

    Z(Φ̇_l) is symmetric, so σ_max = max |λ| (eigenvalues, cheaper than an SVD).
    """
    theta_dot = check_finite(theta_dot, "theta_dot", (None, 10))
    return float(np.abs(np.linalg.eigvalsh(spatial_inertia(theta_dot))).max())


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
    """σ_max(Q₀), which Lemma 3 bounds by √2 (equal to √2 for Q₀; docs/concepts.md, "The model")."""
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
    normality: Assessment
    assumption2: Assessment
    lemma3_sigma_max_q0: float

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready object (the CLI's ``--json`` output)."""
        return {
            "urdf": self.source,
            "urdf_sha256": self.urdf_sha256,
            "method": self.extremes.method,
            "alpha1": finite_or_none(self.bounds.alpha1),
            "alpha2": finite_or_none(self.bounds.alpha2),
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
    normality = Assessment(extremes.normal, extremes.normal_method, extremes.normal_reason)
    assumption2 = Assessment(extremes.bounded, extremes.bounded_method, extremes.bounded_reason)
    return BoundsReport(
        source=model.source, urdf_sha256=model.urdf_sha256,
        body_names=tuple(model.body_names), margins=frozen_copy(margins), sizes=frozen_copy(sizes),
        extremes=extremes, bounds=bounds, normality=normality, assumption2=assumption2,
        lemma3_sigma_max_q0=lemma3_sigma_max_q0())
