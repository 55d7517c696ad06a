"""The observer subpackage is core: no rclpy, no message types, not the ROS layer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

OBSERVER = Path(__file__).resolve().parents[2] / "robot_tv_dynamics" / "observer"
ALLOWED = {"exceptions", "inertia", "model", "dynamics", "simulation", "loading", "filters",
           "evaluation", "observer"}


@pytest.mark.parametrize("path", sorted(OBSERVER.glob("*.py")), ids=lambda p: p.name)
def test_observer_module_imports_only_the_core_it_may(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                   else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for module in modules:
            top = module.split(".")[0]
            assert top != "rclpy" and not top.endswith("_msgs"), f"{path.name}: {module}"
            if top == "robot_tv_dynamics":
                assert module.split(".")[1] in ALLOWED, f"{path.name}: {module}"
