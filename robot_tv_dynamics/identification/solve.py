r"""Least squares for (Θ, friction) subject to uniform physical consistency f(Φ_l) ⪰ εI.

With the stacked regressor A = [Y Y_f] (rows whitened by the per-joint noise level σ_j)
and the measured efforts b, the identified parameters x = (Θ, b_f) solve the convex
semidefinite program

.. math::
    \min_x\ \|A x - b\|^2
      + w \sum_l \big\| f_0^{-1/2}\, f(Φ_l - Φ_{0,l})\, f_0^{-1/2} \big\|_F^2
      + w_f \|x_f / s_f\|^2
    \quad\text{s.t.}\quad f(Φ_l) \succeq ε I_4 \ \ (l = 1…N)

where f is the pseudo-inertia of eq. (9) (linear in Φ, so every constraint is an LMI:
Wensing et al. 2018, Sousa & Cortesão 2014) and Φ_0 the URDF prior.

**The regulariser** is the local metric of the entropic (log-det Bregman) divergence of
Lee, Wensing & Park (2020) at the prior, i.e. its second-order Taylor expansion: the
squared relative change of the body's pseudo-inertia. It is dimensionless, invariant
to the choice of body frame (exactly so without the floor below), and weights every
body on its own scale (a 15 g finger and a 5 kg link alike). With whitened rows the
objective is a MAP estimate with a Gaussian prior of relative standard deviation 1/√w
on f(Φ_l) (default w = 1): a direction the data excite at all (more than one noise-σ
sample's worth) is decided by the data, a direction they cannot excite stays at the
URDF value instead of drifting. f_0's eigenvalues are floored at 10⁻³ λ_max(f_0) so
that a nearly flat CAD body does not freeze. Friction coefficients get a negligible
ridge (uniqueness when a joint never moves).

**Scaling**: the rows are whitened (1/σ_j, σ_j from a first ordinary least-squares
residual), the tall system is compressed by a QR factorisation to a square one
(‖Ax−b‖² = ‖R₁x − r‖² + const, independent of the sample count), and the unknowns are
column-equilibrated (x = x_0 + D z with D = 1/column norms) before the SDP is built.

**Solvers**: the package's one SDP solve (:func:`robot_tv_dynamics.sdp.solve_sdp`:
Clarabel, then SCS; an inaccurate optimum is returned only when no solver reaches
``optimal``), here with ``ConstrainedSolution.accurate = False`` and a warning saying
so. A solver's last ~1e-9 of infeasibility is removed by raising the eigenvalues of
f(Φ_l) below ε to ε
(:func:`~robot_tv_dynamics.inertia.project_uniformly_consistent`, no upper cap), so the
returned bodies satisfy f(Φ_l) ⪰ εI exactly; the largest raise is reported
(``margin_repair``), with a warning when the solver's point was not even consistent
(λ_min(f(Φ_l)) < 0).

The unconstrained estimate reported beside it is ordinary least squares: the
minimum-norm (in the equilibrated variables) correction of the prior, with directions
whose singular value is below ``rcond`` left at the prior.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    PSEUDO_BASIS,
    Array,
    project_uniformly_consistent,
    pseudo_inertia,
)
from robot_tv_dynamics.sdp import DEFAULT_SOLVERS, solve_sdp

#: Default margin ε of f(Φ_l) ⪰ εI [kg·m² (and kg)].
DEFAULT_MARGIN = 1e-6
#: Default weight w of the prior term (see the module docstring).
DEFAULT_PRIOR_WEIGHT = 1.0
#: Floor of f_0's eigenvalues in the prior metric, relative to λ_max(f_0).
PRIOR_EIGEN_FLOOR = 1e-3
#: Ridge on the equilibrated friction coefficients.
FRICTION_RIDGE = 1e-8
#: Relative singular-value cut of the unconstrained least squares.
OLS_RCOND = 1e-8

#: E[:, k] = vec(f(e_k)): vec(f(Φ)) = E Φ, (16, 10) (the basis of :mod:`~robot_tv_dynamics.inertia`;
#: f(e_k) is symmetric, so row- and column-major vec agree).
_PSEUDO_BASIS = np.ascontiguousarray(PSEUDO_BASIS.reshape(10, 16).T)


@dataclass(frozen=True)
class CompressedSystem:
    """‖A x − b‖² = ‖R x − r‖² + residual_floor, with R square upper triangular.

    Attributes:
        R: (P, P) [whitened torque per parameter unit].
        r: (P,).
        residual_floor: the part of ‖b‖² no x can explain.
        rows: number of rows of A (samples × joints).
    """

    R: Array
    r: Array
    residual_floor: float
    rows: int


def compress(a: npt.ArrayLike, b: npt.ArrayLike, chunk: int = 20000) -> CompressedSystem:
    """QR-compress a tall system (rows × P) in chunks of ``chunk`` rows (TSQR)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64).reshape(-1)
    rows, p = a.shape
    carry = np.zeros((0, p + 1))
    for start in range(0, rows, chunk):
        block = np.column_stack([a[start:start + chunk], b[start:start + chunk]])
        carry = np.asarray(np.linalg.qr(np.vstack([carry, block]), mode="r"))
    full = np.zeros((p + 1, p + 1))
    full[:carry.shape[0]] = carry
    return CompressedSystem(full[:p, :p].copy(), full[:p, p].copy(),
                            float(full[p, p] ** 2), rows)


def equilibration(system: CompressedSystem) -> Array:
    """D = 1 / the column norms of R (a zero column: 1 / the largest), (P,): x = x_0 + D z."""
    norms = np.linalg.norm(system.R, axis=0)
    big = norms.max() if norms.size else 1.0
    return np.where(norms > 1e-12 * big, 1.0 / np.where(norms > 0, norms, 1.0), 1.0 / big)


def solve_unconstrained(
    system: CompressedSystem, x_prior: npt.ArrayLike, rcond: float = OLS_RCOND
) -> Array:
    """Ordinary least squares: the minimum-norm equilibrated correction of ``x_prior``."""
    x_prior = np.asarray(x_prior, dtype=np.float64)
    d = equilibration(system)
    z, *_ = np.linalg.lstsq(system.R * d, system.r - system.R @ x_prior, rcond=rcond)
    return np.asarray(x_prior + d * z)


def prior_metric(phi_prior: npt.ArrayLike, floor: float = PRIOR_EIGEN_FLOOR) -> Array:
    """G with ‖G ΔΦ‖² = ‖f_0^{-1/2} f(ΔΦ) f_0^{-1/2}‖_F² (f_0 = f(Φ_prior), floored), (16, 10)."""
    values, vectors = np.linalg.eigh(pseudo_inertia(phi_prior))
    top = max(float(values[-1]), 1e-12)
    values = np.maximum(values, floor * top)
    root = (vectors / np.sqrt(values)) @ vectors.T
    return np.asarray(np.kron(root, root) @ _PSEUDO_BASIS)


@dataclass(frozen=True)
class ConstrainedSolution:
    """Result of :func:`solve_constrained`.

    Attributes:
        x: the parameters (10N + F,): Θ.ravel() then friction coefficients.
        solver: the solver that succeeded.
        status: its status string.
        solve_time_s: wall time of the solver call(s) [s].
        objective: data term ‖Ax − b‖² at x (whitened) incl. the residual floor.
        accurate: whether the solver reached ``optimal`` (False: every solver stopped at
            ``optimal_inaccurate`` and ``x`` is the first such point).
        margin_repair: the largest raise of an eigenvalue of f(Φ_l) up to ε applied to
            the solver's point [kg·m² (and kg)]; 0 when it already satisfied f ⪰ εI.
        warnings: what a user should know about this solution (inaccurate optimum, a
            solver point that was not physically consistent), one sentence each.
    """

    x: Array
    solver: str
    status: str
    solve_time_s: float
    objective: float
    accurate: bool = True
    margin_repair: float = 0.0
    warnings: tuple[str, ...] = ()


def solve_constrained(
    system: CompressedSystem,
    theta_prior: npt.ArrayLike,
    n_friction: int,
    margin: float = DEFAULT_MARGIN,
    prior_weight: float = DEFAULT_PRIOR_WEIGHT,
    solvers: Sequence[str] = DEFAULT_SOLVERS,
) -> ConstrainedSolution:
    """The SDP of the module docstring.

    Args:
        system: the compressed whitened system over x = (Θ.ravel(), friction).
        theta_prior: Φ_0 of every body, (N, 10) (the URDF).
        n_friction: number of friction coefficients F at the end of x.
        margin: ε > 0.
        prior_weight: w ≥ 0.
        solvers: cvxpy solver names, tried in order.

    Returns:
        The solution, every body with f(Φ_l) ⪰ εI.

    Raises:
        InvalidInputError: bad margin or weight.
        IdentificationSolverError: no solver returned an optimal point.
    """
    import cvxpy as cp

    theta_prior = np.asarray(theta_prior, dtype=np.float64)
    n_bodies = theta_prior.shape[0]
    p = 10 * n_bodies + n_friction
    if system.R.shape != (p, p):
        raise InvalidInputError("system", f"expected {p} unknowns, got {system.R.shape}")
    if not (np.isfinite(margin) and margin > 0):
        raise InvalidInputError("margin", f"must be > 0, got {margin}")
    if not (np.isfinite(prior_weight) and prior_weight >= 0):
        raise InvalidInputError("prior_weight", f"must be >= 0, got {prior_weight}")
    x_prior = np.concatenate([theta_prior.ravel(), np.zeros(n_friction)])
    d = equilibration(system)
    scale = 1.0 / max(system.rows, 1)  # objective O(1): whitened residual per row
    z = cp.Variable(p)
    data = cp.sum_squares((system.R * d) @ z - (system.r - system.R @ x_prior))
    metric = np.zeros((16 * n_bodies, p))
    for l in range(n_bodies):
        metric[16 * l:16 * l + 16, 10 * l:10 * l + 10] = prior_metric(theta_prior[l])
    terms = [scale * data]
    if prior_weight > 0:
        terms.append(scale * prior_weight * cp.sum_squares((metric * d) @ z))
    if n_friction:
        terms.append(FRICTION_RIDGE * cp.sum_squares(z[10 * n_bodies:]))
    x = x_prior + cp.multiply(d, z)
    constraints = []
    for l in range(n_bodies):
        f = cp.Variable((4, 4), symmetric=True)
        constraints += [cp.vec(f, order="F") == _PSEUDO_BASIS @ x[10 * l:10 * l + 10],
                        f >> margin * np.eye(4)]
    problem = cp.Problem(cp.Minimize(cp.sum(terms)), constraints)
    solution = solve_sdp(problem, z, solvers)
    warnings = () if solution.accurate else (
        f"no solver reached an accurate optimum ({'; '.join(solution.failures)}); "
        f"{solution.solver}'s inaccurate point is returned",)
    return _solution(system, x_prior + d * solution.value, n_bodies, margin, solution.solver,
                     solution.status, solution.solve_time_s, warnings)


def _solution(
    system: CompressedSystem, values: npt.ArrayLike, n_bodies: int, margin: float,
    solver: str, status: str, elapsed: float, warnings: tuple[str, ...],
) -> ConstrainedSolution:
    """The solver's point with every f(Φ_l) ⪰ εI enforced, the repair and the residual."""
    values = np.array(values, dtype=np.float64)
    theta = values[:10 * n_bodies].reshape(n_bodies, 10)
    lowest = np.linalg.eigvalsh(pseudo_inertia(theta))[:, 0]
    repair = float(np.max(margin - lowest, initial=0.0))
    if np.any(lowest < 0.0):
        bodies = [int(l) for l in np.flatnonzero(lowest < 0.0)]
        warnings = (*warnings, f"{solver}'s point was not physically consistent in bodies "
                    f"{bodies} (λ_min f(Φ) down to {lowest.min():.3g}); its eigenvalues "
                    f"were raised to ε = {margin:g}")
    theta = np.array([project_uniformly_consistent(phi, margin) if low < margin else phi
                      for phi, low in zip(theta, lowest, strict=True)])
    values[:10 * n_bodies] = theta.ravel()
    residual = float(np.sum((system.R @ values - system.r) ** 2) + system.residual_floor)
    return ConstrainedSolution(values, solver, status, elapsed, residual,
                               accurate=status == "optimal", margin_repair=repair,
                               warnings=warnings)
