r"""Per-body weights of the weighted mass-matrix bound: scalar and 2×2 block.

With Z_l = Z(Φ_l) the 6×6 spatial inertia of body l in its joint frame (eq. 24) and
J_l its LOCAL body Jacobian, M(q, Θ) = Σ_l J_lᵀ Z_l J_l (eq. 31). Any constant
L_l ⪯ Z_l ⪯ U_l gives Σ_l J_lᵀ L_l J_l ⪯ M(q, Θ) ⪯ Σ_l J_lᵀ U_l J_l for every q;
the searches of :mod:`robot_tv_dynamics.bounds.mass` take the square roots W_l with
W_lᵀW_l = L_l (or U_l) as row weights of the stacked Jacobian. This module builds them:

- scalar: L_l = z_l I₆, U_l = Z̄_l I₆ with z_l = λ_min(Z_l), Z̄_l = λ_max(Z_l); the
  paper's proofs give z_l ≥ μ_l = λ_min(f(Φ_l)) and Z̄_l ≤ 2 ν_l (Theorems 2, 3), so
  margins alone (μ_l for z_l) also give a valid, weaker weight;
- block: L_l = diag(a I₃, b I₃) (translational, rotational) with a = t m and
  b = λ_min(I_o + S(h)²/((1 − t) m)) for a t ∈ [0, 1) (Schur complement of
  Z_l − L_l ⪰ 0, exact), and U_l = diag(A I₃, B I₃) with A = (1 + s) m,
  B = λ_max(I_o − S(h)²/(s m)) for an s > 0 — a prismatic finger is weighted by its
  mass, not by its tiny rotational inertia.

- COM block (:func:`com_block_lower`, :func:`com_block_upper`): about each body's centre
  of mass c_l, Z(Φ_l) = X_cᵀ diag(m_l I₃, I_c,l) X_c with X_c = [[I₃, −S(c_l)], [0, I₃]]
  (the twist moved to the COM), so L_l = X_cᵀ diag(m I₃, λ_min(I_c) I₃) X_c and
  U_l = X_cᵀ diag(m I₃, λ_max(I_c) I₃) X_c: the translational part exact, only the
  anisotropy of the centroidal inertia lost. Over a band (m, λ(I_c) and the COM in
  ranges, :class:`ComBand`) both blocks lose a common factor that grows with how far the
  COM moves (docs/concepts.md, "COM block weight").

- axis-symmetric (:func:`axis_symmetric_bound`): a weight below (above) one body's that
  commutes with the turn about its joint axis, so a Gram matrix built with it does not
  depend on that joint when the body has no child (the certified searches use it to
  drop such a joint again).

Weights over a loading band are the elementwise inf (lower) / sup (upper) over the
band's samples of Θ(t).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import skew
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, inertia_matrix, spatial_inertia

#: Relative safety applied to every weight against rounding (lower ×(1 − ·), upper ×(1 + ·)).
_SAFETY = 1e-9
#: Candidate fractions ρ of the rotational weight kept by the lower block (per body t_l
#: with b_l(t_l) = ρ b_l(0)) and s of the upper block; the best is chosen by sampling.
BLOCK_RHO = (0.1, 0.25, 0.5, 0.75, 0.9)
BLOCK_S = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)


def _band(theta: npt.ArrayLike) -> Array:
    """Θ as (K, N, 10): one Θ or a band of K samples."""
    band = np.asarray(theta, dtype=np.float64)
    if band.ndim == 2:
        band = band[None]
    if band.ndim != 3 or band.shape[-1] != 10 or not np.all(np.isfinite(band)):
        raise InvalidInputError("theta", f"must be finite (N, 10) or (K, N, 10), "
                                f"got shape {band.shape}")
    return band


def spatial_inertia_extremes(theta: npt.ArrayLike) -> tuple[Array, Array]:
    """z_l = inf over the band of λ_min(Z(Φ_l)) and Z̄_l = sup of λ_max(Z(Φ_l)), (N,) each.

    Args:
        theta: Θ (N, 10) or a band of samples Θ(t_k), (K, N, 10).
    """
    eig = np.linalg.eigvalsh(spatial_inertia(_band(theta)))
    return np.min(eig[..., 0], axis=0), np.max(eig[..., -1], axis=0)


def scalar_weights(values: npt.ArrayLike) -> Array:
    """Row weights √w_l I₆, (N, 6, 6), of scalar body weights w_l ≥ 0 (N,).

    Raises:
        InvalidInputError: a negative weight (an inconsistent body: no bound follows).
    """
    w = np.asarray(values, dtype=np.float64)
    if np.any(w < 0.0) or not np.all(np.isfinite(w)):
        raise InvalidInputError("weights", "body weights must be finite and ≥ 0 (a negative "
                                "one means an inconsistent body: Theorem 2 does not apply)")
    return np.sqrt(w)[:, None, None] * np.eye(6)


def block_weights(trans: npt.ArrayLike, rot: npt.ArrayLike) -> Array:
    """Row weights diag(√a I₃, √b I₃), (N, 6, 6), of block weights a, b ≥ 0 (N,) each."""
    a = np.asarray(trans, dtype=np.float64)
    b = np.asarray(rot, dtype=np.float64)
    if np.any(a < 0.0) or np.any(b < 0.0):
        raise InvalidInputError("weights", "block weights must be ≥ 0")
    out = np.zeros(a.shape + (6, 6))
    idx = np.arange(3)
    out[:, idx, idx] = np.sqrt(a)[:, None]
    out[:, idx + 3, idx + 3] = np.sqrt(b)[:, None]
    return out


def lower_block(theta: npt.ArrayLike, t: float) -> tuple[Array, Array]:
    """(a, b) with diag(a I₃, b I₃) ⪯ Z(Φ_l(τ)) for every sample τ of the band, (N,) each.

    a = t m, b = λ_min(I_o + S(h)²/((1 − t) m)); a body with m ≤ 0 gets the scalar
    λ_min(Z) in both blocks.
    """
    if not 0.0 <= t < 1.0:
        raise InvalidInputError("t", f"must be in [0, 1), got {t!r}")
    return lower_single(theta, t)


def lower_block_keep(theta: npt.ArrayLike, rho: float) -> tuple[Array, Array]:
    """:func:`lower_block` with a t_l per body: the largest t with b_l(t) ≥ ρ b_l(0).

    b_l(t) = λ_min(I_o + S(h)²/((1 − t) m)) decreases from λ_min of the centroidal
    inertia at t = 0; the rotational weight keeps the fraction ρ of it and the
    translational weight a_l = t_l m_l gets the rest (bisection; the bound holds for any
    t, only its tightness depends on the choice). Bands use the nominal sample's t_l.
    """
    if not 0.0 < rho < 1.0:
        raise InvalidInputError("rho", f"must be in (0, 1), got {rho!r}")
    band = _band(theta)
    n = band.shape[1]
    lo, hi = np.zeros(n), np.full(n, 1.0 - 1e-12)
    b0 = lower_single(band, np.zeros(n))[1]
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = lower_single(band, mid)[1] >= rho * b0
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return lower_single(band, lo)


def lower_single(theta: npt.ArrayLike, t: npt.ArrayLike) -> tuple[Array, Array]:
    """(a, b) of :func:`lower_block` with one t_l ∈ [0, 1) per body, (N,)."""
    band = _band(theta)
    tt = np.broadcast_to(np.asarray(t, dtype=np.float64), band.shape[1])
    if np.any(tt < 0.0) or np.any(tt >= 1.0):
        raise InvalidInputError("t", "must be in [0, 1)")
    mass = band[..., 0]
    s = skew(band[..., 1:4])
    safe = np.where(mass > 0.0, mass, 1.0)
    rot = inertia_matrix(band) + (s @ s) / ((1.0 - tt) * safe)[..., None, None]
    b = np.linalg.eigvalsh(rot)[..., 0]
    a = tt * mass
    zmin = np.linalg.eigvalsh(spatial_inertia(band))[..., 0]
    # b < 0: this t is too large for the body (Z − diag(a, 0) would be indefinite); the
    # scalar z_l I₆ ⪯ Z stands in for it
    scalar = (mass <= 0.0) | (b < 0.0)
    a = np.where(scalar, zmin, a)
    b = np.where(scalar, zmin, b)
    shrink = 1.0 - _SAFETY
    return (np.maximum(np.min(a, axis=0) * shrink, 0.0),
            np.maximum(np.min(b, axis=0) * shrink, 0.0))


def upper_block(theta: npt.ArrayLike, s_factor: float) -> tuple[Array, Array]:
    """(A, B) with Z(Φ_l(τ)) ⪯ diag(A I₃, B I₃) for every sample τ of the band, (N,) each.

    A = (1 + s) m, B = λ_max(I_o − S(h)²/(s m)); a body with m ≤ 0 gets λ_max(Z).
    """
    if not s_factor > 0.0:
        raise InvalidInputError("s", f"must be > 0, got {s_factor!r}")
    band = _band(theta)
    mass = band[..., 0]
    s = skew(band[..., 1:4])
    safe = np.where(mass > 0.0, mass, 1.0)
    rot = inertia_matrix(band) - (s @ s) / (s_factor * safe)[..., None, None]
    big_b = np.linalg.eigvalsh(rot)[..., -1]
    big_a = (1.0 + s_factor) * mass
    zmax = np.linalg.eigvalsh(spatial_inertia(band))[..., -1]
    big_a = np.where(mass > 0.0, big_a, zmax)
    big_b = np.where(mass > 0.0, big_b, zmax)
    grow = 1.0 + _SAFETY
    return np.max(big_a, axis=0) * grow, np.max(big_b, axis=0) * grow


def exact_weights(theta: npt.ArrayLike) -> Array:
    """Z(Φ_l)^{1/2}, (N, 6, 6), for a constant consistent Θ: Σ J_lᵀ W_lᵀW_l J_l = M(q, Θ).

    Raises:
        InvalidInputError: Z(Φ_l) not positive semidefinite (an inconsistent body).
    """
    z = spatial_inertia(_band(theta)[0])
    w, v = np.linalg.eigh(z)
    if np.any(w[:, 0] < -1e-12 * np.maximum(w[:, -1], 1.0)):
        bad = [int(i) for i in np.flatnonzero(w[:, 0] < 0.0)]
        raise InvalidInputError("theta", f"Z(Φ) is not positive semidefinite for bodies "
                                f"{bad}: the load or model is physically inconsistent")
    return _square_root(w, v)


def square_root(gram: Array) -> Array:
    """Row weights W_l with W_lᵀW_l = L_l (symmetric square roots of PSD L_l), (N, 6, 6).

    Rounding-level negative eigenvalues count as 0.
    """
    return _square_root(*np.linalg.eigh(0.5 * (gram + np.swapaxes(gram, 1, 2))))


def _square_root(w: Array, v: Array) -> Array:
    return (v * np.sqrt(np.maximum(w, 0.0))[:, None, :]) @ np.swapaxes(v, 1, 2)


# ----------------------------------------------------------------------- COM block
@dataclass(frozen=True)
class ComBand:
    """Per-body ranges of a loading band, about a reference point near each COM.

    Every Θ(t) of the band is assumed to have, for each body l, m_l(t) in
    [mass_min, mass_max], the eigenvalues of its centroidal inertia I_c,l(t) in
    [inertia_min, inertia_max] and its COM c_l(t) within ``radius`` of ``center``; the
    COM block weights are then valid for every such Θ(t), sampled or not.

    Attributes:
        mass_min: inf_t m_l, (N,) [kg].
        mass_max: sup_t m_l, (N,) [kg].
        inertia_min: inf_t λ_min(I_c,l), (N,) [kg·m²] (I_c about the COM, body axes).
        inertia_max: sup_t λ_max(I_c,l), (N,) [kg·m²].
        center: the reference point p_l, (N, 3), in body l's joint frame [m].
        radius: sup_t ‖c_l(t) − p_l‖, (N,) [m] (0 for a constant Θ: p_l = c_l).
        massless: bodies with some m_l(t) ≤ 0 (no COM): they get the scalar weights.
    """

    mass_min: Array
    mass_max: Array
    inertia_min: Array
    inertia_max: Array
    center: Array
    radius: Array
    massless: Array


def com_band(theta: npt.ArrayLike) -> ComBand:
    """The :class:`ComBand` of Θ (N, 10) or of a band of samples Θ(t_k), (K, N, 10).

    The reference point p_l is the centre of the bounding box of the sampled COMs, the
    radius the largest distance of a sampled COM from it (so a constant Θ has p_l = c_l
    and radius 0, and the weights are the exact COM decomposition's).

    Raises:
        InvalidInputError: a body whose centroidal inertia is not positive semidefinite
            or whose Z(Φ_l) is indefinite (an inconsistent body: no bound follows).
    """
    band = _band(theta)
    mass = band[..., 0]
    massless = np.any(mass <= 0.0, axis=0)
    zmin = np.linalg.eigvalsh(spatial_inertia(band))[..., 0]
    scale = np.maximum(np.abs(mass), 1.0)
    bad = np.flatnonzero(np.any(zmin < -1e-12 * scale, axis=0))
    if bad.size:
        raise InvalidInputError("theta", f"Z(Φ) is not positive semidefinite for bodies "
                                f"{[int(i) for i in bad]}: the load or model is physically "
                                "inconsistent, no weighted bound follows")
    safe = np.where(mass > 0.0, mass, 1.0)
    com = np.where((mass > 0.0)[..., None], band[..., 1:4] / safe[..., None], 0.0)
    s = skew(com)
    centroidal = inertia_matrix(band) + mass[..., None, None] * (s @ s)
    eig = np.linalg.eigvalsh(centroidal)
    center = 0.5 * (np.min(com, axis=0) + np.max(com, axis=0))
    radius = np.max(np.linalg.norm(com - center[None], axis=-1), axis=0)
    return ComBand(mass_min=np.min(mass, axis=0), mass_max=np.max(mass, axis=0),
                   inertia_min=np.min(eig[..., 0], axis=0),
                   inertia_max=np.max(eig[..., -1], axis=0),
                   center=center, radius=radius, massless=massless)


def com_block_weights(trans: npt.ArrayLike, rot: npt.ArrayLike,
                      center: npt.ArrayLike) -> Array:
    """Row weights diag(√a I₃, √b I₃) X_p, (N, 6, 6), of the block diag(a, b) about p.

    X_p = [[I₃, −S(p)], [0, I₃]] moves a twist (v, ω) of the joint frame to the point p
    (same axes): v_p = v + ω × p. So W_lᵀW_l = X_pᵀ diag(a I₃, b I₃) X_p.

    Args:
        trans: a ≥ 0 per body, (N,) [kg].
        rot: b ≥ 0 per body, (N,) [kg·m²].
        center: p per body, (N, 3), in the body's joint frame [m].
    """
    p = np.asarray(center, dtype=np.float64)
    moved = np.tile(np.eye(6), (p.shape[0], 1, 1))
    moved[:, :3, 3:] = -skew(p)
    return block_weights(trans, rot) @ moved


def _with_scalar(band: ComBand, weights: Array, scalar: Array) -> Array:
    """``weights`` with the massless bodies' rows replaced by the scalar √z_l I₆."""
    out = np.array(weights)
    out[band.massless] = scalar_weights(np.maximum(scalar[band.massless], 0.0))
    return out


def _band_terms(theta: npt.ArrayLike, upper: bool) -> tuple[ComBand, Array, Array, Array, Array]:
    """What both COM blocks start from, for the lower (``upper=False``) or upper block.

    Returns:
        (the band, z_l or Z̄_l, the second-moment bound i (≥ 0), m̄ r², k = m̄ r² / i).
    """
    band = com_band(theta)
    zmin, zmax = spatial_inertia_extremes(theta)
    inertia = np.maximum(band.inertia_max if upper else band.inertia_min, 0.0)
    m_r2 = np.maximum(band.mass_max, 0.0) * band.radius ** 2
    k = m_r2 / np.where(inertia > 0.0, inertia, 1.0)
    return band, zmax if upper else zmin, inertia, m_r2, k


def com_block_lower(theta: npt.ArrayLike) -> Array:
    r"""Row weights of the lower COM block L_l ⪯ Z(Φ_l(t)) over the band, (N, 6, 6).

    About p_l (:func:`com_band`), Z = X_pᵀ Z_p X_p with d = c − p and
    Z_p = [[m I₃, −m S(d)], [m S(d), I_c − m S(d)²]]; the Schur complement gives
    diag(t m, b) ⪯ Z_p ⇔ b ≤ λ_min(I_c + m t/(1 − t) S(d)²), and S(d)² ⪰ −‖d‖² I₃, so

    .. math::
        L_l = X_p^\top \mathrm{diag}(t\,\underline{m} I_3,\ t\,\underline{i} I_3) X_p,
        \qquad (1 - t)^2 = k t,\quad k = \overline{m} r^2 / \underline{i}

    (the t ∈ [0, 1] that makes both blocks lose the same factor; any t gives a valid
    bound). A constant Θ has r = 0, t = 1 and L_l = X_cᵀ diag(m I₃, λ_min(I_c) I₃) X_c.
    Massless bodies get z_l I₆.
    """
    band, zmin, i_lo, m_r2, k = _band_terms(theta, upper=False)
    t = np.where(m_r2 == 0.0, 1.0,
                 np.where(i_lo > 0.0, 0.5 * (2.0 + k - np.sqrt(k * k + 4.0 * k)), 0.0))
    t = np.clip(t, 0.0, 1.0)
    # b = i − m r² t/(1 − t) (= t i for the balanced t); t = 1 only when m r² = 0
    penalty = np.where(t < 1.0, m_r2 * t / np.where(t < 1.0, 1.0 - t, 1.0), 0.0)
    a = np.maximum(band.mass_min, 0.0) * t * (1.0 - _SAFETY)
    b = np.maximum(i_lo - penalty, 0.0) * (1.0 - _SAFETY)
    return _with_scalar(band, com_block_weights(a, b, band.center), zmin * (1.0 - _SAFETY))


def com_block_upper(theta: npt.ArrayLike) -> Array:
    r"""Row weights of the upper COM block U_l ⪰ Z(Φ_l(t)) over the band, (N, 6, 6).

    With s > 0, Z_p ⪯ diag((1 + s) m, B) ⇔ B ≥ λ_max(I_c − m (1 + 1/s) S(d)²), and
    −S(d)² ⪯ ‖d‖² I₃, so

    .. math::
        U_l = X_p^\top \mathrm{diag}((1+s)\,\overline{m} I_3,\ (1+s)\,\overline{i} I_3) X_p,
        \qquad s^2 = k (s + 1),\quad k = \overline{m} r^2 / \overline{i}

    (any s > 0 gives a valid bound). A constant Θ has r = 0, s = 0 and
    U_l = X_cᵀ diag(m I₃, λ_max(I_c) I₃) X_c. Massless bodies get Z̄_l I₆.
    """
    band, zmax, i_hi, m_r2, k = _band_terms(theta, upper=True)
    s = np.where(m_r2 == 0.0, 0.0,
                 np.where(i_hi > 0.0, 0.5 * (k + np.sqrt(k * k + 4.0 * k)), 1.0))
    # B = i + (1 + 1/s) m r² (= (1 + s) i for the balanced s); s = 0 only when m r² = 0
    extra = np.where(m_r2 > 0.0, (1.0 + 1.0 / np.where(s > 0.0, s, 1.0)) * m_r2, 0.0)
    big_a = np.maximum(band.mass_max, 0.0) * (1.0 + s) * (1.0 + _SAFETY)
    big_b = (i_hi + extra) * (1.0 + _SAFETY)
    return _with_scalar(band, com_block_weights(big_a, big_b, band.center),
                        zmax * (1.0 + _SAFETY))


# ------------------------------------------------------------- symmetric about the axis
def _rotations(motion: Array, count: int) -> Array:
    """blockdiag(R, R) for ``count`` equally spaced turns about S's unit axis, (count, 6, 6)."""
    axis = motion[3:] / np.linalg.norm(motion[3:])
    hat = skew(axis)
    out = np.zeros((count, 6, 6))
    for c, angle in enumerate(2.0 * np.pi * np.arange(count) / count):
        rot = np.eye(3) + np.sin(angle) * hat + (1.0 - np.cos(angle)) * hat @ hat
        out[c, :3, :3] = out[c, 3:, 3:] = rot
    return out


def _axis_average(x: Array, rotations: Array) -> Array:
    """The average of R x Rᵀ over a full turn.

    Exact: its entries have degree ≤ 2 in the angle, and ``rotations`` samples six
    equally spaced angles.
    """
    out = np.mean(rotations @ x @ np.swapaxes(rotations, 1, 2), axis=0)
    return 0.5 * (out + out.T)


def _absolute(x: Array) -> Array:
    w, v = np.linalg.eigh(x)
    return (v * np.abs(w)) @ v.T


def axis_symmetric_bound(weight: Array, motion: Array, upper: bool) -> Array:
    r"""A weight symmetric about a revolute joint's axis below (or above) ``weight``.

    With S̄(X) the average of R X Rᵀ over a turn about the axis, D = L − S̄(L) and
    E = S̄(|D|): L' = S̄(L) − κE with κ the smallest value making D + κE ⪰ 0 satisfies
    L' ⪯ L (and U' = S̄(U) + κ'E with U' − U = κ'E − D ⪰ 0 above), and both commute with
    the rotation, so the Gram matrix no longer depends on the joint when the body has no
    child. For a body whose centre of mass is on the axis and whose inertia is not
    symmetric about it (the UR5's wrist 3), L' keeps the smaller perpendicular moment
    and the axial one: nothing the mass matrix's λ_min needs is lost.

    Args:
        weight: L_l (or U_l), (6, 6), positive semidefinite, in the body's joint frame.
        motion: the joint's motion subspace S_l = [v; ω] there (revolute: v = 0).
        upper: the bound above instead of below.

    Returns:
        The symmetric bound (6, 6), positive semidefinite. Below, when S̄(L) − κE is not
        positive semidefinite (D large against S̄(L)), c S̄(L) with the largest c ≤ 1
        keeping it below L, and 0 when that fails too. Every candidate is checked
        against ``weight`` and moved by the (commuting) δI₆ that makes the order hold to
        rounding: E's spectrum is cut at 10⁻¹² of its largest value, which can leave
        L' above L by up to ~10⁻⁶‖D‖.
    """
    weight = 0.5 * (weight + weight.T)
    rotations = _rotations(motion, 6)
    mean = _axis_average(weight, rotations)
    d = weight - mean
    e = _axis_average(_absolute(d), rotations)
    w, v = np.linalg.eigh(e)
    keep = w > 1e-12 * max(float(w[-1]), 1e-300)
    if not np.any(keep):
        return _or_zero(_ordered(weight, mean, upper))
    basis = v[:, keep] / np.sqrt(w[keep])  # E restricted to its range, whitened
    # D's range lies in E's (vᵀ E v = 0 forces vᵀ|D|v = 0), so the pencil is finite
    sign = 1.0 if upper else -1.0
    kappa = max(0.0, float(np.max(np.linalg.eigvalsh(sign * basis.T @ d @ basis))))
    bound = mean + sign * kappa * (1.0 + 1e-9) * e
    w, v = np.linalg.eigh(bound)
    if upper or w[0] >= -1e-12 * max(float(w[-1]), 1e-300):
        found = _ordered(weight, (v * np.maximum(w, 0.0)) @ v.T, upper)
        if found is not None:
            return found
    return _or_zero(_ordered(weight, _scaled_mean(weight, mean), upper))


def _or_zero(bound: Array | None) -> Array:
    """``bound``, or 0 (below every PSD weight, and symmetric about any axis) when None."""
    return np.zeros((6, 6)) if bound is None else bound


def _ordered(weight: Array, bound: Array, upper: bool) -> Array | None:
    """``bound`` moved by δI₆ until it is below (above) ``weight`` to rounding.

    δ = max(0, −λ_min(±(weight − bound))) + 10⁻¹³‖weight‖. None below when bound − δI₆
    is not positive semidefinite.
    """
    gap = bound - weight if upper else weight - bound
    scale = float(np.max(np.abs(np.linalg.eigvalsh(weight)))) if weight.any() else 0.0
    delta = max(0.0, -float(np.linalg.eigvalsh(gap)[0])) + 1e-13 * scale
    if upper:
        return bound + delta * np.eye(6)
    shifted = bound - delta * np.eye(6)
    return shifted if float(np.linalg.eigvalsh(shifted)[0]) >= 0.0 else None


def _scaled_mean(weight: Array, mean: Array) -> Array:
    """The scaled mean c S̄(L) ⪯ L: c ∈ [0, 1] the λ_min of the pencil (L, S̄(L)) on its range."""
    w, v = np.linalg.eigh(mean)
    keep = w > 1e-12 * max(float(w[-1]), 1e-300)
    basis = v[:, keep] / np.sqrt(w[keep])
    c = max(0.0, float(np.min(np.linalg.eigvalsh(basis.T @ weight @ basis))))
    return c * (1.0 - 1e-9) * mean
