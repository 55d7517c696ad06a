r"""Per-joint effort gains fitted against a payload the user knows.

A driver's effort becomes a joint torque through the effort map
(:mod:`robot_tv_dynamics.inputs.efforts`, τ = sign · gain · (effort − offset)) with gains the
user states: a preset's torque constant × gear ratio, good to some per cent on a real
arm. :func:`fit_effort_scale` fits one correction k_j per joint, τ_j = k_j · τ̂_j with τ̂ the
map's torque, together with Θ and the friction coefficients b_f:

.. math::

    Y(q,\dot q,\ddot q)\,Θ + Y_f(\dot q)\,b_f - \operatorname{diag}(\hat τ)\,k = -Y_L\,Φ_L

one row per joint and sample, linear in (Θ, b_f, k) (the friction model's offset column
takes the effort offset). On a record of the arm alone Φ_L = 0 and the rows are
homogeneous: (Θ, b_f, k) and (sΘ, s b_f, s k) fit alike for every s, so **no record of
the arm alone decides the gains**. The anchor does: a second record of the same arm
holding a payload Φ_L the user knows (mass, COM and inertia on a link, e.g. a calibrated
weight in the gripper), whose torque Y_L Φ_L (the regressor's columns of the payload's
body) is exactly known. Both records' rows are stacked, whitened per joint by the noise
level σ_j of a first fit's residual, and solved by least squares
(:func:`~robot_tv_dynamics.identification.solve.solve_unconstrained`: directions no data
excite stay at the prior, Θ_URDF and k = 1).

**Identifiability** is judged, not assumed: k_j is *not identifiable* when a direction the
data leave undetermined (singular value below the solver's cut) moves it, or when its
standard error exceeds ``tolerance`` × k_j — from cov = (AᵀA)⁺ of the whitened rows,
rescaled by the residual's χ²; correlated noise makes the true error larger than this, so
the tolerance is kept tight. An unloaded joint (a payload that makes no torque about it in
any sample) is the usual cause.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.evaluation.payload import Payload
from robot_tv_dynamics.exceptions import IdentificationDataError
from robot_tv_dynamics.friction import friction_regressor
from robot_tv_dynamics.identification import regressor as regressors
from robot_tv_dynamics.identification import solve
from robot_tv_dynamics.identification.data import PreparedData
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.inputs.efforts import EffortMap
from robot_tv_dynamics.model import RobotModel

#: Largest relative standard error of a fitted gain that counts as identified.
DEFAULT_GAIN_TOLERANCE = 0.02
#: A null direction "moves" a gain when its unit vector has more than this on k_j
#: (in the equilibrated variables).
NULL_WEIGHT = 1e-3
#: Gauss–Newton steps at most, and the relative change of every k_j that ends them.
MAX_ITERATIONS, STEP_TOLERANCE = 30, 1e-9


@dataclass(frozen=True)
class GainAnchor:
    """A second record of the arm holding a payload the user knows.

    Attributes:
        data: the record, prepared like the main one (same effort map).
        payload: the held payload, in its link's frame (mass, COM, inertia about the COM).
        source: where the record came from, for messages.
    """

    data: PreparedData
    payload: Payload
    source: str = "anchor"


@dataclass(frozen=True)
class GainFit:
    """What :func:`fit_effort_scale` found.

    Attributes:
        scale: k_j, τ_j = k_j · (the map's torque)_j, (n,).
        relative_error: standard error of k_j / k_j, (n,) (inf where not identifiable).
        identifiable: per joint, (n,).
        joint_names: the model's joints.
        samples: rows used (main record, anchor) in samples.
    """

    scale: Array
    relative_error: Array
    identifiable: tuple[bool, ...]
    joint_names: tuple[str, ...]
    samples: tuple[int, int]

    def effort_map(self, base: EffortMap) -> EffortMap:
        """``base`` with its gains multiplied by k (per joint): the map to use from now on."""
        gain = np.broadcast_to(np.asarray(base.gain), self.scale.shape) * self.scale
        offset = np.broadcast_to(np.asarray(base.offset), self.scale.shape)
        sign = np.broadcast_to(np.asarray(base.sign), self.scale.shape)
        return EffortMap(gain=tuple(gain), offset=tuple(offset), sign=tuple(sign),
                         source=f"{base.source} x fitted")

    def as_dict(self, base: EffortMap) -> dict[str, object]:
        """For ``summary.json``: k, its errors, and the gains to pass as ``--effort-gain``."""
        fitted = self.effort_map(base)
        return {"scale": self.scale.tolist(),
                "relative_error": [float(v) if np.isfinite(v) else None
                                   for v in self.relative_error],
                "identifiable": list(self.identifiable),
                "effort_gain": list(fitted.gain), "effort_offset": list(fitted.offset),
                "effort_sign": list(fitted.sign), "samples": list(self.samples),
                "joints": list(self.joint_names)}


def _rows(model: RobotModel, data: PreparedData, friction: str, coulomb_velocity: float,
          payload: Payload | None) -> tuple[Array, Array]:
    """[Y Y_f] (K, n, 10N + friction) and the anchor's known torque Y_L Φ_L (K, n)."""
    y = regressors.stacked_regressor(model, data.q, data.qd, data.qdd)
    known = np.zeros(data.tau_measured.shape)
    if payload is not None:
        body, phi = model.link_phi_in_body(payload.link, payload.phi())
        known = y[:, :, 10 * body:10 * body + 10] @ phi
    return np.concatenate([y, friction_regressor(data.qd, friction, coulomb_velocity)],
                          axis=2), known


def fit_effort_scale(
    model: RobotModel, data: PreparedData, anchor: GainAnchor, friction: str = "full",
    coulomb_velocity: float = 0.01, tolerance: float = DEFAULT_GAIN_TOLERANCE,
) -> GainFit:
    """k_j per joint from a record and an anchor record (module docstring).

    Args:
        model: the arm; ``theta_nominal`` is the prior of directions no data excite.
        data: the record under study (its map's torques).
        anchor: the record with the known payload.
        friction: friction terms (a key of ``FRICTION_TERMS``), shared by both records.
        coulomb_velocity: v_c of the Coulomb term [rad/s or m/s].
        tolerance: largest relative standard error of an identified gain.

    Returns:
        The :class:`GainFit` (check ``identifiable`` or call :func:`require_identifiable`).

    Raises:
        IdentificationDataError: the anchor's payload has no mass.
    """
    if anchor.payload.mass <= 0.0:
        raise IdentificationDataError(anchor.source, "the anchor payload has no mass: it "
                                      "cannot fix the gains' scale")
    a_main, known_main = _rows(model, data, friction, coulomb_velocity, None)
    a_anchor, known_anchor = _rows(model, anchor.data, friction, coulomb_velocity,
                                   anchor.payload)
    a = np.concatenate([a_main, a_anchor])
    known = np.concatenate([known_main, known_anchor])
    tau = np.concatenate([data.tau_measured, anchor.data.tau_measured])
    n, p = model.nv, a.shape[2]
    x = np.concatenate([np.asarray(model.theta_nominal).ravel(), np.zeros(p - 10 * model.n_bodies)])
    h = np.ones(n)
    sigma = np.ones(n)
    for _ in range(MAX_ITERATIONS):
        x_last, h_last = x, h
        x, h, system = _gauss_newton_step(a, known, tau, x, h, sigma)
        sigma = np.maximum(_rms(tau - h * (a @ x + known)), 1e-9)
        if np.max(np.abs(h - h_last) / h) < STEP_TOLERANCE and np.allclose(x, x_last):
            break
    rms = np.sqrt(system.residual_floor / max(system.rows - p - n, 1))
    error, free = _errors(system, p, max(float(rms), 1e-12))
    relative = np.where(free, np.inf, error / np.maximum(np.abs(h), 1e-12))
    identifiable = tuple(bool(v) for v in (relative <= tolerance) & (h > 0))
    return GainFit(scale=1.0 / h, relative_error=relative, identifiable=identifiable,
                   joint_names=tuple(model.joint_names),
                   samples=(a_main.shape[0], a_anchor.shape[0]))


def _rms(residual: Array) -> Array:
    return np.asarray(np.sqrt(np.mean(residual ** 2, axis=0)))


def _gauss_newton_step(a: Array, known: Array, tau: Array, x: Array, h: Array, sigma: Array
                       ) -> tuple[Array, Array, solve.CompressedSystem]:
    """One step on Σ ((τ̂_j − h_j (A_j x + known_j)) / σ_j)², h_j = 1/k_j.

    Linearised in (x, h): the rows [h_j A_j, p_j e_j] δ = residual, p = A x + known;
    solved for the minimum-norm equilibrated δ (directions no data excite do not move).
    Returns the new (x, h) and the compressed system at the old point (its
    ``residual_floor`` is the whitened residual left after the step).
    """
    n, p = h.size, a.shape[2]
    predicted = a @ x + known
    jacobian = np.concatenate([a * (h / sigma)[None, :, None],
                               np.zeros(predicted.shape + (n,))], axis=2)
    jacobian[:, np.arange(n), p + np.arange(n)] = predicted / sigma
    residual = (tau - h * predicted) / sigma
    system = solve.compress(jacobian.reshape(-1, p + n), residual.reshape(-1))
    step = solve.solve_unconstrained(system, np.zeros(p + n))
    return x + step[:p], h + step[p:], system


def _errors(system: solve.CompressedSystem, first: int, rms: float) -> tuple[Array, Array]:
    """Standard errors of the unknowns from ``first`` on; whether a null direction moves each."""
    d = solve.equilibration(system)
    _, values, vt = np.linalg.svd(system.R * d)
    kept = values > solve.OLS_RCOND * values[0]
    free = np.any(np.abs(vt[~kept, first:]) > NULL_WEIGHT, axis=0)
    root = vt[kept].T / values[kept]  # (JᵀJ)⁺ = root rootᵀ in the equilibrated variables
    error = rms * d[first:] * np.linalg.norm(root[first:], axis=1)
    return error, free


def require_identifiable(fit: GainFit) -> GainFit:
    """``fit`` when every gain is identified.

    Raises:
        IdentificationDataError: naming the joints whose gain the records do not decide.
    """
    bad = [f"{name} ({'undetermined' if not np.isfinite(e) else f'±{100 * e:.1f} %'})"
           for name, e, ok in zip(fit.joint_names, fit.relative_error, fit.identifiable,
                                  strict=True)
           if not ok]
    if bad:
        raise IdentificationDataError(
            "effort gains", "not identifiable from these records for " + ", ".join(bad)
            + ": the anchor payload must load those joints in varied poses (a heavier "
            "payload, held farther out, more motion), or give their gains with "
            "--effort-gain")
    return fit
