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
  ``changes`` counts the confirmed ones that are new (one confirmed within ``settle`` of
  the last continues it: ``continued``). Geometric takes a confirmed lighter load's mass
  (GLR's, if below the estimate; COM, inertia shape kept) at once: its steps are
  multiplicative in m, towards no load they would take seconds;
- a contact is not a load: innovations that no change of the load's (m, h) explains (a
  push on the arm) hold the estimate while they last, and withdraw a pending change
  (``contacts`` counts the held updates);
- a torque offset per row (``offset``, when ``offset_memory`` > 0): y = R Φ_L + b + noise,
  b in the state beside the load's, one Kalman step on both (:meth:`LoadFilter._correct`),
  forgotten with λ_b = exp(−Δt/τ_b), held while poorly excited or while a change is
  suspected or settling (docs/estimation.md, "Torque offsets").

No update raises on data: a singular or non-finite step is skipped and counted in
``skipped`` by reason.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import numpy.typing as npt
from scipy.linalg import block_diag

from robot_tv_dynamics.estimation.change import (
    Alarm,
    ChangeDetector,
    Confirmation,
    change_opening,
)
from robot_tv_dynamics.estimation.geometric import (
    log_cholesky_from_pseudo_inertia,
    phi_and_jacobian,
    theta_with_mass,
)
from robot_tv_dynamics.estimation.interface import BandMargin
from robot_tv_dynamics.estimation.kalman import (
    cap_at_prior,
    checked_rows,
    correct,
    forget,
    forget_determined,
    forgetting_factor,
    huber_weights,
    row_variances,
)
from robot_tv_dynamics.estimation.load_config import (
    OFFSET_MEMORY,
    OFFSET_PRIOR_STD,
    START_RADIUS,
    THETA_PRIOR_STD,
    LoadFilterConfig,
)
from robot_tv_dynamics.estimation.load_projection import LoadProjection
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array

__all__ = ["LOAD_METHODS", "OFFSET_MEMORY", "OFFSET_PRIOR_STD", "LoadFilter", "LoadFilterConfig"]

#: The methods of :class:`LoadFilter`.
LOAD_METHODS = ("classical", "projected", "geometric")


class LoadFilter(BandMargin):
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
            f0 = cfg.mass_floor * np.diag([START_RADIUS**2] * 3 + [1.0])
            self.theta = log_cholesky_from_pseudo_inertia(f0)
            self._theta_prior = np.diag(THETA_PRIOR_STD**2)
            self._joint = self._theta_prior.copy()
            self._phi_load, self._jacobian = phi_and_jacobian(self.theta)
        else:
            self._phi_load = np.zeros(10)
            self._joint = self._prior.copy()
        #: each row's torque offset b̂ (k,), sized at the first update [N·m or N]
        self.offset = np.zeros(0)
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
    def covariance(self) -> Array:
        """Covariance of the load's state (Φ_L or θ) (10, 10); see ``offset_covariance``."""
        return self._joint[:10, :10]

    @property
    def offset_covariance(self) -> Array:
        """Covariance of the torque offsets b̂ (k, k) [N·m²] (0 × 0 without offsets)."""
        return self._joint[10:, 10:]

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
            state = self._phi_load if self._snapshot is None else self._snapshot[0]
            return state.copy()
        if self._reported is None:  # the identity (one eigenvalue check) when feasible
            phi, p = ((self._phi_load, self._joint) if self._snapshot is None
                      else self._snapshot[:2])
            self._reported = self.projection(phi, p[:10, :10]).phi
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
        r_b, y_b, w, index = checked_rows(regressor, y, weights, bins)
        step = 1e-3 if dt is None or not (math.isfinite(dt) and dt > 0) else float(dt)
        if not (np.all(np.isfinite(r_b)) and np.all(np.isfinite(y_b))
                and np.all(np.isfinite(w)) and np.all(w > 0)):
            self.skipped["non-finite measurement"] += 1
            return self.phi
        self._time += step
        r = r_b @ self.transform
        target = y_b - r_b @ self.phi_base
        self._size_offsets(r.shape[0])
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

    @property
    def continued(self) -> int:
        """Confirmed changes that continue the one before them (the memory opened again)."""
        return 0 if self.detector is None else self.detector.continued

    def _state(self) -> tuple[Array, ...]:
        """(Φ̂_L, joint covariance, b̂, θ̂, ∂Φ/∂θ): what a withdrawn change puts back."""
        geometric = self._method == "geometric"
        return (self._phi_load.copy(), self._joint.copy(), self.offset.copy(),
                self.theta.copy() if geometric else np.zeros(0),
                self._jacobian.copy() if geometric else np.zeros(0))

    def _restore(self, state: tuple[Array, ...]) -> None:
        self._phi_load, self._joint, self.offset = state[:3]
        if self._method == "geometric":
            self.theta, self._jacobian = state[3:]

    def _rows(self, r: Array) -> Array:
        """The rows in the filter's coordinates: [R (∂Φ/∂θ), I] over (load state, offsets)."""
        h = r @ self._jacobian if self._method == "geometric" else r
        if self.offset.size == 0:
            return h
        return np.hstack([h, np.eye(r.shape[0])])

    def _prediction(self, r: Array, target: Array) -> tuple[Array, Array]:
        """Innovations and each row's prediction variance at the current state."""
        self._size_offsets(r.shape[0])
        return (self._innovation(r, target, self._phi_load, self.offset),
                row_variances(self._joint, self._rows(r)))

    def _innovation(self, r: Array, target: Array, phi: Array, offset: Array) -> Array:
        """The innovations y − R Φ_L − b (b when the filter has offsets)."""
        e = target - r @ phi
        return e - offset if offset.size else e

    def _size_offsets(self, rows: int) -> None:
        """Offsets for ``rows`` rows (at the first update, or when the row count changes).

        They start at 0 with the prior :data:`OFFSET_PRIOR_STD` each, uncorrelated with
        the load.
        """
        if self.config.offset_memory <= 0 or self.offset.size == rows:
            return
        self._joint = block_diag(self._joint[:10, :10], OFFSET_PRIOR_STD**2 * np.eye(rows))
        self.offset = np.zeros(rows)

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
            before = self._innovation(r, target, self._snapshot[0], self._snapshot[2])
        outcome = self.detector.step(r, e, predicted, bins, step, before)
        if isinstance(outcome, Confirmation) and self._snapshot is not None:
            # open again by what the estimate has yet to move: the change since the
            # state before the alarm, less the way the estimate went (a drop included)
            self.changes += not outcome.continues  # a continued change: counted once
            std = np.sqrt(np.diag(self._prior))[:4]
            if self._method == "geometric" and outcome.change[0] < 0:
                self._drop_mass(self._snapshot[0][0] + outcome.change[0] * std[0])
            moved = (self._phi_load[:4] - self._snapshot[0][:4]) / std
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

    def _drop_mass(self, mass: float) -> None:
        """Geometric, a confirmed lighter load: its mass to GLR's ``mass`` (module doc)."""
        target = max(float(mass), self.config.mass_floor)
        if target < float(self._phi_load[0]):
            theta = theta_with_mass(self.theta, target)
            phi, jacobian = phi_and_jacobian(theta)
            if np.all(np.isfinite(phi)) and np.all(np.isfinite(jacobian)):
                self.theta, self._phi_load, self._jacobian = theta, phi, jacobian

    def _opening_of(self, change: Array, covariance: Array, confirmed: bool = False) -> Array:
        """The covariance a change adds, in the filter's coordinates.

        In Φ_L, :func:`~robot_tv_dynamics.estimation.change.change_opening`. The EKF takes
        it through the inverse of ∂Φ/∂θ at its state, scaled to stay within its
        log-Cholesky prior, while the change is pending; a confirmed change opens its
        log-Cholesky prior times that opening's share (from a light load, ∂Φ/∂θ is too
        local for a large change).
        """
        opening, share = change_opening(change, covariance, self._prior)
        if self._method != "geometric":
            return opening
        if confirmed:
            return share * self._theta_prior
        inverse = np.linalg.pinv(self._jacobian)
        theta = inverse @ opening @ inverse.T
        top = float(np.max(np.diag(theta) / np.diag(self._theta_prior)))
        return theta / top if top > 1.0 else theta

    def _forgotten(self, p: Array, rows: Array, scale: Array, step: float,
                   determined_only: bool) -> Array:
        """The joint P after forgetting, λ = exp(−Δt/τ) in x and λ_b = exp(−Δt/τ_b) in b.

        All directions, or, poorly excited, only the load's directions the rows determine;
        the offsets, then not separable from the load, are held with their covariance.
        """
        lam = forgetting_factor(step, self.config.memory)
        if determined_only:
            return forget_determined(p, rows, scale, lam)
        n = scale.size
        rest = forgetting_factor(step, self.config.offset_memory) if p.shape[0] > n else 1.0
        return forget(p, n, lam, rest)

    def _offsets_free(self, determined_only: bool) -> bool:
        """Whether this update may move the offsets.

        Not when poorly excited (at rest an offset and the load's mass and COM are not
        separable: held as the undetermined directions are), nor while a change is
        suspected, pending, spreading or settling (the detector not learning): a load
        change is the load's, not an offset's.
        """
        if determined_only:
            return False
        if self._time < self._open_until:
            return False
        return self.detector is None or self.detector.settled

    def _correct(self, h: Array, e: Array, w: Array, step: float, opening: Array | None,
                 determined_only: bool, scale: Array, walk: float = 0.0,
                 max_step: float = math.inf) -> tuple[Array, Array, Array] | None:
        """The shared Kalman step on the joint state (load state x, offsets b).

        Rows H = [h, I] (h = ∂(RΦ_L)/∂x), innovations ``e`` = y − RΦ̂_L − b̂. Forgetting
        (:meth:`_forgotten`), x's walk ``walk``, the change's ``opening`` in x; Huber
        weights; then :func:`~robot_tv_dynamics.estimation.kalman.correct` with the
        offsets held when :meth:`_offsets_free` says so and x's step at most ``max_step``;
        each block's variances capped at its prior. Returns (Δx, Δb, P), or None for a
        non-finite result.
        """
        n = scale.size
        p = self._forgotten(self._joint, h[:, :n], scale, step, determined_only)
        if walk > 0:
            p[:n, :n] += walk * step * np.eye(n)
        if opening is not None:
            p[:n, :n] += opening
        weights = huber_weights(e, row_variances(p, h), w, self.config.huber)
        held = None if self._offsets_free(determined_only) else slice(n, None)
        kalman = correct(p, h, e, np.diag(1.0 / weights), held=held,
                         trust=(n, max_step) if math.isfinite(max_step) else None)
        p = cap_at_prior(kalman.covariance, scale, OFFSET_PRIOR_STD)
        delta = kalman.delta
        if not (np.all(np.isfinite(delta)) and np.all(np.isfinite(p))):
            return None
        return delta[:n], delta[n:], p

    def _rls_step(self, r: Array, y: Array, w: Array, step: float,
                  opening: Array | None, determined_only: bool = False) -> bool:
        result = self._correct(self._rows(r), self._innovation(r, y, self._phi_load, self.offset),
                               w, step, opening, determined_only, np.sqrt(np.diag(self._prior)))
        if result is None:
            return False
        dx, db, self._joint = result
        phi = self._phi_load + dx
        self.offset = self.offset + db
        period = self.config.projection_period
        if self._method == "projected" and (
                self._time - self._last_projection >= period * (1.0 - 1e-9)):
            self._last_projection = self._time
            projected = self.projection(phi, self.covariance)
            if projected.active:
                self.projections += 1
                # the joint state's projection: the offsets follow the load's move by
                # their correlation, b* = b̂ + P_bx P_xx⁻¹ (Φ* − Φ̂), unless held
                if self.offset.size and self._offsets_free(determined_only):
                    self.offset = self.offset + self._joint[10:, :10] @ np.linalg.lstsq(
                        self.covariance, projected.phi - phi, rcond=None)[0]
            phi = projected.phi
        self._phi_load = phi
        return True

    def _ekf_step(self, r: Array, y: Array, w: Array, step: float,
                  opening: Array | None, determined_only: bool = False) -> bool:
        cfg = self.config
        result = self._correct(self._rows(r), self._innovation(r, y, self._phi_load, self.offset),
                               w, step, opening, determined_only,
                               np.sqrt(np.diag(self._theta_prior)), cfg.theta_walk, cfg.max_step)
        if result is None:
            return False
        dx, db, p = result
        theta = self.theta + dx
        theta[0] = max(theta[0], 0.5 * math.log(cfg.mass_floor))
        lc, jac = phi_and_jacobian(theta)
        if not np.all(np.isfinite(lc)):
            return False
        self.theta, self._joint, self.offset = theta, p, self.offset + db
        self._phi_load, self._jacobian = lc, jac
        return True

