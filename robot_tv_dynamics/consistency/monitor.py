r"""Uniform physical consistency of Θ(t), watched sample by sample (Definition 3).

For each body l the monitor tracks

- the margin μ_l(t) = λ_min(f(Φ_l(t))) and the size ν_l(t) = λ_max(f(Φ_l(t))) of the
  pseudo-inertia f of eq. (9) (Theorem 1: Φ_l is physically consistent iff μ_l > 0),
  and their running inf/sup since the start (kept by
  :class:`~robot_tv_dynamics.consistency.statistics.ConsistencyTracker`);
- the rate r_l(t) = σ_max(f(Φ̇_l(t))) (f is linear, so f(Φ̇) = d f(Φ)/dt), from a
  given Θ̇ or from filtered differences of Θ
  (:class:`~robot_tv_dynamics.filters.DerivativeFilter`);
- a prediction of the time until μ_l reaches ε_l, from a least-squares line through
  the samples of the last ``trend_window`` seconds (only when the line falls
  significantly: its slope beyond ``trend_significance`` standard errors, so that noise
  alone predicts nothing).

Uniform consistency asks inf_t μ_l > 0, i.e. μ_l ≥ ε_l > 0 for some ε_l; the monitor
takes ε_l = ``margin_fraction`` · μ_l(nominal) (the URDF's Θ), or ``uniform_margin`` for
every body when that is set. Upper boundedness asks sup_t ν_l < ∞; the monitor takes
U_l = ``upper_bound``, or ``upper_factor`` · ν_l(nominal). These are the quantities
the mass-matrix bounds α₁, α₂ of Theorems 2–3 are built from.

Levels (per body; the worst active condition wins):

========  ==========================================================================
ERROR     μ_l ≤ 0 (inconsistent), μ_l < ε_l, ν_l > U_l, or r_l > R (``rate_bound``)
WARN      μ_l < (1 + b) ε_l, ν_l > U_l/(1 + b), r_l > R/(1 + b) (warn band b =
          ``warn_band``), or μ_l predicted to reach ε_l within ``horizon`` seconds
OK        none of these
========  ==========================================================================

Hysteresis: a condition that is active clears only once its quantity is past the
threshold by the factor (1 + ``hysteresis``) (μ ≥ (1 + h)·threshold for lower
thresholds, ≤ threshold/(1 + h) for upper ones, predicted time > (1 + h)·horizon), so
a margin that jitters around a threshold changes level once, not at every sample.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics import limits
from robot_tv_dynamics.consistency.statistics import ConsistencyTracker, spectral_statistics
from robot_tv_dynamics.exceptions import InvalidInputError, check_ranges
from robot_tv_dynamics.filters import DerivativeFilter
from robot_tv_dynamics.inertia import Array, check_finite
from robot_tv_dynamics.status import Level


@dataclass(frozen=True)
class MonitorConfig:
    """Thresholds of the consistency monitor (see the module docstring).

    Attributes:
        margin_fraction: ε_l = margin_fraction · μ_l(nominal) [1], in [0, 1].
        uniform_margin: when > 0, ε_l = uniform_margin for every body [kg·m² or kg].
        upper_bound: when > 0, U_l = upper_bound for every body [kg·m² or kg].
        upper_factor: when ``upper_bound`` is 0, U_l = upper_factor · ν_l(nominal);
            0 disables the upper check [1].
        rate_bound: R, bound on σ_max(f(Φ̇_l)) [per s]; 0 disables the rate check.
        warn_band: b, relative width of the WARN band in front of each threshold [1].
        horizon: WARN when μ_l is predicted to reach ε_l within this time [s];
            0 disables the prediction.
        trend_window: length of the line fit that predicts the crossing [s].
        min_trend_samples: fewest samples in the window for a prediction.
        trend_significance: a falling trend counts only when its slope exceeds this many
            standard errors of the fit (noise alone does not predict a crossing).
        hysteresis: h, relative distance past a threshold before a condition clears.
        rate_cutoff: corner frequency of the differencing filter for Θ̇ when no rate
            is given [Hz].
        max_gap: a gap between samples longer than this restarts the Θ̇ filter [s].
    """

    margin_fraction: float = 0.1
    uniform_margin: float = 0.0
    upper_bound: float = 0.0
    upper_factor: float = 10.0
    rate_bound: float = 0.0
    warn_band: float = 1.0
    horizon: float = 2.0
    trend_window: float = 2.0
    min_trend_samples: int = 5
    trend_significance: float = 3.0
    hysteresis: float = 0.1
    rate_cutoff: float = 5.0
    max_gap: float = 1.0

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of its range.
        """
        nonneg = ("uniform_margin", "upper_bound", "upper_factor", "rate_bound", "warn_band",
                  "horizon", "hysteresis", "trend_significance")
        check_ranges(self, nonnegative=nonneg)
        if not 0.0 <= self.margin_fraction <= 1.0:
            raise InvalidInputError(
                "margin_fraction", f"must be in [0, 1], got {self.margin_fraction}")
        check_ranges(self, positive=("trend_window", "rate_cutoff", "max_gap"))
        if self.min_trend_samples < 2:
            raise InvalidInputError(
                "min_trend_samples", f"must be >= 2, got {self.min_trend_samples}")


@dataclass(frozen=True)
class BodyStatus:
    """The monitor's view of one body after the latest sample.

    Attributes:
        name: body name.
        level: worst active condition.
        reasons: one sentence per active condition (empty when OK).
        mu: μ_l = λ_min(f(Φ_l)) [kg·m² or kg].
        nu: ν_l = λ_max(f(Φ_l)).
        epsilon: ε_l.
        upper: U_l (inf when unchecked).
        inf_mu: running inf of μ_l.
        sup_nu: running sup of ν_l.
        rate: σ_max(f(Φ̇_l)) [per s].
        time_to_crossing: predicted time until μ_l = ε_l [s] (inf: not approaching).
    """

    name: str
    level: Level
    reasons: tuple[str, ...]
    mu: float
    nu: float
    epsilon: float
    upper: float
    inf_mu: float
    sup_nu: float
    rate: float
    time_to_crossing: float

    @property
    def message(self) -> str:
        """One line: the reasons, or that all is well."""
        if not self.reasons:
            return "uniformly consistent: margin above epsilon, size and rate bounded"
        return "; ".join(self.reasons)


@dataclass(frozen=True)
class Transition:
    """A change of one body's level, reported once when it happens.

    Attributes:
        index: body index (row of Θ).
        name: body name.
        previous: level before.
        level: level now.
        reasons: the active conditions now.
        time: stamp of the sample [s].
    """

    index: int
    name: str
    previous: Level
    level: Level
    reasons: tuple[str, ...] = field(default=())
    time: float = 0.0

    @property
    def message(self) -> str:
        """A log line: ``body panda_link7: OK -> ERROR (margin ... below epsilon ...)``."""
        why = "; ".join(self.reasons) if self.reasons else "all conditions cleared"
        return f"body {self.name}: {self.previous.name} -> {self.level.name} ({why})"


# condition rows of the state array
_INCONSISTENT, _BELOW_EPS, _ABOVE_UPPER, _RATE, _WARN_LOW, _WARN_HIGH, _WARN_RATE, _TREND = (
    range(8))
_ERROR_ROWS = (_INCONSISTENT, _BELOW_EPS, _ABOVE_UPPER, _RATE)


class ConsistencyMonitor:
    """Per-body uniform consistency of a stream Θ(t) (see the module docstring)."""

    def __init__(
        self,
        body_names: Sequence[str],
        theta_nominal: npt.ArrayLike,
        config: MonitorConfig | None = None,
        capacity: int = 1024,
    ) -> None:
        """Build the monitor.

        Args:
            body_names: N body names, in Θ row order.
            theta_nominal: the nominal Θ (N, 10) that ε_l and U_l are relative to.
            config: thresholds; defaults when None.
            capacity: most samples kept for the trend fit (older ones are dropped
                even inside ``trend_window``).
        """
        self.body_names = list(body_names)
        self.n_bodies = len(self.body_names)
        self.config = config if config is not None else MonitorConfig()
        self._capacity = int(capacity)
        self._rate_filter = DerivativeFilter(self.config.rate_cutoff, self.config.max_gap)
        self._tracker = ConsistencyTracker(self.n_bodies)
        self.set_nominal(theta_nominal)
        self.reset()

    # ------------------------------------------------------------------ set-up
    def set_nominal(self, theta_nominal: npt.ArrayLike) -> None:
        """Recompute ε_l and U_l from a new nominal Θ (e.g. after a URDF swap)."""
        theta = check_finite(theta_nominal, "theta_nominal", (self.n_bodies, 10))
        self._theta_nominal = theta
        cfg = self.config
        mu, nu, _ = spectral_statistics(theta)
        self.nominal_mu, self.nominal_nu = mu, nu
        if cfg.uniform_margin > 0.0:
            self.epsilon: Array = np.full(self.n_bodies, cfg.uniform_margin)
        else:
            self.epsilon = np.maximum(cfg.margin_fraction * mu, 0.0)
        if cfg.upper_bound > 0.0:
            self.upper: Array = np.full(self.n_bodies, cfg.upper_bound)
        elif cfg.upper_factor > 0.0:
            self.upper = cfg.upper_factor * np.maximum(nu, 0.0)
        else:
            self.upper = np.full(self.n_bodies, np.inf)
        self.rate_bound = cfg.rate_bound if cfg.rate_bound > 0.0 else math.inf
        # a body the URDF gives no consistent inertia (a massless link: μ = 0) has no
        # ε_l > 0 to hold it to; it is reported, not alarmed, unless uniform_margin is set
        self.monitored = (mu > 0.0) | (cfg.uniform_margin > 0.0)

    def set_upper(self, body: int, bound: float) -> None:
        """Hold one body to its own size bound U_l (e.g. from a rated payload).

        Stays until the next :meth:`set_nominal`; the next sample is judged against it.

        Raises:
            InvalidInputError: a bound that is not > 0, or a body out of range.
        """
        if not (0 <= body < self.n_bodies):
            raise InvalidInputError("body", f"{body} is not in [0, {self.n_bodies})")
        if not (bound > 0.0):
            raise InvalidInputError("upper", f"must be > 0, got {bound}")
        upper = self.upper.copy()
        upper[body] = bound
        self.upper = upper

    def set_config(self, config: MonitorConfig) -> None:
        """Judge with new thresholds from the next sample on; the statistics are kept.

        ε_l and U_l are recomputed from the nominal Θ; the Θ̇ filter restarts when its
        corner or gap changes.
        """
        if (config.rate_cutoff, config.max_gap) != (self.config.rate_cutoff, self.config.max_gap):
            self._rate_filter = DerivativeFilter(config.rate_cutoff, config.max_gap)
        self.config = config
        self.set_nominal(self._theta_nominal)

    def reset(self) -> None:
        """Forget every sample: running inf/sup, trend, levels."""
        n = self.n_bodies
        self.time: float | None = None
        self.samples = 0
        self.mu: Array = np.full(n, np.nan)
        self.nu: Array = np.full(n, np.nan)
        self.rate: Array = np.zeros(n)
        self.inf_mu: Array = np.full(n, np.inf)
        self.sup_nu: Array = np.full(n, -np.inf)
        self.time_to_crossing: Array = np.full(n, np.inf)
        self.active = np.zeros((8, n), dtype=bool)
        self.levels: npt.NDArray[np.int64] = np.full(n, int(Level.OK), dtype=np.int64)
        self._times = np.full(self._capacity, -np.inf)
        self._mus = np.zeros((self._capacity, n))
        self._head = 0
        self._rate_filter.reset()
        self._tracker.reset()

    # ------------------------------------------------------------------ update
    def update(
        self, t: float, theta: npt.ArrayLike, theta_dot: npt.ArrayLike | None = None
    ) -> list[Transition]:
        """Take one sample of Θ(t) and return the level changes it causes.

        Args:
            t: sample time [s]; must not decrease.
            theta: Θ(t), (N, 10), eq. (7) order [kg, kg·m, kg·m²].
            theta_dot: Θ̇(t), (N, 10) [per s]; None = filtered differences of Θ.

        Returns:
            One :class:`Transition` per body whose level changed (empty otherwise).

        Raises:
            InvalidInputError: wrong shape, non-finite values, or ``t`` going backwards;
                the monitor's state is unchanged then.
        """
        theta = limits.check_bounded(
            check_finite(theta, "theta", (self.n_bodies, 10)), limits.THETA, "theta",
            self.body_names)
        if theta_dot is not None:
            theta_dot = limits.check_bounded(
                check_finite(theta_dot, "theta_dot", (self.n_bodies, 10)), limits.THETA_RATE,
                "theta_dot", self.body_names)
        if not math.isfinite(t):
            raise InvalidInputError("t", f"stamp is not finite ({t})")
        if self.time is not None and t < self.time:
            raise InvalidInputError(
                "t", f"stamp goes backwards ({t:.9f} s < {self.time:.9f} s)")
        # validate before mutate: everything below works on copies that replace the
        # monitor's state only once the sample has been taken without an error
        saved = {key: copy.copy(value) for key, value in vars(self).items()
                 if key not in ("config", "body_names", "_times", "_mus")}
        head = self._head
        slot = (self._times[head], self._mus[head].copy())
        try:
            estimated = self._rate_filter.update(t, theta, checked=True)
            rates = theta_dot if theta_dot is not None else estimated
            snapshot = self._tracker.update(theta, rates)
            if not (np.isfinite(snapshot.margin).all() and np.isfinite(snapshot.size).all()
                    and not np.isnan(snapshot.rate).any()):
                raise InvalidInputError("theta", "margins, sizes or rates are not finite")
            self.time = float(t)
            self.samples += 1
            self.mu, self.nu, self.rate = snapshot.margin, snapshot.size, snapshot.rate
            self.inf_mu, self.sup_nu = snapshot.inf_margin, snapshot.sup_size
            self._push(t, self.mu)
            self.time_to_crossing = self._predict(t)
            return self._evaluate(t)
        except BaseException:
            vars(self).update(saved)
            self._times[head], self._mus[head] = slot
            raise

    def _push(self, t: float, mu: Array) -> None:
        self._times[self._head] = t
        self._mus[self._head] = mu
        self._head = (self._head + 1) % self._capacity

    def _predict(self, t: float) -> Array:
        """Time until the fitted line of μ_l reaches ε_l [s]; inf if not approaching."""
        cfg = self.config
        out = np.full(self.n_bodies, np.inf)
        mask = self._times >= t - cfg.trend_window
        count = int(mask.sum())
        if cfg.horizon <= 0.0 or count < cfg.min_trend_samples:
            return out
        times = self._times[mask] - t
        span = times.max() - times.min()
        if span < 0.5 * cfg.trend_window:  # a short fit of a noisy margin predicts nothing
            return out
        mus = self._mus[mask]
        tm = times.mean()
        dt = times - tm
        sxx = dt @ dt
        mean = mus.mean(axis=0)
        slope = (dt @ (mus - mean)) / sxx
        now = mean - slope * tm  # fitted value at t (times are relative to t)
        residual = mus - (mean + dt[:, None] * slope)
        stderr = np.sqrt(np.sum(residual**2, axis=0) / max(count - 2, 1) / sxx)
        falling = slope < -cfg.trend_significance * stderr
        gap = now - self.epsilon
        out[falling] = np.maximum(gap[falling], 0.0) / -slope[falling]
        return out

    def _evaluate(self, t: float) -> list[Transition]:
        cfg = self.config
        h, b = cfg.hysteresis, cfg.warn_band
        act = self.active
        mu, nu, rate, eps, upper = self.mu, self.nu, self.rate, self.epsilon, self.upper

        def below(row: int, value: Array, threshold: Array | float) -> None:
            act[row] = np.where(act[row], value < threshold * (1.0 + h), value < threshold)

        def above(row: int, value: Array, threshold: Array | float) -> None:
            act[row] = np.where(act[row], value > threshold / (1.0 + h), value > threshold)

        act[_INCONSISTENT] = mu <= 0.0
        below(_BELOW_EPS, mu, eps)
        above(_ABOVE_UPPER, nu, upper)
        above(_RATE, rate, self.rate_bound)
        below(_WARN_LOW, mu, eps * (1.0 + b))
        above(_WARN_HIGH, nu, upper / (1.0 + b))
        above(_WARN_RATE, rate, self.rate_bound / (1.0 + b))
        if cfg.horizon > 0.0:
            below(_TREND, self.time_to_crossing, cfg.horizon)
        else:
            act[_TREND] = False
        act[:, ~self.monitored] = False
        levels = np.where(
            act[list(_ERROR_ROWS)].any(axis=0), int(Level.ERROR),
            np.where(act.any(axis=0), int(Level.WARN), int(Level.OK)))
        changed = np.flatnonzero(levels != self.levels)
        transitions = [
            Transition(
                index=int(l), name=self.body_names[l], previous=Level(int(self.levels[l])),
                level=Level(int(levels[l])), reasons=self.reasons(int(l)), time=float(t))
            for l in changed
        ]
        self.levels = levels
        return transitions

    # ------------------------------------------------------------------ read-out
    def reasons(self, l: int) -> tuple[str, ...]:
        """The active conditions of body ``l`` as sentences with the numbers."""
        if not self.monitored[l]:
            return (f"not monitored: the nominal (URDF) inertia is not consistent (margin "
                    f"{self.nominal_mu[l]:.4g} <= 0, e.g. a massless link); set "
                    "uniform_margin to monitor it",)
        act = self.active[:, l]
        mu, nu, eps, upper = self.mu[l], self.nu[l], self.epsilon[l], self.upper[l]
        rate, b = self.rate[l], self.config.warn_band
        # per quantity, the most severe active condition speaks (error before warn)
        quantities = (
            ((_INCONSISTENT, f"inconsistent: margin {mu:.4g} <= 0 (f(Phi) not positive "
                             "definite)"),
             (_BELOW_EPS, f"margin {mu:.4g} below epsilon {eps:.4g}"),
             (_WARN_LOW, f"margin {mu:.4g} in the warn band (< {(1 + b) * eps:.4g})")),
            ((_ABOVE_UPPER, f"size {nu:.4g} above the upper bound {upper:.4g}"),
             (_WARN_HIGH, f"size {nu:.4g} in the warn band (> {upper / (1 + b):.4g})")),
            ((_RATE, f"rate {rate:.4g}/s above the rate bound {self.rate_bound:.4g}/s"),
             (_WARN_RATE, f"rate {rate:.4g}/s in the warn band "
                          f"(> {self.rate_bound / (1 + b):.4g}/s)")),
        )
        out = [next(text for flag, text in conditions if act[flag])
               for conditions in quantities if any(act[flag] for flag, _ in conditions)]
        if act[_TREND] and not (act[_INCONSISTENT] or act[_BELOW_EPS]):
            out.append(
                f"margin predicted to reach epsilon in {self.time_to_crossing[l]:.3g} s "
                f"(horizon {self.config.horizon:.3g} s)")
        return tuple(out)

    def status(self, l: int) -> BodyStatus:
        """The :class:`BodyStatus` of body ``l``."""
        return BodyStatus(
            name=self.body_names[l], level=Level(int(self.levels[l])), reasons=self.reasons(l),
            mu=float(self.mu[l]), nu=float(self.nu[l]), epsilon=float(self.epsilon[l]),
            upper=float(self.upper[l]), inf_mu=float(self.inf_mu[l]),
            sup_nu=float(self.sup_nu[l]), rate=float(self.rate[l]),
            time_to_crossing=float(self.time_to_crossing[l]),
        )

    def statuses(self) -> list[BodyStatus]:
        """Every body's :class:`BodyStatus`, in Θ row order."""
        return [self.status(l) for l in range(self.n_bodies)]

    def table(self) -> Array:
        """Per body (N, 8): μ, ν, ε, level, inf μ, sup ν, rate, time to crossing."""
        return np.column_stack([
            self.mu, self.nu, self.epsilon, self.levels.astype(np.float64), self.inf_mu,
            self.sup_nu, self.rate, self.time_to_crossing,
        ])


#: Column labels of :meth:`ConsistencyMonitor.table`.
TABLE_FIELDS = (
    "mu", "nu", "epsilon", "level", "inf_mu", "sup_nu", "rate", "time_to_crossing",
)
