"""The ``observer_noise`` fragment of ``scripts/docs_numbers.py``.

The momentum observer's noise floor σ_r per gain, empty and loaded
(``observer.tuning.residual_noise_std``, docs/observer.md). Deterministic: the test
recomputes it.
"""

from __future__ import annotations

from typing import Any

from .common import Fragment, example_urdf, stamp

#: The configuration and noise of docs/observer.md's noise-floor table (Panda, fingers
#: locked): q [rad], h [s], σ_q̇ [rad/s], σ_τ [N·m], the gains K_O [1/s], the joints shown.
OBSERVER_NOISE_CASE = {"q": [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8], "dt": 1e-3,
                       "velocity_noise_std": 1e-3, "torque_noise_std": 0.02,
                       "gains": [10.0, 50.0, 200.0], "joints": 4,
                       "load": {"link": "panda_hand", "mass": 2.0, "com": [0.0, 0.0, 0.1]}}
#: What the agreement test allows on σ_r [N·m] (absolute; the table prints 3 decimals).
OBSERVER_NOISE_TOLERANCE = 5e-4


def observer_noise_table(case: dict[str, Any] = OBSERVER_NOISE_CASE) -> dict[str, Any]:
    """σ_r per gain and joint, empty and with the load (``observer.tuning.residual_noise_std``)."""
    import numpy as np

    from robot_tv_dynamics import RobotModel
    from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
    from robot_tv_dynamics.observer.tuning import residual_noise_std

    model = RobotModel.from_urdf(example_urdf(), ["panda_finger_joint1", "panda_finger_joint2"])
    q = np.array(case["q"])
    load = case["load"]
    extra = phi_from_mass_com_inertia(load["mass"], np.array(load["com"]), np.zeros((3, 3)))
    thetas = {"empty": model.theta_nominal,
              "loaded": model.theta_with_link_inertia(
                  model.theta_nominal, load["link"], model.urdf_link_phi(load["link"]) + extra)}
    sigma = {}
    for name, theta in thetas.items():
        mass = model.mass_matrix(q, theta)
        sigma[name] = [residual_noise_std(mass, gain, case["dt"], case["velocity_noise_std"],
                                          case["torque_noise_std"])[:case["joints"]].tolist()
                       for gain in case["gains"]]
    return sigma


def run_observer_noise() -> dict[str, Any]:
    """The noise-floor table of docs/observer.md."""
    return {"case": OBSERVER_NOISE_CASE, "sigma": observer_noise_table(),
            "tolerance": OBSERVER_NOISE_TOLERANCE}


def render_observer_noise(data: dict[str, Any], info: dict[str, Any]) -> str:
    """σ_r of joints 1–n per gain, empty and loaded, and the stamp."""
    case, sigma = data["case"], data["sigma"]
    load, n = case["load"], case["joints"]
    com = ", ".join(f"{c:g}" for c in load["com"])
    lines = [f"| K_O [1/s] | σ_r joints 1–{n}, empty [N·m] | σ_r joints 1–{n}, "
             f"{load['mass']:g} kg on the hand [N·m] |", "|---|---|---|"]
    for k, gain in enumerate(case["gains"]):
        lines.append(f"| {gain:g} | " + " | ".join(
            " ".join(f"{v:.3f}" for v in sigma[name][k]) for name in ("empty", "loaded"))
            + " |")
    lines += ["", f"The load: a {load['mass']:g} kg point mass at ({com}) m in "
              f"`{load['link']}`. " + stamp(info, "python scripts/docs_numbers.py "
                                                  "observer_noise")
              + " `test/test_docs_numbers.py` recomputes the table and requires every "
              f"σ_r within {data['tolerance']:g} N·m, the velocity part growing with K_O "
              "and the loaded arm's floor above the empty one's; "
              "`test/observer/test_observer_simulated.py` checks the formula against a "
              "Monte Carlo run of the observer."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("observer_noise", run_observer_noise, render_observer_noise),)
