"""τ = sign·gain·(effort − offset): the one effort map, its presets and its checks."""

from __future__ import annotations

import numpy as np
import pytest

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inputs.efforts import (
    PRESETS,
    EffortMap,
    effort_map,
    effort_map_from_text,
    parse_values,
)


def test_the_map_is_sign_times_gain_times_effort_minus_offset_per_joint():
    m = EffortMap(gain=(2.0, 4.0, 0.5), offset=(0.1, -0.2, 0.0), sign=(1.0, -1.0, 1.0))
    tau = m.torque([[1.1, 0.8, 3.0], [0.1, -0.2, 0.0]])
    # written out by hand: 2·(1.1 − 0.1), −4·(0.8 + 0.2), 0.5·3
    np.testing.assert_allclose(tau, [[2.0, -4.0, 1.5], [0.0, 0.0, 0.0]], atol=1e-15)


def test_raw_is_what_a_driver_publishes_and_the_map_inverts_it():
    rng = np.random.default_rng(3)
    m = EffortMap(gain=tuple(rng.uniform(5, 15, 6)), offset=tuple(rng.normal(0, 0.3, 6)),
                  sign=(1, -1, 1, 1, -1, 1))
    tau = rng.normal(0, 20, (50, 6))
    np.testing.assert_allclose(m.torque(m.raw(tau)), tau, rtol=1e-13, atol=1e-12)


def test_one_value_serves_every_joint():
    m = EffortMap(gain=(3.0,), offset=(1.0,))
    np.testing.assert_allclose(m.torque([1.0, 2.0, 4.0]), [0.0, 3.0, 9.0])


def test_the_ur_preset_is_torque_constant_times_gear_ratio_and_franka_is_the_identity():
    ur = PRESETS["ur_e_series_current"]
    np.testing.assert_allclose(ur.gain, [0.125 * 101] * 3 + [0.092 * 101] * 3)
    assert ur.offset == (0.0,) and ur.sign == (1.0,)
    assert PRESETS["franka_link_torque"].is_identity
    np.testing.assert_array_equal(PRESETS["franka_link_torque"].torque([1.5, -2.0]), [1.5, -2.0])


def test_explicit_values_override_the_presets_and_say_so():
    m = effort_map("ur_e_series_current", offset=(0.2,))
    assert m.gain == PRESETS["ur_e_series_current"].gain and m.offset == (0.2,)
    assert m.source == "ur_e_series_current + explicit"
    assert effort_map().is_identity


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"gain": (0.0,)}, "effort_gain"), ({"gain": (float("nan"),)}, "effort_gain"),
    ({"sign": (0.5,)}, "effort_sign"), ({"offset": (float("inf"),)}, "effort_offset"),
    ({"gain": ()}, "effort_gain")])
def test_out_of_range_values_are_refused_naming_the_parameter(kwargs, name):
    with pytest.raises(InvalidInputError, match=name):
        EffortMap(**kwargs)


def test_a_list_of_the_wrong_length_names_the_joints_expected():
    with pytest.raises(InvalidInputError, match=r"one, or 3 .*\['a', 'b', 'c'\]"):
        EffortMap(gain=(1.0, 2.0)).check_joints(["a", "b", "c"])


def test_texts_parse_as_one_number_or_a_list_and_bad_ones_are_named():
    assert parse_values(" 1.5 ", "x") == (1.5,)
    assert parse_values("1, 2,3", "x") == (1.0, 2.0, 3.0)
    assert parse_values("", "x") is None
    with pytest.raises(InvalidInputError, match="effort_gain"):
        effort_map_from_text("", "1,a", "", "")
    with pytest.raises(InvalidInputError, match="effort_preset.*ur_e_series_current"):
        effort_map_from_text("kuka", "", "", "")
