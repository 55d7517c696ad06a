"""Plain numbers at the package's edges: one function per meaning."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from robot_tv_dynamics.numbers import finite_or_none, float_or_nan, format_number


@pytest.mark.parametrize(("value", "expected"), [
    (None, None), (math.nan, None), (math.inf, None), (-math.inf, None), (2, 2.0),
    (np.float32(0.5), 0.5)])
def test_a_json_value_is_a_finite_float_or_none(value, expected):
    out = finite_or_none(value)
    assert out == expected and (out is None or type(out) is float)
    json.dumps(out, allow_nan=False)  # JSON has no NaN or infinity


@pytest.mark.parametrize(("cell", "expected"), [("1.5", 1.5), (3, 3.0), ("", math.nan),
                                                (None, math.nan), ("error", math.nan)])
def test_a_table_cell_reads_as_a_float_or_nan(cell, expected):
    out = float_or_nan(cell)
    assert out == expected or (math.isnan(out) and math.isnan(expected))


def test_a_number_for_text_has_its_digits_and_infinity_as_a_symbol():
    assert format_number(math.inf) == "∞"
    assert format_number(1 / 3) == "0.333333"
    assert format_number(123.456, 4) == "123.5"
    assert format_number(-math.inf) == "-inf"
