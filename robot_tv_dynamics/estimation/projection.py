r"""Projection of Φ̂ onto the uniform band in the estimator's own metric (Definition 3).

Given an estimate Φ̂ with covariance P (the RLS covariance), the projection is

.. math::
    \barΦ = \arg\min_Φ\ \tfrac12 (Φ - \hatΦ)^\top P^{-1} (Φ - \hatΦ)
    \quad\text{s.t.}\quad ε I_4 \preceq f(Φ) \preceq β I_4

with f the pseudo-inertia of eq. (9): a small semidefinite program (10 variables, two
4×4 linear matrix inequalities). Unlike clipping the eigenvalues of f(Φ̂) (the
Frobenius projection in f, :func:`~robot_tv_dynamics.inertia.project_uniformly_consistent`),
it moves Φ̂ along the directions the data know least, and leaves the well-determined ones
(typically the mass) where the data put them. When the RLS cost is the quadratic
(Φ − Φ̂)ᵀ P⁻¹ (Φ − Φ̂) + const, Φ̄ is the constrained least-squares estimate.

Solver (:func:`project_in_metric`). In whitened coordinates Φ = Φ̂ + L x (P = L Lᵀ) the
objective is ½‖x‖² and the constraints are S = C + 𝒜(x) ⪰ 0 with the two blocks

.. math::
    S_1 = f(\hatΦ) - εI + \textstyle\sum_k x_k G_k,\qquad
    S_2 = βI - f(\hatΦ) - \textstyle\sum_k x_k G_k,\qquad G_k = f(L e_k)

(f is linear). Two paths, one certificate:

- **low rank** (``_WhitenedBand.solve_low_rank``): when one or two eigenvalues of
  f(Φ̂) are below ε and none above β, the multiplier is guessed as Z₁ = U Uᵀ (U 4×r) and
  S₁(𝒢*(U Uᵀ)) U = 0 solved by Gauss-Newton from the offending eigenvectors (with one
  active-set step adding the direction a rank-one result leaves the band in);
- otherwise, or when that result fails its certificate, a primal-dual interior-point
  method solves x = 𝒜*(Z), S Z = μ I, S, Z ⪰ 0 with the HKM direction and Mehrotra's
  predictor-corrector [Helmberg, Rendl, Vanderbei & Wolkowicz 1996; Todd, Toh & Tütüncü
  1998]: per step one 10×10 Schur complement M = I + Gᵀ(Σ_c Z_c ⊗ S_c⁻¹)G and two
  solves; steps stop at 99 % of the way to the cone's boundary, so every iterate is
  strictly inside the band. It starts from the better (nearer in the metric) of the
  previous estimate (``start``) and the eigenvalue clipping of Φ̂, each lifted 1 % of ε
  off the band's edges, with Z = s S⁻¹.

Every Z ⪰ 0 is dual feasible, and its dual value

.. math::
    g(Z) = -\tfrac12 \|𝒜^*(Z)\|^2 - \langle Z, C\rangle,\qquad
    𝒜^*(Z)_k = \langle G_k, Z_1 - Z_2\rangle

is a lower bound on the optimum: the solver stops when the certified gap ½‖x‖² − g(Z)
is below ``gap_tolerance`` · max(1, ½‖x‖²). By strong convexity (modulus 1 in x) Φ̄ is
then within √(2·gap) of the exact projection in the metric P⁻¹ (in standard deviations).
Typical cost (benchmarks/bench_estimator.py): ≈ 150 µs on the low-rank path, ≈ 1.5 ms
(8–16 steps) on the interior point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.linalg import lapack

from robot_tv_dynamics.exceptions import IdentificationSolverError, InvalidInputError
from robot_tv_dynamics.inertia import (
    PSEUDO_BASIS,
    Array,
    check_finite,
    phi_from_pseudo_inertia,
    project_uniformly_consistent,
)
from robot_tv_dynamics.sdp import solve_sdp

_BARRIER_DEGREE = 8  # two 4×4 log-det barriers
_LOW_RANK_STEPS = 12  # Gauss-Newton steps of the low-rank fast path (per rank tried)
_LIFT = 1e-11  # the low-rank result is lifted to λ_min(f) = ε (1 + _LIFT), off rounding
_INTERIOR = 1e-2  # the start's distance from the band's edges, in units of ε


@dataclass(frozen=True)
class MetricProjection:
    """Result of :func:`project_in_metric`.

    Attributes:
        phi: Φ̄ (10,), eq. (7) order [kg, kg·m, kg·m²].
        active: False when Φ̂ was already in the band (then Φ̄ = Φ̂, nothing solved).
        gap: certified bound on ½(Φ̄ − Φ̂)ᵀP⁻¹(Φ̄ − Φ̂) minus its optimum [1] (0 if
            not active).
        distance: √((Φ̄ − Φ̂)ᵀ P⁻¹ (Φ̄ − Φ̂)), the move in standard deviations [1].
        iterations: Newton steps taken (of ``solver``).
        solver: ``"newton"`` (the semismooth Newton of
            :mod:`~robot_tv_dynamics.estimation.load_projection`, when the body's margin
            follows from f(Φ_L) ⪰ 0), ``"low-rank"`` (the fast path: only
            the lower bound active, in one or two eigen-directions),
            ``"interior-point"``, ``"clarabel"`` (the fallback
            when the hand-written solver meets a singular system), ``"clipping"`` (the
            eigenvalue clipping, when every solver failed: in the band, not the
            optimum), or ``""`` (not active, or β = ε).
        converged: whether ``gap`` met the tolerance (else the last iterate, in the
            band all the same, after ``max_iterations`` or a stalled step).
    """

    phi: Array
    active: bool
    gap: float
    distance: float
    iterations: int
    solver: str = ""
    converged: bool = True


_BASIS_ROWS = PSEUDO_BASIS.reshape(10, 16)  # vec f(Φ) = Φ @ _BASIS_ROWS
PHI_OF_IDENTITY = phi_from_pseudo_inertia(np.eye(4))  # f(Φ) = I


def is_solver_panic(error: BaseException) -> bool:
    """A solver's Rust panic (``pyo3_runtime.PanicException``, a BaseException)."""
    return type(error).__name__ == "PanicException"



def pseudo_inertia_fast(phi: Array) -> Array:
    """f(Φ) of one Φ (10,) (a fast :func:`~robot_tv_dynamics.inertia.pseudo_inertia`)."""
    return (phi @ _BASIS_ROWS).reshape(4, 4)


def in_band(phi: Array, epsilon: float, beta: float) -> bool:
    """Whether ε I ⪯ f(Φ) ⪯ β I holds exactly (no rounding allowance)."""
    values = np.linalg.eigvalsh(pseudo_inertia_fast(phi))
    return bool(values[0] >= epsilon and values[-1] <= beta)


def project_in_metric(phi: npt.ArrayLike, covariance: npt.ArrayLike, epsilon: float,
                      beta: float, start: npt.ArrayLike | None = None, *,
                      gap_tolerance: float = 1e-9, max_iterations: int = 50,
                      low_rank: bool = True) -> MetricProjection:
    """Project Φ̂ onto {ε I ⪯ f(Φ) ⪯ β I} in the metric P⁻¹ (module docstring).

    Args:
        phi: Φ̂ (10,), eq. (7) order, about the body frame origin [kg, kg·m, kg·m²].
        covariance: P (10, 10), symmetric positive definite (the metric is P⁻¹).
        epsilon: lower eigenvalue bound ε > 0 [kg·m² or kg].
        beta: upper eigenvalue bound β ≥ ε [kg·m² or kg] (β = ε: the one point f = ε I).
        start: a point of the band to warm-start from (the previous estimate); used
            when strictly inside, else ignored.
        gap_tolerance: stop when the certified optimality gap of ½(Φ − Φ̂)ᵀP⁻¹(Φ − Φ̂)
            is below gap_tolerance · max(1, its value at Φ̄) [1] (Φ̄ within √(2·gap)
            standard deviations of the optimum).
        max_iterations: predictor-corrector steps allowed.
        low_rank: try the low-rank fast path first (False: the interior point only).

    Returns:
        The projection; Φ̂ itself (``active`` False) when it is in the band. Every
        iterate is strictly inside the band, so Φ̄ is too even when not ``converged``.

    Raises:
        InvalidInputError: shapes, non-finite values, P not positive definite, not
            0 < ε ≤ β.
    """
    phi = check_finite(phi, "phi", (10,))
    p = check_finite(covariance, "covariance", (10, 10))
    if not (np.isfinite(epsilon) and np.isfinite(beta)) or not 0.0 < epsilon <= beta:
        raise InvalidInputError("epsilon, beta", f"need 0 < epsilon <= beta, got {epsilon}, {beta}")
    if in_band(phi, epsilon, beta):
        return MetricProjection(phi.copy(), False, 0.0, 0.0, 0)
    lower = metric_factor(p)
    if epsilon == beta:  # the band is one point, f = ε I
        point = phi_from_pseudo_inertia(epsilon * np.eye(4))
        d = np.linalg.solve(lower, point - phi)
        return MetricProjection(point, True, 0.0, float(np.sqrt(d @ d)), 0)
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            result = _project_whitened(phi, lower, epsilon, beta, start, gap_tolerance,
                                       max_iterations, low_rank)
        if np.all(np.isfinite(result.phi)) and in_band(result.phi, epsilon, beta):
            return result
    except (np.linalg.LinAlgError, FloatingPointError, ValueError):
        pass  # a (near-)singular Newton system: the general solver takes over
    return _fallback(phi, lower, epsilon, beta)


def svec(matrix: Array) -> Array:
    """The upper triangle of a symmetric 4×4 by columns, off-diagonal entries × √2."""
    rows, cols = np.triu_indices(4)
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    scale = np.where(rows == cols, 1.0, np.sqrt(2.0))
    return np.asarray(matrix[rows, cols] * scale)


def metric_factor(p: Array) -> Array:
    """L with L Lᵀ = P; a P singular up to rounding is lifted (its eigenvalues ≥ 1e-12 λ_max).

    Raises:
        InvalidInputError: P is not positive semidefinite beyond rounding.
    """
    sym = 0.5 * (p + p.T)
    lower, info = lapack.dpotrf(sym, lower=1, clean=1)
    if info == 0:
        return np.asarray(lower)
    values, vectors = np.linalg.eigh(sym)  # not positive definite: singular up to rounding?
    top = float(values[-1])
    if not top > 0.0 or float(values[0]) < -1e-8 * top:
        raise InvalidInputError("covariance", "is not positive definite")
    values = np.maximum(values, 1e-12 * top)
    return np.asarray(np.linalg.cholesky((vectors * values) @ vectors.T))


def _fallback(phi: Array, lower: Array, epsilon: float, beta: float) -> MetricProjection:
    """The same SDP by cvxpy (Clarabel, then SCS); the eigenvalue clipping if both fail."""
    solved = solve_metric_sdp(phi, lower, [(np.eye(10), np.zeros(10), epsilon)], beta)
    if solved is not None and in_band(solved, epsilon, beta):
        d = np.linalg.solve(lower, solved - phi)
        return MetricProjection(solved, True, 0.0, float(np.sqrt(d @ d)), 0, "clarabel",
                                True)
    clipped = project_uniformly_consistent(phi, epsilon, beta)
    d = np.linalg.solve(lower, clipped - phi)
    return MetricProjection(clipped, True, float("inf"), float(np.sqrt(d @ d)), 0,
                            "clipping", False)


def solve_metric_sdp(phi: Array, lower: Array,
                     bounds: list[tuple[Array, Array, float]],
                     beta: float | None = None) -> Array | None:
    """The SDP min ½‖L⁻¹(Φ − Φ̂)‖² s.t. f(A Φ + b) ⪰ e I per (A, b, e), f(Φ) ⪯ β I.

    The general path (cvxpy; Clarabel, then SCS): the fallback of
    :func:`project_in_metric`.

    Returns:
        Φ (10,), or None when no solver returned an optimal point.
    """
    import cvxpy as cp

    whiten = np.linalg.inv(lower)
    v = cp.Variable(10)
    constraints = []
    for a, b, e in bounds:
        f = cp.reshape(_BASIS_ROWS.T @ (a @ v + b), (4, 4), order="C")
        constraints.append(0.5 * (f + f.T) - e * np.eye(4) >> 0)
    if beta is not None:
        f = cp.reshape(_BASIS_ROWS.T @ v, (4, 4), order="C")
        constraints.append(beta * np.eye(4) - 0.5 * (f + f.T) >> 0)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(whiten @ (v - phi))), constraints)
    try:
        return solve_sdp(problem, v).value
    except IdentificationSolverError:
        return None


def _project_whitened(phi: Array, lower: Array, epsilon: float, beta: float,
                      start: npt.ArrayLike | None, gap_tolerance: float,
                      max_iterations: int, low_rank: bool) -> MetricProjection:
    """The hand-written solver of :func:`project_in_metric` (may raise LinAlgError)."""
    problem = _WhitenedBand(lower, pseudo_inertia_fast(phi), epsilon, beta)
    fast = problem.solve_low_rank(gap_tolerance) if low_rank else None
    if fast is not None:
        x, gap, steps = fast
        return MetricProjection(phi + lower @ x, True, gap, float(np.sqrt(x @ x)), steps,
                                "low-rank")
    candidates = [project_uniformly_consistent(phi, epsilon, beta)]
    if start is not None:
        start = check_finite(start, "start", (10,))
        if in_band(start, epsilon, beta):
            candidates.append(start)
    # into the interior: f ← (1 − s) f + s (ε + β)/2 I lifts the eigenvalues off the
    # band's edges by at least _INTERIOR ε and moves none by much more than that
    mix = _INTERIOR * epsilon / (0.5 * (beta - epsilon))
    middle = phi_from_pseudo_inertia(0.5 * (epsilon + beta) * np.eye(4))
    whitened = [np.asarray(np.linalg.solve(lower, (1.0 - mix) * v + mix * middle - phi),
                           dtype=np.float64) for v in candidates]
    x, gap, iterations, tolerance = problem.solve(
        min(whitened, key=lambda v: float(v @ v)), gap_tolerance, max_iterations)
    return MetricProjection(phi + lower @ x, True, gap, float(np.sqrt(x @ x)), iterations,
                            "interior-point", gap <= tolerance)


class _WhitenedBand:
    """min ½‖x‖² s.t. S(x) = C + 𝒜(x) ⪰ 0 (two 4×4 blocks): low-rank path and IPM."""

    def __init__(self, lower: Array, f_hat: Array, epsilon: float, beta: float) -> None:
        self.lower = lower
        self.epsilon = epsilon
        self.g = _BASIS_ROWS.T @ lower  # vec(Σ x_k G_k) = g @ x, G_k = f(L e_k)
        eye = np.eye(4)
        self.c = np.stack((f_hat - epsilon * eye, beta * eye - f_hat))  # S(0)
        self.sign = np.array([1.0, -1.0])[:, None, None]

    def operator(self, x: Array) -> Array:
        """𝒜(x) = (Σ x_k G_k, −Σ x_k G_k), (2, 4, 4)."""
        return self.sign * (self.g @ x).reshape(4, 4)

    def adjoint(self, y: Array) -> Array:
        """𝒜*(Y) = Gᵀ vec(Y₁ − Y₂), (10,)."""
        return self.g.T @ (y[0] - y[1]).reshape(16)

    def gap(self, x: Array, z: Array) -> float:
        """½‖x‖² − g(Z): the certified gap of a feasible x and a dual Z ⪰ 0 (2, 4, 4)."""
        u = self.adjoint(z)
        return 0.5 * float(x @ x) + 0.5 * float(u @ u) + float(np.vdot(z, self.c))

    def solve_low_rank(self, gap_tolerance: float) -> tuple[Array, float, int] | None:
        """(x, gap, Newton steps) when only the lower bound is active, with rank Z₁ ≤ 2.

        Then Z₁ = U Uᵀ (U 4×r), x = 𝒢*(U Uᵀ) and S₁(x) U = 0: 4r equations in U, solved
        by Gauss-Newton (least-squares steps: U ↦ U Q is a symmetry) from the
        eigenvectors of f(Φ̂)'s eigenvalues below ε, each scaled by the best multiplier
        for it alone; with r = their number, then with one more column. A result is
        accepted only if it is in the band (lifted off its edge by rounding) with the
        certified gap within tolerance; else None (the interior point takes over).
        """
        c1 = self.c[0]
        values, vectors = np.linalg.eigh(c1)
        below = int(np.count_nonzero(values < 0.0))
        if below == 0 or below > 2 or np.linalg.eigvalsh(self.c[1])[0] < 0.0:
            return None
        t16 = self.g @ self.g.T  # vec 𝒯(Y) = t16 vec Y, 𝒯 = 𝒢𝒢*
        t_left = t16.reshape(16, 4, 4)  # t_left @ u: columns t16 vec(eᵢ uᵀ)
        t_both = t_left + np.swapaxes(t_left, 1, 2)  # t_both @ u: t16 vec(eᵢuᵀ + ueᵢᵀ)
        weights = []
        for k in range(below):
            v = vectors[:, k]
            weights.append(float(v @ (t16 @ np.outer(v, v).reshape(16)).reshape(4, 4) @ v))
        u = vectors[:, :below] * np.sqrt(-values[:below] / np.array(weights))
        steps = 0
        while True:
            x, gap, taken, u, s1 = self._low_rank_newton(c1, t16, t_both, u, gap_tolerance)
            steps += taken
            if x is not None:
                return x, gap, steps
            if u.shape[1] == 2 or s1 is None:
                return None
            # active-set step: the direction S₁ went negative in joins the multiplier
            s1_values, s1_vectors = np.linalg.eigh(s1)
            scale = float(np.linalg.norm(u))
            u = np.column_stack((u, 0.3 * scale * s1_vectors[:, 0]))

    def _low_rank_newton(self, c1: Array, t16: Array, t_both: Array, u: Array,
                         gap_tolerance: float
                         ) -> tuple[Array | None, float, int, Array, Array | None]:
        """Gauss-Newton on S₁(𝒢*(U Uᵀ)) U = 0 from U (4, r).

        Returns:
            (x or None, gap, steps, U, S₁ at U or None when the iteration broke down).
        """
        rank = u.shape[1]
        jacobian = np.empty((4 * rank, 4 * rank))
        steps = 0
        while steps < _LOW_RANK_STEPS:
            steps += 1
            s1 = c1 + (t16 @ (u @ u.T).reshape(16)).reshape(4, 4)
            residual = (s1 @ u).T.reshape(4 * rank)  # column by column
            # d(S₁ U) = S₁ dU + 𝒯(dU Uᵀ + U dUᵀ) U, one column of U at a time
            for j in range(rank):
                moved = (t_both @ u[:, j]).T.reshape(4, 4, 4) @ u  # (i, a, k)
                jacobian[:, 4 * j:4 * j + 4] = np.transpose(moved, (2, 1, 0)).reshape(
                    4 * rank, 4)
                jacobian[4 * j:4 * j + 4, 4 * j:4 * j + 4] += s1
            step = np.linalg.lstsq(jacobian, -residual, rcond=None)[0]
            u = u + step.reshape(rank, 4).T
            if float(np.abs(step).max()) <= 1e-9 * max(1.0, float(np.abs(u).max())):
                break  # quadratic convergence: the next step would be at rounding
        z1 = u @ u.T
        x = self.g.T @ z1.reshape(16)
        s1 = c1 + (self.g @ x).reshape(4, 4)
        lowest = float(np.linalg.eigvalsh(s1)[0])  # 0 at the optimum
        if not np.isfinite(lowest):
            return None, np.inf, steps, u, None
        if lowest < -_LIFT * self.epsilon:  # not PSD: another direction is active too
            return None, np.inf, steps, u, s1
        if lowest < _LIFT * self.epsilon:  # off the edge by more than rounding: f += η I
            x = x + (_LIFT * self.epsilon - lowest) * np.linalg.solve(
                self.lower, PHI_OF_IDENTITY)
        if np.linalg.eigvalsh(self.c + self.operator(x))[:, 0].min() < 0.0:
            return None, np.inf, steps, u, None
        z_full = np.zeros((2, 4, 4))
        z_full[0] = z1
        gap = self.gap(x, z_full)
        if not gap <= gap_tolerance * max(1.0, 0.5 * float(x @ x)):
            return None, gap, steps, u, None
        return x, gap, steps, u, s1

    def solve(self, x: Array, gap_tolerance: float, max_iterations: int
              ) -> tuple[Array, float, int, float]:
        """(x, certified gap, steps, tolerance) from a strictly feasible x."""
        slack = self.c + self.operator(x)
        inverse = np.asarray(np.linalg.inv(slack), dtype=np.float64)
        centre = self.adjoint(inverse)
        scale = max(float(x @ centre) / max(float(centre @ centre), 1e-300),
                    0.5 * float(x @ x) / _BARRIER_DEGREE, 1e-12)
        z = scale * inverse  # dual start: a multiple of S⁻¹ (centred)
        gap, alpha, tolerance = np.inf, 1.0, 0.0
        good = x, z
        iterations = 0
        for iterations in range(max_iterations + 1):
            try:  # W m Wᵀ = I for m = S₁, S₂, Z₁, Z₂; fails only if rounding left the cone
                w = np.asarray(np.linalg.inv(np.linalg.cholesky(np.concatenate((slack, z)))),
                               dtype=np.float64)
            except np.linalg.LinAlgError:
                x, z = good  # the last iterate strictly inside, whose gap is ``gap``
                break
            good = x, z
            objective = 0.5 * float(x @ x)
            gap = self.gap(x, z)
            tolerance = gap_tolerance * max(1.0, objective)
            if gap <= tolerance or iterations == max_iterations or alpha < 1e-10:
                break
            dx, dz, alpha = self._step(x, slack, z, w)
            x = x + alpha * dx
            slack = self.c + self.operator(x)
            z = z + alpha * dz
        return x, float(gap), iterations, tolerance

    def _step(self, x: Array, slack: Array, z: Array, w: Array
              ) -> tuple[Array, Array, float]:
        """Mehrotra's predictor-corrector HKM direction (Δx, ΔZ) and its step length."""
        inverse = np.swapaxes(w[:2], -1, -2) @ w[:2]  # S⁻¹
        # Schur complement I + Σ_c tr(G_k S_c⁻¹ G_l Z_c) = I + Gᵀ (Σ_c Z_c ⊗ S_c⁻¹) G
        kron = (z[:, :, None, :, None] * inverse[:, None, :, None, :]).sum(axis=0)
        schur = self.g.T @ kron.reshape(16, 16) @ self.g
        schur = np.eye(10) + 0.5 * (schur + schur.T)
        mu = float(np.vdot(slack, z)) / _BARRIER_DEGREE

        def direction(target: Array) -> tuple[Array, Array, Array]:
            # M Δx = −x + 𝒜*(target); ΔS = 𝒜(Δx); ΔZ = sym(target − Z − S⁻¹ ΔS Z)
            dx = np.linalg.solve(schur, self.adjoint(target) - x)
            ds = self.operator(dx)
            dz = target - z - inverse @ ds @ z
            return dx, ds, 0.5 * (dz + np.swapaxes(dz, -1, -2))

        def max_step(ds: Array, dz: Array) -> float:  # largest α keeping S, Z ⪰ 0
            d = np.concatenate((ds, dz))
            lowest = float(np.linalg.eigvalsh(w @ d @ np.swapaxes(w, -1, -2)).min())
            return np.inf if lowest >= 0.0 else -1.0 / lowest

        dx, ds, dz = direction(np.zeros_like(z))  # predictor: target 0
        alpha = min(1.0, max_step(ds, dz))
        sigma = (float(np.vdot(slack + alpha * ds, z + alpha * dz)) / _BARRIER_DEGREE / mu) ** 3
        dx, ds, dz = direction(sigma * mu * inverse - inverse @ ds @ dz)  # corrector
        return dx, dz, min(1.0, 0.99 * max_step(ds, dz))
