"""``robot-tv-dynamics``: the standalone command line (no ROS needed).

One module per subcommand, each with ``NAME``, ``HELP``, ``DESCRIPTION`` (optional),
``add_arguments(parser)`` and ``run(args) -> exit code``, listed in :data:`COMMANDS`:

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
* ``adapt``: adaptive controllers on the simulated arm, one run or the suite (:mod:`.adapt`).

What they share (loading a URDF, ``--lock``, a progress bar) is :mod:`.common`. No
library module imports this package.

Exit codes: 0 success, 1 ``evaluate`` found effort-limit violations, 2 bad input
(unreadable URDF, bad arguments), 130 interrupted. Errors are one line ``error: ...`` on
stderr, without a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from robot_tv_dynamics.cli import (
    adapt,
    bounds,
    demo,
    estimate,
    evaluate,
    excite,
    identify,
    observe,
    record,
    retime,
)
from robot_tv_dynamics.exceptions import RobotTvDynamicsError

#: The subcommands, in ``--help`` order.
COMMANDS: tuple[ModuleType, ...] = (
    demo, bounds, evaluate, retime, excite, record, identify, estimate, observe, adapt)
#: Run when the command line names no subcommand (the README's main job).
DEFAULT_COMMAND = "demo"


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="robot-tv-dynamics",
        description="Robot arms with time-dependent inertial parameters (standalone tools).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        sub = subparsers.add_parser(
            command.NAME, help=command.HELP,
            description=getattr(command, "DESCRIPTION", None) or command.HELP)
        command.add_arguments(sub)
        sub.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``robot-tv-dynamics``; returns the exit code."""
    parser = build_parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments:
        arguments = [DEFAULT_COMMAND]
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
