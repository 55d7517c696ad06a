"""DerivativeFilter (q̈ from q̇, Θ̇ from Θ) and ReferenceAccelerations (q̈ from a reference)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError
from robot_tv_dynamics.filters import DerivativeFilter
from robot_tv_dynamics.inputs.reference import ReferenceAccelerations


def irregular_stamps(rng: np.random.Generator, n: int, mean_dt: float) -> np.ndarray:
    return np.cumsum(rng.uniform(0.3, 1.7, n) * mean_dt)


def run(f: DerivativeFilter, times: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.array([f.update(t, u) for t, u in zip(times, values, strict=True)])


def test_ramp_derivative_is_exact_after_the_transient_on_irregular_stamps():
    rng = np.random.default_rng(0)
    t = irregular_stamps(rng, 2000, 1e-3)
    slope = np.array([0.7, -2.0, 3.5])
    u = 0.3 + t[:, None] * slope
    out = run(DerivativeFilter(cutoff=20.0), t, u)
    late = t > t[0] + 20 * (1 / (math.pi * 20.0))
    np.testing.assert_allclose(out[late], np.broadcast_to(slope, out[late].shape), atol=1e-9)


def test_discretisation_is_exact_for_piecewise_linear_input_whatever_the_sampling():
    # Extra samples on the straight segments of a piecewise-linear input change nothing.
    rng = np.random.default_rng(1)
    coarse = irregular_stamps(rng, 200, 5e-3)
    values = rng.normal(size=(200, 2))
    middle = coarse[:-1] + rng.uniform(0, 1, 199) * np.diff(coarse)
    fine_t = np.sort(np.concatenate([coarse, middle]))
    fine_u = np.column_stack([np.interp(fine_t, coarse, values[:, k]) for k in range(2)])
    a = run(DerivativeFilter(cutoff=15.0), coarse, values)
    f = DerivativeFilter(cutoff=15.0)
    b = {t: f.update(t, u) for t, u in zip(fine_t, fine_u, strict=True)}
    np.testing.assert_allclose(a, np.array([b[t] for t in coarse]), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("ratio", [0.1, 1.0, 3.0])
def test_sine_gain_and_phase_match_the_continuous_transfer_function(ratio):
    fc = 10.0
    f_in = ratio * fc
    w, wc = 2 * math.pi * f_in, 2 * math.pi * fc
    t = np.arange(0, 4.0, 1e-4)
    out = run(DerivativeFilter(cutoff=fc), t, np.sin(w * t)[:, None])[:, 0]
    h = 1j * w * wc**2 / (1j * w + wc) ** 2  # V/U = s ω²/(s + ω)²
    expected = np.abs(h) * np.sin(w * t + np.angle(h))
    late = t > 2.0
    np.testing.assert_allclose(out[late], expected[late], atol=2e-3 * abs(h))


def test_low_frequency_delay_is_one_over_pi_fc():
    fc, f_in = 20.0, 0.5
    flt = DerivativeFilter(cutoff=fc)
    assert flt.delay == pytest.approx(1 / (math.pi * fc))
    t = np.arange(0, 6.0, 1e-3)
    w = 2 * math.pi * f_in
    out = run(flt, t, np.sin(w * t)[:, None])[:, 0]
    late = t > 3.0
    # fit out ≈ a·cos(w(t − τ)): the phase lag divided by w is the delay
    basis = np.column_stack([np.cos(w * t[late]), np.sin(w * t[late])])
    c, s = np.linalg.lstsq(basis, out[late], rcond=None)[0]
    assert math.atan2(s, c) / w == pytest.approx(flt.delay, rel=1e-2)


def test_noise_is_attenuated_compared_to_finite_differences():
    rng = np.random.default_rng(2)
    t = irregular_stamps(rng, 5000, 1e-3)
    u = 1e-3 * rng.normal(size=(5000, 1))
    raw = np.diff(u[:, 0]) / np.diff(t)
    out = run(DerivativeFilter(cutoff=20.0), t, u)[:, 0]
    assert np.std(out[100:]) < 0.05 * np.std(raw)


def test_first_sample_gap_and_duplicate_stamp():
    f = DerivativeFilter(cutoff=20.0, max_gap=0.1)
    assert not f.initialized and f.rate is None
    np.testing.assert_array_equal(f.update(1.0, [1.0, 2.0]), [0.0, 0.0])
    r = f.update(1.01, [1.1, 2.0])
    np.testing.assert_array_equal(f.update(1.01, [5.0, 5.0]), r)  # duplicate stamp: unchanged
    np.testing.assert_array_equal(f.update(2.0, [3.0, 3.0]), [0.0, 0.0])  # gap: restart
    assert f.time == 2.0
    assert not f.rate.flags.writeable


def test_bad_input_raises_and_leaves_the_state_alone():
    f = DerivativeFilter(cutoff=20.0)
    f.update(1.0, [1.0])
    f.update(1.1, [2.0])
    rate = f.rate.copy()
    with pytest.raises(InvalidInputError, match="backwards"):
        f.update(1.05, [1.0])
    with pytest.raises(InvalidInputError, match="shape"):
        f.update(1.2, [1.0, 2.0])
    with pytest.raises(InvalidInputError, match="non-finite"):
        f.update(1.2, [np.nan])
    np.testing.assert_array_equal(f.rate, rate)
    assert f.time == 1.1
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(InvalidInputError, match="cutoff"):
            DerivativeFilter(cutoff=bad)
    with pytest.raises(InvalidInputError, match="max_gap"):
        DerivativeFilter(cutoff=1.0, max_gap=0.0)


JOINTS = ["j1", "j2", "j3"]


def test_reference_interpolates_linearly_in_absolute_time():
    ref = ReferenceAccelerations(JOINTS, ["j3", "j1", "j2"], 10.0, [0.0, 1.0, 3.0],
                                 [[3.0, 1.0, 2.0], [6.0, 2.0, 4.0], [0.0, 0.0, 0.0]])
    assert ref.covers_all_joints and ref.end == 13.0
    np.testing.assert_allclose(ref.at(10.0), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(ref.at(10.5), [1.5, 3.0, 4.5])
    np.testing.assert_allclose(ref.at(12.0), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(ref.at(13.0), [0.0, 0.0, 0.0])
    assert ref.at(9.99) is None and ref.at(13.01) is None


def test_reference_tolerance_holds_the_end_values_and_partial_joints_are_masked():
    ref = ReferenceAccelerations(JOINTS, ["j2"], 0.0, [1.0, 2.0], [[1.0], [2.0]], tolerance=0.1)
    np.testing.assert_array_equal(ref.covered, [False, True, False])
    assert not ref.covers_all_joints
    np.testing.assert_allclose(ref.at(0.95), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(ref.at(2.05), [0.0, 2.0, 0.0])
    assert ref.at(2.2) is None


def test_reference_rejects_bad_trajectories():
    with pytest.raises(UnknownNameError, match="j9"):
        ReferenceAccelerations(JOINTS, ["j9"], 0.0, [0.0], [[1.0]])
    with pytest.raises(InvalidInputError, match="increasing"):
        ReferenceAccelerations(JOINTS, ["j1"], 0.0, [1.0, 1.0], [[1.0], [2.0]])
    with pytest.raises(InvalidInputError, match="duplicates"):
        ReferenceAccelerations(JOINTS, ["j1", "j1"], 0.0, [1.0], [[1.0, 1.0]])
    with pytest.raises(InvalidInputError, match="accelerations"):
        ReferenceAccelerations(JOINTS, ["j1"], 0.0, [1.0], [[np.nan]])
    with pytest.raises(InvalidInputError, match="no point"):
        ReferenceAccelerations(JOINTS, ["j1"], 0.0, [], np.zeros((0, 1)))
