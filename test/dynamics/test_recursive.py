"""RecursiveDynamics (RNEA/ABA/CRBA with f^ext) against the term-by-term reference of eq. (39).

The reference is the contraction backend (``RobotModel.inverse_dynamics`` and
``dynamics.contraction.forward_dynamics``, contracting J and ∂J/∂q with Z(Φ)); the
independent truth is the particle Lagrangian of test/particle_lagrangian.py.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pinocchio as pin
import pytest
from support.particle_lagrangian import (
    find_example_robot_urdf,
    fixed_particle,
    make_particle,
    particle_state,
    ramp_mass_particle,
    random_particles,
    random_path,
    total_theta,
    truth_torque,
)

from robot_tv_dynamics import InvalidInputError, PhysicalConsistencyError, RobotModel
from robot_tv_dynamics.dynamics import Q0, contraction, psi_momentum
from robot_tv_dynamics.dynamics.recursive import PSI_FROM_GAMMA, RecursiveDynamics

RTOL = 1e-9


def inverse_dynamics(model, q, qd, qdd, theta, theta_dot=None, psi=None, psi_dot=None):
    """The one-call fast path (all loads new every call)."""
    return model.torque(q, qd, qdd, theta, theta_dot, psi, psi_dot)


def _gamma(model, value):
    if value is None:
        return np.zeros((model.n_bodies, 6))
    value = np.asarray(value, dtype=float)
    return value if value.shape[1] == 6 else psi_momentum(value)


def reference_forward(model, q, qd, tau, theta, theta_dot=None, psi=None, psi_dot=None):
    """q̈ by the contraction backend: M⁻¹(τ − bias) with every term contracted."""
    theta_dot = np.zeros((model.n_bodies, 10)) if theta_dot is None else theta_dot
    return contraction.forward_dynamics(
        model.kinematics(q), np.asarray(qd, dtype=float), np.asarray(tau, dtype=float),
        np.asarray(theta, dtype=float), np.asarray(theta_dot, dtype=float),
        _gamma(model, psi), _gamma(model, psi_dot))
LOCKED_FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]


def _continuous_ur5() -> RobotModel:
    """The UR5 with its first and last joints made continuous (Pinocchio q = (cos, sin))."""
    with open(find_example_robot_urdf("ur5"), encoding="utf-8") as file:
        xml = file.read()
    for joint in ("shoulder_pan_joint", "wrist_3_joint"):
        xml, count = re.subn(rf'(<joint name="{joint}" type=)"revolute"', r'\1"continuous"', xml)
        assert count == 1
    return RobotModel.from_urdf_string(xml, "ur5-continuous")


@pytest.fixture(scope="module", params=["panda", "ur5", "panda_locked", "ur5_continuous"])
def arm(request: pytest.FixtureRequest, panda: RobotModel, ur5: RobotModel) -> RobotModel:
    """Panda, UR5, Panda with locked fingers, UR5 with two continuous joints."""
    if request.param == "panda":
        return panda
    if request.param == "ur5":
        return ur5
    if request.param == "panda_locked":
        return RobotModel.from_urdf(find_example_robot_urdf("panda"), locked_joints=LOCKED_FINGERS)
    robot = _continuous_ur5()
    assert robot.pinocchio_model.nq == robot.nv + 2
    return robot


def _relative_error(value: np.ndarray, reference: np.ndarray) -> float:
    return float(np.abs(value - reference).max() / np.abs(reference).max())


def _random_state(robot: RobotModel, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
    return q, rng.uniform(-2, 2, robot.nv), rng.uniform(-5, 5, robot.nv)


def _random_loads(robot: RobotModel, rng: np.random.Generator, kind: str) -> dict:
    """Θ, Θ̇, Ψ, Ψ̇ of one kind; Θ̇, Ψ, Ψ̇ are arbitrary vectors (rates, not bodies)."""
    n = robot.n_bodies
    theta = np.array(robot.theta_nominal) * rng.uniform(0.5, 1.5, (n, 1))
    if kind == "inconsistent":
        theta = rng.normal(size=(n, 10))
    elif kind == "zero_mass":
        theta[rng.integers(n), 0] = 0.0  # m = 0 with h ≠ 0: no Pinocchio Inertia holds it
        theta[rng.integers(n), :4] = 0.0  # m = 0, h = 0
    elif kind == "far_com":
        theta[rng.integers(n), :4] = [1e-9, 0.4, -0.2, 0.1]  # COM 4e8 m away
    elif kind == "negative_mass":
        theta[rng.integers(n), 0] *= -1.0
    theta_dot = rng.normal(size=(n, 10))
    theta_dot[rng.integers(n), 0] = 0.0  # ṁ = 0 with ḣ ≠ 0
    return dict(theta=theta, theta_dot=theta_dot, psi=rng.normal(size=(n, 12)),
                psi_dot=rng.normal(size=(n, 12)))


KINDS = ["consistent", "inconsistent", "zero_mass", "far_com", "negative_mass"]
LOADS = ("theta", "theta_dot", "psi", "psi_dot")


@pytest.mark.parametrize("shared", [True, False], ids=["shared_buffers", "public_api"])
@pytest.mark.parametrize("kind", KINDS)
def test_tau_mass_matrix_and_bias_equal_the_reference(
        arm: RobotModel, kind: str, shared: bool) -> None:
    rd = RecursiveDynamics(arm, shared_buffers=shared)
    rng = np.random.default_rng(7)
    for _ in range(4):
        loads = _random_loads(arm, rng, kind)
        q, qd, qdd = _random_state(arm, rng)
        reference = arm.inverse_dynamics(q, qd, qdd, **loads)
        rd.set_loads(**loads)
        if kind == "consistent":
            assert rd.held_directly.all()
        elif kind != "inconsistent":
            assert not rd.held_directly.all()
        assert _relative_error(rd.inverse_dynamics(q, qd, qdd), reference.tau) < RTOL
        assert _relative_error(rd.mass_matrix(q), reference.mass_matrix) < RTOL
        expected_bias = reference.tau - reference.mass_matrix @ qdd
        assert _relative_error(rd.bias(q, qd), expected_bias) < RTOL


def test_wild_loads_over_twelve_orders_of_magnitude_equal_the_reference(
        panda: RobotModel) -> None:
    """Entries 1e-8…1e4 of either sign, a fifth of them zero: no warning, no loss."""
    rd = RecursiveDynamics(panda)
    rng = np.random.default_rng(12)
    n = panda.n_bodies
    shifted = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(200):
            theta = rng.normal(size=(n, 10)) * 10.0 ** rng.uniform(-8, 4, size=(n, 10))
            theta[rng.random((n, 10)) < 0.2] = 0.0
            theta_dot = rng.normal(size=(n, 10)) * 10.0 ** rng.uniform(-3, 2, size=(n, 10))
            psi, psi_dot = rng.normal(size=(n, 12)), rng.normal(size=(n, 12))
            q, qd, qdd = _random_state(panda, rng)
            reference = panda.inverse_dynamics(q, qd, qdd, theta, theta_dot, psi, psi_dot).tau
            rd.set_loads(theta, theta_dot, psi, psi_dot)
            shifted += int((~rd.held_directly).sum())
            assert _relative_error(rd.inverse_dynamics(q, qd, qdd), reference) < RTOL
    assert shifted > 100  # both paths are exercised


@pytest.mark.parametrize("psi_form", ["psi", "gamma"])
def test_each_rate_term_alone_equals_the_reference(arm: RobotModel, psi_form: str) -> None:
    """Θ̇ only, Ψ only, Ψ̇ only (so no term hides behind another), in both Ψ layouts."""
    rd = RecursiveDynamics(arm)
    rng = np.random.default_rng(11)
    n = arm.n_bodies
    q, qd, qdd = _random_state(arm, rng)
    theta = np.array(arm.theta_nominal)
    for name in ("theta_dot", "psi", "psi_dot"):
        value = rng.normal(size=(n, 10 if name == "theta_dot" else 12))
        if name != "theta_dot" and psi_form == "gamma":
            value = psi_momentum(value)
        reference = arm.inverse_dynamics(q, qd, qdd, theta, **{name: value})
        classical = arm.inverse_dynamics(q, qd, qdd, theta).tau
        assert np.abs(reference.tau - classical).max() > 1e-2 * np.abs(classical).max()
        rd.set_loads(theta, **{name: value})
        assert _relative_error(rd.inverse_dynamics(q, qd, qdd), reference.tau) < RTOL


def test_gamma_layout_maps_exactly_to_psi() -> None:
    np.testing.assert_array_equal(Q0 @ PSI_FROM_GAMMA, np.eye(6))


def test_classical_loads_equal_pinocchio(arm: RobotModel) -> None:
    rd = RecursiveDynamics(arm)
    model = arm.pinocchio_model
    data = model.createData()
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, qd, qdd = _random_state(arm, rng)
        q_pin = arm.pinocchio_configuration(q)
        tau = pin.rnea(model, data, q_pin, qd, qdd)
        np.testing.assert_allclose(rd.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rd.mass_matrix(q), pin.crba(model, data, q_pin), atol=1e-12)
        np.testing.assert_allclose(rd.forward_dynamics(q, qd, tau), qdd, atol=1e-9)


@pytest.mark.parametrize("kind", ["consistent", "massless_row", "point_mass_row"])
def test_forward_dynamics_equals_the_reference_and_inverts_tau(arm: RobotModel, kind: str) -> None:
    """ABA (rows held, Z ≻ 0) and the Cholesky path (a shifted row, a singular Z) alike."""
    rd = RecursiveDynamics(arm)
    rng = np.random.default_rng(5)
    for _ in range(4):
        loads = _random_loads(arm, rng, "consistent")
        body = int(rng.integers(1, arm.n_bodies))
        if kind == "massless_row":
            loads["theta"][body, :4] = 0.0  # m = 0, h = 0, I kept: M stays ≻ 0
        elif kind == "point_mass_row":
            m, c = 2.0, np.array([0.05, -0.02, 0.1])
            loads["theta"][body] = [m, *(m * c), m * (c[1] ** 2 + c[2] ** 2),
                                    m * (c[0] ** 2 + c[2] ** 2), m * (c[0] ** 2 + c[1] ** 2),
                                    -m * c[0] * c[1], -m * c[1] * c[2], -m * c[0] * c[2]]
        q, qd, qdd = _random_state(arm, rng)
        tau = arm.inverse_dynamics(q, qd, qdd, **loads).tau
        reference = reference_forward(arm, q, qd, tau, **loads)
        rd.set_loads(**loads)
        assert rd._aba_exact() == (kind == "consistent")
        result = rd.forward_dynamics(q, qd, tau)
        assert _relative_error(result, reference) < RTOL
        np.testing.assert_array_equal(rd.forward_dynamics_unchecked(q, qd, tau), result)
        np.testing.assert_allclose(result, qdd, rtol=0, atol=1e-8 * np.abs(qdd).max())
        assert _relative_error(rd.inverse_dynamics(q, qd, result), tau) < RTOL


@pytest.mark.parametrize("theta_kind", ["negated", "negated_shifted"])
def test_forward_dynamics_refuses_an_indefinite_mass_matrix(
        ur5: RobotModel, theta_kind: str) -> None:
    theta = -np.asarray(ur5.theta_nominal)
    if theta_kind == "negated_shifted":
        theta[2, 0] = 0.0
    rd = RecursiveDynamics(ur5)
    rd.set_loads(theta)
    with pytest.raises(PhysicalConsistencyError, match="not positive definite"):
        rd.forward_dynamics(np.zeros(6), np.zeros(6), np.zeros(6))
    with pytest.raises(PhysicalConsistencyError, match="not positive definite"):
        rd.forward_dynamics_unchecked(np.zeros(6), np.zeros(6), np.zeros(6))


def test_forward_dynamics_refuses_exactly_when_the_reference_does(ur5: RobotModel) -> None:
    """Slightly perturbed (often inconsistent) Θ: M ≻ 0 at some states, not at others."""
    rd = RecursiveDynamics(ur5)
    rng = np.random.default_rng(9)
    outcomes = set()
    for _ in range(60):
        loads = _random_loads(ur5, rng, "consistent")
        loads["theta"] = np.array(ur5.theta_nominal) + 0.05 * rng.normal(size=(ur5.n_bodies, 10))
        q, qd, _ = _random_state(ur5, rng)
        tau = rng.normal(size=ur5.nv)
        rd.set_loads(**loads)
        try:
            reference = reference_forward(ur5, q, qd, tau, **loads)
        except PhysicalConsistencyError:
            with pytest.raises(PhysicalConsistencyError, match="not positive definite"):
                rd.forward_dynamics(q, qd, tau)
            outcomes.add("refused")
            continue
        assert _relative_error(rd.forward_dynamics(q, qd, tau), reference) < RTOL
        outcomes.add("solved")
    assert outcomes == {"refused", "solved"}


def test_loads_held_and_loads_new_every_call_give_identical_results(arm: RobotModel) -> None:
    rng = np.random.default_rng(3)
    loads = _random_loads(arm, rng, "zero_mass")
    rd = RecursiveDynamics(arm)
    rd.set_loads(**loads)
    for _ in range(5):
        q, qd, qdd = _random_state(arm, rng)
        held = rd.inverse_dynamics(q, qd, qdd)
        new = inverse_dynamics(arm, q, qd, qdd, **loads)
        np.testing.assert_array_equal(held, new)
    # other loads in between do not leak into the next call
    other = _random_loads(arm, rng, "consistent")
    q, qd, qdd = _random_state(arm, rng)
    inverse_dynamics(arm, q, qd, qdd, **other)
    np.testing.assert_array_equal(inverse_dynamics(arm, q, qd, qdd, **loads),
                                  rd.inverse_dynamics(q, qd, qdd))
    # None rates after non-zero ones: nothing of the previous f^ext is left
    fresh = RecursiveDynamics(arm)
    fresh.set_loads(loads["theta"])
    np.testing.assert_array_equal(inverse_dynamics(arm, q, qd, qdd, loads["theta"]),
                                  fresh.inverse_dynamics(q, qd, qdd))


def test_individual_setters_equal_set_loads(arm: RobotModel) -> None:
    rng = np.random.default_rng(4)
    loads = _random_loads(arm, rng, "far_com")
    together, apart = RecursiveDynamics(arm), RecursiveDynamics(arm)
    together.set_loads(**loads)
    apart.set_psi_dot(loads["psi_dot"])
    apart.set_theta_dot(loads["theta_dot"])
    apart.set_theta(loads["theta"])
    apart.set_psi(loads["psi"])
    q, qd, qdd = _random_state(arm, rng)
    np.testing.assert_array_equal(apart.inverse_dynamics(q, qd, qdd),
                                  together.inverse_dynamics(q, qd, qdd))
    for name, value in loads.items():
        np.testing.assert_array_equal(getattr(apart, name), value)
    # setting the rates back to zero returns to the classical torque
    for setter in (apart.set_theta_dot, apart.set_psi, apart.set_psi_dot):
        setter(None)
    classical = arm.inverse_dynamics(q, qd, qdd, loads["theta"]).tau
    assert _relative_error(apart.inverse_dynamics(q, qd, qdd), classical) < RTOL


def test_shared_buffers_are_used_and_agree_with_the_public_api(arm: RobotModel) -> None:
    fast, slow = RecursiveDynamics(arm), RecursiveDynamics(arm, shared_buffers=False)
    assert fast.shared_buffers and not slow.shared_buffers
    rng = np.random.default_rng(6)
    for kind in KINDS:
        loads = _random_loads(arm, rng, kind)
        q, qd, qdd = _random_state(arm, rng)
        fast.set_loads(**loads)
        slow.set_loads(**loads)
        np.testing.assert_array_equal(fast.inverse_dynamics(q, qd, qdd),
                                      slow.inverse_dynamics(q, qd, qdd))
        np.testing.assert_array_equal(fast.mass_matrix(q), slow.mass_matrix(q))


def test_the_robot_models_pinocchio_model_is_not_modified(panda: RobotModel) -> None:
    model = panda.pinocchio_model
    before = [model.inertias[j].copy() for j in range(model.njoints)]
    rd = RecursiveDynamics(panda)
    rd.set_loads(np.random.default_rng(0).normal(size=(panda.n_bodies, 10)))
    for j, inertia in enumerate(before):
        assert model.inertias[j] == inertia


def test_fast_path_rule(panda: RobotModel) -> None:
    rd = RecursiveDynamics(panda)
    assert rd.held_directly.all()
    theta = np.array(panda.theta_nominal)
    for row, expected in (([0.0, 0.0, 0.0, 0.0], False), ([-1.0, 0.0, 0.0, 0.0], False),
                          ([1.0, 0.99 * rd.com_range, 0.0, 0.0], True),
                          ([1.0, 0.0, -1.01 * rd.com_range, 0.0], False),
                          ([1e-300, 0.0, 0.0, 0.0], True)):
        theta[3, :4] = row
        rd.set_theta(theta)
        assert rd.held_directly[3] == expected, row
        assert rd.held_directly.sum() == panda.n_bodies - (not expected)
    assert 50.0 < rd.com_range < 500.0  # 100 × the Panda's reach


def test_results_are_read_only_and_loads_are_copies(panda: RobotModel) -> None:
    rd = RecursiveDynamics(panda)
    theta = np.array(panda.theta_nominal)
    rd.set_loads(theta)
    theta[0, 0] = 100.0  # the caller's array is not held by reference
    z = np.zeros(panda.nv)
    results = (rd.inverse_dynamics(z, z, z), rd.bias(z, z), rd.mass_matrix(z),
               rd.forward_dynamics(z, z, z), rd.theta, rd.held_directly)
    for value in results:
        assert not value.flags.writeable
    np.testing.assert_array_equal(rd.theta, panda.theta_nominal)


def test_lists_are_accepted(ur5: RobotModel) -> None:
    rd = RecursiveDynamics(ur5)
    z = np.zeros(6)
    rd.set_loads(np.asarray(ur5.theta_nominal).tolist(), np.zeros((6, 10)).tolist())
    np.testing.assert_array_equal(rd.inverse_dynamics([0.0] * 6, [0] * 6, [0.0] * 6),
                                  rd.inverse_dynamics(z, z, z))


# ----------------------------------------------------------------------------- one body's row
def _indefinite_row() -> np.ndarray:
    """m > 0 with the COM 0.1 m off: I about the COM is diag(1e-3, -9e-3, -9e-3)."""
    return np.array([1.0, 0.1, 0.0, 0.0, 1e-3, 1e-3, 1e-3, 0.0, 0.0, 0.0])


def _row_sequence(robot: RobotModel, rng: np.random.Generator) -> list[tuple[str, tuple]]:
    """(name, (Φ, Φ̇, ψ, ψ̇)) of one row through every transition of the fast path."""
    phi = np.array(robot.theta_nominal)[-1]

    def rates() -> tuple:
        return rng.normal(size=10), rng.normal(size=12), rng.normal(size=12)

    return [
        ("consistent, no rates", (phi * 1.3, None, None, None)),
        ("consistent with rates", (phi * 1.1, *rates())),
        ("consistent, no psi_dot", (phi * 0.9, rng.normal(size=10), rng.normal(size=12), None)),
        ("inconsistent (m = 0, h ≠ 0)", (np.r_[0.0, phi[1:]] + 0.01, *rates())),
        ("consistent again", (phi * 1.2, *rates())),
        ("negative mass", (-phi, *rates())),
        ("far COM", (np.r_[1e-9, 0.4, -0.2, 0.1, phi[4:]], *rates())),
        ("consistent again", (phi, *rates())),
        ("indefinite Z, m > 0", (_indefinite_row(), *rates())),
        ("consistent again", (phi * 1.05, *rates())),
        ("psi as gamma", (phi, rng.normal(size=10), rng.normal(size=6), rng.normal(size=6))),
        ("rates back to zero", (phi * 1.1, None, None, None)),
        ("zero arrays as rates", (phi, np.zeros(10), np.zeros(12), np.zeros(12))),
    ]


@pytest.mark.parametrize("elsewhere", ["rates_elsewhere", "no_rates_elsewhere"])
@pytest.mark.parametrize("shared", [True, False], ids=["shared_buffers", "public_api"])
def test_body_rows_equal_set_loads_through_every_transition(
        arm: RobotModel, shared: bool, elsewhere: str) -> None:
    """set_body_loads equals set_loads with that row changed, and the reference, at each step:
    consistent → inconsistent → consistent, rates on and off, Z(Φ) indefinite and back."""
    rng = np.random.default_rng(21)
    n = arm.n_bodies
    loads = dict(theta=np.array(arm.theta_nominal), theta_dot=0.1 * rng.normal(size=(n, 10)),
                 psi=np.zeros((n, 12)), psi_dot=np.zeros((n, 12)))
    loads["theta_dot"][-1 if elsewhere == "rates_elsewhere" else slice(None)] = 0.0
    by_row, whole = (RecursiveDynamics(arm, shared_buffers=shared),
                     RecursiveDynamics(arm, shared_buffers=shared))
    by_row.set_loads(**loads)
    body = n - 1
    full_updates, update = [], by_row._update
    by_row._update = lambda *flags: (full_updates.append(flags), update(*flags))  # type: ignore
    paths = set()
    sequence = _row_sequence(arm, rng) + _row_sequence(arm, rng)[::-1]
    for name, row in sequence:
        by_row.set_body_loads(body, *row)
        for key, value in zip(LOADS, row, strict=True):
            value = np.zeros(10 if key == "theta_dot" else 12) if value is None else value
            if np.shape(value) == (6,):
                value = PSI_FROM_GAMMA @ value
            loads[key] = loads[key].copy()
            loads[key][body] = value
        whole.set_loads(**loads)
        for key in LOADS:
            np.testing.assert_array_equal(getattr(by_row, key), loads[key], err_msg=name)
        np.testing.assert_array_equal(by_row.held_directly, whole.held_directly, err_msg=name)
        assert by_row._aba_exact() == whole._aba_exact(), name
        paths.add(("aba" if whole._aba_exact() else "cholesky",
                   "held" if whole.held_directly.all() else "shifted"))
        q, qd, qdd = _random_state(arm, rng)
        reference = arm.inverse_dynamics(q, qd, qdd, **loads)
        tau = by_row.inverse_dynamics(q, qd, qdd)
        assert _relative_error(tau, whole.inverse_dynamics(q, qd, qdd)) < 1e-13, name
        assert _relative_error(tau, reference.tau) < RTOL, name
        assert _relative_error(by_row.mass_matrix(q), reference.mass_matrix) < RTOL, name
        assert _relative_error(by_row.bias(q, qd), reference.tau - reference.mass_matrix @ qdd
                               ) < RTOL, name
        try:
            expected = reference_forward(arm, q, qd, tau, **loads)
        except PhysicalConsistencyError:
            with pytest.raises(PhysicalConsistencyError, match="not positive definite"):
                by_row.forward_dynamics(q, qd, tau)
            continue
        assert _relative_error(by_row.forward_dynamics(q, qd, tau), expected) < RTOL, name
    # the sequence went through every path; most steps took the one-row update
    assert paths == {("aba", "held"), ("cholesky", "held"), ("cholesky", "shifted")}
    assert 0 < len(full_updates) < len(sequence) // 2


def test_body_rows_of_several_bodies_accumulate(panda: RobotModel) -> None:
    rng = np.random.default_rng(22)
    loads = _random_loads(panda, rng, "consistent")
    rd = RecursiveDynamics(panda)
    for body in rng.permutation(panda.n_bodies):
        rd.set_body_loads(int(body), *(loads[key][body] for key in LOADS))
    q, qd, qdd = _random_state(panda, rng)
    reference = panda.inverse_dynamics(q, qd, qdd, **loads).tau
    assert _relative_error(rd.inverse_dynamics(q, qd, qdd), reference) < RTOL
    for key in LOADS:
        np.testing.assert_array_equal(getattr(rd, key), loads[key])


@pytest.mark.parametrize("argument", LOADS)
@pytest.mark.parametrize("kind", ["shape", "matrix", "nan", "inf", "text"])
def test_bad_body_rows_name_the_argument_and_change_nothing(
        panda: RobotModel, argument: str, kind: str) -> None:
    rd = RecursiveDynamics(panda)
    rng = np.random.default_rng(23)
    loads = _random_loads(panda, rng, "consistent")
    rd.set_loads(**loads)
    z = np.zeros(panda.nv)
    before = rd.inverse_dynamics(z, z, z)
    body = 3
    row = {key: loads[key][body].copy() for key in LOADS}
    if kind == "shape":
        row[argument] = row[argument][:-1]
    elif kind == "matrix":
        row[argument] = row[argument][None, :]
    elif kind == "text":
        row[argument] = ["a"] * row[argument].size
    else:
        row[argument][-1] = np.nan if kind == "nan" else np.inf
    with pytest.raises(InvalidInputError, match=f"^{argument}: "):
        rd.set_body_loads(body, **row)
    np.testing.assert_array_equal(rd.inverse_dynamics(z, z, z), before)
    for key in LOADS:
        np.testing.assert_array_equal(getattr(rd, key), loads[key])


def test_split_rows_that_add_up_to_the_right_length_are_refused(panda: RobotModel) -> None:
    n = panda.n_bodies
    rd = RecursiveDynamics(panda)
    with pytest.raises(InvalidInputError, match="^theta: "):
        rd.set_body_loads(0, np.zeros(11), np.zeros(9))
    with pytest.raises(InvalidInputError, match="^theta: "):
        rd.set_loads(np.zeros((n, 11)), np.zeros((n, 9)))


@pytest.mark.parametrize("body", [-1, 9, 2.0, True, "1", None])
def test_a_bad_body_index_is_refused(panda: RobotModel, body: object) -> None:
    rd = RecursiveDynamics(panda)
    phi = np.array(panda.theta_nominal)[0] * 2.0
    with pytest.raises(InvalidInputError, match="^body: "):
        rd.set_body_loads(body, phi)  # type: ignore[arg-type]
    np.testing.assert_array_equal(rd.theta, panda.theta_nominal)
    rd.set_body_loads(np.int64(0), phi)  # NumPy integers are indices
    np.testing.assert_array_equal(rd.theta[0], phi)


# ----------------------------------------------------------------------------- bad input


def _good_loads(robot: RobotModel) -> dict:
    n = robot.n_bodies
    return dict(theta=np.array(robot.theta_nominal), theta_dot=np.zeros((n, 10)),
                psi=np.zeros((n, 12)), psi_dot=np.zeros((n, 6)))


def _spoil(value: np.ndarray, kind: str) -> np.ndarray:
    value = np.array(value, dtype=float)
    if kind == "shape":
        return value[..., :-1]
    if kind == "transposed":
        return value.T
    value.flat[-1] = np.nan if kind == "nan" else np.inf
    return value


@pytest.mark.parametrize("argument", LOADS)
@pytest.mark.parametrize("kind", ["shape", "transposed", "nan", "inf"])
def test_bad_loads_name_the_argument(panda: RobotModel, argument: str, kind: str) -> None:
    rd = RecursiveDynamics(panda)
    z = np.zeros(panda.nv)
    before = rd.inverse_dynamics(z, z, z)
    kwargs = _good_loads(panda)
    kwargs[argument] = _spoil(kwargs[argument], kind)
    with pytest.raises(InvalidInputError, match=f"^{argument}: "):
        rd.set_loads(**kwargs)
    with pytest.raises(InvalidInputError, match=f"^{argument}: "):
        inverse_dynamics(panda, z, z, z, **kwargs)
    setter = getattr(rd, f"set_{argument}")
    with pytest.raises(InvalidInputError, match=f"^{argument}: "):
        setter(kwargs[argument])
    # a refused load changes nothing: the previous loads are still held
    np.testing.assert_array_equal(rd.inverse_dynamics(z, z, z), before)
    np.testing.assert_array_equal(rd.theta, panda.theta_nominal)
    assert not rd.theta_dot.any() and not rd.psi_dot.any()


@pytest.mark.parametrize("kind", ["shape", "nan", "inf", "scalar", "column"])
@pytest.mark.parametrize("method, arguments", [
    ("inverse_dynamics", ("q", "qd", "qdd")), ("forward_dynamics", ("q", "qd", "tau")),
    ("bias", ("q", "qd")), ("mass_matrix", ("q",)), ("momentum", ("q", "qd"))])
def test_bad_joint_vectors_name_the_argument(
        panda: RobotModel, method: str, arguments: tuple[str, ...], kind: str) -> None:
    rd = RecursiveDynamics(panda)
    for bad in arguments:
        values = {name: np.zeros(panda.nv) for name in arguments}
        if kind == "scalar":
            values[bad] = 0.0
        elif kind == "column":
            values[bad] = np.zeros((panda.nv, 1))
        else:
            values[bad] = _spoil(values[bad], kind)
        with pytest.raises(InvalidInputError, match=f"^{bad}: "):
            getattr(rd, method)(*values.values())
    # mismatched lengths that add up to the right total are still refused
    if len(arguments) > 1:
        values = [np.zeros(panda.nv + 1), np.zeros(panda.nv - 1)] + [
            np.zeros(panda.nv)] * (len(arguments) - 2)
        with pytest.raises(InvalidInputError, match=f"^{arguments[0]}: "):
            getattr(rd, method)(*values)


# ----------------------------------------------------------------------------- one call
def _layouts(robot: RobotModel, rng: np.random.Generator, kind: str) -> list[tuple[str, dict]]:
    """Loads of one kind in every form set_loads takes: all given, rates None, γ, lists."""
    loads = _random_loads(robot, rng, kind)
    return [
        ("all", loads),
        ("theta only", dict(theta=loads["theta"])),
        ("no psi_dot", dict(loads, psi_dot=None)),
        ("gamma", dict(loads, psi=psi_momentum(loads["psi"]),
                       psi_dot=psi_momentum(loads["psi_dot"]))),
        ("lists", {key: value.tolist() for key, value in loads.items()}),
    ]


@pytest.mark.parametrize("shared", [True, False], ids=["shared_buffers", "public_api"])
@pytest.mark.parametrize("kind", KINDS)
def test_loads_and_torque_in_one_call_equal_the_two_calls(
        arm: RobotModel, kind: str, shared: bool) -> None:
    """set_loads_and_inverse_dynamics is set_loads + inverse_dynamics, to the last bit, and
    holds the same loads afterwards (its fast path, the fallbacks and the shifted rows)."""
    one, two = (RecursiveDynamics(arm, shared_buffers=shared),
                RecursiveDynamics(arm, shared_buffers=shared))
    rng = np.random.default_rng(31)
    fallbacks, set_loads = [], one.set_loads
    one.set_loads = lambda *args, **kwargs: (  # type: ignore[method-assign]
        fallbacks.append(1), set_loads(*args, **kwargs))[1]
    layouts = _layouts(arm, rng, kind) * 2
    for name, loads in layouts:
        q, qd, qdd = _random_state(arm, rng)
        tau = one.set_loads_and_inverse_dynamics(q, qd, qdd, **loads)
        two.set_loads(**loads)
        np.testing.assert_array_equal(tau, two.inverse_dynamics(q, qd, qdd), err_msg=name)
        assert not tau.flags.writeable
        for key in LOADS:
            np.testing.assert_array_equal(getattr(one, key), getattr(two, key), err_msg=name)
        np.testing.assert_array_equal(one.held_directly, two.held_directly, err_msg=name)
        q, qd, qdd = _random_state(arm, rng)  # the loads stay held
        np.testing.assert_array_equal(one.inverse_dynamics(q, qd, qdd),
                                      two.inverse_dynamics(q, qd, qdd), err_msg=name)
        np.testing.assert_array_equal(one.mass_matrix(q), two.mass_matrix(q), err_msg=name)
    # arrays of the right shapes take the one-copy path (lists and γ the two calls)
    assert len(fallbacks) == (4 if shared else len(layouts))
    # and against the term-by-term reference
    loads = _random_loads(arm, rng, kind)
    reference = arm.inverse_dynamics(q, qd, qdd, **loads).tau
    assert _relative_error(one.set_loads_and_inverse_dynamics(q, qd, qdd, **loads),
                           reference) < RTOL


ARGUMENTS = ("q", "qd", "qdd") + LOADS


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_a_non_finite_entry_anywhere_is_refused_and_changes_nothing(
        panda: RobotModel, value: float) -> None:
    """Every entry of every argument, in turn, of set_loads and of the one-call path: the
    error names the argument, no warning is issued, and a refused load changes nothing."""
    rng = np.random.default_rng(33)
    good = _random_loads(panda, rng, "consistent")
    state = dict(zip(("q", "qd", "qdd"), _random_state(panda, rng), strict=True))
    rd = RecursiveDynamics(panda)
    rd.set_loads(**good)
    before = rd.inverse_dynamics(*state.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for argument in ARGUMENTS:
            source = state if argument in state else good
            for index in np.ndindex(source[argument].shape):
                spoiled = source[argument].copy()
                spoiled[index] = value
                arguments = dict(state, **good)
                arguments[argument] = spoiled
                with pytest.raises(InvalidInputError, match=f"^{argument}: "):
                    rd.set_loads_and_inverse_dynamics(**arguments)
                if argument in LOADS:
                    with pytest.raises(InvalidInputError, match=f"^{argument}: "):
                        rd.set_loads(**{key: arguments[key] for key in LOADS})
                    for key in LOADS:  # nothing was held
                        np.testing.assert_array_equal(getattr(rd, key), good[key])
    np.testing.assert_array_equal(rd.inverse_dynamics(*state.values()), before)


def test_the_one_call_path_refuses_joint_vectors_that_add_up(panda: RobotModel) -> None:
    rd, nv = RecursiveDynamics(panda), panda.nv
    theta = np.array(panda.theta_nominal)
    for q, qd, qdd, name in ((np.zeros(nv + 1), np.zeros(nv - 1), np.zeros(nv), "q"),
                             (np.zeros(nv), np.zeros(nv + 1), np.zeros(nv - 1), "qd"),
                             (np.zeros(nv), np.zeros(nv), np.zeros((nv, 1)), "qdd")):
        with pytest.raises(InvalidInputError, match=f"^{name}: "):
            rd.set_loads_and_inverse_dynamics(q, qd, qdd, theta)


def _outcome(call, *args, **kwargs) -> np.ndarray | str:
    """The result of a call, or the message of the PhysicalConsistencyError it raised."""
    try:
        return call(*args, **kwargs)
    except PhysicalConsistencyError as error:
        return str(error)


@pytest.mark.parametrize("shared", [True, False], ids=["shared_buffers", "public_api"])
@pytest.mark.parametrize("kind", KINDS)
def test_loads_and_forward_dynamics_in_one_call_equal_the_two_calls(
        arm: RobotModel, kind: str, shared: bool) -> None:
    """set_loads_and_forward_dynamics is set_loads + forward_dynamics: the same q̈ to the
    last bit (ABA or the Cholesky path) or the same refusal, and the same loads held."""
    one, two = (RecursiveDynamics(arm, shared_buffers=shared),
                RecursiveDynamics(arm, shared_buffers=shared))
    rng = np.random.default_rng(37)
    solved, layouts = 0, _layouts(arm, rng, kind)
    for name, loads in layouts:
        q, qd, _ = _random_state(arm, rng)
        tau = rng.normal(size=arm.nv)
        qdd = _outcome(one.set_loads_and_forward_dynamics, q, qd, tau, **loads)
        two.set_loads(**loads)
        expected = _outcome(two.forward_dynamics, q, qd, tau)
        if isinstance(expected, str):
            assert qdd == expected, name
            continue
        solved += 1
        np.testing.assert_array_equal(qdd, expected, err_msg=name)
        assert not qdd.flags.writeable
        assert all(np.array_equal(getattr(one, key), getattr(two, key)) for key in LOADS), name
        np.testing.assert_array_equal(one.inverse_dynamics(q, qd, qdd),
                                      two.inverse_dynamics(q, qd, qdd), err_msg=name)
    assert solved == len(layouts) or kind != "consistent"  # consistent: M ≻ 0, always solved
    # and against the contraction backend, through the public one-call method
    loads = _random_loads(arm, rng, "consistent")
    q, qd, _ = _random_state(arm, rng)
    tau = rng.normal(size=arm.nv)
    assert _relative_error(arm.forward_dynamics(q, qd, tau, **loads),
                           reference_forward(arm, q, qd, tau, **loads)) < RTOL


def test_the_forward_one_call_path_names_a_bad_joint_vector_and_holds_the_loads(
        panda: RobotModel) -> None:
    rd, nv = RecursiveDynamics(panda), panda.nv
    loads = _random_loads(panda, np.random.default_rng(39), "consistent")
    for q, qd, tau, name in ((np.zeros(nv), np.zeros(nv), np.full(nv, np.nan), "tau"),
                             (np.full(nv, np.inf), np.zeros(nv), np.zeros(nv), "q"),
                             (np.zeros(nv + 1), np.zeros(nv - 1), np.zeros(nv), "q")):
        with pytest.raises(InvalidInputError, match=f"^{name}: "):
            rd.set_loads_and_forward_dynamics(q, qd, tau, **loads)
        np.testing.assert_array_equal(rd.psi_dot, loads["psi_dot"])  # as set_loads would


# ----------------------------------------------------------------------------- momentum
@pytest.mark.parametrize("shared", [True, False], ids=["shared_buffers", "public_api"])
@pytest.mark.parametrize("kind", KINDS)
def test_momentum_and_its_balance_equal_the_contraction(
        arm: RobotModel, kind: str, shared: bool) -> None:
    """p and β by two RNEA passes (rows shifted where needed) against ∂J/∂q contractions."""
    from robot_tv_dynamics.observer import momentum_terms

    rd = RecursiveDynamics(arm, shared_buffers=shared)
    rng = np.random.default_rng(11)
    for _ in range(4):
        loads = _random_loads(arm, rng, kind)
        q, qd, _ = _random_state(arm, rng)
        rd.set_loads(**loads)  # Θ̇ and Ψ̇ are held too: they must not enter p or β
        p, beta = rd.momentum(q, qd)
        reference = momentum_terms(arm, q, qd, loads["theta"], psi_momentum(loads["psi"]))
        assert _relative_error(p, reference.p) < RTOL
        assert _relative_error(beta, reference.beta) < RTOL
        assert not p.flags.writeable and not beta.flags.writeable
    # τ after a momentum call is unchanged: the two share Pinocchio's data, not its f^ext
    q, qd, qdd = _random_state(arm, rng)
    before = np.array(rd.inverse_dynamics(q, qd, qdd))
    rd.momentum(q, qd)
    np.testing.assert_array_equal(rd.inverse_dynamics(q, qd, qdd), before)


def test_momentum_refuses_a_joint_with_several_degrees_of_freedom() -> None:
    """White-box: no URDF the package loads has such a joint, so the setup is fed one."""
    model = pin.buildSampleModelHumanoidRandom()  # a free-flyer root
    free = [model.joints[j].nv for j in range(1, model.njoints)]
    assert max(free) > 1  # the premise of this test
    rd = RecursiveDynamics.__new__(RecursiveDynamics)
    rd._main = type("S", (), {"model": model})()
    rd._n = model.njoints - 1
    with pytest.raises(NotImplementedError, match="one degree of freedom per joint"):
        rd._momentum_setup()


# ----------------------------------------------------------------------------- particles
def _scene(robot: RobotModel, seed: int) -> tuple[list, object]:
    """2–5 particles spread over several bodies (as test_dynamics): fixed, moving, mass-changing."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(2, 6))
    bodies = sorted(rng.choice(robot.n_bodies, size=min(3, robot.n_bodies), replace=False))
    particles = random_particles(rng, robot.n_bodies, count, bodies=list(bodies))
    return particles, random_path(robot.pinocchio_model, rng)


def _particle_tau(rd: RecursiveDynamics, robot: RobotModel, particles: list, path: object,
                  t: float) -> np.ndarray:
    q, qd, qdd = path(t)  # type: ignore[operator]
    _, theta_dot, psi, psi_dot, _ = particle_state(particles, t, robot.n_bodies)
    rd.set_loads(total_theta(robot.pinocchio_model, particles, t), theta_dot, psi, psi_dot)
    return rd.inverse_dynamics(q, qd, qdd)


@pytest.mark.parametrize("seed", range(6))
def test_tau_matches_the_particle_lagrangian(robot: RobotModel, seed: int) -> None:
    """Same scenes and tolerance as test_dynamics.test_tau_matches_the_particle_lagrangian."""
    rd = RecursiveDynamics(robot)
    particles, path = _scene(robot, seed)
    for t in (0.3, 1.7):
        tau = _particle_tau(rd, robot, particles, path, t)
        truth = truth_torque(robot.pinocchio_model, particles, path, t)
        np.testing.assert_allclose(tau, truth, rtol=0, atol=1e-6 * np.abs(truth).max())


def test_every_rate_term_is_exercised_by_the_particle_check(panda: RobotModel) -> None:
    particles = [
        make_particle(6, [0.05, 0.02, 0.1], 1.5, amp=0.05, omega=3.0, mass_b=0.5,
                      mass_omega=2.0),
        make_particle(3, [0.1, -0.05, 0.0], 0.8, amp=0.04, omega=2.0),
        ramp_mass_particle(5, [0.0, 0.1, 0.05], 0.5, 0.6),
        fixed_particle(1, [0.0, 0.0, 0.2], 1.0),
    ]
    path = random_path(panda.pinocchio_model, np.random.default_rng(42))
    rd = RecursiveDynamics(panda)
    tau = _particle_tau(rd, panda, particles, path, 0.9)
    truth = truth_torque(panda.pinocchio_model, particles, path, 0.9)
    tolerance = 1e-6 * np.abs(truth).max()
    q, qd, qdd = path(0.9)
    rd.set_theta_dot(None)
    rd.set_psi(None)
    rd.set_psi_dot(None)
    without_rates = rd.inverse_dynamics(q, qd, qdd)
    assert np.abs(tau - without_rates).max() > 1e3 * tolerance
    np.testing.assert_allclose(tau, truth, rtol=0, atol=tolerance)
