"""The excitation check: information on (m, h) once the inertia is estimated too."""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.estimation import ExcitationCheck, ExcitationConfig


def test_mass_and_com_confounded_with_the_inertia_are_not_excited():
    # every row has its h_x column equal to its I_xx column: the (m, h) sub-block alone
    # is well conditioned, but h_x cannot be told from I_xx (the Schur complement is 0)
    rng = np.random.default_rng(0)
    check = ExcitationCheck((1.0, 1.0, 1.0), ExcitationConfig(window=50, warmup=5,
                                                               threshold=1e-3))
    excited = []
    for _ in range(100):
        r = rng.normal(size=(7, 10))
        r[:, 1] = r[:, 4]
        excited.append(check.add(r))
    assert np.linalg.eigvalsh(check.information[:4, :4])[0] > 0.1  # the sub-block alone
    assert not any(excited) and abs(check.excitation) < 1e-8, check.excitation


def test_independent_rows_are_excited():
    rng = np.random.default_rng(0)
    check = ExcitationCheck((1.0, 1.0, 1.0), ExcitationConfig(window=50, warmup=5))
    excited = [check.add(rng.normal(size=(7, 10))) for _ in range(100)]
    assert all(excited[10:]) and check.excitation > 0.1
