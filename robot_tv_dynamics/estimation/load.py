r"""The load itself, estimated as a body: RLS (classical, projected) and a log-Cholesky EKF.

The estimators of :mod:`~robot_tv_dynamics.estimation.rls` and
:mod:`~robot_tv_dynamics.estimation.geometric` estimate a whole body Φ_b; the load
reported from them, T⁻¹(Φ̂_b − Φ_b⁰), is a difference that need not be a body.
:class:`LoadFilter` estimates the load Φ_L (about its link's frame) directly from the
body's rows, y − R_b Φ_b⁰ = R_b T Φ_L, with the two constraints

- the load is a body: f(Φ_L) ⪰ 0 (mass ≥ 0, the triangle inequalities of the inertia
  about its COM), and
- the body the monitor watches keeps its margin: f(Φ_b⁰ + T Φ_L) ⪰ ε I.

Methods: ``classical`` (RLS, unconstrained; what it *reports* about the load is its
projection onto the constraints in its own metric, the recursion is left alone),
``projected`` (the same RLS, Φ̂_L replaced by that projection after every update, or at
most every ``projection_period`` of update time,
:class:`~robot_tv_dynamics.estimation.load_projection.LoadProjection`), ``geometric`` (an EKF
on the log-Cholesky parameters of f(Φ_L) = U(θ)U(θ)ᵀ: a body by construction, and
f(Φ_b⁰ + T Φ_L) ⪰ f(Φ_b⁰) ⪰ ε I follows).

Common to all three, in the user's units:

- rows weighted by 1/σ_j² (each joint's noise level, e.g. identify's fit RMS), times a
  Huber weight min(1, k/|r_j|) of the row's normalized innovation r_j = e_j/√s_j
  (s_j = σ_j² + the row's prediction variance): heavy tails do not pull the estimate;
- forgetting as a time constant τ [s]: λ = exp(−Δt/τ) per update, whatever the rate;
- a change detector: the mean normalized innovation squared z averaged over
  ``change_window`` against its long average (``baseline_window``); when the short one
  exceeds ``change_ratio`` times the long one, the prior covariance is added back and
  ``change_hold`` seconds more of it are spread over the next updates (the memory opens
  and stays open while a grasp is still under way), so a grasp or a release is followed
  within a fraction of a second while a constant load converges with the long memory.
  The long average learns only while the short one is below half the threshold: a load
  that raises the innovations does not raise its own threshold.

No update raises on data: a singular or non-finite step is skipped and counted in
``skipped`` by reason.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.estimation.geometric import (
    log_cholesky_from_pseudo_inertia,
    phi_and_jacobian,
)
from robot_tv_dynamics.estimation.load_projection import LoadProjection
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, consistency_margin

#: The methods of :class:`LoadFilter`.
LOAD_METHODS = ("classical", "projected", "geometric")


@dataclass(frozen=True)
class LoadFilterConfig:
    """Settings of :class:`LoadFilter`.

    Attributes:
        memory: τ of the forgetting, λ = exp(−Δt/τ) per update [s].
        prior_std: prior standard deviations of the load's (m, h, I) [kg, kg·m, kg·m²]
            (RLS), re-added when a change is detected.
        huber: k of the Huber weights on normalized innovations; 0 = plain least squares.
        change_ratio: a change is detected when the short average of the normalized
            innovation squared exceeds this × its long average; 0 = no detector.
        change_window: time constant of the short average [s].
        baseline_window: time constant of the long average [s].
        change_hold: the memory stays open this long after a detection (one more prior
            covariance spread over it), and no second detection comes sooner [s].
        theta_walk: random-walk density of the log-Cholesky parameters (geometric) [1/s].
        max_step: largest change of θ per update (geometric; the covariance takes the
            scaled gain) [1].
        mass_floor: the geometric filter's smallest mass (its log-Cholesky scale is
            kept above ½ log of it) [kg].
        projection_period: ``projected`` replaces its state by the projection at most
            this often (time since the last one, in update time; 0 = after every
            update); the reported load is always the projection of the current state [s].
    """

    memory: float = 10.0
    prior_std: tuple[float, float, float] = (1.0, 0.1, 0.01)
    huber: float = 2.5
    change_ratio: float = 3.0
    change_window: float = 0.1
    baseline_window: float = 2.0
    change_hold: float = 0.3
    theta_walk: float = 0.0
    max_step: float = 0.5
    mass_floor: float = 1e-3
    projection_period: float = 0.0

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        for name in ("memory", "change_window", "baseline_window", "max_step", "mass_floor"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise InvalidInputError(name, f"must be > 0, got {value}")
        for name in ("huber", "change_ratio", "change_hold", "theta_walk",
                     "projection_period"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidInputError(name, f"must be >= 0, got {value}")
        if len(self.prior_std) != 3 or not all(
                math.isfinite(s) and s > 0 for s in self.prior_std):
            raise InvalidInputError("prior_std", f"need three values > 0, got {self.prior_std}")

    def prior_covariance(self) -> Array:
        """diag(σ_m², σ_h²·1₃, σ_I²·1₆) (10, 10)."""
        m, h, i = self.prior_std
        return np.diag([m * m] + [h * h] * 3 + [i * i] * 6).astype(np.float64)


#: Prior standard deviations of the log-Cholesky parameters (α, d₁₋₃, s, t = COM [m]).
_THETA_PRIOR = np.array([2.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1])
#: The geometric filter's start: a small sphere-like body at the link origin.
_START_RADIUS = 0.05  # [m]


class LoadFilter:
    """Φ_L of one link's load with f(Φ_L) ⪰ 0 and f(Φ_b⁰ + TΦ_L) ⪰ εI (module docstring).

    Implements :class:`~robot_tv_dynamics.estimation.interface.PayloadEstimator` for the
    body (``phi`` = Φ̂_b = Φ_b⁰ + T Φ̂_L): the nodes and the CLI read it the same way.
    """

    phi_rate: Array | None = None

    def __init__(self, method: str, transform: npt.ArrayLike, phi_base: npt.ArrayLike,
                 epsilon: float, config: LoadFilterConfig | None = None) -> None:
        """Start from no load.

        Args:
            method: one of :data:`LOAD_METHODS`.
            transform: T (10, 10): Φ about the link frame ↦ Φ in the body's frame.
            phi_base: Φ_b⁰ (10,): the body's base share.
            epsilon: ε > 0 of the body's band [kg·m² or kg].
            config: settings (defaults if None).

        Raises:
            InvalidInputError: an unknown method, ε ≤ 0.
        """
        if method not in LOAD_METHODS:
            raise InvalidInputError("method", f'"{method}" is not one of {list(LOAD_METHODS)}')
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise InvalidInputError("epsilon", f"must be > 0, got {epsilon}")
        self._method = method
        self.config = cfg = config or LoadFilterConfig()
        self.transform = np.asarray(transform, dtype=np.float64)
        self.phi_base = np.asarray(phi_base, dtype=np.float64).copy()
        self._epsilon = float(epsilon)
        self.projection = LoadProjection(self.transform, self.phi_base, self._epsilon)
        self._prior = cfg.prior_covariance()
        if method == "geometric":
            mass = cfg.mass_floor
            f0 = mass * np.diag([_START_RADIUS**2] * 3 + [1.0])
            self.theta = log_cholesky_from_pseudo_inertia(f0)
            self._theta_prior = np.diag(_THETA_PRIOR**2)
            self.covariance = self._theta_prior.copy()
            self._phi_load, self._jacobian = phi_and_jacobian(self.theta)
        else:
            self._phi_load = np.zeros(10)
            self.covariance = self._prior.copy()
        self._reported: Array | None = None
        self.updates = 0
        #: detected changes (the memory opened)
        self.changes = 0
        #: skipped updates by reason
        self.skipped: Counter[str] = Counter()
        #: updates whose estimate was projected (``projected``)
        self.projections = 0
        self._short = 1.0
        self._long = 1.0
        self._time = 0.0
        self._last_change = -math.inf
        self._last_projection = -math.inf

    # ------------------------------------------------------------------ the protocol
    @property
    def method(self) -> str:
        """``classical``, ``projected`` or ``geometric``."""
        return self._method

    @property
    def epsilon(self) -> float:
        """ε of the body's band [kg·m² or kg]."""
        return self._epsilon

    @property
    def phi(self) -> Array:
        """Φ̂_b = Φ_b⁰ + T Φ̂_L of the estimator's state (may be unconstrained, ``raw_load_phi``)."""
        return np.asarray(self.phi_base + self.transform @ self._phi_load)

    @property
    def margin(self) -> float:
        """λ_min(f(Φ̂_b)) [kg·m² or kg]."""
        return float(consistency_margin(self.phi))

    @property
    def consistent(self) -> bool:
        """λ_min(f(Φ̂_b)) ≥ ε (up to rounding)."""
        return self.margin >= self._epsilon * (1.0 - 1e-9)

    @property
    def phi_covariance(self) -> Array:
        """Covariance of Φ̂_b (10, 10) (to first order for the geometric filter)."""
        p = self.load_covariance
        return np.asarray(self.transform @ p @ self.transform.T)

    @property
    def load_covariance(self) -> Array:
        """Covariance of Φ̂_L (10, 10) (to first order for the geometric filter)."""
        if self._method == "geometric":
            return np.asarray(self._jacobian @ self.covariance @ self._jacobian.T)
        return self.covariance

    @property
    def load_phi(self) -> Array:
        """Φ̂_L as reported: always a body that keeps the margin (RLS: projected when read)."""
        if self._method == "geometric":
            return self._phi_load.copy()
        if self._reported is None:  # the identity (one eigenvalue check) when feasible
            self._reported = self.projection(self._phi_load, self.covariance).phi
        return self._reported.copy()

    @property
    def raw_load_phi(self) -> Array:
        """Φ̂_L of the estimator's state (classical: may not be a body)."""
        return self._phi_load.copy()

    # ------------------------------------------------------------------ update
    def update(self, regressor: npt.ArrayLike, y: npt.ArrayLike,
               weights: npt.ArrayLike | None = None, dt: float | None = None) -> Array:
        """One block of the body's rows (R_b (k, 10), y (k,)); returns Φ̂_b (a copy).

        Args:
            regressor: R_b (k, 10) of the load body.
            y: the body's torque share (k,) [N·m or N] (y = R_b Φ_b).
            weights: 1/σ² per row (k,); None = 1.
            dt: time since the previous update [s]; None = 1 ms.

        A step that fails (a singular system, a non-finite result) is skipped and counted
        in ``skipped``; inputs of the wrong shape raise InvalidInputError.
        """
        r_b = np.asarray(regressor, dtype=np.float64)
        y_b = np.asarray(y, dtype=np.float64)
        if r_b.ndim != 2 or r_b.shape[1] != 10 or y_b.shape != (r_b.shape[0],):
            raise InvalidInputError(
                "regressor, y", f"need (k, 10) and (k,), got {r_b.shape} and {y_b.shape}")
        w = (np.ones(r_b.shape[0]) if weights is None
             else np.asarray(weights, dtype=np.float64))
        if w.shape != y_b.shape:
            raise InvalidInputError("weights", f"need {y_b.shape}, got {w.shape}")
        step = 1e-3 if dt is None or not (math.isfinite(dt) and dt > 0) else float(dt)
        if not (np.all(np.isfinite(r_b)) and np.all(np.isfinite(y_b))
                and np.all(np.isfinite(w)) and np.all(w > 0)):
            self.skipped["non-finite measurement"] += 1
            return self.phi
        self._time += step
        r = r_b @ self.transform
        target = y_b - r_b @ self.phi_base
        try:
            with np.errstate(over="raise", divide="raise", invalid="raise"):
                if self._method == "geometric":
                    ok = self._ekf_step(r, target, w, step)
                else:
                    ok = self._rls_step(r, target, w, step)
        except (np.linalg.LinAlgError, FloatingPointError, ValueError) as error:
            self.skipped[f"{type(error).__name__}: {error}"[:60]] += 1
            return self.phi
        if not ok:
            self.skipped["non-finite step"] += 1
            return self.phi
        self._reported = None
        self.updates += 1
        return self.phi

    def _innovation_weights(self, e: Array, predicted: Array, w: Array, step: float
                            ) -> tuple[Array, float]:
        """Huber row weights and the change detector; (weights, opening).

        ``opening`` is the multiple of the prior covariance to add back before this
        update: 1 at a detected change, then step/``change_hold`` per update until
        ``change_hold`` has passed (the memory stays open while a grasp is still under
        way: a random walk of the load whose variance over the hold is the prior), else 0.
        """
        cfg = self.config
        s = 1.0 / w + np.maximum(predicted, 0.0)
        z2 = e * e / s
        z = float(np.mean(z2))
        changed = False
        if cfg.change_ratio > 0:
            a_short = min(1.0, step / cfg.change_window)
            a_long = min(1.0, step / cfg.baseline_window)
            self._short += a_short * (z - self._short)
            limit = cfg.change_ratio * max(self._long, 1.0)
            if (self._short > limit and self._time - self._last_change >= cfg.change_hold
                    and self._time > cfg.change_window * 4):
                changed = True
                self.changes += 1
                self._last_change = self._time
                self._short = self._long
            elif self._short < 0.5 * limit:
                # the baseline learns only while no change is suspected: a load that
                # raises the innovations slowly must not raise its own threshold
                self._long += a_long * (min(z, limit) - self._long)
        opening = 1.0 if changed else (
            step / cfg.change_hold
            if cfg.change_hold > 0 and self._time - self._last_change < cfg.change_hold
            else 0.0)
        if cfg.huber <= 0 or changed:
            return w, opening
        scale = np.minimum(1.0, cfg.huber / np.maximum(np.sqrt(z2), 1e-300))
        return w * scale, opening

    def _rls_step(self, r: Array, y: Array, w: Array, step: float) -> bool:
        lam = math.exp(-step / self.config.memory)
        p = self.covariance
        e = y - r @ self._phi_load
        pr = p @ r.T
        weights, opening = self._innovation_weights(e, np.einsum("ij,ji->i", r, pr), w, step)
        if opening:
            p = p + opening * self._prior
            pr = p @ r.T
        s = r @ pr + lam * np.diag(1.0 / weights)
        gain = np.linalg.solve(s, pr.T).T
        phi = self._phi_load + gain @ e
        p = (p - gain @ pr.T) / lam
        p = 0.5 * (p + p.T)
        # forgetting inflates unexcited directions without bound: cap them at the prior
        top = float(np.max(np.diag(p) / np.diag(self._prior)))
        if top > 1.0:
            p = p / top
        if not (np.all(np.isfinite(phi)) and np.all(np.isfinite(p))):
            return False
        self.covariance = p
        period = self.config.projection_period
        if self._method == "projected" and (
                self._time - self._last_projection >= period * (1.0 - 1e-9)):
            self._last_projection = self._time
            result = self.projection(phi, p)
            if result.active:
                self.projections += 1
            phi = result.phi
        self._phi_load = phi
        return True

    def _ekf_step(self, r: Array, y: Array, w: Array, step: float) -> bool:
        cfg = self.config
        lam = math.exp(-step / cfg.memory)
        p = self.covariance / lam + cfg.theta_walk * step * np.eye(10)
        h = r @ self._jacobian
        e = y - r @ self._phi_load
        ph = p @ h.T
        weights, opening = self._innovation_weights(e, np.einsum("ij,ji->i", h, ph), w, step)
        if opening:
            p = p + opening * self._theta_prior
            ph = p @ h.T
        noise = np.diag(1.0 / weights)
        s = h @ ph + noise
        gain = np.linalg.solve(s, ph.T).T
        correction = gain @ e
        length = float(np.linalg.norm(correction))
        if length > cfg.max_step:  # the trust region scales the gain: Joseph form
            gain = gain * (cfg.max_step / length)
            correction = gain @ e
            a = np.eye(10) - gain @ h
            p = a @ p @ a.T + gain @ noise @ gain.T
        else:
            p = p - gain @ ph.T
        theta = self.theta + correction
        theta[0] = max(theta[0], 0.5 * math.log(cfg.mass_floor))
        p = 0.5 * (p + p.T)
        top = float(np.max(np.diag(p) / np.diag(self._theta_prior)))
        if top > 1.0:
            p = p / top
        lc, jac = phi_and_jacobian(theta)
        if not (np.all(np.isfinite(lc)) and np.all(np.isfinite(p))):
            return False
        self.theta, self.covariance = theta, p
        self._phi_load, self._jacobian = lc, jac
        return True


