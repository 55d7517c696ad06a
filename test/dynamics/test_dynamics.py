"""The generalized robotics equation (39) against an independent particle Lagrangian.

The truth (test/particle_lagrangian.py) is built from point masses in body frames, their
world positions and velocities (Pinocchio forward kinematics only) and finite differences of
L = T − U; it never uses the package's formulas.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from support.particle_lagrangian import (
    fixed_particle,
    make_particle,
    paper_q_lagrangian_torque,
    particle_state,
    ramp_mass_particle,
    random_particles,
    random_path,
    total_theta,
    truth_torque,
)

from robot_tv_dynamics import InvalidInputError, PhysicalConsistencyError, RobotModel
from robot_tv_dynamics.dynamics import Q0, bias_force, generalized_terms, psi_momentum


def _random_scene(robot: RobotModel, seed: int) -> tuple[list, object]:
    """2–5 particles spread over several bodies: fixed, moving, gaining and losing mass."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(2, 6))
    bodies = sorted(rng.choice(robot.n_bodies, size=min(3, robot.n_bodies), replace=False))
    particles = random_particles(rng, robot.n_bodies, count, bodies=list(bodies))
    return particles, random_path(robot.pinocchio_model, rng)


def _state(robot: RobotModel, particles: list, path: object, t: float) -> dict:
    q, qd, qdd = path(t)  # type: ignore[operator]
    _, theta_dot, psi, psi_dot, nu = particle_state(particles, t, robot.n_bodies)
    theta = total_theta(robot.pinocchio_model, particles, t)
    return dict(q=q, qd=qd, qdd=qdd, theta=theta, theta_dot=theta_dot, psi=psi,
                psi_dot=psi_dot, nu=nu)


def _terms(robot: RobotModel, s: dict):  # noqa: ANN202
    return robot.inverse_dynamics(s["q"], s["qd"], s["qdd"], s["theta"], s["theta_dot"],
                                  s["psi"], s["psi_dot"])


@pytest.mark.parametrize("seed", range(6))
def test_tau_matches_the_particle_lagrangian(robot: RobotModel, seed: int) -> None:
    particles, path = _random_scene(robot, seed)
    for t in (0.3, 1.7):
        s = _state(robot, particles, path, t)
        tau = _terms(robot, s).tau
        truth = truth_torque(robot.pinocchio_model, particles, path, t)
        np.testing.assert_allclose(tau, truth, rtol=0, atol=1e-6 * np.abs(truth).max())


def test_every_new_term_is_exercised_by_the_particle_check(panda: RobotModel) -> None:
    """The check is not vacuous: Θ̇, Ψ and Ψ̇ terms are each far above the tolerance."""
    particles = [
        make_particle(6, [0.05, 0.02, 0.1], 1.5, amp=0.05, omega=3.0, mass_b=0.5,
                      mass_omega=2.0),
        make_particle(3, [0.1, -0.05, 0.0], 0.8, amp=0.04, omega=2.0),
        ramp_mass_particle(5, [0.0, 0.1, 0.05], 0.5, 0.6),
        fixed_particle(1, [0.0, 0.0, 0.2], 1.0),
    ]
    path = random_path(panda.pinocchio_model, np.random.default_rng(42))
    s = _state(panda, particles, path, 0.9)
    terms = _terms(panda, s)
    parts = terms.breakdown()
    truth = truth_torque(panda.pinocchio_model, particles, path, 0.9)
    tolerance = 1e-6 * np.abs(truth).max()
    for name in ("mass_rate", "gyroscopic", "psi_dot"):
        assert np.abs(parts[name]).max() > 1e3 * tolerance, name
    np.testing.assert_allclose(sum(parts.values()), terms.tau, atol=1e-12)
    np.testing.assert_allclose(terms.tau, truth, atol=tolerance)


@pytest.mark.parametrize("seed", range(3))
def test_paper_rotation_inside_q_breaks_the_match_and_q0_restores_it(
    robot: RobotModel, seed: int
) -> None:
    """Evidence for Q₀ (docs/concepts.md "The model"): eq. (26) with R(φ_l(q)) misses the truth."""
    rng = np.random.default_rng(100 + seed)
    particles = [
        make_particle(robot.n_bodies - 2, rng.normal(scale=0.1, size=3), 1.2, amp=0.06,
                      omega=2.5, phase=rng.uniform(0, 6)),
        make_particle(2, rng.normal(scale=0.1, size=3), 0.9, amp=0.05, omega=1.5),
    ]
    path = random_path(robot.pinocchio_model, rng)
    t = 0.8
    truth = truth_torque(robot.pinocchio_model, particles, path, t)
    paper = paper_q_lagrangian_torque(robot.pinocchio_model, particles, path, t, "world",
                                      include_robot=True)
    ours = _terms(robot, _state(robot, particles, path, t)).tau
    scale = np.abs(truth).max()
    print(f"\n[Q0 {robot.nv} dof, seed {seed}] max |τ − τ_particles|: eq. (26) with R(φ(q)) "
          f"{np.abs(paper - truth).max():.3g} N·m, Q₀ {np.abs(ours - truth).max():.1e} N·m "
          f"(torque scale {scale:.3g} N·m)")
    assert np.abs(paper - truth).max() > 1e-3 * scale
    assert np.abs(ours - truth).max() < 1e-8 * scale


def test_q0_maps_psi_to_relative_momentum() -> None:
    rng = np.random.default_rng(5)
    masses, x, u = rng.uniform(0.1, 1, 4), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    psi = np.zeros(12)
    for m, xi, ui in zip(masses, x, u, strict=True):
        psi += m * np.r_[ui, np.kron(ui, np.ones(3)) * np.tile(xi, 3)]  # [𝓋; A₃,₁(x)𝓋]
    expected = np.r_[masses @ u, np.sum(masses[:, None] * np.cross(x, u), axis=0)]
    np.testing.assert_allclose(Q0 @ psi, expected, atol=1e-12)
    np.testing.assert_allclose(psi_momentum(psi[None])[0], expected, atol=1e-12)
    assert np.linalg.svd(Q0, compute_uv=False)[0] == pytest.approx(np.sqrt(2))  # Lemma 3


def test_momentum_form_of_psi_gives_the_same_terms(panda: RobotModel) -> None:
    particles, path = _random_scene(panda, 9)
    s = _state(panda, particles, path, 0.4)
    full = _terms(panda, s)
    gamma = panda.inverse_dynamics(s["q"], s["qd"], s["qdd"], s["theta"], s["theta_dot"],
                                   psi_momentum(s["psi"]), psi_momentum(s["psi_dot"]))
    np.testing.assert_allclose(gamma.tau, full.tau, atol=1e-12)
    np.testing.assert_allclose(gamma.gyroscopic_matrix, full.gyroscopic_matrix, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_forward_dynamics_inverts_inverse_dynamics(robot: RobotModel, seed: int) -> None:
    particles, path = _random_scene(robot, 20 + seed)
    s = _state(robot, particles, path, 0.5)
    tau = _terms(robot, s).tau
    qdd = robot.forward_dynamics(s["q"], s["qd"], tau, s["theta"], s["theta_dot"], s["psi"],
                                 s["psi_dot"])
    np.testing.assert_allclose(qdd, s["qdd"], atol=1e-9 * max(1.0, np.abs(s["qdd"]).max()))


@pytest.mark.parametrize("seed", range(4))
def test_matrix_free_bias_force_gives_the_tau_of_the_full_terms(
        robot: RobotModel, seed: int) -> None:
    """M q̈ + bias = τ of generalized_terms to 1e-12 (dynamics_node's torques-only path).

    Random Θ, Θ̇, Ψ, Ψ̇ (not a rigid body, not consistent: both are linear in them), so
    every addend of eq. (39) is present.
    """
    rng = np.random.default_rng(300 + seed)
    n, nv = robot.n_bodies, robot.nv
    for _ in range(5):
        q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
        qd, qdd = rng.uniform(-2, 2, nv), rng.uniform(-5, 5, nv)
        theta = np.array(robot.theta_nominal) * rng.uniform(0.5, 1.5, (n, 1))
        theta_dot = rng.normal(size=(n, 10))
        gamma, gamma_dot = psi_momentum(rng.normal(size=(n, 12))), psi_momentum(
            rng.normal(size=(n, 12)))
        kin = robot.kinematics(q)
        full = generalized_terms(kin, qd, qdd, theta, theta_dot, gamma, gamma_dot)
        parts = full.breakdown()
        for name in ("coriolis", "mass_rate", "gyroscopic", "psi_dot"):
            assert np.abs(parts[name]).max() > 1e-3 * np.abs(full.tau).max(), name
        m, bias = bias_force(kin, qd, theta, theta_dot, gamma, gamma_dot)
        np.testing.assert_allclose(m, full.mass_matrix, rtol=0,
                                   atol=1e-12 * np.abs(full.mass_matrix).max())
        np.testing.assert_allclose(m @ qdd + bias, full.tau, rtol=0,
                                   atol=1e-12 * np.abs(full.tau).max())


def test_classical_case_equals_pinocchio(robot: RobotModel) -> None:
    rng = np.random.default_rng(2)
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    for _ in range(5):
        q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
        qd, qdd = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        terms = robot.inverse_dynamics(q, qd, qdd, robot.theta_nominal)
        np.testing.assert_allclose(terms.tau, pin.rnea(model, data, q, qd, qdd), atol=1e-10)
        np.testing.assert_allclose(terms.mass_matrix, pin.crba(model, data, q), atol=1e-12)
        np.testing.assert_allclose(terms.coriolis_matrix,
                                   pin.computeCoriolisMatrix(model, data, q, qd), atol=1e-10)
        np.testing.assert_allclose(terms.gravity,
                                   pin.computeGeneralizedGravity(model, data, q), atol=1e-10)
        assert not terms.mass_rate_matrix.any() and not terms.gyroscopic_matrix.any()
        assert not terms.psi_dot_force.any()
        np.testing.assert_allclose(
            robot.forward_dynamics(q, qd, terms.tau, robot.theta_nominal),
            pin.aba(model, data, q, qd, terms.tau), atol=1e-8)


def test_mdot_minus_2c_minus_mass_rate_is_skew_along_a_loading_path(robot: RobotModel) -> None:
    particles, path = _random_scene(robot, 31)
    h = 1e-5
    for t in (0.2, 1.1):
        s = _state(robot, particles, path, t)
        terms = _terms(robot, s)

        def mass_at(tt: float) -> np.ndarray:
            q = path(tt)[0]  # type: ignore[operator]
            return robot.mass_matrix(q, total_theta(robot.pinocchio_model, particles, tt))

        m_dot = (mass_at(t + h) - mass_at(t - h)) / (2 * h)
        n = m_dot - 2 * terms.coriolis_matrix - terms.mass_rate_matrix
        assert np.abs(terms.mass_rate_matrix).max() > 1e-2  # Θ really changes
        np.testing.assert_allclose(n + n.T, 0, atol=1e-6 * np.abs(m_dot).max())
        np.testing.assert_allclose(terms.gyroscopic_matrix, -terms.gyroscopic_matrix.T, atol=0)
        # M(q, Θ̇) is the Θ-derivative of M: linear in Θ, exact for a rate vector
        np.testing.assert_allclose(terms.mass_rate_matrix,
                                   robot.mass_matrix(s["q"], s["theta_dot"]), atol=1e-14)


def test_regressor_reproduces_the_classical_terms_for_any_theta(robot: RobotModel) -> None:
    rng = np.random.default_rng(8)
    for _ in range(5):
        q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
        qd, v, a = (rng.normal(size=robot.nv) for _ in range(3))
        theta = rng.normal(size=(robot.n_bodies, 10))  # not physically consistent
        terms = robot.inverse_dynamics(q, qd, a, theta)
        expected = terms.mass_matrix @ a + terms.coriolis_matrix @ v + terms.gravity
        r = robot.regressor(q, qd, v, a)
        assert r.shape == (robot.nv, 10 * robot.n_bodies)
        np.testing.assert_allclose(r @ theta.ravel(), expected, atol=1e-10)


def test_regressor_matches_pinocchio_for_v_equal_qd(robot: RobotModel) -> None:
    rng = np.random.default_rng(9)
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    q = rng.uniform(robot.joint_limits.lower, robot.joint_limits.upper)
    qd, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
    theirs = pin.computeJointTorqueRegressor(model, data, q, qd, a)
    order = [0, 1, 2, 3, 4, 6, 9, 5, 8, 7]  # eq. (7) from Pinocchio's dynamic parameters
    reordered = np.hstack([theirs[:, 10 * l:10 * l + 10][:, order]
                           for l in range(robot.n_bodies)])
    np.testing.assert_allclose(robot.regressor(q, qd, qd, a), reordered, atol=1e-10)


def test_energy_balance_with_changing_theta_and_psi(robot: RobotModel) -> None:
    """Jacobi energy E = ½q̇ᵀMq̇ − ½ν + U: dE/dt = q̇ᵀτ − ∂L/∂t along a loading path."""
    particles, path = _random_scene(robot, 44)
    g = robot.gravity

    def energy(t: float) -> float:
        s = _state(robot, particles, path, t)
        kinetic = robot.kinetic_energy(s["q"], s["qd"], s["theta"])  # ½q̇ᵀMq̇ only
        return kinetic - 0.5 * s["nu"] + robot.potential_energy(s["q"], s["theta"])

    h = 1e-4
    for t in (0.35, 1.4):
        s = _state(robot, particles, path, t)
        tau = _terms(robot, s).tau
        de_dt = (energy(t + h) - energy(t - h)) / (2 * h)
        nu_dot = (_state(robot, particles, path, t + h)["nu"]
                  - _state(robot, particles, path, t - h)["nu"]) / (2 * h)
        kin = robot.kinematics(s["q"])
        twist = kin.jacobians @ s["qd"]
        dl_dt = (0.5 * s["qd"] @ robot.mass_matrix(s["q"], s["theta_dot"]) @ s["qd"]
                 + 0.5 * nu_dot + np.sum(twist * psi_momentum(s["psi_dot"]))
                 + g @ np.sum(s["theta_dot"][:, :1] * kin.positions
                              + np.einsum("lij,lj->li", kin.rotations, s["theta_dot"][:, 1:4]),
                              axis=0))
        power = s["qd"] @ tau
        assert abs(dl_dt) > 1e-3  # the explicit time dependence is not negligible
        assert de_dt == pytest.approx(power - dl_dt, abs=1e-6 * max(1.0, abs(power)))


def test_kinetic_energy_includes_nu_and_coupling(panda: RobotModel) -> None:
    particles, path = _random_scene(panda, 3)
    s = _state(panda, particles, path, 0.6)
    base = panda.kinetic_energy(s["q"], s["qd"], s["theta"])
    full = panda.kinetic_energy(s["q"], s["qd"], s["theta"], s["psi"], s["nu"])
    twist = panda.kinematics(s["q"]).jacobians @ s["qd"]
    coupling = np.sum(twist * psi_momentum(s["psi"]))
    assert full == pytest.approx(base + 0.5 * s["nu"] + coupling, rel=1e-12)
    assert base == pytest.approx(0.5 * s["qd"] @ _terms(panda, s).mass_matrix @ s["qd"])


# ----------------------------------------------------------------------------- bad input
ARGUMENTS = ("q", "qd", "qdd", "theta", "theta_dot", "psi", "psi_dot")


def _good(robot: RobotModel) -> dict:
    n, nv = robot.n_bodies, robot.nv
    return dict(q=np.zeros(nv), qd=np.zeros(nv), qdd=np.zeros(nv), theta=robot.theta_nominal,
                theta_dot=np.zeros((n, 10)), psi=np.zeros((n, 12)), psi_dot=np.zeros((n, 12)))


@pytest.mark.parametrize("argument", ARGUMENTS)
@pytest.mark.parametrize("kind", ["shape", "nan", "inf"])
def test_bad_input_names_the_argument(panda: RobotModel, argument: str, kind: str) -> None:
    kwargs = _good(panda)
    value = np.array(kwargs[argument], dtype=float)
    if kind == "shape":
        value = value[..., :-1]
    else:
        value.flat[0] = np.nan if kind == "nan" else np.inf
    kwargs[argument] = value
    with pytest.raises(InvalidInputError, match=f"^{argument}: "):
        panda.inverse_dynamics(**kwargs)
    tau_args = dict(kwargs)
    tau_args["tau"] = tau_args.pop("qdd")
    if argument == "qdd":
        tau_args["tau"] = value
        argument = "tau"
    with pytest.raises(InvalidInputError, match=f"^{argument}: "):
        panda.forward_dynamics(**tau_args)


def test_forward_dynamics_refuses_an_indefinite_mass_matrix(ur5: RobotModel) -> None:
    theta = -np.asarray(ur5.theta_nominal)
    with pytest.raises(PhysicalConsistencyError, match="not positive definite"):
        ur5.forward_dynamics(np.zeros(6), np.zeros(6), np.zeros(6), theta)
