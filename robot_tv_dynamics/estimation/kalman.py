r"""The Kalman step every online estimator shares: forgetting, gain, covariance.

The body estimators (:class:`~robot_tv_dynamics.estimation.rls.RecursiveLeastSquares`,
:class:`~robot_tv_dynamics.estimation.geometric.GeometricEKF`) and the load filter
(:class:`~robot_tv_dynamics.estimation.load.LoadFilter`) differ in their state (Φ, θ,
offsets) and in what comes before the step (forgetting, a random walk, a prediction);
the measurement update is one:

.. math::
    K = P H^\top (H P H^\top + S)^{-1},\quad x \leftarrow x + K e,\quad
    P \leftarrow P - K H P

with S the rows' noise covariance and e the innovations. When the gain is altered (rows
held at zero, or scaled by a trust region), the covariance is the one of the gain used,
the Joseph form (I − KH) P (I − KH)ᵀ + K S Kᵀ, valid for any gain: the full-gain update
would claim information the step did not take.

Forgetting is a time constant everywhere: λ = exp(−Δt/τ) per update, whatever the rate,
and a forgotten covariance is P/λ (RLS with forgetting factor λ is this Kalman step on
P/λ, exactly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array


def checked_rows(regressor: npt.ArrayLike, y: npt.ArrayLike, weights: npt.ArrayLike | None,
                 bins: npt.ArrayLike | None = None,
                 ) -> tuple[Array, Array, Array, npt.NDArray[np.intp] | None]:
    """A block of rows as arrays: R (k, 10), y (k,), weights (k,) (None: 1), bins (k,).

    Raises:
        InvalidInputError: a shape that does not match (values are not checked here).
    """
    r = np.asarray(regressor, dtype=np.float64)
    target = np.asarray(y, dtype=np.float64)
    if r.ndim != 2 or r.shape[1] != 10 or target.shape != (r.shape[0],):
        raise InvalidInputError(
            "regressor, y", f"need (k, 10) and (k,), got {r.shape} and {target.shape}")
    w = np.ones(r.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != target.shape:
        raise InvalidInputError("weights", f"need {target.shape}, got {w.shape}")
    index = None if bins is None else np.asarray(bins, dtype=np.intp)
    if index is not None and index.shape != target.shape:
        raise InvalidInputError("bins", f"need {target.shape}, got {index.shape}")
    return r, target, w, index


def forgetting_factor(step: float, memory: float) -> float:
    """λ = exp(−Δt/τ) for an update ``step`` Δt [s] and a ``memory`` τ [s] (∞: 1).

    Raises:
        InvalidInputError: Δt < 0 or τ ≤ 0.
    """
    if not (math.isfinite(step) and step >= 0):
        raise InvalidInputError("dt", f"must be >= 0 s, got {step}")
    if not memory > 0:
        raise InvalidInputError("memory", f"must be > 0 s, got {memory}")
    return 1.0 if math.isinf(memory) else math.exp(-step / memory)


def forget(p: Array, n: int, lam: float, lam_rest: float = 1.0) -> Array:
    """P forgotten in every direction: D P D, D = diag(λ^(−1/2)·1ₙ, λ_rest^(−1/2)·1).

    The leading n entries of the state forget with λ, the others with ``lam_rest``.
    """
    d = np.full(p.shape[0], 1.0 / math.sqrt(lam_rest))
    d[:n] = 1.0 / math.sqrt(lam)
    return d[:, None] * p * d[None, :]


def forget_determined(p: Array, rows: Array, scale: Array, lam: float) -> Array:
    r"""P forgotten only in the directions ``rows`` determine: P + (1/λ − 1) Π P Πᵀ.

    Π is the projection onto the row space of ``rows`` (k, n) in the coordinates
    ``scale`` (n,) makes comparable (prior standard deviations): a poorly excited block
    (e.g. at rest: a load's mass and its COM across gravity) forgets what it measures and
    holds the rest. Acts on P's leading n × n block; the other entries are kept.
    """
    n = scale.size
    _, singular, vt = np.linalg.svd(rows * scale, full_matrices=False)
    basis = vt[singular > 1e-6 * max(float(singular[0]), 1e-300)]
    projector = (scale[:, None] * basis.T) @ (basis / scale[None, :])
    out = p.copy()
    out[:n, :n] += (1.0 / lam - 1.0) * projector @ p[:n, :n] @ projector.T
    return out


@dataclass(frozen=True)
class Correction:
    """One measurement update: the state's step K e and the covariance after it.

    Attributes:
        delta: K e (n,).
        covariance: P after the update (n, n), symmetric.
        scaled: whether the trust region scaled the gain.
    """

    delta: Array
    covariance: Array
    scaled: bool


def correct(p: Array, h: Array, e: Array, noise: Array, *, held: slice | None = None,
            trust: tuple[int, float] | None = None) -> Correction:
    """The Kalman measurement update of a state with covariance ``p`` (module docstring).

    Args:
        p: P (n, n) before the update (after any forgetting or prediction).
        h: H (k, n), the rows' sensitivity to the state.
        e: the innovations (k,) (y minus the prediction).
        noise: S (k, k), the rows' noise covariance.
        held: state entries whose gain rows are 0 (they move neither, but keep their
            correlation through P); None = none.
        trust: (m, r): the gain is scaled so that the first m entries of K e have a
            Euclidean norm ≤ r (a trust region for a linearization); None = none.

    Raises:
        numpy.linalg.LinAlgError: H P Hᵀ + S singular.
    """
    ph = p @ h.T
    gain = np.linalg.solve(h @ ph + noise, ph.T).T
    joseph = scaled = False
    if held is not None and gain[held].size:
        gain[held] = 0.0
        joseph = True
    if trust is not None:
        m, radius = trust
        length = float(np.linalg.norm(gain[:m] @ e))
        if length > radius:
            gain = gain * (radius / length)
            joseph = scaled = True
    if joseph:
        a = np.eye(p.shape[0]) - gain @ h
        p = a @ p @ a.T + gain @ noise @ gain.T
    else:
        p = p - gain @ ph.T
    return Correction(gain @ e, 0.5 * (p + p.T), scaled)


def huber_weights(e: Array, predicted: Array, w: Array, k: float) -> Array:
    """Row weights w·min(1, k/|r_j|) of the normalized innovations r_j = e_j/√s_j.

    s_j = 1/w_j + the row's prediction variance ``predicted``; k ≤ 0: ``w`` unchanged
    (plain least squares). Heavy-tailed rows do not pull the estimate.
    """
    if k <= 0:
        return w
    z = np.abs(e) / np.sqrt(1.0 / w + np.maximum(predicted, 0.0))
    return w * np.minimum(1.0, k / np.maximum(z, 1e-300))


def cap_at_prior(p: Array, scale: Array, rest_std: float) -> Array:
    """P with each block's variances capped at its prior, its cross terms scaled alike.

    The leading block at ``scale``² (its prior standard deviations), the rest at
    ``rest_std``²: forgetting and a random walk inflate unexcited directions without
    bound; scaling a block and its cross terms by one factor keeps P ⪰ 0.
    """
    n = scale.size
    d = np.ones(p.shape[0])
    d[:n] /= math.sqrt(max(1.0, float(np.max(np.diag(p)[:n] / scale**2))))
    if p.shape[0] > n:
        d[n:] /= math.sqrt(max(1.0, float(np.max(np.diag(p)[n:])) / rest_std**2))
    return d[:, None] * p * d[None, :]


def row_variances(p: npt.ArrayLike, h: Array) -> Array:
    """Each row's prediction variance, diag(H P Hᵀ) (k,)."""
    return np.einsum("ij,jk,ik->i", h, np.asarray(p), h)
