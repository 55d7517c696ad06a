"""``demo --controller``: the law reaches sim_node's ``controller`` parameter, the report covers it.

The argument path (the CLI's choices, the bring-up's sim_node command, the refusal of an
unknown name) without DDS; one short real run with the natural law over DDS.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from support.demo_runs import run_demo

from robot_tv_dynamics.cli import main
from robot_tv_dynamics.cli.demo import DEMO_CONTROLLERS, add_arguments
from robot_tv_dynamics.control.setups import CONTROLLERS
from robot_tv_dynamics.demo.recording import _estimates
from robot_tv_dynamics.ros import bringup


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_the_demo_takes_every_law_and_the_default_adaptive_controller():
    assert _parse().controller == "adaptive"
    assert DEMO_CONTROLLERS == ("adaptive", "slotine-li", "natural", "projected",
                                "computed-torque")
    for name in CONTROLLERS:
        assert _parse("--controller", name).controller == name


def test_an_unknown_controller_is_refused_naming_it_and_the_choices(capsys):
    assert main(["demo", "--controller", "naturel", "--duration", "1"]) == 2
    err = capsys.readouterr().err
    assert "unknown controller 'naturel'" in err
    assert "adaptive, slotine-li, natural, projected, computed-torque" in err


def test_the_demo_hands_the_law_to_sim_node_as_its_controller_parameter():
    from robot_tv_dynamics.ros.demo import sim_controller

    assert sim_controller(_parse("--controller", "projected")) == "projected"
    assert sim_controller(argparse.Namespace()) == "adaptive"  # an older caller


def test_bring_up_passes_controller_to_sim_node_only_and_refuses_unknown_names():
    commands = bringup.node_commands(use_sim=True, controller="natural", python="python3")
    assert "controller:='natural'" in commands["sim_node"]
    assert not any("controller:=" in arg for name, command in commands.items()
                   if name != "sim_node" for arg in command)
    assert not any("controller:=" in arg for arg in bringup.node_commands(
        use_sim=True, python="python3")["sim_node"])  # "": the config file's value
    with pytest.raises(bringup.BringUpError, match="unknown controller 'gradient'"):
        bringup.node_commands(use_sim=True, controller="gradient")
    with pytest.raises(bringup.BringUpError, match="--use-sim"):
        bringup.node_commands(controller="natural")
    assert bringup.main(["--controller", "gradient", "--use-sim"]) == 1


@pytest.mark.ros
def test_the_bring_up_names_are_sim_nodes_controller_choices():
    from robot_tv_dynamics.ros.sim_node import CONTROLLER_CHOICES  # imports rclpy

    assert bringup.SIM_CONTROLLERS == CONTROLLER_CHOICES


def test_the_analysis_covers_the_laws_estimate_when_no_estimator_ran():
    def recorded(topics):
        def arrays(topic):
            if topic in topics:
                return np.arange(3.0), np.zeros((3, 2, 10))
            return np.zeros(0), np.zeros((0, 0))
        return arrays

    law = "/estimates/controller/inertial_parameters"
    assert list(_estimates(recorded({law}))) == ["controller"]
    three = {f"/estimates/{n}/inertial_parameters" for n in ("classical", "projected",
                                                             "geometric")}
    assert list(_estimates(recorded(three))) == ["classical", "projected", "geometric"]
    assert list(_estimates(recorded(set()))) == ["classical", "projected", "geometric"]


@pytest.mark.ros
@pytest.mark.slow
def test_a_short_demo_with_the_natural_law_records_and_reports_its_estimate(tmp_path):
    from robot_tv_dynamics.bags import open_bag
    from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader
    from robot_tv_dynamics.model import RobotModel
    from robot_tv_dynamics.paths import example_robot_urdf

    result = run_demo(tmp_path, "--controller", "natural", duration="2")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "controller natural" in (tmp_path / "logs" / "sim_node.log").read_text()
    data = json.loads((tmp_path / "summary.json").read_text())
    assert list(data["estimators"]) == ["controller"]
    assert (tmp_path / "report.png").stat().st_size > 10_000
    model = RobotModel.from_urdf(example_robot_urdf())
    reader = BodyVectorReader("estimate", model.body_names, "phi")
    topic = "/estimates/controller/inertial_parameters_stamped"
    with open_bag(tmp_path / "run.mcap") as recording:
        hats = [reader.read(msg)[1] for _, _, msg in recording.messages([topic])]
    assert len(hats) > 20
    # the law adapts (Θ̂ moves) and the natural law keeps every massive body consistent
    assert np.abs(hats[-1] - hats[0]).max() > 1e-9
    from robot_tv_dynamics.inertia import consistency_margin

    massive = model.theta_nominal[:, 0] > 0
    assert all(np.all(np.atleast_1d(consistency_margin(h))[massive] > 0) for h in hats)
