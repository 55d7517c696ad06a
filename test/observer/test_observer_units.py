"""Unit properties of the observer, the contact detector and the wrench torque."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError
from robot_tv_dynamics.observer import (
    ContactDetector,
    ExternalWrench,
    MomentumObserver,
    ObserverConfig,
    wrench_joint_torque,
)

NAMES = ["j1", "j2", "j3"]


# ------------------------------------------------------------------ observer
@pytest.mark.parametrize("kwargs", [{"gain": 0.0}, {"gain": -1.0}, {"gain": math.nan},
                                    {"kind": "adaptive"}, {"torque_rule": "simpson"},
                                    {"max_gap": 0.0}])
def test_bad_observer_settings_are_rejected(kwargs):
    with pytest.raises(InvalidInputError):
        ObserverConfig(**kwargs)


def test_gain_vector_must_have_one_entry_per_joint(panda):
    with pytest.raises(InvalidInputError, match="one per joint"):
        MomentumObserver(panda, ObserverConfig(gain=(1.0, 2.0)))
    observer = MomentumObserver(panda, ObserverConfig(gain=tuple(range(1, panda.nv + 1))))
    np.testing.assert_array_equal(observer.gain, np.arange(1, panda.nv + 1))


def _rest(model):
    q = 0.5 * (model.joint_limits.lower + model.joint_limits.upper)
    tau = model.inverse_dynamics(q, np.zeros(model.nv), np.zeros(model.nv),
                                 model.theta_nominal).tau
    return q, np.zeros(model.nv), tau


def test_arm_held_at_rest_by_its_gravity_torque_has_zero_residual(panda):
    q, qd, tau = _rest(panda)
    observer = MomentumObserver(panda)
    for k in range(20):
        r = observer.update(0.001 * k, q, qd, tau)
    assert np.abs(r).max() < 1e-10


def test_constant_extra_torque_at_rest_is_seen_through_the_first_order_lag(panda):
    """Arm held (q̇ = 0) while the measured torque lacks 2 N·m on joint 2: τ_ext = +2 N·m."""
    q, qd, tau = _rest(panda)
    gain, h = 20.0, 0.002
    tau_measured = tau.copy()
    tau_measured[1] -= 2.0
    observer = MomentumObserver(panda, ObserverConfig(gain=gain))
    for k in range(101):
        r = observer.update(h * k, q, qd, tau_measured)
    expected = 2.0 * (1 - math.exp(-gain * 100 * h))
    assert r[1] == pytest.approx(expected, rel=1e-9)
    assert np.abs(np.delete(r, 1)).max() < 1e-9


@given(st.lists(st.floats(1e-4, 0.05), min_size=1, max_size=30),
       st.floats(1.0, 500.0), st.floats(-5.0, 5.0))
def test_discretisation_is_exact_for_a_held_external_torque_on_any_sample_grid(
        panda, steps, gain, a_step):
    """At rest, τ_ext constant: r(t) = A (1 − e^{−K_O t}) whatever the sample intervals."""
    q, qd, tau = _rest(panda)
    tau_measured = tau.copy()
    tau_measured[3] -= a_step
    observer = MomentumObserver(panda, ObserverConfig(gain=gain, max_gap=1.0))
    t = 0.0
    observer.update(t, q, qd, tau_measured)
    for h in steps:
        t += h
        r = observer.update(t, q, qd, tau_measured)
    assert r[3] == pytest.approx(a_step * -math.expm1(-gain * t), rel=1e-9, abs=1e-11)


def test_bad_samples_raise_and_leave_the_state_unchanged(panda):
    q, qd, tau = _rest(panda)
    observer = MomentumObserver(panda)
    observer.update(0.0, q, qd, tau + 1.0)
    r1 = observer.update(0.001, q, qd, tau + 1.0)
    bad_qd = qd.copy()
    bad_qd[0] = np.nan
    for t, args in [(0.001, (q, qd, tau)), (0.0005, (q, qd, tau)), (0.002, (q, bad_qd, tau)),
                    (0.002, (q[:-1], qd, tau)), (math.inf, (q, qd, tau))]:
        with pytest.raises(InvalidInputError):
            observer.update(t, *args)
    assert observer.time == 0.001
    np.testing.assert_array_equal(observer.residual, r1)
    r2 = observer.update(0.002, q, qd, tau + 1.0)
    reference = MomentumObserver(panda)
    for t in (0.0, 0.001):
        reference.update(t, q, qd, tau + 1.0)
    np.testing.assert_array_equal(r2, reference.update(0.002, q, qd, tau + 1.0))


def test_reset_and_long_gaps_restart_from_zero(panda):
    q, qd, tau = _rest(panda)
    observer = MomentumObserver(panda, ObserverConfig(max_gap=0.05))
    observer.update(0.0, q, qd, tau + 1.0)
    assert np.abs(observer.update(0.01, q, qd, tau + 1.0)).max() > 0.1
    assert np.abs(observer.update(0.2, q, qd, tau + 1.0)).max() == 0.0  # gap → restart
    assert observer.restarts == 1
    observer.reset()
    assert observer.time is None
    assert np.abs(observer.update(0.3, q, qd, tau + 1.0)).max() == 0.0


# ------------------------------------------------------------------ detector
def test_joint_detector_hysteresis_and_events():
    detector = ContactDetector(NAMES, [1.0, 2.0, 1.0], release=0.5)
    signal = [(0.0, [0.0, 0, 0]), (0.1, [1.2, 0, 0]), (0.2, [0.8, 1.9, 0]),
              (0.3, [-1.6, 2.1, 0]), (0.4, [0.4, 1.5, 0]), (0.5, [0.3, 0.9, 0]),
              (0.6, [1.01, 0, 0])]
    started = [detector.update(t, r) for t, r in signal]
    assert [len(s) for s in started] == [0, 1, 0, 1, 0, 0, 1]
    assert detector.in_contact and detector.active_joints == ("j1",)
    events = detector.events
    assert [(e.joint, e.t_start, e.t_end, e.peak) for e in events] == [
        ("j1", 0.1, 0.4, -1.6), ("j2", 0.3, 0.5, 2.1), ("j1", 0.6, None, 1.01)]
    assert events[0].as_dict() == {"t_start": 0.1, "t_end": 0.4, "joint": "j1", "peak": -1.6}
    detector.reset()
    assert detector.events == [] and not detector.in_contact


def test_norm_detector_reports_the_dominant_joint():
    detector = ContactDetector(NAMES, 1.0, mode="norm", release=0.8)
    for t, r in [(0.0, [0.6, 0.6, 0.0]), (0.1, [0.6, 0.9, 0.0]), (0.2, [0.1, 0.1, -1.5]),
                 (0.3, [0.5, 0.5, 0.0])]:
        detector.update(t, r)
    (event,) = detector.events
    assert event.t_start == 0.1 and event.t_end == 0.3
    assert event.joint == "j3" and event.peak == pytest.approx(math.sqrt(0.02 + 2.25))


@pytest.mark.parametrize("kwargs", [{"threshold": 0.0}, {"threshold": [1.0, 1.0]},
                                    {"threshold": 1.0, "release": 0.0},
                                    {"threshold": 1.0, "release": 1.5},
                                    {"threshold": 1.0, "mode": "sum"},
                                    {"threshold": [1.0, 1.0, 1.0], "mode": "norm"}])
def test_bad_detector_settings_are_rejected(kwargs):
    with pytest.raises(InvalidInputError):
        ContactDetector(NAMES, **kwargs)


# ------------------------------------------------------------------ wrench
def _link_point_world(model, q, link, point):
    """World position of a point fixed in a URDF link, by Pinocchio frame placement."""
    pm = model.pinocchio_model
    data = pm.createData()
    pin.framesForwardKinematics(pm, data, model.pinocchio_configuration(q))
    placement = data.oMf[pm.getFrameId(link)]
    return placement.rotation @ np.asarray(point) + placement.translation, placement.rotation


@pytest.mark.parametrize("link, point", [("panda_link5", (0.0, 0.05, -0.1)),
                                         ("panda_hand", (0.01, 0.0, 0.1))])
def test_wrench_torque_is_the_virtual_work_gradient_of_a_constant_world_force(panda, link,
                                                                               point):
    rng = np.random.default_rng(11)
    q = rng.uniform(panda.joint_limits.lower, panda.joint_limits.upper)
    force = np.array([3.0, -4.0, 12.0])
    h = 1e-6
    gradient = np.array([
        force @ (_link_point_world(panda, q + h * e, link, point)[0]
                 - _link_point_world(panda, q - h * e, link, point)[0]) / (2 * h)
        for e in np.eye(panda.nv)])
    tau = wrench_joint_torque(panda, q, link, force, point=point)
    np.testing.assert_allclose(tau, gradient, atol=1e-7)
    # the same force given in link coordinates
    rotation = _link_point_world(panda, q, link, point)[1]
    tau_link = wrench_joint_torque(panda, q, link, rotation.T @ force, point=point,
                                   frame="link")
    np.testing.assert_allclose(tau_link, tau, atol=1e-12)


def test_wrench_moment_is_the_gradient_of_the_rotation_work(panda):
    rng = np.random.default_rng(12)
    q = rng.uniform(panda.joint_limits.lower, panda.joint_limits.upper)
    moment = np.array([0.5, -1.0, 2.0])
    h = 1e-6
    rotation0 = _link_point_world(panda, q, "panda_link6", (0, 0, 0))[1]
    gradient = []
    for e in np.eye(panda.nv):
        plus = _link_point_world(panda, q + h * e, "panda_link6", (0, 0, 0))[1]
        minus = _link_point_world(panda, q - h * e, "panda_link6", (0, 0, 0))[1]
        omega_hat = (plus - minus) / (2 * h) @ rotation0.T  # world angular velocity per q̇_i
        gradient.append(moment @ np.array([omega_hat[2, 1], omega_hat[0, 2], omega_hat[1, 0]]))
    tau = wrench_joint_torque(panda, q, "panda_link6", np.zeros(3), moment)
    np.testing.assert_allclose(tau, gradient, atol=1e-7)


def test_external_wrench_window_and_ramp(panda):
    q = 0.5 * (panda.joint_limits.lower + panda.joint_limits.upper)
    wrench = ExternalWrench("panda_hand", (0.0, 0.0, -10.0), 1.0, 2.0, rise=0.2)
    full = wrench_joint_torque(panda, q, "panda_hand", (0.0, 0.0, -10.0))
    assert np.all(wrench.joint_torque(panda, q, 0.99) == 0.0)
    assert np.all(wrench.joint_torque(panda, q, 2.0) == 0.0)
    np.testing.assert_allclose(wrench.joint_torque(panda, q, 1.5), full)
    np.testing.assert_allclose(wrench.joint_torque(panda, q, 1.1), 0.5 * full)
    with pytest.raises(InvalidInputError):
        ExternalWrench("panda_hand", (0, 0, 1), 2.0, 1.0)
    with pytest.raises(InvalidInputError):
        ExternalWrench("panda_hand", (0, 0, 1), 0.0, 1.0, rise=0.6)
    with pytest.raises(UnknownNameError):
        wrench_joint_torque(panda, q, "no_such_link", (0, 0, 1))
