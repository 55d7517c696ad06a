"""The seed study of docs/estimation.md (offline payload fit, `estimate --batch`).

Usage: python scripts/batch_payload_seeds.py FIRST LAST [IDENTIFY LOADED] [--no-reference]

For every seed FIRST…LAST: the recording of ``test/support/batch_case.py`` (perturbed
Panda, friction the model does not fully have, AR(1) 0.3–0.8 N·m noise, ``identify`` on
the unloaded IDENTIFY seconds, a 1 kg load in the next LOADED seconds; default the test's
40 s + 40 s), then the test's command (``estimate --batch`` with the unloaded part as
``--reference``). Prints one Markdown row per seed (mass, COM error, 95 % half-widths, how
many of the four intervals contain the truth) and the summary over the seeds. ≈ 15–40 s
of CPU per seed; run it under ``nice``.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))

from support.batch_case import (  # noqa: E402
    IDENTIFY,
    LINK,
    LOAD_COM,
    LOAD_MASS,
    LOADED,
    PANDA_LOCK,
    make_case,
)

from robot_tv_dynamics.cli import main as cli  # noqa: E402
from robot_tv_dynamics.paths import example_robot_urdf  # noqa: E402


def run_seed(seed: int, identify_seconds: float, loaded_seconds: float, reference: bool
             ) -> dict[str, object]:
    """One seed: the case, the fit, its errors and coverage."""
    with tempfile.TemporaryDirectory() as folder:
        case = make_case(str(example_robot_urdf()), Path(folder), seed, identify_seconds,
                         loaded_seconds)
        args = ["estimate", "--batch", "--urdf", str(case.identified_urdf), "--friction",
                str(case.friction_yaml), "--data", str(case.loaded_bag), "--link", LINK,
                "--payload-frame", LINK, "--json"]  # the truth is in the load's link frame
        if reference:
            args += ["--reference", str(case.unloaded_bag)]
        for joint in PANDA_LOCK:
            args += ["--lock", joint]
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            if cli(args) != 0:
                raise RuntimeError(f"seed {seed}: estimate --batch failed")
    data = json.loads(buffer.getvalue())
    com, interval = np.asarray(data["com"]), np.asarray(data["interval"]["com"])
    lo, hi = data["interval"]["mass"]
    inside = [bool(lo <= LOAD_MASS <= hi)] + [
        bool(a <= c <= b) for (a, b), c in zip(interval, LOAD_COM, strict=True)]
    return {"seed": seed, "mass": data["mass"], "com_error": (com - LOAD_COM).tolist(),
            "half_width": ((interval[:, 1] - interval[:, 0]) / 2).tolist(),
            "mass_half_width": (hi - lo) / 2, "inside": inside}


def main() -> None:
    """Run the seeds, print the table and the summary."""
    argv = [a for a in sys.argv[1:] if a != "--no-reference"]
    first, last = int(argv[0]), int(argv[1])
    identify_seconds = float(argv[2]) if len(argv) > 2 else IDENTIFY
    loaded_seconds = float(argv[3]) if len(argv) > 3 else LOADED
    reference = "--no-reference" not in sys.argv
    print(f"identify {identify_seconds:g} s, loaded {loaded_seconds:g} s, "
          f"reference {'yes' if reference else 'no'}")
    print("| seed | mass [kg] | COM error [mm] (x, y, z) | abs. | 95 % half-widths [mm] "
          "| intervals containing the truth |")
    print("|---|---|---|---|---|---|")
    rows = []
    for seed in range(first, last + 1):
        row = run_seed(seed, identify_seconds, loaded_seconds, reference)
        rows.append(row)
        e = 1e3 * np.asarray(row["com_error"])
        w = 1e3 * np.asarray(row["half_width"])
        print(f"| {seed} | {row['mass']:.3f} | ({e[0]:.1f}, {e[1]:.1f}, {e[2]:.1f}) | "
              f"{np.linalg.norm(e):.1f} | {w[0]:.1f}, {w[1]:.1f}, {w[2]:.1f} | "
              f"{sum(row['inside'])}/4 |", flush=True)
    errors = 1e3 * np.array([r["com_error"] for r in rows])
    norms = np.linalg.norm(errors, axis=1)
    mass = np.array([r["mass"] for r in rows])
    inside = np.array([r["inside"] for r in rows])
    print(f"\n{len(rows)} seeds: max |m − 1| {100 * np.abs(mass - LOAD_MASS).max():.2f} %, "
          f"max COM error {norms.max():.1f} mm, {int((norms > 10).sum())} above 10 mm, "
          f"RMS COM error per axis {np.sqrt((errors ** 2).mean(axis=0)).round(1).tolist()} mm; "
          f"intervals containing the truth {int(inside.sum())}/{inside.size} "
          f"({100 * inside.mean():.1f} %: mass {100 * inside[:, 0].mean():.0f} %, COM "
          f"{100 * inside[:, 1:].mean():.1f} %), all four on {int(inside.all(axis=1).sum())} "
          f"of {len(rows)} seeds")


if __name__ == "__main__":
    main()
