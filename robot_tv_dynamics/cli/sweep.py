"""What ``evaluate`` and ``retime`` share for many trajectories × payloads (not a subcommand).

``--trajectory`` may repeat and take a directory or a quoted glob, ``--payload`` and
``--urdf`` may repeat; then (or with ``--table``) the command runs a sweep on Dask
(:mod:`robot_tv_dynamics.sweep`) and writes one table and a summary plot.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from robot_tv_dynamics.cli.common import error_message, positive_int
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.sweep.plan import is_many

#: Exit status of a sweep where some item is over a limit or failed (the table says which).
EXIT_SOME_FAILED = 1
#: Exit status on bad input to the sweep itself.
EXIT_ERROR = 2


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--table``, ``--workers`` and ``--scheduler``."""
    group = parser.add_argument_group(
        "many trajectories x payloads (a directory or glob for --trajectory, --trajectory, "
        "--payload or --urdf repeated)")
    group.add_argument("--table", metavar="OUT.csv",
                       help="write one row per trajectory x payload: CSV, or Parquet for "
                            ".parquet (needs pyarrow); plus the summary plot OUT.png")
    group.add_argument("--workers", type=positive_int, metavar="N",
                       help="local Dask worker processes (default: one per CPU)")
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on this Dask scheduler (e.g. tcp://host:8786) instead of a "
                            "local cluster")


def wants_sweep(args: argparse.Namespace, payloads: list[str]) -> bool:
    """Whether the parsed arguments ask for a sweep rather than one item."""
    return bool(args.table or args.scheduler or args.workers
                or is_many(args.trajectory, payloads, args.urdf))


def single(values: list[str], option: str) -> str:
    """The one value of a repeatable option outside a sweep."""
    if len(values) != 1:
        raise InvalidInputError(option, f"give it once, or use --table for a sweep "
                                f"(got {len(values)})")
    return values[0]


def run_sweep(args: argparse.Namespace, kind: str, payloads: list[str],
              options: dict[str, Any], refused: dict[str, Any]) -> int:
    """Run the sweep of a parsed ``evaluate`` / ``retime`` command line; its exit status.

    Args:
        args: the namespace (``urdf``, ``trajectory``, ``lock``, ``topic``, ``table``,
            ``workers``, ``scheduler``, ``plot``, ``json``).
        kind: ``"evaluate"`` or ``"retime"``.
        payloads: the payload files.
        options: keyword arguments of evaluate / retime for every item.
        refused: single-item options (name → value) that a sweep cannot take.
    """
    from robot_tv_dynamics.cli.common import lock_option
    from robot_tv_dynamics.sweep import sweep, write_summary_plot, write_table

    try:
        given = [name for name, value in refused.items() if value]
        if given:
            raise InvalidInputError(given[0], "writes one item's output: not with a sweep "
                                    "(use --table)")
        if args.table:  # fail on a bad table name before the work
            suffix = Path(args.table).suffix.lower()
            if suffix not in (".csv", ".parquet", ".pq"):
                raise InvalidInputError("--table", f"{args.table}: expected a .csv or "
                                        ".parquet file name")
            if suffix != ".csv":
                try:
                    import pyarrow  # noqa: F401
                except ImportError:
                    raise InvalidInputError("--table", f"{args.table}: writing Parquet needs "
                                            "pyarrow (pip install pyarrow); or name the "
                                            "table .csv") from None
        result = sweep(kind, args.urdf, args.trajectory, payloads,
                       locked=lock_option(args.lock), topic=args.topic, options=options,
                       workers=args.workers, scheduler=args.scheduler, progress=sys.stderr)
        plot = args.plot or (str(Path(args.table).with_suffix(".png")) if args.table
                             else None)
        if args.table:
            write_table(result.rows, args.table)
        if plot:
            write_summary_plot(result.rows, plot, title=f"{kind}: {len(result.rows)} items, "
                               f"{result.feasible} within the limits, {result.errors} errors")
    except (RobotTvDynamicsError, OSError) as error:
        print(f"error: {error_message(error)}", file=sys.stderr)
        return EXIT_ERROR
    summary = {"kind": kind, "items": len(result.rows), "feasible": result.feasible,
               "errors": result.errors, "wall_time": result.wall_time,
               "workers": result.workers, "scheduler": result.scheduler,
               "table": args.table, "plot": plot}
    if args.json:
        json.dump({**summary, "rows": result.rows}, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        for row in result.rows:
            ratio = row.get("max_effort_ratio")
            text = "-" if ratio is None else f"{ratio:.4f}"
            status = "ok" if row.get("feasible") else ("ERROR" if row.get("error") else "over")
            sys.stdout.write(f"{status:>5}  {text:>7}  {row.get('robot')}  "
                             f"{Path(str(row.get('trajectory'))).name}  "
                             f"{Path(str(row.get('payload') or '-')).name}"
                             f"{'  ' + str(row['error']) if row.get('error') else ''}\n")
        sys.stdout.write(f"{len(result.rows)} items: {result.feasible} within the limits, "
                         f"{result.errors} errors; {result.wall_time:.1f} s on "
                         f"{result.workers} workers ({result.scheduler})\n")
    all_fine = result.feasible == len(result.rows) and not result.errors
    return 0 if all_fine else EXIT_SOME_FAILED
