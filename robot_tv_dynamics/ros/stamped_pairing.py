"""dynamics_node's joint samples waiting for their stamped Θ / Ψ, and how they paired.

A joint_states sample is answered once the stamped Θ and Ψ
(``inertial_parameters_stamped``, ``psi_stamped``) cover its stamp, or, late, once a
newer sample is more than ``theta_window`` past it (the rule is
:class:`robot_tv_dynamics.inputs.PendingSamples`, shared with the offline replay). A
stamped topic with no sample yet is waited for only while it has a publisher (its first
sample is on the way). :class:`StampedPairing` counts the samples answered on time, late,
with Θ/Ψ ahead of them or stale, logs a throttled warning when those counts grow, and
gives the ``dynamics_node: theta pairing`` status on ``/diagnostics`` (WARN when new late,
ahead or stale samples came since the last status). :class:`StampReader` reads the
joint_states stamps against the node clock without reading the clock per sample.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inputs import ModelInputs, PendingSamples
from robot_tv_dynamics.inputs.timeline import AHEAD, STALE, StampedSeries
from robot_tv_dynamics.ros.conversions import make_status, read_stamp

#: The stamped topics' publisher counts are looked up at most this often [s].
PUBLISHER_CHECK_PERIOD = 0.1
#: The node clock for the joint_states stamp check is read at most this often [s].
CLOCK_READ_PERIOD = 0.1


class StampReader:
    """joint_states stamps [s], checked against the node clock read at most this often.

    The clock (a ``Time`` object per reading: it costs) is read at most every
    :data:`CLOCK_READ_PERIOD` of the monotonic ``now``; a stamp that looks too far ahead
    of the last reading (:func:`~robot_tv_dynamics.ros.conversions.read_stamp`) is
    checked again against the clock read then.
    """

    def __init__(self, clock: Callable[[], float], field: str = "joint_states.header.stamp"
                 ) -> None:
        """Stamps of ``field`` checked against ``clock`` (the node clock [s])."""
        self._clock = clock
        self._field = field
        self._seconds, self._read = 0.0, -math.inf

    def read(self, stamp: Any, now: float) -> float:
        """The stamp in seconds; ``now`` is the monotonic clock [s].

        Raises:
            InvalidInputError: a stamp that is not a time, or too far in the future.
        """
        if now - self._read >= CLOCK_READ_PERIOD:
            self._read = now
            self._seconds = self._clock()
        try:
            return read_stamp(stamp, self._field, self._seconds)
        except InvalidInputError:
            self._seconds = self._clock()
            return read_stamp(stamp, self._field, self._seconds)


class _ReferenceCoverage:
    """The q̈ reference as one more input a sample waits for (``ModelInputs.reference_awaited``).

    Duck-typed as the :class:`StampedSeries` that ``PendingSamples.release`` reads
    (``len`` and ``covers``): a sample waits, within the same window, for the streamed
    one-point reference of its own tick, so that its q̈ is the reference's, not the filter's.
    """

    def __init__(self, inputs: ModelInputs, window: float) -> None:
        self._inputs = inputs
        self._window = window

    def __len__(self) -> int:
        return 1

    def covers(self, t: float) -> bool:
        return not self._inputs.reference_awaited(t, self._window)


class StampedPairing:
    """The waiting joint samples of one node and their pairing counts (module docstring).

    Attributes:
        counts: samples answered ``on_time``, ``late``, with Θ/Ψ ahead (``AHEAD``) or
            stale (``STALE``) since start-up.
        last_lag: the Θ series' lag behind the last answered sample [s] (NaN before).
        subscriptions: the stamped Θ and Ψ subscriptions (their publisher counts say
            whether a first sample is on the way); empty: none is.
    """

    def __init__(
        self, window: float, logger: Any, log_throttle: float, node_name: str = "dynamics_node",
    ) -> None:
        """No sample waiting yet.

        Args:
            window: ``theta_window``: longest wait of a sample, joint-sample time [s].
            logger: the node's logger (the throttled pairing warning).
            log_throttle: its throttle [s].
            node_name: prefix of the status name.
        """
        self.window = window
        self._pending: PendingSamples[tuple[Any, float]] = PendingSamples(window)
        self.counts = {"on_time": 0, "late": 0, AHEAD: 0, STALE: 0}
        self._reported = dict(self.counts)
        self.last_lag = math.nan
        self._logger = logger
        #: the warning's throttle [s] (the node's log_throttle, also when set at runtime)
        self.throttle = log_throttle
        self._logged = -math.inf
        self._name = f"{node_name}: theta pairing"
        self.subscriptions: Sequence[Any] = ()
        self._publishers: tuple[bool, ...] = ()
        self._publishers_checked = -math.inf

    def __len__(self) -> int:
        """Samples waiting."""
        return len(self._pending)

    def push(self, t: float, msg: Any) -> None:
        """Queue a joint sample stamped ``t`` [s].

        Raises:
            InvalidInputError: ``t`` is not after the newest waiting sample.
        """
        newest = self._pending.newest
        if t <= newest:
            how = "repeats" if t == newest else "goes backwards from"
            raise InvalidInputError(
                "joint_states.header.stamp",
                f"{how} a waiting sample ({t:.9f} s after {newest:.9f} s)")
        self._pending.push(t, (msg, t))

    def release(
        self, inputs: ModelInputs, answer: Callable[[Any, float], None], flush: bool = False,
    ) -> None:
        """Answer every waiting sample whose stamped Θ / Ψ is there (or too late).

        Args:
            inputs: the node's inputs (the stamped series, the pairing of the last sample).
            answer: called with (message, stamp [s]) of each released sample, in order.
            flush: release every waiting sample (a URDF swap).
        """
        series = (inputs.theta_series, inputs.psi_series)
        waited = (*series, _ReferenceCoverage(inputs, self.window))
        counts = self.counts
        for _, (msg, t), on_time in self._pending.release(
                waited, flush, self._expected_series(series)):
            counts["on_time" if on_time else "late"] += 1
            answer(msg, t)
            for status in (inputs.theta_status, inputs.psi_status):
                if status in (AHEAD, STALE):
                    counts[status] += 1
            if len(inputs.theta_series):
                self.last_lag = inputs.theta_series.lag(t)
        reported = self._reported
        if (reported["late"] != counts["late"] or any(
                reported[k] != counts[k] for k in (AHEAD, STALE))) and (
                time.monotonic() - self._logged >= self.throttle):  # throttled here
            self._logged = time.monotonic()
            self._logger.warning(
                f"stamped Θ/Ψ pairing: {counts['late']} sample(s) answered without "
                f"a Θ/Ψ at or after their stamp within theta_window "
                f"({self.window:g} s), {counts[AHEAD]} with Θ/Ψ ahead "
                f"of them, {counts[STALE]} with a stale Θ/Ψ (last lag "
                f"{self.last_lag:+.4f} s)")

    def _expected_series(self, series: Sequence[StampedSeries]) -> list[StampedSeries]:
        """The stamped series still empty whose topic has a publisher.

        Its first sample is on the way: the first joint samples wait for it (within
        ``theta_window``) rather than take the URDF's Θ. The publisher counts (a graph
        query) are read at most every :data:`PUBLISHER_CHECK_PERIOD`, and only while a
        series is empty.
        """
        if all(len(s) for s in series):
            return []
        now = time.monotonic()
        if now - self._publishers_checked >= PUBLISHER_CHECK_PERIOD:
            self._publishers_checked = now
            self._publishers = tuple(
                sub.get_publisher_count() > 0 for sub in self.subscriptions)
        # no subscriptions (yet): nothing is expected
        return [s for s, has in zip(series, self._publishers, strict=False)
                if has and not len(s)]

    def status(self, hardware_id: str) -> Any:
        """The ``<node>: theta pairing`` DiagnosticStatus (WARN on new late ones)."""
        counts, reported = self.counts, self._reported
        fresh = {k: counts[k] - reported[k] for k in counts}
        self._reported = dict(counts)
        level = 1 if (fresh["late"] or fresh[AHEAD] or fresh[STALE]) else 0
        message = ("stamped Θ/Ψ paired with every joint sample by stamp" if level == 0 else
                   f"since the last status: {fresh['late']} sample(s) late (no Θ/Ψ at or "
                   f"after their stamp within theta_window), {fresh[AHEAD]} with Θ/Ψ ahead, "
                   f"{fresh[STALE]} with a stale Θ/Ψ")
        values = [("samples paired on time", counts["on_time"]),
                  ("samples late", counts["late"]), ("samples with Θ/Ψ ahead", counts[AHEAD]),
                  ("samples with stale Θ/Ψ", counts[STALE]),
                  ("last lag [s]", f"{self.last_lag:.6f}"),
                  ("waiting", len(self._pending))]
        return make_status(self._name, level, message, hardware_id, values)
