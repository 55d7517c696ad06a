"""A sweep's rows as one table (CSV, or Parquet when pyarrow is installed) and a plot."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.numbers import float_or_nan

#: Columns of the table, in order (retime's durations and factors empty for evaluate).
COLUMNS = ("kind", "robot", "trajectory", "payload", "feasible", "max_effort_ratio",
           "worst_joint", "error", "duration", "violations", "duration_in", "duration_out",
           "duration_uniform_scaling", "max_velocity_scaling_factor",
           "max_acceleration_scaling_factor", "iterations", "runtime", "urdf")


def write_table(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Write the rows: ``.csv`` as CSV, ``.parquet`` / ``.pq`` as Parquet.

    Raises:
        InvalidInputError: another file ending, or Parquet without pyarrow installed.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    table = [{column: row.get(column) for column in COLUMNS} for row in rows]
    if suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as stream:
            writer = csv.DictWriter(stream, fieldnames=COLUMNS)
            writer.writeheader()
            for row in table:
                writer.writerow({key: "" if value is None else value
                                 for key, value in row.items()})
        return
    if suffix in (".parquet", ".pq"):
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise InvalidInputError("--table", f"{path.name}: writing Parquet needs pyarrow "
                                    "(pip install pyarrow); or name the table .csv") from None
        pq.write_table(pa.Table.from_pylist(table), str(path))
        return
    raise InvalidInputError("--table", f"{path.name}: expected a .csv or .parquet file name")


def write_summary_plot(rows: Sequence[dict[str, Any]], path: str | Path, title: str = "") -> None:
    """A PNG: peak effort ratio per item by robot and payload; retime: durations.

    Left: max |τ|/τ_max of each item (evaluate: of the input; retime: of the output),
    one column per robot × payload, the limit at 1, errors counted in the label.
    Right (retime): duration out vs the uniform slowdown, both over the input's
    duration, with y = x; (evaluate): the share of feasible items per column.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        payload = Path(str(row.get("payload") or "")).stem or "no payload"
        label = (f"{row.get('robot')}, {payload}" if row.get("robot")
                 else "not run (input error)")
        groups.setdefault(label, []).append(row)
    labels = sorted(groups)
    figure = Figure(figsize=(13.0, 6.0), dpi=100)
    FigureCanvasAgg(figure)
    left, right = figure.add_subplot(1, 2, 1), figure.add_subplot(1, 2, 2)
    for x, label in enumerate(labels):
        values = [float_or_nan(row.get("max_effort_ratio")) for row in groups[label]]
        values = [v for v in values if math.isfinite(v)]
        spread = [x + 0.3 * ((k * 0.618) % 1.0 - 0.5) for k in range(len(values))]
        left.plot(spread, values, ".", alpha=0.6, color=f"C{x % 10}")
    left.axhline(1.0, color="red", linestyle="--", linewidth=1.0, label="effort limit")
    left.set_xticks(range(len(labels)))
    left.set_xticklabels([f"{label} ({len(groups[label])}; "
                          f"{sum(1 for r in groups[label] if r.get('error'))} errors)"
                          for label in labels], fontsize="x-small", rotation=30, ha="right")
    left.set_ylabel("max |τ| / τ_max of the item")
    left.grid(True, alpha=0.3)
    left.legend(loc="best", fontsize="small")
    retimed = [row for row in rows if row.get("kind") == "retime"]
    if retimed:
        for x, label in enumerate(labels):
            mine = [row for row in groups[label] if not row.get("error")]
            base = [float_or_nan(row.get("duration_in")) for row in mine]
            out = [float_or_nan(row.get("duration_out")) / b for row, b in zip(mine, base,
                                                                          strict=True)]
            uniform = [float_or_nan(row.get("duration_uniform_scaling")) / b
                       for row, b in zip(mine, base, strict=True)]
            if mine:
                right.plot(uniform, out, ".", alpha=0.7, color=f"C{x % 10}", label=label)
        limits = right.get_xlim()
        right.plot(limits, limits, ":", color="gray", label="retimed = uniform")
        right.set_xlabel("uniform slowdown duration / input duration")
        right.set_ylabel("retimed duration / input duration")
    else:
        shares = [sum(1 for r in groups[label] if r.get("feasible")) / len(groups[label])
                  for label in labels]
        right.bar(range(len(labels)), shares, color=[f"C{x % 10}" for x in range(len(labels))])
        right.set_xticks(range(len(labels)))
        right.set_xticklabels(labels, fontsize="x-small", rotation=30, ha="right")
        right.set_ylabel("share of items within the effort limits")
        right.set_ylim(0.0, 1.0)
    right.grid(True, alpha=0.3)
    if retimed:
        right.legend(loc="best", fontsize="x-small")
    figure.suptitle(title or f"{len(rows)} items", fontsize="medium")
    figure.tight_layout()
    figure.savefig(str(path), format="png")
