"""The SDP: solver fallback, failure reporting, the prior metric and the compression."""

from __future__ import annotations

import numpy as np
import pytest
from support.identification_helpers import PANDA_LOCK, Sine, perturbed_theta, simulate

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.exceptions import IdentificationSolverError
from robot_tv_dynamics.identification.data import check_samples, prepare
from robot_tv_dynamics.identification.pipeline import IdentifyOptions, identify
from robot_tv_dynamics.identification.solve import compress, prior_metric
from robot_tv_dynamics.inertia import pseudo_inertia, transform_phi


@pytest.fixture(scope="module")
def prepared(urdf_paths):
    model = RobotModel.from_urdf(urdf_paths["panda"], PANDA_LOCK)
    rng = np.random.default_rng(9)
    limits = model.joint_limits
    sine = Sine(0.5 * (limits.lower + limits.upper), 3, 0.5, 0.3)
    sim = simulate(model, perturbed_theta(model, rng), sine, 100.0, 6.0,
                   np.full(model.nv, 0.1), None, rng)
    return model, prepare(check_samples("s", model.joint_names, sim.t, sim.q, sim.qd, sim.tau))


def test_scs_is_the_fallback_when_the_first_solver_fails(prepared):
    model, data = prepared
    result = identify(model, data, IdentifyOptions(friction="viscous",
                                                   solvers=("NO_SUCH_SOLVER", "SCS")))
    assert result.solver == "SCS"
    margins = np.linalg.eigvalsh(pseudo_inertia(result.models["identified"].theta))[:, 0]
    assert np.all(margins >= result.margin * (1 - 1e-9))
    clarabel = identify(model, data, IdentifyOptions(friction="viscous"))
    assert clarabel.solver == "CLARABEL"
    # both solve the same convex problem: the same predictions to the noise's 1 %
    difference = (result.models["identified"].prediction
                  - clarabel.models["identified"].prediction)
    assert np.sqrt(np.mean(difference ** 2)) < 1e-3


def test_every_solver_failing_is_one_error_naming_them(prepared):
    model, data = prepared
    with pytest.raises(IdentificationSolverError, match=r"\['NOPE_A', 'NOPE_B'\] failed"):
        identify(model, data, IdentifyOptions(solvers=("NOPE_A", "NOPE_B")))


def test_prior_metric_is_the_relative_change_of_the_pseudo_inertia_in_any_frame(urdf_paths):
    model = RobotModel.from_urdf(urdf_paths["ur5"])
    rng = np.random.default_rng(0)
    phi0 = model.theta_nominal[2]
    delta = 0.05 * phi0 * rng.standard_normal(10)
    f0 = pseudo_inertia(phi0)
    values, vectors = np.linalg.eigh(f0)
    root = vectors @ np.diag(values ** -0.5) @ vectors.T
    expected = np.linalg.norm(root @ pseudo_inertia(delta) @ root)
    assert np.linalg.norm(prior_metric(phi0, floor=0.0) @ delta) == pytest.approx(
        expected, rel=1e-9)
    # the floor (1e-3 λ_max) only stiffens: never a smaller penalty
    assert np.linalg.norm(prior_metric(phi0) @ delta) <= expected * (1 + 1e-12)
    # frame invariance (without the floor): the same bodies seen from another frame
    angle = 0.7
    rotation = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0],
                         [0, 0, 1.0]])
    shift = np.array([0.1, -0.2, 0.05])
    moved0, moved = transform_phi(phi0, rotation, shift), transform_phi(delta, rotation, shift)
    assert np.linalg.norm(prior_metric(moved0, floor=0.0) @ moved) == pytest.approx(
        expected, rel=1e-6)


def test_compression_keeps_the_least_squares_objective():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5000, 12))
    b = rng.standard_normal(5000)
    system = compress(a, b, chunk=700)
    for _ in range(3):
        x = rng.standard_normal(12)
        full = np.sum((a @ x - b) ** 2)
        compact = np.sum((system.R @ x - system.r) ** 2) + system.residual_floor
        assert compact == pytest.approx(full, rel=1e-10)


def _inaccurate(monkeypatch, names):
    """Make the named solvers report ``optimal_inaccurate`` (their point is kept)."""
    import cvxpy as cp

    solve = cp.Problem.solve

    def patched(self, *args, **kwargs):
        value = solve(self, *args, **kwargs)
        if kwargs.get("solver") in names:
            self._status = "optimal_inaccurate"
        return value

    monkeypatch.setattr(cp.Problem, "solve", patched)


def test_an_inaccurate_optimum_is_not_accepted_while_another_solver_can_do_better(
        prepared, monkeypatch):
    model, data = prepared
    _inaccurate(monkeypatch, {"SCS"})
    result = identify(model, data, IdentifyOptions(friction="viscous",
                                                   solvers=("SCS", "CLARABEL")))
    assert result.solver == "CLARABEL" and result.solver_status == "optimal", result.warnings
    assert result.solver_accurate and result.warnings == ()


def test_only_inaccurate_optima_are_a_reported_outcome(prepared, monkeypatch):
    from robot_tv_dynamics.identification.report import format_table, summary

    model, data = prepared
    _inaccurate(monkeypatch, {"CLARABEL", "SCS"})
    result = identify(model, data, IdentifyOptions(friction="viscous"))
    assert result.solver == "CLARABEL" and not result.solver_accurate
    assert len(result.warnings) == 1 and "inaccurate" in result.warnings[0]
    assert "SCS" in result.warnings[0]
    margins = np.linalg.eigvalsh(pseudo_inertia(result.models["identified"].theta))[:, 0]
    assert np.all(margins >= result.margin * (1 - 1e-9))
    assert result.margin_repair >= 0.0
    table = summary(result, model, urdf="u", data="d", topic=None, rate=100.0, cutoff=10.0,
                    n_raw=data.t.size, writeback=[])
    assert table["solver"]["accurate"] is False and table["warnings"] == list(result.warnings)
    assert "WARNING: no solver reached an accurate optimum" in format_table(table)


def test_a_solver_point_outside_the_consistent_set_is_repaired_and_reported():
    """White-box: a point with λ_min f(Φ) < 0 is raised to ε, with the raise and a warning."""
    from robot_tv_dynamics.identification.solve import _solution

    phi = np.array([1.0, 0, 0, 0, 0.01, 0.01, -0.001, 0, 0, 0])  # f has λ < 0
    system = compress(np.eye(10), phi)
    solution = _solution(system, phi, 1, 1e-6, "X", "optimal", 0.0, ())
    lowest = np.linalg.eigvalsh(pseudo_inertia(phi))[0]
    assert lowest < 0
    assert solution.margin_repair == pytest.approx(1e-6 - lowest)
    assert np.linalg.eigvalsh(pseudo_inertia(solution.x))[0] >= 1e-6 * (1 - 1e-9)
    assert "not physically consistent" in solution.warnings[0]
