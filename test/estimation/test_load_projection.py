"""The load projection (the nearest body in the filter's metric), checked against cvxpy."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from robot_tv_dynamics.inertia import PSEUDO_BASIS, phi_from_point_masses, pseudo_inertia


def _half_distance_squared(a, b, covariance):
    d = a - b
    return 0.5 * float(d @ np.linalg.solve(covariance, d))


def test_the_load_projection_gives_a_body_that_keeps_its_margin():
    from robot_tv_dynamics.estimation.load_projection import LoadProjection
    from robot_tv_dynamics.inertia import transform_phi

    rng = np.random.default_rng(5)
    base = phi_from_point_masses([0.4, 0.3, 0.2], [[0, 0, 0.05], [0.03, 0, 0], [0, 0.02, 0.1]])
    epsilon = 0.25 * np.linalg.eigvalsh(pseudo_inertia(base))[0]
    rotation = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    transform = np.array([transform_phi(e, rotation, np.array([0, 0, 0.1]))
                          for e in np.eye(10)]).T
    project_load = LoadProjection(transform, base, epsilon)
    for _ in range(10):
        load = phi_from_point_masses([1.0], [[0.0, 0.0, 0.1]])
        noisy = load + rng.normal(0, 0.05, 10)  # inertia entries ≫ a point mass's
        noisy[4:7] -= 0.05                      # diagonal pushed negative: not a body
        a = rng.normal(size=(10, 10))
        covariance = a @ a.T * 1e-4
        result = project_load(noisy, covariance)
        assert result.active
        assert np.linalg.eigvalsh(pseudo_inertia(result.phi))[0] >= -1e-12
        assert np.linalg.eigvalsh(pseudo_inertia(base + transform @ result.phi))[0] >= (
            epsilon * (1 - 1e-9))
        # it is the optimum of the same problem modelled independently in cvxpy
        _, optimum = _load_optimum(noisy, covariance, base, transform, epsilon)
        value = _half_distance_squared(result.phi, noisy, covariance)
        assert value <= optimum + 1e-4 * max(1.0, optimum), (value, optimum)


def test_a_clarabel_panic_falls_back_to_cvxpy_instead_of_ending_the_run(monkeypatch):
    """Clarabel's Rust panics reach Python as pyo3's PanicException, a BaseException.

    Seen on a recorded grasp (``Eigval error``): it went past ``except Exception`` and ended
    ``estimate --method classical`` with a traceback.
    """
    from robot_tv_dynamics.estimation.load_projection import LoadProjection
    from robot_tv_dynamics.inertia import transform_phi

    class PanicException(BaseException):  # the name pyo3 gives it
        pass

    def panicking(self, phi, whiten):
        raise PanicException("Eigval error: Eigen(1)")

    monkeypatch.setattr(LoadProjection, "_clarabel", panicking)
    base = phi_from_point_masses([0.4, 0.3, 0.2], [[0, 0, 0.05], [0.03, 0, 0], [0, 0.02, 0.1]])
    epsilon = 0.25 * np.linalg.eigvalsh(pseudo_inertia(base))[0]
    transform = np.array([transform_phi(e, np.eye(3), np.array([0, 0, 0.1]))
                          for e in np.eye(10)]).T
    noisy = phi_from_point_masses([1.0], [[0.0, 0.0, 0.1]])
    noisy[4:7] -= 0.05  # not a body: the projection must solve
    result = LoadProjection(transform, base, epsilon)(noisy, np.eye(10) * 1e-4)
    assert result.solver == "cvxpy"
    assert np.linalg.eigvalsh(pseudo_inertia(result.phi))[0] >= -1e-9

    def interrupted(self, phi, whiten):
        raise KeyboardInterrupt

    monkeypatch.setattr(LoadProjection, "_clarabel", interrupted)
    with pytest.raises(KeyboardInterrupt):  # only a solver's panic is absorbed
        LoadProjection(transform, base, epsilon)(noisy, np.eye(10) * 1e-4)


def _box_body(rng):
    """A body with a margin: eight point masses at the corners of a random box."""
    half = rng.uniform(0.02, 0.08, 3)
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return phi_from_point_masses(rng.uniform(0.05, 0.2, 8), corners * half + rng.normal(
        0, 0.02, 3))


def _load_optimum(noisy, covariance, base, transform, epsilon):
    """The load projection modelled independently in cvxpy (both cones), by Clarabel."""
    v = cp.Variable(10)
    whiten = np.linalg.inv(np.linalg.cholesky(covariance))
    f_load = sum(v[k] * PSEUDO_BASIS[k] for k in range(10))
    body = base + transform @ v
    f_body = sum(body[k] * PSEUDO_BASIS[k] for k in range(10))
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(whiten @ (v - noisy))),
                         [f_load >> 0, f_body - epsilon * np.eye(4) >> 0])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert problem.status == cp.OPTIMAL
    return v.value, problem.value


@pytest.mark.parametrize("load_mass", (0.0, 1.0))  # the truth on the cone's edge, inside it
def test_the_newton_load_projection_is_the_optimum_cvxpy_finds(load_mass):
    """The semismooth Newton path: the optimum to its certified gap, on an RLS-like stream.

    A sequence of noisy estimates around a load (no load: the truth on the boundary of
    f ⪰ 0, where an RLS estimate leaves it half the time), with an ill-conditioned P
    shrinking as data come in; each projection is compared with cvxpy + Clarabel. The
    Newton result's certified gap bounds its distance to the exact optimum by √(2·gap)
    standard deviations; Clarabel's own tolerance (1e-10 relative) allows it √(2e-10 ·
    value): the two must agree within the sum, and the objective must not exceed
    Clarabel's by more than that tolerance.
    """
    from robot_tv_dynamics.estimation.load_projection import LoadProjection
    from robot_tv_dynamics.inertia import transform_phi

    rng = np.random.default_rng(7 + int(load_mass))
    base = _box_body(rng)
    epsilon = 0.25 * np.linalg.eigvalsh(pseudo_inertia(base))[0]
    assert epsilon > 0
    angle = rng.uniform(0, np.pi)
    rotation = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0],
                         [0, 0, 1]])
    transform = np.array([transform_phi(e, rotation, np.array([0, 0, 0.1]))
                          for e in np.eye(10)]).T
    project_load = LoadProjection(transform, base, epsilon)
    load = phi_from_point_masses([load_mass], [[0.01, 0.0, 0.1]]) if load_mass else np.zeros(10)
    a = rng.normal(size=(10, 10))
    shape = a @ np.diag(10.0 ** rng.uniform(-4, 0, 10)) @ a.T  # condition number up to ~1e5
    drift = np.zeros(10)
    checked = 0
    for k in range(40):
        covariance = shape * 1e-3 / (1 + k)
        lower = np.linalg.cholesky(covariance)
        drift = 0.8 * drift + 0.6 * rng.normal(size=10)  # a correlated RLS-like error
        noisy = load + lower @ drift
        result = project_load(noisy, covariance)
        if not result.active:
            continue
        assert np.linalg.eigvalsh(pseudo_inertia(result.phi))[0] >= -1e-12
        assert np.linalg.eigvalsh(pseudo_inertia(base + transform @ result.phi))[0] >= (
            epsilon * (1 - 1e-9))
        optimum, value = _load_optimum(noisy, covariance, base, transform, epsilon)
        whiten = np.linalg.inv(lower)
        reached = 0.5 * float(np.sum((whiten @ (result.phi - noisy)) ** 2))
        if result.solver == "newton":
            allowance = np.sqrt(2 * result.gap) + np.sqrt(2e-10 * max(1.0, value))
            assert np.linalg.norm(whiten @ (result.phi - optimum)) <= 2 * allowance
            # Clarabel's point is feasible to its 1e-10 only: its value may be a little low
            assert reached <= value + 1e-8 * max(1.0, value)
        else:  # the fallback chain (Clarabel called directly, at its own tolerances)
            assert reached <= value + 1e-6 * max(1.0, value)
        checked += 1
    assert checked >= 10
    # Newton stalls now and then where an eigenvalue of its iterate crosses 0 (the kink of
    # the clipping); those calls go to the general solver
    assert project_load.solvers["newton"] >= 0.9 * checked, dict(project_load.solvers)


def test_the_warm_started_newton_projection_takes_fewer_steps_than_a_cold_start():
    """Consecutive estimates move little: the last (S, Z) start the next one."""
    from robot_tv_dynamics.estimation.load_projection import LoadProjection, project_onto_bodies

    rng = np.random.default_rng(3)
    base = _box_body(rng)
    epsilon = 0.25 * np.linalg.eigvalsh(pseudo_inertia(base))[0]
    project_load = LoadProjection(np.eye(10), base, epsilon)
    a = rng.normal(size=(10, 10))
    covariance = a @ np.diag(10.0 ** rng.uniform(-4, 0, 10)) @ a.T * 1e-4
    lower = np.linalg.cholesky(covariance)
    x = rng.normal(size=10)
    warm, cold = [], []
    for _ in range(50):
        x = x + 0.01 * rng.normal(size=10)
        result = project_load(lower @ x, covariance)
        if result.active and result.solver == "newton":
            warm.append(result.iterations)
            cold.append(project_onto_bodies(lower @ x, lower)[3])
    assert len(warm) >= 10
    assert sum(warm[1:]) <= 0.6 * sum(cold[1:]), (warm, cold)
