"""LiveObservers (observer/live.py): residuals and statuses of a node's observers, without a node.

An arm held still (q̇ = q̈ = 0) satisfies G(q, Θ) = τ + τ_ext: measured efforts built from
Pinocchio's computeGeneralizedGravity with a known τ_ext must give r → τ_ext.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inputs import ModelState
from robot_tv_dynamics.observer import OBSERVER_MODELS, LiveObservers

RATE = 1000.0  # samples per second


def held_state(robot: RobotModel, t: float, q: np.ndarray, theta: np.ndarray) -> ModelState:
    n, nv = robot.n_bodies, robot.nv
    return ModelState(t=t, q=q, qd=np.zeros(nv), qdd=np.zeros(nv), theta=theta,
                      theta_dot=np.zeros((n, 10)), gamma=np.zeros((n, 6)),
                      gamma_dot=np.zeros((n, 6)))


def gravity(robot: RobotModel, q: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """G(q, scale·Θ_nominal) = scale·G(q, Θ_nominal) (linear in Θ), by Pinocchio."""
    model = robot.pinocchio_model
    return scale * pin.computeGeneralizedGravity(model, model.createData(), q)


def run(observers: LiveObservers, robot: RobotModel, q, efforts, thetas, seconds=1.0):
    out = {}
    for k in range(int(seconds * RATE)):
        out = observers.update(efforts(k), held_state(robot, k / RATE, q, thetas(k)))
    return out


def test_an_external_torque_on_a_held_arm_is_the_residual_and_a_contact(ur5) -> None:
    q = np.array([0.3, -1.0, 1.2, -0.5, 0.4, 0.0])
    tau_ext = np.zeros(ur5.nv)
    tau_ext[1] = 12.0  # N·m on the shoulder
    observers = LiveObservers(ur5, "generalized", gain=50.0, threshold=5.0)
    r = run(observers, ur5, q, lambda k: gravity(ur5, q) - tau_ext,
            lambda k: ur5.theta_nominal)
    np.testing.assert_allclose(r["generalized"], tau_ext, atol=1e-6)
    contact, observer = observers.statuses()
    assert contact.name == "dynamics_node: contact" and contact.level == 2
    assert ur5.joint_names[1] in contact.message
    assert observer.level == 0 and dict(observer.values)["samples"] == RATE


def test_the_classical_observer_takes_a_payload_for_a_contact_the_generalized_does_not(
        ur5) -> None:
    """Θ grows 20 % after the first sample: classical r = G(Θ₀) − G(1.2 Θ₀) = −0.2 G."""
    q = np.array([0.0, -1.2, 1.0, 0.3, 0.2, 0.0])
    theta0 = np.array(ur5.theta_nominal)
    observers = LiveObservers(ur5, "both", gain=50.0, threshold=1e6)
    r = run(observers, ur5, q, lambda k: gravity(ur5, q, 1.0 if k == 0 else 1.2),
            lambda k: theta0 if k == 0 else 1.2 * theta0)
    np.testing.assert_allclose(r["generalized"], 0.0, atol=1e-6)
    np.testing.assert_allclose(r["classical"], -0.2 * gravity(ur5, q), atol=1e-6)
    names = [s.name for s in observers.statuses()]
    assert names == ["dynamics_node: contact", "dynamics_node: contact (classical)",
                     "dynamics_node: observer"]


def test_friction_is_subtracted_from_the_measured_efforts(ur5) -> None:
    q = np.zeros(ur5.nv)
    offset = np.linspace(0.5, 3.0, ur5.nv)
    zero = np.zeros(ur5.nv)
    friction = FrictionParameters(tuple(ur5.joint_names), zero, zero, offset,
                                  np.full(ur5.nv, 0.1))
    with_friction = LiveObservers(ur5, friction=friction)
    without = LiveObservers(ur5)
    efforts = gravity(ur5, q) + offset  # at rest τ_f = the offset
    np.testing.assert_allclose(
        run(with_friction, ur5, q, lambda k: efforts, lambda k: ur5.theta_nominal)[
            "generalized"], 0.0, atol=1e-6)
    np.testing.assert_allclose(
        run(without, ur5, q, lambda k: efforts, lambda k: ur5.theta_nominal)["generalized"],
        -offset, atol=1e-6)
    assert dict(with_friction.statuses()[-1].values)["friction"] == "friction_file"


def test_a_sample_without_efforts_is_counted_with_its_reason(ur5) -> None:
    observers = LiveObservers(ur5)
    q = np.zeros(ur5.nv)
    assert observers.update(None, held_state(ur5, 0.0, q, ur5.theta_nominal)) == {}
    observer = observers.statuses()[-1]
    assert observer.level == 1 and "no effort" in observer.message
    assert dict(observer.values)["dropped"] == 1
    assert observers.statuses()[-1].level == 0  # the reason is reported once


def test_a_malformed_effort_keeps_its_own_reason_in_the_status(ur5) -> None:
    # a node that could not read a sample's efforts says why, not "carries no effort"
    observers = LiveObservers(ur5)
    state = held_state(ur5, 0.0, np.zeros(ur5.nv), ur5.theta_nominal)
    why = "joint_states effort not used: joint_states.effort: has 3 entries for 6 names"
    assert observers.update(None, state, why) == {}
    observer = observers.statuses()[-1]
    assert observer.level == 1 and why in observer.message
    assert "carries no effort" not in observer.message


def test_a_time_going_backwards_is_dropped_by_the_observer_not_raised(ur5) -> None:
    observers = LiveObservers(ur5)
    q = np.zeros(ur5.nv)
    state = held_state(ur5, 1.0, q, ur5.theta_nominal)
    assert "generalized" in observers.update(gravity(ur5, q), state)
    assert observers.update(gravity(ur5, q), state) == {}  # the same t again
    assert "generalized observer" in observers.reason and observers.dropped == 1


def test_off_runs_nothing_and_an_unknown_model_is_refused(ur5) -> None:
    off = LiveObservers(ur5, "off")
    q = np.zeros(ur5.nv)
    assert off.update(gravity(ur5, q), held_state(ur5, 0.0, q, ur5.theta_nominal)) == {}
    assert off.statuses() == [] and set(OBSERVER_MODELS) == {
        "generalized", "classical", "both", "off"}
    with pytest.raises(InvalidInputError, match='"kalman" is not one of'):
        LiveObservers(ur5, "kalman")
