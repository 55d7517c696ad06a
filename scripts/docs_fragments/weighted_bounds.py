"""The ``weighted_bounds`` fragment of ``scripts/docs_numbers.py``.

The paper's, the scalar-weighted, the COM-block-weighted and the sampled true extremes of
M(q, Θ) over the joint box, nominal Θ, UR5 and Panda (fingers free and locked;
docs/concepts.md). Deterministic (seeded Sobol points and local refinement): the test re-
runs it.
"""

from __future__ import annotations

import time
from typing import Any

from .common import UR5, Fragment, example_urdf, stamp

#: The arms of the weighted-bounds table: label, URDF (:func:`example_urdf`), locked joints.
WEIGHTED_ARMS = (
    ("UR5", UR5, {}),
    ("Panda, fingers free", "", {}),
    ("Panda, fingers locked", "", {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
)
#: Sobol points of each sampled search (plus its local refinement), and the seed.
WEIGHTED_SAMPLES = 2048
#: What the agreement test allows on every value (relative): the searches are seeded.
WEIGHTED_TOLERANCE = 1e-6


def weighted_row(urdf: str, locked: dict[str, float]) -> dict[str, Any]:
    """One arm's sampled paper α₁/α₂, scalar and COM-block weighted, and true extremes."""
    import numpy as np

    from robot_tv_dynamics import RobotModel, bounds
    from robot_tv_dynamics.bounds.mass import exact_mass_extremes, gram_extremes
    from robot_tv_dynamics.bounds.weights import (
        com_block_lower,
        com_block_upper,
        scalar_weights,
        spatial_inertia_extremes,
    )

    model = RobotModel.from_urdf(example_urdf(urdf), locked_joints=locked or None)
    search = {"samples": WEIGHTED_SAMPLES, "seed": 0, "time_limit": 600.0}
    start = time.monotonic()
    extremes = bounds.jacobian_extremes(model, bounds.SAMPLED, **search)
    paper = bounds.bounds_report(model, extremes).bounds
    theta = model.theta_nominal
    zmin, zmax = spatial_inertia_extremes(theta)

    def low(weights: Any, label: str) -> float:
        return gram_extremes(model, weights, label, bounds.SAMPLED, **search
                             ).lambda_min_bracket[1]

    def high(weights: Any, label: str) -> float:
        return gram_extremes(model, weights, label, bounds.SAMPLED, **search
                             ).lambda_max_bracket[0]

    exact = exact_mass_extremes(model, theta, bounds.SAMPLED, **search)
    return {
        "paper_alpha1": paper.alpha1_estimate, "paper_alpha2": paper.alpha2_estimate,
        "scalar_alpha1": low(scalar_weights(np.maximum(zmin, 0.0) * (1 - 1e-9)), "scalar"),
        "scalar_alpha2": high(scalar_weights(zmax * (1 + 1e-9)), "scalar"),
        "block_alpha1": low(com_block_lower(theta), "com block"),
        "block_alpha2": high(com_block_upper(theta), "com block"),
        "true_alpha1": exact.lambda_min_bracket[1], "true_alpha2": exact.lambda_max_bracket[0],
        "elapsed_s": time.monotonic() - start,
    }


def run_weighted_bounds() -> dict[str, Any]:
    """The weighted-bounds table of docs/concepts.md, one row per arm."""
    return {"rows": {label: weighted_row(name, locked) for label, name, locked in WEIGHTED_ARMS},
            "samples": WEIGHTED_SAMPLES, "tolerance": WEIGHTED_TOLERANCE}


def sci(value: float, digits: int = 3) -> str:
    """``digits`` significant digits, powers of ten as the docs write them (4.39·10⁻³)."""
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    power = int(exponent)
    if -1 <= power <= 2:
        return f"{value:#.{digits}g}".rstrip(".")
    digits = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"{mantissa}·10{str(power).translate(digits)}"


def ratio_text(value: float) -> str:
    """A ratio: 3 decimals near 1, powers of ten far from it."""
    return f"{value:.3f}" if 0.01 <= value < 100 else sci(value)


def render_weighted_bounds(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The paper / scalar / COM block / true table with the ratios, and the stamp."""
    lines = ["| arm | side | paper | scalar weighted | COM block weighted | sampled true | "
             "scalar / true | block / true | block / paper |",
             "|---|---|---|---|---|---|---|---|---|"]
    for label, row in data["rows"].items():
        for side, key in (("α₁ (inf λ_min)", "alpha1"), ("α₂ (sup λ_max)", "alpha2")):
            paper, scalar = row[f"paper_{key}"], row[f"scalar_{key}"]
            block, true = row[f"block_{key}"], row[f"true_{key}"]
            lines.append(f"| {label} | {side} | {sci(paper)} | {sci(scalar)} | "
                         f"{sci(block)} | {sci(true)} | {ratio_text(scalar / true)} | "
                         f"{ratio_text(block / true)} | {sci(block / paper)} |")
    lines += ["", stamp(info, "python scripts/docs_numbers.py weighted_bounds") + " Nominal "
              f"URDF Θ; every column is a sampled search over the joint box ({data['samples']}"
              " scrambled Sobol points, seed 0, plus local refinement): the smallest λ_min "
              "and the largest λ_max found, estimates of the infimum and supremum, not "
              "bounds (the paper's column uses the sampled γ̂, δ̂: min μ · γ̂ and 2 max ν · δ̂). "
              "`test/test_docs_numbers.py` re-runs the searches and requires every value "
              f"within {data['tolerance']:g} (relative)."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("weighted_bounds", run_weighted_bounds, render_weighted_bounds),)
