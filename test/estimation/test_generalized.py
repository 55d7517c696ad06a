"""A simulated fill: the classical measurement's bias during loading against the generalized one.

The hand's load grows from 0 to 1 kg in 1 s (its Φ scaled uniformly, Θ̇ = ṡ Φ_L) while the
arm follows an exciting motion; the efforts are eq. (39) with Θ̇ (``RobotModel.torque``)
plus white noise. The same estimator is fed the classical rows (M(q, Θ̇)q̇ missing) and
the generalized ones (Θ̇ given, as a planned fill would give it).
"""

from __future__ import annotations

import numpy as np
import pytest
from support.generalized_fill import MASS, live_errors, measurement_errors


def test_the_generalized_measurement_has_no_bias_during_loading(panda, capsys):
    errors = measurement_errors(panda)
    with capsys.disabled():
        for kind, e in errors.items():
            print(f"\n[fill] {kind} measurement, 0.1 s least-squares windows during loading: "
                  f"mass error mean {np.mean(e):.4f} kg, max {np.max(e):.4f} kg")
    assert np.max(errors["generalized"]) < 0.01  # noise only
    assert np.mean(errors["classical"]) > 5 * np.mean(errors["generalized"])


@pytest.mark.parametrize("method", ("geometric",))  # projected: the same, 4× the time
def test_the_live_estimate_during_loading_is_reported(panda, method, capsys):
    """Measured, not asserted better: the live estimate's lag dominates its error."""
    errors, final = live_errors(panda, method)
    for kind in errors:
        assert abs(final[kind] - MASS) < 0.05, kind  # both settle on the filled load
    with capsys.disabled():
        for kind, e in errors.items():
            print(f"\n[fill] {method} live, {kind} measurement: mass error during loading "
                  f"mean {e.mean():.4f} kg, max {e.max():.4f} kg")
