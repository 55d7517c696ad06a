"""The rated-payload size bound: no load within the rating exceeds it (point clouds)."""

from __future__ import annotations

import numpy as np
import pytest

from robot_tv_dynamics.consistency.rated import rated_size_bound
from robot_tv_dynamics.exceptions import InvalidInputError


def _size(phi_body, masses, points):
    """λ_max of f(Φ_b) + Σ m_k x̃_k x̃_kᵀ, f(Φ_b) written out from Φ_b (eq. 9)."""
    m, h = phi_body[0], phi_body[1:4]
    i11, i22, i33, i12, i23, i13 = phi_body[4:10]
    inertia = np.array([[i11, i12, i13], [i12, i22, i23], [i13, i23, i33]])
    f = np.zeros((4, 4))
    f[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    f[:3, 3] = f[3, :3] = h
    f[3, 3] = m
    for mass, x in zip(masses, points, strict=True):
        x1 = np.append(x, 1.0)
        f += mass * np.outer(x1, x1)
    return float(np.linalg.eigvalsh(f)[-1])


def test_no_load_within_the_rating_exceeds_the_bound(ur5):
    body = ur5.body_names.index("wrist_3_link")
    at = ur5.link_attachment("tool0")
    phi = np.asarray(ur5.theta_nominal[body])
    bound = rated_size_bound(phi, 5.0, at.translation, 0.1)
    rng = np.random.default_rng(4)
    worst = 0.0
    for _ in range(300):
        k = rng.integers(1, 6)
        masses = rng.dirichlet(np.ones(k)) * rng.uniform(0.0, 5.0)
        directions = rng.normal(size=(k, 3))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        points = at.translation + directions * 0.1 * rng.uniform(0, 1, (k, 1)) ** (1 / 3)
        worst = max(worst, _size(phi, masses, points))
    assert worst <= bound
    # all 5 kg at the far end of the ball, away from the body origin: within 1 %
    far = at.translation + 0.1 * at.translation / np.linalg.norm(at.translation)
    assert _size(phi, [5.0], [far]) > 0.99 * bound
    # 12 kg at tool0's origin is past twice the bound (the ERROR threshold with warn_band 1)
    assert _size(phi, [12.0], [at.translation]) > 2.0 * bound


def test_negative_mass_or_radius_is_refused():
    with pytest.raises(InvalidInputError, match="rated_payload"):
        rated_size_bound(np.zeros(10), -1.0, np.zeros(3), 0.1)
    with pytest.raises(InvalidInputError, match="rated_payload_distance"):
        rated_size_bound(np.zeros(10), 1.0, np.zeros(3), float("nan"))
