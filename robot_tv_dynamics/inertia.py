r"""Inertial parameters Φ of one rigid body and their physical consistency.

Φ is stored in the paper's eq. (7) order

.. math::
    \Phi = (m, h_1, h_2, h_3, I_{11}, I_{22}, I_{33}, I_{12}, I_{23}, I_{13})

with the first moment :math:`h = m c` and the inertia matrix :math:`I` about the
**body-frame origin** (not the centre of mass), all in body coordinates
[kg, kg·m, kg·m²]. Functions taking ``phi`` accept one vector (10,) or a stack
(..., 10) and return stacked results.

The pseudo-inertia :math:`f(\Phi)` of eq. (9) is the second-moment matrix
:math:`\int \rho\,[x; 1][x; 1]^\top dx`; Theorem 1: Φ comes from a non-negative
density with m > 0 iff :math:`f(\Phi) \succ 0`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pinocchio as pin

from robot_tv_dynamics.arrays import Array, check_finite, skew
from robot_tv_dynamics.exceptions import InvalidInputError, PhysicalConsistencyError

#: Index of each entry of Φ in eq. (7) order.
M, H1, H2, H3, I11, I22, I33, I12, I23, I13 = range(10)

#: Pinocchio ``toDynamicParameters()`` order is (m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz);
#: ``phi = dyn[PINOCCHIO_TO_PHI]`` and ``dyn = phi[PHI_TO_PINOCCHIO]``.
PINOCCHIO_TO_PHI = np.array([0, 1, 2, 3, 4, 6, 9, 5, 8, 7])
PHI_TO_PINOCCHIO = np.argsort(PINOCCHIO_TO_PHI)


def _check_phi(phi: npt.ArrayLike, argument: str = "phi") -> Array:
    array = np.asarray(phi, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != 10:
        raise InvalidInputError(argument, f"expected shape (..., 10), got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InvalidInputError(argument, "contains NaN or Inf")
    return array


def inertia_matrix(phi: npt.ArrayLike) -> Array:
    """The 3×3 inertia matrix I about the body-frame origin (eq. 6) [kg·m²]."""
    phi = _check_phi(phi)
    out = np.empty(phi.shape[:-1] + (3, 3))
    out[..., 0, 0], out[..., 1, 1], out[..., 2, 2] = phi[..., I11], phi[..., I22], phi[..., I33]
    out[..., 0, 1] = out[..., 1, 0] = phi[..., I12]
    out[..., 1, 2] = out[..., 2, 1] = phi[..., I23]
    out[..., 0, 2] = out[..., 2, 0] = phi[..., I13]
    return out


def phi_from_parts(mass: npt.ArrayLike, h: npt.ArrayLike, inertia: npt.ArrayLike) -> Array:
    """Assemble Φ (eq. 7) from m [kg], h = m·c [kg·m] and I about the origin [kg·m²]."""
    mass = np.asarray(mass, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    inertia = np.asarray(inertia, dtype=np.float64)
    out = np.empty(mass.shape + (10,))
    out[..., M] = mass
    out[..., H1:H3 + 1] = h
    out[..., I11], out[..., I22], out[..., I33] = (
        inertia[..., 0, 0], inertia[..., 1, 1], inertia[..., 2, 2])
    out[..., I12], out[..., I23], out[..., I13] = (
        inertia[..., 0, 1], inertia[..., 1, 2], inertia[..., 0, 2])
    return out


def pseudo_inertia(phi: npt.ArrayLike) -> Array:
    r"""Pseudo-inertia f(Φ) of eq. (9), a symmetric 4×4 matrix.

    .. math::
        f(\Phi) = \begin{pmatrix} \Sigma & h \\ h^\top & m \end{pmatrix},\quad
        \Sigma = \tfrac12 \mathrm{tr}(I) \mathrm{I}_3 - I

    Linear in Φ: one product with :data:`PSEUDO_BASIS` (built from the formula above).

    Args:
        phi: inertial parameters, (10,) or (..., 10), eq. (7) order, about the body
            frame origin [kg, kg·m, kg·m²].

    Returns:
        f(Φ), (4, 4) or (..., 4, 4).
    """
    phi = _check_phi(phi)
    return (phi @ _PSEUDO_FLAT).reshape(phi.shape[:-1] + (4, 4))


def _pseudo_inertia_of_basis() -> Array:
    """f(e_h) for each basis vector e_h of ℝ¹⁰ by eq. (9) term by term, (10, 4, 4)."""
    phi = np.eye(10)
    inertia = inertia_matrix(phi)
    trace = np.trace(inertia, axis1=-2, axis2=-1)
    out = np.empty((10, 4, 4))
    out[:, :3, :3] = 0.5 * trace[:, None, None] * np.eye(3) - inertia
    out[:, :3, 3] = phi[:, H1:H3 + 1]
    out[:, 3, :3] = phi[:, H1:H3 + 1]
    out[:, 3, 3] = phi[:, M]
    return out


#: f(e_h) for each basis vector e_h of ℝ¹⁰: f(Φ) = Σ_h Φ_h PSEUDO_BASIS[h], (10, 4, 4).
PSEUDO_BASIS: Array = _pseudo_inertia_of_basis()
PSEUDO_BASIS.setflags(write=False)
_PSEUDO_FLAT = PSEUDO_BASIS.reshape(10, 16)


def phi_from_pseudo_inertia(f: npt.ArrayLike) -> Array:
    """Inverse of :func:`pseudo_inertia`: Φ from f (symmetrised), with I = tr(Σ) I₃ − Σ."""
    matrix = np.asarray(f, dtype=np.float64)
    if matrix.ndim < 2 or matrix.shape[-2:] != (4, 4):
        raise InvalidInputError("f", f"expected shape (..., 4, 4), got {matrix.shape}")
    matrix = 0.5 * (matrix + np.swapaxes(matrix, -1, -2))
    sigma = matrix[..., :3, :3]
    trace = np.trace(sigma, axis1=-2, axis2=-1)
    inertia = trace[..., None, None] * np.eye(3) - sigma
    return phi_from_parts(matrix[..., 3, 3], matrix[..., :3, 3], inertia)


def spatial_inertia(phi: npt.ArrayLike) -> Array:
    r"""Spatial inertia Z(Φ) of eq. (24), 6×6, acting on (v, ω) linear first.

    .. math::
        Z(\Phi) = \begin{pmatrix} m \mathrm{I}_3 & -S(h) \\ -S(h)^\top & I \end{pmatrix}

    Linear in Φ, so it is exact for any Φ (rates Φ̇, regressor basis vectors): one product
    with :data:`SPATIAL_BASIS` (each entry of Z is ±one entry of Φ, so the product is exact).

    Args:
        phi: (10,) or (..., 10), eq. (7) order, about the body frame origin.

    Returns:
        Z(Φ), (6, 6) or (..., 6, 6) [kg, kg·m, kg·m²].
    """
    phi = _check_phi(phi)
    return (phi @ _SPATIAL_FLAT).reshape(phi.shape[:-1] + (6, 6))


def _spatial_inertia_of_basis() -> Array:
    """Z(e_h) for each basis vector e_h of ℝ¹⁰ by eq. (24) block by block, (10, 6, 6)."""
    phi = np.eye(10)
    out = np.zeros((10, 6, 6))
    out[:, 0, 0] = out[:, 1, 1] = out[:, 2, 2] = phi[:, M]
    s = skew(phi[:, H1:H3 + 1])
    out[:, :3, 3:] = -s
    out[:, 3:, :3] = s  # -S(h)^T = S(h)
    out[:, 3:, 3:] = inertia_matrix(phi)
    return out


#: Z(e_h) for each basis vector e_h of ℝ¹⁰: Z(Φ) = Σ_h Φ_h SPATIAL_BASIS[h], (10, 6, 6).
SPATIAL_BASIS: Array = _spatial_inertia_of_basis()
SPATIAL_BASIS.setflags(write=False)
_SPATIAL_FLAT = SPATIAL_BASIS.reshape(10, 36)


def consistency_margin(phi: npt.ArrayLike) -> Array | float:
    """Margin μ = λ_min(f(Φ)) [kg·m² or kg]: > 0 iff physically consistent (Theorem 1)."""
    values = np.asarray(np.linalg.eigvalsh(pseudo_inertia(phi))[..., 0], dtype=np.float64)
    return float(values) if values.ndim == 0 else values


def consistency_size(phi: npt.ArrayLike) -> Array | float:
    """Size ν = λ_max(f(Φ)), the quantity Definition 3 asks to stay bounded."""
    values = np.asarray(np.linalg.eigvalsh(pseudo_inertia(phi))[..., -1], dtype=np.float64)
    return float(values) if values.ndim == 0 else values


def require_realizable(phi: npt.ArrayLike, what: str) -> Array:
    """Φ if some non-negative mass distribution has it (f(Φ) ⪰ 0, point masses allowed).

    Theorem 1's boundary is admitted (a point mass or a rod has a singular f), up to
    rounding of 1e-12 relative to the largest entry of Φ.

    Args:
        phi: (10,), eq. (7) order.
        what: the parameters' name in the error message (e.g. a payload link).

    Returns:
        ``phi`` as a float array.

    Raises:
        PhysicalConsistencyError: f(Φ) has a negative eigenvalue (negative mass, an
            inertia violating the triangle inequality, …).
    """
    phi = check_finite(phi, f"{what} phi", (10,))
    margin = float(np.linalg.eigvalsh(pseudo_inertia(phi))[0])
    if margin < -1e-12 * max(1.0, float(np.abs(phi).max())):
        raise PhysicalConsistencyError(
            what, "mass, centre of mass and inertia describe no physical body (the "
            f"pseudo-inertia f(Φ) has eigenvalue {margin:.3g} < 0, Theorem 1; e.g. the "
            "triangle inequality of the principal moments fails)")
    return phi


def is_physically_consistent(phi: npt.ArrayLike, tolerance: float = 0.0) -> bool:
    """Theorem 1: Φ is physically consistent iff f(Φ) ≻ 0.

    Args:
        phi: one body's parameters (10,), eq. (7) order.
        tolerance: required margin; returns ``λ_min(f(Φ)) > tolerance``. A negative
            tolerance accepts the boundary (point masses, rods) up to rounding.

    Returns:
        Whether every eigenvalue of f(Φ) exceeds ``tolerance``.
    """
    phi = check_finite(phi, "phi", (10,))
    return bool(np.linalg.eigvalsh(pseudo_inertia(phi))[0] > tolerance)


def phi_from_point_masses(masses: npt.ArrayLike, positions: npt.ArrayLike) -> Array:
    """Φ of point masses by eq. (8): m = Σ mᵢ, h = Σ mᵢ xᵢ, I = Σ mᵢ S(xᵢ)ᵀ S(xᵢ).

    Args:
        masses: (P,) non-negative masses [kg] (a discretised density ρ).
        positions: (P, 3) positions in the body frame [m].

    Returns:
        Φ, (10,).
    """
    masses = check_finite(masses, "masses", (None,))
    positions = check_finite(positions, "positions", (masses.shape[0], 3))
    if np.any(masses < 0):
        raise PhysicalConsistencyError("masses", "a density cannot be negative")
    s = skew(positions)
    inertia = np.einsum("p,pji,pjk->ik", masses, s, s)
    return phi_from_parts(masses.sum(), masses @ positions, inertia)


def transform_phi(phi: npt.ArrayLike, rotation: npt.ArrayLike, translation: npt.ArrayLike) -> Array:
    """Φ of the same mass distribution seen from another frame.

    If a point has coordinates x in frame A and ``x_B = rotation @ x + translation``
    in frame B, the pseudo-inertia maps as f_B = X f_A Xᵀ with X = [[R, p], [0, 1]];
    the map is linear in Φ, so it is exact for rates and non-consistent vectors too.

    Args:
        phi: Φ in frame A, (10,) or (..., 10).
        rotation: R, (3, 3), orientation of A in B.
        translation: p, (3,), origin of A in B [m].

    Returns:
        Φ in frame B, same shape as ``phi``.
    """
    transform = np.eye(4)
    transform[:3, :3] = check_finite(rotation, "rotation", (3, 3))
    transform[:3, 3] = check_finite(translation, "translation", (3,))
    f = pseudo_inertia(phi)
    return phi_from_pseudo_inertia(transform @ f @ transform.T)


def transform_psi(psi: npt.ArrayLike, rotation: npt.ArrayLike, translation: npt.ArrayLike) -> Array:
    """Ψ of eq. (27) for the same moving particles seen from another frame.

    ψ = ∫σρ [𝓋; A₃,₁(x)𝓋], whose last nine entries are the columns of O = ∫σρ x 𝓋ᵀ
    stacked. With ``x_B = R x + p`` and ``𝓋_B = R 𝓋`` (a fixed transform),
    ψ_lin' = R ψ_lin and O' = R O Rᵀ + p (R ψ_lin)ᵀ: linear, so exact for Ψ̇ too.

    Args:
        psi: ψ in frame A, (12,) or (..., 12) [kg·m/s, kg·m²/s].
        rotation: R, (3, 3), orientation of A in B.
        translation: p, (3,), origin of A in B [m].

    Returns:
        ψ in frame B, same shape.
    """
    psi = np.asarray(psi, dtype=np.float64)
    if psi.ndim == 0 or psi.shape[-1] != 12:
        raise InvalidInputError("psi", f"expected shape (..., 12), got {psi.shape}")
    rotation = check_finite(rotation, "rotation", (3, 3))
    translation = check_finite(translation, "translation", (3,))
    linear = psi[..., :3] @ rotation.T
    outer = np.swapaxes(psi[..., 3:].reshape(psi.shape[:-1] + (3, 3)), -1, -2)  # O[i, j]
    moved = rotation @ outer @ rotation.T + translation[:, None] * linear[..., None, :]
    out = np.empty_like(psi)
    out[..., :3] = linear
    out[..., 3:] = np.swapaxes(moved, -1, -2).reshape(psi.shape[:-1] + (9,))
    return out


def phi_from_mass_com_inertia(
    mass: float, com: npt.ArrayLike, inertia_com: npt.ArrayLike, *, what: str = "inertia"
) -> Array:
    """Φ from (mass, centre of mass, inertia about the COM), as geometry_msgs/Inertia holds it.

    The COM inertia is given in axes parallel to the body frame; the parallel-axis
    theorem moves it to the origin: I = I_c + m S(c)ᵀ S(c).

    Args:
        mass: m [kg], must be ≥ 0.
        com: c, (3,), in the body frame [m].
        inertia_com: (3, 3) symmetric, about the COM [kg·m²].
        what: name used in error messages (a link name).

    Returns:
        Φ, (10,).

    Raises:
        PhysicalConsistencyError: negative mass.
        InvalidInputError: wrong shapes or non-finite values.
    """
    mass = float(check_finite(mass, f"{what}.mass", ()))
    if mass < 0:
        raise PhysicalConsistencyError(what, f"mass {mass} kg is negative")
    com = check_finite(com, f"{what}.com", (3,))
    inertia_com = check_finite(inertia_com, f"{what}.inertia", (3, 3))
    s = skew(com)
    inertia = 0.5 * (inertia_com + inertia_com.T) + mass * s.T @ s
    return phi_from_parts(mass, mass * com, inertia)


def mass_com_inertia_from_phi(phi: npt.ArrayLike) -> tuple[float, Array, Array]:
    """Inverse of :func:`phi_from_mass_com_inertia` (requires m > 0).

    Returns:
        (mass [kg], COM (3,) [m], inertia about the COM (3, 3) [kg·m²]).
    """
    phi = check_finite(phi, "phi", (10,))
    mass = phi[M]
    if mass <= 0:
        raise PhysicalConsistencyError("phi", f"mass {mass} kg has no centre of mass")
    com = phi[H1:H3 + 1] / mass
    s = skew(com)
    return float(mass), com, inertia_matrix(phi) - mass * s.T @ s


def rpy_to_rotation(rpy: Sequence[float]) -> Array:
    """URDF roll-pitch-yaw (fixed axes X, Y, Z) to a rotation matrix Rz·Ry·Rx."""
    return np.asarray(pin.rpy.rpyToMatrix(*map(float, rpy)), dtype=np.float64)


def phi_from_urdf_inertial(
    mass: float,
    xyz: Sequence[float],
    rpy: Sequence[float],
    ixx: float, ixy: float, ixz: float, iyy: float, iyz: float, izz: float,
    *,
    what: str = "inertial",
) -> Array:
    """Φ in the link frame from a URDF ``<inertial>`` element.

    URDF gives the inertia about the COM in a frame rotated by ``rpy`` and placed at
    ``xyz``; the inertia is rotated to link axes, then moved to the link origin.

    Args:
        mass: ``<mass value>`` [kg].
        xyz: ``<origin xyz>`` [m].
        rpy: ``<origin rpy>`` [rad].
        ixx: ``<inertia>`` entries [kg·m²], and likewise ``ixy`` … ``izz``.
        ixy: see ``ixx``.
        ixz: see ``ixx``.
        iyy: see ``ixx``.
        iyz: see ``ixx``.
        izz: see ``ixx``.
        what: name used in error messages (the link name).

    Returns:
        Φ, (10,), about the link frame origin.
    """
    rotation = rpy_to_rotation(rpy)
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=np.float64)
    return phi_from_mass_com_inertia(mass, xyz, rotation @ inertia @ rotation.T, what=what)


def phi_from_pinocchio(inertia: pin.Inertia) -> Array:
    """Φ (eq. 7 order) from a Pinocchio ``Inertia`` (a reorder of ``toDynamicParameters``)."""
    return np.asarray(inertia.toDynamicParameters(), dtype=np.float64)[PINOCCHIO_TO_PHI]


def phi_to_pinocchio(phi: npt.ArrayLike) -> pin.Inertia:
    """Pinocchio ``Inertia`` from Φ. Needs m ≠ 0 (Pinocchio stores the COM, h/m)."""
    phi = check_finite(phi, "phi", (10,))
    if phi[M] == 0.0:
        raise PhysicalConsistencyError("phi", "Pinocchio cannot hold a zero-mass Φ")
    return pin.Inertia.FromDynamicParameters(phi[PHI_TO_PINOCCHIO])


def project_uniformly_consistent(
    phi: npt.ArrayLike, epsilon: float, beta: float | None = None
) -> Array:
    """Project Φ onto the uniformly consistent set {ε I ⪯ f(Φ) ⪯ β I} (β = None: no cap).

    Clipping the eigenvalues of f(Φ) to [ε, β] gives the nearest point of the set in
    the Frobenius norm of f (Φ ↦ f(Φ) is linear and invertible, so this is a
    projection in Φ-space for the metric it induces). Idempotent.

    Args:
        phi: (10,) or (..., 10).
        epsilon: lower eigenvalue bound ε > 0.
        beta: upper eigenvalue bound β ≥ ε, or None for {ε I ⪯ f(Φ)} alone.

    Returns:
        The projected Φ, same shape.
    """
    if beta is None:
        beta = np.inf
    elif not np.isfinite(beta):
        raise InvalidInputError("epsilon, beta", f"beta must be finite or None, got {beta}")
    if not np.isfinite(epsilon) or not 0.0 < epsilon <= beta:
        raise InvalidInputError("epsilon, beta", f"need 0 < epsilon <= beta, got {epsilon}, {beta}")
    values, vectors = np.linalg.eigh(pseudo_inertia(phi))
    if np.all(values >= epsilon) and np.all(values <= beta):
        return np.array(phi, dtype=np.float64)
    clipped = np.clip(values, epsilon, beta)
    f = np.einsum("...ij,...j,...kj->...ik", vectors, clipped, vectors)
    return phi_from_pseudo_inertia(f)
