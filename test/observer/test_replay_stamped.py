"""The bag replay pairs stamped Θ/Ψ with joint samples by stamp, whatever the log times.

Bags are written here (observer_bag.py) with the body topics delayed by 0–20 ms at random
after their joint sample, so that log (receipt) order says nothing about which Θ belongs
to which sample. The stamped JointState-shaped topics must come back exactly at every
sample; the legacy Float64MultiArray topics under the same delays show the error of
pairing by log time.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.observer_bag import simulate, write_bag

from robot_tv_dynamics.observer import MomentumObserver, ObserverConfig
from robot_tv_dynamics.observer.replay import read_observer_bag


def jitter(seed: int):
    rng = np.random.default_rng(seed)
    delays = rng.uniform(0.0, 20e6, size=100_000)  # 0–20 ms [ns]
    return lambda k: delays[k]


@pytest.fixture(scope="module")
def samples(panda):
    return simulate(panda, duration=0.6, every=2)


@pytest.fixture(scope="module")
def stamped_bag(tmp_path_factory, panda, samples):
    return write_bag(tmp_path_factory.mktemp("stamped") / "run", panda, samples,
                     stamped=True, delay=jitter(1))


def test_stamped_topics_come_back_exactly_at_every_sample_under_jitter(panda, samples,
                                                                        stamped_bag):
    rec = read_observer_bag(stamped_bag, panda)
    assert rec.t.size == samples.t.size
    np.testing.assert_array_equal(rec.theta, samples.theta)
    np.testing.assert_array_equal(rec.theta_dot, samples.theta_dot)
    np.testing.assert_array_equal(rec.psi, samples.psi)
    np.testing.assert_array_equal(rec.psi_dot, samples.psi_dot)


def test_the_legacy_log_time_rule_mispairs_under_the_same_jitter(tmp_path, panda, samples):
    bag = write_bag(tmp_path / "legacy", panda, samples, delay=jitter(1))
    rec = read_observer_bag(bag, panda)
    k = np.abs(samples.t[None, :] - rec.t[:, None]).argmin(axis=1)  # the samples kept
    error = np.abs(rec.theta - samples.theta[k]).max()
    print(f"legacy rule under 0-20 ms jitter: max |ΔΘ| = {error:.3g}")
    assert error > 1e-4  # what pairing by stamp removes


def test_observer_over_the_jittered_stamped_bag_equals_the_core_in_memory(panda, samples,
                                                                         stamped_bag):
    from robot_tv_dynamics.observer import ContactDetector
    from robot_tv_dynamics.observer.replay import observe

    rec = read_observer_bag(stamped_bag, panda)
    got = observe(panda, rec, ObserverConfig(gain=50.0), ContactDetector(panda.joint_names, 5.0))
    observer = MomentumObserver(panda, ObserverConfig(gain=50.0),
                                theta_nominal=samples.theta[0])

    class Loads:
        def __init__(self, theta, psi):
            self.theta, self.psi = theta, psi

    # the replay integrates on the stamps as a node reads them (float seconds): the same
    clock = rec.stamps if rec.stamps is not None else rec.t
    want = np.array([observer.update(clock[k], samples.q[k], samples.qd[k], samples.tau[k],
                                     Loads(samples.theta[k], samples.psi[k]))
                     for k in range(rec.t.size)])
    scale = np.abs(want).max()
    assert np.abs(got.external_torque - want).max() <= 1e-9 * max(scale, 1.0)


def test_sparse_theta_without_rates_is_interpolated_and_differenced(tmp_path, panda, samples):
    every = 5
    bag = write_bag(tmp_path / "sparse", panda, samples, stamped=True, delay=jitter(2),
                    arrays=("inertial_parameters", "psi"), every=every)
    rec = read_observer_bag(bag, panda)
    ts, theta = samples.t[::every], samples.theta[::every]
    assert rec.t.size == samples.t.size and samples.t[-1] > ts[-1]  # a held tail
    flat = theta.reshape(len(ts), -1)
    for j, t in enumerate(rec.t):
        want = np.array([np.interp(t, ts, flat[:, i]) for i in range(flat.shape[1])])
        if t <= ts[-1] + 1e-9:  # (float stamps: the last Θ sample itself is inside)
            np.testing.assert_allclose(rec.theta[j].ravel(), want, rtol=0, atol=1e-12)
            seg = min(max(int(np.searchsorted(ts, t - 1e-12)), 1), len(ts) - 1)
            slope = (flat[seg] - flat[seg - 1]) / (ts[seg] - ts[seg - 1])
            np.testing.assert_allclose(rec.theta_dot[j].ravel(), slope, rtol=1e-6, atol=1e-9)
        else:  # after the newest Θ: held, rate zero
            np.testing.assert_array_equal(rec.theta[j].ravel(), flat[-1])
            np.testing.assert_array_equal(rec.theta_dot[j], 0.0)
