"""The ``real_payload`` fragment of ``scripts/docs_numbers.py``.

``benchmarks/bench_real_payload.py`` on the real Panda recording beside the repository
(``../shared/data/panda_exciting_traj.npz``; docs/estimation.md): identify on its first
half, the live estimators on its second, no load. Deterministic;
test/estimation/test_real_recording.py asserts the goals where the recording is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from .common import REPO, Fragment, import_from, stamp

#: The real recording, relative to the repository's root (never copied into it).
REAL_RECORDING = "../shared/data/panda_exciting_traj.npz"


def real_payload_module() -> Any:
    """benchmarks/bench_real_payload.py."""
    return import_from("benchmarks", "bench_real_payload")


def run_real_payload() -> dict[str, Any]:
    """The benchmark's result on the real recording (≈ 1 min)."""
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_real_payload.py", REAL_RECORDING, "--json"],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=3600)
    return dict(json.loads(result.stdout))


def render_real_payload(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The benchmark's table, the identification's fit, and the stamp."""
    fit = ", ".join(f"{v:g}" for v in data["fit_rms"].values())
    hold = ", ".join(f"{v:g}" for v in data["holdout_rms"].values())
    lines = [real_payload_module().table(data), "",
             f"{data['samples']} samples over {data['duration_s']:g} s; `identify` on the "
             f"first {data['split_s']:g} s (fit RMS per joint {fit} N·m; held-out "
             f"{hold} N·m), `estimate --model` on the rest, every sample updating. "
             + stamp(info, "python scripts/docs_numbers.py real_payload") + " It runs "
             f"`python benchmarks/bench_real_payload.py {REAL_RECORDING}`; "
             "`test/estimation/test_real_recording.py` asserts 0 changes and |m̂| ≤ 0.1 kg "
             "where the recording is."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("real_payload", run_real_payload, render_real_payload),)
