"""The top-level command line: every subcommand listed, modules imported only when named."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from examples import REPO

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


def test_the_package_imports_early_stop_before_anything_else() -> None:
    """A node's stop signal during its imports exits 0 only once early_stop is loaded."""
    import ast

    import robot_tv_dynamics

    tree = ast.parse(Path(robot_tv_dynamics.__file__).read_text(encoding="utf-8"))
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
               and getattr(node, "module", None) != "__future__"]
    first = imports[0]
    assert isinstance(first, ast.ImportFrom) and first.module == "robot_tv_dynamics"
    assert [alias.name for alias in first.names] == ["early_stop"]


def test_subcommand_help_prints_what_it_means(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["estimate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "95 % intervals" in text and "%%" not in text
    assert cli.main(["record", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "sweep" not in text  # record plays one trajectory on one URDF
    assert "--effort-gain" in text and "--joint-order" in text
