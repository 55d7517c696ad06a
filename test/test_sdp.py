"""The one SDP solve: Clarabel, then SCS; an inaccurate optimum only when nothing better."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from robot_tv_dynamics.exceptions import IdentificationSolverError
from robot_tv_dynamics.sdp import OPTIMAL, OPTIMAL_INACCURATE, solve_sdp

#: A symmetric matrix with one negative eigenvalue: its nearest PSD matrix (Frobenius)
#: clips that eigenvalue to 0.
A = np.array([[1.0, 2.0], [2.0, -1.0]])


def nearest_psd(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return vectors @ np.diag(np.maximum(values, 0.0)) @ vectors.T


def problem() -> tuple[cp.Problem, cp.Variable]:
    x = cp.Variable((2, 2), symmetric=True)
    return cp.Problem(cp.Minimize(cp.sum_squares(x - A)), [x >> 0]), x


def _report(monkeypatch, statuses: dict[str, str]) -> None:
    """Make the named solvers end with the given status (their point is kept)."""
    solve = cp.Problem.solve

    def patched(self, *args, **kwargs):
        value = solve(self, *args, **kwargs)
        if kwargs.get("solver") in statuses:
            self._status = statuses[kwargs["solver"]]
        return value

    monkeypatch.setattr(cp.Problem, "solve", patched)


@pytest.mark.parametrize("solvers", [("CLARABEL", "SCS"), ("SCS",)])
def test_each_solver_finds_the_eigenvalue_clipping(solvers):
    solution = solve_sdp(*problem(), solvers)
    assert solution.solver == solvers[0] and solution.status == OPTIMAL and solution.accurate
    np.testing.assert_allclose(solution.value, nearest_psd(A), atol=1e-5)
    assert solution.failures == () and solution.solve_time_s > 0


def test_a_solver_that_raises_is_skipped_and_reported():
    solution = solve_sdp(*problem(), ("NO_SUCH_SOLVER", "CLARABEL"))
    assert solution.solver == "CLARABEL" and solution.accurate
    assert len(solution.failures) == 1 and solution.failures[0].startswith("NO_SUCH_SOLVER: ")


def test_an_inaccurate_optimum_does_not_stop_the_search(monkeypatch):
    _report(monkeypatch, {"SCS": OPTIMAL_INACCURATE})
    solution = solve_sdp(*problem(), ("SCS", "CLARABEL"))
    assert solution.solver == "CLARABEL" and solution.accurate
    assert solution.failures == ("SCS: status optimal_inaccurate",)


def test_the_first_inaccurate_optimum_is_returned_when_none_is_accurate(monkeypatch):
    _report(monkeypatch, {"CLARABEL": OPTIMAL_INACCURATE, "SCS": OPTIMAL_INACCURATE})
    solution = solve_sdp(*problem())
    assert solution.solver == "CLARABEL" and not solution.accurate
    assert solution.status == OPTIMAL_INACCURATE
    np.testing.assert_allclose(solution.value, nearest_psd(A), atol=1e-5)
    assert [f.split(":")[0] for f in solution.failures] == ["CLARABEL", "SCS"]


def test_no_usable_point_is_one_error_naming_every_solver(monkeypatch):
    _report(monkeypatch, {"CLARABEL": "infeasible"})
    with pytest.raises(IdentificationSolverError,
                       match=r"\['CLARABEL', 'NOPE'\] failed: CLARABEL: status infeasible; NOPE"):
        solve_sdp(*problem(), ("CLARABEL", "NOPE"))
