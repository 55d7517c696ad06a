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
the joint angle: no Taylor remainder), and
:func:`~robot_tv_dynamics.bounds.ladder.local_inverse_floor` brackets sup_q λ_max(G)
by branch and bound, climbing a ladder of windows box by box
(:data:`~robot_tv_dynamics.bounds.ladder.LADDER`); 1/(its upper end) is then a
certified lower bound of inf_q λ_min.
"""

from __future__ import annotations

import itertools

import numpy as np

from robot_tv_dynamics.bounds.evaluator import BoxEvaluator
from robot_tv_dynamics.bounds.interval import ROUNDING
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array

#: Relative padding of the certified upper end of λ_max(G): covers the rounding of L_l⁻¹
#: (condition number up to ``MAX_CONDITION``) and of a_lᵀS_l = 1.
PAD = 1e3 * ROUNDING
#: Largest condition number of an L_l the padding covers (rounding of L_l⁻¹ ≈ cond·10⁻¹⁶
#: relative, 10³ below ``PAD``); the spatial inertias of the Panda and the UR5 stay
#: below 2·10⁴. A stiffer weight is not used (:func:`positive_definite` says no).
MAX_CONDITION = 1e6
#: A rows' window: a number of tree steps around the joint, or (up, down) steps to its
#: ancestors and its descendants.
Window = int | tuple[int, int]
#: Default window of a :class:`LocalInverse`: each joint is read from its own relative
#: twist and those of its tree neighbours (the first rung of
#: :data:`~robot_tv_dynamics.bounds.ladder.LADDER`).
WINDOW = 1
#: Grid steps over each joint's half-range at which the one-joint terms of a box's
#: enclosure are evaluated (their bound adds h²/8 · sup|f''| between grid points).
GRID = 8


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
                top, mag, big_s, big_k = self._one_joint_bounds(c, r[:, c], p0, ps, pc, inv)
                moving.append((k, ps, pc, big_s, big_k, c))
                diag_hi += top
                off += mag
                share[:, k] += np.maximum(top, 0.0) + mag.sum(axis=2)
            magnitude = np.abs(base[body]) + sum(
                (np.abs(terms[c]["ys"]) * bs[:, None, None] + np.abs(terms[c]["yc"])
                 * bk[:, None, None] for _, _, _, bs, bk, c in moving), zero)
            size += (magnitude @ inv_abs) @ np.swapaxes(magnitude, 1, 2)
            _add_sibling_products(moving, inv, diag_hi, off, share)
        rounding = ROUNDING * (np.abs(vt) @ size @ np.abs(vec))
        comparison = off + rounding
        comparison[:, idx, idx] = lam + diag_hi + rounding[:, idx, idx]
        upper = np.linalg.eigvalsh(comparison)[:, -1]
        # KJ = I + E at every q (E constant): ‖q̇‖(1 − ‖E‖) ≤ ‖KJq̇‖
        residual = np.einsum("bjli,li->bjl", coef, ev.motion) - np.eye(n)[None]
        miss = np.linalg.norm(residual, axis=(1, 2)) + ROUNDING * np.einsum(
            "bjli,li->b", np.abs(coef), np.abs(ev.motion))
        upper = upper / np.maximum(1.0 - miss, 0.0) ** 2
        return {"value": lam[:, -1], "upper": upper * (1.0 + PAD),
                "split": self._split(comparison, share)}

    def _one_joint_bounds(self, c: int, r_c: Array, p0: Array, ps: Array, pc: Array,
                          inv: Array) -> tuple[Array, Array, Array, Array]:
        """Bounds of one joint's term f_c over |δ| ≤ r_c (see :meth:`boxes`).

        Args:
            c: the joint.
            r_c: its half-widths, (B,).
            p0: Vᵀu0 of the body's row block, (B, N, 6).
            ps: Vᵀy_s of the joint's sine feature, (B, N, 6).
            pc: Vᵀy_c of its 1 − cos feature, (B, N, 6).
            inv: N_b = L_b⁻¹, (6, 6).

        Returns:
            (the diagonal's largest values (B, N), the off-diagonal magnitudes (B, N, N)
            with a zero diagonal, S and K: the largest |s| and k over the box, (B,)).
        """
        s, kk, big_s, big_k, pad = self._features(c, r_c)
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
                 + 4.0 * np.abs(b22) if self.ev.revolute[c] else 2.0 * np.abs(b11)
                 ) * pad[:, None, None]
        idx = np.arange(p0.shape[1])
        top = f[:, idx, idx].max(axis=-1) + curve[:, idx, idx]
        mag = np.abs(f).max(axis=-1) + curve
        mag[:, idx, idx] = 0.0
        return top, mag, big_s, big_k

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


def _add_sibling_products(moving: list[tuple[int, Array, Array, Array, Array, int]],
                          inv: Array, diag_hi: Array, off: Array, share: Array) -> None:
    """Add the bounds of the sibling products Δu_1 N Δu_2ᵀ of one body (in place).

    Bounded through the features' magnitudes S and K; ``moving`` holds, per moving child,
    (its active dimension, Vᵀy_s, Vᵀy_c, S, K, the joint). The diagonal goes to
    ``diag_hi`` (B, N), the rest to ``off`` (B, N, N), each row's reach to ``share``
    (B, d, N) of both joints.
    """
    idx = np.arange(diag_hi.shape[1])
    for (k1, ps1, pc1, s1, c1, _), (k2, ps2, pc2, s2, c2, _) in itertools.permutations(
            moving, 2):
        cross = sum((w[:, None, None] * np.abs(x @ inv @ np.swapaxes(y, 1, 2))
                     for w, x, y in ((s1 * s2, ps1, ps2), (s1 * c2, ps1, pc2),
                                     (c1 * s2, pc1, ps2), (c1 * c2, pc1, pc2))),
                    np.zeros_like(off))
        diag_hi += cross[:, idx, idx]
        reach = 0.5 * cross.sum(axis=2)
        share[:, k1] += reach
        share[:, k2] += reach
        cross[:, idx, idx] = 0.0
        off += cross


def _sym(a: Array) -> Array:
    """The sums a + aᵀ of a stack of square matrices (..., n, n)."""
    return a + np.swapaxes(a, -1, -2)


def positive_definite(weights: Array) -> bool:
    """Every L_l positive definite with cond(L_l) ≤ ``MAX_CONDITION``.

    The local inverse needs L_l⁻¹ to within its padding.
    """
    eig = np.linalg.eigvalsh(0.5 * (weights + np.swapaxes(weights, 1, 2)))
    return bool(np.all(np.isfinite(eig)) and np.all(eig[:, -1] > 0.0)
                and np.all(eig[:, 0] * MAX_CONDITION >= eig[:, -1]))
