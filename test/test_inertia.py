"""Inertial parameters Φ: consistency (Theorem 1), f and Z, conversions, projection."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from robot_tv_dynamics import (
    InvalidInputError,
    PhysicalConsistencyError,
    is_physically_consistent,
    phi_from_mass_com_inertia,
    phi_from_point_masses,
    phi_from_urdf_inertial,
    project_uniformly_consistent,
    pseudo_inertia,
    spatial_inertia,
    transform_phi,
)
from robot_tv_dynamics.inertia import (
    consistency_margin,
    consistency_size,
    mass_com_inertia_from_phi,
    phi_from_pinocchio,
    phi_from_pseudo_inertia,
    phi_to_pinocchio,
    rpy_to_rotation,
)

finite = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


@st.composite
def point_clouds(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    count = draw(st.integers(1, 12))
    masses = draw(arrays(np.float64, count, elements=st.floats(0.0, 5.0)))
    positions = draw(arrays(np.float64, (count, 3), elements=finite))
    return masses, positions


@st.composite
def consistent_phis(draw: st.DrawFn) -> np.ndarray:
    """Φ of random positive-definite pseudo-inertias f = AAᵀ + εI."""
    a = draw(arrays(np.float64, (4, 4), elements=finite))
    return phi_from_pseudo_inertia(a @ a.T + 1e-3 * np.eye(4))


@given(point_clouds())
def test_point_cloud_phi_is_consistent_and_f_is_psd(cloud: tuple[np.ndarray, np.ndarray]) -> None:
    masses, positions = cloud
    if masses.sum() <= 1e-6:
        return
    phi = phi_from_point_masses(masses, positions)
    values = np.linalg.eigvalsh(pseudo_inertia(phi))
    assert values[0] >= -1e-9 * max(1.0, values[-1])
    # f is the second moment Σ m [x;1][x;1]ᵀ, so it is ⪰ 0; with ≥ 4 affinely independent
    # massive points it is ≻ 0 and Theorem 1 says consistent.
    jittered = np.vstack([positions, np.eye(3), np.zeros(3)])
    phi_full = phi_from_point_masses(np.r_[masses, 0.1 * np.ones(4)], jittered)
    assert is_physically_consistent(phi_full)


def test_triangle_inequality_violation_is_not_consistent() -> None:
    # principal moments (1, 1, 3) at the COM violate I_zz ≤ I_xx + I_yy
    phi = phi_from_mass_com_inertia(1.0, [0.1, 0.0, 0.0], np.diag([1.0, 1.0, 3.0]))
    assert not is_physically_consistent(phi)
    assert consistency_margin(phi) < 0
    phi_ok = phi_from_mass_com_inertia(1.0, [0.1, 0.0, 0.0], np.diag([1.0, 1.0, 1.9]))
    assert is_physically_consistent(phi_ok)


@given(consistent_phis())
def test_spatial_inertia_eigenvalues_are_bracketed_by_pseudo_inertia(phi: np.ndarray) -> None:
    f_values = np.linalg.eigvalsh(pseudo_inertia(phi))
    z_values = np.linalg.eigvalsh(spatial_inertia(phi))
    scale = max(1.0, f_values[-1])
    assert z_values[0] >= f_values[0] - 1e-9 * scale
    assert z_values[-1] <= 2 * f_values[-1] + 1e-9 * scale


@given(arrays(np.float64, 10, elements=st.floats(-3, 3)), st.floats(1e-3, 0.5),
       st.floats(0.6, 10.0))
def test_projection_lands_in_the_band_and_is_idempotent(
    phi: np.ndarray, epsilon: float, beta: float
) -> None:
    projected = project_uniformly_consistent(phi, epsilon, beta)
    values = np.linalg.eigvalsh(pseudo_inertia(projected))
    assert values[0] >= epsilon - 1e-9 and values[-1] <= beta + 1e-9
    again = project_uniformly_consistent(projected, epsilon, beta)
    np.testing.assert_allclose(again, projected, atol=1e-10)


def test_projection_is_the_frobenius_nearest_point_in_f() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        phi = rng.normal(size=10)
        projected = project_uniformly_consistent(phi, 0.05, 2.0)
        distance = np.linalg.norm(pseudo_inertia(projected) - pseudo_inertia(phi))
        for _ in range(50):  # random members of the set are never closer
            a = rng.normal(size=(4, 4))
            values, vectors = np.linalg.eigh(a @ a.T)
            member = vectors @ np.diag(np.clip(values, 0.05, 2.0)) @ vectors.T
            assert np.linalg.norm(member - pseudo_inertia(phi)) >= distance - 1e-12


@given(consistent_phis())
def test_conversions_round_trip(phi: np.ndarray) -> None:
    np.testing.assert_allclose(phi_from_pseudo_inertia(pseudo_inertia(phi)), phi, atol=1e-12)
    mass, com, inertia_com = mass_com_inertia_from_phi(phi)
    np.testing.assert_allclose(phi_from_mass_com_inertia(mass, com, inertia_com), phi,
                               atol=1e-9 * max(1.0, np.abs(phi).max()))
    np.testing.assert_allclose(phi_from_pinocchio(phi_to_pinocchio(phi)), phi,
                               atol=1e-9 * max(1.0, np.abs(phi).max()))


def test_pseudo_and_spatial_inertia_equal_pinocchio() -> None:
    for seed in range(20):
        np.random.seed(seed)
        inertia = pin.Inertia.Random()
        phi = phi_from_pinocchio(inertia)
        np.testing.assert_allclose(pseudo_inertia(phi),
                                   pin.PseudoInertia.FromInertia(inertia).toMatrix(), atol=1e-12)
        np.testing.assert_allclose(spatial_inertia(phi), inertia.matrix(), atol=1e-12)


def test_urdf_inertial_matches_point_masses_in_a_rotated_com_frame() -> None:
    rng = np.random.default_rng(7)
    masses = rng.uniform(0.1, 1.0, 6)
    local = rng.normal(scale=0.1, size=(6, 3))
    local -= masses @ local / masses.sum()  # COM at the origin of the COM frame
    xyz, rpy = np.array([0.1, -0.2, 0.3]), np.array([0.3, -0.5, 1.1])
    rotation = rpy_to_rotation(rpy)
    at_com = phi_from_point_masses(masses, local)
    i_c = at_com[[4, 7, 9, 7, 5, 8, 9, 8, 6]].reshape(3, 3)
    phi = phi_from_urdf_inertial(masses.sum(), xyz, rpy, i_c[0, 0], i_c[0, 1], i_c[0, 2],
                                 i_c[1, 1], i_c[1, 2], i_c[2, 2])
    expected = phi_from_point_masses(masses, local @ rotation.T + xyz)
    np.testing.assert_allclose(phi, expected, atol=1e-12)


def test_transform_matches_moving_the_points() -> None:
    rng = np.random.default_rng(11)
    masses, points = rng.uniform(0.1, 1, 5), rng.normal(size=(5, 3))
    rotation, translation = pin.SE3.Random().rotation, rng.normal(size=3)
    moved = phi_from_point_masses(masses, points @ rotation.T + translation)
    np.testing.assert_allclose(
        transform_phi(phi_from_point_masses(masses, points), rotation, translation), moved,
        atol=1e-12)


def test_margin_and_size_are_extreme_eigenvalues() -> None:
    phi = phi_from_mass_com_inertia(2.0, [0, 0, 0.1], np.diag([0.1, 0.2, 0.25]))
    values = np.linalg.eigvalsh(pseudo_inertia(phi))
    assert consistency_margin(phi) == pytest.approx(values[0])
    assert consistency_size(phi) == pytest.approx(values[-1])
    stacked = consistency_margin(np.stack([phi, 2 * phi]))
    np.testing.assert_allclose(stacked, [values[0], 2 * values[0]])


@pytest.mark.parametrize("bad, message", [
    (np.zeros(9), "expected shape (10,)"),
    (np.r_[np.zeros(9), np.nan], "non-finite"),
    (np.r_[np.inf, np.zeros(9)], "non-finite"),
])
def test_bad_phi_raises_naming_the_argument(bad: np.ndarray, message: str) -> None:
    with pytest.raises(InvalidInputError, match="phi") as error:
        is_physically_consistent(bad)
    assert message in str(error.value)


def test_negative_mass_is_rejected() -> None:
    with pytest.raises(PhysicalConsistencyError, match="negative"):
        phi_from_mass_com_inertia(-1.0, [0, 0, 0], np.eye(3), what='link "payload"')
    with pytest.raises(PhysicalConsistencyError, match="negative"):
        phi_from_point_masses([1.0, -0.5], [[0, 0, 0], [1, 0, 0]])


def test_projection_rejects_bad_band() -> None:
    with pytest.raises(InvalidInputError, match="epsilon"):
        project_uniformly_consistent(np.r_[1.0, np.zeros(9)], 0.0, 1.0)
    with pytest.raises(InvalidInputError, match="epsilon"):
        project_uniformly_consistent(np.r_[1.0, np.zeros(9)], 2.0, 1.0)


def test_transform_psi_matches_moving_the_particles() -> None:
    rng = np.random.default_rng(12)
    masses, x, u = rng.uniform(0.1, 1, 4), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    rotation, translation = pin.SE3.Random().rotation, rng.normal(size=3)

    def psi_of(points: np.ndarray, velocities: np.ndarray) -> np.ndarray:
        out = np.zeros(12)
        for m, xi, vi in zip(masses, points, velocities, strict=True):
            out += m * np.r_[vi, np.outer(vi, xi).ravel()]  # [𝓋; x𝓋₁; x𝓋₂; x𝓋₃]
        return out

    from robot_tv_dynamics.inertia import transform_psi
    expected = psi_of(x @ rotation.T + translation, u @ rotation.T)
    np.testing.assert_allclose(transform_psi(psi_of(x, u), rotation, translation), expected,
                               atol=1e-12)


def test_projection_without_an_upper_cap_raises_only_the_low_eigenvalues():
    project = project_uniformly_consistent
    phi = np.array([1.0, 0, 0, 0, 0.01, 0.01, -0.001, 0, 0, 0])  # eigenvalues of f < 0
    values = np.linalg.eigvalsh(pseudo_inertia(phi))
    out = np.linalg.eigvalsh(pseudo_inertia(project(phi, 1e-6)))
    assert values[0] < 0 and values[-1] > 0.5
    # the low ones raised to ε, the others kept (no cap at any β)
    np.testing.assert_allclose(out, np.sort(np.maximum(values, 1e-6)), rtol=1e-9, atol=1e-15)
    with pytest.raises(InvalidInputError, match="beta"):
        project(phi, 1e-6, np.inf)
