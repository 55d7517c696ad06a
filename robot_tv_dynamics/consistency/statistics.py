r"""Consistency statistics of Θ(t): margins μ_l = λ_min(f(Φ_l)), sizes ν_l, their extremes.

Definition 3 of the paper: Θ(t) is *uniformly* physically consistent when
inf_t μ_l(t) > 0 for every body, and upper bounded when sup_t ν_l(t) < ∞.
:class:`ConsistencyTracker` keeps the running extremes (pure NumPy; the nodes, the
monitor and the demo share it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import frozen_copy
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, check_finite, pseudo_inertia


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
