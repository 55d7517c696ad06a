r"""A lower bound of λ_min(Σ_l J_lᵀ L_l J_l) from a local left inverse of J.

Body twists obey V_l = X_l(q_l) V_p + S_l q̇_l with X_l(q_l) = Ad(exp(S_l q_l)⁻¹)
Ad(placement_l⁻¹) and p the parent of l. For any a_l with a_lᵀS_l = 1 the row
k_l(q) = a_lᵀ(E_l − X_l(q_l) E_p) (E_b picks body b's twist out of the stacked J)
therefore reads q̇_l = k_l(q) J(q) q̇: the matrix K(q) of these rows is a left inverse of
J(q) at every q. With 𝓛 = blockdiag(L_l) ≻ 0,

.. math::
    ‖q̇‖² = ‖K 𝓛^{-1/2} 𝓛^{1/2} J q̇‖² ≤ λ_{\max}(K 𝓛^{-1} K^\top)\, q̇^\top J^\top 𝓛 J q̇,

so λ_min(Σ_l J_lᵀL_lJ_l) ≥ 1/λ_max(G(q)) with G = K𝓛⁻¹Kᵀ. The constant left inverse of
:func:`~robot_tv_dynamics.bounds.structural.structural_left_inverse` is the choice
a_l = S_l/‖S_l‖² (the only one that makes K independent of q). Letting a_l follow the
configuration, a_l = N_l⁻¹S_l/(S_lᵀN_l⁻¹S_l) with N_l = L_l⁻¹ + X_l L_p⁻¹ X_lᵀ minimises
the diagonal entry G_ll = a_lᵀN_la_l: joint l is read from the two bodies it joins,
weighted by their inertias, instead of from their angular velocities alone. On the
Panda's exact M this doubles the search-free bound (docs/concepts.md has the numbers).

Every entry of G involves at most two joints (G_ll: joint l; G_lc for a child c: joint c;
siblings: their two joints), and λ_max(G) is a largest eigenvalue, so the search of its
supremum over the joint box needs few boxes, unlike that of inf λ_min(M) itself.
:func:`local_inverse_floor` brackets sup_q λ_max(G) by branch and bound on an exact
second-order Taylor model of G with an entrywise remainder (:meth:`LocalInverse.boxes`);
1/(its upper end) is then a certified lower bound of inf_q λ_min.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.bounds.certified import bisect
from robot_tv_dynamics.bounds.evaluator import BoxEvaluator
from robot_tv_dynamics.bounds.interval import ROUNDING, eigenvalue_enclosure
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array

#: Relative padding of the certified upper end of λ_max(G): covers the rounding of L_l⁻¹
#: (condition number up to ``MAX_CONDITION``) and of a_lᵀS_l = 1.
_PAD = 1e3 * ROUNDING
#: Largest condition number of an L_l the padding covers (rounding of L_l⁻¹ ≈ cond·10⁻¹⁶
#: relative, 10³ below ``_PAD``); the spatial inertias of the Panda and the UR5 stay
#: below 2·10⁴. A stiffer weight is not used (:func:`positive_definite` says no).
MAX_CONDITION = 1e6


@dataclass(frozen=True)
class LocalInverseFloor:
    """The local-left-inverse lower bound of inf_q λ_min over the joint box.

    Attributes:
        lower: certified: λ_min(Σ J_lᵀL_lJ_l) ≥ ``lower`` at every q of the box.
        best: the largest value the bound could certify (1/λ_max(G) at the worst box
            centre found): the search's own ceiling, not a bound of λ_min.
        boxes: boxes evaluated.
        seconds: wall time [s].
        converged: the gap between ``lower`` and ``best`` reached the target.
    """

    lower: float
    best: float
    boxes: int
    seconds: float
    converged: bool


class LocalInverse:
    """G(q) = K(q) 𝓛⁻¹ K(q)ᵀ of the local left inverse, at points and over boxes."""

    def __init__(self, evaluator: BoxEvaluator, weights: Array) -> None:
        """Prepare L_l⁻¹ for the evaluator's kinematics.

        Args:
            evaluator: the box evaluator of the Gram matrix (its kinematics are reused).
            weights: L_l, (N, 6, 6), symmetric positive definite.

        Raises:
            InvalidInputError: some L_l is not positive definite with a condition number
                up to ``MAX_CONDITION`` (the bound needs L_l⁻¹; :func:`positive_definite`
                tells beforehand), or a joint's motion axis is zero (no a_l with
                a_lᵀS_l = 1; λ_min is 0 there).
        """
        if not positive_definite(weights):
            raise InvalidInputError("weights", "the local left inverse needs positive "
                                    "definite weights L_l (it uses L_l⁻¹) with condition "
                                    f"numbers up to {MAX_CONDITION:g}")
        if not np.all(np.any(evaluator.motion != 0.0, axis=1)):
            raise InvalidInputError("evaluator", "a joint's motion axis is zero: J has no "
                                    "left inverse (λ_min is 0 for every q)")
        self.ev = evaluator
        sym = 0.5 * (weights + np.swapaxes(weights, 1, 2))
        self.inverse = np.linalg.inv(sym)  # L_l⁻¹, (N, 6, 6)
        n = evaluator.n
        self.block_inverse = np.zeros((6 * n, 6 * n))
        for l in range(n):
            self.block_inverse[6 * l:6 * l + 6, 6 * l:6 * l + 6] = self.inverse[l]

    def _transforms(self, q: Array) -> Array:
        """X_l(q_l) at configurations q (B, nv): (B, N, 6, 6)."""
        ev = self.ev
        out = np.zeros((q.shape[0], ev.n, 6, 6))
        for l in range(ev.n):
            out[:, l] = ev._motion_inverse(l, q[:, l], None)[0] @ ev.placement_inv[l]
        return out

    def directions(self, q: Array) -> Array:
        """The a_l minimising G_ll at configurations q (B, nv): (B, N, 6), a_lᵀS_l = 1."""
        ev = self.ev
        xm = self._transforms(q)
        n_mat = np.repeat(self.inverse[None], q.shape[0], axis=0)
        for l in range(ev.n):
            p = ev.parent[l]
            if p >= 0:
                n_mat[:, l] = n_mat[:, l] + xm[:, l] @ self.inverse[p] @ np.swapaxes(xm[:, l], 1, 2)
        y = np.linalg.solve(n_mat, np.broadcast_to(ev.motion, n_mat.shape[:-1])[..., None])[..., 0]
        return y / np.einsum("bli,li->bl", y, ev.motion)[..., None]

    def _rows(self, a: Array, xm: Array) -> Array:
        """K (B, N, 6N) from the a_l (B, N, 6) and the X_l (B, N, 6, 6)."""
        ev = self.ev
        b, n = a.shape[0], ev.n
        km = np.zeros((b, n, n, 6))
        for l in range(n):
            km[:, l, l] = a[:, l]
            p = ev.parent[l]
            if p >= 0:
                km[:, l, p] = -np.einsum("bi,bij->bj", a[:, l], xm[:, l])
        return km.reshape(b, n, 6 * n)

    def rows(self, q: Array, a: Array | None = None) -> Array:
        """K(q) (B, N, 6N) at configurations q (B, nv), with ``a`` or the optimal a_l."""
        a = self.directions(q) if a is None else a
        return self._rows(a, self._transforms(q))

    def gram(self, q: Array, a: Array | None = None) -> Array:
        """G(q) = K 𝓛⁻¹ Kᵀ (B, N, N) at configurations q (B, nv), with ``a`` or the optimal a_l."""
        km = self.rows(q, a)
        return (km @ self.block_inverse) @ np.swapaxes(km, 1, 2)

    def values(self, q: Array) -> Array:
        """The bound 1/λ_max(G(q)) at configurations q (B, nv)."""
        return np.asarray(1.0 / np.linalg.eigvalsh(self.gram(q))[:, -1], dtype=np.float64)

    def _expansions(self, a: Array, centre: Array, r: Array) -> list[dict[str, Array] | None]:
        r"""Per joint c with a parent: the row block u_c(δ_c) = −X_c(q_c)ᵀa_c over |δ_c| ≤ r_c.

        u_c = u0 + du δ + d2u δ² + ρ with |ρ| ≤ ``rho``; over the box |u_c − u0| ≤ ``phi``
        and |u_c − u0 − du δ| ≤ ``psi`` (entrywise, (B, 6) each). About the centre a revolute
        X_c(c + δ) = X_c(c)-rotation composed with exp(−S_c δ), so
        −u_c = u0' + sin(ωδ) y_s + (1 − cos ωδ) y_c exactly; a prismatic one is affine in δ.
        """
        ev = self.ev
        out: list[dict[str, Array] | None] = []
        for c in range(ev.n):
            if ev.parent[c] < 0:
                out.append(None)
                continue
            am, _ = ev._motion_inverse(c, centre[:, c], None)
            base = np.einsum("bji,bj->bi", am, a[:, c])  # A(c)ᵀ a_c, (B, 6)
            placement = ev.placement_inv[c]
            rc = r[:, c]
            if ev.revolute[c]:
                w = float(ev.omega[c])
                hat = np.zeros((6, 6))
                hat[:3, :3] = hat[3:, 3:] = ev.axis_hat[c]
                # exp(−S δ)ᵀ = I + sin(ωδ) K + (1 − cos ωδ) K² on each block (K skew)
                ys = -(base @ hat.T) @ placement  # rows: (Pᵀ K A(c)ᵀ a)ᵀ, sign of u
                yc = -(base @ (hat @ hat).T) @ placement
                x = np.minimum(w * rc, np.pi)[:, None]
                du, d2u = w * ys, 0.5 * w * w * yc
                rho = np.abs(ys) * (w * rc)[:, None] ** 3 / 6.0 + np.abs(yc) * (
                    w * rc)[:, None] ** 4 / 24.0
                phi = np.where(x < 0.5 * np.pi, np.sin(x), 1.0) * np.abs(ys) + (
                    1.0 - np.cos(x)) * np.abs(yc)
                psi = (x - np.sin(x)) * np.abs(ys) + (1.0 - np.cos(x)) * np.abs(yc)
                big = (w * rc >= np.pi)[:, None]
                phi = np.where(big, 2.0 * (np.abs(ys) + np.abs(yc)), phi)
                psi = np.where(big, phi + w * rc[:, None] * np.abs(ys), psi)
            else:
                shift = np.zeros((6, 6))
                shift[:3, 3:] = -ev.linear_hat[c]
                du = -(a[:, c] @ shift) @ placement
                d2u = np.zeros_like(du)
                rho = np.zeros_like(du)
                phi = rc[:, None] * np.abs(du)
                psi = np.zeros_like(du)
            out.append({"u0": -(base @ placement), "du": du, "d2u": d2u, "rho": rho,
                        "phi": phi, "psi": psi})
        return out

    def boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        r"""λ_max(G) at the centres and a certified upper bound of it over each box.

        a_l is fixed per box (the optimum at its centre). Each entry of G is a sum of
        bilinear forms u_iᵀ L_b⁻¹ u_j of the row blocks at one body b (a_b, or u_c of
        :meth:`_expansions` for the children c of b), so its second-order Taylor
        polynomial at the centre is exact and the rest is bounded entrywise:
        ρ_iᵀN u0_j + u0_iᵀNρ_j + ψ_iᵀ|N|φ_j + (|du_i| r_i)ᵀ|N|ψ_j. The largest eigenvalue
        over the box then follows from the comparison matrix of
        :func:`~robot_tv_dynamics.bounds.interval.eigenvalue_enclosure`.

        Returns:
            ``value`` λ_max(G) at the centres, ``upper`` the bound over each box,
            ``split`` the active dimension to bisect, each (B,).
        """
        ev = self.ev
        b, n, d = lo.shape[0], ev.n, ev.d
        centre = ev.full(0.5 * (lo + hi))
        r = np.zeros_like(centre)
        r[:, ev.active] = 0.5 * (hi - lo)
        a = self.directions(centre)
        terms = self._expansions(a, centre, r)
        position = -np.ones(ev.nv, dtype=int)
        position[ev.active] = np.arange(d)
        gram = np.zeros((b, n, n))
        grad = np.zeros((b, d, n, n))
        hess = np.zeros((b, n, n, d, d))
        rem = np.zeros((b, n, n))
        rem_by = np.zeros((b, d, n, n))  # the part of ``rem`` each joint's block brings
        zero = np.zeros((b, 6))
        for body in range(n):
            inv, inv_abs = self.inverse[body], np.abs(self.inverse[body])
            rows = [body] + [c for c in range(n) if ev.parent[c] == body]
            blocks = {}
            for i in rows:
                t = terms[i] if i != body else None
                if t is None:
                    blocks[i] = (a[:, body], zero, zero, zero, zero, zero, -1)
                else:
                    blocks[i] = (t["u0"], t["du"], t["d2u"], t["rho"], t["phi"], t["psi"],
                                 int(position[i]))
            for i in rows:
                u0i, dui, d2ui, rhoi, phii, psii, ki = blocks[i]
                nu0i = u0i @ inv
                for j in rows:
                    u0j, duj, d2uj, rhoj, phij, psij, kj = blocks[j]
                    gram[:, i, j] += np.einsum("bk,bk->b", nu0i, u0j)
                    if ki >= 0:
                        grad[:, ki, i, j] += np.einsum("bk,bk->b", dui @ inv, u0j)
                        hess[:, i, j, ki, ki] += 2.0 * np.einsum("bk,bk->b", d2ui @ inv, u0j)
                    if kj >= 0:
                        grad[:, kj, i, j] += np.einsum("bk,bk->b", nu0i, duj)
                        hess[:, i, j, kj, kj] += 2.0 * np.einsum("bk,bk->b", nu0i, d2uj)
                    if ki >= 0 and kj >= 0:
                        cross = np.einsum("bk,bk->b", dui @ inv, duj)
                        hess[:, i, j, ki, kj] += cross
                        hess[:, i, j, kj, ki] += cross
                    part_i = (np.einsum("bk,bk->b", rhoi, np.abs(u0j @ inv))
                              + np.einsum("bk,bk->b", psii @ inv_abs, phij))
                    part_j = (np.einsum("bk,bk->b", np.abs(nu0i), rhoj)
                              + np.einsum("bk,bk->b", (np.abs(dui) * r[:, i, None])
                                          @ inv_abs, psij))
                    rem[:, i, j] += part_i + part_j
                    if ki >= 0:
                        rem_by[:, ki, i, j] += part_i
                    if kj >= 0:
                        rem_by[:, kj, i, j] += part_j
        gram = 0.5 * (gram + np.swapaxes(gram, 1, 2))
        lam, vec = np.linalg.eigh(gram)
        _, upper, split = eigenvalue_enclosure(lam, vec, grad, hess, None, r[:, ev.active],
                                               remainder=rem)
        del split
        return {"value": lam[:, -1], "upper": upper * (1.0 + _PAD),
                "split": self._split(lam, vec, grad, hess, rem_by, r[:, ev.active])}

    def _split(self, lam: Array, vec: Array, grad: Array, hess: Array, rem_by: Array,
               r: Array) -> Array:
        """The joint bringing most to the row whose Gershgorin end is the largest.

        In the eigenbasis ũ of G at the centre, row i of the enclosure reaches
        λ_i + Σ_k s_ik with s_ik = r_k Σ_m |ũ_iᵀ∂_kG ũ_m| + ½ r_k² Σ_m |ũ_iᵀ∂²_kkG ũ_m| + the
        part of the projected remainder joint k brings. The row with the largest reach
        bounds λ_max; its largest s_ik names the joint to bisect. (The largest eigenvector's
        own row is not enough: it may not depend on the joints that keep another row's
        reach above it.)
        """
        d = r.shape[1]
        idx = np.arange(d)
        vt = np.swapaxes(vec, 1, 2)[:, None]
        g_rows = np.abs(vt @ grad @ vec[:, None]).sum(axis=3)  # (B, d, n)
        h_kk = np.moveaxis(hess[:, :, :, idx, idx], 3, 1)  # (B, d, n, n)
        h_rows = np.abs(vt @ h_kk @ vec[:, None]).sum(axis=3)
        rem_rows = (np.abs(vt) @ rem_by @ np.abs(vec)[:, None]).sum(axis=3)
        share = r[:, :, None] * g_rows + 0.5 * (r * r)[:, :, None] * h_rows + rem_rows
        row = np.argmax(lam + share.sum(axis=1), axis=1)
        return np.argmax(share[np.arange(r.shape[0]), :, row], axis=1)


def positive_definite(weights: Array) -> bool:
    """Every L_l positive definite with cond(L_l) ≤ ``MAX_CONDITION``.

    The local inverse needs L_l⁻¹ to within its padding.
    """
    eig = np.linalg.eigvalsh(0.5 * (weights + np.swapaxes(weights, 1, 2)))
    return bool(np.all(np.isfinite(eig)) and np.all(eig[:, -1] > 0.0)
                and np.all(eig[:, 0] * MAX_CONDITION >= eig[:, -1]))


def local_inverse_floor(
    evaluator: BoxEvaluator, weights: Array, *, time_limit: float, target_gap: float,
    max_boxes: int | None = None, batch: int = 64,
) -> LocalInverseFloor:
    """Certified lower bound 1/sup_q λ_max(G(q)) of inf_q λ_min(Σ J_lᵀL_lJ_l).

    Best-first branch and bound on the upper bound of λ_max(G) over boxes of the
    evaluator's joint box, until the bracket of sup λ_max(G) is within ``target_gap``
    (relative), the time limit or the box cap.

    Args:
        evaluator: the Gram matrix's box evaluator (its joint box is searched).
        weights: L_l (N, 6, 6), positive definite.
        time_limit: budget [s].
        target_gap: relative gap of the bracket of sup λ_max(G) to stop at.
        max_boxes: optional cap on evaluated boxes.
        batch: boxes bisected per step.

    Returns:
        A :class:`LocalInverseFloor`; ``lower`` 0 at once when a joint's motion axis is
        zero (λ_min is 0 there).
    """
    start = time.monotonic()
    if not np.all(np.any(evaluator.motion != 0.0, axis=1)):
        return LocalInverseFloor(0.0, 0.0, 0, time.monotonic() - start, True)
    local = LocalInverse(evaluator, weights)
    if evaluator.d == 0:
        value = float(local.values(evaluator.full(np.zeros((1, 0))))[0]) * (1.0 - _PAD)
        return LocalInverseFloor(value, value, 1, time.monotonic() - start, True)
    root = local.boxes(evaluator.lower[None], evaluator.upper[None])
    incumbent = float(root["value"][0])  # the largest λ_max(G) attained so far
    counter = itertools.count()
    heap = [(-float(root["upper"][0]), next(counter), evaluator.lower, evaluator.upper,
             int(root["split"][0]))]
    boxes = 1

    def ceiling() -> float:
        return max(-heap[0][0], incumbent) if heap else incumbent

    while heap:
        if (ceiling() - incumbent) <= target_gap * ceiling():
            break
        if time.monotonic() - start >= time_limit or (max_boxes is not None
                                                       and boxes >= max_boxes):
            break
        lo, hi = bisect([heapq.heappop(heap) for _ in range(min(batch, len(heap)))])
        out = local.boxes(lo, hi)
        boxes += lo.shape[0]
        incumbent = max(incumbent, float(np.max(out["value"])))
        for c in range(lo.shape[0]):
            if out["upper"][c] > incumbent:
                heapq.heappush(heap, (-float(out["upper"][c]), next(counter), lo[c], hi[c],
                                      int(out["split"][c])))
    top = ceiling()
    lower = 1.0 / top if math.isfinite(top) and top > 0.0 else 0.0
    return LocalInverseFloor(lower, 1.0 / incumbent, boxes, time.monotonic() - start,
                             (top - incumbent) <= target_gap * top)
