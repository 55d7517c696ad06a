"""The ``realistic_seeds`` fragment of ``scripts/docs_numbers.py``.

The 20-seed study of the live estimators on realistic recordings
(``scripts/realistic_seeds.py``, docs/estimation.md); the test re-runs one seed.
"""

from __future__ import annotations

from typing import Any

from .common import Fragment, import_from, stamp

#: The seed study of docs/estimation.md: seeds, the updates' decimation (the test's), and
#: the seed the agreement test re-runs (the one that misses a goal).
REALISTIC_SEEDS = (1, 20)
REALISTIC_DECIMATION = 4
REALISTIC_CHECK_SEED = 2
#: How close a fresh run of a kept seed must come (seeded data; the solvers are the same
#: code: a fresh run on the same machine reproduced every number exactly).
REALISTIC_TOLERANCE = {"mass": 0.002, "com_error": 0.0005, "change_times": 0.005}


def realistic_module() -> Any:
    """scripts/realistic_seeds.py (and through it test/support/realistic.py)."""
    return import_from("scripts", "realistic_seeds")


def realistic_seed(seed: int) -> dict[str, dict[str, Any]]:
    """One seed of the study: method → its goal quantities and the goals it misses."""
    study = realistic_module()
    rows = study.run_seed(seed, REALISTIC_DECIMATION)
    return {method: {**m, "missed": study.R.failed_goals(m)} for method, m in rows.items()}


def run_realistic_seeds() -> dict[str, Any]:
    """Seeds 1–20 of ``realistic.generate_real``, three methods each (≈ 20 CPU s per seed)."""
    first, last = REALISTIC_SEEDS
    return {"decimation": REALISTIC_DECIMATION, "check_seed": REALISTIC_CHECK_SEED,
            "tolerance": REALISTIC_TOLERANCE,
            "seeds": {str(seed): realistic_seed(seed) for seed in range(first, last + 1)}}


def realistic_summary(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per method, over the seeds: false changes, delays, worst errors, the seeds' misses."""
    import numpy as np

    methods = list(next(iter(data["seeds"].values())))
    summary = {}
    for method in methods:
        runs = {int(seed): rows[method] for seed, rows in data["seeds"].items()}
        delays = [[m["delays"][i] for m in runs.values()] for i in range(2)]
        found = [[d for d in column if d is not None] for column in delays]
        summary[method] = {
            "n": len(runs), "met": sum(not m["missed"] for m in runs.values()),
            "false": [(seed, t) for seed, m in sorted(runs.items()) for t in m["false"]],
            "detected": [len(column) for column in found],
            "delay_max": [max(column) if column else None for column in found],
            "delay_median": [float(np.median(column)) if column else None
                             for column in found],
            "mass_error": [max(m["mass_errors"][i] for m in runs.values()) for i in range(2)],
            "mass_ratio": [max(m["mass_ratios"][i] for m in runs.values()) for i in range(2)],
            "com_error": max(m["com_error"] for m in runs.values()),
            "pre": max(m["pre"] for m in runs.values()),
            "min_margin": min(m["min_margin"] for m in runs.values()),
            "withdrawn": sum(m["withdrawn"] for m in runs.values()),
            "continued": sum(m["continued"] for m in runs.values()),
            "skipped": sum(bool(m["skipped"]) for m in runs.values()),
            "missed": [(seed, m["missed"]) for seed, m in sorted(runs.items()) if m["missed"]],
        }
    return summary


def _false_change(m: dict[str, Any], t: float) -> str:
    """A false change's time and where it fell: after which true change's start."""
    truth = m["truth"]
    starts = [(name, truth[name]) for name in ("grasp", "release") if truth[name] <= t]
    if not starts:
        return f"{t:.2f} s, before the grasp"
    name, start = starts[-1]
    return f"{t:.2f} s, {t - start:.2f} s after the {name}'s start"


def _goal_value(m: dict[str, Any], goal: str) -> str:
    """The quantity behind a missed goal of ``realistic.failed_goals``, with its unit."""
    names = ("grasp", "release")
    truth = m["truth"]
    if goal == "detection":
        return ", ".join(f"{names[i]} not declared within 0.3 s" for i, d in
                         enumerate(m["delays"]) if d is None)
    if goal == "false changes":
        return "at " + "; ".join(_false_change(m, t) for t in m["false"])
    if goal == "mass":
        bounds = (max(0.15, 0.3 * truth["mass"]), 0.15)
        return ", ".join(f"{names[i]}: {m['mass_errors'][i]:.3f} kg > {bounds[i]:.3f} kg"
                         for i in range(2) if m["mass_ratios"][i] > 1.0)
    if goal == "COM":
        return f"{1e3 * m['com_error']:.1f} mm"
    return ""


def render_realistic_seeds(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The per-method table against the goals, each miss, and the stamp."""
    import numpy as np

    from robot_tv_dynamics.estimation.change import ChangeDetectorConfig

    lines = ["| method | seeds meeting all goals | false changes, all runs (goal ≤ 1) | "
             "changes declared within 0.3 s (grasp, release) | delay median / max "
             "(grasp; release) | worst \\|m̂ − m\\| from 1.5 s, loaded (share of its bound) "
             "| worst \\|m̂\\| from 1.5 s after the release | worst COM error before the "
             "release (goal ≤ 10 mm) |", "|---|---|---|---|---|---|---|---|"]
    summary = realistic_summary(data)

    def delay(w: dict[str, Any], i: int) -> str:
        if w["delay_max"][i] is None:
            return "—"
        return f"{w['delay_median'][i]:.2f} / {w['delay_max'][i]:.2f} s"

    for method, w in summary.items():
        false = len(w["false"])
        where = (" (" + "; ".join(
            f"seed {seed} at {_false_change(data['seeds'][str(seed)][method], t)}"
            for seed, t in w["false"]) + ")" if w["false"] else "")
        lines.append(
            f"| {method} | {w['met']}/{w['n']} | {false}{where} | {w['detected'][0]}/{w['n']}, "
            f"{w['detected'][1]}/{w['n']} | {delay(w, 0)}; {delay(w, 1)} | "
            f"{w['mass_error'][0]:.3f} kg ({100 * w['mass_ratio'][0]:.0f} %) | "
            f"{w['mass_error'][1]:.3f} kg | {1e3 * w['com_error']:.1f} mm |")
    runs = data["seeds"]
    misses = [f"seed {seed}, {method}: " + ", ".join(
        f"{goal} ({_goal_value(runs[str(seed)][method], goal)})" for goal in missed)
        for method, w in summary.items() for seed, missed in w["missed"]]
    skipped = sum(w["skipped"] for w in summary.values())
    loads = [rows[next(iter(rows))]["truth"] for rows in runs.values()]
    masses = [truth["mass"] for truth in loads]
    off = [100 * float(np.hypot(*truth["com"][:2])) for truth in loads]
    lines += ["", "Goals missed: " + ("; ".join(misses) if misses else "none") + ". "
              f"Loads {min(masses):.2f}–{max(masses):.2f} kg, COM {min(off):.1f}–"
              f"{max(off):.1f} cm off the flange axis. Worst pre-grasp \\|m̂\\| (from "
              "1.5 s): " + ", ".join(f"{method} {w['pre']:.3f} kg"
                                    for method, w in summary.items())
              + "; declared changes withdrawn as unconfirmed: "
              + ", ".join(f"{method} {w['withdrawn']}" for method, w in summary.items())
              + "; confirmed changes that continued the one before them (within "
              f"{ChangeDetectorConfig().settle:g} s of its declaration; not counted as "
              "changes): "
              + ", ".join(f"{method} {w['continued']}" for method, w in summary.items())
              + "; smallest margin of any run: "
              + f"{min(w['min_margin'] for w in summary.values()):.3g} kg·m²; runs with "
              f"skipped updates: {skipped}.", "",
              stamp(info, "python scripts/docs_numbers.py realistic_seeds") + " Each seed is "
              "one `python scripts/realistic_seeds.py SEED SEED` (its recording, `identify`, "
              f"`estimate --model` per method, every {data['decimation']}th sample updating). "
              "Seeded: `test/test_docs_numbers.py` re-runs seed "
              f"{data['check_seed']} and requires its masses within "
              f"{data['tolerance']['mass']:g} kg, COM errors within "
              f"{1e3 * data['tolerance']['com_error']:g} mm and change times within "
              f"{data['tolerance']['change_times']:g} s of the kept ones."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("realistic_seeds", run_realistic_seeds, render_realistic_seeds),)
