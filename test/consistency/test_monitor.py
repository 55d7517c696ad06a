"""ConsistencyMonitor: levels, ε, trend prediction, hysteresis (the monitor node's core)."""

from __future__ import annotations

import numpy as np
import pytest

from robot_tv_dynamics.consistency import spectral_statistics
from robot_tv_dynamics.consistency.monitor import (
    TABLE_FIELDS,
    ConsistencyMonitor,
    Level,
    MonitorConfig,
)
from robot_tv_dynamics.exceptions import InvalidInputError

RATE = 50.0  # Θ samples per second


@pytest.fixture
def monitor(panda):
    return ConsistencyMonitor(panda.body_names, panda.theta_nominal)


def stream(monitor, theta_of_t, seconds, rate=RATE, start=0.0):
    """Feed Θ(t) and return every transition and the levels after each sample."""
    transitions, levels = [], []
    for t in start + np.arange(int(seconds * rate)) / rate:
        transitions += monitor.update(float(t), theta_of_t(float(t)))
        levels.append(monitor.levels.copy())
    return transitions, np.array(levels)


def test_nominal_stream_is_ok_with_no_transition(monitor, panda):
    transitions, levels = stream(monitor, lambda t: panda.theta_nominal, 2.0)
    assert transitions == [] and np.all(levels == Level.OK)
    s = monitor.status(0)
    assert s.level == Level.OK and "uniformly consistent" in s.message
    mu, nu, _ = spectral_statistics(panda.theta_nominal)
    np.testing.assert_allclose(monitor.mu, mu)
    np.testing.assert_allclose(monitor.epsilon, 0.1 * mu)
    np.testing.assert_allclose(monitor.upper, 10.0 * nu)
    assert monitor.table().shape == (panda.n_bodies, len(TABLE_FIELDS))


def test_body_decaying_to_one_percent_goes_warn_then_error_each_reported_once(monitor, panda):
    k = 6

    onset = 1.5  # the monitor has watched the nominal Θ for a while when the decay starts

    def theta(t):
        out = np.array(panda.theta_nominal)
        out[k] *= max(np.exp(-max(t - onset, 0.0) / 0.6), 0.01)
        return out

    transitions, levels = stream(monitor, theta, 6.0 + onset)
    mine = [tr for tr in transitions if tr.index == k]
    assert [tr.level for tr in mine] == [Level.WARN, Level.ERROR]
    assert mine[0].time < mine[1].time
    assert "predicted to reach epsilon" in " ".join(mine[0].reasons)
    assert "below epsilon" in mine[1].message
    assert all(tr.index == k for tr in transitions)
    assert levels[-1][k] == Level.ERROR
    assert monitor.status(k).inf_mu == pytest.approx(0.01 * monitor.nominal_mu[k], rel=1e-6)
    # the prediction warned while the margin was still above the warn band (2 ε)
    first_warn = int(np.argmax(levels[:, k] == Level.WARN)) / RATE
    assert first_warn > onset
    assert np.exp(-(first_warn - onset) / 0.6) > 2 * 0.1


def test_stream_varying_thirty_percent_stays_ok(monitor, panda):
    rng = np.random.default_rng(0)
    phases = rng.uniform(0, 2 * np.pi, panda.n_bodies)

    def theta(t):
        wave = 0.5 * np.sin(2 * np.pi * t / 8.0 + phases) + 0.5 * rng.uniform(-1, 1, panda.n_bodies)
        return np.array(panda.theta_nominal) * (1.0 + 0.3 * wave)[:, None]

    transitions, levels = stream(monitor, theta, 20.0)
    assert transitions == [] and np.all(levels == Level.OK)
    assert np.all(monitor.inf_mu >= 0.7 * monitor.nominal_mu - 1e-15)


def test_prediction_of_a_linear_decay_is_accurate(panda):
    mon = ConsistencyMonitor(panda.body_names, panda.theta_nominal,
                             MonitorConfig(horizon=100.0, trend_window=1.0))
    k, rate = 2, 0.2  # the margin falls by 20 % of its nominal value per second

    def theta(t):
        out = np.array(panda.theta_nominal)
        out[k] *= 1.0 - rate * t
        return out

    stream(mon, theta, 2.0)
    t = (int(2.0 * RATE) - 1) / RATE
    expected = ((1.0 - rate * t) - 0.1) / rate
    assert mon.time_to_crossing[k] == pytest.approx(expected, rel=1e-6)
    others = np.delete(mon.time_to_crossing, k)
    assert np.all(np.isinf(others))


def test_hysteresis_stops_a_noisy_margin_from_flapping(panda):
    rng = np.random.default_rng(3)
    k = 3
    noise = rng.uniform(-0.02, 0.02, 2000)

    def run(h):
        mon = ConsistencyMonitor(panda.body_names, panda.theta_nominal,
                                 MonitorConfig(hysteresis=h, horizon=0.0))
        i = iter(noise)

        def theta(t):  # margin jitters ±2 % around ε itself
            out = np.array(panda.theta_nominal)
            out[k] *= 0.1 * (1.0 + next(i))
            return out

        return [tr for tr in stream(mon, theta, 2000 / RATE)[0] if tr.index == k]

    assert len(run(0.0)) > 50
    flips = run(0.1)
    assert [tr.level for tr in flips] == [Level.ERROR]


def test_inconsistent_body_is_error_with_the_reason(monitor, panda):
    theta = np.array(panda.theta_nominal)
    theta[0, 0] = -1.0  # negative mass
    transitions = monitor.update(0.0, theta)
    assert [(tr.index, tr.level) for tr in transitions] == [(0, Level.ERROR)]
    assert "inconsistent" in transitions[0].message


def test_size_above_the_upper_bound_and_rate_above_the_rate_bound_are_errors(panda):
    mon = ConsistencyMonitor(panda.body_names, panda.theta_nominal,
                             MonitorConfig(rate_bound=1.0, horizon=0.0))
    theta = np.array(panda.theta_nominal)
    theta[1] *= 20.0
    rates = np.zeros_like(theta)
    rates[4, 0] = 5.0  # ṁ = 5 kg/s: σ_max(f(Φ̇)) = 5 per s
    transitions = mon.update(0.0, theta, rates)
    by_body = {tr.index: tr for tr in transitions}
    assert set(by_body) == {1, 4}
    assert "above the upper bound" in by_body[1].message
    assert "above the rate bound" in by_body[4].message
    assert mon.rate[4] == pytest.approx(5.0)


def test_warn_band_and_uniform_margin(panda):
    mon = ConsistencyMonitor(panda.body_names, panda.theta_nominal,
                             MonitorConfig(uniform_margin=1e-6, warn_band=1.0, horizon=0.0))
    np.testing.assert_array_equal(mon.epsilon, np.full(panda.n_bodies, 1e-6))
    mu = spectral_statistics(panda.theta_nominal)[0]
    expected = np.where(mu < 1e-6, Level.ERROR, np.where(mu < 2e-6, Level.WARN, Level.OK))
    mon.update(0.0, panda.theta_nominal)
    np.testing.assert_array_equal(mon.levels, expected)


def test_rate_from_filtered_differences_when_no_rate_is_given(monitor, panda):
    def theta(t):
        out = np.array(panda.theta_nominal)
        out[5, 0] += 0.5 * t  # ṁ = 0.5 kg/s
        return out

    stream(monitor, theta, 3.0)
    assert monitor.rate[5] == pytest.approx(0.5, rel=1e-6)


def test_bad_samples_raise_and_leave_the_state_unchanged(monitor, panda):
    monitor.update(1.0, panda.theta_nominal)
    mu = monitor.mu.copy()
    with pytest.raises(InvalidInputError, match="backwards"):
        monitor.update(0.5, panda.theta_nominal)
    with pytest.raises(InvalidInputError, match="shape"):
        monitor.update(2.0, panda.theta_nominal[:3])
    bad = np.array(panda.theta_nominal)
    bad[0, 0] = np.nan
    with pytest.raises(InvalidInputError, match="non-finite"):
        monitor.update(2.0, bad)
    assert monitor.samples == 1 and monitor.time == 1.0
    np.testing.assert_array_equal(monitor.mu, mu)


@pytest.mark.parametrize("kwargs", [
    {"margin_fraction": 1.5}, {"uniform_margin": -1.0}, {"horizon": float("nan")},
    {"trend_window": 0.0}, {"min_trend_samples": 1}, {"hysteresis": -0.1},
])
def test_config_ranges_are_checked(kwargs):
    with pytest.raises(InvalidInputError):
        MonitorConfig(**kwargs)


def test_a_massless_body_is_reported_not_alarmed_unless_a_uniform_margin_is_set(panda):
    nominal = np.array(panda.theta_nominal)
    nominal[3] = 0.0  # a massless link in the URDF: μ = 0, no ε > 0 to hold it to
    monitor = ConsistencyMonitor(panda.body_names, nominal)
    transitions, levels = stream(monitor, lambda t: nominal, 1.0)
    assert transitions == [] and np.all(levels == Level.OK)
    assert "not monitored" in monitor.status(3).reasons[0]
    strict = ConsistencyMonitor(panda.body_names, nominal, MonitorConfig(uniform_margin=1e-9))
    transitions, _ = stream(strict, lambda t: nominal, 0.2)
    assert [tr.index for tr in transitions] == [3]
    assert transitions[0].level == Level.ERROR and "inconsistent" in transitions[0].message


def test_a_finite_but_absurd_sample_changes_no_state_and_the_next_good_one_is_taken(
        monitor, panda):
    theta = np.array(panda.theta_nominal)
    monitor.update(0.0, theta)
    monitor.update(0.01, theta)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v)
              for k, v in vars(monitor).items() if k not in ("_rate_filter", "_tracker")}
    huge = theta.copy()
    huge[1, 0] = 1e308
    with pytest.raises(InvalidInputError, match="beyond the bound"):
        monitor.update(0.02, huge)
    with pytest.raises(InvalidInputError, match="beyond the bound"):
        monitor.update(0.02, theta, np.full_like(theta, 1e300))
    for key, value in before.items():
        np.testing.assert_array_equal(vars(monitor)[key], value, err_msg=key)
    monitor.update(0.02, theta)
    assert monitor.samples == 3 and np.isfinite(monitor.rate).all()
