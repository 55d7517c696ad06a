"""identified.urdf round trip: RobotModel.from_urdf(..., same locks).theta_nominal == Θ."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml
from support.identification_helpers import PANDA_LOCK, perturbed_theta

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.identification.urdf_writer import identified_urdf, write_theta_yaml


@pytest.mark.parametrize("robot, lock", [("panda", PANDA_LOCK), ("ur5", None), ("panda", None)])
def test_round_trip_gives_back_theta(urdf_paths, robot, lock):
    path = urdf_paths[robot]
    xml = open(path, encoding="utf-8").read()
    model = RobotModel.from_urdf(path, lock)
    theta = perturbed_theta(model, np.random.default_rng(0))
    text, writeback = identified_urdf(xml, model, theta, path)
    again = RobotModel.from_urdf_string(text, "identified", lock)
    assert again.body_names == model.body_names
    assert np.allclose(again.theta_nominal, theta, rtol=1e-12, atol=1e-14)
    assert {w.mode for w in writeback} <= {"delta", "collapse"}


def test_delta_mode_keeps_the_other_merged_links_and_collapse_clears_them(urdf_paths):
    path = urdf_paths["panda"]
    xml = open(path, encoding="utf-8").read()
    model = RobotModel.from_urdf(path, PANDA_LOCK)
    theta = np.array(model.theta_nominal)
    theta[-1, 0] *= 1.2  # heavier hand body: the delta fits into panda_link7
    text, writeback = identified_urdf(xml, model, theta)
    links = {link.get("name"): link for link in ET.fromstring(text).iter("link")}
    original = {link.get("name"): link for link in ET.fromstring(xml).iter("link")}
    assert writeback[-1].mode == "delta"
    for name in ("panda_hand", "panda_leftfinger", "panda_rightfinger"):
        assert ET.tostring(links[name].find("inertial")) == \
            ET.tostring(original[name].find("inertial"))
    light = np.array(model.theta_nominal)
    light[-1] *= 0.1  # lighter than the URDF hand alone: everything into panda_link7
    text, writeback = identified_urdf(xml, model, light)
    links = {link.get("name"): link for link in ET.fromstring(text).iter("link")}
    assert writeback[-1].mode == "collapse"
    assert links["panda_hand"].find("inertial") is None
    again = RobotModel.from_urdf_string(text, "light", PANDA_LOCK)
    assert np.allclose(again.theta_nominal, light, rtol=1e-12, atol=1e-14)


def test_theta_yaml_maps_body_names_to_phi(tmp_path, urdf_paths):
    model = RobotModel.from_urdf(urdf_paths["ur5"])
    path = tmp_path / "theta.yaml"
    write_theta_yaml(path, model, model.theta_nominal)
    data = yaml.safe_load(path.read_text())
    assert list(data) == model.body_names
    assert np.allclose(np.array([data[name] for name in model.body_names]),
                       model.theta_nominal, rtol=0, atol=0)
