"""The live estimators' per-joint torque offsets (``offset_memory``, estimation/load.py).

A torque offset is constant in q, a load's torque is not: as the arm moves the rows
separate them. At rest they are not separable (the offsets are held), and a load change
is the load's (the offsets are held while the detector suspects one).
"""

from __future__ import annotations

import numpy as np
import pytest
from support.excited import COM, LINK, MASS, NOISE, exciting_trajectory, simulate

from robot_tv_dynamics.estimation import LoadEstimatorSettings, OnlineLoadEstimator
from robot_tv_dynamics.estimation.load import (
    OFFSET_MEMORY,
    OFFSET_PRIOR_STD,
    LoadFilter,
    LoadFilterConfig,
)
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia

#: A constant torque offset of each arm joint (fingers none) [N·m].
OFFSET = np.array([0.3, -0.3, 0.2, 0.3, -0.2, 0.2, 0.1, 0.0, 0.0])


@pytest.fixture(scope="module")
def excited_data(panda):
    return simulate(panda, exciting_trajectory(panda.nv), 10.0)


def _run(panda, data, method, offset_memory):
    est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(
        method=method, noise_std=(NOISE,), offset_memory=offset_memory))
    for t, q, qd, tau in data:
        est.add_sample(100.0 + t, q, qd, tau + OFFSET)
    return est


@pytest.mark.parametrize("method", ("classical", "projected", "geometric"))
def test_a_constant_offset_goes_to_the_offsets_not_to_the_com(panda, excited_data, method):
    # the 0.6 kg payload under 10 s of exciting motion, every joint's effort offset by
    # 0.1-0.3 N·m: with the offset state the COM is within 1 cm and the offsets are found;
    # without it the first moment takes the offsets (5-15 cm measured) and the detector
    # reads them as changes
    est = _run(panda, excited_data, method, OFFSET_MEMORY)
    assert np.linalg.norm(est.load.com - COM) <= 0.01, (method, est.load.com)
    assert abs(est.load.mass - MASS) <= 0.02, (method, est.load.mass)
    np.testing.assert_allclose(est.estimator.offset[:7], OFFSET[:7], atol=0.03)
    assert est.estimator.changes == 0, method
    without = _run(panda, excited_data, method, 0.0)
    assert without.estimator.offset.size == 0
    assert np.linalg.norm(without.load.com - COM) >= 0.03, (method, without.load.com)


def test_at_rest_the_offsets_are_held(panda):
    # at rest an offset and the load's mass and COM are not separable: the offsets keep
    # their value and covariance while the directions gravity determines are updated
    q = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02])
    zeros = np.zeros(panda.nv)
    tau = panda.inverse_dynamics(q, zeros, zeros, panda.theta_nominal).tau + OFFSET
    rng = np.random.default_rng(1)
    for method in ("classical", "geometric"):
        est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(
            method=method, noise_std=(NOISE,), offset_memory=OFFSET_MEMORY))
        for k in range(1000):  # 5 s at 200 Hz
            est.add_sample(1.0 + 0.005 * k, q, zeros, tau + rng.normal(0, NOISE, panda.nv))
        filt = est.estimator
        assert est.partial > 900 and filt.updates == est.partial, (method, est.partial)
        np.testing.assert_array_equal(filt.offset, np.zeros(panda.nv))
        np.testing.assert_array_equal(filt.offset_covariance,
                                      OFFSET_PRIOR_STD**2 * np.eye(panda.nv))


def _rows(rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal((7, 10)) * np.array([1.0] + [3.0] * 3 + [0.3] * 6)


def test_a_load_change_is_the_loads_not_the_offsets():
    # a moving arm's rows (a new configuration every 50 ms), a true offset per joint, and
    # a 1 kg load appearing at 4 s: the change is declared and the load takes it; the
    # offsets stay where they were (held while it is suspected and pending)
    rng = np.random.default_rng(7)
    offset = rng.uniform(-0.3, 0.3, 7)
    load = phi_from_mass_com_inertia(1.0, np.array([0.02, -0.01, 0.1]), np.diag([2e-3] * 3))
    filt = LoadFilter("classical", np.eye(10), np.zeros(10), 1e-6,
                      LoadFilterConfig(offset_memory=OFFSET_MEMORY))
    step, noise = 0.004, 0.2
    r = _rows(rng)
    before, moved = None, 0.0
    for k in range(int(10.0 / step)):
        t = k * step
        if k % 12 == 0:
            r = _rows(rng)
        phi = load if t >= 4.0 else np.zeros(10)
        y = r @ phi + offset + rng.normal(0.0, noise, 7)
        filt.update(r, y, np.full(7, 1.0 / noise**2), dt=step)
        if before is None and t >= 3.99:
            before = filt.offset.copy()
        if before is not None:
            moved = max(moved, float(np.max(np.abs(filt.offset - before))))
    assert filt.changes == 1, filt.changes
    np.testing.assert_allclose(before, offset, atol=0.03)
    assert moved <= 0.05, moved  # the change's 1-3 N·m did not go into the offsets
    assert abs(filt.load_phi[0] - 1.0) <= 0.03, filt.load_phi[0]
