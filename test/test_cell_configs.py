"""The cell examples in config/examples/cell_*.yaml: every key a declared parameter."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CELLS = sorted((REPO / "config" / "examples").glob("cell_*.yaml"))


@pytest.fixture(scope="module")
def node_parameters():
    from robot_tv_dynamics.ros import dynamics_node, estimator_node, monitor_node

    return {"dynamics_node": dynamics_node.PARAMETERS, "monitor_node": monitor_node.PARAMETERS,
            "estimator_node": estimator_node.PARAMETERS}


@pytest.mark.parametrize("path", CELLS, ids=[p.name for p in CELLS])
def test_every_key_is_a_parameter_of_its_node_with_its_type(path, node_parameters):
    config = yaml.safe_load(path.read_text())
    assert config, path
    for key, section in config.items():
        node = key.removeprefix("/**/")
        specs = {s.name: s for s in node_parameters[node]}
        for name, value in section["ros__parameters"].items():
            assert name in specs, (path.name, node, name)
            assert type(value) is type(specs[name].default), (path.name, node, name)


def test_the_ratings_are_the_vendors():
    ratings = {p.name: yaml.safe_load(p.read_text())["/**/monitor_node"]["ros__parameters"]
               ["rated_payload"] for p in CELLS}
    assert ratings == {"cell_fr3.yaml": 3.0, "cell_ur5e.yaml": 5.0}
