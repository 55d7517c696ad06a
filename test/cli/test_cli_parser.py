"""The top-level command line: every subcommand listed, modules imported only when named."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.examples import REPO

from robot_tv_dynamics import cli

#: Loaded by a subcommand's run, never by listing or parsing the command line.
HEAVY = ("pinocchio", "scipy", "scipy.stats", "numpy", "matplotlib", "rclpy", "toppra")


def loaded_after(code: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter; it leaves its result in ``out``."""
    program = (
        "import contextlib, io, json, sys\n" + code + "\n"
        f"out['heavy'] = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(json.dumps(out))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", program], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_help_lists_every_subcommand_with_its_help_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    text = capsys.readouterr().out
    names = [command.name for command in cli.COMMANDS]
    assert {"demo", "bounds", "evaluate", "retime", "excite", "identify", "estimate",
            "observe"} <= set(names)
    assert len(set(names)) == len(names)
    for command in cli.COMMANDS:
        assert command.name in text and command.help.split()[0] in text, command.name


def test_every_registered_module_has_add_arguments_and_run() -> None:
    for command in cli.COMMANDS:
        module = command.load()
        assert callable(module.add_arguments) and callable(module.run), command.name
        parser = cli.build_parser(only=[command.name])
        subparsers = next(action for action in parser._actions
                          if isinstance(action, argparse._SubParsersAction))
        assert subparsers.choices[command.name].get_default("handler") is module.run


@pytest.mark.parametrize("argv", [["--help"], ["no-such-command"], ["--no-such-option"],
                                  ["bounds", "--help"], ["bounds", "--time-limit", "-3"]],
                         ids=" ".join)
def test_help_and_argument_errors_load_no_heavy_module(argv: list[str]) -> None:
    out = loaded_after(
        "from robot_tv_dynamics import cli\n"
        "quiet = io.StringIO()\n"
        "with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):\n"
        f"    code = cli.main({argv!r})\n"
        "out = {'code': code}")
    assert out["heavy"] == []
    assert out["code"] == (0 if argv[-1] == "--help" else 2)


def test_importing_the_package_and_building_the_parser_loads_no_heavy_module() -> None:
    out = loaded_after("import robot_tv_dynamics, robot_tv_dynamics.cli as cli\n"
                       "cli.build_parser(only=[])\nout = {}")
    assert out["heavy"] == []


def test_the_public_names_still_import_from_the_package() -> None:
    import robot_tv_dynamics

    for name in robot_tv_dynamics.__all__:
        assert getattr(robot_tv_dynamics, name) is not None, name
    assert robot_tv_dynamics.inertia.pseudo_inertia is robot_tv_dynamics.pseudo_inertia
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = robot_tv_dynamics.no_such_name  # type: ignore[attr-defined]


#: Prints the SIGINT and SIGTERM handlers (their names) before and after ``{imports}``.
_HANDLERS = """import signal
def handlers():
    return [getattr(h, "name", getattr(h, "__name__", str(h)))
            for h in map(signal.getsignal, (signal.SIGINT, signal.SIGTERM))]
before = handlers()
{imports}
print(before, handlers())
"""


def _handlers_in_a_process_named(tmp_path: Path, script: str, imports: str
                                 ) -> tuple[list[str], list[str]]:
    """Run ``imports`` in a script file called ``script`` (a console script's name).

    Returns:
        The SIGINT and SIGTERM handlers before and after the imports.
    """
    path = tmp_path / script
    path.write_text(_HANDLERS.format(imports=imports))
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    before, _, after = done.stdout.strip().partition("] [")
    return before.strip("[]").split(", "), after.strip("[]").split(", ")


def test_importing_the_library_installs_no_signal_handler_even_in_a_node(tmp_path) -> None:
    """A process named like a node executable: the library's import leaves the signals alone."""
    library = ("import robot_tv_dynamics, robot_tv_dynamics.model, "
               "robot_tv_dynamics.consistency, robot_tv_dynamics.bounds")
    before, after = _handlers_in_a_process_named(tmp_path, "monitor_node", library)
    assert after == before and "'_exit_now'" not in after


def test_the_ros_layer_makes_a_stop_while_importing_exit_0_in_an_executable(tmp_path) -> None:
    """The executables' early stop: installed by the ROS layer's import, in a node only."""
    ros = "import robot_tv_dynamics.ros"
    assert _handlers_in_a_process_named(tmp_path, "monitor_node", ros)[1] == [
        "'_exit_now'", "'_exit_now'"]
    before, after = _handlers_in_a_process_named(tmp_path, "a_user_script", ros)
    assert after == before and "'_exit_now'" not in after


def test_the_ros_layer_and_the_node_entry_points_install_early_stop_first() -> None:
    """Nothing heavier runs before the early handlers: they are the ROS layer's first import
    and each console-script entry point's first call."""
    import ast

    from robot_tv_dynamics.ros import entry_points

    package = ast.parse((REPO / "robot_tv_dynamics" / "ros" / "__init__.py").read_text())
    imports = [node for node in package.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert [(node.module, [a.name for a in node.names]) for node in imports][:1] == [
        ("robot_tv_dynamics.ros", ["early_stop"])]
    tree = ast.parse(Path(entry_points.__file__).read_text(encoding="utf-8"))
    factory = next(node for node in ast.walk(tree)
                   if isinstance(node, ast.FunctionDef) and node.name == "_node_main")
    main = next(node for node in factory.body if isinstance(node, ast.FunctionDef))
    assert ast.unparse(main.body[0]) == "early_stop.install(name)"


def test_subcommand_help_prints_what_it_means(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["estimate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "95 % intervals" in text and "%%" not in text
    assert cli.main(["record", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "sweep" not in text  # record plays one trajectory on one URDF
    assert "--effort-gain" in text and "--joint-order" in text
