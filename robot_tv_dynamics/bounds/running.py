r"""The mass-matrix bounds a live node publishes per sample, from Θ(t) seen so far.

:class:`RunningBounds` keeps the running statistics of Θ(t) (μ_l = λ_min(f(Φ_l)),
ν_l = λ_max(f(Φ_l)), their inf/sup over time since start-up,
:class:`~robot_tv_dynamics.consistency.ConsistencyTracker`) and the uniform α₁, α₂ of
Theorems 2 and 3 (eq. 45, 46) from them and the Jacobian extremes γ, δ; at one joint
sample :meth:`RunningBounds.values` gives the entries of :data:`BOUND_LABELS`: the exact
λ_min/λ_max of M(q, Θ), the Theorem 2/3 bounds at the current q, α₁/α₂, and σ_max(M(q, Θ̇))
beside its Theorem 4 bound

.. math::
    σ_{\max}(M(q,\dotΘ)) \le σ_{\max}(Z(\dotΘ))\, σ_{\max}(J(q))^2 .

:func:`startup_jacobian_extremes` computes γ, δ once per URDF through the on-disk cache
(:mod:`~robot_tv_dynamics.bounds.cache`), tolerating a cache that cannot be written;
:func:`extremes_summary` is the line the node logs about them. ``dynamics_node``
publishes these on ``mass_matrix_bounds``; nothing here knows about ROS.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bounds.cache import (
    extremes_cache_key,
    read_cached_extremes,
    store_cached_extremes,
)
from robot_tv_dynamics.bounds.extremes import CERTIFIED, SAMPLED, JacobianExtremes
from robot_tv_dynamics.bounds.live import LiveLowerBounds
from robot_tv_dynamics.bounds.search import jacobian_extremes
from robot_tv_dynamics.bounds.theorems import (
    UniformMassMatrixBounds,
    theorem_bounds,
    uniform_mass_matrix_bounds,
)
from robot_tv_dynamics.consistency.statistics import ConsistencyTracker
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inertia import Array, spatial_inertia
from robot_tv_dynamics.model import RobotModel

#: ``method`` of the bounds when the Jacobian extremes could not be computed.
UNAVAILABLE = "unavailable"

#: Entries of :meth:`RunningBounds.values` (``mass_matrix_bounds``), in order.
BOUND_LABELS = (
    "lambda_min_M",      # λ_min(M(q, Θ(t))), exact at this sample
    "lambda_max_M",      # λ_max(M(q, Θ(t)))
    "lower_bound_q",     # min_l μ_l(t) · λ_min(J(q)ᵀJ(q)) ≤ λ_min(M)   (Theorem 2 at q)
    "upper_bound_q",     # 2 max_l ν_l(t) · σ_max(J(q))² ≥ λ_max(M)     (Theorem 3 at q)
    "alpha1",            # min_l inf_t μ_l · γ                           (eq. 45)
    "alpha2",            # 2 max_l sup_t ν_l · δ                         (eq. 46)
    "gamma",             # the γ α₁ uses: the lower end of γ's bracket (safe end; sampled:
                         # the structural lower bound, certified: branch and bound)
    "delta",             # the δ α₂ uses: the upper end of δ's bracket (safe end)
    "min_margin",        # min_l μ_l(t)
    "max_size",          # max_l ν_l(t)
    "inf_margin",        # min_l inf_t μ_l since start-up (or the last URDF swap)
    "sup_size",          # max_l sup_t ν_l
    "mass_rate_sigma_max",  # σ_max(M(q, Θ̇)), exact
    "mass_rate_bound",   # σ_max(Z(Θ̇)) σ_max(J(q))² ≥ σ_max(M(q, Θ̇))  (Theorem 4 at q)
    "certified",         # 1 if γ, δ are certified brackets, 0 if sampled estimates
    "weighted_alpha1",   # certified α₁ʷ(t) ≤ λ_min(M(q, Θ(t))) for every q, from
                         # z_l = λ_min(Z(Φ_l(t))) (bounds/live.py); NaN if some z_l ≤ 0
)


class RunningBounds:
    """Running μ/ν statistics of Θ(t), α₁/α₂, and the bound entries at one sample.

    Attributes:
        extremes: γ, δ (None: unavailable; α₁, α₂, γ, δ are then NaN and the method is
            :data:`UNAVAILABLE`).
        min_margin: min_l μ_l of the latest Θ (NaN before the first :meth:`update`).
        max_size: max_l ν_l of the latest Θ.
        uniform: α₁, α₂ from inf_t μ, sup_t ν and γ, δ (None before the first update).
    """

    def __init__(self, n_bodies: int, extremes: JacobianExtremes | None,
                 live: LiveLowerBounds | None = None) -> None:
        """No Θ seen yet.

        Args:
            n_bodies: N, the rows of Θ.
            extremes: γ, δ of the arm, or None when they could not be computed.
            live: the arm's live lower bounds (the ``weighted_alpha1`` entry; None: NaN).
        """
        self.extremes = extremes
        self.live = live
        #: the certified α₁ʷ(t) of the latest Θ (NaN until :meth:`values` computed it)
        self.weighted_alpha1 = math.nan
        #: the latest Θ, and whether α₁ʷ is still to be computed for it (values())
        self._theta: Array | None = None
        self._weighted_stale = False
        self._tracker = ConsistencyTracker(n_bodies)
        self.min_margin = math.nan
        self.max_size = math.nan
        self.uniform: UniformMassMatrixBounds | None = None

    @property
    def method(self) -> str:
        """How γ, δ were obtained: ``sampled``, ``certified`` or :data:`UNAVAILABLE`."""
        return self.extremes.method if self.extremes is not None else UNAVAILABLE

    def update(self, theta: npt.ArrayLike) -> None:
        """Take one Θ(t) into the statistics and recompute α₁/α₂.

        Args:
            theta: Θ with payloads, (N, 10), eq. (7) order [kg, kg·m, kg·m²].

        Raises:
            InvalidInputError: Θ of the wrong shape, or its margins or sizes are not
                finite (the statistics may then be partly updated: use
                :meth:`transaction` to keep them as they were).
        """
        snapshot = self._tracker.update(theta)
        self._theta = np.array(theta, dtype=np.float64)  # kept for a later set_extremes
        self._weighted_stale = self.live is not None  # α₁ʷ(t): when values() asks for it
        self.weighted_alpha1 = math.nan
        self.min_margin = float(np.min(snapshot.margin))
        self.max_size = float(np.max(snapshot.size))
        if not (math.isfinite(self.min_margin) and math.isfinite(self.max_size)):
            raise InvalidInputError("inertial_parameters", "margins or sizes are not finite")
        if self.extremes is not None:
            self.uniform = uniform_mass_matrix_bounds(
                self.extremes, snapshot.inf_margin, snapshot.sup_size)
        else:
            self.uniform = UniformMassMatrixBounds(
                method=UNAVAILABLE, alpha1=math.nan, alpha2=math.nan, gamma=math.nan,
                delta=math.nan, min_margin=float(np.min(snapshot.inf_margin)),
                max_size=float(np.max(snapshot.sup_size)))

    def set_extremes(self, extremes: JacobianExtremes | None,
                     live: LiveLowerBounds | None = None) -> None:
        """Take γ, δ that came later (computed after start-up); the μ/ν statistics stay.

        α₁/α₂ are recomputed from the inf/sup of the margins seen so far and the new γ,
        δ (nothing to recompute before the first :meth:`update`); ``live`` replaces the
        live lower bounds (their γ), the weighted α₁ʷ is computed again at the next
        :meth:`values`.
        """
        self.extremes = extremes
        self.live = live
        self.weighted_alpha1 = math.nan
        self._weighted_stale = live is not None and self._theta is not None
        last = self._tracker.last
        if last is not None and extremes is not None:
            self.uniform = uniform_mass_matrix_bounds(extremes, last.inf_margin, last.sup_size)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Validate before mutate: if the block raises, the statistics stay as they were."""
        saved = (copy.copy(self._tracker), self.min_margin, self.max_size, self.uniform,
                 self.weighted_alpha1, self._theta, self._weighted_stale)
        try:
            yield
        except BaseException:
            (self._tracker, self.min_margin, self.max_size, self.uniform,
             self.weighted_alpha1, self._theta, self._weighted_stale) = saved
            raise

    def values(
        self, jacobian: Array, mass_matrix: Array, mass_rate_matrix: Array, z_rate_norm: float,
    ) -> Array:
        """The entries of :data:`BOUND_LABELS` at one sample, (16,).

        Args:
            jacobian: the stacked LOCAL body Jacobian J(q), (6N, nv).
            mass_matrix: M(q, Θ), (nv, nv).
            mass_rate_matrix: M(q, Θ̇), (nv, nv) (read only when ``z_rate_norm`` ≠ 0).
            z_rate_norm: σ_max(Z(Θ̇)) [per s]; 0 means Θ̇ = 0 (both rate entries 0).

        Raises:
            InvalidInputError: no Θ yet (:meth:`update` was never called).
        """
        uniform = self.uniform
        if uniform is None:
            raise InvalidInputError("theta", "no Θ yet: call update() first")
        if self.live is not None and self._weighted_stale and self._theta is not None:
            # z_l = λ_min(Z(Φ_l)): N 6×6 and one nv×nv eigenvalue, once per Θ
            self.weighted_alpha1 = self.live.weighted_alpha1(
                np.linalg.eigvalsh(spatial_inertia(self._theta))[:, 0])
            self._weighted_stale = False
        eig_j = np.linalg.eigvalsh(jacobian.T @ jacobian)
        eig_m = np.linalg.eigvalsh(mass_matrix)
        if z_rate_norm == 0.0:
            rate_exact = rate_bound = 0.0
        else:  # M(q, Θ̇) is symmetric: σ_max = max |λ|
            eig_rate = np.linalg.eigvalsh(mass_rate_matrix)
            rate_exact = float(max(-eig_rate[0], eig_rate[-1]))
            rate_bound = z_rate_norm * float(eig_j[-1])  # Theorem 4 at q
        return np.array([
            eig_m[0], eig_m[-1],
            *theorem_bounds(  # Theorems 2, 3 at the current q
                self.min_margin, self.max_size, float(eig_j[0]), float(eig_j[-1])),
            uniform.alpha1, uniform.alpha2, uniform.gamma, uniform.delta,
            self.min_margin, self.max_size, uniform.min_margin, uniform.max_size,
            rate_exact, rate_bound, 1.0 if uniform.method == CERTIFIED else 0.0,
            self.weighted_alpha1,
        ])


# ---------------------------------------------------------------------------- start-up
@dataclass(frozen=True)
class StartupExtremes:
    """γ, δ as :func:`startup_jacobian_extremes` obtained them.

    Attributes:
        extremes: the Jacobian extremes.
        origin: ``"cache"`` or ``"computed"``.
        seconds: wall time it took [s].
        cache_error: why they could not be stored in the cache ("" if they were, or no
            cache was used).
        cache_note: why a cache file was not used (corrupt or stale; "" when there was
            none or it was used).
    """

    extremes: JacobianExtremes
    origin: str
    seconds: float
    cache_error: str = ""
    cache_note: str = ""


def cached_startup_extremes(
    model: RobotModel,
    *,
    certified: bool,
    settings: Mapping[str, Any],
    cache_dir: str | Path = "",
) -> tuple[StartupExtremes | None, str]:
    """γ, δ from the on-disk cache only (milliseconds), or None, and why a file was not used.

    The arguments are those of :func:`startup_jacobian_extremes`; nothing is computed, so
    a node can start with them at once and compute them later when they are not cached.
    """
    start = time.monotonic()
    if not cache_dir:
        return None, ""
    key = extremes_cache_key(model, CERTIFIED if certified else SAMPLED, settings)
    extremes, note = read_cached_extremes(cache_dir, key)
    if extremes is None:
        return None, note
    return StartupExtremes(extremes, "cache", time.monotonic() - start), ""


def startup_jacobian_extremes(
    model: RobotModel,
    *,
    certified: bool,
    settings: Mapping[str, Any],
    cache_dir: str | Path = "",
    on_compute: Callable[[str], None] | None = None,
) -> StartupExtremes:
    """γ, δ once per URDF: from the on-disk cache, else computed (and stored).

    Args:
        model: the arm.
        certified: branch and bound (``certified``) instead of the ``sampled`` estimate.
        settings: keyword arguments of :func:`~robot_tv_dynamics.bounds.jacobian_extremes`
            (``samples``, ``time_limit``), part of the cache key.
        cache_dir: the cache directory ("" = no cache).
        on_compute: called with the method before a computation starts (it may take up
            to ``time_limit``: say so).

    Raises:
        RobotTvDynamicsError: the search failed (a cache that cannot be written does
            not raise: ``cache_error`` says why).
    """
    method = CERTIFIED if certified else SAMPLED
    start = time.monotonic()
    cached, note = cached_startup_extremes(
        model, certified=certified, settings=settings, cache_dir=cache_dir)
    if cached is not None:
        return cached
    key = extremes_cache_key(model, method, settings)
    if on_compute is not None:
        on_compute(method)
    extremes = jacobian_extremes(model, method, **settings)
    cache_error = ""
    if cache_dir:
        try:
            store_cached_extremes(cache_dir, key, extremes)
        except RobotTvDynamicsError as error:
            cache_error = str(error)
    return StartupExtremes(extremes, "computed", time.monotonic() - start, cache_error, note)


def extremes_summary(extremes: JacobianExtremes) -> str:
    """γ, δ for the start-up log: the sampled estimate and the safe end α₁/α₂ use.

    ``mass_matrix_bounds`` publishes the safe ends (``gamma`` = lower end of γ's bracket,
    ``delta`` = upper end of δ's); a sampled estimate is not a bound (it lies on the
    unsafe side), which is why the two numbers differ.
    """
    g_low, g_high = extremes.inf_lambda_min_JtJ_bracket
    d_low, d_high = extremes.sup_sigma_max_J_sq_bracket
    kind = "estimate" if extremes.method == SAMPLED else "value"
    return (f"gamma {kind} {extremes.inf_lambda_min_JtJ:.6g} in [{g_low:.6g}, {g_high:.6g}], "
            f"delta {kind} {extremes.sup_sigma_max_J_sq:.6g} in [{d_low:.6g}, {d_high:.6g}] "
            f"({extremes.method}); alpha1/alpha2 and mass_matrix_bounds use the safe ends "
            f"gamma = {g_low:.6g}, delta = {d_high:.6g}")
