"""Layering of the core (robot_tv_dynamics/ minus ros/): no rclpy, no cycles, nobody imports cli."""

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
#: Every module of the core, subpackages included (the ROS layer ros/ is not the core).
CORE = sorted(path for path in PACKAGE.rglob("*.py")
              if "ros" not in path.relative_to(PACKAGE).parts[:-1])
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


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_the_core_has_modules_to_check():
    names = {module_name(path) for path in CORE}
    assert {"robot_tv_dynamics", "robot_tv_dynamics.cli", "robot_tv_dynamics.demo",
            "robot_tv_dynamics.model", "robot_tv_dynamics.paths",
            "robot_tv_dynamics.bounds.certified", "robot_tv_dynamics.loading.fill"} <= names
    assert not any(name.startswith("robot_tv_dynamics.ros") for name in names)


@pytest.mark.parametrize("path", CORE, ids=module_name)
def test_core_module_imports_no_rclpy_no_messages_and_not_the_ros_layer(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    bad = [f"{module_name(path)}:{line}: {module}" for line, module in imported_modules(tree)
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
    return [scope for scope, _ in string_imports(tree)]


def _is_import_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        getattr(node.func, "attr", None) == "import_module"
        or getattr(node.func, "id", None) in ("import_module", "__import__"))


def _module_constants(tree: ast.AST) -> dict[str, str]:
    """Module-level ``NAME = "literal"`` (annotated or not) assignments."""
    constants = {}
    for node in getattr(tree, "body", []):
        value = getattr(node, "value", None)
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        constants.update({t.id: value.value for t in targets if isinstance(t, ast.Name)})
    return constants


def _literal_target(argument: ast.AST | None, constants: dict[str, str]) -> str | None:
    """The module a string import names: a literal, a module constant, or an f-string's
    literal head (``f"robot_tv_dynamics.ros.{x}"`` → ``robot_tv_dynamics.ros.``, with
    ``{__name__}`` read as the module's name); None when nothing of it is literal."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    if isinstance(argument, ast.Name):
        return constants.get(argument.id)
    if not isinstance(argument, ast.JoinedStr):
        return None
    head = ""
    for part in argument.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            head += part.value
        elif (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name)
              and part.value.id in constants):
            head += constants[part.value.id]
        else:
            break
    return head or None


def string_imports(tree: ast.AST, module: str = "") -> list[tuple[str, str | None]]:
    """(innermost enclosing function, named module or None) of every import by name.

    ``module``: the module's own name, what ``{__name__}`` in an f-string stands for.
    """
    constants = {**_module_constants(tree), **({"__name__": module} if module else {})}
    found: list[tuple[str, str | None]] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_import_call(child):
                argument = child.args[0] if child.args else None  # type: ignore[attr-defined]
                found.append((scope, _literal_target(argument, constants)))
            inner = (child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                     else scope)
            visit(child, inner)

    visit(tree, "<module>")
    return found


#: The core's imports by name besides the demo's: the package's lazy public names and
#: the command line's lazy subcommands (neither reaches the ROS layer: checked below).
LAZY_IMPORTS = {"robot_tv_dynamics": ["__getattr__", "__getattr__"],
                "robot_tv_dynamics.cli": ["load"]}


#: The command-line handlers that reach the ROS layer by name, and the functions that do.
ROS_HANDLERS = {"robot_tv_dynamics.cli.demo": ["run"], "robot_tv_dynamics.cli.play": ["run"],
                "robot_tv_dynamics.cli.excite": ["play_options", "play_on_arm"]}


def test_the_only_ways_into_the_ros_layer_are_the_cli_demo_play_and_excite_play_handlers():
    """By name, when `demo`, `play` or `excite --play` runs; nothing else in the core
    imports by name."""
    import robot_tv_dynamics
    from robot_tv_dynamics import cli
    from robot_tv_dynamics.cli import demo, excite, play

    for path in CORE:
        scopes = dynamic_imports(ast.parse(path.read_text(), filename=str(path)))
        expected = ROS_HANDLERS.get(module_name(path), LAZY_IMPORTS.get(module_name(path), []))
        assert scopes == expected, (module_name(path), scopes)
    assert demo.RUNNER == "robot_tv_dynamics.ros.demo"
    assert play.RUNNER == "robot_tv_dynamics.ros.play"
    assert excite.RUNNER == "robot_tv_dynamics.ros.execute"
    assert cli.build_parser().parse_args(["demo"]).handler is demo.run
    assert cli.build_parser().parse_args(["play", "x.mcap"]).handler is play.run
    # The package's lazy __getattr__ never imports the ROS layer (once another test has
    # imported robot_tv_dynamics.ros by name, the attribute exists: ask the hook itself).
    with pytest.raises(AttributeError, match="import robot_tv_dynamics.ros explicitly"):
        robot_tv_dynamics.__getattr__("ros")
    assert all(not command.module.startswith(".") for command in cli.COMMANDS)


#: The applications on top of the library (the ROS layer aside): the command line, the
#: demo and the sweeps. The library is the rest of the core.
APPLICATIONS = ("robot_tv_dynamics.cli", "robot_tv_dynamics.demo", "robot_tv_dynamics.sweep")
#: What the library never imports at import time (a lazy import inside a function is fine).
APPLICATION_LIBRARIES = ("argparse", "matplotlib", "dask", "distributed", "rosbags", "mcap")


def in_package(module: str, packages: tuple[str, ...]) -> bool:
    """Whether ``module`` (or a module path's literal head, ``"pkg."``) is in one of them."""
    return any(module.rstrip(".") == p or module.startswith(p + ".") for p in packages)


def string_import_violations(module: str, tree: ast.AST) -> list[str]:
    """The imports by name in ``module`` that cross the layering: the ROS layer from the
    core (the handlers of :data:`ROS_HANDLERS` aside), an application from the library."""
    bad = []
    for scope, target in string_imports(tree, module):
        if target is None:
            continue
        if in_package(target, (ROS_LAYER,)) and scope not in ROS_HANDLERS.get(module, []):
            bad.append(f"{module} ({scope}): the ROS layer {target!r}")
        elif in_package(target, APPLICATIONS) and not in_package(module, APPLICATIONS):
            bad.append(f"{module} ({scope}): the application {target!r}")
    return bad


@pytest.mark.parametrize("path", CORE, ids=module_name)
def test_core_module_imports_by_name_nothing_its_layer_may_not_import(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    assert string_import_violations(module_name(path), tree) == []


def test_the_string_import_check_reads_literals_constants_and_f_strings():
    tree = ast.parse("import importlib\nRUNNER = 'robot_tv_dynamics.ros.demo'\n"
                     "def a():\n    importlib.import_module(RUNNER)\n"
                     "def b(x):\n    importlib.import_module(f'robot_tv_dynamics.ros.{x}')\n"
                     "def c():\n    __import__('robot_tv_dynamics.cli.bounds')\n"
                     "def d(x):\n    importlib.import_module(f'{__name__}.{x}')\n"
                     "def e(x):\n    importlib.import_module(x)\n")
    assert string_imports(tree, "robot_tv_dynamics.demo") == [
        ("a", "robot_tv_dynamics.ros.demo"), ("b", "robot_tv_dynamics.ros."),
        ("c", "robot_tv_dynamics.cli.bounds"), ("d", "robot_tv_dynamics.demo."), ("e", None)]
    assert string_import_violations("robot_tv_dynamics.model", tree) == [
        "robot_tv_dynamics.model (a): the ROS layer 'robot_tv_dynamics.ros.demo'",
        "robot_tv_dynamics.model (b): the ROS layer 'robot_tv_dynamics.ros.'",
        "robot_tv_dynamics.model (c): the application 'robot_tv_dynamics.cli.bounds'"]
    # an application may import another by name; the demo handler may reach the ROS layer
    assert string_import_violations("robot_tv_dynamics.demo", tree) == [
        "robot_tv_dynamics.demo (a): the ROS layer 'robot_tv_dynamics.ros.demo'",
        "robot_tv_dynamics.demo (b): the ROS layer 'robot_tv_dynamics.ros.'"]


def library_modules() -> list[str]:
    """Every module of the library: the core minus the applications and ``__main__``."""
    return [name for name in map(module_name, CORE)
            if not in_package(name, APPLICATIONS) and not name.endswith("__main__")]


def import_time_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of the imports that run when the module is imported: those outside
    functions (a class body and ``if``/``try`` blocks at module level run too)."""
    found = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(imported_modules(child))
            visit(child)

    visit(tree)
    return found


def test_the_library_part_has_modules_to_check():
    modules = library_modules()
    assert {"robot_tv_dynamics", "robot_tv_dynamics.model", "robot_tv_dynamics.control.report",
            "robot_tv_dynamics.bags", "robot_tv_dynamics.bounds.parallel"} <= set(modules)
    assert not any(in_package(name, APPLICATIONS) for name in modules)


@pytest.mark.parametrize("path", [p for p in CORE if module_name(p) in library_modules()],
                         ids=module_name)
def test_library_module_imports_no_application_library_at_import_time(path):
    """argparse, matplotlib, Dask, rosbags, mcap: only inside the function that needs them."""
    tree = ast.parse(path.read_text(), filename=str(path))
    bad = [f"{module_name(path)}:{line}: {module}" for line, module in import_time_imports(tree)
           if module.split(".")[0] in APPLICATION_LIBRARIES]
    assert not bad, "\n".join(bad)


def test_the_import_time_check_skips_function_bodies_only():
    tree = ast.parse("import argparse\ntry:\n    import dask\nexcept ImportError:\n    pass\n"
                     "class A:\n    import mcap\n"
                     "def f():\n    import matplotlib\n"
                     "    def g():\n        import rosbags\n")
    assert [m for _, m in import_time_imports(tree)] == ["argparse", "dask", "mcap"]


#: What the library is built on; what they load for themselves does not count against it
#: (TOPP-RA imports matplotlib.pyplot; SciPy's array API shim loads ``numpy.f2py``, which
#: imports argparse).
LIBRARY_DEPENDENCIES = ("numpy", "scipy", "scipy.linalg", "scipy.signal", "scipy.optimize",
                        "scipy.interpolate", "scipy.spatial", "scipy.stats", "pinocchio",
                        "cvxpy", "toppra", "yaml")


def test_importing_the_library_loads_no_plotting_cluster_or_bag_library():
    """Importing every library module adds none of matplotlib, Dask, rosbags, mcap to what
    its dependencies load themselves (argparse: the static check above)."""
    heavy = tuple(m for m in APPLICATION_LIBRARIES if m != "argparse")
    code = ("import sys\n"
            f"def heavy():\n    return {{m for m in sys.modules if m.split('.')[0] in {heavy!r}}}\n"
            + "".join(f"import {name}\n" for name in LIBRARY_DEPENDENCIES)
            + "before = heavy()\n"
            + "".join(f"import {name}\n" for name in library_modules())
            + "print(sorted(heavy() - before))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout[-3000:]


def type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) blocks."""
    return {id(node) for branch in ast.walk(tree) if isinstance(branch, ast.If)
            and getattr(branch.test, "id", getattr(branch.test, "attr", None)) == "TYPE_CHECKING"
            for node in ast.walk(branch)}


def runtime_imports(path: Path, *, type_checking: bool = False) -> set[str]:
    """Package modules ``path`` imports at run time (not under ``if TYPE_CHECKING:``).

    With ``type_checking`` the imports under ``if TYPE_CHECKING:`` count too.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    skipped = set() if type_checking else type_checking_nodes(tree)
    modules = {module_name(p) for p in CORE}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for _, name in imported_modules(node):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module_name(path):
                found.add(name)
    return found


def import_graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    """Module → core modules it imports; a module also depends on its package's __init__.

    With ``type_checking`` the imports for type checking alone count as edges too.
    """
    graph = {}
    for path in CORE:
        name = module_name(path)
        edges = runtime_imports(path, type_checking=type_checking)
        graph[name] = {e for e in edges if not name.startswith(e + ".")}  # own package: ok
    return graph


def modules_on_cycles(graph: dict[str, set[str]]) -> list[str]:
    """The modules left after repeatedly removing those nothing imports (Kahn): cycles."""
    indegree = {name: 0 for name in graph}
    for edges in graph.values():
        for target in edges:
            indegree[target] += 1
    ready = [name for name, degree in indegree.items() if degree == 0]
    while ready:
        name = ready.pop()
        for target in graph[name]:
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    return sorted(name for name, degree in indegree.items() if degree > 0)


def test_the_import_graph_of_the_core_has_no_cycle():
    graph = import_graph()
    assert len(graph) > 40 and any(graph.values())
    assert modules_on_cycles(graph) == []


def test_the_import_graph_has_no_cycle_counting_type_checking_imports():
    """A dependency hidden under ``if TYPE_CHECKING:`` is still one: no circle through it."""
    graph = import_graph(type_checking=True)
    assert modules_on_cycles(graph) == []


def test_type_checking_imports_are_read():
    tree = ast.parse("from typing import TYPE_CHECKING\nimport numpy\n"
                     "if TYPE_CHECKING:\n    from robot_tv_dynamics.model import RobotModel\n")
    hidden = type_checking_nodes(tree)
    names = [m for node in ast.walk(tree) if id(node) in hidden
             for _, m in imported_modules(node)]
    assert "robot_tv_dynamics.model" in names and "numpy" not in names


def test_the_cycle_check_finds_a_cycle():
    assert modules_on_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c"]
    assert modules_on_cycles({"a": {"b"}, "b": set(), "d": {"a", "b"}}) == []


def test_no_library_module_imports_the_cli():
    """The CLI is the top: only cli/ itself and ``__main__`` entry points import it."""
    offenders = [module_name(path) for path in CORE
                 if not module_name(path).startswith("robot_tv_dynamics.cli")
                 and path.name != "__main__.py"
                 and any(m == "robot_tv_dynamics.cli" or m.startswith("robot_tv_dynamics.cli.")
                         for m in runtime_imports(path))]
    assert not offenders, offenders



def private_cross_module_imports(tree: ast.AST, module: str, *, is_package: bool = False
                                 ) -> list[tuple[int, str]]:
    """(line, "module.name") of every ``from robot_tv_dynamics.x import _name`` (or the
    relative form) in ``module`` that takes a private name from another module (dunders such
    as ``__version__`` are not private). ``is_package``: ``module`` is a package's __init__."""
    found = []
    parts = module.split(".")
    own_package = parts if is_package else parts[:-1]  # what a relative import's level 1 is
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = own_package[:len(own_package) - node.level + 1]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if source.split(".")[0] != "robot_tv_dynamics" or source == module:
            continue
        found += [(node.lineno, f"{source}.{alias.name}") for alias in node.names
                  if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


@pytest.mark.parametrize("path", CORE, ids=module_name)
def test_core_module_takes_no_private_name_from_another_module(path):
    """A helper two modules share has a public name where it lives (or lives where both are)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    bad = [f"{module_name(path)}:{line}: {taken}" for line, taken in private_cross_module_imports(
        tree, module_name(path), is_package=path.name == "__init__.py")]
    assert not bad, "private names imported across modules:\n" + "\n".join(bad)


def test_the_private_import_check_catches_what_it_should():
    tree = ast.parse("from robot_tv_dynamics.loading.state import _finite, LoadState\n"
                     "from .geometry import _POWERS\n"
                     "from robot_tv_dynamics import __version__\n"
                     "from robot_tv_dynamics.loading.fill import _own\n"
                     "from numpy import _private\n"
                     "def f():\n    from ..bounds.box import _chain\n")
    assert private_cross_module_imports(tree, "robot_tv_dynamics.loading.fill") == [
        (1, "robot_tv_dynamics.loading.state._finite"),
        (2, "robot_tv_dynamics.loading.geometry._POWERS"),
        (7, "robot_tv_dynamics.bounds.box._chain")]
    # in a package's __init__, level 1 is the package itself
    package = ast.parse("from .state import _finite\nfrom .. import _helpers\n")
    assert private_cross_module_imports(package, "robot_tv_dynamics.loading", is_package=True) == [
        (1, "robot_tv_dynamics.loading.state._finite"), (2, "robot_tv_dynamics._helpers")]
