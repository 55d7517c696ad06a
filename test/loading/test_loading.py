"""Loading processes: consistent by construction, analytic rates, Ψ of the modelled flow.

The independent checks discretise the same physical flow into particles by a separate
route (a time-marching particle simulation of the stream and the pool, a slice model of
the draining column, a point cloud of the grasped part) and compare Φ, ψ, ν; the grasp
is also checked end to end against the particle Euler–Lagrange truth of
particle_lagrangian.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from support.examples import LOADING_CONFIG as CONFIG  # noqa: E402
from support.particle_lagrangian import particle_state, random_path, truth_torque

from robot_tv_dynamics import InvalidInputError, PhysicalConsistencyError
from robot_tv_dynamics.inertia import phi_from_point_masses, pseudo_inertia
from robot_tv_dynamics.loading import (
    BodyLoadMap,
    Container,
    DrainProcess,
    FillProcess,
    GraspProcess,
    LinearLoadingProcess,
    LoadBodyRows,
    Placement,
    TimelineProcess,
    body_loads,
    load_loading_process,
    loading_process_from_dict,
)

EXAMPLES = ("fill", "drain", "grasp", "timeline")


def example(kind: str):
    return load_loading_process(CONFIG / f"{kind}.yaml")


def upright_container(mass: float = 0.15) -> Container:
    return Container(radius=0.04, height=0.12, mass=mass, placement=Placement.identity())


def fill_variants() -> dict[str, FillProcess]:
    return {
        "example": example("fill"),
        # the valve closes before the front reaches the bottom
        "short": FillProcess("panda_hand", upright_container(), mass_flow=0.5, fill_time=0.05,
                             inlet_height=0.3, inlet_speed=0.0, start=0.2),
        # no gravity along the axis: a constant-speed jet (the linear branch)
        "jet": FillProcess("panda_hand", upright_container(), mass_flow=0.2, fill_time=1.0,
                           inlet_height=0.2, inlet_speed=1.5, stream_acceleration=0.0),
    }


def all_processes():
    out = {f"fill-{k}": v for k, v in fill_variants().items()}
    out.update({kind: example(kind) for kind in EXAMPLES[1:]})
    out["drain-constant"] = DrainProcess(
        "panda_hand", upright_container(), initial_level=0.08, law="constant",
        volume_flow=1e-4, start=0.1)
    return out


PROCESSES = all_processes()


def times_for(process, count: int = 161) -> np.ndarray:
    return np.linspace(-0.2, process.duration + 0.3, count)


@pytest.mark.parametrize("name", sorted(PROCESSES))
def test_load_is_the_inertia_of_a_nonnegative_density_at_every_time(name):
    process = PROCESSES[name]
    for t in [*times_for(process, 401), 10 * process.duration + 100.0]:
        values = np.linalg.eigvalsh(pseudo_inertia(process.state(t).phi))
        assert values[0] >= -1e-12 * values[-1], (name, t, values)


@pytest.mark.parametrize("name", ["fill-example", "fill-short", "fill-jet", "drain",
                                  "drain-constant"])
def test_container_loads_are_uniformly_consistent(name):
    process = PROCESSES[name]
    shell_mu = np.linalg.eigvalsh(pseudo_inertia(process.container.shell_phi()))[0]
    margins = [np.linalg.eigvalsh(pseudo_inertia(process.state(t).phi))[0]
               for t in times_for(process)]
    # liquid only adds a non-negative density to the shell: f grows, so μ ≥ μ(shell) > 0
    assert min(margins) >= shell_mu * (1 - 1e-9) > 0


def _kinks(process) -> list[float]:
    if isinstance(process, FillProcess):
        s = process.start
        return [s, s + process.fall_time, s + process.fill_time, s + process.landing_end]
    if isinstance(process, DrainProcess):
        return [process.start, process.duration]
    if isinstance(process, GraspProcess):
        return [process.start, process.duration]
    return list(process.times)


@pytest.mark.parametrize("name", sorted(PROCESSES))
def test_rates_are_the_time_derivatives(name):
    process = PROCESSES[name]
    h = 1e-6
    kinks = np.array(_kinks(process))
    rng = np.random.default_rng(7)
    checked = 0
    for t in rng.uniform(-0.1, process.duration + 0.2, 60):
        if np.min(np.abs(kinks - t)) < 1e-4:
            continue
        now, ahead, behind = process.state(t), process.state(t + h), process.state(t - h)
        fd_phi = (ahead.phi - behind.phi) / (2 * h)
        fd_psi = (ahead.psi - behind.psi) / (2 * h)
        scale_phi = 1e-6 + np.abs(now.phi_dot).max()
        scale_psi = 1e-6 + np.abs(now.psi_dot).max()
        np.testing.assert_allclose(now.phi_dot, fd_phi, atol=2e-6 * scale_phi + 1e-9)
        np.testing.assert_allclose(now.psi_dot, fd_psi, atol=2e-6 * scale_psi + 1e-9)
        checked += 1
    assert checked > 40


# ------------------------------------------------------------------ particle discretisations
def _disc_points(mass: float, z: float, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """A thin uniform disc at height z as 8 points on the circle of radius r/√2."""
    angles = np.arange(8) * np.pi / 4
    rho = radius / math.sqrt(2.0)
    points = np.column_stack([rho * np.cos(angles), rho * np.sin(angles), np.full(8, z)])
    return np.full(8, mass / 8), points


def _march_fill(process: FillProcess, t_end: float, dt: float):
    """Time-marching particle simulation of the stream and the pool (container frame).

    Every dt a parcel of mass q·dt enters at the inlet with speed u0; parcels move by
    their own kinematics (ż = −w, ẇ = a); a parcel whose height drops below the current
    level joins the pool as a disc layer on top. Returns airborne (masses, z, w) and the
    pool layers (masses, mid-heights) at t_end.
    """
    q, rho_a = process.q, process.density * process.container.area
    n_in = int(round(process.fill_time / dt))
    births = process.start + (np.arange(n_in) + 0.5) * dt
    births = births[births <= t_end]
    z = np.full(births.size, np.nan)
    landed = np.zeros(births.size, dtype=bool)
    pool_layers = []
    pool_mass = 0.0
    steps = int(round((t_end - process.start) / dt))
    for k in range(1, steps + 1):
        t = process.start + k * dt
        age = t - births
        born = age >= 0
        z[born] = process.z_in - process.u0 * age[born] - 0.5 * process.a * age[born] ** 2
        level = pool_mass / rho_a
        hits = born & ~landed & (z <= level)
        for _ in np.flatnonzero(hits):
            m = q * dt
            pool_layers.append((m, (pool_mass + 0.5 * m) / rho_a))
            pool_mass += m
        landed |= hits
    age = t_end - births
    airborne = (age >= 0) & ~landed
    w = -(process.u0 + process.a * age[airborne])
    return (np.full(int(airborne.sum()), q * dt), z[airborne], w), pool_layers


@pytest.mark.parametrize("t", [2.2, 2.9, 3.6, 4.05, 4.5])
def test_fill_matches_a_marching_particle_simulation_of_the_same_flow(t):
    process = fill_variants()["example"]
    container = process.container
    (m_air, z_air, w_air), layers = _march_fill(process, t, dt=2e-4)
    masses, points = [], []
    for m, z in layers:
        mm, pp = _disc_points(m, z, container.radius)
        masses.append(mm)
        points.append(pp)
    masses.append(m_air)
    points.append(np.column_stack([np.zeros_like(z_air), np.zeros_like(z_air), z_air]))
    phi_particles = phi_from_point_masses(np.concatenate(masses), np.vstack(points))
    psi_particles = np.zeros(12)
    psi_particles[2] = np.sum(m_air * w_air)
    psi_particles[11] = np.sum(m_air * w_air * z_air)
    nu_particles = np.sum(m_air * w_air**2)
    # the process, back in the container frame
    state = process.state(t)
    inverse = Placement(container.placement.rotation.T,
                        -container.placement.rotation.T @ container.placement.translation)
    phi = inverse.phi(state.phi) - container.shell_phi()
    psi = inverse.psi(state.psi)
    np.testing.assert_allclose(phi, phi_particles, rtol=0, atol=3e-3 * np.abs(phi).max())
    np.testing.assert_allclose(psi, psi_particles, rtol=0, atol=3e-3 * max(np.abs(psi).max(), 1e-3))
    assert nu_particles == pytest.approx(state.nu, rel=3e-3, abs=1e-6)
    if process.start + 0.5 < t < process.start + process.fill_time:
        assert abs(psi[2]) > 0.01  # the stream is really there


def _fill_by_quadrature(process: FillProcess, t: float) -> np.ndarray:
    """[Φ, Φ̇, ψ, ψ̇, ν] (45,) of the fill in its link frame, by a route of its own.

    The airborne ages [lo, hi] from a bracketed root of z(T) = k (τ − T) (the particle
    at the surface), the stream integrals by 4-point Gauss–Legendre (exact to degree 7;
    z², z w, w² are of degree ≤ 4), their rates by Leibniz' rule with dT/dt from
    differentiating z(T) = k (τ − T) implicitly, the pool as a uniform column.
    """
    from scipy.optimize import brentq

    q, a, u0, k = process.q, process.a, process.u0, process.k
    rho_a = process.density * process.container.area
    tau = t - process.start

    def z(s):
        return process.z_in - u0 * s - 0.5 * a * s * s

    def w(s):
        return -(u0 + a * s)

    lo = hi = lo_rate = hi_rate = 0.0
    entered = entered_rate = 0.0
    if tau > 0.0:
        open_valve = tau < process.fill_time
        entered, entered_rate = (q * tau, q) if open_valve else (q * process.fill_time, 0.0)
        lo, lo_rate = (0.0, 0.0) if open_valve else (tau - process.fill_time, 1.0)
        if z(tau) > 0.0:  # the front has not reached the empty bottom yet
            hi, hi_rate = tau, 1.0
        elif z(lo) - k * (tau - lo) > 0.0:  # the youngest particle is still airborne
            hi = brentq(lambda s: z(s) - k * (tau - s), lo, tau, xtol=1e-300, rtol=1e-15)
            hi_rate = k / (k + w(hi))
        else:
            lo = lo_rate = 0.0
    nodes, weights = np.polynomial.legendre.leggauss(4)
    ages = 0.5 * (hi + lo) + 0.5 * (hi - lo) * nodes

    def integral(g):
        return q * 0.5 * (hi - lo) * float(weights @ g(ages))

    def rate(g):
        return q * (g(hi) * hi_rate - g(lo) * lo_rate)

    integrands = (lambda s: np.ones_like(s), z, lambda s: z(s) ** 2, w,
                  lambda s: z(s) * w(s), lambda s: w(s) ** 2)
    m_s, hz_s, szz_s, p_s, l_s, nu = (integral(g) for g in integrands)
    md_s, hzd_s, szzd_s, pd_s, ld_s, _ = (rate(g) for g in integrands)
    m_p = entered - m_s
    md_p = entered_rate - md_s
    r2 = process.container.radius ** 2

    def axisymmetric(m, hz, sxx, szz):
        return np.array([m, 0, 0, hz, sxx + szz, sxx + szz, 2 * sxx, 0, 0, 0])

    phi = process.container.shell_phi() + axisymmetric(
        m_p + m_s, m_p**2 / (2 * rho_a) + hz_s, m_p * r2 / 4, m_p**3 / (3 * rho_a**2) + szz_s)
    phi_dot = axisymmetric(md_p + md_s, m_p * md_p / rho_a + hzd_s, md_p * r2 / 4,
                           m_p**2 * md_p / rho_a**2 + szzd_s)
    psi, psi_dot = np.zeros(12), np.zeros(12)
    psi[2], psi[11], psi_dot[2], psi_dot[11] = p_s, l_s, pd_s, ld_s  # ∫σρ𝓋₃, ∫σρ𝓋₃x₃
    placement = process.container.placement
    return np.concatenate((placement.phi(phi), placement.phi(phi_dot), placement.psi(psi),
                           placement.psi(psi_dot), [nu]))


@pytest.mark.parametrize("name", ["example", "short", "jet"])
def test_fill_state_equals_a_quadrature_of_its_stream_to_rounding(name):
    """The closed form (one linear map of 23 features of t) against _fill_by_quadrature
    at 400 times: every entry of Φ, Φ̇, ψ, ψ̇, ν within 1e-13 of its block's largest
    magnitude over the process (measured ≤ 2e-15; the stream's moments are differences
    hi^k − lo^k, which lose digits, not accuracy, as the stream vanishes)."""
    process = fill_variants()[name]
    kinks = np.array(_kinks(process))
    times = np.random.default_rng(3).uniform(process.start - 0.1, process.duration + 0.2, 400)
    times = times[np.min(np.abs(times[:, None] - kinks), axis=1) > 1e-6]
    got = np.array([np.concatenate((s.phi, s.phi_dot, s.psi, s.psi_dot, [s.nu]))
                    for s in map(process.state, times)])
    want = np.array([_fill_by_quadrature(process, t) for t in times])
    for block in (slice(0, 10), slice(10, 20), slice(20, 32), slice(32, 44), slice(44, 45)):
        np.testing.assert_allclose(got[:, block], want[:, block], rtol=0,
                                   atol=1e-13 * np.abs(want[:, block]).max(),
                                   err_msg=f"{name}, columns {block}")
    after_closing = (times > process.start + process.fill_time) & (np.abs(want[:, 22]) > 0)
    assert after_closing.sum() >= 3  # the stream's tail (lo > 0) was sampled too


def _march_drain(process: DrainProcess, t_end: float, slices: int = 4000, dt: float = 1e-4):
    """Slice model of the draining column, level from RK4 on Torricelli's ODE.

    The valve's open fraction rises as 3x² − 2x³ over its opening time (x = (t − start)/T).
    """
    area = process.container.area
    a_o = math.pi * 0.012**2 / 4.0
    cd, g = 0.62, 9.81

    def hdot(t: float, h: float) -> float:
        x = min(max((t - process.start) / process.opening_time, 0.0), 1.0)
        return -(3 * x * x - 2 * x**3) * cd * a_o / area * math.sqrt(2.0 * g * max(h, 0.0))

    h = process.h0
    z = (np.arange(slices) + 0.5) * process.h0 / slices  # slice mid-heights, plug flow
    t = process.start
    while t < t_end - 1e-12:
        step = min(dt, t_end - t)
        k1 = hdot(t, h)
        k2 = hdot(t + 0.5 * step, h + 0.5 * step * k1)
        k3 = hdot(t + 0.5 * step, h + 0.5 * step * k2)
        k4 = hdot(t + step, h + step * k3)
        dh = step * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        z += dh  # every slice moves with the column
        h += dh
        t += step
    inside = z > 0
    m_slice = process.density * area * process.h0 / slices
    return m_slice, z[inside], hdot(t_end, h)


@pytest.mark.parametrize("t", [1.1, 1.5, 4.0, 7.0])
def test_drain_matches_a_slice_model_of_the_same_flow(t):
    process = example("drain")
    assert process.law == "torricelli"
    container = process.container
    m_slice, z, velocity = _march_drain(process, t)
    masses, points = [], []
    for zk in z:
        mm, pp = _disc_points(m_slice, zk, container.radius)
        masses.append(mm)
        points.append(pp)
    phi_particles = phi_from_point_masses(np.concatenate(masses), np.vstack(points))
    psi_particles = np.zeros(12)
    psi_particles[2] = m_slice * z.size * velocity
    psi_particles[11] = m_slice * velocity * z.sum()
    state = process.state(t)
    inverse = Placement(container.placement.rotation.T,
                        -container.placement.rotation.T @ container.placement.translation)
    phi = inverse.phi(state.phi) - container.shell_phi()
    psi = inverse.psi(state.psi)
    np.testing.assert_allclose(phi, phi_particles, rtol=0, atol=2e-3 * np.abs(phi).max())
    np.testing.assert_allclose(psi, psi_particles, rtol=0, atol=2e-3 * np.abs(psi).max())
    assert abs(psi[2]) > 0


@pytest.mark.parametrize("law", ["torricelli", "constant"])
def test_drain_psi_is_continuous_when_the_valve_opens(law):
    """Ψ has no jump at the opening (the plant applies no impulse), and Ψ̇ none either.

    An instant opening would step Ψ from 0 to m₀ḣ₀ (≈ 7e-3 kg·m/s for the example cup)
    while Ψ̇ stays finite, so the plant would miss the reaction JᵀQ₀Δψ.
    """
    kwargs = (dict(orifice_diameter=0.012) if law == "torricelli"
              else dict(law="constant", volume_flow=2e-5))
    process = DrainProcess("panda_hand", upright_container(), initial_level=0.08, start=1.0,
                           **kwargs)
    eps = 1e-7
    before, after = process.state(1.0 - eps), process.state(1.0 + eps)
    full = process.state(1.0 + process.opening_time)
    assert np.abs(full.psi).max() > 1e-4  # the column moves once the valve is open
    np.testing.assert_allclose(after.psi, before.psi, rtol=0, atol=1e-9 * np.abs(full.psi).max())
    # Ψ(t) − Ψ(start) is the integral of Ψ̇ across the opening (no impulse hidden)
    times = np.linspace(0.9, 1.0 + 2 * process.opening_time, 4001)
    psi = np.array([process.state(t).psi for t in times])
    psi_dot = np.array([process.state(t).psi_dot for t in times])
    np.testing.assert_allclose(after.psi_dot, before.psi_dot, rtol=0,
                               atol=1e-4 * np.abs(psi_dot).max())
    integral = np.sum((psi_dot[1:] + psi_dot[:-1]) / 2 * np.diff(times)[:, None], axis=0)
    np.testing.assert_allclose(psi[-1] - psi[0], integral, rtol=0,
                               atol=1e-5 * np.abs(full.psi).max())


def test_drain_opening_time_must_be_positive():
    with pytest.raises(InvalidInputError, match="opening_time"):
        DrainProcess("panda_hand", upright_container(), initial_level=0.08,
                     orifice_diameter=0.012, opening_time=0.0)


@dataclass
class GraspParticle:
    """A point of the part: mass m_k w(t) at x_k + c(t), moving with ċ (body frame)."""

    body: int
    offset: np.ndarray
    mass: float
    process: GraspProcess
    rotation: np.ndarray
    translation: np.ndarray

    def _ramp(self, t: float):
        tau = (t - self.process.start) / self.process.ramp_time
        tau = min(max(tau, 0.0), 1.0)
        w = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
        wd = 30 * tau**2 * (1 - tau) ** 2 / self.process.ramp_time
        wdd = 60 * tau * (1 - tau) * (1 - 2 * tau) / self.process.ramp_time**2
        inside = 0 < (t - self.process.start) < self.process.ramp_time
        return w, wd * inside, wdd * inside

    def state(self, t: float):
        w, wd, wdd = self._ramp(t)
        d = self.process.approach
        x_link = self.process.com + d * (1 - w) + self.offset
        u_link, ud_link = -d * wd, -d * wdd
        r, p = self.rotation, self.translation
        return r @ x_link + p, r @ u_link, r @ ud_link, self.mass * w, self.mass * wd


def grasp_cloud(panda, process: GraspProcess, seed: int = 3):
    """Point cloud of a part (COM at 0) and its inertia about the COM, in link axes."""
    rng = np.random.default_rng(seed)
    offsets = rng.uniform(-0.03, 0.03, (12, 3))
    masses = rng.uniform(0.5, 1.5, 12)
    masses *= process.mass / masses.sum()
    offsets -= masses @ offsets / masses.sum()
    phi = phi_from_point_masses(masses, offsets)
    inertia = np.array([[phi[4], phi[7], phi[9]], [phi[7], phi[5], phi[8]],
                        [phi[9], phi[8], phi[6]]])
    attachment = panda.link_attachment(process.link)
    particles = [
        GraspParticle(attachment.body, o, m, process, attachment.rotation, attachment.translation)
        for o, m in zip(offsets, masses, strict=True)]
    return particles, inertia


def test_grasp_matches_its_point_cloud_and_the_particle_lagrangian(panda):
    base = example("grasp")
    probe = GraspProcess(base.link, base.mass, base.com, np.eye(3) * 1e-4,
                         ramp_time=base.ramp_time, approach=base.approach, start=base.start)
    particles, inertia = grasp_cloud(panda, probe)
    process = GraspProcess(base.link, base.mass, base.com, inertia, ramp_time=base.ramp_time,
                           approach=base.approach, start=base.start)
    n = panda.n_bodies
    path = random_path(panda.pinocchio_model, np.random.default_rng(11), amp=0.3)
    for t in (1.1, 1.25, 1.4):
        theta_p, theta_dot_p, psi_p, psi_dot_p, _ = particle_state(particles, t, n)
        zero = np.zeros((n, 10))
        theta, theta_dot, psi, psi_dot = body_loads(panda, process, t, zero)
        np.testing.assert_allclose(theta, theta_p, atol=1e-12)
        np.testing.assert_allclose(theta_dot, theta_dot_p, atol=1e-10)
        np.testing.assert_allclose(psi, psi_p, atol=1e-12)
        np.testing.assert_allclose(psi_dot, psi_dot_p, atol=1e-10)
        # end to end: eq. (39) with the process's loads = Euler–Lagrange of the particles
        q, qd, qdd = path(t)
        theta_full, theta_dot, psi, psi_dot = body_loads(panda, process, t,
                                                         panda.theta_nominal)
        tau = panda.inverse_dynamics(q, qd, qdd, theta_full, theta_dot, psi, psi_dot).tau
        truth = truth_torque(panda.pinocchio_model, particles, path, t)
        np.testing.assert_allclose(tau, truth, atol=1e-6 * (1 + np.abs(truth).max()))


def test_timeline_interpolates_linearly_with_zero_psi():
    process = example("timeline")
    assert isinstance(process, TimelineProcess)
    k = 3
    t0, t1 = process.times[k], process.times[k + 1]
    for s in (0.0, 0.25, 0.5, 0.9):
        state = process.state(t0 + s * (t1 - t0))
        np.testing.assert_allclose(
            state.phi, (1 - s) * process.phis[k] + s * process.phis[k + 1], atol=1e-15)
        np.testing.assert_allclose(state.phi_dot, (process.phis[k + 1] - process.phis[k])
                                   / (t1 - t0))
        assert not state.psi.any() and not state.psi_dot.any() and state.nu == 0.0


def test_timeline_csv_equals_yaml_rows(tmp_path):
    yaml_process = example("timeline")
    lines = ["# a comment", "t,mass,com_x,com_y,com_z,ixx,ixy,ixz,iyy,iyz,izz"]
    lines += ["0.0,0,0,0,0,0,0,0,0,0,0", "1.0,0,0,0,0,0,0,0,0,0,0",
              "2.0,0.5,0,0,0.08,5e-4,0,0,5e-4,0,3e-4"]
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "tl.yaml").write_text("process: timeline\nlink: panda_hand\nfile: rows.csv\n")
    csv_process = load_loading_process(tmp_path / "tl.yaml")
    for t in (0.5, 1.3, 1.9):
        np.testing.assert_allclose(csv_process.state(t).phi, yaml_process.state(t).phi)
    phi_rows = ["t,m,h1,h2,h3,I11,I22,I33,I12,I23,I13", "0,1,0,0,0,1,1,1,0,0,0",
                "1,2,0,0,0,2,2,2,0,0,0"]
    (tmp_path / "phi.csv").write_text("\n".join(phi_rows) + "\n")
    process = loading_process_from_dict(
        {"process": "timeline", "link": "l", "file": "phi.csv"}, tmp_path)
    assert process.state(0.5).phi[0] == pytest.approx(1.5)


def test_body_loads_add_the_load_to_its_owning_body(panda):
    process = example("fill")
    t = 2.2
    state = process.state(t)
    theta, theta_dot, psi, psi_dot = body_loads(panda, process, t, panda.theta_nominal)
    body = panda.link_attachment("panda_hand").body
    expected = panda.theta_with_link_inertia(
        panda.theta_nominal, "panda_hand", panda.urdf_link_phi("panda_hand") + state.phi)
    np.testing.assert_allclose(theta, expected, atol=1e-14)
    others = [l for l in range(panda.n_bodies) if l != body]
    assert not theta_dot[others].any() and not psi[others].any() and not psi_dot[others].any()
    assert np.abs(theta_dot[body]).max() > 0 and np.abs(psi[body]).max() > 0


@pytest.mark.parametrize("kind", EXAMPLES)
def test_load_body_rows_are_body_loads_in_one_vector(panda, kind):
    """LoadBodyRows (the fill through its composed linear map, the others through state)
    gives the load body's rows of body_loads and ν, to 1e-15 of each block's scale."""
    process = example(kind)
    mapping = BodyLoadMap(panda, process.link)
    rows = LoadBodyRows(mapping, process, panda.theta_nominal[mapping.body])
    assert (kind == "fill") == isinstance(process, LinearLoadingProcess)
    times = np.linspace(-0.2, process.duration + 0.3, 201)
    got = np.array([rows(t) for t in times])
    want = np.array([np.concatenate([
        *(part[mapping.body] for part in body_loads(panda, process, t, panda.theta_nominal)),
        [process.state(t).nu]]) for t in times])
    for block in (slice(0, 10), slice(10, 20), slice(20, 32), slice(32, 44), slice(44, 45)):
        scale = np.abs(want[:, block]).max()
        np.testing.assert_allclose(got[:, block], want[:, block], rtol=0, atol=1e-15 * scale)
    assert not rows(1.0).flags.writeable


def test_a_linear_process_whose_first_feature_is_not_one_is_refused(panda):
    fill = example("fill")

    class Shifted:
        link, duration, state, describe, state_map = (
            fill.link, fill.duration, fill.state, fill.describe, fill.state_map)

        def features(self, t):
            return fill.features(t) + 1.0

    with pytest.raises(InvalidInputError, match="starting with 1"):
        LoadBodyRows(BodyLoadMap(panda, fill.link), Shifted(), panda.theta_nominal[0])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"process": "pour", "link": "x"}, "is not one of"),
        ({"link": "x"}, 'missing key "process"'),
        ({"process": "grasp", "link": "x", "mass": 1, "com": [0, 0, 0],
          "inertia": [1, 0, 0, 1, 0, 1], "ramp_time": 1, "colour": "red"}, "unknown key"),
        ({"process": "grasp", "link": "x", "mass": -1, "com": [0, 0, 0],
          "inertia": [1, 0, 0, 1, 0, 1], "ramp_time": 1}, "must be > 0"),
        ({"process": "fill", "link": "x", "mass_flow": 1.0, "fill_time": 5.0,
          "inlet_height": 0.3, "container": {"radius": 0.04, "height": 0.12, "mass": 0.1}},
         "overflows"),
        ({"process": "fill", "link": "x", "mass_flow": 0.1, "fill_time": 1.0,
          "inlet_height": 0.3}, 'missing key "container"'),
        ({"process": "drain", "link": "x", "initial_level": 0.05, "law": "magic",
          "container": {"radius": 0.04, "height": 0.12, "mass": 0.1}}, "torricelli"),
        ({"process": "timeline", "link": "x", "rows": [{"t": 1.0, "mass": 1.0},
                                                        {"t": 0.5, "mass": 1.0}]},
         "strictly increasing"),
    ],
)
def test_bad_configs_raise_clear_errors(config, message):
    with pytest.raises(InvalidInputError, match=message):
        loading_process_from_dict(config)


def test_a_timeline_row_without_a_density_is_rejected():
    bad = [0.0] * 10
    bad[0], bad[4], bad[5], bad[6] = 1.0, 1.0, 1.0, 3.0  # violates the triangle inequality
    with pytest.raises(PhysicalConsistencyError, match="Theorem 1"):
        loading_process_from_dict({"process": "timeline", "link": "x",
                                   "rows": [{"t": 0.0, "phi": bad}]})


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(InvalidInputError, match="nope.yaml"):
        load_loading_process(tmp_path / "nope.yaml")
