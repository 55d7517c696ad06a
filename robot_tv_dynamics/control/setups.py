"""The settings the ``adapt`` command, its suite and docs/adaptive.md run with.

Gains: Λ = 10/s on every joint, K_D = 20/s · diag M(q₀, Θ_URDF) (so every joint's s
decays at about the same rate, the Panda's 15 g fingers included), γ = 10 for the
gradient law (Γ = γI) and the natural laws; computed torque at ω = 10 rad/s. The
unknown truth: the URDF's Θ perturbed (mass ±30 %, principal second moments ±30 %, COM
±2 cm; every body still consistent); every controller starts from the URDF's Θ.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.control.computed_torque import ComputedTorqueOnEstimate
from robot_tv_dynamics.control.interface import Controller
from robot_tv_dynamics.control.natural import SlotineLiNatural, SlotineLiProjected
from robot_tv_dynamics.control.run import persistent_reference
from robot_tv_dynamics.control.slotine_li import SlotineLiGradient
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.simulation import SineReference, default_reference
from robot_tv_dynamics.simulation.control import PANDA_READY
from robot_tv_dynamics.simulation.recording import perturbed_theta

#: The controllers, as ``--controller`` names them.
CONTROLLERS = ("slotine-li", "natural", "projected", "computed-torque")
#: persistent: every revolute joint at its own frequency; poor: the demo's four joints.
EXCITATIONS = ("persistent", "poor")
#: Adaptation gain γ of the three adaptive laws.
ADAPTATION_GAIN = 10.0
#: Λ [1/s].
LAMBDA = 10.0
#: K_D = KD_RATE · diag M(q₀, Θ_URDF) [1/s].
KD_RATE = 20.0


def start_pose(model: RobotModel) -> Array:
    """The Panda's ready pose on the Panda, else the middle of the joint limits."""
    if model.nv == len(PANDA_READY) and model.joint_names[0] == "panda_joint1":
        return np.array(PANDA_READY)
    limits = model.joint_limits
    return np.where(np.isfinite(limits.lower + limits.upper),
                    0.5 * (limits.lower + limits.upper), 0.0)


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


def make_controller(name: str, model: RobotModel, theta_hat: Array,
                    gain: float = ADAPTATION_GAIN) -> Controller:
    """One of :data:`CONTROLLERS` with this module's gains, starting from Θ̂₀.

    Raises:
        InvalidInputError: an unknown name.
    """
    kd = KD_RATE * np.diag(model.mass_matrix(start_pose(model), model.theta_nominal))
    if name == "slotine-li":
        return SlotineLiGradient(model, theta_hat, gamma=gain, lam=LAMBDA, kd=kd)
    if name == "natural":
        return SlotineLiNatural(model, theta_hat, gamma=gain, lam=LAMBDA, kd=kd)
    if name == "projected":
        return SlotineLiProjected(model, theta_hat, gamma=gain, lam=LAMBDA, kd=kd)
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
