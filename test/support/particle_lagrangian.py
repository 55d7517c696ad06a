"""Independent particle-based ground truth for the generalized robotics equation (39).

This module is test support only. It never imports ``robot_tv_dynamics``: the truth is
derived from point masses attached to the bodies of a Pinocchio model, from their world
positions and world velocities (Pinocchio forward kinematics only), and from finite
differences of the resulting Lagrangian.

Conventions (shared with the package, see docs/concepts.md, "The model"):

* bodies are the Pinocchio joints ``1 .. njoints-1``; body index ``l`` (0-based, the row of
  Θ) is Pinocchio joint ``l + 1``; body frame = joint frame ``data.oMi[l + 1]``;
* ``(v_l, ω_l)`` is the LOCAL twist of body frame ``l`` (``data.v[l + 1]``), linear first;
* Θ has shape (N, 10), rows Φ_l in eq. (7) order ``(m, h1, h2, h3, I11, I22, I33, I12, I23,
  I13)`` with ``h = Σ m x`` and ``I = Σ m S(x)ᵀS(x)`` about the body-frame origin;
* Ψ has shape (N, 12), rows ψ_l = Σ_p σρ [𝓋; A_{3,1}(x) 𝓋] (eq. 27) with σ = 1 for moving
  particles, i.e. ``ψ = m [u; x u_1; x u_2; x u_3]``, ``u`` the particle velocity relative to
  the body frame in body coordinates;
* gravity is ``model.gravity.linear`` (default (0, 0, -9.81)); the potential energy is
  ``U = -Σ_p m_p gᵀ y_p``;
* generalized torque ``τ = d/dt ∂L/∂q̇ - ∂L/∂q`` with ``L = T - U`` (eq. 38 with w = 0).

Finite-difference scheme of :func:`euler_lagrange_fd` (documented accuracy):

* ``∂L/∂q̇``: L is exactly quadratic in q̇ (world velocities are linear in q̇), so a central
  difference is exact for any step; a unit step is used, leaving only round-off (~1e-15
  relative).
* ``∂L/∂q``: 6th-order central stencil, step ``h_q = 1e-2`` (truncation ~h⁶/140·|L⁽⁷⁾|,
  round-off ~eps·|L|/h_q: both ~1e-13 relative).
* ``d/dt ∂L/∂q̇`` along the path: 6th-order central stencil in t, step ``h_t = 5e-3`` s.

Measured (test_particle_lagrangian.py, Panda and UR5): fixed constant-mass particles vs.
``pin.rnea`` on the model with the particles merged in agree to ≤ 3e-12 N·m (~1e-13 of the
particles' own torque share); moving and mass-changing particles: changing both steps
(h_q 1e-2 → 4e-3, h_t 5e-3 → 2e-3) moves τ by ~1e-13 relative; the Q₀ form of eq. (30)
reproduces the torque to ≤ 1e-11 N·m.

The counter-model :func:`paper_q_lagrangian` writes the paper's kinetic energy eq. (30) with
Q(φ_l) of eq. (26) taken literally, i.e. with the body's WORLD rotation R_l inside, or with
R = I (the constant Q₀, docs/concepts.md "The model"). Only the R = I version reproduces the
particle truth.
"""

from __future__ import annotations

import os
import site
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pinocchio as pin

__all__ = [
    "EQ7_FROM_PIN",
    "MassProfile",
    "Particle",
    "ParticleLike",
    "ParticleStateT",
    "SineMotion",
    "SinePath",
    "a31",
    "a33",
    "euler_lagrange_fd",
    "euler_lagrange_torque",
    "find_example_robot_urdf",
    "fixed_particle",
    "lagrangian",
    "lemma4_S",
    "lemma4_T",
    "make_particle",
    "mass_changing_particle",
    "merged_model",
    "moving_particle",
    "nominal_theta",
    "paper_q_lagrangian",
    "paper_q_lagrangian_torque",
    "paper_q_matrix",
    "particle_state",
    "q0_matrix",
    "ramp_mass_particle",
    "random_particles",
    "random_path",
    "skew",
    "spatial_inertia_eq24",
    "total_theta",
    "truth_torque",
]

# --------------------------------------------------------------------------------------------
# Small linear-algebra helpers written from the paper (eq. 4, notation of section 1.2, eq. 72)
# --------------------------------------------------------------------------------------------

#: Index map: ``phi_eq7 = pin_dyn[EQ7_FROM_PIN]`` where ``pin_dyn = Inertia.toDynamicParameters()``
#: is ``(m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz)``.
EQ7_FROM_PIN = np.array([0, 1, 2, 3, 4, 6, 9, 5, 8, 7])


def skew(x: np.ndarray) -> np.ndarray:
    """Return S(x) of eq. (4), so that ``skew(x) @ y == np.cross(x, y)``.

    Args:
        x: 3-vector.

    Returns:
        3×3 skew-symmetric matrix.
    """
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def a31(x: np.ndarray) -> np.ndarray:
    """Return A_{3,1}(x) = blockdiag(x, x, x) ∈ ℝ^{9×3} (section 1.2).

    Args:
        x: 3-vector.

    Returns:
        9×3 matrix.
    """
    x = np.asarray(x, dtype=float).reshape(3, 1)
    out = np.zeros((9, 3))
    for k in range(3):
        out[3 * k : 3 * k + 3, k : k + 1] = x
    return out


def a33(r: np.ndarray) -> np.ndarray:
    """Return A_{3,3}(R) = blockdiag(R, R, R) ∈ ℝ^{9×9} (section 1.2).

    Args:
        r: 3×3 matrix.

    Returns:
        9×9 matrix.
    """
    return np.kron(np.eye(3), np.asarray(r, dtype=float))


def lemma4_S() -> np.ndarray:  # noqa: N802 - name follows the paper
    """Return the 3×9 matrix S of eq. (72), transcribed entry by entry.

    Returns:
        3×9 matrix with ``S @ a31(y) == skew(y)``.
    """
    return np.array(
        [
            [0, 0, 0, 0, 0, -1, 0, 1, 0],
            [0, 0, 1, 0, 0, 0, -1, 0, 0],
            [0, -1, 0, 1, 0, 0, 0, 0, 0],
        ],
        dtype=float,
    )


def lemma4_T() -> np.ndarray:  # noqa: N802 - name follows the paper
    """Return the 9×9 permutation matrix T of eq. (72), transcribed row by row.

    Rows pick columns 1, 4, 7, 2, 5, 8, 3, 6, 9 (1-based).

    Returns:
        9×9 permutation matrix.
    """
    cols = [0, 3, 6, 1, 4, 7, 2, 5, 8]
    t = np.zeros((9, 9))
    for row, col in enumerate(cols):
        t[row, col] = 1.0
    return t


def paper_q_matrix(rotation: np.ndarray) -> np.ndarray:
    """Return Q(φ) of eq. (26) taken literally: ``diag(I₃, -S A_{3,3}(R) T)`` ∈ ℝ^{6×12}.

    Args:
        rotation: the 3×3 rotation R(φ) to insert.

    Returns:
        6×12 matrix.
    """
    q = np.zeros((6, 12))
    q[:3, :3] = np.eye(3)
    q[3:, 3:] = -lemma4_S() @ a33(rotation) @ lemma4_T()
    return q


def q0_matrix() -> np.ndarray:
    """Return Q₀ = Q(R = I) = ``diag(I₃, -S T)`` (docs/concepts.md, "A correction to the paper").

    Returns:
        6×12 matrix with ``Q₀ ψ = [Σ m u; Σ m x × u]``.
    """
    return paper_q_matrix(np.eye(3))


def spatial_inertia_eq24(phi: np.ndarray) -> np.ndarray:
    """Return Z(Φ) of eq. (24) for one body, Φ in eq. (7) order.

    Args:
        phi: 10-vector.

    Returns:
        6×6 symmetric matrix ``[[m I, -S(h)], [-S(h)ᵀ, I]]``.
    """
    m, h = phi[0], phi[1:4]
    i11, i22, i33, i12, i23, i13 = phi[4:10]
    inertia = np.array([[i11, i12, i13], [i12, i22, i23], [i13, i23, i33]])
    z = np.zeros((6, 6))
    z[:3, :3] = m * np.eye(3)
    z[:3, 3:] = -skew(h)
    z[3:, :3] = -skew(h).T
    z[3:, 3:] = inertia
    return z


# --------------------------------------------------------------------------------------------
# URDF location
# --------------------------------------------------------------------------------------------

_ROBOT_URDFS = {
    "panda": "panda_description/urdf/panda.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
}


def find_example_robot_urdf(name: str) -> str:
    """Locate a URDF shipped by the ``example-robot-data`` wheel (cmeel prefix).

    Args:
        name: ``"panda"``, ``"ur5"``, or a path relative to ``.../example-robot-data/robots``.

    Returns:
        Absolute path of the URDF file.

    Raises:
        FileNotFoundError: if no site-packages directory holds the file.
    """
    rel = _ROBOT_URDFS.get(name.lower(), name)
    roots: list[str] = []
    for key in ("purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.append(path)
    try:
        roots.extend(site.getsitepackages())
    except AttributeError:  # pragma: no cover - virtualenv without getsitepackages
        pass
    for root in dict.fromkeys(roots):
        cand = os.path.join(root, "cmeel.prefix", "share", "example-robot-data", "robots", rel)
        if os.path.isfile(cand):
            return cand
    raise FileNotFoundError(f"example-robot-data URDF {rel!r} not found under {roots}")


# --------------------------------------------------------------------------------------------
# Particles
# --------------------------------------------------------------------------------------------

#: (x, u, u̇, m, ṁ) of one particle at time t: position, relative velocity and acceleration in
#: body coordinates, mass and mass rate.
ParticleStateT = tuple[np.ndarray, np.ndarray, np.ndarray, float, float]


class ParticleLike(Protocol):
    """Anything with an owning ``body`` (0-based Θ row) and an analytic ``state(t)``."""

    body: int

    def state(self, t: float) -> ParticleStateT:
        """Return (x, u, u̇, m, ṁ) at time t."""
        ...


@dataclass(frozen=True)
class SineMotion:
    """Position x(t) = x0 + amp ⊙ sin(omega ⊙ t + phase) in body coordinates (per axis)."""

    x0: np.ndarray
    amp: np.ndarray = field(default_factory=lambda: np.zeros(3))
    omega: np.ndarray = field(default_factory=lambda: np.zeros(3))
    phase: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __call__(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (x, u = ẋ, u̇ = ẍ) at time t."""
        arg = self.omega * t + self.phase
        s, c = np.sin(arg), np.cos(arg)
        x = self.x0 + self.amp * s
        u = self.amp * self.omega * c
        ud = -self.amp * self.omega**2 * s
        return x, u, ud


@dataclass(frozen=True)
class MassProfile:
    """Mass m(t) = m0 (1 + b sin(omega t + phase)) + rate t (keep |b| < 1 and m(t) ≥ 0)."""

    m0: float
    b: float = 0.0
    omega: float = 0.0
    phase: float = 0.0
    rate: float = 0.0

    def __call__(self, t: float) -> tuple[float, float]:
        """Return (m, ṁ) at time t."""
        arg = self.omega * t + self.phase
        m = self.m0 * (1.0 + self.b * np.sin(arg)) + self.rate * t
        md = self.m0 * self.b * self.omega * np.cos(arg) + self.rate
        return float(m), float(md)


@dataclass(frozen=True)
class Particle:
    """A point mass owned by body ``body`` (0-based Θ row = Pinocchio joint ``body + 1``)."""

    body: int
    motion: SineMotion
    mass: MassProfile

    def state(self, t: float) -> ParticleStateT:
        """Return (x, u, u̇, m, ṁ) at time t (body coordinates)."""
        x, u, ud = self.motion(t)
        m, md = self.mass(t)
        return x, u, ud, m, md


def _vec3(a: float | Sequence[float] | np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.asarray(a, dtype=float), (3,)).copy()


def make_particle(
    body: int,
    x0: Sequence[float] | np.ndarray,
    m0: float,
    *,
    amp: float | Sequence[float] | np.ndarray = 0.0,
    omega: float | Sequence[float] | np.ndarray = 0.0,
    phase: float | Sequence[float] | np.ndarray = 0.0,
    mass_b: float = 0.0,
    mass_omega: float = 0.0,
    mass_phase: float = 0.0,
    mass_rate: float = 0.0,
) -> Particle:
    """General constructor: moving and/or mass-changing particle.

    Args:
        body: owning body, 0-based Θ row.
        x0: mean position in body coordinates.
        m0: nominal mass.
        amp: per-axis amplitude of x(t) = x0 + amp sin(omega t + phase).
        omega: per-axis angular frequency (rad/s).
        phase: per-axis phase.
        mass_b: relative amplitude b of m(t) = m0 (1 + b sin(mass_omega t + mass_phase)).
        mass_omega: angular frequency of the mass oscillation.
        mass_phase: phase of the mass oscillation.
        mass_rate: linear mass ramp ṁ added to m(t) (kg/s).

    Returns:
        The particle.
    """
    motion = SineMotion(_vec3(x0), _vec3(amp), _vec3(omega), _vec3(phase))
    mass = MassProfile(
        float(m0), float(mass_b), float(mass_omega), float(mass_phase), float(mass_rate)
    )
    return Particle(int(body), motion, mass)


def fixed_particle(body: int, x: Sequence[float] | np.ndarray, m: float) -> Particle:
    """Constant-mass particle at rest in body ``body`` at x (body coordinates)."""
    return make_particle(body, x, m)


def moving_particle(
    body: int,
    x0: Sequence[float] | np.ndarray,
    m: float,
    amp: float | Sequence[float] | np.ndarray,
    omega: float | Sequence[float] | np.ndarray,
    phase: float | Sequence[float] | np.ndarray = 0.0,
) -> Particle:
    """Constant-mass particle moving along x(t) = x0 + amp sin(omega t + phase) (per axis)."""
    return make_particle(body, x0, m, amp=amp, omega=omega, phase=phase)


def mass_changing_particle(
    body: int,
    x: Sequence[float] | np.ndarray,
    m0: float,
    b: float,
    omega: float,
    phase: float = 0.0,
) -> Particle:
    """Particle at rest at x with mass m(t) = m0 (1 + b sin(omega t + phase))."""
    return make_particle(body, x, m0, mass_b=b, mass_omega=omega, mass_phase=phase)


def ramp_mass_particle(
    body: int, x: Sequence[float] | np.ndarray, m0: float, rate: float
) -> Particle:
    """Particle at rest at x with mass m(t) = m0 + rate t (caller keeps m(t) ≥ 0)."""
    return make_particle(body, x, m0, mass_rate=rate)


def random_particles(
    rng: np.random.Generator,
    n_bodies: int,
    count: int,
    *,
    bodies: Sequence[int] | None = None,
    kinds: Sequence[str] = ("fixed", "moving", "mass", "both"),
    mass_range: tuple[float, float] = (0.2, 1.5),
    radius: float = 0.15,
    amp: float = 0.05,
    omega_max: float = 3.0,
) -> list[Particle]:
    """Draw ``count`` random particles, cycling through ``kinds``.

    Kinds: ``"fixed"`` (constant x, m), ``"moving"`` (sinusoidal x, constant m), ``"mass"``
    (constant x, m(t) = m0 (1 + b sin)), ``"both"`` (moving and mass-changing).

    Args:
        rng: numpy random Generator (seeded by the caller).
        n_bodies: number of bodies N (used when ``bodies`` is None).
        count: number of particles.
        bodies: bodies to draw owners from (default: all).
        kinds: kinds to cycle through.
        mass_range: range of m0.
        radius: range of x0 components (uniform in [-radius, radius]).
        amp: range of motion amplitudes (uniform in [0, amp] per axis).
        omega_max: maximum angular frequency (rad/s).

    Returns:
        List of particles.
    """
    owners = list(range(n_bodies)) if bodies is None else list(bodies)
    out: list[Particle] = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        body = int(rng.choice(owners))
        x0 = rng.uniform(-radius, radius, 3)
        m0 = float(rng.uniform(*mass_range))
        kw: dict[str, object] = {}
        if kind in ("moving", "both"):
            kw.update(
                amp=rng.uniform(0.3 * amp, amp, 3),
                omega=rng.uniform(0.5, omega_max, 3),
                phase=rng.uniform(0, 2 * np.pi, 3),
            )
        if kind in ("mass", "both"):
            kw.update(
                mass_b=float(rng.uniform(0.2, 0.6)),
                mass_omega=float(rng.uniform(0.5, omega_max)),
                mass_phase=float(rng.uniform(0, 2 * np.pi)),
            )
        out.append(make_particle(body, x0, m0, **kw))  # type: ignore[arg-type]
    return out


# --------------------------------------------------------------------------------------------
# Θ, Θ̇, Ψ, Ψ̇, ν from particles (eq. 8, 11-13, 25, 27)
# --------------------------------------------------------------------------------------------


def _phi_point(m: float, x: np.ndarray) -> np.ndarray:
    sts = (x @ x) * np.eye(3) - np.outer(x, x)  # S(x)ᵀS(x)
    inertia = m * sts
    return np.array(
        [
            m,
            *(m * x),
            inertia[0, 0],
            inertia[1, 1],
            inertia[2, 2],
            inertia[0, 1],
            inertia[1, 2],
            inertia[0, 2],
        ]
    )


def _phi_point_dot(m: float, md: float, x: np.ndarray, u: np.ndarray) -> np.ndarray:
    sts = (x @ x) * np.eye(3) - np.outer(x, x)
    sts_d = 2.0 * (x @ u) * np.eye(3) - np.outer(u, x) - np.outer(x, u)
    idot = md * sts + m * sts_d
    hdot = md * x + m * u
    return np.array(
        [md, *hdot, idot[0, 0], idot[1, 1], idot[2, 2], idot[0, 1], idot[1, 2], idot[0, 2]]
    )


def particle_state(
    particles: Sequence[ParticleLike], t: float, n_bodies: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Return Θ(t), Θ̇(t), Ψ(t), Ψ̇(t), ν(t) of the particles alone (no robot links).

    σ = 1 for every particle (all of a moving particle's mass moves); a particle at rest
    (u ≡ 0) contributes nothing to Ψ. Θ̇ and Ψ̇ are analytic (from ṁ, u, u̇).

    Args:
        particles: the particles.
        t: time (s).
        n_bodies: N, the number of bodies (rows).

    Returns:
        ``(theta (N,10), theta_dot (N,10), psi (N,12), psi_dot (N,12), nu)``,
        with ψ = m [u; x u₁; x u₂; x u₃] and ν = Σ m |u|².
    """
    theta = np.zeros((n_bodies, 10))
    theta_dot = np.zeros((n_bodies, 10))
    psi = np.zeros((n_bodies, 12))
    psi_dot = np.zeros((n_bodies, 12))
    nu = 0.0
    for p in particles:
        x, u, ud, m, md = p.state(t)
        b = p.body
        theta[b] += _phi_point(m, x)
        theta_dot[b] += _phi_point_dot(m, md, x, u)
        # eq. (27): [𝓋; A31(x) 𝓋] = [u; x u1; x u2; x u3]
        psi[b, :3] += m * u
        psi[b, 3:] += m * np.outer(u, x).ravel()
        psi_dot[b, :3] += md * u + m * ud
        psi_dot[b, 3:] += (md * np.outer(u, x) + m * (np.outer(ud, x) + np.outer(u, u))).ravel()
        nu += m * float(u @ u)
    return theta, theta_dot, psi, psi_dot, nu


def nominal_theta(model: pin.Model) -> np.ndarray:
    """Return Θ of the robot's own (URDF) links, (N, 10) in eq. (7) order, about joint origins.

    Args:
        model: Pinocchio model.

    Returns:
        (njoints-1, 10) array.
    """
    rows = [
        np.asarray(model.inertias[j].toDynamicParameters()).ravel()[EQ7_FROM_PIN]
        for j in range(1, model.njoints)
    ]
    return np.array(rows)


def total_theta(model: pin.Model, particles: Sequence[ParticleLike], t: float) -> np.ndarray:
    """Return Θ(t) of the whole system: nominal URDF Θ plus particle Θ(t), shape (N, 10)."""
    n = model.njoints - 1
    return nominal_theta(model) + particle_state(particles, t, n)[0]


def merged_model(model: pin.Model, particles: Sequence[ParticleLike], t: float) -> pin.Model:
    """Return a copy of ``model`` with the particles at time t merged as point inertias.

    Only meaningful for a classical (constant Θ) comparison, i.e. fixed constant-mass particles.

    Args:
        model: Pinocchio model (not modified).
        particles: the particles.
        t: time at which positions and masses are frozen.

    Returns:
        New Pinocchio model.
    """
    out = model.copy()
    for p in particles:
        x, _, _, m, _ = p.state(t)
        j = p.body + 1
        out.inertias[j] = out.inertias[j] + pin.Inertia(float(m), np.asarray(x), np.zeros((3, 3)))
    return out


# --------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SinePath:
    """Joint path q(t) = integrate(q0, A ⊙ sin(Ω ⊙ t + φ)) with analytic q̇ and q̈.

    For 1-dof joints (revolute, prismatic; also continuous joints via ``pin.integrate``) the
    tangent δ(t) = A sin(Ωt + φ) is the generalized coordinate offset, so q̇ = δ̇, q̈ = δ̈.
    """

    model: pin.Model
    q0: np.ndarray
    amp: np.ndarray
    omega: np.ndarray
    phase: np.ndarray

    def __call__(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (q, q̇, q̈) at time t."""
        arg = self.omega * t + self.phase
        s, c = np.sin(arg), np.cos(arg)
        q = pin.integrate(self.model, self.q0, self.amp * s)
        return q, self.amp * self.omega * c, -self.amp * self.omega**2 * s


def random_path(
    model: pin.Model,
    rng: np.random.Generator,
    *,
    amp: float = 0.4,
    omega_range: tuple[float, float] = (0.5, 2.0),
) -> SinePath:
    """Draw a smooth random path q(t) = q0 + A sin(Ωt + φ) inside the joint limits (if finite).

    Args:
        model: Pinocchio model.
        rng: numpy random Generator.
        amp: maximal amplitude (rad or m); prismatic joints are scaled to their limit range.
        omega_range: range of the angular frequencies Ω (rad/s).

    Returns:
        The path.
    """
    lo = np.asarray(model.lowerPositionLimit, dtype=float)
    hi = np.asarray(model.upperPositionLimit, dtype=float)
    if model.nq != model.nv:
        q0 = pin.randomConfiguration(model)
        a = rng.uniform(0.3, 1.0, model.nv) * amp
    else:
        finite = np.isfinite(lo) & np.isfinite(hi) & (hi - lo < 1e3)
        lo = np.where(finite, lo, -np.pi)
        hi = np.where(finite, hi, np.pi)
        width = hi - lo
        a = np.minimum(rng.uniform(0.3, 1.0, model.nv) * amp, 0.25 * width)
        q0 = rng.uniform(lo + a, hi - a)
    om = rng.uniform(*omega_range, model.nv)
    ph = rng.uniform(0, 2 * np.pi, model.nv)
    return SinePath(model, np.asarray(q0, dtype=float), a, om, ph)


# --------------------------------------------------------------------------------------------
# Lagrangians
# --------------------------------------------------------------------------------------------


def lagrangian(
    model: pin.Model,
    particles: Sequence[ParticleLike],
    q: np.ndarray,
    qd: np.ndarray,
    t: float,
    data: pin.Data | None = None,
) -> float:
    """Return L = T - U of the particles alone, from world positions and velocities only.

    y_p = oMi[l] · x_p(t), ẏ_p = R_l (v_l + ω_l × x_p + u_p) with the LOCAL twist (v_l, ω_l)
    of ``pin.forwardKinematics``; T = Σ ½ m_p ‖ẏ_p‖², U = -Σ m_p gᵀ y_p.

    Args:
        model: Pinocchio model.
        particles: the particles.
        q: configuration (nq,).
        qd: velocity (nv,).
        t: time (s).
        data: optional Pinocchio data to reuse.

    Returns:
        The scalar Lagrangian.
    """
    if data is None:
        data = model.createData()
    pin.forwardKinematics(model, data, q, qd)
    g = np.asarray(model.gravity.linear)
    kin = 0.0
    pot = 0.0
    for p in particles:
        x, u, _, m, _ = p.state(t)
        j = p.body + 1
        omi = data.oMi[j]
        vel = data.v[j]
        y = omi.rotation @ x + omi.translation
        ydot = omi.rotation @ (vel.linear + np.cross(vel.angular, x) + u)
        kin += 0.5 * m * float(ydot @ ydot)
        pot -= m * float(g @ y)
    return kin - pot


def paper_q_lagrangian(
    model: pin.Model,
    particles: Sequence[ParticleLike],
    q: np.ndarray,
    qd: np.ndarray,
    t: float,
    rotation: str = "world",
    data: pin.Data | None = None,
) -> float:
    """Return the paper's Lagrangian (eq. 30, 36, 37) of the particles alone.

    L = ½ q̇ᵀ M(q, Θ_p(t)) q̇ + ½ ν(t) + q̇ᵀ Σ_l J_l(q)ᵀ Q(R) ψ_l(t) - U(q, Θ_p(t)), with
    M = Σ_l J_lᵀ Z(Φ_l) J_l (eq. 31, 24), J_l the LOCAL joint Jacobian, Q of eq. (26) and
    U = -gᵀ Σ_l (m_l z_l + R_l h_l) (eq. 29 with the sign fixed so that g is the acceleration).

    Args:
        model: Pinocchio model.
        particles: the particles.
        q: configuration.
        qd: velocity.
        t: time.
        rotation: ``"world"`` inserts R_l = oMi[l].rotation literally as eq. (26) writes it;
            ``"identity"`` uses R = I, i.e. Q₀ (docs/concepts.md, "A correction to the paper").
        data: optional Pinocchio data to reuse.

    Returns:
        The scalar Lagrangian.
    """
    if rotation not in ("world", "identity"):
        raise ValueError("rotation must be 'world' or 'identity'")
    if data is None:
        data = model.createData()
    n = model.njoints - 1
    theta, _, psi, _, nu = particle_state(particles, t, n)
    pin.computeJointJacobians(model, data, q)
    g = np.asarray(model.gravity.linear)
    q0 = q0_matrix()
    kin = 0.5 * nu
    pot = 0.0
    for b in range(n):
        if not np.any(theta[b]) and not np.any(psi[b]):
            continue
        j = b + 1
        jac = pin.getJointJacobian(model, data, j, pin.ReferenceFrame.LOCAL)
        twist = jac @ qd
        kin += 0.5 * float(twist @ spatial_inertia_eq24(theta[b]) @ twist)
        rot = data.oMi[j].rotation
        qmat = paper_q_matrix(rot) if rotation == "world" else q0
        kin += float(twist @ qmat @ psi[b])
        pot -= float(g @ (theta[b, 0] * data.oMi[j].translation + rot @ theta[b, 1:4]))
    return kin - pot


# --------------------------------------------------------------------------------------------
# Euler-Lagrange by finite differences
# --------------------------------------------------------------------------------------------

_C6 = np.array([-1.0 / 60, 3.0 / 20, -3.0 / 4, 0.0, 3.0 / 4, -3.0 / 20, 1.0 / 60])
_OFF6 = np.arange(-3, 4)

LagrangianFn = Callable[[np.ndarray, np.ndarray, float], float]
PathFn = Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _dl_dqd(lag: LagrangianFn, q: np.ndarray, qd: np.ndarray, t: float) -> np.ndarray:
    # L is exactly quadratic in q̇: a central difference is exact; unit step minimises round-off.
    nv = qd.shape[0]
    out = np.empty(nv)
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = 1.0
        out[k] = 0.5 * (lag(q, qd + e, t) - lag(q, qd - e, t))
    return out


def _dl_dq(
    model: pin.Model, lag: LagrangianFn, q: np.ndarray, qd: np.ndarray, t: float, h: float
) -> np.ndarray:
    nv = qd.shape[0]
    out = np.empty(nv)
    for k in range(nv):
        acc = 0.0
        for c, o in zip(_C6, _OFF6, strict=True):
            if c == 0.0:
                continue
            dq = np.zeros(nv)
            dq[k] = o * h
            acc += c * lag(pin.integrate(model, q, dq), qd, t)
        out[k] = acc / h
    return out


def euler_lagrange_fd(
    model: pin.Model,
    lag: LagrangianFn,
    path: PathFn,
    t: float,
    *,
    h_q: float = 1e-2,
    h_t: float = 5e-3,
) -> np.ndarray:
    """Return τ(t) = d/dt ∂L/∂q̇ - ∂L/∂q of any Lagrangian ``lag(q, q̇, t)`` along ``path``.

    ∂L/∂q̇ by an (exact, L quadratic in q̇) central difference with unit step; ∂L/∂q by a
    6th-order central stencil with step ``h_q`` through ``pin.integrate``; d/dt ∂L/∂q̇ by a
    6th-order central stencil in t with step ``h_t`` evaluating ∂L/∂q̇ at
    (q(t+kh), q̇(t+kh), t+kh).

    Args:
        model: Pinocchio model (used for ``pin.integrate``).
        lag: Lagrangian callable L(q, q̇, t).
        path: callable t -> (q, q̇, q̈).
        t: time.
        h_q: configuration step.
        h_t: time step.

    Returns:
        τ, shape (nv,).
    """
    q, qd, _ = path(t)
    dpdt = np.zeros(model.nv)
    for c, o in zip(_C6, _OFF6, strict=True):
        if c == 0.0:
            continue
        tk = t + o * h_t
        qk, qdk, _ = path(tk)
        dpdt += c * _dl_dqd(lag, qk, qdk, tk)
    dpdt /= h_t
    return dpdt - _dl_dq(model, lag, q, qd, t, h_q)


def euler_lagrange_torque(
    model: pin.Model,
    particles: Sequence[ParticleLike],
    path: PathFn,
    t: float,
    *,
    h_q: float = 1e-2,
    h_t: float = 5e-3,
) -> np.ndarray:
    """Return the particles' share of τ(t) = d/dt ∂L/∂q̇ - ∂L/∂q, L from :func:`lagrangian`.

    Args:
        model: Pinocchio model.
        particles: the particles.
        path: callable t -> (q, q̇, q̈) (e.g. :class:`SinePath`).
        t: time.
        h_q: configuration step of the 6th-order stencil.
        h_t: time step of the 6th-order stencil.

    Returns:
        τ_particles, shape (nv,).
    """
    data = model.createData()

    def lag(q: np.ndarray, qd: np.ndarray, tt: float) -> float:
        return lagrangian(model, particles, q, qd, tt, data)

    return euler_lagrange_fd(model, lag, path, t, h_q=h_q, h_t=h_t)


def truth_torque(
    model: pin.Model,
    particles: Sequence[ParticleLike],
    path: PathFn,
    t: float,
    **fd: float,
) -> np.ndarray:
    """Return the ground-truth τ(t) of robot + particles (eq. 38, w = 0).

    τ = ``pin.rnea`` of the unmodified (constant, URDF) model at (q, q̇, q̈)(t) plus
    :func:`euler_lagrange_torque` of the particles. Compare with eq. (39) evaluated with
    Θ = :func:`total_theta`, Θ̇, Ψ, Ψ̇ from :func:`particle_state` at the same t.

    Args:
        model: Pinocchio model.
        particles: the particles.
        path: callable t -> (q, q̇, q̈).
        t: time.
        **fd: optional ``h_q``, ``h_t`` for the finite differences.

    Returns:
        τ, shape (nv,).
    """
    q, qd, qdd = path(t)
    data = model.createData()
    tau_robot = np.array(pin.rnea(model, data, q, qd, qdd))
    return tau_robot + euler_lagrange_torque(model, particles, path, t, **fd)


def paper_q_lagrangian_torque(
    model: pin.Model,
    particles: Sequence[ParticleLike],
    path: PathFn,
    t: float,
    rotation: str = "world",
    *,
    include_robot: bool = False,
    h_q: float = 1e-2,
    h_t: float = 5e-3,
) -> np.ndarray:
    """Return the Euler-Lagrange torque of :func:`paper_q_lagrangian` along ``path``.

    Args:
        model: Pinocchio model.
        particles: the particles.
        path: callable t -> (q, q̇, q̈).
        t: time.
        rotation: ``"world"`` (eq. 26 literally, R_l inside Q) or ``"identity"`` (Q₀).
        include_robot: add ``pin.rnea`` of the unmodified model (then comparable with
            :func:`truth_torque`); default: particles only (comparable with
            :func:`euler_lagrange_torque`).
        h_q: configuration step.
        h_t: time step.

    Returns:
        τ, shape (nv,).
    """
    data = model.createData()

    def lag(q: np.ndarray, qd: np.ndarray, tt: float) -> float:
        return paper_q_lagrangian(model, particles, q, qd, tt, rotation, data)

    tau = euler_lagrange_fd(model, lag, path, t, h_q=h_q, h_t=h_t)
    if include_robot:
        q, qd, qdd = path(t)
        tau = tau + np.array(pin.rnea(model, model.createData(), q, qd, qdd))
    return tau


# ---------------------------------------------------------------- the momentum tests' scene
def particles_for(n_bodies: int) -> list[Particle]:
    """A fill (mass ramp), a sloshing mass, a moving and mass-changing one, a fixed one."""
    last = n_bodies - 1
    return [
        ramp_mass_particle(last - 2 if n_bodies > 7 else last, [0.02, -0.03, 0.10], 0.1, 0.4),
        moving_particle(last - 2 if n_bodies > 7 else last, [0.0, 0.05, 0.08], 0.3,
                        [0.04, 0.02, 0.03], [3.0, 2.0, 4.0], [0.1, 0.5, 0.9]),
        make_particle(2, [0.1, 0.0, -0.05], 0.5, amp=[0.0, 0.03, 0.02], omega=[0.0, 2.5, 1.5],
                      mass_b=0.4, mass_omega=2.0),
        make_particle(1, [0.0, 0.1, 0.0], 0.7),
    ]


def loads(robot: Any, particles: Sequence[ParticleLike], t: float
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Θ (the robot's nominal plus the particles'), Θ̇, Ψ, Ψ̇ at time ``t``."""
    theta_p, theta_dot_p, psi, psi_dot, _ = particle_state(particles, t, robot.n_bodies)
    return robot.theta_nominal + theta_p, theta_dot_p, psi, psi_dot
