"""The live estimators on a real Panda's recording, where it is beside the repository.

The recording (a real Franka Emika Panda's exciting trajectory, nothing on the flange) is
not part of the repository: it is read from ``../shared/data/`` next to the repository's
root when present (CI has it there); elsewhere this test has nothing to run on.
``benchmarks/bench_real_payload.py`` is the measurement (docs/estimation.md quotes it).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RECORDING = REPO.parent / "shared" / "data" / "panda_exciting_traj.npz"


def _benchmark():
    spec = importlib.util.spec_from_file_location(
        "bench_real_payload", REPO / "benchmarks" / "bench_real_payload.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not RECORDING.is_file(), reason=f"no real recording at {RECORDING}")
def test_no_method_sees_a_load_change_or_a_phantom_load_on_the_real_arm():
    result = _benchmark().run(RECORDING)
    for method, row in result["rows"].items():
        assert row["changes"] == 0, (method, row)
        assert row["worst_mass"] <= 0.1, (method, row)
        assert not row["skipped"], (method, row)
