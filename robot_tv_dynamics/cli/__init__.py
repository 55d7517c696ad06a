"""``robot-tv-dynamics``: the standalone command line (no ROS needed).

One module per subcommand, each with ``add_arguments(parser)``, ``run(args) -> exit
code`` and optionally ``DESCRIPTION``; each is registered by **one line** of
:data:`COMMANDS` (its name, its module, its one-line help):

* ``demo`` (the default when no subcommand is given): the simulated arm under payload
  loading with estimators, dynamics and monitor nodes over DDS (:mod:`.demo`);
* ``bounds``: mass-matrix bounds of a URDF, Theorems 2–4 (:mod:`.bounds`);
* ``evaluate``: a planned trajectory under a payload (:mod:`.evaluate`);
* ``retime``: the fastest timing of that path within the effort limits (:mod:`.retime`);
* ``excite``: an exciting trajectory for identification within the limits (:mod:`.excite`);
* ``record``: a simulated arm's joint_states bag, as a real arm records it (:mod:`.record`);
* ``identify``: physically consistent link inertias and friction from a bag (:mod:`.identify`);
* ``observe``: the generalized-momentum observer over a recorded bag (:mod:`.observe`);
* ``estimate``: the live payload estimator replayed over a recorded bag (:mod:`.estimate`);
* ``play``: a recorded bag's topics published live with ``/clock`` (:mod:`.play`; needs
  the ``[ros]`` extra);
* ``adapt``: adaptive controllers on the simulated arm, one run or the suite (:mod:`.adapt`).

A subcommand's module is imported only when the command line names it: ``--help`` and
a bad subcommand or option answer without NumPy, SciPy or Pinocchio. What the
subcommands share (loading a URDF, ``--lock``, a progress bar) is :mod:`.common`. No
library module imports this package.

Exit codes: 0 success, 1 ``evaluate`` found effort-limit violations, 2 bad input
(unreadable URDF, bad arguments), 130 interrupted. Errors are one line ``error: ...`` on
stderr, without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from robot_tv_dynamics.exceptions import RobotTvDynamicsError


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, its module (under this package) and its ``--help`` line."""

    name: str
    module: str
    help: str

    def load(self) -> ModuleType:
        """Import the subcommand's module (with ``add_arguments`` and ``run``)."""
        return importlib.import_module(f"{__name__}.{self.module}")


#: The subcommands, in ``--help`` order: one line registers one.
COMMANDS: tuple[Command, ...] = (
    Command("demo", "demo", "simulated arm under payload loading, estimators, dynamics and monitor nodes over DDS; writes run.mcap, report.png, summary.json (default)"),  # noqa: E501
    Command("bounds", "bounds", "mass-matrix bounds α₁, α₂ (Theorems 2–3) of a URDF's nominal parameters"),  # noqa: E501
    Command("evaluate", "evaluate", "a planned trajectory (YAML or rosbag2) under a payload: efforts of eq. (39), limit violations, max payload vs MoveIt's static estimate"),  # noqa: E501
    Command("retime", "retime", "retime a planned trajectory: the fastest timing of its path within effort limits"),  # noqa: E501
    Command("excite", "excite", "an exciting trajectory (Fourier series per joint) within the URDF position, velocity and effort limits, chosen for a well-conditioned regressor"),  # noqa: E501
    Command("record", "record", "a simulated arm's joint_states bag (efforts with friction, coloured noise, inertias off the URDF's): data to try identify/estimate/observe on"),  # noqa: E501
    Command("identify", "identify", "identify Θ and joint friction from a rosbag2/CSV of joint states with efforts, every body physically consistent (f(Φ) ⪰ εI)"),  # noqa: E501
    Command("estimate", "estimate", "payload estimate of one link's load from the measured efforts of a recorded bag (classical, projected or geometric; the estimator_node offline)"),  # noqa: E501
    Command("observe", "observe", "generalized-momentum observer over a recorded rosbag2: external joint torques and contacts, with Θ(t), Ψ(t) from the bag (generalized) or a constant Θ (classical)"),  # noqa: E501
    Command("play", "play", "publish a recorded bag's topics at their log times with /clock (--rate, --remap), so that nodes with use_sim_time:=true run on the recorded arm"),  # noqa: E501
    Command("adapt", "adapt", "an adaptive controller (Slotine–Li, natural, projected) on the simulated arm, one run or the suite: tracking, Θ̂, margins and mass-matrix bounds"),  # noqa: E501
)
#: Run when the command line names no subcommand (the README's main job).
DEFAULT_COMMAND = "demo"


def command_named(name: str) -> Command | None:
    """The entry of :data:`COMMANDS` called ``name``, if any."""
    return next((command for command in COMMANDS if command.name == name), None)


def build_parser(only: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser with the subcommands of :data:`COMMANDS`.

    Args:
        only: the subcommands whose modules are imported and whose options are added
            (None: all of them); the others are listed by name and help line only, so
            that parsing a command line imports the one module it names.
    """
    parser = argparse.ArgumentParser(
        prog="robot-tv-dynamics",
        description="Robot arms with time-dependent inertial parameters (standalone tools).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        if only is not None and command.name not in only:
            subparsers.add_parser(command.name, help=command.help, add_help=False)
            continue
        module = command.load()
        sub = subparsers.add_parser(
            command.name, help=command.help,
            description=getattr(module, "DESCRIPTION", None) or command.help)
        module.add_arguments(sub)
        sub.set_defaults(handler=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``robot-tv-dynamics``; returns the exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments:
        arguments = [DEFAULT_COMMAND]
    # the subcommand is the first word (the top level has no options but --help)
    named = [arguments[0]] if command_named(arguments[0]) is not None else []
    parser = build_parser(only=named)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:  # argparse already printed its usage message
        return int(exit_.code) if isinstance(exit_.code, int) else 2
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handler(args))
    except RobotTvDynamicsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `robot-tv-dynamics bounds ... | head`
        return 0
