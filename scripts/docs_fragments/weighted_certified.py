"""The ``weighted_certified`` fragment of ``scripts/docs_numbers.py``.

``bounds --certified --time-limit 30 --json`` on the same three arms (docs/concepts.md):
certified brackets of the weighted and exact extremes. Budgeted by wall time on a shared
machine, so dated and stamped, not re-run by a test.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .common import Fragment, example_urdf, stamp
from .weighted_bounds import WEIGHTED_ARMS, ratio_text, sci

#: The certified table's budget per search [s].
CERTIFIED_TIME_LIMIT = 30.0


def certified_row(urdf: str, locked: dict[str, float]) -> dict[str, Any]:
    """``bounds --certified --json`` on one arm: the brackets the certified table quotes."""
    import contextlib
    import io

    from robot_tv_dynamics.cli import main as cli

    argv = ["bounds", "--urdf", example_urdf(urdf), "--certified", "--time-limit",
            f"{CERTIFIED_TIME_LIMIT:g}", "--json", "--cache-dir", "", "--no-progress"]
    for joint, position in locked.items():
        argv += ["--lock", f"{joint}={position:g}"]
    printed = io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(printed):
        code = cli(argv)
    if code != 0:
        raise RuntimeError(f"bounds {urdf or 'panda'}: exit {code}")
    mmb = json.loads(printed.getvalue())["mass_matrix_bounds"]
    weighted, exact = mmb["weighted"], mmb["exact"]
    return {
        "paper_alpha1": mmb["alpha1"], "paper_alpha2": mmb["alpha2"],
        "alpha1": weighted["alpha1"], "alpha2": weighted["alpha2"],
        "lower_weights": weighted["lower"]["weights"],
        "upper_weights": weighted["upper"]["weights"],
        "lower_bracket": weighted["lower"]["lambda_min_bracket"],
        "upper_bracket": weighted["upper"]["lambda_max_bracket"],
        "lower_s": weighted["lower"]["elapsed_s"], "upper_s": weighted["upper"]["elapsed_s"],
        "exact_min": exact["lambda_min_bracket"], "exact_max": exact["lambda_max_bracket"],
        "exact_s": exact["elapsed_s"], "exact_boxes": exact["boxes"],
        "wall_s": time.monotonic() - start,
    }


def run_weighted_certified() -> dict[str, Any]:
    """The certified table of docs/concepts.md, one ``bounds --certified`` run per arm."""
    return {"rows": {label: certified_row(urdf, locked)
                     for label, urdf, locked in WEIGHTED_ARMS},
            "time_limit": CERTIFIED_TIME_LIMIT}


def render_weighted_certified(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The certified brackets: paper, weighted (COM block), exact, with the ratios."""
    lines = ["| arm | paper α₁ / α₂ | certified α₁ʷ (weights; its λ_min bracket, time) | "
             "exact inf λ_min(M) bracket (time) | α₁ʷ / paper α₁ | α₁ʷ / exact bracket | "
             "certified α₂ʷ (its λ_max bracket, time) | exact sup λ_max(M) bracket |",
             "|---|---|---|---|---|---|---|---|"]
    for label, row in data["rows"].items():
        lo, hi = row["lower_bracket"]
        mlo, mhi = row["exact_min"]
        ulo, uhi = row["upper_bracket"]
        xlo, xhi = row["exact_max"]
        lines.append(
            f"| {label} | {sci(row['paper_alpha1'])} / {sci(row['paper_alpha2'])} | "
            f"{sci(row['alpha1'])} ({row['lower_weights']}; [{sci(lo)}, {sci(hi)}], "
            f"{row['lower_s']:.0f} s) | [{sci(mlo)}, {sci(mhi)}] ({row['exact_s']:.0f} s, "
            f"{row['exact_boxes']} boxes) | {sci(row['alpha1'] / row['paper_alpha1'])} | "
            f"{ratio_text(row['alpha1'] / mlo)} – {ratio_text(row['alpha1'] / mhi)} | "
            f"{sci(row['alpha2'], 4)} ([{sci(ulo, 4)}, {sci(uhi, 4)}], "
            f"{row['upper_s']:.0f} s) | [{sci(xlo, 4)}, {sci(xhi, 4)}] |")
    lines += ["", stamp(info, "python scripts/docs_numbers.py weighted_certified") + " Each "
              f"search up to {data['time_limit']:g} s, serial; nominal URDF Θ. Every entry is "
              "a bound; α₁ʷ / exact bracket is against the exact bracket's lower and upper "
              "end. The budget is wall time on a shared machine: not re-run by a test."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("weighted_certified", run_weighted_certified,
                       render_weighted_certified),)
