"""The 2×2 block weight about each body's COM: the decomposition, the bracket, the chain.

M(q, Θ) comes from ``pinocchio.crba`` on a copy of the arm's Pinocchio model with Θ's
inertias, never from the weights or the searches under test; the COM, the centroidal
inertia and the COM Jacobians are built here from Φ and the LOCAL body Jacobians.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from support.bounds_cases import crba_eigenvalues, random_consistent_theta, random_q

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.arrays import skew
from robot_tv_dynamics.bounds.mass import (
    COM_BLOCK,
    lower_weight_candidates,
    upper_weight_candidates,
    weighted_bounds,
)
from robot_tv_dynamics.bounds.weights import (
    com_band,
    com_block_lower,
    com_block_upper,
    spatial_inertia_extremes,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    consistency_margin,
    consistency_size,
    inertia_matrix,
    phi_from_mass_com_inertia,
    phi_to_pinocchio,
    spatial_inertia,
)

ARMS = ("panda", "ur5", "panda_locked")


def com_parts(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """m (N,), c = h/m (N, 3) and I_c = I_o + m S(c)² (N, 3, 3), from Φ."""
    m = theta[:, 0]
    c = theta[:, 1:4] / m[:, None]
    s = skew(c)
    return m, c, inertia_matrix(theta) + m[:, None, None] * (s @ s)


def to_com(c: np.ndarray) -> np.ndarray:
    """X_c = [[I, −S(c)], [0, I]]: a joint-frame twist (v, ω) moved to the point c."""
    x = np.tile(np.eye(6), (c.shape[0], 1, 1))
    x[:, :3, 3:] = -skew(c)
    return x


def jacobians(model: RobotModel, qs: np.ndarray) -> np.ndarray:
    return np.array([model.body_jacobians_local(q).reshape(model.n_bodies, 6, model.nv)
                     for q in qs])


def gram(jac: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Eigenvalues of Σ_l J_lᵀ W_lᵀW_l J_l per configuration, (K, nv)."""
    inner = np.swapaxes(weights, 1, 2) @ weights
    return np.linalg.eigvalsh(np.einsum("klri,lrs,klsj->kij", jac, inner, jac))


@pytest.mark.parametrize("name", ARMS)
def test_com_decomposition_is_pinocchio_crba(arms: dict[str, RobotModel], name: str) -> None:
    """Σ_l m_l J_v,cᵀJ_v,c + J_ωᵀ I_c J_ω equals Pinocchio's CRBA mass matrix."""
    model = arms[name]
    rng = np.random.default_rng(7)
    qs = random_q(model, rng, 10)
    for theta in (model.theta_nominal, random_consistent_theta(model.n_bodies, rng, 0.5)):
        m, c, i_c = com_parts(theta)
        pm = pin.Model(model.pinocchio_model)
        for l in range(model.n_bodies):
            pm.inertias[l + 1] = phi_to_pinocchio(theta[l])
        data = pm.createData()
        for q, jac in zip(qs, jacobians(model, qs), strict=True):
            jc = to_com(c) @ jac
            mass = sum(m[l] * jc[l, :3].T @ jc[l, :3] + jc[l, 3:].T @ i_c[l] @ jc[l, 3:]
                       for l in range(model.n_bodies))
            crba = pin.crba(pm, data, model.pinocchio_configuration(q))
            crba = np.triu(crba) + np.triu(crba, 1).T
            assert np.allclose(mass, crba, rtol=0.0, atol=1e-12 * np.abs(crba).max())


def test_com_blocks_of_a_constant_theta_are_the_decomposition() -> None:
    """r = 0: L = X_cᵀ diag(m, λ_min(I_c)) X_c and U = X_cᵀ diag(m, λ_max(I_c)) X_c."""
    theta = random_consistent_theta(50, np.random.default_rng(1), 0.7)
    m, c, i_c = com_parts(theta)
    eig = np.linalg.eigvalsh(i_c)
    for weights, rot in ((com_block_lower(theta), eig[:, 0]), (com_block_upper(theta), eig[:, -1])):
        inner = np.swapaxes(weights, 1, 2) @ weights
        middle = np.zeros((50, 6, 6))
        middle[:, [0, 1, 2], [0, 1, 2]] = m[:, None]
        middle[:, [3, 4, 5], [3, 4, 5]] = rot[:, None]
        expected = np.swapaxes(to_com(c), 1, 2) @ middle @ to_com(c)
        assert np.allclose(inner, expected, rtol=1e-8, atol=1e-12)
    assert np.all(com_band(theta).radius == 0.0)


def test_com_blocks_bracket_every_theta_of_a_band_and_of_its_ranges() -> None:
    """L ⪯ Z(Φ) ⪯ U for the band's samples and for Θ built inside its ranges, not sampled."""
    rng = np.random.default_rng(2)
    n = 30
    base = random_consistent_theta(n, rng, 0.7)
    m, c, i_c = com_parts(base)
    samples = []
    for _ in range(5):  # mass ±20 %, COM moved up to 3 cm, I_c rotated and scaled ±20 %
        rot = np.linalg.qr(rng.normal(size=(n, 3, 3)))[0]
        scale = rng.uniform(0.8, 1.2, size=(n, 1, 1))
        samples.append([phi_from_mass_com_inertia(
            m[l] * rng.uniform(0.8, 1.2), c[l] + rng.uniform(-0.03, 0.03, 3),
            scale[l] * rot[l] @ i_c[l] @ rot[l].T) for l in range(n)])
    band = np.array(samples)
    lower, upper = com_block_lower(band), com_block_upper(band)
    low, up = np.swapaxes(lower, 1, 2) @ lower, np.swapaxes(upper, 1, 2) @ upper
    ranges = com_band(band)
    assert np.all(ranges.radius > 0.0)
    inside = []
    for _ in range(5):  # m, λ(I_c) and ‖c − p‖ inside the ranges, a Θ no sample is
        direction = rng.normal(size=(n, 3))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        com = ranges.center + direction * (ranges.radius * rng.uniform(0, 1, n))[:, None]
        mass = rng.uniform(ranges.mass_min, ranges.mass_max)
        eig = rng.uniform(ranges.inertia_min[:, None], ranges.inertia_max[:, None], (n, 3))
        rot = np.linalg.qr(rng.normal(size=(n, 3, 3)))[0]
        inside.append([phi_from_mass_com_inertia(mass[l], com[l],
                                                 rot[l] @ np.diag(eig[l]) @ rot[l].T)
                       for l in range(n)])
    for theta in (*band, *np.array(inside)):
        z = spatial_inertia(theta)
        scale = np.linalg.norm(z, axis=(1, 2))
        assert np.all(np.linalg.eigvalsh(z - low)[:, 0] >= -1e-12 * scale)
        assert np.all(np.linalg.eigvalsh(up - z)[:, 0] >= -1e-12 * scale)
    # the band's blocks are weaker than the nominal's: a moving COM has a price
    nominal = com_block_lower(band[0])
    assert np.all(np.linalg.eigvalsh(np.swapaxes(nominal, 1, 2) @ nominal - low)[:, 0]
                  >= -1e-12 * np.linalg.norm(low, axis=(1, 2)))


@pytest.mark.parametrize("name", ARMS)
def test_com_block_chain_on_random_q_and_theta(arms: dict[str, RobotModel], name: str) -> None:
    """λ_min(M) ≥ COM block ≥ scalar ≥ paper, and λ_max(M) ≤ COM block ≤ scalar ≤ paper.

    Pointwise at every sampled q, and for the sampled-box values (min / max over the
    sample). "COM block ≥ scalar" is not a theorem (docs/concepts.md): it is what the block
    is for, asserted on these arms and draws.
    """
    model = arms[name]
    rng = np.random.default_rng(13)
    qs = random_q(model, rng, 60)
    jac = jacobians(model, qs)
    jtj = np.linalg.eigvalsh(np.einsum("klri,klrj->kij", jac, jac))
    for theta in (model.theta_nominal, *(random_consistent_theta(model.n_bodies, rng, 0.5)
                                         for _ in range(2))):
        lam = crba_eigenvalues(model, theta, qs)
        block_low = gram(jac, com_block_lower(theta))[:, 0]
        block_up = gram(jac, com_block_upper(theta))[:, -1]
        zmin, zmax = spatial_inertia_extremes(theta)
        eye = np.tile(np.eye(6), (model.n_bodies, 1, 1))
        scalar_low = gram(jac, np.sqrt(zmin)[:, None, None] * eye)[:, 0]
        scalar_up = gram(jac, np.sqrt(zmax)[:, None, None] * eye)[:, -1]
        paper_low = np.min(consistency_margin(theta)) * jtj[:, 0]
        paper_up = 2 * np.max(consistency_size(theta)) * jtj[:, -1]
        tol = 1e-9 * lam[:, -1]
        assert np.all(lam[:, 0] >= block_low - tol)
        assert np.all(block_low >= scalar_low - tol)
        assert np.all(scalar_low >= paper_low - tol)
        assert np.all(lam[:, -1] <= block_up + tol)
        assert np.all(block_up <= scalar_up + tol)
        assert np.all(scalar_up <= paper_up + tol)
        # the sampled-box versions: inf / sup over the sample
        assert lam[:, 0].min() >= block_low.min() >= scalar_low.min() >= paper_low.min()
        assert lam[:, -1].max() <= block_up.max() <= scalar_up.max() <= paper_up.max()


@pytest.mark.parametrize("name", ["ur5", "panda_locked"])
def test_weighted_bounds_pick_the_com_block_within_a_factor_2(
        arms: dict[str, RobotModel], name: str) -> None:
    """The nominal URDF: the COM block is chosen, α₁ʷ within 2× of λ_min(M), α₂ʷ of λ_max."""
    model = arms[name]
    w = weighted_bounds(model, samples=512)
    assert w.lower.weights == COM_BLOCK and w.upper.weights == COM_BLOCK
    lam = crba_eigenvalues(model, model.theta_nominal,
                           random_q(model, np.random.default_rng(3), 500))
    assert 0.5 * lam[:, 0].min() <= w.alpha1
    assert w.alpha2 <= 2.0 * lam[:, -1].max()
    assert w.lower_candidates[COM_BLOCK] > w.lower_candidates["scalar"]
    assert w.upper_candidates[COM_BLOCK] < w.upper_candidates["scalar"]


def test_an_inconsistent_body_has_no_com_block(arms: dict[str, RobotModel]) -> None:
    theta = np.array(arms["ur5"].theta_nominal)
    theta[2, 4] = -1.0  # I_11 < 0: Z(Φ) indefinite
    with pytest.raises(InvalidInputError, match="inconsistent"):
        com_block_lower(theta)
    with pytest.raises(InvalidInputError, match="inconsistent"):
        com_block_upper(theta)
    # the candidates of weighted_bounds leave it out (as before the COM block existed)
    assert COM_BLOCK not in dict(lower_weight_candidates(theta))
    assert COM_BLOCK not in dict(upper_weight_candidates(theta))


def test_the_com_block_and_the_scalar_weight_are_not_ordered_nor_bounded_by_the_margins():
    """docs/concepts.md: L_l − z_l I₆ indefinite for every body drawn; λ_min(L_l) ≥ μ_l and
    λ_max(U_l) ≤ 2ν_l each fail for some: "COM block ≥ scalar ≥ paper" is no theorem."""
    theta = random_consistent_theta(2000, np.random.default_rng(0))
    lower, upper = com_block_lower(theta), com_block_upper(theta)
    lower_block = np.swapaxes(lower, 1, 2) @ lower
    upper_block = np.swapaxes(upper, 1, 2) @ upper
    zmin, _ = spatial_inertia_extremes(theta)
    difference = np.linalg.eigvalsh(lower_block - zmin[:, None, None] * np.eye(6))
    assert np.all((difference[:, 0] < 0.0) & (difference[:, -1] > 0.0))
    mu = np.array([consistency_margin(phi) for phi in theta])
    nu = np.array([consistency_size(phi) for phi in theta])
    assert np.any(np.linalg.eigvalsh(lower_block)[:, 0] < mu)
    assert np.any(np.linalg.eigvalsh(upper_block)[:, -1] > 2.0 * nu)
