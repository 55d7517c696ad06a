"""The ``batch_seeds`` fragment of ``scripts/docs_numbers.py``.

The seed studies of ``estimate --batch`` (``scripts/ batch_payload_seeds.py``,
docs/estimation.md; ≈ 30 min of CPU). Seeded: the test re-runs one seed.
"""

from __future__ import annotations

from typing import Any

from .common import Fragment, import_from, stamp

#: The seed studies of docs/estimation.md's offline fit: (label, seeds, identify [s],
#: loaded [s]), each seed one ``scripts/batch_payload_seeds.py`` row.
BATCH_STUDIES = (("**40 s + 40 s (the test's length)**", (1, 20), 40.0, 40.0),
                 ("40 s + 40 s (the test's seeds)", (101, 103), 40.0, 40.0),
                 ("8 s + 16 s (shorter)", (1, 40), 8.0, 16.0))
#: What the agreement test allows on one re-run seed: mass [kg], COM [m] (absolute).
BATCH_TOLERANCE = {"mass": 2e-3, "com": 5e-4, "half_width": 5e-4}
#: The seed the agreement test re-runs (of the first study).
BATCH_CHECK_SEED = 1


def batch_seeds_module() -> Any:
    """``scripts/batch_payload_seeds.py`` (its ``run_seed`` and the recording's constants)."""
    return import_from("scripts", "batch_payload_seeds")


def batch_seed_row(seed: int, identify_s: float, loaded_s: float) -> dict[str, Any]:
    """One seed's fit: mass, COM error, 95 % half-widths, which intervals hold the truth."""
    return dict(batch_seeds_module().run_seed(seed, identify_s, loaded_s, True))


def run_batch_seeds() -> dict[str, Any]:
    """Every seed of every study (≈ 15–40 s of CPU per 40 s + 40 s seed)."""
    module = batch_seeds_module()
    studies = []
    for label, (first, last), identify_s, loaded_s in BATCH_STUDIES:
        rows = []
        for seed in range(first, last + 1):
            print(f"  {label}: seed {seed}", flush=True)
            rows.append(dict(module.run_seed(seed, identify_s, loaded_s, True)))
        studies.append({"label": label, "seeds": [first, last], "identify_s": identify_s,
                        "loaded_s": loaded_s, "rows": rows})
    return {"studies": studies, "blocks": 20, "tolerance": BATCH_TOLERANCE,
            "check_seed": BATCH_CHECK_SEED}


def batch_summary(rows: list[dict[str, Any]], blocks: int) -> dict[str, Any]:
    """A study's summary: errors [mm], σ (the 95 % half-width over its t quantile), z-scores."""
    import numpy as np
    import scipy.stats

    quantile = float(scipy.stats.t.ppf(0.975, blocks - 1))
    error = 1e3 * np.array([r["com_error"] for r in rows])
    sigma = 1e3 * np.array([r["half_width"] for r in rows]) / quantile
    mass = np.array([r["mass"] for r in rows])
    mass_sigma = np.array([r["mass_half_width"] for r in rows]) / quantile
    inside = np.array([r["inside"] for r in rows], dtype=bool)
    norms = np.linalg.norm(error, axis=1)
    z = np.column_stack([error / sigma, (mass - 1.0) / mass_sigma])
    return {"n": len(rows), "max_mass_error": float(np.abs(mass - 1.0).max()),
            "max_com_error": float(norms.max()),
            "above_1cm": [r["seed"] for r, e in zip(rows, norms, strict=True) if e > 10.0],
            "rms": np.sqrt((error ** 2).mean(axis=0)).tolist(),
            "mean_sigma": sigma.mean(axis=0).tolist(), "inside": int(inside.sum()),
            "inside_mass": int(inside[:, 0].sum()), "inside_com": int(inside[:, 1:].sum()),
            "all_four": int(inside.all(axis=1).sum()),
            "misses": [{"seed": r["seed"], "z": float(zk[np.argmax(np.abs(zk[:3]))])}
                       for r, ok, zk in zip(rows, inside.all(axis=1), z, strict=True)
                       if not ok],
            "z_std": z.std(axis=0, ddof=1).tolist(), "quantile": quantile}


def render_batch_seeds(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The seed studies' table, the first study's seeds one by one, the z-scores, the stamp."""
    def mm(values: list[float]) -> str:
        return ", ".join(f"{v:.1f}".replace("-", "−") for v in values)

    lines = ["| recording | seeds | max \\|m − 1\\| | max COM error | seeds > 1 cm | RMS COM "
             "error [mm] | mean σ_c [mm] | intervals containing the truth | all four on |",
             "|---|---|---|---|---|---|---|---|---|"]
    summaries = []
    for study in data["studies"]:
        s = batch_summary(study["rows"], data["blocks"])
        summaries.append(s)
        first, last = study["seeds"]
        above = f"{len(s['above_1cm'])}" + (
            f" (seeds {', '.join(map(str, s['above_1cm']))})" if s["above_1cm"] else "")
        misses = "; ".join(f"seed {m['seed']}: z-score " + f"{m['z']:+.2f}".replace("-", "−")
                           for m in s["misses"])
        lines.append(
            f"| {study['label']} | {first}–{last} | {100 * s['max_mass_error']:.1f} % | "
            f"{s['max_com_error']:.1f} mm | {above} | {mm(s['rms'])} | {mm(s['mean_sigma'])} "
            f"| {s['inside']}/{4 * s['n']} = {100 * s['inside'] / (4 * s['n']):.1f} % (mass "
            f"{s['inside_mass']}/{s['n']}, COM {s['inside_com']}/{3 * s['n']}) | "
            f"{s['all_four']}/{s['n']} seeds" + (f" ({misses})" if misses else "") + " |")
    main = data["studies"][0]
    seeds = [f"{r['seed']} ({mm([1e3 * e for e in r['com_error']])})" for r in main["rows"]]
    first, last = main["seeds"]
    lines += ["", f"Per seed, {main['identify_s']:g} s + {main['loaded_s']:g} s, seeds "
              f"{first}–{last} (COM error [mm]): " + "; ".join(seeds) + ".", ""]
    z = "; ".join(f"{study['identify_s']:g} s + {study['loaded_s']:g} s, seeds "
                  f"{study['seeds'][0]}–{study['seeds'][1]}: "
                  f"{', '.join(f'{v:.2f}' for v in s['z_std'][:3])} "
                  f"(mass {s['z_std'][3]:.2f})"
                  for study, s in zip(data["studies"], summaries, strict=True) if s["n"] >= 10)
    lines += [f"Standard deviations of the errors' z-scores against the intervals' σ (COM x, "
              f"y, z): {z}. σ is the 95 % half-width over the t quantile "
              f"{summaries[0]['quantile']:.3f} ({data['blocks'] - 1} degrees of freedom).", "",
              stamp(info, "python scripts/docs_numbers.py batch_seeds") + " Each row is "
              "one `scripts/batch_payload_seeds.py` seed (its recording, `identify`, "
              "`estimate --batch` with the unloaded part as `--reference`). Seeded, so "
              f"`test/test_docs_numbers.py` re-runs seed {data['check_seed']} of the first "
              f"study and requires its mass within {data['tolerance']['mass']:g} kg and its "
              f"COM error and half-widths within {1e3 * data['tolerance']['com']:g} mm; "
              "`test/estimation/test_batch_estimate.py` asserts the goals on seeds "
              "101–103."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("batch_seeds", run_batch_seeds, render_batch_seeds),)
