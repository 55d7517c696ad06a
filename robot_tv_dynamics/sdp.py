"""The package's one semidefinite-program solve: Clarabel, then SCS, one rule for inexact optima.

Every SDP of the package (identification's constrained least squares, the batch payload
fit, the metric projection's general path) is built with cvxpy and handed to
:func:`solve_sdp`, which tries the solvers in order:

* Clarabel (interior point, native PSD cones, exact to ~1e-8) first; SCS (first-order
  splitting) as the fallback, run to :data:`SCS_OPTIONS` (eps 1e-8, 200 000 iterations).
* A solver that raises, or returns no finite point, is a failure and the next is tried.
* ``optimal`` ends the search. ``optimal_inaccurate`` does not: the next solver is tried,
  and only when none reaches ``optimal`` is the first inaccurate point returned
  (:attr:`SdpSolution.accurate` False, the other solvers' reports in
  :attr:`SdpSolution.failures`).
* No usable point at all: one :class:`~robot_tv_dynamics.exceptions.IdentificationSolverError`
  naming every solver and what it reported.

cvxpy is imported on the first solve, not with this module.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from robot_tv_dynamics.exceptions import IdentificationSolverError
from robot_tv_dynamics.inertia import Array

#: cvxpy solver names tried in order.
DEFAULT_SOLVERS: tuple[str, ...] = ("CLARABEL", "SCS")
#: Options of SCS, the first-order fallback (Clarabel runs with its defaults).
SCS_OPTIONS: dict[str, float | int] = {"eps": 1e-8, "max_iters": 200_000}
#: cvxpy's status of an exact optimum and of one the solver could not refine.
OPTIMAL, OPTIMAL_INACCURATE = "optimal", "optimal_inaccurate"


@dataclass(frozen=True)
class SdpSolution:
    """What :func:`solve_sdp` found.

    Attributes:
        value: the variable's value at the returned point (finite).
        solver: the solver that returned it.
        status: :data:`OPTIMAL` or :data:`OPTIMAL_INACCURATE`.
        failures: what the other solvers tried reported, one ``"<solver>: <report>"`` each.
        solve_time_s: wall time of all solver calls [s].
    """

    value: Array
    solver: str
    status: str
    failures: tuple[str, ...]
    solve_time_s: float

    @property
    def accurate(self) -> bool:
        """Whether the solver reached ``optimal``."""
        return self.status == OPTIMAL


def solve_sdp(problem: Any, variable: Any,
              solvers: Sequence[str] = DEFAULT_SOLVERS) -> SdpSolution:
    """Solve a cvxpy problem by the rule of the module docstring.

    Args:
        problem: the ``cvxpy.Problem``.
        variable: the ``cvxpy.Variable`` whose value is returned.
        solvers: cvxpy solver names, tried in order.

    Returns:
        The first ``optimal`` point, else the first ``optimal_inaccurate`` one.

    Raises:
        IdentificationSolverError: no solver returned a finite optimal or inaccurate point.
    """
    import cvxpy as cp

    failures: list[str] = []
    inaccurate: tuple[str, Array] | None = None
    start = time.perf_counter()
    for name in solvers:
        try:
            problem.solve(solver=name, **(SCS_OPTIONS if name == "SCS" else {}))
        except (cp.error.SolverError, ValueError, ArithmeticError) as error:
            failures.append(f"{name}: {error}")
            continue
        value = (None if variable.value is None
                 else np.array(variable.value, dtype=np.float64, copy=True))
        if value is not None and np.all(np.isfinite(value)):
            if problem.status == OPTIMAL:
                return SdpSolution(value, name, OPTIMAL, tuple(failures),
                                   time.perf_counter() - start)
            if problem.status == OPTIMAL_INACCURATE and inaccurate is None:
                inaccurate = (name, value)
        failures.append(f"{name}: status {problem.status}")
    if inaccurate is None:
        raise IdentificationSolverError(tuple(solvers), "; ".join(failures))
    return SdpSolution(inaccurate[1], inaccurate[0], OPTIMAL_INACCURATE, tuple(failures),
                       time.perf_counter() - start)
