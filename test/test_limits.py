"""The physical bounds of every input (robot_tv_dynamics/limits.py): finite but absurd is bad."""

from __future__ import annotations

import numpy as np
import pytest

from robot_tv_dynamics import limits
from robot_tv_dynamics.exceptions import InvalidInputError


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e308, -1e308, 1.0001e4])
def test_check_bounded_rejects_nan_inf_and_values_beyond_the_bound(value):
    values = np.zeros((3, 2))
    values[2, 1] = value
    with pytest.raises(InvalidInputError, match="x.data") as error:
        limits.check_bounded(values, 1e4, "x.data", ["a", "b", "c"])
    assert '"c"' in str(error.value)


def test_check_bounded_accepts_denormals_zero_and_the_bound_itself():
    values = np.array([5e-324, 0.0, -1e4, 1e4])
    assert limits.check_bounded(values, 1e4, "x") is not None


@pytest.mark.parametrize(("sec", "nanosec", "reason"), [
    (-1, 0, "negative"), (5, 1_000_000_000, "nanosec"), (2**31 - 1, 0, "int32 maximum"),
    (1_800_000_000 + 2 * 86400, 0, "ahead of this node's clock")])
def test_check_stamp_rejects_implausible_stamps(sec, nanosec, reason):
    with pytest.raises(InvalidInputError, match=reason):
        limits.check_stamp(sec, nanosec, "stamp", now=1_800_000_000.0)


def test_check_stamp_accepts_now_the_past_and_an_unset_simulated_clock():
    assert limits.check_stamp(1_800_000_000, 5, "stamp", now=1_800_000_000.0) > 0
    assert limits.check_stamp(12, 0, "stamp", now=1_800_000_000.0) == 12.0
    assert limits.check_stamp(2**31 - 2, 0, "stamp", now=0.0) == 2**31 - 2  # clock at 0
