"""The lead ball and the equivalent box reproduce Φ; inconsistent and massless bodies."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from robot_tv_dynamics.consistency.monitor import Level
from robot_tv_dynamics.inertia import (
    consistency_margin,
    mass_com_inertia_from_phi,
    phi_from_mass_com_inertia,
    phi_from_point_masses,
)
from robot_tv_dynamics.visualization import (
    LEAD_DENSITY,
    Verdict,
    inertia_geometry,
    inertia_scene,
    lead_radius,
    look,
)


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    return np.asarray(pin.Quaternion(*rng.normal(size=4)).normalized().matrix())


def box_phi(mass, sides, rotation, com) -> np.ndarray:
    a2 = np.asarray(sides, dtype=float) ** 2
    principal = mass / 12.0 * np.array([a2[1] + a2[2], a2[0] + a2[2], a2[0] + a2[1]])
    return phi_from_mass_com_inertia(mass, com, rotation @ np.diag(principal) @ rotation.T)


def test_lead_density_is_that_of_lead():
    assert LEAD_DENSITY == 11340.0


@pytest.mark.parametrize("mass", [1e-3, 0.015, 1.0, 4.97, 120.0])
def test_the_ball_radius_gives_the_mass_at_lead_density(mass):
    r = lead_radius(mass)
    assert LEAD_DENSITY * 4.0 / 3.0 * math.pi * r**3 == pytest.approx(mass, rel=1e-12)
    assert lead_radius(1.0) == pytest.approx(0.02761, abs=1e-5)  # 1 kg of lead: r ≈ 2.8 cm


def test_the_box_reproduces_the_inertia_about_the_com_of_random_clouds():
    rng = np.random.default_rng(17)
    for _ in range(50):
        masses = rng.uniform(0.01, 2.0, size=rng.integers(4, 30))
        points = rng.normal(scale=rng.uniform(0.01, 0.3), size=(masses.size, 3)) + rng.normal(
            scale=0.5, size=3)
        phi = phi_from_point_masses(masses, points)
        geometry = inertia_geometry(phi)
        assert geometry is not None and geometry.consistent
        mass, com, inertia_com = mass_com_inertia_from_phi(phi)
        assert geometry.mass == pytest.approx(mass, rel=1e-15)
        np.testing.assert_allclose(geometry.com, com, rtol=0, atol=1e-12)
        box = geometry.box
        np.testing.assert_allclose(box.rotation.T @ box.rotation, np.eye(3), atol=1e-12)
        assert np.linalg.det(box.rotation) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(box.inertia_about_com(mass), inertia_com, rtol=0, atol=1e-9)
        # the box is a body: mass, COM and inertia rebuild Φ
        np.testing.assert_allclose(
            phi_from_mass_com_inertia(mass, geometry.com, box.inertia_about_com(mass)), phi,
            rtol=0, atol=1e-9)


def test_a_rotated_uniform_box_is_recovered_with_its_sides_and_edges():
    rng = np.random.default_rng(3)
    sides = np.array([0.05, 0.12, 0.3])
    rotation = random_rotation(rng)
    geometry = inertia_geometry(box_phi(2.5, sides, rotation, [0.1, -0.2, 0.4]))
    np.testing.assert_allclose(geometry.com, [0.1, -0.2, 0.4], atol=1e-12)
    np.testing.assert_allclose(geometry.box.dimensions, sides, rtol=1e-9)  # eigh: ascending
    # each edge direction is ± the box's own axis
    np.testing.assert_allclose(np.abs(geometry.box.rotation.T @ rotation), np.eye(3), atol=1e-9)


def test_the_panda_bodies_all_have_a_box_matching_their_urdf_inertia(panda):
    for l, phi in enumerate(panda.theta_nominal):
        geometry = inertia_geometry(phi)
        assert geometry is not None and geometry.consistent, panda.body_names[l]
        mass, _, inertia_com = mass_com_inertia_from_phi(phi)
        np.testing.assert_allclose(geometry.box.inertia_about_com(mass), inertia_com,
                                   rtol=0, atol=1e-9)


@pytest.mark.parametrize("phi", [
    # principal moments (1, 0.1, 0.1) kg·m² about the COM break the triangle inequality
    phi_from_mass_com_inertia(1.0, [0.0, 0.0, 0.1], np.diag([1.0, 0.1, 0.1])),
    # negative mass
    phi_from_mass_com_inertia(1.0, [0.0, 0.0, 0.1], np.diag([0.01, 0.01, 0.01])) * -1.0,
], ids=["triangle-inequality", "negative-mass"])
def test_an_inconsistent_phi_has_no_box_and_the_inconsistent_look(phi, panda):
    assert consistency_margin(phi) < 0
    geometry = inertia_geometry(phi)
    assert geometry is not None and geometry.box is None and not geometry.consistent
    assert geometry.lead_radius == pytest.approx(lead_radius(1.0))
    for level in (None, Level.OK, Level.WARN, Level.ERROR):
        assert look(level, False).verdict is Verdict.INCONSISTENT
    theta = np.array(panda.theta_nominal)
    theta[6] = phi
    scene = inertia_scene(panda, theta, [Level.ERROR] * panda.n_bodies)
    looks = {b.name: b.look.verdict for b in scene.bodies}
    assert looks["panda_link7"] is Verdict.INCONSISTENT
    assert "inconsistent" in scene.bodies[6].look.label
    assert {v for n, v in looks.items() if n != "panda_link7"} == {Verdict.ERROR}


def test_a_consistent_body_takes_the_colour_of_its_level():
    colours = {level: look(level, True).box for level in (Level.OK, Level.WARN, Level.ERROR)}
    assert len(set(colours.values())) == 3
    assert look(Level.OK, True).verdict is Verdict.OK
    assert look(None, True).verdict is Verdict.UNKNOWN
    assert look(Level.STALE, True).verdict is Verdict.UNKNOWN
    assert look(None, False).box not in colours.values()


def test_a_body_without_mass_gives_no_geometry_and_no_crash(panda):
    assert inertia_geometry(np.zeros(10)) is None
    theta = np.array(panda.theta_nominal)
    theta[3] = 0.0
    scene = inertia_scene(panda, theta, kinematics=panda.kinematics(np.zeros(panda.nv)))
    assert [b.index for b in scene.bodies] == [l for l in range(panda.n_bodies) if l != 3]


def test_a_point_mass_is_on_the_boundary_a_box_of_zero_size():
    geometry = inertia_geometry(phi_from_point_masses([0.7], [[0.2, 0.1, -0.3]]))
    assert geometry.consistent
    np.testing.assert_allclose(geometry.box.dimensions, 0.0, atol=1e-6)
