"""The ``identification`` fragment of ``scripts/docs_numbers.py``.

The accuracy table of docs/identification.md: ``measure`` of the case in
test/support/identification_accuracy.py (seeded), which
test/identification/test_identification_accuracy.py runs and compares with the data.
"""

from __future__ import annotations

from typing import Any, Callable

from .common import Fragment, stamp, test_support

#: What the agreement test allows: held-out ratios (absolute), the rest relative, and
#: friction errors also absolute [N·m·s/rad, N·m] (they are small differences).
IDENTIFICATION_TOLERANCE = {"ratio": 5e-3, "relative": 0.05, "friction": 2e-3}


def run_identification() -> dict[str, Any]:
    """``measure`` of the identification-accuracy case (test/support) on both arms."""
    module = test_support("identification_accuracy")
    from support.particle_lagrangian import find_example_robot_urdf

    arms = {arm: module.measure(module.make_case(arm, find_example_robot_urdf(arm)))
            for arm in ("panda", "ur5")}
    return {"arms": arms, "tolerance": IDENTIFICATION_TOLERANCE}


def render_identification(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The accuracy table of both arms, and its stamp."""
    panda, ur5 = data["arms"]["panda"], data["arms"]["ur5"]
    tol = data["tolerance"]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> str:
        return f"| {label} | {cell(panda)} | {cell(ur5)} |"

    def percent(value: float) -> str:
        return f"{100 * value:.2g} %"

    def margins(arm: dict[str, Any]) -> str:
        low = sorted(arm["margins"])[:2]
        active = all(value < 1.01 * arm["epsilon"] for value in low)
        return ", ".join(f"{value:.5g}" for value in low) + (" (active)" if active else "")

    lines = [
        "| | Panda (fingers locked) | UR5 |", "|---|---|---|",
        row("held-out RMS / noise RMS, per joint", lambda a: f"{min(a['held_out_ratio']):.3f}"
            f" … {max(a['held_out_ratio']):.3f}"),
        row("relative torque error of Θ̂ vs Θ_true on held-out states",
            lambda a: percent(a["torque_error_held_out"])),
        row("… at 200 random states of the joint box (URDF prior in brackets)",
            lambda a: f"{percent(a['torque_error_random'])} "
                      f"({percent(a['prior_torque_error_random'])})"),
        row("relative error of Θ̂'s projection on the identifiable row space (SVD of the "
            "eq. (44) regressor; its rank; URDF prior in brackets)",
            lambda a: f"{percent(a['projection_error'])}; rank {a['rank']} "
                      f"({percent(a['prior_projection_error'])})"),
        row("max friction error viscous / Coulomb / offset [N·m·s/rad, N·m]",
            lambda a: " / ".join(f"{a['friction_error'][k]:.3f}"
                                 for k in ("viscous", "coulomb", "offset"))),
        row(f"λ_min(f(Φ_l)) identified, smallest two (ε = {panda['epsilon']:g})", margins),
        "",
        stamp(info, "python scripts/docs_numbers.py identification") + " Seeded "
        "simulation, so `test/identification/test_identification_accuracy.py` (the same "
        "run) requires these values: the held-out ratios within "
        f"{tol['ratio']:g}, the rank exactly, the rest within {100 * tol['relative']:g} % "
        f"(friction errors also within {tol['friction']:g} absolute).",
    ]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("identification", run_identification,
                       render_identification),)
