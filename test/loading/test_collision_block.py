"""The ``collision:`` block of a scenario file: read as written, bad values named by field."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from support.examples import LOADING_CONFIG as CONFIG

from robot_tv_dynamics import InvalidInputError
from robot_tv_dynamics.loading import (
    collision_as_dict,
    collision_from_dict,
    load_collision,
    load_loading_process,
    loading_process_from_dict,
)
from robot_tv_dynamics.observer import ExternalWrench

BLOCK = {"link": "panda_link5", "force": [0.0, 30.0, 0.0], "start": 5.0, "duration": 0.25}


def test_fill_collision_is_the_fill_and_a_push_on_the_forearm():
    collision = load_collision(CONFIG / "fill_collision.yaml")
    assert collision == ExternalWrench("panda_link5", (0.0, 30.0, 0.0), 5.0, 5.25)
    assert collision.moment == (0.0, 0.0, 0.0) and collision.frame == "world"
    # the loading process is fill.yaml's: the same Φ, ψ at every time
    fill = load_loading_process(CONFIG / "fill.yaml")
    both = load_loading_process(CONFIG / "fill_collision.yaml")
    for t in (0.0, 2.3, 3.9, 4.5, 6.0):
        a, b = fill.state(t), both.state(t)
        np.testing.assert_array_equal(a.phi, b.phi)
        np.testing.assert_array_equal(a.psi, b.psi)
    # the push starts after the fill has ended
    assert collision.t_start > fill.duration


def test_files_without_a_block_have_no_collision():
    for name in ("fill", "drain", "grasp", "timeline"):
        assert load_collision(CONFIG / f"{name}.yaml") is None


def test_a_full_block_round_trips_and_the_process_ignores_it():
    block = {**BLOCK, "moment": [0.0, 0.0, 1.5], "point": [0.0, 0.05, 0.0]}
    collision = collision_from_dict({"collision": block})
    assert collision is not None
    assert collision.moment == (0.0, 0.0, 1.5) and collision.point == (0.0, 0.05, 0.0)
    assert collision_as_dict(collision) == {**block, "start": 5.0, "duration": 0.25}
    with pytest.raises(InvalidInputError, match="rectangular pulse in the base frame"):
        collision_as_dict(ExternalWrench("panda_link5", (1.0, 0.0, 0.0), 0.0, 1.0,
                                         frame="link"))
    data = yaml.safe_load((CONFIG / "fill.yaml").read_text())
    process = loading_process_from_dict({**data, "collision": block})
    assert process.link == "panda_hand"


@pytest.mark.parametrize("change,field,problem", [
    ({"duration": -0.1}, "collision.duration", "must be > 0"),
    ({"duration": 0.0}, "collision.duration", "must be > 0"),
    ({"start": -1.0}, "collision.start", "must be >= 0"),
    ({"start": math.inf}, "collision.start", "finite"),
    ({"force": [0.0, math.nan, 0.0]}, "collision.force", "non-finite"),
    ({"force": [0.0, math.inf, 0.0]}, "collision.force", "non-finite"),
    ({"force": [1.0, 2.0]}, "collision.force", "shape"),
    ({"moment": [0.0, "x", 0.0]}, "collision.moment", "numeric"),
    ({"link": ""}, "collision.link", "link name"),
    ({"link": 5}, "collision.link", "link name"),
    ({"frame": "world"}, "collision", "unknown key(s) ['frame']"),
])
def test_a_bad_value_is_an_error_naming_the_field(change, field, problem):
    with pytest.raises(InvalidInputError) as caught:
        collision_from_dict({"collision": {**BLOCK, **change}})
    assert caught.value.argument == field, caught.value
    assert problem in caught.value.problem, caught.value


@pytest.mark.parametrize("missing", ["link", "force", "start", "duration"])
def test_a_missing_key_is_named(missing):
    block = {key: value for key, value in BLOCK.items() if key != missing}
    with pytest.raises(InvalidInputError, match=f'missing key "{missing}"'):
        collision_from_dict({"collision": block})


def test_a_block_that_is_not_a_mapping_is_refused():
    with pytest.raises(InvalidInputError, match="collision: expected a mapping"):
        collision_from_dict({"collision": [1, 2, 3]})


def test_the_file_is_named_in_the_error(tmp_path):
    data = yaml.safe_load((CONFIG / "fill_collision.yaml").read_text())
    data["collision"]["duration"] = -0.25
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InvalidInputError) as caught:
        load_collision(path)
    assert caught.value.argument == f"{path}: collision.duration"
