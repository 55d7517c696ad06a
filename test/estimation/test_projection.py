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
