"""The core (robot_tv_dynamics/ minus ros/) never imports rclpy or message types (STYLE.md 1)."""

from __future__ import annotations

import ast
import fnmatch
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "robot_tv_dynamics"
CORE = sorted(PACKAGE.glob("*.py"))
#: Imported names (or their first component) the core must not use, as fnmatch patterns.
FORBIDDEN_TOP = ("rclpy", "*_msgs", "builtin_interfaces", "rcl_interfaces", "rosidl*")
ROS_LAYER = "robot_tv_dynamics.ros"


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import anywhere in the tree, functions included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            # `from robot_tv_dynamics import ros` names the ROS layer too
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            # relative: `from .ros import x` / `from . import ros` inside the package
            base = "robot_tv_dynamics" + (f".{node.module}" if node.module else "")
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def is_forbidden(module: str) -> bool:
    top = module.split(".")[0]
    if any(fnmatch.fnmatchcase(top, pattern) for pattern in FORBIDDEN_TOP):
        return True
    return module == ROS_LAYER or module.startswith(ROS_LAYER + ".")


def test_the_core_has_modules_to_check():
    names = {path.name for path in CORE}
    assert {"__init__.py", "cli.py", "demo.py", "model.py", "paths.py"} <= names


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_core_module_imports_no_rclpy_no_messages_and_not_the_ros_layer(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    bad = [f"{path.name}:{line}: {module}" for line, module in imported_modules(tree)
           if is_forbidden(module)]
    assert not bad, "the core imports ROS code:\n" + "\n".join(bad)


def test_the_forbidden_patterns_catch_what_they_should():
    for module in ("rclpy", "rclpy.node", "std_msgs.msg", "sensor_msgs", "builtin_interfaces.msg",
                   "rcl_interfaces.msg", "rosidl_runtime_py", "robot_tv_dynamics.ros",
                   "robot_tv_dynamics.ros.sim_node"):
        assert is_forbidden(module), module
    for module in ("robot_tv_dynamics.model", "robot_tv_dynamics.rosette", "rosbags.highlevel",
                   "numpy", "yaml", "ament_index_python.packages"):
        assert not is_forbidden(module), module
    tree = ast.parse("def f():\n    from robot_tv_dynamics import ros\n    import rclpy\n")
    assert [m for _, m in imported_modules(tree) if is_forbidden(m)] == [
        "robot_tv_dynamics.ros", "rclpy"]


def test_importing_the_core_and_the_cli_loads_no_rclpy():
    code = ("import sys\n"
            "import robot_tv_dynamics, robot_tv_dynamics.cli, robot_tv_dynamics.demo, "
            "robot_tv_dynamics.bounds, robot_tv_dynamics.evaluation\n"
            "robot_tv_dynamics.cli.build_parser()\n"
            "loaded = sorted(m for m in sys.modules if m == 'rclpy' or m.startswith("
            "('rclpy.', 'robot_tv_dynamics.ros')))\n"
            "print(loaded)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


def dynamic_imports(tree: ast.AST) -> list[str]:
    """The innermost enclosing function of every importlib.import_module / __import__ call."""
    found = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Call) and (
                    getattr(child.func, "attr", None) == "import_module"
                    or getattr(child.func, "id", None) in ("import_module", "__import__")):
                found.append(scope)
            inner = (child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                     else scope)
            visit(child, inner)

    visit(tree, "<module>")
    return found


def test_the_only_way_into_the_ros_layer_is_the_cli_demo_handler():
    """By name, when `demo` runs (cli.run_demo); nothing else in the core imports by name."""
    from robot_tv_dynamics import cli

    for path in CORE:
        scopes = dynamic_imports(ast.parse(path.read_text(), filename=str(path)))
        assert scopes == (["run_demo"] if path.name == "cli.py" else []), (path.name, scopes)
    assert cli.DEMO_RUNNER == "robot_tv_dynamics.ros.demo"
    assert cli.build_parser().parse_args(["demo"]).handler is cli.run_demo
