"""The ament_python package builds with colcon and installs what ROS 2 tools look for.

`colcon build` runs on this repository with every output directory (build, install,
log) in a temporary workspace, so the working tree is left untouched.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from glob import glob
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "robot_tv_dynamics"
COLCON_TIMEOUT_S = 300


def _setup_call() -> tuple[ast.Call, dict[str, object]]:
    """The setup(...) call of setup.py and its module-level literal constants."""
    tree = ast.parse((REPO / "setup.py").read_text(), filename="setup.py")
    constants: dict[str, object] = {}
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            try:
                constants[statement.targets[0].id] = ast.literal_eval(statement.value)
            except ValueError:
                pass
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "setup":
                return node, constants
    raise AssertionError("setup.py has no setup(...) call")


def declared_console_scripts() -> dict[str, str]:
    """Map executable name -> 'module:function' for every console_scripts entry in setup.py.

    setup.py is read, not run: the entry_points argument is evaluated with only the
    module's literal constants in scope (so `f"x = {package_name}.x:main"` works).
    """
    call, constants = _setup_call()
    node = next((kw.value for kw in call.keywords if kw.arg == "entry_points"), None)
    if node is None:
        return {}
    try:
        code = compile(ast.Expression(node), "setup.py", "eval")
        value = eval(code, {"__builtins__": {}}, dict(constants))
    except Exception as error:
        raise AssertionError(
            f"entry_points in setup.py must be a dict of lists built from literals: {error!r}"
        ) from None
    scripts = {}
    for line in value.get("console_scripts", []):
        name, _, target = line.partition("=")
        assert target.strip(), f"console_scripts entry {line!r} has no '= module:function'"
        scripts[name.strip()] = target.strip()
    return scripts


def test_console_scripts_parser_reads_name_and_target():
    scripts = declared_console_scripts()
    assert all(name and ":" in target for name, target in scripts.items())


@pytest.fixture(scope="module")
def colcon_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run colcon build on the repo in a temporary workspace; return its install base."""
    colcon = Path(sys.executable).parent / "colcon"
    if not colcon.is_file():
        pytest.fail(
            f"colcon not found next to {sys.executable}: run bash scripts/bootstrap.sh "
            "(requirements/dev.txt installs colcon-core, colcon-ros)"
        )
    workspace = tmp_path_factory.mktemp("colcon_ws")
    before = {name for name in ("build", "install", "log") if (REPO / name).exists()}
    command = [
        str(colcon),
        "--log-base", str(workspace / "log"),
        "build",
        "--paths", str(REPO),
        "--build-base", str(workspace / "build"),
        "--install-base", str(workspace / "install"),
        "--event-handlers", "console_direct+",
    ]
    result = subprocess.run(
        command,
        cwd=workspace,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=COLCON_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, (
        f"colcon build failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    )
    after = {name for name in ("build", "install", "log") if (REPO / name).exists()}
    assert after == before, f"colcon build wrote {sorted(after - before)} into the repo"
    return workspace / "install" / PACKAGE


def test_colcon_build_installs_ament_index_marker(colcon_install: Path):
    marker = colcon_install / "share/ament_index/resource_index/packages" / PACKAGE
    assert marker.is_file()


def test_colcon_build_installs_package_xml(colcon_install: Path):
    package_xml = colcon_install / "share" / PACKAGE / "package.xml"
    assert package_xml.is_file()
    assert package_xml.read_bytes() == (REPO / "package.xml").read_bytes()


def test_colcon_build_installs_python_package(colcon_install: Path):
    inits = glob(str(colcon_install / "lib/python3*/site-packages" / PACKAGE / "__init__.py"))
    assert len(inits) == 1, f"{PACKAGE}/__init__.py not installed under {colcon_install}/lib"


def test_colcon_build_installs_launch_and_config_files(colcon_install: Path):
    for pattern, folder in (("launch/*.launch.py", "launch"), ("config/*.yaml", "config"),
                            ("config/*.xml", "config"),
                            ("config/foxglove/*.json", "config/foxglove")):
        for source in glob(str(REPO / pattern)):
            installed = colcon_install / "share" / PACKAGE / folder / Path(source).name
            assert installed.is_file(), f"{pattern}: {installed} missing"


def test_every_console_script_is_an_executable_in_lib_package(colcon_install: Path):
    scripts = declared_console_scripts()
    lib = colcon_install / "lib" / PACKAGE
    for name in scripts:
        executable = lib / name
        assert executable.is_file(), f"console script {name!r} not installed as {executable}"
        assert os.access(executable, os.X_OK), f"{executable} is not executable"


#: Each core dependency of setup.py -> the rosdep key package.xml must name for it, or
#: None where rosdep has no key (then package.xml must say so in a comment, so a colcon
#: user knows `pip install .` brings it). Keys as in ros/rosdistro rosdep/*.yaml.
ROSDEP_KEYS = {
    "numpy": "python3-numpy",
    "scipy": "python3-scipy",
    "pin": "pinocchio",
    "pyyaml": "python3-yaml",
    "matplotlib": "python3-matplotlib",
    "rosbags": "python3-rosbags-pip",
    "mcap-ros2-support": "mcap-ros2-support",
    "cvxpy": "python3-cvxpy-pip",
    "toppra": "python3-toppra-pip",
    "example-robot-data": None,
    "clarabel": None,
    "scs": None,
    "dask": None,
}


def test_package_xml_names_every_core_dependency():
    import re
    import xml.etree.ElementTree as ElementTree

    _, constants = _setup_call()
    requirements = constants["INSTALL_REQUIRES"]
    assert isinstance(requirements, list)
    names = [re.match(r"[A-Za-z0-9_.-]+", str(r)).group(0).lower() for r in requirements]
    text = (REPO / "package.xml").read_text()
    depends = {e.text for e in ElementTree.fromstring(text).iter("exec_depend")}
    unknown = sorted(set(names) - set(ROSDEP_KEYS))
    assert not unknown, f"add a rosdep key (or None) for {unknown} to ROSDEP_KEYS"
    for name in names:
        key = ROSDEP_KEYS[name]
        if key is None:
            assert name in text, f"package.xml should say that pip installs {name}"
        else:
            assert key in depends, f"package.xml lacks <exec_depend>{key}</exec_depend> ({name})"
