r"""Payload-loading processes: Φ(t), Φ̇(t), ψ(t), ψ̇(t) of a load on one URDF link.

A loading process describes the mass-carrying particles of a load attached to a link
(a container on the flange being filled or drained, a part being grasped, a
user-given timeline) and returns, at any time t, everything eq. (39) needs from it,
in the LINK frame (eq. 7 order, about the link origin):

- Φ(t) of eq. (8)/(11)–(13): always the Φ of a real non-negative density, so
  f(Φ(t)) ⪰ 0 by construction (≻ 0 once the load has volume);
- Φ̇(t) = dΦ/dt, analytic (not a finite difference);
- ψ(t) of eq. (27), ψ = ∫σρ [𝓋; A₃,₁(x)𝓋] dx, of the modelled particle motion, and
  ψ̇(t), both analytic; entries ``psi[3 + 3 i + j] = ∫σρ 𝓋_i x_j``;
- ν(t) = ∫σρ‖𝓋‖² of eq. (25), for energy checks.

One module per concept: :mod:`~robot_tv_dynamics.loading.state` (:class:`LoadState`, the
:class:`LoadingProcess` protocol and its optional fast form :class:`LinearLoadingProcess`,
a state linear in a few features of t), :mod:`~robot_tv_dynamics.loading.geometry`
(placement, container), one module per kind (``fill``, ``drain``, ``grasp``,
``timeline``), :mod:`~robot_tv_dynamics.loading.config` (YAML, a registry of builders by
kind) and :mod:`~robot_tv_dynamics.loading.attach` (:class:`BodyLoadMap`: the load added
to Θ; :class:`LoadBodyRows`: the load body's rows over time as one vector).

The particle motion is prescribed in the body frame, independent of the arm's pose,
as the paper's model requires for an ODE (Section 3, "Discussion of restrictions"):
the fluid processes assume the container axis stays upright, so that the stream falls
with a constant acceleration ``stream_acceleration`` (default g) along −axis and the
surface stays perpendicular to the axis (no sloshing).

Kinds (the ``process:`` key of a YAML file, see ``config/loading/*.yaml``):

``fill``
    A cylindrical container (thin shell: wall and bottom of uniform areal density)
    filled by a stream from an inlet nozzle mounted on the same link (a dosing head fed
    through a hose): mass enters at the inlet with speed ``inlet_speed`` downwards at
    ``mass_flow`` kg/s from ``start`` for ``fill_time`` seconds, falls freely, and comes
    to rest in a uniform liquid column of rising height h(t). Closed form: a stream
    particle of age s is at z(s) = z_in − u₀s − a s²/2 with speed u₀ + a s; the
    airborne stream is the particles of age in [a_lo(t), a_hi(t)], and the age
    a_hi = T of the particle reaching the surface solves the quadratic
    z(T) = h = q (t − t₀ − T)/(ρA). Every integral over the stream is a polynomial in
    the ages, so Φ, ψ, ν and (by Leibniz' rule) their rates are exact.
``drain``
    The same container, initially filled to ``initial_level``, drained through a
    bottom orifice from ``start``. Default law Torricelli with discharge coefficient:
    A ḣ = −C_d a_o √(2 g h), so √h falls linearly and h(t) = (√h₀ − c t)² with
    c = C_d (a_o/A) √(g/2). It is the quasi-steady Bernoulli outflow of a small orifice
    (a_o ≪ A) and, unlike a constant rate, its ḣ → 0 smoothly as the container empties
    (Θ̇ continuous at the end). ``law: constant`` (a metering valve) is offered too.
    The column descends as a plug (every particle at ḣ, exact continuity for a_o ≪ A);
    particles leave the body through the orifice plane z = 0.
``grasp``
    A part (mass, COM and inertia about the COM in the link frame) whose weight is
    taken over by the gripper along a C² ramp w(τ) = 10τ³ − 15τ⁴ + 6τ⁵ over
    ``ramp_time`` while the fingers pull it in by ``approach`` (its COM moves from
    com + approach to com along the same ramp). The load is the density w(t) ρ_part
    translated by c(t), all of it moving with ċ.
``timeline``
    User rows (t, Φ) from YAML or CSV, linearly interpolated. Each row must be the Φ
    of a non-negative density (f(Φ) ⪰ 0). Linear interpolation keeps that: f is
    linear, so f(Φ(t)) = (1 − s) f(Φ_k) + s f(Φ_{k+1}) is a convex combination of
    positive semidefinite matrices, i.e. the Φ of the non-negative density
    (1 − s) ρ_k + s ρ_{k+1}. Θ̇ is the slope of the interpolant (right derivative at
    the rows). The particles of that density do not move (ρ̇ ≠ 0, 𝓋 = 0), so ψ = 0
    exactly.

Every process is constant before its start and after its ``duration``.
"""

from __future__ import annotations

from robot_tv_dynamics.loading.attach import (
    BodyLoadMap,
    LoadBodyRows,
    add_body_rows,
    body_loads,
    loads_from_state,
)
from robot_tv_dynamics.loading.config import (
    BUILDERS,
    KINDS,
    collision_as_dict,
    collision_from_dict,
    load_collision,
    load_loading_process,
    loading_process_from_dict,
)
from robot_tv_dynamics.loading.drain import DrainProcess
from robot_tv_dynamics.loading.fill import FillProcess
from robot_tv_dynamics.loading.geometry import Container, Placement
from robot_tv_dynamics.loading.grasp import GraspProcess
from robot_tv_dynamics.loading.state import (
    STANDARD_GRAVITY,
    STATE_SIZE,
    LinearLoadingProcess,
    LoadingProcess,
    LoadState,
    smoothstep,
)
from robot_tv_dynamics.loading.timeline import TimelineProcess

__all__ = [
    "BUILDERS",
    "KINDS",
    "STANDARD_GRAVITY",
    "STATE_SIZE",
    "BodyLoadMap",
    "add_body_rows",
    "Container",
    "DrainProcess",
    "FillProcess",
    "GraspProcess",
    "LinearLoadingProcess",
    "LoadBodyRows",
    "LoadState",
    "LoadingProcess",
    "Placement",
    "TimelineProcess",
    "body_loads",
    "collision_as_dict",
    "collision_from_dict",
    "load_collision",
    "load_loading_process",
    "loading_process_from_dict",
    "loads_from_state",
    "smoothstep",
]
