"""The helpers the nodes share about stamped Θ topics (messages only, no DDS)."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import InertiaStamped

from robot_tv_dynamics.consistency.monitor import TABLE_FIELDS
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.ros import conversions as cv
from robot_tv_dynamics.ros.stamped_topics import (
    StampAxis,
    consistency_joint_state,
    read_stamped_levels,
)

BODIES = ["a", "b", "c"]


def table(levels) -> np.ndarray:
    out = np.full((len(BODIES), len(TABLE_FIELDS)), np.inf)  # inf: no crossing, …
    out[:, TABLE_FIELDS.index("level")] = levels
    return out


def test_consistency_stamped_keeps_the_stamp_and_the_levels_read_back_by_name():
    stamp = Time(sec=1_700_000_000, nanosec=999_999_999)
    msg = consistency_joint_state(stamp, BODIES, table([0.0, 2.0, 1.0]))
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (1_700_000_000, 999_999_999)
    assert msg.name[3] == "a/level" and msg.name[len(TABLE_FIELDS)] == "b/mu"
    assert not msg.velocity and not msg.effort
    # any order of the names: read by name
    order = np.random.default_rng(0).permutation(len(msg.name))
    msg.name = [msg.name[k] for k in order]
    msg.position = [msg.position[k] for k in order]
    np.testing.assert_array_equal(read_stamped_levels(msg, BODIES, "c"), [0.0, 2.0, 1.0])


@pytest.mark.parametrize("change, reason", [
    (lambda m: setattr(m, "position", list(m.position)[:-1]), "entries for"),
    (lambda m: setattr(m, "name", [n.replace("b/level", "b/lvl") for n in m.name]),
     "no level of the bodies \\['b'\\]"),
    (lambda m: setattr(m, "position", [7.0 if n.endswith("/level") else v
                                       for n, v in zip(m.name, m.position, strict=True)]),
     "0..3"),
])
def test_a_bad_consistency_stamped_is_refused_with_the_reason(change, reason):
    msg = consistency_joint_state(Time(sec=5), BODIES, table([0.0, 1.0, 2.0]))
    change(msg)
    with pytest.raises(InvalidInputError, match=reason):
        read_stamped_levels(msg, BODIES, "consistency_stamped")


def test_the_stamp_axis_subtracts_integer_nanoseconds_before_rounding():
    axis = StampAxis()
    first = Time(sec=1_700_000_000, nanosec=1)
    assert axis.seconds(first, "s") == 0.0
    # 1 ns after it is 1e-9 s exactly as nanoseconds, lost by a float of Unix seconds
    assert axis.seconds(Time(sec=1_700_000_000, nanosec=2), "s") == 1e-9
    assert cv.stamp_to_seconds(Time(sec=1_700_000_000, nanosec=2)) == \
        cv.stamp_to_seconds(first)
    with pytest.raises(InvalidInputError, match="is zero"):
        axis.seconds(Time(), "inertial_parameters_stamped.header.stamp")


def test_a_payloads_zero_stamp_means_from_the_next_sample():
    msg = InertiaStamped()
    assert cv.payload_stamp(msg) is None
    msg.header.stamp = Time(sec=12, nanosec=500_000_000)
    assert cv.payload_stamp(msg) == 12.5
    msg.header.stamp = Time(sec=12, nanosec=1_000_000_000)
    with pytest.raises(InvalidInputError, match="nanosec"):
        cv.payload_stamp(msg)
