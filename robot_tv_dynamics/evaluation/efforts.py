r"""The torques of eq. (39) along a trajectory under a payload, and the largest payload.

:func:`max_payload` answers "how heavy may the payload be for this trajectory": the
largest mass of a given shape (centre of mass, inertia per kg) for which the whole
trajectory stays within the effort limits. τ is affine in that mass (eq. (39) is linear
in Θ, Θ̇ and Ψ), τ(m) = τ₀ + m·τ₁, so every joint and point bounds m by an interval; the
answer is the end of their intersection, exact and verified by one more evaluation of
eq. (39). Next to it stands the number MoveIt's ``DynamicsSolver::getMaxPayload`` gives:
a point mass at the link origin, static (q̇ = q̈ = 0, gravity only), minimised over the
points.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics import dynamics
from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.dynamics import TERM_NAMES, Kinematics
from robot_tv_dynamics.evaluation.payload import Load, Payload
from robot_tv_dynamics.evaluation.result import (
    RATIO_TOLERANCE,
    EffortViolation,
    MaxPayload,
    TrajectoryEvaluation,
)
from robot_tv_dynamics.evaluation.trajectory import (
    Trajectory,
    derive_velocities_accelerations,
    held_positions,
    model_columns,
)
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
)
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    consistency_margin,
    phi_from_mass_com_inertia,
    spatial_inertia,
)
from robot_tv_dynamics.loading.attach import BodyLoadMap, add_body_rows
from robot_tv_dynamics.model import RobotModel


# ====================================================================== evaluation
@dataclass(frozen=True)
class _LoadSamples:
    """The load along the trajectory in body coordinates, and one unit of its scale.

    τ is linear in the load, so τ = τ(arm) + scale · τ(unit) with ``scale`` the
    current scale; for a constant payload the unit is 1 kg of its shape (scale = mass),
    for a loading process it is the process as given (scale 1).
    """

    link: str
    body: int
    unit_phi: Array  # (K, 10) Φ of one unit in the body frame
    unit_phi_dot: Array  # (K, 10)
    unit_gamma: Array  # (K, 6) γ = Q₀ψ
    unit_gamma_dot: Array  # (K, 6)
    scale: float  # the evaluated load = scale × unit
    mass_per_scale: float  # kg per unit of scale (1 for a payload, peak mass for a process)

    @property
    def mass(self) -> Array:
        """Mass of the evaluated load per point, (K,) [kg]."""
        return np.asarray(self.scale * self.unit_phi[:, 0])

    def rows(self, k: int, scale: float) -> tuple[Array, Array, Array, Array]:
        """Φ, Φ̇, γ, γ̇ of the load's body at point k for a given scale."""
        return (scale * self.unit_phi[k], scale * self.unit_phi_dot[k],
                scale * self.unit_gamma[k], scale * self.unit_gamma_dot[k])


def _sample_load(
    model: RobotModel, load: Load, t: Array, time_offset: float, notes: list[str]
) -> _LoadSamples:
    """Move the load into its body at every trajectory time."""
    k = t.size
    if isinstance(load, Payload):
        attach = BodyLoadMap(model, load.link)
        body = attach.body
        phi_unit = attach.phi_matrix @ load.phi_per_kg()
        return _LoadSamples(
            link=load.link, body=body, unit_phi=np.tile(phi_unit, (k, 1)),
            unit_phi_dot=np.zeros((k, 10)), unit_gamma=np.zeros((k, 6)),
            unit_gamma_dot=np.zeros((k, 6)), scale=load.mass, mass_per_scale=1.0)
    link = str(load.link)
    attach = BodyLoadMap(model, link)  # a clear error for an unknown link before sampling
    process_t = t + time_offset
    duration = float(load.duration)
    notes.append(f'loading process on link "{link}" evaluated at process time '
                 f"time_from_start + {time_offset:g} s ({process_t[0]:g} … {process_t[-1]:g} s "
                 f"of a {duration:g} s process); max payload scales the whole process")
    phi, phi_dot = np.empty((k, 10)), np.empty((k, 10))
    gamma, gamma_dot = np.empty((k, 6)), np.empty((k, 6))
    body = attach.body
    for i, ti in enumerate(process_t):
        state = load.state(float(ti))
        phi[i], phi_dot[i], psi, psi_dot = attach.in_body(
            state.phi, state.phi_dot, state.psi, state.psi_dot)
        gamma[i] = dynamics.psi_momentum(psi)
        gamma_dot[i] = dynamics.psi_momentum(psi_dot)
    peak = float(np.max(np.abs(phi[:, 0])))
    return _LoadSamples(link=link, body=body, unit_phi=phi, unit_phi_dot=phi_dot,
                        unit_gamma=gamma, unit_gamma_dot=gamma_dot, scale=1.0,
                        mass_per_scale=peak if peak > 0.0 else 1.0)


def _full_state(
    model: RobotModel,
    trajectory: Trajectory,
    default_positions: npt.ArrayLike | Mapping[str, float] | None,
    notes: list[str],
) -> tuple[list[int], Array, Array, Array]:
    """Model-order q, q̇, q̈ (K, nv) from the trajectory and the held joints."""
    columns = model_columns(model, trajectory.joint_names)
    held = held_positions(model, default_positions)
    qd_given, qdd_given, derived = derive_velocities_accelerations(trajectory)
    notes.extend(derived)
    k = trajectory.n_points
    q, qd, qdd = np.tile(held, (k, 1)), np.zeros((k, model.nv)), np.zeros((k, model.nv))
    q[:, columns] = trajectory.positions
    qd[:, columns] = qd_given
    qdd[:, columns] = qdd_given
    missing = [i for i in range(model.nv) if i not in columns]
    if missing:
        held_text = ", ".join(f"{model.joint_names[i]} = {held[i]:g}" for i in missing)
        notes.append("joints not in the trajectory are held at fixed positions with zero "
                     f"velocity and acceleration: {held_text}")
    return columns, q, qd, qdd


def _static_torque(kin: Kinematics, theta: Array) -> Array:
    """G(q, Θ) = Σ_l J_lᵀ Z(Φ_l) g_l of eq. (42): the torque at rest (q̇ = q̈ = 0)."""
    forces = np.einsum("lab,lb->la", spatial_inertia(theta), kin.gravity_local)
    return np.asarray(np.einsum("lak,la->k", kin.jacobians, forces))


def _mass_bounds(
    base: Array, unit: Array, limit: Array
) -> tuple[Array, Array]:
    """Per point and joint, the interval of masses m with |base + m·unit| ≤ limit.

    Args:
        base: τ without the payload, (K, nv).
        unit: τ per unit of payload, (K, nv).
        limit: τ_max, (nv,); NaN entries (no limit) bound nothing.

    Returns:
        (lower, upper), each (K, nv); an empty interval has lower > upper.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (-limit - base) / unit
        b = (limit - base) / unit
    lower, upper = np.minimum(a, b), np.maximum(a, b)
    flat = unit == 0.0
    inside = np.abs(base) <= limit
    lower = np.where(flat, np.where(inside, -np.inf, np.inf), lower)
    upper = np.where(flat, np.where(inside, np.inf, -np.inf), upper)
    unlimited = np.isnan(limit)[None, :] & np.ones_like(base, dtype=bool)
    lower = np.where(unlimited, -np.inf, lower)
    upper = np.where(unlimited, np.inf, upper)
    return lower, upper


def evaluate(
    model: RobotModel,
    trajectory: Trajectory,
    payload: Load | None = None,
    *,
    theta: npt.ArrayLike | None = None,
    default_positions: npt.ArrayLike | Mapping[str, float] | None = None,
    time_offset: float = 0.0,
    compute_max_payload: bool = True,
    ratio_tolerance: float = RATIO_TOLERANCE,
) -> TrajectoryEvaluation:
    """Eq. (39) along a planned trajectory under a payload; effort limits and max payload.

    Args:
        model: the arm.
        trajectory: the planned motion; its joints may be any subset of the model's, in
            any order.
        payload: a :class:`Payload` (constant, added to its link) or a loading process
            (``robot_tv_dynamics.loading``; its Φ, Φ̇, ψ, ψ̇ in the link frame are added
            to the link's body at process time ``time_from_start + time_offset``); None
            evaluates the arm alone.
        theta: Θ of the arm without the payload, (N, 10), eq. (7) order about each body
            origin [kg, kg·m, kg·m²]; None = ``model.theta_nominal``.
        default_positions: positions of the joints the trajectory does not list,
            (nv,) in model order or a mapping name → position [rad or m]; None = 0.
            They are held there with zero velocity and acceleration.
        time_offset: process time at ``time_from_start = 0`` [s] (loading process only).
        compute_max_payload: also compute :func:`max_payload` and MoveIt's static number.
        ratio_tolerance: a ratio counts as a violation above ``1 + ratio_tolerance``.

    Returns:
        A :class:`TrajectoryEvaluation`.

    Raises:
        UnknownNameError: a trajectory joint or the payload link is not in the model.
        InvalidInputError: malformed arrays, a payload link fixed to the world.
    """
    notes: list[str] = []
    warnings: list[str] = []
    columns, q, qd, qdd = _full_state(model, trajectory, default_positions, notes)
    t = trajectory.time_from_start
    theta_base = model.theta_nominal.copy() if theta is None else model.check_theta(theta).copy()
    time_offset = float(check_finite(time_offset, "time_offset", ()))
    load = None if payload is None else _sample_load(model, payload, t, time_offset, notes)

    limit = _effort_limits(model, warnings)
    _limit_warnings(model, q, qd, t, warnings)
    series = _along(model, q, qd, qdd, theta_base, load, compute_max_payload)
    effort = series.effort
    with np.errstate(invalid="ignore"):
        ratio = np.abs(effort) / limit
    violations = _violations(model, t, effort, limit, ratio, ratio_tolerance)

    if load is not None and np.any(load.mass < 0.0):
        warnings.append("the load has a negative mass at some points")
    exact, moveit = (None, None) if load is None or not compute_max_payload else (
        _max_payloads(model, t, (q, qd, qdd), theta_base, load, limit, series))

    return TrajectoryEvaluation(
        joint_names=tuple(model.joint_names),
        trajectory_joint_names=trajectory.joint_names,
        trajectory_columns=tuple(columns),
        t=t,
        positions=readonly(q), velocities=readonly(qd), accelerations=readonly(qdd),
        effort=effort,
        terms=MappingProxyType(series.terms),
        effort_limit=readonly(limit),
        effort_ratio=readonly(ratio),
        mass_matrix_min_eigenvalue=series.lam_min,
        mass_matrix_max_eigenvalue=series.lam_max,
        loaded_bodies=() if load is None else (model.body_names[load.body],),
        consistency_margin=series.margins,
        violations=violations,
        payload_mass=readonly(np.zeros(q.shape[0]) if load is None else load.mass),
        max_payload=exact,
        moveit_static_max_payload=moveit,
        notes=tuple(notes),
        warnings=tuple(warnings),
    )


def _max_payloads(model: RobotModel, t: Array, state: tuple[Array, Array, Array],
                  theta_base: Array, load: _LoadSamples, limit: Array, series: _Series
                  ) -> tuple[MaxPayload, MaxPayload]:
    """The exact max payload (verified by eq. (39)) and MoveIt's static number.

    Args:
        model: the arm.
        t: time from start of each point [s], (K,).
        state: (q, q̇, q̈), each (K, nv).
        theta_base: Θ of the arm alone, (N, 10).
        load: the load along the trajectory.
        limit: τ_max, (nv,); NaN: no limit.
        series: eq. (39) along the trajectory with its unit-load and static parts.
    """
    base_tau = series.effort - load.scale * series.unit_tau  # τ of the arm alone (linear)
    exact = _max_payload_from_bounds(
        "exact", model, t, base_tau, series.unit_tau, limit, load.mass_per_scale)
    exact = _verify(model, exact, *state, theta_base, load, limit)
    return exact, _moveit_static(model, t, series.static_base, series.static_unit, limit)


def _violations(model: RobotModel, t: Array, effort: Array, limit: Array, ratio: Array,
                tolerance: float) -> tuple[EffortViolation, ...]:
    """Every (point, joint) whose ratio |τ|/τ_max is above 1 + ``tolerance``, in time order."""
    over = np.nan_to_num(ratio, nan=0.0) > 1.0 + tolerance
    return tuple(
        EffortViolation(joint=model.joint_names[i], t=float(t[k]), ratio=float(ratio[k, i]),
                        index=int(k), effort=float(effort[k, i]), limit=float(limit[i]))
        for k, i in zip(*np.nonzero(over), strict=True))


def _effort_limits(model: RobotModel, warnings: list[str]) -> Array:
    """The URDF effort limits [N·m or N], NaN (and a warning) where the URDF gives none."""
    limit = np.asarray(model.joint_limits.effort, dtype=np.float64).copy()
    limit[~(limit > 0.0)] = np.nan
    for i in np.flatnonzero(np.isnan(limit)):
        warnings.append(f'joint "{model.joint_names[i]}" has no effort limit in the URDF '
                        "(effort 0): its ratio is NaN and it is not checked")
    return limit


@dataclass(frozen=True)
class _Series:
    """Eq. (39) at every point of a trajectory (K points, read-only but the payload parts).

    Attributes:
        effort: τ, (K, nv) [N·m or N].
        terms: each term of eq. (39), (K, nv).
        lam_min: λ_min(M), (K,) [kg·m²].
        lam_max: λ_max(M), (K,) [kg·m²].
        margins: the consistency margin of the loaded body, (K, 1), or (K, 0) unloaded.
        unit_tau: τ of one unit of the load (scale 1), (K, nv); 0 when not asked.
        static_base: G of the arm alone, (K, nv); 0 when not asked.
        static_unit: G of MoveIt's 1 kg point payload at the link origin, (K, nv).
    """

    effort: Array
    terms: dict[str, Array]
    lam_min: Array
    lam_max: Array
    margins: Array
    unit_tau: Array
    static_base: Array
    static_unit: Array


def _along(model: RobotModel, q: Array, qd: Array, qdd: Array, theta_base: Array,
           load: _LoadSamples | None, compute_max_payload: bool) -> _Series:
    """Eq. (39) term by term at every point, and what the max payload needs (if asked)."""
    k_points, nv = q.shape
    n_bodies = model.n_bodies
    effort = np.empty((k_points, nv))
    terms = {name: np.empty((k_points, nv)) for name in TERM_NAMES}
    lam_min, lam_max = np.empty(k_points), np.empty(k_points)
    margins = np.empty((k_points, 0 if load is None else 1))
    unit_tau = np.zeros((k_points, nv))
    static_base, static_unit = np.zeros((k_points, nv)), np.zeros((k_points, nv))
    point_mass = np.zeros((n_bodies, 10))
    if load is not None:
        # MoveIt's payload: 1 kg at the link origin, moved into body coordinates
        _, point_mass[load.body], *_ = model.link_load_in_body(
            load.link, phi_from_mass_com_inertia(1.0, np.zeros(3), np.zeros((3, 3))))
    for k in range(k_points):
        kin = model.kinematics(q[k])
        theta_k, theta_dot_k, gamma_k, gamma_dot_k = _with_load(
            theta_base, load, k, 1.0 if load is None else load.scale)
        if load is not None:
            margins[k, 0] = float(consistency_margin(theta_k[load.body]))
        generalized = dynamics.generalized_terms(
            kin, qd[k], qdd[k], theta_k, theta_dot_k, gamma_k, gamma_dot_k)
        effort[k] = generalized.tau
        for name, value in generalized.breakdown().items():
            terms[name][k] = value
        eigenvalues = np.linalg.eigvalsh(generalized.mass_matrix)
        lam_min[k], lam_max[k] = eigenvalues[0], eigenvalues[-1]
        if load is not None and compute_max_payload:
            unit = _with_load(np.zeros((n_bodies, 10)), load, k, 1.0)
            unit_tau[k] = dynamics.generalized_terms(kin, qd[k], qdd[k], *unit).tau
            static_base[k] = _static_torque(kin, theta_base)
            static_unit[k] = _static_torque(kin, point_mass)
    for array in (effort, lam_min, lam_max, margins, *terms.values()):
        readonly(array)
    return _Series(effort, terms, lam_min, lam_max, margins, unit_tau, static_base, static_unit)


def _with_load(
    theta: Array, load: _LoadSamples | None, k: int, scale: float
) -> tuple[Array, Array, Array, Array]:
    """Θ, Θ̇, γ, γ̇ (N rows) of the arm ``theta`` plus ``scale`` units of the load at point k."""
    if load is None:
        n = theta.shape[0]
        return theta.copy(), np.zeros((n, 10)), np.zeros((n, 6)), np.zeros((n, 6))
    return add_body_rows(theta, load.body, *load.rows(k, scale))


def _limit_warnings(model: RobotModel, q: Array, qd: Array, t: Array, out: list[str]) -> None:
    """Warn (once per joint) about positions or velocities outside the URDF limits."""
    limits = model.joint_limits
    for i, name in enumerate(model.joint_names):
        if not limits.continuous[i] and limits.upper[i] > limits.lower[i]:
            outside = (q[:, i] < limits.lower[i] - 1e-9) | (q[:, i] > limits.upper[i] + 1e-9)
            if outside.any():
                k = int(np.argmax(outside))
                out.append(f'joint "{name}" position {q[k, i]:.6g} at t = {t[k]:.6g} s is '
                           f"outside its URDF limits [{limits.lower[i]:g}, {limits.upper[i]:g}]")
        if limits.velocity[i] > 0:
            over = np.abs(qd[:, i]) > limits.velocity[i] * (1 + 1e-9)
            if over.any():
                k = int(np.argmax(over))
                out.append(f'joint "{name}" velocity {qd[k, i]:.6g} at t = {t[k]:.6g} s exceeds '
                           f"its URDF limit {limits.velocity[i]:g}")


def _max_payload_from_bounds(
    method: str, model: RobotModel, t: Array, base: Array, unit: Array, limit: Array,
    mass_per_scale: float,
) -> MaxPayload:
    """The end of the admissible interval of scales, and where it is attained."""
    lower, upper = _mass_bounds(base, unit, limit)
    per_point_upper = upper.min(axis=1)
    per_point_lower = np.maximum(lower.max(axis=1), 0.0)
    low = float(per_point_lower.max())
    high = float(per_point_upper.min())
    per_point = np.where(per_point_lower <= per_point_upper, per_point_upper, np.nan)
    per_point = readonly(np.maximum(per_point, 0.0) * mass_per_scale)
    if high < low or high < 0.0:
        return MaxPayload(method, None, None, None, None, None, per_point,
                          min_mass=low * mass_per_scale)
    if math.isinf(high):
        return MaxPayload(method, math.inf, math.inf, None, None, None, per_point,
                          min_mass=low * mass_per_scale)
    k, i = np.unravel_index(int(np.argmin(upper)), upper.shape)
    return MaxPayload(method, high * mass_per_scale, high, model.joint_names[int(i)], float(t[k]),
                      int(k), per_point, min_mass=low * mass_per_scale)


def _verify(
    model: RobotModel, result: MaxPayload, q: Array, qd: Array, qdd: Array,
    theta_base: Array, load: _LoadSamples, limit: Array,
) -> MaxPayload:
    """Recompute the saturating joint's ratio by eq. (39) at the maximum payload."""
    if result.index is None or result.scale is None or result.joint is None:
        return result
    k, i = result.index, model.joint_names.index(result.joint)
    theta, theta_dot, gamma, gamma_dot = _with_load(theta_base, load, k, result.scale)
    tau = model.inverse_dynamics(q[k], qd[k], qdd[k], theta, theta_dot, gamma, gamma_dot).tau
    return dataclasses.replace(result, verified_ratio=float(abs(tau[i]) / limit[i]))


def _moveit_static(
    model: RobotModel, t: Array, base: Array, unit: Array, limit: Array
) -> MaxPayload:
    """MoveIt's ``DynamicsSolver::getMaxPayload`` at every point, minimised over them.

    At each q: G(q) of the arm alone and of a 1 kg point mass at the link origin
    (q̇ = q̈ = 0). A point where some joint's static torque already reaches its limit
    allows 0 kg (as MoveIt returns); otherwise each joint allows the mass that brings
    |G_i| to its limit. The weight acts along ``model.gravity`` (MoveIt applies a +z
    force of 1 N at the tip and flags the sign of gravity as unsure; here the
    point mass is physical). Joints without a limit are skipped (MoveIt would count
    their 0 limit as saturated).
    """
    over = np.abs(base) >= limit  # False where there is no limit (NaN)
    saturated = np.any(over, axis=1)
    _, upper = _mass_bounds(base, unit, limit)
    # a saturated point allows 0 kg, attributed to the joints already at their limit
    upper = np.where(saturated[:, None], np.where(over, 0.0, np.inf), upper)
    per_point = upper.min(axis=1)
    high = float(per_point.min())
    per_point = readonly(np.maximum(per_point, 0.0))
    if math.isinf(high):
        return MaxPayload("moveit_static", math.inf, math.inf, None, None, None, per_point)
    k, i = np.unravel_index(int(np.argmin(upper)), upper.shape)
    mass = max(high, 0.0)
    return MaxPayload("moveit_static", mass, mass, model.joint_names[int(i)], float(t[k]),
                      int(k), per_point)


def max_payload(
    model: RobotModel,
    trajectory: Trajectory,
    payload: Load,
    **kwargs: Any,
) -> MaxPayload:
    """The largest payload of ``payload``'s shape that keeps ``trajectory`` within limits.

    Shape = link, centre of mass and inertia per kg of a :class:`Payload` (its mass is
    ignored), or a whole loading process scaled by one factor. Exact: τ(m) = τ₀ + m·τ₁
    along the trajectory, so each joint and point admits an interval of m; the result
    is the upper end of their intersection with m ≥ 0, and the saturating joint and
    point are where that end is attained. Keyword arguments go to :func:`evaluate`.
    """
    result = evaluate(model, trajectory, payload, compute_max_payload=True, **kwargs)
    if result.max_payload is None:
        raise InvalidInputError("payload", "a payload or loading process is required")
    return result.max_payload


# ====================================================================== verdict
