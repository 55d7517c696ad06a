"""The rules that turn raw inputs into the state eq. (39) is evaluated at (plain Python, no ROS)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError
from robot_tv_dynamics.inputs import InputRules, ModelInputs, ReferenceAccelerations


def test_without_any_topic_the_state_is_the_urdf_with_zero_rates(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    q, qd = np.full(6, 0.1), np.zeros(6)
    state = inputs.sample(1.0, q, qd, now=0.0)
    np.testing.assert_array_equal(state.theta, ur5.theta_nominal)
    assert not state.theta_dot.any() and not state.gamma.any() and not state.gamma_dot.any()
    assert state.z_rate_norm == 0.0 and not state.qdd.any()  # first sample: no history


def test_qdd_of_a_ramp_in_velocity_converges_to_its_slope(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5, InputRules(acceleration_cutoff=50.0))
    slope = np.array([1.0, -2.0, 0.5, 0.0, 3.0, -1.0])
    for k in range(400):  # 0.4 s at 1 kHz, ≫ the 6.4 ms filter delay
        t = 1.0 + 1e-3 * k
        state = inputs.sample(t, np.zeros(6), slope * t, now=0.0)
    np.testing.assert_allclose(state.qdd, slope, rtol=1e-6)


def test_a_reference_gives_qdd_on_the_joints_it_names(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    names = ur5.joint_names[:2]
    reference = ReferenceAccelerations(
        ur5.joint_names, names, start=10.0, time_from_start=np.array([0.0, 1.0]),
        accelerations=np.array([[1.0, 2.0], [3.0, 4.0]]))
    inputs.set_reference(reference)
    state = inputs.sample(10.5, np.zeros(6), np.zeros(6), now=0.0)
    np.testing.assert_allclose(state.qdd[:2], [2.0, 3.0])
    assert not state.qdd[2:].any()  # the filter's first sample: zero


def test_rates_and_psi_go_stale_after_the_timeout(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5, InputRules(rate_timeout=0.5))
    rate = np.ones((6, 10))
    psi = np.zeros((6, 12))
    psi[-1, 0] = 2.0  # γ = Q₀ψ: linear momentum x of the last body
    inputs.set_theta_rates(rate, now=0.0)
    inputs.set_psi(psi, now=0.0)
    fresh = inputs.sample(1.0, np.zeros(6), np.zeros(6), now=0.4)
    np.testing.assert_array_equal(fresh.theta_dot, rate)
    assert fresh.gamma[-1, 0] == 2.0 and fresh.z_rate_norm > 0
    stale = inputs.sample(1.001, np.zeros(6), np.zeros(6), now=0.6)
    assert not stale.theta_dot.any() and not stale.gamma.any()


def test_theta_from_the_topic_is_differentiated_while_it_keeps_arriving(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5, InputRules(theta_rate_cutoff=20.0, max_gap=0.5))
    base = np.array(ur5.theta_nominal)
    for k in range(300):
        now = 1e-3 * k
        theta = base.copy()
        theta[-1, 0] += 0.5 * now  # 0.5 kg/s
        inputs.set_theta(theta, now)
    state = inputs.sample(1.0, np.zeros(6), np.zeros(6), now=0.3)
    assert state.theta_dot[-1, 0] == pytest.approx(0.5, rel=1e-3)
    later = inputs.sample(1.001, np.zeros(6), np.zeros(6), now=0.3 + 0.6)  # Θ stopped
    assert not later.theta_dot.any()


def test_a_payload_replaces_the_links_urdf_share_and_a_bad_one_changes_nothing(
        ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    phi = np.array([2.0, 0, 0, 0.2, 0.03, 0.03, 0.01, 0, 0, 0])
    inputs.set_payload("tool0", phi)
    expected = ur5.theta_with_link_inertia(ur5.theta_nominal, "tool0", phi)
    np.testing.assert_allclose(inputs.theta, expected)
    with pytest.raises(UnknownNameError):
        inputs.set_payload("no_such_link", phi)
    with pytest.raises(InvalidInputError):
        inputs.set_payload("tool0", np.full(10, np.nan))
    np.testing.assert_allclose(inputs.theta, expected)
    assert list(inputs.payloads) == ["tool0"]


def test_stamps_must_be_non_zero_and_increasing(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    with pytest.raises(InvalidInputError, match="zero"):
        inputs.check_stamp(0.0)
    inputs.sample(2.0, np.zeros(6), np.zeros(6), now=0.0)
    with pytest.raises(InvalidInputError, match="repeats"):
        inputs.check_stamp(2.0)
    with pytest.raises(InvalidInputError, match="backwards"):
        inputs.check_stamp(1.0)
    inputs.check_stamp(2.001)


def test_a_urdf_swap_keeps_theta_from_the_topic_and_reapplies_payloads(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    theta = np.array(ur5.theta_nominal) * 1.1
    inputs.set_theta(theta, now=0.0)
    phi = np.array([1.0, 0, 0, 0.1, 0.01, 0.01, 0.01, 0, 0, 0])
    inputs.set_payload("tool0", phi)
    assert inputs.swap_model(ur5) == []
    np.testing.assert_allclose(inputs.theta, ur5.theta_with_link_inertia(theta, "tool0", phi))


def test_finite_but_absurd_inputs_are_rejected_and_change_nothing(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    theta = np.array(ur5.theta_nominal)
    inputs.set_theta(theta, now=0.0)
    inputs.set_theta(1.01 * theta, now=0.01)
    before = {key: value for key, value in vars(inputs).items()}
    filter_state = vars(inputs._theta_filter).copy()
    huge = theta.copy()
    huge[2, 0] = 1e308
    for setter, value in ((inputs.set_theta, huge),
                          (inputs.set_theta_rates, np.full((6, 10), 1e300)),
                          (inputs.set_psi, np.full((6, 12), -1e308)),
                          (inputs.set_psi_rates, np.full((6, 12), np.inf))):
        with pytest.raises(InvalidInputError):
            setter(value, 0.02)
    with pytest.raises(InvalidInputError, match="beyond the bound"):
        inputs.set_payload(ur5.body_names[-1], np.array([1e308] + [0.0] * 9))
    assert vars(inputs).keys() == before.keys()
    for key, value in before.items():
        assert vars(inputs)[key] is value, key  # nothing replaced
    assert all(vars(inputs._theta_filter)[k] is v for k, v in filter_state.items())
    # and the next good Θ is taken (its rate from the good history only)
    inputs.set_theta(1.02 * theta, now=0.02)
    assert np.isfinite(inputs.sample(1.0, np.zeros(6), np.zeros(6), now=0.02).theta_dot).all()


def test_a_transaction_rolls_back_the_filters_and_payloads(ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    inputs.sample(1.0, np.zeros(6), np.zeros(6), now=0.0)
    last_stamp = inputs.last_stamp
    with pytest.raises(RuntimeError), inputs.transaction():
        inputs.sample(2.0, np.zeros(6), np.ones(6), now=0.0)
        inputs.set_payload(ur5.body_names[-1], np.array([1.0] + [0.0] * 3 + [1e-3] * 3
                                                         + [0.0] * 3))
        raise RuntimeError("a later step failed")
    assert inputs.last_stamp == last_stamp and not inputs.payloads
    state = inputs.sample(1.5, np.zeros(6), np.zeros(6), now=0.0)  # 1.5 > 1.0: accepted
    assert not state.qdd.any()


def test_a_transaction_rolls_back_the_stamped_theta_and_psi(ur5: RobotModel) -> None:
    """A stamped Θ/Ψ added inside a failed transaction is gone: the sample sees the old."""
    inputs = ModelInputs(ur5)
    n = ur5.n_bodies
    theta, psi = ur5.theta_nominal, np.zeros((n, 12))
    inputs.set_theta_stamped(1.0, theta)
    inputs.set_psi_stamped(1.0, psi)
    with pytest.raises(RuntimeError), inputs.transaction():
        inputs.set_theta_stamped(2.0, 2.0 * theta)  # appended
        inputs.set_theta_stamped(1.0, 3.0 * theta)  # replaces the sample at 1.0
        inputs.set_psi_stamped(2.0, np.full((n, 12), 0.01))
        raise RuntimeError("the statistics of the new Θ failed")
    assert len(inputs.theta_series) == 1 and len(inputs.psi_series) == 1
    state = inputs.sample(2.0, np.zeros(6), np.zeros(6), now=0.0)
    np.testing.assert_array_equal(state.theta, theta)  # held from 1.0, not 2Θ or 3Θ
    assert not state.gamma.any()
    inputs.set_theta_stamped(3.0, 2.0 * theta)  # after the rollback the series works on
    assert len(inputs.theta_series) == 2


def test_stamped_psi_is_taken_at_the_samples_stamp_and_wins_over_the_latest(
        ur5: RobotModel) -> None:
    from robot_tv_dynamics.dynamics import psi_momentum

    inputs = ModelInputs(ur5, InputRules(rate_timeout=0.0))
    n = ur5.n_bodies
    rng = np.random.default_rng(3)
    latest, b, c = (0.01 * rng.normal(size=(n, 12)) for _ in range(3))
    inputs.set_psi(latest, now=0.0)
    inputs.set_psi_stamped(1.0, b)
    inputs.set_psi_stamped(1.1, c)  # no rates: Ψ̇ is the slope between the stamps
    q, qd = np.zeros(ur5.nv), np.zeros(ur5.nv)
    state = inputs.sample(1.05, q, qd, now=0.0)
    # γ = Q₀ψ is linear in ψ: the interpolated Ψ's γ is the mean of the two γ
    np.testing.assert_allclose(state.gamma, 0.5 * (psi_momentum(b) + psi_momentum(c)),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(state.gamma_dot, (psi_momentum(c) - psi_momentum(b)) / 0.1,
                               rtol=1e-9, atol=1e-12)
    assert inputs.psi_status == "interpolated"
    bad = b.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InvalidInputError, match="psi"):
        inputs.set_psi_stamped(1.2, bad)
    assert len(inputs.psi_series) == 2


def test_a_sample_answered_late_takes_qdd_from_the_reference_that_covers_its_stamp():
    """One-point references per tick: a newer one must not hide the sample's own."""
    from robot_tv_dynamics import RobotModel
    from robot_tv_dynamics.inputs import ModelInputs
    from robot_tv_dynamics.inputs.reference import ReferenceAccelerations
    from robot_tv_dynamics.paths import example_robot_urdf

    model = RobotModel.from_urdf(example_robot_urdf("ur_description/urdf/ur5_robot.urdf"))
    inputs = ModelInputs(model)
    names = model.joint_names
    for k in range(3):  # references for t = 10.00, 10.02, 10.04 s, each qdd = k + 1
        inputs.set_reference(ReferenceAccelerations(names, names, 10.0 + 0.02 * k, [0.0],
                                                    np.full((1, model.nv), k + 1.0),
                                                    tolerance=0.005))
    q = np.zeros(model.nv)
    state = inputs.sample(10.02, q, q, now=0.0)  # answered after the 10.04 s reference
    np.testing.assert_array_equal(state.qdd, np.full(model.nv, 2.0))
    state = inputs.sample(10.04, q, q, now=0.0)
    np.testing.assert_array_equal(state.qdd, np.full(model.nv, 3.0))


def test_a_stamped_payload_applies_from_its_stamp_on_whatever_the_arrival_order(
        ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    light = np.array([1.0, 0, 0, 0.1, 0.01, 0.01, 0.01, 0, 0, 0])
    heavy = np.array([3.0, 0, 0, 0.3, 0.03, 0.03, 0.03, 0, 0, 0])
    nominal = np.array(ur5.theta_nominal)
    with_light = ur5.theta_with_link_inertia(nominal, "tool0", light)
    with_heavy = ur5.theta_with_link_inertia(nominal, "tool0", heavy)
    q = np.zeros(6)
    inputs.sample(1.0, q, q, now=0.0)
    inputs.set_payload("tool0", heavy, stamp=3.0)  # arrives first, applies later
    inputs.set_payload("tool0", light, stamp=2.0)
    assert inputs.pending_payloads == [(2.0, "tool0"), (3.0, "tool0")]
    np.testing.assert_allclose(inputs.theta, with_heavy)  # every payload received
    np.testing.assert_array_equal(inputs.sample(1.5, q, q, now=0.0).theta, nominal)
    np.testing.assert_allclose(inputs.sample(2.0, q, q, now=0.0).theta, with_light)
    np.testing.assert_allclose(inputs.sample(2.9, q, q, now=0.0).theta, with_light)
    np.testing.assert_allclose(inputs.sample(3.0, q, q, now=0.0).theta, with_heavy)
    assert inputs.pending_payloads == []
    # stamped before the newest sample (or unstamped): from the next sample on
    inputs.set_payload("tool0", light, stamp=0.5)
    np.testing.assert_allclose(inputs.sample(3.1, q, q, now=0.0).theta, with_light)


def test_a_stamped_payload_is_added_to_stamped_theta_at_the_samples_stamp(
        ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    theta = 1.1 * np.array(ur5.theta_nominal)
    phi = np.array([2.0, 0, 0, 0.2, 0.03, 0.03, 0.01, 0, 0, 0])
    inputs.set_theta_stamped(1.0, theta)
    inputs.set_payload("tool0", phi, stamp=1.2)
    q = np.zeros(6)
    np.testing.assert_allclose(inputs.sample(1.1, q, q, now=0.0).theta, theta)
    np.testing.assert_allclose(inputs.sample(1.2, q, q, now=0.0).theta,
                               ur5.theta_with_link_inertia(theta, "tool0", phi))


def test_a_pending_payload_rolls_back_with_the_transaction_and_survives_a_urdf_swap(
        ur5: RobotModel) -> None:
    inputs = ModelInputs(ur5)
    phi = np.array([2.0, 0, 0, 0.2, 0.03, 0.03, 0.01, 0, 0, 0])
    with pytest.raises(RuntimeError), inputs.transaction():
        inputs.set_payload("tool0", phi, stamp=5.0)
        raise RuntimeError("a later step failed")
    assert inputs.pending_payloads == [] and not inputs.payloads
    inputs.set_payload("tool0", phi, stamp=5.0)
    assert inputs.swap_model(ur5) == []
    assert inputs.pending_payloads == [(5.0, "tool0")]
    q = np.zeros(6)
    np.testing.assert_array_equal(inputs.sample(4.0, q, q, now=0.0).theta, ur5.theta_nominal)
    np.testing.assert_allclose(inputs.sample(5.0, q, q, now=0.0).theta,
                               ur5.theta_with_link_inertia(ur5.theta_nominal, "tool0", phi))
    with pytest.raises(InvalidInputError, match="not finite"):
        inputs.set_payload("tool0", phi, stamp=math.nan)
