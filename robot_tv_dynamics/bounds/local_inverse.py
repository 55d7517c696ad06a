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
is K = M⁻¹Jᵀ𝓛 and 1/λ_max(G) = λ_min(M) there; row j here reads only the joints in its
window (:meth:`LocalInverse.windows`: within ``width`` tree steps of j, or ``up`` steps
towards the base and ``down`` towards the tips), each row's coefficients minimising its
G_jj at the box centre (:meth:`LocalInverse.coefficients`). With width 0 joint j is read
from the two bodies it joins; with width 1 also from its neighbours', which on the
locked Panda's M lifts the bound at a point from about 0.6 of λ_min to 0.85–0.97 of it;
two ancestors and a child reach 0.98–0.99 near the minimum of λ_min, all joints 1.

Row j's block at body b is b_jb − Σ_c X_c(q_c)ᵀ b_jc over b's children c: every term
depends on one joint, so G is a sum of terms in one joint each (two for siblings), and
λ_max(G) is a largest eigenvalue: the search of its supremum over the joint box needs
far fewer boxes than that of inf λ_min(M) itself. :meth:`LocalInverse.boxes` bounds
each one-joint term over the box on a grid (a trigonometric polynomial of degree 2 in
the joint angle: no Taylor remainder), and :func:`local_inverse_floor` brackets
sup_q λ_max(G) by branch and bound, climbing a ladder of windows box by box
(:data:`LADDER`); 1/(its upper end) is then a certified lower bound of inf_q λ_min.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.bounds.bisection import EvaluationFactory, bisect
from robot_tv_dynamics.bounds.evaluator import BoxEvaluator
from robot_tv_dynamics.bounds.interval import ROUNDING
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array

#: Relative padding of the certified upper end of λ_max(G): covers the rounding of L_l⁻¹
#: (condition number up to ``MAX_CONDITION``) and of a_lᵀS_l = 1.
_PAD = 1e3 * ROUNDING
#: Largest condition number of an L_l the padding covers (rounding of L_l⁻¹ ≈ cond·10⁻¹⁶
#: relative, 10³ below ``_PAD``); the spatial inertias of the Panda and the UR5 stay
#: below 2·10⁴. A stiffer weight is not used (:func:`positive_definite` says no).
MAX_CONDITION = 1e6
#: A rows' window: a number of tree steps around the joint, or (up, down) steps to its
#: ancestors and its descendants.
Window = int | tuple[int, int]
#: Default window of a :class:`LocalInverse`: each joint is read from its own relative
#: twist and those of its tree neighbours (the first rung of :data:`LADDER`).
WINDOW = 1
#: Grid steps over each joint's half-range at which the one-joint terms of a box's
#: enclosure are evaluated (their bound adds h²/8 · sup|f''| between grid points).
GRID = 8
#: The rungs of windows :func:`local_inverse_floor` encloses boxes with, cheapest first:
#: the neighbours (which certify most of the joint box in few boxes), then two ancestors
#: and a child, then the better of that and two steps each way (neither is the tighter
#: at every point; on the locked Panda's M they reach 0.990 and 0.996 of λ_min near its
#: minimum, the neighbours 0.96).
LADDER: tuple[tuple[Window, ...], ...] = (((1, 1),), ((2, 1),), ((2, 1), (2, 2)))
#: Share of what is left of a certified search's budget after sampling that the
#: local-left-inverse floor may use first (searching λ_min and λ_max; λ_min alone), and
#: the relative gap it stops at (it is a bound of λ_min, not λ_min: closer is not needed).
#: On the arms measured the search proper never raised the local floor of λ_min.
LOCAL_SHARE = 0.5
LOCAL_SHARE_ALONE = 0.95
LOCAL_GAP = 0.01
#: Boxes bisected per step of :func:`local_inverse_floor`, serially and on a cluster: a
#: step's exchange with the workers costs about as much as 64 boxes, so a parallel step
#: takes more (on the locked Panda's M with 2 local workers and 60 s, 512 reached 0.983
#: of the sampled λ_min, 64 only 0.966).
FLOOR_BATCH = 64
#: Points of the joint box at which :func:`local_inverse_floor` evaluates its last rung
#: before searching: the pruning level P starts at the worst of them.
_START_POINTS = 32
FLOOR_BATCH_PARALLEL = 512

#: Progress of a floor search: (certified lower bound so far, boxes evaluated).
FloorProgress = Callable[[float, int], None]


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

    def __init__(self, evaluator: BoxEvaluator, weights: Array, width: Window = WINDOW) -> None:
        """Prepare L_l⁻¹ for the evaluator's kinematics.

        Args:
            evaluator: the box evaluator of the Gram matrix (its kinematics are reused).
            weights: L_l, (N, 6, 6), symmetric positive definite.
            width: each row reads its joint from the relative twists of the joints within
                this many steps in the tree (0: its own two bodies only), or, as a pair
                (up, down), of its ancestors up to ``up`` steps and its descendants up to
                ``down`` steps.

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
        steps = (width,) if isinstance(width, int) else tuple(width)
        if len(steps) not in (1, 2) or any(int(k) != k or k < 0 for k in steps):
            raise InvalidInputError("width", "must be a number of steps ≥ 0 or a pair "
                                    f"(up, down) of them, got {width!r}")
        self.ev = evaluator
        self.width: Window = int(width) if isinstance(width, int) else (
            int(steps[0]), int(steps[1]))
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
        if not isinstance(self.width, int):
            up, down = self.width
            for j in range(self.ev.n):
                window, above, below = {j}, j, {j}
                for _ in range(up):
                    above = int(parent[above]) if above >= 0 else -1
                    if above >= 0:
                        window.add(above)
                for _ in range(down):
                    below = {c for l in below for c in self.children[l]}
                    window |= below
                out.append(sorted(window))
            return out
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
        rounding by a step along S_l. H's blocks are N_l + X_l N_p X_lᵀ on the diagonal,
        −X_l N_p between a joint and its parent and X_l N_p X_l'ᵀ between siblings
        (N = L⁻¹); rows whose windows have the same size are solved together.
        """
        ev = self.ev
        n, count = ev.n, q.shape[0]
        xm = self._transforms(q)
        inv = self.inverse
        xn = np.zeros((count, n, 6, 6))  # X_l N_p
        full = np.zeros((count, n, n, 6, 6))  # H by blocks
        for l in range(n):
            p = ev.parent[l]
            full[:, l, l] = inv[l]
            if p >= 0:
                xn[:, l] = xm[:, l] @ inv[p]
                full[:, l, l] += xn[:, l] @ np.swapaxes(xm[:, l], 1, 2)
                full[:, l, p] = -xn[:, l]
                full[:, p, l] = -np.swapaxes(xn[:, l], 1, 2)
        for l, m in itertools.permutations(range(n), 2):
            if ev.parent[l] >= 0 and ev.parent[l] == ev.parent[m]:
                full[:, l, m] = xn[:, l] @ np.swapaxes(xm[:, m], 1, 2)
        coef = np.zeros((count, n, n, 6))
        mask = np.zeros((n, n))
        for size in sorted({len(window) for window in self._windows}):
            rows = [j for j, window in enumerate(self._windows) if len(window) == size]
            sel = np.array([self._windows[j] for j in rows])  # (m, k)
            h = full[:, sel[:, :, None], sel[:, None, :]]  # (B, m, k, k, 6, 6)
            h = np.swapaxes(h, 3, 4).reshape(count, len(rows), 6 * size, 6 * size)
            c = np.zeros((len(rows), size, 6 * size))
            e = np.zeros((len(rows), size, 1))
            for r, j in enumerate(rows):
                mask[j, sel[r]] = 1.0
                for i, l in enumerate(sel[r]):
                    c[r, i, 6 * i:6 * i + 6] = ev.motion[l]
                    e[r, i, 0] = 1.0 if l == j else 0.0
            hc = np.linalg.solve(h, np.broadcast_to(np.swapaxes(c, 1, 2), h.shape[:2] + (
                6 * size, size)))
            mult = np.linalg.solve(c[None] @ hc, np.broadcast_to(e, hc.shape[:2] + (size, 1)))
            found = (hc @ mult)[..., 0].reshape(count, len(rows), size, 6)
            for r, j in enumerate(rows):
                coef[:, j, sel[r]] = found[:, r]
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

    def _children_terms(self, coef: Array, centre: Array) -> list[dict[str, Array] | None]:
        r"""Per joint c with a parent: its row blocks u_jc(δ) = −X_c(q_c + δ)ᵀb_jc, all rows j.

        About the centre a revolute X_c(c + δ) is X_c(c) composed with exp(−S_c δ), so
        exactly u = u0 + sin(ωδ) y_s + (1 − cos ωδ) y_c; a prismatic one is affine,
        u = u0 + δ y_s (y_c = 0). Each of ``u0``, ``ys``, ``yc`` is (B, N, 6).
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
            if ev.revolute[c]:
                hat = np.zeros((6, 6))
                hat[:3, :3] = hat[3:, 3:] = ev.axis_hat[c]
                # exp(−S δ)ᵀ = I + sin(ωδ) K + (1 − cos ωδ) K² on each block (K skew)
                ys = -(base @ hat.T) @ placement
                yc = -(base @ (hat @ hat).T) @ placement
            else:
                shift = np.zeros((6, 6))
                shift[:3, 3:] = -ev.linear_hat[c]
                ys = -(b @ shift) @ placement
                yc = np.zeros_like(ys)
            out.append({"u0": -(base @ placement), "ys": ys, "yc": yc})
        return out

    def _features(self, c: int, r: Array) -> tuple[Array, Array, Array, Array, Array]:
        """Joint c's features s(δ), k(δ) over |δ| ≤ r (B,): grid values and bounds.

        Revolute: s = sin ωδ, k = 1 − cos ωδ at ``GRID`` + 1 points spanning
        [−ωr, ωr], their largest magnitudes S, K over it, and the padding factor h²/8
        (h the grid step in ωδ) of the grid bound; prismatic: s = δ, k = 0.

        Returns:
            (s (B, G), k (B, G), S (B,), K (B,), h²/8 (B,)).
        """
        ev = self.ev
        unit = np.linspace(-1.0, 1.0, GRID + 1)
        if ev.revolute[c]:
            span = float(ev.omega[c]) * r
            x = span[:, None] * unit
            peak = np.minimum(span, np.pi)
            big_s = np.where(peak < 0.5 * np.pi, np.sin(peak), 1.0)
            return np.sin(x), 1.0 - np.cos(x), big_s, 1.0 - np.cos(peak), (
                2.0 * span / GRID) ** 2 / 8.0
        x = r[:, None] * unit
        return x, np.zeros_like(x), r, np.zeros_like(r), (2.0 * r / GRID) ** 2 / 8.0

    def boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        r"""λ_max(G) at the centres and a certified upper bound of it over each box.

        The b_jl are fixed per box (:meth:`coefficients` at its centre). Body b's row
        block is U_b = u0_b + Σ_c Δu_c(δ_c) over b's children c, each Δu_c a function of
        q_c alone (:meth:`_children_terms`), and G = Σ_b U_b N_b U_bᵀ (N_b = L_b⁻¹). In
        the eigenbasis V of G at the centre (eigenvalues λ), VᵀGV − Λ is a sum over bodies
        of one-joint terms

        .. math::
            f_c(δ) = A_1 s + A_2 k + B_{11} s^2 + B_{12} s k + B_{22} k^2

        (s = sin ωδ, k = 1 − cos ωδ; A_1 = P_0 N P_sᵀ + P_s N P_0ᵀ, … with P = Vᵀu),
        plus, for siblings, products Δu_c N Δu_c'ᵀ. Each entry of f_c is bounded over
        |δ| ≤ r_c by its largest value (magnitude) on a grid of ``GRID`` steps plus
        h²/8 · sup|f''| (the linear interpolant's error; sup|f''| ≤ |A_1| + |A_2| +
        2|B_11| + 3|B_12| + 4|B_22|); sibling products by the features' largest
        magnitudes. With e_i ≥ the diagonal's and Ē_im ≥ the off-diagonal's magnitude
        over the box, every unit x has xᵀVᵀGVx ≤ |x|ᵀ(diag(λ + e) + Ē)|x|, so λ_max of
        that comparison matrix bounds λ_max(G) over the box. ``ROUNDING`` times the
        magnitudes is added, and the bound is divided by (1 − ‖E‖)² for the constant
        residual E = KJ − I of the rounded constraints.

        Returns:
            ``value`` λ_max(G) at the centres, ``upper`` the bound over each box,
            ``split`` the active dimension to bisect (:meth:`_split`), each (B,).
        """
        ev = self.ev
        b, n, d = lo.shape[0], ev.n, ev.d
        centre = ev.full(0.5 * (lo + hi))
        r = np.zeros_like(centre)
        r[:, ev.active] = 0.5 * (hi - lo)
        coef = self.coefficients(centre)
        terms = {c: t for c, t in enumerate(self._children_terms(coef, centre)) if t is not None}
        position = -np.ones(ev.nv, dtype=int)
        position[ev.active] = np.arange(d)
        zero = np.zeros((b, n, 6))
        base = [coef[:, :, body] + sum((terms[c]["u0"] for c in self.children[body]
                                        if c in terms), zero)
                for body in range(n)]
        gram = sum(u @ self.inverse[body] @ np.swapaxes(u, 1, 2) for body, u in enumerate(base))
        gram = 0.5 * (gram + np.swapaxes(gram, 1, 2))
        lam, vec = np.linalg.eigh(gram)
        vt = np.swapaxes(vec, 1, 2)
        idx = np.arange(n)
        diag_hi = np.zeros((b, n))
        off = np.zeros((b, n, n))
        share = np.zeros((b, d, n))  # what each joint adds to each row's Gershgorin reach
        size = np.zeros((b, n, n))
        for body in range(n):
            inv, inv_abs = self.inverse[body], np.abs(self.inverse[body])
            p0 = vt @ base[body]
            moving = []
            for c in self.children[body]:
                k = int(position[c])
                if c not in terms or k < 0:
                    continue  # a joint held fixed adds nothing beyond u0
                ps, pc = vt @ terms[c]["ys"], vt @ terms[c]["yc"]
                s, kk, big_s, big_k, pad = self._features(c, r[:, c])
                moving.append((k, ps, pc, big_s, big_k, c))
                a1 = _sym(p0 @ inv @ np.swapaxes(ps, 1, 2))
                a2 = _sym(p0 @ inv @ np.swapaxes(pc, 1, 2))
                b11 = ps @ inv @ np.swapaxes(ps, 1, 2)
                b12 = _sym(ps @ inv @ np.swapaxes(pc, 1, 2))
                b22 = pc @ inv @ np.swapaxes(pc, 1, 2)
                f = (a1[..., None] * s[:, None, None] + a2[..., None] * kk[:, None, None]
                     + b11[..., None] * (s * s)[:, None, None]
                     + b12[..., None] * (s * kk)[:, None, None]
                     + b22[..., None] * (kk * kk)[:, None, None])  # (B, N, N, G + 1)
                # sup|f''| (a prismatic joint's f = A_1 δ + B_11 δ² has f'' = 2B_11)
                curve = (np.abs(a1) + np.abs(a2) + 2.0 * np.abs(b11) + 3.0 * np.abs(b12)
                         + 4.0 * np.abs(b22) if ev.revolute[c] else 2.0 * np.abs(b11)
                         ) * pad[:, None, None]
                top = f[:, idx, idx].max(axis=-1) + curve[:, idx, idx]
                mag = np.abs(f).max(axis=-1) + curve
                mag[:, idx, idx] = 0.0
                diag_hi += top
                off += mag
                share[:, k] += np.maximum(top, 0.0) + mag.sum(axis=2)
            magnitude = np.abs(base[body]) + sum(
                (np.abs(terms[c]["ys"]) * bs[:, None, None] + np.abs(terms[c]["yc"])
                 * bk[:, None, None] for _, _, _, bs, bk, c in moving), zero)
            size += (magnitude @ inv_abs) @ np.swapaxes(magnitude, 1, 2)
            for (k1, ps1, pc1, s1, c1, _), (k2, ps2, pc2, s2, c2, _) in itertools.permutations(
                    moving, 2):
                # a sibling product Δu_1 N Δu_2ᵀ, bounded through the features' magnitudes
                cross = sum(w[:, None, None] * np.abs(x @ inv @ np.swapaxes(y, 1, 2))
                            for w, x, y in ((s1 * s2, ps1, ps2), (s1 * c2, ps1, pc2),
                                            (c1 * s2, pc1, ps2), (c1 * c2, pc1, pc2)))
                diag_hi += cross[:, idx, idx]
                reach = 0.5 * cross.sum(axis=2)
                share[:, k1] += reach
                share[:, k2] += reach
                cross[:, idx, idx] = 0.0
                off += cross
        rounding = ROUNDING * (np.abs(vt) @ size @ np.abs(vec))
        comparison = off + rounding
        comparison[:, idx, idx] = lam + diag_hi + rounding[:, idx, idx]
        upper = np.linalg.eigvalsh(comparison)[:, -1]
        # KJ = I + E at every q (E constant): ‖q̇‖(1 − ‖E‖) ≤ ‖KJq̇‖
        residual = np.einsum("bjli,li->bjl", coef, ev.motion) - np.eye(n)[None]
        miss = np.linalg.norm(residual, axis=(1, 2)) + ROUNDING * np.einsum(
            "bjli,li->b", np.abs(coef), np.abs(ev.motion))
        upper = upper / np.maximum(1.0 - miss, 0.0) ** 2
        return {"value": lam[:, -1], "upper": upper * (1.0 + _PAD),
                "split": self._split(comparison, share)}

    @staticmethod
    def _split(comparison: Array, share: Array) -> Array:
        """The joint bringing most to the row whose Gershgorin reach is the largest.

        Row i of the comparison matrix reaches λ_i + e_i + Σ_m Ē_im; the row with the
        largest reach bounds λ_max, and the joint adding most to it (``share``, (B, d, N))
        is bisected. (The largest eigenvector's own row is not enough: it may not depend
        on the joints that keep another row's reach above it.)
        """
        row = np.argmax(comparison.sum(axis=2), axis=1)
        return np.argmax(share[np.arange(share.shape[0]), :, row], axis=1)


def _sym(a: Array) -> Array:
    """The sums a + aᵀ of a stack of square matrices (..., n, n)."""
    return a + np.swapaxes(a, -1, -2)


def floor_goal(attained: float, target_gap: float) -> float:
    """The goal of a floor search: within ``target_gap`` of an ``attained`` λ_min.

    The gap is at least ``LOCAL_GAP``: a search asked for less leaves the rest to its
    branch and bound proper rather than give the floor its whole share (with a target
    of 0 the floor would never stop before its time). A thousandth of the gap is kept to
    spare, so that the bracket's relative gap, computed from the same numbers, is at
    most the target after rounding.
    """
    return (1.0 - 0.999 * max(target_gap, LOCAL_GAP)) * attained


class WindowRung:
    """Several windows' local left inverses as one box source: the smallest bound of each.

    Each window's 1/λ_max(G) bounds λ_min at a point and over a box, so the best of them
    does too; the split is that of the window giving the bound.
    """

    def __init__(self, locals_: Sequence[LocalInverse]) -> None:
        """Keep the local inverses (at least one)."""
        if not locals_:
            raise InvalidInputError("locals_", "give at least one local inverse")
        self.locals = list(locals_)

    def values(self, q: Array) -> Array:
        """The best bound min_w 1/λ_max(G_w(q)) at configurations q (B, nv)."""
        return np.asarray(np.max([local.values(q) for local in self.locals], axis=0))

    def boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        """:meth:`LocalInverse.boxes` of every window, the smallest ``upper`` and ``value``."""
        outs = [local.boxes(lo, hi) for local in self.locals]
        if len(outs) == 1:
            return outs[0]
        upper = np.stack([out["upper"] for out in outs])
        pick = np.argmin(upper, axis=0)
        rows = np.arange(lo.shape[0])
        return {"value": np.min([out["value"] for out in outs], axis=0),
                "upper": upper[pick, rows],
                "split": np.stack([out["split"] for out in outs])[pick, rows]}


def positive_definite(weights: Array) -> bool:
    """Every L_l positive definite with cond(L_l) ≤ ``MAX_CONDITION``.

    The local inverse needs L_l⁻¹ to within its padding.
    """
    eig = np.linalg.eigvalsh(0.5 * (weights + np.swapaxes(weights, 1, 2)))
    return bool(np.all(np.isfinite(eig)) and np.all(eig[:, -1] > 0.0)
                and np.all(eig[:, 0] * MAX_CONDITION >= eig[:, -1]))


def local_inverse_floor(
    evaluator: BoxEvaluator, weights: Array, *, time_limit: float, target_gap: float,
    max_boxes: int | None = None, batch: int | None = None,
    ladder: Sequence[Sequence[Window]] = LADDER,
    evaluations: EvaluationFactory | None = None, goal: float = math.inf,
    progress: FloorProgress | None = None,
) -> LocalInverseFloor:
    """Certified lower bound 1/sup_q λ_max(G(q)) of inf_q λ_min(Σ J_lᵀL_lJ_l).

    Best-first branch and bound on the upper bound of λ_max(G) over boxes of the
    evaluator's joint box, until the bracket of sup λ_max(G) is within ``target_gap``
    (relative), the certified lower bound reaches ``goal``, the time limit or the box
    cap. Every box is enclosed with one rung of the ``ladder`` of the rows' windows (the
    smallest bound of the rung's windows, :class:`WindowRung`), starting at the first.
    A box is dropped once its bound is at most the pruning level P (the larger of
    1/``goal`` and the largest λ_max(G) at a box centre with the last rung); a box whose
    own centre value is above P with its rung — no box around that centre can be
    certified with it — is enclosed again with the next rung instead of being bisected.
    Whatever the windows, 1/max(P, the largest bound of a kept box) is a lower bound
    of λ_min over the whole box.

    Args:
        evaluator: the Gram matrix's box evaluator (its joint box is searched).
        weights: L_l (N, 6, 6), positive definite.
        time_limit: budget [s].
        target_gap: relative gap of the bracket of sup λ_max(G) to stop at.
        max_boxes: optional cap on evaluated boxes.
        batch: boxes bisected per step; None: ``FLOOR_BATCH`` serially,
            ``FLOOR_BATCH_PARALLEL`` with ``evaluations``.
        ladder: rungs of the rows' windows (:class:`LocalInverse`), at least one rung
            of at least one window.
        evaluations: optional parallel box map built on a :class:`WindowRung` (e.g.
            :class:`~robot_tv_dynamics.bounds.parallel.DaskBoxEvaluation`; one per
            rung); the search stays here and the boxes are the serial search's.
        goal: stop once the certified lower bound is at least this (e.g. within the
            caller's gap of a value already attained); ∞: no such stop.
        progress: optional, called with (the certified lower bound so far, boxes
            evaluated) about 5 times per second.

    Returns:
        A :class:`LocalInverseFloor`; ``lower`` 0 at once when a joint's motion axis is
        zero (λ_min is 0 there).

    Raises:
        InvalidInputError: no rung, or a rung without a window.
    """
    start = time.monotonic()
    if not ladder or not all(ladder):
        raise InvalidInputError("ladder", "give at least one rung of at least one window")
    if not np.all(np.any(evaluator.motion != 0.0, axis=1)):
        return LocalInverseFloor(0.0, 0.0, 0, time.monotonic() - start, True)
    rungs = [WindowRung([LocalInverse(evaluator, weights, width) for width in rung])
             for rung in ladder]
    last = len(rungs) - 1
    if evaluator.d == 0:
        value = float(rungs[-1].values(evaluator.full(np.zeros((1, 0))))[0]) * (1.0 - _PAD)
        return LocalInverseFloor(value, value, 1, time.monotonic() - start, True)
    maps = [rung.boxes if evaluations is None else evaluations(rung) for rung in rungs]
    if batch is None:
        batch = FLOOR_BATCH if evaluations is None else FLOOR_BATCH_PARALLEL
    # the largest λ_max(G) at a point with the last rung, from the joint box's centre and
    # ``_START_POINTS`` random points on (the boxes' centres then)
    points = evaluator.lower + np.random.default_rng(0).random((_START_POINTS, evaluator.d)) * (
        evaluator.upper - evaluator.lower)
    points = np.vstack([0.5 * (evaluator.lower + evaluator.upper), points])
    attained = 1.0 / float(np.min(rungs[-1].values(evaluator.full(points))))
    prune = max(1.0 / goal if goal > 0.0 else math.inf, attained)
    counter = itertools.count()
    # entries: (−upper, count, lo, hi, split, window, λ_max(G) at the centre)
    heap: list[tuple[float, int, Array, Array, int, int, float]] = []
    boxes = 0

    def enclose(lo: Array, hi: Array, level: int, known: Array) -> None:
        """Enclose boxes with rung ``level``; ``known``: a bound each already has."""
        nonlocal attained, prune, boxes
        out = maps[level](lo, hi)
        boxes += lo.shape[0]
        if level == last:
            attained = max(attained, float(np.max(out["value"])))
            prune = max(prune, attained)
        upper = np.minimum(out["upper"], known)
        for c in range(lo.shape[0]):
            if upper[c] > prune:
                heapq.heappush(heap, (-float(upper[c]), next(counter), lo[c], hi[c],
                                      int(out["split"][c]), level, float(out["value"][c])))

    def ceiling() -> float:
        return max(-heap[0][0], prune) if heap else prune

    enclose(evaluator.lower[None], evaluator.upper[None], 0, np.array([math.inf]))
    last_report = time.monotonic()
    while heap:
        if progress is not None and time.monotonic() - last_report > 0.2:
            last_report = time.monotonic()
            progress(1.0 / ceiling(), boxes)
        if (ceiling() - attained) <= target_gap * ceiling() or ceiling() * goal <= 1.0:
            break
        if time.monotonic() - start >= time_limit or (max_boxes is not None
                                                       and boxes >= max_boxes):
            break
        popped = [heapq.heappop(heap) for _ in range(min(batch, len(heap)))]
        # a box whose rung's value at its centre is above P: the next rung, same box
        again = [e[5] < last and e[6] > prune for e in popped]
        for level in range(len(rungs)):
            moved = [e for e, up in zip(popped, again, strict=True) if up and e[5] == level - 1]
            split = [e[:5] for e, up in zip(popped, again, strict=True)
                     if not up and e[5] == level]
            # a box keeps the bound it had: every rung's bound holds over it and its halves
            if moved:
                enclose(np.array([e[2] for e in moved]), np.array([e[3] for e in moved]),
                        level, np.array([-e[0] for e in moved]))
            if split:
                enclose(*bisect(split), level, np.repeat([-e[0] for e in split], 2))
    top = ceiling()
    lower = 1.0 / top if math.isfinite(top) and top > 0.0 else 0.0
    best = 1.0 / attained
    return LocalInverseFloor(lower, best, boxes, time.monotonic() - start,
                             (top - attained) <= target_gap * top)
