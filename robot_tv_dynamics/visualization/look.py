"""How a body is drawn for the monitor's verdict: colours of the box, the ball, the label.

Traffic-light colours of the monitor level (OK green, WARN amber, ERROR red, STALE or
no status grey, as pal-robotics/dynamic_payload_analysis colours torque use), and a
look of its own, magenta, for a body whose Φ has **no equivalent box** (not physically
consistent, Theorem 1): then there is no box to colour, the lead ball turns magenta
and a label says why. Colours are RGBA in [0, 1].
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from robot_tv_dynamics.status import Level

RGBA = tuple[float, float, float, float]

#: Box colour per monitor level (semi-transparent: the ball shows through).
LEVEL_COLORS: dict[Level, RGBA] = {
    Level.OK: (0.20, 0.75, 0.30, 0.45),
    Level.WARN: (1.00, 0.75, 0.00, 0.55),
    Level.ERROR: (0.90, 0.10, 0.10, 0.65),
    Level.STALE: (0.55, 0.55, 0.55, 0.40),
}
#: The lead ball of a consistent body: lead grey, opaque.
LEAD_COLOR: RGBA = (0.35, 0.37, 0.40, 1.0)
#: The "inconsistent: no box exists" look (ball and label).
INCONSISTENT_COLOR: RGBA = (0.85, 0.00, 0.85, 0.9)
#: The skeleton of the arm.
SKELETON_COLOR: RGBA = (0.15, 0.15, 0.15, 1.0)


class Verdict(enum.Enum):
    """What the drawing says about one body: its status level, or that it has no box.

    The level members are the monitor's :class:`~robot_tv_dynamics.status.Level` itself
    (``Verdict(level)``); STALE, no fresh status, is drawn as UNKNOWN.
    """

    OK = Level.OK
    WARN = Level.WARN
    ERROR = Level.ERROR
    UNKNOWN = Level.STALE          # no (fresh) monitor status for this body
    INCONSISTENT = "inconsistent: no box exists"


@dataclass(frozen=True)
class Look:
    """Colours of one body's markers.

    Attributes:
        verdict: what is shown.
        box: colour of the equivalent box (unused when there is none).
        ball: colour of the lead ball.
        label: text drawn beside the body ("" for none).
    """

    verdict: Verdict
    box: RGBA
    ball: RGBA
    label: str


def look(level: Level | None, consistent: bool, name: str = "") -> Look:
    """The look of a body from the monitor's level and whether its box exists.

    Args:
        level: the monitor's level of this body (None or STALE: no fresh status).
        consistent: whether the equivalent box exists (:class:`InertiaGeometry`).
        name: body name, used in the label of an inconsistent body.

    Returns:
        The :class:`Look`; an inconsistent body looks inconsistent whatever the level.
    """
    if not consistent:
        label = f"{name}: inconsistent, no box" if name else "inconsistent, no box"
        return Look(Verdict.INCONSISTENT, INCONSISTENT_COLOR, INCONSISTENT_COLOR, label)
    if level is None or level == Level.STALE:
        return Look(Verdict.UNKNOWN, LEVEL_COLORS[Level.STALE], LEAD_COLOR, "")
    return Look(Verdict(Level(level)), LEVEL_COLORS[level], LEAD_COLOR, "")
