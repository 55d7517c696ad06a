"""What the subcommands share: loading a URDF with a clean message, options, a progress bar."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError, URDFError

if TYPE_CHECKING:  # imported where used: building the parser loads neither NumPy nor Pinocchio
    from robot_tv_dynamics.bounds import SearchProgress
    from robot_tv_dynamics.model import LockedJoints, RobotModel


@contextlib.contextmanager
def _native_stderr_captured() -> Iterator[list[str]]:
    """Capture what native code (urdfdom, Pinocchio) writes to file descriptor 2.

    Yields a list that receives the captured lines after the block, so that a failure
    can quote them in its one-line message instead of spilling them on the terminal.
    """
    lines: list[str] = []
    try:
        saved = os.dup(2)
    except OSError:  # pragma: no cover - no fd 2 (embedded interpreters)
        yield lines
        return
    with tempfile.TemporaryFile(mode="w+b") as sink:
        sys.stderr.flush()
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", errors="replace")
            lines.extend(line.strip() for line in text.splitlines() if line.strip())


def load_model(path: str, locked_joints: LockedJoints | None = None) -> RobotModel:
    """Load a URDF, turning native parser chatter into the error message.

    Args:
        path: the URDF file.
        locked_joints: joints made fixed, as :class:`~robot_tv_dynamics.model.RobotModel`
            takes them (e.g. from :func:`lock_option`).

    Raises:
        URDFError: unreadable or malformed URDF (the parser's own first complaint is
            appended to the message).
        UnknownNameError, InvalidInputError: a bad locked joint.
    """
    from robot_tv_dynamics.model import RobotModel

    caught: RobotTvDynamicsError | None = None
    model: RobotModel | None = None
    with _native_stderr_captured() as native:
        try:
            model = RobotModel.from_urdf(path, locked_joints)
        except RobotTvDynamicsError as error:
            caught = error
    if model is not None:
        for line in native:  # warnings of a successful parse are passed on
            print(line, file=sys.stderr)
        return model
    if caught is None:  # pragma: no cover - from_urdf either returns or raises
        raise URDFError(path, "could not be loaded")
    complaints = [line for line in native if line.lower().startswith("error:")]
    if complaints and type(caught) is URDFError:
        detail = complaints[0].split(":", 1)[1].strip()
        raise URDFError(caught.source, f"{caught.problem}: {detail}") from None
    raise caught


class ProgressBar:
    """A plain-text progress bar on a stream, redrawn in place (carriage return).

    Called with a :class:`~robot_tv_dynamics.bounds.SearchProgress` (or anything with
    ``fraction``, ``gap``, ``elapsed_s``, ``time_limit_s`` and ``boxes``).
    """

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        """Draw on ``stream`` with a bar of ``width`` characters."""
        self.stream = stream
        self.width = width
        self.drawn = False

    def __call__(self, progress: SearchProgress) -> None:
        """Redraw for one :class:`~robot_tv_dynamics.bounds.SearchProgress` report."""
        filled = int(round(self.width * min(max(progress.fraction, 0.0), 1.0)))
        gap = "—" if not math.isfinite(progress.gap) else f"{100 * progress.gap:6.2f} %"
        self.stream.write(
            f"\rcertified search [{'#' * filled}{'.' * (self.width - filled)}] "
            f"{progress.elapsed_s:6.1f}/{progress.time_limit_s:g} s  gap {gap}  "
            f"boxes {progress.boxes}")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """End the line the bar was drawn on."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


#: Help of ``--lock`` (every subcommand that loads a URDF).
LOCK_HELP = ("lock a joint (e.g. a gripper finger) at POSITION [rad or m], or at 0 clipped "
             "into its limits; its links merge into the parent body and it leaves the "
             "dofs (repeatable)")


def add_lock_argument(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable ``--lock JOINT[=POSITION]`` option."""
    parser.add_argument("--lock", action="append", default=[], metavar="JOINT[=POSITION]",
                        help=LOCK_HELP)


def lock_option(items: Sequence[str]) -> dict[str, float | None] | None:
    """The ``--lock`` values as ``locked_joints`` (None when none is given).

    Raises:
        InvalidInputError: a malformed entry or a joint given twice.
    """
    from robot_tv_dynamics.model import parse_locked_joints

    return parse_locked_joints(items, "--lock") if items else None


def positive_float(text: str) -> float:
    """Argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def positive_int(text: str) -> int:
    """Argparse type: an integer ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


def error_message(error: BaseException) -> str:
    """One line for ``error: ...``: an OSError names its file."""
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


def add_trajectory_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--urdf``, ``--lock``, ``--trajectory`` and ``--topic`` (evaluate, retime).

    ``--urdf`` and ``--trajectory`` may repeat (lists in the namespace): more than one,
    a directory of trajectories or a glob makes a sweep (:mod:`robot_tv_dynamics.cli.sweep`).
    """
    parser.add_argument("--urdf", required=True, action="append", metavar="PATH",
                        help="the robot's URDF file (repeatable in a sweep: each trajectory "
                             "and payload goes with the URDFs that have its joints, its link)")
    add_lock_argument(parser)
    parser.add_argument(
        "--trajectory", required=True, action="append", metavar="FILE",
        help="trajectory YAML, or a rosbag2 (directory, .mcap or .db3) with a "
             "trajectory_msgs/msg/JointTrajectory topic; repeatable, and a directory of "
             "trajectories or a quoted glob makes a sweep")
    parser.add_argument(
        "--topic", metavar="NAME",
        help="bag topic to read (default: the first JointTrajectory topic)")


def held_positions(items: Sequence[str]) -> dict[str, float] | None:
    """``--hold JOINT=VALUE`` options as a mapping (None when none is given).

    Raises:
        InvalidInputError: an entry that is not JOINT=VALUE with a finite number.
    """
    if not items:
        return None
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not name.strip() or not math.isfinite(number):
            raise InvalidInputError("--hold", f'expected JOINT=VALUE with a number, got "{item}"')
        out[name.strip()] = number
    return out
