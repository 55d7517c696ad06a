r"""One closed-loop run of a controller on the simulated arm, with the live quantities.

The plant is :class:`~robot_tv_dynamics.simulation.ArmSimulator` (RK4 at ``rate``),
generalized (eq. (39) with its Θ̇, Ψ, Ψ̇ terms) or classical (those terms off); the
controller is called once per plant step with τ held over it. Every ``record_every``
steps the run records: the tracking error, τ, the estimate error ‖Θ̂ − Θ‖ and the load
body's mass error, per-body margins μ(Θ̂) and sizes ν(Θ̂), λ_min/λ_max of M(q, Θ̂) with
the bounds α₁(t), α₂(t) of Theorems 2–3 for the current Θ̂ (γ, δ of the arm sampled once),
and the Lyapunov function V(t) (laws that define it). At *every* step, not on that grid:
the power sᵀK_D s is integrated (so V(T) − V(0) can be compared with −∫ sᵀK_D s dt), and
every adapted body's margin μ(Θ̂_i) is taken (one batched eigenvalue call; for laws with
a pseudo-inertia Ĵ it is λ_min(Ĵ_i), the check that Ĵ stayed positive definite), so
:attr:`AdaptiveRun.step_margins` is an infimum over the whole run, not over samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bounds.extremes import JacobianExtremes
from robot_tv_dynamics.bounds.search import jacobian_extremes
from robot_tv_dynamics.bounds.theorems import theorem_bounds
from robot_tv_dynamics.control.slotine_li import SlotineLiCore
from robot_tv_dynamics.exceptions import PhysicalConsistencyError, SimulationDivergedError
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    consistency_margin,
    consistency_size,
    pseudo_inertia,
)
from robot_tv_dynamics.loading import LoadingProcess
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation.control import SineReference
from robot_tv_dynamics.simulation.interface import Controller, ControlOutput, ControlState
from robot_tv_dynamics.simulation.loop import ControlLoop
from robot_tv_dynamics.simulation.plant import ArmSimulator


def persistent_reference(model: RobotModel, q0: npt.ArrayLike, amplitude: float = 0.3,
                         ramp: float = 1.0) -> SineReference:
    """A persistently exciting motion: every revolute joint swings at its own frequency.

    Frequencies 0.21, 0.34, 0.47, … Hz (incommensurate steps of 0.13 Hz), amplitude
    ``amplitude`` [rad] capped at a quarter of each joint's range; prismatic joints held.
    """
    limits = model.joint_limits
    nv = model.nv
    span = np.where(np.isfinite(limits.upper - limits.lower), limits.upper - limits.lower,
                    2 * np.pi)
    prismatic = limits.prismatic
    amp = np.where(prismatic, 0.0, np.minimum(amplitude, 0.25 * span))
    freq = np.asarray(0.21 + 0.13 * np.arange(nv), dtype=np.float64)
    phase = np.asarray(0.7 * np.arange(nv), dtype=np.float64)
    return SineReference(np.asarray(q0, dtype=float), amp, freq, phase, ramp)


#: Relative tolerance of the load mass estimate: |m̂ − m| ≤ 10 % of the true m(t).
LOAD_MASS_TOLERANCE = 0.1


@dataclass
class AdaptiveRun:
    """The recorded quantities of one run (arrays over the K recorded samples).

    Attributes:
        t: times (K,) [s].
        q: joint positions (K, nv) [rad, m]; qd: velocities (K, nv) [rad/s, m/s].
        q_d: desired positions (K, nv); qd_d: desired velocities (K, nv).
        theta_hat: the controller's Θ̂ (K, N, 10), eq. (7) order, body frames.
        theta: the plant's true Θ (K, N, 10); theta_dot: its Θ̇ (K, N, 10) [per s].
        q_error: ‖q − q_d‖ (K,) [rad].
        q_error_max: max_i |q_i − q_d,i| (K,) [rad].
        tau: τ (K, nv) [N·m].
        theta_error: ‖Θ̂ − Θ‖ over every entry (K,).
        theta_error_per_body: ‖Θ̂_i − Θ_i‖ / ‖Θ_i‖ per body (K, N), eq. (7) entries.
        load_mass_error: m̂ − m of the load body (K,) [kg] (NaN without a load).
        load_mass: the load body's true mass m(t) (K,) [kg] (NaN without a load).
        margins: μ(Θ̂) per body (K, N).
        sizes: ν(Θ̂) per body (K, N).
        lambda_min: λ_min(M(q, Θ̂)) (K,); lambda_max likewise.
        alpha1, alpha2: Theorem 2–3 bounds for the current Θ̂ (K,), NaN when inconsistent.
        lyapunov: V(t) (K,) [J], NaN for laws without one.
        dissipated: ∫₀ᵗ sᵀK_D s dt (K,) [J], NaN likewise.
        adapted: which bodies the law adapts (N,).
        load_body: the load body's row (None without a process).
        min_j_eig: smallest eigenvalue of Ĵ over the adapted bodies, at every step
            (laws with a pseudo-inertia Ĵ; inf otherwise).
        step_margins: inf over every control step of μ(Θ̂_i) per body (N,) (inf for the
            bodies not adapted): λ_min(Ĵ_i) for laws with a pseudo-inertia Ĵ (Θ̂_i is
            f⁻¹(Ĵ_i)), λ_min(f(Φ̂_i)) otherwise.
        step_violations: control steps with some adapted body's μ ≤ 0.
        first_violation_t: time of the first of them [s] (None: none).
        steps: control steps run.
    """

    t: Array
    q: Array
    qd: Array
    q_d: Array
    qd_d: Array
    theta_hat: Array
    theta: Array
    theta_dot: Array
    q_error: Array
    q_error_max: Array
    tau: Array
    theta_error: Array
    theta_error_per_body: Array
    load_mass_error: Array
    load_mass: Array
    margins: Array
    sizes: Array
    lambda_min: Array
    lambda_max: Array
    alpha1: Array
    alpha2: Array
    lyapunov: Array
    dissipated: Array
    adapted: Array
    load_body: int | None
    min_j_eig: float = math.inf
    step_margins: Array | None = None
    step_violations: int = 0
    first_violation_t: float | None = None
    steps: int = 0
    info: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The headline numbers (summary.json keys besides controller and plant)."""
        adapted_margins = self.margins[:, self.adapted]
        violations = int(np.sum(np.any(adapted_margins <= 0.0, axis=1)))
        after = self.t >= min(self.t[-1], 0.5 * self.t[-1])
        return {
            "tracking_rms_rad": float(np.sqrt(np.mean(self.q_error**2))),
            "tracking_max_rad": float(np.max(self.q_error_max)),
            "tracking_rms_last_half_rad": float(np.sqrt(np.mean(self.q_error[after]**2))),
            "tau_rms": float(np.sqrt(np.mean(self.tau**2))),
            "inf_margin": float(np.min(adapted_margins)),
            "inf_margin_per_body": [float(v) for v in np.min(self.margins, axis=0)],
            "inf_margin_every_step": (None if self.step_margins is None
                                      else float(np.min(self.step_margins[self.adapted]))),
            "inf_margin_every_step_per_body": (
                None if self.step_margins is None
                else [float(v) if math.isfinite(v) else None for v in self.step_margins]),
            "consistency_violation_steps": self.step_violations,
            "first_violation_s": self.first_violation_t,
            "steps": self.steps,
            "sup_size": float(np.max(self.sizes[:, self.adapted])),
            "inf_lambda_min_M_hat": float(np.min(self.lambda_min)),
            "sup_lambda_max_M_hat": float(np.max(self.lambda_max)),
            "inf_alpha1": float(np.nanmin(self.alpha1)) if np.any(np.isfinite(self.alpha1))
            else None,
            "consistency_violations": violations,
            "final_theta_error": float(self.theta_error[-1]),
            "final_theta_error_per_body": [float(v) for v in self.theta_error_per_body[-1]],
            "final_theta_error_max_body": float(np.max(self.theta_error_per_body[-1][
                self.adapted])),
            **self.load_mass_summary(),
            "lyapunov_start_J": float(self.lyapunov[0]),
            "lyapunov_end_J": float(self.lyapunov[-1]),
            "dissipated_J": float(self.dissipated[-1]),
            "min_eig_J_hat": self.min_j_eig if math.isfinite(self.min_j_eig) else None,
            "j_hat_positive_definite": (self.min_j_eig > 0.0 if math.isfinite(self.min_j_eig)
                                        else None),
            "samples": int(self.t.size),
            "diverged_at_s": self.info.get("diverged_at_s"),
        }


    def load_mass_summary(self) -> dict[str, Any]:
        """The load body's mass estimate: final error, and when it stays within tolerance.

        ``time_to_tolerance_load_mass_s``: the time from which |m̂ − m| ≤
        :data:`LOAD_MASS_TOLERANCE` · m(t) at every later sample (None: not at the end);
        ``load_change_end_s``: the last sample at which the true m(t) still changed;
        ``load_mass_settle_s``: the first minus the second (how long after the load
        stopped changing the estimate needed; 0 when it was within tolerance by then).
        All None without a load.
        """
        if self.load_body is None or self.t.size == 0:
            return {"final_load_mass_error_kg": None, "final_load_mass_relative_error": None,
                    "time_to_tolerance_load_mass_s": None, "load_change_end_s": None,
                    "load_mass_settle_s": None, "load_mass_tolerance": LOAD_MASS_TOLERANCE}
        relative = np.abs(self.load_mass_error) / np.maximum(np.abs(self.load_mass), 1e-12)
        inside = relative <= LOAD_MASS_TOLERANCE
        bad = np.flatnonzero(~inside)
        settled = (None if not inside[-1]
                   else float(self.t[bad[-1] + 1]) if bad.size else float(self.t[0]))
        changing = np.flatnonzero(np.abs(np.diff(self.load_mass)) > 1e-9)
        change_end = float(self.t[changing[-1] + 1]) if changing.size else float(self.t[0])
        return {"final_load_mass_error_kg": float(self.load_mass_error[-1]),
                "final_load_mass_relative_error": float(relative[-1]),
                "time_to_tolerance_load_mass_s": settled,
                "load_change_end_s": change_end,
                "load_mass_settle_s": None if settled is None else max(0.0,
                                                                        settled - change_end),
                "load_mass_tolerance": LOAD_MASS_TOLERANCE}


def run_adaptive(
    model: RobotModel,
    controller: Controller,
    reference: SineReference,
    theta_true: npt.ArrayLike,
    *,
    process: LoadingProcess | None = None,
    classical: bool = False,
    duration: float = 10.0,
    rate: float = 1000.0,
    record_every: int = 20,
    extremes_samples: int = 256,
    extremes: JacobianExtremes | None = None,
    disturbance: npt.ArrayLike | None = None,
) -> AdaptiveRun:
    """Run ``controller`` on the simulated arm for ``duration`` seconds.

    Args:
        model: the arm (also the controller's model).
        controller: any :class:`~robot_tv_dynamics.control.Controller`.
        reference: the desired motion t ↦ (q_d, q̇_d, q̈_d); the arm starts at rest at q_d(0).
        theta_true: the plant's Θ without the load (N, 10), unknown to the controller.
        process: the loading process (None: Θ constant).
        classical: the classical plant (Θ̇, Ψ, Ψ̇ terms off).
        duration: simulated time [s].
        rate: plant and control rate [Hz].
        record_every: record one sample every this many steps.
        extremes_samples: samples of the joint box for γ, δ of α₁, α₂.
        extremes: γ, δ of the arm already searched (the suite searches once per arm);
            None searches with ``extremes_samples``.
        disturbance: a constant joint torque w (nv,) [N·m, N] added to τ at the plant,
            unknown to the controller (eq. (39)'s w); None: w = 0.

    A run whose plant diverges (non-finite state, M(q, Θ) indefinite), or whose
    controller returns a non-finite Θ̂ or τ or cannot step (a natural law whose Ĵ lost
    definiteness in floating point), ends at that step: ``info["diverged_at_s"]``
    says when, the summary's ``diverged_at_s`` too.
    """
    loop = ControlLoop(model, controller, reference, process, rate=rate,
                       theta_base=theta_true, classical=classical, clip=False)
    if disturbance is not None:
        loop.set_extra_torque(check_finite(disturbance, "disturbance", (model.nv,)))
    plant = loop.plant
    if extremes is None:
        extremes = jacobian_extremes(model, samples=extremes_samples)
    record = _Recorder(model, controller, plant.load_body,
                       (extremes.inf_lambda_min_JtJ_bracket[0],
                        extremes.sup_sigma_max_J_sq_bracket[1]))
    steps = int(round(duration * rate))
    diverged: tuple[float, str] | None = None
    for k in range(steps + 1):
        t = plant.t
        try:
            # an estimate that overflows ends the run below, as a divergence the summary
            # reports: no NumPy warning for it on the way
            with np.errstate(over="ignore", invalid="ignore"):
                state, out = loop.control()
        except PhysicalConsistencyError as error:  # a law that cannot take another step
            diverged = (t, f"the controller cannot step: {error}")
            break
        if not (np.all(np.isfinite(out.theta_hat)) and np.all(np.isfinite(out.tau))):
            # the estimate blew up before the arm did: the run ends here, as a divergence
            diverged = (t, "the controller's estimate or torque is not finite")
            break
        record.every_step(t, out.theta_hat)
        if k % record_every == 0:
            record.sample(plant, state, out)
        if k == steps:
            break
        record.dissipate(plant.dt)
        try:
            loop.advance(out)  # τ + w, unclipped (adapt's plant has no drive limits)
        except SimulationDivergedError as error:  # the run ends here; the summary says when
            diverged = (plant.t, str(error))
            break
    return record.run(diverged)


class _Recorder:
    """What :func:`run_adaptive` measures: μ(Θ̂) and Ĵ at every step, the rest on its grid."""

    #: The recorded rows, each a list of one value per recorded sample.
    ROWS = ("t", "q", "qd", "qr", "qdr", "th", "tt", "ttd", "qe", "qem", "tau", "te", "teb",
            "me", "lm", "mu", "nu", "lmin", "lmax", "a1", "a2", "v", "d")

    def __init__(self, model: RobotModel, controller: Controller, body: int | None,
                 extremes: tuple[float, float]) -> None:
        """Start empty; ``extremes`` = (γ, δ) of α₁, α₂; ``body`` the load's Θ row."""
        self.model, self.controller, self.body = model, controller, body
        self.gamma_low, self.delta_up = extremes
        # V and the power sᵀK_D s: for the Slotine–Li family, which defines them
        self.core = controller if isinstance(controller, SlotineLiCore) else None
        self.rows: dict[str, list[Any]] = {key: [] for key in self.ROWS}
        self.adapted = np.asarray(getattr(controller, "adapted",
                                          np.ones(model.n_bodies, dtype=bool)))
        self.adapted_rows = np.flatnonzero(self.adapted)
        self.step_margins = np.full(model.n_bodies, math.inf)
        self.step_violations, self.steps = 0, 0
        self.first_violation: float | None = None
        self.dissipated, self.min_j = 0.0, math.inf

    def every_step(self, t: float, theta_hat: Array) -> None:
        """μ of every adapted body at a control step (never decimated).

        One batched eigvalsh, of Ĵ itself for laws that carry it (the Ĵ definiteness
        check), else of f(Θ̂).
        """
        self.steps += 1
        rows = self.adapted_rows
        if not rows.size:
            return
        j_hat = getattr(self.controller, "j_hat", None)
        if j_hat is not None:
            mu_step = np.linalg.eigvalsh(j_hat[rows])[:, 0]
            self.min_j = min(self.min_j, float(np.min(mu_step)))
        else:
            mu_step = np.linalg.eigvalsh(pseudo_inertia(theta_hat[rows]))[:, 0]
        self.step_margins[rows] = np.minimum(self.step_margins[rows], mu_step)
        if np.any(mu_step <= 0.0):
            self.step_violations += 1
            self.first_violation = t if self.first_violation is None else self.first_violation

    def dissipate(self, dt: float) -> None:
        """Add the step's ∫ sᵀK_D s (the Slotine–Li family only)."""
        if self.core is not None:
            s = self.core.last_s
            self.dissipated += float(s @ (self.core.kd * s)) * dt

    def sample(self, plant: ArmSimulator, state: ControlState, out: ControlOutput) -> None:
        """One row of the record grid at the step's start."""
        model, rows, adapted, body = self.model, self.rows, self.adapted, self.body
        t = state.t
        loads = plant.loads(t)
        theta, theta_hat = loads.theta, out.theta_hat
        mu = np.atleast_1d(consistency_margin(theta_hat))
        nu = np.atleast_1d(consistency_size(theta_hat))
        eig = np.linalg.eigvalsh(model.mass_matrix(plant.q, theta_hat))
        a1, a2 = theorem_bounds(float(np.min(mu[adapted])), float(np.max(nu[adapted])),
                                self.gamma_low, self.delta_up)
        err = plant.q - state.q_d
        for key, value in (
                ("t", t), ("q", plant.q.copy()), ("qd", plant.qd.copy()),
                ("qr", np.array(state.q_d)), ("qdr", np.array(state.qd_d)),
                ("th", np.array(theta_hat)), ("tt", np.array(loads.theta)),
                ("ttd", np.array(loads.theta_dot)), ("qe", float(np.linalg.norm(err))),
                ("qem", float(np.max(np.abs(err)))), ("tau", out.tau),
                ("te", float(np.linalg.norm(theta_hat - theta))),
                ("teb", np.linalg.norm(theta_hat - theta, axis=1)
                 / np.maximum(np.linalg.norm(theta, axis=1), 1e-12)),
                ("me", math.nan if body is None else float(theta_hat[body, 0] - theta[body, 0])),
                ("lm", math.nan if body is None else float(theta[body, 0])),
                ("mu", mu), ("nu", nu), ("lmin", float(eig[0])), ("lmax", float(eig[-1])),
                ("a1", a1), ("a2", a2),
                ("v", math.nan if self.core is None else self.core.lyapunov(plant.q, theta)),
                ("d", self.dissipated if self.core is not None else math.nan)):
            rows[key].append(value)

    def run(self, diverged: tuple[float, str] | None) -> AdaptiveRun:
        """The :class:`AdaptiveRun` of what was recorded."""
        rows = {key: np.array(values) for key, values in self.rows.items()}
        return AdaptiveRun(
            t=rows["t"], q=rows["q"], qd=rows["qd"], q_d=rows["qr"], qd_d=rows["qdr"],
            theta_hat=rows["th"], theta=rows["tt"], theta_dot=rows["ttd"],
            q_error=rows["qe"], q_error_max=rows["qem"], tau=rows["tau"],
            theta_error=rows["te"], theta_error_per_body=rows["teb"],
            load_mass=rows["lm"], load_mass_error=rows["me"], margins=rows["mu"],
            sizes=rows["nu"], lambda_min=rows["lmin"], lambda_max=rows["lmax"],
            alpha1=rows["a1"], alpha2=rows["a2"], lyapunov=rows["v"], dissipated=rows["d"],
            adapted=self.adapted, load_body=self.body, min_j_eig=self.min_j,
            step_margins=self.step_margins, step_violations=self.step_violations,
            first_violation_t=self.first_violation, steps=self.steps,
            info={"gamma": self.gamma_low, "delta": self.delta_up,
                  "diverged_at_s": None if diverged is None else diverged[0],
                  "diverged": None if diverged is None else diverged[1]})
