"""Every node parameter says what a runtime set does: applied (LIVE) or read-only (START_UP).

A parameter added without a class fails here (and is refused at runtime by the
set-parameters callback); the runtime behaviour of each class over DDS is
test_runtime_parameters.py.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

import pytest
import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from support.ros_harness import DOMAIN_ID

import robot_tv_dynamics.ros as ros_package
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.ros import parameters
from robot_tv_dynamics.ros.parameters import LIVE, START_UP, ParameterSpec, RuntimeParameters

#: An rclpy node in this process, no DDS peer, no clock to keep up with.
pytestmark = [pytest.mark.ros, pytest.mark.no_deadline]

#: The node modules and what each declares.
NODE_MODULES = {
    "dynamics_node": "robot_tv_dynamics.ros.dynamics_parameters",
    "monitor_node": "robot_tv_dynamics.ros.monitor_node",
    "sim_node": "robot_tv_dynamics.ros.sim_node",
    "markers_node": "robot_tv_dynamics.ros.markers_node",
    "estimator_node": "robot_tv_dynamics.ros.estimator_node",
    "trajectory_gate": "robot_tv_dynamics.ros.trajectory_gate",
}


def node_specs() -> dict[str, tuple[ParameterSpec, ...]]:
    return {node: importlib.import_module(module).PARAMETERS
            for node, module in NODE_MODULES.items()}


def test_every_parameter_of_every_node_is_classified():
    for node, specs in node_specs().items():
        assert parameters.unclassified(specs) == [], node
        assert {spec.runtime for spec in specs} <= {LIVE, START_UP}, node


def test_every_module_that_declares_node_parameters_is_checked_here():
    declared = {id(specs) for specs in node_specs().values()}
    for info in pkgutil.iter_modules(ros_package.__path__):
        module = importlib.import_module(f"robot_tv_dynamics.ros.{info.name}")
        specs = getattr(module, "PARAMETERS", None)
        if isinstance(specs, tuple) and specs and isinstance(specs[0], ParameterSpec):
            assert id(specs) in declared, module.__name__


def test_an_unclassified_spec_is_found():
    specs = (ParameterSpec("a", 1.0, "x", runtime=LIVE), ParameterSpec("b", 1.0, "y"))
    assert parameters.unclassified(specs) == ["b"]


def test_start_up_parameters_are_declared_read_only_with_the_reason():
    for node, specs in node_specs().items():
        for spec in specs:
            descriptor = spec.descriptor()
            assert descriptor.read_only == (spec.runtime == START_UP), (node, spec.name)
            assert descriptor.additional_constraints, (node, spec.name)


@dataclass(frozen=True)
class _Config:
    gain: float = 1.0
    names: tuple[str, ...] = ()


@pytest.fixture
def node():
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    made = rclpy.create_node("runtime_parameters_unit", context=context)
    yield made
    made.destroy_node()
    rclpy.try_shutdown(context=context)


def test_the_callback_applies_live_refuses_unclassified_and_passes_a_refusal_on(node):
    specs = (ParameterSpec("gain", 1.0, "g", runtime=LIVE),
             ParameterSpec("names", [], "n", runtime=LIVE),
             ParameterSpec("loose", 1.0, "not classified"))
    parameters.declare_parameters(node, specs)
    node.config = _Config()
    applied: list[tuple[_Config, frozenset[str]]] = []

    def apply(config: _Config, names: frozenset[str]) -> str:
        if config.gain < 0:
            raise InvalidInputError("gain", "must be >= 0")
        applied.append((config, names))
        return ""

    RuntimeParameters(node, specs, apply)
    result: SetParametersResult = node.set_parameters([Parameter("gain", value=2.5)])[0]
    assert result.successful and node.config.gain == 2.5
    assert applied[-1] == (_Config(2.5), frozenset({"gain"}))
    result = node.set_parameters([Parameter("names", value=["a", "b"])])[0]
    assert result.successful and node.config.names == ("a", "b")
    refused = node.set_parameters([Parameter("gain", value=-1.0)])[0]
    assert not refused.successful and "must be >= 0" in refused.reason
    assert node.config.gain == 2.5 and node.get_parameter("gain").value == 2.5
    refused = node.set_parameters([Parameter("loose", value=3.0)])[0]
    assert not refused.successful and "not classified" in refused.reason
    assert node.get_parameter("loose").value == 1.0
