"""Consistency statistics of Θ(t) (Definition 3): the running tracker."""

from __future__ import annotations

import numpy as np
import pytest
from support.bounds_cases import (
    random_consistent_theta,
)

from robot_tv_dynamics.consistency import ConsistencyTracker, spectral_statistics
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    pseudo_inertia,
)


def test_consistency_tracker_keeps_running_extremes_and_rejects_bad_samples() -> None:
    tracker = ConsistencyTracker(2)
    rng = np.random.default_rng(9)
    thetas = [random_consistent_theta(2, rng) for _ in range(5)]
    rates = [rng.normal(size=(2, 10)) for _ in range(5)]
    for theta, rate in zip(thetas, rates, strict=True):
        snapshot = tracker.update(theta, rate)
    margins = np.array([spectral_statistics(t)[0] for t in thetas])
    sizes = np.array([spectral_statistics(t)[1] for t in thetas])
    sigma = np.array([np.linalg.norm(pseudo_inertia(r), ord=2, axis=(-2, -1)) for r in rates])
    np.testing.assert_allclose(snapshot.inf_margin, margins.min(axis=0))
    np.testing.assert_allclose(snapshot.sup_size, sizes.max(axis=0))
    np.testing.assert_allclose(snapshot.sup_rate, sigma.max(axis=0))
    assert snapshot.samples == 5 and snapshot.min_margin == margins.min()
    with pytest.raises(InvalidInputError):
        tracker.update(np.full((2, 10), np.nan))
    with pytest.raises(InvalidInputError):
        tracker.update(np.zeros((3, 10)))
    assert tracker.samples == 5 and tracker.last is snapshot
    with pytest.raises(ValueError):
        snapshot.margin[0] = 1.0  # read-only
    tracker.reset()
    assert tracker.samples == 0 and tracker.last is None
    assert np.isnan(tracker.update(thetas[0]).sup_rate).all()


