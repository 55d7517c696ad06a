"""The long runs of docs/adaptive.md: each law × excitation on the classical plant, Θ constant.

Usage: python scripts/adaptive_long_runs.py ARM DURATION OUT.json [LAW ...] (ARM panda|ur5;
ADAPT_EXCITATIONS=poor for one excitation only).
The truth is the URDF's Θ perturbed (mass ±30 %, inertia ±30 %, COM ±2 cm, seed 0); every
law starts from the URDF's Θ. CPU-heavy (≈ 5–8 s of wall time per simulated second).
"""

from __future__ import annotations

import json
import os
import sys

from robot_tv_dynamics.control import run_adaptive
from robot_tv_dynamics.control.setups import EXCITATIONS, arm_setup, make_controller


def main() -> None:
    """Run and write the summaries as JSON."""
    arm, duration, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    laws = sys.argv[4:] or ["slotine-li", "natural", "projected"]
    results = []
    chosen = os.environ.get("ADAPT_EXCITATIONS", ",".join(EXCITATIONS)).split(",")
    for excitation in chosen:
        for law in laws:
            model, truth, reference = arm_setup(arm, excitation)
            controller = make_controller(law, model, model.theta_nominal, gain=10.0)
            run = run_adaptive(model, controller, reference, truth, duration=duration,
                               record_every=50)
            results.append({"arm": arm, "excitation": excitation, "controller": law,
                            **run.summary()})
            with open(out, "w", encoding="utf-8") as handle:
                json.dump(results, handle, indent=1)
            print(arm, excitation, law, "done", flush=True)


if __name__ == "__main__":
    main()
