r"""Eq. (39) along a path as TOPP-RA's second-order constraint, built exactly per gridpoint.

Along q = p(s) with q̇ = p' ṡ and q̈ = p' s̈ + p'' ṡ², the torque of the generalized
robotics equation (39) is

.. math::
    τ = \underbrace{M p'}_{a(s)} \ddot s
      + \underbrace{(M p'' + C(q, p') p')}_{b(s)} \dot s^2
      + \underbrace{G + J^\top Q_0 \dotΨ}_{c(s)}
      + \underbrace{(M(q, \dotΘ) + H(q, Ψ)) p'}_{d(s)} \dot s ,

with M, C, G at Θ(s), the load at the path position s. Every coefficient is computed
from :func:`robot_tv_dynamics.dynamics.generalized_terms` (the package's eq. (39)) by
its linearity in q̈, Θ̇, Ψ, Ψ̇ and its quadratic dependence on q̇ — never re-derived:

- c = τ(q, 0, 0; Θ) + τ(q, 0, 0; Θ = 0, Ψ̇),
- a = τ(q, 0, p'; Θ) − τ(q, 0, 0; Θ),
- b = τ(q, p', p''; Θ) − τ(q, 0, 0; Θ),
- d = τ(q, p', 0; Θ = 0, Θ̇, Ψ) (C and G vanish at Θ = 0).

A load without rates (Θ̇ = Ψ = Ψ̇ = 0: a constant payload, or none) needs only the first
three, with τ by the recursive backend (:meth:`RobotModel.dynamics`, RNEA: the same
eq. (39) to ~1e-14 relative, a few µs per evaluation).

The rates Θ̇, Ψ, Ψ̇ are those of a loading process indexed by *time* (its particles
stream, its mass flows at rates of its own, whatever the arm's speed), so d ṡ is
linear in ṡ and TOPP-RA's form a s̈ + b ṡ² + c cannot hold it exactly. It is bounded
by the tangent of ṡ² at a reference speed σ > 0 (σ = the speed of the previous timing,
see :mod:`robot_tv_dynamics.retiming.solve`):

.. math::
    |d\,\dot s| \le |d| \Big(\frac{\dot s^2}{2σ} + \frac{σ}{2}\Big)
    \quad (\text{AM–GM, equality at } \dot s = σ),

so the upper and lower torque rows get b ± |d|/(2σ) and c ± |d|σ/2: conservative for
every ṡ, exact at ṡ = σ. A constant payload has d = 0 and the rows coincide.

A load indexed by *path position* (:class:`PathRates`) has no linear term: its rate
terms join a and b exactly (b += τ(q, p', 0; Θ = 0, Θ_s, Ψ_s, Ψ_s'), a += JᵀQ₀Ψ_s).

Limits: |τ_i| ≤ τ_max,i × factor_i (the effort margin, tightened per joint by the
verification loop when the discretization lets a peak slip over).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from toppra.constraint import DiscretizationType, LinearConstraint

from robot_tv_dynamics.dynamics import generalized_terms, psi_momentum
from robot_tv_dynamics.evaluation import Load, Payload
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.loading import BodyLoadMap
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.path import PathSamples

#: σ never drops below this fraction of the reference profile's peak path speed (a
#: larger σ only loosens the bound by |d|σ/2 where the arm is slow).
SIGMA_FLOOR = 1e-3


@dataclass(frozen=True)
class PathRates:
    """Rates of a load indexed by path position, per unit of path speed (G, N, ·) each.

    With Θ = Θ(s) and particles whose body-frame velocities scale with the arm's
    progress (ψ = ψ_s(s) ṡ): Θ̇ = Θ_s ṡ, Ψ = Ψ_s ṡ and Ψ̇ = Ψ_s' ṡ² + Ψ_s s̈, so every
    rate term of eq. (39) is quadratic in the path speed:
    M(q, Θ̇)q̇ + H(q, Ψ)q̇ + JᵀQ₀Ψ̇ = (M(q, Θ_s) p' + H(q, Ψ_s) p' + JᵀQ₀Ψ_s') ṡ²
    + JᵀQ₀Ψ_s s̈.

    Attributes:
        theta_s: dΘ/ds [per rad or m].
        gamma_s: γ_s = Q₀Ψ_s, the relative momentum per unit path speed.
        gamma_s_prime: dγ_s/ds.
    """

    theta_s: Array
    gamma_s: Array
    gamma_s_prime: Array


@dataclass(frozen=True)
class GridLoad:
    """The arm's inertial state at each gridpoint (body coordinates, eq. (7)/(27) layouts).

    Attributes:
        theta: Θ(s_j) of the whole arm, (G, N, 10) [kg, kg·m, kg·m²].
        theta_dot: Θ̇ of the loading process at s_j, (G, N, 10) [per s].
        gamma: γ = Q₀Ψ at s_j, (G, N, 6) [kg·m/s, kg·m²/s].
        gamma_dot: γ̇ = Q₀Ψ̇ at s_j, (G, N, 6) [per s].
        mass: mass of the load at s_j, (G,) [kg] (0 without a load), for the report.
        path_rates: the rates of a load indexed by path position (None: none).
    """

    theta: Array
    theta_dot: Array
    gamma: Array
    gamma_dot: Array
    mass: Array
    path_rates: PathRates | None = None

    @classmethod
    def constant(cls, theta: Array, grid_size: int, mass: float = 0.0) -> GridLoad:
        """A load that does not change (a constant payload or none): rates zero."""
        n = theta.shape[0]
        return cls(np.repeat(theta[None], grid_size, axis=0),
                   np.zeros((grid_size, n, 10)), np.zeros((grid_size, n, 6)),
                   np.zeros((grid_size, n, 6)), np.full(grid_size, float(mass)))

    @property
    def has_rates(self) -> bool:
        """Whether any Θ̇, Ψ or Ψ̇ entry is non-zero (then d ≠ 0 or c has a Ψ̇ term)."""
        return bool(np.any(self.theta_dot) or np.any(self.gamma) or np.any(self.gamma_dot))


def grid_load(model: RobotModel, payload: Load | None, theta_base: Array,
               process_time: Array, size: int) -> GridLoad:
    """Θ, Θ̇, γ, γ̇ on the grid: constant for a payload, the process at the given times.

    Args:
        model: the arm.
        payload: a constant payload, a loading process, or None.
        theta_base: Θ of the arm without the load, (N, 10).
        process_time: process time of each gridpoint [s] (ignored for a constant load).
        size: number of gridpoints G.
    """
    if payload is None:
        return GridLoad.constant(theta_base, size)
    if isinstance(payload, Payload):
        body, phi, *_ = model.link_load_in_body(payload.link, payload.phi())
        theta = theta_base.copy()
        theta[body] += phi
        return GridLoad.constant(theta, size, payload.mass)
    mapping = BodyLoadMap(model, str(payload.link))
    n = model.n_bodies
    theta, theta_dot = np.empty((size, n, 10)), np.empty((size, n, 10))
    gamma, gamma_dot, mass = np.empty((size, n, 6)), np.empty((size, n, 6)), np.empty(size)
    for j, t in enumerate(process_time):
        state = payload.state(float(t))
        theta[j], theta_dot[j], psi, psi_dot = mapping(state, theta_base)
        gamma[j], gamma_dot[j] = psi_momentum(psi), psi_momentum(psi_dot)
        mass[j] = state.phi[0]
    return GridLoad(theta, theta_dot, gamma, gamma_dot, mass)


@dataclass(frozen=True)
class EffortCoefficients:
    """τ = a s̈ + b ṡ² + c + d ṡ at each gridpoint, all model joints, (G, nv) each.

    Attributes:
        a: M p'.
        b: M p'' + C(q, p') p'.
        c: G + JᵀQ₀Ψ̇ (the torque at ṡ = s̈ = 0).
        d: (M(q, Θ̇) + H(q, Ψ)) p', the part linear in ṡ.
    """

    a: Array
    b: Array
    c: Array
    d: Array

    def torque(self, sd: Array, sdd: Array) -> Array:
        """τ at path speeds ṡ (G,) and accelerations s̈ (G,), (G, nv)."""
        return (self.a * sdd[:, None] + self.b * (sd**2)[:, None] + self.c
                + self.d * sd[:, None])


def effort_coefficients(model: RobotModel, path: PathSamples, load: GridLoad) -> EffortCoefficients:
    """a, b, c, d of eq. (39) along the path, from the package's dynamics (module docstring).

    Args:
        model: the arm.
        path: p, p', p'' at the gridpoints.
        load: Θ, Θ̇, γ, γ̇ at the gridpoints.
    """
    if not load.has_rates and load.path_rates is None:
        return _rate_free_coefficients(model, path, load.theta)
    g, nv = path.s.size, model.nv
    a, b, c, d = (np.empty((g, nv)) for _ in range(4))
    zero_v = np.zeros(nv)
    n = model.n_bodies
    zero_theta, zero_gamma = np.zeros((n, 10)), np.zeros((n, 6))
    rates = load.has_rates
    for j in range(g):
        kin = model.kinematics(path.q[j])
        theta = load.theta[j]
        rest = generalized_terms(kin, zero_v, zero_v, theta, zero_theta, zero_gamma,
                                 zero_gamma).tau
        a[j] = generalized_terms(kin, zero_v, path.dq[j], theta, zero_theta, zero_gamma,
                                 zero_gamma).tau - rest
        b[j] = generalized_terms(kin, path.dq[j], path.ddq[j], theta, zero_theta, zero_gamma,
                                 zero_gamma).tau - rest
        if rates:
            c[j] = rest + generalized_terms(kin, zero_v, zero_v, zero_theta, zero_theta,
                                            zero_gamma, load.gamma_dot[j]).tau
            d[j] = generalized_terms(kin, path.dq[j], zero_v, zero_theta, load.theta_dot[j],
                                     load.gamma[j], zero_gamma).tau
        else:
            c[j], d[j] = rest, 0.0
        if load.path_rates is not None:
            rates_s = load.path_rates
            a[j] += generalized_terms(kin, zero_v, zero_v, zero_theta, zero_theta, zero_gamma,
                                      rates_s.gamma_s[j]).tau
            b[j] += generalized_terms(kin, path.dq[j], zero_v, zero_theta, rates_s.theta_s[j],
                                      rates_s.gamma_s[j], rates_s.gamma_s_prime[j]).tau
    return EffortCoefficients(a, b, c, d)


def _rate_free_coefficients(model: RobotModel, path: PathSamples, theta: Array
                            ) -> EffortCoefficients:
    """a, b, c (d = 0) of a load without rates, Θ(s_j) = ``theta[j]`` (G, N, 10), by RNEA."""
    dynamics = model.dynamics()
    zero = np.zeros(model.nv)
    rest, a, b = (np.empty((path.s.size, model.nv)) for _ in range(3))
    for j in range(path.s.size):
        if j == 0 or not np.array_equal(theta[j], theta[j - 1]):
            dynamics.set_loads(theta[j])
        rest[j] = dynamics.inverse_dynamics(path.q[j], zero, zero)
        a[j] = dynamics.inverse_dynamics(path.q[j], zero, path.dq[j]) - rest[j]
        b[j] = dynamics.inverse_dynamics(path.q[j], path.dq[j], path.ddq[j]) - rest[j]
    return EffortCoefficients(a, b, rest, np.zeros_like(rest))


class EffortConstraint(LinearConstraint):
    """|τ_i(s)| ≤ limit_i as TOPP-RA's canonical linear constraint, interpolation scheme.

    Rows: v⁺ = a u + (b + |d|/(2σ)) x + c + |d|σ/2 ≤ limit and
    v⁻ = a u + (b − |d|/(2σ)) x + c − |d|σ/2 ≥ −limit (u = s̈, x = ṡ²), for the joints
    that have a limit. ``compute_constraint_params`` returns the coefficients computed
    for exactly these gridpoints.
    """

    def __init__(self, gridpoints: Array, coefficients: EffortCoefficients, limit: Array,
                 sigma: Array) -> None:
        """Build the constraint.

        Args:
            gridpoints: the s grid the coefficients belong to, (G,).
            coefficients: a, b, c, d at those gridpoints.
            limit: the allowed |τ| per model joint, (nv,); NaN = no limit (row dropped).
            sigma: σ > 0 per gridpoint, (G,), the tangent speed of the |d ṡ| bound.
        """
        super().__init__()
        rows = np.flatnonzero(np.isfinite(limit))
        self.gridpoints = np.asarray(gridpoints)
        self.rows = rows
        self.dof = int(rows.size)
        coef = coefficients
        spread = np.abs(coef.d[:, rows]) / (2.0 * sigma[:, None])
        offset = np.abs(coef.d[:, rows]) * (0.5 * sigma[:, None])
        self._a = np.hstack([coef.a[:, rows], coef.a[:, rows]])
        self._b = np.hstack([coef.b[:, rows] + spread, coef.b[:, rows] - spread])
        self._c = np.hstack([coef.c[:, rows] + offset, coef.c[:, rows] - offset])
        m = rows.size
        self._F = np.zeros((2 * m, 2 * m))
        self._F[:m, :m] = np.eye(m)
        self._F[m:, m:] = -np.eye(m)
        self._g = np.concatenate([limit[rows], limit[rows]])
        self.identical = True
        self.set_discretization_type(DiscretizationType.Interpolation)
        self._format_string = f"    Effort limits of eq. (39) on {m} joints\n"

    def compute_constraint_params(self, path: object, gridpoints: Array,
                                  *args: object, **kwargs: object) -> tuple[object, ...]:
        """TOPP-RA's (a, b, c, F, g, ubound, xbound) in the interpolation scheme."""
        if gridpoints.shape != self.gridpoints.shape or not np.allclose(
                gridpoints, self.gridpoints, rtol=0.0, atol=1e-12):
            raise ValueError("EffortConstraint was built for other gridpoints")
        a, b, c, f, g = interpolation_rows(self._a, self._b, self._c, self._F, self._g,
                                           gridpoints)
        return a, b, c, f, g, None, None


def interpolation_rows(a: Array, b: Array, c: Array, f: Array, g: Array, gridpoints: Array
                       ) -> tuple[Array, Array, Array, Array, Array]:
    r"""Collocation rows F(a u + b x + c) ≤ g turned into TOPP-RA's interpolation scheme.

    In the interpolation discretization the path acceleration u_j is constant on
    [s_j, s_{j+1}], so x_{j+1} = x_j + 2 Δ_j u_j, and the constraint of gridpoint j + 1
    is imposed on (u_j, x_j) as well: the rows of stage j are those of s_j and

    .. math::
        a_{j+1} u_j + b_{j+1} (x_j + 2Δ_j u_j) + c_{j+1}
        = (a_{j+1} + 2Δ_j b_{j+1}) u_j + b_{j+1} x_j + c_{j+1},

    the last stage repeating its own rows. F and g are the same at every gridpoint.
    This is the documented meaning of ``DiscretizationType.Interpolation``, written out
    here rather than taken from a toppra-internal helper.

    Args:
        a: (G, m) coefficients of u per gridpoint.
        b: (G, m) coefficients of x.
        c: (G, m) constant terms.
        f: (k, m) row matrix, the same at every gridpoint.
        g: (k,) bounds.
        gridpoints: s_j, (G,).

    Returns:
        (a, b, c) of shape (G, 2m), F of shape (2k, 2m), g of shape (2k,).
    """
    delta = np.diff(np.asarray(gridpoints, dtype=np.float64))[:, None]
    a_next, b_next, c_next = a.copy(), b.copy(), c.copy()
    a_next[:-1] = a[1:] + 2.0 * delta * b[1:]
    b_next[:-1], c_next[:-1] = b[1:], c[1:]
    zero = np.zeros_like(f)
    return (np.hstack([a, a_next]), np.hstack([b, b_next]), np.hstack([c, c_next]),
            np.block([[f, zero], [zero, f]]), np.concatenate([g, g]))


def sigma_from_speed(sd: Array) -> Array:
    """σ per gridpoint from a reference path-speed profile: ṡ, floored (see SIGMA_FLOOR)."""
    peak = float(np.max(sd)) if sd.size else 0.0
    floor = SIGMA_FLOOR * peak if peak > 0.0 else 1e-6
    return np.maximum(sd, floor)
