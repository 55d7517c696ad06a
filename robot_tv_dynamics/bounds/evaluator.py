r"""Batched kinematics of the reduced joint box and the enclosure of one box of it.

:class:`BoxEvaluator` computes the stacked LOCAL Jacobians J(q), their q-derivatives and
eigenvalues of JᵀJ for many configurations at once (the sampled search), and the
certified enclosure of λ_min / λ_max over a box (the branch and bound), optionally
through a fitted trigonometric model of JᵀJ (:class:`_TrigModel`).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import skew
from robot_tv_dynamics.bounds.box import (
    JointSearchBox,
    kinematic_chain,
    local_jacobians,
)
from robot_tv_dynamics.bounds.interval import (
    ROUNDING,
    adjoint_matrix,
    eigenvalue_enclosure,
    interval_lie_brackets,
    interval_matmul,
    lie_bracket,
)
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel

_MAX_TRIG_GRID = 400_000
#: Coefficients below this fraction of the largest are lumped into one bounded term.
_COEFF_DROP = 1e-9


@dataclass(frozen=True)
class _TrigModel:
    r"""JᵀJ as an exact finite sum, for the third-order Taylor remainder.

    Each column of J_l is Ad(g_{l←i}) S_i, a product of one factor per joint on the
    path: affine in (cos q_k, sin q_k) for a revolute joint (unit axis), affine in q_k
    for a prismatic one. Hence A(q) = J(q)ᵀJ(q) is a trigonometric polynomial of degree
    ≤ 2 in every revolute angle and a polynomial of degree ≤ 2 in every prismatic
    coordinate:

    .. math::
        A(q) = \sum_t C_t \prod_{k\,\mathrm{rev}} e^{i f_{tk} q_k}
               \prod_{p\,\mathrm{pri}} (q_p - o_p)^{α_{tp}}, \quad
        f_{tk} ∈ \{-2..2\},\ α_{tp} ∈ \{0, 1, 2\}

    recovered exactly (up to rounding) from 5 (resp. 3) grid points per coordinate by
    an FFT (resp. a Vandermonde solve), and checked at random configurations.

    Attributes:
        freq: |f_t| per searched coordinate, (T, d) (0 on prismatic coordinates).
        power: α_t per searched coordinate, (T, d) (0 on revolute coordinates).
        offset: o, (d,) (prismatic expansion points).
        prismatic: (d,) mask.
        abs_coeff: |C_t| entrywise, (T, n·n).
        dropped: Σ |C_t| over the lumped small terms, (n·n,).
    """

    freq: Array
    power: Array
    offset: Array
    prismatic: npt.NDArray[np.bool_]
    abs_coeff: Array
    dropped: Array

    def remainder(self, centre: Array, r: Array) -> Array:
        r"""Entrywise bound (B, n·n) on A(q) − T₂(q) over boxes (centre ± r, (B, d)).

        T₂ is the second-order Taylor polynomial at the centre. For one term φ_t,
        |R₃| ≤ (1/3!) Σ_ijk r_i r_j r_k sup|∂_ijk φ_t| = [s³] Π_k G_k(s) with
        G_k(s) = e^{|f_k| r_k s} for a revolute factor (|∂ᵃ e^{ifq}| = |f|ᵃ) and
        G_p(s) = D₀ + D₁ r_p s + D₂ r_p² s²/2 with D_a = sup|∂ᵃ (q − o)^α| on the box for
        a prismatic one. The lumped terms use the largest f and every α at once.
        """
        rev = ~self.prismatic
        s_t = r[:, rev] @ self.freq[:, rev].T  # (B, T)
        trig_series = (s_t, 0.5 * s_t ** 2, s_t ** 3 / 6.0)  # s_t^i / i!, i = 1..3
        s_drop = 2.0 * np.sum(r[:, rev], axis=1)
        drop = [np.ones_like(s_drop), s_drop, 0.5 * s_drop ** 2, s_drop ** 3 / 6.0]
        out = np.zeros((r.shape[0], self.abs_coeff.shape[1]))
        prismatic = np.flatnonzero(self.prismatic)
        for powers in np.unique(self.power[:, prismatic], axis=0):
            members = np.flatnonzero(np.all(self.power[:, prismatic] == powers, axis=1))
            poly = [np.ones(r.shape[0]), np.zeros(r.shape[0]), np.zeros(r.shape[0]),
                    np.zeros(r.shape[0])]
            for k, alpha in zip(prismatic, powers, strict=True):
                reach = np.abs(centre[:, k] - self.offset[k]) + r[:, k]
                g = [reach ** alpha, alpha * reach ** max(alpha - 1.0, 0.0) * r[:, k],
                     0.5 * alpha * (alpha - 1.0) * r[:, k] ** 2]
                poly = [sum(poly[i] * g[c - i] for i in range(c + 1) if c - i < 3)
                        for c in range(4)]
            coeff = self.abs_coeff[members]
            out += poly[3][:, None] * np.sum(coeff, axis=0)[None, :]
            for i in range(1, 4):
                if np.any(poly[3 - i] != 0.0):
                    out += poly[3 - i][:, None] * (trig_series[i - 1][:, members] @ coeff)
        for k in prismatic:
            reach1 = np.abs(centre[:, k] - self.offset[k]) + r[:, k]
            gd = [np.maximum(1.0, np.maximum(reach1, reach1 ** 2)),
                  np.maximum(1.0, 2.0 * reach1) * r[:, k], r[:, k] ** 2]
            drop = [sum(drop[i] * gd[c - i] for i in range(c + 1) if c - i < 3)
                    for c in range(4)]
        return np.asarray(out + drop[3][:, None] * self.dropped)


def _fit_trig_model(evaluator: BoxEvaluator) -> _TrigModel | None:
    """Fit :class:`_TrigModel` to J(q)ᵀJ(q); None when it does not apply or does not fit."""
    act = evaluator.active
    d, n = evaluator.d, evaluator.nv
    if d == 0:
        return None
    prismatic = ~evaluator.revolute[act]
    if np.any(np.abs(evaluator.omega[act][~prismatic] - 1.0) > 1e-12):
        return None  # a revolute axis of non-unit norm: non-integer frequencies
    sizes = np.where(prismatic, 3, 5)
    if int(np.prod(sizes)) > _MAX_TRIG_GRID:
        return None
    offset = np.where(prismatic, 0.5 * (evaluator.lower + evaluator.upper), 0.0)
    half = 0.5 * (evaluator.upper - evaluator.lower)
    axes = [offset[k] + half[k] * np.array([-1.0, 0.0, 1.0]) if prismatic[k]
            else 2.0 * np.pi * np.arange(5) / 5.0 for k in range(d)]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
    gram = evaluator.gram(evaluator.full(mesh)).reshape(tuple(sizes) + (n, n))
    coeff = np.fft.fftn(gram, axes=tuple(np.flatnonzero(~prismatic))) / 5.0 ** (~prismatic).sum()
    vandermonde_inv = np.linalg.inv(np.vander(np.array([-1.0, 0.0, 1.0]), 3, increasing=True))
    for k in np.flatnonzero(prismatic):
        scale = np.diag(1.0 / half[k] ** np.arange(3))  # coefficients of (q − o)^α
        coeff = np.moveaxis(np.tensordot(scale @ vandermonde_inv, np.moveaxis(coeff, k, 0),
                                         axes=(1, 0)), 0, k)
    per_axis = [np.arange(3) if prismatic[k] else np.fft.fftfreq(5, 1.0 / 5.0)
                for k in range(d)]
    index = np.stack(np.meshgrid(*per_axis, indexing="ij"), axis=-1).reshape(-1, d)
    flat = coeff.reshape(-1, n * n)
    freq = np.where(prismatic, 0.0, index)
    power = np.where(prismatic, index, 0.0)
    # check the representation at random configurations of the box
    rng = np.random.default_rng(12345)
    x = evaluator.lower + rng.random((16, d)) * (evaluator.upper - evaluator.lower)
    basis = np.exp(1j * x @ freq.T) * np.prod(
        np.where(prismatic, x - offset, 1.0)[:, None, :] ** power[None], axis=2)
    rebuilt = np.real(basis @ flat)
    direct = evaluator.gram(evaluator.full(x)).reshape(16, -1)
    if np.max(np.abs(rebuilt - direct)) > 1e-9 * max(1.0, float(np.max(np.abs(direct)))):
        return None
    magnitude = np.abs(flat)
    keep = np.max(magnitude, axis=1) > _COEFF_DROP * float(np.max(magnitude))
    return _TrigModel(freq=np.abs(freq[keep]), power=power[keep], offset=offset,
                      prismatic=prismatic, abs_coeff=magnitude[keep],
                      dropped=np.sum(magnitude[~keep], axis=0))


#: Fitted trigonometric models per model and search box (fitting the Panda takes seconds).
_TRIG_CACHE: weakref.WeakKeyDictionary[RobotModel, dict[tuple[bytes, ...], _TrigModel | None]] = (
    weakref.WeakKeyDictionary())


class BoxEvaluator:
    r"""Batched J(q) and interval enclosures of J, ∂J, ∂²J over boxes, in numpy.

    Kinematics of a tree of 1-dof joints (Pinocchio's convention oMᵢ = oM_parent ·
    placementᵢ · exp(Sᵢ qᵢ)): the LOCAL Jacobian of body l is built recursively,
    J_l = Ad(exp(S_l q_l)⁻¹) Ad(placement_l⁻¹) [J_parent | 0] with column l set to S_l.
    Over a box, each factor is an interval matrix (midpoint at the box centre, radius
    from |sin δ| ≤ sin r, 1 − cos δ ≤ 1 − cos r for a rotation, r|Ŝ_v| for a
    translation), and midpoint-radius arithmetic encloses J over the whole box; the
    midpoint is J at the centre. Derivatives are brackets of columns (see the module
    docstring), enclosed by interval cross products.
    """

    def __init__(self, model: RobotModel, box: JointSearchBox, search: tuple[Array, Array],
                 weights: Array | None = None):
        """Prepare the batched kinematics of ``model`` over ``box``.

        Args:
            model: the arm.
            box: the joint box searched.
            search: (lower, upper) of the active coordinates, finite
                (``bounds.sampled.search_bounds``).
            weights: constant row weights W_l, (N, 6, 6): the Gram matrix becomes
                Σ_l J_lᵀW_lᵀW_lJ_l; None = the plain JᵀJ.
        """
        chain = kinematic_chain(model)
        pm = model.pinocchio_model
        self.n = model.n_bodies
        self.nv = model.nv
        self.base = np.array(box.fixed)
        self.active = np.flatnonzero(box.active)
        self.d = self.active.size
        self.lower, self.upper = search
        self.parent = chain.parent
        jac = local_jacobians(model, self.base)
        self.motion = np.array(jac[np.arange(self.nv), :, np.arange(self.nv)])  # S_l (nv, 6)
        self.revolute = chain.omega > 0.0
        self.placement_inv = np.array([
            adjoint_matrix(np.asarray(pm.jointPlacements[j].rotation).T,
                     -np.asarray(pm.jointPlacements[j].rotation).T
                     @ np.asarray(pm.jointPlacements[j].translation))
            for j in range(1, pm.njoints)])
        self.placement_abs = np.abs(self.placement_inv)
        self.omega = chain.omega
        unit = np.where(self.revolute[:, None], self.motion[:, 3:], self.motion[:, :3])
        self.axis_hat = skew(unit / np.maximum(np.linalg.norm(unit, axis=1), 1e-300)[:, None])
        self.axis_hat_sq = self.axis_hat @ self.axis_hat
        self.linear_hat = skew(self.motion[:, :3])
        # [i, kk]: i < active[kk]: ∂J[:, i]/∂q_k = ad(J[:, i]) J[:, k], else 0.
        self._mask = (np.arange(self.nv)[:, None] < self.active[None, :]).astype(np.float64)
        self._model: RobotModel | None = model
        #: Constant row weights W_l (N, 6, 6): the Gram matrix becomes Σ_l J_lᵀW_lᵀW_lJ_l
        #: (None: W_l = I, the plain JᵀJ).
        self.weights = None if weights is None else np.array(weights, dtype=np.float64)
        self._trig_key = (self.base.tobytes(), self.active.tobytes(), self.lower.tobytes(),
                          self.upper.tobytes(),
                          b"" if self.weights is None else self.weights.tobytes())
        self._trig_fixed: tuple[_TrigModel | None] | None = None

    def __getstate__(self) -> dict[str, object]:
        """Pickle without the model (for worker processes): the fitted trig model goes along."""
        state = dict(self.__dict__)
        state["_trig_fixed"] = (self.trig,)
        state["_model"] = None
        return state

    def weigh(self, x: Array) -> Array:
        """W_l x_l for x of shape (B, N, 6, ...): the rows of each body's Jacobian weighted."""
        if self.weights is None:
            return x
        shape = x.shape
        flat = x.reshape(shape[0], shape[1], 6, -1)
        return (self.weights[None] @ flat).reshape(shape)

    def weigh_interval(self, mid: Array, rad: Array) -> tuple[Array, Array]:
        """:meth:`weigh` of an interval matrix (mid, rad): W mid ± |W| rad (W is exact)."""
        if self.weights is None:
            return mid, rad
        shape = mid.shape
        absw = np.abs(self.weights)[None]
        return ((self.weights[None] @ mid.reshape(shape[0], shape[1], 6, -1)).reshape(shape),
                (absw @ rad.reshape(shape[0], shape[1], 6, -1)).reshape(shape))

    @property
    def trig(self) -> _TrigModel | None:
        """The trigonometric model of JᵀJ, or None when it does not apply.

        Fitted on first use and cached per model and search box.
        """
        if self._trig_fixed is not None:
            return self._trig_fixed[0]
        assert self._model is not None
        cache = _TRIG_CACHE.setdefault(self._model, {})
        if self._trig_key not in cache:
            cache[self._trig_key] = _fit_trig_model(self)
        return cache[self._trig_key]

    def full(self, x: Array) -> Array:
        """Full configurations (B, nv) from active coordinates (B, d)."""
        q = np.repeat(self.base[None, :], x.shape[0], axis=0)
        q[:, self.active] = x
        return q

    def _motion_inverse(self, l: int, q: Array, r: Array | None) -> tuple[Array, Array]:
        """Ad(exp(S_l q)⁻¹) over q ∈ [q − r, q + r] as (mid, rad), each (B, 6, 6)."""
        b = q.shape[0]
        mid = np.zeros((b, 6, 6))
        rad = np.zeros((b, 6, 6))
        if self.revolute[l]:
            theta = -self.omega[l] * q  # exp(S q)⁻¹ = rotation by −|ω| q about the unit axis
            hat, hat_sq = self.axis_hat[l], self.axis_hat_sq[l]
            rot = (np.eye(3) + np.sin(theta)[:, None, None] * hat
                   + (1.0 - np.cos(theta))[:, None, None] * hat_sq)
            mid[:, :3, :3] = rot
            mid[:, 3:, 3:] = rot
            if r is not None:
                w = self.omega[l] * r
                sin_r = np.where(w < 0.5 * np.pi, np.sin(np.minimum(w, 0.5 * np.pi)), 1.0)
                cos_r = np.where(w < np.pi, 1.0 - np.cos(np.minimum(w, np.pi)), 2.0)
                spread = (sin_r[:, None, None] * np.abs(hat)
                          + cos_r[:, None, None] * np.abs(hat_sq))
                rot_rad = np.abs(rot) @ spread
                rad[:, :3, :3] = rot_rad
                rad[:, 3:, 3:] = rot_rad
        else:
            mid[:, :3, :3] = np.eye(3)
            mid[:, 3:, 3:] = np.eye(3)
            mid[:, :3, 3:] = -q[:, None, None] * self.linear_hat[l]
            if r is not None:
                rad[:, :3, 3:] = r[:, None, None] * np.abs(self.linear_hat[l])
        return mid, rad

    def intervals(self, q: Array, r: Array | None) -> tuple[Array, Array]:
        """J over the boxes [q − r, q + r] (B, nv each) as (mid, rad), each (B, N, 6, nv).

        With ``r=None`` the radius is zero and the midpoint is J(q).
        """
        b = q.shape[0]
        mid = np.zeros((b, self.n, 6, self.nv))
        rad = np.zeros((b, self.n, 6, self.nv))
        for l in range(self.n):
            p = self.parent[l]
            if p >= 0:
                ym = self.placement_inv[l] @ mid[:, p]
                yr = self.placement_abs[l] @ rad[:, p]
                am, ar = self._motion_inverse(l, q[:, l], None if r is None else r[:, l])
                mid[:, l], rad[:, l] = interval_matmul(am, ar, ym, yr)
            mid[:, l, :, l] = self.motion[l]
            rad[:, l, :, l] = 0.0
        return mid, rad

    def jacobians(self, q: Array) -> Array:
        """Stacked LOCAL Jacobians (B, N, 6, nv) at configurations q (B, nv)."""
        return self.intervals(q, None)[0]

    def derivatives(self, jac: Array) -> Array:
        """∂J_l[:, i]/∂q_k for the active k: (B, N, 6, nv, d) from the bracket formula."""
        return lie_bracket(jac[..., :, None], jac[..., None, self.active]) * self._mask

    def gram(self, q: Array) -> Array:
        """A(q) = J(q)ᵀJ(q), (B, nv, nv), at configurations q (B, nv)."""
        out = np.empty((q.shape[0], self.nv, self.nv))
        for start in range(0, q.shape[0], 2048):
            chunk = slice(start, start + 2048)
            jac = self.weigh(self.jacobians(q[chunk])).reshape(-1, 6 * self.n, self.nv)
            out[chunk] = np.swapaxes(jac, 1, 2) @ jac
        return out

    def values(self, q: Array) -> tuple[Array, Array]:
        """λ_min(JᵀJ) and λ_max(JᵀJ) = σ_max(J)² at configurations q (B, nv)."""
        out_min = np.empty(q.shape[0])
        out_max = np.empty(q.shape[0])
        for start in range(0, q.shape[0], 1024):
            chunk = slice(start, start + 1024)
            jac = self.weigh(self.jacobians(q[chunk])).reshape(-1, 6 * self.n, self.nv)
            eig = np.linalg.eigvalsh(np.swapaxes(jac, 1, 2) @ jac)
            out_min[chunk], out_max[chunk] = eig[:, 0], eig[:, -1]
        return out_min, out_max

    def gradient(self, q: Array) -> tuple[float, Array, float, Array]:
        """λ_min, its active-coordinate gradient, λ_max, its gradient, at one q (nv,)."""
        jac = self.jacobians(q[None, :])
        djac = self.weigh(self.derivatives(jac)).reshape(-1, self.nv, self.d)
        jf = self.weigh(jac).reshape(-1, self.nv)
        lam, vec = np.linalg.eigh(jf.T @ jf)
        grads = []
        for u in (vec[:, 0], vec[:, -1]):
            # ∂(uᵀ JᵀJ u)/∂q_k = 2 (J u)ᵀ (∂J/∂q_k u)
            grads.append(2.0 * np.einsum("r,rik,i->k", jf @ u, djac, u))
        return float(lam[0]), grads[0], float(lam[-1]), grads[1]

    def boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        """Centre values and certified enclosures of B boxes [lo, hi] (B, d) each.

        Uses the third-order Taylor model with the exact trigonometric remainder when
        :func:`_fit_trig_model` applies, else the interval enclosure of ∂²(JᵀJ).

        Returns:
            ``q`` centres (B, nv); ``lam_min``/``lam_max`` at the centres; ``gamma_lo``
            a lower bound of λ_min(JᵀJ) over each box; ``delta_hi`` an upper bound of
            σ_max(J)² over each box; ``split_min``/``split_max`` the dimension to bisect
            for each extreme.

        The lower side is bisected along the box's widest dimension relative to the
        searched box (so the boxes it keeps shrink evenly in every joint): the lower
        bound of λ_min only bites once a box is small in *every* joint, and bisecting
        the dimension that weighs most on the smallest eigenvector's row kept some
        joints wide (docs/concepts.md has the UR5's brackets with both rules).
        """
        if self.trig is not None:
            return self._taylor_boxes(lo, hi, self.trig)
        return self._interval_boxes(lo, hi)

    def _widest(self, lo: Array, hi: Array) -> Array:
        """The lower side's split of each box: its widest joint relative to the searched box."""
        return np.argmax((hi - lo) / (self.upper - self.lower), axis=1)

    def _taylor_boxes(self, lo: Array, hi: Array, trig: _TrigModel) -> dict[str, Array]:
        """Second-order Taylor model at the centre + exact third-order remainder bound."""
        b, n, d, act = lo.shape[0], self.nv, self.d, self.active
        centre = 0.5 * (lo + hi)
        r = 0.5 * (hi - lo)
        q = self.full(centre)
        jac = self.jacobians(q)
        d1 = self.derivatives(jac)  # (B, N, 6, nv, d)
        t1 = lie_bracket(d1[..., :, :, None], jac[:, :, :, None, None, act])
        t2 = lie_bracket(jac[..., :, None, None], np.swapaxes(d1[:, :, :, act, :], -1, -2)[
            :, :, :, None, :, :])
        d2 = (t1 + t2) * self._mask[:, None, :]  # ∂_j∂_k J_i, (B, N, 6, nv, d_j, d_k)
        jac, d1, d2 = self.weigh(jac), self.weigh(d1), self.weigh(d2)
        rows = 6 * self.n
        jf = jac.reshape(b, rows, n)
        d1f = d1.reshape(b, rows, n * d)
        q1 = (np.swapaxes(d2.reshape(b, rows, n * d * d), 1, 2) @ jf).reshape(
            b, n, d, d, n).transpose(0, 1, 4, 2, 3)
        q2 = (np.swapaxes(d1f, 1, 2) @ d1f).reshape(b, n, d, n, d).transpose(0, 1, 3, 2, 4)
        hess = q1 + np.swapaxes(q1, 1, 2) + q2 + np.swapaxes(q2, 3, 4)  # [i, m, j, k]
        x = np.swapaxes(d1.reshape(b, rows, n, d), 1, 3) @ jf[:, None]
        grad = x + np.swapaxes(x, -1, -2)  # ∂A/∂q_k at the centre, (B, d, n, n)
        a = np.swapaxes(jf, 1, 2) @ jf
        lam, vec = np.linalg.eigh(a)
        rem = trig.remainder(centre, r).reshape(b, n, n)
        gamma_lo, delta_hi, split_hi = eigenvalue_enclosure(
            lam, vec, grad, hess, None, r, remainder=rem)
        pad = ROUNDING * (np.maximum(lam[:, -1], 0.0) + 1.0)
        return {"q": q, "lam_min": lam[:, 0], "lam_max": lam[:, -1],
                "gamma_lo": np.maximum(gamma_lo - pad, 0.0), "delta_hi": delta_hi + pad,
                "split_min": self._widest(lo, hi), "split_max": split_hi}

    def _interval_boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        """Interval enclosure of ∂²(JᵀJ) over the box (second-order remainder)."""
        b, n, d, act = lo.shape[0], self.nv, self.d, self.active
        centre = 0.5 * (lo + hi)
        r = 0.5 * (hi - lo)
        q = self.full(centre)
        r_full = np.zeros_like(q)
        r_full[:, act] = r
        xm, xr = self.intervals(q, r_full)  # J over the box, mid = J(c)
        # ∂_k J over the box, (B, N, 6, nv, d): [X_i, X_k] for i < k
        cm, cr = np.swapaxes(xm, 2, 3), np.swapaxes(xr, 2, 3)  # columns as twists (.., nv, 6)
        km, kr = xm[..., act], xr[..., act]  # (B, N, 6, d)
        d1m, d1r = interval_lie_brackets(cm, cr, km, kr)  # (B, N, nv, 6, d)
        d1m = np.swapaxes(d1m, 2, 3) * self._mask
        d1r = np.swapaxes(d1r, 2, 3) * self._mask
        # ∂_j ∂_k J_i = [∂_j J_i, J_k] + [J_i, ∂_j J_k] (i < k), (B, N, 6, nv, d_j, d_k)
        nb = self.n
        t1m, t1r = interval_lie_brackets(d1m.transpose(0, 1, 3, 4, 2).reshape(b, nb, n * d, 6),
                             d1r.transpose(0, 1, 3, 4, 2).reshape(b, nb, n * d, 6), km, kr)
        t1m = t1m.reshape(b, nb, n, d, 6, d).transpose(0, 1, 4, 2, 3, 5)
        t1r = t1r.reshape(b, nb, n, d, 6, d).transpose(0, 1, 4, 2, 3, 5)
        dkm = d1m[:, :, :, act, :].reshape(b, nb, 6, d * d)  # [.., k, j]
        dkr = d1r[:, :, :, act, :].reshape(b, nb, 6, d * d)
        t2m, t2r = interval_lie_brackets(cm, cr, dkm, dkr)  # (B, N, nv, 6, d_k * d_j)
        t2m = t2m.reshape(b, nb, n, 6, d, d).transpose(0, 1, 3, 2, 5, 4)
        t2r = t2r.reshape(b, nb, n, 6, d, d).transpose(0, 1, 3, 2, 5, 4)
        mask_k = self._mask[:, None, :]
        d2m = (t1m + t2m) * mask_k
        d2r = (t1r + t2r) * mask_k
        xm, xr = self.weigh_interval(xm, xr)
        d1m, d1r = self.weigh_interval(d1m, d1r)
        d2m, d2r = self.weigh_interval(d2m, d2r)
        # ∂²_jk A = Q1[i,m,j,k] + Q1[m,i,j,k] + Q2[i,m,j,k] + Q2[i,m,k,j]
        rows = 6 * self.n
        xfm, xfr = xm.reshape(b, rows, n), xr.reshape(b, rows, n)
        d1fm, d1fr = d1m.reshape(b, rows, n * d), d1r.reshape(b, rows, n * d)
        d2fm, d2fr = d2m.reshape(b, rows, n * d * d), d2r.reshape(b, rows, n * d * d)
        q1m, q1r = interval_matmul(np.swapaxes(d2fm, 1, 2), np.swapaxes(d2fr, 1, 2), xfm, xfr)
        q1m = q1m.reshape(b, n, d, d, n).transpose(0, 1, 4, 2, 3)  # [i, m, j, k]
        q1r = q1r.reshape(b, n, d, d, n).transpose(0, 1, 4, 2, 3)
        q2m, q2r = interval_matmul(np.swapaxes(d1fm, 1, 2), np.swapaxes(d1fr, 1, 2), d1fm, d1fr)
        q2m = q2m.reshape(b, n, d, n, d).transpose(0, 1, 3, 2, 4)  # [i, m, j, k]
        q2r = q2r.reshape(b, n, d, n, d).transpose(0, 1, 3, 2, 4)
        pm_ = q1m + np.swapaxes(q1m, 1, 2) + q2m + np.swapaxes(q2m, 3, 4)
        pr_ = q1r + np.swapaxes(q1r, 1, 2) + q2r + np.swapaxes(q2r, 3, 4)
        hess_j = np.sqrt(np.sum((np.abs(d2m) + d2r) ** 2, axis=(1, 2, 3)))  # ≥ sup ‖∂²_jk J‖
        eps_j = np.einsum("bk,bk->b", r, np.sqrt(np.sum(d1m ** 2, axis=(1, 2, 3)))) \
            + 0.5 * np.einsum("bj,bjk,bk->b", r, hess_j, r)  # ‖J(q) − J(c)‖ ≤ eps_j
        # centre values and first derivatives (exact at c)
        x = np.swapaxes(d1fm.reshape(b, rows, n, d), 1, 3) @ xfm[:, None]  # [b, k, i, j]
        a = np.swapaxes(xfm, 1, 2) @ xfm
        lam, vec = np.linalg.eigh(a)
        g = x + np.swapaxes(x, -1, -2)  # ∂A/∂q_k at the centre, (B, d, n, n)
        scale = np.maximum(lam[:, -1], 0.0) + 1.0
        pad = ROUNDING * scale
        s_min = np.sqrt(np.maximum(lam[:, 0], 0.0))
        s_max = np.sqrt(np.maximum(lam[:, -1], 0.0))
        gamma_lo = np.maximum(s_min - eps_j, 0.0) ** 2
        delta_hi = (s_max + eps_j) ** 2
        schur_lo, schur_hi, split_hi = eigenvalue_enclosure(lam, vec, g, pm_, pr_, r)
        gamma_lo = np.maximum(np.maximum(gamma_lo, schur_lo) - pad, 0.0)
        delta_hi = np.minimum(delta_hi, schur_hi) + pad
        return {"q": q, "lam_min": lam[:, 0], "lam_max": lam[:, -1], "gamma_lo": gamma_lo,
                "delta_hi": delta_hi, "split_min": self._widest(lo, hi),
                "split_max": split_hi}



def relative_gap(lo: float, hi: float) -> float:
    """(hi − lo)/hi of an enclosure [lo, hi] of a positive extreme (inf when unbounded)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return math.inf
    if hi <= 0.0:
        return 0.0 if hi - lo <= 0.0 else math.inf
    return max(0.0, (hi - lo) / hi)
