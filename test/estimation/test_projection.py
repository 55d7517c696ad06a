"""The metric projection onto the uniform band, checked against cvxpy + Clarabel."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from robot_tv_dynamics import InvalidInputError
from robot_tv_dynamics.estimation.projection import project_in_metric
from robot_tv_dynamics.inertia import (
    PSEUDO_BASIS,
    phi_from_point_masses,
    phi_from_pseudo_inertia,
    project_uniformly_consistent,
    pseudo_inertia,
)


def _instance(rng, spread):
    """A body, its band (ε = 0.3 λ_min, β = 3 λ_max), an ill-conditioned P, Φ̂ outside."""
    count = int(rng.integers(4, 8))
    body = phi_from_point_masses(rng.uniform(0.1, 1.0, count), rng.normal(0, 0.1, (count, 3)))
    values = np.linalg.eigvalsh(pseudo_inertia(body))
    epsilon, beta = 0.3 * values[0], 3.0 * values[-1]
    a = rng.normal(size=(10, 10))
    covariance = a @ np.diag(10.0 ** rng.uniform(-8, 0, 10)) @ a.T * 1e-2  # cond up to ~1e10
    phi = body + np.linalg.cholesky(covariance) @ rng.normal(0, spread, 10)
    return body, phi, covariance, epsilon, beta


def _clarabel(phi, covariance, epsilon, beta):
    """The same SDP, modelled in cvxpy (f by its basis) and solved by Clarabel."""
    v = cp.Variable(10)
    f = sum(v[k] * PSEUDO_BASIS[k] for k in range(10))
    whiten = np.linalg.inv(np.linalg.cholesky(covariance))
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(whiten @ (v - phi))),
                         [f - epsilon * np.eye(4) >> 0, beta * np.eye(4) - f >> 0])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert problem.status == cp.OPTIMAL
    return v.value, problem.value


def _half_distance_squared(a, b, covariance):
    d = a - b
    return 0.5 * float(d @ np.linalg.solve(covariance, d))


def _assert_in_band(phi, epsilon, beta):
    values = np.linalg.eigvalsh(pseudo_inertia(phi))
    assert values[0] >= epsilon * (1 - 1e-9) and values[-1] <= beta * (1 + 1e-9), values


@pytest.mark.parametrize("spread", (0.5, 3.0, 300.0))  # near the band … far outside it
def test_the_projection_is_the_optimum_clarabel_finds(spread):
    rng = np.random.default_rng(int(spread * 10))
    solvers = []
    for _ in range(12):
        body, phi, covariance, epsilon, beta = _instance(rng, spread)
        if not project_in_metric(phi, covariance, epsilon, beta).active:
            continue
        reference, optimum = _clarabel(phi, covariance, epsilon, beta)
        for low_rank in (True, False):  # the fast path where it applies, and the IPM alone
            result = project_in_metric(phi, covariance, epsilon, beta, start=body,
                                       low_rank=low_rank)
            solvers.append(result.solver)
            value = _half_distance_squared(result.phi, phi, covariance)
            assert result.active and result.converged
            assert result.gap <= 1e-9 * max(1.0, value)
            # the optimal values agree to the certified gap plus Clarabel's own tolerance
            assert abs(value - optimum) <= result.gap + 1e-7 * max(1.0, optimum), (
                value, optimum, result.solver)
            # the points: ½‖Φ̄ − Φ*‖²_{P⁻¹} ≤ gap by strong convexity (+ Clarabel's error)
            assert _half_distance_squared(result.phi, reference, covariance) <= (
                result.gap + 1e-7 * max(1.0, optimum))
            assert np.isclose(result.distance, np.sqrt(2 * value))
            _assert_in_band(result.phi, epsilon, beta)
    assert solvers.count("interior-point") >= 6
    if spread < 1.0:  # a small excursion: one or two eigenvalues below ε, the fast path
        assert solvers.count("low-rank") >= 3, solvers


def test_inside_the_band_it_is_the_identity():
    rng = np.random.default_rng(1)
    body, _, covariance, epsilon, beta = _instance(rng, 1.0)
    result = project_in_metric(body, covariance, epsilon, beta)
    assert not result.active and result.iterations == 0
    np.testing.assert_array_equal(result.phi, body)


def test_a_too_large_body_is_brought_under_beta():
    rng = np.random.default_rng(2)
    body, _, covariance, epsilon, beta = _instance(rng, 1.0)
    phi = 4.0 * body  # λ_max(f) = 4/3 β
    result = project_in_metric(phi, covariance, epsilon, beta)
    _, optimum = _clarabel(phi, covariance, epsilon, beta)
    assert result.active and result.converged
    assert abs(_half_distance_squared(result.phi, phi, covariance) - optimum) <= (
        result.gap + 1e-7 * max(1.0, optimum))
    _assert_in_band(result.phi, epsilon, beta)
    assert np.linalg.eigvalsh(pseudo_inertia(result.phi))[-1] > 0.999 * beta  # on the edge


def test_it_is_never_farther_in_the_metric_than_eigenvalue_clipping():
    rng = np.random.default_rng(3)
    for _ in range(10):
        body, phi, covariance, epsilon, beta = _instance(rng, 3.0)
        clipped = project_uniformly_consistent(phi, epsilon, beta)
        result = project_in_metric(phi, covariance, epsilon, beta, start=body)
        assert (_half_distance_squared(result.phi, phi, covariance)
                <= _half_distance_squared(clipped, phi, covariance) + result.gap)


def test_a_band_of_one_point_and_bad_input():
    covariance = np.eye(10)
    phi = np.r_[1.0, np.zeros(9)]
    result = project_in_metric(phi, covariance, 0.5, 0.5)
    np.testing.assert_allclose(pseudo_inertia(result.phi), 0.5 * np.eye(4), atol=1e-15)
    np.testing.assert_allclose(result.phi, phi_from_pseudo_inertia(0.5 * np.eye(4)))
    with pytest.raises(InvalidInputError, match="epsilon"):
        project_in_metric(phi, covariance, 0.5, 0.4)
    with pytest.raises(InvalidInputError, match="covariance"):
        project_in_metric(phi, -covariance, 1e-3, 1.0)
    with pytest.raises(InvalidInputError, match="phi"):
        project_in_metric(np.full(10, np.nan), covariance, 1e-3, 1.0)


def _near_singular(rng, rank):
    """P = A Aᵀ of rank ``rank`` plus rounding: what a long run's covariance becomes."""
    a = rng.normal(size=(10, rank)) * 10.0 ** rng.uniform(-6, -1, rank)
    p = a @ a.T
    return 0.5 * (p + p.T) + 1e-18 * rng.normal(size=(10, 10))


@pytest.mark.parametrize("rank", (3, 6, 9))
def test_near_singular_covariances_never_raise_and_stay_in_the_band(rank):
    rng = np.random.default_rng(rank)
    for _ in range(8):
        body, _, _, epsilon, beta = _instance(rng, 1.0)
        covariance = _near_singular(rng, rank)
        phi = body + rng.normal(0, 0.05, 10)  # far outside along unknown directions too
        result = project_in_metric(phi, covariance, epsilon, beta, start=body)
        assert np.all(np.isfinite(result.phi))
        _assert_in_band(result.phi, epsilon, beta)


def test_a_singular_newton_system_falls_back_to_clarabel(monkeypatch):
    from robot_tv_dynamics.estimation import projection

    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(projection, "_project_whitened", broken)
    rng = np.random.default_rng(11)
    body, phi, covariance, epsilon, beta = _instance(rng, 3.0)
    result = project_in_metric(phi, covariance, epsilon, beta, start=body)
    assert result.active and result.solver == "clarabel"
    _assert_in_band(result.phi, epsilon * (1 - 1e-7), beta)
    _, optimum = _clarabel(phi, covariance, epsilon, beta)
    assert abs(_half_distance_squared(result.phi, phi, covariance) - optimum) <= (
        1e-5 * max(1.0, optimum))


def test_the_load_projection_gives_a_body_that_keeps_its_margin():
    from robot_tv_dynamics.estimation.projection import LoadProjection
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
        v = cp.Variable(10)
        whiten = np.linalg.inv(np.linalg.cholesky(covariance))
        f_load = sum(v[k] * PSEUDO_BASIS[k] for k in range(10))
        body = base + transform @ v
        f_body = sum(body[k] * PSEUDO_BASIS[k] for k in range(10))
        problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(whiten @ (v - noisy))),
                             [f_load >> 0, f_body - epsilon * np.eye(4) >> 0])
        problem.solve(solver=cp.CLARABEL)
        value = _half_distance_squared(result.phi, noisy, covariance)
        # both solved by Clarabel at its default tolerances
        assert value <= problem.value + 1e-4 * max(1.0, problem.value), (value, problem.value)


def test_a_clarabel_panic_falls_back_to_cvxpy_instead_of_ending_the_run(monkeypatch):
    """Clarabel's Rust panics reach Python as pyo3's PanicException, a BaseException.

    Seen on a recorded grasp (``Eigval error``): it went past ``except Exception`` and ended
    ``estimate --method classical`` with a traceback.
    """
    from robot_tv_dynamics.estimation.projection import LoadProjection
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
