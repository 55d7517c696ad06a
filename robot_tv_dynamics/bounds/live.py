r"""Certified lower bounds of λ_min(M(q, Θ(t))) for every q, per Θ sample, in microseconds.

A live node (monitor_node) knows Θ(t) but cannot search the joint box per sample. From
per-arm quantities computed once (:mod:`~robot_tv_dynamics.bounds.floor`, cached on
disk) :class:`LiveLowerBounds` gives at each Θ(t), with z_l(t) = λ_min(Z(Φ_l(t))):

- the **weighted α₁ʷ(t)**, a certified lower bound of inf_q λ_min(Σ_l z_l(t) J_lᵀJ_l),
  hence of λ_min(M(q, Θ(t))) for every q (docs/concepts.md, weighted bound), as the
  larger of 1/λ_max(K diag(z)⁻¹ Kᵀ) (the constant left inverse K J(q) = I, valid for
  every q ∈ ℝⁿ) and β₀ · min_l z_l/z⁰_l (the certified reference β₀ of the nominal
  profile z⁰, scaled: Σ z_l J_lᵀJ_l ⪰ (min_l z_l/z⁰_l) Σ z⁰_l J_lᵀJ_l);
- the paper's α₁(t) = min_l μ_l(t) · γ (Theorem 2 at this Θ; γ its certified lower
  end), never above α₁ʷ(t) since z_l ≥ μ_l;
- the **loading floor**: λ_min(M(q, Θ(t))) ≥ inf_q λ_min(M₀) holds when every body's
  load ΔΦ_l = Φ_l(t) − Φ₀_l is consistent (Z(ΔΦ_l) ⪰ 0); the load margins
  λ_min(Z(ΔΦ_l)) say which body breaks it (an inconsistent load estimate).

Nothing here searches or knows about ROS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bounds.floor import CertifiedLowerBound
from robot_tv_dynamics.bounds.structural import (
    structural_gamma_lower_bound,
    structural_left_inverse,
    structural_weighted_lower_bound,
)
from robot_tv_dynamics.consistency.statistics import spectral_statistics
from robot_tv_dynamics.inertia import Array, spatial_inertia
from robot_tv_dynamics.model import RobotModel

#: Entries of :meth:`LiveLowerBounds.values`, in order (the ``mass_matrix_lower_bounds``
#: topic of monitor_node).
LIVE_LABELS = (
    "weighted_alpha1",      # certified α₁ʷ(t) ≤ inf_q λ_min(Σ z_l(t) J_lᵀJ_l) ≤ λ_min(M(q, Θ(t)))
    "weighted_alpha1_inf",  # its minimum over the samples judged so far (uniform in t)
    "paper_alpha1",         # min_l μ_l(t) · γ (Theorem 2 at this Θ; γ certified lower end)
    "loading_floor",        # certified inf_q λ_min(M₀) of the base arm (NaN: not yet known)
    "loading_floor_holds",  # 1: every load ΔΦ_l consistent, so λ_min(M(q, Θ(t))) ≥ floor
    "min_load_margin",      # min_l λ_min(Z(Φ_l(t) − Φ₀_l)) (< 0: that load is inconsistent)
)

#: A load margin above −this × λ_max(Z(Φ₀_l)) counts as consistent (rounding of Θ − Θ₀).
_LOAD_TOLERANCE = 1e-12


@dataclass(frozen=True)
class LiveSample:
    """The live lower bounds at one Θ(t) (see :data:`LIVE_LABELS`).

    Attributes:
        weighted_alpha1: certified α₁ʷ(t) (NaN when a body is inconsistent: z_l ≤ 0).
        paper_alpha1: min_l μ_l(t) · γ (NaN when a body is inconsistent).
        loading_floor: the base arm's certified floor (NaN while unknown).
        floor_holds: every load ΔΦ_l is consistent.
        load_margins: λ_min(Z(ΔΦ_l)) per body, (N,).
        inconsistent_loads: indices of the bodies whose load is inconsistent.
    """

    weighted_alpha1: float
    paper_alpha1: float
    loading_floor: float
    floor_holds: bool
    load_margins: Array = field(default_factory=lambda: np.zeros(0))
    inconsistent_loads: tuple[int, ...] = ()


class LiveLowerBounds:
    """Per-sample certified lower bounds of λ_min(M) from per-arm quantities.

    Attributes:
        gamma: certified lower bound of γ = inf_q λ_min(JᵀJ) (structural unless given).
        reference: the certified weighted reference (None: only the structural part).
        floor: the certified loading floor (None: not yet known).
        weighted_inf: the smallest α₁ʷ(t) seen (∞ before the first sample).
    """

    def __init__(self, model: RobotModel, *, gamma: float | None = None,
                 reference: CertifiedLowerBound | None = None,
                 floor: CertifiedLowerBound | None = None) -> None:
        """Build from the arm; ``gamma``, ``reference``, ``floor`` may come later."""
        self._left_inverse = structural_left_inverse(model)
        self._theta0 = np.array(model.theta_nominal)
        self._z0_scale = np.maximum(np.linalg.eigvalsh(spatial_inertia(self._theta0))[:, -1],
                                    1e-300)
        structural = structural_gamma_lower_bound(model)
        self.gamma = structural if gamma is None else max(float(gamma), structural)
        self.reference = reference
        self.floor = floor
        self.weighted_inf = math.inf

    def weighted_alpha1(self, z: npt.ArrayLike) -> float:
        """Certified α₁ʷ ≤ inf_q λ_min(Σ_l z_l J_lᵀJ_l) for body weights z (N,).

        NaN when some z_l ≤ 0 (an inconsistent body: no lower bound follows).
        """
        z = np.asarray(z, dtype=np.float64)
        if not np.all(z > 0.0):
            return math.nan
        best = structural_weighted_lower_bound(self._left_inverse, z)
        ref = self.reference
        if ref is not None and ref.profile.size == z.size:
            used = ref.profile > 0.0
            if np.any(used):
                ratio = float(np.min(z[used] / ref.profile[used]))
                best = max(best, ref.value * ratio * (1.0 - 1e-12))
        return best

    def sample(self, theta: npt.ArrayLike) -> LiveSample:
        """The live bounds at Θ(t) (N, 10); updates :attr:`weighted_inf`."""
        theta = np.asarray(theta, dtype=np.float64)
        z = np.linalg.eigvalsh(spatial_inertia(theta))[:, 0]
        mu = spectral_statistics(theta)[0]
        weighted = self.weighted_alpha1(z)
        paper = float(np.min(mu)) * self.gamma if np.all(mu > 0.0) else math.nan
        if math.isfinite(weighted):
            self.weighted_inf = min(self.weighted_inf, weighted)
        load = np.asarray(np.linalg.eigvalsh(spatial_inertia(theta - self._theta0))[:, 0],
                          dtype=np.float64)
        bad = tuple(int(i) for i in np.flatnonzero(load < -_LOAD_TOLERANCE * self._z0_scale))
        floor = self.floor.value if self.floor is not None else math.nan
        return LiveSample(weighted_alpha1=weighted, paper_alpha1=paper, loading_floor=floor,
                          floor_holds=not bad, load_margins=load, inconsistent_loads=bad)

    def values(self, sample: LiveSample) -> Array:
        """The entries of :data:`LIVE_LABELS` for ``sample`` (6,)."""
        inf = self.weighted_inf if math.isfinite(self.weighted_inf) else math.nan
        holds = (1.0 if sample.floor_holds else 0.0) if math.isfinite(sample.loading_floor) \
            else math.nan
        return np.array([sample.weighted_alpha1, inf, sample.paper_alpha1,
                         sample.loading_floor, holds, float(np.min(sample.load_margins))])
