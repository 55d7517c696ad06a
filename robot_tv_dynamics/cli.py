"""``robot-tv-dynamics``: the standalone command line (no ROS needed).

Subcommands register themselves in :data:`SUBCOMMANDS` (name → function adding the
subparser); each subparser sets ``handler`` to the function that runs it and returns
the exit code:

* ``demo`` (the default when no subcommand is given): the simulated arm under payload
  loading with estimators, dynamics and monitor nodes over DDS (options and analysis in
  robot_tv_dynamics.demo, the run in robot_tv_dynamics.ros.demo, imported only then);
* ``bounds``: mass-matrix bounds of a URDF (Theorems 2–4), implemented here;
* ``evaluate``: a planned trajectory under a payload (robot_tv_dynamics.evaluate_cli);
* ``retime``: the fastest timing of a planned path within effort limits
  (robot_tv_dynamics.retiming.command).

Exit codes: 0 success, 1 ``evaluate`` found effort-limit violations, 2 bad input
(unreadable URDF, bad arguments), 130 interrupted. Errors are one line ``error: ...`` on
stderr, without a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TextIO

from robot_tv_dynamics import bounds, demo
from robot_tv_dynamics.exceptions import RobotTvDynamicsError, URDFError
from robot_tv_dynamics.model import LockedJoints, RobotModel, parse_locked_joints

#: Subcommand name → function adding its subparser to the ``add_subparsers`` action.
SUBCOMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {}


def subcommand(name: str) -> Callable[[Callable[[argparse._SubParsersAction], None]],
                                      Callable[[argparse._SubParsersAction], None]]:
    """Register a function that adds the subparser ``name``."""
    def register(add: Callable[[argparse._SubParsersAction], None]
                 ) -> Callable[[argparse._SubParsersAction], None]:
        SUBCOMMANDS[name] = add
        return add
    return register


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
    """A plain-text progress bar on a stream, redrawn in place (carriage return)."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        """Draw on ``stream`` with a bar of ``width`` characters."""
        self.stream = stream
        self.width = width
        self.drawn = False

    def __call__(self, progress: bounds.SearchProgress) -> None:
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


#: Help of ``--lock`` (``bounds`` and ``evaluate``).
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
    return parse_locked_joints(items, "--lock") if items else None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


@subcommand("bounds")
def add_bounds_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bounds``: mass-matrix bounds of Theorems 2–4 for a URDF."""
    parser = subparsers.add_parser(
        "bounds",
        help="mass-matrix bounds α₁, α₂ (Theorems 2–3) of a URDF's nominal parameters",
        description=(
            "Per-body consistency margin μ and size ν of the URDF's inertial parameters, "
            "the Jacobian extremes γ = inf λ_min(JᵀJ) and δ = sup σ_max(J)² over the "
            "joint-limit box, α₁ = min μ · γ and α₂ = 2 max ν · δ, and the normality "
            "(Definition 2) and Assumption 2 verdicts. Sampled values are estimates; "
            "--certified gives rigorous brackets."),
    )
    parser.add_argument("--urdf", required=True, help="path of the URDF file")
    add_lock_argument(parser)
    parser.add_argument("--certified", action="store_true",
                        help="certified branch and bound instead of sampling")
    parser.add_argument("--time-limit", type=_positive_float, default=60.0, metavar="S",
                        help="time limit of the search [s] (default 60)")
    parser.add_argument("--samples", type=_positive_int, default=4096, metavar="N",
                        help="number of quasi-random samples (default 4096)")
    parser.add_argument("--target-gap", type=float, default=0.01, metavar="G",
                        help="certified: stop at this relative gap (default 0.01)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object on stdout instead of a table")
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None,
                          help="always draw the progress bar on stderr")
    progress.add_argument("--no-progress", dest="progress", action="store_false",
                          help="never draw it (default: only when stderr is a terminal)")
    parser.set_defaults(handler=run_bounds)


def run_bounds(args: argparse.Namespace) -> int:
    """Run ``bounds``: compute, then print a table or one JSON object."""
    model = load_model(args.urdf, lock_option(args.lock))
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = ProgressBar(sys.stderr) if (show and args.certified) else None
    try:
        extremes = bounds.jacobian_extremes(
            model, bounds.CERTIFIED if args.certified else bounds.SAMPLED,
            samples=args.samples, time_limit=args.time_limit, target_gap=args.target_gap,
            progress=bar)
    finally:
        if bar is not None:
            bar.close()
    report = bounds.bounds_report(model, extremes)
    if args.json:
        data = report.to_dict()
        data["locked_joints"] = dict(model.locked_joints)
        json.dump(data, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_bounds_table(report, model.locked_joints))
    return 0


def _number(value: float, digits: int = 6) -> str:
    return "∞" if value == math.inf else f"{value:.{digits}g}"


def format_bounds_table(
    report: bounds.BoundsReport, locked_joints: Mapping[str, float] | None = None
) -> str:
    """The human-readable ``bounds`` output (``locked_joints``: name → position, if any)."""
    ext, mmb = report.extremes, report.bounds
    label = ext.method
    lines = [f"URDF {report.source}", f"  sha256 {report.urdf_sha256[:16]}…"]
    if locked_joints:
        lines.append("  locked joints: " + ", ".join(
            f"{name} = {position:g}" for name, position in locked_joints.items()))
    lines += ["",
              "Per body, nominal Θ (Definition 3; Theorem 1: consistent iff μ > 0):",
              f"  {'body':<28} {'μ = λmin f(Φ)':>15} {'ν = λmax f(Φ)':>15}  consistent"]
    for name, mu, nu in zip(report.body_names, report.margins, report.sizes, strict=True):
        lines.append(f"  {name:<28} {mu:>15.6g} {nu:>15.6g}  {'yes' if mu > 0 else 'NO'}")
    g_lo, g_hi = ext.inf_lambda_min_JtJ_bracket
    d_lo, d_hi = ext.sup_sigma_max_J_sq_bracket
    kind = "certified bracket" if ext.certified else "sampled; only one end is known"
    lines += [
        "",
        f"Jacobian extremes over the joint-limit box [{label}]:",
        f"  searched joints: {', '.join(ext.active_joints) or '(none)'}",
        f"  γ = inf λmin(JᵀJ)  = {_number(ext.inf_lambda_min_JtJ)}   "
        f"[{_number(g_lo)}, {_number(g_hi)}] ({kind})",
        f"  δ = sup σmax(J)²   = {_number(ext.sup_sigma_max_J_sq)}   "
        f"[{_number(d_lo)}, {_number(d_hi)}]",
        f"  relative gap {_number(100 * ext.gap, 4)} %, {ext.evaluations} evaluations, "
        f"{ext.elapsed_s:.1f} s",
    ]
    if not ext.certified:
        lines.append("  note: a sampled inf only bounds γ from above and a sampled sup only "
                     "bounds δ from below (use --certified for bounds)")
    for note in ext.notes:
        lines.append(f"  dropped: {note}")
    lines += [
        "",
        f"Mass-matrix bounds [{mmb.method}]:",
        f"  α₁ = min μ · γ     = {_number(mmb.alpha1)}   (Theorem 2, eq. 45; γ = lower end "
        f"{_number(mmb.gamma)}; with the point estimate: {_number(mmb.alpha1_estimate)})",
        f"  α₂ = 2 max ν · δ   = {_number(mmb.alpha2)}   (Theorem 3, eq. 46; δ = upper end "
        f"{_number(mmb.delta)}; with the point estimate: {_number(mmb.alpha2_estimate)})",
        "",
        f"Normality (Definition 2): {_verdict(report.normality)}",
        f"Assumption 2 (Lemma 2):   {_verdict(report.assumption2)}",
        f"Lemma 3: σmax(Q₀) = {report.lemma3_sigma_max_q0:.12g} "
        f"(≤ √2 = {bounds.LEMMA3_BOUND:.12g})",
        "",
    ]
    return "\n".join(lines)


def _verdict(verdict: bounds.Verdict) -> str:
    word = {True: "holds", False: "FAILS", None: "undetermined"}[verdict.holds]
    return f"{word} [{verdict.method}] — {verdict.reason}"


#: The demo's DDS side, imported by :func:`run_demo` only (``bounds`` and ``evaluate``
#: never load rclpy; test/test_layering.py checks it).
DEMO_RUNNER = "robot_tv_dynamics.ros.demo"


@subcommand("demo")
def add_demo_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``demo``: the embedded default (simulated arm, estimators, nodes over DDS)."""
    parser = subparsers.add_parser("demo", help=demo.HELP, description=demo.DESCRIPTION)
    demo.add_arguments(parser)
    parser.set_defaults(handler=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    """Run ``demo``: import its ROS side (rclpy, the nodes' bring-up) now, and run it."""
    runner = importlib.import_module(DEMO_RUNNER)
    return int(runner.run(args))


@subcommand("evaluate")
def add_evaluate_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``evaluate``: a planned trajectory against effort limits under a payload."""
    from robot_tv_dynamics import evaluate_cli

    parser = subparsers.add_parser(
        "evaluate", description=evaluate_cli.DESCRIPTION,
        help="a planned trajectory (YAML or rosbag2) under a payload: efforts of eq. (39), "
             "limit violations, max payload vs MoveIt's static estimate")
    evaluate_cli.add_arguments(parser)
    parser.set_defaults(handler=evaluate_cli.run)


@subcommand("retime")
def add_retime_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``retime``: the fastest timing of a planned path within effort limits."""
    from robot_tv_dynamics.retiming import command

    parser = subparsers.add_parser(command.NAME, description=command.DESCRIPTION,
                                   help=command.HELP)
    command.add_arguments(parser)
    parser.set_defaults(handler=command.run)


#: Run when the command line names no subcommand (the README's main job).
DEFAULT_COMMAND = "demo"


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="robot-tv-dynamics",
        description="Robot arms with time-dependent inertial parameters (standalone tools).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in SUBCOMMANDS.values():
        add(subparsers)
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


if __name__ == "__main__":
    sys.exit(main())
