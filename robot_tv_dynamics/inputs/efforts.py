r"""What a driver's ``effort`` field means: τ = sign · gain · (effort − offset), per joint.

Every reader of measured efforts (estimator_node, dynamics_node's momentum observer,
``identify``, ``estimate``, ``observe``) turns the published value into the joint torque
of eq. (39) [N·m, N] by this one map before anything else sees it:

.. math::

    \tau_i = s_i \, g_i \, (e_i - o_i),\qquad s_i \in \{+1, -1\},\ g_i > 0,

with one value for every joint or one per joint (model joint order). A driver that
publishes motor current [A] needs the gain torque constant × gear ratio [N·m/A]; one that
publishes link-side torque needs none (the identity).

Presets (:data:`PRESETS`) name the dialects of the arms users bring; explicit gains,
offsets and signs override a preset's (:func:`effort_map`). The simulator writes a
dialect with :meth:`EffortMap.raw` (the inverse), so tests can make efforts in amperes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError

Values = tuple[float, ...]


@dataclass(frozen=True)
class EffortMap:
    """τ = sign · gain · (effort − offset): one value for all joints, or one per joint.

    Attributes:
        gain: effort unit → N·m or N, each > 0 (e.g. [N·m/A] for a current).
        offset: the effort that means zero torque, in the effort's unit.
        sign: +1 or −1 per joint (a joint whose driver counts the other way).
        source: where the values come from, for logs and reports (a preset name,
            ``"explicit"`` or ``"identity"``).
    """

    gain: Values = (1.0,)
    offset: Values = (0.0,)
    sign: Values = (1.0,)
    source: str = "identity"

    def __post_init__(self) -> None:
        """Store every value as a float tuple and check it (see :func:`check_values`)."""
        for name in ("gain", "offset", "sign"):
            object.__setattr__(self, name, as_floats(f"effort_{name}", getattr(self, name)))
        check_values("effort_gain", self.gain, lambda v: v > 0, "> 0")
        check_values("effort_offset", self.offset, lambda v: True, "finite")
        check_values("effort_sign", self.sign, lambda v: v in (1.0, -1.0), "+1 or -1")

    @property
    def is_identity(self) -> bool:
        """True when the map leaves every effort as it is."""
        return all(g == 1.0 for g in self.gain) and not any(self.offset) and all(
            s == 1.0 for s in self.sign)

    def check_joints(self, joint_names: Sequence[str]) -> EffortMap:
        """This map, after checking that each list has 1 entry or one per joint.

        Raises:
            InvalidInputError: a list of another length (naming the joints expected).
        """
        n = len(joint_names)
        for name, values in (("effort_gain", self.gain), ("effort_offset", self.offset),
                             ("effort_sign", self.sign)):
            if len(values) not in (1, n):
                raise InvalidInputError(name, f"has {len(values)} values: give one, or {n} "
                                        f"(one per joint, in the order {list(joint_names)})")
        return self

    def torque(self, effort: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Joint torques from published efforts, (..., n) → (..., n) [N·m, N]."""
        e = np.asarray(effort, dtype=np.float64)
        if self.is_identity:
            return e
        return np.asarray(self.sign) * np.asarray(self.gain) * (e - np.asarray(self.offset))

    def raw(self, torque: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """What a driver in this dialect publishes for ``torque``: the inverse of :meth:`torque`."""
        tau = np.asarray(torque, dtype=np.float64)
        return np.asarray(self.offset) + tau / (np.asarray(self.sign) * np.asarray(self.gain))

    def describe(self) -> str:
        """One line for logs: the source and the values."""
        if self.is_identity:
            return f"{self.source}: efforts are joint torques (gain 1, offset 0, sign +1)"
        return (f"{self.source}: tau = sign*gain*(effort - offset), gain "
                f"{_text(self.gain)}, offset {_text(self.offset)}, sign {_text(self.sign)}")


def _text(values: Values) -> str:
    return ",".join(f"{v:g}" for v in values)


def as_floats(name: str, values: object) -> Values:
    """``values`` (one number or a sequence) as a tuple of floats.

    Raises:
        InvalidInputError: an entry that is not a number.
    """
    items = values if isinstance(values, (tuple, list, np.ndarray)) else (values,)
    try:
        return tuple(float(v) for v in items)
    except (TypeError, ValueError):
        raise InvalidInputError(name, f"{values!r} is not numbers") from None


def check_values(name: str, values: Values, accept: object, rule: str) -> None:
    """Raise unless ``values`` is a non-empty tuple of finite numbers that ``accept``.

    Raises:
        InvalidInputError: empty, not finite, or outside the rule (naming ``name``).
    """
    if not values:
        raise InvalidInputError(name, "needs at least one value")
    check = accept if callable(accept) else (lambda v: True)
    if not all(math.isfinite(v) and check(v) for v in values):
        raise InvalidInputError(name, f"{list(values)}: every value must be {rule}")


def parse_values(text: str, name: str) -> Values | None:
    """``"1.5"`` or ``"1,2,3"`` (spaces allowed) as floats; None for an empty text.

    Raises:
        InvalidInputError: an item that is not a number.
    """
    items = [item for item in text.replace(" ", "").split(",") if item]
    if not items:
        return None
    try:
        return tuple(float(item) for item in items)
    except ValueError:
        raise InvalidInputError(name, f'"{text}" is not a number or comma-separated '
                                "numbers") from None


#: UR e-series joints: Harmonic Drive gear ratio (every joint).
UR_GEAR_RATIO = 101.0
#: UR5e motor torque constants [N·m/A]: base, shoulder, elbow (size 3), wrists (size 1).
UR5E_TORQUE_CONSTANTS = (0.125, 0.125, 0.125, 0.092, 0.092, 0.092)

#: The dialects of the arms users bring (sources: docs/ros_interface.md, "Efforts").
PRESETS: dict[str, EffortMap] = {
    "franka_link_torque": EffortMap(source="franka_link_torque"),
    "ur_e_series_current": EffortMap(
        gain=tuple(k * UR_GEAR_RATIO for k in UR5E_TORQUE_CONSTANTS),
        source="ur_e_series_current"),
}


def effort_map(preset: str = "", gain: Values | None = None, offset: Values | None = None,
               sign: Values | None = None) -> EffortMap:
    """The map of a preset (empty: the identity) with explicit values overriding its own.

    Args:
        preset: a key of :data:`PRESETS`, or empty.
        gain: explicit gains (None: the preset's).
        offset: explicit offsets (None: the preset's).
        sign: explicit signs (None: the preset's).

    Raises:
        InvalidInputError: an unknown preset, or values out of range.
    """
    name = preset.strip()
    if name and name not in PRESETS:
        raise InvalidInputError("effort_preset", f'"{name}" is not one of {sorted(PRESETS)} '
                                "(empty: efforts are joint torques)")
    base = PRESETS[name] if name else EffortMap()
    if gain is None and offset is None and sign is None:
        return base
    return EffortMap(
        gain=base.gain if gain is None else tuple(float(v) for v in gain),
        offset=base.offset if offset is None else tuple(float(v) for v in offset),
        sign=base.sign if sign is None else tuple(float(v) for v in sign),
        source=f"{name} + explicit" if name else "explicit")


def effort_map_from_text(preset: str, gain: str, offset: str, sign: str) -> EffortMap:
    """:func:`effort_map` from the node parameters' texts (empty: not given).

    Raises:
        InvalidInputError: a text that is not numbers, an unknown preset, values out of range.
    """
    return effort_map(preset, parse_values(gain, "effort_gain"),
                      parse_values(offset, "effort_offset"), parse_values(sign, "effort_sign"))
