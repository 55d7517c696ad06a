"""The plain-text progress bar on stderr of the long steps (identify, excite, bounds)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """A bar redrawn in place (carriage return); silent when ``enabled`` is False.

    Call it with the fraction done (throttled), or :meth:`show` it with a text of its own
    (the certified search's gap); :meth:`close` ends the line.
    """

    def __init__(self, label: str, enabled: bool = True, stream: TextIO | None = None,
                 width: int = 30) -> None:
        """Draw ``label`` and a bar of ``width`` characters on ``stream`` (stderr)."""
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self._start = time.perf_counter()
        self._last = -1.0
        self._drawn_at = -1.0
        self._drawn = False

    def __call__(self, fraction: float) -> None:
        """Redraw for ``fraction`` ∈ [0, 1] (at most every 1 % and 0.1 s, and at the end)."""
        if not self.enabled:
            return
        fraction = min(max(float(fraction), 0.0), 1.0)
        now = time.perf_counter()
        if fraction < 1.0 and (fraction - self._last < 0.01 or now - self._drawn_at < 0.1):
            return
        self._last = fraction
        self._drawn_at = now
        self.show(fraction, f"{100 * fraction:5.1f} % {now - self._start:6.1f} s")

    def show(self, fraction: float, text: str) -> None:
        """Redraw now: ``label [####....] text`` for ``fraction`` (clipped to [0, 1])."""
        if not self.enabled:
            return
        filled = int(round(self.width * min(max(float(fraction), 0.0), 1.0)))
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {text}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """End the line the bar was drawn on."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
