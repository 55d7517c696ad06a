"""What the adaptive fragments share: the rows of an ``adapt --suite`` run and their cells."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path


def suite_rows(folder: Path) -> list[dict[str, str]]:
    """The rows of ``folder``/suite.csv, as ``adapt --suite`` wrote them."""
    import csv

    with (folder / "suite.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def suite_cell(row: dict[str, str], key: str) -> str:
    """A table cell of a suite.csv row: 3 significant digits, "—" where there is no value."""
    if key == "margin_ratio":  # only for an estimate that stayed consistent
        inf, start = row.get("inf_margin_every_step"), row.get("initial_margin")
        if not inf or not start:
            return "—"
        return f"{float(inf) / float(start):.3g}" if float(inf) > 0 else "< 0"
    value = row.get(key, "")
    if value in ("", None):
        return "—"
    try:
        return value if key == "consistency_violations" else f"{float(value):.3g}"
    except ValueError:
        return value


def suite_table(rows: Iterable[dict[str, str]], columns: Sequence[tuple[str, str]]
                ) -> list[str]:
    """A Markdown table of suite.csv rows: ``columns`` are (key, heading) pairs."""
    lines = ["| " + " | ".join(h for _, h in columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(suite_cell(row, k) for k, _ in columns) + " |"
                    for row in rows]
