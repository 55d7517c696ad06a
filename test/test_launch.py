"""The launch file, the parameter file, the CLI bring-up and the interface docs agree.

launch_ros exists only in a ROS 2 install, so the launch file is compiled and read as
an AST here (and executed when launch_ros happens to be importable).
"""

from __future__ import annotations

import ast
import importlib.util
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.launching import Launched, require_launch

REPO = Path(__file__).resolve().parents[1]
LAUNCH = REPO / "launch" / "tv_dynamics.launch.py"
CONFIG = REPO / "config" / "tv_dynamics.yaml"
DOCS = REPO / "docs" / "ros_interface.md"  # the ROS 2 interface tables
ARGUMENTS = {"urdf", "use_sim", "estimate", "config", "namespace", "joint_states",
             "robot_description", "use_sim_time", "params_file", "locked_joints", "log_level"}
NODES = {"dynamics_node": "robot_tv_dynamics.ros.dynamics_node",
         "monitor_node": "robot_tv_dynamics.ros.monitor_node",
         "markers_node": "robot_tv_dynamics.ros.markers_node",
         "estimator_node": "robot_tv_dynamics.ros.estimator_node"}


def console_scripts() -> dict[str, str]:
    """name → target of setup.py's console_scripts (read, not run)."""
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "entry_points":
            entries = ast.literal_eval(node.value).get("console_scripts", [])
            return {line.split("=")[0].strip(): line.split("=")[1].strip() for line in entries}
    return {}


def launch_tree() -> ast.Module:
    return ast.parse(LAUNCH.read_text(), filename=str(LAUNCH))


def module_constants(tree: ast.Module) -> dict[str, object]:
    out = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                try:
                    out[target.id] = ast.literal_eval(statement.value)
                except ValueError:
                    pass
    return out


def calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        getattr(n.func, "id", None) == name or getattr(n.func, "attr", None) == name)]


def test_launch_file_compiles_and_declares_its_arguments(tmp_path):
    py_compile.compile(str(LAUNCH), cfile=str(tmp_path / "launch.pyc"), doraise=True)
    tree = launch_tree()
    declared = {ast.literal_eval(c.args[0]) for c in calls(tree, "DeclareLaunchArgument")}
    assert declared == ARGUMENTS
    assert any(f.name == "generate_launch_description" for f in tree.body
               if isinstance(f, ast.FunctionDef))


def test_launch_file_only_wires_nodes_and_parameters():
    tree = launch_tree()
    imported = {alias.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                for alias in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"launch", "launch_ros", "os"}  # os: is a DDS profile set?
    nodes = calls(tree, "Node")
    assert nodes, "no launch_ros Node"
    for node in nodes:
        keywords = {k.arg for k in node.keywords}
        assert {"package", "executable", "name", "namespace", "parameters"} <= keywords
    conditional = [n for n in nodes if any(k.arg == "condition" for k in n.keywords)]
    assert len(conditional) == 3 and all("IfCondition" in ast.unparse(n) for n in conditional)


def test_estimate_adds_the_estimator_namespaced_beside_the_simulator():
    tree = launch_tree()
    estimators = [n for n in calls(tree, "Node") if "ESTIMATOR_NODE" in ast.unparse(n)]
    assert len(estimators) == 2
    remapped = [n for n in estimators if "estimated/" in ast.unparse(n)]
    assert len(remapped) == 1                      # only the use_sim:=true one
    text = ast.unparse(tree)
    assert "' == 'true' and '" in text and "' != 'true'" in text
    constants = module_constants(tree)
    from robot_tv_dynamics.ros import bringup

    assert set(constants["ESTIMATOR_OUTPUTS"]) == set(bringup.ESTIMATOR_OUTPUTS) == {
        "inertial_parameters_stamped", "inertial_parameters", "inertial_parameter_rates",
        "payload_estimate"}


def test_readme_documents_every_launch_argument():
    text = DOCS.read_text()
    for argument in ARGUMENTS:
        assert f"{argument}:=" in text, argument


def test_launch_file_starts_only_executables_of_setup_py():
    constants = module_constants(launch_tree())
    executables = (set(constants["NODES"]) | {constants["SIM_NODE"]}
                   | {constants["ESTIMATOR_NODE"]})
    assert executables == {"dynamics_node", "monitor_node", "markers_node", "sim_node",
                           "estimator_node"}
    scripts = console_scripts()
    for name, target in NODES.items():
        # directly, or through ros/entry_points.py (one line naming the [ros] extra)
        assert scripts.get(name) in (f"{target}:main",
                                     f"robot_tv_dynamics.ros.entry_points:{name}"), (
            f"{name} missing from console_scripts")


def test_sim_node_executable_exists_when_declared():
    scripts = console_scripts()
    assert "sim_node" in scripts, "the launch file starts sim_node with use_sim:=true"
    module = scripts["sim_node"].split(":")[0]
    assert importlib.util.find_spec(module) is not None, module


def test_launch_description_builds_when_launch_ros_is_installed():
    pytest.importorskip("launch_ros")
    spec = importlib.util.spec_from_file_location("tv_dynamics_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    names = {a.name for a in description.get_launch_arguments()}
    assert names == ARGUMENTS


@pytest.fixture(scope="module")
def node_parameters():
    from robot_tv_dynamics.ros import (
        dynamics_node,
        estimator_node,
        markers_node,
        monitor_node,
        sim_node,
        trajectory_gate,
    )

    return {"dynamics_node": dynamics_node.PARAMETERS, "monitor_node": monitor_node.PARAMETERS,
            "sim_node": sim_node.PARAMETERS, "markers_node": markers_node.PARAMETERS,
            "estimator_node": estimator_node.PARAMETERS,
            "trajectory_gate": trajectory_gate.PARAMETERS}


def test_config_file_has_every_parameter_of_every_node_with_its_default(node_parameters):
    config = yaml.safe_load(CONFIG.read_text())
    assert set(config) == {f"/**/{name}" for name in node_parameters}
    for name, specs in node_parameters.items():
        values = config[f"/**/{name}"]["ros__parameters"]
        assert set(values) == {s.name for s in specs}, name
        for spec in specs:
            assert values[spec.name] == spec.default, (name, spec.name)
            assert type(values[spec.name]) is type(spec.default), (name, spec.name)


def test_config_dataclasses_match_the_declared_parameters(node_parameters):
    from dataclasses import fields

    from robot_tv_dynamics.ros.dynamics_node import DynamicsNodeConfig
    from robot_tv_dynamics.ros.estimator_node import EstimatorNodeConfig
    from robot_tv_dynamics.ros.markers_node import MarkersNodeConfig
    from robot_tv_dynamics.ros.monitor_node import MonitorNodeConfig
    from robot_tv_dynamics.ros.sim_node import SimNodeConfig

    for cls, specs in ((DynamicsNodeConfig, node_parameters["dynamics_node"]),
                       (MonitorNodeConfig, node_parameters["monitor_node"]),
                       (SimNodeConfig, node_parameters["sim_node"]),
                       (MarkersNodeConfig, node_parameters["markers_node"]),
                       (EstimatorNodeConfig, node_parameters["estimator_node"])):
        # string arrays: a list in the spec (the parameter's type), a tuple in the config
        assert {f.name: list(f.default) if isinstance(f.default, tuple) else f.default
                for f in fields(cls)} == {s.name: s.default for s in specs}


def test_every_parameter_has_a_description_and_a_range_where_numeric(node_parameters):
    for specs in node_parameters.values():
        for spec in specs:
            descriptor = spec.descriptor()
            assert descriptor.description
            if isinstance(spec.default, float):
                assert len(descriptor.floating_point_range) == 1, spec.name
            elif isinstance(spec.default, int) and not isinstance(spec.default, bool):
                assert len(descriptor.integer_range) == 1, spec.name


def test_docs_list_every_topic_and_parameter(node_parameters):
    text = DOCS.read_text()
    for specs in node_parameters.values():
        for spec in specs:
            assert f"`{spec.name}`" in text, spec.name
    for topic in ("robot_description", "joint_states", "reference", "inertial_parameters",
                  "inertial_parameter_rates", "psi", "psi_rates", "payload",
                  "generalized_torques", "generalized_terms", "mass_matrix_bounds",
                  "/diagnostics", "consistency", "planned_trajectory",
                  "planned_trajectory_efforts", "inertia_markers", "payload_estimate",
                  "inertial_parameters_stamped", "psi_stamped", "consistency_stamped"):
        assert f"`{topic}`" in text, topic


def test_docs_say_of_every_parameter_whether_a_runtime_set_applies_it(node_parameters):
    from robot_tv_dynamics.ros.parameters import LIVE

    text = DOCS.read_text()
    for node, specs in node_parameters.items():
        section = text.split(f"#### {node}\n", 1)[1].split("\n#", 1)[0]
        said = {}
        for line in section.splitlines():
            if line.startswith("| `"):
                cells = [cell.strip() for cell in line.strip("|").split(" | ")]
                said[cells[0].strip("`")] = cells[4]
        assert said == {spec.name: "applied" if spec.runtime == LIVE else "read-only"
                        for spec in specs}, node


def test_cli_bring_up_passes_the_config_then_the_urdf_like_the_launch_file(tmp_path):
    from robot_tv_dynamics.ros import bringup

    urdf = tmp_path / "it's.urdf"
    command = bringup.node_command("monitor_node", urdf=str(urdf), config=CONFIG,
                                   namespace="arm1", python="python3")
    assert command[:4] == ["python3", "-m", "robot_tv_dynamics.ros.monitor_node", "--ros-args"]
    rest = command[4:]
    assert rest.index("--params-file") < rest.index("-p")  # -p overrides the file
    assert rest[rest.index("--params-file") + 1] == str(CONFIG)
    assert f"urdf_path:='{str(urdf).replace(chr(39), chr(39) * 2)}'" in rest
    assert "__ns:=/arm1" in rest and "__node:=monitor_node" in rest
    assert bringup.default_config().is_file()
    with pytest.raises(bringup.BringUpError, match="does not exist"):
        bringup.bring_up(str(urdf))


def test_cli_bring_up_with_estimate_namespaces_the_estimator_only_beside_the_simulator():
    from robot_tv_dynamics.ros import bringup

    on_arm = bringup.node_commands(estimate=True, config=CONFIG, python="python3")
    assert set(on_arm) == {"dynamics_node", "monitor_node", "markers_node", "estimator_node"}
    assert not any(":=estimated/" in arg for arg in on_arm["estimator_node"])
    beside = bringup.node_commands(use_sim=True, estimate=True, config=CONFIG, python="python3")
    command = beside["estimator_node"]
    for topic in ("inertial_parameters_stamped", "inertial_parameters",
                  "inertial_parameter_rates", "payload_estimate"):
        assert f"{topic}:=estimated/{topic}" in command, command
    assert not any(":=estimated/" in arg for arg in beside["monitor_node"])


def test_node_command_names_the_node_and_puts_parameters_and_remaps_after_the_file():
    from robot_tv_dynamics.ros import bringup

    command = bringup.node_command(
        "monitor_node", config=CONFIG, python="python3", name="monitor_truth",
        parameters={"publish_rate": 10.0, "publish_bounds": True, "loading": "a b.yaml"},
        remaps={"/diagnostics": "/estimates/x/diagnostics"})
    rest = command[4:]
    assert "__node:=monitor_truth" in rest and "__node:=monitor_node" not in rest
    assert rest.index("--params-file") < rest.index("publish_rate:=10.0")
    assert "publish_bounds:=true" in rest and "loading:='a b.yaml'" in rest
    assert rest[rest.index("/diagnostics:=/estimates/x/diagnostics") - 1] == "-r"


def test_bring_up_logs_each_node_to_its_file_and_waits_for_its_output(tmp_path):
    import sys

    from robot_tv_dynamics.ros import bringup

    running = bringup.BringUp(logs=tmp_path)
    try:
        running.start("talker", [sys.executable, "-c", "import time; print('ready', flush=True);"
                                 " time.sleep(30)"])
        running.start("quitter", [sys.executable, "-c", "print('bye')"])
        running.wait_for_output(["talker"], "ready", timeout=30.0)
        assert "ready" in running.log("talker").read_text()
        with pytest.raises(bringup.BringUpError, match="quitter did not start"):
            running.wait_for_output(["quitter"], "ready", timeout=30.0)
    finally:
        codes = running.stop(timeout=5.0)
    assert codes["quitter"] == 0 and set(codes) == {"talker", "quitter"}


def test_bring_up_gives_its_children_one_blas_thread_unless_told_otherwise(tmp_path):
    import os
    import sys

    from robot_tv_dynamics.ros import bringup

    before = os.environ.get("OPENBLAS_NUM_THREADS")
    running = bringup.BringUp(logs=tmp_path)
    program = "import os; print('blas', os.environ.get('OPENBLAS_NUM_THREADS'), flush=True)"
    try:
        running.start("default", [sys.executable, "-c", program],
                      env={k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"})
        running.start("told", [sys.executable, "-c", program],
                      env={**os.environ, "OPENBLAS_NUM_THREADS": "2"})
        running.wait_for_output(["default", "told"], "blas", timeout=30.0)
    finally:
        running.stop(timeout=5.0)
    assert "blas 1" in running.log("default").read_text()
    assert "blas 2" in running.log("told").read_text()
    assert os.environ.get("OPENBLAS_NUM_THREADS") == before  # this process's is unchanged
    # importing the package (the bring-up, the demo, the core) sets nothing in the importer
    imported = subprocess.run(
        [sys.executable, "-c", "import os, robot_tv_dynamics, robot_tv_dynamics.ros.bringup,"
         " robot_tv_dynamics.ros.demo, robot_tv_dynamics.bounds, robot_tv_dynamics.dynamics;"
         " print(os.environ.get('OPENBLAS_NUM_THREADS'))"],
        env={k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"},
        capture_output=True, text=True, timeout=120, check=True)
    assert imported.stdout.strip() == "None", imported.stdout


# ---------------------------------------------------------------------------- launch ↔ bring-up
class _Recorded:
    """A stand-in for a launch / launch_ros class: keeps its arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class _LaunchConfiguration(_Recorded):
    def perform(self, context):
        return context[self.args[0]]


#: Where the stubbed FindPackageShare says the package is installed.
SHARE = "/opt/share/robot_tv_dynamics"


class _FindPackageShare(_Recorded):
    def perform(self, context):
        return SHARE


def _stub_launch_modules(monkeypatch):
    """Minimal launch / launch_ros modules: enough to run the launch file's code."""
    import types

    modules = {
        "launch": {"LaunchDescription": _Recorded},
        "launch.actions": {"DeclareLaunchArgument": _Recorded, "OpaqueFunction": _Recorded},
        "launch.conditions": {"IfCondition": _Recorded},
        "launch.substitutions": {"LaunchConfiguration": _LaunchConfiguration,
                                 "PathJoinSubstitution": _Recorded,
                                 "PythonExpression": _Recorded},
        "launch_ros": {},
        "launch_ros.actions": {"Node": _Recorded},
        "launch_ros.substitutions": {"FindPackageShare": _FindPackageShare},
    }
    for name, attributes in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        monkeypatch.setitem(sys.modules, name, module)


def _launched_nodes(monkeypatch, **given):
    """(name → Node kwargs) the launch file creates for launch arguments ``given``."""
    _stub_launch_modules(monkeypatch)
    spec = importlib.util.spec_from_file_location("tv_dynamics_launch_stubbed", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    entities = description.args[0]
    declared = {e.args[0]: e.kwargs.get("default_value") for e in entities
                if isinstance(e, _Recorded) and "function" not in e.kwargs}
    assert set(declared) == ARGUMENTS
    context = {**{name: value for name, value in declared.items() if isinstance(value, str)},
               "config": str(CONFIG), **given}
    (opaque,) = [e for e in entities if "function" in e.kwargs]
    nodes = opaque.kwargs["function"](context)
    return {node.kwargs["name"]: node.kwargs for node in nodes}


def _bring_up_parameters(command):
    """The parameter sources of a bring-up command line, as the launch file writes them."""
    rest = command[4:]
    sources = []
    for i, item in enumerate(rest):
        if item == "--params-file":
            sources.append(rest[i + 1])
        elif item == "-p":
            key, _, value = rest[i + 1].partition(":=")
            sources.append({key: yaml.safe_load(value)})
    return sources


def _merged(sources):
    """Consecutive ``-p`` dicts of a bring-up command as one dict (as the launch file has)."""
    out: list = []
    for source in sources:
        if isinstance(source, dict) and out and isinstance(out[-1], dict):
            out[-1] = {**out[-1], **source}
        else:
            out.append(dict(source) if isinstance(source, dict) else source)
    return out


def test_the_cell_arguments_reach_every_node_alike_in_both_bring_ups(monkeypatch, tmp_path):
    from robot_tv_dynamics.ros import bringup
    from robot_tv_dynamics.ros.cell import CellOptions

    cell_file = tmp_path / "cell.yaml"
    cell_file.write_text("/**/dynamics_node:\n  ros__parameters:\n    publish_terms: false\n")
    urdf = str(tmp_path / "arm.urdf")
    nodes = _launched_nodes(
        monkeypatch, use_sim="true", urdf=urdf, joint_states="/ur/joint_states",
        robot_description="/robot_description", use_sim_time="true",
        params_file=str(cell_file), locked_joints="finger_joint, other=0.01", log_level="warn")
    cell = CellOptions("/ur/joint_states", "/robot_description", True, str(cell_file),
                       CellOptions.parse_joints("finger_joint, other=0.01"), "warn")
    commands = bringup.node_commands(urdf, use_sim=True, config=CONFIG, python="python3",
                                     cell=cell)
    expected = [str(CONFIG), str(cell_file), {"urdf_path": urdf},
                {"use_sim_time": True, "locked_joints": ["finger_joint", "other=0.01"]}]
    for name in ("dynamics_node", "monitor_node", "markers_node", "sim_node"):
        launched, command = nodes[name], commands[name]
        assert launched["parameters"] == expected, name
        # the same sources in the same order (consecutive -p merged as one dict)
        assert _merged(_bring_up_parameters(command)) == _merged(expected), command
        remaps = [("joint_states", "/ur/joint_states"), ("robot_description",
                                                        "/robot_description")]
        assert launched["remappings"] == remaps
        assert all(f"{old}:={new}" in command for old, new in remaps)
        assert launched["arguments"] == ["--ros-args", "--log-level", "warn"]
        assert command[-2:] == ["--log-level", "warn"]
    # the defaults add nothing to either
    nodes = _launched_nodes(monkeypatch)
    command = bringup.node_command("dynamics_node", config=CONFIG, python="python3")
    assert nodes["dynamics_node"]["remappings"] == [] and nodes["dynamics_node"]["arguments"] == []
    assert "--log-level" not in command and "use_sim_time:=true" not in command
    with pytest.raises(bringup.InvalidInputError, match="log_level"):
        CellOptions(log_level="loud")
    with pytest.raises(bringup.InvalidInputError, match="does not exist"):
        CellOptions(params_file=str(tmp_path / "missing.yaml"))


def test_config_urdf_path_is_kept_unless_the_urdf_argument_is_given(monkeypatch, tmp_path):
    from robot_tv_dynamics.ros import bringup

    config = tmp_path / "my.yaml"
    config.write_text("/**:\n  ros__parameters:\n    urdf_path: /robots/from_config.urdf\n")
    # not given: the config file's urdf_path stays (no override, in both bring-ups)
    nodes = _launched_nodes(monkeypatch, config=str(config))
    for name in NODES:
        assert nodes[name]["parameters"] == [str(config)], nodes[name]
        command = bringup.node_command(name, config=config, python="python3")
        assert _bring_up_parameters(command) == nodes[name]["parameters"]
        assert not any(item.startswith("urdf_path:=") for item in command)
    # given: it overrides the file, after it
    urdf = str(tmp_path / "arm.urdf")
    nodes = _launched_nodes(monkeypatch, config=str(config), urdf=urdf, namespace="arm1")
    for name in (*NODES, "sim_node"):
        assert nodes[name]["parameters"] == [str(config), {"urdf_path": urdf}]
        assert nodes[name]["namespace"] == "arm1" and nodes[name]["executable"] == name
        command = bringup.node_command(name, urdf=urdf, config=config, namespace="arm1",
                                       python="python3")
        assert _bring_up_parameters(command) == nodes[name]["parameters"]
        assert "__ns:=/arm1" in command
    # use_sim: sim_node carries the condition, on the use_sim argument; the always-on
    # nodes none (estimator_node's is on estimate and use_sim)
    nodes = _launched_nodes(monkeypatch, use_sim="true")
    condition = nodes["sim_node"]["condition"]
    assert condition.args[0].args[0] == "use_sim"
    assert all("condition" not in nodes[name] for name in NODES if name != "estimator_node")
    assert "condition" in nodes["estimator_node"]


def test_launch_gives_every_node_the_discovery_profile_as_the_bring_up(monkeypatch):
    from robot_tv_dynamics.ros import bringup

    for name in bringup.PROFILE_ENV:
        monkeypatch.delenv(name, raising=False)
    launched = _launched_nodes(monkeypatch, use_sim="true")
    profile = f"{SHARE}/config/{bringup.DISCOVERY_PROFILE}"
    assert len(launched) == 5  # the estimator_node name holds the last of its two
    for name, node in launched.items():
        assert node["additional_env"] == dict.fromkeys(bringup.PROFILE_ENV, profile), name
    # the bring-up sets the same variables (to its own install's file)
    child = bringup.child_environment({})
    assert {k: Path(child[k]).name for k in bringup.PROFILE_ENV} == dict.fromkeys(
        bringup.PROFILE_ENV, bringup.DISCOVERY_PROFILE)
    # a profile named where ros2 launch runs: the nodes get none of the package's
    monkeypatch.setenv("FASTDDS_DEFAULT_PROFILES_FILE", "/my.xml")
    for name, node in _launched_nodes(monkeypatch, use_sim="true").items():
        assert node["additional_env"] == {}, name


def test_readme_documents_the_launch_arguments():
    text = DOCS.read_text()
    for argument in ARGUMENTS:
        assert f"{argument}:=" in text, argument
    assert "urdf_path" in text and "config:=" in text


# ---------------------------------------------------------------------------- a real launch
def test_two_arms_from_the_launch_file_keep_their_outputs_and_diagnostics_apart(tmp_path):
    """The launch file run by launch_ros (skipped where launch_ros or an install is absent).

    Needs ``launch`` / ``launch_ros`` importable and the package in the ament index
    (``colcon build`` and its install prefix in ``AMENT_PREFIX_PATH``).
    """
    require_launch()
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from support.particle_lagrangian import find_example_robot_urdf
    from support.ros_harness import RosClient, node_env, unique_namespace

    from robot_tv_dynamics import RobotModel
    from robot_tv_dynamics.ros.robot_description import robot_name

    base = unique_namespace("launch").strip("/")
    models = {arm: RobotModel.from_urdf(find_example_robot_urdf(arm)) for arm in ("ur5", "panda")}
    arms = [(f"{base}/{arm}", find_example_robot_urdf(arm), "info" if arm == "ur5" else "warn")
            for arm in models]
    client = RosClient()
    torques = {arm: client.collect(JointState, f"/{base}/{arm}/generalized_torques")
               for arm in models}
    diagnostics = client.collect(DiagnosticArray, "/diagnostics")
    launched = Launched([{"namespace": namespace, "urdf": urdf, "use_sim": "true",
                          "joint_states": "driver/joint_states", "log_level": level}
                         for namespace, urdf, level in arms], tmp_path, node_env())
    wanted = {f"/{base}/{arm}/{node}: {task}" for arm, model in models.items()
              for node, task in [("dynamics_node", "input"), ("monitor_node", "input")]
              + [("monitor_node", body) for body in model.body_names]}
    try:
        client.spin_until(lambda: wanted <= {s.name for a in diagnostics for s in a.status}
                          and all(len(torques[arm]) >= 20 for arm in models), 180.0,
                          "both arms' torques and statuses from the launch file")
    finally:
        launched.stop()
        client.close()
    for arm, model in models.items():
        assert all(list(m.name) == list(model.joint_names) for m in torques[arm]), arm
    for array in diagnostics:
        for status in array.status:
            node = status.name.partition(": ")[0]
            owners = [arm for arm in models if node.startswith(f"/{base}/{arm}/")]
            if node.startswith(f"/{base}/"):
                assert len(owners) == 1, status.name
                assert status.hardware_id == robot_name(models[owners[0]]), status.name
