"""A recording made the way a real arm's looks, for the offline payload fit.

Plant: the Panda (fingers locked) with Θ perturbed from the URDF the estimator starts
from (each body's mass and principal second moments by up to ±20 %, its COM by up to
±1 cm), viscous + Coulomb + offset friction plus a Stribeck bump that ``identify`` does
not model, coloured (AR(1), ~40 ms correlation) joint-torque noise of 0.3–0.8 N·m per
joint, q̇ with 1e-3 rad/s white noise; τ by the package's eq. (39)
(``RobotModel.inverse_dynamics``). The record is two parts of one exciting trajectory
(4 s period): ``identify`` runs on the first ``IDENTIFY`` s (no load); the next
``LOADED`` s carry a rigid 1 kg load on panda_hand. The load's Φ is NOT built by the code
under test: the load is a fixed link added to the URDF text and the loaded body's Φ is
Pinocchio's URDF parser's merge.

Both parts are 40 s (10 periods), what docs/estimation.md says the routine needs for a
1 cm COM at this noise: the fit's COM error is the loaded part's noise plus the unloaded
reference's (the base model's error in the hand body, which only unloaded data measure),
σ ∝ √(1/T_loaded + 1/T_reference); with the earlier 8 s + 16 s it was 4–5.5 mm per
coordinate and 7 of 40 seeds missed 1 cm.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.friction import write_friction_file  # noqa: E402
from robot_tv_dynamics.identification.data import check_samples, prepare  # noqa: E402
from robot_tv_dynamics.identification.excitation import design_excitation  # noqa: E402
from robot_tv_dynamics.identification.pipeline import IdentifyOptions, identify  # noqa: E402
from robot_tv_dynamics.identification.urdf_writer import identified_urdf  # noqa: E402
from robot_tv_dynamics.inertia import (  # noqa: E402
    consistency_margin,
    mass_com_inertia_from_phi,
    phi_from_mass_com_inertia,
)
from support.identification_helpers import (  # noqa: E402
    PANDA_LOCK,
    random_friction,
    write_joint_state_bag,
)

LINK = "panda_hand"
LOAD_MASS = 1.0
LOAD_COM = np.array([0.02, -0.01, 0.10])  # in panda_hand [m]
LOAD_INERTIA = np.diag([2e-3, 1.5e-3, 1e-3])  # about its COM [kg·m²]
RATE, BASE_FREQUENCY = 250.0, 0.25
IDENTIFY, LOADED = 40.0, 40.0  # [s] the unloaded part (identify, the tare), the loaded one
DESIGN = 8.0  # [s] the horizon the excitation is designed over (its period is 4 s)
SIGMA = np.linspace(0.3, 0.8, 7)
AR = 0.9  # per sample at 250 Hz: ~40 ms correlation time


def loaded_urdf(xml: str) -> str:
    """The URDF with the load as a fixed child link of panda_hand."""
    c, i = LOAD_COM, LOAD_INERTIA
    extra = (
        f'<link name="test_load"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}" rpy="0 0 0"/>'
        f'<mass value="{LOAD_MASS}"/><inertia ixx="{i[0, 0]}" ixy="0" ixz="0" '
        f'iyy="{i[1, 1]}" iyz="0" izz="{i[2, 2]}"/></inertial></link>'
        '<joint name="test_load_joint" type="fixed"><parent link="panda_hand"/>'
        '<child link="test_load"/><origin xyz="0 0 0" rpy="0 0 0"/></joint>')
    head, tail = xml.rsplit("</robot>", 1)
    return head + extra + "</robot>" + tail


def perturbed(model: RobotModel, rng: np.random.Generator) -> np.ndarray:
    """Θ with mass and principal second moments ×(1 ± U(0, 0.2)), COM + U(±1 cm)."""
    theta = np.array(model.theta_nominal)
    for body in range(model.n_bodies):
        mass, com, inertia = mass_com_inertia_from_phi(theta[body])
        sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia
        values, vectors = np.linalg.eigh(sigma)
        sigma = (vectors * (values * (1 + rng.uniform(-0.2, 0.2, 3)))) @ vectors.T
        theta[body] = phi_from_mass_com_inertia(
            mass * (1 + rng.uniform(-0.2, 0.2)), com + rng.uniform(-0.01, 0.01, 3),
            np.trace(sigma) * np.eye(3) - sigma)
    assert np.all(consistency_margin(theta) > 0)
    return theta


def coloured_noise(k: int, rng: np.random.Generator) -> np.ndarray:
    """AR(1) noise with stationary standard deviation SIGMA per joint (k, 7)."""
    white = rng.standard_normal((k, SIGMA.size)) * np.sqrt(1 - AR ** 2)
    out = np.empty_like(white)
    out[0] = rng.standard_normal(SIGMA.size)
    for i in range(1, k):
        out[i] = AR * out[i - 1] + white[i]
    return out * SIGMA


@dataclass
class BatchCase:
    model: RobotModel
    identified_urdf: Path
    friction_yaml: Path
    loaded_bag: Path
    unloaded_bag: Path
    noise_rms: np.ndarray


def make_case(urdf_path: str, folder: Path, seed: int, identify_seconds: float = IDENTIFY,
              loaded_seconds: float = LOADED) -> BatchCase:
    """Simulate, identify on the first part, write the identified model and the bags."""
    rng = np.random.default_rng(seed)
    xml = Path(urdf_path).read_text(encoding="utf-8")
    model = RobotModel.from_urdf(urdf_path, PANDA_LOCK)
    loaded = RobotModel.from_urdf_string(loaded_urdf(xml), "loaded", PANDA_LOCK)
    theta = perturbed(model, rng)
    theta_loaded = theta + (loaded.theta_nominal - model.theta_nominal)
    friction = random_friction(model.nv, rng)
    design = design_excitation(model, duration=DESIGN, harmonics=4,
                               base_frequency=BASE_FREQUENCY, seed=1)
    t = np.arange(0.0, identify_seconds + loaded_seconds, 1.0 / RATE)
    q, qd, qdd = design.trajectory.evaluate(t)
    second = t >= identify_seconds
    tau = np.array([model.inverse_dynamics(q[k], qd[k], qdd[k],
                                           theta_loaded if second[k] else theta).tau
                    for k in range(t.size)])
    stribeck = 0.15 * np.sign(qd) * np.exp(-(qd / 0.05) ** 2)
    noise = coloured_noise(t.size, rng)
    tau = tau + friction.torque(qd) + stribeck + noise
    qd_measured = qd + 1e-3 * rng.standard_normal(qd.shape)

    first = ~second
    samples = check_samples("sim", model.joint_names, t[first], q[first], qd_measured[first],
                            tau[first])
    result = identify(model, prepare(samples), IdentifyOptions(friction="full"))
    fit = result.models["identified"]
    text, _ = identified_urdf(xml, model, fit.theta)
    urdf_out = folder / "identified.urdf"
    urdf_out.write_text(text, encoding="utf-8")
    friction_out = folder / "friction.yaml"
    write_friction_file(friction_out, fit.friction)
    bag = write_joint_state_bag(folder / "loaded.mcap", model.joint_names,
                                t[second] - identify_seconds, q[second], qd_measured[second],
                                tau[second])
    unloaded = write_joint_state_bag(folder / "unloaded.mcap", model.joint_names, t[first],
                                     q[first], qd_measured[first], tau[first])
    return BatchCase(model, urdf_out, friction_out, bag, unloaded,
                     np.sqrt(np.mean(noise[second] ** 2, axis=0)))
