r"""Rigorous enclosures: midpoint-radius interval matrices, Lie brackets, eigenvalue bounds.

The certified search (:mod:`robot_tv_dynamics.bounds.certified`) needs, for a box of
joint positions, an interval that provably contains λ_min(JᵀJ) and λ_max(JᵀJ). The
pieces here are exact up to floating-point rounding, which :data:`ROUNDING` covers.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.arrays import skew
from robot_tv_dynamics.inertia import Array

#: Relative padding added to every certified enclosure to cover floating-point rounding
#: of the centre evaluations (eigenvalues of a small symmetric matrix are accurate to a
#: few ulps of its norm; this is five orders of magnitude more).
ROUNDING = 1.0e-10


# ---------------------------------------------------------------------------- evaluation


def interval_matmul(am: Array, ar: Array, bm: Array, br: Array) -> tuple[Array, Array]:
    """Midpoint-radius product of interval matrices: A·B ⊆ AmBm ± (|Am|Br + Ar|Bm| + ArBr)."""
    return am @ bm, np.abs(am) @ br + ar @ (np.abs(bm) + br)


def ad_matrix(twist: Array, absolute: bool = False) -> Array:
    """ad(t) = [[S(ω), S(v)], [0, S(ω)]] of twists (..., 6), (v, ω) linear first.

    With ``absolute`` the entries are replaced by their absolute values: the radius
    matrix of ad over an interval twist with radius ``twist`` (entries are ± components).
    """
    v, w = twist[..., :3], twist[..., 3:]
    sv, sw = skew(v), skew(w)
    if absolute:
        sv, sw = np.abs(sv), np.abs(sw)
    out = np.zeros(twist.shape[:-1] + (6, 6))
    out[..., :3, :3] = sw
    out[..., :3, 3:] = sv
    out[..., 3:, 3:] = sw
    return out


def interval_lie_brackets(am: Array, ar: Array, bm: Array, br: Array) -> tuple[Array, Array]:
    """Interval Lie brackets ad(a_p) b_q, all pairs, in midpoint-radius form.

    Args:
        am: midpoints of P twists, (..., P, 6); ``ar`` their radii.
        ar: radii, same shape as ``am``.
        bm: midpoints of Q twists as columns, (..., 6, Q).
        br: radii, same shape as ``bm``.

    Returns:
        (mid, rad), each (..., P, 6, Q).
    """
    p, q = am.shape[-2], bm.shape[-1]
    lead = am.shape[:-2]
    adm = ad_matrix(am).reshape(lead + (p * 6, 6))
    adr = ad_matrix(ar, absolute=True).reshape(lead + (p * 6, 6))
    mid, rad = interval_matmul(adm, adr, bm, br)
    return mid.reshape(lead + (p, 6, q)), rad.reshape(lead + (p, 6, q))


def lie_bracket(a: Array, b: Array) -> Array:
    """Lie bracket ad(a) b of twists on axis 2 of (B, N, 6, ...) arrays (broadcasting)."""
    v0, v1, v2, w0, w1, w2 = (a[:, :, c] for c in range(6))
    x0, x1, x2, y0, y1, y2 = (b[:, :, c] for c in range(6))
    return np.stack([
        w1 * x2 - w2 * x1 + v1 * y2 - v2 * y1,
        w2 * x0 - w0 * x2 + v2 * y0 - v0 * y2,
        w0 * x1 - w1 * x0 + v0 * y1 - v1 * y0,
        w1 * y2 - w2 * y1,
        w2 * y0 - w0 * y2,
        w0 * y1 - w1 * y0,
    ], axis=2)


def adjoint_matrix(rotation: Array, translation: Array) -> Array:
    """Ad(g) of g = (R, p) on twists (v, ω), linear first: [[R, S(p)R], [0, R]]."""
    out = np.zeros(rotation.shape[:-2] + (6, 6))
    out[..., :3, :3] = rotation
    out[..., 3:, 3:] = rotation
    out[..., :3, 3:] = skew(translation) @ rotation
    return out


def _quadratic_range(sym_v: Array, r: Array) -> tuple[Array, Array]:
    """Bounds of δᵀVδ over |δ_k| ≤ r_k for each symmetric V, (B, n, d, d) → two (B, n).

    The tighter of the eigenvalue bound min(λ_min(V), 0) Σ r_k² and the entrywise one
    Σ_k min(V_kk, 0) r_k² − Σ_{j≠k} |V_jk| r_j r_k (and the mirror images above).
    """
    eig_v = np.linalg.eigvalsh(sym_v)
    r2 = np.sum(r ** 2, axis=1)[:, None]
    # entrywise: δᵀVδ ∈ Σ_k V_kk δ_k² ± Σ_{j≠k} |V_jk| r_j r_k, with δ_k² ∈ [0, r_k²]
    dk = np.arange(r.shape[1])
    v_diag = sym_v[..., dk, dk]  # (B, n, d)
    cross = np.einsum("bj,bijk,bk->bi", r, np.abs(sym_v), r) - np.einsum(
        "bk,bik->bi", r ** 2, np.abs(v_diag))
    quad_lo = np.maximum(np.minimum(eig_v[..., 0], 0.0) * r2,
                         np.einsum("bk,bik->bi", r ** 2, np.minimum(v_diag, 0.0)) - cross)
    quad_hi = np.minimum(np.maximum(eig_v[..., -1], 0.0) * r2,
                         np.einsum("bk,bik->bi", r ** 2, np.maximum(v_diag, 0.0)) + cross)
    return quad_lo, quad_hi


def eigenvalue_enclosure(
    lam: Array, vec: Array, grad: Array, hess_mid: Array, hess_rad: Array | None, r: Array,
    remainder: Array | None = None,
) -> tuple[Array, Array, Array]:
    r"""Bounds of λ_min and λ_max of A(q) = J(q)ᵀJ(q) over boxes |q − c| ≤ r (active dims).

    In the eigenbasis U of A(c) (eigenvalues λ_i), Ã(q) = Uᵀ A(q) U = Λ + Ẽ with
    Ẽ = Σ_k Δ_k Uᵀ∂_kA(c)U + Uᵀ R U and R = ∫₀¹ (1 − t) Σ_jk Δ_jΔ_k ∂²_jk A(c + tΔ) dt,
    where ∂²A(c + tΔ) lies in the interval matrix (``hess_mid`` ± ``hess_rad``) for
    every t. Entrywise bounds follow: off the diagonal
    |Ẽ_im| ≤ Ē_im = Σ_k r_k |g̃_k,im| + ½ Σ_jk r_j r_k (|u_iᵀ P_jk u_m| + |u_i|ᵀ rad_jk |u_m|);
    on the diagonal, with V = u_iᵀ P u_i (d × d) and W = |u_i|ᵀ rad |u_i|,
    Ẽ_ii ≥ −Σ_k r_k |g̃_k,ii| + ½ (q_lo − Σ_jk r_j r_k W_jk) with q_lo the larger of
    min(λ_min(V), 0) Σ r_k² and Σ_k min(V_kk, 0) r_k² − Σ_{j≠k} |V_jk| r_j r_k (the
    second is the tighter one on boxes much wider in some joints than in others), and
    the mirror image above. For a unit x,
    xᵀÃx ≥ Σ_i (λ_i + e_i) x_i² − Σ_{i≠m} Ē_im |x_i||x_m| = |x|ᵀ M |x| ≥ λ_min(M), with the
    comparison matrix M = diag(λ + e) − offdiag(Ē); likewise λ_max(Ã) ≤ λ_max(M⁺).

    Args:
        lam: eigenvalues of A(c), (B, n), ascending.
        vec: eigenvectors (columns), (B, n, n).
        grad: ∂_kA(c), (B, d, n, n).
        hess_mid: midpoint of the enclosure of ∂²_jk A over the box, (B, n, n, d, d)
            (equal to ∂²_jk A(c)).
        hess_rad: its radius, same shape; None for a second-order Taylor model whose
            remainder is given by ``remainder`` instead (then ``hess_mid`` is ∂²A(c)).
        r: half-widths of the boxes, (B, d).
        remainder: entrywise bound (B, n, n) on A(q) − (its second-order Taylor
            polynomial at c) over the box, or None.

    Returns:
        (lower bound of λ_min, upper bound of λ_max, split dimension for the upper bound):
        the split dimension is the one contributing most to the largest eigenvector's row
        of Ē. (The lower side is split along the widest joint instead:
        :meth:`~robot_tv_dynamics.bounds.evaluator.BoxEvaluator.boxes`.)
    """
    b, n = lam.shape
    gt = np.swapaxes(vec, 1, 2)[:, None] @ grad @ vec[:, None]  # (B, d, n, n)
    linear = np.einsum("bk,bkim->bim", r, np.abs(gt))
    vt = np.swapaxes(vec, 1, 2)
    proj = _congruence(vt, hess_mid, vec)
    if hess_rad is None:
        proj_rad = np.zeros_like(proj)
    else:
        proj_rad = _congruence(np.abs(vt), hess_rad, np.abs(vec))
    quad = 0.5 * np.einsum("bj,bimjk,bk->bim", r, np.abs(proj) + proj_rad, r)
    off = linear + quad
    idx = np.arange(n)
    diag_v = proj[:, idx, idx]  # (B, n, d, d)
    diag_w = np.einsum("bj,bijk,bk->bi", r, proj_rad[:, idx, idx], r)
    quad_lo, quad_hi = _quadratic_range(0.5 * (diag_v + np.swapaxes(diag_v, -1, -2)), r)
    lin_diag = linear[:, idx, idx]
    e_lo = -lin_diag + 0.5 * (quad_lo - diag_w)
    e_hi = lin_diag + 0.5 * (quad_hi + diag_w)
    if remainder is not None:
        rem = np.abs(vt) @ remainder @ np.abs(vec)
        off = off + rem
        e_lo = e_lo - rem[:, idx, idx]
        e_hi = e_hi + rem[:, idx, idx]
    off[:, idx, idx] = 0.0
    m_lo = -off
    m_lo[:, idx, idx] = lam + e_lo
    m_hi = off.copy()
    m_hi[:, idx, idx] = lam + e_hi
    row = np.moveaxis(np.abs(gt), 1, 3) + 0.5 * np.einsum(
        "bimjk,bk->bimj", np.abs(proj) + proj_rad, r)  # [b, i, m, k]
    score_hi = r * np.sum(row[:, -1], axis=1)
    if remainder is not None:
        share = r / np.maximum(np.sum(r, axis=1, keepdims=True), 1e-300)
        score_hi = score_hi + share * np.sum(rem[:, -1], axis=1, keepdims=True)
    return (np.linalg.eigvalsh(m_lo)[:, 0], np.linalg.eigvalsh(m_hi)[:, -1],
            np.argmax(score_hi, axis=1))


def _congruence(left: Array, tensor: Array, right: Array) -> Array:
    """The products left · tensor[..., j, k] · right for every (j, k), (B, n, n, d, d)."""
    b, n, _, d, _ = tensor.shape
    stacked = np.moveaxis(tensor.reshape(b, n, n, d * d), 3, 1)  # (B, d², n, n)
    out = left[:, None] @ stacked @ right[:, None]
    return np.moveaxis(out, 1, 3).reshape(b, n, n, d, d)


#: Largest grid (5 points per searched revolute joint, 3 per prismatic) for fitting the
#: trigonometric model of JᵀJ; beyond it the interval enclosure is used.
