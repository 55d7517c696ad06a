"""The realistic model error's terms (``realistic.py``) do what their docstrings say.

Each term is checked alone on a made-up signal, with a fixed seed: the seed study's
claims about the recordings (a residual growing with acceleration, friction lagging at
reversals, a drifting offset, a resonant joint, a hard stop) rest on these.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import realistic as R


def test_the_hard_stop_brakes_at_several_rad_per_s2_and_ends_at_rest():
    t = np.arange(0.0, 2.0, 1.0 / R.RATE)
    warp, rate, accel = R.hard_stop(t, 2.0)
    before = t < 2.0 - R.STOP
    np.testing.assert_array_equal(warp[before], t[before])
    assert np.all(rate[before] == 1.0) and np.all(accel[before] == 0.0)
    # a joint moving at 1 rad/s: q̇ = τ̇, q̈ = τ̈ in the stop
    assert accel[~before].min() == pytest.approx(-1.0 / R.STOP)  # 3.3 rad/s² per rad/s
    assert rate[-1] < 2e-3 / R.STOP
    np.testing.assert_allclose(np.gradient(warp, t)[1:-1], rate[1:-1], atol=2e-3)


def test_lugre_friction_follows_the_stribeck_curve_sliding_and_lags_at_reversals():
    t = np.arange(0.0, 4.0, 1.0 / R.RATE)
    qd = np.c_[0.5 * np.sin(2 * np.pi * 0.5 * t)]  # reversals at 1, 2, 3 s
    coulomb, static, presliding = np.array([0.5]), np.array([0.8]), np.array([3e-3])
    f = R.lugre_friction(qd, coulomb, static, 0.05, presliding)[:, 0]
    sliding = np.abs(qd[:, 0]) > 0.3
    assert np.all(np.abs(np.abs(f[sliding]) - coulomb) < 1e-3)  # g(v) → F_c, sign(v)
    # steady slow sliding: the Stribeck curve g(v), above F_c near v = 0
    creep = R.lugre_friction(np.full((2000, 1), 0.03), coulomb, static, 0.05, presliding)
    assert creep[-1, 0] == pytest.approx(0.5 + 0.3 * np.exp(-0.36), abs=1e-3)
    # after the reversal at 1 s the friction keeps its sign until the joint has moved
    # back about the presliding distance: tens of ms, not at once
    crossing = t[500:][np.flatnonzero(np.diff(np.sign(f[500:])) != 0)[0]]
    assert 1.01 < crossing < 1.2


def test_the_acceleration_residual_scales_with_the_inertial_torque():
    rng = np.random.default_rng(0)
    inertial = np.c_[np.full(20000, 10.0), np.full(20000, 1.0)]
    r = R.acceleration_residual(rng, inertial, np.array([0.02, 0.02]))
    np.testing.assert_allclose(r.std(axis=0), [0.2, 0.02], rtol=0.15)
    assert np.all(R.acceleration_residual(rng, 0 * inertial, np.array([0.02, 0.02])) == 0)


def test_the_offset_drifts_its_stated_std_over_half_a_recording():
    rng = np.random.default_rng(0)
    n = int(R.HALF * R.RATE)
    ends = np.array([R.offset_drift(rng, n, np.array([0.3]))[-1, 0] for _ in range(200)])
    assert ends.std() == pytest.approx(0.3, rel=0.15)


def test_the_elastic_joint_passes_slow_torque_and_rings_after_a_step():
    tau = np.r_[np.zeros(200), np.ones(800)][:, None] * np.array([1.0])
    out = R.joint_elasticity(tau, np.array([15.0]), np.array([0.1]))[:, 0]
    assert out[:200] == pytest.approx(0.0, abs=1e-12)
    assert out[-1] == pytest.approx(1.0, abs=0.02)
    assert out[200:300].max() > 1.5  # the resonance overshoots (ζ = 0.1)
