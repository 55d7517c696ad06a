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
- a change detector with a stated false-alarm rate
  (:class:`~robot_tv_dynamics.estimation.change.ChangeDetector`: a GLR test of the
  innovations along the load's mass and first-moment columns, its scale learned online
  per joint and excitation level). A declared change opens the memory as far as the
  evidence says (E[ΔΔᵀ] of GLR's estimate of the change, and as much again spread over
  ``change_hold`` seconds: a grasp still under way is followed); it is confirmed or
  withdrawn ``confirm`` seconds later (a withdrawn one puts the estimate back where it
  was before the alarm; a confirmed one opens the memory by what the estimate has yet to
  move), and while it is pending the reported load is the one from before it.
  ``changes`` counts the confirmed ones;
- a contact is not a load: innovations that no change of the load's (m, h) explains (a
  push on the arm) hold the estimate while they last, and withdraw a pending change
  (``contacts`` counts the held updates).

No update raises on data: a singular or non-finite step is skipped and counted in
``skipped`` by reason.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.estimation.change import (
    Alarm,
    ChangeDetector,
    ChangeDetectorConfig,
    Confirmation,
)
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
            (RLS); the scale of what a detected change opens.
        huber: k of the Huber weights on normalized innovations; 0 = plain least squares.
        change: settings of the change detector (its ``false_alarm_rate`` 0 = none).
        change_hold: after a declared change the memory stays open this long (as much
            covariance again as the change opened, spread over it) [s].
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
    change: ChangeDetectorConfig = field(default_factory=ChangeDetectorConfig)
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
        for name in ("memory", "max_step", "mass_floor"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise InvalidInputError(name, f"must be > 0, got {value}")
        for name in ("huber", "change_hold", "theta_walk",
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
        #: the change detector (made at the first update, from its rows' noise levels)
        self.detector: ChangeDetector | None = None
        self._time = 0.0
        self._opening = np.zeros((10, 10))
        self._open_until = -math.inf
        self._snapshot: tuple[Array, ...] | None = None
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
        """Φ̂_L as reported: always a body that keeps the margin (RLS: projected when read).

        While a declared change is pending, the estimate from before it: a change is
        reported once confirmed.
        """
        if self._method == "geometric":
            state = self._phi_load if self._snapshot is None else self._snapshot[2]
            return state.copy()
        if self._reported is None:  # the identity (one eigenvalue check) when feasible
            phi, p = ((self._phi_load, self.covariance) if self._snapshot is None
                      else self._snapshot[:2])
            self._reported = self.projection(phi, p).phi
        return self._reported.copy()

    @property
    def raw_load_phi(self) -> Array:
        """Φ̂_L of the estimator's state (classical: may not be a body)."""
        return self._phi_load.copy()

    # ------------------------------------------------------------------ update
    def update(self, regressor: npt.ArrayLike, y: npt.ArrayLike,
               weights: npt.ArrayLike | None = None, dt: float | None = None,
               bins: npt.ArrayLike | None = None, determined_only: bool = False) -> Array:
        """One block of the body's rows (R_b (k, 10), y (k,)); returns Φ̂_b (a copy).

        Args:
            regressor: R_b (k, 10) of the load body.
            y: the body's torque share (k,) [N·m or N] (y = R_b Φ_b).
            weights: 1/σ² per row (k,); None = 1.
            dt: time since the previous update [s]; None = 1 ms.
            bins: each row's scale bin of the change detector (k,) (e.g.
                :func:`~robot_tv_dynamics.estimation.change.excitation_bins`); None = one.
            determined_only: forget only in the directions these rows determine (a
                poorly excited block, e.g. at rest: the mass and the COM across gravity);
                the others keep their covariance and move only through their
                correlation with those.

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
        index = None if bins is None else np.asarray(bins, dtype=np.intp)
        if index is not None and index.shape != y_b.shape:
            raise InvalidInputError("bins", f"need {y_b.shape}, got {index.shape}")
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
                opening = self._detect(r, target, w, index, step)
                if self.in_contact:
                    return self.phi  # a contact's torques are not the load's: hold
                if self._method == "geometric":
                    ok = self._ekf_step(r, target, w, step, opening, determined_only)
                else:
                    ok = self._rls_step(r, target, w, step, opening, determined_only)
        except (np.linalg.LinAlgError, FloatingPointError, ValueError) as error:
            self.skipped[f"{type(error).__name__}: {error}"[:60]] += 1
            return self.phi
        if not ok:
            self.skipped["non-finite step"] += 1
            return self.phi
        self._reported = None
        self.updates += 1
        return self.phi

    @property
    def alarms(self) -> int:
        """Changes declared by the detector (confirmed or withdrawn)."""
        return 0 if self.detector is None else self.detector.alarms

    @property
    def in_contact(self) -> bool:
        """Whether the last update was held as a contact (not a load's torques)."""
        return self.detector is not None and self.detector.contact

    @property
    def contacts(self) -> int:
        """Updates held as contacts."""
        return 0 if self.detector is None else self.detector.contacts

    @property
    def withdrawn(self) -> int:
        """Declared changes withdrawn as not confirmed (the estimate put back)."""
        return 0 if self.detector is None else self.detector.withdrawn

    def _state(self) -> tuple[Array, ...]:
        if self._method == "geometric":
            return (self.theta.copy(), self.covariance.copy(), self._phi_load.copy(),
                    self._jacobian.copy())
        return (self._phi_load.copy(), self.covariance.copy())

    def _restore(self, state: tuple[Array, ...]) -> None:
        if self._method == "geometric":
            self.theta, self.covariance, self._phi_load, self._jacobian = state
        else:
            self._phi_load, self.covariance = state

    def _prediction(self, r: Array, target: Array) -> tuple[Array, Array]:
        """Innovations and each row's prediction variance at the current state."""
        if self._method == "geometric":
            h = r @ self._jacobian
            return target - r @ self._phi_load, np.einsum("ij,jk,ik->i", h, self.covariance, h)
        return target - r @ self._phi_load, np.einsum("ij,jk,ik->i", r, self.covariance, r)

    def _detect(self, r: Array, target: Array, w: Array, bins: npt.NDArray[np.intp] | None,
                step: float) -> Array | None:
        """Run the change detector; the covariance to add before this update, or None."""
        cfg = self.config
        if cfg.change.false_alarm_rate <= 0:
            return None
        if self.detector is None:
            m, h, _ = cfg.prior_std
            self.detector = ChangeDetector(cfg.change, 1.0 / w, (m, h, h, h))
        e, predicted = self._prediction(r, target)
        before = None
        if self._snapshot is not None:
            before = target - r @ (self._snapshot[2] if self._method == "geometric"
                                   else self._snapshot[0])
        outcome = self.detector.step(r, e, predicted, bins, step, before)
        if isinstance(outcome, Confirmation) and self._snapshot is not None:
            # open again by what the estimate has yet to move: the change since the
            # state before the alarm, less the way the estimate went
            self.changes += 1
            std = np.sqrt(np.diag(self._prior))[:4]
            before = self._snapshot[2] if self._method == "geometric" else self._snapshot[0]
            moved = (self._phi_load[:4] - before[:4]) / std
            self._snapshot = None
            return self._opening_of(outcome.change - moved, outcome.covariance, confirmed=True)
        if isinstance(outcome, Alarm):
            self._snapshot = self._state()
            self._opening = self._opening_of(outcome.change, outcome.covariance)
            self._open_until = self._time + cfg.change_hold
            return self._opening
        elif outcome is False and self._snapshot is not None:
            self._restore(self._snapshot)
            self._snapshot = None
            self._open_until = -math.inf
        if cfg.change_hold > 0 and self._time < self._open_until:
            return self._opening * (step / cfg.change_hold)
        return None

    def _opening_of(self, change: Array, covariance: Array, confirmed: bool = False) -> Array:
        """The covariance a change adds, in the filter's coordinates.

        In Φ_L: E[ΔΔᵀ] = Δ̂Δ̂ᵀ + Cov(Δ̂) of GLR's change in (m, h) (given in prior
        standard deviations), and the inertia's prior times the largest diagonal entry
        of E[ΔΔᵀ] (a load whose mass or first moment changes by one prior deviation may
        change its inertia by as much), at most the prior. The EKF takes it through the
        inverse of ∂Φ/∂θ at its state, scaled to stay within its log-Cholesky prior, while
        the change is pending; a confirmed change opens its log-Cholesky prior times that
        largest entry (from a light load, ∂Φ/∂θ is too local for a large change).
        """
        moment = np.outer(change, change) + covariance
        share = min(1.0, float(np.max(np.diag(moment))))
        std = np.sqrt(np.diag(self._prior))
        opening = share * self._prior
        opening[:4, :4] = moment * np.outer(std[:4], std[:4])
        if self._method != "geometric":
            return opening
        if confirmed:
            return share * self._theta_prior
        inverse = np.linalg.pinv(self._jacobian)
        theta = inverse @ opening @ inverse.T
        top = float(np.max(np.diag(theta) / np.diag(self._theta_prior)))
        return theta / top if top > 1.0 else theta

    def _huber(self, e: Array, predicted: Array, w: Array) -> Array:
        """Huber row weights min(1, k/|r_j|) of the normalized innovations."""
        k = self.config.huber
        if k <= 0:
            return w
        z = np.abs(e) / np.sqrt(1.0 / w + np.maximum(predicted, 0.0))
        return w * np.minimum(1.0, k / np.maximum(z, 1e-300))

    def _forgotten(self, p: Array, rows: Array, scale: Array, lam: float,
                   determined_only: bool) -> tuple[Array, float]:
        """(P after forgetting, λ left for the update).

        All directions (P, λ), or only those the rows determine: P + (1/λ − 1) Π P Πᵀ
        (Π the projection onto their row space in prior-scaled coordinates) and λ = 1.
        """
        if not determined_only:
            return p, lam
        _, singular, vt = np.linalg.svd(rows * scale, full_matrices=False)
        basis = vt[singular > 1e-6 * max(float(singular[0]), 1e-300)]
        projector = (scale[:, None] * basis.T) @ (basis / scale[None, :])
        return p + (1.0 / lam - 1.0) * projector @ p @ projector.T, 1.0

    def _rls_step(self, r: Array, y: Array, w: Array, step: float,
                  opening: Array | None, determined_only: bool = False) -> bool:
        p, lam = self._forgotten(self.covariance, r, np.sqrt(np.diag(self._prior)),
                                 math.exp(-step / self.config.memory), determined_only)
        if opening is not None:
            p = p + opening
        e = y - r @ self._phi_load
        pr = p @ r.T
        weights = self._huber(e, np.einsum("ij,ji->i", r, pr), w)
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

    def _ekf_step(self, r: Array, y: Array, w: Array, step: float,
                  opening: Array | None, determined_only: bool = False) -> bool:
        cfg = self.config
        h = r @ self._jacobian
        p, lam = self._forgotten(self.covariance, h, np.sqrt(np.diag(self._theta_prior)),
                                 math.exp(-step / cfg.memory), determined_only)
        p = p / lam + cfg.theta_walk * step * np.eye(10)
        if opening is not None:
            p = p + opening
        e = y - r @ self._phi_load
        ph = p @ h.T
        weights = self._huber(e, np.einsum("ij,ji->i", h, ph), w)
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
