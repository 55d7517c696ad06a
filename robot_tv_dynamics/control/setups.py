"""The settings the ``adapt`` command, its suite and docs/adaptive.md run with.

Gains: Λ = 10/s on every joint, K_D = 20/s · diag M(q₀, Θ_URDF) (so every joint's s
decays at about the same rate, the Panda's 15 g fingers included), each adaptive law's
γ from one adaptation time T_a (:func:`adaptation_gains`, the rule of
:mod:`~robot_tv_dynamics.control.gains`); computed torque at ω = 10 rad/s. The
unknown truth: the URDF's Θ perturbed (mass ±30 %, principal second moments ±30 %, COM
±2 cm; every body still consistent); every controller starts from
:func:`initial_estimate`: the URDF's Θ with the load as it is at t = 0 (known at the start,
as a ``set_load`` would give it), or, in the scenario :data:`WRONG_ESTIMATE`, that Θ
perturbed far more (:func:`wrong_estimate`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.control.gains import (
    ADAPTATION_TIME,
    AdaptationGains,
    excitation_blocks,
    excitation_matrix,
    load_step,
    matched_gains,
)
from robot_tv_dynamics.control.natural import SlotineLiNatural, SlotineLiProjected
from robot_tv_dynamics.control.run import persistent_reference
from robot_tv_dynamics.control.slotine_li import SlotineLiGradient
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.loading import LoadingProcess
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation import ArmSimulator, SineReference, default_reference
from robot_tv_dynamics.simulation.control import ComputedTorqueOnEstimate, start_pose
from robot_tv_dynamics.simulation.interface import Controller
from robot_tv_dynamics.simulation.recording import perturbed_theta

#: The controllers, as ``--controller`` names them.
CONTROLLERS = ("slotine-li", "natural", "projected", "computed-torque")
#: persistent: every revolute joint at its own frequency; poor: the demo's four joints.
EXCITATIONS = ("persistent", "poor")
#: ``adapt --scenario``: no loading process, Θ constant (the case Slotine–Li is for).
CONSTANT = "constant"
#: ``adapt --scenario``: Θ constant, the controller starting from :func:`wrong_estimate`.
WRONG_ESTIMATE = "wrong_estimate"
#: Λ [1/s].
LAMBDA = 10.0
#: K_D = KD_RATE · diag M(q₀, Θ_URDF) [1/s].
KD_RATE = 20.0


def reference_for(model: RobotModel, excitation: str) -> SineReference:
    """The desired motion of an excitation (:data:`EXCITATIONS`) from :func:`start_pose`.

    Raises:
        InvalidInputError: an unknown excitation.
    """
    q0 = start_pose(model)
    if excitation == "persistent":
        return persistent_reference(model, q0)
    if excitation == "poor":
        limits = model.joint_limits
        ref = default_reference(list(model.joint_names), limits.lower, limits.upper,
                                limits.prismatic)
        return SineReference(q0, ref.amplitude, ref.frequency, ref.phase, ref.ramp)
    raise InvalidInputError("excitation", f"one of {EXCITATIONS}, got {excitation!r}")


def unknown_truth(model: RobotModel, seed: int = 0) -> Array:
    """The plant's Θ the controllers do not know (module docstring)."""
    return perturbed_theta(model, np.random.default_rng(seed), mass=0.3, inertia=0.3, com=0.02)


def wrong_estimate(model: RobotModel, theta: npt.ArrayLike, seed: int = 1) -> Array:
    """A badly wrong, still consistent estimate of ``theta`` (N, 10).

    Every body with mass: mass × (1 ± U(0, 0.5)), principal second moments about the
    COM × (1 ± U(0, 0.5)), COM shifted U(−5, 5) cm per axis (seeded; the unknown truth
    of :func:`unknown_truth` is within ±30 % and ±2 cm of the URDF).
    """
    return perturbed_theta(model, np.random.default_rng(seed), mass=0.5, inertia=0.5,
                           com=0.05, theta=theta)


def initial_estimate(model: RobotModel, process: LoadingProcess | None = None, *,
                     wrong: bool = False, seed: int = 1) -> Array:
    """Θ̂₀ of every controller: the URDF's Θ with the process's load at t = 0.

    Args:
        model: the arm.
        process: the loading process (None: the URDF's Θ).
        wrong: start from :func:`wrong_estimate` of that Θ instead.
        seed: the wrong estimate's seed.
    """
    theta = np.array(ArmSimulator(model, process).loads(0.0).theta)
    return wrong_estimate(model, theta, seed) if wrong else theta


def damping(model: RobotModel) -> Array:
    """K_D = KD_RATE · diag M(q₀, Θ_URDF) (nv,) [N·m·s/rad, N·s/m]."""
    return np.asarray(KD_RATE * np.diag(model.mass_matrix(start_pose(model),
                                                          model.theta_nominal)))


def adaptation_gains(model: RobotModel, theta_hat: Array, reference: SineReference,
                     process: LoadingProcess | None, tool_body: int, *,
                     adaptation_time: float = ADAPTATION_TIME, duration: float = 60.0,
                     rate: float = 1000.0) -> AdaptationGains:
    """Both laws' γ for T_a on this excitation and load (the rule of control/gains.py).

    Args:
        model: the arm.
        theta_hat: the laws' Θ̂₀ (N, 10).
        reference: the desired motion (its excitation).
        process: the loading process (its load step on the load body sets the gains;
            None: 30 % of ``tool_body``).
        tool_body: the body of the tool flange (the calibration body without a load).
        adaptation_time: T_a [s].
        duration: how long the run lasts [s] (the load step is searched over it).
        rate: the control rate [Hz] (the gains' cap).

    Raises:
        InvalidInputError: T_a ≤ 0.
    """
    from robot_tv_dynamics.inertia import consistency_margin

    excitation = excitation_blocks(excitation_matrix(model, reference, damping(model)))
    adapted = np.atleast_1d(consistency_margin(theta_hat)) > 0.0
    body, step = load_step(model, process, duration)
    return matched_gains(model, theta_hat, excitation, adapted,
                         tool_body if body is None else body, adaptation_time=adaptation_time,
                         dt=1.0 / rate, load=step)


def make_controller(name: str, model: RobotModel, theta_hat: Array,
                    gain: float | None = None, *,
                    gains: AdaptationGains | None = None) -> Controller:
    """One of :data:`CONTROLLERS` with this module's gains, starting from Θ̂₀.

    Args:
        name: the controller.
        model: the arm.
        theta_hat: Θ̂₀ (N, 10).
        gain: one γ for every body and parameter (the laws' own scale: not comparable
            across laws); None: ``gains``.
        gains: each law's γ from :func:`adaptation_gains` (the default of ``adapt``);
            when given, it sets γ.

    Raises:
        InvalidInputError: an unknown name, or an adaptive law with neither ``gain`` nor
            ``gains``.
    """
    kd = damping(model)
    if gains is not None:
        gamma = gains.gradient if name == "slotine-li" else gains.natural
    elif gain is not None:
        gamma = float(gain)
    elif name in ("slotine-li", "natural", "projected"):
        raise InvalidInputError("gains", f"{name} needs gain= or the gains of "
                                "adaptation_gains()")
    if name == "slotine-li":
        return SlotineLiGradient(model, theta_hat, gamma=gamma, lam=LAMBDA, kd=kd)
    if name == "natural":
        return SlotineLiNatural(model, theta_hat, gamma=gamma, lam=LAMBDA, kd=kd)
    if name == "projected":
        return SlotineLiProjected(model, theta_hat, gamma=gamma, lam=LAMBDA, kd=kd)
    if name == "computed-torque":
        return ComputedTorqueOnEstimate(model, theta_hat, omega=LAMBDA)
    raise InvalidInputError("controller", f"one of {CONTROLLERS}, got {name!r}")


def arm_setup(arm: str, excitation: str) -> tuple[RobotModel, Array, SineReference]:
    """(model, unknown truth, reference) for ``arm`` ``"panda"`` or ``"ur5"``."""
    from robot_tv_dynamics.paths import example_robot_urdf

    path = {"panda": example_robot_urdf(),
            "ur5": example_robot_urdf("ur_description/urdf/ur5_robot.urdf")}.get(arm)
    if path is None:
        raise InvalidInputError("arm", f"panda or ur5, got {arm!r}")
    model = RobotModel.from_urdf(path)
    return model, unknown_truth(model), reference_for(model, excitation)
