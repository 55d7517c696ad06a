"""The stamp-keyed buffer: values and rates at a joint sample's stamp, any arrival order."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inputs.timeline import (
    AHEAD,
    EMPTY,
    EXACT,
    HELD,
    INTERPOLATED,
    STALE,
    PendingSamples,
    StampedSeries,
    TimelineRules,
    seconds_since,
)

SHAPE = (2, 10)
RNG = np.random.default_rng(7)
A = RNG.normal(size=SHAPE)
B = RNG.normal(size=SHAPE)
T0 = 1_700_000_000.0  # an epoch-like stamp: interpolation must not lose digits to it


def linear(t: float) -> np.ndarray:
    """Θ(t) = A + B (t − T0): interpolation and differences of it are exact."""
    return A + B * (t - T0)


def shuffled_series(stamps: np.ndarray, rates: bool) -> StampedSeries:
    series = StampedSeries(SHAPE, TimelineRules(max_age=0.1, window=0.05, history=10.0))
    for k in RNG.permutation(len(stamps)):
        series.add(float(stamps[k]), linear(stamps[k]), B if rates else None)
    return series


@pytest.mark.parametrize("rates", [True, False])
def test_value_and_rate_at_any_stamp_inside_match_the_exact_ramp(rates):
    stamps = T0 + np.cumsum(RNG.uniform(0.005, 0.02, size=200))
    series = shuffled_series(stamps, rates)
    queries = RNG.uniform(stamps[0], stamps[-1], size=300)
    for t in queries:
        got = series.at(float(t))
        assert got.status == INTERPOLATED
        assert got.rate_published is rates
        np.testing.assert_allclose(got.value, linear(t), rtol=0, atol=1e-9)
        np.testing.assert_allclose(got.rate, B, rtol=1e-6, atol=1e-6)


def test_a_sample_at_the_stamp_is_returned_exactly_with_its_backward_difference():
    stamps = [T0 + 0.01, T0 + 0.02, T0 + 0.035]
    series = StampedSeries(SHAPE)
    values = [RNG.normal(size=SHAPE) for _ in stamps]
    for k in (2, 0, 1):  # out of order
        series.add(stamps[k], values[k])
    first = series.at(stamps[0])
    assert first.status == EXACT
    np.testing.assert_array_equal(first.value, values[0])
    np.testing.assert_array_equal(first.rate, np.zeros(SHAPE))
    last = series.at(stamps[2])
    np.testing.assert_array_equal(last.value, values[2])
    np.testing.assert_allclose(last.rate, (values[2] - values[1]) / (stamps[2] - stamps[1]))


def test_a_later_sample_does_not_change_an_answer_inside_the_covered_range():
    series = StampedSeries(SHAPE)
    series.add(T0 + 0.01, linear(T0 + 0.01))
    series.add(T0 + 0.02, linear(T0 + 0.02))
    before = series.at(T0 + 0.015)
    series.add(T0 + 0.03, 5.0 + linear(T0 + 0.03))
    after = series.at(T0 + 0.015)
    np.testing.assert_array_equal(before.value, after.value)
    np.testing.assert_array_equal(before.rate, after.rate)


def test_held_then_stale_after_the_newest_and_ahead_before_the_oldest():
    series = StampedSeries(SHAPE, TimelineRules(max_age=0.1, window=0.05, history=1.0))
    assert series.at(T0).status == EMPTY
    assert not series.covers(T0)
    series.add(T0, linear(T0), B)
    series.add(T0 + 0.01, linear(T0 + 0.01), B)
    assert series.covers(T0 + 0.01) and not series.covers(T0 + 0.011)
    held = series.at(T0 + 0.06)
    assert held.status == HELD
    assert held.lag == pytest.approx(0.05)
    np.testing.assert_array_equal(held.value, linear(T0 + 0.01))
    np.testing.assert_array_equal(held.rate, B)
    stale = series.at(T0 + 0.2)
    assert stale.status == STALE and stale.lag == pytest.approx(0.19)
    ahead = series.at(T0 - 0.5)
    assert ahead.status == AHEAD and ahead.lag < 0
    np.testing.assert_array_equal(ahead.value, linear(T0))


def test_held_rate_without_published_rates_is_zero():
    series = StampedSeries(SHAPE)
    series.add(T0, linear(T0))
    series.add(T0 + 0.01, linear(T0 + 0.01))
    np.testing.assert_array_equal(series.at(T0 + 0.02).rate, np.zeros(SHAPE))


def test_a_repeated_stamp_replaces_and_history_is_trimmed():
    series = StampedSeries(SHAPE, TimelineRules(history=0.1, window=0.05))
    series.add(T0, np.zeros(SHAPE))
    series.add(T0, np.ones(SHAPE))
    assert len(series) == 1
    np.testing.assert_array_equal(series.at(T0).value, np.ones(SHAPE))
    series.add(T0 + 0.5, np.ones(SHAPE))
    assert len(series) == 1 and series.newest == T0 + 0.5
    with pytest.raises(InvalidInputError, match="older than the history"):
        series.add(T0 + 0.3, np.ones(SHAPE))


@pytest.mark.parametrize("stamp", [math.nan, math.inf, -math.inf])
def test_bad_stamps_are_refused_and_nothing_changes(stamp):
    series = StampedSeries(SHAPE, name="inertial_parameters")
    with pytest.raises(InvalidInputError, match="inertial_parameters.header.stamp"):
        series.add(stamp, np.zeros(SHAPE))
    assert len(series) == 0


def test_bad_values_are_refused():
    series = StampedSeries(SHAPE, name="psi")
    with pytest.raises(InvalidInputError):
        series.add(T0, np.zeros((3, 10)))
    bad = np.zeros(SHAPE)
    bad[1, 3] = math.nan
    with pytest.raises(InvalidInputError):
        series.add(T0, bad)
    with pytest.raises(InvalidInputError):
        series.add(T0, np.zeros(SHAPE), bad)
    assert len(series) == 0


@pytest.mark.parametrize("kwargs", [{"max_age": -1.0}, {"window": math.nan},
                                    {"history": 0.01, "window": 0.05}])
def test_bad_rules_are_refused(kwargs):
    with pytest.raises(InvalidInputError):
        TimelineRules(**kwargs)


def test_seconds_since_keeps_nanoseconds_that_unix_seconds_lose():
    epoch = 1_700_000_000 * 1_000_000_000
    stamp = epoch + 1_000_000_001  # 1 s + 1 ns
    assert seconds_since(stamp, epoch) == pytest.approx(1.000000001, abs=1e-15)
    assert stamp * 1e-9 - epoch * 1e-9 != pytest.approx(1.000000001, abs=1e-12)


def test_pending_samples_wait_for_cover_then_go_late_past_the_window():
    theta = StampedSeries(SHAPE)
    pending: PendingSamples[str] = PendingSamples(window=0.05)
    pending.push(1.0, "a")
    assert pending.release([theta]) == [(1.0, "a", True)]  # nothing published: no wait
    theta.add(1.0, np.zeros(SHAPE))
    pending.push(1.01, "b")
    pending.push(1.03, "c")
    assert pending.release([theta]) == [] and len(pending) == 2
    theta.add(1.02, np.zeros(SHAPE))
    assert pending.release([theta]) == [(1.01, "b", True)]  # c still waits
    pending.push(1.07, "d")  # c is now 0.04 s behind the newest joint sample: waits
    assert pending.release([theta]) == []
    pending.push(1.081, "e")  # 0.051 s: c goes late, held; d, e still wait
    assert pending.release([theta]) == [(1.03, "c", False)] and pending.late == 1
    assert pending.release([theta], flush=True) == [(1.07, "d", False), (1.081, "e", False)]
    assert pending.late == 3 and len(pending) == 0


def test_an_expected_series_is_waited_for_before_its_first_sample():
    theta = StampedSeries(SHAPE)
    pending: PendingSamples[str] = PendingSamples(window=0.05)
    pending.push(1.0, "a")
    assert pending.release([theta], expected=[theta]) == []  # its publisher is known
    theta.add(1.0, np.ones(SHAPE))
    assert pending.release([theta], expected=[theta]) == [(1.0, "a", True)]
    pending.push(2.0, "b")
    pending.push(2.06, "c")  # b: nothing at or after 2.0, and the window passed
    assert pending.release([theta], expected=[theta]) == [(2.0, "b", False)]


def test_at_or_before_holds_the_newest_sample_not_after_t_without_interpolating() -> None:
    series = StampedSeries((1,), TimelineRules(max_age=0.5, window=0.0, history=10.0))
    assert series.at_or_before(1.0).status == EMPTY
    for stamp, level in ((3.0, 2.0), (1.0, 0.0), (2.0, 1.0)):  # any arrival order
        series.add(stamp, np.array([level]))
    cases = {0.5: (0.0, AHEAD), 1.0: (0.0, EXACT), 1.4: (0.0, HELD), 1.99: (0.0, STALE),
             2.0: (1.0, EXACT), 2.9: (1.0, STALE), 3.0: (2.0, EXACT), 3.5: (2.0, HELD),
             3.6: (2.0, STALE)}
    for t, (level, status) in cases.items():
        found = series.at_or_before(t)
        assert (float(found.value[0]), found.status) == (level, status), t
        assert not found.rate.any() and not found.rate_published


def test_restoring_a_snapshot_undoes_inserts_replacements_and_the_history_cut() -> None:
    series = StampedSeries((1,), TimelineRules(history=2.0))
    for k in range(5):
        series.add(float(k), np.array([float(k)]))
    assert len(series) == 3  # 2, 3, 4: within 2 s of the newest
    outer = series.snapshot()
    series.add(5.5, np.array([9.0]))  # cuts the samples before 3.5
    series.add(4.0, np.array([7.0]))  # replaces
    inner = series.snapshot()
    series.add(4.5, np.array([8.0]))
    series.restore(inner)  # the inner change only
    # 4.5 is gone: between 4.0 (7) and 5.5 (9), 7 + 2 · 0.5/1.5
    assert len(series) == 2 and series.at(4.5).value[0] == pytest.approx(23.0 / 3.0)
    series.restore(outer)
    assert len(series) == 3 and series.newest == 4.0
    assert [series.at(float(k)).value[0] for k in (2, 3, 4)] == [2.0, 3.0, 4.0]
