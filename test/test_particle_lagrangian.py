"""Tests of the independent particle verifier (test/particle_lagrangian.py) itself.

These tests establish that the ground truth used for ``robot_tv_dynamics`` is right: the
finite-difference Euler-Lagrange torque reproduces Pinocchio's RNEA for rigidly attached
point masses, Θ̇ and Ψ̇ are the time derivatives of Θ and Ψ, the Jacobi energy balance holds,
Lemma 4 holds, and the paper's Q(φ) with the world rotation inside disagrees with the
particle truth while Q₀ = Q(R = I) agrees.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import numpy as np
import pinocchio as pin
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from support.particle_lagrangian import (
    EQ7_FROM_PIN,
    a31,
    a33,
    euler_lagrange_fd,
    euler_lagrange_torque,
    find_example_robot_urdf,
    fixed_particle,
    lagrangian,
    lemma4_S,
    lemma4_T,
    mass_changing_particle,
    merged_model,
    moving_particle,
    nominal_theta,
    paper_q_lagrangian,
    paper_q_lagrangian_torque,
    paper_q_matrix,
    particle_state,
    q0_matrix,
    ramp_mass_particle,
    random_particles,
    random_path,
    skew,
    spatial_inertia_eq24,
    total_theta,
    truth_torque,
)

ROBOTS = ["panda", "ur5"]
_C6 = np.array([-1.0 / 60, 3.0 / 20, -3.0 / 4, 0.0, 3.0 / 4, -3.0 / 20, 1.0 / 60])


def _fd_time(fun: Callable[[float], np.ndarray | float], t: float, h: float = 1e-3) -> np.ndarray:
    """6th-order central difference of an array-valued function of t."""
    terms = [c * np.asarray(fun(t + o * h)) for c, o in zip(_C6, range(-3, 4), strict=True)]
    return np.sum(terms, axis=0) / h


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request: pytest.FixtureRequest) -> tuple[str, pin.Model]:
    """Pinocchio model of a robot from example-robot-data."""
    return request.param, pin.buildModelFromUrdf(find_example_robot_urdf(request.param))


def _pseudo_inertia_eq9(phi: np.ndarray) -> np.ndarray:
    """f(Φ) of eq. (9), written here from the paper."""
    m, h = phi[0], phi[1:4]
    i11, i22, i33, i12, i23, i13 = phi[4:10]
    inertia = np.array([[i11, i12, i13], [i12, i22, i23], [i13, i23, i33]])
    sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    f = np.zeros((4, 4))
    f[:3, :3] = sigma
    f[:3, 3] = h
    f[3, :3] = h
    f[3, 3] = m
    return f


# ------------------------------------------------------------------------------------------
# Small pieces
# ------------------------------------------------------------------------------------------


def test_find_urdf() -> None:
    """Both URDFs are found in the cmeel prefix."""
    for name in ROBOTS:
        assert os.path.isfile(find_example_robot_urdf(name))


def test_eq7_reorder_against_parallel_axis() -> None:
    """Pinocchio dynamic parameters reorder to eq. (7), I about the origin (parallel axis)."""
    rng = np.random.default_rng(1)
    m = 1.7
    c = rng.normal(size=3)
    a = rng.normal(size=(3, 3))
    i_c = a @ a.T + np.eye(3)
    phi = np.asarray(pin.Inertia(m, c, i_c).toDynamicParameters()).ravel()[EQ7_FROM_PIN]
    i_o = i_c + m * ((c @ c) * np.eye(3) - np.outer(c, c))
    expect = [m, *(m * c), i_o[0, 0], i_o[1, 1], i_o[2, 2], i_o[0, 1], i_o[1, 2], i_o[0, 2]]
    np.testing.assert_allclose(phi, expect, rtol=1e-13, atol=1e-13)
    # Z(Φ) of eq. (24) is Pinocchio's 6x6 spatial inertia (linear first) about the origin
    np.testing.assert_allclose(
        spatial_inertia_eq24(phi), pin.Inertia(m, c, i_c).matrix(), atol=1e-12
    )
    # f(Φ) of eq. (9) is Pinocchio's pseudo-inertia
    np.testing.assert_allclose(
        _pseudo_inertia_eq9(phi),
        pin.PseudoInertia.FromInertia(pin.Inertia(m, c, i_c)).toMatrix(),
        atol=1e-12,
    )


def test_lemma4_numerically() -> None:
    """Lemma 4: S(x) R = -S A33(R) T A31(x) for all x, R (also non-orthogonal R)."""
    rng = np.random.default_rng(2)
    s, t = lemma4_S(), lemma4_T()
    for _ in range(50):
        x, y = rng.normal(size=3), rng.normal(size=3)
        r_rot = pin.exp3(rng.normal(size=3))
        r_gen = rng.normal(size=(3, 3))
        np.testing.assert_allclose(s @ a31(y), skew(y), atol=1e-15)
        for r in (r_rot, r_gen):
            np.testing.assert_allclose(skew(x) @ r, -s @ a33(r) @ t @ a31(x), atol=1e-13)
            blocks = np.hstack([a31(r[:, k]) for k in range(3)])
            np.testing.assert_allclose(a33(r) @ t, blocks, atol=1e-15)
    # T is a permutation, ‖S‖ = √2, Q₀ = diag(I, -S T): σ_max(Q₀) = √2 (Lemma 3 with R = I)
    np.testing.assert_allclose(t @ t.T, np.eye(9))
    assert np.isclose(np.linalg.norm(s, 2), np.sqrt(2.0))
    assert np.isclose(np.linalg.norm(q0_matrix(), 2), np.sqrt(2.0))
    # Q₀ ψ is the relative linear and angular momentum [m u; m x × u]
    x, u, m = rng.normal(size=3), rng.normal(size=3), 0.7
    psi = m * np.concatenate([u, a31(x) @ u])
    np.testing.assert_allclose(q0_matrix() @ psi, np.r_[m * u, m * np.cross(x, u)], atol=1e-14)
    # Q(R) ψ replaces x × u by x × (R u): this is what eq. (26) literally says
    r = pin.exp3(rng.normal(size=3))
    np.testing.assert_allclose(
        paper_q_matrix(r) @ psi, np.r_[m * u, m * np.cross(x, r @ u)], atol=1e-14
    )


# ------------------------------------------------------------------------------------------
# Θ, Θ̇, Ψ, Ψ̇ from particles
# ------------------------------------------------------------------------------------------


def test_theta_consistent_and_matches_pinocchio(robot: tuple[str, pin.Model]) -> None:
    """Particle Θ is physically consistent and equals Pinocchio's point-mass inertias."""
    _, model = robot
    n = model.njoints - 1
    rng = np.random.default_rng(3)
    parts = random_particles(rng, n, 6 * n)
    for t in (0.0, 0.8, 2.1):
        theta = particle_state(parts, t, n)[0]
        for b in range(n):
            lam = np.linalg.eigvalsh(_pseudo_inertia_eq9(theta[b]))
            assert lam.min() >= -1e-12
            own = [p for p in parts if p.body == b]
            if len(own) >= 4:  # generic (non-coplanar) points: strictly consistent
                assert lam.min() > 1e-8
        merged = merged_model(model, parts, t)
        np.testing.assert_allclose(theta, nominal_theta(merged) - nominal_theta(model), atol=1e-12)
        np.testing.assert_allclose(total_theta(model, parts, t), nominal_theta(merged), atol=1e-12)
        for b in range(n):
            assert np.linalg.eigvalsh(_pseudo_inertia_eq9(nominal_theta(merged)[b])).min() > 0


def test_theta_psi_rates_are_time_derivatives() -> None:
    """Θ̇ and Ψ̇ (analytic) equal central finite differences of Θ(t), Ψ(t); ψ layout, ν."""
    rng = np.random.default_rng(4)
    n = 4
    parts = random_particles(rng, n, 16, omega_max=4.0)
    parts.append(ramp_mass_particle(2, [0.1, -0.2, 0.05], 0.5, 0.3))
    for t in (0.0, 0.37, 1.9):
        _, theta_dot, psi, psi_dot, nu = particle_state(parts, t, n)
        np.testing.assert_allclose(
            theta_dot, _fd_time(lambda s: particle_state(parts, s, n)[0], t), atol=1e-9
        )
        np.testing.assert_allclose(
            psi_dot, _fd_time(lambda s: particle_state(parts, s, n)[2], t), atol=1e-9
        )
        psi_ref = np.zeros((n, 12))
        nu_ref = 0.0
        for p in parts:
            x, u, _, m, _ = p.state(t)
            psi_ref[p.body] += m * np.concatenate([np.eye(3), a31(x)]) @ u
            nu_ref += m * u @ u
        np.testing.assert_allclose(psi, psi_ref, atol=1e-14)
        assert np.isclose(nu, nu_ref)
    # particles at rest contribute nothing to Ψ, Ψ̇, ν
    rest = [
        fixed_particle(0, [0.1, 0.2, 0.3], 1.0),
        mass_changing_particle(1, [0, 0.1, 0], 1, 0.5, 2),
    ]
    _, _, psi, psi_dot, nu = particle_state(rest, 0.3, 2)
    assert not psi.any() and not psi_dot.any() and nu == 0.0


# ------------------------------------------------------------------------------------------
# The finite-difference Euler-Lagrange torque
# ------------------------------------------------------------------------------------------


def test_fixed_particles_match_rnea_of_merged_model(robot: tuple[str, pin.Model]) -> None:
    """Fixed constant-mass particles: FD Euler-Lagrange + rnea(base) = rnea(merged)."""
    _, model = robot
    n = model.njoints - 1
    rng = np.random.default_rng(5)
    worst = 0.0
    for trial in range(3):
        parts = random_particles(rng, n, 2 * n, kinds=("fixed",))
        path = random_path(model, rng)
        t = float(rng.uniform(0, 3))
        q, qd, qdd = path(t)
        merged = merged_model(model, parts, t)
        ref = pin.rnea(merged, merged.createData(), q, qd, qdd)
        tau = truth_torque(model, parts, path, t)
        err = np.abs(tau - ref).max() / np.abs(ref).max()
        worst = max(worst, err)
        assert err < 1e-6, (trial, err)
        # the particles' own share alone, relative to its own size
        share = ref - pin.rnea(model, model.createData(), q, qd, qdd)
        tau_p = euler_lagrange_torque(model, parts, path, t)
        assert np.abs(tau_p - share).max() <= 1e-8 * np.abs(share).max()
    assert worst < 1e-9  # measured ~1e-13


def test_mass_changing_particle_adds_m_of_theta_dot(robot: tuple[str, pin.Model]) -> None:
    """m(t) at fixed x: τ = rnea(merged at t) - rnea(base) + M(q, Θ̇) q̇, Θ̇ = ṁ·(point at x).

    M(q, Θ̇) is obtained from Pinocchio's CRBA of a point mass ṁ > 0 (independent of eq. 39).
    """
    _, model = robot
    n = model.njoints - 1
    rng = np.random.default_rng(6)
    path = random_path(model, rng)
    parts = [
        mass_changing_particle(n - 1, [0.05, -0.1, 0.12], 1.2, 0.5, 2.0, 0.3),
        mass_changing_particle(n // 2, [0.2, 0.0, -0.1], 0.8, 0.4, 1.3, 1.0),
        ramp_mass_particle(n - 2, [-0.1, 0.1, 0.05], 0.5, 0.25),
    ]
    t = 0.4
    q, qd, qdd = path(t)
    merged = merged_model(model, parts, t)
    classical = pin.rnea(merged, merged.createData(), q, qd, qdd) - pin.rnea(
        model, model.createData(), q, qd, qdd
    )
    mdot_term = np.zeros(model.nv)
    for p in parts:
        x, _, _, _, md = p.state(t)
        rate_model = model.copy()
        for j in range(1, model.njoints):
            rate_model.inertias[j] = pin.Inertia.Zero()
        rate_model.inertias[p.body + 1] = pin.Inertia(abs(md), x, np.zeros((3, 3)))
        m_rate = pin.crba(rate_model, rate_model.createData(), q)
        m_rate = np.triu(m_rate) + np.triu(m_rate, 1).T
        mdot_term += np.sign(md) * m_rate @ qd
    tau = euler_lagrange_torque(model, parts, path, t)
    np.testing.assert_allclose(tau, classical + mdot_term, atol=1e-9 * np.abs(tau).max())
    assert np.abs(mdot_term).max() > 1e-3  # the effect is really there


def test_fd_step_independence(robot: tuple[str, pin.Model]) -> None:
    """Moving, mass-changing particles: the FD torque does not depend on the steps."""
    _, model = robot
    n = model.njoints - 1
    rng = np.random.default_rng(7)
    parts = random_particles(rng, n, 2 * n, omega_max=4.0)
    path = random_path(model, rng)
    t = 1.1
    a = euler_lagrange_torque(model, parts, path, t)
    b = euler_lagrange_torque(model, parts, path, t, h_q=4e-3, h_t=2e-3)
    assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max()


def test_jacobi_energy_balance(robot: tuple[str, pin.Model]) -> None:
    """d/dt (q̇ᵀ ∂L/∂q̇ - L) = q̇ᵀ τ - ∂L/∂t along a path (constant mass, moving particles)."""
    _, model = robot
    n = model.njoints - 1
    rng = np.random.default_rng(8)
    parts = random_particles(rng, n, 2 * n, kinds=("moving", "fixed"))
    path = random_path(model, rng)
    data = model.createData()

    def lag(q: np.ndarray, qd: np.ndarray, t: float) -> float:
        return lagrangian(model, parts, q, qd, t, data)

    def energy(t: float) -> float:
        q, qd, _ = path(t)
        p = np.array([0.5 * (lag(q, qd + e, t) - lag(q, qd - e, t)) for e in np.eye(model.nv)])
        return float(qd @ p - lag(q, qd, t))

    for t in (0.2, 1.3):
        q, qd, _ = path(t)
        tau = euler_lagrange_fd(model, lag, path, t)
        dl_dt = _fd_time(lambda s, q=q, qd=qd: lag(q, qd, s), t, 5e-3)
        lhs = _fd_time(energy, t, 5e-3)
        rhs = qd @ tau - dl_dt
        assert abs(lhs - rhs) <= 1e-8 * (abs(qd) @ abs(tau) + abs(dl_dt))
        assert abs(dl_dt) > 1e-3  # the particles really move


# ------------------------------------------------------------------------------------------
# Paper Q(φ) with the world rotation vs Q₀
# ------------------------------------------------------------------------------------------


def test_paper_lagrangian_with_identity_equals_particle_lagrangian(
    robot: tuple[str, pin.Model],
) -> None:
    """Eq. (30) with Q₀ is the particle Lagrangian pointwise; with R_l(q) it is not."""
    _, model = robot
    n = model.njoints - 1
    rng = np.random.default_rng(9)
    parts = random_particles(rng, n, 3 * n)
    worst_world = 0.0
    for _ in range(5):
        q = pin.randomConfiguration(model)
        qd = rng.normal(size=model.nv)
        t = float(rng.uniform(0, 3))
        ref = lagrangian(model, parts, q, qd, t)
        assert np.isclose(
            paper_q_lagrangian(model, parts, q, qd, t, "identity"), ref, rtol=1e-12, atol=1e-12
        )
        worst_world = max(
            worst_world, abs(paper_q_lagrangian(model, parts, q, qd, t, "world") - ref)
        )
    assert worst_world > 1e-4


def test_paper_q_world_rotation_disagrees_q0_agrees(robot: tuple[str, pin.Model]) -> None:
    """Moving particles in rotated bodies: Q(R_l) of eq. (26) is wrong, Q₀ is right."""
    name, model = robot
    n = model.njoints - 1
    rng = np.random.default_rng(10)
    path = random_path(model, rng)
    parts = [
        moving_particle(n - 1, [0.05, 0.02, 0.1], 1.5, [0.06, 0.04, 0.05], [2.0, 2.5, 1.5]),
        moving_particle(
            n - 3, [0.1, -0.05, 0.0], 1.0, [0.05, 0.05, 0.03], [1.7, 3.0, 2.2], [0.3, 1.0, 2.0]
        ),
        *random_particles(rng, n, n),
    ]
    t = 0.9
    truth = truth_torque(model, parts, path, t)
    world = paper_q_lagrangian_torque(model, parts, path, t, "world", include_robot=True)
    ident = paper_q_lagrangian_torque(model, parts, path, t, "identity", include_robot=True)
    err_world = np.abs(world - truth).max()
    err_ident = np.abs(ident - truth).max()
    print(
        f"\n{name}: max|τ_paperQ(R_l) - τ_truth| = {err_world:.3e} N·m, "
        f"max|τ_Q0 - τ_truth| = {err_ident:.3e} N·m, max|τ_truth| = "
        f"{np.abs(truth).max():.3e} N·m"
    )
    assert err_world > 1e-2
    assert err_ident < 1e-6 * np.abs(truth).max()
