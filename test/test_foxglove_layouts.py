"""The Foxglove layout of the stamped topics names topics and entries the nodes publish.

Every plotted path ``/<topic>.position[<index>]`` of
``config/foxglove/stamped_inertial_parameters.json`` must be a JointState topic the demo
records (so that it is in a demo bag), on the header stamp, and its index must name, in
the schema the nodes publish (``<body>/<parameter>`` of Θ, ``<body>/<field>`` of the
monitor's table), the entry its label says, of the Panda's payload body. The same paths
are resolved against real node messages in ``test/ros/test_stamped_outputs.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robot_tv_dynamics.consistency.monitor import TABLE_FIELDS
from robot_tv_dynamics.demo.scenario import ESTIMATORS, RECORDED
from robot_tv_dynamics.inputs.body_vectors import body_vector_names

LAYOUT = Path(__file__).resolve().parents[1] / "config" / "foxglove" / \
    "stamped_inertial_parameters.json"
BODY = "panda_link7"  # the demo's payload body on the Panda
#: the label's symbol → the entry it plots
FIELDS = {"m": "m", "μ": "mu", "ε": "epsilon"}


def plotted() -> list[dict]:
    layout = json.loads(LAYOUT.read_text(encoding="utf-8"))
    return [path for config in layout["configById"].values()
            for path in config.get("paths", [])]


def schema(topic: str, body_names: list[str]) -> list[str]:
    """The ``name`` field of a message on ``topic``, as the nodes fill it."""
    if topic.endswith("/inertial_parameters_stamped"):
        return body_vector_names(body_names, "phi")
    if topic.endswith("/consistency_stamped"):
        return [f"{body}/{field}" for body in body_names for field in TABLE_FIELDS]
    raise AssertionError(f"{topic}: not a stamped Θ or consistency topic")


def test_the_layout_plots_m_and_mu_of_the_truth_and_every_estimate():
    topics = {path["value"].partition(".")[0] for path in plotted()}
    for prefix in ("", *(f"/estimates/{name}" for name in ESTIMATORS)):
        assert f"{prefix}/inertial_parameters_stamped" in topics, prefix
        assert f"{prefix}/consistency_stamped" in topics, prefix


@pytest.mark.parametrize("path", plotted(), ids=lambda p: p["value"])
def test_every_path_names_a_recorded_topic_and_the_entry_of_its_label(path, panda):
    topic, _, field = path["value"].partition(".")
    assert RECORDED.get(topic) == "sensor_msgs/msg/JointState", topic
    assert path["timestampMethod"] == "headerStamp"  # the time the value refers to
    assert field.startswith("position[") and field.endswith("]"), field
    index = int(field.removeprefix("position[").removesuffix("]"))
    names = schema(topic, list(panda.body_names))
    assert 0 <= index < len(names), (topic, index)
    assert names[index] == f"{BODY}/{FIELDS[path['label'].split()[0]]}", (topic, index)
