"""The ``realistic_terms`` fragment of ``scripts/docs_numbers.py``.

Three of those seeds again with one model-error term left out at a time (which term a goal
is missed by).
"""

from __future__ import annotations

from typing import Any

from .common import Fragment, stamp
from .realistic_seeds import REALISTIC_DECIMATION, realistic_module

#: Which term of the realistic model error a goal is missed by: the study's seeds with
#: the two largest COM misses (4, 9) and its lightest load (18), classical, each term left
#: out in turn, then all of them.
REALISTIC_TERMS_SEEDS = (4, 9, 18)


def run_realistic_terms() -> dict[str, Any]:
    """The realistic seeds again, one model-error term left out at a time (classical)."""
    study = realistic_module()
    terms = list(study.R.TERMS)
    rows = []
    for seed in REALISTIC_TERMS_SEEDS:
        for without in [[], *([term] for term in terms), terms]:
            m = study.run_seed(seed, REALISTIC_DECIMATION, without=tuple(without),
                               methods=("classical",))["classical"]
            rows.append({"seed": seed, "without": without, **m,
                         "missed": study.R.failed_goals(m)})
    return {"decimation": REALISTIC_DECIMATION, "terms": terms, "rows": rows}


def render_realistic_terms(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One row per seed and term left out."""
    lines = ["| seed (load) | left out | declared after (grasp, release) | false changes at "
             "| max \\|m̂ − m\\| from 1.5 s (loaded, released) | COM error before the "
             "release | goals missed |", "|---|---|---|---|---|---|---|"]
    for row in data["rows"]:
        without = row["without"]
        left = ("nothing" if not without else "all" if without == data["terms"]
                else without[0])
        delays = ", ".join("—" if d is None else f"{d:.2f} s" for d in row["delays"])
        lines.append(
            f"| {row['seed']} ({row['truth']['mass']:.2f} kg) | {left} | {delays} | "
            f"{', '.join(f'{t:.2f} s' for t in row['false']) or '—'} | "
            f"{row['mass_errors'][0]:.3f}, {row['mass_errors'][1]:.3f} kg | "
            f"{1e3 * row['com_error']:.1f} mm | {', '.join(row['missed']) or '—'} |")
    lines += ["", "Terms: noise (AR(1) with spikes), acceleration (the residual ∝ inertial "
              "torque), lugre (Stribeck + hysteresis; left out, identify's Coulomb model "
              "takes its place), drift (the offset's random walk), elasticity, stop (the "
              "hard stop). " + stamp(info, "python scripts/docs_numbers.py realistic_terms")
              + " Each row is `realistic_seeds.run_seed(SEED, "
              f"{data['decimation']}, without=TERMS, methods=(\"classical\",))`."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("realistic_terms", run_realistic_terms, render_realistic_terms),)
