r"""Contact (collision) detection on the momentum residual, with hysteresis.

Per joint (``mode="joint"``): joint i is in contact from the first sample with
|r_i| > θ_i until the first sample with |r_i| < ρ·θ_i (ρ = ``release`` ∈ (0, 1]); each
joint has its own events. On the norm (``mode="norm"``): one contact state, on when
‖r‖₂ > θ, off when ‖r‖₂ < ρ·θ.

Detection delay for a step of height A on joint i seen through the first-order lag
r_i(t) = A(1 − e^{−K_O t}): t_d = −ln(1 − θ_i/A)/K_O (only if A > θ_i), plus up to one
sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, check_finite

MODES: tuple[str, ...] = ("joint", "norm")


@dataclass(frozen=True)
class ContactEvent:
    """One detected contact.

    Attributes:
        t_start: first sample above the threshold [s].
        t_end: first sample below the release level [s]; None while still in contact.
        joint: joint name (``mode="norm"``: the joint with the largest |r_i| at the
            peak of ‖r‖).
        joint_index: its index in model joint order.
        peak: ``mode="joint"``: the signed r_i of largest magnitude during the contact;
            ``mode="norm"``: the largest ‖r‖₂ [N·m, N].
    """

    t_start: float
    t_end: float | None
    joint: str
    joint_index: int
    peak: float

    def as_dict(self) -> dict[str, float | str | None]:
        """``{"t_start", "t_end", "joint", "peak"}`` for JSON."""
        return {"t_start": self.t_start, "t_end": self.t_end, "joint": self.joint,
                "peak": self.peak}


@dataclass
class _Open:
    t_start: float
    joint_index: int
    peak: float


class ContactDetector:
    """Thresholds with hysteresis on the residual r (see the module docstring)."""

    def __init__(
        self, joint_names: Sequence[str], threshold: float | npt.ArrayLike, *,
        release: float = 0.5, mode: str = "joint",
    ) -> None:
        """Build the detector.

        Args:
            joint_names: model joint names (nv entries, model order).
            threshold: θ: one value for every joint or one per joint (``mode="joint"``),
                or the norm threshold (``mode="norm"``, one value) [N·m, N].
            release: ρ ∈ (0, 1]: a contact ends below ρ·θ.
            mode: ``"joint"`` or ``"norm"``.

        Raises:
            InvalidInputError: a threshold ≤ 0 or non-finite, the wrong number of
                thresholds, ρ outside (0, 1], an unknown mode.
        """
        self.joint_names = list(joint_names)
        nv = len(self.joint_names)
        if mode not in MODES:
            raise InvalidInputError("mode", f'must be one of {MODES}, got "{mode}"')
        if not (math.isfinite(release) and 0.0 < release <= 1.0):
            raise InvalidInputError("release", f"must be in (0, 1], got {release}")
        values = np.atleast_1d(np.asarray(threshold, dtype=np.float64))
        if values.size == 1 and mode == "joint":
            values = np.full(nv, float(values[0]))
        want = 1 if mode == "norm" else nv
        if values.shape != (want,):
            raise InvalidInputError(
                "threshold", f"expected {'one value' if want == 1 else f'1 or {nv} values'}"
                f" for mode {mode}, got {values.size}")
        if not np.all(np.isfinite(values)) or np.any(values <= 0):
            raise InvalidInputError("threshold", f"must be finite and > 0, got {values}")
        values.setflags(write=False)
        self.mode = mode
        self.release = float(release)
        #: θ per joint (nv,), or (1,) for the norm [N·m, N].
        self.threshold: Array = values
        self.reset()

    def reset(self) -> None:
        """Forget every contact (open and closed)."""
        self._open: dict[int, _Open] = {}
        self._closed: list[ContactEvent] = []

    def forget_closed(self) -> None:
        """Drop the closed contacts (a long-running node keeps only the open ones)."""
        self._closed.clear()

    @property
    def in_contact(self) -> bool:
        """Whether a contact is open."""
        return bool(self._open)

    @property
    def active_joints(self) -> tuple[str, ...]:
        """Names of the joints in contact (``mode="norm"``: the one of the open event)."""
        return tuple(self.joint_names[o.joint_index] for o in self._open.values())

    def _event(self, key: int, t_end: float | None) -> ContactEvent:
        o = self._open[key]
        return ContactEvent(o.t_start, t_end, self.joint_names[o.joint_index], o.joint_index,
                            o.peak)

    @property
    def events(self) -> list[ContactEvent]:
        """Every contact so far in start order; open ones have ``t_end`` None."""
        events = self._closed + [self._event(k, None) for k in self._open]
        return sorted(events, key=lambda e: (e.t_start, e.joint_index))

    def update(self, t: float, residual: npt.ArrayLike) -> list[ContactEvent]:
        """Feed one sample of r; returns the contacts that started at this sample.

        Raises:
            InvalidInputError: r of the wrong size or non-finite.
        """
        r = check_finite(residual, "residual", (len(self.joint_names),))
        t = float(t)
        started: list[ContactEvent] = []
        if self.mode == "norm":
            self._step(t, 0, float(np.linalg.norm(r)), float(self.threshold[0]),
                       int(np.argmax(np.abs(r))), started)
        else:
            for i in range(r.size):
                self._step(t, i, float(r[i]), float(self.threshold[i]), i, started)
        return started

    def _step(self, t: float, key: int, value: float, threshold: float, joint: int,
              started: list[ContactEvent]) -> None:
        o = self._open.get(key)
        if o is None:
            if abs(value) > threshold:
                self._open[key] = _Open(t, joint, value)
                started.append(self._event(key, None))
            return
        if abs(value) > abs(o.peak):
            o.peak, o.joint_index = value, joint
        if abs(value) < self.release * threshold:
            self._closed.append(self._event(key, t))
            del self._open[key]
