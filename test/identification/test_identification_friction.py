"""Friction model, regressor and the friction YAML the dynamics node loads."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_tv_dynamics.exceptions import FrictionFileError, InvalidInputError
from robot_tv_dynamics.friction import (
    FrictionParameters,
    friction_regressor,
    friction_torque,
    load_friction_file,
    parameters_from_coefficients,
    write_friction_file,
)

JOINTS = ("j1", "j2")


def _params():
    return FrictionParameters(JOINTS, np.array([0.5, 0.1]), np.array([1.0, 2.0]),
                              np.array([0.1, -0.2]), np.array([0.01, 0.05]))


def test_friction_torque_is_viscous_plus_smooth_coulomb_plus_offset():
    params = _params()
    qd = np.array([0.2, -0.05])
    expected = [0.5 * 0.2 + 1.0 * math.tanh(20.0) + 0.1,
                0.1 * -0.05 + 2.0 * math.tanh(-1.0) - 0.2]
    assert np.allclose(friction_torque(params, qd), expected, atol=1e-15)
    assert friction_torque(params, np.zeros((3, 2))).shape == (3, 2)
    with pytest.raises(InvalidInputError, match="qd"):
        friction_torque(params, np.zeros(3))


def test_regressor_columns_reproduce_the_torque_for_each_term_set():
    rng = np.random.default_rng(0)
    qd = rng.standard_normal((5, 2))
    params = _params()
    for terms, n_cols in (("none", 0), ("viscous", 2), ("coulomb", 4), ("full", 6)):
        y = friction_regressor(qd, terms, params.coulomb_velocity)
        assert y.shape == (5, 2, n_cols)
        coefficients = {"none": [], "viscous": [0.5, 0.1], "coulomb": [0.5, 1.0, 0.1, 2.0],
                        "full": [0.5, 1.0, 0.1, 0.1, 2.0, -0.2]}[terms]
        got = parameters_from_coefficients(JOINTS, terms, coefficients, params.coulomb_velocity)
        assert np.allclose(y @ np.array(coefficients, dtype=float), friction_torque(got, qd))
    full = parameters_from_coefficients(JOINTS, "full", [0.5, 1.0, 0.1, 0.1, 2.0, -0.2],
                                        params.coulomb_velocity)
    assert np.allclose(friction_torque(full, qd), friction_torque(params, qd))


def test_file_round_trip_in_the_models_joint_order(tmp_path):
    path = tmp_path / "friction.yaml"
    write_friction_file(path, _params())
    loaded = load_friction_file(path, ["j2", "j1"])
    assert loaded.joint_names == ("j2", "j1")
    assert np.allclose(loaded.viscous, [0.1, 0.5])
    assert np.allclose(loaded.coulomb_velocity, [0.05, 0.01])


@pytest.mark.parametrize("text, match", [
    ("j1: {viscous: 1}\nj2: {viscous: 1}\nj3: {viscous: 1}\n", r"\['j3'\] are not joints"),
    ("j1: {viscous: 1}\n", r"no entry for joints \['j2'\]"),
    ("j1: {viscous: abc}\nj2: {}\n", "viscous = 'abc' is not a finite number"),
    ("j1: {viscous: .nan}\nj2: {}\n", "not a finite number"),
    ("j1: {coulomb_velocity: 0}\nj2: {}\n", "coulomb_velocity = 0 must be > 0"),
    ("j1: {stiction: 1}\nj2: {}\n", r"unknown keys \['stiction'\]"),
    ("j1: 3\nj2: {}\n", "expected a mapping"),
    ("- j1\n", "expected a mapping joint"),
    ("j1: [\n", "not valid YAML"),
])
def test_bad_files_are_refused_naming_the_problem(tmp_path, text, match):
    path = tmp_path / "friction.yaml"
    path.write_text(text)
    with pytest.raises(FrictionFileError, match=match) as info:
        load_friction_file(path, list(JOINTS))
    assert str(path) in str(info.value)


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(FrictionFileError, match="cannot be read"):
        load_friction_file(tmp_path / "absent.yaml", list(JOINTS))
