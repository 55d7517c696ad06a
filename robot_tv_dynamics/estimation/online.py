r"""The live pipeline one estimator node, the ``estimate`` CLI and tests share.

Raw samples (stamp, q, q̇, measured effort) in; per sample:

1. q̈ by the shared input rules (:class:`~robot_tv_dynamics.inputs.ModelInputs`: causal,
   critically damped 2nd-order differentiation of q̇ with low-frequency delay
   d = 1/(π f_c));
2. q, q̇ and τ are delayed by the same d (the sample whose stamp is nearest t − d), so
   the regressor row and the effort are evaluated at the instant q̈ refers to;
3. no update for ``SETTLE_DELAYS`` q̈-filter delays after the first sample or a gap
   (the filter's start-up transient is not the arm's q̈). A gap is an interval longer
   than ``max_gap`` (the filter restarts) or one the filter ran through on interpolated
   q̇: longer than ``GAP_DELAYS`` delays and ``GAP_INTERVALS`` of the stream's usual
   interval (a burst of lost messages: a 0.28 s hole in a 200 Hz stream put 0.04–0.09 kg
   into the unloaded estimate before this rule);
4. every ``decimation``-th sample: (R_b, y) of the load body
   (:class:`~robot_tv_dynamics.estimation.measurement.LoadMeasurement`), the excitation
   check, and the estimator's update, or a hold when poorly excited.

:func:`make_estimator` is the one seam that builds an estimator by method name.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.estimation.change import ChangeDetectorConfig, excitation_bins
from robot_tv_dynamics.estimation.excitation import ExcitationCheck, ExcitationConfig
from robot_tv_dynamics.estimation.geometric import GeometricConfig, GeometricEKF
from robot_tv_dynamics.estimation.interface import PayloadEstimator
from robot_tv_dynamics.estimation.load import LoadFilter, LoadFilterConfig
from robot_tv_dynamics.estimation.measurement import LoadMeasurement
from robot_tv_dynamics.estimation.rls import EstimatorConfig, RecursiveLeastSquares
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inertia import (
    Array,
    consistency_margin,
    consistency_size,
    mass_com_inertia_from_phi,
)
from robot_tv_dynamics.inputs import InputRules, ModelInputs
from robot_tv_dynamics.model import RobotModel

#: Updates wait this many q̈-filter delays after a start or a gap: the critically damped
#: filter starting from rest is then within 0.3 % of a steady q̈ ((1 + 2k)e^(−2k), k = 4).
SETTLE_DELAYS = 4.0

#: An interval longer than this many q̈-filter delays, and than GAP_INTERVALS of the
#: stream's usual interval, is a gap after which updates wait as after a start.
GAP_DELAYS, GAP_INTERVALS = 1.0, 3.0
#: Weight of each new interval in the stream's usual interval (an exponential average).
INTERVAL_AVERAGING = 0.05

#: The estimators :func:`make_estimator` builds.
METHODS = ("classical", "projected", "geometric")


@dataclass(frozen=True)
class LoadEstimatorSettings:
    """Everything that tunes the live estimate (the estimator node's parameters).

    Attributes:
        method: one of :data:`METHODS`.
        noise_std: σ of each joint's effort residual (nv,) [N·m or N]; the rows are
            weighted by 1/σ².
        prior_std: prior standard deviations of the load's (m, h, I) [kg, kg·m, kg·m²].
        memory: time constant of the forgetting, λ = exp(−Δt/memory) per update [s].
        huber: k of the Huber weights on the normalized innovations (0 = off) [1].
        false_alarm_rate: the change detector's target rate of false load changes, per
            second of motion (0 = no detector) [1/s].
        change_window: time constant of the detector's window [s].
        change_confirm: a declared change is confirmed or withdrawn after this long [s].
        margin_fraction: ε = margin_fraction · λ_min(f(Φ_b⁰)) of the load body's base
            share [1].
        upper_factor: β = upper_factor · λ_max(f(Φ_b⁰)), reported only (the load filters
            impose f(Φ_L) ⪰ 0 and f(Φ_b) ⪰ εI, no upper bound) [1].
        theta_walk: q_θ of the geometric filter [1/s].
        acceleration_cutoff: f_c of the q̈ filter [Hz].
        max_gap: a longer gap between samples restarts the q̈ filter [s].
        decimation: update on every k-th sample [1].
        projection_period: ``projected`` replaces its state by the load projection at
            most this often (update time; 0 = after every update). The default, 4 ms,
            is every update at ≤ 250 updates/s and every 4th at 1 kHz (where a projection
            per sample costs more CPU than the sample period leaves on a loaded
            2-core machine); what is reported is always the projection of the current
            state [s].
        offset_memory: each joint's torque offset is estimated with this time constant
            of forgetting (a random walk as fast as the rows resolve it); 0 (the
            default) = no offsets; :data:`~robot_tv_dynamics.estimation.load_config.OFFSET_MEMORY`
            the load's memory [s].
        update_determined: when poorly excited (after the excitation check's warm-up),
            update the directions the rows determine (at rest: the mass and the COM
            across gravity), forgetting only in them, and hold the rest; False holds the
            whole estimate.
        excitation: settings of the excitation check.
    """

    method: str = "geometric"
    noise_std: tuple[float, ...] = ()
    prior_std: tuple[float, float, float] = (1.0, 0.1, 0.01)
    memory: float = 10.0
    huber: float = 2.5
    false_alarm_rate: float = ChangeDetectorConfig.false_alarm_rate
    change_window: float = ChangeDetectorConfig.window
    change_confirm: float = ChangeDetectorConfig.confirm
    margin_fraction: float = 0.25
    upper_factor: float = 5.0
    theta_walk: float = 0.0
    acceleration_cutoff: float = 20.0
    max_gap: float = 0.5
    decimation: int = 1
    projection_period: float = 0.004
    offset_memory: float = 0.0
    update_determined: bool = True
    excitation: ExcitationConfig = field(default_factory=ExcitationConfig)

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        if self.method not in METHODS:
            raise InvalidInputError("method", f'"{self.method}" is not one of {list(METHODS)}')
        if not all(math.isfinite(s) and s > 0 for s in self.noise_std):
            raise InvalidInputError("noise_std", f"need values > 0, got {self.noise_std}")
        if not (0.0 < self.margin_fraction < 1.0):
            raise InvalidInputError(
                "margin_fraction", f"must be in (0, 1), got {self.margin_fraction}")
        if not (math.isfinite(self.memory) and self.memory > 0):
            raise InvalidInputError("memory", f"must be > 0 s, got {self.memory}")
        self.change_detector  # noqa: B018 (checks the detector's ranges)
        if not (math.isfinite(self.offset_memory) and self.offset_memory >= 0):
            raise InvalidInputError(
                "offset_memory", f"must be >= 0 s, got {self.offset_memory}")
        if self.decimation < 1:
            raise InvalidInputError("decimation", f"must be >= 1, got {self.decimation}")

    @property
    def change_detector(self) -> ChangeDetectorConfig:
        """The change detector's settings (raises InvalidInputError when out of range)."""
        return ChangeDetectorConfig(false_alarm_rate=self.false_alarm_rate,
                                    window=self.change_window, confirm=self.change_confirm)


def make_estimator(method: str, phi0: npt.ArrayLike, *, epsilon: float, beta: float,
                   prior_std: tuple[float, float, float], noise_std: float,
                   memory: float = 5.0, theta_walk: float = 0.05,
                   rate_walk: float = 0.5, period: float = 0.005) -> PayloadEstimator:
    """The estimator ``method`` of :data:`METHODS` starting from ``phi0`` (10,).

    Raises:
        InvalidInputError: an unknown method or a setting out of range.
    """
    if method in ("classical", "projected"):
        config = EstimatorConfig(memory=memory, period=period, prior_std=prior_std,
                                 noise_std=noise_std, epsilon=epsilon, beta=beta)
        return RecursiveLeastSquares(phi0, config, projected=method == "projected")
    if method == "geometric":
        return GeometricEKF(phi0, GeometricConfig(
            epsilon=epsilon, prior_std=prior_std, noise_std=noise_std, theta_walk=theta_walk,
            rate_walk=rate_walk, period=period))
    raise InvalidInputError("method", f'"{method}" is not one of {list(METHODS)}')


@dataclass(frozen=True)
class LoadEstimate:
    """The load alone, in its link's frame (the franka ``set_load`` / UR ``set_payload`` shape).

    Attributes:
        phi: Φ_L about the link frame (10,), eq. (7) order.
        mass: m [kg].
        com: centre of mass in the link frame (3,) [m] (zeros when m ≤ 0).
        inertia: inertia about the COM in link axes (3, 3) [kg·m²].
    """

    phi: Array
    mass: float
    com: Array
    inertia: Array


def load_estimate(phi_load: Array) -> LoadEstimate:
    """Mass, COM, inertia about the COM of a load Φ_L (a massless load has COM 0)."""
    mass = float(phi_load[0])
    if mass > 1e-9:
        m, com, inertia = mass_com_inertia_from_phi(phi_load)
        return LoadEstimate(phi_load.copy(), float(m), np.asarray(com), np.asarray(inertia))
    i = phi_load[4:10]
    about_origin = np.array([[i[0], i[3], i[5]], [i[3], i[1], i[4]], [i[5], i[4], i[2]]])
    return LoadEstimate(phi_load.copy(), mass, np.zeros(3), about_origin)


class OnlineLoadEstimator:
    """Samples in, Θ̂ of the arm with the estimated load out (module docstring)."""

    def __init__(self, model: RobotModel, link: str, settings: LoadEstimatorSettings,
                 friction: FrictionParameters | None = None,
                 theta_base: npt.ArrayLike | None = None) -> None:
        """Build the measurement, the excitation check and the estimator.

        The estimate starts at the base model (no load) with the prior of ``settings``.

        Raises:
            UnknownNameError: ``link`` is not in the URDF.
            InvalidInputError: the link is fixed to the world; friction for other joints;
                ``noise_std`` of the wrong length; a setting out of range.
        """
        self.settings = s = settings
        self.measurement = LoadMeasurement(model, link, friction, theta_base)
        nv = model.nv
        noise = np.asarray(s.noise_std if s.noise_std else (0.05,) * nv, dtype=np.float64)
        if noise.size == 1:
            noise = np.full(nv, float(noise[0]))
        if noise.shape != (nv,):
            raise InvalidInputError(
                "noise_std", f"needs 1 or {nv} values (one per joint), got {noise.size}")
        self.noise_std = noise
        self.weights = 1.0 / noise**2
        phi_base = self.measurement.phi_base
        self.epsilon = s.margin_fraction * float(consistency_margin(phi_base))
        self.beta = max(s.upper_factor * float(consistency_size(phi_base)), self.epsilon)
        rms = float(np.sqrt(np.mean(noise**2)))
        self.estimator = LoadFilter(
            s.method, self.measurement.transform, phi_base, self.epsilon, LoadFilterConfig(
                memory=s.memory, prior_std=s.prior_std, huber=s.huber,
                change=s.change_detector, theta_walk=s.theta_walk,
                projection_period=s.projection_period, offset_memory=s.offset_memory))
        self.excitation = ExcitationCheck(s.prior_std, s.excitation, rms)
        self.inputs = ModelInputs(model, InputRules(
            acceleration_cutoff=s.acceleration_cutoff, max_gap=s.max_gap))
        self.delay = self.inputs.qdd_filter_delay
        self._history: deque[tuple[float, Array, Array, Array, tuple[
            Array | None, Array | None, Array | None]]] = deque()
        self.samples = 0
        self.held = 0
        #: poorly excited updates, of the directions the rows determine only
        self.partial = 0
        self.last_update_time: float | None = None
        self.excited = False
        #: samples not used while the q̈ filter settled after a start or a gap
        self.settling = 0
        self._last_stamp: float | None = None
        self._usual_interval: float | None = None
        self._settled_from = -math.inf
        #: stamps of the updates at which a confirmed load change was declared [s]
        self.change_stamps: list[float] = []
        self._alarm_stamp: float | None = None
        #: spans of updates held as contacts, [start, end] stamps (end None: still on) [s]
        self.contact_spans: list[tuple[float, float | None]] = []

    # ------------------------------------------------------------------ samples
    def check_stamp(self, t: float) -> None:
        """Raise InvalidInputError for a zero or non-increasing stamp (nothing changes)."""
        self.inputs.check_stamp(t)

    def add_sample(self, t: float, q: Array, qd: Array, tau: Array,
                   theta_dot: Array | None = None, psi: Array | None = None,
                   psi_dot: Array | None = None) -> bool:
        """Take one sample (stamp checked by :meth:`check_stamp`); True when Φ̂ changed.

        Args:
            t: stamp [s].
            q: joint positions (nv,), finite.
            qd: joint velocities (nv,), finite.
            tau: measured joint efforts (nv,), finite [N·m or N].
            theta_dot: Θ̇ (N, 10) at t when known (e.g. a planned fill) [per s].
            psi: Ψ (N, 12) at t when given (mass flow, eq. (27)).
            psi_dot: Ψ̇ (N, 12) at t.

        With Θ̇ or Ψ the row is the generalized measurement of eq. (39) (the terms
        M(q, Θ̇)q̇ + H(q, Ψ)q̇ + JᵀQ₀Ψ̇ are subtracted); without, the classical one.
        """
        previous = self._last_stamp
        state = self.inputs.sample(t, q, qd, t)
        self._last_stamp = t
        if previous is None or self._is_gap(t - previous):
            # the q̈ filter (re)starts from rest, or ran on interpolated q̇: its
            # transient is not the arm's q̈
            self._settled_from = t + SETTLE_DELAYS * self.delay
        history = self._history
        history.append((t, q, qd, tau, (theta_dot, psi, psi_dot)))
        target = t - self.delay
        while len(history) > 1 and abs(history[1][0] - target) <= abs(history[0][0] - target):
            history.popleft()
        self.samples += 1
        if self.samples % self.settings.decimation:
            return False
        t_d, q_d, qd_d, tau_d, rates = history[0]
        if t - t_d > 2.0 * self.delay + self.settings.max_gap:
            return False  # the delay line is not filled after a gap
        if t < self._settled_from:
            self.settling += 1
            return False
        sample = self.measurement.measure(q_d, qd_d, state.qdd, tau_d, *rates)
        return self.update(t, sample.regressor, sample.y, excitation_bins(qd_d, state.qdd))

    def _is_gap(self, interval: float) -> bool:
        """Whether ``interval`` [s] is a gap (module docstring, step 3).

        An interval that is not one is averaged into the stream's usual interval.
        """
        usual = self._usual_interval
        if interval > self.settings.max_gap or (usual is not None and interval > max(
                GAP_DELAYS * self.delay, GAP_INTERVALS * usual)):
            return True
        self._usual_interval = interval if usual is None else (
            usual + INTERVAL_AVERAGING * (interval - usual))
        return False

    def update(self, t: float, regressor: Array, y: Array,
               bins: npt.NDArray[np.intp] | None = None) -> bool:
        """One block (R_b, y) at time t: the excitation check, then update or hold.

        ``bins``: each row's scale bin of the change detector (None: one bin).
        """
        self.excited = self.excitation.add(regressor, self.weights)
        warming = self.excitation.blocks < self.excitation.config.warmup
        if not self.excited and (warming or not self.settings.update_determined):
            self.held += 1
            return False
        if not self.excited:
            self.partial += 1
        dt = None if self.last_update_time is None else t - self.last_update_time
        self.last_update_time = t
        filt = self.estimator
        alarms, changes = filt.alarms, filt.changes
        filt.update(regressor, y, self.weights, dt=dt if dt and dt > 0 else None, bins=bins,
                    determined_only=not self.excited)
        if filt.alarms > alarms:
            self._alarm_stamp = t
        if filt.changes > changes and self._alarm_stamp is not None:
            self.change_stamps.append(self._alarm_stamp)
        self._track_contact(t, filt.in_contact)
        return True

    def _track_contact(self, t: float, held: bool) -> None:
        open_span = bool(self.contact_spans) and self.contact_spans[-1][1] is None
        if held and not open_span:
            self.contact_spans.append((t, None))
        elif not held and open_span:
            self.contact_spans[-1] = (self.contact_spans[-1][0], t)

    # ------------------------------------------------------------------ outputs
    @property
    def phi_body(self) -> Array:
        """Φ̂_b = Φ_b⁰ + T Φ̂_L of the load body with the *reported* load, body frame."""
        return self.measurement.body_from_load(self.estimator.load_phi)

    @property
    def theta_hat(self) -> Array:
        """Θ̂ (N, 10): the base model with the load body's row, base share + reported load."""
        return self.measurement.theta_hat(self.phi_body)

    @property
    def theta_rate_hat(self) -> Array | None:
        """Θ̂̇ (N, 10), nonzero in the load body's row only; None when the method has none."""
        rate = self.estimator.phi_rate
        if rate is None:
            return None
        out = np.zeros_like(self.measurement.theta_base)
        out[self.measurement.body] = rate
        return out

    @property
    def load(self) -> LoadEstimate:
        """The load alone in the link frame."""
        return load_estimate(self.estimator.load_phi)

    @property
    def margin(self) -> float:
        """λ_min(f(Φ̂_b)) of the load body with the reported load [kg·m² or kg]."""
        return float(consistency_margin(self.phi_body))

    @property
    def raw_margin(self) -> float:
        """λ_min(f) of the estimator's own state (classical: unconstrained, may be < 0)."""
        return self.estimator.margin

    @property
    def mass_std(self) -> float:
        """Standard deviation of the estimated load mass [kg] (the estimator's covariance)."""
        return float(math.sqrt(max(float(self.estimator.load_covariance[0, 0]), 0.0)))

    @property
    def covariance_trace(self) -> float:
        """Trace of the estimator's covariance (its own coordinates)."""
        return float(np.trace(self.estimator.covariance))
