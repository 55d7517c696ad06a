"""The package's one status level: OK, WARN, ERROR, STALE, as diagnostics report them.

Every status the package gives — the consistency monitor's per body, an evaluation's
effort verdict, the observers' contact and observer entries, the colour a body is drawn
in — is a :class:`Level`. Its values are those of ``diagnostic_msgs/DiagnosticStatus``
(the ROS layer publishes ``int(level)``), and as an ``IntEnum`` a level compares and
orders as that number (the worst of several is ``max``).
"""

from __future__ import annotations

import enum


class Level(enum.IntEnum):
    """Diagnostic level, with diagnostic_msgs/DiagnosticStatus values."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3
