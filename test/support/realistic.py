"""Joint-state data made the way a real arm's look, for the payload estimators.

The plant is a Panda (fingers locked) whose Θ differs from the URDF the estimator
starts from (each link's mass and principal second moments by up to ±20 %, each COM
coordinate by up to ±1 cm), with viscous + Coulomb friction plus a Stribeck bump that
identify's model does not have, and coloured noise (AR(1), 10 ms correlation, 0.3–0.8
N·m per joint, 0.1 % of the samples with 6σ spikes) on the measured efforts, at 1 kHz.
The first half (no load) is for ``identify``; in the second half a rigid 1 kg load
(COM 10 cm out along the hand's z, 1 cm off-axis) is grasped over 0.2 s at
``GRASP`` seconds. Torques come from the package's eq. (39) with Θ̇ during the grasp
(``RobotModel.torque``, the recursive backend); the estimators use Pinocchio's
regressor and q̈ filtered from q̇, so data and estimator share no formula.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.identification.excitation import design_excitation  # noqa: E402
from robot_tv_dynamics.inertia import (  # noqa: E402
    mass_com_inertia_from_phi,
    phi_from_mass_com_inertia,
)
from support.identification_helpers import (  # noqa: E402
    PANDA_LOCK,
    random_friction,
    write_joint_state_bag,
)

LINK = "panda_hand"
RATE = 1000.0              # [Hz]
HALF = 12.0                # [s] each half
GRASP = 3.0                # [s] into the second half: the grasp starts
RAMP = 0.2                 # [s] the grasp's duration
LOAD_MASS = 1.0            # [kg]
LOAD_COM = np.array([0.01, 0.0, 0.10])  # [m] in the panda_hand frame
LOAD_INERTIA = np.diag([2e-3, 2e-3, 1e-3])  # [kg·m²] about its COM


def load_phi() -> np.ndarray:
    """Φ of the load about the panda_hand frame."""
    return phi_from_mass_com_inertia(LOAD_MASS, LOAD_COM, LOAD_INERTIA)


def realistic_theta(model: RobotModel, rng: np.random.Generator) -> np.ndarray:
    """The plant's Θ: mass and principal second moments × U(0.8, 1.2), COM + U(±1 cm)."""
    theta = np.array(model.theta_nominal)
    for l in range(model.n_bodies):
        mass, com, inertia = mass_com_inertia_from_phi(theta[l])
        sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia  # stays ≻ 0 when scaled
        values, vectors = np.linalg.eigh(sigma)
        sigma = (vectors * (values * rng.uniform(0.8, 1.2, 3))) @ vectors.T
        inertia = np.trace(sigma) * np.eye(3) - sigma
        theta[l] = phi_from_mass_com_inertia(mass * rng.uniform(0.8, 1.2),
                                             com + rng.uniform(-0.01, 0.01, 3), inertia)
    return theta


def coloured_noise(rng: np.random.Generator, samples: int, sigma: np.ndarray,
                   correlation: float = 0.010) -> np.ndarray:
    """AR(1) noise of stationary std ``sigma`` per joint, plus rare 6σ spikes."""
    a = np.exp(-1.0 / (RATE * correlation))
    white = rng.standard_normal((samples, sigma.size)) * sigma * np.sqrt(1.0 - a * a)
    out = np.empty_like(white)
    out[0] = rng.standard_normal(sigma.size) * sigma
    for k in range(1, samples):
        out[k] = a * out[k - 1] + white[k]
    spikes = rng.random((samples, sigma.size)) < 1e-3
    return out + spikes * rng.choice([-6.0, 6.0], out.shape) * sigma


@dataclass
class Realistic:
    model: RobotModel
    theta_plant: np.ndarray
    sigma: np.ndarray
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    load_fraction: np.ndarray  # s(t) of the second half: 0 before the grasp, 1 after


def smoothstep(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s(x) = 3x² − 2x³ on [0, 1] (clipped) and ds/dx."""
    x = np.clip(x, 0.0, 1.0)
    return 3 * x * x - 2 * x**3, 6 * x - 6 * x * x


def generate(urdf: str, seed: int = 11) -> Realistic:
    """Both halves, back to back (t from 0 to 2·HALF)."""
    model = RobotModel.from_urdf(urdf, PANDA_LOCK)
    rng = np.random.default_rng(seed)
    design = design_excitation(model, duration=6.0, harmonics=4, base_frequency=1 / 6,
                               candidates=6, iterations=8)
    theta = realistic_theta(model, rng)
    friction = random_friction(model.nv, rng)
    stribeck = rng.uniform(0.1, 0.4, model.nv)
    sigma = rng.uniform(0.3, 0.8, model.nv)
    t = np.arange(0.0, 2 * HALF, 1.0 / RATE)
    q, qd, qdd = design.trajectory.evaluate(t)
    body = model.link_attachment(LINK).body
    hand = model.theta_with_link_inertia(theta, LINK, model.urdf_link_phi(LINK) + load_phi())
    delta = hand[body] - theta[body]  # the load in the body's frame
    s, ds = smoothstep((t - HALF - GRASP) / RAMP)
    tau = np.empty_like(q)
    for k in range(t.size):
        now = theta.copy()
        now[body] += s[k] * delta
        rate = None
        if 0.0 < s[k] < 1.0:
            rate = np.zeros_like(theta)
            rate[body] = ds[k] / RAMP * delta
        tau[k] = model.torque(q[k], qd[k], qdd[k], now, rate)
    tau += friction.torque(qd) + stribeck * np.sign(qd) * np.exp(-(qd / 0.05) ** 2)
    tau += coloured_noise(rng, t.size, sigma)
    qd_measured = qd + 1e-3 * rng.standard_normal(qd.shape)
    return Realistic(model, theta, sigma, t, q, qd_measured, tau, s[t >= HALF])


def write_halves(data: Realistic, folder: Path) -> tuple[Path, Path]:
    """The two halves as MCAP files (fingers padded at 0, as a Panda publishes them)."""
    names = list(data.model.joint_names) + PANDA_LOCK
    paths = []
    for name, mask in (("first", data.t < HALF), ("second", data.t >= HALF)):
        n = int(mask.sum())
        pad = np.zeros((n, 2))
        t = data.t[mask] - data.t[mask][0]
        paths.append(write_joint_state_bag(
            folder / f"{name}.mcap", names, t, np.c_[data.q[mask], pad],
            np.c_[data.qd[mask], pad], np.c_[data.tau[mask], pad]))
    return paths[0], paths[1]


#: The live estimators' goals on this recording (docs/estimation.md).
PRE_GRASP_MASS = 0.2     # [kg] |m| before the grasp
AFTER_3S_MASS = 0.15     # [kg] |m − 1| 3 s after the ramp's end
FINAL_MASS = 0.1         # [kg] |m − 1| at the end
FINAL_COM = 0.03         # [m] COM error at the end
FOLLOW = 0.5             # [s] after the ramp's end, |m − 1| ≤ 0.15 kg from then on
CHANGE_WINDOW = (GRASP, GRASP + 0.4)  # [s] every detected change falls in it


def live_metrics(out: dict) -> dict:
    """The goal quantities of one ``estimate --json`` output on the second half."""
    t, mass = np.array(out["t"]), np.array(out["mass"])
    end_of_ramp = GRASP + RAMP
    outside = np.flatnonzero((t >= end_of_ramp) & (np.abs(mass - LOAD_MASS) > AFTER_3S_MASS))
    if not outside.size:
        follow = 0.0
    elif outside[-1] + 1 < t.size:
        follow = float(t[outside[-1] + 1] - end_of_ramp)
    else:
        follow = float("inf")  # never back within 0.15 kg
    final = out["final"]
    return {
        "pre": float(np.abs(mass[t < GRASP]).max()),
        "at3": float(mass[np.argmin(np.abs(t - end_of_ramp - 3.0))]),
        "final": float(final["mass"]),
        "com_error": float(np.linalg.norm(np.array(final["com"]) - LOAD_COM)),
        "min_margin": float(min(out["margin"])),
        "follow": follow,
        "changes": int(out["changes"]),
        "change_times": [float(c) for c in out["change_times"]],
        "skipped": dict(out["skipped"]),
    }


def failed_goals(m: dict) -> list[str]:
    """The goals :func:`live_metrics` ``m`` misses (empty: all met)."""
    checks = {
        "pre-grasp mass": m["pre"] <= PRE_GRASP_MASS,
        "mass 3 s after": abs(m["at3"] - LOAD_MASS) <= AFTER_3S_MASS,
        "final mass": abs(m["final"] - LOAD_MASS) <= FINAL_MASS,
        "final COM": m["com_error"] <= FINAL_COM,
        "margin": m["min_margin"] >= 0.0,
        "follow": m["changes"] >= 1 and m["follow"] <= FOLLOW,
        "change times": all(CHANGE_WINDOW[0] <= c <= CHANGE_WINDOW[1]
                            for c in m["change_times"]),
        "skipped": not m["skipped"],
    }
    return [name for name, ok in checks.items() if not ok]
