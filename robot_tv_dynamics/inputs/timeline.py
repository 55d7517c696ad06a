r"""Θ(t), Θ̇(t), Ψ(t), Ψ̇(t) keyed by the time they refer to: the pairing rule by stamp.

A quantity that changes in time (Θ of the bodies, or Ψ) arrives as samples stamped with
the time the value refers to, at its own rate, late and jittered, possibly out of
order. :class:`StampedSeries` holds them sorted by stamp and answers "the value at the
stamp t of a joint sample" by one rule, the same online (a node) and offline (a bag):

- **t inside the samples** (t₀ ≤ t ≤ tₙ): linear interpolation between the bracketing
  samples tₖ₋₁ < t ≤ tₖ (a sample stamped exactly t is returned exactly);
- **rate**: where both bracketing samples carry a published rate, the rates are
  interpolated the same way; otherwise the slope of the bracketing segment,
  (vₖ − vₖ₋₁)/(tₖ − tₖ₋₁) (at t = tₖ the segment ending at tₖ: the rule is causal, so a
  later sample never changes an answer already given); zero at the first sample;
- **t after the newest sample** (Θ behind the joint samples): the newest value held,
  its published rate or zero, status :data:`HELD` while ``t − tₙ ≤ max_age`` and
  :data:`STALE` beyond;
- **t before the oldest sample held** (Θ ahead of the joint samples, or history
  trimmed): the oldest value, its rate or zero, status :data:`AHEAD`;
- **no sample yet**: status :data:`EMPTY` (the caller keeps its default).

A quantity that must not be interpolated (a monitor's level, a count) is looked up with
:meth:`StampedSeries.at_or_before` instead: the newest sample stamped at or before t,
held (:data:`EXACT` at its own stamp, else :data:`HELD` / :data:`STALE` by ``max_age``
since it; :data:`AHEAD` with the oldest when every sample is after t).

Stamps are seconds since an epoch the caller picks (:func:`seconds_since` from integer
nanoseconds): Unix seconds as a float resolve only ~0.2 µs, and interpolation would
turn that into a value error of slope × 0.2 µs.

A node that wants the interpolated answer waits until :meth:`StampedSeries.covers` the
sample's stamp, at most ``window`` seconds of joint-sample time
(:meth:`StampedSeries.lag` says how far behind the series is); after that it answers
with the held value and reports the status. Samples older than ``history`` before the
newest are dropped. Pure NumPy; no ROS.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from robot_tv_dynamics.arrays import Array, check_finite
from robot_tv_dynamics.exceptions import InvalidInputError, check_ranges

#: Status of a lookup: a sample at exactly this stamp.
EXACT = "exact"
#: Interpolated between two bracketing samples.
INTERPOLATED = "interpolated"
#: After the newest sample, within ``max_age``: the newest value held.
HELD = "held"
#: After the newest sample by more than ``max_age``: held, but stale.
STALE = "stale"
#: Before the oldest sample held: the series runs ahead of the joint samples.
AHEAD = "ahead"
#: No sample yet.
EMPTY = "empty"


def seconds_since(stamp_ns: int, epoch_ns: int) -> float:
    """(stamp − epoch) in seconds [s], exact in integers before the one rounding."""
    return (stamp_ns - epoch_ns) * 1e-9


@dataclass(frozen=True)
class TimelineRules:
    """How long samples are held, waited for and kept.

    Attributes:
        max_age: a value held past the newest sample by more than this is stale [s].
        window: how far (in joint-sample time) a node waits for a sample at or after a
            joint sample's stamp before it answers with the held value [s].
        history: samples older than the newest by more than this are dropped [s].
    """

    max_age: float = 0.5
    window: float = 0.05
    history: float = 2.0

    def __post_init__(self) -> None:
        """Check the durations.

        Raises:
            InvalidInputError: a negative or non-finite duration, or a history shorter
                than the window.
        """
        check_ranges(self, nonnegative=("max_age", "window", "history"), unit=" s")
        if self.history < self.window:
            raise InvalidInputError(
                "history", f"({self.history} s) is shorter than the window ({self.window} s)")


@dataclass(frozen=True)
class Lookup:
    """The answer of :meth:`StampedSeries.at`.

    Attributes:
        value: the value at the stamp (a new array).
        rate: its rate [value unit per s] (a new array).
        status: one of :data:`EXACT`, :data:`INTERPOLATED`, :data:`HELD`,
            :data:`STALE`, :data:`AHEAD`, :data:`EMPTY`.
        lag: the stamp minus the newest sample's stamp [s] (> 0: the series is behind;
            −inf when empty).
        rate_published: whether the rate came from published rates (else from stamps).
    """

    value: Array | None
    rate: Array | None
    status: str
    lag: float
    rate_published: bool


class StampedSeries:
    """Samples of one array quantity sorted by stamp (module docstring: the rule)."""

    def __init__(self, shape: tuple[int, ...], rules: TimelineRules | None = None,
                 name: str = "series") -> None:
        """An empty series.

        Args:
            shape: shape of every value (e.g. (N, 10) for Θ).
            rules: ages and windows; defaults when None.
            name: the quantity, for error messages (e.g. ``"inertial_parameters"``).
        """
        self.shape = tuple(shape)
        self.rules = rules if rules is not None else TimelineRules()
        self.name = name
        self._stamps: list[float] = []
        self._values: list[Array] = []
        self._rates: list[Array | None] = []
        #: undo records of the changes since the outermost open :meth:`snapshot`
        self._journal: list[tuple[str, int, Any]] | None = None

    def snapshot(self) -> int:
        """A mark to :meth:`restore` to; changes are journaled until :meth:`release`.

        ``ModelInputs.transaction`` takes one per joint sample (O(1); an :meth:`add`
        inside it records how to undo itself). Marks nest.
        """
        if self._journal is None:
            self._journal = []
        return len(self._journal)

    def restore(self, mark: int) -> None:
        """Undo every change made since ``mark`` (a :meth:`snapshot`), newest first."""
        journal = self._journal or []
        while len(journal) > mark:
            kind, k, saved = journal.pop()
            if kind == "replace":
                self._values[k], self._rates[k] = saved
            elif kind == "insert":
                del self._stamps[k], self._values[k], self._rates[k]
            else:  # "cut": the oldest samples dropped, put back in front
                stamps, values, rates = saved
                self._stamps[:0], self._values[:0], self._rates[:0] = stamps, values, rates
        self.release(mark)

    def release(self, mark: int) -> None:
        """Keep the changes since ``mark``; the outermost mark (0) ends the journal."""
        if mark == 0:
            self._journal = None

    def __len__(self) -> int:
        """Number of samples held."""
        return len(self._stamps)

    @property
    def newest(self) -> float:
        """Stamp of the newest sample [s] (−inf when empty)."""
        return self._stamps[-1] if self._stamps else -math.inf

    def add(self, stamp: float, value: Array, rate: Array | None = None) -> None:
        """Insert a sample at its stamp (any arrival order; a repeated stamp replaces).

        Args:
            stamp: the time the value refers to, since the caller's epoch [s], finite.
            value: the value, of the series' shape.
            rate: its published rate, or None (then rates come from stamps).

        Raises:
            InvalidInputError: a non-finite stamp, a stamp older than the
                history kept, a value or rate of the wrong shape or not finite (nothing
                changes).
        """
        if not math.isfinite(stamp):
            raise InvalidInputError(f"{self.name}.header.stamp",
                                    f"must be finite (got {stamp})")
        value = np.array(check_finite(value, self.name, self.shape), dtype=np.float64)
        if rate is not None:
            rate = np.array(check_finite(rate, f"{self.name} rate", self.shape),
                            dtype=np.float64)
        if self._stamps and stamp < self._stamps[-1] - self.rules.history:
            raise InvalidInputError(
                f"{self.name}.header.stamp",
                f"{stamp:.9f} s is older than the history kept ({self.rules.history:g} s "
                f"before the newest sample, {self._stamps[-1]:.9f} s)")
        journal = self._journal
        k = bisect.bisect_left(self._stamps, stamp)
        if k < len(self._stamps) and self._stamps[k] == stamp:
            if journal is not None:
                journal.append(("replace", k, (self._values[k], self._rates[k])))
            self._values[k], self._rates[k] = value, rate
            return
        self._stamps.insert(k, stamp)
        self._values.insert(k, value)
        self._rates.insert(k, rate)
        if journal is not None:
            journal.append(("insert", k, None))
        cut = bisect.bisect_left(self._stamps, self._stamps[-1] - self.rules.history)
        if cut > 0:
            if journal is not None:
                journal.append(("cut", cut, (self._stamps[:cut], self._values[:cut],
                                             self._rates[:cut])))
            del self._stamps[:cut], self._values[:cut], self._rates[:cut]

    def lag(self, t: float) -> float:
        """The stamp t minus the newest sample's stamp [s] (> 0: behind; −inf when empty)."""
        return t - self._stamps[-1] if self._stamps else -math.inf

    def covers(self, t: float) -> bool:
        """Whether a sample at or after t is held (the answer at t is final)."""
        return bool(self._stamps) and self._stamps[-1] >= t

    def at(self, t: float) -> Lookup:
        """The value and rate at stamp t by the rule of the module docstring."""
        stamps = self._stamps
        if not stamps:
            return Lookup(None, None, EMPTY, -math.inf, False)
        lag = t - stamps[-1]
        k = bisect.bisect_left(stamps, t)  # stamps[k-1] < t <= stamps[k]
        if k == len(stamps):
            rate = self._rates[-1]
            status = HELD if lag <= self.rules.max_age else STALE
            return Lookup(self._values[-1].copy(), self._held_rate(rate), status, lag,
                          rate is not None)
        if stamps[k] == t:
            return self._exact(k, lag)
        if k == 0:
            rate = self._rates[0]
            return Lookup(self._values[0].copy(), self._held_rate(rate), AHEAD, lag,
                          rate is not None)
        t0, t1 = stamps[k - 1], stamps[k]
        s = (t - t0) / (t1 - t0)
        v0, v1 = self._values[k - 1], self._values[k]
        value = v0 + s * (v1 - v0)
        r0, r1 = self._rates[k - 1], self._rates[k]
        if r0 is not None and r1 is not None:
            return Lookup(value, r0 + s * (r1 - r0), INTERPOLATED, lag, True)
        return Lookup(value, (v1 - v0) / (t1 - t0), INTERPOLATED, lag, False)

    def at_or_before(self, t: float) -> Lookup:
        """The newest sample stamped at or before t, held (no interpolation).

        Its published rate, or zero; the status is :data:`EXACT` at the sample's own
        stamp, :data:`HELD` / :data:`STALE` when t is after it by at most / more than
        ``max_age``, :data:`AHEAD` (the oldest sample) when every sample is after t,
        :data:`EMPTY` without samples.
        """
        stamps = self._stamps
        if not stamps:
            return Lookup(None, None, EMPTY, -math.inf, False)
        lag = t - stamps[-1]
        k = bisect.bisect_right(stamps, t)  # stamps[k-1] <= t < stamps[k]
        if k == 0:
            status, k = AHEAD, 1
        elif stamps[k - 1] == t:
            status = EXACT
        else:
            status = HELD if t - stamps[k - 1] <= self.rules.max_age else STALE
        rate = self._rates[k - 1]
        return Lookup(self._values[k - 1].copy(), self._held_rate(rate), status, lag,
                      rate is not None)

    def _exact(self, k: int, lag: float) -> Lookup:
        rate = self._rates[k]
        if rate is not None:
            return Lookup(self._values[k].copy(), rate.copy(), EXACT, lag, True)
        if k == 0:
            return Lookup(self._values[0].copy(), np.zeros(self.shape), EXACT, lag, False)
        dt = self._stamps[k] - self._stamps[k - 1]
        return Lookup(self._values[k].copy(), (self._values[k] - self._values[k - 1]) / dt,
                      EXACT, lag, False)

    def _held_rate(self, rate: Array | None) -> Array:
        return np.zeros(self.shape) if rate is None else rate.copy()


Item = TypeVar("Item")


class PendingSamples(Generic[Item]):
    """Joint samples waiting for the Θ that covers their stamp (the ``window`` rule).

    A sample is released, in stamp order, as soon as every series it waits for
    :meth:`~StampedSeries.covers` its stamp (``on_time``), or, late, once a newer joint
    sample is more than ``window`` past it (then it is answered with the held values and
    counted in :attr:`late`). A series with no sample yet is not waited for, unless the
    caller says it is ``expected`` (e.g. a publisher of it is known: its first sample is
    on the way).
    """

    def __init__(self, window: float) -> None:
        """An empty queue; ``window`` [s] of joint-sample time (0: never wait)."""
        self.window = window
        self._queue: deque[tuple[float, Item]] = deque()
        self.late = 0
        self.newest = -math.inf

    def __len__(self) -> int:
        """Samples waiting."""
        return len(self._queue)

    def push(self, t: float, item: Item) -> None:
        """Queue a sample stamped t (stamps increase: the caller checked)."""
        self._queue.append((t, item))
        self.newest = max(self.newest, t)

    def release(self, series: Sequence[StampedSeries], flush: bool = False,
                expected: Sequence[StampedSeries] = ()) -> list[tuple[float, Item, bool]]:
        """(t, item, on_time) of every sample that may be answered now, in order.

        Args:
            series: the stamped inputs the samples wait for.
            flush: release everything (shutdown, a model swap).
            expected: series waited for even while they have no sample yet.
        """
        out: list[tuple[float, Item, bool]] = []
        waited = [s for s in series if len(s) or any(s is e for e in expected)]
        while self._queue:
            t, item = self._queue[0]
            covered = all(s.covers(t) for s in waited)
            if covered or flush or self.newest - t > self.window or self.window == 0.0:
                self._queue.popleft()
                if not covered:
                    self.late += 1
                out.append((t, item, covered))
                continue
            break
        return out
