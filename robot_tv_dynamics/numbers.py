"""Plain numbers at the package's edges: JSON values, table cells, text for people.

One function per meaning:

* :func:`finite_or_none`: a float for a JSON record, ``None`` for "not known" (None,
  NaN, ±∞ — JSON has no non-finite numbers);
* :func:`float_or_nan`: a table cell read as a float, NaN when it is missing or not a
  number (a failed sweep row, a suite row without the column), so that plots skip it;
* :func:`format_number`: a value for a line of text, ``∞`` for +∞.
"""

from __future__ import annotations

import math
from typing import Any


def finite_or_none(value: float | None) -> float | None:
    """``value`` as a float, or None when it is None, ±inf or NaN (a record's "not known")."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def float_or_nan(value: Any) -> float:
    """``float(value)``, or NaN when ``value`` is None or not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def format_number(value: float, digits: int = 6) -> str:
    """``value`` with ``digits`` significant digits (``%g``), ``∞`` for +∞."""
    return "∞" if value == math.inf else f"{value:.{digits}g}"
