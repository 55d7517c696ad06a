r"""Load-change detection with a stated false-alarm rate: a GLR test in the load's directions.

A load change ΔΦ_L moves the innovations e = y − R Φ̂_L only along the regressor's columns
(e = R ΔΦ_L): the torques of a wrench at the load's link. The test looks there, on the
mass and first moment (m, h): what every grasp or release changes, and what an arm's
motion excites best. Rows are normalized by a scale learned online per joint and per
excitation bin (a real arm's model error grows with |q̈| and near q̇ = 0, where friction
reverses), after a mean μ_j learned online per joint (a real arm's torque offsets drift,
with temperature, by tenths of a N·m over seconds: a bias the test would otherwise read as
a load and, through κ, as correlation): u_j = (e_j − μ_j)/√s_j, a_j = R_j D/√s_j (D = the
prior standard deviations of (m, h)), s_j = v_{b(j), j} + the row's prediction variance.
Over an exponential window of time constant ``window``

.. math::
    b = \sum λ^{n-i} a_i^\top u_i,\quad C = \sum λ^{2(n-i)} a_i^\top a_i,\quad
    g = b^\top C^{-1} b,

g ~ χ²₄ for white unit-variance u and no change. Real residuals are correlated in time
(model error is a function of the state), which inflates g by a factor κ; through the
warm-up κ is the inflation of a residual correlated over 15 ms (≈ 1 + 2τ/Δt at the
updates' mean interval Δt, what a real arm's model error gives), after it κ is learned as
the mean of g/4 over ``baseline`` (each g clipped at the threshold). Not learned in the
warm-up: there the innovations are the estimate's own convergence from its prior, a
transient along the load's columns that would read as correlation and blunt the test for
several ``baseline`` after it. A change is declared when g/κ exceeds the
χ²₄ quantile of 1 − ``false_alarm_rate`` · ``window`` (about one window per ``window``
seconds is an independent test): the false-alarm rate is a parameter, in changes per
second of motion. GLR's estimate of the change, Δ̂ = A⁻¹b (A = Σ λ^{n−i} aᵀa, in prior
standard deviations), says how far the memory should open.

A declared change is *pending* for ``confirm`` seconds: the rows of that span's second
half are tested against the estimate from before the change (the same statistic over
them, uniformly weighted): what persists is a new load, a burst that raised the alarm
and is gone is not.
Confirmed, it counts; not confirmed (the innovations were a burst of model error, not a
new load), the estimator returns to its state from before the alarm.
A change confirmed within ``settle`` of the last new change's declaration continues that
change (its estimate, the memory just opened, still converging towards it): the memory
opens again, but it is not counted as a new change.

Means, scales and κ learn only while no change is suspected (g/κ below half the
threshold, none pending), with each sample's contribution clipped: a new load does not
raise its own threshold.

**A contact is not a load.** A load change, whenever it happens and however it varies,
moves each update's innovations within the span of that update's ten load columns: the
joint torques of some wrench at the load's link. A push elsewhere on the arm adds J_cᵀF,
which need not lie there: on a 7-joint arm the load's wrenches leave out the arm's
self-motion direction (the elbow's swivel), which a push on the forearm generally moves.
Each update's innovations less their projection onto that span, v_i = (I − Q_iQ_iᵀ)u_i
(Q_i an orthonormal basis of the rows' ten columns, normalized as u), are summed over
the window and tested for a torque that persists:

.. math::
    b_v = \sum λ^{n-i} v_i,\quad C_v = \sum λ^{2(n-i)} (I - Q_iQ_i^\top),\quad
    r = b_v^\top C_v^{+} b_v,

χ² (degrees of freedom the rank of C_v: k − 6 while the arm stands still, more as its
configuration turns) for white unit-variance u whatever the load does, inflated by its
own κ_r (learned as κ). When r/κ_r exceeds that χ² quantile at the same rate, the update
is a *contact*: the estimator holds (no update, no learning, no alarm; a pending alarm is
withdrawn) while it lasts, and the windows' evidence starts afresh when it ends, so that
the contact's torques enter neither the estimate nor a later test. Where every joint
torque is some wrench at the load's link (a 6-joint arm, the load at its flange) the
span is everything and the test never fires: there only the confirmation tells a push
(gone within ``confirm``) from a load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# imported with the module, not at the first test: scipy.stats (for chi2) costs 1.5–3 s to
# import, a stall in which a live node loses a burst of samples
from scipy.special import chdtri

from robot_tv_dynamics.exceptions import InvalidInputError, check_ranges
from robot_tv_dynamics.inertia import Array

#: The tested directions: the load's mass and first moment (eq. (7) order, first four).
TESTED = 4
#: Edges of the excitation bins in ‖q̈‖ [rad/s²]; one more bin above the last.
ACCELERATION_EDGES = (0.5, 1.0, 2.0, 4.0, 8.0)
#: A joint slower than this is reversing (its friction is at its least known) [rad/s].
REVERSAL_SPEED = 0.05
#: Bins: acceleration levels, twice (the joint moving / reversing).
N_BINS = 2 * (len(ACCELERATION_EDGES) + 1)
#: The residual's correlation time κ starts from, before it is learned [s].
ASSUMED_CORRELATION = 0.015
#: Pseudo-samples at the user's noise level that start each bin's scale.
_PRIOR_SAMPLES = 20.0


def excitation_bins(qd: npt.ArrayLike, qdd: npt.ArrayLike) -> npt.NDArray[np.intp]:
    """Each joint's scale bin (nv,) of integers in [0, N_BINS): ‖q̈‖ level, reversing or not."""
    qd_a = np.asarray(qd, dtype=np.float64)
    level = int(np.searchsorted(ACCELERATION_EDGES, float(np.linalg.norm(qdd))))
    reversing = np.abs(qd_a) < REVERSAL_SPEED
    return np.asarray(level + (len(ACCELERATION_EDGES) + 1) * reversing, dtype=np.intp)


def change_opening(change: Array, covariance: Array, prior: Array) -> tuple[Array, float]:
    """The covariance a detected change adds to a load's Φ_L, and its share.

    E[ΔΔᵀ] = Δ̂Δ̂ᵀ + Cov(Δ̂) of GLR's change in (m, h) (``change`` (4,) and ``covariance``
    (4, 4) in prior standard deviations), and the inertia's ``prior`` (10, 10) times the
    share, the largest diagonal entry of E[ΔΔᵀ] at most 1 (a load whose mass or first
    moment changes by one prior deviation may change its inertia by as much).
    """
    moment = np.outer(change, change) + covariance
    share = min(1.0, float(np.max(np.diag(moment))))
    std = np.sqrt(np.diag(prior))
    opening = share * prior
    opening[:4, :4] = moment * np.outer(std[:4], std[:4])
    return opening, share


@dataclass(frozen=True)
class ChangeDetectorConfig:
    """Settings of :class:`ChangeDetector`.

    Attributes:
        false_alarm_rate: target rate of false changes [1/s of motion]; 0 = no detector.
        window: time constant of the GLR window [s].
        baseline: time constant of learning the scales and κ [s].
        confirm: a declared change is confirmed or withdrawn after this long [s].
        settle: a change confirmed within this long of the last new change's
            declaration continues that change (the estimate still converging towards
            it): the memory opens again, but it is not a new change [s]; 0 = every
            confirmed change is new.
        warmup: no change is declared in the first this long of updates [s].
        contact_period: the contact test runs on the updates at least this far apart
            (its result holds in between) [s]: at 1 kHz every fourth update.
    """

    false_alarm_rate: float = 1.0 / 600.0
    window: float = 0.1
    baseline: float = 3.0
    confirm: float = 0.3
    settle: float = 1.5
    warmup: float = 1.5
    contact_period: float = 0.004

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        check_ranges(self, positive=("window", "baseline", "confirm"),
                     nonnegative=("settle", "warmup", "contact_period"), unit=" s")
        if not (math.isfinite(self.false_alarm_rate)
                and 0 <= self.false_alarm_rate * self.window < 0.5):
            raise InvalidInputError(
                "false_alarm_rate", f"must be >= 0 and < 0.5/window = {0.5 / self.window:g} "
                f"per s, got {self.false_alarm_rate}")

    @property
    def threshold(self) -> float:
        """The χ²₄ quantile g/κ is compared with (inf when off) [1]."""
        return self.quantile(TESTED)

    def quantile(self, dof: int) -> float:
        """The χ² quantile of ``dof`` degrees of freedom at the stated rate (inf when off)."""
        if self.false_alarm_rate <= 0 or dof <= 0:
            return math.inf
        return float(chdtri(dof, self.false_alarm_rate * self.window))


@dataclass(frozen=True)
class Alarm:
    """GLR's estimate of a change and its covariance, in prior deviations of (m, h) [1].

    Returned when a change is declared (the change over the window), and as
    :class:`Confirmation` when it is confirmed (the change from the estimate before the
    alarm, over the confirmation span).
    """

    change: Array
    covariance: Array

    @property
    def size(self) -> float:
        """Largest |Δ̂| over (m, h), in prior standard deviations [1]."""
        return float(np.max(np.abs(self.change)))


@dataclass(frozen=True)
class Confirmation(Alarm):
    """A pending change confirmed: the change since the state before the alarm.

    ``continues``: declared within ``settle`` of the last new change's declaration, it
    continues that change rather than being a new one.
    """

    continues: bool = False


class ChangeDetector:
    """The GLR test of the module docstring, one instance per estimator."""

    def __init__(self, config: ChangeDetectorConfig, noise_var: npt.ArrayLike,
                 prior_std: npt.ArrayLike) -> None:
        """Start with every bin's scale at the user's noise level and κ = 1.

        Args:
            config: the settings.
            noise_var: each row's noise variance σ_j² (k,) [N·m² or N²].
            prior_std: prior standard deviations of (m, h₁, h₂, h₃) (4,) [kg, kg·m].
        """
        self.config = config
        self.threshold = config.threshold
        var = np.asarray(noise_var, dtype=np.float64)
        self.scales = np.tile(var, (N_BINS, 1))
        #: each row's learned innovation mean μ (k,) [N·m or N]
        self.offsets = np.zeros(var.size)
        self._counts = np.full(N_BINS, _PRIOR_SAMPLES)
        self._d = np.asarray(prior_std, dtype=np.float64)
        #: the statistic's inflation by the residual's time correlation (set from the
        #: first step, then learned) [1]
        self.kappa = math.nan
        self._b = np.zeros(TESTED)
        self._a = np.zeros((TESTED, TESTED))
        self._c = np.zeros((TESTED, TESTED))
        self._time = 0.0
        self._updates = 0
        self._quiet_from = 0.0
        #: g/κ of the last update [1]
        self.statistic = 0.0
        #: time at which the pending change is decided, or None
        self.pending_until: float | None = None
        self._pb = np.zeros(TESTED)
        self._pc = np.zeros((TESTED, TESTED))
        #: declared changes, those withdrawn as not confirmed, and those confirmed as the
        #: continuation of the change before them (``settle``)
        self.alarms = 0
        self.withdrawn = 0
        self.continued = 0
        self._declared = -math.inf  # time of the pending change's declaration [s]
        self._last_change = -math.inf  # declaration time of the last new change [s]
        # the contact test (module docstring): the window's sum of v and its covariance
        self._bw: Array | None = None
        self._aw: Array | None = None
        #: r's inflation by the residual's time correlation (learned as κ) [1]
        self.kappa_r = math.nan
        #: r/κ_r of the last update [1]
        self.rejection = 0.0
        #: whether the last update was a contact (the estimator held)
        self.contact = False
        #: updates held as contacts
        self.contacts = 0
        self._contact_tested = -math.inf  # time of the last contact test [s]
        self._rejection_threshold = math.inf  # the contact test's last quantile
        self._learned = False

    @property
    def settled(self) -> bool:
        """Whether nothing is suspected: what the estimator's torque offsets may follow.

        The last update learned (g/κ below half the threshold, no change pending), no
        confirmed change is settling, and the contact test is below half its quantile.
        (Not held through the warm-up: released at its end, the offsets jumped and the
        detector read the jump as a change on the real Panda recording.)
        """
        return (self._learned and self._time >= self._quiet_from
                and self.rejection < 0.5 * self._rejection_threshold)

    @property
    def enabled(self) -> bool:
        """Whether the test can fire (a finite threshold)."""
        return math.isfinite(self.threshold)

    def _normalized(self, regressor: Array, e: Array, predicted: Array,
                    bins: npt.NDArray[np.intp]) -> tuple[Array, Array, Array]:
        rows = np.arange(e.size)
        s = self.scales[bins, rows] + np.maximum(predicted, 0.0)
        root = np.sqrt(s)
        return regressor[:, :TESTED] * self._d / root[:, None], (e - self.offsets) / root, s

    def step(self, regressor: Array, e: Array, predicted: Array, bins: npt.NDArray[np.intp] | None,
             step: float, e_before: Array | None = None) -> Alarm | bool | None:
        """One update's rows; an :class:`Alarm` when a change is declared.

        Args:
            regressor: the rows in load coordinates (k, 10).
            e: innovations against the current estimate (k,).
            predicted: each row's prediction variance (k,).
            bins: each row's scale bin (k,), None = bin 0.
            step: time since the previous update [s].
            e_before: innovations against the estimate from before the pending change
                (k,), while one is pending.

        Returns:
            An Alarm when a change is declared; a Confirmation / False when a pending
            change is confirmed / withdrawn at this update; else None.
        """
        self._time += step
        self._updates += 1
        self._learned = False
        warming = self._time < self.config.warmup
        if warming or math.isnan(self.kappa):
            # until learned, a residual correlated over ASSUMED_CORRELATION (a real
            # arm's model error): g of n correlated samples is inflated by ≈ 1 + 2τ/Δt,
            # Δt the updates' mean interval (the first update's step is a default); the
            # contact test's Δt is at least its period
            interval = self._time / self._updates
            self.kappa = 1.0 + 2.0 * ASSUMED_CORRELATION / interval
            self.kappa_r = 1.0 + 2.0 * ASSUMED_CORRELATION / max(interval,
                                                                 self.config.contact_period)
        index = np.zeros(e.size, dtype=np.intp) if bins is None else bins
        a, u, s = self._normalized(regressor, e, predicted, index)
        lam = math.exp(-step / self.config.window)
        elapsed = self._time - self._contact_tested
        if elapsed >= self.config.contact_period * (1.0 - 1e-9):
            self._contact_tested = self._time
            elapsed = min(elapsed, self._time)
            lam_test = math.exp(-elapsed / self.config.window)
            if self._contact_test(regressor / np.sqrt(s)[:, None], u, lam_test, elapsed):
                return self._hold_contact()
        elif self.contact:
            return self._hold_contact()  # the last test's verdict holds until the next
        if self.contact:
            # the contact is over: its torques leave the window's evidence at once
            self.contact = False
            self._bw, self._aw = None, None
        self._b = lam * self._b + a.T @ u
        ata = a.T @ a
        self._a = lam * self._a + ata
        self._c = lam * lam * self._c + ata
        ridge = (1e-9 * float(np.trace(self._c)) + 1e-300) * np.eye(TESTED)
        g = float(self._b @ np.linalg.solve(self._c + ridge, self._b))
        self.statistic = g / self.kappa
        if self.pending_until is not None:
            return self._pending(a, e_before if e_before is not None else e, s)
        if warming or self.statistic < 0.5 * self.threshold:
            self._learn(e, index, step)
            self._learned = True
        if not warming:
            self._track_kappa(g, step)
        if (self.statistic > self.threshold and not warming
                and self._time >= self._quiet_from):
            inverse = np.linalg.inv(self._a + ridge)
            change = inverse @ self._b
            covariance = self.kappa * inverse @ self._c @ inverse
            self.alarms += 1
            self._declared = self._time
            self.pending_until = self._time + self.config.confirm
            self._pb = np.zeros(TESTED)
            self._pc = np.zeros((TESTED, TESTED))
            return Alarm(change, 0.5 * (covariance + covariance.T))
        return None

    def _contact_test(self, a: Array, u: Array, lam: float, step: float) -> bool:
        """Add the rows' unexplained part to the test; whether r/κ_r is above its quantile.

        ``a``: the rows' ten load columns (k, 10), ``u`` the innovations (k,), normalized.
        """
        k = u.size
        if self._bw is None or self._bw.shape != u.shape:
            self._bw, self._aw = np.zeros(k), np.zeros((k, k))
        assert self._aw is not None
        # the torques any load makes at this sample: the span of its rows' ten columns
        vectors, values, _ = np.linalg.svd(a, full_matrices=False)
        basis = vectors[:, values > 1e-3 * max(float(values[0]), 1e-300)]
        self._bw = lam * self._bw + (u - basis @ (basis.T @ u))
        self._aw = lam * lam * self._aw + (np.eye(k) - basis @ basis.T)
        values, vectors = np.linalg.eigh(self._aw)
        kept = values > 1e-3 * max(float(values[-1]), 1e-300)
        dof = int(np.count_nonzero(kept))
        if dof == 0:
            return False
        z = vectors[:, kept].T @ self._bw
        r = float(np.sum(z * z / values[kept]))
        threshold = self.config.quantile(dof)
        self._rejection_threshold = threshold
        self.rejection = r / self.kappa_r
        if self._time >= self.config.warmup and self.rejection > threshold:
            return True
        if self.pending_until is None and self.statistic < 0.5 * self.threshold:
            rate = min(1.0, step / self.config.baseline)
            target = min(r, self.kappa_r * threshold) / dof
            self.kappa_r = max(1.0, self.kappa_r + rate * (target - self.kappa_r))
        return False

    def _hold_contact(self) -> bool | None:
        """A contact: no load evidence gathers; a pending alarm is withdrawn (False).

        The contact test's own sums go on (the contact lasts while they say so) and
        start afresh when it ends.
        """
        self.contact = True
        self.contacts += 1
        self._b = np.zeros(TESTED)
        self._a = np.zeros((TESTED, TESTED))
        self._c = np.zeros((TESTED, TESTED))
        self.statistic = 0.0
        if self.pending_until is None:
            return None
        self.pending_until = None
        self.withdrawn += 1
        return False

    def _pending(self, a: Array, e_before: Array, s: Array) -> Confirmation | bool | None:
        until = self.pending_until
        if until is not None and self._time >= until - 0.5 * self.config.confirm:
            # the span's second half: what persists, not the burst that raised the alarm
            self._pb += a.T @ ((e_before - self.offsets) / np.sqrt(s))
            self._pc += a.T @ a
        if until is None or self._time < until:
            return None
        ridge = (1e-9 * float(np.trace(self._pc)) + 1e-300) * np.eye(TESTED)
        inverse = np.linalg.inv(self._pc + ridge)
        g = float(self._pb @ inverse @ self._pb) / self.kappa
        self.pending_until = None
        # the estimate starts afresh from here: so does the evidence against it
        self._b = np.zeros(TESTED)
        self._a = np.zeros((TESTED, TESTED))
        self._c = np.zeros((TESTED, TESTED))
        if g > self.threshold:
            # the memory opens again now: its estimate needs time to settle before its
            # innovations say anything about a next change
            self._quiet_from = self._time + self.config.confirm
            continues = self._declared - self._last_change < self.config.settle
            if continues:
                self.continued += 1
            else:
                self._last_change = self._declared
            return Confirmation(inverse @ self._pb, self.kappa * 0.5 * (inverse + inverse.T),
                                continues)
        self.withdrawn += 1
        return False

    def _learn(self, e: Array, bins: npt.NDArray[np.intp], step: float) -> None:
        rows = np.arange(e.size)
        base = self.config.baseline
        # the mean over every bin, each sample clipped at 3 of its bin's deviations
        bound = 3.0 * np.sqrt(self.scales[bins, rows])
        self.offsets += min(1.0, step / base) * (
            np.clip(e - self.offsets, -bound, bound))
        centred = e - self.offsets
        for b in np.unique(bins):
            mask = bins == b
            self._counts[b] += 1.0
            rate = max(step / base, 1.0 / self._counts[b])
            current = self.scales[b, rows[mask]]
            sample = np.minimum(centred[mask] ** 2, 9.0 * current)
            self.scales[b, rows[mask]] = current + rate * (sample - current)

    def _track_kappa(self, g: float, step: float) -> None:
        # κ is the mean of g/4, each g clipped at the threshold (a change or a burst
        # moves it by at most its share of the baseline)
        rate = min(1.0, step / self.config.baseline)
        target = min(g, self.kappa * self.threshold) / TESTED
        self.kappa = max(1.0, self.kappa + rate * (target - self.kappa))
