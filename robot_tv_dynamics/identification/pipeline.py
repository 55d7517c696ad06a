r"""Identification of constant Θ and joint friction from prepared joint data.

Model of the measured effort (one row per joint and sample):

.. math::
    τ_{meas} = τ_{(39)}(q, \dot q, \ddot q, Θ) + τ_f(\dot q) + \text{noise}
             = Y(q,\dot q,\ddot q)\,Θ + Y_f(\dot q)\, b_f + \text{noise}

Steps: split the record in time (the last ``holdout`` fraction is held out), stack the
regressors, estimate the per-joint noise σ_j from an unweighted ordinary least-squares
fit, whiten the rows by 1/σ_j, then solve the weighted ordinary least squares
(*unconstrained*) and the SDP of :mod:`.solve` (*identified*). All three models (URDF
without friction, unconstrained, identified) are scored by the RMS of τ_meas − τ̂
against the unfiltered efforts, on the fit part and on the held-out tail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from robot_tv_dynamics.exceptions import IdentificationDataError, InvalidInputError
from robot_tv_dynamics.friction import (
    DEFAULT_COULOMB_VELOCITY,
    FRICTION_TERMS,
    FrictionParameters,
    friction_regressor,
    parameters_from_coefficients,
)
from robot_tv_dynamics.identification import regressor as regressors
from robot_tv_dynamics.identification import solve
from robot_tv_dynamics.identification.data import PreparedData
from robot_tv_dynamics.inertia import Array, consistency_margin
from robot_tv_dynamics.model import RobotModel

#: Names of the three models compared, in report order.
MODELS = ("urdf", "unconstrained", "identified")


@dataclass(frozen=True)
class IdentifyOptions:
    """Options of :func:`identify` (the ``identify`` command's flags).

    Attributes:
        friction: friction terms fitted (a key of ``FRICTION_TERMS``).
        margin: ε of f(Φ_l) ⪰ εI.
        holdout: fraction of the record (its tail) held out, in [0, 0.9].
        prior_weight: w of the prior term (see :mod:`.solve`).
        coulomb_velocity: v_c of the Coulomb term [rad/s or m/s].
        solvers: cvxpy solver names in order.
    """

    friction: str = "full"
    margin: float = solve.DEFAULT_MARGIN
    holdout: float = 0.2
    prior_weight: float = solve.DEFAULT_PRIOR_WEIGHT
    coulomb_velocity: float = DEFAULT_COULOMB_VELOCITY
    solvers: tuple[str, ...] = solve.DEFAULT_SOLVERS

    def __post_init__(self) -> None:
        """Validate the options.

        Raises:
            InvalidInputError: an unknown friction choice or a value out of range.
        """
        if self.friction not in FRICTION_TERMS:
            raise InvalidInputError("friction", f'"{self.friction}" is not one of '
                                    f"{list(FRICTION_TERMS)}")
        if not 0.0 <= self.holdout <= 0.9:
            raise InvalidInputError("holdout", f"must be in [0, 0.9], got {self.holdout}")
        if not (np.isfinite(self.margin) and self.margin > 0):
            raise InvalidInputError("margin", f"must be > 0, got {self.margin}")
        if not (np.isfinite(self.coulomb_velocity) and self.coulomb_velocity > 0):
            raise InvalidInputError("coulomb_velocity",
                                    f"must be > 0, got {self.coulomb_velocity}")


@dataclass(frozen=True)
class ModelFit:
    """One model's parameters and its prediction errors.

    Attributes:
        theta: Θ (N, 10), eq. (7) order.
        friction: friction coefficients.
        rms_fit: per-joint RMS of τ_meas − τ̂ on the fit part (n,) [N·m].
        rms_holdout: the same on the held-out tail (n,), NaN without a hold-out.
        margins: λ_min(f(Φ_l)) per body (N,).
        prediction: τ̂ on the whole grid (K, n).
    """

    theta: Array
    friction: FrictionParameters
    rms_fit: Array
    rms_holdout: Array
    margins: Array
    prediction: Array


@dataclass(frozen=True)
class IdentificationResult:
    """What :func:`identify` found (``summary.json`` is built from it).

    Attributes:
        models: ``urdf``, ``unconstrained``, ``identified`` → :class:`ModelFit`.
        t: grid times (K,) [s].
        tau_measured: unfiltered efforts on the grid (K, n).
        n_fit: samples in the fit part.
        n_holdout: samples held out.
        n_parameters: unknowns (10N + friction coefficients).
        rank: identifiable combinations (structural rank incl. friction).
        condition_number: of the whitened, column-normalized fit regressor.
        noise_sigma: per-joint noise levels used for whitening (n,) [N·m].
        solver: the SDP solver that succeeded.
        solver_status: its status.
        solver_time_s: its wall time [s].
        stage_times_s: wall time per stage [s].
        margin: ε.
        options: the options used.
        notes: dropped samples and other remarks.
        solver_accurate: whether the SDP solver reached an accurate optimum.
        margin_repair: the largest raise of an eigenvalue of f(Φ_l) to ε applied to the
            solver's point [kg·m² (and kg)].
        warnings: what the user must know about the identified model (an inaccurate
            optimum, an inconsistent solver point), one sentence each.
    """

    models: dict[str, ModelFit]
    t: Array
    tau_measured: Array
    n_fit: int
    n_holdout: int
    n_parameters: int
    rank: int
    condition_number: float
    noise_sigma: Array
    solver: str
    solver_status: str
    solver_time_s: float
    stage_times_s: dict[str, float]
    margin: float
    options: IdentifyOptions
    notes: tuple[str, ...] = field(default_factory=tuple)
    solver_accurate: bool = True
    margin_repair: float = 0.0
    warnings: tuple[str, ...] = field(default_factory=tuple)


def _rms(residual: Array) -> Array:
    if residual.shape[0] == 0:
        return np.full(residual.shape[1], np.nan)
    return np.asarray(np.sqrt(np.mean(residual ** 2, axis=0)))


def _noise_levels(a_all: Array, tau: Array, n_fit: int, x_prior: Array) -> Array:
    """σ_j of each joint's torque noise from an unweighted OLS residual, (nv,) [N·m].

    Floored (noiseless data stay sane), on about 2000 of the fit samples (every k-th):
    σ_j needs no more.
    """
    p = a_all.shape[2]
    every = max(1, n_fit // 2000)
    if (n_fit + every - 1) // every < p:
        every = 1
    sub = slice(0, n_fit, every)
    plain = solve.compress(a_all[sub].reshape(-1, p), tau[sub].reshape(-1))
    x_plain = solve.solve_unconstrained(plain, x_prior)
    sigma = _rms(tau[sub] - a_all[sub] @ x_plain)
    return np.maximum(sigma, 1e-3 * max(float(sigma.max()), 1e-9))


def _model_fit(model: RobotModel, options: IdentifyOptions, x: Array, a_all: Array,
               tau: Array, n_fit: int) -> ModelFit:
    """One candidate x = (Θ, friction) judged on the fit samples and the hold-out."""
    n_bodies = model.n_bodies
    theta = x[:10 * n_bodies].reshape(n_bodies, 10).copy()
    friction = parameters_from_coefficients(model.joint_names, options.friction,
                                            x[10 * n_bodies:], options.coulomb_velocity)
    prediction = a_all @ x
    error = tau - prediction
    return ModelFit(
        theta=theta, friction=friction, rms_fit=_rms(error[:n_fit]),
        rms_holdout=_rms(error[n_fit:]),
        margins=np.asarray(consistency_margin(theta), dtype=np.float64).reshape(n_bodies),
        prediction=prediction)


def identify(
    model: RobotModel,
    data: PreparedData,
    options: IdentifyOptions | None = None,
    progress: Callable[[str], Callable[[float], None]] | None = None,
) -> IdentificationResult:
    """Fit Θ and friction to prepared data (module docstring).

    Args:
        model: the arm; ``theta_nominal`` is the prior.
        data: filtered samples, columns in ``model.joint_names`` order.
        options: see :class:`IdentifyOptions`.
        progress: ``progress(label)`` returns a fraction callback for a long stage.

    Returns:
        The :class:`IdentificationResult`.

    Raises:
        IdentificationDataError: fewer fit samples than unknowns (each sample gives nv
            equations, but fewer samples than unknowns is never a usable record).
        IdentificationSolverError: the SDP failed in every solver.
    """
    options = options or IdentifyOptions()
    times: dict[str, float] = {}
    n, n_bodies = model.nv, model.n_bodies
    k_all = data.t.size
    n_hold = int(round(options.holdout * k_all))
    n_fit = k_all - n_hold
    terms = FRICTION_TERMS[options.friction]
    n_friction = n * len(terms)
    p = 10 * n_bodies + n_friction
    if n_fit < p:
        raise IdentificationDataError(
            "<prepared>", f"{n_fit} fit samples (after filtering and the {options.holdout:g} "
            f"hold-out) are fewer than the {p} unknowns (10 per body + friction); record "
            "longer")
    start = time.perf_counter()
    y = regressors.stacked_regressor(model, data.q, data.qd, data.qdd,
                                     progress("stacking regressor") if progress else None)
    y_f = friction_regressor(data.qd, options.friction, options.coulomb_velocity)
    a_all = np.concatenate([y, y_f], axis=2)  # (K, n, P)
    times["regressor_s"] = time.perf_counter() - start

    start = time.perf_counter()
    fit = slice(0, n_fit)
    theta_prior = np.array(model.theta_nominal)
    x_prior = np.concatenate([theta_prior.ravel(), np.zeros(n_friction)])
    tau = data.tau_measured
    sigma = _noise_levels(a_all, tau, n_fit, x_prior)
    a_w = a_all[fit] / sigma[None, :, None]
    system = solve.compress(a_w.reshape(-1, p), (tau[fit] / sigma).reshape(-1))
    x_ols = solve.solve_unconstrained(system, x_prior)
    rank = regressors.structural_rank(model, options.friction)
    excitation = regressors.excitation_of(a_w, rank)
    times["least_squares_s"] = time.perf_counter() - start

    solution = solve.solve_constrained(system, theta_prior, n_friction, options.margin,
                                       options.prior_weight, options.solvers)
    times["sdp_s"] = solution.solve_time_s

    start = time.perf_counter()
    models = {name: _model_fit(model, options, x, a_all, data.tau_measured, n_fit)
              for name, x in (("urdf", x_prior), ("unconstrained", x_ols),
                              ("identified", solution.x))}
    times["evaluation_s"] = time.perf_counter() - start
    return IdentificationResult(
        models=models, t=data.t, tau_measured=data.tau_measured, n_fit=n_fit,
        n_holdout=n_hold, n_parameters=p, rank=rank,
        condition_number=excitation.condition_number, noise_sigma=sigma,
        solver=solution.solver, solver_status=solution.status,
        solver_time_s=solution.solve_time_s, stage_times_s=times, margin=options.margin,
        options=options, notes=data.notes, solver_accurate=solution.accurate,
        margin_repair=solution.margin_repair, warnings=solution.warnings)
