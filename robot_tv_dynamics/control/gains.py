r"""Adaptation gains from one adaptation time T_a: the rule that makes the laws comparable.

The gradient law θ̂̇_i = −γ Y_iᵀs and the natural law Ĵ̇_i = −γ Ĵ_i S_i Ĵ_i move an
estimate at speeds that differ by orders of magnitude at one γ (the natural step is
Ĵ-weighted, ≈ γ m̂² on a body's mass). This module sets each law's γ (one for all of its
bodies) from one time T_a [s] so that both cover the same step of the calibration body's
parameters in the same time, in the model below; docs/adaptive.md states the rule.

**Averaged, quasi-static error dynamics.** With the sliding loop fast against adaptation,
M ṡ + (C + K_D)s = Yθ̃ gives s ≈ K_D⁻¹ Y θ̃, so a law's error obeys θ̃̇ ≈ −γ W R θ̃ with
the excitation matrix

.. math::
    R = \frac{1}{T_w}\int_0^{T_w} Y^\top K_D^{-1} Y \, dt

(Y the regressor at perfect tracking, Y(q_d, q̇_d, q̇_d, q̈_d), over the reference's first
T_w seconds; R_i its body's 10 × 10 diagonal block) and the law's metric W: the identity
for the gradient law, W(Ĵ): g ↦ f⁻¹(Ĵ S(g) Ĵ) for the natural law (the inverse of the
log-det Hessian ⟨A, B⟩_Ĵ = tr(Ĵ⁻¹AĴ⁻¹B)).

**The step.** The calibration body is the load body, its step Δ the load the scenario
brings (the body's Θ at the time of the largest mass change minus at t = 0: a grasp adds
the block, a release takes it away); without a load, the tool flange's body with
Δ = 0.3 Φ̂₀ (the body 30 % heavier at the same COM and radii of gyration: the truth's
uncertainty; every other body's t₉₀ is reported for this step too). Reduced to the
step's direction, the estimate Φ̂ = Φ̂₀ + σΔ follows σ̇ = γ (1 − σ) ΔᵀR_iΔ / ‖Δ‖²_{W(σ)},
so σ reaches 0.9 at

.. math::
    t_{90} = \frac{1}{γ\, Δ^\top R_i Δ}\int_0^{0.9} \frac{‖Δ‖^2_{W(σ)}}{1 - σ}\, dσ,

‖Δ‖² = ΔᵀΔ for the gradient law (t₉₀ = ln 10 ΔᵀΔ / (γ ΔᵀR_iΔ)) and tr((Ĵ(σ)⁻¹f(Δ))²)
for the natural law, along Ĵ(σ) = f(Φ̂₀ + σΔ). γ is the gain with t₉₀ = T_a.

**The cap.** γ is capped where the fastest linearised rate λ_max(γ W R_i) of any adapted
body (at Φ̂₀ and at Φ̂₀ + Δ) reaches :data:`MAX_RATE_STEPS` per control step: a tenth of
the error per step. A capped law covers the step slower than T_a; :class:`AdaptationGains`
says so.

:func:`unobservable_fraction` measures what no gain changes: the part of a parameter in
the null space of R, which the torques along the reference do not show.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, phi_from_pseudo_inertia, pseudo_inertia
from robot_tv_dynamics.loading import LoadingProcess
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation import SineReference

#: The adaptation time T_a of the ``adapt`` command and its suite [s].
ADAPTATION_TIME = 1.0
#: Length T_w of the reference over which the excitation is averaged [s], and its samples.
EXCITATION_WINDOW = 20.0
EXCITATION_SAMPLES = 1000
#: Relative step of a body without the load: the truth's uncertainty (±30 %).
BODY_STEP = 0.3
#: Cap: the fastest linearised rate times the control step Δt.
MAX_RATE_STEPS = 0.1
#: The laws of the cap's metric: "gradient" (Euclidean) and "natural" (log-det).
METRICS = ("gradient", "natural")


@dataclass(frozen=True)
class AdaptationGains:
    """The gain γ of the gradient and of the natural law for one T_a.

    Attributes:
        adaptation_time: T_a [s].
        gradient: γ of the gradient law (Γ = γI on every adapted body).
        natural: γ of the natural laws (every adapted body).
        gradient_capped: whether the gradient gain hit the cap (its t₉₀ > T_a).
        natural_capped: whether the natural gain hit the cap.
        gradient_t90: t₉₀ of each body's own step at the gradient gain [s] (N,) (inf for
            bodies not adapted or whose step is not excited).
        natural_t90: the same at the natural gain [s] (N,).
        calibration_body: the body whose step sets the gains (the load body, else the
            body of the tool flange).
        load: whether its step is the scenario's load (else 30 % of the body itself).
    """

    adaptation_time: float
    gradient: float
    natural: float
    gradient_capped: bool
    natural_capped: bool
    gradient_t90: Array
    natural_t90: Array
    calibration_body: int
    load: bool

    def as_dict(self, body_names: list[str] | tuple[str, ...]) -> dict[str, object]:
        """The gains as summary.json writes them (t₉₀ per body name)."""
        def per_body(values: Array) -> dict[str, float | None]:
            return {n: (float(v) if np.isfinite(v) else None)
                    for n, v in zip(body_names, values, strict=True)}
        return {"adaptation_time_s": self.adaptation_time,
                "calibration_body": body_names[self.calibration_body],
                "calibration_step": "the scenario's load" if self.load else "30 % of the body",
                "gradient_gamma": self.gradient, "natural_gamma": self.natural,
                "gradient_capped": self.gradient_capped, "natural_capped": self.natural_capped,
                "gradient_t90_s": per_body(self.gradient_t90),
                "natural_t90_s": per_body(self.natural_t90)}


def excitation_matrix(model: RobotModel, reference: SineReference, kd: npt.ArrayLike,
                      window: float = EXCITATION_WINDOW,
                      samples: int = EXCITATION_SAMPLES) -> Array:
    """R = mean over the window of Yᵀ K_D⁻¹ Y at perfect tracking, (10N, 10N).

    Its diagonal blocks are the R_i of the rule; its null space holds the parameter
    combinations the joint torques do not show along this reference
    (:func:`unobservable_fraction`).

    Args:
        model: the arm.
        reference: the desired motion (its first ``window`` seconds).
        kd: K_D's diagonal (nv,) [N·m·s/rad].
        window: T_w [s].
        samples: how many evenly spaced times.
    """
    kd = np.asarray(kd, dtype=np.float64)
    total = np.zeros((10 * model.n_bodies, 10 * model.n_bodies))
    for t in np.linspace(0.0, window, samples):
        q, qd, qdd = reference(float(t))
        y = model.regressor(q, qd, qd, qdd)
        total += (y / kd[:, None]).T @ y
    return total / samples


def excitation_blocks(matrix: npt.ArrayLike) -> Array:
    """The diagonal blocks R_i (N, 10, 10) of the excitation matrix (10N, 10N)."""
    r = np.asarray(matrix)
    n = r.shape[0] // 10
    return np.array([r[10 * i:10 * i + 10, 10 * i:10 * i + 10] for i in range(n)])


def unobservable_fraction(matrix: npt.ArrayLike, index: int, rtol: float = 1e-9) -> float:
    """‖P e‖ of the unit parameter ``index`` projected on the null space of R, in [0, 1].

    0: the parameter is identifiable from the torques along the reference; > 0: some
    combination of other parameters produces the same torques (its regressor column lies
    in their span), so no adaptation law can single it out, at any gain.
    """
    values, vectors = np.linalg.eigh(np.asarray(matrix, dtype=np.float64))
    null = vectors[:, values < rtol * values[-1]]
    return float(np.linalg.norm(null[index]))


def natural_metric(j_hat: npt.ArrayLike) -> Array:
    """W(Ĵ) (10, 10): the natural law's map g ↦ f⁻¹(Ĵ S(g) Ĵ) on one body."""
    from robot_tv_dynamics.control.natural import gradient_matrix

    j = np.asarray(j_hat, dtype=np.float64)
    s = gradient_matrix(np.eye(10))  # (10, 4, 4): S of each unit gradient
    return np.asarray(phi_from_pseudo_inertia(j @ s @ j).T)


def _metric_norm(phi0: Array, step: Array, sigma: Array, metric: str) -> Array:
    """‖Δ‖² of the law's metric along Φ̂₀ + σΔ (one value per σ)."""
    if metric == "gradient":
        return np.full(sigma.shape, float(step @ step))
    f_step = pseudo_inertia(step)
    j = pseudo_inertia(phi0[None, :] + sigma[:, None] * step[None, :])
    a = np.linalg.solve(j, np.broadcast_to(f_step, j.shape))
    return np.asarray(np.einsum("kij,kji->k", a, a))


def step_time_constant(phi0: npt.ArrayLike, step: npt.ArrayLike, excitation: npt.ArrayLike,
                       metric: str, nodes: int = 400) -> float:
    """γ·t₉₀ of a step Δ from Φ̂₀ under the reduced dynamics (module docstring) [s at γ = 1].

    Raises:
        InvalidInputError: an unknown metric.
    """
    if metric not in METRICS:
        raise InvalidInputError("metric", f"one of {METRICS}, got {metric!r}")
    phi0, step = np.asarray(phi0, dtype=np.float64), np.asarray(step, dtype=np.float64)
    drive = float(step @ np.asarray(excitation) @ step)
    if drive <= 0.0:
        return float(np.inf)
    # σ = 1 − e^{−u}, u ∈ [0, ln 10]: dσ/(1 − σ) = du, so the integrand has no pole
    u = np.linspace(0.0, np.log(10.0), nodes)
    norm = _metric_norm(phi0, step, 1.0 - np.exp(-u), metric)
    return float(np.trapezoid(norm, u) / drive)


def _fastest_rate(phi: Array, excitation: Array, metric: str) -> float:
    """λ_max(W R) at Φ̂ (γ = 1) [1/s]."""
    w = np.eye(10) if metric == "gradient" else natural_metric(pseudo_inertia(phi))
    return float(np.max(np.linalg.eigvals(w @ excitation).real))


def load_step(model: RobotModel, process: LoadingProcess | None, duration: float,
              samples: int = 200) -> tuple[int | None, Array | None]:
    """(load body, Δ): the load body's Θ at the largest mass change minus at t = 0.

    Args:
        model: the arm.
        process: the scenario's loading process (None: no load).
        duration: the run's length [s] (the times searched).
        samples: times searched over [0, duration].
    """
    if process is None:
        return None, None
    from robot_tv_dynamics.simulation import ArmSimulator

    sim = ArmSimulator(model, process)
    if sim.load_body is None:
        return None, None
    body = int(sim.load_body)
    rows = np.array([sim.loads(float(t)).theta[body] for t in np.linspace(0, duration, samples)])
    change = rows - rows[0]
    return body, change[int(np.argmax(np.abs(change[:, 0])))]


def matched_gains(model: RobotModel, theta_hat0: npt.ArrayLike, excitation: npt.ArrayLike,
                  adapted: npt.ArrayLike, calibration_body: int, *,
                  adaptation_time: float = ADAPTATION_TIME, dt: float = 1e-3,
                  load: Array | None = None) -> AdaptationGains:
    """Each law's γ with t₉₀ = T_a on the calibration body's step (module docstring), capped.

    Args:
        model: the arm.
        theta_hat0: the laws' initial estimate Θ̂₀ (N, 10).
        excitation: R_i per body (N, 10, 10) (:func:`excitation_blocks`).
        adapted: the bodies the laws adapt (N,) bool.
        calibration_body: the body whose step sets the gains.
        adaptation_time: T_a [s], > 0.
        dt: the control step [s] (the cap).
        load: the load's step Δ on the calibration body (:func:`load_step`); None: 30 % of
            the body.

    Raises:
        InvalidInputError: T_a ≤ 0 or not finite; a calibration body not adapted.
    """
    if not (np.isfinite(adaptation_time) and adaptation_time > 0.0):
        raise InvalidInputError("adaptation_time", f"must be > 0 s, got {adaptation_time}")
    theta0 = np.asarray(theta_hat0, dtype=np.float64)
    excitation = np.asarray(excitation, dtype=np.float64)
    adapted = np.asarray(adapted, dtype=bool)
    if not adapted[calibration_body]:
        raise InvalidInputError("calibration_body", f"body {calibration_body} is not adapted")
    with_load = load is not None and float(abs(load[0])) > 0.0
    steps = BODY_STEP * theta0
    if with_load:
        steps[calibration_body] = np.asarray(load)
    out: dict[str, tuple[float, bool, Array]] = {}
    for metric in METRICS:
        unit = np.full(model.n_bodies, np.inf)
        fastest = 0.0
        for i in np.flatnonzero(adapted):
            unit[i] = step_time_constant(theta0[i], steps[i], excitation[i], metric)
            fastest = max(fastest, _fastest_rate(theta0[i], excitation[i], metric),
                          _fastest_rate(theta0[i] + steps[i], excitation[i], metric))
        wanted = unit[calibration_body] / adaptation_time
        cap = MAX_RATE_STEPS / (dt * fastest)
        gain = float(min(wanted, cap))
        out[metric] = (gain, bool(wanted > cap), unit / gain)
    return AdaptationGains(adaptation_time, out["gradient"][0], out["natural"][0],
                           out["gradient"][1], out["natural"][1], out["gradient"][2],
                           out["natural"][2], int(calibration_body), with_load)
