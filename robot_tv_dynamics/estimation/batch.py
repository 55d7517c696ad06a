r"""Offline payload identification: one SDP fit of a link's load to a whole recording.

The measurement is the live estimators' (:class:`~.measurement.LoadMeasurement`): with
the base model's τ_0 (loads held, identified friction τ_f when given) and the load body's
regressor columns R_b, every sample k gives nv equations

.. math::
    τ_m - τ_f(\dot q) - τ_0(q, \dot q, \ddot q) = R_b\,T\,Φ_L + e_k,

with q̈ from the filtered q̇ (the filter of ``identify``). The load Φ_L (about the link
frame) solves the weighted least squares

.. math::
    \min_{Φ_L} \sum_k \| W (A_k Φ_L - b_k) \|^2 \quad\text{s.t.}\quad
    f(Φ_L) \succeq \operatorname{diag}(δ, δ, δ, 0),\qquad f(Φ_b^0 + T Φ_L) \succeq ε I,

The first constraint makes the load a body *with margin*: its Schur complement in m is
Σ_c = ½ tr(I_c)·1 − I_c (I_c the inertia about the COM), whose eigenvalues are half the
slacks I_i + I_j − I_k of the triangle inequalities, so every slack is ≥ 2δ
(:data:`INERTIA_MARGIN` = δ): the fit never lands on the boundary, where a vendor's
``setLoad`` may refuse a load that is not a body by a rounding error.
W = diag(1/σ_j) with σ_j each joint's residual RMS of a first unweighted fit (so the
noisier joints count less), ε = ``margin_fraction`` · λ_min(f(Φ_b⁰)) as in the live
estimator. The SDP is solved by cvxpy (Clarabel, then SCS).

Confidence intervals (95 %): the residuals of a real arm are coloured (unmodelled
friction, filter, structural vibration), so the per-sample scores g_k = A_kᵀWᵀW e_k are
correlated in time. The covariance of Σ_k g_k is estimated by batch means over B
contiguous blocks (each much longer than the noise's correlation time); with the Gauss-
Newton matrix H = Σ_k A_kᵀWᵀW A_k the sandwich cov(Φ̂_L) = H⁻¹ S H⁻¹, and mass and COM
(c = h/m) take the delta method with Student-t quantiles of B − 1 degrees of freedom.
The interval is the unconstrained linearization around the constrained estimate: where
a constraint is active it is conservative on that side.

The base model's own error in the load body (Φ_b,true − Φ̂_b⁰) is indistinguishable from
the load in a loaded recording; with an unloaded ``reference`` recording its fit (the
tare, same rows) is subtracted and its covariance added, so the interval covers it.
When the reference is the recording the base model was identified on, the tare is
≈ 0 (the identification residual is already orthogonal to those rows) but its covariance
is the identification's uncertainty of that body, which the interval then includes.
With the same motion in both recordings everything else the model gets wrong cancels
between the two fits, and the COM's standard deviation is the noise of both,
∝ √(1/T_loaded + 1/T_reference): the recording's information, not the estimator, sets it
(prewhitening the AR(1) noise, other weights or one joint SDP with a shared model-error
term change it by ≤ 1 %, docs/estimation.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.estimation.measurement import LoadMeasurement
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import (
    DEFAULT_COULOMB_VELOCITY,
    FrictionParameters,
    friction_regressor,
)
from robot_tv_dynamics.identification.data import JointSamples, PreparedData, prepare
from robot_tv_dynamics.inertia import (
    H1,
    PSEUDO_BASIS,
    Array,
    M,
    consistency_margin,
    mass_com_inertia_from_phi,
)
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.sdp import DEFAULT_SOLVERS, solve_sdp

#: contiguous blocks of the batch-means covariance.
DEFAULT_BLOCKS = 20
#: ε as a fraction of λ_min(f(Φ_b⁰)), the live estimator's default.
DEFAULT_MARGIN_FRACTION = 0.25
_PSEUDO_FLAT = PSEUDO_BASIS.reshape(10, 16).T  # vec(f) = _PSEUDO_FLAT @ Φ


@dataclass(frozen=True)
class BatchLoadEstimate:
    """The fitted load and its uncertainty.

    Attributes:
        phi: Φ_L about the link frame (10,), eq. (7) order.
        mass: m [kg].
        com: COM in the link frame (3,) [m].
        inertia: inertia about the COM, axes of the link frame (3, 3) [kg·m²].
        covariance: sandwich covariance of Φ_L (10, 10).
        mass_interval: 95 % interval of m [kg].
        com_interval: 95 % intervals of the COM coordinates (3, 2) [m].
        noise_sigma: per-joint residual RMS used as weights (nv,) [N·m or N].
        margin: λ_min(f(Φ_b⁰ + TΦ_L)) of the body [kg·m²].
        epsilon: ε of the body constraint [kg·m²].
        samples: samples in the fit.
        blocks: blocks of the batch-means covariance.
        solver: the SDP solver that succeeded.
        window: (start, end) of the fit in seconds from the recording's first sample.
        tare: whether an unloaded reference recording was subtracted.
    """

    phi: Array
    mass: float
    com: Array
    inertia: Array
    covariance: Array
    mass_interval: tuple[float, float]
    com_interval: Array
    noise_sigma: Array
    margin: float
    epsilon: float
    samples: int
    blocks: int
    solver: str
    window: tuple[float, float]
    tare: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The ``estimate --batch --json`` object (module docstring of the CLI)."""
        i = self.inertia
        return {
            "mass": self.mass, "com": [float(v) for v in self.com],
            "inertia": {"ixx": float(i[0, 0]), "ixy": float(i[0, 1]), "ixz": float(i[0, 2]),
                        "iyy": float(i[1, 1]), "iyz": float(i[1, 2]), "izz": float(i[2, 2])},
            "interval": {"mass": [float(v) for v in self.mass_interval],
                         "com": [[float(a), float(b)] for a, b in self.com_interval]},
            "phi": [float(v) for v in self.phi], "margin": self.margin,
            "epsilon": self.epsilon, "samples": self.samples, "blocks": self.blocks,
            "noise_sigma": [float(v) for v in self.noise_sigma], "solver": self.solver,
            "window": list(self.window), "tare": self.tare,
        }


def window_samples(samples: JointSamples, start: float | None, end: float | None
                   ) -> JointSamples:
    """The samples with start ≤ t − t_0 ≤ end (seconds from the first sample).

    Raises:
        InvalidInputError: an empty or inverted window.
    """
    t0 = float(samples.t[0])
    lo = -math.inf if start is None else start
    hi = math.inf if end is None else end
    if not lo < hi:
        raise InvalidInputError("--start/--end", f"empty window [{lo:g}, {hi:g}] s")
    keep = (samples.t - t0 >= lo) & (samples.t - t0 <= hi)
    if int(keep.sum()) < 2:
        raise InvalidInputError("--start/--end", f"window [{lo:g}, {hi:g}] s holds "
                                f"{int(keep.sum())} sample(s) of a "
                                f"{samples.t[-1] - t0:.3g} s recording")
    return JointSamples(samples.source, samples.joint_names, samples.t[keep],
                        samples.q[keep], None if samples.qd is None else samples.qd[keep],
                        samples.tau[keep], samples.dropped_nonfinite,
                        samples.dropped_duplicate)


def batch_covariance(a: Array, residual: Array, blocks: int) -> tuple[Array, Array]:
    """Sandwich covariance of a least-squares fit with time-correlated residuals.

    Args:
        a: weighted regressor rows per sample (K, n, p).
        residual: weighted residuals per sample (K, n).
        blocks: contiguous blocks B of the batch means (≥ 2).

    Returns:
        (cov, hessian): H⁻¹ S H⁻¹ with S the batch-means covariance of Σ_k g_k, and H.
    """
    k = a.shape[0]
    if blocks < 2 or k < 2 * blocks:
        raise InvalidInputError("blocks", f"need 2 ≤ B ≤ K/2, got B={blocks}, K={k}")
    hessian = np.einsum("kni,knj->ij", a, a)
    scores = np.einsum("kni,kn->ki", a, residual)
    edges = np.linspace(0, k, blocks + 1).astype(int)
    sums = np.array([scores[edges[b]:edges[b + 1]].sum(axis=0) for b in range(blocks)])
    sizes = np.diff(edges).astype(np.float64)
    # block sums minus their share of the total (zero at an unconstrained optimum)
    centered = sums - np.outer(sizes / k, sums.sum(axis=0))
    s = centered.T @ centered * blocks / (blocks - 1)
    h_inv = np.linalg.pinv(hessian)
    return h_inv @ s @ h_inv, hessian


def mass_com_intervals(phi: Array, cov: Array, blocks: int, level: float = 0.95
                       ) -> tuple[tuple[float, float], Array]:
    """Delta-method intervals of m and c = h/m (Student t with B − 1 dof)."""
    import scipy.stats

    quantile = float(scipy.stats.t.ppf(0.5 + 0.5 * level, blocks - 1))
    m = float(phi[M])
    sd_m = math.sqrt(max(float(cov[M, M]), 0.0))
    mass = (m - quantile * sd_m, m + quantile * sd_m)
    com = np.empty((3, 2))
    for i in range(3):
        grad = np.zeros(10)
        if abs(m) > 0:
            grad[M] = -phi[H1 + i] / m ** 2
            grad[H1 + i] = 1.0 / m
            c = phi[H1 + i] / m
        else:
            grad[H1 + i], c = math.inf, 0.0
        sd = math.sqrt(max(float(grad @ cov @ grad), 0.0)) if abs(m) > 0 else math.inf
        com[i] = (c - quantile * sd, c + quantile * sd)
    return mass, com


#: δ of the load's pseudo-inertia constraint: every triangle inequality of its inertia
#: about the COM holds with a slack of at least 2δ [kg·m²] (δ of it kept through solver
#: tolerances).
INERTIA_MARGIN = 1e-6
_LOAD_FLOOR = np.diag([INERTIA_MARGIN] * 3 + [0.0])


def _solve(a: Array, b: Array, phi_base: Array, transform: Array, epsilon: float,
           solvers: tuple[str, ...]) -> tuple[Array, str]:
    """The SDP of the module docstring on the stacked weighted rows (a @ Φ_L ≈ b)."""
    import cvxpy as cp

    # compress: ‖aΦ − b‖² = ‖RΦ − Qᵀb‖² + const, R from a QR of the stacked rows
    q, r = np.linalg.qr(a)
    rhs = q.T @ b
    scale = np.linalg.norm(r, axis=0)
    scale[scale == 0] = 1.0
    z = cp.Variable(a.shape[1])
    phi = cp.multiply(1.0 / scale[:10], z[:10])
    f_load = cp.Variable((4, 4), symmetric=True)
    f_body = cp.Variable((4, 4), symmetric=True)
    constraints = [
        cp.vec(f_load, order="F") == _PSEUDO_FLAT @ phi, f_load >> _LOAD_FLOOR,
        cp.vec(f_body, order="F") == _PSEUDO_FLAT @ (phi_base + transform @ phi),
        f_body >> epsilon * np.eye(4)]
    # the columns after the first 10 (friction corrections) are unconstrained
    problem = cp.Problem(cp.Minimize(cp.sum_squares((r / scale) @ z - rhs)), constraints)
    solution = solve_sdp(problem, z, solvers)
    return solution.value / scale, solution.solver


def fit_load(
    model: RobotModel,
    link: str,
    samples: JointSamples,
    friction: FrictionParameters | None = None,
    *,
    start: float | None = None,
    end: float | None = None,
    cutoff: float | None = None,
    margin_fraction: float = DEFAULT_MARGIN_FRACTION,
    blocks: int = DEFAULT_BLOCKS,
    solvers: tuple[str, ...] = DEFAULT_SOLVERS,
    theta_base: npt.ArrayLike | None = None,
    friction_terms: str | None = None,
    reference: JointSamples | None = None,
) -> BatchLoadEstimate:
    """Fit the load on ``link`` to the recorded samples (module docstring).

    Args:
        model: the arm (the identified URDF, or the URDF); its Θ is the base model.
        link: URDF link carrying the load; Φ_L is about its frame.
        samples: the recording (columns in ``model.joint_names`` order).
        friction: friction of the model's joints, subtracted; None = none.
        start: window start [s from the first sample], None = the beginning.
        end: window end [s from the first sample], None = the end.
        cutoff: the q/q̇ filter corner [Hz], None = ``identify``'s default.
        margin_fraction: ε = this · λ_min(f(Φ_b⁰)), in (0, 1).
        blocks: contiguous blocks of the batch-means covariance (≥ 2).
        solvers: cvxpy solver names in order.
        theta_base: Θ without the load (N, 10); default the model's.
        friction_terms: friction terms (a key of ``FRICTION_TERMS``) re-fitted beside
            the load as a correction of ``friction`` (a real arm's friction drifts with
            temperature between identification and payload runs); None = keep it fixed.
        reference: a recording of the same arm WITHOUT the load (e.g. the one
            ``identify`` ran on): its fit (the tare) is subtracted, so the base model's
            error in the load body (which no loaded recording can separate from the
            load) cancels; its uncertainty is added to the interval.

    Returns:
        The :class:`BatchLoadEstimate`.

    Raises:
        InvalidInputError: bad window, margin fraction or block count; unknown link.
        IdentificationDataError: too short a recording for the filter.
        IdentificationSolverError: every solver failed.
    """
    if not 0.0 < margin_fraction < 1.0:
        raise InvalidInputError("margin_fraction", f"must be in (0, 1), got {margin_fraction}")
    measurement = LoadMeasurement(model, link, friction, theta_base)
    coulomb = DEFAULT_COULOMB_VELOCITY if friction is None else friction.coulomb_velocity
    a, b, data = _rows(measurement, window_samples(samples, start, end), cutoff, blocks,
                       friction_terms, coulomb)
    p = a.shape[2]
    phi_base, transform = measurement.phi_base, measurement.transform
    epsilon = margin_fraction * float(consistency_margin(phi_base))
    sigma = _noise_sigma(a, b, phi_base, transform, epsilon, solvers)
    aw, bw = a / sigma[None, :, None], b / sigma[None, :]
    tare, cov_tare = np.zeros(p), np.zeros((p, p))
    if reference is not None:
        ar, br, _ = _rows(measurement, reference, cutoff, blocks, friction_terms, coulomb)
        tare, cov_tare = _tare(ar / sigma[None, :, None], br / sigma[None, :], blocks)
        bw = bw - aw @ tare
    base = phi_base + transform @ tare[:10]
    x, solver = _solve(aw.reshape(-1, p), bw.ravel(), base, transform, epsilon, solvers)
    cov, _ = batch_covariance(aw, bw - aw @ x, blocks)
    phi, cov = x[:10], (cov + cov_tare)[:10, :10]
    mass_ci, com_ci = mass_com_intervals(phi, cov, blocks)
    com, inertia = _com_and_inertia(phi)
    t0 = float(samples.t[0])
    return BatchLoadEstimate(
        phi=phi, mass=float(phi[M]), com=com, inertia=inertia,
        covariance=cov, mass_interval=mass_ci, com_interval=com_ci, noise_sigma=sigma,
        margin=float(consistency_margin(base + transform @ phi)),
        epsilon=epsilon, samples=int(data.t.size), blocks=blocks, solver=solver,
        window=(float(data.t[0] - t0), float(data.t[-1] - t0)), tare=reference is not None)


def _noise_sigma(a: Array, b: Array, phi_base: Array, transform: Array, epsilon: float,
                 solvers: tuple[str, ...]) -> Array:
    """σ_j, each joint's residual RMS of a first unweighted fit (nv,) [N·m or N].

    The weights W = diag(1/σ_j) of the module docstring; floored at 1e-6 of the largest.
    """
    p = a.shape[2]
    x0, _ = _solve(a.reshape(-1, p), b.ravel(), phi_base, transform, epsilon, solvers)
    sigma = np.sqrt(np.mean((b - a @ x0) ** 2, axis=0))
    return np.maximum(sigma, 1e-6 * max(float(sigma.max()), 1e-12))


def _tare(a: Array, b: Array, blocks: int) -> tuple[Array, Array]:
    """The unloaded reference's least-squares fit (p,) and its covariance (p, p).

    ``a`` (K, nv, p), ``b`` (K, nv): the reference's rows, weighted as the loaded ones.
    """
    tare = np.linalg.lstsq(a.reshape(-1, a.shape[2]), b.ravel(), rcond=None)[0]
    cov_tare, _ = batch_covariance(a, b - a @ tare, blocks)
    return np.asarray(tare, dtype=np.float64), cov_tare


def _com_and_inertia(phi: Array) -> tuple[Array, Array]:
    """The load's COM (3,) [m] and inertia about it (3, 3) [kg·m²] from Φ_L (10,).

    Zeros when m ≤ 1e-9 kg: no load, and then the inertia is ~0 too (f(Φ_L) ⪰ 0).
    """
    if phi[M] > 1e-9:
        _, com, inertia = mass_com_inertia_from_phi(phi)
        return np.asarray(com), np.asarray(inertia)
    return np.zeros(3), np.zeros((3, 3))


def _rows(measurement: LoadMeasurement, samples: JointSamples, cutoff: float | None,
          blocks: int, friction_terms: str | None, coulomb: npt.ArrayLike
          ) -> tuple[Array, Array, PreparedData]:
    """(A (K, nv, p), b (K, nv), the filtered data) of the module docstring."""
    data = prepare(samples) if cutoff is None else prepare(samples, cutoff)
    k, n = data.t.size, measurement.model.nv
    if k < 2 * blocks:
        raise InvalidInputError("--start/--end", f"{k} filtered samples of {samples.source} "
                                f"are too few for the fit and its {blocks} blocks")
    a = np.empty((k, n, 10))
    b = np.empty((k, n))
    for i in range(k):
        row = measurement.measure(data.q[i], data.qd[i], data.qdd[i], data.tau_measured[i])
        a[i] = row.regressor @ measurement.transform
        b[i] = row.y - row.regressor @ measurement.phi_base
    if friction_terms is not None:
        a = np.concatenate([a, friction_regressor(data.qd, friction_terms, coulomb)], axis=2)
    return a, b, data


def estimate_in_frame(estimate: BatchLoadEstimate, change: Array) -> BatchLoadEstimate:
    """The same fit seen from another frame of the load's body (exact; intervals re-derived).

    Args:
        estimate: the fit, about the link frame.
        change: T with Φ_frame = T Φ_link
            (:func:`~robot_tv_dynamics.model.frames.frame_change_matrix`).
    """
    phi = change @ estimate.phi
    cov = change @ estimate.covariance @ change.T
    mass_ci, com_ci = mass_com_intervals(phi, cov, estimate.blocks)
    com, inertia = _com_and_inertia(phi)
    return replace(estimate, phi=phi, mass=float(phi[M]), com=com, inertia=inertia,
                   covariance=cov, mass_interval=mass_ci, com_interval=com_ci)


def set_load_files(estimate: BatchLoadEstimate, link: str) -> dict[str, dict[str, Any]]:
    """The load in the shapes the arms' payload interfaces take.

    ``franka``: ``mass`` [kg], ``F_x_Cload`` (COM [m]) and ``load_inertia`` (the 3×3
    inertia about the COM, column-major, 9 entries [kg·m²]) as ``franka::Robot::setLoad``
    takes them; franka expects the flange frame (panda_link8).
    ``ur``: ``mass``, ``center_of_gravity`` [m] and ``inertia`` [Ixx, Iyy, Izz, Ixy,
    Ixz, Iyz] about the COM [kg·m²] as URScript's ``set_target_payload`` takes them (tool
    flange frame, tool0). Both carry ``frame``: the link the numbers are expressed in (the
    estimate is converted there first: :func:`estimate_in_frame`).
    """
    i = estimate.inertia
    com = [float(v) for v in estimate.com]
    return {
        "franka": {"frame": link, "mass": estimate.mass, "F_x_Cload": com,
                   "load_inertia": [float(v) for v in i.ravel(order="F")]},
        "ur": {"frame": link, "mass": estimate.mass, "center_of_gravity": com,
               "inertia": [float(i[0, 0]), float(i[1, 1]), float(i[2, 2]),
                           float(i[0, 1]), float(i[0, 2]), float(i[1, 2])]},
    }


__all__ = ["BatchLoadEstimate", "estimate_in_frame", "fit_load", "set_load_files",
           "window_samples",
           "batch_covariance", "mass_com_intervals"]
