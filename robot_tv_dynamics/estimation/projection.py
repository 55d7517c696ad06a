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

(f is linear). A primal-dual interior-point method solves the optimality conditions
x = 𝒜*(Z), S Z = μ I, S, Z ⪰ 0 with the HKM direction and Mehrotra's predictor-corrector
[Helmberg, Rendl, Vanderbei & Wolkowicz 1996; Todd, Toh & Tütüncü 1998]: per step one
10×10 Schur complement M = I + Gᵀ(Σ_c Z_c ⊗ S_c⁻¹)G and two solves; steps stop at 99 % of
the way to the cone's boundary, so every iterate is strictly inside the band. It starts
from the better (nearer in the metric) of the previous estimate (``start``) and the
eigenvalue clipping of Φ̂, each lifted 1 % of ε off the band's edges, with Z = s S⁻¹.
Every iterate's Z ⪰ 0 is dual feasible, and its dual value

.. math::
    g(Z) = -\tfrac12 \|𝒜^*(Z)\|^2 - \langle Z, C\rangle,\qquad
    𝒜^*(Z)_k = \langle G_k, Z_1 - Z_2\rangle

is a lower bound on the optimum: the solver stops when the certified gap ½‖x‖² − g(Z)
is below ``gap_tolerance`` · max(1, ½‖x‖²). By strong convexity (modulus 1 in x) Φ̄ is
then within √(2·gap) of the exact projection in the metric P⁻¹ (in standard deviations).
Typical cost: 5–12 steps of ≈ 60–100 µs (benchmarks/bench_estimator.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    phi_from_pseudo_inertia,
    project_uniformly_consistent,
    pseudo_inertia,
)

#: f(eₖ) of each basis vector of ℝ¹⁰, (10, 4, 4): f(Φ) = Σₖ Φₖ PSEUDO_INERTIA_BASIS[k].
PSEUDO_INERTIA_BASIS: Array = pseudo_inertia(np.eye(10))
PSEUDO_INERTIA_BASIS.setflags(write=False)

_BARRIER_DEGREE = 8  # two 4×4 log-det barriers
_RANK_ONE_STEPS = 12
_LIFT = 1e-11  # the rank-one result is lifted to λ_min(f) = ε (1 + _LIFT), off rounding  # Newton steps of the rank-one fast path
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
        solver: ``"rank-one"`` (the fast path: only the lower bound active, in one
            eigen-direction), ``"interior-point"``, or ``""`` (not active, or β = ε).
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


_BASIS_ROWS = PSEUDO_INERTIA_BASIS.reshape(10, 16)
_PHI_OF_IDENTITY = phi_from_pseudo_inertia(np.eye(4))  # f(Φ) = I


def _f(phi: Array) -> Array:
    """f(Φ) of one Φ (10,) (a fast :func:`~robot_tv_dynamics.inertia.pseudo_inertia`)."""
    return (phi @ _BASIS_ROWS).reshape(4, 4)


def in_band(phi: Array, epsilon: float, beta: float) -> bool:
    """Whether ε I ⪯ f(Φ) ⪯ β I holds exactly (no rounding allowance)."""
    values = np.linalg.eigvalsh(_f(phi))
    return bool(values[0] >= epsilon and values[-1] <= beta)


def project_in_metric(phi: npt.ArrayLike, covariance: npt.ArrayLike, epsilon: float,
                      beta: float, start: npt.ArrayLike | None = None, *,
                      gap_tolerance: float = 1e-9, max_iterations: int = 50,
                      rank_one: bool = True) -> MetricProjection:
    """Project Φ̂ onto {ε I ⪯ f(Φ) ⪯ β I} in the metric P⁻¹ (module docstring).

    Args:
        phi: Φ̂ (10,), eq. (7) order, about the body frame origin [kg, kg·m, kg·m²].
        covariance: P (10, 10), symmetric positive definite (the metric is P⁻¹).
        epsilon: lower eigenvalue bound ε > 0 [kg·m² or kg].
        beta: upper eigenvalue bound β ≥ ε [kg·m² or kg] (β = ε: the one point f = ε I).
        start: a point of the band to warm-start from (the previous estimate); used
            when strictly inside, else ignored.
        gap_tolerance: stop when the certified optimality gap of ½(Φ − Φ̂)ᵀP⁻¹(Φ − Φ̂)
            is below gap_tolerance · max(1, its value at the start) [1] (Φ̄ within
            √(2·gap) standard deviations of the optimum).
        max_iterations: predictor-corrector steps allowed.
        rank_one: try the rank-one fast path first (False: the interior point only).

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
    try:
        lower = np.linalg.cholesky(0.5 * (p + p.T))
    except np.linalg.LinAlgError:
        raise InvalidInputError("covariance", "is not positive definite") from None
    if epsilon == beta:  # the band is one point, f = ε I
        point = phi_from_pseudo_inertia(epsilon * np.eye(4))
        d = np.linalg.solve(lower, point - phi)
        return MetricProjection(point, True, 0.0, float(np.sqrt(d @ d)), 0)
    problem = _WhitenedBand(lower, _f(phi), epsilon, beta)
    fast = problem.solve_rank_one(gap_tolerance) if rank_one else None
    if fast is not None:
        x, gap, steps = fast
        return MetricProjection(phi + lower @ x, True, gap, float(np.sqrt(x @ x)), steps,
                                "rank-one")
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
    """min ½‖x‖² s.t. S(x) = C + 𝒜(x) ⪰ 0 (two 4×4 blocks), by HKM predictor-corrector."""

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

    def solve_rank_one(self, gap_tolerance: float) -> tuple[Array, float, int] | None:
        """(x, gap, Newton steps) when the lower bound alone is active with a rank-one Z, else None.

        Then Z₁ = z v vᵀ, x = z 𝒢*(v vᵀ), and S₁(x) v = 0 with ‖v‖ = 1: five equations
        in (v, z), solved by Newton's method from v = the eigenvector of f(Φ̂)'s
        smallest eigenvalue and the best z for it. The result is accepted only if it is
        in the band (after lifting f by the rounding shortfall) with the certified gap
        within tolerance.
        """
        c1 = self.c[0]
        values, vectors = np.linalg.eigh(c1)
        if values[0] >= 0.0 or values[1] < 0.0 or np.linalg.eigvalsh(self.c[1])[0] < 0.0:
            return None  # not a single eigenvalue below ε (or above β too)
        t16 = self.g @ self.g.T  # vec 𝒯(Y) = t16 vec Y, 𝒯 = 𝒢𝒢*
        t_left = t16.reshape(16, 4, 4)  # t_left @ v: columns t16 vec(eᵢ vᵀ)
        t_right = np.swapaxes(t_left, 1, 2)  # t_right @ v: columns t16 vec(v eᵢᵀ)
        v = vectors[:, 0]
        b = (t16 @ np.outer(v, v).reshape(16)).reshape(4, 4)  # 𝒯(v vᵀ)
        z = -values[0] / float(v @ b @ v)
        jacobian = np.zeros((5, 5))
        residual = np.zeros(5)
        steps = 0
        while steps < _RANK_ONE_STEPS:
            steps += 1
            b = (t16 @ np.outer(v, v).reshape(16)).reshape(4, 4)
            s1 = c1 + z * b
            residual[:4], residual[4] = s1 @ v, 0.5 * (v @ v - 1.0)
            # d(S₁ v)/dv = S₁ + z [𝒯(eᵢvᵀ + veᵢᵀ) v]ᵢ, d(S₁ v)/dz = 𝒯(vvᵀ) v
            y = t_left @ v + t_right @ v  # (16, 4)
            jacobian[:4, :4] = s1 + z * (y.T.reshape(4, 4, 4) @ v).T
            jacobian[:4, 4] = b @ v
            jacobian[4, :4] = v
            step = np.linalg.solve(jacobian, -residual)
            v, z = v + step[:4], z + step[4]
            if float(np.abs(step).max()) <= 1e-9 * max(1.0, abs(z)):  # quadratic: done
                break
        if not (np.isfinite(z) and z > 0.0):
            return None
        v = v / np.linalg.norm(v)
        x = z * (self.g.T @ np.outer(v, v).reshape(16))
        lowest = float(np.linalg.eigvalsh(c1 + (self.g @ x).reshape(4, 4))[0])  # ≈ 0
        if lowest < _LIFT * self.epsilon:  # off the edge by more than rounding: f += η I
            lift = _LIFT * self.epsilon - lowest
            x = x + lift * np.linalg.solve(self.lower, _PHI_OF_IDENTITY)
        slack = self.c + self.operator(x)
        values = np.linalg.eigvalsh(slack)
        if values[:, 0].min() < 0.0:
            return None
        z_full = np.zeros((2, 4, 4))
        z_full[0] = z * np.outer(v, v)
        gap = self.gap(x, z_full)
        if not gap <= gap_tolerance * max(1.0, 0.5 * float(x @ x)):
            return None
        return x, gap, steps

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
