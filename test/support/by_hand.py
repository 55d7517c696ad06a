"""Inertial quantities written out from Φ in eq. (7) order, without the package's code.

Φ = (m, h1, h2, h3, I11, I22, I33, I12, I23, I13): mass, first moment, inertia about the
body frame's origin. Tests compare the package's results with these.
"""

from __future__ import annotations

import numpy as np


def _inertia(phi: np.ndarray) -> np.ndarray:
    return np.array([[phi[4], phi[7], phi[9]], [phi[7], phi[5], phi[8]],
                     [phi[9], phi[8], phi[6]]])


def margin_by_hand(phi: np.ndarray) -> float:
    """λ_min of the pseudo-inertia f(Φ) = [[½ tr(I) 𝟙 − I, h], [hᵀ, m]] (eq. (9))."""
    inertia = _inertia(phi)
    f = np.zeros((4, 4))
    f[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    f[:3, 3] = f[3, :3] = phi[1:4]
    f[3, 3] = phi[0]
    return float(np.linalg.eigvalsh(f)[0])


def z_by_hand(theta: np.ndarray) -> np.ndarray:
    """Z(Φ) = [[m I, −S(h)], [S(h), I_o]] (eq. 24) per body, (N, 6, 6)."""
    out = np.zeros((theta.shape[0], 6, 6))
    for l, phi in enumerate(theta):
        h1, h2, h3 = phi[1:4]
        s = np.array([[0.0, -h3, h2], [h3, 0.0, -h1], [-h2, h1, 0.0]])
        out[l, :3, :3] = phi[0] * np.eye(3)
        out[l, :3, 3:] = -s
        out[l, 3:, :3] = s
        out[l, 3:, 3:] = _inertia(phi)
    return out
