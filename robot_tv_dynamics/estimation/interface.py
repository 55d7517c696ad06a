r"""What every payload estimator offers: one seam for the nodes, the CLI and the demo.

An estimator holds Φ̂ of one body (eq. (7) order, about the body frame origin) and
takes blocks of the linear model y = R Φ (rows of the body's regressor, eq. (44) with
v = q̇, a = q̈, and the torque share attributed to the body; see
:mod:`~robot_tv_dynamics.estimation.measurement`). The uniform band of Definition 3,
{ε I ⪯ f(Φ)}, is the common yardstick: ``margin`` = λ_min(f(Φ̂)) and ``consistent`` says
whether it is at least ε.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, check_finite, consistency_margin


@runtime_checkable
class PayloadEstimator(Protocol):
    """An online estimator of one body's Φ (classical, projected, geometric).

    Attributes:
        method: its name (``classical``, ``projected``, ``geometric``).
        phi: Φ̂ (10,), eq. (7) order [kg, kg·m, kg·m²].
        phi_rate: Φ̂̇ (10,) when the method models a rate, else None [per s].
        covariance: covariance of the estimate in its own coordinates (10, 10) or
            larger (the geometric filter's state is (log-Cholesky, rate)).
        epsilon: ε of the band {ε I ⪯ f(Φ)}.
        updates: number of updates taken.
    """

    phi: Array
    phi_rate: Array | None
    covariance: Array
    updates: int

    @property
    def method(self) -> str:
        """``classical``, ``projected`` or ``geometric``."""
        ...

    @property
    def epsilon(self) -> float:
        """ε of the band [kg·m² or kg]."""
        ...

    @property
    def margin(self) -> float:
        """λ_min(f(Φ̂)) [kg·m² or kg]."""
        ...

    @property
    def consistent(self) -> bool:
        """λ_min(f(Φ̂)) ≥ ε."""
        ...

    @property
    def phi_covariance(self) -> Array:
        """Covariance of Φ̂ (10, 10) (to first order for the geometric filter)."""
        ...

    def update(self, regressor: npt.ArrayLike, y: npt.ArrayLike,
               weights: npt.ArrayLike | None = None) -> Array:
        """Take one block R (k, 10), y (k,), row weights 1/σ² (k,); return Φ̂ (a copy)."""
        ...


class _Banded(Protocol):
    @property
    def phi(self) -> Array: ...

    @property
    def epsilon(self) -> float: ...

    @property
    def margin(self) -> float: ...


class BandMargin:
    """``margin`` and ``consistent`` of an estimator, from its ``phi`` and ``epsilon``.

    The estimators derive from it and give ``phi`` and ``epsilon``.
    """

    @property
    def margin(self: _Banded) -> float:
        """λ_min(f(Φ̂)) [kg·m² or kg]."""
        return float(consistency_margin(self.phi))

    @property
    def consistent(self: _Banded) -> bool:
        """Whether Φ̂ is in the band, λ_min(f(Φ̂)) ≥ ε (up to rounding)."""
        return self.margin >= self.epsilon * (1.0 - 1e-9)


def noise_covariance(weights: npt.ArrayLike | None, noise_std: float, rows: int) -> Array:
    """S of one block: diag(1/w) from row weights, else σ² I (``noise_std``) [(N·m)²].

    Raises:
        InvalidInputError: weights of the wrong size, not finite or not > 0.
    """
    if weights is None:
        return noise_std**2 * np.eye(rows)
    w = check_finite(weights, "weights", (rows,))
    if np.any(w <= 0.0):
        raise InvalidInputError("weights", "must all be > 0 (they are 1/σ² per row)")
    return np.diag(1.0 / w)
