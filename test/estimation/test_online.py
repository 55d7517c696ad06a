"""The live pipeline on a simulated arm: a constant, well-excited payload, and an arm at rest."""

from __future__ import annotations

import numpy as np
import pytest
from support.excited import LINK, NOISE, exciting_trajectory, payload_phi, simulate

from robot_tv_dynamics import UnknownNameError
from robot_tv_dynamics.estimation import LoadEstimatorSettings, OnlineLoadEstimator
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inertia import pseudo_inertia


@pytest.fixture(scope="module")
def excited_data(panda):
    return simulate(panda, exciting_trajectory(panda.nv), 10.0)


@pytest.mark.parametrize("method", ("classical", "projected", "geometric"))
def test_a_constant_well_excited_payload_is_recovered(panda, excited_data, method):
    est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(
        method=method, noise_std=(NOISE,)))
    margins = []
    for t, q, qd, tau in excited_data:
        if est.add_sample(100.0 + t, q, qd, tau):
            margins.append(est.margin)
    truth = payload_phi()
    load = est.load
    # stated tolerances after 10 s: mass 0.03 kg, COM 1.5 cm, inertia about the link
    # origin 0.02 kg·m² per entry (the load's inertia is the least excited part)
    assert abs(load.mass - 0.6) < 0.03, load.mass
    np.testing.assert_allclose(load.com, [0.01, 0.0, 0.08], atol=0.015)
    np.testing.assert_allclose(load.phi[4:], truth[4:], atol=0.02)
    assert est.held <= 20  # only the warm-up
    assert len(margins) == est.estimator.updates > 1900
    if method != "classical":  # the band holds after every update
        assert min(margins) >= est.epsilon * (1.0 - 1e-9), (min(margins), est.epsilon)
    if method == "projected":  # and the projection was active on the way
        assert est.estimator.projections > 0


def test_an_arm_at_rest_updates_only_what_gravity_determines_and_does_not_drift(panda):
    q = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02])
    zeros = np.zeros(panda.nv)
    tau = panda.inverse_dynamics(q, zeros, zeros, panda.theta_nominal).tau
    rng = np.random.default_rng(1)
    for method in ("classical", "projected", "geometric"):
        est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(
            method=method, noise_std=(NOISE,)))
        start = est.load.phi  # no load (geometric: its smallest body, 1 g at the origin)
        assert start[0] <= 1e-3 + 1e-12
        for k in range(2000):  # 10 s at 200 Hz
            est.add_sample(1.0 + 0.005 * k, q, zeros, tau + rng.normal(0, NOISE, panda.nv))
        # the first 4 filter delays (64 ms: 13 samples) wait for the q̈ filter, the
        # excitation check's warm-up (19 blocks) is held, the rest poorly excited: only
        # the directions gravity determines are updated (no load: they stay at none)
        assert est.settling == 13, est.settling
        assert not est.excited and est.held == 19, (method, est.held)
        assert est.partial == 2000 - 13 - 19, (method, est.partial)
        assert abs(est.load.mass) <= 0.01, (method, est.load.mass)
        # and the first moment, within what the noise can hide: 5e-3 kg·m weighs
        # 0.05 N·m at most on a joint
        assert np.abs(est.load.phi[1:4]).max() <= 5e-3, (method, est.load.phi)


def test_unknown_link_and_friction_for_other_joints_are_clear_errors(panda, ur5):
    with pytest.raises(UnknownNameError, match="no_such_link"):
        OnlineLoadEstimator(panda, "no_such_link", LoadEstimatorSettings())
    other = FrictionParameters.zeros(ur5.joint_names)
    with pytest.raises(InvalidInputError, match="shoulder_pan_joint"):
        OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(), other)
    with pytest.raises(InvalidInputError, match="method"):
        LoadEstimatorSettings(method="magic")


def test_every_method_implements_the_one_interface(panda):
    from robot_tv_dynamics.estimation import METHODS, PayloadEstimator

    for method in METHODS:
        est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(method=method)).estimator
        assert isinstance(est, PayloadEstimator) and est.method == method
        assert est.phi_covariance.shape == (10, 10) and est.consistent
        assert est.phi_rate is None  # the load filters model no rate


def test_a_failed_update_is_skipped_and_counted_never_raised(panda):
    from robot_tv_dynamics.estimation.load import LoadFilter

    for method in ("classical", "projected", "geometric"):
        est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(method=method))
        filt = est.estimator
        assert isinstance(filt, LoadFilter)
        before = filt.phi.copy()
        r = np.ones((panda.nv, 10))
        filt.update(r, np.full(panda.nv, np.nan), np.ones(panda.nv))
        filt.update(np.full((panda.nv, 10), 1e300), np.full(panda.nv, 1e300),
                    np.ones(panda.nv))
        assert filt.updates == 0 and sum(filt.skipped.values()) == 2, filt.skipped
        assert "non-finite measurement" in filt.skipped
        np.testing.assert_array_equal(filt.phi, before)
        assert np.all(np.isfinite(est.theta_hat))


def test_a_constant_load_opens_the_memory_at_most_once(panda, excited_data):
    est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(
        method="projected", noise_std=(NOISE,)))
    for t, q, qd, tau in excited_data:  # the 0.6 kg load is there from the start
        est.add_sample(100.0 + t, q, qd, tau)
    # the start from no load is a change; a constant load after it opens nothing
    assert est.estimator.changes <= 1, est.estimator.changes


def test_a_projection_period_projects_the_state_less_often_and_reports_bodies(
        panda, excited_data):
    """projected with projection_period 20 ms at 200 updates/s: the state is projected on
    every 4th update only, yet every reported load is a body that keeps the margin."""
    # effort noise of 0.2 N·m, so that the barely excited inertia of the state's load
    # wanders out of the constraints between projections
    noise = 0.2
    est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(
        method="projected", noise_std=(noise,), projection_period=0.02))
    margins, raw_below = [], 0
    rng = np.random.default_rng(3)
    for t, q, qd, tau in excited_data:
        if est.add_sample(100.0 + t, q, qd, tau + rng.normal(0.0, noise, tau.shape)):
            margins.append(est.margin)
            raw_load = est.estimator.raw_load_phi  # the state's load, not a body at times
            raw_below += (est.raw_margin < est.epsilon * (1.0 - 1e-9)
                          or np.linalg.eigvalsh(pseudo_inertia(raw_load))[0] < 0.0)
    updates = est.estimator.updates
    assert updates > 1900
    assert est.estimator.projections <= updates / 4 + 1
    assert raw_below > 0  # the state did leave the constraints between projections
    assert min(margins) >= est.epsilon * (1.0 - 1e-9), (min(margins), est.epsilon)
    load = est.load
    assert abs(load.mass - 0.6) < 0.03, load.mass
    np.testing.assert_allclose(load.com, [0.01, 0.0, 0.08], atol=0.015)
