"""The ``generalized_fill`` fragment of ``scripts/docs_numbers.py``.

The classical vs the generalized measurement and the live estimates on the simulated fill
of test/support/generalized_fill.py, which test/estimation/test_generalized.py asserts on
(docs/estimation.md). Seeded: test/test_docs_numbers.py re-runs the measurement and one
live method.
"""

from __future__ import annotations

from typing import Any

from .common import Fragment, example_urdf, stamp, test_support

#: What the agreement test allows on the mass errors [kg] (absolute): seeded, so only
#: round-off and solver tolerances move them.
GENERALIZED_FILL_TOLERANCE = 2e-4
#: The live estimators the page quotes; the agreement test re-runs the first.
GENERALIZED_FILL_METHODS = ("geometric", "projected")


def generalized_fill_module() -> Any:
    """``test/support/generalized_fill.py``: the simulated fill and what it measures."""
    return test_support("generalized_fill")


def generalized_fill_numbers(methods: tuple[str, ...] = GENERALIZED_FILL_METHODS
                             ) -> dict[str, Any]:
    """Mean and max |mass error| during the fill: the measurement alone, each live method."""
    import numpy as np

    from robot_tv_dynamics import RobotModel

    module = generalized_fill_module()
    panda = RobotModel.from_urdf(example_urdf())

    def stats(errors: Any) -> dict[str, float]:
        return {"mean": float(np.mean(errors)), "max": float(np.max(errors))}

    measured = {kind: stats(e) for kind, e in module.measurement_errors(panda).items()}
    live = {}
    for method in methods:
        errors, final = module.live_errors(panda, method)
        live[method] = {kind: {**stats(e), "final": final[kind]} for kind, e in errors.items()}
    return {"measurement": measured, "live": live}


def run_generalized_fill() -> dict[str, Any]:
    """The fill of test/support/generalized_fill.py, both rows, every live method."""
    return {**generalized_fill_numbers(), "tolerance": GENERALIZED_FILL_TOLERANCE}


def render_generalized_fill(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One row per estimate: the mass error with the classical and with the generalized rows."""
    def cell(record: dict[str, float]) -> str:
        return f"{record['mean']:.4f} kg ({record['max']:.4f} kg)"

    lines = ["| mass error during loading: mean (max) | classical rows | generalized rows |",
             "|---|---|---|",
             "| the measurement alone (0.1 s least-squares windows, true q̈) | "
             + " | ".join(cell(data["measurement"][k]) for k in ("classical", "generalized"))
             + " |"]
    for method, record in data["live"].items():
        lines.append(f"| live {method} estimate (memory 0.5 s; final mass) | " + " | ".join(
            f"{cell(record[k])}; {record[k]['final']:.3f} kg"
            for k in ("classical", "generalized")) + " |")
    first = next(iter(data["live"]))
    lines += ["", stamp(info, "python scripts/docs_numbers.py generalized_fill") + " Seeded "
              "noise, so `test/test_docs_numbers.py` re-runs the measurement and the live "
              f"{first} estimate and requires these errors within "
              f"{data['tolerance']:g} kg; `test/estimation/test_generalized.py` asserts "
              "the generalized measurement's max below 0.01 kg, the classical one's mean "
              "above 5× the generalized one's, and both live estimates within 0.05 kg of "
              "the filled load at the end."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("generalized_fill", run_generalized_fill,
                       render_generalized_fill),)
