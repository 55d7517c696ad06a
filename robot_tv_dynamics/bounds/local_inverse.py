r"""A lower bound of λ_min(Σ_l J_lᵀ L_l J_l) from a local left inverse of J.

Body twists obey V_l = X_l(q_l) V_p + S_l q̇_l with X_l(q_l) = Ad(exp(S_l q_l)⁻¹)
Ad(placement_l⁻¹) and p the parent of l: the relative twists R_l V = V_l − X_l(q_l) V_p
(E_b picks body b's twist out of the stacked J, R_l = E_l − X_l E_p) equal S_l q̇_l. For
any coefficients b_jl with b_jlᵀS_l = δ_jl, the row k_j(q) = Σ_l b_jlᵀ R_l(q) therefore
reads q̇_j = k_j(q) J(q) q̇: the matrix K(q) of these rows is a left inverse of J(q) at
every q, for coefficients held fixed while q moves. With 𝓛 = blockdiag(L_l) ≻ 0,

.. math::
    ‖q̇‖² = ‖K 𝓛^{-1/2} 𝓛^{1/2} J q̇‖² ≤ λ_{\max}(K 𝓛^{-1} K^\top)\, q̇^\top J^\top 𝓛 J q̇,

so λ_min(Σ_l J_lᵀL_lJ_l) ≥ 1/λ_max(G(q)) with G = K𝓛⁻¹Kᵀ. The constant left inverse of
:func:`~robot_tv_dynamics.bounds.structural.structural_left_inverse` is b_jj = S_j/‖S_j‖²
with the angular part only. With every b_jl free, the G_jj-minimising choice at a point
is K = M⁻¹Jᵀ𝓛 and 1/λ_max(G) = λ_min(M) there; row j here reads only the joints
within ``width`` tree steps of j (:meth:`LocalInverse.windows`), each row's
coefficients minimising its G_jj at the box centre (:meth:`LocalInverse.coefficients`).
With width 0 joint j is read from the two bodies it joins; with width 1 also from its
neighbours', which on the Panda's M lifts the bound at a point from about half of λ_min
to 0.86–0.9 of it, and the COM block weights' from a sixth to 0.7–0.8.

Row j's block at body b is b_jb − Σ_c X_c(q_c)ᵀ b_jc over b's children c: every term
depends on one joint, so G is a sum of terms in one joint each (two for siblings), and
λ_max(G) is a largest eigenvalue: the search of its supremum over the joint box needs
far fewer boxes than that of inf λ_min(M) itself. :func:`local_inverse_floor` brackets
sup_q λ_max(G) by branch and bound on an exact second-order Taylor model of G with an
entrywise remainder (:meth:`LocalInverse.boxes`); 1/(its upper end) is then a certified
lower bound of inf_q λ_min.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.bounds.certified import EvaluationFactory, bisect
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
#: Default window of the rows: each joint is read from its own relative twist and those of
#: its tree neighbours. On the locked Panda one step raises the certified floor of the
#: exact M from 0.62 to 0.76 of the sampled inf λ_min in 30 s; two steps are tighter at a
#: point but their enclosures widen faster with the box, and lose.
WINDOW = 1


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

    def __init__(self, evaluator: BoxEvaluator, weights: Array, width: int = WINDOW) -> None:
        """Prepare L_l⁻¹ for the evaluator's kinematics.

        Args:
            evaluator: the box evaluator of the Gram matrix (its kinematics are reused).
            weights: L_l, (N, 6, 6), symmetric positive definite.
            width: each row reads its joint from the relative twists of the joints within
                this many steps in the tree (0: its own two bodies only).

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
        if width < 0:
            raise InvalidInputError("width", f"must be ≥ 0, got {width!r}")
        self.ev = evaluator
        self.width = int(width)
        sym = 0.5 * (weights + np.swapaxes(weights, 1, 2))
        self.inverse = np.linalg.inv(sym)  # L_l⁻¹, (N, 6, 6)
        n = evaluator.n
        self.block_inverse = np.zeros((6 * n, 6 * n))
        for l in range(n):
            self.block_inverse[6 * l:6 * l + 6, 6 * l:6 * l + 6] = self.inverse[l]
        self.children = [[c for c in range(n) if evaluator.parent[c] == l] for l in range(n)]
        self._windows = self._grow_windows()

    def _transforms(self, q: Array) -> Array:
        """X_l(q_l) at configurations q (B, nv): (B, N, 6, 6)."""
        ev = self.ev
        out = np.zeros((q.shape[0], ev.n, 6, 6))
        for l in range(ev.n):
            out[:, l] = ev._motion_inverse(l, q[:, l], None)[0] @ ev.placement_inv[l]
        return out

    def windows(self) -> list[list[int]]:
        """The joints row j reads from: within ``width`` steps of j in the tree."""
        return [list(window) for window in self._windows]

    def _grow_windows(self) -> list[list[int]]:
        parent = self.ev.parent
        out = []
        for j in range(self.ev.n):
            window = {j}
            for _ in range(self.width):
                grown = set(window)
                for l in window:
                    if parent[l] >= 0:
                        grown.add(int(parent[l]))
                    grown.update(self.children[l])
                window = grown
            out.append(sorted(window))
        return out

    def coefficients(self, q: Array) -> Array:
        r"""The b_jl minimising each G_jj at configurations q (B, nv): (B, nv, N, 6).

        Row j: minimise bᵀHb over its window subject to b_lᵀS_l = δ_jl, with
        H = R 𝓛⁻¹ Rᵀ and R the rows E_l − X_l(q_l)E_p of the window (a small equality
        constrained least-squares problem); the constraints are then restored to
        rounding by a step along S_l.
        """
        ev = self.ev
        n, count = ev.n, q.shape[0]
        xm = self._transforms(q)
        rel = np.zeros((count, n, 6, 6 * n))
        for l in range(n):
            rel[:, l, :, 6 * l:6 * l + 6] = np.eye(6)
            p = ev.parent[l]
            if p >= 0:
                rel[:, l, :, 6 * p:6 * p + 6] = -xm[:, l]
        coef = np.zeros((count, n, n, 6))
        mask = np.zeros((n, n))
        for j, window in enumerate(self._windows):
            k = len(window)
            mask[j, window] = 1.0
            rows = rel[:, window].reshape(count, 6 * k, 6 * n)
            h = rows @ self.block_inverse @ np.swapaxes(rows, 1, 2)
            c = np.zeros((k, 6 * k))
            for i, l in enumerate(window):
                c[i, 6 * i:6 * i + 6] = ev.motion[l]
            e = np.array([1.0 if l == j else 0.0 for l in window])
            hc = np.linalg.solve(h, np.broadcast_to(c.T, (count, 6 * k, k)))
            mult = np.linalg.solve(c[None] @ hc, np.broadcast_to(e, (count, k))[..., None])
            coef[:, j, window] = (hc @ mult)[..., 0].reshape(count, k, 6)
        return self.constrained(coef, mask)

    def constrained(self, coef: Array, mask: Array | None = None) -> Array:
        """``coef`` (B, nv, N, 6) moved along S_l so that b_jlᵀS_l = δ_jl (where ``mask``)."""
        s = self.ev.motion
        mask = np.ones(coef.shape[1:3]) if mask is None else mask
        miss = np.eye(coef.shape[1])[None] - np.einsum("bjli,li->bjl", coef, s)
        return coef + (mask[None] * miss / np.sum(s * s, axis=1)[None, None])[..., None] * s

    def _rows(self, coef: Array, xm: Array) -> Array:
        """K (B, N, 6N) from the b_jl (B, N, N, 6) and the X_l (B, N, 6, 6)."""
        ev = self.ev
        km = np.array(coef)
        for l in range(ev.n):
            p = ev.parent[l]
            if p >= 0:
                km[:, :, p] -= coef[:, :, l] @ xm[:, l]
        return km.reshape(coef.shape[0], ev.n, 6 * ev.n)

    def rows(self, q: Array, coef: Array | None = None) -> Array:
        """K(q) (B, N, 6N) at configurations q (B, nv), with ``coef`` or :meth:`coefficients`."""
        coef = self.coefficients(q) if coef is None else coef
        return self._rows(coef, self._transforms(q))

    def gram(self, q: Array, coef: Array | None = None) -> Array:
        """G(q) = K 𝓛⁻¹ Kᵀ (B, N, N) at configurations q (B, nv)."""
        km = self.rows(q, coef)
        return (km @ self.block_inverse) @ np.swapaxes(km, 1, 2)

    def values(self, q: Array) -> Array:
        """The bound 1/λ_max(G(q)) at configurations q (B, nv)."""
        return np.asarray(1.0 / np.linalg.eigvalsh(self.gram(q))[:, -1], dtype=np.float64)

    def _expansions(self, coef: Array, centre: Array, r: Array) -> list[dict[str, Array] | None]:
        r"""Per joint c with a parent: the row blocks u_jc(δ_c) = −X_c(q_c)ᵀb_jc, all rows j.

        u = u0 + du δ + d2u δ² + ρ with |ρ| ≤ ``rho``; over the box |u − u0| ≤ ``phi``
        and |u − u0 − du δ| ≤ ``psi`` (entrywise, (B, N, 6) each). About the centre a
        revolute X_c(c + δ) = X_c(c)-rotation composed with exp(−S_c δ), so
        −u = u0' + sin(ωδ) y_s + (1 − cos ωδ) y_c exactly; a prismatic one is affine in δ.
        """
        ev = self.ev
        out: list[dict[str, Array] | None] = []
        for c in range(ev.n):
            if ev.parent[c] < 0:
                out.append(None)
                continue
            b = coef[:, :, c]  # (B, N, 6): every row's coefficient at joint c
            am, _ = ev._motion_inverse(c, centre[:, c], None)
            base = np.einsum("bji,brj->bri", am, b)  # A(c)ᵀ b_jc
            placement = ev.placement_inv[c]
            rc = r[:, c][:, None, None]
            if ev.revolute[c]:
                w = float(ev.omega[c])
                hat = np.zeros((6, 6))
                hat[:3, :3] = hat[3:, 3:] = ev.axis_hat[c]
                # exp(−S δ)ᵀ = I + sin(ωδ) K + (1 − cos ωδ) K² on each block (K skew)
                ys = -(base @ hat.T) @ placement  # rows: (Pᵀ K A(c)ᵀ b)ᵀ, sign of u
                yc = -(base @ (hat @ hat).T) @ placement
                x = np.minimum(w * rc, np.pi)
                du, d2u = w * ys, 0.5 * w * w * yc
                rho = np.abs(ys) * (w * rc) ** 3 / 6.0 + np.abs(yc) * (w * rc) ** 4 / 24.0
                phi = np.where(x < 0.5 * np.pi, np.sin(x), 1.0) * np.abs(ys) + (
                    1.0 - np.cos(x)) * np.abs(yc)
                psi = (x - np.sin(x)) * np.abs(ys) + (1.0 - np.cos(x)) * np.abs(yc)
                big = w * rc >= np.pi
                phi = np.where(big, 2.0 * (np.abs(ys) + np.abs(yc)), phi)
                psi = np.where(big, phi + w * rc * np.abs(ys), psi)
            else:
                shift = np.zeros((6, 6))
                shift[:3, 3:] = -ev.linear_hat[c]
                du = -(b @ shift) @ placement
                d2u = np.zeros_like(du)
                rho = np.zeros_like(du)
                phi = rc * np.abs(du)
                psi = np.zeros_like(du)
            out.append({"u0": -(base @ placement), "du": du, "d2u": d2u, "rho": rho,
                        "phi": phi, "psi": psi})
        return out

    def boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        r"""λ_max(G) at the centres and a certified upper bound of it over each box.

        The b_jl are fixed per box (:meth:`coefficients` at its centre). Row j's block at
        body b is b_jb + Σ_c u_jc over b's children c, each u_jc a function of q_c alone,
        so every entry of G is a sum of bilinear forms at one body whose second-order
        Taylor polynomial at the centre is exact, the rest bounded entrywise per body,
        with each body's child terms summed first (ρ, φ, ψ the sums of the children's):
        ρ|U0N|ᵀ + |U0N|ρᵀ + ψ|N|φᵀ + (Σ_s |du_s| r_s)|N|ψᵀ, plus ``ROUNDING`` times the
        magnitudes. The largest eigenvalue over the
        box then follows from the comparison matrix of
        :func:`~robot_tv_dynamics.bounds.interval.eigenvalue_enclosure`, divided by
        (1 − ‖E‖)² for the constant residual E = KJ − I of the rounded constraints.

        Returns:
            ``value`` λ_max(G) at the centres, ``upper`` the bound over each box,
            ``split`` the active dimension to bisect, each (B,).
        """
        ev = self.ev
        b, n, d = lo.shape[0], ev.n, ev.d
        centre = ev.full(0.5 * (lo + hi))
        r = np.zeros_like(centre)
        r[:, ev.active] = 0.5 * (hi - lo)
        coef = self.coefficients(centre)
        terms = self._expansions(coef, centre, r)
        position = -np.ones(ev.nv, dtype=int)
        position[ev.active] = np.arange(d)
        gram = np.zeros((b, n, n))
        grad = np.zeros((b, d, n, n))
        hess = np.zeros((b, n, n, d, d))
        rem = np.zeros((b, n, n))
        rem_by = np.zeros((b, d, n, n))  # the part of ``rem`` each joint's terms bring
        size = np.zeros((b, n, n))
        zero = np.zeros((b, n, 6))
        for body in range(n):
            inv, inv_abs = self.inverse[body], np.abs(self.inverse[body])
            # body b's row block: u0 + Σ_s (du_s δ_s + d2u_s δ_s² + ρ_s) over its
            # children's slots s; the pairwise products summed before bounding
            slots = [(t, int(position[c]), r[:, c][:, None, None])
                     for c in self.children[body] if (t := terms[c]) is not None]
            u0 = coef[:, :, body] + sum((t["u0"] for t, _, _ in slots), zero)
            nu0 = u0 @ inv
            abs_nu0 = np.abs(nu0)
            gram += nu0 @ np.swapaxes(u0, 1, 2)
            rho = sum((t["rho"] for t, _, _ in slots), zero)
            phi = sum((t["phi"] for t, _, _ in slots), zero)
            psi = sum((t["psi"] for t, _, _ in slots), zero)
            lin = sum((np.abs(t["du"]) * rs for t, _, rs in slots), zero)
            # G − its Taylor polynomial = U0 N ρᵀ + ρ N U0ᵀ + Y N Xᵀ + L N Yᵀ, with
            # |X| ≤ φ (the whole change), |Y| ≤ ψ (beyond linear), |L| ≤ |du| r
            rem += (rho @ np.swapaxes(abs_nu0, 1, 2) + abs_nu0 @ np.swapaxes(rho, 1, 2)
                    + (psi @ inv_abs) @ np.swapaxes(phi, 1, 2)
                    + (lin @ inv_abs) @ np.swapaxes(psi, 1, 2))
            magnitude = np.abs(u0) + phi
            size += (magnitude @ inv_abs) @ np.swapaxes(magnitude, 1, 2)
            for t, k, _ in slots:
                if k < 0:
                    continue
                first = (t["du"] @ inv) @ np.swapaxes(u0, 1, 2)
                grad[:, k] += first + np.swapaxes(first, 1, 2)
                second = 2.0 * (t["d2u"] @ inv) @ np.swapaxes(u0, 1, 2)
                hess[:, :, :, k, k] += second + np.swapaxes(second, 1, 2)
                for t2, k2, _ in slots:
                    if k2 >= 0:
                        cross = (t["du"] @ inv) @ np.swapaxes(t2["du"], 1, 2)
                        hess[:, :, :, k, k2] += cross + np.swapaxes(cross, 1, 2)
                rem_by[:, k] += (
                    t["rho"] @ np.swapaxes(abs_nu0, 1, 2) + abs_nu0 @ np.swapaxes(t["rho"], 1, 2)
                    + (t["psi"] @ inv_abs) @ np.swapaxes(phi, 1, 2)
                    + (lin @ inv_abs) @ np.swapaxes(t["psi"], 1, 2))
        rem += ROUNDING * size
        gram = 0.5 * (gram + np.swapaxes(gram, 1, 2))
        lam, vec = np.linalg.eigh(gram)
        _, upper, _ = eigenvalue_enclosure(lam, vec, grad, hess, None, r[:, ev.active],
                                           remainder=rem)
        # KJ = I + E at every q (E constant): ‖q̇‖(1 − ‖E‖) ≤ ‖KJq̇‖
        residual = np.einsum("bjli,li->bjl", coef, ev.motion) - np.eye(n)[None]
        miss = np.linalg.norm(residual, axis=(1, 2)) + ROUNDING * np.einsum(
            "bjli,li->b", np.abs(coef), np.abs(ev.motion))
        upper = upper / np.maximum(1.0 - miss, 0.0) ** 2
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
    max_boxes: int | None = None, batch: int = 64, width: int = WINDOW,
    evaluations: EvaluationFactory | None = None,
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
        width: the rows' window (:class:`LocalInverse`): 0 converges in few boxes, 1
            goes further given more.
        evaluations: optional parallel box map built on the :class:`LocalInverse`
            (e.g. :class:`~robot_tv_dynamics.bounds.parallel.DaskBoxEvaluation`); the
            search stays here and the boxes are the serial search's.

    Returns:
        A :class:`LocalInverseFloor`; ``lower`` 0 at once when a joint's motion axis is
        zero (λ_min is 0 there).
    """
    start = time.monotonic()
    if not np.all(np.any(evaluator.motion != 0.0, axis=1)):
        return LocalInverseFloor(0.0, 0.0, 0, time.monotonic() - start, True)
    local = LocalInverse(evaluator, weights, width)
    if evaluator.d == 0:
        value = float(local.values(evaluator.full(np.zeros((1, 0))))[0]) * (1.0 - _PAD)
        return LocalInverseFloor(value, value, 1, time.monotonic() - start, True)
    evaluate = local.boxes if evaluations is None else evaluations(local)
    root = evaluate(evaluator.lower[None], evaluator.upper[None])
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
        out = evaluate(lo, hi)
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
