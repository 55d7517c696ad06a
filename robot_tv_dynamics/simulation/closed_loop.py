r"""The embedded default: the plant under a computed-torque loop, and three payload estimators.

:class:`ClosedLoop`: the plant (:class:`~robot_tv_dynamics.simulation.plant.ArmSimulator`),
a computed-torque controller on the projected estimate, and the classical, projected and
geometric estimators of :mod:`robot_tv_dynamics.estimation` fed with the same noisy
joint-torque measurements (the geometric one, an EKF on log-Cholesky parameters, runs
open loop like the classical one). It holds no ROS code; ``ros/sim_node.py`` publishes its samples.
:func:`demo_config` and :func:`demo_loop` are the demo's settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.estimation import (
    EstimatorConfig,
    GeometricConfig,
    GeometricEKF,
    RecursiveLeastSquares,
    payload_measurement,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    Array,
    consistency_margin,
    consistency_size,
)
from robot_tv_dynamics.loading import BodyLoadMap, LoadingProcess
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation.control import (
    ComputedTorqueOnEstimate,
    SineReference,
    default_reference,
)
from robot_tv_dynamics.simulation.loop import ControlLoop
from robot_tv_dynamics.simulation.plant import Loads


# ------------------------------------------------------------------------ closed loop
@dataclass(frozen=True)
class ClosedLoopConfig:
    """Settings of the embedded closed loop (plant + controller + estimators).

    Attributes:
        rate: plant and controller rate [Hz].
        estimator_decimation: the estimators update every this many steps.
        torque_noise_std: σ of the white noise on the measured joint torques [N·m, N].
        bandwidth: controller bandwidth ω (K_p = ω², K_d = 2ω) [rad/s].
        estimator: settings of both estimators (the projection uses its ε, β).
        seed: seed of the measurement noise.
    """

    rate: float = 1000.0
    estimator_decimation: int = 5
    torque_noise_std: float = 0.05
    bandwidth: float = 10.0
    estimator: EstimatorConfig = field(default_factory=EstimatorConfig)
    seed: int = 0

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        if self.estimator_decimation < 1:
            raise InvalidInputError(
                "estimator_decimation", f"must be >= 1, got {self.estimator_decimation}")
        if not (math.isfinite(self.torque_noise_std) and self.torque_noise_std >= 0):
            raise InvalidInputError(
                "torque_noise_std", f"must be >= 0, got {self.torque_noise_std}")


@dataclass(frozen=True)
class LoopSample:
    """Everything one closed-loop step produced (arrays are copies).

    Attributes:
        t: time of the sample (start of the step) [s].
        q: joint positions (nv,).
        qd: joint velocities (nv,).
        qdd: joint accelerations from eq. (39) for the applied τ (nv,).
        tau: applied joint torque (nv,) [N·m, N].
        tau_measured: τ plus measurement noise, what the estimators see (nv,).
        reference: (q_r, q̇_r, q̈_r) tracked by the controller.
        loads: true Θ, Θ̇, Ψ, Ψ̇, ν at ``t``.
        phi_classical: Φ̂ of the payload body from the classical estimator (10,).
        phi_projected: Φ̂ from the projected estimator (10,).
        saturated: whether the controller's torque was clipped.
        phi_geometric: Φ̂ from the geometric estimator (10,).
    """

    t: float
    q: Array
    qd: Array
    qdd: Array
    tau: Array
    tau_measured: Array
    reference: tuple[Array, Array, Array]
    loads: Loads
    phi_classical: Array
    phi_projected: Array
    saturated: bool
    phi_geometric: Array


class ClosedLoop:
    """The plant under computed torque on the projected estimate, and three estimators.

    A :class:`~robot_tv_dynamics.simulation.loop.ControlLoop` running
    :class:`~robot_tv_dynamics.simulation.control.ComputedTorqueOnEstimate`, whose Θ̂ is
    reset to the projected estimate after each estimator update. The classical and the
    geometric estimators run open loop on the same measurements, so the estimates differ
    only in the estimator.
    """

    def __init__(
        self,
        model: RobotModel,
        process: LoadingProcess,
        reference: SineReference,
        config: ClosedLoopConfig | None = None,
        *,
        theta_base: npt.ArrayLike | None = None,
    ) -> None:
        """Build the loop; the arm starts at rest on the reference's start point.

        Args:
            model: the arm.
            process: the loading process on one of its links.
            reference: the motion to track.
            config: loop settings; defaults when None.
            theta_base: Θ of the arm without the load; default the URDF's.
        """
        self.config = config if config is not None else ClosedLoopConfig()
        cfg = self.config
        self.model = model
        self.reference = reference
        self.law = ComputedTorqueOnEstimate(model, model.theta_nominal, omega=cfg.bandwidth)
        self.loop = ControlLoop(model, self.law, reference, process, rate=cfg.rate,
                                theta_base=theta_base)
        self.plant = self.loop.plant
        # the estimators and the law start from the true Θ at t = 0
        self.theta_known = self.plant.loads(self.plant.t).theta.copy()
        self.law.reset(self.theta_known)
        self.body = int(self.plant.load_body if self.plant.load_body is not None else 0)
        phi0 = self.theta_known[self.body]
        self.classical = RecursiveLeastSquares(phi0, cfg.estimator, projected=False)
        self.projected = RecursiveLeastSquares(phi0, cfg.estimator, projected=True)
        est = cfg.estimator
        self.geometric = GeometricEKF(phi0, GeometricConfig(
            epsilon=est.epsilon, prior_std=est.prior_std, noise_std=est.noise_std,
            period=cfg.estimator_decimation / cfg.rate))
        self._rng = np.random.default_rng(cfg.seed)

    def theta_hat(self, phi: Array) -> Array:
        """Θ̂: the known bodies with the payload row replaced by ``phi``."""
        theta = self.theta_known.copy()
        theta[self.body] = phi
        return theta

    def set_extra_torque(self, tau: npt.ArrayLike) -> None:
        """A torque added to the controller's (e.g. from ``effort_commands``) [N·m, N]."""
        self.loop.set_extra_torque(tau)

    def step(self) -> LoopSample:
        """One control period: control, plant step, measurement, estimator updates."""
        sample = self.loop.step()
        tau, qdd = sample.tau, sample.qdd
        noise = self.config.torque_noise_std
        tau_measured = tau + (self._rng.normal(0.0, noise, tau.shape) if noise > 0 else 0.0)
        if self.plant.steps % self.config.estimator_decimation == 0:
            kin = self.model.kinematics(sample.q)
            measured = payload_measurement(kin, sample.qd, qdd, tau_measured, self.theta_known,
                                           self.body)
            dt = self.config.estimator_decimation / self.config.rate
            self.classical.update(measured.regressor, measured.y, dt=dt)
            self.projected.update(measured.regressor, measured.y, dt=dt)
            self.geometric.update(measured.regressor, measured.y, dt=dt)
            self.law.reset(self.theta_hat(self.projected.phi))
        return LoopSample(
            t=sample.t, q=sample.q, qd=sample.qd, qdd=qdd, tau=tau, tau_measured=tau_measured,
            reference=sample.reference, loads=sample.loads,
            phi_classical=self.classical.phi.copy(), phi_projected=self.projected.phi.copy(),
            saturated=sample.saturated, phi_geometric=self.geometric.phi.copy())


# ------------------------------------------------------------------------ the demo
#: Monitor threshold of the demo: ε_l = DEMO_MARGIN_FRACTION · λ_min(f(Φ_l(URDF))).
DEMO_MARGIN_FRACTION = 0.25
#: The projection keeps λ_min(f(Φ̂)) ≥ DEMO_PROJECTION_MARGIN · ε (outside the WARN band 2ε).
DEMO_PROJECTION_MARGIN = 2.5
#: The projection keeps λ_max(f(Φ̂)) ≤ DEMO_PROJECTION_UPPER · λ_max(f(Φ(URDF))) (the
#: monitor's upper bound is 10×).
DEMO_PROJECTION_UPPER = 5.0


def demo_config(model: RobotModel, body: int, seed: int = 0) -> ClosedLoopConfig:
    """The closed-loop settings of the demo (docs/demo.md explains each choice).

    RLS at 200 Hz with a memory of 5 s (λ = exp(−Δt/5 s) ≈ 0.999), a confident prior around
    the known empty-payload Φ (σ = 0.1 kg, 0.01 kg·m, and μ_b(URDF) kg·m² for the second
    moments: the payload body's own margin, 2.0·10⁻³ on the Panda, 2.3·10⁻⁴ on the UR5's
    wrist, so that noise alone does not make a slim body's estimate inconsistent),
    torque-sensor noise σ = 0.02 N·m, a 10 rad/s computed-torque loop; the projection set
    is ε = 2.5 · 0.25 · μ_l(URDF), β = 5 · ν_l(URDF) of the payload body ``body``.
    """
    phi = model.theta_nominal[body]
    epsilon = DEMO_PROJECTION_MARGIN * DEMO_MARGIN_FRACTION * float(consistency_margin(phi))
    beta = DEMO_PROJECTION_UPPER * float(consistency_size(phi))
    return ClosedLoopConfig(
        rate=1000.0, estimator_decimation=5, torque_noise_std=0.02, bandwidth=10.0, seed=seed,
        estimator=EstimatorConfig(memory=5.0, period=0.005,
                                  prior_std=(0.1, 0.01, float(consistency_margin(phi))),
                                  noise_std=0.02, epsilon=epsilon, beta=beta))


def demo_loop(model: RobotModel, process: LoadingProcess, seed: int = 0) -> ClosedLoop:
    """The embedded default: :func:`demo_config` and :func:`~.control.default_reference`."""
    limits = model.joint_limits
    reference = default_reference(model.joint_names, np.asarray(limits.lower),
                                  np.asarray(limits.upper), np.asarray(limits.prismatic))
    body = BodyLoadMap(model, process.link).body
    return ClosedLoop(model, process, reference, demo_config(model, body, seed))
