"""What the subcommands share: loading a URDF with a clean message, options, a progress bar."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError, URDFError

if TYPE_CHECKING:  # imported where used: building the parser loads neither NumPy nor Pinocchio
    from robot_tv_dynamics.bounds import SearchProgress
    from robot_tv_dynamics.evaluation import Load
    from robot_tv_dynamics.inputs.efforts import EffortMap
    from robot_tv_dynamics.model import LockedJoints, RobotModel

Number = TypeVar("Number", int, float)


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
    """The certified search's progress on a stream (the package's one bar, with its gap).

    Called with a :class:`~robot_tv_dynamics.bounds.SearchProgress` (or anything with
    ``fraction``, ``gap``, ``elapsed_s``, ``time_limit_s`` and ``boxes``).
    """

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        """Draw on ``stream`` with a bar of ``width`` characters."""
        from robot_tv_dynamics.identification.progress import Progress

        self._bar = Progress("certified search", stream=stream, width=width)

    def __call__(self, progress: SearchProgress) -> None:
        """Redraw for one :class:`~robot_tv_dynamics.bounds.SearchProgress` report."""
        gap = "—" if not math.isfinite(progress.gap) else f"{100 * progress.gap:6.2f} %"
        self._bar.show(progress.fraction, f"{progress.elapsed_s:6.1f}/"
                       f"{progress.time_limit_s:g} s  gap {gap}  boxes {progress.boxes}")

    def close(self) -> None:
        """End the line the bar was drawn on."""
        self._bar.close()


#: Help of ``--lock`` (every subcommand that loads a URDF).
LOCK_HELP = ("lock a joint (e.g. a gripper finger) at POSITION [rad or m], or at 0 clipped "
             "into its limits; its links merge into the parent body and it leaves the "
             "dofs (repeatable)")


def add_lock_argument(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable ``--lock JOINT[=POSITION]`` option."""
    parser.add_argument("--lock", action="append", default=[], metavar="JOINT[=POSITION]",
                        help=LOCK_HELP)


def add_urdf_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--urdf PATH`` (required, one robot) and ``--lock`` (excite, bounds)."""
    parser.add_argument("--urdf", required=True, help="path of the URDF file")
    add_lock_argument(parser)


def add_load_timing_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--time-offset`` and ``--hold`` (evaluate, retime)."""
    parser.add_argument(
        "--time-offset", type=float, default=0.0, metavar="SECONDS",
        help="loading process time at time_from_start = 0 [s] (default 0)")
    parser.add_argument(
        "--hold", action="append", default=[], metavar="JOINT=VALUE",
        help="position of a joint the trajectory does not list [rad or m] (repeatable; "
             "default 0); it is held with zero velocity and acceleration")


def add_report_arguments(parser: argparse.ArgumentParser, json_fields: str, plot_what: str
                         ) -> None:
    """Add ``--json`` and ``--plot`` (evaluate, retime).

    Args:
        parser: the subcommand's parser.
        json_fields: what the JSON object holds, for the help (``"durations, ..."``).
        plot_what: what the PNG shows, for the help (``"the effort ratios over time"``).
    """
    parser.add_argument("--json", action="store_true",
                        help=f"print one JSON object ({json_fields}) instead of the table")
    parser.add_argument("--plot", metavar="OUT.png",
                        help=f"write a PNG of {plot_what} (a sweep: the summary plot)")


def lock_option(items: Sequence[str]) -> dict[str, float | None] | None:
    """The ``--lock`` values as ``locked_joints`` (None when none is given).

    Raises:
        InvalidInputError: a malformed entry or a joint given twice.
    """
    from robot_tv_dynamics.model import parse_locked_joints

    return parse_locked_joints(items, "--lock") if items else None


def add_progress_arguments(parser: argparse.ArgumentParser, bars: str = "the progress bar"
                           ) -> None:
    """Add ``--progress`` / ``--no-progress`` (``args.progress``: True, False or None = auto).

    Args:
        parser: the subcommand's parser.
        bars: what is drawn, for the help (``"progress bars"``).
    """
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None,
                          help=f"always draw {bars} on stderr")
    progress.add_argument("--no-progress", dest="progress", action="store_false",
                          help=f"never draw {bars} (default: only when stderr is a terminal)")


def checked_number(text: str, kind: Callable[[str], Number], accept: Callable[[Number], bool],
                   rule: str) -> Number:
    """Argparse type body: ``kind(text)`` when finite and ``accept`` holds.

    The one place the CLI's number options are parsed: each option's type is a line
    naming its range (:func:`positive_float`, ``excite``'s harmonics count, ...).

    Args:
        text: the option's value.
        kind: ``int`` or ``float``.
        accept: the range check.
        rule: what the value must be, for the message (``"a positive number"``).

    Raises:
        argparse.ArgumentTypeError: not a number (an integer for ``int``), not finite, or
            outside the range (``'x' is not <rule>``).
    """
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
    if not (math.isfinite(value) and accept(value)):
        raise argparse.ArgumentTypeError(f"{text!r} is not {rule}")
    return value


def positive_float(text: str) -> float:
    """Argparse type: a finite number > 0."""
    return checked_number(text, float, lambda v: v > 0, "a positive number")


def finite_float(text: str) -> float:
    """Argparse type: a finite number."""
    return checked_number(text, float, lambda v: True, "a finite number")


def positive_int(text: str) -> int:
    """Argparse type: an integer ≥ 1."""
    return checked_number(text, int, lambda v: v >= 1, "a positive integer")


def checked_numbers(text: str, accept: Callable[[float], bool], rule: str
                    ) -> tuple[float, ...]:
    """Argparse type body: one number, or several comma-separated (one per joint).

    Raises:
        argparse.ArgumentTypeError: an item that is not a number, or not finite and
            ``accept``-ed (``'x': every value must be <rule>``).
    """
    try:
        values = tuple(float(item) for item in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number or a comma-separated "
                                         "list of numbers") from None
    if not all(math.isfinite(v) and accept(v) for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: every value must be {rule}")
    return values


def positive_numbers(text: str) -> tuple[float, ...]:
    """Argparse type: one finite number > 0, or several comma-separated (one per joint)."""
    return checked_numbers(text, lambda v: v > 0, "> 0")


def error_message(error: BaseException) -> str:
    """One line for ``error: ...``: an OSError names its file."""
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


def describe(parser: argparse.ArgumentParser, description: str, epilog: str) -> None:
    """Give a subcommand its description and epilog (unless it has them), shown as written."""
    parser.description = parser.description or description
    parser.epilog = parser.epilog or epilog
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def add_trajectory_arguments(parser: argparse.ArgumentParser, sweep: bool = True) -> None:
    """Add ``--urdf``, ``--lock``, ``--trajectory`` and ``--topic`` (evaluate, retime, record).

    With ``sweep`` ``--urdf`` and ``--trajectory`` may repeat (lists in the namespace): more
    than one, a directory of trajectories or a glob makes a sweep
    (:mod:`robot_tv_dynamics.cli.sweep`); without it (``record``) the help says one of each.
    """
    parser.add_argument("--urdf", required=True, action="append", metavar="PATH",
                        help="the robot's URDF file" + (
                            " (repeatable in a sweep: each trajectory and payload goes with "
                            "the URDFs that have its joints, its link)" if sweep else ""))
    add_lock_argument(parser)
    parser.add_argument(
        "--trajectory", required=True, action="append", metavar="FILE",
        help="trajectory YAML, or a rosbag2 (directory, .mcap or .db3) with a "
             "trajectory_msgs/msg/JointTrajectory topic" + (
                 "; repeatable, and a directory of trajectories or a quoted glob makes a "
                 "sweep" if sweep else ""))
    parser.add_argument(
        "--topic", metavar="NAME",
        help="bag topic to read (default: the first JointTrajectory topic)")


def held_positions(items: Sequence[str], option: str = "--hold") -> dict[str, float] | None:
    """``--hold JOINT=VALUE`` options (or another ``option``'s) as a mapping (None: none).

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
            raise InvalidInputError(option, f'expected JOINT=VALUE with a number, got "{item}"')
        out[name.strip()] = number
    return out


def _effort_sign(text: str) -> tuple[float, ...]:
    return checked_numbers(text, lambda v: v in (1.0, -1.0), "+1 or -1")


def _any_numbers(text: str) -> tuple[float, ...]:
    return checked_numbers(text, lambda v: True, "finite")


def add_effort_arguments(parser: argparse.ArgumentParser, role: str = "read") -> None:
    """Add ``--effort-preset``, ``--effort-gain``, ``--effort-offset``, ``--effort-sign``.

    Args:
        parser: the subcommand's parser.
        role: ``"read"`` (the data's efforts are turned into joint torques) or
            ``"write"`` (``record``: the bag's efforts are written in that dialect).
    """
    from_data = ("the data's effort e becomes the joint torque τ = sign·gain·(e − offset)"
                 if role == "read" else "the bag's effort is written as e = offset + "
                 "τ/(sign·gain), what a driver with these settings publishes")
    group = parser.add_argument_group(
        "effort semantics", f"{from_data}; each option one value or one per joint "
        "(model joint order), comma-separated; docs/ros_interface.md#efforts")
    group.add_argument("--effort-preset", default="", metavar="NAME",
                       help="ur_e_series_current (UR5e motor currents [A]) or "
                            "franka_link_torque (identity); the options below override it")
    group.add_argument("--effort-gain", type=positive_numbers, default=None, metavar="G",
                       help="effort unit → N·m or N, > 0 (default 1, or the preset's)")
    group.add_argument("--effort-offset", type=_any_numbers, default=None, metavar="O",
                       help="the effort meaning zero torque (default 0)")
    group.add_argument("--effort-sign", type=_effort_sign, default=None, metavar="S",
                       help="+1 or -1 (default +1)")


def effort_option(args: argparse.Namespace, joint_names: Sequence[str]) -> EffortMap:
    """The ``--effort-*`` options as an :class:`~robot_tv_dynamics.inputs.efforts.EffortMap`.

    Raises:
        InvalidInputError: an unknown preset, or a list neither 1 nor one per joint long.
    """
    from robot_tv_dynamics.inputs.efforts import effort_map

    return effort_map(args.effort_preset, args.effort_gain, args.effort_offset,
                      args.effort_sign).check_joints(joint_names)


def plot_title(model: RobotModel, what: str, load: Load | None) -> str:
    """``"<robot>: <what>, <load>"``: the title of a command's plot (evaluate, retime)."""
    name = str(model.pinocchio_model.name) or Path(model.source).stem
    return f"{name}: {what}, {load_label(load)}"


def load_label(load: Load | None, none: str = "no payload") -> str:
    """A load in a title or a table: ``none``, ``"2 kg on LINK"`` or ``"FillProcess on LINK"``."""
    from robot_tv_dynamics.evaluation import Payload

    if load is None:
        return none
    if isinstance(load, Payload):
        return f"{load.mass:g} kg on {load.link}"
    return f"{type(load).__name__} on {load.link}"


def describe_load(load: Load | None) -> dict[str, Any] | None:
    """The load as JSON-ready data (None for the arm alone)."""
    from robot_tv_dynamics.evaluation import Payload

    if load is None:
        return None
    if isinstance(load, Payload):
        return {"link": load.link, "mass": load.mass, "com": load.com.tolist(),
                "inertia": load.inertia.tolist()}
    describe = getattr(load, "describe", None)
    return {"link": str(load.link), "process": type(load).__name__,
            "duration": float(load.duration),
            "description": describe() if callable(describe) else None}


def label_panel(axes: Any, xlabel: str, ylabel: str) -> None:
    """A plot panel's axis labels, light grid and legend (best place, small type)."""
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="best", fontsize="small")


def save_figure(figure: Any, top: Any, title: str, path: str | Path) -> None:
    """Title the ``top`` panel (when a title is given), lay out and write a PNG at ``path``."""
    if title:
        top.set_title(title, fontsize="medium")
    figure.tight_layout()
    figure.savefig(str(path), format="png")


def require_ros_modules(command: str, modules: Sequence[str]) -> None:
    """Raise unless every module of ``modules`` (rclpy, message packages) is importable.

    Raises:
        RosExtraMissingError: naming ``command``, the first missing module and the ``[ros]``
            extra (with the source tree's bootstrap when run from one).
    """
    from robot_tv_dynamics.exceptions import RosExtraMissingError
    from robot_tv_dynamics.paths import source_root

    for module in modules:
        if importlib.util.find_spec(module) is None:
            root = source_root()
            raise RosExtraMissingError(command, module, None if root is None else str(root))
